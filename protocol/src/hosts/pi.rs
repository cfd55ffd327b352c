//! Pi (`@mariozechner/pi-coding-agent`), which has no command hooks: amplihack's bridge
//! extension (installed into Pi's extensions folder) sends Claude Code's events with Pi's tool
//! names and arguments, and reads Claude Code's JSON reply. Always JSON: the bridge parses what
//! it gets. Pi's arguments are renamed here: `path` is `file_path`; an `edit`'s `edits`
//! (`[{oldText, newText}]`) is one Edit (`old_string`, `new_string`) or a MultiEdit.

use serde_json::{Map, Value, json};

use super::{Dialect, as_json, json_reply};
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    delivers: Some(&[
        EventName::SessionStart,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::Stop,
        EventName::PreCompact,
        EventName::SessionEnd,
    ]),
    adjust: Some(tool_input_fields),
    ..Dialect::claude_like(Host::Pi, render)
};

/// Pi's `edit` arguments: the edit list and each edit's fields, with Claude Code's names.
const EDITS: &str = "edits";
const EDIT_FIELDS: [(&str, &str); 2] = [("oldText", "old_string"), ("newText", "new_string")];

fn tool_input_fields(map: &mut Map<String, Value>) -> bool {
    let edit = map.get("tool_name").and_then(Value::as_str) == Some("Edit");
    let Some(Value::Object(input)) = map.get_mut("tool_input") else {
        return false;
    };
    let mut changed = false;
    if !input.contains_key("file_path")
        && let Some(path) = input.remove("path")
    {
        input.insert("file_path".into(), path);
        changed = true;
    }
    let mut multi = false;
    if edit && let Some(Value::Array(edits)) = input.remove(EDITS) {
        let renamed: Vec<Value> = edits
            .into_iter()
            .map(|e| match e {
                Value::Object(mut fields) => {
                    for (theirs, claude) in EDIT_FIELDS {
                        if let Some(v) = fields.remove(theirs) {
                            fields.insert(claude.into(), v);
                        }
                    }
                    Value::Object(fields)
                }
                other => other,
            })
            .collect();
        if let [Value::Object(only)] = renamed.as_slice() {
            for (_, claude) in EDIT_FIELDS {
                if let Some(v) = only.get(claude) {
                    input.insert(claude.into(), v.clone());
                }
            }
        } else {
            input.insert(EDITS.into(), json!(renamed));
            multi = true;
        }
        changed = true;
    }
    if multi {
        map.insert("tool_name".into(), json!("MultiEdit"));
    }
    changed
}

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let rendered = super::claude_code::render(event, reply);
    json_reply(as_json(event, &rendered), rendered)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::host::Host;
    use crate::hosts::parse;

    /// What the bridge extension sends, read as Claude Code would have sent it.
    #[test]
    fn pi_tools_and_arguments_read_as_claude_codes() {
        let cases: &[(&str, &str, &str, serde_json::Value)] = &[
            (
                "bash",
                r#"{"command":"ls"}"#,
                "Bash",
                json!({"command": "ls"}),
            ),
            (
                "write",
                r#"{"path":"/a","content":"x"}"#,
                "Write",
                json!({"file_path": "/a", "content": "x"}),
            ),
            (
                "read",
                r#"{"path":"/a","offset":2}"#,
                "Read",
                json!({"file_path": "/a", "offset": 2}),
            ),
            (
                "edit",
                r#"{"path":"/a","edits":[{"oldText":"x","newText":"y"}]}"#,
                "Edit",
                json!({"file_path": "/a", "old_string": "x", "new_string": "y"}),
            ),
            (
                "edit",
                r#"{"path":"/a","edits":[{"oldText":"x","newText":"y"},{"oldText":"p","newText":"q"}]}"#,
                "MultiEdit",
                json!({"file_path": "/a", "edits": [
                    {"old_string": "x", "new_string": "y"},
                    {"old_string": "p", "new_string": "q"}
                ]}),
            ),
        ];
        for (tool, input, claude, want) in cases {
            let sent = format!(
                r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"{tool}","tool_input":{input}}}"#
            );
            let (event, _) = parse(Host::Pi, sent.as_bytes(), None).expect("parses");
            assert_eq!(event.raw["tool_name"], *claude, "{tool} {input}");
            assert_eq!(event.raw["tool_input"], *want, "{tool} {input}");
        }
    }
}
