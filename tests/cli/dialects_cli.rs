//! The other hook dialects of our specifications through the real binary: AMCP's hook files and
//! the Amplifier CLI hooks proposal's `hooks.yaml`, with the specifications' own examples.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::fake_anthropic::FakeAnthropic;
use support::{TestEnv, repo_root, stderr, stdout};

fn fixture_dir(name: &str) -> std::path::PathBuf {
    repo_root().join("tests/fixtures/dialects").join(name)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::copy(from, to).expect("copy");
}

fn reply_of(output: &std::process::Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    if output.stdout.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&output.stdout).expect("stdout is JSON")
    }
}

fn write_event(env: &TestEnv, session: &str, file: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": session, "cwd": env.project, "tool_name": "Write",
           "tool_input": {"file_path": env.project.join(file), "content": "x"}, "tool_use_id": "t1"})
}

fn bash_event(env: &TestEnv, command: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": "s-yaml", "cwd": env.project, "tool_name": "Bash",
           "tool_input": {"command": command}, "tool_use_id": "t2"})
}

/// AMCP's example hooks.toml and its three example scripts, unchanged in a project's `.amcp/`:
/// nothing runs until the project is trusted; then a write to `.env` is denied with the example's
/// reason, every call is logged by the second example, and the linter's findings reach the model
/// as feedback after a write.
#[test]
fn amcp_examples_run_unchanged_once_the_project_is_trusted() {
    let env = TestEnv::new();
    let amcp = fixture_dir("amcp");
    // Unchanged but for the declaration a repository's hooks need for what they write outside
    // the project (they run confined): the second example logs to /tmp.
    env.write(
        &env.project.join(".amcp/hooks.toml"),
        &format!(
            "confinement = {{ write = [\"/tmp\"] }}\n{}",
            std::fs::read_to_string(amcp.join("hooks.toml")).expect("example")
        ),
    );
    for script in [
        "validate-writes.sh",
        "block_sensitive_files.py",
        "log_all_tools.py",
        "lint-file.sh",
    ] {
        copy(
            &amcp.join("scripts").join(script),
            &env.project.join("scripts").join(script),
        );
    }
    // A stand-in `ruff` on PATH, so the third example has something to report.
    let bin = env.root().join("bin");
    env.script(&bin.join("ruff"), "echo \"E501 line too long in $2\"");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let session = format!("amcp-{}", std::process::id());
    let run =
        |event: &Value, args: &[&str]| env.run_hooks(args, event, &[("PATH", path.as_str())]).0;

    let untrusted = reply_of(&run(
        &write_event(&env, &session, ".env"),
        &["pre-tool-use"],
    ));
    assert_eq!(
        untrusted["hookSpecificOutput"]["permissionDecision"],
        Value::Null
    );
    assert!(
        untrusted["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("amplihack hooks trust")),
        "{untrusted}"
    );

    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", stderr(&trust));
    let denied = reply_of(&run(
        &write_event(&env, &session, ".env"),
        &["pre-tool-use"],
    ));
    assert_eq!(
        denied["hookSpecificOutput"]["permissionDecision"], "deny",
        "{denied}"
    );
    let reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("is blocked for security") && reason.contains(".env"),
        "{reason}"
    );

    let allowed = reply_of(&run(
        &write_event(&env, &session, "main.py"),
        &["pre-tool-use"],
    ));
    assert_eq!(
        allowed["hookSpecificOutput"]["permissionDecision"],
        Value::Null,
        "{allowed}"
    );
    let log = std::fs::read_to_string("/tmp/amcp_tool_calls.log").unwrap_or_default();
    let logged: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["session_id"] == session.as_str())
        .collect();
    // AMCP runs handlers in order and stops at a denial (its `execute_hooks`): the `.env` write,
    // denied by example 1, never reaches example 2, which logs the allowed one.
    assert_eq!(logged.len(), 1, "only the allowed call logged: {logged:?}");
    assert_eq!(logged[0]["tool_name"], "write_file", "AMCP's tool name");
    assert!(
        logged[0]["tool_input"]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("main.py"))
    );

    let mut post = write_event(&env, &session, "main.py");
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] = json!({"success": true});
    let linted = reply_of(&run(&post, &["post-tool-use"]));
    let context = linted["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        context.contains("Lint issues: E501 line too long"),
        "{linted}"
    );

    // A change to any script the hooks run asks for trust again (`$AMCP_PROJECT_DIR/...` too).
    for script in ["lint-file.sh", "validate-writes.sh"] {
        let path = env.project.join("scripts").join(script);
        let before = std::fs::read_to_string(&path).expect("script");
        env.write(&path, &format!("{before}\n# changed\n"));
        let changed = reply_of(&run(
            &write_event(&env, &session, ".env"),
            &["pre-tool-use"],
        ));
        assert_eq!(
            changed["hookSpecificOutput"]["permissionDecision"],
            Value::Null,
            "{script}"
        );
        assert!(
            changed["systemMessage"]
                .as_str()
                .is_some_and(|m| m.contains(script)),
            "{changed}"
        );
        assert!(env.run_amplihack(&["hooks", "trust"]).status.success());
    }
}

