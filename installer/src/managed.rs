//! Claude Code's managed settings, which an organisation deploys to every machine: what they say
//! about hooks. With `allowManagedHooksOnly: true` (in `managed-settings.json` or a
//! `managed-settings.d/` drop-in) Claude Code runs no user, project, local or plugin hook, so an
//! amplihack registered anywhere but the managed scope silently does nothing (`doctor` says so).

use std::path::{Path, PathBuf};

use amplihack_settings::{claude_paths, plugin_events};
use serde_json::Value;

use crate::registration;

/// Where amplihack's binaries go for the managed scope when `--bin-dir` names none: a place
/// every user of the machine can run them from (root's `~/.local/bin` is not).
pub const MANAGED_BIN_DIR: &str = "/usr/local/bin";

/// The key that keeps every hook but the managed ones from running.
pub const HOOKS_ONLY_KEY: &str = "allowManagedHooksOnly";

/// What the managed settings in one directory say about hooks.
#[derive(Debug, Default, PartialEq)]
pub struct Managed {
    /// The file (or drop-in) that sets `allowManagedHooksOnly: true`, the last one read.
    pub hooks_only_from: Option<PathBuf>,
    /// amplihack's entries are in the managed settings file.
    pub ours: bool,
    /// The events beyond amplihack's own that the managed file dispatches to users' plugins
    /// (`install --scope managed --plugin-events`), in file order.
    pub plugin_events: Vec<String>,
    /// Files that exist but cannot be read as a JSON object, with why (Claude Code 2.1.259 and
    /// later refuses to start over such a file).
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Reads the managed settings file and drop-ins in `dir`.
pub fn read(dir: &Path) -> Managed {
    let mut managed = Managed::default();
    let file = claude_paths::managed(dir);
    let files = std::iter::once(file.clone())
        .filter(|f| f.exists())
        .chain(claude_paths::managed_drop_ins(dir));
    for path in files {
        let value = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
        match value {
            Ok(value @ Value::Object(_)) => {
                if value.get(HOOKS_ONLY_KEY) == Some(&Value::Bool(true)) {
                    managed.hooks_only_from = Some(path.clone());
                }
                if path == file && !registration::find_ours(&value).is_empty() {
                    managed.ours = true;
                    managed.plugin_events = plugin_events::registered(&value);
                }
            }
            Ok(_) => managed
                .unreadable
                .push((path, "not a JSON object".to_string())),
            Err(why) => managed.unreadable.push((path, why)),
        }
    }
    managed
}

/// Why `--plugin-events` was refused: each names the value and the fix.
#[derive(Debug, PartialEq)]
pub enum PluginEventsError {
    /// `--plugin-events` without `--scope managed`: other scopes follow the plugins by themselves.
    NotManaged,
    /// `all` or `none` beside other values.
    AloneOnly(String),
    /// Not an event of any Claude Code.
    Unknown { event: String, known: Vec<String> },
    /// An event the installed Claude Code does not have (or its version is unknown).
    NotDelivered { event: String, why: String },
}

impl std::error::Error for PluginEventsError {}

impl std::fmt::Display for PluginEventsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginEventsError::NotManaged => write!(
                f,
                "--plugin-events is for --scope managed (in the other scopes amplihack registers the events a user's plugins need by itself); nothing was changed"
            ),
            PluginEventsError::AloneOnly(word) => write!(
                f,
                "--plugin-events: `{word}` stands alone (`--plugin-events {word}`), not beside event names; nothing was changed"
            ),
            PluginEventsError::Unknown { event, known } => write!(
                f,
                "--plugin-events: `{event}` is not a Claude Code event; the installed Claude Code has, beyond amplihack's own: {}; nothing was changed",
                known.join(",")
            ),
            PluginEventsError::NotDelivered { event, why } => write!(
                f,
                "--plugin-events: `{event}`: {why}; leave it out (or update Claude Code, or set AMPLIHACK_CLAUDE_BIN to the `claude` users run); nothing was changed"
            ),
        }
    }
}

