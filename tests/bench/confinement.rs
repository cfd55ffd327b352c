//! What confining a repository's handler costs (issue 35): one PreToolUse call running one
//! trusted project plugin's handler, confined (Landlock: the ruleset built before fork, its
//! private TMPDIR made and removed), against the same call running the same handler as a user
//! plugin, unconfined. Interleaved, medians, measured with the binary users run (`subject.rs`).
//!
//! Run: `cargo bench --bench confinement`. The goals (`gate.rs`: each fails only over twice it):
//! * the confined call takes at most 1.25x the unconfined one;
//! * showing a confined handler its pinned files as their verified copies (issue 35, finding 12:
//!   `platform::exact`, a mount namespace and a read-only bind mount per file, entered in the
//!   child) adds at most 0.25x one unconfined call: the same confined handler started with and
//!   without the mounts of the bench project's trusted files, interleaved.
//!
//! Where the kernel has no Landlock nothing is confined: the bench prints SKIPPED (and the second
//! figure likewise where no mount namespace can be made).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../support/captured.rs"]
mod captured;
#[path = "gate.rs"]
mod gate;
#[path = "subject.rs"]
mod subject;

fn hooks_bin() -> PathBuf {
    subject::hooks_under_test(|| PathBuf::from(env!("CARGO_BIN_EXE_amplihack-hooks")))
}

/// A scratch home and project with one plugin answering on Bash: in the project's hooks
/// (trusted) or the user's. Returns the scratch directory and its event file.
fn setup(project_level: bool) -> (tempfile::TempDir, PathBuf) {
    // Not under /tmp: the home's secrets are hidden from the handler, and Landlock can only grant,
    // so every directory above a hidden path has each of its entries granted one by one
    // (platform::confine::grants). A home in /tmp made the figure the size of the machine's
    // /tmp (2.02 with 214 entries there, 2.77 with 245 after a full test run), where a user's
    // home sits in /home; here (target/tmp) it is 1.39.
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let event = captured::rehomed_file("claude-code-2.1.328/PreToolUse-Bash.json", scratch.path());
    let (home, project) = (scratch.path().join("home"), scratch.path().join("project"));
    let hooks = if project_level {
        project.join(".amplifier/hooks/one")
    } else {
        home.join(".amplifier/hooks/one")
    };
    std::fs::create_dir_all(&hooks).expect("mkdir");
    let config = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ANSWER}]}]}});
    std::fs::write(hooks.join("hooks.json"), config.to_string()).expect("write");
    if project_level {
        let status = Command::new(env!("CARGO_BIN_EXE_amplihack"))
            .args(["hooks", "trust"])
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .stdout(Stdio::null())
            .status()
            .expect("trust");
        assert!(status.success(), "hooks trust");
    }
    (scratch, event)
}

/// What the handler prints: the call's reply carries it, so each measured call is seen to run it.
const ANSWER: &str = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "handler ran"}}'"#;

