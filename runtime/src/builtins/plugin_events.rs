//! The Claude Code entries for the events the user's plugins need beyond amplihack's own table,
//! and for the plugins' handlers Claude Code runs itself (prompt, agent, http, mcp_tool: copied
//! as written, so that Claude Code evaluates them with the user's own model access): which, in
//! which settings file, brought in line by the installer after every plugin
//! change and repaired here at session start ([`super::stale_registrations`]) with the same
//! loss-free edit. The user level's go into the user's settings; a trusted project's into that
//! project's local settings (its own scope, never committed), less what the user level brings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use amplihack_engine::discovery::{self, Level, Plugin};
use amplihack_engine::handlers::HandlerKind;
use amplihack_settings::claude_paths;
use amplihack_settings::plugin_events::{self, HostGroup, Version};
use amplihack_settings::registration;
use amplihack_settings::registration::ShapeError;
use amplihack_settings::safe_file::{self, EditOptions, NewContent};
use amplihack_state::{StateDir, bounded, files, manifest, plugins, safe_open};
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

/// The timeouts the plugins declare (`"timeout"` on a handler that is enabled and waited for:
/// not `async`), per event: what amplihack's registration for the event is raised to hold
/// ([`registration::raised_for`]). A handler that declares none is left out.
pub fn declared_timeouts(plugins: &[Plugin]) -> registration::Declared {
    let mut declared = registration::Declared::new();
    for group in plugins
        .iter()
        .flat_map(|p| p.config.iter())
        .flat_map(|c| &c.groups)
    {
        for handler in &group.handlers {
            let waited = handler.enabled && !handler.is_async && handler.rewake.is_none();
            if waited && handler.timeout_declared {
                declared.push((
                    amplihack_protocol::EventName::parse(&group.event),
                    handler.timeout_secs,
                ));
            }
        }
    }
    declared
}

/// The active plugins, user level and (trusted) project level with the project's root.
pub fn active_plugins(places: &Places<'_>) -> (Vec<Plugin>, Option<(PathBuf, Vec<Plugin>)>) {
    let disabled = plugins::disabled(places.state);
    let active = |plugin: &Plugin| {
        plugin.config.as_ref().is_ok_and(|c| c.enabled) && !disabled.contains(&plugin.root)
    };
    let user_dir = places.home.join(".amplifier/hooks");
    let user: Vec<Plugin> = discovery::load_level(&user_dir, Level::User)
        .into_iter()
        .filter(|p| active(p))
        .collect();
    // The project's local file is visited even when its plugins do not run (untrusted, gone), so
    // that what was registered for them goes.
    let root = discovery::project_with_hooks(places.project, Some(places.home))
        .unwrap_or_else(|| places.project.to_path_buf());
    let project = (root.as_path() != places.home).then(|| {
        let dir = root.join(".amplifier/hooks");
        let found = discovery::load_level(&dir, Level::Project);
        // The same check, over the same files, as the hook call that runs them.
        let trusted = !found.is_empty()
            && amplihack_engine::trust_scope::check(places.state, &root, &found).is_ok();
        let plugins = if trusted {
            found.into_iter().filter(|p| active(p)).collect()
        } else {
            Vec::new()
        };
        (root, plugins)
    });
    (user, project)
}

/// The plugins' handlers Claude Code runs itself (prompt, agent, http, mcp_tool) that this
/// version has, as groups to copy into its settings. Without a version, none.
pub fn host_groups(plugins: &[Plugin], version: Option<Version>) -> Vec<HostGroup> {
    let Some(version) = version else {
        return Vec::new();
    };
    let mut groups = Vec::new();
    for group in plugins
        .iter()
        .flat_map(|p| p.config.iter())
        .flat_map(|c| &c.groups)
    {
        let entries: Vec<Value> = group
            .handlers
            .iter()
            .filter(|h| h.enabled)
            .filter_map(|h| h.kind.host_entry())
            .filter(|(_, since)| version >= *since)
            .map(|(raw, _)| Value::Object(raw.clone()))
            .collect();
        if entries.is_empty() || plugin_events::delivers(&group.event, Some(version)).is_err() {
            continue;
        }
        let mut copied = serde_json::Map::new();
        if let Some(matcher) = &group.matcher {
            copied.insert("matcher".into(), json!(matcher));
        }
        copied.insert("hooks".into(), Value::Array(entries));
        groups.push((group.event.clone(), Value::Object(copied)));
    }
    groups
}

/// What one settings file should hold for the plugins: the events to dispatch, and the handler
/// groups Claude Code runs itself.
pub struct Wanted {
    pub file: PathBuf,
    pub events: Vec<String>,
    pub groups: Vec<HostGroup>,
}

