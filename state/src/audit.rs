//! The audit log `<state>/audit.jsonl`: one JSON line per forwarded handler run (time, session,
//! event, plugin, command, exit, duration, decision, whether it timed out, ran detached or had its
//! output cut), appended whole so concurrent sessions never interleave. Rotated past 8 MiB.

use std::path::PathBuf;

use serde_json::Value;

use crate::StateDir;
use crate::files::{self, StateError};

const ROTATE_AT: u64 = 8 * 1024 * 1024;

pub fn path(state: &StateDir) -> PathBuf {
    state.file("audit.jsonl")
}

pub fn append(state: &StateDir, records: &[Value]) -> Result<(), StateError> {
    if records.is_empty() {
        return Ok(());
    }
    let file = path(state);
    files::rotate(&file, ROTATE_AT);
    // One write for all of this call's lines.
    let text = records
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    files::append_line(&file, &text)
}
