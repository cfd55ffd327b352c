//! Keeping Claude Code's registrations in step with the user's plugins, so that every event an
//! active plugin handles reaches it: after `amplihack install` and each `amplihack hooks install|
//! enable|disable|trust|untrust|import-claude`, the events beyond amplihack's own table get an
//! `amplihack-hooks dispatch` entry ([`amplihack_runtime::builtins::plugin_events`], the same code
//! the hook binary repairs them with at session start). Only events the installed Claude Code
//! knows are registered (`claude --version`; `AMPLIHACK_CLAUDE_BIN` names the program).
//!
//! The other hosts amplihack is registered with through a JSON hooks file (Codex, Copilot, Qwen,
//! Droid, Gemini: the manifest's registrations) get the same entries, in their names, for the
//! events they deliver beyond amplihack's rows for them ([`sync_hosts`], one code path
//! parameterised by host). A user-scope file serves the user's plugins; a project's file (its
//! `project`/`local` scope) the trusted project's, less what the host's user file brings. The
//! hook binary's session-start repair stays Claude Code's.

use amplihack_engine::discovery::Plugin;
use amplihack_protocol::Host;
use amplihack_runtime::builtins::plugin_events::{self as shared, Places};
use amplihack_settings::claude_paths;
use amplihack_settings::plugin_events::{self, Version};
use amplihack_settings::safe_file::{self, EditOptions};

use crate::commands::{CommandError, Outcome};
use crate::user_hooks::Context;

/// The installed Claude Code's version: `claude --version` (or `AMPLIHACK_CLAUDE_BIN`'s), waited
/// for at most 30 s (2.0.x starts Node). `None` when it does not answer.
pub fn claude_version() -> Option<Version> {
    let program = std::env::var(amplihack_env::AMPLIHACK_CLAUDE_BIN)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "claude".into());
    amplihack_engine::host_model::claude_version_of(&[program.into()])
}

fn with_places<R>(ctx: &Context, f: impl FnOnce(&Places<'_>) -> R) -> R {
    let state = ctx.state();
    f(&Places {
        state: &state,
        home: &ctx.locations.home,
        claude_config_dir: &ctx.locations.claude_config_dir,
        project: &ctx.locations.project,
    })
}

/// Brings the plugin-event entries of each scope in line with the active plugins. Returns one
/// line per file changed, for the user.
pub fn sync(ctx: &Context) -> Result<Vec<String>, CommandError> {
    with_places(ctx, |places| {
        // `claude --version` only when some plugin needs an event beyond amplihack's own.
        let version = shared::beyond_table(places).then(claude_version).flatten();
        shared::sync(places, version, &EditOptions::default())
            .map(|synced| {
                synced
                    .lines
                    .into_iter()
                    .map(|l| format!("Claude Code: {l}"))
                    .collect()
            })
            .map_err(CommandError::Refused)
    })
}

/// What amplihack added to the other hosts' hooks files for the plugins: per file, the events
/// whose `dispatch` entries are its own (nothing in the file tells them apart from a `dispatch`
/// entry the user wrote by hand), under its state.
pub const HOSTS_RECORD: &str = "host-plugin-events.json";

type HostsRecord = std::collections::BTreeMap<std::path::PathBuf, Vec<String>>;

/// The binary this install deployed (the manifest's), when `current` (a host's hooks file) runs
/// it: never one a file names, since a repository's own hooks file may name any program
/// `amplihack-hooks`.
fn deployed_in(
    deployed: Option<&std::path::PathBuf>,
    host: Host,
    current: &serde_json::Value,
) -> Option<std::path::PathBuf> {
    deployed
        .filter(|d| shared::our_binary_in(host, current).as_ref() == Some(*d))
        .cloned()
}

/// The plugin events amplihack registered in `file` before (its `dispatch` entries there).
pub(crate) fn recorded_events_in(
    state: &amplihack_state::StateDir,
    file: &std::path::Path,
) -> Vec<String> {
    hosts_record(state).remove(file).unwrap_or_default()
}

fn hosts_record(state: &amplihack_state::StateDir) -> HostsRecord {
    amplihack_state::files::read_json(&state.file(HOSTS_RECORD))
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn write_hosts_record(
    state: &amplihack_state::StateDir,
    record: &HostsRecord,
) -> Result<(), CommandError> {
    let file = state.file(HOSTS_RECORD);
    if record.is_empty() {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(CommandError::Refused(format!("{}: {e}", file.display())))
            }
            _ => Ok(()),
        };
    }
    amplihack_state::files::write_json(&file, record)
        .map_err(|e| CommandError::Refused(e.to_string()))
}

