//! The audit log: one JSON line per handler run, appended with a single `write` on an
//! `O_APPEND` file so lines from concurrent sessions never interleave.
//! `<state>/audit.jsonl`: time, session, event, plugin, command, exit, duration, decision,
//! whether output was cut, whether it timed out or ran detached.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use serde_json::Value;

pub fn append(state_dir: &Path, record: &Value) -> Result<(), String> {
    std::fs::create_dir_all(state_dir).map_err(|e| format!("{}: {e}", state_dir.display()))?;
    let path = state_dir.join("audit.jsonl");
    let mut line = record.to_string();
    line.push('\n');
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))
}
