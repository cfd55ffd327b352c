//! Forwarding to the user's plugins in `.amplifier/hooks/`, through the real binary.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stderr, stdout};

fn bash_event(env: &TestEnv, cmd: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": "sess-1", "cwd": env.project, "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t1"})
}

fn reply_of(output: &std::process::Output) -> Value {
    if output.stdout.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&output.stdout).expect("stdout is JSON")
    }
}

#[test]
fn matchers_select_by_each_events_own_field() {
    let env = TestEnv::new();
    let dir = env.user_hooks_dir();
    for (name, event, matcher) in [
        ("all", "PreToolUse", None),
        ("star", "PreToolUse", Some("*")),
        ("bash", "PreToolUse", Some("Bash")),
        ("alternatives", "PreToolUse", Some("Edit|Bash")),
        ("regex", "PreToolUse", Some("^Ba.*")),
        ("write-only", "PreToolUse", Some("Write")),
        ("lowercase", "PreToolUse", Some("bash")),
        ("bad-regex", "PreToolUse", Some("(Bash")),
        ("other-event", "PostToolUse", None),
    ] {
        env.plugin(
            &dir,
            name,
            &one_group(event, matcher, vec![command(&env.mark("ran", name))]),
        );
    }
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut ran = env.marks("ran");
    ran.sort();
    assert_eq!(ran, ["all", "alternatives", "bash", "regex", "star"]);

    // Amplifier's tool names are matched as Claude Code's: `bash` is `Bash`.
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "bash",
        &one_group(
            "PreToolUse",
            Some("Bash"),
            vec![command(&env.mark("ran", "bash"))],
        ),
    );
    let payload = json!({"tool_name": "bash", "tool_input": {"command": "ls"}});
    env.run_hooks(&["pre-tool-use", "--host", "amplifier"], &payload, &[]);
    assert_eq!(env.marks("ran"), ["bash"]);

    // SessionStart matches on its source.
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "resume-only",
        &one_group(
            "SessionStart",
            Some("resume"),
            vec![command(&env.mark("ran", "resume"))],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "startup-only",
        &one_group(
            "SessionStart",
            Some("startup"),
            vec![command(&env.mark("ran", "startup"))],
        ),
    );
    env.run_hooks(
        &["session-start"],
        &json!({"hook_event_name": "SessionStart", "session_id": "s", "source": "startup"}),
        &[],
    );
    assert_eq!(env.marks("ran"), ["startup"]);
}

/// A handler's `if` rule: it runs only for the tool calls the rule matches, as in Claude Code.
#[test]
fn if_rules_select_tool_calls() {
    let env = TestEnv::new();
    let handler = |rule: &str, name: &str| json!({"type": "command", "if": rule, "command": env.mark("ran", name)});
    env.plugin(
        &env.user_hooks_dir(),
        "guarded",
        &one_group(
            "PreToolUse",
            None,
            vec![
                handler("Bash(git commit:*)", "commit"),
                handler("Bash(npm *)", "npm"),
                handler("Edit(*.ts)", "ts"),
            ],
        ),
    );
    for cmd in ["git commit -m x", "ls && npm test", "git status"] {
        let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, cmd), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let edit = json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Edit", "tool_input": {"file_path": "/p/a.ts"}});
    env.run_hooks(&["pre-tool-use"], &edit, &[]);
    assert_eq!(env.marks("ran"), ["commit", "npm", "ts"]);
}

#[test]
fn answers_merge_deny_over_ask_over_allow_with_contexts_named() {
    let env = TestEnv::new();
    let dir = env.user_hooks_dir();
    let emit = |value: Value| format!("echo '{value}'");
    env.plugin(&dir, "a-allow", &one_group("PreToolUse", None, vec![command(&emit(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "additionalContext": "ctx from a"}})))]));
    env.plugin(&dir, "b-ask", &one_group("PreToolUse", None, vec![command(&emit(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "check"}})))]));
    env.plugin(
        &dir,
        "c-context",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&emit(json!({"contextInjection": "ctx from c"})))],
        ),
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    let reply = reply_of(&output);
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "ask",
        "{reply}"
    );
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecisionReason"],
        "check"
    );
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    // In order, each with the label Claude Code gives a hook's context (it adds the first
    // itself): the model reads what it would natively, where each handler answers alone.
    assert_eq!(
        context,
        "ctx from a\n\nPreToolUse:Bash hook additional context: ctx from c"
    );

    env.plugin(
        &dir,
        "d-deny",
        &one_group(
            "PreToolUse",
            None,
            vec![command("echo 'not today' >&2; exit 2")],
        ),
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    let reply = reply_of(&output);
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecisionReason"],
        "[echo 'not today' >&2; exit 2]: not today\n\nThis hook comes from the d-deny@inline plugin."
    );

    // Under Amplifier the same merge is rendered in the bridge's forms.
    let (output, _) = env.run_hooks(
        &["pre-tool-use", "--host", "amplifier"],
        &json!({"tool_name": "bash", "tool_input": {"command": "ls"}}),
        &[],
    );
    assert_eq!(reply_of(&output)["decision"], "block");

    // continue:false wins on any event.
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "halt",
        &one_group(
            "Stop",
            None,
            vec![command(&format!(
                "echo '{}'",
                json!({"continue": false, "stopReason": "enough"})
            ))],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "block",
        &one_group(
            "Stop",
            None,
            vec![command(&format!(
                "echo '{}'",
                json!({"decision": "block", "reason": "go on"})
            ))],
        ),
    );
    let (output, _) = env.run_hooks(
        &["stop"],
        &json!({"hook_event_name": "Stop", "session_id": "s", "stop_hook_active": false}),
        &[],
    );
    let reply = reply_of(&output);
    assert_eq!(
        (
            reply["continue"].clone(),
            reply["stopReason"].clone(),
            reply["decision"].clone()
        ),
        (json!(false), json!("enough"), json!("block")),
        "{reply}"
    );

    // Plain text on exit 0 is context for UserPromptSubmit, ignored for PreToolUse.
    let env = TestEnv::new();
    env.plugin(&env.user_hooks_dir(), "text", &json!({"hooks": {"UserPromptSubmit": [{"hooks": [command("echo remember the milk")]}], "PreToolUse": [{"hooks": [command("echo ignored text")]}]}}));
    let (output, _) = env.run_hooks(
        &["user-prompt-submit"],
        &json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi"}),
        &[],
    );
    // As plain text, which Claude Code labels `UserPromptSubmit hook success: `, as it does the
    // plugin's own output natively.
    assert_eq!(stdout(&output), "remember the milk\n");
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert!(output.stdout.is_empty());

    // Other exit codes are non-blocking errors: nothing decided, and shown to the user as
    // Claude Code shows one (a systemMessage with the plugin and the first stderr line).
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "broken",
        &one_group("PreToolUse", None, vec![command("echo kaput >&2; exit 3")]),
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(output.status.code(), Some(0));
    let reply = reply_of(&output);
    assert_eq!(
        reply["systemMessage"], "hook from broken failed with exit 3: kaput",
        "{reply}"
    );
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"],
        Value::Null
    );
    assert!(
        stderr(&output).contains("hook from broken failed with exit 3: kaput"),
        "{}",
        stderr(&output)
    );
}

