//! What the Bash guard costs on hostile input: 1 MB commands of many shapes, judged in-process
//! (no process started), each timed on its own. Hostile-repos finding 10 measured the parse
//! before: 10,000 nested `$(` took 21.6 s and 2.1 GB, 20,000 overflowed the stack.
//!
//! Run: `cargo bench --bench guard`. The goal is 50 ms per 1 MB command in the release build;
//! machines differ by 2x, so unlike the other benches this one has an absolute gate: it exits
//! non-zero when a shape's best of three runs exceeds `AMPLIHACK_BENCH_GUARD_MAX_MS` (default
//! 100, twice the goal). Each figure is printed beside the goal.
//!
//! The same lexer reads hook commands as written (command recognition, trust's reading of a
//! plugin's command: [`shell::parse_into_as_written`]), which a hostile repository writes: each
//! shape is read that way too, every command handed to a sink as trust's reading does, against
//! the same goal.

use std::time::{Duration, Instant};

use amplihack_runtime::builtins::bash_guard::{GuardContext, check};
use amplihack_runtime::builtins::shell;

const MIB: usize = 1 << 20;
const GOAL: Duration = Duration::from_millis(50);

/// `s` as the body of one more level of backticks.
fn backtick_level(s: &str) -> String {
    format!(
        "echo `{}`",
        s.replace('\\', "\\\\")
            .replace('`', "\\`")
            .replace('$', "\\$")
    )
}

fn fill(unit: &str) -> String {
    unit.repeat(MIB / unit.len())
}

fn shapes() -> Vec<(&'static str, String)> {
    let nested = |open: &str, close: &str| {
        let depth = MIB / (open.len() + close.len());
        format!("echo {}x{}", open.repeat(depth), close.repeat(depth))
    };
    let mut backticks = String::from("git status");
    while backticks.len() < MIB / 2 {
        backticks = backtick_level(&backticks);
    }
    let big_value = "a".repeat(100 << 10);
    // `bash -c` inside 62 levels of `$(` inside `bash -c` …, to 1 MB.
    let mut shells = String::from("rm -rf ~");
    while shells.len() < MIB {
        shells = format!(
            "echo {}$(bash -c '{}'){}",
            "$(echo ".repeat(61),
            shells.replace('\'', "'\"'\"'"),
            ")".repeat(61)
        );
    }
    vec![
        ("flat words", format!("echo {}", fill("word "))),
        ("many commands", fill("git status; ")),
        ("many rm -rf", fill("rm -rf build/x; ")),
        ("nested $( 1 MB deep", nested("$(echo ", ")")),
        ("nested ${X:- 1 MB deep", nested("${X:-", "}")),
        ("nested $(( 1 MB deep", nested("$((", "))")),
        ("nested ( ( subshells", nested("(", ")")),
        ("nested backticks", backticks),
        ("shells inside substitutions", shells),
        (
            "substitutions side by side",
            format!("echo {}", fill("$(pwd) ")),
        ),
        (
            "arithmetic side by side",
            format!(": {}", fill("$(( $(echo 1) + 1 )) ")),
        ),
        ("single-quoted string", format!("echo '{}'", fill("abc "))),
        (
            "double-quoted expansions",
            format!("echo \"{}\"", fill("$HOME/${PWD%/*} ")),
        ),
        ("unterminated quote", format!("echo \"{}", fill("$( '"))),
        (
            "brace expansions",
            format!("rm -rf {}", fill("~/{a,b}/{c,d} ")),
        ),
        ("one long brace word", format!("rm -rf ~/{}", fill("{a,b}"))),
        ("patterns", format!("echo {}", fill("${PWD%%*a*a*a*b} "))),
        (
            "here-document",
            format!("cat <<EOF\n{}EOF\n", fill("line $(pwd) `pwd`\n")),
        ),
        (
            "a 100 KB variable expanded many times",
            format!("X={big_value}; echo {}", fill("$X ")),
        ),
        ("eval chain", format!("{}git status", fill("eval "))),
        ("bash -c many times", fill("bash -c 'git commit -m x'; ")),
        ("assignments", fill("A=$A$A; ")),
        ("git aliases", fill("git -c alias.a=b a; ")),
    ]
}

fn judge(command: &str) -> (Duration, bool) {
    let var = |name: &str| match name {
        "HOME" => Some("/home/u".to_string()),
        "CLAUDE_PROJECT_DIR" => Some("/home/u/work/proj".to_string()),
        _ => None,
    };
    let ctx = GuardContext {
        cwd: "/home/u/work/proj".into(),
        project_root: "/home/u/work/proj".into(),
        home: Some("/home/u".into()),
        var: &var,
    };
    let started = Instant::now();
    let denied = check(command, &ctx).is_some();
    (started.elapsed(), denied)
}

/// A sink that reads every command (counting its words), as trust's reading of a command does.
struct Count(usize);

impl shell::Sink for Count {
    fn substitution(&mut self, commands: &[shell::SimpleCommand], _depth: usize) -> bool {
        self.0 += commands.iter().map(|c| c.words.len()).sum::<usize>();
        true
    }
    fn command(&mut self, command: &shell::SimpleCommand) -> bool {
        self.0 += command.words.len();
        true
    }
}

/// The best of three runs of `f`.
fn best_of_three(mut f: impl FnMut() -> Duration) -> Duration {
    (0..3).map(|_| f()).min().unwrap_or(Duration::MAX)
}

fn main() {
    let limit = std::env::var("AMPLIHACK_BENCH_GUARD_MAX_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(2 * GOAL, Duration::from_millis);
    let mut failed = Vec::new();
    println!(
        "Bash guard on 1 MB commands (release, in-process; goal {GOAL:?}, fails above {limit:?})"
    );
    // `AMPLIHACK_BENCH_GUARD_ONLY=brace`: the shapes whose name contains it (for profiling).
    let only = std::env::var("AMPLIHACK_BENCH_GUARD_ONLY").unwrap_or_default();
    for (name, command) in shapes().into_iter().filter(|(n, _)| n.contains(&only)) {
        let mut denied = false;
        let best = best_of_three(|| {
            let (took, d) = judge(&command);
            denied = d;
            took
        });
        let written = best_of_three(|| {
            let started = Instant::now();
            let mut words = Count(0);
            shell::parse_into_as_written(&command, &mut words, 0);
            std::hint::black_box(words.0);
            started.elapsed()
        });
        let verdict = if denied { "deny" } else { "allow" };
        let over = best > limit || written > limit;
        let mark = if over { "  FAIL" } else { "" };
        println!(
            "  {name:<40} {:>7} KB  {:>8.2} ms, as written {:>6.2} ms  (goal {} ms)  {verdict}{mark}",
            command.len() >> 10,
            best.as_secs_f64() * 1e3,
            written.as_secs_f64() * 1e3,
            GOAL.as_millis()
        );
        if over {
            failed.push(name);
        }
    }
    if !failed.is_empty() {
        eprintln!("guard bench: over {limit:?}: {}", failed.join(", "));
        std::process::exit(1);
    }
}
