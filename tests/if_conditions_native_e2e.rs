//! A handler's `if` is a permission rule, read by Claude Code's grammar: the same plugin
//! (`tests/fixtures/plugins/if-conditions`: one PreToolUse handler per rule form, each recording
//! its name and the Bash command) loaded natively with `--plugin-dir` and through amplihack, in
//! the real Claude Code, on the same Bash calls. The handlers that run, call by call, must be the
//! same: `Bash(git *)` and `Bash(git:*)` also hold for a bare `git`, a glob `*` holds inside a
//! word, a rule for another tool never holds, and so on (the table in engine/src/matcher.rs).

use crate::support::fake_anthropic::Turn;
use crate::support::{self, TestEnv, native};

const CALLS: [&str; 6] = [
    "git",
    "git status",
    "gitk --all",
    "cd . && git log --oneline",
    "git log --oneline",
    "echo 'unterminated",
];

fn ran(env: &TestEnv) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(env.project.join("if.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn plugin() -> std::path::PathBuf {
    support::repo_root().join("tests/fixtures/plugins/if-conditions")
}

#[test]
fn the_same_if_conditions_hold_under_amplihack_as_natively() {
    let script = || {
        let mut turns: Vec<Turn> = CALLS.iter().map(|c| Turn::bash(c)).collect();
        turns.push(Turn::text("done"));
        turns
    };
    let native = native::natively(&plugin(), script());
    let native = ran(&native.env);
    println!("natively:\n{}", native.join("\n"));
    // The cases amplihack read differently before (issue 36): a trailing ` *` holds for the bare
    // word; an unclosed rule never holds (it is not a rule, so it names no tool).
    assert!(
        native.contains(&"space-star\tgit".to_string()),
        "{native:?}"
    );
    assert!(
        !native.contains(&"space-star\tgitk --all".to_string()),
        "{native:?}"
    );
    assert!(
        native.iter().all(|l| !l.starts_with("unclosed-rule")),
        "{native:?}"
    );
    assert!(
        native.contains(&"star-in-word\tgitk --all".to_string()),
        "{native:?}"
    );

    let forwarded = native::through_amplihack(&plugin(), script());
    let (env, run) = (&forwarded.env, &forwarded.run);
    let through = ran(env);
    assert_eq!(
        through, native,
        "under amplihack (left) and natively (right)"
    );
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );
}
