//! What forwarding to the user's plugins costs, measured with the release binary.
//!
//! Run: `cargo bench --bench forwarding`. Checks, and exits non-zero when one fails:
//! * 8 handlers that each sleep 200 ms answer in under 250 ms in total (they run in parallel);
//! * 100 plugins that do not match the event add under 2 ms;
//! * each spawned handler adds under 1 ms over starting `sh -c true` itself.
//!
//! Medians of interleaved runs, so both sides of a comparison see the same machine load.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn hooks_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_amplihack-hooks"))
}

fn payload() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code-2.1.328/PreToolUse-Bash.json")
}

/// A home whose `~/.amplifier/hooks` holds `plugins` (name, matcher, command).
fn home_with(plugins: &[(String, &str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    for (name, matcher, command) in plugins {
        let dir = home.path().join(".amplifier/hooks").join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let config = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}});
        std::fs::write(dir.join("hooks.json"), config.to_string()).expect("write");
    }
    home
}

fn time_hook(home: &Path) -> Duration {
    let stdin = std::fs::File::open(payload()).expect("payload");
    let started = Instant::now();
    let status = Command::new(hooks_bin())
        .arg("pre-tool-use")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run");
    assert!(status.success());
    started.elapsed()
}

fn time_sh_true() -> Duration {
    let started = Instant::now();
    let status = Command::new("/bin/sh")
        .args(["-c", "true"])
        .stdin(Stdio::null())
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
    let runs: usize = std::env::var("AMPLIHACK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut failed = false;
    let mut check = |label: &str, value: f64, limit: f64| {
        let verdict = if value < limit { "ok" } else { "FAIL" };
        println!("{label:<58} {value:>8.3} ms  (limit {limit} ms)  {verdict}");
        failed |= value >= limit;
    };

    let empty = home_with(&[]);
    let sleepers = home_with(
        &(0..8)
            .map(|i| (format!("sleeper-{i}"), "*", "sleep 0.2"))
            .collect::<Vec<_>>(),
    );
    let parallel = median((0..10).map(|_| time_hook(sleepers.path())).collect());
    check(
        "8 handlers sleeping 200 ms each, total",
        ms(parallel),
        250.0,
    );

    let idle = home_with(
        &(0..100)
            .map(|i| (format!("plugin-{i:03}"), "Write|Edit", "true"))
            .collect::<Vec<_>>(),
    );
    let one = home_with(&[("one".to_string(), "Bash", "true")]);
    let (mut none, mut hundred, mut single, mut sh) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        none.push(time_hook(empty.path()));
        hundred.push(time_hook(idle.path()));
        single.push(time_hook(one.path()));
        sh.push(time_sh_true());
    }
    let (none, hundred, single, sh) = (median(none), median(hundred), median(single), median(sh));
    println!(
        "{:<58} {:>8.3} ms",
        "amplihack-hooks pre-tool-use, no plugins (median)",
        ms(none)
    );
    check(
        "added by 100 plugins that do not match",
        ms(hundred.saturating_sub(none)),
        2.0,
    );
    println!("{:<58} {:>8.3} ms", "sh -c true (median)", ms(sh));
    check(
        "one handler's cost beyond sh -c true",
        ms(single.saturating_sub(none)) - ms(sh),
        1.0,
    );
    if failed {
        std::process::exit(1);
    }
}
