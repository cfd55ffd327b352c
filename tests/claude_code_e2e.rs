//! The real Claude Code, offline against a loopback fake of the Messages API, with settings that
//! point at the built `amplihack-hooks`: what we answer is honoured by the real host.

use serde_json::{Value, json};

use crate::support;
use crate::support::capabilities::{Capability, Trust, npm_version, proved};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, hooks_bin};

/// Every subcommand registered on its event, as a user's settings would have it, plus `dispatch`
/// on the events that have no subcommand of their own.
fn register_everything(env: &TestEnv) {
    let bin = hooks_bin();
    let entry =
        |sub: &str| json!({"type": "command", "command": format!("\"{}\" {sub}", bin.display())});
    let group = |sub: &str| json!({"hooks": [entry(sub)]});
    let tool_group = |sub: &str| json!({"matcher": "*", "hooks": [entry(sub)]});
    let settings = json!({
        "hooks": {
            "SessionStart": [group("session-start")],
            "Stop": [group("stop")],
            "PreToolUse": [tool_group("pre-tool-use")],
            "PostToolUse": [tool_group("post-tool-use")],
            "PostToolUseFailure": [tool_group("dispatch")],
            "PostToolBatch": [group("dispatch")],
            "UserPromptSubmit": [group("workflow-classification-reminder"), group("user-prompt-submit")],
            "PreCompact": [group("pre-compact")],
            // SessionEnd fires after Claude Code closes its debug log: a thin wrapper records
            // amplihack's exit status and stderr instead.
            "SessionEnd": [{"hooks": [{"type": "command", "command": format!(
                "\"{}\" session-end 2>> '{}'; echo \"exit=$?\" >> '{}'",
                bin.display(),
                env.root().join("session-end.err").display(),
                env.root().join("session-end.status").display()
            )}]}],
            "SubagentStop": [group("subagent-stop")],
            "Notification": [group("notification")]
        }
    });
    env.write(
        &env.claude_settings_path(),
        &serde_json::to_string_pretty(&settings).expect("json"),
    );
}

/// The tool results the model was given, in order (the last request carries the whole history).
fn tool_results(fake: &FakeAnthropic) -> Vec<String> {
    let mut results = Vec::new();
    if let Some(request) = fake.main_requests().last() {
        for message in request["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    results.push(block["content"].to_string());
                }
            }
        }
    }
    results
}

#[test]
fn no_verify_commit_is_denied_and_the_reason_reaches_the_model() {
    let env = TestEnv::new();
    register_everything(&env);
    let fake = FakeAnthropic::start(vec![
        Turn::bash("git commit --no-verify -m wip"),
        Turn::text("understood"),
    ]);
    let run = env.claude(&fake.url, "commit my work");

    let denials = run.result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(denials.len(), 1, "one denied call expected: {}", run.result);
    assert_eq!(denials[0]["tool_name"], "Bash");
    let results = tool_results(&fake);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("amplihack blocked `git commit --no-verify`"),
        "reason did not reach the model: {}",
        results[0]
    );
}

