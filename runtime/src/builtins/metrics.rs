//! Post-tool-use: one JSON line per tool call in
//! `<project>/.claude/runtime/metrics/post_tool_use_metrics.jsonl` (the predecessors' file, with
//! one schema): `timestamp` (ISO-8601 UTC), `session_id`, `tool_name`, `category`, `success` read
//! from the `tool_response` Claude Code sends (or Amplifier's `tool_result`), `file` for the
//! file tools, `agent` for a subagent call, `hook`. One `write` per line, rotated past 10 MiB,
//! no output. It costs one file append per call (measured in the startup benchmark). The file is
//! reached without following a link ([`amplihack_state::safe_open`]): a repository that plants
//! a link there (to `~/.bashrc`, say) gets nothing written, and the call is reported.

use amplihack_protocol::{Payload, Reply, ToolCall};
use std::path::{Path, PathBuf};

use amplihack_state::{project, time};
use serde_json::{Map, Value, json};

use super::Result;
use crate::pipeline::Call;

pub const DIR: &str = ".claude/runtime/metrics";
pub const NAME: &str = "post_tool_use_metrics.jsonl";
const ROTATE_AT: u64 = 10 * 1024 * 1024;

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (call_info, success, error) = match &call.event.payload {
        Payload::ToolResult { call, response } => {
            let (ok, error) = outcome_of(response);
            (call, ok, error)
        }
        Payload::ToolFailure { call, error } => (call, false, Some(error.clone())),
        _ => return Ok(Reply::default()),
    };
    let root = call.ctx.project_root(call.event);
    let dir = project::writable(&root, Path::new(DIR))?;
    dir.rotate(NAME, ROTATE_AT);
    dir.append_line(
        NAME,
        &line(call_info, call.event.session_id.as_deref(), success, error).to_string(),
    )?;
    Ok(Reply::default())
}

/// The metrics file of the project at `root`.
pub fn file(root: &Path) -> PathBuf {
    root.join(DIR).join(NAME)
}

/// The metrics record of one call.
pub fn line(tool: &ToolCall, session: Option<&str>, success: bool, error: Option<String>) -> Value {
    let mut record = Map::new();
    record.insert("timestamp".into(), json!(time::utc_now_millis()));
    record.insert("session_id".into(), json!(session));
    record.insert("tool_name".into(), json!(tool.name));
    record.insert("category".into(), json!(category(&tool.name)));
    record.insert("success".into(), json!(success));
    if let Some(error) = error.filter(|e| !e.is_empty()) {
        record.insert(
            "error".into(),
            json!(error.chars().take(200).collect::<String>()),
        );
    }
    if let Some(file) = file_of(tool) {
        record.insert("file".into(), json!(file));
    }
    if let Some(agent) = tool.input.get("subagent_type").and_then(Value::as_str) {
        record.insert("agent".into(), json!(agent));
    }
    record.insert("hook".into(), json!("post_tool_use"));
    Value::Object(record)
}

pub fn category(tool: &str) -> &'static str {
    match tool {
        "Bash" | "PowerShell" => "bash_commands",
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => "file_operations",
        "Read" | "Glob" | "Grep" | "LS" => "search_operations",
        "Task" | "Agent" => "agents",
        "WebFetch" | "WebSearch" => "web",
        _ => "other",
    }
}

/// The file a file tool wrote (Claude Code: `file_path`, notebooks: `notebook_path`).
pub fn file_of(tool: &ToolCall) -> Option<&str> {
    ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| tool.input.get(*k).and_then(Value::as_str))
        .filter(|_| category(&tool.name) == "file_operations")
}

/// Whether the call succeeded, and its error, from the tool's response.
pub fn outcome_of(response: &Value) -> (bool, Option<String>) {
    let error = response
        .get("error")
        .and_then(|e| {
            e.as_str()
                .map(str::to_string)
                .or_else(|| (!e.is_null()).then(|| e.to_string()))
        })
        .filter(|e| !e.is_empty());
    let failed = response.get("success") == Some(&Value::Bool(false))
        || response.get("is_error") == Some(&Value::Bool(true))
        || response.get("interrupted") == Some(&Value::Bool(true))
        || error.is_some();
    (!failed, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_from_the_tool_response() {
        let cases = [
            (
                json!({"stdout": "a", "stderr": "", "interrupted": false}),
                true,
            ),
            (json!({"stdout": "", "interrupted": true}), false),
            (json!({"type": "create", "filePath": "/p/a"}), true),
            (json!({"success": false, "output": {}}), false),
            (json!({"success": true, "output": {"returncode": 0}}), true),
            (json!({"error": "File not found"}), false),
            (json!("plain text"), true),
        ];
        for (response, ok) in cases {
            assert_eq!(outcome_of(&response).0, ok, "{response}");
        }
    }
}
