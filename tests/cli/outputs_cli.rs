//! What people read, whole: `install` (fresh, again, `--dry-run` with its diff, into a host
//! beyond Claude Code), `status`, `doctor`, `uninstall`, `hooks test`, and the hook binary's one
//! stderr line when it fails open. Paths and times are filtered, nothing else: a change in any
//! line of these outputs shows in review.

use crate::support;

use support::TestEnv;
use support::snapshot::{stable, without_run_times};

/// A project with a git work tree and a Claude Code settings file the user curated.
fn project_with_settings(env: &TestEnv) {
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    env.write(
        &env.home.join(".claude/settings.json"),
        "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"my-linter\"}]}\n    ]\n  }\n}\n",
    );
}

#[test]
fn installer_outputs() {
    let env = TestEnv::new();
    project_with_settings(&env);
    let mut shown = Vec::new();
    for args in [
        &["install", "--host", "claude", "--dry-run"][..],
        &["install", "--host", "claude"],
        &["install", "--host", "claude"],
        &["status"],
        &["doctor"],
        &["uninstall", "--host", "claude", "--keep-binaries"],
    ] {
        let output = env.run_amplihack(args);
        shown.push(format!(
            "$ amplihack {}\n{}",
            args.join(" "),
            support::snapshot::both(&output)
        ));
    }
    insta::assert_snapshot!("installer_outputs", stable(&env, &shown.join("\n")));
}

#[test]
fn install_into_another_host() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    env.write(
        &env.home.join(".gemini/settings.json"),
        "{\"theme\": \"dark\"}\n",
    );
    let mut shown = Vec::new();
    for args in [
        &["install", "--host", "gemini"][..],
        &["doctor"],
        &["uninstall", "--host", "gemini", "--keep-binaries"],
    ] {
        let output = env.run_amplihack(args);
        shown.push(format!(
            "$ amplihack {}\n{}",
            args.join(" "),
            support::snapshot::both(&output)
        ));
    }
    insta::assert_snapshot!("install_into_another_host", stable(&env, &shown.join("\n")));
    assert_eq!(
        env.read(&env.home.join(".gemini/settings.json")),
        "{\"theme\": \"dark\"}\n",
        "given back byte for byte"
    );
}

#[test]
fn hooks_test_output() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    env.write(
        &env.user_hooks_dir().join("guard/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"not here\"}}'"}]}]}}"#,
    );
    let mut shown = Vec::new();
    for host in ["claude", "gemini"] {
        let args = ["hooks", "test", "PreToolUse", "--host", host];
        let output = env.run_amplihack(&args);
        let text = without_run_times(&support::snapshot::both(&output));
        shown.push(format!("$ amplihack {}\n{text}", args.join(" ")));
    }
    insta::assert_snapshot!("hooks_test_output", stable(&env, &shown.join("\n")));
}

#[test]
fn the_hook_binarys_fail_open_line() {
    let env = TestEnv::new();
    let mut command = env.hooks(&["pre-tool-use"]);
    command.env("AMPLIHACK_HOOKS_FAULT", "error");
    let (output, _) = support::run_with_timeout(
        command,
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        std::time::Duration::from_secs(30),
    );
    insta::assert_snapshot!(
        "fail_open_line",
        stable(&env, &support::snapshot::both(&output))
    );
}
