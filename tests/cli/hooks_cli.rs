//! The `amplihack-hooks` binary's contract, run as the hosts run it: exit codes, what goes to
//! stdout and stderr, the failure log, the deadline, the stdin cap and the host dialects.

use crate::support;

use std::time::Duration;

use assert_cmd::Command as AssertCommand;
use serde_json::{Value, json};
use support::{TestEnv, run_with_timeout, stderr};

fn assert_cmd(env: &TestEnv, args: &[&str]) -> AssertCommand {
    AssertCommand::from_std(env.hooks(args))
}

/// Runs `amplihack-hooks ARGS` on `stdin` and asserts its exit code.
fn run(env: &TestEnv, args: &[&str], stdin: impl Into<Vec<u8>>, code: i32) -> std::process::Output {
    assert_cmd(env, args)
        .write_stdin(stdin.into())
        .assert()
        .code(code)
        .get_output()
        .clone()
}

fn stdout_json(output: &std::process::Output) -> Value {
    if output.stdout.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[test]
fn version_and_help() {
    let env = TestEnv::new();
    assert_cmd(&env, &["--version"])
        .assert()
        .success()
        .stdout(format!("amplihack-hooks {}\n", env!("CARGO_PKG_VERSION")));
    let help = assert_cmd(&env, &["--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8_lossy(&help);
    for sub in [
        "session-start",
        "stop",
        "pre-tool-use",
        "post-tool-use",
        "workflow-classification-reminder",
        "user-prompt-submit",
        "pre-compact",
        "session-end",
        "subagent-stop",
        "notification",
        "dispatch",
    ] {
        assert!(help.contains(sub), "--help does not list {sub}");
    }
}

#[test]
fn usage_errors_exit_1_with_a_message_and_no_stdout() {
    let env = TestEnv::new();
    for (args, message) in [
        (&[][..], "missing subcommand"),
        (&["frobnicate"][..], "unknown subcommand `frobnicate`"),
        (&["--host", "vscode", "stop"][..], "unknown --host `vscode`"),
        (&["stop", "extra"][..], "unexpected argument `extra`"),
    ] {
        let output = assert_cmd(&env, args)
            .write_stdin("{}")
            .assert()
            .code(1)
            .get_output()
            .clone();
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(message),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn captured_payloads_move_to_the_tests_home_and_project_and_nothing_else_moves() {
    let home = std::path::Path::new("/tmp/t/home dir");
    let project = std::path::Path::new("/tmp/t/project");
    let payload = br#"{"cwd":"/home/user/project","transcript_path":"/home/user/.claude/x.jsonl",
        "tool_input":{"file_path":"/home/user/project/a.txt","command":"ls /home/user/projects"},
        "other":"/home/username","list":["/home/user/project/b"]}"#;
    let moved: Value =
        serde_json::from_slice(&support::captured::rehome(payload, home, project)).expect("json");
    assert_eq!(moved["cwd"], "/tmp/t/project");
    assert_eq!(moved["transcript_path"], "/tmp/t/home dir/.claude/x.jsonl");
    assert_eq!(moved["tool_input"]["file_path"], "/tmp/t/project/a.txt");
    assert_eq!(moved["tool_input"]["command"], "ls /home/user/projects");
    assert_eq!(moved["other"], "/home/username");
    assert_eq!(moved["list"][0], "/tmp/t/project/b");
}

/// Every captured Claude Code payload, sent to the subcommand registered for its event and to
/// `dispatch`: exit 0, nothing on stderr, and stdout empty or a JSON object naming the event.
#[test]
fn every_captured_event_is_handled_quietly_by_its_subcommand_and_by_dispatch() {
    let env = TestEnv::new();
    let cases = [
        ("PreToolUse-Bash", "pre-tool-use"),
        ("PreToolUse-Edit", "pre-tool-use"),
        ("PreToolUse-Write", "pre-tool-use"),
        ("PostToolUse-Bash", "post-tool-use"),
        ("PostToolUse-Edit", "post-tool-use"),
        ("PostToolUse-Write", "post-tool-use"),
        ("PostToolUseFailure-Bash", "dispatch"),
        ("PostToolBatch", "dispatch"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("UserPromptSubmit", "workflow-classification-reminder"),
        ("Stop", "stop"),
        ("Stop-after-block", "stop"),
        ("SessionStart", "session-start"),
        ("SessionEnd", "session-end"),
    ];
    for version in ["claude-code-2.1.328", "claude-code-2.0.30"] {
        for (stem, sub) in cases {
            let name = format!("{version}/{stem}.json");
            if !support::repo_root()
                .join("tests/fixtures")
                .join(&name)
                .exists()
            {
                continue;
            }
            let payload = env.captured(&name);
            for args in [&[sub][..], &["dispatch"][..]] {
                let output = assert_cmd(&env, args)
                    .write_stdin(payload.clone())
                    .assert()
                    .code(0)
                    .get_output()
                    .clone();
                assert!(
                    output.stderr.is_empty(),
                    "{version}/{stem} {args:?}: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
                let reply = stdout_json(&output);
                if !reply.is_null() {
                    assert_eq!(
                        reply["hookSpecificOutput"]["hookEventName"],
                        stem.split('-').next().unwrap_or_default(),
                        "{stem}"
                    );
                }
            }
        }
    }
    assert!(!env.log_file().exists(), "nothing should have been logged");
}

#[test]
fn other_subcommands_accept_their_events() {
    let env = TestEnv::new();
    for (sub, payload) in [
        (
            "pre-compact",
            json!({"hook_event_name":"PreCompact","session_id":"s","trigger":"manual","custom_instructions":""}),
        ),
        (
            "subagent-stop",
            json!({"hook_event_name":"SubagentStop","session_id":"s","stop_hook_active":false,"agent_type":"Explore"}),
        ),
        (
            "notification",
            json!({"hook_event_name":"Notification","session_id":"s","message":"waiting","notification_type":"idle_prompt"}),
        ),
        (
            "dispatch",
            json!({"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}),
        ),
        (
            "dispatch",
            json!({"hook_event_name":"SubagentStart","session_id":"s","agent_id":"a","agent_type":"Plan"}),
        ),
    ] {
        let output = run(&env, &[sub], payload.to_string(), 0);
        assert!(
            output.stdout.is_empty() && output.stderr.is_empty(),
            "{sub}: {output:?}"
        );
    }
}

#[test]
fn pre_tool_use_denies_in_claude_codes_shape_and_allows_the_rest() {
    let env = TestEnv::new();
    let event = |command: &str| {
        json!({"hook_event_name":"PreToolUse","session_id":"s","cwd":env.project,"tool_name":"Bash","tool_input":{"command":command}}).to_string()
    };
    let output = run(
        &env,
        &["pre-tool-use"],
        event("git commit --no-verify -m x"),
        0,
    );
    let reply = stdout_json(&output);
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        reply["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("--no-verify"))
    );
    assert!(output.stderr.is_empty());

    let output = run(&env, &["pre-tool-use"], event("rm -rf ~"), 0);
    assert_eq!(
        stdout_json(&output)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );

    let output = run(&env, &["pre-tool-use"], event("cargo test"), 0);
    assert!(output.stdout.is_empty() && output.stderr.is_empty());
}

#[test]
fn amplifier_host_gets_the_bridge_dialect_by_flag_or_by_environment() {
    let env = TestEnv::new();
    // The bridge's real payload: no event name, lowercase tool name.
    let payload =
        json!({"tool_name":"bash","tool_input":{"command":"git push --no-verify"},"timestamp":"t"})
            .to_string();
    let by_flag = run(
        &env,
        &["pre-tool-use", "--host", "amplifier"],
        payload.clone(),
        0,
    );
    let mut detected = env.hooks(&["pre-tool-use"]);
    detected
        .env("AMPLIFIER_SESSION_ID", "S")
        .env("AMPLIFIER_HOOKS_DIR", env.project.join(".amplifier/hooks"));
    let by_env = AssertCommand::from_std(detected)
        .write_stdin(payload)
        .assert()
        .code(0)
        .get_output()
        .clone();
    for output in [by_flag, by_env] {
        let reply = stdout_json(&output);
        assert_eq!(reply["decision"], "block", "{reply}");
        assert!(
            reply["reason"]
                .as_str()
                .is_some_and(|r| r.contains("--no-verify"))
        );
        assert!(reply.get("hookSpecificOutput").is_none());
    }

    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "amplifier context",
    );
    let output = run(
        &env,
        &["--host=amplifier", "session-start"],
        json!({"session_id":"S","trigger":"startup","timestamp":"t"}).to_string(),
        0,
    );
    assert!(
        stdout_json(&output)["contextInjection"]
            .as_str()
            .is_some_and(|c| c.contains("amplifier context"))
    );
}

#[test]
fn session_start_injects_project_md_capped() {
    let env = TestEnv::new();
    let payload =
        String::from_utf8(env.captured("claude-code-2.1.328/SessionStart.json")).expect("utf8");
    let start = || {
        let mut cmd = env.hooks(&["session-start"]);
        cmd.env("CLAUDE_PROJECT_DIR", &env.project);
        AssertCommand::from_std(cmd)
            .write_stdin(payload.clone())
            .assert()
            .code(0)
            .get_output()
            .clone()
    };
    // No PROJECT.md: nothing to say.
    assert!(start().stdout.is_empty());

    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "Small project notes ✓",
    );
    let context = stdout_json(&start())["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
        .expect("context");
    assert!(context.contains("Small project notes ✓"));

    let big = "é".repeat(50_000);
    env.write(&env.project.join(".claude/context/PROJECT.md"), &big);
    let context = stdout_json(&start())["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
        .expect("context");
    assert!(
        context.chars().count() < 8_500,
        "not capped: {} chars",
        context.chars().count()
    );
    assert!(context.contains("truncated"));
}

#[test]
fn invalid_input_exits_1_names_the_problem_and_logs_it() {
    let env = TestEnv::new();
    let cases: [(&[u8], &str); 6] = [
        (b"", "stdin is empty"),
        (b"{not json", "not valid JSON at line 1, column 2"),
        (b"[]", "a hook event must be a JSON object"),
        (b"\xc3\x28{}", "not UTF-8"),
        (
            b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}",
            "missing the required field `tool_input`",
        ),
        (
            b"{\"tool_name\":\"Bash\",\"tool_input\":[]}",
            "`tool_input` must be an object",
        ),
    ];
    for (input, message) in cases {
        let output = run(&env, &["pre-tool-use"], input, 1);
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains("amplihack-hooks pre-tool-use: invalid input")
                && stderr.contains(message),
            "{stderr}"
        );
    }
    let log = std::fs::read_to_string(env.log_file()).expect("log written");
    assert_eq!(log.lines().count(), cases.len());
}

#[test]
fn an_unknown_event_passes_through() {
    let env = TestEnv::new();
    let output = run(
        &env,
        &["dispatch"],
        json!({"hook_event_name":"HoloDeck","session_id":"s","anything":[1,2]}).to_string(),
        0,
    );
    assert!(output.stdout.is_empty() && output.stderr.is_empty());
}

#[test]
fn internal_failures_and_panics_fail_open_with_one_line_on_stderr_and_in_the_log() {
    let env = TestEnv::new();
    let payload = env.captured("claude-code-2.1.328/PreToolUse-Bash.json");
    for (fault, kind) in [
        ("panic", "panic, event let through"),
        ("error", "internal error, event let through"),
    ] {
        let mut cmd = env.hooks(&["pre-tool-use"]);
        cmd.env("AMPLIHACK_HOOKS_FAULT", fault);
        let output = AssertCommand::from_std(cmd)
            .write_stdin(payload.clone())
            .assert()
            .code(0)
            .get_output()
            .clone();
        assert!(output.stdout.is_empty(), "{fault}: stray stdout");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{fault}: {stderr}");
        assert!(
            stderr.contains(kind) && stderr.contains(&env.log_file().display().to_string()),
            "{fault}: {stderr}"
        );
    }
    let log = std::fs::read_to_string(env.log_file()).expect("log");
    assert!(log.contains("fault injected by AMPLIHACK_HOOKS_FAULT=panic"));
    assert!(log.contains("fault injected by AMPLIHACK_HOOKS_FAULT=error"));
}

#[test]
fn an_unwritable_log_directory_does_not_block() {
    let env = TestEnv::new();
    let blocker = env.root().join("not-a-dir");
    env.write(&blocker, "a file where the log directory should be");
    let mut cmd = env.hooks(&["pre-tool-use"]);
    cmd.env("AMPLIHACK_LOG_DIR", blocker.join("logs"))
        .env("AMPLIHACK_HOOKS_FAULT", "error");
    let output = AssertCommand::from_std(cmd)
        .write_stdin(env.captured("claude-code-2.1.328/PreToolUse-Bash.json"))
        .assert()
        .code(0)
        .get_output()
        .clone();
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("log unavailable"));

    // No HOME at all.
    let mut cmd = env.hooks(&["stop"]);
    cmd.env_remove("HOME");
    AssertCommand::from_std(cmd)
        .write_stdin(env.captured("claude-code-2.1.328/Stop.json"))
        .assert()
        .code(0)
        .stdout("");
}

#[test]
fn a_host_that_never_closes_stdin_gets_an_answer_at_the_deadline() {
    let env = TestEnv::new();
    let mut cmd = env.hooks(&["pre-tool-use"]);
    cmd.env("AMPLIHACK_HOOK_DEADLINE_MS", "300")
        .stdin(std::process::Stdio::piped());
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let started = std::time::Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let _held_open = child.stdin.take();
    let output = loop {
        if child.try_wait().expect("wait").is_some() {
            break child.wait_with_output().expect("output");
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "still running after 5 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    // One line, naming the subcommand (the watchdog re-executes the binary to write it).
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("amplihack-hooks pre-tool-use: deadline exceeded, event let through: no answer after 300 ms"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn oversized_stdin_is_drained_and_let_through() {
    let env = TestEnv::new();
    let mut huge = b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf /\",\"pad\":\"".to_vec();
    huge.resize(17 * 1024 * 1024, b'x');
    huge.extend_from_slice(b"\"}}");
    let (output, _) =
        run_with_timeout(env.hooks(&["pre-tool-use"]), &huge, Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("larger than the 16 MiB cap"));
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let env = TestEnv::new();
    let mut cmd = env.hooks(&["pre-tool-use"]);
    cmd.stdout(std::process::Stdio::null());
    let payload = json!({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git commit --no-verify"}}).to_string();
    let (output, _) = run_with_timeout(cmd, payload.as_bytes(), Duration::from_secs(5));
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
}

/// Hostile surroundings: stdout closed, stdin a directory or endless, a deleted working
/// directory, a payload `cwd` that is a file. Always exit 0 in bounded time, with the right
/// answer where one is possible.
#[test]
fn hostile_surroundings_exit_0_in_bounded_time() {
    let env = TestEnv::new();
    let hooks = support::hooks_bin().display().to_string();
    let deny = serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "h", "tool_name": "Bash",
        "tool_input": {"command": "git push --no-verify"}, "cwd": "/etc/passwd"});
    let payload = env.root().join("payload.json");
    env.write(&payload, &deny.to_string());
    let p = payload.display().to_string();
    let cases: [(&str, String, bool); 5] = [
        (
            "stdout closed",
            format!("\"{hooks}\" pre-tool-use < '{p}' >&-"),
            false,
        ),
        (
            "stdin a directory",
            format!("\"{hooks}\" pre-tool-use < /"),
            false,
        ),
        (
            "stdin endless",
            format!("yes | \"{hooks}\" pre-tool-use"),
            false,
        ),
        (
            "deleted working directory",
            format!("mkdir gone && cd gone && rmdir ../gone && \"{hooks}\" pre-tool-use < '{p}'"),
            true,
        ),
        (
            "payload cwd is a file",
            format!("\"{hooks}\" pre-tool-use < '{p}'"),
            true,
        ),
    ];
    for (label, script, denies) in cases {
        let mut command = env.command(std::path::Path::new("/bin/sh"));
        command.args(["-c", &script]).current_dir(env.root());
        let (output, took) = support::run_with_timeout(command, b"", Duration::from_secs(20));
        assert_eq!(
            output.status.code(),
            Some(0),
            "{label}: {}",
            stderr(&output)
        );
        assert!(took < Duration::from_secs(5), "{label}: took {took:?}");
        if denies {
            let reply: serde_json::Value = serde_json::from_slice(&output.stdout).expect(label);
            assert_eq!(
                reply["hookSpecificOutput"]["permissionDecision"], "deny",
                "{label}"
            );
        }
        assert!(
            stderr(&output).lines().count() <= 1,
            "{label}: one line at most: {}",
            stderr(&output)
        );
        if label == "stdout closed" {
            // The closed descriptor is opened on /dev/null before anything else: no file the
            // hook opens (a state file, the log) becomes its stdout and takes the reply.
            let mut dirs = vec![env.root().to_path_buf()];
            while let Some(dir) = dirs.pop() {
                for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
                    let path = entry.path();
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        dirs.push(path);
                    } else if let Ok(text) = std::fs::read_to_string(&path) {
                        assert!(
                            !text.contains("permissionDecision"),
                            "{label}: the reply went into {}",
                            path.display()
                        );
                    }
                }
            }
        }
    }
}

/// Hundreds of concurrent calls: every answer right, stderr clean, and each handler run exactly
/// one whole line in the audit log.
#[test]
fn hundreds_of_concurrent_calls() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "ctx",
        &support::one_group(
            "PreToolUse",
            None,
            vec![support::command("echo '{\"contextInjection\": \"seen\"}'")],
        ),
    );
    let calls = 200;
    let outputs: Vec<std::process::Output> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..calls)
            .map(|i| {
                let env = &env;
                scope.spawn(move || {
                    let payload = serde_json::json!({"hook_event_name": "PreToolUse", "session_id": format!("c{}", i % 7),
                        "tool_name": "Bash", "tool_input": {"command": if i % 2 == 0 { "ls" } else { "git commit --no-verify" }}});
                    env.run_hooks(&["pre-tool-use"], &payload, &[]).0
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    for (i, output) in outputs.iter().enumerate() {
        assert_eq!(output.status.code(), Some(0));
        assert!(output.stderr.is_empty(), "{}", stderr(output));
        let reply: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
        let decision = &reply["hookSpecificOutput"]["permissionDecision"];
        if i % 2 == 0 {
            assert!(decision.is_null(), "{reply}");
            assert!(reply.to_string().contains("seen"), "{reply}");
        } else {
            assert_eq!(decision, "deny", "{reply}");
        }
    }
    let audit = env.audit_log();
    let builtin = |r: &&serde_json::Value| r["kind"] == "builtin";
    assert_eq!(
        audit.iter().filter(|r| !builtin(r)).count(),
        calls / 2,
        "one whole line per handler run (the plugin runs when the guard allows)"
    );
    assert_eq!(
        audit.iter().filter(builtin).count(),
        calls / 2,
        "one whole line per denial of the Bash guard"
    );
    // A built-in's line names the tool too.
    assert!(
        audit
            .iter()
            .filter(builtin)
            .all(|r| r["tool_name"] == "Bash")
    );
}
