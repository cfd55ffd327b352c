//! The built-ins, installed by `amplihack install` as a user installs them, inside the real
//! Claude Code (offline, against the loopback fake of the Messages API): what each one answers is
//! what the host does and what the model sees.

use serde_json::Value;

use crate::support;
use crate::support::capabilities::{Capability, npm_version, proved};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{ClaudeRun, TestEnv, stderr};

fn installed() -> TestEnv {
    let env = TestEnv::new();
    let output = env.run_amplihack(&["install", "--host", "claude"]);
    assert!(output.status.success(), "{}", stderr(&output));
    env
}

/// No hook failed, answered something Claude Code could not use, or logged a failure.
fn assert_clean(env: &TestEnv, run: &ClaudeRun) {
    assert!(
        run.hook_complaints().is_empty(),
        "hook complaints: {:#?}",
        run.hook_complaints()
    );
    let log = env.root().join("logs/hooks.log");
    assert!(
        !log.exists(),
        "amplihack logged a failure: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn lock_mode_keeps_a_model_that_says_done_working_for_exactly_n_stops() {
    let env = installed();
    let lock = env.run_amplihack(&["lock", "--message", "Keep polishing the zebra parser"]);
    assert!(lock.status.success(), "{}", stderr(&lock));
    let fake = FakeAnthropic::start(vec![Turn::text("Done."); 6]);
    let run = env.claude_with(
        &fake.url,
        &["-p", "build the zebra parser"],
        &[("AMPLIHACK_MAX_LOCK_ITERATIONS", "2")],
    );
    assert_clean(&env, &run);
    let requests = fake.main_requests();
    assert_eq!(
        requests.len(),
        3,
        "the first answer, then exactly 2 continuations"
    );
    let version = npm_version(&support::claude_bin());
    proved("claude", &version, Capability::KeepGoing);
    let last = requests.last().map(Value::to_string).unwrap_or_default();
    assert_eq!(
        count(
            &last,
            "Stop hook feedback:\\nKeep polishing the zebra parser"
        ),
        2,
        "the lock's message reached the model at exactly two stops"
    );
    proved("claude", &version, Capability::LockMode);
    assert!(last.contains("continuation 2 of at most 2"));
    assert!(!last.contains("continuation 3"));
    // The safety valve turned lock mode off and said so.
    let status = support::stdout(&env.run_amplihack(&["lock", "--status"]));
    assert!(status.contains("lock mode is off"), "{status}");
}

#[test]
fn the_reminder_reaches_the_model_on_a_new_topic_and_not_on_a_follow_up() {
    let env = installed();
    let marker = "opens a new topic";
    let fake = FakeAnthropic::start(vec![Turn::text("Classified: DEVELOPMENT. Done.")]);
    let first = env.claude(&fake.url, "implement a parser for the config format");
    assert_clean(&env, &first);
    let seen = fake.everything_the_model_saw();
    assert!(seen.contains(marker), "the first prompt gets the reminder");
    // Since 2.1.292 Claude Code escapes a `<system-reminder>` tag in hook output: none is sent.
    assert!(!seen.contains("&lt;system-reminder"), "{seen}");

    let follow = FakeAnthropic::start(vec![Turn::text("Tests added.")]);
    let second = env.claude_with(
        &follow.url,
        &["-p", "also add tests for that parser please", "--continue"],
        &[],
    );
    assert_clean(&env, &second);
    let last = follow
        .main_requests()
        .last()
        .map(Value::to_string)
        .unwrap_or_default();
    assert!(
        last.contains("also add tests for that parser"),
        "the follow-up was sent: {last}"
    );
    assert_eq!(
        count(&last, marker),
        1,
        "only the first prompt's reminder is in the continued conversation"
    );
}

/// A project's own reminder text written with `<system-reminder>` tags (as amplihack's Python
/// predecessor shipped it) reads as plain text in the newest and the oldest Claude Code: the tags
/// are taken out, not escaped (2.1.292 and later) nor doubled.
#[test]
fn a_tagged_reminder_reads_as_plain_text_in_every_version() {
    for (claude, debug_file) in [
        (support::claude_bin(), true),
        (support::oldest_claude_bin(), false),
    ] {
        let env = installed();
        env.write(
            &env.project.join(".claude/context/WORKFLOW_REMINDER.md"),
            "<system-reminder source=\"amplihack-workflow-classification\">\nClassify the zebra request first.\n</system-reminder>\n",
        );
        let fake = FakeAnthropic::start(vec![Turn::text("Classified.")]);
        env.claude_bin_with(
            &claude,
            &fake.url,
            &["-p", "implement a parser for the zebra format"],
            &[],
            debug_file,
        );
        let seen = fake.everything_the_model_saw();
        assert!(
            seen.contains("Classify the zebra request first."),
            "{}: {seen}",
            claude.display()
        );
        // The reminder (UserPromptSubmit) reached the model, in this version too.
        let version = npm_version(&claude);
        proved("claude", &version, Capability::Context);
        proved(
            "claude",
            &version,
            Capability::Events(vec!["UserPromptSubmit"]),
        );
        assert!(
            !seen.contains("&lt;system-reminder")
                && !seen.contains("system-reminder source=\\\"amplihack"),
            "{}: {seen}",
            claude.display()
        );
    }
}

#[test]
fn preferences_and_an_agents_memory_reach_the_model() {
    let env = installed();
    env.write(
        &env.project.join(".claude/context/USER_PREFERENCES.md"),
        "# Preferences\n\n### Verbosity\nterse-pirate-mode\n\n### Communication Style\n(not set)\n",
    );
    env.write(
        &env.project.join(".claude/agents/core/architect.md"),
        "---\nname: architect\n---\nDesigns things.\n",
    );
    let add = env.run_amplihack(&[
        "memory",
        "add",
        "--agent",
        "architect",
        "Prefers ports-and-adapters over layered designs",
    ]);
    assert!(add.status.success(), "{}", stderr(&add));
    let fake = FakeAnthropic::start(vec![Turn::text("Reviewed.")]);
    let run = env.claude(&fake.url, "ask @architect to review the storage module");
    assert_clean(&env, &run);
    let first = fake
        .main_requests()
        .first()
        .map(Value::to_string)
        .unwrap_or_default();
    assert!(first.contains("- Verbosity: terse-pirate-mode"), "{first}");
    assert!(
        first.contains("Prefers ports-and-adapters over layered designs"),
        "{first}"
    );
}

#[test]
fn metrics_have_one_line_per_tool_call_and_the_session_is_remembered() {
    let env = installed();
    let fake = FakeAnthropic::start(vec![
        Turn::bash("echo one > one.txt"),
        Turn::bash("echo two"),
        Turn::text("done"),
    ]);
    let run = env.claude(&fake.url, "write the numbers");
    assert_clean(&env, &run);
    let metrics = std::fs::read_to_string(
        env.project
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
    )
    .expect("metrics file");
    let lines: Vec<Value> = metrics
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2, "{metrics}");
    for line in &lines {
        assert_eq!(line["tool_name"], "Bash");
        assert_eq!(line["success"], true);
        assert!(line["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
        assert_eq!(line["session_id"], run.result["session_id"]);
    }
    let memory: Value =
        serde_json::from_str(&support::stdout(&env.session_memory())).expect("json");
    let record = memory["entries"][0]["text"].as_str().unwrap_or_default();
    assert!(
        record.contains("First prompt: write the numbers"),
        "{memory}"
    );
    assert!(record.contains("Tools used: Bash ×2"), "{memory}");
}

#[test]
fn reflection_runs_a_real_claude_once_and_its_summary_reaches_the_model() {
    let env = installed();
    // The user's own opt-in (a file in the project switches nothing on).
    env.write(
        &env.home
            .join(".amplihack/.claude/tools/amplihack/.reflection_config"),
        "{\"enabled\": true}",
    );
    let findings = "## Summary\nThe parser was built (reflection-marker-42).\n## What went well\nSmall steps.\n## What to improve\n- [PROJECT] more tests\n## Suggested follow-ups\nNone.";
    let fake = FakeAnthropic::start_with(
        vec![
            Turn::text("Done."),
            Turn::text("Here are the findings."),
            Turn::text("Done."),
        ],
        vec![("reviewing a finished session", findings)],
    );
    let claude = support::claude_bin();
    let run = env.claude_with(
        &fake.url,
        &["-p", "build the parser"],
        &[("AMPLIHACK_CLAUDE_BIN", &claude.to_string_lossy())],
    );
    assert_clean(&env, &run);
    assert_eq!(
        fake.canned_requests().len(),
        1,
        "reflection ran exactly once"
    );
    let requests = fake.main_requests();
    assert_eq!(requests.len(), 2, "one blocked stop, then the session ends");
    let last = requests.last().map(Value::to_string).unwrap_or_default();
    assert!(last.contains("reflection-marker-42"), "{last}");
    let session = run.result["session_id"].as_str().unwrap_or_default();
    let saved = env
        .project
        .join(".claude/runtime/reflection")
        .join(session)
        .join("findings.md");
    assert!(
        std::fs::read_to_string(&saved).is_ok_and(|t| t.contains("reflection-marker-42")),
        "{}",
        saved.display()
    );
}