/// Several handlers blocking one call: the model gets one reason, that of the handler that
/// finished last, whether it blocked by exit 2 or by JSON (Claude Code 2.1.328, observed with the
/// same handlers under --plugin-dir: ONE/TWO gave TWO, SLOW/FAST gave SLOW, SLOW2/FASTJSON gave
/// SLOW2). An exit-2 reason reads as Claude Code frames it: `[<command>]: <stderr>` and the
/// plugin it comes from (tests/hook_texts_e2e.rs compares it with the real Claude Code).
#[test]
fn several_blockers_give_the_reason_of_the_last_to_finish() {
    let deny = |reason: &str| {
        format!(
            "echo '{}'",
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
        )
    };
    let cases = [
        (
            vec![
                "echo ONE >&2; exit 2".to_string(),
                "sleep 0.2; echo TWO >&2; exit 2".to_string(),
            ],
            "[sleep 0.2; echo TWO >&2; exit 2]: TWO\n\nThis hook comes from the blockers@inline plugin.",
        ),
        (
            vec![format!("sleep 0.2; {}", deny("SLOW")), deny("FAST")],
            "SLOW",
        ),
        (
            vec![
                "sleep 0.2; echo SLOW2 >&2; exit 2".to_string(),
                deny("FASTJSON"),
            ],
            "[sleep 0.2; echo SLOW2 >&2; exit 2]: SLOW2\n\nThis hook comes from the blockers@inline plugin.",
        ),
    ];
    for (handlers, expected) in cases {
        let env = TestEnv::new();
        let handlers: Vec<Value> = handlers.iter().map(|h| command(h)).collect();
        env.plugin(
            &env.user_hooks_dir(),
            "blockers",
            &one_group("PreToolUse", None, handlers),
        );
        let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
        let reply = reply_of(&output);
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "{reply}"
        );
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecisionReason"], expected,
            "{reply}"
        );
    }
}

#[test]
fn priorities_run_in_sequence_pass_updated_input_on_and_a_deny_stops_the_rest() {
    let env = TestEnv::new();
    let dir = env.user_hooks_dir();
    let seen = env.root().join("seen-by-second.json");
    let update = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}});
    env.plugin(&dir, "first", &json!({"priority": 0, "hooks": {"PreToolUse": [{"hooks": [command(&format!("echo '{update}'"))]}]}}));
    env.plugin(&dir, "second", &json!({"priority": 10, "hooks": {"PreToolUse": [{"hooks": [command(&format!("cat > '{}'", seen.display()))]}]}}));
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    let received: Value = serde_json::from_str(&env.read(&seen)).expect("second got JSON");
    assert_eq!(
        received["tool_input"],
        json!({"command": "ls -la"}),
        "the next priority sees the update"
    );
    assert_eq!(
        received["tool_use_id"], "t1",
        "the rest of the event is unchanged"
    );
    assert_eq!(
        reply_of(&output)["hookSpecificOutput"]["updatedInput"],
        json!({"command": "ls -la"})
    );

    let env = TestEnv::new();
    env.plugin(&env.user_hooks_dir(), "denier", &json!({"priority": -5, "hooks": {"PreToolUse": [{"hooks": [command("echo no >&2; exit 2")]}]}}));
    env.plugin(&env.user_hooks_dir(), "later", &json!({"priority": 5, "hooks": {"PreToolUse": [{"hooks": [command(&env.mark("ran", "later"))]}]}}));
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(
        reply_of(&output)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    assert!(env.marks("ran").is_empty(), "a deny stops later priorities");

    // Unchanged, the host's bytes are passed on exactly.
    let env = TestEnv::new();
    let got = env.root().join("got.json");
    env.plugin(
        &env.user_hooks_dir(),
        "copy",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&format!("cat > '{}'", got.display()))],
        ),
    );
    let payload = env.captured("claude-code-2.1.328/PreToolUse-Bash.json");
    let (output, _) = support::run_with_timeout(
        env.hooks(&["pre-tool-use"]),
        &payload,
        Duration::from_secs(20),
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&got).expect("copied"),
        payload,
        "byte for byte"
    );
}

#[test]
fn one_prioritys_handlers_run_in_parallel_and_identical_commands_once() {
    let env = TestEnv::new();
    for i in 0..8 {
        env.plugin(
            &env.user_hooks_dir(),
            &format!("sleeper-{i}"),
            &one_group(
                "PreToolUse",
                None,
                vec![command(&format!(
                    "sleep 0.2; {}",
                    env.mark("ran", &i.to_string())
                ))],
            ),
        );
    }
    let same = env.mark("dup", "once");
    env.plugin(
        &env.user_hooks_dir(),
        "dup-a",
        &one_group("PreToolUse", None, vec![command(&same)]),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "dup-b",
        &one_group("PreToolUse", Some("Bash"), vec![command(&same)]),
    );
    let (output, elapsed) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(env.marks("ran").len(), 8);
    assert!(
        elapsed < Duration::from_millis(600),
        "8 × 200 ms took {elapsed:?}: not parallel"
    );
    assert_eq!(env.marks("dup"), ["once"]);
}

#[test]
fn a_hook_that_hangs_and_forks_is_killed_with_its_children_at_its_timeout() {
    let env = TestEnv::new();
    let pids = env.root().join("pids");
    let body = format!(
        "sleep 300 & echo $! >> '{0}'; (sleep 300 & echo $! >> '{0}'; wait) & sleep 300",
        pids.display()
    );
    env.plugin(
        &env.user_hooks_dir(),
        "hang",
        &one_group(
            "PreToolUse",
            None,
            vec![json!({"type": "command", "command": body, "timeout": 1})],
        ),
    );
    let (output, elapsed) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(output.status.code(), Some(0));
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    assert!(
        stderr(&output).contains("timed out after"),
        "{}",
        stderr(&output)
    );
    std::thread::sleep(Duration::from_millis(200));
    for pid in env.read(&pids).lines() {
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        assert!(!alive, "child {pid} survived the timeout");
    }
    assert_eq!(
        env.audit_log().last().map(|r| r["timed_out"].clone()),
        Some(json!(true))
    );
}

#[test]
fn floods_and_hooks_that_ignore_stdin_do_not_block() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "flood",
        &one_group(
            "PreToolUse",
            None,
            vec![command("head -c 30000000 /dev/zero; echo done")],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "deaf",
        &one_group("PreToolUse", None, vec![command("exit 0")]),
    );
    // A payload far bigger than a pipe buffer, which the hooks never read.
    let mut event = bash_event(&env, "ls");
    event["padding"] = json!("x".repeat(2_000_000));
    let (output, elapsed) = env.run_hooks(&["pre-tool-use"], &event, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(
        stderr(&output)
            .contains("output of hook from flood was over 1048576 bytes; the rest was dropped"),
        "{}",
        stderr(&output)
    );
    assert!(env.audit_log().iter().any(|r| r["output_cut"] == true));
}

