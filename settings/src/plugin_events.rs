//! The events the user's plugins need beyond amplihack's own: under Claude Code, amplihack
//! registers `amplihack-hooks dispatch` on each event an active plugin handles that amplihack's
//! table does not register, so that every event a plugin uses reaches it. Only events the
//! installed Claude Code knows are registered: before 2.1.101 an unknown event name makes Claude
//! Code reject the whole settings file.
//!
//! These entries are amplihack's (recognised, removed by uninstall); [`sync`] adds the missing
//! ones and removes those no plugin needs any more, keeping every byte of the user's.
//!
//! The other hosts with a JSON hooks file (Codex, Copilot, Qwen, Droid, Gemini) get the same
//! entries for the events they deliver beyond amplihack's rows for them, in their names and with
//! their command ([`registration::plugin_event_spec`]): the `_in` functions, parameterised by
//! host; the plain ones are Claude Code's.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::registration::{self, Host, ShapeError, kind_of, recognise};

use amplihack_protocol::hosts;

use amplihack_protocol::EventName;
use amplihack_protocol::claude_version::display;
/// Claude Code's versions and the one each event came in live in amplihack's event table
/// (`amplihack_protocol::event`): one row per event.
pub use amplihack_protocol::event::{UNKNOWN_EVENTS_SAFE_SINCE, Version};

/// The subcommand the plugin-event entries run (it takes the event from the payload).
pub const DISPATCH: &str = "dispatch";

/// Whether Claude Code `version` delivers `event`; `Err` says why not. With no version known,
/// only events every Claude Code with hooks knows.
pub fn delivers(event: &str, version: Option<Version>) -> Result<(), String> {
    let since = EventName::KNOWN
        .iter()
        .find(|known| known.as_str() == event)
        .and_then(EventName::since);
    let Some(since) = since else {
        return Err(format!("`{event}` is not a Claude Code event"));
    };
    match version {
        Some(version) if version >= since => Ok(()),
        Some(version) => Err(format!(
            "Claude Code {} does not have it (it came in {})",
            display(version),
            display(since)
        )),
        None if since <= (1, 0, 85) => Ok(()),
        None => Err(format!(
            "the installed Claude Code's version is unknown (`claude --version` did not answer); it needs {}",
            display(since)
        )),
    }
}

/// The events amplihack's own table registers under Claude Code.
pub fn registered_by_table() -> Vec<&'static str> {
    registered_by_table_in(Host::ClaudeCode)
}

/// The events amplihack's own table registers under `host`, in the host's names.
pub fn registered_by_table_in(host: Host) -> Vec<&'static str> {
    registration::canonical(host)
        .iter()
        .map(|spec| spec.event)
        .collect()
}

/// Whether amplihack keeps plugin-event entries in `host`'s hooks file (every host with one but
/// Amplifier's bridge, whose module delivers every kernel event itself).
fn has_plugin_events(host: Host) -> bool {
    !(host == Host::Amplifier || amplihack_protocol::hosts::bridged(host))
}

/// The Claude Code event a host's event name stands for (`BeforeTool` is PreToolUse).
fn claude_event(host: Host, label: &str) -> EventName {
    let claude = hosts::dialect(host)
        .events
        .iter()
        .find(|(theirs, _)| *theirs == label)
        .map_or(label, |(_, claude)| claude);
    EventName::parse(claude)
}

/// Of the (Claude Code) events plugins handle, those that need an entry of their own in `host`
/// (not Claude Code: [`needed`] weighs its version): delivered by the host, and not one of
/// amplihack's rows there. In the host's names, sorted, each once.
pub fn needed_in<'a>(host: Host, plugin_events: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    if !has_plugin_events(host) {
        return Vec::new();
    }
    let table = registered_by_table_in(host);
    let dialect = hosts::dialect(host);
    let mut events: Vec<String> = plugin_events
        .into_iter()
        .filter_map(|event| dialect.event_label(&EventName::parse(event)))
        .filter(|label| !table.contains(label))
        .map(str::to_string)
        .collect();
    events.sort();
    events.dedup();
    events
}

