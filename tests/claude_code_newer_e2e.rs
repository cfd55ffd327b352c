//! Claude Code 2.1.332's hook forms, natively and through amplihack, in the real Claude Code: the
//! same plugin (`tests/fixtures/plugins/newer-events`) loaded with `--plugin-dir`, and copied in
//! with `amplihack hooks install`, in the same scripted sessions:
//! - `/model haiku`, then a prompt: PreModelSwitch and PostModelSwitch reach the plugin, and its
//!   PostModelSwitch context reaches the new model;
//! - `/check-shell`, a project command with an embedded shell command the plugin refuses with
//!   `decision: "block"` (PreSkillShellCommand): the command does not run;
//! - a task marked completed that the plugin's TaskCompleted exit 2 refuses (the model gets the
//!   reason), and a Bash call whose guard crashes with `onFailure: "block"` (refused), while a
//!   Stop handler that crashes with the same key is let be (Claude Code ignores it there); a
//!   prompt handler on SessionStart is reported as failing to run (Claude Code refuses it there);
//! - `/compact`: the plugin's PreCompact stdout reaches the compaction as extra instructions;
//! - a Bash call a PreToolUse handler answers `defer`: the headless run stops with the call
//!   deferred to its host, the command not run;
//! - an MCP server's elicitation (`tests/fixtures/mcp/elicitation_server.py`) that the plugin's
//!   Elicitation `decision: "block"` declines (with no hook, a headless run cancels it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::capabilities::{Capability, npm_version, proved};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{ClaudeRun, TestEnv, stderr};

const PLUGIN: &str = "newer-events";

/// One way of running the plugin.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Native,
    Amplihack,
}

struct Session {
    env: TestEnv,
    plugin: PathBuf,
    way: Way,
}

impl Session {
    fn new(way: Way) -> Session {
        let env = TestEnv::new();
        let plugin = env.root().join("plugins").join(PLUGIN);
        support::copy_dir(
            &support::repo_root()
                .join("tests/fixtures/plugins")
                .join(PLUGIN),
            &plugin,
        );
        env.write(
            &env.project.join(".claude/commands/check-shell.md"),
            "---\ndescription: runs a shell command\nallowed-tools: Bash(echo:*)\n---\nOutput: !`echo forbidden-shell-ran`\n",
        );
        if way == Way::Amplihack {
            install_amplihack(&env, &plugin);
        }
        Session { env, plugin, way }
    }

    fn claude(&self, fake: &FakeAnthropic, args: &[&str]) -> ClaudeRun {
        let plugin = self.plugin.to_string_lossy().into_owned();
        let mut all: Vec<&str> = args.to_vec();
        if self.way == Way::Native {
            all.extend(["--plugin-dir", &plugin]);
        }
        self.env.claude_with(&fake.url, &all, &[])
    }

    /// How many times each event reached the plugin's loggers.
    fn events(&self) -> BTreeMap<String, usize> {
        let mut seen = BTreeMap::new();
        let log = std::fs::read_to_string(self.env.project.join("event-log.txt"));
        for line in log.unwrap_or_default().lines() {
            *seen.entry(line.to_string()).or_insert(0) += 1;
        }
        seen
    }
}