#[test]
fn allowed_command_runs_and_project_context_reaches_the_model() {
    let env = TestEnv::new();
    register_everything(&env);
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "# Zephyr\nThe zephyr project uses tabs, never spaces.\n",
    );
    let fake = FakeAnthropic::start(vec![
        Turn::bash("echo hello-from-bash > made-by-bash.txt"),
        Turn::bash("exit 3"),
        Turn::text("done"),
    ]);
    let run = env.claude(&fake.url, "make a file");

    assert_eq!(run.result["is_error"], Value::Bool(false), "{}", run.result);
    assert!(
        run.result["permission_denials"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{}",
        run.result
    );
    let made =
        std::fs::read_to_string(env.project.join("made-by-bash.txt")).expect("the Bash call ran");
    assert_eq!(made.trim(), "hello-from-bash");

    let first = fake
        .main_requests()
        .first()
        .cloned()
        .expect("a main-loop request");
    let first = first.to_string();
    assert!(
        first.contains("The zephyr project uses tabs, never spaces."),
        "PROJECT.md did not reach the model: {first}"
    );

    // Every event of the run reached amplihack and none produced an error or output Claude Code
    // could not use.
    let bin = hooks_bin().display().to_string();
    let ours = run.hook_lines(&bin);
    for (event, sub) in [
        ("SessionStart:startup", "session-start"),
        ("UserPromptSubmit", "workflow-classification-reminder"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PreToolUse:Bash", "pre-tool-use"),
        ("PostToolUse:Bash", "post-tool-use"),
        ("PostToolBatch", "dispatch"),
        ("PostToolUseFailure:Bash", "dispatch"),
        ("Stop", "stop"),
    ] {
        let ran = ours.iter().any(|l| {
            l.contains(&format!("Hooks: {event} "))
                && l.contains(&format!("\" {sub}]"))
                && l.contains("finished with status 0")
        });
        assert!(
            ran,
            "{event} → {sub} did not run cleanly; amplihack lines:\n{}",
            ours.join("\n")
        );
    }
    let version = npm_version(&support::claude_bin());
    proved(
        "claude",
        &version,
        Capability::Events(vec![
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolBatch",
            "PostToolUseFailure",
            "Stop",
        ]),
    );
    if std::env::var_os("AMPLIHACK_SHOW_HOOK_LINES").is_some() {
        eprintln!("{}", ours.join("\n"));
    }
    assert!(
        run.hook_complaints().is_empty(),
        "Claude Code complained about hooks:\n{}",
        run.hook_complaints().join("\n")
    );
    let seen = fake.everything_the_model_saw();
    assert!(
        !seen.contains("hook error"),
        "a hook error reached the model: {seen}"
    );
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(
        !stderr.contains("amplihack-hooks"),
        "amplihack complained: {stderr}"
    );
    let ended = std::fs::read_to_string(env.root().join("session-end.status")).unwrap_or_default();
    assert_eq!(ended.trim(), "exit=0", "SessionEnd did not run cleanly");
    proved("claude", &version, Capability::Events(vec!["SessionEnd"]));
    assert_eq!(
        std::fs::read_to_string(env.root().join("session-end.err")).unwrap_or_default(),
        ""
    );
    assert!(
        !env.root().join("logs/hooks.log").exists(),
        "amplihack logged a failure: {:?}",
        std::fs::read_to_string(env.root().join("logs/hooks.log"))
    );
}

/// Control for the checks above: a hook that fails *is* seen by them, so their silence means
/// something.
#[test]
fn a_failing_hook_is_detected_by_the_harness() {
    let env = TestEnv::new();
    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo broken >&2; exit 1"}]}]}});
    env.write(&env.claude_settings_path(), &settings.to_string());
    let fake = FakeAnthropic::start(vec![Turn::text("hi")]);
    let run = env.claude(&fake.url, "hello");
    let complaints = run.hook_complaints();
    assert!(
        complaints.iter().any(|l| l.contains("status code 1")),
        "harness missed a failing hook:\n{}",
        run.debug_log
    );
}

/// `amplihack install` as a user runs it, then the real Claude Code: the hooks it registered (with
/// a space in their path) fire, deny, and inject context.
#[test]
fn hooks_registered_by_amplihack_install_fire_inside_claude_code() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "Installed-context marker: the quux project.",
    );
    let fake = FakeAnthropic::start(vec![
        Turn::bash("git push --no-verify origin main"),
        Turn::bash("rm -rf ~"),
        Turn::bash("echo fine"),
        Turn::text("ok"),
    ]);
    let run = env.claude(&fake.url, "ship it");

    let denied: Vec<String> = run.result["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["tool_input"]["command"].to_string())
        .collect();
    assert_eq!(denied.len(), 2, "{denied:?} / {}", run.result);
    let results = tool_results(&fake);
    assert!(
        results[0].contains("amplihack blocked `git push --no-verify`"),
        "{}",
        results[0]
    );
    let version = npm_version(&support::claude_bin());
    proved("claude", &version, Capability::DenyWithReason);
    assert!(
        results[1].contains("would recursively delete your home directory"),
        "{}",
        results[1]
    );
    assert!(
        fake.everything_the_model_saw()
            .contains("Installed-context marker: the quux project.")
    );
    proved("claude", &version, Capability::Context);

    let deployed = env.deployed_hooks().display().to_string();
    assert!(
        deployed.contains(' '),
        "the test means to cover a path with a space"
    );
    let ours = run.hook_lines(&deployed);
    for event in [
        "SessionStart:startup",
        "UserPromptSubmit",
        "PreToolUse:Bash",
        "PostToolUse:Bash",
        "Stop",
    ] {
        assert!(
            ours.iter()
                .any(|l| l.contains(&format!("Hooks: {event} "))
                    && l.contains("finished with status 0")),
            "{event} did not run the installed binary cleanly:\n{}",
            ours.join("\n")
        );
    }
    proved(
        "claude",
        &version,
        Capability::Events(vec![
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
        ]),
    );
    // Registered by `amplihack install`, nothing trusted: they ran.
    proved("claude", &version, Capability::TrustStep(Trust::NoneAsked));
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );
}

