//! Session start, under Claude Code: repairs stale registrations of amplihack in the settings
//! files that apply to this session, with exactly the installer's loss-free edit
//! ([`amplihack_settings`]: locked, backed up, atomic, the user's bytes kept), at most once per
//! session, and tells the user what changed.
//!
//! Stale means: a legacy Python hook entry (`tools/amplihack/hooks/*.py`), a legacy subcommand,
//! an `amplihack-hooks` entry whose binary no longer exists, or the same registration in the user
//! scope and in this project with different commands (the hooks would run twice: Claude Code runs
//! identical commands from several settings files once, different ones each). The repair points
//! every entry of the file at a binary that exists (the one this file already uses if it exists,
//! else the one running now), and a project-level copy at the user scope's command. The entries
//! for the events the user's plugins need ([`super::plugin_events`]) are brought in line too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use amplihack_protocol::{EventName, Host, Reply};
use amplihack_settings::claude_paths;
use amplihack_settings::registration::{self, OurHandler};
use amplihack_settings::safe_file::{self, EditOptions, NewContent};
use amplihack_state::session;
use amplihack_state::{bounded, safe_open};

use super::{BuiltinError, Result, SETTINGS_MAX};
use crate::pipeline::Call;

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    if event.name != EventName::SessionStart || ctx.host != Host::ClaudeCode {
        return Ok(Reply::default());
    }
    let Some(state) = ctx.state() else {
        return Ok(Reply::default());
    };
    let first = session::update(&state, event.session_id.as_deref(), |s| {
        s.first_notice("registrations")
    })?;
    if !first {
        return Ok(Reply::default());
    }
    let Some(home) = ctx.var("HOME") else {
        return Ok(Reply::default());
    };
    let user_dir = claude_paths::config_dir(Path::new(&home), &|name| ctx.var(name));
    let root = ctx.project_root(event);
    let running = std::env::current_exe().ok();
    let mut changed = Vec::new();
    let mut user_binary: Option<String> = None;
    // Whether any file holds plugin-event entries (which may need removing).
    let mut dispatching = false;
    for (scope, path) in claude_paths::all(&user_dir, &root) {
        if scope != "user" && same_file(&path, &user_dir.join("settings.json")) {
            continue;
        }
        // A project's settings file is the repository's: read only a regular file within
        // SETTINGS_MAX (a link to /dev/zero or a FIFO would cost the session its context).
        // It is written too: a link on the way (a project's `.claude`, its settings file) is
        // refused.
        if !matches!(bounded::check_regular(&path, SETTINGS_MAX), Ok(true))
            || (scope != "user" && safe_open::check_beneath(&root, &path).is_err())
        {
            continue;
        }
        let Ok(Some((_, value))) = safe_file::read_json(&path) else {
            continue; // unreadable files are doctor's to report, not a hook's to touch
        };
        let ours: Vec<OurHandler> = registration::find_ours(&value)
            .into_iter()
            .map(|(_, _, h)| h)
            .collect();
        dispatching |= ours
            .iter()
            .any(|h| h.subcommand.as_deref() == Some("dispatch"));
        if ours.is_empty() {
            continue;
        }
        let existing = ours
            .iter()
            .filter_map(|h| h.binary.clone())
            .find(|b| Path::new(b).is_absolute() && Path::new(b).is_file());
        let mut why = Vec::new();
        if ours.iter().any(|h| h.binary.is_none()) {
            why.push("legacy Python hooks".to_string());
        }
        if ours.iter().any(|h| {
            h.subcommand
                .as_deref()
                .is_some_and(|s| amplihack_protocol::table::find(s).is_none())
        }) {
            why.push("legacy subcommands".to_string());
        }
        if let Some(gone) = ours
            .iter()
            .filter_map(|h| h.binary.as_deref())
            .find(|b| Path::new(b).is_absolute() && !Path::new(b).exists())
        {
            why.push(format!("{gone} no longer exists"));
        }
        let mut target = existing.clone();
        if scope != "user"
            && let Some(user) = &user_binary
            && ours
                .iter()
                .any(|h| h.binary.as_deref() != Some(user.as_str()))
        {
            why.push(format!(
                "it duplicated the user-scope registration with a different command ({user})"
            ));
            target = Some(user.clone());
        }
        let binary = target
            .map(PathBuf::from)
            .or_else(|| running.clone())
            .ok_or_else(|| BuiltinError::Other("cannot tell where amplihack-hooks is".into()))?;
        if scope == "user" {
            user_binary = Some(binary.to_string_lossy().into_owned());
        }
        if why.is_empty() {
            continue;
        }
        let options = EditOptions {
            lock_timeout: Duration::from_millis(1_000),
            ..EditOptions::default()
        };
        let report = safe_file::edit_json(&path, &options, |current| {
            let mut value = current.cloned().unwrap_or_default();
            registration::install(&mut value, &binary, Host::ClaudeCode)?;
            Ok(NewContent::Value(value))
        })
        .map_err(|e| BuiltinError::Other(e.to_string()))?;
        let backup = report
            .backup
            .map(|b| format!(" (backup: {})", b.display()))
            .unwrap_or_default();
        changed.push(format!(
            "{} ({}): now runs {}{backup}",
            path.display(),
            why.join("; "),
            binary.display()
        ));
    }
    // The entries for the events the user's plugins need, when this Claude Code says its version
    // (the installer asked `claude --version`; a hook cannot afford to).
    // Nothing to look at (no plugin directory, no entry, nothing copied): nothing read.
    let plugin_dirs = Path::new(&home).join(".amplifier/hooks").is_dir()
        || root.join(".amplifier/hooks").is_dir();
    let copied = state.file(super::plugin_events::RECORD).is_file();
    if let Some(version) = amplihack_protocol::claude_version::from_env(&|name| ctx.var(name))
        && (plugin_dirs || dispatching || copied)
    {
        let places = super::plugin_events::Places {
            state: &state,
            home: Path::new(&home),
            claude_config_dir: &user_dir,
            project: &root,
        };
        let options = EditOptions {
            lock_timeout: Duration::from_millis(1_000),
            ..EditOptions::default()
        };
        match super::plugin_events::sync(&places, Some(version), &options) {
            Ok(synced) => {
                // This session read its hooks before the repair: `hooks list` says which
                // events reach the plugins from the next one.
                let _ = super::plugin_events::set_next_session(&state, &synced.added);
                changed.extend(synced.lines);
            }
            Err(e) => return Err(BuiltinError::Other(e)),
        }
    }
    if changed.is_empty() {
        return Ok(Reply::default());
    }
    Ok(Reply {
        system_message: Some(format!(
            "amplihack repaired stale hook registrations:\n- {}",
            changed.join("\n- ")
        )),
        ..Reply::default()
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