#[test]
fn invalid_plugins_are_skipped_with_file_field_and_fix_and_the_others_run() {
    let env = TestEnv::new();
    let bad = env.plugin(&env.user_hooks_dir(), "bad", &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": "soon"}]}]}}));
    env.plugin(
        &env.user_hooks_dir(),
        "good",
        &one_group("PreToolUse", None, vec![command(&env.mark("ran", "good"))]),
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(env.marks("ran"), ["good"]);
    let err = stderr(&output);
    assert!(
        err.contains(&bad.display().to_string())
            && err.contains("hooks.PreToolUse[0].hooks[0].timeout")
            && err.contains("fix: use a number of seconds"),
        "{err}"
    );
}

#[test]
fn amplihacks_own_registration_is_never_forwarded_and_recursion_is_cut() {
    let env = TestEnv::new();
    let hooks = support::hooks_bin().display().to_string();
    // A plugin that registers amplihack itself (as `amplihack install` does for Amplifier).
    env.plugin(
        &env.user_hooks_dir(),
        "amplihack",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&format!(
                "\"{hooks}\" pre-tool-use --host amplifier"
            ))],
        ),
    );
    // A wrapper script that calls amplihack-hooks again, which would recurse without the marker.
    let wrapper = env.script(
        &env.root().join("wrap.sh"),
        &format!(
            "{}\nexec \"{hooks}\" pre-tool-use",
            env.mark("ran", "wrapper")
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "wrapper",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&wrapper.display().to_string())],
        ),
    );
    let (output, elapsed) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(env.marks("ran"), ["wrapper"], "ran exactly once");
    assert!(elapsed < Duration::from_secs(5));
    assert!(env.audit_log().iter().all(|r| {
        !r["plugin"]
            .as_str()
            .unwrap_or_default()
            .ends_with(":amplihack")
    }));
}

#[test]
fn handlers_get_the_environment_and_substitutions_plugins_expect() {
    let env = TestEnv::new();
    let plugin_dir = env.user_hooks_dir().join("envy");
    env.script(&plugin_dir.join("scripts/show.sh"), "printf 'root=%s\\nhooks=%s\\nproject=%s\\namp_project=%s\\nsession=%s\\n' \"$CLAUDE_PLUGIN_ROOT\" \"$AMPLIFIER_HOOKS_DIR\" \"$CLAUDE_PROJECT_DIR\" \"$AMPLIFIER_PROJECT_DIR\" \"$AMPLIFIER_SESSION_ID\" > \"$OUT\"; pwd >> \"$OUT\"");
    let out = env.root().join("env.txt");
    env.plugin(
        &env.user_hooks_dir(),
        "envy",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&format!(
                "OUT='{}' ${{CLAUDE_PLUGIN_ROOT}}/scripts/show.sh",
                out.display()
            ))],
        ),
    );
    env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    let shown = env.read(&out);
    let project = env.project.display().to_string();
    for line in [
        format!("root={}", plugin_dir.display()),
        format!("hooks={}", env.user_hooks_dir().display()),
        format!("project={project}"),
        format!("amp_project={project}"),
        "session=sess-1".to_string(),
        project.clone(),
    ] {
        assert!(shown.lines().any(|l| l == line), "missing {line}:\n{shown}");
    }
}

/// Exec form and the shell idioms of published plugins, each checked against what Claude Code
/// 2.1.328 does with the same handler under `--plugin-dir` (observed: placeholders in `args`
/// substituted verbatim, `$HOME` there left literal, the shell form expanding the exported
/// variables itself, single quotes literal).
#[test]
fn exec_form_and_published_shell_idioms_get_what_claude_code_gives_them() {
    let env = TestEnv::new();
    let root = env.user_hooks_dir().join("forms");
    let data = env
        .home
        .join(".local/state/amplihack/plugin-data/user-forms");
    let out = |n: usize| env.root().join(format!("out-{n}"));
    let o = |n: usize| out(n).display().to_string();
    let cases: Vec<(Value, String)> = vec![
        (
            json!({"type": "command", "command": "/bin/sh", "args": ["-c", "printf '%s|' \"$@\" > \"$0\"", o(0), "${CLAUDE_PLUGIN_ROOT}/x", "${CLAUDE_PLUGIN_DATA}", "$HOME", "a b", "${CLAUDE_PROJECT_DIR}"]}),
            format!(
                "{}/x|{}|$HOME|a b|{}|",
                root.display(),
                data.display(),
                env.project.display()
            ),
        ),
        (
            command(&format!(
                "sh -c 'printf %s \"${{CLAUDE_PLUGIN_ROOT}}\"' > '{}'",
                o(1)
            )),
            root.display().to_string(),
        ),
        (
            command(&format!(
                "printf %s \"${{CLAUDE_PLUGIN_ROOT:-.}}\" > '{}'",
                o(2)
            )),
            root.display().to_string(),
        ),
        (
            command(&format!("printf %s '${{CLAUDE_PLUGIN_ROOT}}' > '{}'", o(3))),
            "${CLAUDE_PLUGIN_ROOT}".to_string(),
        ),
        (
            json!({"type": "command", "command": format!("printf ran > '{}'", o(4)), "shell": "bash"}),
            "ran".to_string(),
        ),
        (
            command(&format!(
                "test -d \"$CLAUDE_PLUGIN_DATA\" && printf exists > '{}'",
                o(5)
            )),
            "exists".to_string(),
        ),
        (
            // A command with spaces and `args` names one executable, which does not exist: it
            // fails to start, as under Claude Code, and the others still run.
            json!({"type": "command", "command": format!("printf x > '{}'", o(6)), "args": []}),
            "(absent)".to_string(),
        ),
    ];
    let handlers: Vec<Value> = cases.iter().map(|(h, _)| h.clone()).collect();
    env.plugin(
        &env.user_hooks_dir(),
        "forms",
        &one_group("PreToolUse", None, handlers),
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert!(output.status.success(), "{}", support::stderr(&output));
    for (n, (handler, expected)) in cases.iter().enumerate() {
        let got = std::fs::read_to_string(out(n)).unwrap_or_else(|_| "(absent)".into());
        assert_eq!(&got, expected, "{handler}");
    }
}

/// A SessionStart handler's exports, as each host treats them: Claude Code sources them in the
/// shell of each Bash command (amplihack appends them to the host's own env file) and gives them
/// to no later hook (observed with --plugin-dir); Amplifier's bridge gives them to later hooks,
/// and amplihack does so evaluated as a shell would: `export PATH="<dir>:${PATH}"`, as a published
/// GitHub CLI plugin writes it, must leave later handlers a PATH that still finds `sh`.
#[test]
fn session_start_exports_reach_the_bash_tool_or_later_hooks_as_each_host_does() {
    let amplifier_hooks = |env: &TestEnv| env.project_hooks_dir().display().to_string();
    // host, and what a later handler sees: GREETING | sh found | PATH's first entry (`DIR`: the
    // exported directory)
    let cases = [
        ("claude", "|found|real"),
        ("amplifier", "hello there|found|DIR"),
    ];
    for (host, expected) in cases {
        let amplifier = host == "amplifier";
        let env = TestEnv::new();
        let tools = env.root().join("gh tools");
        env.plugin(
            &env.user_hooks_dir(),
            "exporter",
            &one_group(
                "SessionStart",
                None,
                vec![command(&format!(
                    "echo 'export GREETING=\"hello there\"' >> \"$CLAUDE_ENV_FILE\"; echo 'export PATH=\"{}:${{PATH}}\"' >> \"$CLAUDE_ENV_FILE\"",
                    tools.display()
                ))],
            ),
        );
        let out = env.root().join("seen");
        env.plugin(
            &env.user_hooks_dir(),
            "reader",
            &one_group(
                "PreToolUse",
                None,
                vec![command(&format!(
                    "first=${{PATH%%:*}}; [ \"$first\" = '{}' ] || first=real; echo \"$GREETING|$(command -v sh >/dev/null && echo found)|$first\" > '{}'",
                    tools.display(),
                    out.display()
                ))],
            ),
        );
        let host_env_file = env.root().join("claude-session.sh");
        let hooks_dir = amplifier_hooks(&env);
        let mut extra: Vec<(&str, &str)> = Vec::new();
        if amplifier {
            extra.push(("AMPLIFIER_HOOKS_DIR", &hooks_dir));
        }
        let host_file = host_env_file.display().to_string();
        let mut start_env = extra.clone();
        start_env.push(("CLAUDE_ENV_FILE", &host_file));
        let (started, _) = env.run_hooks(
            &["session-start"],
            &json!({"hook_event_name": "SessionStart", "session_id": "sess-1", "source": "startup"}),
            &start_env,
        );
        assert!(started.status.success(), "{host}: {}", stderr(&started));
        env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &extra);
        assert_eq!(
            env.read(&out).trim(),
            expected.replace("DIR", &tools.display().to_string()),
            "{host}"
        );
        if !amplifier {
            let host_text = env.read(&host_env_file);
            assert!(
                host_text.contains("export GREETING=\"hello there\"")
                    && host_text.contains("${PATH}"),
                "the host's own env file gets the exports, for its shell to expand: {host_text}"
            );
        }
    }
}