/// Each settings file amplihack keeps in step with the plugins, with what it should hold.
pub fn wanted(places: &Places<'_>, version: Option<Version>) -> Vec<Wanted> {
    let (user, project) = active_plugins(places);
    let events = |plugins: &[Plugin]| -> Vec<String> {
        let all: Vec<String> = plugins.iter().flat_map(events_of).collect();
        plugin_events::needed(all.iter().map(String::as_str), version)
    };
    let user_events = events(&user);
    let user_file = claude_paths::user(places.claude_config_dir);
    let mut files = Vec::new();
    if let Some((root, plugins)) = project {
        let local = claude_paths::local(&root);
        if local != user_file {
            files.push(Wanted {
                file: local,
                events: events(&plugins)
                    .into_iter()
                    .filter(|e| !user_events.contains(e))
                    .collect(),
                groups: host_groups(&plugins, version),
            });
        }
    }
    files.insert(
        0,
        Wanted {
            file: user_file,
            events: user_events,
            groups: host_groups(&user, version),
        },
    );
    files
}

/// Whether any active plugin handles an event beyond amplihack's table (only then does the
/// Claude Code version matter).
pub fn beyond_table(places: &Places<'_>) -> bool {
    wanted(places, Some((u32::MAX, 0, 0)))
        .iter()
        .any(|w| !w.events.is_empty() || !w.groups.is_empty())
}

/// The binary amplihack's own entries in `value` run (a canonical row's, absolute).
pub fn our_binary(value: &Value) -> Option<PathBuf> {
    our_binary_in(registration::Host::ClaudeCode, value)
}

/// [`our_binary`] in `host`'s hooks file.
pub fn our_binary_in(host: registration::Host, value: &Value) -> Option<PathBuf> {
    let table = plugin_events::registered_by_table_in(host);
    registration::find_ours(value)
        .into_iter()
        .filter(|(event, _, _)| table.contains(&event.as_str()))
        .filter_map(|(_, _, ours)| ours.binary)
        .map(PathBuf::from)
        .find(|b| b.is_absolute())
}

/// What amplihack put into one settings file for the plugins (nothing in the file tells it
/// apart from the user's own): the events whose `dispatch` entries it added, and the handler
/// groups it copied.
type Record = (Vec<String>, Vec<HostGroup>);