/// The user's plugins, forwarded by amplihack inside the real Claude Code: a Claude Code plugin
/// copied unchanged blocks a tool call and its reason reaches the model; contexts from two plugins
/// (user level, and a trusted project) both reach the model, once each.
#[test]
fn user_plugins_forwarded_by_amplihack_are_honoured_by_claude_code() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    support::copy_dir(
        &support::repo_root().join("tests/fixtures/plugins/freeze-deploys"),
        &env.user_hooks_dir().join("freeze-deploys"),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "team-notes",
        &support::one_group(
            "UserPromptSubmit",
            None,
            vec![support::command(
                "echo 'Team note: the staging DB is read-only today.'",
            )],
        ),
    );
    let context_json = json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "Repo note: run make lint before committing."}});
    env.plugin(
        &env.project_hooks_dir(),
        "repo-notes",
        &support::one_group(
            "UserPromptSubmit",
            None,
            vec![support::command(&format!("echo '{context_json}'"))],
        ),
    );
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", support::stderr(&trust));

    let fake = FakeAnthropic::start(vec![
        Turn::bash("make deploy"),
        Turn::text("ok, not deploying"),
    ]);
    let run = env.claude(&fake.url, "deploy it");

    let denials = run.result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(denials.len(), 1, "{}", run.result);
    let results = tool_results(&fake);
    assert!(
        results[0].contains("Deploys are frozen until Monday"),
        "the plugin's reason did not reach the model: {results:?}"
    );
    let first_request = fake
        .main_requests()
        .first()
        .map(Value::to_string)
        .unwrap_or_default();
    for note in [
        "Team note: the staging DB is read-only today.",
        "Repo note: run make lint before committing.",
    ] {
        assert_eq!(
            first_request.matches(note).count(),
            1,
            "{note} should reach the model exactly once: {first_request}"
        );
    }
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );
}

/// What Claude Code does with one hook command registered in two settings files (user and
/// project): it runs it once. (amplihack relies on this when two scopes hold the same
/// registration.)
#[test]
fn claude_code_runs_an_identical_command_from_two_settings_files_once() {
    let env = TestEnv::new();
    let marker = env.mark("ran", "stop-hook");
    let settings =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": marker}]}]}});
    env.write(&env.claude_settings_path(), &settings.to_string());
    env.write(
        &env.project.join(".claude/settings.json"),
        &settings.to_string(),
    );
    let fake = FakeAnthropic::start(vec![Turn::text("done")]);
    let run = env.claude(&fake.url, "hello");
    assert!(
        run.hook_complaints().is_empty(),
        "{:?}",
        run.hook_complaints()
    );
    assert_eq!(
        env.marks("ran"),
        ["stop-hook"],
        "ran once, not once per file"
    );

    // Control: both files are read (different commands both run).
    let project = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": env.mark("ran", "project-hook")}]}]}});
    env.write(
        &env.project.join(".claude/settings.json"),
        &project.to_string(),
    );
    let fake = FakeAnthropic::start(vec![Turn::text("done")]);
    env.claude(&fake.url, "hello again");
    let mut ran = env.marks("ran");
    ran.sort();
    assert_eq!(ran, ["project-hook", "stop-hook", "stop-hook"]);
}