/// Of the events plugins handle, those that need an entry of their own here: not registered by
/// amplihack's table, and delivered by this Claude Code. Sorted, each once.
pub fn needed<'a>(
    plugin_events: impl IntoIterator<Item = &'a str>,
    version: Option<Version>,
) -> Vec<String> {
    let table = registered_by_table();
    let mut events: Vec<String> = plugin_events
        .into_iter()
        .filter(|event| !table.contains(event) && delivers(event, version).is_ok())
        .map(str::to_string)
        .collect();
    events.sort();
    events.dedup();
    events
}

/// Whether a handler is a plugin-event entry of amplihack's: `amplihack-hooks dispatch` on an
/// event the table does not register.
pub fn is_plugin_event_entry(event: &str, handler: &Value) -> bool {
    is_plugin_event_entry_in(Host::ClaudeCode, event, handler)
}

/// [`is_plugin_event_entry`] in `host`'s file (`event` in the host's name).
pub fn is_plugin_event_entry_in(host: Host, event: &str, handler: &Value) -> bool {
    has_plugin_events(host)
        && !registered_by_table_in(host).contains(&event)
        && handler
            .get("command")
            .and_then(Value::as_str)
            .and_then(recognise)
            .is_some_and(|ours| ours.subcommand.as_deref() == Some(DISPATCH))
}

/// The events that hold a plugin-event entry of amplihack's, in file order.
pub fn registered(settings: &Value) -> Vec<String> {
    registered_in(Host::ClaudeCode, settings)
}

/// [`registered`] in `host`'s file, in the host's names.
pub fn registered_in(host: Host, settings: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (event, groups) in settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let ours = groups.as_array().into_iter().flatten().any(|group| {
            group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|h| is_plugin_event_entry_in(host, event, h))
        });
        if ours {
            found.push(event.clone());
        }
    }
    found
}

/// The settings' `hooks` object, added when missing, for an edit to `events`: an error when the
/// settings, `hooks` or one of those events' values has the wrong shape (checked before anything
/// changes); `None` when there is `nothing_to_do` (the settings still checked to be an object).
fn hooks_to_edit<'s, 'e>(
    settings: &'s mut Value,
    nothing_to_do: bool,
    mut events: impl Iterator<Item = &'e String>,
) -> Result<Option<&'s mut Map<String, Value>>, ShapeError> {
    let found = kind_of(settings);
    let root = settings
        .as_object_mut()
        .ok_or(ShapeError::RootNotObject { found })?;
    if nothing_to_do {
        return Ok(None);
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let found = kind_of(hooks);
    let hooks = hooks
        .as_object_mut()
        .ok_or(ShapeError::HooksNotObject { found })?;
    if let Some((event, value)) = events.find_map(|event| {
        hooks
            .get(event.as_str())
            .filter(|v| !v.is_array())
            .map(|value| (event, value))
    }) {
        return Err(ShapeError::EventNotArray {
            event: event.clone(),
            found: kind_of(value),
        });
    }
    Ok(Some(hooks))
}

/// Makes the plugin-event entries serve exactly `events`, each running `binary`. `owned`: the
/// events whose entries amplihack added before (from its state; a `dispatch` entry the user wrote
/// by hand is the user's: kept, never removed). Adds what is missing (first on its event, as
/// amplihack's entries go), re-points and removes only its own, and the wrappers and event keys
/// emptied by that. Returns whether anything changed, and the events whose entries are now
/// amplihack's.
pub fn sync(
    settings: &mut Value,
    binary: &Path,
    owned: &[String],
    events: &[String],
) -> Result<(bool, Vec<String>), ShapeError> {
    sync_in(Host::ClaudeCode, settings, binary, owned, events)
}

