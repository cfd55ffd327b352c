//! What people read, whole: `install` (fresh, again, `--dry-run` with its diff, into a host
//! beyond Claude Code), `status`, `doctor`, `uninstall`, `hooks test`, and the hook binary's one
//! stderr line when it fails open. Paths and times are filtered, nothing else: a change in any
//! line of these outputs shows in review.

use crate::support;

use support::{TestEnv, stderr, stdout};

/// The output with the test's own paths and the backup files' timestamps made stable.
fn stable(env: &TestEnv, text: &str) -> String {
    let text = text
        .replace(&env.project.display().to_string(), "[PROJECT]")
        .replace(&env.home.display().to_string(), "[HOME]")
        .replace(&env.root().display().to_string(), "[ROOT]");
    let marker = "amplihack-backup-";
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(marker) {
        let after = &rest[at + marker.len()..];
        let stamp = after
            .find(|c: char| !(c.is_ascii_digit() || c == 'T' || c == '.' || c == 'Z'))
            .unwrap_or(after.len());
        out.push_str(&rest[..at + marker.len()]);
        out.push_str("[TIME]");
        rest = &after[stamp..];
    }
    out.push_str(rest);
    // The failure log's lines start with their time.
    out.lines()
        .map(|line| match line.split_once(" amplihack-hooks ") {
            Some((time, tail)) if time.starts_with("20") => {
                format!("[TIME] amplihack-hooks {tail}")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `exit 0 in 8 ms` becomes `exit 0 in [T] ms`: run times vary.
fn without_run_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" in ") {
        let after = &rest[at + 4..];
        let digits = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        out.push_str(&rest[..at + 4]);
        if digits > 0 && after[digits..].starts_with(" ms") {
            out.push_str("[T]");
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn both(output: &std::process::Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        output.status.code().unwrap_or(-1),
        stdout(output),
        stderr(output)
    )
}

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
        shown.push(format!("$ amplihack {}\n{}", args.join(" "), both(&output)));
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
        shown.push(format!("$ amplihack {}\n{}", args.join(" "), both(&output)));
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
        let text = without_run_times(&both(&output));
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
    insta::assert_snapshot!("fail_open_line", stable(&env, &both(&output)));
}
