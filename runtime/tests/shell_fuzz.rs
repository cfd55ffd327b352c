//! Fuzzing the Bash guard's shell parser (expanding, and as written for reading hook commands):
//! generated commands (nested substitutions, quotes,
//! here-documents, arithmetic, brace groups, keywords, parameter forms) must never panic, never
//! overflow the stack and always be judged quickly; a dangerous command wrapped in any of the
//! forms that run it must be denied. The corpus in `tests/fuzz-corpus/` (inputs that once
//! mattered: crashes, slow shapes, bypasses) is replayed on every run; add a file there for every
//! input a fuzz run finds.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use amplihack_runtime::builtins::bash_guard::{GuardContext, check};
use amplihack_runtime::builtins::shell;
use proptest::prelude::*;

/// Per input, in a debug build on a shared machine: generous. Inputs here are at most a few KB
/// and are judged in microseconds; the quadratic parser took seconds on 40 KB.
const BOUND: Duration = Duration::from_secs(2);

fn var(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/u".to_string()),
        "CLAUDE_PROJECT_DIR" => Some("/home/u/work/proj".to_string()),
        _ => None,
    }
}

fn verdict(command: &str) -> Option<String> {
    let ctx = GuardContext {
        cwd: "/home/u/work/proj".into(),
        project_root: "/home/u/work/proj".into(),
        home: Some("/home/u".into()),
        var: &var,
    };
    check(command, &ctx)
}

/// Parses and judges `command`, asserting the time bound; returns the verdict.
fn judged(command: &str) -> Option<String> {
    let started = Instant::now();
    let _ = shell::parse(command, &var);
    let _ = shell::parse_as_written(command);
    let verdict = verdict(command);
    let took = started.elapsed();
    assert!(
        took < BOUND,
        "{} bytes took {took:?}: {:?}",
        command.len(),
        command.chars().take(200).collect::<String>()
    );
    verdict
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus")
}

/// Every corpus file is replayed. A file whose name starts with `deny-` must be denied, `allow-`
/// allowed; others only must not crash or stall.
#[test]
fn the_corpus_is_replayed() {
    let mut entries: Vec<_> = std::fs::read_dir(corpus_dir())
        .expect("tests/fuzz-corpus exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    assert!(entries.len() >= 20, "corpus has {} files", entries.len());
    for path in entries {
        let bytes = std::fs::read(&path).expect("corpus file");
        let command = String::from_utf8_lossy(&bytes);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let got = judged(&command);
        if name.starts_with("deny-") {
            assert!(got.is_some(), "{name} should be denied");
        } else if name.starts_with("allow-") {
            assert_eq!(got, None, "{name} should be allowed");
        }
    }
}

/// Shapes too large to keep as files: generated at test time.
#[test]
fn large_hostile_shapes_are_judged_without_overflow() {
    let deep =
        |open: &str, close: &str, n: usize| format!("echo {}x{}", open.repeat(n), close.repeat(n));
    for (command, denied) in [
        (deep("$(echo ", ")", 10_000), true),
        (deep("$(echo ", ")", 100_000), true),
        (deep("${X:-", "}", 50_000), true),
        (deep("$((", "))", 50_000), true),
        (deep("\"$(echo ", ")\"", 50_000), true),
        (deep("$(echo \"", "\")", 50_000), true),
        (deep("(", ")", 100_000), false),
        (deep("{ ", "; }", 50_000), false),
        (deep("`", "`", 50_000), false),
        ("$(".repeat(100_000), true),
        ("${".repeat(100_000), true),
        ("\"".repeat(100_000), false),
        ("{a,".repeat(50_000), false),
        ("<<E\n".repeat(50_000), false),
        ("eval ".repeat(50_000), true),
    ] {
        let got = judged(&command);
        assert_eq!(
            got.is_some(),
            denied,
            "{:?}…",
            &command[..40.min(command.len())]
        );
    }
}

/// `s` single-quoted for the shell.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

/// Shells inside substitutions inside shells: each level's `$(` count toward one bound, so the
/// stack cannot grow with the number of levels (12 levels of 62 would be 744 deep).
#[test]
fn shells_nested_in_substitutions_share_one_depth_bound() {
    let mut command = String::from("rm -rf ~");
    for level in 1..=12 {
        let deep = if level == 1 { 3 } else { 62 };
        command = format!(
            "echo {}$(bash -c {}){}",
            "$(echo ".repeat(deep - 1),
            quoted(&command),
            ")".repeat(deep - 1)
        );
        let reason = judged(&command).unwrap_or_else(|| panic!("level {level} allowed"));
        let expected = if level == 1 {
            "recursively delete"
        } else {
            "deeper"
        };
        assert!(reason.contains(expected), "level {level}: {reason}");
    }
    assert!(command.len() > 1 << 20, "{}", command.len());
}

/// Words and fragments the shell gives meaning to.
fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "git",
            "commit",
            "push",
            "--no-verify",
            "-n",
            "-m",
            "rm",
            "-rf",
            "-r",
            "~",
            "~+",
            "/",
            "*",
            ".*",
            "$HOME",
            "${HOME}",
            "${HOME%/}",
            "${HOME:?}",
            "${X:-/}",
            "$IFS",
            "${IFS}",
            "$1",
            "$@",
            "$?",
            "x",
            "echo",
            ":",
            "true",
            "cd",
            "..",
            "bash",
            "-c",
            "-o",
            "pipefail",
            "eval",
            "env",
            "sudo",
            "exec",
            "-a",
            "coproc",
            "D=~",
            "NV=--no-verify",
            "$D",
            "$NV",
            "\\",
            "\\\\",
            "'",
            "\"",
            "`",
            "$",
            "${",
            "$(",
            "$((",
            ")",
            "}",
            "{",
            ",",
            "{a,b}",
            "#",
            "=",
            "!",
            "&",
            "|",
            ";",
            ";;",
            "\n",
            "\t",
            "<",
            ">",
            "2>&1",
            "<<",
            "<<-",
            "<<<",
            "EOF",
            "é",
            "\u{0}",
            "—",
            "[",
            "]",
            "?",
            "%",
            "%%",
            "#",
            "##",
            ":-",
            ":=",
            ":?",
        ])
        .prop_map(str::to_string),
        "[a-z$~/{},.*'\"`\\\\()#;&|<>= \n-]{0,12}",
    ]
}