/// The events `--plugin-events` asks for, checked against the installed Claude Code (`version`):
/// the sorted events that get a `dispatch` entry, and a note per event amplihack's own table
/// already registers (those need none).
pub fn plugin_events(
    requested: &[String],
    version: Option<plugin_events::Version>,
) -> Result<(Vec<String>, Vec<String>), PluginEventsError> {
    let table = plugin_events::registered_by_table();
    let beyond: Vec<String> = amplihack_protocol::EventName::KNOWN
        .iter()
        .map(|e| e.as_str().to_string())
        .filter(|e| !table.contains(&e.as_str()))
        .filter(|e| plugin_events::delivers(e, version).is_ok())
        .collect();
    let requested: Vec<&str> = requested
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    for word in ["all", "none"] {
        if requested.contains(&word) && requested.len() > 1 {
            return Err(PluginEventsError::AloneOnly(word.into()));
        }
    }
    match requested.as_slice() {
        ["all"] => {
            let mut all = beyond;
            all.sort();
            let notes = if version.is_none() {
                vec!["--plugin-events all: the installed Claude Code's version is unknown (`claude --version` did not answer; AMPLIHACK_CLAUDE_BIN names it), so only the events every Claude Code with hooks has".to_string()]
            } else {
                Vec::new()
            };
            return Ok((all, notes));
        }
        ["none"] => return Ok((Vec::new(), Vec::new())),
        _ => {}
    }
    let mut events = Vec::new();
    let mut notes = Vec::new();
    for event in requested {
        if table.contains(&event) {
            notes.push(format!(
                "--plugin-events: {event} is one of amplihack's own events: its managed entries already forward it to users' plugins"
            ));
            continue;
        }
        if let Err(why) = plugin_events::delivers(event, version) {
            let known = amplihack_protocol::EventName::KNOWN
                .iter()
                .any(|e| e.as_str() == event);
            return Err(if known {
                PluginEventsError::NotDelivered {
                    event: event.into(),
                    why,
                }
            } else {
                PluginEventsError::Unknown {
                    event: event.into(),
                    known: beyond,
                }
            });
        }
        events.push(event.to_string());
    }
    events.sort();
    events.dedup();
    Ok((events, notes))
}

/// The exact command that registers `event` in the managed settings beside the `present` ones.
pub fn command_adding(event: &str, present: &[String]) -> String {
    let mut events: Vec<&str> = present.iter().map(String::as_str).collect();
    events.push(event);
    events.sort_unstable();
    events.dedup();
    format!(
        "sudo amplihack install --scope managed --plugin-events {}",
        events.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_events_are_checked_against_the_installed_claude_code() {
        let new = Some((2, 1, 332));
        let asked = |list: &[&str], version| {
            plugin_events(
                &list.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                version,
            )
        };
        let (events, notes) = asked(&["SubagentStart", "Stop", "Notification"], new).expect("ok");
        assert_eq!(events, ["Notification", "SubagentStart"]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(matches!(
            asked(&["Nope"], new),
            Err(PluginEventsError::Unknown { .. })
        ));
        assert!(matches!(
            asked(&["PreSkillShellCommand"], Some((2, 1, 300))),
            Err(PluginEventsError::NotDelivered { .. })
        ));
        assert_eq!(
            asked(&["all", "Stop"], new),
            Err(PluginEventsError::AloneOnly("all".into()))
        );
        let (all, _) = asked(&["all"], new).expect("all");
        assert!(all.contains(&"PreSkillShellCommand".to_string()));
        assert!(!all.contains(&"Stop".to_string()));
        let (old, _) = asked(&["all"], Some((2, 0, 30))).expect("all");
        assert!(!old.contains(&"PreSkillShellCommand".to_string()));
        assert_eq!(asked(&["none"], new), Ok((Vec::new(), Vec::new())));
        assert_eq!(
            command_adding("SubagentStart", &["Notification".into()]),
            "sudo amplihack install --scope managed --plugin-events Notification,SubagentStart"
        );
    }

    #[test]
    fn what_the_managed_files_say() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(dir.path()), Managed::default());
        let file = claude_paths::managed(dir.path());
        std::fs::write(&file, r#"{"allowManagedHooksOnly": false}"#).expect("write");
        assert_eq!(read(dir.path()).hooks_only_from, None);
        let drop_ins = dir.path().join("managed-settings.d");
        std::fs::create_dir(&drop_ins).expect("mkdir");
        std::fs::write(
            drop_ins.join("10-hooks.json"),
            r#"{"allowManagedHooksOnly": true}"#,
        )
        .expect("write");
        std::fs::write(drop_ins.join("20-broken.json"), "{").expect("write");
        let read = read(dir.path());
        assert_eq!(read.hooks_only_from, Some(drop_ins.join("10-hooks.json")));
        assert_eq!(read.unreadable.len(), 1);
        assert!(!read.ours);
        std::fs::write(
            &file,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "exec /usr/local/bin/amplihack-hooks stop"}]}]}}"#,
        )
        .expect("write");
        assert!(super::read(dir.path()).ours);
    }
}
