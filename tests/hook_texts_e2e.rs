//! The texts Claude Code hands the model for a plugin's output are the same through amplihack as
//! natively, label for label, in the real Claude Code 2.1.328: the same plugin loaded with
//! `--plugin-dir`, and copied into `~/.amplifier/hooks/` behind `amplihack install`, against the
//! same scripted model. Compared: every line of every main request that mentions a hook or the
//! plugin's probe text (the plugin's directory written `<ROOT>`, the only difference there can be),
//! and the run's result (where a blocked prompt's reason goes).
//!
//! What Claude Code 2.1.328 sends, found by running it (and read in its bundle):
//! * plain stdout on SessionStart / UserPromptSubmit / UserPromptExpansion: `SessionStart:startup
//!   hook success: <text>`, `UserPromptSubmit hook success: <text>`, `UserPromptExpansion hook
//!   success: <text>`; `additionalContext`: `SessionStart hook additional context: <text>`,
//!   `PreToolUse:Bash hook additional context: <text>`, one paragraph per handler;
//! * an exit-2 block: `[<command, ${CLAUDE_PLUGIN_ROOT} filled in>]: <stderr as it came>` then
//!   `\nThis hook comes from the <name>@inline plugin.`; as a tool result behind `PreToolUse:Bash
//!   hook error: `, as a user text behind `Stop hook feedback:\n`, and for a prompt in the result,
//!   `UserPromptSubmit operation blocked by hook:\n<it>\n\nOriginal prompt: <prompt>`;
//! * several blockers: PreToolUse gives the reason of the one that finished last, UserPromptSubmit
//!   that of the first, Stop every one in the order they finished, each its own feedback.
//!
//! Not compared: the line `Stop hook blocking error from command: "<command>": <reason>`, which
//! Claude Code adds for any JSON Stop block (a plugin's natively, amplihack's always, since it
//! answers in JSON); it names the command Claude Code ran, which is amplihack's.

use std::path::Path;

use serde_json::{Value, json};

use crate::support;
use crate::support::TestEnv;
use crate::support::capabilities::{Capability, npm_version, proved};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};

const NAME: &str = "texts-probe";

fn executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The plugin: `say TEXT` prints TEXT, `context EVENT TEXT` answers it as additionalContext,
/// `block SECONDS ID TEXT` waits, then (once per ID) prints `ID TEXT` on stderr and exits 2
/// (without a final newline when `NONL` is set).
fn write_plugin(dir: &Path, hooks: &Value) {
    executable(
        &dir.join(".claude-plugin/plugin.json"),
        &json!({"name": NAME}).to_string(),
    );
    executable(&dir.join("hooks/hooks.json"), &hooks.to_string());
    executable(
        &dir.join("hooks/say"),
        "#!/bin/sh\ncat > /dev/null\nprintf '%s\\n' \"$*\"\n",
    );
    executable(
        &dir.join("hooks/context"),
        "#!/bin/sh\ncat > /dev/null\nprintf '{\"hookSpecificOutput\": {\"hookEventName\": \"%s\", \"additionalContext\": \"%s\"}}\\n' \"$1\" \"$2\"\n",
    );
    executable(
        &dir.join("hooks/block"),
        "#!/bin/sh\ncat > /dev/null\nsleep \"$1\"\nshift\n\
         if [ -e \"$CLAUDE_PROJECT_DIR/.once-$1\" ]; then exit 0; fi\n\
         touch \"$CLAUDE_PROJECT_DIR/.once-$1\"\n\
         if [ -n \"$NONL\" ]; then printf '%s' \"$*\" >&2; else printf '%s\\n' \"$*\" >&2; fi\n\
         exit 2\n",
    );
}

fn run(script: &str) -> Value {
    json!({"type": "command", "command": format!("\"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}")})
}

