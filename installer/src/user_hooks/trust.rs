//! `amplihack hooks trust|untrust`: trust a project's plugins (every file they run).

use std::path::{Path, PathBuf};

use amplihack_state::trust as trust_store;
use serde_json::json;

use crate::commands::{CommandError, Outcome};

use super::{Context, outcome_of};

fn record_trust(
    ctx: &Context,
    fingerprint: Option<trust_store::Fingerprint>,
) -> Result<(), CommandError> {
    trust_store::set(&ctx.state(), &ctx.locations.project, fingerprint)?;
    Ok(())
}

/// `hooks trust [--accept NAME]…` (`trusted`) or `hooks untrust`. Trust lists, per handler, the
/// files it pinned and each part it cannot pin; a plugin with such a part runs only once accepted
/// by name, and that acceptance (with the parts it covered) is recorded.
pub fn trust(ctx: &Context, trusted: bool, accept: &[String]) -> Result<Outcome, CommandError> {
    let scope = match ctx.project_scope() {
        Ok(scope) => scope,
        // Withdrawing trust needs no list of files.
        Err(_) if !trusted => Default::default(),
        Err(refusal) => {
            return Err(CommandError::refused(format!(
                "cannot trust the hook plugins of {}: {refusal}",
                ctx.locations.project.display()
            )));
        }
    };
    let files = scope.files.clone();
    if trusted && files.is_empty() {
        return Err(CommandError::refused(format!(
            "{} has no hook plugins to trust",
            ctx.project_dir().display()
        )));
    }
    let unpinned = scope.unpinned_by_plugin();
    for name in accept {
        if !unpinned.iter().any(|(plugin, _)| plugin == name) {
            let known: Vec<&str> = unpinned.iter().map(|(p, _)| p.as_str()).collect();
            return Err(CommandError::refused(format!(
                "--accept {name}: no plugin of {} by that name runs a part trust cannot pin (those that do: {}); run `amplihack hooks trust` to see the list",
                ctx.project_dir().display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    // What was accepted before stays accepted for exactly the parts it covered then.
    let state = ctx.state();
    let mut accepted = if trusted {
        trust_store::accepted(&state, &ctx.locations.project)
    } else {
        Default::default()
    };
    accepted.retain(|name, _| unpinned.iter().any(|(plugin, _)| plugin == name));
    for (name, parts) in &unpinned {
        if accept.contains(name) {
            accepted.insert(name.clone(), parts.clone());
        }
    }
    record_trust(ctx, trusted.then(|| trust_store::fingerprint(&files)))?;
    if trusted {
        trust_store::set_accepted(&state, &ctx.locations.project, accepted.clone())?;
    }
    let held = scope.held_back(&accepted);
    let mut text = String::new();
    for file in &files {
        text.push_str(&format!(
            "{}: {}\n",
            if trusted { "trusted" } else { "untrusted" },
            file.display()
        ));
    }
    let confined = if trusted {
        confinement_of(ctx)
    } else {
        Vec::new()
    };
    for (plugin, says) in &confined {
        let plugin = amplihack_protocol::printable::printable(plugin);
        text.push_str(&format!("{plugin}: {says}\n"));
    }
    let mut handlers_json = Vec::new();
    if trusted {
        for handler in &scope.handlers {
            text.push_str(&format!(
                "handler of {}: {}\n",
                handler.plugin, handler.command
            ));
            for file in &handler.pinned {
                text.push_str(&format!("  pinned: {}\n", file.display()));
            }
            for part in &handler.unpinned {
                text.push_str(&format!("  cannot pin: {part}\n"));
            }
            handlers_json.push(json!({
                "plugin": handler.plugin,
                "command": handler.command,
                "pinned": handler.pinned,
                "unpinned": handler.unpinned.iter().map(|u| json!({"part": u.part, "why": u.why})).collect::<Vec<_>>(),
            }));
        }
        for (name, _) in &unpinned {
            if held.contains(name) {
                text.push_str(&format!(
                    "not run: {name} runs parts trust cannot pin (listed above); if you accept them: amplihack hooks trust --accept {name}\n"
                ));
            } else {
                text.push_str(&format!(
                    "accepted: {name} runs parts trust cannot pin (listed above); you accepted them\n"
                ));
            }
        }
        text.push_str("These files' hooks now run in this project; any change to them needs `amplihack hooks trust` again.\n");
    }
    let confined_json: Vec<_> = confined
        .iter()
        .map(|(plugin, says)| json!({"plugin": plugin, "confinement": says}))
        .collect();
    Ok(outcome_of(
        if trusted { "trust" } else { "untrust" },
        text,
        json!({
            "project": ctx.locations.project,
            "files": files,
            "trusted": trusted,
            "handlers": handlers_json,
            "accepted": accepted.keys().collect::<Vec<_>>(),
            "held_back": held,
            "confinement": confined_json,
        }),
        0,
    ))
}

/// What each of the project's plugins may do when its handlers run (amplihack_engine::confinement):
/// the default, or what it declares, which the trust just given pins.
fn confinement_of(ctx: &Context) -> Vec<(String, String)> {
    use amplihack_engine::discovery::{self, Level};
    discovery::load_level(&ctx.project_dir(), Level::Project)
        .into_iter()
        .filter_map(|plugin| {
            let config = plugin.config.ok()?;
            Some((
                plugin.name,
                amplihack_engine::confinement::describe(&config.needs),
            ))
        })
        .collect()
}

pub(super) fn level_dir(ctx: &Context, project: bool) -> PathBuf {
    if project {
        ctx.project_dir()
    } else {
        ctx.user_dir()
    }
}

/// The project level before an install or import wrote into it.
pub(super) struct Before {
    /// Its plugins ran (what was trusted is exactly what was there).
    trusted: bool,
    /// Its files then; `None` when trust could not cover them.
    files: Option<Vec<PathBuf>>,
}

pub(super) fn before(ctx: &Context) -> Before {
    Before {
        trusted: ctx.project_trusted(),
        files: ctx.project_files().ok(),
    }
}

/// After writing `installed` (a plugin directory) into the project level: keep the project
/// trusted only when what it ran before was trusted (or it had nothing: no `.amplifier/hooks`,
/// `.amcp` or `hooks.yaml` plugin) and everything new is inside `installed`. Installing one's own
/// plugin never trusts anything else: otherwise say plainly what is not trusted.
pub(super) fn retrust_after(
    ctx: &Context,
    before: &Before,
    (project, installed): (bool, &Path),
    text: &mut String,
) -> Result<(), CommandError> {
    if !project {
        return Ok(());
    }
    let after = match ctx.project_files() {
        Ok(files) => files,
        Err(refusal) => {
            text.push_str(&format!(
                "the project's hook plugins do not run: trust cannot cover them: {refusal}\n"
            ));
            return Ok(());
        }
    };
    let had_nothing = before.files.as_ref().is_some_and(Vec::is_empty);
    let was = before.files.as_deref().unwrap_or_default();
    let others: Vec<&PathBuf> = after
        .iter()
        .filter(|f| !f.starts_with(installed) && !was.contains(f))
        .collect();
    if (before.trusted || had_nothing) && others.is_empty() {
        record_trust(ctx, Some(trust_store::fingerprint(&after)))?;
        text.push_str(if had_nothing {
            "your plugin is trusted in this project (it is the project's only hook plugin)\n"
        } else {
            "the project's hooks stay trusted\n"
        });
        return Ok(());
    }
    let untrusted: Vec<String> = if before.trusted {
        others.iter().map(|f| f.display().to_string()).collect()
    } else {
        after
            .iter()
            .filter(|f| !f.starts_with(installed))
            .map(|f| f.display().to_string())
            .collect()
    };
    let shown = untrusted.len().min(5);
    text.push_str(&format!(
        "not trusted: the project's other hook files ({} file(s): {}{}); none of the project's plugins, yours included, run until you review them and run `amplihack hooks trust`\n",
        untrusted.len(),
        untrusted[..shown].join(", "),
        if untrusted.len() > shown { ", ..." } else { "" }
    ));
    Ok(())
}