#[test]
fn project_plugins_run_only_when_trusted_and_again_after_any_change() {
    let env = TestEnv::new();
    let file = env.plugin(
        &env.project_hooks_dir(),
        "repo-hook",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&env.mark("ran", "project"))],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "mine",
        &one_group("PreToolUse", None, vec![command(&env.mark("ran", "user"))]),
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(
        env.marks("ran"),
        ["user"],
        "untrusted project plugins are skipped; user plugins are trusted"
    );
    let told = reply_of(&output)["systemMessage"]
        .as_str()
        .map(str::to_string)
        .expect("the user is told");
    assert!(told.contains("amplihack hooks trust"), "{told}");
    let (again, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert!(again.stdout.is_empty(), "told once per session");

    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", stderr(&trust));
    env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(
        env.marks("ran").iter().filter(|m| *m == "project").count(),
        1,
        "trusted now"
    );

    std::fs::write(&file, env.read(&file).replace("project", "changed")).expect("edit");
    env.run_hooks(&["pre-tool-use"], &json!({"hook_event_name": "PreToolUse", "session_id": "sess-2", "tool_name": "Bash", "tool_input": {"command": "ls"}}), &[]);
    assert!(
        !env.marks("ran").contains(&"changed".to_string()),
        "a changed file needs trust again"
    );

    assert!(env.run_amplihack(&["hooks", "trust"]).status.success());
    assert!(env.run_amplihack(&["hooks", "untrust"]).status.success());
    env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert!(
        !env.marks("ran").contains(&"changed".to_string()),
        "untrusted again"
    );
}

/// Trust covers every file a project plugin runs: its script changing (a `git pull`) asks for
/// trust again, naming the file and giving the command; a script elsewhere in the project that a
/// command names is covered too.
#[test]
fn a_trusted_plugins_script_that_changes_needs_trust_again() {
    let env = TestEnv::new();
    let plugin_dir = env.project_hooks_dir().join("checks");
    let script = env.script(&plugin_dir.join("check.sh"), &env.mark("ran", "v1"));
    let named = env.script(
        &env.project.join("tools/lint.sh"),
        &env.mark("ran", "lint-v1"),
    );
    env.plugin(
        &env.project_hooks_dir(),
        "checks",
        &one_group(
            "PreToolUse",
            None,
            vec![
                command("\"${CLAUDE_PLUGIN_ROOT}\"/check.sh"),
                command("sh tools/lint.sh"),
            ],
        ),
    );
    assert!(env.run_amplihack(&["hooks", "trust"]).status.success());
    let event = |session: &str| json!({"hook_event_name": "PreToolUse", "session_id": session, "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let ran = || {
        let mut marks = env.marks("ran");
        marks.sort();
        marks
    };
    env.run_hooks(&["pre-tool-use"], &event("s1"), &[]);
    assert_eq!(ran(), ["lint-v1", "v1"], "the handlers run in parallel");
    for (file, version) in [(&script, "v2"), (&named, "lint-v2")] {
        let before = env.read(file);
        env.script(file, &env.mark("ran", version));
        let session = format!("after-{version}");
        let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&session), &[]);
        assert!(
            !env.marks("ran").contains(&version.to_string()),
            "{version} ran untrusted"
        );
        let told = reply_of(&output)["systemMessage"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_default();
        assert!(told.contains("changed since you trusted them"), "{told}");
        assert!(told.contains(&file.display().to_string()), "{told}");
        assert!(told.contains("amplihack hooks trust --project"), "{told}");
        std::fs::write(file, before).expect("restore");
    }
    // Restored content is trusted again without a word.
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event("s3"), &[]);
    assert!(output.stdout.is_empty(), "{}", stdout(&output));
    assert_eq!(ran(), ["lint-v1", "lint-v1", "v1", "v1"]);
}

