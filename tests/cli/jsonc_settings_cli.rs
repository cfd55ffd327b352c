//! Qwen Code's and Gemini CLI's `settings.json` (and Droid's) are read by their hosts as JSONC:
//! `//` and `/* */` comments and trailing commas. amplihack installs into such a file and
//! uninstalls from it keeping every byte of the user's, comments included; Claude Code's
//! settings stay strict JSON (a comment there is refused, naming the file). And Droid's
//! `hooks.json`, which makes Droid ignore the settings file's hooks, is reported.

use crate::support;

use serde_json::Value;
use support::{TestEnv, stdout};

fn assert_success(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        support::stderr(output)
    );
}

/// Settings files as people write them for these hosts.
const FILES: &[(&str, &str)] = &[
    (
        "line comments and a trailing comma",
        "{\n  // my provider\n  \"security\": {\"auth\": {\"selectedType\": \"openai\"}}, // keep\n  \"model\": {\n    \"name\": \"fake-model\", // pinned\n  },\n}\n",
    ),
    (
        "a block comment before the first key, no newline at the end",
        "/* user settings\n   written by hand */\n{\n    \"ui\": {\"theme\": \"dark\"},\n    /* the model */\n    \"model\": {\"name\": \"x\"}\n}",
    ),
    (
        "hooks of the user's own, with comments inside",
        "{\n  \"hooks\": {\n    // my guard\n    \"PreToolUse\": [\n      // runs first\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"/bin/true\"}]}, // trailing\n    ],\n    \"BeforeTool\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"/bin/true\"}]} /* mine */\n    ]\n  },\n  \"general\": {\"vimMode\": true} // last\n}\n",
    ),
    (
        "one line, with a comment that looks like JSON",
        "{\"model\": {\"name\": \"a//b\"} /* \"hooks\": {} */}",
    ),
    (
        "an empty hooks object with a comment inside",
        "{\n  \"model\": {\"name\": \"m\"},\n  \"hooks\": { // none yet\n  }\n}\n",
    ),
    (
        "the user's own empty event keys, kept by uninstall",
        "{\n  \"hooks\": {\n    \"PreToolUse\": [],\n    \"Stop\": [],\n    \"BeforeTool\": [],\n    \"AfterAgent\": []\n  }\n}\n",
    ),
    (
        "CRLF line endings",
        "{\r\n  // crlf\r\n  \"model\": {\"name\": \"m\"},\r\n}\r\n",
    ),
];

fn settings_path(env: &TestEnv, host: &str, scope: &str) -> std::path::PathBuf {
    let dir = match host {
        "qwen" => ".qwen",
        "gemini" => ".gemini",
        "droid" => ".factory",
        other => panic!("{other}"),
    };
    match scope {
        "user" => env.home.join(dir).join("settings.json"),
        _ => env.project.join(dir).join("settings.json"),
    }
}

/// Install, doctor, uninstall: every commented file comes back byte for byte, for each host
/// that reads JSONC, in both scopes; in between, the file holds amplihack's entries and still
/// every comment.
#[test]
fn commented_settings_install_and_uninstall_byte_for_byte() {
    for host in ["qwen", "gemini", "droid"] {
        for scope in ["user", "project"] {
            for (what, text) in FILES {
                let env = TestEnv::new();
                let path = settings_path(&env, host, scope);
                env.write(&path, text);
                let case = format!("{host} {scope}: {what}");
                assert_success(&env.run_amplihack(&["install", "--host", host, "--scope", scope]));
                let installed = env.read(&path);
                for comment in ["// ", "/*"] {
                    assert_eq!(
                        installed.matches(comment).count(),
                        text.matches(comment).count(),
                        "{case}: a comment was lost or copied\n{installed}"
                    );
                }
                let value: Value = serde_json::from_str(
                    &amplihack_settings::json_text::blank_jsonc(
                        installed.trim_start_matches('\u{feff}'),
                    ),
                )
                .unwrap_or_else(|e| panic!("{case}: not JSONC after install: {e}\n{installed}"));
                assert!(
                    value.to_string().contains("amplihack-hooks"),
                    "{case}: {installed}"
                );
                let doctor = env.run_amplihack(&["doctor"]);
                assert_success(&doctor);
                // Install again: nothing changes.
                assert_success(&env.run_amplihack(&["install", "--host", host, "--scope", scope]));
                assert_eq!(
                    env.read(&path),
                    installed,
                    "{case}: a second install changed it"
                );
                assert_success(&env.run_amplihack(&[
                    "uninstall",
                    "--host",
                    host,
                    "--scope",
                    scope,
                ]));
                assert_eq!(
                    &env.read(&path),
                    text,
                    "{case}: not given back byte for byte"
                );
            }
        }
    }
}

/// Claude Code's settings are strict JSON: a comment there is refused with the file named, and
/// nothing is written.
#[test]
fn claude_code_settings_stay_strict_json() {
    let env = TestEnv::new();
    let path = env.claude_settings_path();
    let text = "{\n  // no\n  \"model\": \"x\"\n}\n";
    env.write(&path, text);
    let output = env.run_amplihack(&["install", "--host", "claude"]);
    assert!(!output.status.success(), "{}", stdout(&output));
    let said = format!("{}{}", stdout(&output), support::stderr(&output));
    assert!(said.contains("settings.json"), "{said}");
    assert_eq!(env.read(&path), text);
}

/// Droid reads `~/.factory/hooks.json` instead of the `hooks` key of `settings.json` when both
/// exist (tests/qwen_droid_gemini_e2e.rs shows it in the real Droid): install warns and doctor
/// reports it with the fix; without that file both are quiet about it.
#[test]
fn a_droid_hooks_json_beside_the_settings_is_reported() {
    let env = TestEnv::new();
    let hooks_json = env.home.join(".factory/hooks.json");
    env.write(&hooks_json, "{\"PreToolUse\": []}\n");
    let install = env.run_amplihack(&["install", "--host", "droid"]);
    assert_success(&install);
    let said = format!("{}{}", stdout(&install), support::stderr(&install));
    assert!(
        said.contains("hooks.json") && said.contains("do not run"),
        "{said}"
    );
    let doctor = env.run_amplihack(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1), "{}", stdout(&doctor));
    assert!(
        stdout(&doctor).contains("Droid reads its hooks from"),
        "{}",
        stdout(&doctor)
    );
    std::fs::remove_file(&hooks_json).expect("rm");
    let doctor = env.run_amplihack(&["doctor"]);
    assert_success(&doctor);
}
