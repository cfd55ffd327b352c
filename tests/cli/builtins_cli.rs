//! The built-ins through the real `amplihack-hooks` binary, one behaviour per test, in a
//! temporary home and project.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use support::{TestEnv, stderr, stdout};

fn reply(output: &std::process::Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    if output.stdout.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&output.stdout).expect("reply is JSON")
}

fn start(env: &TestEnv, session: &str, source: &str) -> Value {
    let (output, _) = env.run_hooks(
        &["session-start"],
        &json!({"hook_event_name": "SessionStart", "session_id": session, "cwd": env.project, "source": source}),
        &[],
    );
    reply(&output)
}

#[test]
fn session_start_injects_project_preferences_and_discoveries_within_the_limit() {
    let env = TestEnv::new();
    let context_dir = env.project.join(".claude/context");
    env.write(
        &context_dir.join("PROJECT.md"),
        &"Project line. ".repeat(2_000),
    );
    env.write(
        &env.home
            .join(".amplihack/.claude/context/USER_PREFERENCES.md"),
        "### Verbosity\nuser-level-prefs\n",
    );
    let mut discoveries = String::new();
    for day in 1..=30 {
        discoveries.push_str(&format!(
            "## Finding {day} (2026-03-{day:02})\n{}\n\n",
            "x".repeat(150)
        ));
    }
    env.write(&context_dir.join("DISCOVERIES.md"), &discoveries);
    let answer = start(&env, "s1", "startup");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(context.contains("Project line."));
    assert!(
        context.contains("truncated to 4000 characters"),
        "visible marker"
    );
    assert!(
        context.contains("user-level-prefs"),
        "user-level preferences found"
    );
    assert!(
        context.contains("## Finding 30 (2026-03-30)"),
        "newest discovery first"
    );
    assert!(context.contains("older entries in .claude/context/DISCOVERIES.md"));
    assert!(
        context.chars().count() < 9_000,
        "{} characters",
        context.chars().count()
    );
}

