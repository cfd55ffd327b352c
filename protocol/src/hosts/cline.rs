//! Cline CLI (3.0.65), through amplihack's bridge plugin (Cline's plugin API, loaded from
//! `~/.cline/plugins/` or a workspace's `.cline/plugins/`): the plugin sends Claude Code's events
//! with Cline's tool names and arguments (`run_commands {commands: [...]}`, `editor {path,
//! old_text, new_text}`, `read_files {files: [{path}]}`), renamed here to Claude Code's. A
//! payload in Cline's own hook-file shape (`hookName: "tool_call"`, `tool_call {name, input}`,
//! `taskId`, `workspaceRoots`), as a script in `.clinerules/hooks/` gets it, is read too.
//!
//! The reply is JSON both read: `contextModification` (the context, what a hook file returns and
//! the plugin hands Cline as `appendContext`), and for a denied tool `skip` with `reason` (the
//! plugin API's per-tool block: the tool does not run and its result is the reason).

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Decision, Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    delivers: Some(&[
        EventName::SessionStart,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::Stop,
    ]),
    adjust: Some(adjust),
    ..Dialect::claude_like(Host::Cline, render)
};

/// Cline's `hookName` (hook files' payloads), by Claude Code's event.
const HOOK_NAMES: &[(&str, &str)] = &[
    ("tool_call", "PreToolUse"),
    ("tool_result", "PostToolUse"),
    ("agent_start", "SessionStart"),
    ("agent_resume", "SessionStart"),
    ("prompt_submit", "UserPromptSubmit"),
    ("agent_end", "Stop"),
    ("session_shutdown", "SessionEnd"),
];

fn adjust(map: &mut Map<String, Value>) -> bool {
    let mut changed = hook_file_payload(map);
    changed |= tool_input(map);
    changed
}

/// A hook file's payload, in Claude Code's names.
fn hook_file_payload(map: &mut Map<String, Value>) -> bool {
    if map.contains_key("hook_event_name") {
        return false;
    }
    let Some(name) = map.get("hookName").and_then(Value::as_str) else {
        return false;
    };
    let event = HOOK_NAMES
        .iter()
        .find(|(cline, _)| *cline == name)
        .map_or(name, |(_, claude)| claude)
        .to_string();
    map.insert("hook_event_name".into(), json!(event));
    if !map.contains_key("session_id")
        && let Some(id) = map.get("taskId").cloned()
    {
        map.insert("session_id".into(), id);
    }
    if !map.contains_key("cwd") {
        let root = map
            .get("workspaceInfo")
            .and_then(|w| w.get("rootPath"))
            .or_else(|| map.get("workspaceRoots").and_then(|r| r.get(0)))
            .cloned();
        if let Some(root) = root {
            map.insert("cwd".into(), root);
        }
    }
    let call = map
        .get("tool_call")
        .or_else(|| map.get("tool_result"))
        .cloned();
    if let Some(Value::Object(call)) = call {
        if let Some(name) = call.get("name").and_then(Value::as_str) {
            let claude = crate::tool::claude_name_for(Host::Cline, name);
            map.insert("tool_name".into(), json!(claude));
        }
        if let Some(input) = call.get("input") {
            map.insert("tool_input".into(), input.clone());
        }
        if let Some(id) = call.get("id") {
            map.insert("tool_use_id".into(), id.clone());
        }
        if let Some(output) = call.get("output") {
            map.insert("tool_response".into(), output.clone());
        }
    }
    true
}