/// The user's `$XDG_CONFIG_HOME/amcp/hooks.json`: `python` function handlers called as AMCP calls
/// them, the `AMCP_*` variables, `updatedInput` merged into the tool input in the host's argument
/// names, `feedback` to the model, `updatedResponse` as Claude Code's `updatedToolOutput`,
/// `enabled = false` honoured; and a project file that replaces the user's.
#[test]
fn amcp_user_file_functions_variables_and_answers() {
    let env = TestEnv::new();
    let config = env.root().join("xdg");
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    env.write(
        &env.project.join("myhooks/handlers.py"),
        "def rewrite(data):\n    return {'feedback': 'saw ' + data['tool_name'], 'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'updatedInput': {'path': '/tmp/safe.txt'}}}\n\nasync def redact(data):\n    return {'updatedResponse': 'redacted'}\n\ndef note(data):\n    return 'plain text is feedback'\n",
    );
    env.write(&env.project.join("myhooks/__init__.py"), "");
    let amcp_json = json!({"hooks": {
        "PreToolUse": {"handlers": [
            {"matcher": "write_file", "type": "python", "function": "myhooks.handlers.rewrite"},
            {"matcher": "*", "type": "command", "command": format!("echo \"$AMCP_HOOK_EVENT $AMCP_TOOL_NAME $AMCP_SESSION_ID $AMCP_PROJECT_DIR\" >> '{}'", marks.join("env").display())},
            {"matcher": "*", "type": "command", "command": format!("echo off >> '{}'", marks.join("off").display()), "enabled": false}
        ]},
        "PostToolUse": {"handlers": [
            {"matcher": "bash", "type": "python", "function": "myhooks.handlers.redact", "timeout": 10},
            {"matcher": "bash", "type": "python", "function": "myhooks.handlers.note"},
            {"matcher": "bash", "type": "python", "script": "./beside.py"}
        ]}
    }});
    env.write(&config.join("amcp/hooks.json"), &amcp_json.to_string());
    // A relative script is found beside the hooks file first, as AMCP resolves it.
    env.write(
        &config.join("amcp/beside.py"),
        "print('script beside the hooks file')\n",
    );
    let xdg = config.to_string_lossy().into_owned();
    let extra = [("XDG_CONFIG_HOME", xdg.as_str())];

    let reply = reply_of(
        &env.run_hooks(
            &["pre-tool-use"],
            &write_event(&env, "s-1", "a.txt"),
            &extra,
        )
        .0,
    );
    let specific = &reply["hookSpecificOutput"];
    assert_eq!(
        specific["updatedInput"],
        json!({"file_path": "/tmp/safe.txt", "content": "x"}),
        "{reply}"
    );
    assert_eq!(specific["additionalContext"], "saw write_file");
    assert_eq!(
        env.marks("env"),
        [format!(
            "PreToolUse write_file s-1 {}",
            env.project.display()
        )]
    );
    assert!(env.marks("off").is_empty(), "enabled = false");

    let post = json!({"hook_event_name": "PostToolUse", "session_id": "s-1", "cwd": env.project, "tool_name": "Bash",
                      "tool_input": {"command": "cat secret"}, "tool_response": {"stdout": "hunter2"}});
    let reply = reply_of(&env.run_hooks(&["post-tool-use"], &post, &extra).0);
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        context.contains("plain text is feedback")
            && context.contains("script beside the hooks file"),
        "{reply}"
    );
    assert_eq!(
        reply["hookSpecificOutput"]["updatedToolOutput"],
        json!({"stdout": "redacted", "stderr": ""}),
        "{reply}"
    );

    // A trusted project's file overrides the user's.
    env.write(
        &env.project.join(".amcp/hooks.toml"),
        &format!(
            "confinement = {{ write = [\"{}\"] }}\n[[hooks.PreToolUse.handlers]]\ncommand = \"echo project >> '{}'\"\n",
            marks.display(),
            marks.join("project").display()
        ),
    );
    assert!(env.run_amplihack(&["hooks", "trust"]).status.success());
    let reply = reply_of(
        &env.run_hooks(
            &["pre-tool-use"],
            &write_event(&env, "s-1", "a.txt"),
            &extra,
        )
        .0,
    );
    assert_eq!(
        reply["hookSpecificOutput"]["updatedInput"],
        Value::Null,
        "{reply}"
    );
    assert_eq!(env.marks("project"), ["project"]);
    assert_eq!(env.marks("env").len(), 1, "the user's file no longer runs");
}

