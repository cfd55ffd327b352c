//! Qwen Code's, Droid's and Gemini CLI's dialects through the real `amplihack-hooks` binary, on
//! payloads shaped as each host sent them (tests/qwen_droid_gemini_e2e.rs runs the hosts
//! themselves): the guard on each host's shell tool, each deny as the host reads it, Qwen's
//! empty-prompt continuations left alone, Gemini's AfterAgent block, and nothing on stderr under
//! Gemini when amplihack has a note (Gemini reads stderr as the reply).

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stderr, stdout};

const GUARD: &str = "amplihack blocked `git commit --no-verify`";

fn reply(output: &std::process::Output) -> Value {
    let text = stdout(output);
    if text.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The deny of `git commit --no-verify`, by host: where each reads it.
#[test]
fn the_guard_denies_on_each_hosts_shell_tool_as_the_host_reads_it() {
    let cases: &[(&str, Value, &str)] = &[
        (
            "qwen",
            json!({"hook_event_name": "PreToolUse", "tool_name": "run_shell_command",
                   "tool_input": {"command": "git commit --no-verify -m x"}}),
            "/hookSpecificOutput/permissionDecisionReason",
        ),
        (
            "droid",
            json!({"hook_event_name": "PreToolUse", "tool_name": "Execute",
                   "tool_input": {"command": "git commit --no-verify -m x", "summary": "s",
                                  "riskLevel": "low", "riskLevelReason": "r"}}),
            "/hookSpecificOutput/permissionDecisionReason",
        ),
        (
            "gemini",
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                   "tool_input": {"command": "git commit --no-verify -m x"}}),
            "/reason",
        ),
    ];
    for (host, payload, reason_at) in cases {
        let env = TestEnv::new();
        let (output, _) = env.run_hooks(&["pre-tool-use", "--host", host], payload, &[]);
        assert_eq!(output.status.code(), Some(0), "{host}: {}", stderr(&output));
        let reply = reply(&output);
        let reason = reply.pointer(reason_at).and_then(Value::as_str);
        assert!(
            reason.is_some_and(|r| r.contains(GUARD)),
            "{host}: {reply:#}"
        );
        match *host {
            "gemini" => assert_eq!(reply["decision"], "deny", "{reply:#}"),
            _ => assert_eq!(
                reply["hookSpecificOutput"]["permissionDecision"], "deny",
                "{reply:#}"
            ),
        }
        assert_eq!(stderr(&output), "", "{host}");
    }
}

/// Qwen sends UserPromptSubmit again with `prompt: ""` after every tool result: amplihack and
/// the user's UserPromptSubmit plugins let it pass, so nothing is said twice.
#[test]
fn qwens_empty_prompt_continuations_pass_untouched() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "prompts",
        &one_group(
            "UserPromptSubmit",
            None,
            vec![command(&env.mark("prompt", "seen"))],
        ),
    );
    for subcommand in ["workflow-classification-reminder", "user-prompt-submit"] {
        let (output, _) = env.run_hooks(
            &[subcommand, "--host", "qwen"],
            &json!({"hook_event_name": "UserPromptSubmit", "prompt": "", "session_id": "s1"}),
            &[],
        );
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(stdout(&output), "", "{subcommand}");
        assert_eq!(stderr(&output), "", "{subcommand}");
    }
    assert!(
        env.marks("prompt").is_empty(),
        "a plugin ran on a continuation"
    );
    // A real prompt still reaches the plugin.
    let (output, _) = env.run_hooks(
        &["user-prompt-submit", "--host", "qwen"],
        &json!({"hook_event_name": "UserPromptSubmit", "prompt": "fix the bug", "session_id": "s1"}),
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(env.marks("prompt"), ["seen"]);
}

/// Gemini's AfterAgent is Claude Code's Stop: a plugin's block keeps the agent working, as a
/// top-level `decision: "block"`.
#[test]
fn geminis_after_agent_block_keeps_going() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "keep-going",
        &one_group(
            "Stop",
            None,
            vec![command(
                r#"echo '{"decision":"block","reason":"write the tests too"}'"#,
            )],
        ),
    );
    let (output, _) = env.run_hooks(
        &["stop", "--host", "gemini"],
        &json!({"hook_event_name": "AfterAgent", "prompt": "p", "prompt_response": "done",
                "stop_hook_active": false, "session_id": "s1"}),
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let reply = reply(&output);
    assert_eq!(reply["decision"], "block", "{reply:#}");
    assert_eq!(reply["reason"], "write the tests too", "{reply:#}");
    assert_eq!(stderr(&output), "");
}

/// A user's plugin that fails is a note amplihack reports: on stderr for the other hosts, in the
/// log only under Gemini, which would read stderr as the reply; stdout is always a JSON reply that
/// shows the user the failure.
#[test]
fn notes_stay_off_stderr_under_gemini() {
    for (host, event, on_stderr) in [
        ("gemini", "BeforeTool", false),
        ("qwen", "PreToolUse", true),
    ] {
        let env = TestEnv::new();
        env.plugin(
            &env.user_hooks_dir(),
            "broken",
            &one_group(
                "PreToolUse",
                None,
                vec![command("echo 'not json {' ; echo boom >&2; exit 1")],
            ),
        );
        let log_dir = env.root().join("logs");
        let (output, _) = env.run_hooks(
            &["pre-tool-use", "--host", host],
            &json!({"hook_event_name": event, "tool_name": "run_shell_command",
                    "tool_input": {"command": "ls"}, "session_id": "s1"}),
            &[("AMPLIHACK_LOG_DIR", log_dir.to_str().expect("utf-8"))],
        );
        assert_eq!(output.status.code(), Some(0), "{host}");
        let log = std::fs::read_to_string(log_dir.join("hooks.log")).unwrap_or_default();
        assert!(
            log.contains("broken"),
            "{host}: the note is logged: {log:?}"
        );
        assert_eq!(
            !stderr(&output).is_empty(),
            on_stderr,
            "{host}: {}",
            stderr(&output)
        );
        // stdout is a JSON reply, and the failure is shown to the user there (systemMessage).
        assert_eq!(
            reply(&output),
            json!({"systemMessage": "hook from broken failed with exit 1: boom"}),
            "{host}"
        );
    }
}