fn install_amplihack(env: &TestEnv, plugin: &Path) {
    for args in [
        vec!["install", "--host", "claude"],
        vec!["hooks", "install", &plugin.to_string_lossy()],
    ] {
        let mut command = env.amplihack(&args.iter().map(|a| a.as_ref()).collect::<Vec<&str>>());
        command.env("AMPLIHACK_CLAUDE_BIN", support::claude_bin());
        let (output, _) = support::run_with_timeout(command, b"", Duration::from_secs(120));
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
}

/// The tool results the model was given, by the tool call's id, in the last main request.
fn tool_results(fake: &FakeAnthropic) -> Vec<String> {
    let requests = fake.main_requests();
    let Some(last) = requests.last() else {
        return Vec::new();
    };
    last["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "tool_result")
        .map(|c| match &c["content"] {
            Value::String(text) => text.clone(),
            // An MCP tool's result: its text blocks.
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
        .collect()
}

/// The model switch and the skill's shell command: which events the plugin saw, whether its
/// PostModelSwitch context reached the new model, whether the refused shell command ran. The
/// switch is the first of two prompts of one session (`--input-format stream-json`): a `-p
/// "/model haiku"` alone ends the session at once, stopping the PostModelSwitch hooks still
/// running (natively too, for a slower handler).
#[test]
fn model_switch_and_skill_shell_events_as_natively() {
    let prompts = [
        json!({"type": "user", "message": {"role": "user", "content": "/model haiku"}}),
        json!({"type": "user", "message": {"role": "user", "content": "hello after the switch"}}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let run = |way: Way| {
        let session = Session::new(way);
        let fake = FakeAnthropic::start(vec![Turn::text("switched")]);
        let plugin = session.plugin.to_string_lossy().into_owned();
        let mut args = vec![
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ];
        if way == Way::Native {
            args.extend(["--plugin-dir", &plugin]);
        }
        session.env.claude_wrapped(
            &|c| c,
            &support::claude_bin(),
            &fake.url,
            &args,
            &[],
            true,
            prompts.as_bytes(),
        );
        let context = fake.everything_the_model_saw().contains(
            "PostModelSwitch hook additional context: NEWER-EVENTS: now on a smaller model",
        );
        let model = fake
            .main_requests()
            .last()
            .map(|r| r["model"].clone())
            .unwrap_or_default();
        let fake = FakeAnthropic::start(vec![Turn::text("checked")]);
        session.claude(&fake, &["-p", "/check-shell"]);
        let ran = fake
            .everything_the_model_saw()
            .contains("forbidden-shell-ran\\n")
            || fake
                .everything_the_model_saw()
                .contains("Output: forbidden-shell-ran");
        (session.events(), context, model, ran)
    };
    let native = run(Way::Native);
    for event in ["PreModelSwitch", "PostModelSwitch", "PreSkillShellCommand"] {
        assert!(
            native.0.contains_key(event),
            "natively {event} never arrived: {native:?}"
        );
    }
    assert!(
        native.1,
        "natively the PostModelSwitch context did not reach the model"
    );
    assert_eq!(native.2, "claude-haiku-5-5", "natively the model switched");
    assert!(!native.3, "natively the refused shell command ran");
    let forwarded = run(Way::Amplihack);
    assert_eq!(
        forwarded, native,
        "through amplihack (left), natively (right)"
    );
}

/// TaskCompleted exit 2 and a guard crashing with `onFailure: "block"`: the same texts reach the
/// model and the same calls are refused.
#[test]
fn task_completed_block_and_on_failure_as_natively() {
    let script = || {
        vec![
            Turn::ToolUse {
                name: "TaskCreate".into(),
                input: json!({"subject": "ship it", "description": "make the tests pass"}),
            },
            Turn::ToolUse {
                name: "TaskUpdate".into(),
                input: json!({"taskId": "1", "status": "completed"}),
            },
            Turn::bash("echo crash-me"),
            Turn::bash("echo fine"),
            Turn::text("done"),
        ]
    };
    let run = |way: Way| {
        let session = Session::new(way);
        let fake = FakeAnthropic::start(script());
        // The task tools are off in a `-p` run unless `--allowedTools` names them.
        let run = session.claude(
            &fake,
            &["-p", "go", "--allowedTools", "TaskCreate TaskUpdate"],
        );
        let denials: Vec<String> = run.result["permission_denials"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| format!("{}: {}", d["tool_name"], d["tool_input"]["command"]))
            .collect();
        // A prompt handler on SessionStart, which Claude Code refuses (no conversation yet).
        let refused = run
            .debug_log
            .contains("prompt-type hooks are not supported for SessionStart events");
        (
            tool_results(&fake),
            denials,
            run.result["result"].clone(),
            refused,
        )
    };
    let native = run(Way::Native);
    let blocking = "blocking because onFailure is \"block\"";
    let want_results = [
        "Task #1 created successfully: ship it".to_string(),
        "TaskCompleted hook feedback:\n[cat > /dev/null; echo 'NEWER-EVENTS: the tests still fail' >&2; exit 2]: NEWER-EVENTS: the tests still fail\n\nThis hook comes from the newer-events@inline plugin.".to_string(),
        format!("PreToolUse:Bash hook error: [grep -q crash-me && {{ echo guard-crashed >&2; exit 3; }}; exit 0]: failed; {blocking}\nguard-crashed"),
    ];
    assert_eq!(native.0[..3], want_results, "natively: {native:?}");
    assert_eq!(
        native.2, "done",
        "natively the crashing Stop handler let the turn end"
    );
    let forwarded = run(Way::Amplihack);
    assert_eq!(
        forwarded.0[..3],
        native.0[..3],
        "through amplihack (left), natively (right)"
    );
    assert_eq!(forwarded.1, native.1);
    assert_eq!(forwarded.2, native.2);
    assert!(
        native.3,
        "natively the refused prompt handler was not reported"
    );
    assert_eq!(forwarded.3, native.3, "reported through amplihack too");
}

/// `/compact`: the plugin's PreCompact stdout is in the compaction request both ways; through
/// amplihack its transcript export copied the conversation as it was before the compaction.
#[test]
fn pre_compact_output_reaches_the_compaction_as_natively() {
    let run = |way: Way| {
        let session = Session::new(way);
        let fake = FakeAnthropic::start(vec![
            Turn::text("hello-before-compaction"),
            Turn::text("Summary: nothing happened yet."),
        ]);
        session.claude(&fake, &["-p", "hello"]);
        session.claude(&fake, &["-p", "/compact", "--continue"]);
        let instructed = fake.everything_the_model_saw().contains(
            "Additional Instructions:\\nNEWER-EVENTS: keep the word pineapple in the summary",
        );
        (instructed, transcript_copies(&session.env.project))
    };
    let (instructed, copies) = run(Way::Native);
    assert!(
        instructed,
        "natively the instructions did not reach the compaction"
    );
    assert!(copies.is_empty(), "no amplihack, no copy: {copies:?}");
    let (instructed, copies) = run(Way::Amplihack);
    assert!(
        instructed,
        "through amplihack the instructions did not reach the compaction"
    );
    let version = npm_version(&support::claude_bin());
    proved("claude", &version, Capability::Events(vec!["PreCompact"]));
    assert_eq!(copies.len(), 1, "one transcript copy: {copies:?}");
    assert!(
        copies[0].contains("hello-before-compaction"),
        "the copy holds the conversation: {}",
        copies[0]
    );
    proved("claude", &version, Capability::TranscriptExport);
}

/// The transcripts amplihack's PreCompact copied into the project
/// (`.claude/runtime/logs/<session>/transcript-*.jsonl`), their contents.
fn transcript_copies(project: &Path) -> Vec<String> {
    let logs = project.join(".claude/runtime/logs");
    let mut copies: Vec<PathBuf> = std::fs::read_dir(&logs)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|session| {
            std::fs::read_dir(session.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("transcript-") && n.ends_with(".jsonl"))
        })
        .collect();
    copies.sort();
    copies
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect()
}

/// An MCP server's elicitation: the plugin's `decision: "block"` declines it (2.1.284), both ways;
/// with no plugin a headless run cancels it, so the two are told apart.
#[test]
fn an_elicitation_block_declines_as_natively() {
    let run = |way: Option<Way>| {
        let session = Session::new(way.unwrap_or(Way::Native));
        let config = session.env.root().join("mcp.json");
        let server = support::repo_root().join("tests/fixtures/mcp/elicitation_server.py");
        session.env.write(
            &config,
            &json!({"mcpServers": {"forms": {"command": "python3", "args": [server, session.env.root().join("mcp.log")]}}})
                .to_string(),
        );
        let fake = FakeAnthropic::start(vec![
            Turn::ToolUse {
                name: "mcp__forms__ask".into(),
                input: json!({}),
            },
            Turn::text("done"),
        ]);
        let config = config.to_string_lossy().into_owned();
        let args = [
            "-p",
            "go",
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__forms__ask",
        ];
        match way {
            Some(way) => Session { way, ..session }.claude(&fake, &args),
            None => session.env.claude_with(&fake.url, &args, &[]),
        };
        tool_results(&fake)
    };
    assert_eq!(run(None), ["ELICITATION-ACTION=cancel"], "with no hook");
    let native = run(Some(Way::Native));
    assert_eq!(native, ["ELICITATION-ACTION=decline"], "natively");
    assert_eq!(run(Some(Way::Amplihack)), native, "through amplihack");
}

/// A PreToolUse `defer` (headless runs): the run stops with the call handed to its host
/// (`stop_reason: "tool_deferred"`, `deferred_tool_use`), the command not run, both ways.
#[test]
fn a_deferred_tool_call_is_deferred_as_natively() {
    let run = |way: Way| {
        let session = Session::new(way);
        let fake = FakeAnthropic::start(vec![Turn::bash("echo defer-me"), Turn::text("done")]);
        let run = session.claude(&fake, &["-p", "go"]);
        (
            run.result["stop_reason"].clone(),
            run.result["deferred_tool_use"]["name"].clone(),
            run.result["deferred_tool_use"]["input"]["command"].clone(),
            fake.main_requests().len(),
        )
    };
    let native = run(Way::Native);
    assert_eq!(native.0, "tool_deferred", "natively: {native:?}");
    assert_eq!(native.2, "echo defer-me", "natively: {native:?}");
    assert_eq!(
        run(Way::Amplihack),
        native,
        "through amplihack (left), natively (right)"
    );
}
