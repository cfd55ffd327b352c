//! `--scope managed` for Codex and Copilot CLI: amplihack's hooks in the machine's own policy
//! files, for every user of the machine ([`codex_requirements`]: `/etc/codex/requirements.toml`;
//! [`copilot_policy`]: `/etc/github-copilot/policy.d/amplihack.json`). Their forms differ from the
//! users' hooks files, so the generic commands leave these targets to this module: install and
//! uninstall write them here (locked, backed up, atomic: [`crate::safe_file::edit_text`]); doctor
//! and status read them here. They are the machine's, not a user's: no user's manifest records them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{CommandError, Target};
use crate::finding::Finding;
use crate::hosts::{codex_requirements, copilot_policy};
use crate::registration::{self, Host};
use crate::safe_file::{self, EditOptions, EditReport};
use crate::scopes::Scope;

/// Whether this module, not the generic JSON editing, writes `host`'s `scope`.
pub fn handles(host: Host, scope: Scope) -> bool {
    scope == Scope::Managed && matches!(host, Host::Codex | Host::Copilot)
}

/// The machine's file amplihack's managed entries for `host` go in.
pub fn file(host: Host) -> Option<PathBuf> {
    match host {
        Host::Codex => Some(PathBuf::from(codex_requirements::REQUIREMENTS)),
        Host::Copilot => {
            Some(Path::new(copilot_policy::POLICY_DIR).join(copilot_policy::FILE_NAME))
        }
        _ => None,
    }
}

fn target(host: Host) -> Option<Target> {
    Some(Target {
        host,
        scope: Scope::Managed,
        path: file(host)?,
    })
}

/// What install asks of the managed files.
pub struct Request<'a> {
    pub binary: &'a Path,
    /// Codex: the events beyond amplihack's own that get a `dispatch` entry (Claude Code's names),
    /// `None`: those the file has now.
    pub plugin_events: Option<&'a [String]>,
    /// Codex: `allow_managed_hooks_only = true`.
    pub hooks_only: bool,
    pub dry_run: bool,
    /// Copilot: its PreToolUse entry refuses when the binary is missing (`--fail-closed`).
    pub failure: registration::Failure,
}

/// The events `--plugin-events` asks of Codex, in Codex's names: refused when Codex does not
/// deliver one; a note for each amplihack registers anyway.
pub fn codex_plugin_events(
    requested: &[String],
) -> Result<(Vec<String>, Vec<String>), CommandError> {
    use amplihack_protocol::EventName;
    let table = amplihack_settings::plugin_events::registered_by_table_in(Host::Codex);
    let delivered: Vec<String> = EventName::KNOWN
        .iter()
        .filter_map(|e| registration::plugin_event_spec(Host::Codex, e).map(|s| s.event))
        .filter(|e| !table.contains(e))
        .map(str::to_string)
        .collect();
    let mut events = Vec::new();
    let mut notes = Vec::new();
    for event in requested.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        if event == "none" {
            continue;
        }
        if event == "all" {
            events.extend(delivered.iter().cloned());
            continue;
        }
        match registration::plugin_event_spec(Host::Codex, &EventName::parse(event)) {
            Some(spec) if table.contains(&spec.event) => notes.push(format!(
                "--plugin-events: {event} is one of amplihack's own events: its managed entries already forward it to users' plugins"
            )),
            Some(spec) => events.push(spec.event.to_string()),
            None => {
                return Err(CommandError::refused(format!(
                    "--plugin-events: `{event}` is not an event Codex delivers; Codex has, beyond amplihack's own: {}; nothing was changed",
                    delivered.join(",")
                )));
            }
        }
    }
    events.sort();
    events.dedup();
    Ok((events, notes))
}