/// Brings the plugin-event entries of every other host's registered hooks file in line with the
/// active plugins: each event they need that the host delivers and amplihack's rows there do not
/// cover gets one `dispatch --host <host>` entry, with the same loss-free edit as the
/// registration (the host's JSONC kept; Codex's entries trusted after the write). Returns one
/// line per file changed, for the user.
pub fn sync_hosts(ctx: &Context) -> Result<Vec<String>, CommandError> {
    use crate::hosts::Target;
    use crate::registration::Host;
    use crate::scopes::Scope;
    use amplihack_settings::registration::ShapeError;

    let state = ctx.state();
    let manifest = amplihack_state::manifest::load(&state).unwrap_or_default();
    let deployed = manifest
        .bin_dir
        .as_ref()
        .map(|dir| dir.join(amplihack_protocol::table::HOOKS_BINARY));
    let targets: Vec<Target> = crate::commands::shared::manifest_targets(&manifest)
        .into_iter()
        .filter(|t| t.host != Host::ClaudeCode && crate::hosts::edits_json_hooks(t.host))
        .collect();
    let recorded = hosts_record(&state);
    // Files no longer registered (uninstalled) are forgotten.
    let mut record: HostsRecord = recorded
        .iter()
        .filter(|(file, _)| targets.iter().any(|t| &t.path == *file))
        .map(|(file, events)| (file.clone(), events.clone()))
        .collect();
    let (user, project) = with_places(ctx, shared::active_plugins);
    let events_of = |plugins: &[Plugin]| -> Vec<String> {
        plugins.iter().flat_map(shared::events_of).collect()
    };
    let user_events = events_of(&user);
    let project = project.map(|(root, plugins)| (root, events_of(&plugins)));
    let mut lines = Vec::new();
    // Each host's plugin events go in one file of this project, the first registered.
    let mut project_served: Vec<Host> = Vec::new();
    for target in &targets {
        let host = target.host;
        let wanted = match target.scope {
            Scope::User => plugin_events::needed_in(host, user_events.iter().map(String::as_str)),
            Scope::Project | Scope::Local => match &project {
                // A second file of this project's for the host: none there.
                Some((root, _))
                    if target.path.starts_with(root) && project_served.contains(&host) =>
                {
                    Vec::new()
                }
                Some((root, events)) if target.path.starts_with(root) => {
                    project_served.push(host);
                    let user_registered = targets
                        .iter()
                        .any(|t| t.host == host && t.scope == Scope::User);
                    let by_user = if user_registered {
                        plugin_events::needed_in(host, user_events.iter().map(String::as_str))
                    } else {
                        Vec::new()
                    };
                    plugin_events::needed_in(host, events.iter().map(String::as_str))
                        .into_iter()
                        .filter(|e| !by_user.contains(e))
                        .collect()
                }
                // Another project's file: left as it is.
                _ => continue,
            },
            Scope::Managed => continue,
        };
        let owned = record.get(&target.path).cloned().unwrap_or_default();
        if wanted.is_empty() && owned.is_empty() {
            continue;
        }
        let Ok(Some((_, current))) = target.read_json() else {
            continue; // gone, or unreadable: `doctor` says why
        };
        let Some(binary) = deployed_in(deployed.as_ref(), host, &current) else {
            continue; // amplihack is no longer registered there (or not with this binary)
        };
        let apply = |value: &mut serde_json::Value| -> Result<(bool, Vec<String>), ShapeError> {
            plugin_events::sync_in(host, value, &binary, &owned, &wanted)
        };
        let mut probe = current.clone();
        let Ok((changed, now_owned)) = apply(&mut probe) else {
            continue; // not editable: `doctor` says why
        };
        if changed {
            let options = target.edit_options(&EditOptions::default());
            safe_file::edit_json(&target.path, &options, |current| {
                let mut value = current.cloned().unwrap_or_else(|| serde_json::json!({}));
                apply(&mut value)?;
                Ok(safe_file::NewContent::Value(value))
            })
            .map_err(|e| CommandError::Refused(e.to_string()))?;
            if host == Host::Codex {
                let written = crate::hosts::codex::Written::new(&binary, &wanted);
                crate::hosts::codex::trust_after_write(&target.path, target.scope, false, &written);
            }
            lines.push(format!(
                "{}: {}: plugin events registered: {}",
                crate::commands::shared::host_name(host),
                target.path.display(),
                if wanted.is_empty() {
                    "none".to_string()
                } else {
                    wanted.join(", ")
                }
            ));
        }
        if now_owned.is_empty() {
            record.remove(&target.path);
        } else {
            record.insert(target.path.clone(), now_owned);
        }
    }
    lines.extend(crate::hosts::codex::take_notes());
    if record != recorded {
        write_hosts_record(&state, &record)?;
    }
    Ok(lines)
}

