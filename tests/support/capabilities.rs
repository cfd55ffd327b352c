//! What each real-host test proved, recorded for the capability table: one JSON file per test
//! in `target/host-capabilities/` (or `$AMPLIHACK_CAPABILITIES_DIR`), named `<host>--<test>.json`:
//! `{"host", "version", "test", "proved": {capability: true|false|"what instead"}}`. A test
//! records only after its assertions passed, so a file is a claim some test showed.
//!
//! Capabilities, by key: `events` (the Claude Code events the host delivered to amplihack),
//! `deny_with_reason`, `context`, `keep_going`, `transcript`, `lock_mode`, `trust_step`,
//! `doctor`, `uninstall_byte_for_byte`, `plugin_deny`, `speed`.

use std::path::PathBuf;

use serde_json::{Value, json};

/// The directory records go in.
pub fn dir() -> PathBuf {
    std::env::var_os("AMPLIHACK_CAPABILITIES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::repo_root().join("target/host-capabilities"))
}

/// Records what `test` proved of `host` (at `version`).
pub fn record(host: &str, version: &str, test: &str, proved: Value) {
    let dir = dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let record = json!({"host": host, "version": version, "test": test, "proved": proved});
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    let _ = std::fs::write(dir.join(format!("{host}--{test}.json")), text + "\n");
}
