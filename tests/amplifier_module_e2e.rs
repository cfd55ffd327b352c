//! amplihack's native Amplifier module (`amplifier/`, module id `hooks-amplihack`), installed by
//! `amplihack install --host amplifier` and mounted on the real `amplifier-core` kernel (PyPI) by
//! `tests/amplifier/module_harness.py`: full payloads reach the same binary, and its answers
//! become every kind of Amplifier hook result.

use serde_json::{Value, json};

use crate::support;
use crate::support::{
    TestEnv, command, context_has, one_group, run_kernel_harness, stderr, stdout,
};

fn run_harness(env: &TestEnv, spec: &Value) -> Vec<Value> {
    let spec_file = env.root().join("spec.json");
    env.write(&spec_file, &spec.to_string());
    run_kernel_harness(env, "module_harness.py", &[spec_file.as_os_str()], &[])
}

#[test]
fn the_module_gives_amplifier_the_full_product_through_the_real_kernel() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--scope", "project", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    let settings = env.read(&env.project.join(".amplifier/settings.yaml"));
    let binary = env.deployed_hooks().display().to_string();
    assert!(
        settings.contains("amplihack/amplifier-bundle.yaml"),
        "{settings}"
    );
    let bundle = env.read(
        &env.home
            .join(".local/share/amplihack/amplifier-bundle.yaml"),
    );
    assert!(bundle.contains("- module: hooks-amplihack"), "{bundle}");
    assert!(bundle.contains(&binary), "{bundle}");

    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "Module-context marker: the grault project.",
    );
    env.plugin(
        &env.user_hooks_dir(),
        "asker",
        &one_group(
            "PreToolUse",
            Some("Write"),
            vec![command(
                "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"writes need a look\"}}'",
            )],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "rewriter",
        &one_group(
            "PreToolUse",
            Some("Edit"),
            vec![command(
                "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"updatedInput\":{\"file_path\":\"/tmp/x\",\"old_string\":\"a\",\"new_string\":\"b-rewritten\"}}}'",
            )],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "user-mark",
        &one_group(
            "UserPromptSubmit",
            None,
            vec![command(&env.mark("ran", "user-plugin"))],
        ),
    );
    env.plugin(
        &env.project_hooks_dir(),
        "project-mark",
        &one_group(
            "UserPromptSubmit",
            None,
            vec![command(&env.mark("ran", "project-plugin"))],
        ),
    );
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", stderr(&trust));

    let config = json!({"binary": binary, "project": env.project});
    let lines = run_harness(
        &env,
        &json!({"config": config, "approval_answer": "Allow", "events": [
            ["session:start", {"session_id": "S-module", "parent_id": null}],
            ["provider:request", {"provider": "anthropic", "iteration": 1}],
            ["provider:request", {"provider": "anthropic", "iteration": 2}],
            ["prompt:submit", {"prompt": "please list the files"}],
            ["tool:pre", {"tool_name": "bash", "tool_call_id": "t1", "tool_input": {"command": "git push --no-verify"}}],
            ["tool:pre", {"tool_name": "bash", "tool_call_id": "t2", "tool_input": {"command": "ls -la"}}],
            ["tool:pre", {"tool_name": "write_file", "tool_call_id": "t3", "tool_input": {"file_path": "/tmp/a", "content": "x"}}],
            ["tool:pre", {"tool_name": "edit_file", "tool_call_id": "t4", "tool_input": {"file_path": "/tmp/x", "old_string": "a", "new_string": "b"}}],
            ["tool:post", {"tool_name": "bash", "tool_call_id": "t2", "tool_input": {"command": "ls -la"}, "result": {"success": true, "output": {"stdout": "a\n", "returncode": 0}}}],
            ["prompt:complete", {"response_preview": "done", "length": 4}],
            ["orchestrator:complete", {"turn_count": 1}],
            ["session:end", {"session_id": "S-module", "status": "completed"}]
        ]}),
    );
    // The kernel drops session:start results: the module keeps the session context and injects
    // it at the session's first provider:request (which the orchestrators process), once.
    assert_eq!(lines[0]["emitted_action"], "continue", "{}", lines[0]);
    assert_eq!(lines[1]["emitted_action"], "inject_context", "{}", lines[1]);
    assert!(
        context_has(&lines[1], "Module-context marker"),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2]["emitted_action"], "continue",
        "only once: {}",
        lines[2]
    );
    let at = |i: usize| &lines[i + 2];

    assert!(context_has(at(1), "opens a new topic"), "{}", at(1));
    let mut ran = env.marks("ran");
    ran.sort();
    assert_eq!(
        ran,
        ["project-plugin", "user-plugin"],
        "each plugin once, both levels"
    );

    assert_eq!(at(2)["action"], "deny", "{}", at(2));
    assert!(
        at(2)["reason"]
            .as_str()
            .is_some_and(|r| r.contains("--no-verify")),
        "{}",
        at(2)
    );
    assert_eq!(at(3)["action"], "continue", "{}", at(3));

    assert_eq!(at(4)["emitted_action"], "ask_user", "{}", at(4));
    assert_eq!(at(4)["approval_prompt"], "writes need a look");
    assert_eq!(at(4)["action"], "continue", "approved: {}", at(4));

    // The module answers `modify`; the kernel's registry chains the modified data and returns it
    // with the event (what loop-streaming adopts as the tool's input).
    assert_eq!(
        at(5)["data"]["tool_input"]["new_string"],
        "b-rewritten",
        "{}",
        at(5)
    );
    assert_eq!(
        at(5)["data"]["tool_call_id"],
        "t4",
        "the rest of the event is kept"
    );

    for line in &lines[8..12] {
        assert_eq!(line["action"], "continue", "{line}");
    }
    let summary = &lines[12];
    assert_eq!(summary["approvals"][0]["prompt"], "writes need a look");
    assert_eq!(summary["approvals"][0]["default"], "deny");
    assert_eq!(
        summary["marker_after_cleanup"],
        Value::Null,
        "cleanup unregisters"
    );

    // Tool names reached the metrics as Claude Code names them; one Stop per turn.
    let metrics = env.read(
        &env.project
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
    );
    assert_eq!(metrics.lines().count(), 1, "{metrics}");
    assert!(metrics.contains("\"tool_name\":\"Bash\""), "{metrics}");
    let record: Value = serde_json::from_str(&stdout(&env.session_memory())).expect("json");
    let text = record["entries"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("First prompt: please list the files") && text.contains("Ended:"),
        "{record}"
    );
    assert!(
        !env.root().join("logs/hooks.log").exists(),
        "amplihack logged a failure: {:?}",
        std::fs::read_to_string(env.root().join("logs/hooks.log"))
    );
}

