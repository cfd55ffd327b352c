//! A trusted handler runs exactly the bytes trust hashed (issue 35, finding 12: trust hashed a
//! file, then the shell opened it again by path, and with a concurrent writer 2 of 60 calls ran
//! content never trusted). A trusted project plugin runs `sh tools/check.sh`; a writer thread
//! rewrites that file in a loop, untrusted content then the trusted content again, while calls
//! run. Every call either runs the trusted script or is refused as changed; the untrusted one,
//! which leaves a marker file, never runs: proven for a writer into the file (without the
//! pinned copies, 14 of 40 calls ran the untrusted script). A writer renaming a new file over
//! the path is not yet held off in every call (see its test).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stdout};

const TRUSTED: &str = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "trusted ran"}}'
"#;

/// Same length as [`TRUSTED`], so a size alone never tells them apart: trust must hash it.
fn untrusted() -> String {
    let body = "touch UNTRUSTED-RAN; echo untrusted ran";
    let pad = TRUSTED.len() - body.len() - 3;
    format!("{body} #{}\n", "x".repeat(pad))
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

/// `calls` PreToolUse calls under a writer doing `how`: (ran the trusted script, refused).
fn race(how: Writer, calls: usize) -> Option<(usize, usize)> {
    use amplihack_platform::{confine, exact};
    if matches!(confine::support(), confine::Support::Absent { .. })
        || exact::support() != exact::Support::Available
    {
        println!(
            "SKIPPED this system cannot pin exact bytes (Landlock {:?}, mount namespaces {:?})",
            confine::support(),
            exact::support()
        );
        return None;
    }
    let env = TestEnv::new();
    let script = env.project.join("tools/check.sh");
    env.write(&script, TRUSTED);
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
    let (mut ran, mut refused, mut untrusted_runs) = (0, 0, 0);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let evil = untrusted();
            // Each content stays a moment: trusted long enough for a call's check to pass, then
            // untrusted while that call starts its handler.
            let pause = std::time::Duration::from_micros(1500);
            while !stop.load(Ordering::Relaxed) {
                write(&script, how, &evil);
                std::thread::sleep(pause);
                write(&script, how, TRUSTED);
                std::thread::sleep(pause);
            }
        });
        for n in 0..calls {
            let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, n), &[]);
            let out = stdout(&output);
            assert!(!out.contains("untrusted ran"), "call {n} ran it: {out}");
            // Counted, and cleared for the next call.
            if std::fs::remove_file(&marker).is_ok() {
                untrusted_runs += 1;
            }
            if out.contains("trusted ran") {
                ran += 1;
            } else {
                refused += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    println!(
        "{how:?} writer: of {calls} calls {ran} ran the trusted script, {refused} were refused as changed, {untrusted_runs} ran the untrusted one"
    );
    assert_eq!(untrusted_runs, 0, "{how:?}: the untrusted script ran");
    Some((ran, refused))
}

#[test]
fn a_writer_in_place_never_gets_untrusted_bytes_run() {
    if let Some((ran, _)) = race(Writer::InPlace, 40) {
        assert!(ran > 0, "no call ran at all: the test proves nothing");
    }
}

/// Not yet true: a file renamed over a pinned path after the handler's mounts are made, before
/// it opens the path, detaches the mount (the kernel does so in every namespace when a
/// mountpoint's name is replaced, Linux 3.18 on), and the handler opens the new file. Measured
/// on this branch: 0 to 7 of 40 calls ran the untrusted script (14 of 40 without the mounts), more on a busier machine.
/// `cargo test --test integration exact_bytes -- --ignored` shows the figure.
#[test]
#[ignore = "a rename over a pinned path after the mounts detaches them: the manual's trust page, issue 35 finding 12"]
fn a_writer_renaming_over_never_gets_untrusted_bytes_run() {
    if let Some((ran, _)) = race(Writer::Rename, 40) {
        assert!(ran > 0, "no call ran at all: the test proves nothing");
    }
}
