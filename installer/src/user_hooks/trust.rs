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

pub fn trust(ctx: &Context, trusted: bool) -> Result<Outcome, CommandError> {
    let files = match ctx.project_files() {
        Ok(files) => files,
        // Withdrawing trust needs no list of files.
        Err(_) if !trusted => Vec::new(),
        Err(refusal) => {
            return Err(CommandError::refused(format!(
                "cannot trust the hook plugins of {}: {refusal}",
                ctx.locations.project.display()
            )));
        }
    };
    if trusted && files.is_empty() {
        return Err(CommandError::refused(format!(
            "{} has no hook plugins to trust",
            ctx.project_dir().display()
        )));
    }
    record_trust(ctx, trusted.then(|| trust_store::fingerprint(&files)))?;
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
    if trusted {
        text.push_str("These files' hooks now run in this project; any change to them needs `amplihack hooks trust` again.\n");
    }
    let confined_json: Vec<_> = confined
        .iter()
        .map(|(plugin, says)| json!({"plugin": plugin, "confinement": says}))
        .collect();
    Ok(outcome_of(
        if trusted { "trust" } else { "untrust" },
        text,
        json!({"project": ctx.locations.project, "files": files, "trusted": trusted, "confinement": confined_json}),
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
