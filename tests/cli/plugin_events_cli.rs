//! Every event a plugin uses reaches it under Claude Code: amplihack registers `amplihack-hooks
//! dispatch` on the events the active plugins need beyond its own table, only those the installed
//! Claude Code knows, follows every plugin change, and uninstall removes them.

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, one_group, stderr, stdout};

/// The events holding amplihack's `dispatch` entry in a settings file, in file order.
fn dispatched(settings: &Value) -> Vec<String> {
    support::hook_commands(settings)
        .into_iter()
        .filter(|(_, command)| command.ends_with("dispatch"))
        .map(|(event, _)| event)
        .collect()
}

/// A stand-in `claude` that says its version, as `claude --version` does.
fn fake_claude(env: &TestEnv, version: &str) -> String {
    let path = env.root().join("fake-claude");
    env.script(&path, &format!("echo '{version} (Claude Code)'"));
    path.display().to_string()
}

/// A plugin with one command handler on each event.
fn plugin_on(events: &[&str]) -> Value {
    let mut hooks = serde_json::Map::new();
    for event in events {
        hooks.insert(
            event.to_string(),
            json!([{"hooks": [{"type": "command", "command": "true"}]}]),
        );
    }
    json!({"hooks": hooks})
}

fn amplihack(env: &TestEnv, claude: &str, args: &[&str]) -> std::process::Output {
    let mut command = env.amplihack(args);
    command.env("AMPLIHACK_CLAUDE_BIN", claude);
    let (output, _) = support::run_with_timeout(command, b"", std::time::Duration::from_secs(60));
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    output
}

#[test]
fn plugin_events_are_registered_as_far_as_the_installed_claude_code_knows_them() {
    let events = [
        "PreToolUse",
        "SubagentStop",
        "PermissionRequest",
        "PostToolUseFailure",
        "MessageDisplay",
    ];
    // version, what is registered beyond amplihack's table, what `hooks list` says never arrives
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "2.1.328",
            &[
                "MessageDisplay",
                "PermissionRequest",
                "PostToolUseFailure",
                "SubagentStop",
            ],
            &[],
        ),
        (
            "2.1.120",
            &["PermissionRequest", "PostToolUseFailure", "SubagentStop"],
            &["MessageDisplay"],
        ),
        (
            "2.0.30",
            &["SubagentStop"],
            &["PermissionRequest", "PostToolUseFailure", "MessageDisplay"],
        ),
    ];
    for (version, registered, undelivered) in cases {
        let env = TestEnv::new();
        let claude = fake_claude(&env, version);
        amplihack(&env, &claude, &["install", "--host", "claude"]);
        env.plugin(&env.user_hooks_dir(), "everything", &plugin_on(&events));
        // Written by hand: the next plugin change registers its events.
        amplihack(&env, &claude, &["hooks", "enable", "everything"]);
        let settings = env.read_json(&env.claude_settings_path());
        assert_eq!(dispatched(&settings), registered, "{version}");

        let listed = amplihack(&env, &claude, &["hooks", "list", "--json"]);
        let listed: Value = serde_json::from_slice(&listed.stdout).expect("json");
        let plugin = &listed["plugins"][0];
        let missing: Vec<&str> = plugin["undelivered"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u["event"].as_str())
            .collect();
        assert_eq!(missing, undelivered, "{version}: {plugin}");
        let expected_state = if undelivered.is_empty() {
            "active"
        } else {
            "partial"
        };
        assert_eq!(plugin["state"], expected_state, "{version}: {plugin}");
        for u in plugin["undelivered"].as_array().into_iter().flatten() {
            assert!(
                u["why"].as_str().is_some_and(|w| w.contains(version)),
                "{version}: {u}"
            );
        }
        // `doctor` says the same, per plugin.
        let mut doctor = env.amplihack(&["doctor", "--json"]);
        doctor.env("AMPLIHACK_CLAUDE_BIN", &claude);
        let (doctor, _) =
            support::run_with_timeout(doctor, b"", std::time::Duration::from_secs(60));
        let doctor: Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
        let notes: Vec<&str> = doctor["plugin_notes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for event in undelivered {
            assert!(
                notes
                    .iter()
                    .any(|n| n.starts_with(&format!("plugin everything: {event} never reaches it"))),
                "{version}: {notes:?}"
            );
        }
        assert_eq!(notes.len(), undelivered.len(), "{version}: {notes:?}");
    }
}