/// The proposal's YAML, exactly as written there, as a user plugin's hooks.yaml: the matcher rule
/// blocks `rm *` without starting a process, and the command hook reads the proposal's JSON.
#[test]
fn proposal_yaml_rules_block_without_a_process_and_commands_speak_its_json() {
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    copy(
        &fixture_dir("proposal/hooks.yaml"),
        &hooks.join("guard/hooks.yaml"),
    );
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    env.write(
        &hooks.join("pre_tool.py"),
        &format!("import json, sys\nopen({:?}, 'a').write(sys.stdin.read() + '\\n')\nprint(json.dumps({{'action': 'allow'}}))\n", marks.join("pre_tool").display().to_string()),
    );

    let reply = reply_of(
        &env.run_hooks(&["pre-tool-use"], &bash_event(&env, "rm -rf build"), &[])
            .0,
    );
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecisionReason"],
        "Destructive rm commands require confirmation"
    );
    assert!(
        env.marks("pre_tool").is_empty(),
        "the rule started no process"
    );

    let reply = reply_of(
        &env.run_hooks(&["pre-tool-use"], &bash_event(&env, "git status"), &[])
            .0,
    );
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"],
        Value::Null
    );
    let seen: Vec<Value> = env
        .marks("pre_tool")
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(seen.len(), 1);
    let input = &seen[0];
    assert_eq!(
        (
            &input["event"],
            &input["tool"],
            &input["args"],
            &input["session_id"]
        ),
        (
            &json!("PreToolUse"),
            &json!("Bash"),
            &json!({"command": "git status"}),
            &json!("s-yaml")
        )
    );
    assert!(
        input["timestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z') && t.len() == 20),
        "{input}"
    );

    // PostToolUse's `async: true` hook: the answer does not wait for it; it still gets its JSON.
    let log_tool = env.script(
        &hooks.join("log_tool.sh"),
        &format!("sleep 1; cat >> '{}'", marks.join("log_tool").display()),
    );
    assert!(log_tool.exists());
    let mut post = bash_event(&env, "git status");
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] = json!({"stdout": "clean", "stderr": ""});
    let (output, took) = env.run_hooks(&["post-tool-use"], &post, &[]);
    assert!(
        output.status.success() && took.as_secs_f64() < 1.0,
        "not waited for: {took:?}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while env.marks("log_tool").is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let logged: Value = serde_json::from_str(&env.marks("log_tool")[0]).expect("JSON");
    assert_eq!(
        (&logged["event"], &logged["result"]["stdout"]),
        (&json!("PostToolUse"), &json!("clean"))
    );
}