/// [`sync`] in `host`'s file: `events` in the host's names, each entry the host's command for
/// `dispatch` ([`registration::command_for`]: `--host`, Copilot's guard against a missing binary)
/// with its timeout. Where the host keys its trust in a hook by position (Codex), a new entry goes
/// after the user's on its event, so that theirs keep their keys.
pub fn sync_in(
    host: Host,
    settings: &mut Value,
    binary: &Path,
    owned: &[String],
    events: &[String],
) -> Result<(bool, Vec<String>), ShapeError> {
    // Only events the host delivers (Claude Code's are weighed against its version by [`needed`]).
    let events: Vec<String> = events
        .iter()
        .filter(|e| {
            host == Host::ClaudeCode
                || registration::plugin_event_spec(host, &claude_event(host, e)).is_some()
        })
        .cloned()
        .collect();
    let events = &events[..];
    let nothing_to_do = events.is_empty() && owned.is_empty();
    let Some(hooks) = hooks_to_edit(settings, nothing_to_do, events.iter())? else {
        return Ok((false, Vec::new()));
    };
    let spec_of = |event: &str| registration::plugin_event_spec(host, &claude_event(host, event));
    let entry_of = |event: &str| -> Value {
        let spec = spec_of(event);
        let mut handler = Map::new();
        handler.insert("type".into(), json!("command"));
        let command = spec.as_ref().map_or_else(
            || registration::claude_command(binary, DISPATCH),
            |spec| registration::command_for(binary, spec, host),
        );
        handler.insert("command".into(), json!(command));
        if let Some(timeout) = spec.and_then(|s| s.timeout) {
            handler.insert("timeout".into(), json!(timeout));
        }
        Value::Object(handler)
    };
    let at_end = hosts::dialect(host).trust_by_position();
    let mut changed = false;
    let mut now_owned = Vec::new();
    let mut served: Vec<String> = Vec::new();
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        let wanted = events.contains(event);
        let ours = owned.contains(event);
        // A hand-written entry serves the event as it is.
        let users = !ours
            && groups.iter().any(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .any(|h| is_plugin_event_entry_in(host, event, h))
            });
        if users {
            if wanted {
                served.push(event.clone());
            }
            continue;
        }
        let mut kept_one = false;
        let before = groups.len();
        let entry = entry_of(event);
        groups.retain_mut(|group| {
            let Some(Value::Array(handlers)) = group.get_mut("hooks") else {
                return true;
            };
            let count = handlers.len();
            handlers.retain(|h| {
                if !is_plugin_event_entry_in(host, event, h) {
                    return true;
                }
                let keep = wanted
                    && !kept_one
                    && h.get("command") == entry.get("command")
                    && h.get("timeout") == entry.get("timeout");
                kept_one |= keep;
                keep
            });
            if handlers.len() == count {
                return true;
            }
            changed = true;
            !handlers.is_empty()
        });
        if groups.is_empty() && before > 0 {
            emptied.push(event.clone());
        }
        if wanted {
            if !kept_one {
                let at = if at_end { groups.len() } else { 0 };
                groups.insert(at, wrapper(event, entry));
                changed = true;
            }
            served.push(event.clone());
            now_owned.push(event.clone());
        }
    }
    for event in emptied {
        if hooks
            .get(&event)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            hooks.remove(&event);
        }
    }
    for event in events {
        if !served.contains(event) {
            hooks.insert(
                event.clone(),
                Value::Array(vec![wrapper(event, entry_of(event))]),
            );
            now_owned.push(event.clone());
            changed = true;
        }
    }
    now_owned.sort();
    Ok((changed, now_owned))
}

