//! A trusted handler runs exactly the bytes trust hashed (issue 35, finding 12: trust hashed a
//! file, then the shell opened it again by path, and with a concurrent writer 2 of 60 calls ran
//! content never trusted). A trusted project plugin runs `sh tools/check.sh`; a writer thread
//! rewrites that file in a loop, untrusted content then the trusted content again, while calls
//! run. Every call either runs the trusted script, or is refused as changed, or has its answer
//! discarded as changed during the run; the untrusted one, which leaves a marker file and denies,
//! never runs under a writer into the file (without the pinned copies, 14 of 40 calls ran it).
//! A writer renaming a new file over the path from outside can get it run (the rename detaches
//! the mount), but then its answer never reaches the reply and each such run is reported. The
//! repository's own confined code cannot change a pinned file at all.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stdout};

/// Both scripts are padded to this length, so a size alone never tells them apart: trust must
/// hash them.
const LENGTH: usize = 240;

fn padded(body: &str) -> String {
    format!("{body} #{}\n", "x".repeat(LENGTH - body.len() - 3))
}

fn trusted() -> String {
    padded(
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "trusted ran"}}'"#,
    )
}

/// Leaves a marker, and denies the call with a reason of its own: if its answer were used, the
/// reply would show it.
fn untrusted() -> String {
    padded(
        r#"touch UNTRUSTED-RAN; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "untrusted ran"}}'"#,
    )
}

fn event(env: &TestEnv, n: usize) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": format!("s{n}"), "cwd": env.project, "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"})
}

#[derive(Clone, Copy, Debug)]
enum Writer {
    /// Truncates and writes the file where it is.
    InPlace,
    /// Writes a new file beside it and renames it over (what editors and `git checkout` do).
    Rename,
}

fn write(script: &Path, how: Writer, text: &str) {
    match how {
        Writer::InPlace => {
            let _ = std::fs::write(script, text);
        }
        Writer::Rename => {
            let staged = script.with_extension("new");
            if std::fs::write(&staged, text).is_ok() {
                let _ = std::fs::rename(&staged, script);
            }
        }
    }
}

/// What the calls of a [`race`] came to.
#[derive(Debug, Default)]
struct Tally {
    /// Ran the trusted script, its answer used.
    ran: usize,
    /// Its answer discarded, and reported, as a pinned file changed during the run.
    discarded: usize,
    /// Neither (refused as changed before it ran).
    refused: usize,
    /// The untrusted script ran (its marker).
    untrusted_runs: usize,
}

fn exact_supported() -> bool {
    use amplihack_platform::{confine, exact};
    if matches!(confine::support(), confine::Support::Absent { .. })
        || exact::support() != exact::Support::Available
    {
        println!(
            "SKIPPED this system cannot pin exact bytes (Landlock {:?}, mount namespaces {:?})",
            confine::support(),
            exact::support()
        );
        return false;
    }
    true
}

