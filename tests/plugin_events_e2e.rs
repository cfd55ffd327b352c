//! Every event a plugin uses reaches it through amplihack as it does when Claude Code loads the
//! plugin itself, in the real Claude Code: the same plugin (`tests/fixtures/plugins/event-log`:
//! exec-form handlers that log each event they receive, and a SessionStart handler that puts a
//! directory on PATH through `CLAUDE_ENV_FILE`) natively (`--plugin-dir`) and copied in with
//! `amplihack hooks install`, in the same scripted session: a Bash call, a failing Bash call
//! (PostToolUseFailure), a tool not yet allowed (PermissionRequest), a subagent (SubagentStart and
//! SubagentStop). And with the oldest supported Claude Code (2.0.30), whose settings file must stay
//! loadable: only the events it knows are registered.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::support;
use crate::support::capabilities::{Capability, npm_version, proved};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, stderr};

fn script() -> Vec<Turn> {
    vec![
        Turn::bash("echo PATH-FIRST=\"${PATH%%:*}\""),
        Turn::bash("exit 3"),
        Turn::ToolUse {
            name: "WebFetch".into(),
            input: json!({"url": "http://127.0.0.1:9/nothing", "prompt": "read it"}),
        },
        Turn::ToolUse {
            name: "Agent".into(),
            input: json!({"subagent_type": "general-purpose", "description": "look", "prompt": "say hi"}),
        },
        // The subagent's own turn.
        Turn::text("hi from the subagent"),
        Turn::text("done"),
    ]
}

/// How many times each event reached the plugin.
fn events_seen(project: &Path) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for line in std::fs::read_to_string(project.join("event-log.txt"))
        .unwrap_or_default()
        .lines()
    {
        *seen.entry(line.to_string()).or_insert(0) += 1;
    }
    seen
}

/// What the first Bash call printed: the first PATH entry its shell had.
fn path_first(fake: &FakeAnthropic, project: &Path) -> String {
    let seen = fake.everything_the_model_saw();
    let marker = "PATH-FIRST=";
    // The tool's output (the command itself, also in the requests, has a quote there).
    seen.match_indices(marker)
        .map(|(at, _)| &seen[at + marker.len()..])
        .find(|rest| rest.starts_with('/'))
        .map(|rest| {
            rest.split(['"', '\\'])
                .next()
                .unwrap_or_default()
                .replace(&project.display().to_string(), "<project>")
        })
        .unwrap_or_default()
}

fn install_amplihack(env: &TestEnv, claude: &Path, plugin: &Path) {
    for args in [
        vec!["install", "--host", "claude"],
        vec!["hooks", "install", &plugin.to_string_lossy()],
    ] {
        let mut command = env.amplihack(&args.iter().map(|a| a.as_ref()).collect::<Vec<&str>>());
        command.env("AMPLIHACK_CLAUDE_BIN", claude);
        let (output, _) =
            support::run_with_timeout(command, b"", std::time::Duration::from_secs(120));
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn every_event_reaches_the_plugin_as_natively() {
    let plugin_src = support::repo_root().join("tests/fixtures/plugins/event-log");
    let claude = support::claude_bin();

    let native_env = TestEnv::new();
    let plugin = native_env.root().join("plugins/event-log");
    support::copy_dir(&plugin_src, &plugin);
    let native_fake = FakeAnthropic::start(script());
    native_env.claude_with(
        &native_fake.url,
        &["-p", "go", "--plugin-dir", &plugin.to_string_lossy()],
        &[],
    );
    let native = events_seen(&native_env.project);

    let env = TestEnv::new();
    let plugin = env.root().join("plugins/event-log");
    support::copy_dir(&plugin_src, &plugin);
    install_amplihack(&env, &claude, &plugin);
    let fake = FakeAnthropic::start(script());
    let run = env.claude_with(&fake.url, &["-p", "go"], &[]);
    let forwarded = events_seen(&env.project);

    // The native run is the reference; it must show every event the issue names.
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "SubagentStart",
        "SubagentStop",
        "PostToolBatch",
        "MessageDisplay",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            native.contains_key(event),
            "natively {event} never arrived: {native:?}"
        );
    }
    // The same events; and as many of each where Claude Code itself is deterministic (how many
    // Stop and MessageDisplay a session with a subagent gets varies from run to run natively).
    let keys = |m: &BTreeMap<String, usize>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&forwarded),
        keys(&native),
        "events through amplihack (left) and natively (right): {forwarded:?} / {native:?}"
    );
    // Those of the table's events the native run showed reached the plugin through amplihack.
    proved(
        "claude",
        &npm_version(&claude),
        Capability::Events(vec![
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "PostToolBatch",
            "Stop",
            "SubagentStop",
            "SessionEnd",
        ]),
    );
    for event in [
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "SubagentStart",
        "SubagentStop",
        "SessionEnd",
    ] {
        assert_eq!(
            forwarded.get(event),
            native.get(event),
            "{event}: through amplihack {forwarded:?}, natively {native:?}"
        );
    }
    // CLAUDE_ENV_FILE: the Bash tool's shell had the plugin's directory first on PATH, both ways.
    assert_eq!(
        path_first(&native_fake, &native_env.project),
        "<project>/gh tools"
    );
    assert_eq!(path_first(&fake, &env.project), "<project>/gh tools");
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );
}