/// `on_failure`: a timeout, a crash or an unreadable answer denies the call under `block`, warns
/// under `warn` (the default) and passes silently under `ignore`; `action: modify` rewrites it.
#[test]
fn on_failure_decides_what_a_failing_hook_does() {
    let cases = [
        ("sleep 5", "block", Some("timed out")),
        ("sleep 5", "warn", None),
        ("sleep 5", "ignore", None),
        ("exit 3", "block", Some("exit 3")),
        ("echo not-json", "block", Some("not the proposal's JSON")),
        ("echo not-json", "warn", None),
    ];
    for (command, policy, denied) in cases {
        let env = TestEnv::new();
        env.write(
            &env.user_hooks_dir().join("p/hooks.yaml"),
            &format!("hooks:\n  PreToolUse:\n    - type: command\n      command: \"{command}\"\n      timeout_ms: 300\n      on_failure: {policy}\n"),
        );
        let (output, took) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
        let reply = reply_of(&output);
        let decision = &reply["hookSpecificOutput"]["permissionDecision"];
        match denied {
            Some(why) => {
                assert_eq!(decision, "deny", "{command} {policy}: {reply}");
                let reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
                    .as_str()
                    .unwrap_or_default();
                assert!(
                    reason.contains(why) && reason.contains("on_failure: block"),
                    "{reason}"
                );
            }
            None => assert_eq!(decision, &Value::Null, "{command} {policy}: {reply}"),
        }
        let warned = stderr(&output).contains("hook from p");
        assert_eq!(
            warned,
            policy != "ignore",
            "{command} {policy}: {}",
            stderr(&output)
        );
        assert!(took.as_secs_f64() < 4.0, "the timeout was kept: {took:?}");
    }

    let env = TestEnv::new();
    env.write(
        &env.user_hooks_dir().join("p/hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - type: command\n      command: |\n        echo '{\"action\": \"modify\", \"modified_args\": {\"command\": \"git status --short\"}, \"message\": \"shortened\"}'\n",
    );
    let reply = reply_of(
        &env.run_hooks(&["pre-tool-use"], &bash_event(&env, "git status"), &[])
            .0,
    );
    assert_eq!(
        reply["hookSpecificOutput"]["updatedInput"],
        json!({"command": "git status --short"}),
        "{reply}"
    );
    assert_eq!(reply["systemMessage"], "shortened");
}

/// `hooks validate` and `hooks list` show the dialects' plugins like any other: what does not run
/// (an llm hook, an event no host has) and errors with their line and field.
#[test]
fn validate_and_list_show_dialect_plugins_and_their_errors() {
    let env = TestEnv::new();
    copy(
        &fixture_dir("proposal/hook-types.yaml"),
        &env.user_hooks_dir().join("types/hooks.yaml"),
    );
    env.write(
        &env.home.join(".config/amcp/hooks.toml"),
        &std::fs::read_to_string(fixture_dir("amcp/hooks.toml")).expect("toml"),
    );
    let output = env.run_amplihack(&["hooks", "validate"]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("amcp/hooks.toml"), "{text}");
    // `hooks test` shows a rule deciding with no process started.
    env.write(
        &env.user_hooks_dir().join("guard/hooks.yaml"),
        &std::fs::read_to_string(fixture_dir("proposal/hooks.yaml")).expect("yaml"),
    );
    let tested = stdout(&env.run_amplihack(&[
        "hooks",
        "test",
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command": "rm -rf x"}"#,
    ]));
    assert!(
        tested.contains("evaluated in-process (no process)")
            && tested.contains("Destructive rm commands require confirmation"),
        "{tested}"
    );
    let list = stdout(&env.run_amplihack(&["hooks", "list"]));
    assert!(list.contains("types") && list.contains("amcp"), "{list}");

    env.write(
        &env.user_hooks_dir().join("bad/hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - type: command\n      command: x\n      on_failure: explode\n",
    );
    let output = env.run_amplihack(&["hooks", "validate"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(
            "`hooks.PreToolUse[0].on_failure (line 5)`: `explode` is not a failure policy"
        ),
        "{text}"
    );
}

/// The proposal's `type: llm` hook, as its section 3 writes it, asked through the real Claude Code
/// (`claude -p`, hooks off, its own credentials: here a key for the scripted API): the model's
/// `{"safe": false}` blocks with its reason; `cache: true` answers an identical request from the
/// session's cache (one model call for two identical tool calls), a different one asks again;
/// with no Claude Code to ask the hook fails, and fails open (its on_failure is warn).
#[test]
fn llm_hooks_ask_claude_code_and_cache_identical_requests() {
    // The pinned Claude Code and the oldest amplihack supports (no --tools there).
    for claude in [support::claude_bin(), support::oldest_claude_bin()] {
        llm_hook_through(&claude);
    }
    let env = TestEnv::new();
    env.write(
        &env.user_hooks_dir().join("judge/hooks.yaml"),
        &llm_only_yaml(),
    );
    let (output, _) = env.run_hooks(
        &["pre-tool-use"],
        &bash_event(&env, "pwd"),
        &[("AMPLIHACK_CLAUDE", "/nonexistent/claude")],
    );
    assert_eq!(
        reply_of(&output)["hookSpecificOutput"]["permissionDecision"],
        Value::Null
    );
    assert!(
        stderr(&output).contains("cannot run /nonexistent/claude"),
        "{}",
        stderr(&output)
    );
}

/// Only the llm hook of the proposal's example (its command hook names a placeholder script).
fn llm_only_yaml() -> String {
    let yaml = std::fs::read_to_string(fixture_dir("proposal/hook-types.yaml")).expect("yaml");
    format!(
        "hooks:\n  PreToolUse:\n{}",
        &yaml[yaml.find("    - type: llm").expect("llm")..]
    )
}

fn llm_hook_through(claude: &Path) {
    let env = TestEnv::new();
    env.write(
        &env.user_hooks_dir().join("judge/hooks.yaml"),
        &llm_only_yaml(),
    );
    let fake = FakeAnthropic::start_with(
        Vec::new(),
        vec![(
            "Evaluate if this tool use is safe",
            r#"{"safe": false, "reason": "LLM-JUDGE: too risky"}"#,
        )],
    );
    let claude = claude.to_string_lossy();
    let extra = [
        ("ANTHROPIC_BASE_URL", fake.url.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-fake"),
        ("AMPLIHACK_CLAUDE", claude.as_ref()),
        ("DISABLE_TELEMETRY", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ];
    for (command, calls) in [("curl x | sh", 1), ("curl x | sh", 1), ("ls", 2)] {
        let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, command), &extra);
        let reply = reply_of(&output);
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "{reply} {}",
            stderr(&output)
        );
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecisionReason"],
            "LLM-JUDGE: too risky"
        );
        assert_eq!(fake.canned_requests().len(), calls, "{command}");
    }
    let asked = &fake.canned_requests()[0];
    assert_eq!(asked["model"], json!("claude-3-haiku"));
    assert_eq!(asked["max_tokens"], json!(100), "max_tokens is the hook's");
    let text = asked["messages"].to_string();
    assert!(
        text.contains("Tool: Bash") && text.contains(r#"Args: {\"command\": \"curl x | sh\"}"#),
        "{text}"
    );
    // No tools in the side question where Claude Code has `--tools` (2.1); 2.0.30 offers its
    // tools, and `--max-turns 1` ends the question should the model reach for one.
    if *claude == support::claude_bin() {
        assert!(
            asked["tools"].as_array().is_none_or(Vec::is_empty),
            "{asked}"
        );
    }
}

/// AMCP's exit codes: 0 reads stdout (JSON or nothing), 2 denies with stderr as the reason, any
/// other is a warning and the call goes on.
#[test]
fn amcp_exit_codes_as_specified() {
    let cases = [
        ("exit 0", None, false),
        (
            "echo 'protected path' >&2; exit 2",
            Some("protected path"),
            false,
        ),
        ("echo 'lint crashed' >&2; exit 1", None, true),
        (
            "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"by json\"}}'",
            Some("by json"),
            false,
        ),
    ];
    for (command, denied, warned) in cases {
        let env = TestEnv::new();
        let toml = format!(
            "[[hooks.PreToolUse.handlers]]\nmatcher = \"bash\"\ntype = \"command\"\ncommand = {command:?}\n"
        );
        env.write(&env.home.join(".config/amcp/hooks.toml"), &toml);
        let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
        let reply = reply_of(&output);
        let specific = &reply["hookSpecificOutput"];
        match denied {
            Some(reason) => {
                assert_eq!(specific["permissionDecision"], "deny", "{command}: {reply}");
                assert_eq!(specific["permissionDecisionReason"], reason, "{command}");
            }
            None => assert_eq!(
                specific["permissionDecision"],
                Value::Null,
                "{command}: {reply}"
            ),
        }
        assert_eq!(
            stderr(&output).contains("lint crashed"),
            warned,
            "{command}: {}",
            stderr(&output)
        );
    }
}

/// AMCP runs an event's handlers one after another in the file's order and stops at the first
/// that denies: a slow first handler finishes before the second starts, and a denial leaves the
/// third unstarted.
#[test]
fn amcp_handlers_run_in_order_and_stop_at_the_first_denial() {
    let env = TestEnv::new();
    let order = env.root().join("order");
    let step = |text: &str| format!("{text}; echo {text:?} >> '{}'", order.display());
    let toml = [
        step("sleep 0.3; echo first"),
        step("echo second"),
        format!("{}; echo 'second denies' >&2; exit 2", step("echo deny")),
        step("echo never"),
    ]
    .iter()
    .map(|command| {
        format!("[[hooks.PreToolUse.handlers]]\nmatcher = \"bash\"\ncommand = {command:?}\n")
    })
    .collect::<String>();
    env.write(&env.home.join(".config/amcp/hooks.toml"), &toml);
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    let reply = reply_of(&output);
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecisionReason"], "second denies",
        "{reply}"
    );
    let ran = std::fs::read_to_string(&order).unwrap_or_default();
    let ran: Vec<&str> = ran
        .lines()
        .map(|l| l.split(';').next().unwrap_or(l))
        .collect();
    assert_eq!(
        ran,
        ["sleep 0.3", "echo second", "echo deny"],
        "in order, none after the denial"
    );
}

/// Under Amplifier, whose hook-shell bridge runs the project's `hooks.json` plugins itself, the
/// project's `hooks.yaml` and `.amcp/` files (which the bridge does not read) are run by amplihack,
/// once trusted; its `hooks.json` plugins are still left to the bridge.
#[test]
fn under_amplifier_the_dialects_the_bridge_does_not_read_run_here() {
    let env = TestEnv::new();
    let hooks = env.project_hooks_dir();
    env.write(
        &hooks.join("guard/hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - type: matcher\n      match: {tool: Bash, args: {command: \"rm *\"}}\n      action: block\n      message: no rm here\n",
    );
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    env.plugin(
        &hooks,
        "bridge-runs-me",
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": format!("echo ran >> '{}'", marks.join("json").display())}]}]}}),
    );
    assert!(env.run_amplihack(&["hooks", "trust"]).status.success());
    let dir = hooks.display().to_string();
    let extra = [("AMPLIFIER_HOOKS_DIR", dir.as_str())];
    let payload = json!({"tool_name": "bash", "tool_input": {"command": "rm -rf /tmp/x"}, "session_id": "amp-1"});
    let (output, _) = env.run_hooks(&["pre-tool-use", "--host", "amplifier"], &payload, &extra);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("no rm here") && text.contains("deny"),
        "{text}"
    );
    let payload =
        json!({"tool_name": "bash", "tool_input": {"command": "ls"}, "session_id": "amp-1"});
    env.run_hooks(&["pre-tool-use", "--host", "amplifier"], &payload, &extra);
    assert!(
        env.marks("json").is_empty(),
        "the bridge's plugin is not run twice"
    );
}
