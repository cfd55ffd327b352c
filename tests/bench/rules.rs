//! What the proposal's `type: matcher` rules cost: evaluated in-process, no process started.
//!
//! Run: `cargo bench --bench rules`. The figure is a ratio against a reference measured in the same
//! run, interleaved, so both sides see the same machine load; absolute times are printed, never
//! gated. Its goal (`gate.rs`: it fails only over twice the goal):
//! * what a `hooks.yaml` of 100 rules adds to a PreToolUse call (read, parsed and every rule
//!   evaluated against the Bash call; none matches) is at most starting one `sh -c true`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../support/captured.rs"]
mod captured;
#[path = "gate.rs"]
mod gate;
#[path = "subject.rs"]
mod subject;
use gate::gate;

/// The binary measured: the one users run where `./test.sh` names it, else this build's.
fn hooks_bin() -> PathBuf {
    subject::hooks_under_test(|| PathBuf::from(env!("CARGO_BIN_EXE_amplihack-hooks")))
}

/// A home with one plugin of `rules` rules on the Bash tool, none matching the payload's call.
fn home_with_rules(rules: usize) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    if rules > 0 {
        let dir = home.path().join(".amplifier/hooks/rules");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut yaml = String::from("hooks:\n  PreToolUse:\n");
        for i in 0..rules {
            yaml.push_str(&format!(
                "    - type: matcher\n      match:\n        tool: \"Bash\"\n        args:\n          command: \"never-{i} *\"\n      action: block\n      message: \"rule {i}\"\n"
            ));
        }
        std::fs::write(dir.join("hooks.yaml"), yaml).expect("write");
    }
    home
}

/// One PreToolUse call of the captured Bash `event` (a file) with `home` as HOME.
fn time_hook(home: &Path, event: &Path) -> Duration {
    let stdin = std::fs::File::open(event).expect("payload");
    let started = Instant::now();
    let output = Command::new(hooks_bin())
        .arg("pre-tool-use")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stdin(Stdio::from(stdin))
        .output()
        .expect("run");
    let took = started.elapsed();
    assert!(output.status.success());
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("deny"),
        "no rule may match the benchmark's call"
    );
    took
}

fn time_sh_true() -> Duration {
    let started = Instant::now();
    let status = Command::new("/bin/sh")
        .args(["-c", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("sh");
    assert!(status.success());
    started.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // The captured call, sent from a project that exists, as a host sends it.
    let scratch = tempfile::tempdir().expect("tempdir");
    let event = captured::rehomed_file("claude-code-2.1.328/PreToolUse-Bash.json", scratch.path());
    let none = home_with_rules(0);
    let hundred = home_with_rules(100);
    // The rules really are read and evaluated: the last one denies a call it matches.
    let mut check = Command::new(hooks_bin())
        .arg("pre-tool-use")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", hundred.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run");
    if let Some(mut stdin) = check.stdin.take() {
        use std::io::Write;
        let event = r#"{"hook_event_name": "PreToolUse", "session_id": "bench", "tool_name": "Bash", "tool_input": {"command": "never-99 now"}}"#;
        stdin.write_all(event.as_bytes()).expect("stdin");
    }
    let denied = check.wait_with_output().expect("wait");
    assert!(
        String::from_utf8_lossy(&denied.stdout).contains("rule 99"),
        "the 100th rule denies its call"
    );
    let mut warm = true;
    let ok = gate("100 rules vs one sh -c true", 1.0, || {
        let (mut base, mut rules, mut sh) = (Vec::new(), Vec::new(), Vec::new());
        if std::mem::take(&mut warm) {
            for _ in 0..5 {
                time_hook(none.path(), &event);
                time_hook(hundred.path(), &event);
                time_sh_true();
            }
        }
        for _ in 0..60 {
            base.push(time_hook(none.path(), &event));
            rules.push(time_hook(hundred.path(), &event));
            sh.push(time_sh_true());
        }
        let (base, rules, sh) = (median(base), median(rules), median(sh));
        let added = rules.saturating_sub(base);
        Some((
            added.as_secs_f64() / sh.as_secs_f64(),
            format!(
                "add {:.3} ms ({:.3} ms vs {:.3} ms without); sh -c true {:.3} ms",
                ms(added),
                ms(rules),
                ms(base),
                ms(sh)
            ),
        ))
    });
    if !ok {
        std::process::exit(1);
    }
}