/// Handlers that answer later, as Claude Code runs them: `async: true`, `asyncRewake: true`, and a
/// first line `{"async": true}`. None delays the answer; what they say reaches the model at the
/// session's next event that carries context, exactly once; one past its timeout says nothing
/// and is stopped; SessionEnd stops what still runs.
/// An exec-form handler in the background runs its own program with its own arguments (not
/// `sh -c <command>`), and its answer arrives as any background answer does.
#[test]
fn an_exec_form_handler_in_the_background_runs_its_program() {
    let env = TestEnv::new();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "exec ctx"}});
    env.plugin(
        &env.user_hooks_dir(),
        "later-exec",
        &one_group(
            "PostToolUse",
            None,
            vec![json!({"type": "command", "async": true, "command": "/bin/sh", "args": ["-c", "printf '%s' \"$1\"", "sh", answer.to_string()]})],
        ),
    );
    let post = json!({"hook_event_name": "PostToolUse", "session_id": "x1", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}});
    let (output, _) = env.run_hooks(&["post-tool-use"], &post, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let prompt =
        json!({"hook_event_name": "UserPromptSubmit", "session_id": "x1", "prompt": "next"});
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (output, _) = env.run_hooks(&["user-prompt-submit"], &prompt, &[]);
        let context = reply_of(&output)["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if context == "exec ctx" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never arrived: {context:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn background_answers_reach_the_model_at_the_next_turn_exactly_once() {
    let env = TestEnv::new();
    let answer = |context: &str| {
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": context}})
            .to_string()
    };
    let handlers = vec![
        json!({"type": "command", "async": true, "command": format!(
            "sleep 0.3; echo '{}'",
            json!({"systemMessage": "msg A", "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "ctx A"}})
        )}),
        // Declared on its first line; keeps writing to stderr after the hand-over (a closed pipe
        // would kill it with SIGPIPE before it answers).
        command(&format!(
            "echo '{{\"async\": true, \"asyncTimeout\": 5000}}'; sleep 0.3; seq 1 20000 >&2; echo '{}'",
            answer("ctx B")
        )),
        // Declared, then answers and ends at once: gone before anyone can join its group.
        command(&format!(
            "echo '{{\"async\": true}}'; echo '{}'",
            answer("ctx C")
        )),
        json!({"type": "command", "asyncRewake": true, "rewakeMessage": "Review:", "command": "echo 'finding X' >&2; exit 2"}),
        json!({"type": "command", "asyncRewake": true, "command": "echo 'all good' >&2; exit 0"}),
        command(&format!(
            "echo '{{\"async\": true, \"asyncTimeout\": 300}}'; sleep 2; {}; echo '{}'",
            env.mark("late", "ran past its timeout"),
            answer("ctx late")
        )),
    ];
    env.plugin(
        &env.user_hooks_dir(),
        "later",
        &one_group("PostToolUse", None, handlers),
    );
    let post = json!({"hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}});
    let (output, elapsed) = env.run_hooks(&["post-tool-use"], &post, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(elapsed < Duration::from_millis(500), "waited: {elapsed:?}");
    assert_eq!(reply_of(&output), Value::Null, "nothing yet");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(env.marks("late").is_empty(), "stopped at its asyncTimeout");

    let prompt = |session: &str| json!({"hook_event_name": "UserPromptSubmit", "session_id": session, "prompt": "next"});
    let context_of = |output: &std::process::Output| {
        reply_of(output)["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // Another session's turn, and an event that carries no context, get none of it.
    let (other, _) = env.run_hooks(&["user-prompt-submit"], &prompt("s2"), &[]);
    assert_eq!(context_of(&other), "");
    let pre = json!({"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Read", "tool_input": {"file_path": "/x"}});
    let (output, _) = env.run_hooks(&["pre-tool-use"], &pre, &[]);
    assert_eq!(reply_of(&output), Value::Null);

    let (output, elapsed) = env.run_hooks(&["user-prompt-submit"], &prompt("s1"), &[]);
    assert!(elapsed < Duration::from_millis(500), "{elapsed:?}");
    let context = context_of(&output);
    assert_eq!(
        context, "msg A\n\nctx A\n\nReview: finding X\n\nctx B\n\nctx C",
        "configured ones first (they start before the others run), then the declared ones in \
         plugin order; the message before the context, as Claude Code hands both to the model"
    );
    let (again, _) = env.run_hooks(&["user-prompt-submit"], &prompt("s1"), &[]);
    assert_eq!(context_of(&again), "", "delivered once");
    assert_eq!(stderr(&output), "");

    // SessionEnd stops what still runs, with its children, and leaves nothing behind.
    let marker = env.root().join("marks/after-end");
    env.plugin(
        &env.user_hooks_dir(),
        "later",
        &one_group(
            "PostToolUse",
            None,
            vec![json!({"type": "command", "async": true, "command": format!("sleep 3; echo done > '{}'", marker.display())})],
        ),
    );
    let (output, _) = env.run_hooks(&["post-tool-use"], &post, &[]);
    assert_eq!(output.status.code(), Some(0));
    std::thread::sleep(Duration::from_millis(300));
    let end = json!({"hook_event_name": "SessionEnd", "session_id": "s1", "reason": "exit"});
    let (output, _) = env.run_hooks(&["session-end"], &end, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::thread::sleep(Duration::from_millis(3500));
    assert!(!marker.exists(), "the handler outlived its session");
    let async_dir = env.home.join(".local/state/amplihack/async");
    let left: Vec<_> = std::fs::read_dir(&async_dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(!left.iter().any(|p| p.ends_with("s1")), "{left:?}");
}

/// SessionEnd cancels the ending session's background handlers still running as Claude Code
/// cancels its own at the end of a session (tests/async_end_native_e2e.rs): SIGTERM to each
/// handler's process group, whose trap runs, before the session's SessionEnd handlers run;
/// SIGKILL 1.5 s later to one that ignored it. Another session's handler runs on and finishes.
/// SessionEnd itself does not wait for the SIGKILL.
#[test]
fn session_end_cancels_its_own_sessions_background_handlers_as_claude_code_does() {
    let env = TestEnv::new();
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    // Each appends to the marker named after its session and kind: how it ended.
    let worker = |kind: &str, on_term: &str| {
        format!(
            "s=$(sed -n 's/.*\"session_id\":\"\\([^\"]*\\)\".*/\\1/p'); f='{marks}/'\"$s\"'-{kind}'; \
             trap '{on_term}' TERM; {declare} \
             for i in $(seq 30); do sleep 0.1; done; echo done >> \"$f\"",
            marks = marks.display(),
            declare = if kind == "declared" {
                "echo '{\"async\": true}';"
            } else {
                ""
            },
        )
    };
    let cancelled = |kind: &str| worker(kind, "echo cancelled >> \"$f\"; exit 143");
    env.plugin(
        &env.user_hooks_dir(),
        "late",
        &json!({"hooks": {
            "PostToolUse": [{"hooks": [
                {"type": "command", "async": true, "command": cancelled("configured")},
                command(&cancelled("declared")),
                {"type": "command", "async": true, "command": worker("stubborn", "echo refused >> \"$f\"")},
            ]}],
            // What the session's own SessionEnd handler finds: the cancelled handlers' traps ran.
            "SessionEnd": [{"hooks": [command(&format!(
                "cat '{m}'/s1-configured '{m}'/s1-declared > '{m}'/end-saw 2>&1",
                m = marks.display()
            ))]}],
        }}),
    );
    let post = |session: &str| json!({"hook_event_name": "PostToolUse", "session_id": session, "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}});
    for session in ["s1", "s2"] {
        let (output, _) = env.run_hooks(&["post-tool-use"], &post(session), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    std::thread::sleep(Duration::from_millis(300));
    let end = json!({"hook_event_name": "SessionEnd", "session_id": "s1", "reason": "other"});
    let (output, elapsed) = env.run_hooks(&["session-end"], &end, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    assert!(
        elapsed < Duration::from_millis(1000),
        "SessionEnd waited for the SIGKILL: {elapsed:?}"
    );
    // Long enough for every handler to have finished its 3 s, had it been left running.
    std::thread::sleep(Duration::from_millis(3500));
    let marker = |name: &str| std::fs::read_to_string(marks.join(name)).unwrap_or_default();
    assert_eq!(marker("end-saw"), "cancelled\ncancelled\n");
    assert_eq!(marker("s1-configured"), "cancelled\n");
    assert_eq!(marker("s1-declared"), "cancelled\n");
    assert_eq!(marker("s1-stubborn"), "refused\n", "killed 1.5 s after");
    for kind in ["configured", "declared", "stubborn"] {
        assert_eq!(
            marker(&format!("s2-{kind}")),
            "done\n",
            "the other session's"
        );
    }
}

#[test]
fn a_long_output_is_kept_as_claude_code_keeps_it_and_capped_under_other_hosts() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "chatty",
        &one_group(
            "UserPromptSubmit",
            None,
            vec![command("head -c 15000 /dev/zero | tr '\\0' 'y'")],
        ),
    );
    // Claude Code: the output over 10,000 characters is saved whole beside the session's
    // transcript and shown as Claude Code shows it (plain text here, which it labels itself).
    let transcript = env.root().join("transcripts/s.jsonl");
    env.write(&transcript, "");
    let (output, _) = env.run_hooks(
        &["user-prompt-submit"],
        &json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi",
                "transcript_path": transcript}),
        &[],
    );
    let shown = stdout(&output);
    assert!(
        shown.starts_with("<persisted-output>\nOutput too large (14.6KB). Full output saved to: ")
            && shown.contains("\n\nPreview (first 2KB):\n")
            && shown.trim_end().ends_with("\n...\n</persisted-output>"),
        "{shown}"
    );
    let path = shown
        .split("saved to: ")
        .nth(1)
        .and_then(|s| s.split('\n').next())
        .expect("path named");
    assert!(
        path.starts_with(
            &env.root()
                .join("transcripts/s/tool-results/")
                .display()
                .to_string()
        ),
        "{path}"
    );
    assert_eq!(env.read(std::path::Path::new(path)), "y".repeat(15_000));

    // Another host (Qwen): the total is capped at 10,000 characters, the rest in a file.
    let (output, _) = env.run_hooks(
        &["user-prompt-submit", "--host", "qwen"],
        &json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi"}),
        &[],
    );
    let context = reply_of(&output)["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
        .expect("context");
    assert!(
        context.chars().count() <= 10_000,
        "{}",
        context.chars().count()
    );
    let path = context
        .rsplit(" are in ")
        .next()
        .and_then(|p| p.strip_suffix(']'))
        .expect("path named");
    assert!(
        env.read(std::path::Path::new(path))
            .contains(&"y".repeat(15_000))
    );
}

#[test]
fn every_run_is_audited() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "denier",
        &one_group("PreToolUse", None, vec![command("echo no >&2; exit 2")]),
    );
    let mut event = bash_event(&env, "ls");
    event["agent_id"] = json!("agent-7");
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    env.run_hooks(&["pre-tool-use"], &event, &[("TRACEPARENT", traceparent)]);
    let record = env.audit_log().pop().expect("one line");
    assert_eq!(record["event"], "PreToolUse");
    assert_eq!(record["plugin"], "user:denier");
    assert_eq!(record["exit"], 2);
    assert_eq!(record["decision"], "deny");
    assert_eq!(record["session"], "sess-1");
    assert!(record["duration_ms"].as_f64().is_some() && record["time"].is_string());
    // What a fleet's pipeline keys on, where the host sent it.
    assert_eq!(record["tool_name"], "Bash");
    assert_eq!(record["tool_use_id"], "t1");
    assert_eq!(record["agent_id"], "agent-7");
    assert_eq!(record["cwd"], json!(env.project));
    assert_eq!(record["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(record["span_id"], "00f067aa0ba902b7");
    // No TRACEPARENT, or a malformed one: no trace ids; a Stop has no tool.
    env.run_hooks(
        &["pre-tool-use"],
        &bash_event(&env, "ls"),
        &[("TRACEPARENT", "00-zz")],
    );
    let record = env.audit_log().pop().expect("a second line");
    assert!(
        record.get("trace_id").is_none() && record.get("agent_id").is_none(),
        "{record}"
    );
    assert_eq!(record["tool_name"], "Bash");
}

/// Under Claude Code the forwarder runs the user and project levels; under Amplifier the bridge
/// already runs the project's directory, so the forwarder runs only the user level. Either way each
/// plugin runs once. (The real composition with the bridge is in amplifier_kernel_e2e.)
#[test]
fn each_plugin_runs_once_per_event_under_either_host() {
    for (host_args, bridge_env, want) in [
        (&["user-prompt-submit"][..], false, vec!["project", "user"]),
        (
            &["user-prompt-submit", "--host", "amplifier"][..],
            true,
            vec!["user"],
        ),
    ] {
        let env = TestEnv::new();
        env.plugin(
            &env.user_hooks_dir(),
            "u",
            &one_group(
                "UserPromptSubmit",
                None,
                vec![command(&env.mark("ran", "user"))],
            ),
        );
        env.plugin(
            &env.project_hooks_dir(),
            "p",
            &one_group(
                "UserPromptSubmit",
                None,
                vec![command(&env.mark("ran", "project"))],
            ),
        );
        assert!(env.run_amplihack(&["hooks", "trust"]).status.success());
        let hooks_dir = env.project_hooks_dir().display().to_string();
        let project = env.project.display().to_string();
        let extra: Vec<(&str, &str)> = if bridge_env {
            vec![
                ("AMPLIFIER_HOOKS_DIR", &hooks_dir),
                ("AMPLIFIER_PROJECT_DIR", &project),
                ("AMPLIFIER_SESSION_ID", "S"),
            ]
        } else {
            vec![]
        };
        let payload =
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi"});
        env.run_hooks(host_args, &payload, &extra);
        let mut ran = env.marks("ran");
        ran.sort();
        assert_eq!(ran, want, "{host_args:?}");
    }
}

/// Several sessions at once: every audit line stays whole.
#[test]
fn the_audit_log_is_safe_under_concurrent_sessions() {
    let env = TestEnv::new();
    for i in 0..4 {
        env.plugin(
            &env.user_hooks_dir(),
            &format!("p{i}"),
            &one_group(
                "PreToolUse",
                None,
                vec![command(&format!("echo {i} >/dev/null"))],
            ),
        );
    }
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut cmd = env.hooks(&["pre-tool-use"]);
            cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
            let mut child = cmd.spawn().expect("spawn");
            let event = json!({"hook_event_name": "PreToolUse", "session_id": format!("s{i}"), "tool_name": "Bash", "tool_input": {"command": "ls"}});
            std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), event.to_string().as_bytes()).expect("write");
            drop(child.stdin.take());
            child
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("wait").success());
    }
    let lines = env.audit_log();
    assert_eq!(
        lines.len(),
        32,
        "8 sessions × 4 plugins, each line whole JSON"
    );
}

/// A plugin that blocks every Stop cannot trap the session: after the cap of consecutive blocks
/// (`stop_hook_active` true) the stop goes through and the user is told why.
#[test]
fn the_stop_loop_guard_lets_the_stop_through_after_the_cap() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "nag",
        &one_group(
            "Stop",
            None,
            vec![command(&format!(
                "echo '{}'",
                json!({"decision": "block", "reason": "one more thing"})
            ))],
        ),
    );
    let stop = |active: bool| json!({"hook_event_name": "Stop", "session_id": "loop", "stop_hook_active": active});
    let cap = [("AMPLIHACK_STOP_BLOCK_CAP", "3")];
    let mut decisions = Vec::new();
    for active in [false, true, true, true, false] {
        let (output, _) = env.run_hooks(&["stop"], &stop(active), &cap);
        let reply = reply_of(&output);
        decisions.push(
            reply["decision"]
                .as_str()
                .unwrap_or("let through")
                .to_string(),
        );
        if decisions.len() == 4 {
            assert!(
                reply["systemMessage"]
                    .as_str()
                    .is_some_and(|m| m.contains("blocked Stop 3 times in a row")),
                "{reply}"
            );
        }
    }
    // Blocks 1–3 pass, the 4th consecutive one is let through, a fresh stop starts a new streak.
    assert_eq!(
        decisions,
        ["block", "block", "block", "let through", "block"]
    );
}

/// Under Amplifier the payload has no session id (on tool events) and the bridge puts it in
/// `AMPLIFIER_SESSION_ID`: that is the session amplihack uses, for handlers and the audit log.
#[test]
fn under_amplifier_the_session_comes_from_the_environment() {
    let env = TestEnv::new();
    let out = env.root().join("session.txt");
    env.plugin(
        &env.user_hooks_dir(),
        "who",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&format!(
                "echo \"$AMPLIFIER_SESSION_ID\" > '{}'",
                out.display()
            ))],
        ),
    );
    let bridge_dir = env.project_hooks_dir().display().to_string();
    let payload = json!({"tool_name": "", "tool_input": {}, "timestamp": "t"});
    let (output, _) = env.run_hooks(
        &["pre-tool-use"],
        &payload,
        &[
            ("AMPLIFIER_SESSION_ID", "amp-session-7"),
            ("AMPLIFIER_HOOKS_DIR", &bridge_dir),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(env.read(&out).trim(), "amp-session-7");
    assert_eq!(
        env.audit_log().last().map(|r| r["session"].clone()),
        Some(json!("amp-session-7"))
    );
}

/// When the host gives up on amplihack (SIGTERM, SIGHUP, SIGINT), every handler process group
/// it started goes too: no orphans.
#[test]
fn a_stop_signal_takes_every_handler_group_with_it() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let env = TestEnv::new();
        let pids = env.root().join("pids");
        let script = env.script(
            &env.root().join("spawner.sh"),
            &format!(
                "sleep 300 & echo $! >> '{0}'\nsleep 300 & echo $! >> '{0}'\necho $$ >> '{0}'\nwait",
                pids.display()
            ),
        );
        env.plugin(
            &env.user_hooks_dir(),
            "hang",
            &one_group(
                "PreToolUse",
                None,
                vec![command(&script.display().to_string())],
            ),
        );
        let mut child = env
            .hooks(&["pre-tool-use"])
            .env("CLAUDE_PROJECT_DIR", &env.project)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin
                .write_all(
                    env.captured("claude-code-2.1.328/PreToolUse-Bash.json")
                        .as_slice(),
                )
                .expect("write");
        }
        let started = std::time::Instant::now();
        while std::fs::read_to_string(&pids)
            .map(|t| t.lines().count())
            .unwrap_or(0)
            < 3
        {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "handler did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "signal {signal}: fail open");
        let alive = |pid: i32| unsafe { libc::kill(pid, 0) } == 0;
        let started = std::time::Instant::now();
        let ids: Vec<i32> = std::fs::read_to_string(&pids)
            .expect("pids")
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        while ids.iter().any(|p| alive(*p)) && started.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let orphans: Vec<&i32> = ids.iter().filter(|p| alive(**p)).collect();
        assert!(orphans.is_empty(), "signal {signal}: orphans {orphans:?}");
    }
}

/// A `prompt` handler is answered by the host's own model: under Amplifier the binary hands it,
/// `$ARGUMENTS` filled in with the event, to amplihack's module (`modelHandlers`), which asks the
/// session's provider; under Claude Code, which runs its own copy of the handler, nothing of it
/// is in amplihack's answer.
#[test]
fn prompt_handlers_go_to_the_hosts_model() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "guard",
        &one_group(
            "PreToolUse",
            Some("Bash"),
            vec![
                json!({"type": "prompt", "prompt": "Is this safe? $ARGUMENTS", "model": "claude-haiku", "timeout": 12}),
                json!({"type": "prompt", "prompt": "No placeholder here."}),
            ],
        ),
    );
    let event = bash_event(&env, "rm -rf build");
    let (amplifier, _) = env.run_hooks(&["--host", "amplifier", "pre-tool-use"], &event, &[]);
    let questions = reply_of(&amplifier)["modelHandlers"].clone();
    assert_eq!(questions.as_array().map(Vec::len), Some(2), "{questions}");
    let first = questions[0]["prompt"].as_str().unwrap_or_default();
    assert!(first.starts_with("Is this safe? {"), "{first}");
    assert!(
        first.contains("rm -rf build") && !first.contains("$ARGUMENTS"),
        "{first}"
    );
    assert_eq!(questions[0]["model"], "claude-haiku");
    assert_eq!(questions[0]["timeout"], 12.0);
    let second = questions[1]["prompt"].as_str().unwrap_or_default();
    assert!(
        second.starts_with("No placeholder here.\n\n{"),
        "the event is appended: {second}"
    );
    assert_eq!(
        questions[1]["timeout"], 30.0,
        "Claude Code's default for prompt hooks"
    );

    let (claude, _) = env.run_hooks(&["--host", "claude", "pre-tool-use"], &event, &[]);
    assert!(
        !String::from_utf8_lossy(&claude.stdout).contains("Is this safe"),
        "{}",
        stdout(&claude)
    );
}

/// A model-backed handler on an event where Claude Code refuses to run one (a `prompt` on
/// SessionStart: no conversation yet) is not asked under Amplifier either, and amplihack reports
/// it failed to run, in Claude Code's words; a `prompt` on PreToolUse still goes to the model.
#[test]
fn model_handlers_claude_code_refuses_are_reported_not_asked() {
    let env = TestEnv::new();
    let dir = env.user_hooks_dir();
    env.plugin(
        &dir,
        "greeter",
        &one_group(
            "SessionStart",
            None,
            vec![json!({"type": "prompt", "prompt": "Greet? $ARGUMENTS"})],
        ),
    );
    let event = json!({"hook_event_name": "SessionStart", "session_id": "sess-1", "cwd": env.project, "source": "startup"});
    let (output, _) = env.run_hooks(
        &["--host", "amplifier", "session-start"],
        &event,
        &[("AMPLIHACK_VIA_MODULE", "1")],
    );
    assert!(
        reply_of(&output).get("modelHandlers").is_none(),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains(
            "hook from greeter failed to run: prompt-type hooks are not supported for SessionStart events (no conversation context is available)"
        ),
        "{}",
        stderr(&output)
    );
}

/// An `http` handler under Amplifier: the event is POSTed (by a helper run with the app's Python,
/// `$AMPLIHACK_PYTHON`) with its headers, `$VAR` filled in only for `allowedEnvVars`, and the 2xx
/// answer is read as a command's (here a denial); a non-2xx answer is a non-blocking error. Under
/// Claude Code, which POSTs its own copy, amplihack does not.
#[test]
fn http_handlers_post_the_event_under_amplifier() {
    let stub = support::http_stub::HttpStub::start(vec![
        (
            "200 OK",
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "http says no"}}"#,
        ),
        ("500 Internal Server Error", "broken"),
    ]);
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "remote",
        &one_group(
            "PreToolUse",
            Some("Bash"),
            vec![json!({"type": "http", "url": stub.url,
                "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "[${SECRET}]"},
                "allowedEnvVars": ["HOOK_TOKEN"]})],
        ),
    );
    let event = bash_event(&env, "rm -rf build");
    let vars = [
        ("HOOK_TOKEN", "t0k"),
        ("SECRET", "must-not-leak"),
        ("AMPLIHACK_PYTHON", "python3"),
    ];
    let (denied, _) = env.run_hooks(&["--host", "amplifier", "pre-tool-use"], &event, &vars);
    let reply = reply_of(&denied);
    assert_eq!(
        reply["hookResult"]["action"],
        "deny",
        "{reply} {}",
        stderr(&denied)
    );
    assert_eq!(reply["hookResult"]["reason"], "http says no");
    let first = stub.received()[0].clone();
    let lower = first.to_ascii_lowercase();
    assert!(lower.starts_with("post /hook"), "{first}");
    assert!(lower.contains("authorization: bearer t0k"), "{first}");
    assert!(
        lower.contains("x-other: []") && !first.contains("must-not-leak"),
        "{first}"
    );
    assert!(lower.contains("content-type: application/json"), "{first}");
    assert!(
        first.contains("rm -rf build"),
        "the event is the body: {first}"
    );

    // A failed handler lets the call through, and the user is told (Amplifier's user_message).
    let (failed, _) = env.run_hooks(&["--host", "amplifier", "pre-tool-use"], &event, &vars);
    let result = &reply_of(&failed)["hookResult"];
    assert_eq!(result["action"], "continue", "{}", stdout(&failed));
    assert!(
        result["user_message"]
            .as_str()
            .is_some_and(|m| m.contains("hook from remote failed") && m.contains("answered 500")),
        "{}",
        stdout(&failed)
    );
    assert!(
        stderr(&failed).contains("answered 500"),
        "{}",
        stderr(&failed)
    );

    let (claude, _) = env.run_hooks(&["--host", "claude", "pre-tool-use"], &event, &vars);
    assert!(
        !stdout(&claude).contains("http says no"),
        "{}",
        stdout(&claude)
    );
    assert_eq!(stub.received().len(), 2, "Claude Code POSTs its own copy");
}