/// Claude Code 2.0.30 rejects a whole settings file that names an event it does not know: the
/// registration amplihack writes for it names only events it knows, so amplihack's hooks (and the
/// plugin's events 2.0.30 has) still run; the same file with a PermissionRequest entry (2.0.45+)
/// would have silenced all of them.
#[test]
fn the_oldest_claude_code_keeps_a_loadable_settings_file() {
    let plugin_src = support::repo_root().join("tests/fixtures/plugins/event-log");
    let claude = support::oldest_claude_bin();
    // (add a PermissionRequest entry by hand, does the plugin see SessionStart)
    for (force_unknown, expect_events) in [(false, true), (true, false)] {
        let env = TestEnv::new();
        let plugin = env.root().join("plugins/event-log");
        support::copy_dir(&plugin_src, &plugin);
        install_amplihack(&env, &claude, &plugin);
        let settings = env.read_json(&env.claude_settings_path());
        let registered: Vec<String> = support::hook_commands(&settings)
            .into_iter()
            .filter(|(_, c)| c.ends_with("dispatch"))
            .map(|(e, _)| e)
            .collect();
        assert_eq!(registered, ["Notification", "SubagentStop"], "{settings}");
        if force_unknown {
            let mut settings = settings.clone();
            settings["hooks"]["PermissionRequest"] = settings["hooks"]["SubagentStop"].clone();
            env.write(
                &env.claude_settings_path(),
                &serde_json::to_string_pretty(&settings).expect("json"),
            );
        }
        let fake = FakeAnthropic::start(vec![Turn::bash("echo hi"), Turn::text("done")]);
        env.claude_bin_with(&claude, &fake.url, &["-p", "go"], &[], false);
        let seen = events_seen(&env.project);
        assert_eq!(
            seen.contains_key("SessionStart") && seen.contains_key("PreToolUse"),
            expect_events,
            "PermissionRequest forced in: {force_unknown}; seen: {seen:?}"
        );
        if expect_events {
            proved(
                "claude",
                &npm_version(&claude),
                Capability::Events(vec!["SessionStart", "PreToolUse"]),
            );
        }
    }
}

