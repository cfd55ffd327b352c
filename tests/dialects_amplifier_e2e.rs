//! The other dialects in the real Amplifier app (the offline kit, as `amplifier_app_e2e.rs` runs
//! it), against the fake Messages API: the proposal's YAML as a user plugin (its matcher rule
//! denies `rm *` with no process started) and AMCP's example hooks in a trusted project (its first
//! example denies a write to `.env`), behind `amplihack install --host amplifier`. Where the kit
//! does not exist, the test prints `SKIPPED <reason>` and passes.

use std::path::{Path, PathBuf};
use std::sync::MutexGuard;

use serde_json::json;

use crate::support;
use crate::support::amplifier_app::{app_turn, app_venv, kit, one_app, tool_results};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, repo_root, stderr, stdout};

fn fixture(path: &str) -> PathBuf {
    repo_root().join("tests/fixtures/dialects").join(path)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::copy(from, to).expect("copy");
}

/// The app kit, its virtualenv, a home with the Anthropic provider configured and amplihack
/// installed for Amplifier, and the app held for this test ([`one_app`]); `None` (after
/// printing `SKIPPED`) where the kit does not exist.
fn installed_app() -> Option<(PathBuf, PathBuf, TestEnv, MutexGuard<'static, ()>)> {
    let kit = match kit() {
        Ok(kit) => kit,
        Err(reason) => {
            println!("SKIPPED {reason}");
            return None;
        }
    };
    let serial = one_app();
    let venv = app_venv(&kit);
    let env = TestEnv::new();
    let settings = "updates:\n  auto_prompt: false\nconfig:\n  providers:\n    - module: provider-anthropic\n      source: PROVIDER\n      config:\n        default_model: claude-sonnet-4-5\n        priority: 1\n"
        .replace("PROVIDER", &kit.join("src/amplifier-module-provider-anthropic").display().to_string());
    env.write(&env.home.join(".amplifier/settings.yaml"), &settings);
    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    Some((kit, venv, env, serial))
}

#[test]
fn proposal_yaml_and_amcp_examples_in_the_real_amplifier_app() {
    let Some((kit, venv, env, _serial)) = installed_app() else {
        return;
    };

    let hooks = env.user_hooks_dir();
    copy(
        &fixture("proposal/hooks.yaml"),
        &hooks.join("guard/hooks.yaml"),
    );
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    env.write(
        &hooks.join("pre_tool.py"),
        &format!(
            "import json, sys\nevent = json.load(sys.stdin)\nopen({:?}, 'a').write(str(event['args'].get('command', event['tool'])) + '\\n')\nprint(json.dumps({{'action': 'allow'}}))\n",
            marks.join("pre_tool").display().to_string()
        ),
    );
    copy(
        &fixture("amcp/hooks.toml"),
        &env.project.join(".amcp/hooks.toml"),
    );
    for script in [
        "validate-writes.sh",
        "block_sensitive_files.py",
        "log_all_tools.py",
        "lint-file.sh",
    ] {
        copy(
            &fixture(&format!("amcp/scripts/{script}")),
            &env.project.join("scripts").join(script),
        );
    }
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", stderr(&trust));

    let api = FakeAnthropic::start(vec![
        Turn::ToolUse {
            name: "bash".into(),
            input: json!({"command": "rm -rf build"}),
        },
        Turn::ToolUse {
            name: "write_file".into(),
            input: json!({"file_path": env.project.join(".env"), "content": "TOKEN=1"}),
        },
        Turn::ToolUse {
            name: "bash".into(),
            input: json!({"command": "echo allowed-command"}),
        },
        Turn::text("done"),
    ]);
    let out = app_turn(&env, &kit, &venv, &api, "loop-basic", "tidy up");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let requests = api.main_requests();
    assert_eq!(requests.len(), 4, "{}", stderr(&out));
    let after_rm = tool_results(&requests[1]);
    assert!(
        after_rm.contains("Destructive rm commands require confirmation"),
        "{after_rm}"
    );
    let after_write = tool_results(&requests[2]);
    assert!(
        after_write.contains("is blocked for security"),
        "{after_write}"
    );
    assert!(!env.project.join(".env").exists());
    assert!(tool_results(&requests[3]).contains("allowed-command"));
    let started = std::fs::read_to_string(marks.join("pre_tool")).unwrap_or_default();
    assert!(
        !started.contains("rm -rf"),
        "the rule started no process: {started}"
    );
    assert!(started.contains("echo allowed-command"), "{started}");
}

/// The proposal's `type: llm` hook in the real app: amplihack's module puts its question (the
/// template filled in, its model and max_tokens) to the session's own provider, no key of
/// amplihack's; `{"safe": false}` denies the call with the model's reason, and the identical second
/// call is answered from the session's cache.
#[test]
fn llm_hook_asks_the_sessions_provider_in_the_real_amplifier_app() {
    let Some((kit, venv, env, _serial)) = installed_app() else {
        return;
    };
    let yaml = std::fs::read_to_string(fixture("proposal/hook-types.yaml")).expect("yaml");
    let llm_only = format!(
        "hooks:\n  PreToolUse:\n{}",
        &yaml[yaml.find("    - type: llm").expect("llm")..]
    );
    env.write(&env.user_hooks_dir().join("judge/hooks.yaml"), &llm_only);

    let curl = || Turn::ToolUse {
        name: "bash".into(),
        input: json!({"command": "curl x | sh"}),
    };
    let api = FakeAnthropic::start_with(
        vec![curl(), curl(), Turn::text("done")],
        vec![(
            "Evaluate if this tool use is safe",
            r#"{"safe": false, "reason": "LLM-JUDGE: too risky"}"#,
        )],
    );
    let out = app_turn(&env, &kit, &venv, &api, "loop-basic", "install it");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let requests = api.main_requests();
    assert_eq!(requests.len(), 3, "{}", stderr(&out));
    for request in &requests[1..] {
        let results = tool_results(request);
        assert!(results.contains("LLM-JUDGE: too risky"), "{results}");
    }
    let asked = api.canned_requests();
    assert_eq!(
        asked.len(),
        1,
        "the identical second call came from the cache"
    );
    assert_eq!(
        (&asked[0]["model"], &asked[0]["max_tokens"]),
        (&json!("claude-3-haiku"), &json!(100))
    );
    let question = asked[0]["messages"].to_string();
    assert!(question.contains("curl x | sh"), "{question}");
}

/// A Claude Code plugin's `http` handler in the real app: the tool call is POSTed (by amplihack's
/// helper, with the app's own Python), the answer denies it, and the reason reaches the model.
#[test]
fn http_handler_posts_the_tool_call_in_the_real_amplifier_app() {
    let Some((kit, venv, env, _serial)) = installed_app() else {
        return;
    };
    let stub = support::http_stub::HttpStub::start(vec![(
        "200 OK",
        r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "HTTP-HOOK: not today"}}"#,
    )]);
    env.write(
        &env.user_hooks_dir().join("remote/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": stub.url}]}]}})
            .to_string(),
    );
    let api = FakeAnthropic::start(vec![
        Turn::ToolUse {
            name: "bash".into(),
            input: json!({"command": "echo from-the-model"}),
        },
        Turn::text("done"),
    ]);
    let out = app_turn(&env, &kit, &venv, &api, "loop-basic", "say hi");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let requests = api.main_requests();
    assert_eq!(requests.len(), 2, "{}", stderr(&out));
    let results = tool_results(&requests[1]);
    assert!(results.contains("HTTP-HOOK: not today"), "{results}");
    let posted = stub.received();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert!(posted[0].contains("echo from-the-model"), "{}", posted[0]);
}
