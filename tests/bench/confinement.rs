//! What confining a repository's handler costs (issue 35): one PreToolUse call running one
//! trusted project plugin's handler, confined (Landlock: the ruleset built before fork, its
//! private TMPDIR made and removed), against the same call running the same handler as a user
//! plugin, unconfined. Interleaved, medians, measured with the binary users run (`subject.rs`).
//!
//! Run: `cargo bench --bench confinement`. The goal (`gate.rs`: it fails only over twice it):
//! * the confined call takes at most 1.25x the unconfined one.
//!
//! Where the kernel has no Landlock nothing is confined: the bench prints SKIPPED.

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
    let scratch = tempfile::tempdir().expect("tempdir");
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
    if !ok {
        std::process::exit(1);
    }
}