/// A `prompt` handler runs under amplihack as natively: Claude Code evaluates it with the user's
/// own model access (here the fake Messages API answers the question), because amplihack registers
/// it as Claude Code's own hook entry. The same denial, the turn ended the same way, the question
/// asked once per call both ways; and `hooks list` calls the plugin active.
#[test]
fn a_prompt_handler_is_evaluated_by_claude_code_as_natively() {
    let plugin_src = support::repo_root().join("tests/fixtures/plugins/prompt-guard");
    let claude = support::claude_bin();
    let canned = || {
        vec![(
            "PROMPT-GUARD-QUESTION",
            r#"{"ok": false, "reason": "PROMPT-GUARD: the model says this call may not run"}"#,
        )]
    };
    let script = || vec![Turn::bash("echo guarded"), Turn::text("done")];
    // What one way gave: the denied commands, whether the reason reached the model, how often the
    // model was asked.
    let outcome = |run: &support::ClaudeRun, fake: &FakeAnthropic| {
        let denials: Vec<String> = run.result["permission_denials"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                d["tool_input"]["command"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        let reached = fake
            .everything_the_model_saw()
            .contains("PROMPT-GUARD: the model says this call may not run");
        (denials, reached, fake.canned_requests().len())
    };

    let native_env = TestEnv::new();
    let plugin = native_env.root().join("plugins/prompt-guard");
    support::copy_dir(&plugin_src, &plugin);
    let native_fake = FakeAnthropic::start_with(script(), canned());
    let run = native_env.claude_with(
        &native_fake.url,
        &["-p", "go", "--plugin-dir", &plugin.to_string_lossy()],
        &[],
    );
    let native = outcome(&run, &native_fake);

    let env = TestEnv::new();
    let plugin = env.root().join("plugins/prompt-guard");
    support::copy_dir(&plugin_src, &plugin);
    install_amplihack(&env, &claude, &plugin);
    let fake = FakeAnthropic::start_with(script(), canned());
    let run = env.claude_with(&fake.url, &["-p", "go"], &[]);
    let forwarded = outcome(&run, &fake);

    // Natively: the call is denied and the turn ends (no `continueOnBlock`), so the reason is the
    // user's to read, not the model's; the model was asked once.
    assert_eq!(native, (vec!["echo guarded".to_string()], false, 1));
    assert_eq!(
        forwarded, native,
        "through amplihack (left), natively (right)"
    );

    let mut list = env.amplihack(&["hooks", "list", "--json"]);
    list.env("AMPLIHACK_CLAUDE_BIN", &claude);
    let (list, _) = support::run_with_timeout(list, b"", std::time::Duration::from_secs(60));
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).expect("json");
    assert_eq!(listed["plugins"][0]["state"], "active", "{listed}");
}

/// UserPromptExpansion, which needs a slash command: the user's own command (`~/.claude/commands/`)
/// expanding reaches the plugin through amplihack as natively.
#[test]
fn a_slash_command_expanding_reaches_the_plugin_as_natively() {
    let plugin_src = support::repo_root().join("tests/fixtures/plugins/event-log");
    let claude = support::claude_bin();
    let run = |native: bool| {
        let env = TestEnv::new();
        env.write(
            &env.home.join(".claude/commands/greet.md"),
            "Say hello to the team.\n",
        );
        let plugin = env.root().join("plugins/event-log");
        support::copy_dir(&plugin_src, &plugin);
        let plugin_arg = plugin.to_string_lossy().into_owned();
        let mut args = vec!["-p", "/greet"];
        if native {
            args.extend(["--plugin-dir", plugin_arg.as_str()]);
        } else {
            install_amplihack(&env, &claude, &plugin);
        }
        let fake = FakeAnthropic::start(vec![Turn::text("hello")]);
        env.claude_with(&fake.url, &args, &[]);
        let seen = events_seen(&env.project);
        assert!(
            fake.everything_the_model_saw()
                .contains("Say hello to the team"),
            "the command expanded ({})",
            if native {
                "natively"
            } else {
                "through amplihack"
            }
        );
        seen
    };
    let native = run(true);
    assert_eq!(
        native.get("UserPromptExpansion"),
        Some(&1),
        "natively: {native:?}"
    );
    let forwarded = run(false);
    assert_eq!(
        forwarded.get("UserPromptExpansion"),
        Some(&1),
        "through amplihack {forwarded:?}, natively {native:?}"
    );
}