/// Per settings file, what amplihack put there before (`<state>/claude-host-groups.json`).
fn recorded(state: &StateDir) -> BTreeMap<PathBuf, Record> {
    files::read_json(&state.file(RECORD))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// What amplihack put into Claude Code's settings for the plugins, under its state.
pub const RECORD: &str = "claude-host-groups.json";

/// What [`sync`] did: one line per file changed, and the events it registered that were not
/// registered before (Claude Code reads its hooks once, at start: they reach the plugins from
/// the next session).
#[derive(Debug, Default, PartialEq)]
pub struct Synced {
    pub lines: Vec<String>,
    pub added: Vec<String>,
}

/// The events the session-start repair registered while that session had already read its
/// settings: they reach the plugins from the next session (`hooks list` says so).
pub const NEXT_SESSION: &str = "plugin-events-next-session.json";

/// The events [`NEXT_SESSION`] holds.
pub fn next_session(state: &StateDir) -> Vec<String> {
    files::read_json(&state.file(NEXT_SESSION))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Records the events a session-start repair registered, or (none) clears the record: a session
/// that started with nothing to add read every registration there is.
pub fn set_next_session(state: &StateDir, events: &[String]) -> Result<(), String> {
    let file = state.file(NEXT_SESSION);
    if events.is_empty() {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        };
    }
    files::write_json(&file, &events).map_err(|e| e.to_string())
}

/// Brings every file's plugin-event entries and copied handler groups in line; one line per file
/// changed. A file without amplihack's registration takes the user file's binary; with neither,
/// it is left alone.
pub fn sync(
    places: &Places<'_>,
    version: Option<Version>,
    options: &EditOptions,
) -> Result<Synced, String> {
    let user_file = claude_paths::user(places.claude_config_dir);
    let read = |file: &Path| safe_file::read_json(file).ok().flatten().map(|(_, v)| v);
    // A settings file that is not a regular file within SETTINGS_MAX (a project's is the
    // repository's: a link to /dev/zero, a FIFO) is neither read nor edited.
    // A project's file is also refused when it, or its `.claude`, is a link: it is written.
    let readable = |file: &Path| {
        bounded::check_regular(file, super::SETTINGS_MAX).is_ok()
            && (file == user_file
                || file
                    .parent()
                    .and_then(Path::parent)
                    .is_some_and(|root| safe_open::check_beneath(root, file).is_ok()))
    };
    // Read only when some file needs it (a no-change run reads no settings file at all).
    let user_binary = std::cell::OnceCell::new();
    let user_binary = || {
        user_binary
            .get_or_init(|| {
                readable(&user_file)
                    .then(|| read(&user_file))
                    .flatten()
                    .as_ref()
                    .and_then(our_binary)
            })
            .clone()
    };
    let recorded = recorded(places.state);
    let mut record = recorded.clone();
    let mut lines = Vec::new();
    let mut added: Vec<String> = Vec::new();
    for Wanted {
        file,
        events,
        groups,
    } in wanted(places, version)
    {
        let (owned, before) = record.get(&file).cloned().unwrap_or_default();
        // Nothing registered there, nothing wanted: in step without reading it.
        if events.is_empty() && groups.is_empty() && owned.is_empty() && before.is_empty() {
            continue;
        }
        if !readable(&file) {
            continue;
        }
        let current = read(&file);
        let Some(binary) = current.as_ref().and_then(our_binary).or_else(user_binary) else {
            continue;
        };
        if current.is_none() && events.is_empty() && groups.is_empty() {
            continue;
        }
        let apply = |value: &mut Value| -> Result<(bool, Vec<String>), ShapeError> {
            let (events_changed, now_owned) = plugin_events::sync(value, &binary, &owned, &events)?;
            let groups_changed = plugin_events::sync_host_groups(value, &before, &groups)?;
            Ok((events_changed || groups_changed, now_owned))
        };
        let mut probe = current.clone().unwrap_or_else(|| json!({}));
        let Ok((true, now_owned)) = apply(&mut probe) else {
            continue; // in step already (or not editable: `doctor` says why)
        };
        safe_file::edit_json(&file, options, |current| {
            let mut value = current.cloned().unwrap_or_else(|| json!({}));
            apply(&mut value)?;
            Ok(NewContent::Value(value))
        })
        .map_err(|e| e.to_string())?;
        if !options.dry_run {
            remember_what_was_added(places.state, &file, current.as_ref())?;
        }
        let new_here: Vec<String> = now_owned
            .iter()
            .filter(|e| !owned.contains(e))
            .cloned()
            .collect();
        record.insert(file.clone(), (now_owned, groups.clone()));
        let mut parts = vec![format!(
            "plugin events registered: {}",
            if events.is_empty() {
                "none".to_string()
            } else {
                events.join(", ")
            }
        )];
        if !groups.is_empty() || !before.is_empty() {
            parts.push(format!(
                "{} plugin handler group(s) Claude Code runs itself (prompt, agent, http, mcp_tool)",
                groups.len()
            ));
        }
        if !new_here.is_empty() {
            parts.push(format!(
                "{} reach your plugins from the next Claude Code session (it reads its hooks once, at start)",
                new_here.join(", ")
            ));
            added.extend(new_here);
        }
        lines.push(format!("{}: {}", file.display(), parts.join("; ")));
    }
    record.retain(|_, (events, groups)| !events.is_empty() || !groups.is_empty());
    if record != recorded {
        let file = places.state.file(RECORD);
        if record.is_empty() {
            let _ = std::fs::remove_file(&file);
        } else {
            files::write_json(&file, &record).map_err(|e| e.to_string())?;
        }
    }
    added.sort();
    added.dedup();
    Ok(Synced { lines, added })
}

/// Records in the install manifest what this edit added that the user's file did not have (the
/// file itself, or its `hooks` key), so that `uninstall` gives the file back byte for byte.
fn remember_what_was_added(
    state: &StateDir,
    file: &Path,
    before: Option<&Value>,
) -> Result<(), String> {
    fn list(m: &mut manifest::Manifest, created: bool) -> &mut Vec<PathBuf> {
        if created {
            &mut m.created
        } else {
            &mut m.hooks_key_added
        }
    }
    let created = match before {
        None => true,
        Some(Value::Object(root)) if !root.contains_key("hooks") => false,
        Some(_) => return Ok(()),
    };
    let mut recorded = manifest::load(state).map_err(|e| e.to_string())?;
    if list(&mut recorded, created).iter().any(|p| p == file) {
        return Ok(());
    }
    manifest::update(state, |m| {
        let list = list(m, created);
        if !list.iter().any(|p| p == file) {
            list.push(file.to_path_buf());
        }
    })
    .map_err(|e| e.to_string())
}

/// Removes every handler group amplihack copied into Claude Code's settings (uninstall); the
/// `dispatch` entries go with amplihack's other entries. One line per file changed.
pub fn remove_host_groups(state: &StateDir, options: &EditOptions) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    for (file, (_, groups)) in recorded(state) {
        if !file.is_file() {
            continue;
        }
        safe_file::edit_json(&file, options, |current| {
            let mut value = current.cloned().unwrap_or_else(|| json!({}));
            plugin_events::sync_host_groups(&mut value, &groups, &[])?;
            Ok(NewContent::Value(value))
        })
        .map_err(|e| e.to_string())?;
        if !groups.is_empty() {
            lines.push(format!(
                "{}: removed {} plugin handler group(s) copied for Claude Code",
                file.display(),
                groups.len()
            ));
        }
    }
    if !options.dry_run {
        let _ = std::fs::remove_file(state.file(RECORD));
    }
    Ok(lines)
}