#[test]
fn after_a_compaction_the_context_comes_back_with_the_transcript_copy() {
    let env = TestEnv::new();
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "Compaction marker project.",
    );
    let transcript = env.root().join("transcript.jsonl");
    env.write(
        &transcript,
        "{\"type\":\"user\"}\n{\"type\":\"assistant\"}\n",
    );
    let payload = json!({"hook_event_name": "PreCompact", "session_id": "s2", "cwd": env.project,
                         "transcript_path": transcript, "trigger": "auto", "custom_instructions": ""});
    for _ in 0..2 {
        let (output, _) = env.run_hooks(&["pre-compact"], &payload, &[]);
        assert_eq!(reply(&output), Value::Null, "pre-compact answers nothing");
    }
    let logs = env.project.join(".claude/runtime/logs/s2");
    let copies: Vec<_> = std::fs::read_dir(&logs)
        .expect("logs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("transcript-"))
        .collect();
    assert_eq!(copies.len(), 2, "each compaction kept: {copies:?}");
    for copy in &copies {
        let mode = std::fs::metadata(copy).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a transcript is private");
    }
    let metadata = std::fs::read_to_string(logs.join("compaction_metadata.jsonl")).expect("meta");
    assert_eq!(metadata.lines().count(), 2);
    assert!(metadata.contains("\"trigger\":\"auto\""), "{metadata}");
    assert!(metadata.contains("\"lines\":2"), "{metadata}");

    let context = start(&env, "s2", "compact")["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
        .expect("context");
    assert!(context.contains("Compaction marker project."));
    assert!(context.contains("just compacted"), "{context}");
    assert!(context.contains(&logs.display().to_string()), "{context}");
}

#[test]
fn a_version_other_than_the_deployed_one_is_reported_once_per_session() {
    let env = TestEnv::new();
    env.write(
        &env.home.join(".local/state/amplihack/install.json"),
        &json!({"version": "0.0.1", "registrations": []}).to_string(),
    );
    let first = start(&env, "v1", "startup");
    let message = first["systemMessage"].as_str().expect("told");
    assert!(message.contains("deployed 0.0.1"), "{message}");
    assert!(message.contains("amplihack install"), "{message}");
    assert!(
        start(&env, "v1", "resume").get("systemMessage").is_none(),
        "once per session"
    );
    assert!(
        start(&env, "v2", "startup")["systemMessage"].is_string(),
        "again next session"
    );
}

#[test]
fn stale_registrations_are_repaired_at_session_start_and_the_user_is_told() {
    let env = TestEnv::new();
    let settings = env.claude_settings_path();
    env.write(
        &settings,
        &serde_json::to_string_pretty(&json!({"model": "opus", "hooks": {
            "PreToolUse": [
                {"matcher": "*", "hooks": [{"type": "command", "command": "python3 ~/.claude/tools/amplihack/hooks/pre_tool_use.py"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-own-check"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "/gone/bin/amplihack-hooks stop", "timeout": 120}]}]
        }}))
        .expect("json"),
    );
    let answer = start(&env, "r1", "startup");
    let message = answer["systemMessage"].as_str().expect("told");
    assert!(message.contains("legacy Python hooks"), "{message}");
    assert!(
        message.contains("/gone/bin/amplihack-hooks no longer exists"),
        "{message}"
    );
    let repaired = env.read_json(&settings);
    let commands = support::hook_commands(&repaired);
    let running = support::hooks_bin().display().to_string();
    assert!(
        commands
            .iter()
            .filter(|(_, c)| c.contains("amplihack-hooks"))
            .all(|(_, c)| c.contains(&running)),
        "{commands:?}"
    );
    assert!(
        commands.iter().any(|(_, c)| c == "my-own-check"),
        "the user's hook stays"
    );
    assert!(
        !commands.iter().any(|(_, c)| c.contains(".py")),
        "{commands:?}"
    );
    assert_eq!(repaired["model"], "opus");
    assert_eq!(env.backups_of(&settings).len(), 1, "backed up first");
    // At most once per session, and nothing left to repair anyway.
    let before = env.read(&settings);
    assert!(start(&env, "r1", "resume").get("systemMessage").is_none());
    assert!(start(&env, "r2", "startup").get("systemMessage").is_none());
    assert_eq!(env.read(&settings), before);
}

#[test]
fn lock_mode_from_the_terminal_and_its_expiry() {
    let env = TestEnv::new();
    let stop = json!({"hook_event_name": "Stop", "session_id": "l1", "cwd": env.project, "stop_hook_active": false});
    assert_eq!(
        reply(&env.run_hooks(&["stop"], &stop, &[]).0),
        Value::Null,
        "off: never blocks"
    );
    let on = env.run_amplihack(&["lock", "--message", "Finish the migration"]);
    assert!(on.status.success(), "{}", stderr(&on));
    let status = stdout(&env.run_amplihack(&["lock", "--status"]));
    assert!(
        status.contains("lock mode is on") && status.contains("Finish the migration"),
        "{status}"
    );
    let blocked = reply(&env.run_hooks(&["stop"], &stop, &[]).0);
    assert_eq!(blocked["decision"], "block");
    assert!(
        blocked["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("Finish the migration"))
    );

    // The lock is amplihack's record in its state directory, not a file in the work tree.
    assert!(!env.project.join(".claude/runtime/locks").exists());
    // A lock older than its time to live (24 h) expires, and the user is told.
    let records: Vec<_> = std::fs::read_dir(env.home.join(".local/state/amplihack/lock-mode"))
        .expect("lock records")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let mut record: Value = serde_json::from_str(&env.read(&records[0])).expect("json");
    record["locked_at"] = json!("2020-01-01T00:00:00.000Z");
    env.write(&records[0], &record.to_string());
    let expired = reply(&env.run_hooks(&["stop"], &stop, &[]).0);
    assert!(expired.get("decision").is_none(), "{expired}");
    assert!(
        expired["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("expired")),
        "{expired}"
    );
    let off = stdout(&env.run_amplihack(&["lock", "--status"]));
    assert!(off.contains("lock mode is off"), "{off}");
    let unlock = stdout(&env.run_amplihack(&["unlock"]));
    assert!(unlock.contains("was not on"), "{unlock}");
}

#[test]
fn memory_add_list_show_forget() {
    let env = TestEnv::new();
    let added: Value = serde_json::from_str(&stdout(&env.run_amplihack(&[
        "memory",
        "add",
        "--agent",
        "builder",
        "Use the fast linker",
        "--json",
    ])))
    .expect("json");
    let id = added["id"].as_str().expect("id").to_string();
    let listed = stdout(&env.run_amplihack(&["memory", "list"]));
    assert!(
        listed.contains(&id)
            && listed.contains("builder")
            && listed.contains("Use the fast linker"),
        "{listed}"
    );
    let shown = stdout(&env.run_amplihack(&["memory", "show", &id[..6]]));
    assert!(shown.contains("agent:   builder"), "{shown}");
    let gone = env.run_amplihack(&["memory", "forget", &id]);
    assert!(gone.status.success(), "{}", stderr(&gone));
    let missing = env.run_amplihack(&["memory", "show", &id]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no memory entry"),
        "{}",
        stderr(&missing)
    );
    let empty = env.run_amplihack(&["memory", "add", "  "]);
    assert_eq!(empty.status.code(), Some(1));
    // The store is private.
    let dir = env.home.join(".local/state/amplihack/memory");
    let mode = std::fs::metadata(&dir).expect("dir").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn built_ins_can_be_turned_off_and_a_typo_gets_a_suggestion() {
    let env = TestEnv::new();
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "d1", "cwd": env.project, "prompt": "implement the cache"});
    let on = reply(
        &env.run_hooks(&["workflow-classification-reminder"], &prompt, &[])
            .0,
    );
    assert!(on.to_string().contains("opens a new topic"));
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "d2", "cwd": env.project, "prompt": "implement the cache"});
    let off = reply(
        &env.run_hooks(
            &["workflow-classification-reminder"],
            &prompt,
            &[("AMPLIHACK_DISABLE", "metrics, workflow-reminder")],
        )
        .0,
    );
    assert_eq!(off, Value::Null);
    let (typo, _) = env.run_hooks(&["pre-tool-us"], &json!({}), &[]);
    assert_eq!(typo.status.code(), Some(1));
    assert!(
        stderr(&typo).contains("did you mean `pre-tool-use`?"),
        "{}",
        stderr(&typo)
    );
}

#[test]
fn session_state_is_private_whatever_the_umask() {
    let env = TestEnv::new();
    let script = "umask 000; exec \"$@\"";
    let mut wrapped = env.command(std::path::Path::new("/bin/sh"));
    wrapped
        .args([
            "-c",
            script,
            "sh",
            &support::hooks_bin().display().to_string(),
            "workflow-classification-reminder",
        ])
        .env("CLAUDE_PROJECT_DIR", &env.project);
    let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "p1", "prompt": "hello there friend"});
    let (output, _) = support::run_with_timeout(
        wrapped,
        payload.to_string().as_bytes(),
        std::time::Duration::from_secs(30),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let state = env.home.join(".local/state/amplihack");
    for (path, want) in [
        (state.clone(), 0o700),
        (state.join("sessions"), 0o700),
        (state.join("sessions/p1.json"), 0o600),
    ] {
        let mode = std::fs::metadata(&path)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, want, "{}", path.display());
    }
}

/// amplihack's specification: SessionStart, UserPromptSubmit and SessionStop need nothing beyond
/// the event's name, PostToolUse's `tool_response` is optional; and the predecessor's subcommand
/// names (which its registrations still call) run the rows they became.
#[test]
fn the_specified_contract_and_the_predecessors_subcommands_are_accepted() {
    let env = TestEnv::new();
    let cases: &[(&[&str], Value)] = &[
        (
            &["session-start"],
            json!({"hook_event_name": "SessionStart"}),
        ),
        (
            &["user-prompt-submit"],
            json!({"hook_event_name": "UserPromptSubmit"}),
        ),
        (
            &["post-tool-use"],
            json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}),
        ),
        (&["session-end"], json!({"hook_event_name": "SessionStop"})),
        (
            &["dispatch"],
            json!({"hook_event_name": "SessionStop", "session_id": "s"}),
        ),
        (
            &["session-stop-event"],
            json!({"hook_event_name": "SessionEnd", "session_id": "s"}),
        ),
        (&["session-stop"], json!({"session_id": "s"})),
        (&["sessionEnd"], json!({"session_id": "s"})),
        (&["user-prompt"], json!({"prompt": "hello"})),
        (&["agentStop"], json!({"hook_event_name": "Stop"})),
        (&["precommit-prefs"], json!({"anything": true})),
    ];
    for (args, payload) in cases {
        let (output, _) = env.run_hooks(args, payload, &[]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?} {payload}: {}",
            stderr(&output)
        );
        assert_eq!(stderr(&output), "", "{args:?} {payload}");
    }
    // A known event missing a required field is still invalid input, exit 1, named.
    let (output, _) = env.run_hooks(
        &["post-tool-use"],
        &json!({"hook_event_name": "PostToolUse", "tool_name": "Bash"}),
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("PostToolUse event is missing the required field `tool_input`")
    );
    // `SessionStop` finishes the session record, as SessionEnd does, and a plugin on SessionEnd
    // gets it under Claude Code's name.
    let seen = env.root().join("seen.json");
    env.plugin(
        &env.user_hooks_dir(),
        "on-end",
        &support::one_group(
            "SessionEnd",
            None,
            vec![support::command(&format!("cat > '{}'", seen.display()))],
        ),
    );
    start(&env, "ended", "startup");
    let (output, _) = env.run_hooks(
        &["session-stop-event"],
        &json!({"hook_event_name": "SessionStop", "session_id": "ended"}),
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let record =
        std::fs::read_to_string(env.home.join(".local/state/amplihack/sessions/ended.json"))
            .unwrap_or_default();
    assert!(record.contains("\"ended\""), "session record: {record}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap_or_default())
        .expect("the plugin got the event");
    assert_eq!(seen["hook_event_name"], "SessionEnd");
    assert_eq!(seen["session_id"], "ended");
}

/// After tool calls in a git work tree, `git status` shows nothing of amplihack's.
#[test]
fn metrics_in_a_git_work_tree_never_show_in_git_status() {
    let env = TestEnv::new();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&env.project)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    let (output, _) = env.run_hooks(
        &["post-tool-use"],
        &serde_json::from_slice(&env.captured("claude-code-2.1.328/PostToolUse-Bash.json"))
            .expect("fixture"),
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        env.project
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl")
            .exists()
    );
    assert_eq!(git(&["status", "--porcelain", "--untracked-files=all"]), "");
}

