//! The other dialects in the real Claude Code (2.1.328, against the scripted fake API), behind
//! `amplihack install`: the proposal's YAML (its matcher rule blocks without starting a process; a
//! fail-closed hook that times out denies) and AMCP's example hooks in a trusted project, with
//! `feedback` and `updatedResponse` reaching the model.

use serde_json::{Value, json};

use crate::support;
use crate::support::TestEnv;
use crate::support::fake_anthropic::{FakeAnthropic, Turn};

fn fixture(path: &str) -> std::path::PathBuf {
    support::repo_root()
        .join("tests/fixtures/dialects")
        .join(path)
}

fn copy(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::copy(from, to).expect("copy");
}

fn write_turn(path: &std::path::Path, content: &str) -> Turn {
    Turn::ToolUse {
        name: "Write".into(),
        input: json!({"file_path": path, "content": content}),
    }
}

fn denied_tools(run: &support::ClaudeRun) -> Vec<String> {
    run.result["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let input = &d["tool_input"];
            input["command"]
                .as_str()
                .or_else(|| input["file_path"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn proposal_yaml_and_amcp_files_in_the_real_claude_code() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    let hooks = env.user_hooks_dir();
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    // The proposal's YAML as written, and the script its first hook names.
    copy(
        &fixture("proposal/hooks.yaml"),
        &hooks.join("guard/hooks.yaml"),
    );
    env.write(
        &hooks.join("pre_tool.py"),
        &format!(
            "import json, sys\nevent = json.load(sys.stdin)\nopen({:?}, 'a').write(str(event['args'].get('command', event['tool'])) + '\\n')\nprint(json.dumps({{'action': 'allow'}}))\n",
            marks.join("pre_tool").display().to_string()
        ),
    );
    // A fail-closed hook that hangs on writes.
    env.write(
        &hooks.join("strict/hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - type: command\n      command: \"grep -q '\\\"tool\\\": *\\\"Write\\\"' && sleep 10; echo '{\\\"action\\\": \\\"allow\\\"}'\"\n      timeout_ms: 1000\n      on_failure: block\n",
    );
    // An AMCP user file that replaces what `bash` printed.
    env.write(
        &env.home.join(".config/amcp/hooks.toml"),
        "[[hooks.PostToolUse.handlers]]\nmatcher = \"bash\"\ntype = \"command\"\ncommand = \"echo '{\\\"updatedResponse\\\": \\\"AMCP-REPLACED-OUTPUT\\\"}'\"\n",
    );

    let fake = FakeAnthropic::start(vec![
        Turn::bash("rm -rf build"),
        write_turn(&env.project.join("notes.txt"), "hi"),
        Turn::bash("echo original-output"),
        Turn::text("done"),
    ]);
    let run = env.claude(&fake.url, "tidy up");
    assert_eq!(
        denied_tools(&run),
        [
            "rm -rf build".to_string(),
            env.project.join("notes.txt").display().to_string()
        ],
        "{}",
        run.result
    );
    let saw = fake.everything_the_model_saw();
    assert!(
        saw.contains("Destructive rm commands require confirmation"),
        "{saw}"
    );
    assert!(
        saw.contains("timed out") && saw.contains("on_failure: block"),
        "{saw}"
    );
    let post: Vec<&str> = run
        .debug_log
        .lines()
        .filter(|l| l.contains("PostToolUse") || l.contains("updated"))
        .collect();
    let results: Vec<&str> = saw
        .match_indices("tool_result")
        .map(|(i, _)| &saw[i..(i + 300).min(saw.len())])
        .collect();
    assert!(
        saw.contains("AMCP-REPLACED-OUTPUT"),
        "updatedToolOutput honoured: {post:#?} {results:#?}"
    );
    assert!(
        !saw.contains("original-output\\n"),
        "the output was replaced: {saw}"
    );
    assert!(!env.project.join("notes.txt").exists());
    let started = std::fs::read_to_string(marks.join("pre_tool")).unwrap_or_default();
    assert!(
        !started.contains("rm -rf"),
        "the rule started no process: {started}"
    );
    assert!(started.contains("echo original-output"), "{started}");
}

#[test]
fn amcp_examples_in_a_trusted_project_under_the_real_claude_code() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
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
    assert!(trust.status.success(), "{}", support::stderr(&trust));
    let bin = env.root().join("bin");
    env.script(&bin.join("ruff"), "echo \"E501 line too long in $2\"");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let fake = FakeAnthropic::start(vec![
        write_turn(&env.project.join(".env"), "TOKEN=1"),
        write_turn(&env.project.join("main.py"), "print('hi')\n"),
        Turn::text("done"),
    ]);
    let run = env.claude_with(
        &fake.url,
        &["-p", "write files"],
        &[("PATH", path.as_str())],
    );
    assert_eq!(
        denied_tools(&run),
        [env.project.join(".env").display().to_string()],
        "{}",
        run.result
    );
    assert!(!env.project.join(".env").exists());
    assert!(env.project.join("main.py").exists());
    let saw = fake.everything_the_model_saw();
    assert!(saw.contains("is blocked for security"), "{saw}");
    assert!(
        saw.contains("Lint issues: E501 line too long"),
        "feedback reaches the model: {saw}"
    );
    let _: Value = run.result;
}

/// The proposal's `type: llm` hook in the real Claude Code, with no key of amplihack's: the hook
/// asks the Claude Code that called it (`claude -p`, found from the `CLAUDE_PID` it gives hooks,
/// with its own credentials, hooks off). The model's `{"safe": false}` denies the first Bash
/// call and its reason reaches the model; the identical second call is answered from the session's
/// cache; the side question starts no session of its own (a SessionStart plugin sees one session).
#[test]
fn llm_hook_asks_the_calling_claude_code_in_the_real_claude_code() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    let hooks = env.user_hooks_dir();
    let yaml = std::fs::read_to_string(fixture("proposal/hook-types.yaml")).expect("yaml");
    let llm_only = format!(
        "hooks:\n  PreToolUse:\n{}",
        &yaml[yaml.find("    - type: llm").expect("llm")..]
    );
    env.write(&hooks.join("judge/hooks.yaml"), &llm_only);
    let sessions = env.root().join("sessions");
    env.write(
        &hooks.join("sessions/hooks.json"),
        &json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command",
            "command": format!("grep -o '\"session_id\":\"[^\"]*\"' >> {}", sessions.display())}]}]}})
        .to_string(),
    );

    let fake = FakeAnthropic::start_with(
        vec![
            Turn::bash("curl x | sh"),
            Turn::bash("curl x | sh"),
            Turn::text("done"),
        ],
        vec![(
            "Evaluate if this tool use is safe",
            r#"{"safe": false, "reason": "LLM-JUDGE: too risky"}"#,
        )],
    );
    let run = env.claude(&fake.url, "install it");
    assert_eq!(
        denied_tools(&run),
        ["curl x | sh".to_string(), "curl x | sh".to_string()],
        "{}",
        run.result
    );
    let saw = fake.everything_the_model_saw();
    assert!(saw.contains("LLM-JUDGE: too risky"), "{saw}");
    let asked = fake.canned_requests();
    assert_eq!(
        asked.len(),
        1,
        "the second, identical call came from the cache"
    );
    assert_eq!(asked[0]["model"], json!("claude-3-haiku"));
    assert!(
        asked[0]["tools"].as_array().is_none_or(Vec::is_empty),
        "{}",
        asked[0]
    );
    let started = std::fs::read_to_string(&sessions).unwrap_or_default();
    assert_eq!(started.lines().count(), 1, "one session: {started}");
}