fn wrapper(event: &str, handler: Value) -> Value {
    let tool_event = matches!(
        event,
        "PostToolUseFailure" | "PermissionRequest" | "PermissionDenied"
    );
    let mut group = Map::new();
    if tool_event {
        group.insert("matcher".into(), json!("*"));
    }
    group.insert("hooks".into(), Value::Array(vec![handler]));
    Value::Object(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_which_events_each_delivers() {
        assert_eq!(
            amplihack_protocol::claude_version::parse("2.1.328 (Claude Code)"),
            Some((2, 1, 328))
        );
        assert_eq!(
            amplihack_protocol::claude_version::parse("claude-code_2-0-30_x"),
            Some((2, 0, 30))
        );
        assert_eq!(amplihack_protocol::claude_version::parse("nonsense"), None);
        let cases = [
            ("PermissionRequest", Some((2, 1, 328)), true),
            ("PermissionRequest", Some((2, 0, 30)), false),
            ("SubagentStop", Some((2, 0, 30)), true),
            ("PostToolUseFailure", Some((2, 0, 30)), false),
            ("PostToolUseFailure", Some((2, 1, 328)), true),
            ("MessageDisplay", Some((2, 1, 151)), false),
            ("Notification", None, true),
            ("SubagentStart", None, false),
            ("NoSuchEvent", Some((9, 9, 9)), false),
            ("PreModelSwitch", Some((2, 1, 250)), false),
            ("PreModelSwitch", Some((2, 1, 251)), true),
            ("PostModelSwitch", Some((2, 1, 328)), true),
            ("PreSkillShellCommand", Some((2, 1, 328)), false),
            ("PreSkillShellCommand", Some((2, 1, 332)), true),
        ];
        for (event, version, delivered) in cases {
            let got = delivers(event, version);
            assert_eq!(got.is_ok(), delivered, "{event} {version:?}: {got:?}");
        }
        assert_eq!(
            needed(
                [
                    "PreToolUse",
                    "SubagentStop",
                    "PermissionRequest",
                    "SubagentStop"
                ],
                Some((2, 0, 30))
            ),
            ["SubagentStop"]
        );
    }

    /// Per host: only events it delivers beyond amplihack's rows there, in its names; its
    /// command; after the user's entries where it keys trust by position (Codex).
    #[test]
    fn other_hosts_get_their_own_plugin_event_entries() {
        let plugin = [
            "PreToolUse",
            "Notification",
            "PermissionRequest",
            "PreCompact",
            "Stop",
        ];
        let cases: &[(Host, &[&str])] = &[
            (Host::Gemini, &["Notification"]),
            (Host::Codex, &["PermissionRequest"]),
            (Host::Copilot, &["Notification", "PermissionRequest"]),
            (Host::Droid, &["Notification"]),
            (Host::Amplifier, &[]),
            (Host::Opencode, &[]),
            (Host::Pi, &[]),
            (Host::Cline, &[]),
        ];
        for (host, wanted) in cases {
            assert_eq!(needed_in(*host, plugin), *wanted, "{host:?}");
        }
        let binary = Path::new("/b/amplihack-hooks");
        let user = json!({"type": "command", "command": "/bin/true"});
        let mut codex = json!({"hooks": {"PermissionRequest": [{"hooks": [user.clone()]}]}});
        let events = vec!["PermissionRequest".to_string()];
        let (changed, owned) =
            sync_in(Host::Codex, &mut codex, binary, &[], &events).expect("sync");
        assert!(changed);
        assert_eq!(owned, events);
        let groups = &codex["hooks"]["PermissionRequest"];
        assert_eq!(groups[0]["hooks"][0], user, "{codex:#}");
        assert_eq!(
            groups[1]["hooks"][0]["command"],
            "exec /b/amplihack-hooks dispatch --host codex"
        );
        assert!(groups[1]["hooks"][0]["timeout"].is_u64(), "{codex:#}");
        assert_eq!(registered_in(Host::Codex, &codex), events);
        // An event the host does not deliver is never written.
        let mut gemini = json!({});
        let (changed, _) = sync_in(Host::Gemini, &mut gemini, binary, &[], &events).expect("sync");
        assert!(!changed && gemini == json!({}), "{gemini:#}");
        // Gone again: the user's entry as it was.
        sync_in(Host::Codex, &mut codex, binary, &owned, &[]).expect("sync");
        assert_eq!(
            codex,
            json!({"hooks": {"PermissionRequest": [{"hooks": [user]}]}})
        );
    }

    #[test]
    fn sync_adds_and_removes_only_amplihacks_plugin_event_entries() {
        let binary = Path::new("/b in/amplihack-hooks");
        let mut settings = json!({"model": "x", "hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/b/amplihack-hooks pre-tool-use"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
        }});
        let events = vec!["Notification".to_string(), "PermissionRequest".to_string()];
        let (changed, owned) = sync(&mut settings, binary, &[], &events).expect("sync");
        assert!(changed);
        assert_eq!(owned, events);
        assert_eq!(registered(&settings), events);
        let notification = &settings["hooks"]["Notification"];
        assert_eq!(notification.as_array().map(Vec::len), Some(2));
        assert_eq!(
            notification[0]["hooks"][0]["command"],
            "exec \"/b in/amplihack-hooks\" dispatch"
        );
        assert_eq!(notification[1]["hooks"][0]["command"], "notify-send hi");
        assert_eq!(settings["hooks"]["PermissionRequest"][0]["matcher"], "*");
        // Idempotent.
        let again = settings.clone();
        assert!(
            !sync(&mut settings, binary, &owned, &events)
                .expect("sync")
                .0
        );
        assert_eq!(settings, again);
        // No plugin needs them any more: exactly the user's entries are left.
        assert!(sync(&mut settings, binary, &owned, &[]).expect("sync").0);
        assert_eq!(
            settings,
            json!({"model": "x", "hooks": {
                "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/b/amplihack-hooks pre-tool-use"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
            }})
        );
        // A moved binary is re-pointed.
        let (_, owned) = sync(&mut settings, binary, &[], &events).expect("sync");
        sync(
            &mut settings,
            Path::new("/new/amplihack-hooks"),
            &owned,
            &events,
        )
        .expect("sync");
        assert_eq!(
            settings["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
            "exec /new/amplihack-hooks dispatch"
        );
        assert_eq!(
            settings["hooks"]["PermissionRequest"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        let mut broken = json!({"hooks": {"PermissionRequest": {}}});
        assert!(sync(&mut broken, binary, &[], &events).is_err());
        // A dispatch entry written by hand is the user's: it serves its event and is never
        // removed.
        let by_hand = json!({"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": "/u/amplihack-hooks dispatch"}]}]}});
        let mut settings = by_hand.clone();
        let wanted = vec!["PostToolBatch".to_string()];
        assert_eq!(
            sync(&mut settings, binary, &[], &wanted).expect("sync"),
            (false, vec![])
        );
        assert_eq!(
            sync(&mut settings, binary, &[], &[]).expect("sync"),
            (false, vec![])
        );
        assert_eq!(settings, by_hand);
    }
}