/// Handlers start with no signal blocked on every spawn path: a lone handler (started the vfork
/// way) and a batch (the first by fork, the last the vfork way). A Python plugin's
/// `signal.alarm` fires, and `kill PID` stops what it started (hostile-repos round 2, finding 7).
#[test]
fn handlers_start_with_no_signal_blocked_on_every_spawn_path() {
    for handlers in [1, 3] {
        let env = TestEnv::new();
        let records: Vec<std::path::PathBuf> = (0..handlers)
            .map(|i| env.root().join(format!("sigblk-{i}")))
            .collect();
        let commands = records
            .iter()
            // `exec`: the handler's own process reads its mask (a shell reading another's
            // status may catch it mid-fork, with its signals blocked for a moment).
            .map(|r| {
                command(&format!(
                    "exec grep SigBlk /proc/self/status > '{}'",
                    r.display()
                ))
            })
            .collect();
        env.plugin(
            &env.user_hooks_dir(),
            "signals",
            &one_group("PreToolUse", None, commands),
        );
        let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        for record in &records {
            let text = std::fs::read_to_string(record).unwrap_or_default();
            assert_eq!(
                text.trim(),
                "SigBlk:\t0000000000000000",
                "{handlers} handler(s): {}",
                record.display()
            );
        }
    }
}