#[test]
fn a_missing_binary_lets_everything_continue() {
    let env = TestEnv::new();
    let lines = run_harness(
        &env,
        &json!({"config": {"binary": env.root().join("no/such/amplihack-hooks")}, "events": [
            ["session:start", {"session_id": "S-missing"}],
            ["tool:pre", {"tool_name": "bash", "tool_input": {"command": "git push --no-verify"}}],
            ["prompt:submit", {"prompt": "hello there, new task"}]
        ]}),
    );
    for line in &lines[..3] {
        assert_eq!(line["action"], "continue", "{line}");
    }
}

/// With the module mounted, amplihack's hook-shell registration (if also installed) steps aside:
/// the bridge's call answers nothing, so amplihack never runs twice.
#[test]
fn the_bridge_registration_steps_aside_while_the_module_is_mounted() {
    let env = TestEnv::new();
    let payload = json!({"tool_name": "bash", "tool_input": {"command": "git commit --no-verify"}});
    let (bridge, _) = env.run_hooks(
        &["--host", "amplifier", "pre-tool-use"],
        &payload,
        &[("AMPLIHACK_AMPLIFIER_MODULE_ACTIVE", "1")],
    );
    assert!(bridge.status.success());
    assert!(bridge.stdout.is_empty(), "{}", stdout(&bridge));
    let (module, _) = env.run_hooks(
        &["--host", "amplifier", "pre-tool-use"],
        &payload,
        &[
            ("AMPLIHACK_AMPLIFIER_MODULE_ACTIVE", "1"),
            ("AMPLIHACK_VIA_MODULE", "1"),
        ],
    );
    let answer: Value = serde_json::from_slice(&module.stdout).expect("json");
    assert_eq!(answer["hookResult"]["action"], "deny", "{answer}");
    assert_eq!(
        answer["decision"], "block",
        "the bridge's form is still there: {answer}"
    );
}

