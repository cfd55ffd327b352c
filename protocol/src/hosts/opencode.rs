//! opencode, which has no command hooks: amplihack's bridge plugin (installed into opencode's
//! plugin directory) sends Claude Code's events, with opencode's tool names, and reads Claude
//! Code's JSON reply. Always JSON: the bridge parses what it gets.

use serde_json::{Map, Value};

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
    ]),
    adjust: Some(tool_input_fields),
    ..Dialect::claude_like(Host::Opencode, render)
};

/// opencode's tool arguments in camelCase (`filePath`, `oldString`, `newString`, `replaceAll`),
/// renamed to Claude Code's `tool_input` fields, so the guards and the user's plugins read one
/// spelling.
const TOOL_INPUT_FIELDS: &[(&str, &str)] = &[
    ("filePath", "file_path"),
    ("oldString", "old_string"),
    ("newString", "new_string"),
    ("replaceAll", "replace_all"),
];

fn tool_input_fields(map: &mut Map<String, Value>) -> bool {
    let mut changed = false;
    if let Some(Value::Object(input)) = map.get_mut("tool_input") {
        for (theirs, claude) in TOOL_INPUT_FIELDS {
            if !input.contains_key(*claude)
                && let Some(value) = input.remove(*theirs)
            {
                input.insert((*claude).to_string(), value);
                changed = true;
            }
        }
    }
    changed
}

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let rendered = super::claude_code::render(event, reply);
    json_reply(as_json(event, &rendered), rendered)
}

#[cfg(test)]
mod tests {
    use crate::host::Host;
    use crate::hosts::parse;

    /// What the bridge plugin sends, read as Claude Code would have sent it.
    #[test]
    fn opencode_tools_and_arguments_read_as_claude_codes() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (r#"{"command":"ls"}"#, "bash", "Bash", "command"),
            (
                r#"{"filePath":"/a","content":"x"}"#,
                "write",
                "Write",
                "file_path",
            ),
            (
                r#"{"filePath":"/a","oldString":"x","newString":"y"}"#,
                "edit",
                "Edit",
                "new_string",
            ),
        ];
        for (input, tool, claude, field) in cases {
            let sent = format!(
                r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"{tool}","tool_input":{input}}}"#
            );
            let (event, changed) = parse(Host::Opencode, sent.as_bytes(), None).expect("parses");
            assert!(changed);
            assert_eq!(event.raw["tool_name"], *claude);
            assert!(
                event.raw["tool_input"].get(*field).is_some(),
                "{tool}: {:?}",
                event.raw
            );
        }
    }
}
