//! Copilot CLI's managed scope: a policy document of amplihack's own in the machine's policy hook
//! directory, `/etc/github-copilot/policy.d/amplihack.json`. Copilot 1.0.102 loads every document
//! there first ("Loaded policy hooks from …" in its debug log), for every user, whatever their
//! folder trust or `disableAllHooks`, and a user cannot switch a policy hook off ("Policy hooks
//! cannot be disabled"). Observed in the real CLI: a policy document must say `"version": 1`
//! and list flat entries (`{"type": "command", "bash": …, "timeoutSec": …}`; the Claude-style
//! nested `matcher`/`hooks` groups and `command` are refused, the document skipped); PascalCase
//! event names get the snake_case payloads amplihack's Copilot dialect reads; and a policy hook
//! that fails is fail-closed (Copilot logs "Policy hook … execution failed (fail-closed)").
//!
//! The file is wholly amplihack's: install writes it, uninstall deletes it.

use serde_json::{Map, Value, json};

use crate::registration;

/// The machine's policy hook directory (Linux; Copilot reads it beside
/// `/etc/github-copilot/managed-settings.json`).
pub const POLICY_DIR: &str = "/etc/github-copilot/policy.d";
/// amplihack's document there.
pub const FILE_NAME: &str = "amplihack.json";

/// The policy document for amplihack's `hooks` object (events → Claude-format groups, as in
/// `~/.copilot/hooks/amplihack.json`): each handler one flat entry; a group's matcher other than
/// `*` (every tool) stays on each of its entries.
pub fn document(hooks: &Map<String, Value>) -> Value {
    let mut events = Map::new();
    for (event, groups) in hooks {
        let mut entries = Vec::new();
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .filter(|m| *m != "*");
            for handler in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(command) = handler.get("command").and_then(Value::as_str) else {
                    continue;
                };
                let mut entry = json!({"type": "command", "bash": command});
                if let Some(timeout) = handler.get("timeout").and_then(Value::as_u64) {
                    entry["timeoutSec"] = json!(timeout);
                }
                if let Some(matcher) = matcher {
                    entry["matcher"] = json!(matcher);
                }
                entries.push(entry);
            }
        }
        events.insert(event.clone(), Value::Array(entries));
    }
    json!({"version": 1, "hooks": events})
}

/// amplihack's entries in a policy document: each event and command (`bash`).
pub fn ours(document: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (event, entries) in document
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for entry in entries.as_array().into_iter().flatten() {
            if let Some(command) = entry.get("bash").and_then(Value::as_str)
                && registration::recognise(command).is_some()
            {
                found.push((event.clone(), command.to_string()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_format_groups_become_flat_policy_entries() {
        let hooks = json!({
            "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "exec /b/amplihack-hooks pre-tool-use --host copilot"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "exec /b/amplihack-hooks stop --host copilot", "timeout": 120}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exec /b/amplihack-hooks post-tool-use --host copilot"}]}]
        });
        let doc = document(hooks.as_object().expect("object"));
        assert_eq!(
            doc,
            json!({"version": 1, "hooks": {
                "PreToolUse": [{"type": "command", "bash": "exec /b/amplihack-hooks pre-tool-use --host copilot"}],
                "Stop": [{"type": "command", "bash": "exec /b/amplihack-hooks stop --host copilot", "timeoutSec": 120}],
                "PostToolUse": [{"type": "command", "bash": "exec /b/amplihack-hooks post-tool-use --host copilot", "matcher": "Bash"}]
            }})
        );
        assert_eq!(ours(&doc).len(), 3);
    }
}