/// amplihack's own damaged records (a session file that is not UTF-8, a trust or manifest file
/// that is not JSON) are set aside and reported once, not on every prompt.
#[test]
fn damaged_state_is_reported_once_and_replaced() {
    let env = TestEnv::new();
    let state = env.home.join(".local/state/amplihack");
    let session = state.join("sessions/s1.json");
    env.write(&state.join("trust.json"), "{ not json");
    env.write(&state.join("install.json"), "{ broken");
    std::fs::create_dir_all(session.parent().expect("dir")).expect("mkdir");
    std::fs::write(&session, b"{\"prompts\": \"\xff\xfe\"}").expect("write");
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "hello there, please fix the bug", "cwd": env.project});
    // A project plugin makes the call read trust.json.
    env.plugin(
        &env.project_hooks_dir(),
        "p",
        &support::one_group("UserPromptSubmit", None, vec![support::command("true")]),
    );
    let (first, _) = env.run_hooks(&["user-prompt-submit"], &prompt, &[]);
    assert_eq!(first.status.code(), Some(0));
    let said = stderr(&first);
    for file in ["sessions/s1.json", "trust.json"] {
        let path = state.join(file);
        assert!(
            said.contains(&format!("{} was damaged", path.display())),
            "{file}: {said}"
        );
        assert!(
            std::fs::metadata(format!("{}.damaged", path.display())).is_ok(),
            "{file} kept aside"
        );
    }
    let log = std::fs::read_to_string(env.log_file()).unwrap_or_default();
    assert_eq!(log.matches("was damaged").count(), 2, "{log}");
    let (second, _) = env.run_hooks(&["user-prompt-submit"], &prompt, &[]);
    assert!(second.status.success());
    assert!(!stderr(&second).contains("damaged"), "{}", stderr(&second));
    // The installer says it once too.
    let doctor = env.run_amplihack(&["doctor"]);
    assert!(
        stderr(&doctor).contains("install.json was damaged"),
        "{}",
        stderr(&doctor)
    );
    let again = env.run_amplihack(&["doctor"]);
    assert!(!stderr(&again).contains("damaged"), "{}", stderr(&again));
}

