//! Payloads captured from a real host, moved onto this machine.
//!
//! The captured Claude Code payloads (`tests/fixtures/claude-code-*`) were recorded in a session
//! whose home was `/home/user` and whose project was `/home/user/project`. A host only ever sends
//! the directory it runs in, so a test (or a benchmark) sends them with those paths rewritten to
//! its own scratch home and project: a machine without `/home/user/project` behaves as one with
//! it, and nothing is ever written to that path on a machine that has it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The home the payloads were captured under.
const CAPTURED_HOME: &str = "/home/user";
/// The project the payloads were captured in.
const CAPTURED_PROJECT: &str = "/home/user/project";

/// `payload` (a captured event) with every path under the captured project moved to `project`
/// and every other path under the captured home moved to `home`.
pub fn rehome(payload: &[u8], home: &Path, project: &Path) -> Vec<u8> {
    let mut event: Value = serde_json::from_slice(payload).expect("a captured payload is JSON");
    move_paths(&mut event, home, project);
    serde_json::to_vec(&event).expect("JSON serialises")
}

/// The captured payload `tests/fixtures/NAME`, moved into `scratch` (its `home` and `project`,
/// both created) and written to `scratch/event.json`, for a benchmark that feeds it from a file.
pub fn rehomed_file(name: &str, scratch: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let payload = std::fs::read(&source).expect("a captured payload");
    let (home, project) = (scratch.join("home"), scratch.join("project"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&project).expect("project");
    let event = scratch.join("event.json");
    std::fs::write(&event, rehome(&payload, &home, &project)).expect("event");
    event
}

fn move_paths(value: &mut Value, home: &Path, project: &Path) {
    match value {
        Value::String(text) => {
            if let Some(moved) =
                moved(text, CAPTURED_PROJECT, project).or_else(|| moved(text, CAPTURED_HOME, home))
            {
                *text = moved;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| move_paths(v, home, project)),
        Value::Object(map) => map.values_mut().for_each(|v| move_paths(v, home, project)),
        _ => {}
    }
}

/// `text` with its leading `from` directory replaced by `to`, when it is `from` or under it.
fn moved(text: &str, from: &str, to: &Path) -> Option<String> {
    let rest = text.strip_prefix(from)?;
    (rest.is_empty() || rest.starts_with('/')).then(|| format!("{}{rest}", to.display()))
}