/// `calls` PreToolUse calls under a writer doing `how`. Whatever ran, no answer of the untrusted
/// script reaches the reply, and every call where it ran had its answer discarded and reported
/// (on stderr and to the user, naming the plugin and the file).
fn race(how: Writer, calls: usize) -> Option<Tally> {
    if !exact_supported() {
        return None;
    }
    let env = TestEnv::new();
    let script = env.project.join("tools/check.sh");
    env.write(&script, &trusted());
    env.plugin(
        &env.project_hooks_dir(),
        "check",
        &one_group("PreToolUse", None, vec![command("sh tools/check.sh")]),
    );
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", support::stderr(&trust));
    assert!(
        stdout(&trust).contains("tools/check.sh"),
        "the script is pinned: {}",
        stdout(&trust)
    );
    let marker = env.project.join("UNTRUSTED-RAN");
    let stop = AtomicBool::new(false);
    let mut tally = Tally::default();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let evil = untrusted();
            // Each content stays a moment: trusted long enough for a call's check to pass, then
            // untrusted while that call starts its handler.
            let pause = std::time::Duration::from_micros(1500);
            while !stop.load(Ordering::Relaxed) {
                write(&script, how, &evil);
                std::thread::sleep(pause);
                write(&script, how, &trusted());
                std::thread::sleep(pause);
            }
        });
        for n in 0..calls {
            let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, n), &[]);
            let (out, err) = (stdout(&output), support::stderr(&output));
            assert!(output.status.success(), "call {n}: {err}");
            assert!(
                !out.contains("untrusted ran"),
                "call {n} used its answer: {out}"
            );
            let discarded = err.contains("changed during the run");
            if discarded {
                tally.discarded += 1;
                let file = script.display().to_string();
                assert!(
                    err.contains("hook from check") && err.contains(&file),
                    "call {n}: the line names the plugin and the file: {err}"
                );
                assert!(
                    out.contains("changed during the run"),
                    "call {n}: the user is shown it: {out}"
                );
            }
            // Counted, and cleared for the next call.
            if std::fs::remove_file(&marker).is_ok() {
                tally.untrusted_runs += 1;
                assert!(
                    discarded,
                    "call {n} ran the untrusted script and nothing said so: {out} {err}"
                );
            }
            if out.contains("trusted ran") {
                assert!(!discarded, "call {n}: a discarded answer was used: {out}");
                tally.ran += 1;
            } else if !discarded {
                tally.refused += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    let Tally {
        ran,
        discarded,
        refused,
        untrusted_runs,
    } = tally;
    println!(
        "{how:?} writer: of {calls} calls {ran} ran the trusted script, {refused} were refused as changed, {discarded} had their answer discarded as changed during the run, of which {untrusted_runs} ran the untrusted one"
    );
    assert!(
        ran + discarded > 0,
        "no handler ran at all: the test proves nothing"
    );
    Some(tally)
}

/// A writer into the file: the handler is shown the copy, so the untrusted script never runs.
#[test]
fn a_writer_in_place_never_gets_untrusted_bytes_run() {
    if let Some(tally) = race(Writer::InPlace, 40) {
        assert_eq!(tally.untrusted_runs, 0, "the untrusted script ran");
    }
}

/// A file renamed over a pinned path from outside the handler's namespace after its mounts are
/// made, before it opens the path, detaches the mount (the kernel does so in every namespace
/// when a mountpoint's name is replaced, Linux 3.18 on), and the handler opens the new file:
/// 0 to 7 of 40 calls ran the untrusted script (14 of 40 without the mounts). Each such call
/// had its answer discarded and reported ([`race`]); none reached the reply.
#[test]
fn a_writer_renaming_over_never_gets_untrusted_bytes_answered() {
    race(Writer::Rename, 40);
}

