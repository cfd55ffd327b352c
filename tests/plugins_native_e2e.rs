//! Third-party Claude Code plugins behave under amplihack exactly as when Claude Code loads them.
//!
//! The same plugins, byte for byte, run two ways in the real Claude Code against the same scripted
//! model: natively (`--plugin-dir`), and copied unchanged into `~/.amplifier/hooks/<name>/` behind
//! `amplihack install`. The plugins are stand-ins shaped like published ones (an output-style
//! plugin's shell SessionStart, a hookify-like Python rule plugin on four events, a Node
//! PostToolUse plugin, a background reviewer with `async: true` and a first-line
//! `{"async": true}`); see `tests/fixtures/plugins/`. Both runs must give the model the same
//! plugin texts in the same requests, the same permission denials, and the same files.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support;
use crate::support::TestEnv;
use crate::support::fake_anthropic::{FakeAnthropic, Turn};

const PLUGINS: [&str; 4] = ["style-notes", "rule-guard", "node-notes", "later-review"];
/// Every text the plugins give the model starts with one of these.
const PROBES: [&str; 4] = ["STYLE-NOTES", "RULE-GUARD", "NODE-NOTES", "LATER-REVIEW"];
/// Files the plugins write in the project.
const FILES: [&str; 3] = ["rule-guard.log", "node-notes.log", ".rule-guard-stop-once"];

fn script() -> Vec<Turn> {
    vec![
        // Long enough for both background reviewers to finish during the tool call.
        Turn::bash("sleep 1; echo hello"),
        Turn::bash("rm -rf build"),
        Turn::bash("echo secret"),
        Turn::text("done"),
        Turn::text("Summary: echoed twice."),
    ]
}

/// What one way of loading the plugins gave: per main request, the plugin texts the model read
/// (each from its probe to the end of its line, sorted); the denials; the project's files.
///
/// Claude Code labels what it hands the model ("PostToolUse:Bash hook additional context: ",
/// "... blocking error from command: \"<command>\": "), and the label names the command it ran:
/// the plugin's natively, amplihack's when forwarded. Those labels are Claude Code's, not the
/// plugin's, and are not compared; anything else in front of a plugin's text (a tag amplihack
/// added) is recorded as `DECORATED` and fails the comparison.
#[derive(Debug, PartialEq)]
struct Seen {
    requests: Vec<Vec<String>>,
    denials: Vec<String>,
    files: BTreeMap<String, String>,
}

fn plugin_texts(request: &Value) -> Vec<String> {
    fn walk(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                for line in text.lines() {
                    for probe in PROBES {
                        let mut rest = line;
                        while let Some(at) = rest.find(probe) {
                            let before = line[..line.len() - rest.len() + at].trim_start();
                            if !(before.is_empty()
                                || before.ends_with(": ")
                                || before.ends_with(':'))
                            {
                                found.push(format!("DECORATED {before:?}"));
                            }
                            let from = &rest[at..];
                            // One text per probe occurrence, up to the next probe on the line.
                            let end = PROBES
                                .iter()
                                .filter_map(|p| from[1..].find(p).map(|i| i + 1))
                                .min()
                                .unwrap_or(from.len());
                            found.push(from[..end].trim_end().to_string());
                            rest = &from[probe.len()..];
                        }
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
            Value::Object(map) => map.values().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    // Only the conversation: the system prompt lists installed plugins by name.
    let mut found = Vec::new();
    walk(&request["messages"], &mut found);
    found.sort();
    found
}

fn seen(env: &TestEnv, fake: &FakeAnthropic, run: &support::ClaudeRun) -> Seen {
    let denials = run.result["permission_denials"]
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
    let files = FILES
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(env.project.join(name))
                .unwrap_or_else(|_| "(absent)".into());
            (name.to_string(), text)
        })
        .collect();
    Seen {
        requests: fake.main_requests().iter().map(plugin_texts).collect(),
        denials,
        files,
    }
}

fn fixture_plugin(name: &str) -> std::path::PathBuf {
    support::repo_root()
        .join("tests/fixtures/plugins")
        .join(name)
}

#[test]
fn plugins_give_the_same_under_amplihack_as_natively() {
    // Natively: Claude Code loads each plugin itself.
    let native_env = TestEnv::new();
    let mut args: Vec<String> = vec!["-p".into(), "tidy up".into()];
    for name in PLUGINS {
        let dir = native_env.root().join("plugins").join(name);
        support::copy_dir(&fixture_plugin(name), &dir);
        args.push("--plugin-dir".into());
        args.push(dir.to_string_lossy().into_owned());
    }
    let native_fake = FakeAnthropic::start(script());
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let native_run = native_env.claude_with(&native_fake.url, &arg_refs, &[]);
    let native = seen(&native_env, &native_fake, &native_run);

    // Through amplihack: the same plugins, copied unchanged into the user's hooks directory.
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    for name in PLUGINS {
        support::copy_dir(&fixture_plugin(name), &env.user_hooks_dir().join(name));
    }
    let fake = FakeAnthropic::start(script());
    let run = env.claude_with(&fake.url, &["-p", "tidy up"], &[]);
    let forwarded = seen(&env, &fake, &run);
    // The native run is the reference: it must show every form at work, or the comparison
    // proves nothing.
    let everything: Vec<&String> = native.requests.iter().flatten().collect();
    for expected in [
        "STYLE-NOTES: you are in teaching mode.",
        "RULE-GUARD: rules are active for this prompt",
        "RULE-GUARD: checked `sleep 1; echo hello`",
        "NODE-NOTES: recorded `sleep 1; echo hello`",
        "RULE-GUARD: recursive deletion is not allowed here",
        "NODE-NOTES: that command mentions a secret",
        "RULE-GUARD: summarise what you changed before stopping",
        "LATER-REVIEW: configured async context",
        "LATER-REVIEW: declared async context",
        "LATER-REVIEW: background note",
    ] {
        assert!(
            everything.iter().any(|t| t.starts_with(expected)),
            "natively the model never read {expected:?}: {:#?}",
            native.requests
        );
    }
    assert_eq!(native.denials, ["rm -rf build"]);

    assert_eq!(
        forwarded, native,
        "under amplihack (left) the plugins gave something else than natively (right)"
    );
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );
}
