//! The Claude Code entries for the events the user's plugins need beyond amplihack's own table:
//! which events, in which settings file, brought in line by the installer after every plugin
//! change and repaired here at session start ([`super::stale_registrations`]) with the same
//! loss-free edit. The user level's go into the user's settings; a trusted project's into that
//! project's local settings (its own scope, never committed), less what the user level brings.

use std::path::{Path, PathBuf};

use amplihack_engine::discovery::{self, Level, Plugin};
use amplihack_settings::claude_paths;
use amplihack_settings::plugin_events::{self, Version};
use amplihack_settings::registration;
use amplihack_settings::safe_file::{self, EditOptions, NewContent};
use amplihack_state::{StateDir, plugins, trust};
use serde_json::{Value, json};

/// Where the plugins and the settings files are.
pub struct Places<'a> {
    pub state: &'a StateDir,
    pub home: &'a Path,
    pub claude_config_dir: &'a Path,
    /// Where to look up from for the project's `.amplifier/hooks`.
    pub project: &'a Path,
}

/// The events a plugin handles (with an enabled handler), each once, in file order.
pub fn events_of(plugin: &Plugin) -> Vec<String> {
    let mut events: Vec<String> = Vec::new();
    for group in plugin.config.iter().flat_map(|c| &c.groups) {
        if group.handlers.iter().any(|h| h.enabled) && !events.contains(&group.event) {
            events.push(group.event.clone());
        }
    }
    events
}

/// The active plugins' events, user level and (trusted) project level.
fn active_events(places: &Places<'_>) -> (Vec<String>, Option<(PathBuf, Vec<String>)>) {
    let disabled = plugins::disabled(places.state);
    let active = |plugin: &Plugin| {
        plugin.config.as_ref().is_ok_and(|c| c.enabled) && !disabled.contains(&plugin.root)
    };
    let user_dir = places.home.join(".amplifier/hooks");
    let user: Vec<String> = discovery::load_level(&user_dir, Level::User)
        .iter()
        .filter(|p| active(p))
        .flat_map(events_of)
        .collect();
    // The project's local file is visited even when its plugins do not run (untrusted, gone), so
    // that what was registered for them goes.
    let root = discovery::project_with_hooks(places.project, Some(places.home))
        .unwrap_or_else(|| places.project.to_path_buf());
    let project = (root.as_path() != places.home).then(|| {
        let dir = root.join(".amplifier/hooks");
        let found = discovery::load_level(&dir, Level::Project);
        let files: Vec<PathBuf> = found.iter().map(|p| p.file.clone()).collect();
        let trusted = !found.is_empty() && trust::is_trusted(places.state, &root, &files);
        let events = if trusted {
            found
                .iter()
                .filter(|p| active(p))
                .flat_map(events_of)
                .collect()
        } else {
            Vec::new()
        };
        (root, events)
    });
    (user, project)
}

/// Each settings file that holds plugin-event entries, with the events they should be.
pub fn wanted(places: &Places<'_>, version: Option<Version>) -> Vec<(PathBuf, Vec<String>)> {
    let (user, project) = active_events(places);
    let user_events = plugin_events::needed(user.iter().map(String::as_str), version);
    let user_file = claude_paths::user(places.claude_config_dir);
    let mut files = vec![(user_file.clone(), Vec::new())];
    if let Some((root, events)) = project {
        let local = claude_paths::local(&root);
        if local != user_file {
            let events = plugin_events::needed(events.iter().map(String::as_str), version)
                .into_iter()
                .filter(|e| !user_events.contains(e))
                .collect();
            files.push((local, events));
        }
    }
    files[0].1 = user_events;
    files
}

/// Whether any active plugin handles an event beyond amplihack's table (only then does the
/// Claude Code version matter).
pub fn beyond_table(places: &Places<'_>) -> bool {
    wanted(places, Some((u32::MAX, 0, 0)))
        .iter()
        .any(|(_, events)| !events.is_empty())
}

/// The binary amplihack's own entries in `value` run (a canonical row's, absolute).
pub fn our_binary(value: &Value) -> Option<PathBuf> {
    let table = plugin_events::registered_by_table();
    registration::find_ours(value)
        .into_iter()
        .filter(|(event, _, _)| table.contains(&event.as_str()))
        .filter_map(|(_, _, ours)| ours.binary)
        .map(PathBuf::from)
        .find(|b| b.is_absolute())
}

/// Brings every file's plugin-event entries in line; one line per file changed. A file without
/// amplihack's registration takes the user file's binary; with neither, it is left alone.
pub fn sync(
    places: &Places<'_>,
    version: Option<Version>,
    options: &EditOptions,
) -> Result<Vec<String>, String> {
    let user_file = claude_paths::user(places.claude_config_dir);
    let read = |file: &Path| safe_file::read_json(file).ok().flatten().map(|(_, v)| v);
    let user_binary = read(&user_file).as_ref().and_then(our_binary);
    let mut lines = Vec::new();
    for (file, events) in wanted(places, version) {
        let current = read(&file);
        let Some(binary) = current
            .as_ref()
            .and_then(our_binary)
            .or(user_binary.clone())
        else {
            continue;
        };
        if current.is_none() && events.is_empty() {
            continue;
        }
        let mut probe = current.clone().unwrap_or_else(|| json!({}));
        if !plugin_events::sync(&mut probe, &binary, &events).is_ok_and(|changed| changed) {
            continue; // in step already (or not editable: `doctor` says why)
        }
        safe_file::edit_json(&file, options, |current| {
            let mut value = current.cloned().unwrap_or_else(|| json!({}));
            plugin_events::sync(&mut value, &binary, &events)?;
            Ok(NewContent::Value(value))
        })
        .map_err(|e| e.to_string())?;
        lines.push(format!(
            "{}: plugin events registered: {}",
            file.display(),
            if events.is_empty() {
                "none".to_string()
            } else {
                events.join(", ")
            }
        ));
    }
    Ok(lines)
}

/// The calling Claude Code's version, from the environment it gives hooks: `AI_AGENT`
/// (`claude-code_2-1-328_harness`). `None` when it does not say.
pub fn host_version(var: &dyn Fn(&str) -> Option<String>) -> Option<Version> {
    var("AI_AGENT")
        .filter(|a| a.starts_with("claude-code_"))
        .as_deref()
        .and_then(plugin_events::parse_version)
}