/// A matcher group amplihack copies into Claude Code's settings for a plugin handler Claude Code
/// runs itself (prompt, agent, http, mcp_tool): its event, and `{"matcher"?, "hooks": [...]}` with
/// the handlers as the plugin wrote them.
pub type HostGroup = (String, Value);

/// Replaces the groups amplihack copied into `settings` before (`recorded`, from its state: a
/// copied group has nothing of its own to tell it by) with `wanted`, appended to their events. The
/// user's groups stay as they were. Returns whether anything changed.
pub fn sync_host_groups(
    settings: &mut Value,
    recorded: &[HostGroup],
    wanted: &[HostGroup],
) -> Result<bool, ShapeError> {
    let nothing_to_do = recorded.is_empty() && wanted.is_empty();
    let Some(hooks) = hooks_to_edit(settings, nothing_to_do, wanted.iter().map(|(e, _)| e))? else {
        return Ok(false);
    };
    let before = hooks.clone();
    for (event, group) in recorded {
        let Some(Value::Array(groups)) = hooks.get_mut(event.as_str()) else {
            continue;
        };
        if let Some(at) = groups.iter().position(|g| g == group) {
            groups.remove(at);
            if groups.is_empty() {
                hooks.remove(event.as_str());
            }
        }
    }
    for (event, group) in wanted {
        match hooks.get_mut(event.as_str()) {
            Some(Value::Array(groups)) => groups.push(group.clone()),
            _ => {
                hooks.insert(event.clone(), Value::Array(vec![group.clone()]));
            }
        }
    }
    Ok(*hooks != before)
}

#[cfg(test)]
mod host_group_tests {
    use super::*;

    #[test]
    fn copied_groups_are_replaced_and_the_users_kept() {
        let prompt = |text: &str| {
            (
                "Stop".to_string(),
                json!({"hooks": [{"type": "prompt", "prompt": text}]}),
            )
        };
        let users = json!({"hooks": [{"type": "prompt", "prompt": "mine"}]});
        let mut settings = json!({"hooks": {"Stop": [users.clone()]}});
        assert!(sync_host_groups(&mut settings, &[], &[prompt("a")]).expect("sync"));
        assert_eq!(settings["hooks"]["Stop"], json!([users, prompt("a").1]));
        assert!(!sync_host_groups(&mut settings, &[prompt("a")], &[prompt("a")]).expect("sync"));
        assert!(sync_host_groups(&mut settings, &[prompt("a")], &[prompt("b")]).expect("sync"));
        assert_eq!(settings["hooks"]["Stop"], json!([users, prompt("b").1]));
        assert!(sync_host_groups(&mut settings, &[prompt("b")], &[]).expect("sync"));
        assert_eq!(settings, json!({"hooks": {"Stop": [users]}}));
    }
}