/// context-simple compacts inside the request and then emits `context:compaction`: the module
/// runs pre-compact with the app's saved transcript of the session, which amplihack keeps.
#[test]
fn the_apps_transcript_is_kept_when_the_context_compacts() {
    let env = TestEnv::new();
    let transcript = env
        .home
        .join(".amplifier/projects/-proj/sessions/S-module/transcript.jsonl");
    env.write(
        &transcript,
        "{\"role\":\"user\",\"content\":\"before compaction\"}\n",
    );
    let config = json!({"binary": support::hooks_bin(), "project": env.project});
    let lines = run_harness(
        &env,
        &json!({"config": config, "events": [
            ["context:compaction", {"before_tokens": 190000, "after_tokens": 90000}]
        ]}),
    );
    assert_eq!(lines[0]["action"], "continue", "{}", lines[0]);
    let logs = env.project.join(".claude/runtime/logs");
    let copies: Vec<std::path::PathBuf> = std::fs::read_dir(&logs)
        .expect("logs")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("transcript-"))
        })
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert_eq!(
        env.read(&copies[0]),
        "{\"role\":\"user\",\"content\":\"before compaction\"}\n"
    );
}

/// Every kernel event with a Claude Code counterpart reaches a plugin under it, with the
/// counterpart's fields: the app's delegation to an agent (`session:fork`) as SubagentStart, a
/// tool awaiting approval (`approval:required`) as PermissionRequest, a failed model call
/// (`provider:error`) as StopFailure, a failed tool as PostToolUseFailure.
#[test]
fn kernel_events_with_a_claude_code_counterpart_reach_plugins() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    let seen = env.root().join("seen");
    std::fs::create_dir_all(&seen).expect("mkdir");
    for (event, matcher) in [
        ("SubagentStart", Some("explorer")),
        ("PermissionRequest", Some("Bash")),
        ("StopFailure", Some("rate_limit")),
        ("PostToolUseFailure", Some("Bash")),
    ] {
        env.plugin(
            &env.user_hooks_dir(),
            &format!("log-{event}"),
            &one_group(
                event,
                matcher,
                vec![command(&format!("cat > '{}/{event}.json'", seen.display()))],
            ),
        );
    }
    let binary = env.deployed_hooks().display().to_string();
    let config = json!({"binary": binary, "project": env.project});
    run_harness(
        &env,
        &json!({"config": config, "events": [
            ["session:fork", {"child_session_id": "child-1", "parent_session_id": "S-module", "agent_name": "explorer", "spawn_mode": "subprocess"}],
            ["approval:required", {"tool_name": "bash", "tool_input": {"command": "rm -rf build"}}],
            ["provider:error", {"provider": "anthropic", "error": {"type": "RateLimitError", "msg": "slow down"}, "retryable": true, "status_code": 429}],
            ["tool:error", {"tool_name": "bash", "tool_call_id": "t9", "tool_input": {"command": "false"}, "error": "exit 1"}]
        ]}),
    );
    let read = |event: &str| -> Value {
        serde_json::from_str(&env.read(&seen.join(format!("{event}.json"))))
            .unwrap_or_else(|e| panic!("{event}: {e}"))
    };
    let subagent = read("SubagentStart");
    assert_eq!(
        (&subagent["agent_type"], &subagent["agent_id"]),
        (&json!("explorer"), &json!("child-1"))
    );
    let permission = read("PermissionRequest");
    assert_eq!(permission["tool_name"], "Bash", "{permission}");
    assert_eq!(permission["tool_input"]["command"], "rm -rf build");
    let failure = read("StopFailure");
    assert_eq!(
        (&failure["error"], &failure["error_details"]),
        (&json!("rate_limit"), &json!("slow down"))
    );
    assert_eq!(read("PostToolUseFailure")["error"], "exit 1");
    for event in [
        "SubagentStart",
        "PermissionRequest",
        "StopFailure",
        "PostToolUseFailure",
    ] {
        assert_eq!(read(event)["hook_event_name"], event);
    }
}
