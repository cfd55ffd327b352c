//! Plugins' declared timeouts are honoured: amplihack's registration for an event holds the
//! longest timeout a plugin declares for it (capped at the host's maximum), kept in step at
//! install, `hooks *` and `doctor --fix`; the registered command tells amplihack-hooks
//! (`--timeout N`), whose deadline follows, so a plugin gets the time it declared; `hooks list`
//! says where a host does not allow it.

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, command, stderr, stdout};

fn ok(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

/// amplihack's entry on `event` that runs `subcommand`: its command and timeout.
fn ours(settings: &Value, event: &str, subcommand: &str) -> (String, Option<u64>) {
    let found: Vec<(String, Option<u64>)> = settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| {
            let line = h["command"].as_str()?.to_string();
            let words: Vec<&str> = line.split_whitespace().collect();
            (line.contains("amplihack-hooks") && words.contains(&subcommand))
                .then(|| (line.clone(), h["timeout"].as_u64()))
        })
        .collect();
    assert_eq!(found.len(), 1, "{event} → {subcommand}: {settings:#}");
    found[0].clone()
}

/// A plugin `slow` in `dir` whose SessionStart and SessionEnd handlers declare 30 s.
fn slow_plugin(env: &TestEnv, dir: &std::path::Path) -> std::path::PathBuf {
    let start = env.script(
        &env.root().join("slow-start.sh"),
        "cat >/dev/null\nsleep \"${SLOW_START_SECS:-0}\"\necho 'SLOW-START-CONTEXT'",
    );
    let mut handler = command(&start.to_string_lossy());
    handler["timeout"] = json!(30);
    let mut end = command("cat >/dev/null");
    end["timeout"] = json!(30);
    env.plugin(
        dir,
        "slow",
        &json!({"hooks": {
            "SessionStart": [{"hooks": [handler]}],
            "SessionEnd": [{"hooks": [end]}],
        }}),
    )
}

#[test]
fn registrations_hold_the_plugins_declared_timeouts_and_follow_them() {
    let env = TestEnv::new();
    slow_plugin(&env, &env.user_hooks_dir());
    let out = ok(&env.run_amplihack(&["install"]));
    assert!(out.contains("timeouts for your plugins"), "{out}");
    let settings = env.read_json(&env.claude_settings_path());
    let (line, timeout) = ours(&settings, "SessionStart", "session-start");
    assert_eq!(timeout, Some(33), "{line}");
    assert!(line.ends_with("session-start --timeout 33"), "{line}");
    // SessionEnd: Claude Code shares one SessionEnd budget, the largest timeout up to 60 s.
    let (line, timeout) = ours(&settings, "SessionEnd", "session-end");
    assert_eq!(timeout, Some(33), "{line}");
    // The other rows are the table's.
    let (line, timeout) = ours(&settings, "UserPromptSubmit", "user-prompt-submit");
    assert_eq!(timeout, Some(10), "{line}");
    assert!(!line.contains("--timeout"), "{line}");

    // Codex too, capped at its SessionEnd maximum (3 s).
    ok(&env.run_amplihack(&["install", "--host", "codex"]));
    let codex = env.read_json(&env.home.join(".codex/hooks.json"));
    let (line, timeout) = ours(&codex, "SessionStart", "session-start");
    assert_eq!(timeout, Some(33), "{line}");
    assert!(line.contains("--timeout 33"), "{line}");
    let (line, timeout) = ours(&codex, "SessionEnd", "session-end");
    assert_eq!(timeout, Some(3), "{line}");

    // `hooks list` says where a host does not allow the declared time.
    let list = ok(&env.run_amplihack(&["hooks", "list"]));
    assert!(
        list.contains("SessionEnd: timeout 30 s exceeds what Codex allows (3 s for SessionEnd)"),
        "{list}"
    );
    assert!(!list.contains("SessionStart: timeout"), "{list}");

    // `doctor` sees the raised registration as amplihack's own, in step.
    let doctor = stdout(&env.run_amplihack(&["doctor"]));
    assert!(!doctor.contains("is not registered"), "{doctor}");

    // The plugin disabled: the table's timeouts again; enabled: raised again.
    ok(&env.run_amplihack(&["hooks", "disable", "slow"]));
    let settings = env.read_json(&env.claude_settings_path());
    let (line, timeout) = ours(&settings, "SessionStart", "session-start");
    assert_eq!(timeout, Some(10), "{line}");
    assert!(!line.contains("--timeout"), "{line}");
    let codex = env.read_json(&env.home.join(".codex/hooks.json"));
    assert_eq!(ours(&codex, "SessionEnd", "session-end").1, Some(3));
    ok(&env.run_amplihack(&["hooks", "enable", "slow"]));
    let settings = env.read_json(&env.claude_settings_path());
    assert_eq!(ours(&settings, "SessionStart", "session-start").1, Some(33));

    // A re-install keeps it; `doctor --fix` brings a hand-lowered one back.
    ok(&env.run_amplihack(&["install"]));
    let settings = env.read_json(&env.claude_settings_path());
    assert_eq!(ours(&settings, "SessionStart", "session-start").1, Some(33));
    let path = env.claude_settings_path();
    let text = env
        .read(&path)
        .replace("session-start --timeout 33", "session-start");
    env.write(&path, &text.replace("\"timeout\": 33", "\"timeout\": 10"));
    let fixed = stdout(&env.run_amplihack(&["doctor", "--fix"]));
    let settings = env.read_json(&env.claude_settings_path());
    assert_eq!(
        ours(&settings, "SessionStart", "session-start").1,
        Some(33),
        "{fixed}"
    );
}

/// A SessionStart handler that declares 30 s and takes 9 (beyond amplihack's own 8 s deadline)
/// is not killed: the registered command, run as Claude Code runs it, answers its context.
#[test]
fn a_slow_handler_within_its_declared_timeout_is_answered() {
    let env = TestEnv::new();
    ok(&env.run_amplihack(&["install"]));
    // Installed after amplihack: `hooks install` raises the registration.
    let source = slow_plugin(&env, &env.root().join("sources"));
    let source = source
        .parent()
        .expect("plugin dir")
        .to_string_lossy()
        .to_string();
    let out = ok(&env.run_amplihack(&["hooks", "install", &source]));
    assert!(out.contains("SessionStart 33 s"), "{out}");
    let settings = env.read_json(&env.claude_settings_path());
    let (line, _) = ours(&settings, "SessionStart", "session-start");
    let payload = json!({
        "hook_event_name": "SessionStart",
        "session_id": "slow-1",
        "source": "startup",
        "cwd": env.project,
    });
    let mut run = env.command(std::path::Path::new("/bin/sh"));
    run.args(["-c", &line])
        .current_dir(&env.project)
        .env("CLAUDE_PROJECT_DIR", &env.project)
        .env("SLOW_START_SECS", "9");
    let (output, took) = support::run_with_timeout(
        run,
        payload.to_string().as_bytes(),
        std::time::Duration::from_secs(60),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("SLOW-START-CONTEXT"),
        "after {took:?}\nstdout: {}\nstderr: {}",
        stdout(&output),
        stderr(&output)
    );
    assert!(took >= std::time::Duration::from_secs(9), "{took:?}");
}