/// The repository's own code cannot change a pinned file: every trusted file of the project is
/// mounted read-only in each confined handler's namespace, so a project handler's write into
/// another handler's pinned script fails (read-only), and so do a rename over it and an unlink
/// (busy: a mountpoint), from the handler and from a background process it leaves behind.
#[test]
fn a_project_handler_cannot_change_another_pinned_file() {
    if !exact_supported() {
        return;
    }
    let env = TestEnv::new();
    let script = env.project.join("tools/check.sh");
    env.write(&script, &trusted());
    env.write(
        &env.project.join("tools/attack.sh"),
        r#"exec 2>> errors
{ printf 'touch UNTRUSTED-RAN\n' > tools/check.sh; } 2>> errors; echo "in place $?" >> attempts
printf 'touch UNTRUSTED-RAN\n' > staged.sh
mv -f staged.sh tools/check.sh; echo "rename $?" >> attempts
rm -f tools/check.sh; echo "unlink $?" >> attempts
( sleep 1; printf 'touch UNTRUSTED-RAN\n' > later.sh; mv -f later.sh tools/check.sh; echo "later rename $?" >> attempts; { printf 'touch UNTRUSTED-RAN\n' > tools/check.sh; } 2>> errors; echo "later in place $?" >> attempts; echo done >> attempts ) >/dev/null &
"#,
    );
    for (name, run) in [
        ("check", "sh tools/check.sh"),
        ("attack", "sh tools/attack.sh"),
    ] {
        env.plugin(
            &env.project_hooks_dir(),
            name,
            &one_group("PreToolUse", None, vec![command(run)]),
        );
    }
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", support::stderr(&trust));
    let listed = stdout(&trust);
    assert!(
        listed.contains("tools/check.sh") && listed.contains("tools/attack.sh"),
        "both scripts are pinned: {listed}"
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, 0), &[]);
    let out = stdout(&output);
    assert!(
        out.contains("trusted ran"),
        "{out} {}",
        support::stderr(&output)
    );
    let attempts = env.project.join("attempts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let text = loop {
        let text = std::fs::read_to_string(&attempts).unwrap_or_default();
        if text.contains("done") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let attempted: Vec<(&str, bool)> = text
        .lines()
        .filter(|l| *l != "done")
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(what, code)| (what, code != "0"))
        .collect();
    let failed = |what| (what, true);
    assert_eq!(
        attempted,
        [
            failed("in place"),
            failed("rename"),
            failed("unlink"),
            failed("later rename"),
            failed("later in place")
        ],
        "every attempt failed: {text}"
    );
    // Why, as the system said it: a write into a read-only mount, a rename over or an unlink
    // of a mountpoint.
    let errors = std::fs::read_to_string(env.project.join("errors")).unwrap_or_default();
    assert_eq!(
        errors.matches("Read-only file system").count(),
        2,
        "{errors}"
    );
    assert_eq!(
        errors.matches("Device or resource busy").count(),
        3,
        "{errors}"
    );
    assert_eq!(
        std::fs::read_to_string(&script).expect("script"),
        trusted(),
        "the pinned file is unchanged on disk"
    );
    // Trust still holds: the next call runs the trusted script.
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, 1), &[]);
    assert!(
        stdout(&output).contains("trusted ran"),
        "{}",
        stdout(&output)
    );
    assert!(!env.project.join("UNTRUSTED-RAN").exists());
}

/// Deterministic: while a handler runs (it waits for the test), a file is renamed over another
/// pinned file from outside. Its answer, a deny, is discarded and reported naming the plugin
/// and the file; the same for a handler that then declares itself async (it is stopped, not
/// followed).
#[test]
fn a_rename_from_outside_during_the_run_discards_the_answer_and_says_so() {
    if !exact_supported() {
        return;
    }
    let deny = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "answer after the change"}}'"#;
    for (kind, declare) in [
        ("sync", ""),
        ("async", "echo '{\"async\": true}'; sleep 0.2\n"),
    ] {
        let env = TestEnv::new();
        let other = env.project.join("tools/other.sh");
        env.write(&other, "exit 0\n");
        env.write(
            &env.project.join("tools/wait.sh"),
            &format!(
                "touch started\ni=0; while [ ! -e go ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done\n{declare}{deny}\n"
            ),
        );
        for (name, run) in [("other", "sh tools/other.sh"), ("wait", "sh tools/wait.sh")] {
            env.plugin(
                &env.project_hooks_dir(),
                name,
                &one_group("PreToolUse", None, vec![command(run)]),
            );
        }
        let trust = env.run_amplihack(&["hooks", "trust"]);
        assert!(trust.status.success(), "{}", support::stderr(&trust));
        let output = std::thread::scope(|scope| {
            let call = scope.spawn(|| env.run_hooks(&["pre-tool-use"], &event(&env, 0), &[]).0);
            let started = env.project.join("started");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while !started.exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            write(&other, Writer::Rename, "exit 0 # replaced\n");
            env.write(&env.project.join("go"), "");
            call.join().expect("the call")
        });
        let (out, err) = (stdout(&output), support::stderr(&output));
        assert!(output.status.success(), "{kind}: {err}");
        assert!(!out.contains("answer after the change"), "{kind}: {out}");
        let said = format!(
            "hook from wait: its answer was discarded: {} changed during the run",
            other.display()
        );
        assert!(err.contains(&said), "{kind}: {err}");
        assert!(
            out.contains("changed during the run"),
            "{kind}: the user is shown it: {out}"
        );
    }
}
