//! `status --json` and `doctor --json` carry what a fleet inventory collects: the version, each
//! host (installed, registered, each scope with its file and state) and the last session each
//! host called amplihack in. Snapshot-tested through the shared filters.

use serde_json::{Value, json};

use crate::support::snapshot::stable_json;
use crate::support::{TestEnv, stderr, stdout};

fn json_of(env: &TestEnv, args: &[&str]) -> Value {
    let out = env.run_amplihack(args);
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "amplihack {args:?}: not JSON ({e}): {}{}",
            stdout(&out),
            stderr(&out)
        )
    })
}

#[test]
fn status_and_doctor_json_carry_the_inventory() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".codex")).expect("codex home");
    for host in ["claude", "codex"] {
        let out = env.run_amplihack(&["install", "--host", host]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // Claude Code calls amplihack in a session: its start is recorded.
    let (out, _) = env.run_hooks(
        &["session-start"],
        &json!({"session_id": "s-inventory-1", "hook_event_name": "SessionStart", "source": "startup", "cwd": env.project}),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    let status = json_of(&env, &["status", "--json"]);
    assert_eq!(status["version"], amplihack_protocol::VERSION);
    let claude = &status["hosts"][0];
    assert_eq!(claude["last_call"]["session"], "s-inventory-1", "{status}");
    insta::assert_snapshot!("status_json_hosts", stable_json(&env, &status["hosts"]));

    let doctor = json_of(&env, &["doctor", "--json"]);
    assert_eq!(doctor["version"], amplihack_protocol::VERSION);
    assert_eq!(doctor["hosts"], status["hosts"], "doctor and status agree");
}