fn time_hook(scratch: &Path, event: &Path) -> Duration {
    let stdin = std::fs::File::open(event).expect("payload");
    let started = Instant::now();
    let output = Command::new(hooks_bin())
        .arg("pre-tool-use")
        .current_dir(scratch.join("project"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch.join("home"))
        .env("CLAUDE_PROJECT_DIR", scratch.join("project"))
        .stdin(Stdio::from(stdin))
        .stderr(Stdio::null())
        .output()
        .expect("run");
    let took = started.elapsed();
    assert!(output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("handler ran"),
        "the handler did not run"
    );
    took
}

/// Starts the bench's handler confined to `confinement` and waits for it to end, its stdout read.
fn time_confined(
    project: &Path,
    confinement: &amplihack_platform::confine::Confinement,
) -> Duration {
    use std::io::Read;
    let argv = ["/bin/sh".to_string(), "-c".to_string(), ANSWER.to_string()];
    let started = Instant::now();
    let handler =
        amplihack_platform::spawn::start_waiting(&argv, project, &[], Some(confinement.entry()))
            .expect("started");
    drop(handler.stdin);
    let mut out = Vec::new();
    std::fs::File::from(handler.stdout)
        .read_to_end(&mut out)
        .expect("stdout");
    while amplihack_platform::process::ended(handler.pid).is_none() {
        std::thread::yield_now();
    }
    let took = started.elapsed();
    assert!(
        String::from_utf8_lossy(&out).contains("handler ran"),
        "the handler did not run"
    );
    took
}

/// The rules the engine gives the bench project's handler, and the same with its trusted files
/// pinned to private copies (made here as the engine makes them).
fn exact_rules(
    scratch: &Path,
) -> (
    amplihack_platform::confine::Rules,
    amplihack_platform::confine::Rules,
) {
    use amplihack_platform::confine::{Network, Rules};
    let project = scratch.join("project");
    let state = scratch.join("home/.local/state/amplihack");
    let plain = Rules {
        read: vec![PathBuf::from("/")],
        write: vec![project.clone(), PathBuf::from("/dev/null")],
        hidden: vec![state.clone()],
        network: Network::None,
        ..Rules::default()
    };
    let copies = scratch.join("copies");
    std::fs::create_dir_all(&copies).expect("mkdir");
    let trusted = [project.join(".amplifier/hooks/one/hooks.json")];
    let pinned = trusted
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let copy = copies.join(i.to_string());
            std::fs::copy(path, &copy).expect("copy");
            amplihack_platform::exact::Pin {
                path: path.clone(),
                copy,
            }
        })
        .collect();
    let pinned = Rules {
        pinned,
        ..plain.clone()
    };
    (plain, pinned)
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    use amplihack_platform::confine::{Support, support};
    if matches!(support(), Support::Absent { .. }) {
        println!("SKIPPED this kernel has no Landlock: nothing is confined");
        return;
    }
    let runs: usize = std::env::var("AMPLIHACK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let (confined, confined_event) = setup(true);
    let (unconfined, unconfined_event) = setup(false);
    let ok = gate::gate("one confined handler vs one unconfined", 1.25, || {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            with.push(time_hook(confined.path(), &confined_event));
            without.push(time_hook(unconfined.path(), &unconfined_event));
        }
        let (with, without) = (median(with), median(without));
        Some((
            with / without,
            format!(
                "confined {with:.3} ms, unconfined {without:.3} ms, added {:.3} ms",
                with - without
            ),
        ))
    });
    let exact_ok = match amplihack_platform::exact::support() {
        amplihack_platform::exact::Support::Absent { why } => {
            println!("SKIPPED the exact-bytes mounts: {why}");
            true
        }
        amplihack_platform::exact::Support::Available => {
            let (plain, pinned) = exact_rules(confined.path());
            let prepare = |rules| {
                amplihack_platform::confine::prepare(rules)
                    .expect("prepared")
                    .expect("Landlock")
            };
            let (plain, pinned) = (prepare(&plain), prepare(&pinned));
            let project = confined.path().join("project");
            gate::gate(
                "the exact-bytes mounts vs one unconfined handler",
                0.25,
                || {
                    let (mut with, mut without, mut reference) =
                        (Vec::new(), Vec::new(), Vec::new());
                    for _ in 0..runs {
                        with.push(time_confined(&project, &pinned));
                        without.push(time_confined(&project, &plain));
                        reference.push(time_hook(unconfined.path(), &unconfined_event));
                    }
                    let (with, without, reference) =
                        (median(with), median(without), median(reference));
                    let added = with - without;
                    Some((
                        added / reference,
                        format!(
                            "{} pinned file: confined start {without:.3} ms, with the mounts {with:.3} ms, added {added:.3} ms; one unconfined call {reference:.3} ms",
                            pinned.pinned()
                        ),
                    ))
                },
            )
        }
    };
    if !ok || !exact_ok {
        std::process::exit(1);
    }
}