/// `--standby` (how amplihack's Amplifier module keeps a process started ahead of the next tool
/// event): the deadline counts from the event's arrival, not from the start, and a standby whose
/// event never comes (stdin closed empty) leaves without a word: no output, no failure logged.
#[test]
fn a_standby_waits_for_its_event_and_leaves_quietly_without_one() {
    use std::io::Write;
    use std::process::Stdio;
    let env = TestEnv::new();
    let start = || {
        let mut command = env.hooks(&["--host", "amplifier", "--standby", "pre-tool-use"]);
        command
            .env("CLAUDE_PROJECT_DIR", &env.project)
            .env("AMPLIHACK_HOOK_DEADLINE_MS", "300")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().expect("spawn")
    };
    // Idle three times as long as its deadline, then the event: answered, not timed out.
    let mut waiting = start();
    std::thread::sleep(std::time::Duration::from_millis(900));
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "S", "cwd": env.project,
        "tool_name": "bash", "tool_input": {"command": "git commit --no-verify -m x"}});
    let mut stdin = waiting.stdin.take().expect("stdin");
    stdin
        .write_all(event.to_string().as_bytes())
        .expect("write the event");
    drop(stdin);
    let output = waiting.wait_with_output().expect("wait");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("--no-verify"),
        "the guard answered: {}; {}",
        stdout(&output),
        stderr(&output)
    );
    assert!(!stderr(&output).contains("deadline"), "{}", stderr(&output));

    // Its event never comes: quiet exit 0.
    let mut unused = start();
    drop(unused.stdin.take());
    let output = unused.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        (stdout(&output), stderr(&output)),
        (String::new(), String::new())
    );
    assert!(!env.log_file().exists(), "nothing logged");

    // Without --standby, a closed empty stdin is still invalid input (exit 1), as documented.
    let (output, _) = support::run_with_timeout(
        env.hooks(&["--host", "amplifier", "pre-tool-use"]),
        b"",
        std::time::Duration::from_secs(30),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
}