#[test]
fn registrations_follow_plugin_changes_and_uninstall_removes_them() {
    let env = TestEnv::new();
    let claude = fake_claude(&env, "2.1.328");
    amplihack(&env, &claude, &["install", "--host", "claude"]);
    let source = env.root().join("src/notifier");
    let mut config = plugin_on(&["Notification", "SubagentStop"]);
    // And a handler Claude Code runs itself: copied into its settings as written.
    let judge = json!({"type": "prompt", "prompt": "JUDGE: may the agent stop? $ARGUMENTS"});
    config["hooks"]["Stop"] = json!([{"hooks": [judge.clone()]}]);
    env.write(&source.join("hooks.json"), &config.to_string());
    let judges = || {
        std::fs::read_to_string(env.claude_settings_path())
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map(|v| {
                v["hooks"]["Stop"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|g| g["hooks"][0] == judge)
                    .count()
            })
            .unwrap_or(0)
    };
    // A file that is gone holds nothing of amplihack's.
    let in_file = |file: &std::path::Path| {
        std::fs::read_to_string(file)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map(|v| dispatched(&v))
            .unwrap_or_default()
    };
    let local_file = env.project.join(".claude/settings.local.json");
    let user = || in_file(&env.claude_settings_path());
    let local = || in_file(&local_file);
    let installed = amplihack(
        &env,
        &claude,
        &["hooks", "install", &source.display().to_string()],
    );
    assert!(
        stdout(&installed).contains("plugin events registered"),
        "{}",
        stdout(&installed)
    );
    assert_eq!(user(), ["Notification", "SubagentStop"]);
    assert_eq!(judges(), 1);
    amplihack(&env, &claude, &["hooks", "disable", "notifier"]);
    assert_eq!(user(), Vec::<String>::new());
    assert_eq!(judges(), 0);
    amplihack(&env, &claude, &["hooks", "enable", "notifier"]);
    assert_eq!(user(), ["Notification", "SubagentStop"]);
    assert_eq!(judges(), 1);

    // A project's plugins: in the project's own (local) scope once trusted, less what the user
    // level already brings; gone again when untrusted.
    env.plugin(
        &env.project_hooks_dir(),
        "asker",
        &plugin_on(&["PermissionRequest", "Notification"]),
    );
    amplihack(&env, &claude, &["hooks", "trust"]);
    assert_eq!(local(), ["PermissionRequest"]);
    amplihack(&env, &claude, &["hooks", "untrust"]);
    assert_eq!(local(), Vec::<String>::new());
    amplihack(&env, &claude, &["hooks", "trust"]);
    assert_eq!(local(), ["PermissionRequest"]);

    // `doctor` counts them as amplihack's, not as drift from the canonical registration.
    let mut doctor = env.amplihack(&["doctor"]);
    doctor.env("AMPLIHACK_CLAUDE_BIN", &claude);
    let (doctor, _) = support::run_with_timeout(doctor, b"", std::time::Duration::from_secs(60));
    let said = format!("{}{}", stdout(&doctor), stderr(&doctor));
    assert!(said.contains("hooks, canonical"), "{said}");
    assert!(!said.contains("not in canonical order"), "{said}");

    // Re-installing amplihack keeps them; uninstalling removes every one.
    amplihack(&env, &claude, &["install", "--host", "claude"]);
    assert_eq!(user(), ["Notification", "SubagentStop"]);
    assert_eq!(judges(), 1);
    amplihack(&env, &claude, &["uninstall", "--host", "claude"]);
    assert_eq!(user(), Vec::<String>::new());
    assert_eq!(judges(), 0);
    assert_eq!(local(), Vec::<String>::new());
}

