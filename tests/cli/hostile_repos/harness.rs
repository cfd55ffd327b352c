//! What every hostile-repository case shares: the repository's payload leaves a mark when it
//! runs, and a snapshot of the user's home shows what amplihack wrote outside the repository.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::TestEnv;

/// The file a hostile payload appends to when it runs: a case passes only if it stays absent.
/// In the marks directory, which the tests' project plugins declare they write: a payload that
/// runs in a confined handler still leaves its mark.
pub fn pwned(env: &TestEnv) -> PathBuf {
    env.root().join("marks/PWNED")
}

/// A shell command a repository plants: it records that it ran (and what it was).
pub fn payload(env: &TestEnv, what: &str) -> String {
    format!("echo {what} >> '{}'", pwned(env).display())
}

/// Python source a repository plants (a module shadowing the standard library, say).
pub fn python_payload(env: &TestEnv, what: &str) -> String {
    format!(
        "open({:?}, 'a').write({what:?} + '\\n')\n",
        pwned(env).display().to_string()
    )
}

/// What ran of the repository's code, one line per payload that ran.
pub fn ran(env: &TestEnv) -> Vec<String> {
    std::fs::read_to_string(pwned(env))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Every file under the home directory with its bytes, except amplihack's own state and log
/// directory (`~/.local/state/amplihack`), which is where amplihack is meant to write.
pub fn home_snapshot(env: &TestEnv) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let skip = env.home.join(".local/state/amplihack");
    walk(&env.home, &skip, &mut files);
    files
}

fn walk(dir: &Path, skip: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.starts_with(skip) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, skip, files);
        } else if meta.is_file() {
            files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
        }
    }
}

/// Files added or changed between two snapshots.
pub fn changed(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<PathBuf> {
    after
        .iter()
        .filter(|(path, bytes)| before.get(*path) != Some(bytes))
        .map(|(path, _)| path.clone())
        .collect()
}

/// A PreToolUse event for a Bash command in the test's project.
pub fn bash_event(env: &TestEnv, cmd: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": "hostile-1", "cwd": env.project,
           "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t1",
           "transcript_path": env.root().join("transcript.jsonl")})
}

/// A PostToolUse event for a Write in the test's project.
pub fn write_event(env: &TestEnv, file: &Path) -> Value {
    json!({"hook_event_name": "PostToolUse", "session_id": "hostile-1", "cwd": env.project,
           "tool_name": "Write", "tool_input": {"file_path": file, "content": "x"},
           "tool_response": {"type": "create"}, "tool_use_id": "t2",
           "transcript_path": env.root().join("transcript.jsonl")})
}

/// A Stop event in the test's project.
pub fn stop_event(env: &TestEnv) -> Value {
    json!({"hook_event_name": "Stop", "session_id": "hostile-1", "cwd": env.project,
           "stop_hook_active": false, "transcript_path": env.root().join("transcript.jsonl")})
}

/// Symlink helper for planted links.
pub fn link(target: &Path, at: &Path) {
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::os::unix::fs::symlink(target, at).expect("symlink");
}

/// A PreCompact event whose transcript is `transcript`.
pub fn compact_event(env: &TestEnv, transcript: &Path) -> Value {
    json!({"hook_event_name": "PreCompact", "session_id": "hostile-1", "cwd": env.project,
           "trigger": "auto", "custom_instructions": "", "transcript_path": transcript})
}

/// A SessionStart event in the test's project.
pub fn session_start_event(env: &TestEnv) -> Value {
    json!({"hook_event_name": "SessionStart", "session_id": "hostile-1", "cwd": env.project,
           "source": "startup", "transcript_path": env.root().join("transcript.jsonl")})
}

/// Where the fake `claude` (see [`fake_claude`]) records each start: its working directory, its
/// `CLAUDE_PROJECT_DIR` and its arguments, one per line.
pub fn claude_record(env: &TestEnv) -> PathBuf {
    env.root().join("claude-started")
}

/// A fake `claude` first on every program's PATH (the test's tools directory): it records that
/// it started, and answers like `claude -p`.
pub fn fake_claude(env: &TestEnv) {
    let script = env.root().join("test-tools/claude");
    let body = format!(
        "#!/bin/sh\n{{ echo \"start\"; echo \"pwd=$(pwd)\"; echo \"project=${{CLAUDE_PROJECT_DIR-unset}}\"; for a in \"$@\"; do echo \"arg=$a\"; done; }} >> '{}'\ncat > /dev/null\nprintf '## Summary\\nfine\\n'\n",
        claude_record(env).display()
    );
    std::fs::write(&script, body).expect("fake claude");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// What the fake `claude` recorded (empty when it never started).
pub fn claude_started(env: &TestEnv) -> Vec<String> {
    std::fs::read_to_string(claude_record(env))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}