/// Every string in the request's conversation and system text, a message's blocks read on as
/// the model reads them.
fn request_lines(request: &Value) -> Vec<String> {
    // A string, a list of blocks, a text block or a tool result's content.
    fn strings(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => out.push_str(s),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(block) => {
                for key in ["text", "content"] {
                    if let Some(inner) = block.get(key) {
                        strings(inner, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        let mut text = String::new();
        strings(&message["content"], &mut text);
        // Claude Code's note on a JSON Stop block comes as a message of its own, left out whole
        // (see the top of this file).
        if !text.starts_with("Stop hook blocking error from command") {
            texts.push(text);
        }
    }
    let mut system = String::new();
    strings(&request["system"], &mut system);
    texts.push(system);
    texts
        .iter()
        .flat_map(|t| t.lines())
        .map(str::to_string)
        .collect()
}

/// What the model and the user were given: per main request, the sorted lines of the plugin's
/// texts and their labels; then the result.
fn seen(fake: &FakeAnthropic, run: &support::ClaudeRun, root: &Path) -> Vec<Vec<String>> {
    let root = root.to_string_lossy().into_owned();
    let keep = |line: &String| {
        line.contains("PROBE")
            || line.contains("This hook comes from")
            || line.ends_with("hook feedback:")
    };
    let mut seen: Vec<Vec<String>> = fake
        .main_requests()
        .iter()
        .map(|request| {
            let mut lines: Vec<String> = request_lines(request)
                .into_iter()
                .filter(keep)
                .map(|l| l.replace(&root, "<ROOT>"))
                .collect();
            lines.sort();
            lines
        })
        .collect();
    let result = run.result["result"].as_str().unwrap_or_default();
    seen.push(vec![result.replace(&root, "<ROOT>")]);
    seen
}

struct Case {
    name: &'static str,
    /// What the user types: `go`, or their own slash command `/greet`.
    prompt: &'static str,
    hooks: Value,
    turns: Vec<Turn>,
    /// Texts the native run must show (`<ROOT>` for the plugin's directory): the comparison
    /// proves nothing unless the forms are at work.
    native_shows: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    let bash_then_done = || {
        vec![
            Turn::bash("echo hi"),
            Turn::text("done"),
            Turn::text("done2"),
        ]
    };
    let nonl = |script: &str| json!({"type": "command", "command": format!("NONL=1 \"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}")});
    vec![
        Case {
            prompt: "go",
            name: "plain stdout and additionalContext",
            hooks: json!({"hooks": {
                "SessionStart": [{"hooks": [run("say\" PROBE-SS-PLAIN"), run("context\" SessionStart PROBE-SS-JSON")]}],
                "UserPromptSubmit": [{"hooks": [run("say\" PROBE-UPS-PLAIN"), run("say\" PROBE-UPS-PLAIN-2"), run("context\" UserPromptSubmit PROBE-UPS-JSON")]}],
                "PostToolUse": [{"matcher": "Bash", "hooks": [run("context\" PostToolUse PROBE-POST-JSON"), run("context\" PostToolUse PROBE-POST-JSON-2")]}],
            }}),
            turns: vec![Turn::bash("echo hi"), Turn::text("done")],
            native_shows: vec![
                "SessionStart:startup hook success: PROBE-SS-PLAIN",
                "SessionStart hook additional context: PROBE-SS-JSON",
                "UserPromptSubmit hook success: PROBE-UPS-PLAIN",
                "UserPromptSubmit hook success: PROBE-UPS-PLAIN-2",
                "UserPromptSubmit hook additional context: PROBE-UPS-JSON",
                "PostToolUse:Bash hook additional context: PROBE-POST-JSON-2",
            ],
        },
        Case {
            prompt: "go",
            name: "PreToolUse, one exit-2 blocker",
            hooks: json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [run("block\" 0 pre PROBE-PRE")]}]}}),
            turns: bash_then_done(),
            native_shows: vec![
                "PreToolUse:Bash hook error: [\"<ROOT>/hooks/block\" 0 pre PROBE-PRE]: pre PROBE-PRE",
                "This hook comes from the texts-probe@inline plugin.",
            ],
        },
        Case {
            prompt: "go",
            name: "PreToolUse, two exit-2 blockers, the first slower",
            hooks: json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [run("block\" 0.4 preA PROBE-PRE-SLOW"), nonl("block\" 0 preB PROBE-PRE-FAST")]}]}}),
            turns: bash_then_done(),
            native_shows: vec![
                "PreToolUse:Bash hook error: [\"<ROOT>/hooks/block\" 0.4 preA PROBE-PRE-SLOW]: preA PROBE-PRE-SLOW",
            ],
        },
        Case {
            prompt: "go",
            name: "Stop, one exit-2 blocker without a final newline",
            hooks: json!({"hooks": {"Stop": [{"hooks": [nonl("block\" 0 stop PROBE-STOP")]}]}}),
            turns: vec![Turn::text("done"), Turn::text("done2")],
            native_shows: vec![
                "[NONL=1 \"<ROOT>/hooks/block\" 0 stop PROBE-STOP]: stop PROBE-STOP",
                "This hook comes from the texts-probe@inline plugin.",
            ],
        },
        Case {
            prompt: "go",
            name: "Stop, two exit-2 blockers, the first slower",
            hooks: json!({"hooks": {"Stop": [{"hooks": [run("block\" 0.4 stopA PROBE-STOP-SLOW"), nonl("block\" 0 stopB PROBE-STOP-FAST")]}]}}),
            turns: vec![Turn::text("done"), Turn::text("done2")],
            native_shows: vec![
                "[\"<ROOT>/hooks/block\" 0.4 stopA PROBE-STOP-SLOW]: stopA PROBE-STOP-SLOW",
                "[NONL=1 \"<ROOT>/hooks/block\" 0 stopB PROBE-STOP-FAST]: stopB PROBE-STOP-FAST",
            ],
        },
        Case {
            prompt: "go",
            name: "UserPromptSubmit, one exit-2 blocker",
            hooks: json!({"hooks": {"UserPromptSubmit": [{"hooks": [run("block\" 0 ups PROBE-UPS")]}]}}),
            turns: vec![Turn::text("done")],
            native_shows: vec![
                "UserPromptSubmit operation blocked by hook:\n[\"<ROOT>/hooks/block\" 0 ups PROBE-UPS]: ups PROBE-UPS\n\nThis hook comes from the texts-probe@inline plugin.\n\nOriginal prompt: go",
            ],
        },
        Case {
            prompt: "go",
            name: "UserPromptSubmit, two exit-2 blockers, the first slower",
            hooks: json!({"hooks": {"UserPromptSubmit": [{"hooks": [run("block\" 0.4 upsA PROBE-UPS-SLOW"), run("block\" 0 upsB PROBE-UPS-FAST")]}]}}),
            turns: vec![Turn::text("done")],
            native_shows: vec![
                "UserPromptSubmit operation blocked by hook:\n[\"<ROOT>/hooks/block\" 0 upsB PROBE-UPS-FAST]: upsB PROBE-UPS-FAST\n\nThis hook comes from the texts-probe@inline plugin.\n\nOriginal prompt: go",
            ],
        },
        Case {
            prompt: "/greet",
            name: "UserPromptExpansion, plain stdout and additionalContext",
            hooks: json!({"hooks": {
                "UserPromptExpansion": [{"hooks": [run("say\" PROBE-UPE-PLAIN"), run("context\" UserPromptExpansion PROBE-UPE-JSON")]}],
            }}),
            turns: vec![Turn::text("hello")],
            native_shows: vec!["PROBE-UPE-PLAIN", "PROBE-UPE-JSON"],
        },
    ]
}