/// Text from a repository or a plugin never acts on the terminal: a file named to erase the lines
/// above it, and a plugin's stderr with escapes, come out written out in `hooks trust`,
/// `hooks list` and the hook binary's own stderr line (hostile-repos round 2, finding 4).
#[test]
fn repository_and_plugin_text_is_printed_with_its_controls_written_out() {
    let env = TestEnv::new();
    let hostile = "zz\r\u{1b}[1A\u{1b}[2K\u{202e}hs.evil";
    let hooks = env.project.join(".amplifier/hooks");
    env.script(&hooks.join("p").join(hostile), "exit 0");
    env.plugin(
        &hooks,
        "p",
        &one_group(
            "PreToolUse",
            None,
            vec![command("printf 'bad \\033[2J\\033[H news\\n' >&2; exit 1")],
        ),
    );
    let outputs = [
        env.run_amplihack(&[
            "hooks",
            "trust",
            "--project",
            &env.project.to_string_lossy(),
        ]),
        env.run_amplihack(&["hooks", "list", "--project", &env.project.to_string_lossy()]),
    ];
    for output in &outputs {
        let text = format!("{}{}", stdout(output), stderr(output));
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{202e}'),
            "{text:?}"
        );
    }
    assert!(
        stdout(&outputs[0]).contains("zz\\r\\e[1A\\e[2K\\u{202e}hs.evil"),
        "{:?}",
        stdout(&outputs[0])
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    let said = stderr(&output);
    assert!(said.contains("bad \\e[2J\\e[H news"), "{said:?}");
    assert!(!said.contains('\u{1b}'), "{said:?}");
}