/// Hostile-repos finding 10: 20,000 nested `$(` (160 KB) overflowed the stack (exit 134, no
/// failure log) after 26 s. The guard now reads it once, stops at its nesting bound and refuses
/// it; the binary exits 0 quickly whatever the shape.
#[test]
fn a_deeply_nested_command_is_refused_quickly_and_never_crashes() {
    let env = TestEnv::new();
    let nested = |depth: usize| format!("echo {}x{}", "$(echo ".repeat(depth), ")".repeat(depth));
    let shapes = [
        ("20,000 nested $( (160 KB)", nested(20_000), true),
        ("100,000 nested $( (800 KB)", nested(100_000), true),
        (
            "20,000 nested ${ (160 KB)",
            format!("echo {}x{}", "${X:-".repeat(20_000), "}".repeat(20_000)),
            true,
        ),
        ("1 MB flat command", "echo a; ".repeat(128 << 10), false),
    ];
    for (name, command, denied) in shapes {
        let event = json!({"hook_event_name": "PreToolUse", "session_id": "S", "cwd": env.project,
            "tool_name": "Bash", "tool_input": {"command": command}});
        let (output, took) = env.run_hooks(&["pre-tool-use"], &event, &[]);
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        // Debug build, shared machine: generous. Before the fix this shape took 26 s or crashed.
        assert!(
            took < std::time::Duration::from_secs(5),
            "{name}: took {took:?}"
        );
        let decision = reply(&output)["hookSpecificOutput"]["permissionDecision"].clone();
        if denied {
            assert_eq!(decision, "deny", "{name}: {}", stdout(&output));
            let reason =
                reply(&output)["hookSpecificOutput"]["permissionDecisionReason"].to_string();
            assert!(
                reason.contains("deeper than the Bash guard reads"),
                "{name}: {reason}"
            );
        } else {
            assert_eq!(decision, Value::Null, "{name}: {}", stdout(&output));
        }
    }
}

