//! One machine, many hosts, in the real Claude Code: removing amplihack from one host leaves
//! another guarded (the binaries stay while a registration names them).

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, stderr, stdout};

#[test]
fn removing_one_host_leaves_claude_code_guarded() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    std::fs::create_dir_all(env.home.join(".gemini")).expect("gemini installed");
    for host in ["claude", "gemini"] {
        let output = env.run_amplihack(&["install", "--host", host]);
        assert_eq!(output.status.code(), Some(0), "{host}: {}", stderr(&output));
    }
    let output = env.run_amplihack(&["uninstall", "--host", "gemini"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(env.deployed_hooks().is_file(), "Claude Code still runs it");

    let fake = FakeAnthropic::start(vec![
        Turn::bash("git commit --no-verify -m wip"),
        Turn::text("understood"),
    ]);
    let run = env.claude(&fake.url, "commit my work");
    let denials = run.result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(denials.len(), 1, "the commit is denied: {}", run.result);
    assert_eq!(denials[0]["tool_name"], "Bash");
}

/// A Claude Code session with its hooks switched off is noticed by `doctor`, by its id; a normal
/// session is not.
#[test]
fn doctor_notices_a_claude_code_session_that_did_not_call_amplihack() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    let output = env.run_amplihack(&["install", "--host", "claude"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let fake = FakeAnthropic::start(vec![Turn::text("hello")]);
    let normal = env.claude(&fake.url, "say hello");
    let normal_id = normal.result["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!normal_id.is_empty(), "{}", normal.result);
    let doctor = env.run_amplihack(&["doctor", "--host", "claude"]);
    assert_eq!(
        doctor.status.code(),
        Some(0),
        "a session that called amplihack is fine: {}",
        stdout(&doctor)
    );

    let fake = FakeAnthropic::start(vec![Turn::text("hello")]);
    let silent = env.claude_with(
        &fake.url,
        &[
            "-p",
            "say hello",
            "--settings",
            r#"{"disableAllHooks": true}"#,
        ],
        &[],
    );
    let silent_id = silent.result["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !silent_id.is_empty() && silent_id != normal_id,
        "{}",
        silent.result
    );
    let doctor = env.run_amplihack(&["doctor"]);
    let text = stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("Claude Code ran session {silent_id}"))
            && text.contains("did not call amplihack in it")
            && text.contains("disableAllHooks"),
        "{text}"
    );
    assert!(!text.contains(&normal_id), "{text}");
}
