//! A plugin's handler that fails (exit 1, a message on stderr, no JSON) is not blocking, and not
//! silent: natively Claude Code records the failure with its first stderr line in the session the
//! user sees, and lets the tool run. Through amplihack (the same plugin,
//! `tests/fixtures/plugins/crashing-check`, in `~/.amplifier/hooks/`) the tool runs too and the
//! session shows the same line, naming the plugin: Claude Code records a `hook_non_blocking_error`
//! of the plugin's own command natively, and a `hook_system_message` of amplihack's answer through
//! amplihack (the command that failed is the plugin's, which Claude Code did not run itself). The
//! model is sent the line neither way.

use crate::support::fake_anthropic::Turn;
use crate::support::{self, TestEnv, native};

const LINE: &str = "crashing-check: config.yml not found";

/// The session's transcript lines (Claude Code's own record, what its UI shows) that carry `LINE`.
fn transcript_mentions(env: &TestEnv) -> Vec<String> {
    env.claude_transcript_lines()
        .into_iter()
        .filter(|l| l.contains(LINE))
        .collect()
}

fn plugin() -> std::path::PathBuf {
    support::repo_root().join("tests/fixtures/plugins/crashing-check")
}

#[test]
fn a_crashing_handler_is_shown_and_the_tool_runs_as_natively() {
    let script = || vec![Turn::bash("echo ran > ran.txt"), Turn::text("done")];
    let native = native::natively(&plugin(), script());
    let mentions = transcript_mentions(&native.env);
    let native_model_saw = native
        .fake
        .main_requests()
        .iter()
        .any(|r| r.to_string().contains(LINE));
    assert!(
        native.env.project.join("ran.txt").exists(),
        "natively the tool ran"
    );
    assert!(
        mentions
            .iter()
            .any(|l| l.contains("\"hook_non_blocking_error\"")
                && l.contains(&format!("Failed with non-blocking status code: {LINE}"))),
        "natively: {mentions:#?}"
    );

    let forwarded = native::through_amplihack(&plugin(), script());
    let mentions = transcript_mentions(&forwarded.env);
    assert!(
        forwarded.env.project.join("ran.txt").exists(),
        "under amplihack the tool ran"
    );
    assert!(
        mentions
            .iter()
            .any(|l| l.contains("\"hook_system_message\"")
                && l.contains(&format!(
                    "hook from crashing-check failed with exit 1: {LINE}"
                ))),
        "under amplihack: {mentions:#?}"
    );
    assert_eq!(
        forwarded
            .fake
            .main_requests()
            .iter()
            .any(|r| r.to_string().contains(LINE)),
        native_model_saw,
        "the model is sent the failure the same way"
    );
}

/// The circuit breaker in the real Claude Code: the crashing plugin's handler, failing on every
/// Bash call, is shown for each of its first 5 failures, then parked for the rest of the session,
/// said once in the same non-blocking form (a `hook_system_message` in the session); every tool
/// call still runs.
#[test]
fn a_handler_that_keeps_failing_is_parked_and_said_once() {
    let calls = 7;
    let mut script: Vec<Turn> = (0..calls)
        .map(|i| Turn::bash(&format!("echo {i} >> ran.txt")))
        .collect();
    script.push(Turn::text("done"));
    let forwarded = native::through_amplihack(&plugin(), script);
    let ran = std::fs::read_to_string(forwarded.env.project.join("ran.txt")).unwrap_or_default();
    assert_eq!(ran.lines().count(), calls, "every tool call ran: {ran}");
    let mentions = transcript_mentions(&forwarded.env);
    let shown = |needle: &str| {
        mentions
            .iter()
            .filter(|l| l.contains("\"hook_system_message\"") && l.contains(needle))
            .count()
    };
    let parked = "failed 5 times in a row: parked for the rest of this session";
    assert_eq!(shown(parked), 1, "said once: {mentions:#?}");
    assert_eq!(
        shown("hook from crashing-check failed with exit 1"),
        5,
        "shown for each failure before it was parked, not after: {mentions:#?}"
    );
    let audit = forwarded.env.audit_log();
    assert_eq!(
        audit.iter().filter(|r| r["decision"] == "parked").count(),
        1,
        "{audit:#?}"
    );
    assert_eq!(
        audit
            .iter()
            .filter(|r| r["plugin"] == "user:crashing-check" && r["exit"] == 1)
            .count(),
        5,
        "it ran 5 times"
    );
}