/// What the plugin-event sync adds to a trusted project's `.claude/settings.local.json` (its
/// `hooks` key, or the whole file) goes again at `uninstall`: the user's bytes come back exactly.
#[test]
fn uninstall_gives_the_projects_local_file_back_byte_for_byte() {
    for before in [
        Some(r#"{"model":"x"}"#),
        Some("{\n  \"hooks\": {},\n  \"model\": \"x\"\n}\n"),
        None,
    ] {
        let env = TestEnv::new();
        let claude = fake_claude(&env, "2.1.328");
        let local_file = env.project.join(".claude/settings.local.json");
        if let Some(text) = before {
            env.write(&local_file, text);
        }
        amplihack(&env, &claude, &["install", "--host", "claude"]);
        env.plugin(
            &env.project_hooks_dir(),
            "asker",
            &plugin_on(&["PermissionRequest"]),
        );
        amplihack(&env, &claude, &["hooks", "trust"]);
        let registered = std::fs::read_to_string(&local_file).expect("registered");
        assert!(registered.contains("dispatch"), "{before:?}: {registered}");
        amplihack(&env, &claude, &["uninstall", "--host", "claude"]);
        assert_eq!(
            std::fs::read_to_string(&local_file).ok().as_deref(),
            before,
            "{before:?}"
        );
    }
}

/// At session start the hook binary repairs them with the version Claude Code gives hooks
/// (`AI_AGENT`), without running `claude`: a plugin copied in by hand is served from its first
/// session on.
#[test]
fn session_start_registers_what_a_hand_copied_plugin_needs() {
    let env = TestEnv::new();
    let claude = fake_claude(&env, "2.1.328");
    amplihack(&env, &claude, &["install", "--host", "claude"]);
    env.plugin(
        &env.user_hooks_dir(),
        "copied",
        &one_group("SubagentStart", None, vec![support::command("true")]),
    );
    assert_eq!(
        dispatched(&env.read_json(&env.claude_settings_path())),
        Vec::<String>::new()
    );
    let (output, _) = env.run_hooks(
        &["session-start"],
        &json!({"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup", "cwd": env.project}),
        &[("AI_AGENT", "claude-code_2-1-328_harness")],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        dispatched(&env.read_json(&env.claude_settings_path())),
        ["SubagentStart"]
    );
    assert!(
        stdout(&output).contains("plugin events registered")
            && stdout(&output)
                .contains("SubagentStart reach your plugins from the next Claude Code session"),
        "{}",
        stdout(&output)
    );
    // That session read its hooks before: `hooks list` says the event starts with the next one,
    // and stops saying so once a session started with it registered.
    let listed = |env: &TestEnv| stdout(&amplihack(env, &claude, &["hooks", "list"]));
    let said = listed(&env);
    assert!(
        said.contains("SubagentStart: registered from the next session"),
        "{said}"
    );
    let (output, _) = env.run_hooks(
        &["session-start"],
        &json!({"hook_event_name": "SessionStart", "session_id": "s2", "source": "startup", "cwd": env.project}),
        &[("AI_AGENT", "claude-code_2-1-328_harness")],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let said = listed(&env);
    assert!(!said.contains("from the next session"), "{said}");
}

/// After an install for Amplifier only, `hooks list` and `doctor` weigh Amplifier's delivery: an
/// event amplihack's module delivers (a kernel event with a Claude Code counterpart) reaches the
/// plugin, one with no kernel event never does, and an `mcp_tool` handler runs nowhere. With both
/// hosts installed, only what neither delivers is named, with each host's reason.
#[test]
fn under_amplifier_alone_list_and_doctor_name_what_no_kernel_event_delivers() {
    let env = TestEnv::new();
    let claude = fake_claude(&env, "2.1.328");
    amplihack(&env, &claude, &["install", "--host", "amplifier"]);
    let mut config = plugin_on(&[
        "PreToolUse",
        "PostToolUseFailure",
        "SubagentStart",
        "PostToolBatch",
    ]);
    config["hooks"]["PreToolUse"][0]["hooks"]
        .as_array_mut()
        .expect("hooks")
        .push(json!({"type": "mcp_tool", "server": "s", "tool": "t"}));
    env.write(
        &env.user_hooks_dir().join("everything/hooks.json"),
        &config.to_string(),
    );
    let list = amplihack(&env, &claude, &["hooks", "list", "--json"]);
    let list: Value = serde_json::from_slice(&list.stdout).expect("list json");
    let plugin = &list["plugins"][0];
    assert_eq!(plugin["state"], "partial", "{plugin}");
    assert_eq!(
        plugin["undelivered"],
        json!([{"event": "PostToolBatch", "why": "Amplifier has no kernel event for it"}]),
        "{plugin}"
    );
    assert!(
        plugin["not_run"][0]
            .as_str()
            .is_some_and(|n| n.starts_with("mcp_tool")),
        "{plugin}"
    );
    let doctor = amplihack(&env, &claude, &["doctor", "--json"]);
    let doctor: Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
    let notes = doctor["plugin_notes"].to_string();
    assert!(
        notes.contains("plugin everything: PostToolBatch never reaches it: Amplifier has no kernel event for it"),
        "{notes}"
    );

    // Both hosts: Claude Code delivers PostToolBatch, so nothing is left undelivered.
    amplihack(&env, &claude, &["install", "--host", "claude"]);
    let list = amplihack(&env, &claude, &["hooks", "list", "--json"]);
    let list: Value = serde_json::from_slice(&list.stdout).expect("list json");
    assert_eq!(
        list["plugins"][0]["undelivered"],
        json!([]),
        "{}",
        list["plugins"][0]
    );
}