/// Commands built by nesting the shell's forms.
fn command() -> impl Strategy<Value = String> {
    let leaf = prop::collection::vec(atom(), 1..6).prop_map(|w| w.join(" "));
    leaf.prop_recursive(6, 128, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| format!("$({x})")),
            inner.clone().prop_map(|x| format!("`{x}`")),
            inner.clone().prop_map(|x| format!("\"{x}\"")),
            inner.clone().prop_map(|x| format!("'{x}'")),
            inner.clone().prop_map(|x| format!("$(( {x} ))")),
            inner.clone().prop_map(|x| format!("${{X:-{x}}}")),
            inner.clone().prop_map(|x| format!("${{HOME%{x}}}")),
            inner.clone().prop_map(|x| format!("{{ {x}; }}")),
            inner.clone().prop_map(|x| format!("({x})")),
            inner.clone().prop_map(|x| format!("{{{x},{x}}}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("if {a}; then {b}; fi")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("while {a}; do {b}; done")),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("case {a} in x) {b};; *) :;; esac")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} | {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} && {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}; {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("cat <<EOF\n{a}\nEOF\n{b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("cat <<'EOF'\n{a}\nEOF\n{b}")),
            inner
                .clone()
                .prop_map(|x| format!("bash -o pipefail -c '{x}'")),
            inner.clone().prop_map(|x| format!("eval {x}")),
            inner.clone().prop_map(|x| format!("A={x}; echo $A")),
            inner.prop_map(|x| format!("coproc {x}")),
        ]
    })
}

/// A dangerous command inside forms that run it, `depth` deep.
fn wrapped_danger() -> impl Strategy<Value = String> {
    let core = prop::sample::select(vec![
        "git commit --no-verify -m x",
        "git push --no-verify",
        "rm -rf ~",
        "rm -rf /",
        "rm -rf \"${HOME:?}\"",
        "git -c core.hooksPath=/dev/null commit -m x",
    ])
    .prop_map(str::to_string);
    let form = prop::collection::vec(0usize..12, 0..6);
    (core, form).prop_map(|(mut command, forms)| {
        for form in forms {
            command = match form {
                0 => format!("echo $({command})"),
                1 => format!("if {command}; then :; fi"),
                2 => format!("while {command}; do :; done"),
                3 => format!("{{ {command}; }}"),
                4 => format!("({command})"),
                5 => format!("true && {command}"),
                6 => format!(": $(( $({command}) ))"),
                7 => format!("coproc {command}"),
                8 => format!("x=\"$({command})\""),
                9 => format!("cat <<EOF\n$({command})\nEOF"),
                10 => format!("echo ${{X:-$({command})}}"),
                _ => format!("! {command}"),
            };
        }
        command
    })
}

proptest! {
    // 512 cases a run (`PROPTEST_CASES=100000` for a longer hunt).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    /// No generated command panics, overflows or stalls the parser or the guard.
    #[test]
    fn generated_commands_are_judged_quickly(command in command()) {
        let _ = judged(&command);
    }

    /// Random text over the shell's special characters.
    #[test]
    fn arbitrary_text_is_judged_quickly(command in "[ -~\n\t\u{0}é]{0,400}") {
        let _ = judged(&command);
    }

    /// Deep nesting of mixed openers, closed or not.
    #[test]
    fn deep_mixed_nesting_never_overflows(
        openers in prop::collection::vec(
            prop::sample::select(vec!["$(", "${X:-", "$((", "\"$(", "`", "(", "{ ", "'", "\""]),
            0..300,
        ),
        close in any::<bool>(),
    ) {
        let mut command: String = openers.concat();
        command.push_str("git commit --no-verify");
        if close {
            for opener in openers.iter().rev() {
                command.push_str(match *opener {
                    "$(" | "(" => ")",
                    "${X:-" => "}",
                    "$((" => "))",
                    "\"$(" => ")\"",
                    "{ " => "; }",
                    other => other,
                });
            }
        }
        let _ = judged(&command);
    }

    /// However the dangerous command is wrapped in forms that run it, it is denied.
    #[test]
    fn a_dangerous_command_is_denied_however_wrapped(command in wrapped_danger()) {
        prop_assert!(judged(&command).is_some(), "allowed: {command}");
    }

    /// A mention in single quotes (or a commit message) is allowed.
    #[test]
    fn a_quoted_mention_is_allowed(text in "[a-z ~/*.$(){}`\";&|-]{0,60}") {
        let text = text.replace('\'', "");
        prop_assert_eq!(judged(&format!("echo '{text}'")), None);
        prop_assert_eq!(judged(&format!("git commit -m '{text} --no-verify'")), None);
    }
}