/// amplihack's `hooks` object for `host`, with `dispatch` entries for `plugin_events` (the
/// host's names).
fn hooks_for(
    host: Host,
    binary: &Path,
    plugin_events: &[String],
    failure: registration::Failure,
) -> Result<serde_json::Map<String, Value>, CommandError> {
    let shape = |e: registration::ShapeError| CommandError::refused(e.message());
    let mut value = json!({});
    registration::install_failing(&mut value, binary, host, failure).map_err(shape)?;
    if !plugin_events.is_empty() {
        amplihack_settings::plugin_events::sync_in(host, &mut value, binary, &[], plugin_events)
            .map_err(shape)?;
    }
    Ok(value
        .get("hooks")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default())
}

/// Writes amplihack's managed entries for `host`: the file's report.
pub fn install(host: Host, request: &Request<'_>) -> Result<(Target, EditReport), CommandError> {
    let target = target(host)
        .ok_or_else(|| CommandError::refused(format!("{} has no managed scope", host.title())))?;
    let options = EditOptions {
        dry_run: request.dry_run,
        ..EditOptions::default()
    };
    let managed_dir = request
        .binary
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(crate::managed::MANAGED_BIN_DIR));
    let report = match host {
        Host::Codex => {
            let present = safe_file::read_text(&target.path)?
                .map(|text| {
                    amplihack_settings::plugin_events::registered_in(
                        Host::Codex,
                        &codex_requirements::hooks_json(&text),
                    )
                })
                .unwrap_or_default();
            let events = request.plugin_events.map_or(present, <[String]>::to_vec);
            let hooks = hooks_for(host, request.binary, &events, request.failure)?;
            let wanted = codex_requirements::Wanted {
                hooks: &hooks,
                managed_dir: &managed_dir,
                hooks_only: request.hooks_only,
            };
            safe_file::edit_text(&target.path, &options, |current| {
                codex_requirements::install(current, &wanted)
                    .map(Some)
                    .map_err(|e| format!("{e}; nothing was changed"))
            })?
        }
        _ => {
            let hooks = hooks_for(host, request.binary, &[], request.failure)?;
            let text = format!(
                "{}\n",
                serde_json::to_string_pretty(&copilot_policy::document(&hooks))
                    .map_err(|e| CommandError::refused(e.to_string()))?
            );
            make_dirs(&target.path, request.dry_run)?;
            let options = EditOptions {
                backup: false,
                ..options
            };
            safe_file::edit_text(&target.path, &options, |current| {
                match current {
                Some(current)
                    if copilot_policy::ours(
                        &serde_json::from_str(current).unwrap_or(Value::Null),
                    )
                    .is_empty() =>
                {
                    Err("it is not amplihack's (no amplihack-hooks entry): move it aside, then run the command again; nothing was changed".to_string())
                }
                _ => Ok(Some(text.clone())),
            }
            })?
        }
    };
    Ok((target, report))
}

/// The directories above a managed file that install creates (readable by every user).
fn make_dirs(path: &Path, dry_run: bool) -> Result<(), CommandError> {
    use std::os::unix::fs::DirBuilderExt;
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    if dry_run || dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(|e| CommandError::io("create", dir, e))
}