/// Cline's tool arguments as Claude Code's: `run_commands`' list as one `command` (a line
/// each), `editor`'s `path`/`old_text`/`new_text` (a Write when it has no `old_text` and no
/// `insert_line`: it creates the file), `read_files`' first file.
fn tool_input(map: &mut Map<String, Value>) -> bool {
    let tool = map
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(Value::Object(input)) = map.get_mut("tool_input") else {
        return false;
    };
    let mut write = false;
    let changed = match tool.as_str() {
        "Bash" if !input.contains_key("command") => {
            let Some(Value::Array(commands)) = input.get("commands") else {
                return false;
            };
            let lines: Vec<&str> = commands.iter().filter_map(Value::as_str).collect();
            let command = lines.join("\n");
            input.insert("command".into(), json!(command));
            true
        }
        "Edit" if !input.contains_key("file_path") => {
            let Some(path) = input.remove("path") else {
                return false;
            };
            input.insert("file_path".into(), path);
            match input.remove("old_text") {
                Some(old) => {
                    input.insert("old_string".into(), old);
                    if let Some(new) = input.remove("new_text") {
                        input.insert("new_string".into(), new);
                    }
                }
                None if !input.contains_key("insert_line") => {
                    if let Some(new) = input.remove("new_text") {
                        input.insert("content".into(), new);
                    }
                    write = true;
                }
                None => {
                    if let Some(new) = input.remove("new_text") {
                        input.insert("new_string".into(), new);
                    }
                }
            }
            true
        }
        "Read" if !input.contains_key("file_path") => {
            let path = input
                .get("files")
                .and_then(|f| f.get(0))
                .and_then(|f| f.get("path"))
                .cloned();
            let Some(path) = path else {
                return false;
            };
            input.insert("file_path".into(), path);
            true
        }
        _ => false,
    };
    if write {
        map.insert("tool_name".into(), json!("Write"));
    }
    changed
}

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let denied = matches!(reply.decision, Some(Decision::Deny));
    if denied && event.name == EventName::PreToolUse {
        out.insert("skip".into(), json!(true));
        out.insert("reason".into(), json!(reply.block_reason()));
    } else if denied && event.name == EventName::PostToolUse {
        out.insert("reason".into(), json!(reply.block_reason()));
    }
    let mut context = reply.all_context();
    if denied && event.name == EventName::PostToolUse {
        context.insert(0, reply.block_reason());
    }
    if !context.is_empty() {
        out.insert("contextModification".into(), json!(context.join("\n\n")));
    }
    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        stderr: None,
        exit_code: 0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::host::Host;
    use crate::hosts::parse;

    /// What the bridge plugin (Claude Code's shape, Cline's tools) and a hook file (Cline's own
    /// shape) send, read as Claude Code would have sent it.
    #[test]
    fn cline_payloads_read_as_claude_codes() {
        let cases: &[(&str, &str, &str, serde_json::Value)] = &[
            (
                r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"run_commands","tool_input":{"commands":["ls","git commit --no-verify"]}}"#,
                "PreToolUse",
                "Bash",
                json!({"commands": ["ls", "git commit --no-verify"], "command": "ls\ngit commit --no-verify"}),
            ),
            (
                r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"editor","tool_input":{"path":"/a","old_text":"x","new_text":"y"}}"#,
                "PreToolUse",
                "Edit",
                json!({"file_path": "/a", "old_string": "x", "new_string": "y"}),
            ),
            (
                r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"editor","tool_input":{"path":"/a","new_text":"y"}}"#,
                "PreToolUse",
                "Write",
                json!({"file_path": "/a", "content": "y"}),
            ),
            (
                r#"{"hookName":"tool_call","taskId":"conv_1","workspaceRoots":["/proj"],"tool_call":{"id":"call_1","name":"run_commands","input":{"commands":["echo hi"]}}}"#,
                "PreToolUse",
                "Bash",
                json!({"commands": ["echo hi"], "command": "echo hi"}),
            ),
        ];
        for (sent, event, tool, input) in cases {
            let (parsed, changed) = parse(Host::Cline, sent.as_bytes(), None).expect("parses");
            assert!(changed);
            assert_eq!(parsed.name.as_str(), *event, "{sent}");
            assert_eq!(parsed.raw["tool_name"], *tool, "{sent}");
            assert_eq!(parsed.raw["tool_input"], *input, "{sent}");
        }
    }
}
