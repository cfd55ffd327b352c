//! Matchers are JavaScript regular expressions in Claude Code: the same plugin
//! (`tests/fixtures/plugins/js-matchers`: one PreToolUse group per matcher form, each recording its
//! name) loaded natively with `--plugin-dir` and through amplihack, in the real Claude Code, on one
//! Bash call. The groups that fire must be the same: lookahead, lookbehind, a backreference and a
//! named group fire; `(?i)`, Python's `(?P<…>)` and an unclosed group, which JavaScript rejects,
//! never do. `hooks validate` warns of the three.

use crate::support::fake_anthropic::Turn;
use crate::support::{self, TestEnv, native};

const FIRED: [&str; 5] = [
    "backreference",
    "lookahead",
    "lookbehind",
    "named-group",
    "plain",
];

fn fired(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_to_string(env.project.join("matched.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

fn plugin() -> std::path::PathBuf {
    support::repo_root().join("tests/fixtures/plugins/js-matchers")
}

#[test]
fn the_same_matchers_fire_under_amplihack_as_natively() {
    let script = || vec![Turn::bash("echo hello"), Turn::text("done")];
    let native = native::natively(&plugin(), script());
    let native = fired(&native.env);
    assert_eq!(native, FIRED, "natively");

    let forwarded = native::through_amplihack(&plugin(), script());
    let (env, run) = (&forwarded.env, &forwarded.run);
    assert_eq!(
        fired(env),
        native,
        "under amplihack (left) and natively (right)"
    );
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );

    let validate = env.run_amplihack(&["hooks", "validate"]);
    let text = support::stdout(&validate);
    for rejected in ["(?i)^bash$", "^(?P<t>Bash)$", "(unclosed"] {
        assert!(
            text.contains("warning: ") && text.contains(&format!("`{rejected}`")),
            "hooks validate does not warn of {rejected}: {text}"
        );
    }
    assert!(!text.contains("`^(?!Write$).*`"), "{text}");
}
