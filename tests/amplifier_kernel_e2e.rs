//! amplihack's Amplifier registration, driven through the real `amplifier-core` kernel (PyPI) by
//! the real hook-shell bridge (vendored in `tests/amplifier/hook-shell/`), mounted with its own
//! `mount` by `tests/amplifier/bridge_harness.py`, which records the hook commands it runs.

use serde_json::Value;

use crate::support;
use crate::support::{TestEnv, context_has, run_kernel_harness, stderr, stdout};

/// The bridge harness on the test's project.
fn bridge(env: &TestEnv, extra: &[(&str, &str)]) -> Vec<Value> {
    run_kernel_harness(env, "bridge_harness.py", &[env.project.as_os_str()], extra)
}

#[test]
fn the_installed_registration_injects_context_and_denies_through_the_real_kernel() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--scope", "project", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "Kernel-context marker: the corge project.",
    );

    let lines = bridge(&env, &[]);
    let result = |index: usize| &lines[index];

    // session:start: PROJECT.md injected as a system message in the session's context.
    let start = result(0);
    assert_eq!(start["emitted_action"], "inject_context", "{start}");
    assert!(
        start["context"]
            .as_array()
            .expect("context")
            .iter()
            .any(|c| c
                .as_str()
                .is_some_and(|s| s.contains("Kernel-context marker"))),
        "{start}"
    );
    assert!(
        start["runs"][0]["command"]
            .as_str()
            .is_some_and(|c| c.ends_with("session-start --host amplifier"))
    );

    // prompt:submit, the session's first: one registration runs every UserPromptSubmit
    // built-in (the bridge would stop at the first that injects context), and the
    // classification reminder reaches the context.
    let prompt = result(1);
    assert_eq!(prompt["action"], "continue", "{prompt}");
    assert_eq!(
        prompt["runs"].as_array().map(Vec::len),
        Some(1),
        "one UserPromptSubmit registration under Amplifier: {prompt}"
    );
    assert!(
        prompt["context"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c.as_str().is_some_and(|s| s.contains("opens a new topic"))),
        "{prompt}"
    );

    // tool:pre with the keys the bridge forwards: the --no-verify commit is denied, with the reason.
    let denied = result(2);
    assert_eq!(denied["action"], "deny", "{denied}");
    assert!(
        denied["reason"]
            .as_str()
            .is_some_and(|r| r.contains("git commit --no-verify")),
        "{denied}"
    );
    assert_eq!(
        result(3)["action"],
        "continue",
        "an ordinary command is allowed"
    );

    // What current orchestrators send: the bridge passes an empty tool name and input, so the
    // guard has nothing to judge and lets it through (a bridge limit, documented in the README).
    let modern = result(4);
    assert_eq!(modern["action"], "continue");
    assert_eq!(
        modern["runs"][0]["stdin"]
            .as_str()
            .map(|s| s.starts_with("{\"tool_name\": \"\", \"tool_input\": {}")),
        Some(true),
        "{modern}"
    );

    // Every other event: handled, exit 0, no stderr, never a block.
    for line in &lines[5..lines.len() - 1] {
        assert_eq!(line["action"], "continue", "{line}");
        for run in line["runs"].as_array().into_iter().flatten() {
            assert_eq!(run["exit"], 0, "{run}");
            assert_eq!(run["stderr"], "", "{run}");
        }
    }
    assert!(
        !env.root().join("logs/hooks.log").exists(),
        "amplihack logged a failure: {:?}",
        std::fs::read_to_string(env.root().join("logs/hooks.log"))
    );
}

/// The whole Amplifier picture: the bridge runs the project's plugins (amplihack's registration
/// among them), and amplihack forwards only the user-level ones. Each runs exactly once.
#[test]
fn under_amplifier_each_plugin_runs_exactly_once() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--scope", "project", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    env.plugin(
        &env.user_hooks_dir(),
        "user-plugin",
        &support::one_group(
            "UserPromptSubmit",
            None,
            vec![support::command(&env.mark("ran", "user-plugin"))],
        ),
    );
    env.plugin(
        &env.project_hooks_dir(),
        "project-plugin",
        &support::one_group(
            "UserPromptSubmit",
            None,
            vec![support::command(&env.mark("ran", "project-plugin"))],
        ),
    );
    // Trusted or not, project plugins are the bridge's to run under Amplifier. The bridge stops
    // at the first hook of an event that injects context, so here amplihack must say nothing on
    // the prompt (a nested session gets no reminder) for the project plugin to be reached.
    bridge(&env, &[("AMPLIHACK_SESSION_DEPTH", "1")]);
    let mut ran = env.marks("ran");
    ran.sort();
    assert_eq!(
        ran,
        ["project-plugin", "user-plugin"],
        "each exactly once for the one prompt:submit"
    );
}

/// The same built-ins, through the real kernel, answer in Amplifier's dialect: preferences and
/// the reminder as injected context on prompt:submit, a metrics line on tool:post, lock mode on
/// prompt:complete (a Stop Amplifier cannot block, so its reason reaches the model as context),
/// and the session record finished at session:end.
#[test]
fn the_built_ins_answer_in_amplifiers_dialect() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--scope", "project", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    env.write(
        &env.project.join(".claude/context/USER_PREFERENCES.md"),
        "### Verbosity\nkernel-terse\n",
    );
    let lock = env.run_amplihack(&["lock", "--message", "Keep going, kernel"]);
    assert!(lock.status.success(), "{}", stderr(&lock));

    let lines = bridge(&env, &[]);
    let by_event = |name: &str| {
        lines
            .iter()
            .find(|l| l["event"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {lines:?}"))
    };

    let prompt = by_event("prompt:submit");
    assert_eq!(prompt["emitted_action"], "inject_context", "{prompt}");
    assert!(
        context_has(&prompt, "- Verbosity: kernel-terse"),
        "{prompt}"
    );
    assert!(context_has(&prompt, "opens a new topic"), "{prompt}");

    let stop = by_event("prompt:complete");
    assert_eq!(stop["emitted_action"], "inject_context", "{stop}");
    assert_eq!(stop["action"], "continue", "Amplifier cannot block a Stop");
    assert!(context_has(&stop, "Keep going, kernel"), "{stop}");

    let metrics = std::fs::read_to_string(
        env.project
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
    )
    .expect("metrics file");
    let records: Vec<Value> = metrics
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(records.len(), 1, "{metrics}");
    assert_eq!(records[0]["success"], true);
    assert_eq!(records[0]["session_id"], "S-amplihack");

    let memory: Value = serde_json::from_str(&stdout(&env.session_memory())).expect("json");
    let record = memory["entries"][0]["text"].as_str().unwrap_or_default();
    assert!(record.contains("First prompt: please commit"), "{memory}");
    assert!(record.contains("Ended:"), "{memory}");
    assert!(
        !env.root().join("logs/hooks.log").exists(),
        "amplihack logged a failure: {:?}",
        std::fs::read_to_string(env.root().join("logs/hooks.log"))
    );
}