/// The end of a turn under a host that ends its sessions starts no records' writer: the record
/// stays pending until SessionEnd (or `amplihack memory`) writes it, so nothing competes with the
/// host at each turn's end. Under a host that never ends a session (opencode), each Stop's
/// writer writes it.
#[test]
fn a_turns_record_waits_for_the_sessions_end_where_one_comes() {
    let pending = |env: &TestEnv| {
        std::fs::read_dir(env.home.join(".local/state/amplihack/pending-records"))
            .map(|d| d.flatten().count())
            .unwrap_or(0)
    };
    let stop = |env: &TestEnv, host: &str, session: &str| {
        let (output, _) = env.run_hooks(
            &["stop", "--host", host],
            &json!({"hook_event_name": "Stop", "session_id": session, "cwd": env.project, "stop_hook_active": false}),
            &[],
        );
        assert!(output.status.success(), "{}", stderr(&output));
    };
    let prompt = |env: &TestEnv, host: &str, session: &str| {
        let (output, _) = env.run_hooks(
            &["user-prompt-submit", "--host", host],
            &json!({"hook_event_name": "UserPromptSubmit", "session_id": session, "cwd": env.project, "prompt": "count the lines"}),
            &[],
        );
        assert!(output.status.success(), "{}", stderr(&output));
    };
    let records = |env: &TestEnv| -> Vec<String> {
        let listed = env.session_memory();
        assert!(listed.status.success(), "{}", stderr(&listed));
        let memory: Value = serde_json::from_str(&stdout(&listed)).expect("json");
        memory["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e["text"].as_str().unwrap_or_default().to_string())
            .collect()
    };

    // Copilot delivers SessionEnd: two turns' Stops leave one pending record, no writer runs.
    let env = TestEnv::new();
    prompt(&env, "copilot", "c1");
    stop(&env, "copilot", "c1");
    stop(&env, "copilot", "c1");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        pending(&env),
        1,
        "the record is pending until the session ends"
    );
    // `amplihack memory` writes it first.
    let texts = records(&env);
    assert_eq!(texts, vec!["First prompt: count the lines".to_string()]);
    assert_eq!(pending(&env), 0);

    // opencode never ends a session: the Stop's own writer writes the record.
    let env = TestEnv::new();
    prompt(&env, "opencode", "o1");
    stop(&env, "opencode", "o1");
    let started = std::time::Instant::now();
    while pending(&env) > 0 && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(pending(&env), 0, "the writer wrote the record");
    assert_eq!(
        records(&env),
        vec!["First prompt: count the lines".to_string()]
    );
}