/// The user's own slash command `/greet`, whose expansion fires UserPromptExpansion.
fn greet_command(env: &TestEnv) {
    env.write(
        &env.home.join(".claude/commands/greet.md"),
        "Say hello to the team.\n",
    );
}

/// Through amplihack: installed as a user installs a plugin (which registers the events it needs
/// with Claude Code), from a copy of the same files. Returns where it went.
fn install_through_amplihack(env: &TestEnv, hooks: &Value) -> std::path::PathBuf {
    let source = env.root().join("download").join(NAME);
    write_plugin(&source, hooks);
    let source = source.to_string_lossy().into_owned();
    for args in [
        vec!["install", "--host", "claude"],
        vec!["hooks", "install", source.as_str()],
    ] {
        let mut command = env.amplihack(&args);
        command.env("AMPLIHACK_CLAUDE_BIN", support::claude_bin());
        let (output, _) =
            support::run_with_timeout(command, b"", std::time::Duration::from_secs(120));
        assert!(
            output.status.success(),
            "{args:?}: {}",
            support::stderr(&output)
        );
    }
    let dir = env.user_hooks_dir().join(NAME);
    assert!(
        dir.join("hooks/hooks.json").is_file(),
        "not installed in {}",
        dir.display()
    );
    dir
}

#[test]
fn the_model_reads_the_same_texts_through_amplihack_as_natively() {
    let mut failures = Vec::new();
    for case in cases() {
        let env = TestEnv::new();
        greet_command(&env);
        let dir = env.root().join("plugins").join(NAME);
        write_plugin(&dir, &case.hooks);
        let fake = FakeAnthropic::start(case.turns.clone());
        let native_run = env.claude_with(
            &fake.url,
            &["-p", case.prompt, "--plugin-dir", &dir.to_string_lossy()],
            &[],
        );
        let native = seen(&fake, &native_run, &dir);
        let everything = native
            .iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        for shown in &case.native_shows {
            assert!(
                everything.contains(shown),
                "{}: natively the model was never given {shown:?}:\n{everything}",
                case.name
            );
        }

        let env = TestEnv::new();
        greet_command(&env);
        let dir = install_through_amplihack(&env, &case.hooks);
        let fake = FakeAnthropic::start(case.turns);
        let run = env.claude_with(&fake.url, &["-p", case.prompt], &[]);
        let forwarded = seen(&fake, &run, &dir);
        if forwarded != native {
            failures.push(format!(
                "{}:\n  natively:  {native:#?}\n  amplihack: {forwarded:#?}",
                case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Through amplihack as natively: a plugin's context on SessionStart, UserPromptSubmit and
    // PostToolUse reached the model, and its Stop block made Claude Code go on.
    let version = npm_version(&support::claude_bin());
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
    proved("claude", &version, Capability::Context);
    proved("claude", &version, Capability::KeepGoing);
}