/// The timeouts the active plugins (the user's, and this project's when trusted) declare, per
/// event.
pub fn declared(ctx: &Context) -> amplihack_settings::registration::Declared {
    let (user, project) = with_places(ctx, shared::active_plugins);
    let mut declared = shared::declared_timeouts(&user);
    if let Some((_, plugins)) = project {
        declared.extend(shared::declared_timeouts(&plugins));
    }
    declared
}

/// Brings the timeouts of amplihack's registrations in every registered hooks file (Claude
/// Code's and the other hosts') in line with the plugins: a row whose event a plugin declares
/// more for than amplihack's own deadline leaves is registered with enough for it (capped at
/// the host's maximum) and says so to the binary (`--timeout N`); the others are as the table
/// registers them. One line per file changed.
pub fn sync_timeouts(ctx: &Context) -> Result<Vec<String>, CommandError> {
    use amplihack_settings::registration;

    let state = ctx.state();
    let manifest = amplihack_state::manifest::load(&state).unwrap_or_default();
    let targets: Vec<crate::hosts::Target> = crate::commands::shared::manifest_targets(&manifest)
        .into_iter()
        .filter(|t| crate::hosts::edits_json_hooks(t.host))
        .collect();
    if targets.is_empty() {
        return Ok(Vec::new());
    }
    let declared = declared(ctx);
    let deployed = manifest
        .bin_dir
        .as_ref()
        .map(|dir| dir.join(amplihack_protocol::table::HOOKS_BINARY));
    let plugin_events = hosts_record(&state);
    let mut lines = Vec::new();
    for target in &targets {
        let host = target.host;
        let Ok(Some((_, current))) = target.read_json() else {
            continue; // gone, or unreadable: `doctor` says why
        };
        let Some(binary) = deployed_in(deployed.as_ref(), host, &current) else {
            continue; // amplihack is no longer registered there (or not with this binary)
        };
        let raised = registration::raised_for(host, &declared);
        let apply = |value: &mut serde_json::Value| {
            registration::install_raised(value, &binary, host, &raised)
        };
        let mut probe = current.clone();
        if apply(&mut probe).is_err() || probe == current {
            continue; // in step (or not editable: `doctor` says why)
        }
        let options = target.edit_options(&EditOptions::default());
        safe_file::edit_json(&target.path, &options, |current| {
            let mut value = current.cloned().unwrap_or_else(|| serde_json::json!({}));
            apply(&mut value)?;
            Ok(safe_file::NewContent::Value(value))
        })
        .map_err(|e| CommandError::Refused(e.to_string()))?;
        if host == Host::Codex {
            let events = plugin_events.get(&target.path).cloned().unwrap_or_default();
            let written = crate::hosts::codex::Written::new(&binary, &events);
            crate::hosts::codex::trust_after_write(&target.path, target.scope, false, &written);
        }
        let what = if raised.is_empty() {
            "amplihack's own timeouts (no plugin declares more)".to_string()
        } else {
            raised
                .iter()
                .map(|(subcommand, secs)| {
                    let event = amplihack_protocol::table::find(subcommand)
                        .map_or(*subcommand, |h| h.event_name());
                    format!("{event} {secs} s")
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        lines.push(format!(
            "{}: {}: timeouts for your plugins: {what}",
            crate::commands::shared::host_name(host),
            target.path.display(),
        ));
    }
    lines.extend(crate::hosts::codex::take_notes());
    Ok(lines)
}

/// For `hooks list`: each timeout the plugin declares that a host amplihack is installed for
/// does not allow (its maximum for the event), with what the plugin gets there instead.
pub fn timeouts_beyond_hosts(plugin: &Plugin, hosts: &Hosts) -> Vec<String> {
    use amplihack_protocol::table;
    use amplihack_settings::registration;

    let mut installed: Vec<Host> = Vec::new();
    if hosts.claude {
        installed.push(Host::ClaudeCode);
    }
    installed.extend(hosts.others.iter().copied());
    let mut notes = Vec::new();
    for (event, secs) in shared::declared_timeouts(std::slice::from_ref(plugin)) {
        for host in &installed {
            let dialect = amplihack_protocol::hosts::dialect(*host);
            let Some(cap) = dialect.timeout_cap_secs(&event) else {
                continue;
            };
            let row = registration::canonical(*host)
                .into_iter()
                .filter_map(|spec| table::find(spec.subcommand))
                .find(|hook| hook.forwards && hook.event.as_ref() == Some(&event));
            let Some(row) = row else {
                continue;
            };
            let raised = registration::raised_for(*host, &[(event.clone(), secs)])
                .first()
                .map(|(_, s)| *s);
            if table::plugin_fits(row, raised, secs) {
                continue;
            }
            let deadline = raised.map_or(row.deadline, |s| row.deadline_under(s));
            let gets = deadline.saturating_sub(std::time::Duration::from_secs(1));
            notes.push(format!(
                "{}: timeout {secs} s exceeds what {} allows ({cap} s for {}): it gets about {:.1} s there",
                event.as_str(),
                host.title(),
                event.as_str(),
                gets.as_secs_f64()
            ));
        }
    }
    notes
}

/// After uninstall: the record of the other hosts' plugin-event entries forgets the files no
/// longer registered (the entries went with amplihack's others).
pub fn forget_unregistered(locations: &crate::scopes::Locations) -> Result<(), CommandError> {
    let state = locations.state();
    let recorded = hosts_record(&state);
    if recorded.is_empty() {
        return Ok(());
    }
    let manifest = amplihack_state::manifest::load(&state).unwrap_or_default();
    let mut record = recorded.clone();
    record.retain(|file, _| manifest.registrations.iter().any(|r| &r.path == file));
    if record != recorded {
        write_hosts_record(&state, &record)?;
    }
    Ok(())
}

/// Before uninstall: the plugin handler groups amplihack copied into Claude Code's settings go too
/// (its `dispatch` entries go with its other entries).
pub fn remove_host_groups(
    locations: &crate::scopes::Locations,
    dry_run: bool,
) -> Result<Vec<String>, CommandError> {
    let options = EditOptions {
        dry_run,
        ..EditOptions::default()
    };
    shared::remove_host_groups(&locations.state(), &options).map_err(CommandError::Refused)
}

/// The Claude Code events amplihack's Amplifier module delivers: the kernel events with a Claude
/// Code counterpart (the module's `EVENTS`; a test keeps the two in step).
pub const AMPLIFIER_DELIVERS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "Notification",
    "SubagentStart",
    "PermissionRequest",
    "StopFailure",
];

/// Which hosts amplihack is installed for, as [`undelivered_anywhere`] weighs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hosts {
    /// amplihack's entries are in some Claude Code settings file.
    pub claude: bool,
    /// `amplihack install --host amplifier` was run (the manifest says so).
    pub amplifier: bool,
    /// The machine's managed settings allow only their own hooks (`allowManagedHooksOnly`):
    /// only their `dispatch` entries deliver.
    pub managed_only: bool,
    /// The other hosts amplihack is installed for (Codex, Gemini, ...: the manifest's hosts):
    /// each delivers the events its dialect says ([`amplihack_protocol::hosts::Dialect::delivers`]).
    pub others: Vec<Host>,
}

impl Hosts {
    /// What this user's install serves: Claude Code when `claude_registered`, and the hosts the
    /// install manifest records.
    pub fn of(ctx: &Context, claude_registered: bool) -> Hosts {
        let recorded = amplihack_state::manifest::load(&ctx.state())
            .unwrap_or_default()
            .hosts;
        Hosts {
            claude: claude_registered,
            amplifier: recorded.iter().any(|h| h == Host::Amplifier.name()),
            managed_only: managed_only(),
            others: Host::ALL
                .into_iter()
                .filter(|h| !matches!(h, Host::ClaudeCode | Host::Amplifier))
                .filter(|h| recorded.iter().any(|n| n == h.name()))
                .collect(),
        }
    }
}

/// Whether the machine's managed settings allow only their own hooks.
pub fn managed_only() -> bool {
    crate::managed::read(&claude_paths::managed_dir())
        .hooks_only_from
        .is_some()
}

/// Whether amplihack was installed for Amplifier (its manifest's hosts).
pub fn amplifier_installed(ctx: &Context) -> bool {
    amplihack_state::manifest::load(&ctx.state())
        .is_ok_and(|m| m.hosts.iter().any(|h| h == "amplifier"))
}

/// Of a plugin's events, those no installed host delivers, each with why (per host). Nothing
/// when amplihack is installed for no host.
pub fn undelivered_anywhere(
    plugin: &Plugin,
    hosts: &Hosts,
    version: Option<Version>,
    registered: &[String],
) -> Vec<(String, String)> {
    if !hosts.claude && !hosts.amplifier && hosts.others.is_empty() {
        return Vec::new();
    }
    let by_claude = undelivered(plugin, version, registered, hosts.managed_only);
    shared::events_of(plugin)
        .into_iter()
        .filter_map(|event| {
            // Another installed host delivers it: amplihack registers it there for the plugin.
            let name = amplihack_protocol::EventName::parse(&event);
            if hosts
                .others
                .iter()
                .any(|h| amplihack_protocol::hosts::dialect(*h).reaches_plugins(&name))
            {
                return None;
            }
            let claude = if hosts.claude {
                let why = by_claude.iter().find(|(e, _)| *e == event)?;
                Some(why.1.clone())
            } else {
                None
            };
            let amplifier = if hosts.amplifier {
                if AMPLIFIER_DELIVERS.contains(&event.as_str()) {
                    return None;
                }
                Some("Amplifier has no kernel event for it".to_string())
            } else {
                None
            };
            let others = (!hosts.others.is_empty()).then(|| {
                let titles: Vec<&str> = hosts.others.iter().map(|h| h.title()).collect();
                let verb = if titles.len() == 1 {
                    "delivers"
                } else {
                    "deliver"
                };
                format!("{} never {verb} it", titles.join(", "))
            });
            let why = [
                claude.map(|c| {
                    if hosts.amplifier || others.is_some() {
                        format!("Claude Code: {c}")
                    } else {
                        c
                    }
                }),
                amplifier,
                others,
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ");
            if why.is_empty() {
                return None;
            }
            Some((event, why))
        })
        .collect()
}

/// Of a plugin's events, those that never reach it under Claude Code, each with why.
pub fn undelivered(
    plugin: &Plugin,
    version: Option<Version>,
    registered: &[String],
    managed_only: bool,
) -> Vec<(String, String)> {
    let table = plugin_events::registered_by_table();
    shared::events_of(plugin)
        .into_iter()
        .filter_map(|event| {
            let why = if let Err(why) = plugin_events::delivers(&event, version) {
                why
            } else if table.contains(&event.as_str()) || registered.contains(&event) {
                return None;
            } else if managed_only {
                format!(
                    "Claude Code runs only the managed settings' hooks here (allowManagedHooksOnly), and they do not dispatch it: an administrator registers it with `{}`",
                    crate::managed::command_adding(&event, registered)
                )
            } else {
                "not registered with Claude Code yet (`amplihack doctor --fix` or any `amplihack hooks` change registers it for the next session; a session's start registers it for the session after, since Claude Code reads its hooks once, at start)"
                    .into()
            };
            Some((event, why))
        })
        .collect()
}

/// The plugin's handlers that run nowhere, each with why: a kind Claude Code runs itself (prompt,
/// agent, http, mcp_tool) runs when amplihack is registered with a Claude Code that has it.
pub fn not_run(plugin: &Plugin, version: Option<Version>, claude_registered: bool) -> Vec<String> {
    use amplihack_engine::handlers::HandlerKind;
    let mut notes = Vec::new();
    for group in plugin.config.iter().flat_map(|c| &c.groups) {
        for handler in group.handlers.iter().filter(|h| h.enabled) {
            let Some((_, since)) = handler.kind.host_entry() else {
                continue;
            };
            let agent = handler.kind.type_name() == "agent";
            let refused = matches!(handler.kind.type_name(), "prompt" | "agent")
                .then(|| {
                    amplihack_engine::handlers::prompt::refused_on(
                        &amplihack_protocol::EventName::parse(&group.event),
                        agent,
                    )
                })
                .flatten();
            // Claude Code refuses it there (and amplihack's Amplifier module does too).
            let why = if let Some(refusal) = refused {
                format!("Claude Code refuses it: {refusal}")
            } else {
                match version {
                    // Without Claude Code, amplihack's Amplifier module puts a prompt (or an agent's
                    // task) to the session's model, and an http handler's POST is made with the app's
                    // Python.
                    _ if !claude_registered
                        && matches!(handler.kind.type_name(), "prompt" | "http" | "agent") =>
                    {
                        continue;
                    }
                    _ if !claude_registered => {
                        "amplihack is not registered with Claude Code, the only host that runs it"
                            .to_string()
                    }
                    Some(v) if v >= since => continue,
                    Some(v) => format!(
                        "Claude Code {}.{}.{} does not have it (it came in {}.{}.{})",
                        v.0, v.1, v.2, since.0, since.1, since.2
                    ),
                    None => "the installed Claude Code's version is unknown".to_string(),
                }
            };
            notes.push(format!(
                "{} `{}` handler on {}: {why}",
                handler.kind.type_name(),
                amplihack_engine::handlers::short_name(&handler.command),
                group.event
            ));
        }
    }
    notes
}

/// What `hooks list` needs to say which events reach each plugin: the installed Claude Code's
/// version (asked only when some plugin needs more than amplihack's table), the plugin events
/// registered in any scope, and whether amplihack is registered with Claude Code at all.
pub fn delivery(ctx: &Context) -> (Option<Version>, Vec<String>, bool) {
    let version = with_places(ctx, shared::beyond_table)
        .then(claude_version)
        .flatten();
    let mut registered = Vec::new();
    let mut ours = false;
    // Under allowManagedHooksOnly only the managed settings' `dispatch` entries deliver.
    let managed = claude_paths::managed(&claude_paths::managed_dir());
    let only_managed = managed_only();
    let files = claude_paths::all(&ctx.locations.claude_config_dir, &ctx.locations.project)
        .into_iter()
        .map(|(_, file)| file)
        .chain(std::iter::once(managed.clone()));
    for file in files {
        if let Ok(Some((_, value))) = safe_file::read_json(&file) {
            ours |= shared::our_binary(&value).is_some();
            if !only_managed || file == managed {
                registered.extend(plugin_events::registered(&value));
            }
        }
    }
    (version, registered, ours)
}

/// For `doctor`: per plugin, each event no host will deliver and each handler that runs nowhere,
/// with why; with `fix`, the plugin registrations are brought in line first.
pub fn doctor_notes(ctx: &Context, fix: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if fix {
        match sync(ctx) {
            Ok(lines) => notes.extend(lines.into_iter().map(|l| format!("repaired: {l}"))),
            Err(e) => notes.push(format!("plugin events could not be registered: {e}")),
        }
        match sync_hosts(ctx) {
            Ok(lines) => notes.extend(lines.into_iter().map(|l| format!("repaired: {l}"))),
            Err(e) => notes.push(format!(
                "plugin events could not be registered with the other hosts: {e}"
            )),
        }
        match sync_timeouts(ctx) {
            Ok(lines) => notes.extend(lines.into_iter().map(|l| format!("repaired: {l}"))),
            Err(e) => notes.push(format!("plugin timeouts could not be registered: {e}")),
        }
    }
    let (version, registered, claude_registered) = delivery(ctx);
    let hosts = Hosts::of(ctx, claude_registered);
    for plugin in ctx.plugins() {
        for (event, why) in undelivered_anywhere(&plugin, &hosts, version, &registered) {
            notes.push(format!(
                "plugin {}: {event} never reaches it: {why}",
                plugin.name
            ));
        }
        if !claude_registered && !hosts.amplifier {
            continue;
        }
        for note in not_run(&plugin, version, claude_registered) {
            notes.push(format!("plugin {}: not run: {note}", plugin.name));
        }
    }
    notes
}

/// After a change to the plugins: Claude Code's registrations, and every other host's hooks
/// file, follow the events they need.
pub fn with_sync(outcome: Outcome, ctx: &Context) -> Outcome {
    with_sync_for(outcome, ctx, true)
}

/// [`with_sync`], Claude Code's settings only when `claude` (`install --host` without it).
pub fn with_sync_for(mut outcome: Outcome, ctx: &Context, claude: bool) -> Outcome {
    let mut lines = if claude {
        match sync(ctx) {
            Ok(lines) => lines,
            Err(message) => {
                vec![format!(
                    "plugin events could not be registered with Claude Code: {message}"
                )]
            }
        }
    } else {
        Vec::new()
    };
    match sync_hosts(ctx) {
        Ok(more) => lines.extend(more),
        Err(message) => lines.push(format!(
            "plugin events could not be registered with the other hosts: {message}"
        )),
    }
    match sync_timeouts(ctx) {
        Ok(more) => lines.extend(more),
        Err(message) => lines.push(format!(
            "plugin timeouts could not be registered: {message}"
        )),
    }
    for line in &lines {
        outcome.text.push_str(line);
        outcome.text.push('\n');
    }
    if !lines.is_empty() {
        outcome.json["plugin_events"] = serde_json::json!(lines);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::AMPLIFIER_DELIVERS;

    /// [`AMPLIFIER_DELIVERS`] is what amplihack's module maps kernel events to (its `EVENTS`).
    #[test]
    fn amplifier_delivery_matches_the_modules_event_table() {
        let module = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../amplifier/amplifier_module_hooks_amplihack/__init__.py");
        let text = std::fs::read_to_string(&module).unwrap_or_default();
        let table = text
            .split_once("EVENTS = {")
            .and_then(|(_, rest)| rest.split_once("\n}"))
            .map(|(table, _)| table)
            .unwrap_or_default();
        let mut mapped: Vec<&str> = table
            .lines()
            .filter_map(|line| line.trim().strip_suffix("),"))
            .filter_map(|line| line.rsplit('"').nth(1))
            .collect();
        mapped.sort_unstable();
        mapped.dedup();
        let mut ours = AMPLIFIER_DELIVERS.to_vec();
        ours.sort_unstable();
        assert!(
            !mapped.is_empty(),
            "no EVENTS table in {}",
            module.display()
        );
        assert_eq!(ours, mapped);
    }
}