/// Takes amplihack's managed entries for `host` out: the organisation's bytes as they were; a file
/// (and the directories above it, when empty) that held only amplihack's, gone.
pub fn uninstall(host: Host, dry_run: bool) -> Result<Option<(Target, EditReport)>, CommandError> {
    let Some(target) = target(host) else {
        return Ok(None);
    };
    if !target.path.exists() {
        return Ok(None);
    }
    let options = EditOptions {
        dry_run,
        ..EditOptions::default()
    };
    let report = match host {
        Host::Codex => safe_file::edit_text(&target.path, &options, |current| match current {
            None => Ok(None),
            Some(text) if codex_requirements::ours(text).is_empty() => Ok(Some(text.to_string())),
            Some(text) => codex_requirements::remove(text).map_err(|e| e.to_string()),
        })?,
        _ => {
            let options = EditOptions {
                backup: false,
                ..options
            };
            safe_file::edit_text(&target.path, &options, |current| match current {
                Some(text)
                    if copilot_policy::ours(&serde_json::from_str(text).unwrap_or(Value::Null))
                        .is_empty() =>
                {
                    Ok(Some(text.to_string()))
                }
                _ => Ok(None),
            })?
        }
    };
    if !dry_run {
        let sidecar = target.path.parent().map(|d| {
            d.join(format!(
                ".{}.amplihack.lock",
                target
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ))
        });
        if let Some(sidecar) = sidecar {
            let _ = std::fs::remove_file(sidecar);
        }
        if host == Host::Copilot {
            // policy.d/ and github-copilot/ when amplihack's file was all they held.
            for dir in target.path.ancestors().skip(1).take(2) {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
    Ok(Some((target, report)))
}

/// amplihack's entries in `host`'s managed file, as (event, command).
pub fn ours(host: Host) -> Vec<(String, String)> {
    let Some(path) = file(host) else {
        return Vec::new();
    };
    let Ok(Some(text)) = safe_file::read_text(&path) else {
        return Vec::new();
    };
    match host {
        Host::Codex => codex_requirements::ours(&text),
        _ => copilot_policy::ours(&serde_json::from_str(&text).unwrap_or(Value::Null)),
    }
}

/// The machine's managed registrations of these hosts that hold amplihack's entries.
pub fn registered() -> Vec<Target> {
    [Host::Codex, Host::Copilot]
        .into_iter()
        .filter(|h| !ours(*h).is_empty())
        .filter_map(target)
        .collect()
}

/// doctor's check of `host`'s managed file: each of amplihack's commands runs a binary that is
/// there; for Codex, the managed directory it needs exists, and what `allow_managed_hooks_only`
/// means for the users' own registrations.
pub fn check(host: Host) -> Vec<Finding> {
    let Some(path) = file(host) else {
        return Vec::new();
    };
    let entries = ours(host);
    if entries.is_empty() {
        return Vec::new();
    }
    let mut findings = Vec::new();
    let binaries: Vec<String> = {
        let mut b: Vec<String> = entries
            .iter()
            .filter_map(|(_, c)| registration::recognise(c)?.binary)
            .collect();
        b.sort();
        b.dedup();
        b
    };
    let missing: Vec<&String> = binaries
        .iter()
        .filter(|b| !crate::deploy::is_executable(Path::new(b.as_str())))
        .collect();
    if missing.is_empty() {
        findings.push(Finding::ok(format!(
            "{}: amplihack is registered in the managed {} ({} entries, trusted by policy, for every user)",
            host.title(),
            path.display(),
            entries.len()
        )));
    } else {
        findings.push(Finding::problem(
            format!(
                "{}: the managed {} runs {}, which is not there",
                host.title(),
                path.display(),
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "sudo amplihack install --scope managed --host {}",
                host.name()
            ),
        ));
    }
    if host == Host::Codex
        && let Ok(Some(text)) = safe_file::read_text(&path)
    {
        let said = codex_requirements::said(&text);
        match said.managed_dir.as_deref().map(Path::new) {
            Some(dir) if dir.is_absolute() && dir.is_dir() => {}
            other => findings.push(Finding::problem(
                format!(
                    "{}: hooks.managed_dir {} — Codex skips every managed hook until it names an existing absolute directory",
                    path.display(),
                    other.map_or_else(|| "is not set".to_string(), |d| format!("`{}` is not an existing absolute directory", d.display()))
                ),
                "sudo amplihack install --scope managed --host codex (or create the directory it names)".to_string(),
            )),
        }
        if said.hooks_only == Some(true) {
            findings.push(Finding::note(
                format!(
                    "{} sets {} = true: Codex runs only managed hooks; users' own hooks.json entries (amplihack's too) do not run",
                    path.display(),
                    codex_requirements::HOOKS_ONLY_KEY
                ),
                "nothing to do: the managed entries serve every user".into(),
            ));
        }
    }
    findings
}
