//! Startup and dispatch cost of `amplihack-hooks`, measured against starting `/bin/true` with the
//! same stdin, interleaved in one run so both see the same machine load. Both get the event as
//! hosts give it: written to a pipe, then the pipe closed.
//!
//! It measures the binary a user gets: `$AMPLIHACK_BENCH_BINARY` (`./test.sh` passes the one
//! `./install.sh` deployed), else the static release build of `packaging/build`.
//!
//! Run: `cargo bench --bench startup`. Every figure is a ratio against a reference measured in the
//! same run, interleaved; absolute times are printed, never gated. The goals (`gate.rs`: a figure
//! over its goal is reported, and fails only over twice the goal):
//! * amplihack-hooks' median is at most `AMPLIHACK_BENCH_MAX_RATIO` (default 1.1) times
//!   `/bin/true`'s;
//! * the built-ins make a call at most 1.05x (pre-tool-use's Bash guard) or 1.08x (post-tool-use's
//!   metrics line) slower than the same call with them off (`AMPLIHACK_DISABLE=all`);
//! * `amplihack install` on 1 MiB of user settings takes at most
//!   `AMPLIHACK_BENCH_MAX_INSTALL_RATIO` (default 1.6) times `jq .` on the same file.
//!
//! Absolute limits, failing at once: the peak RSS exceeds `AMPLIHACK_BENCH_MAX_RSS_KIB` (default 4096), the binary carries a TLS,
//!   HTTP client or async runtime (`rustls`, `ureq`, `tokio`) or exceeds 5 MiB as users get it
//!   (the `dist` profile; 6 MiB for the quicker `release` profile the test tiers build;
//!   `AMPLIHACK_BENCH_MAX_SIZE_KIB`). It was 4 MiB until matchers became JavaScript regular
//!   expressions: `regress` carries about 750 KB of Unicode tables (the `dist` binary went from
//!   3.35 MB to 4.24 MB). They are mapped, not read, at start-up: the ratios above are the gate
//!   on what that costs.
//!
//! A shared 2-core machine has bursts of noise that can move one median by 10%; a measurement
//! that falls short is taken again, up to three times in all, and the best one counts. A slower
//! binary fails all three; a noisy minute does not fail the build.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

struct Sample {
    wall: Duration,
    max_rss_kib: i64,
}

/// Spawns, waits with `wait4` for the child's own rusage, and returns its wall time and peak RSS.
// The child is reaped by `wait4` below (std has no wait that returns rusage).
fn run_once(program: &Path, args: &[&str], stdin: &[u8]) -> Sample {
    run_with(program, args, stdin, &[])
}

/// Runs `program` as hosts call a hook: the event written to a pipe, then the pipe closed.
// The child is reaped by `wait4` below (std has no wait that returns rusage).
#[allow(clippy::zombie_processes)]
fn run_with(program: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Sample {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    if let Some(mut pipe) = child.stdin.take() {
        // A payload fits the pipe's buffer; a reader that exits first (`/bin/true`) is fine.
        let _ = pipe.write_all(stdin);
    }
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(reaped, pid, "wait4 failed");
    let status = ExitStatus::from_raw(status);
    assert_eq!(
        status.code(),
        Some(0),
        "{} {args:?} failed: {status}",
        program.display()
    );
    Sample {
        wall,
        max_rss_kib: usage.ru_maxrss,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The binary under test: `$AMPLIHACK_BENCH_BINARY`, else the static build users get.
fn binary_under_test() -> PathBuf {
    subject::hooks_under_test(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new(root.join("packaging/build"))
            .stderr(Stdio::inherit())
            .output()
            .expect("run packaging/build");
        assert!(out.status.success(), "packaging/build failed");
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("amplihack-hooks")
    })
}

struct Measured {
    base: Vec<Duration>,
    ours: Vec<Duration>,
    rss: i64,
}

impl Measured {
    fn ratio(&self) -> f64 {
        ms(percentile(&self.ours, 0.5)) / ms(percentile(&self.base, 0.5))
    }
}

fn measure(truth: &Path, hooks: &Path, stdin: &[u8], runs: usize) -> Measured {
    let (mut base, mut ours, mut rss) = (Vec::new(), Vec::new(), 0i64);
    for _ in 0..10 {
        run_once(truth, &[], stdin);
        run_once(hooks, &["pre-tool-use"], stdin);
    }
    for _ in 0..runs {
        base.push(run_once(truth, &[], stdin).wall);
        let sample = run_once(hooks, &["pre-tool-use"], stdin);
        ours.push(sample.wall);
        rss = rss.max(sample.max_rss_kib);
    }
    base.sort();
    ours.sort();
    Measured { base, ours, rss }
}

#[path = "gate.rs"]
mod gate;
use gate::ATTEMPTS;
#[path = "../support/captured.rs"]
mod captured;
#[path = "subject.rs"]
mod subject;

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let hooks = binary_under_test();
    let truth = ["/bin/true", "/usr/bin/true"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("/bin/true");
    let runs: usize = env_or("AMPLIHACK_BENCH_RUNS", 400);
    let max_ratio: f64 = env_or("AMPLIHACK_BENCH_MAX_RATIO", 1.1);
    let max_rss: i64 = env_or("AMPLIHACK_BENCH_MAX_RSS_KIB", 4096);
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.328");
    let sandbox = tempfile::tempdir().expect("tempdir");
    // SAFETY (set_var): single-threaded at this point; the children inherit a throwaway home, so
    // nothing the benchmark runs reads or writes the developer's own state.
    unsafe {
        std::env::set_var("HOME", sandbox.path());
        std::env::set_var("AMPLIHACK_LOG_DIR", sandbox.path().join("logs"));
        std::env::remove_var("XDG_STATE_HOME");
        std::env::remove_var("CLAUDE_PROJECT_DIR");
    }

    // The captured events, sent from a project that exists, as a host sends them.
    let project_dir = sandbox.path().join("project");
    std::fs::create_dir_all(&project_dir).expect("project");
    let captured_event = |name: &str| {
        let payload = std::fs::read(fixtures.join(name)).expect("payload");
        captured::rehome(&payload, sandbox.path(), &project_dir)
    };

    let mut failed = false;
    println!(
        "amplihack-hooks startup benchmark: {runs} interleaved runs each, the event on a pipe"
    );
    println!(
        "binary: {} ({} bytes)",
        hooks.display(),
        std::fs::metadata(&hooks).map(|m| m.len()).unwrap_or(0)
    );
    for (label, payload) in [
        ("pre-tool-use, allowed Bash", "PreToolUse-Bash.json"),
        ("pre-tool-use, Write", "PreToolUse-Write.json"),
    ] {
        let stdin = captured_event(payload);
        let mut best: Option<Measured> = None;
        for attempt in 1..=ATTEMPTS {
            let m = measure(&truth, &hooks, &stdin, runs);
            println!(
                "{label:<28} /bin/true median {:.3} ms (p90 {:.3}) | amplihack-hooks median {:.3} ms (p90 {:.3}) | ratio {:.2} | peak RSS {} KiB{}",
                ms(percentile(&m.base, 0.5)),
                ms(percentile(&m.base, 0.9)),
                ms(percentile(&m.ours, 0.5)),
                ms(percentile(&m.ours, 0.9)),
                m.ratio(),
                m.rss,
                if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                },
            );
            let better = best.as_ref().is_none_or(|b| m.ratio() < b.ratio());
            if better {
                best = Some(m);
            }
            if best.as_ref().is_some_and(|b| b.ratio() <= max_ratio) {
                break;
            }
        }
        let Some(best) = best else { continue };
        failed |= !gate::report(
            &format!("{label}, median vs /bin/true"),
            best.ratio(),
            max_ratio,
        );
        if best.rss > max_rss {
            println!("  FAIL: peak RSS {} KiB exceeds {max_rss} KiB", best.rss);
            failed = true;
        }
    }
    // What the built-ins themselves cost: the same call with them on and off
    // (`AMPLIHACK_DISABLE=all`), interleaved. pre-tool-use runs the Bash guard; post-tool-use
    // appends the metrics line (into a throwaway project).
    let project = project_dir.to_string_lossy().into_owned();
    for (label, subcommand, payload, limit) in [
        (
            "pre-tool-use built-ins (Bash guard)",
            "pre-tool-use",
            "PreToolUse-Bash.json",
            1.05,
        ),
        (
            "post-tool-use built-ins (metrics line)",
            "post-tool-use",
            "PostToolUse-Bash.json",
            1.08,
        ),
    ] {
        let stdin = captured_event(payload);
        let on = [("CLAUDE_PROJECT_DIR", project.as_str())];
        let off = [
            ("CLAUDE_PROJECT_DIR", project.as_str()),
            ("AMPLIHACK_DISABLE", "all"),
        ];
        let mut best = f64::MAX;
        for attempt in 1..=ATTEMPTS {
            let (mut with, mut without) = (Vec::new(), Vec::new());
            for i in 0..runs + 10 {
                let a = run_with(&hooks, &[subcommand], &stdin, &on).wall;
                let b = run_with(&hooks, &[subcommand], &stdin, &off).wall;
                if i >= 10 {
                    with.push(a);
                    without.push(b);
                }
            }
            with.sort();
            without.sort();
            let (on_ms, off_ms) = (ms(percentile(&with, 0.5)), ms(percentile(&without, 0.5)));
            let ratio = on_ms / off_ms;
            println!(
                "{label:<40} on {on_ms:.3} ms | off {off_ms:.3} ms | added {:+.3} ms | ratio {ratio:.3} (goal {limit}){}",
                on_ms - off_ms,
                if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                },
            );
            best = best.min(ratio);
            if best <= limit {
                break;
            }
        }
        failed |= !gate::report(&format!("{label}, on/off"), best, limit);
    }
    // `amplihack install` on 1 MiB of the user's settings, from a fresh copy each time (the
    // amplihack next to the hook binary: the one users run).
    let amplihack = hooks.with_file_name("amplihack");
    if amplihack.exists() {
        let home = sandbox.path().join("install-home");
        let settings = home.join(".claude/settings.json");
        std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
        // Realistic bulk: permission rules and environment variables, to 1 MiB pretty-printed.
        let rules = 17_000;
        let big = serde_json::json!({
            "model": "opus",
            "permissions": {"allow": (0..rules).map(|i| format!("Bash(tool-{i}:*)")).collect::<Vec<_>>()},
            "env": (0..rules)
                .map(|i| (format!("VAR_{i}"), serde_json::json!("x".repeat(16))))
                .collect::<serde_json::Map<String, serde_json::Value>>(),
        });
        let text = serde_json::to_string_pretty(&big).expect("json");
        assert!(text.len() >= 1024 * 1024, "{} bytes", text.len());
        // The reference is `jq .` pretty-printing the same file, interleaved: both read, parse
        // and write 1 MiB of JSON. Measured 1.0-1.3x here (install 42-47 ms); the 180-290 ms
        // this once took would be 4-7x.
        let limit = env_or("AMPLIHACK_BENCH_MAX_INSTALL_RATIO", 1.6);
        let Some(jq) = ["/usr/bin/jq", "/bin/jq", "/usr/local/bin/jq"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
        else {
            println!(
                "SKIPPED install on 1 MiB of settings: no jq, the reference it is measured against"
            );
            return finish(failed, &hooks, &project);
        };
        let mut best = f64::MAX;
        for attempt in 1..=ATTEMPTS {
            let (mut ours, mut reference) = (Vec::new(), Vec::new());
            for _ in 0..15 {
                std::fs::write(&settings, &text).expect("write");
                let started = Instant::now();
                let status = Command::new(&amplihack)
                    .args(["install", "--host", "claude"])
                    .env("HOME", &home)
                    .env("AMPLIHACK_BIN_DIR", sandbox.path().join("install-bin"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("install");
                assert!(status.success(), "install failed");
                ours.push(started.elapsed());
                std::fs::write(&settings, &text).expect("write");
                let started = Instant::now();
                let status = Command::new(&jq)
                    .arg(".")
                    .arg(&settings)
                    .stdout(Stdio::null())
                    .status()
                    .expect("jq");
                assert!(status.success(), "jq failed");
                reference.push(started.elapsed());
            }
            ours.sort();
            reference.sort();
            let (ours, reference) = (ms(percentile(&ours, 0.5)), ms(percentile(&reference, 0.5)));
            let ratio = ours / reference;
            println!(
                "amplihack install, {} KiB of settings        median {ours:.1} ms | jq . {reference:.1} ms | ratio {ratio:.2} (goal {limit}){}",
                text.len() / 1024,
                if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                }
            );
            best = best.min(ratio);
            if best <= limit {
                break;
            }
        }
        failed |= !gate::report("amplihack install on 1 MiB vs jq .", best, limit);
    }
    finish(failed, &hooks, &project)
}

/// The checks made after every measurement, and the exit status.
fn finish(mut failed: bool, hooks: &Path, project: &str) {
    let metrics_lines = std::fs::read_to_string(
        Path::new(project).join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
    )
    .map(|t| t.lines().count())
    .unwrap_or(0);
    if metrics_lines == 0 {
        println!("  FAIL: post-tool-use wrote no metrics line, so its cost was not measured");
        failed = true;
    }
    // TLS and HTTP belong to `amplihack update` only: the hook binary must not carry them.
    // (Checked after every run: reading the binary here would inflate the children's peak RSS.)
    {
        let bytes = std::fs::read(hooks).expect("read the binary");
        for needle in ["rustls", "ureq", "tokio"] {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                println!("  FAIL: amplihack-hooks contains `{needle}`");
                failed = true;
            }
        }
        // The limit is on what users download, the `dist` profile (fat LTO). The quicker
        // `release` profile the test tiers measure is about 15% larger (5.27 MB against the
        // dist 4.59 MB when this was written), so it gets a sixth more room.
        let dist = hooks.components().any(|c| c.as_os_str() == "dist");
        let default_kib = if dist { 5120 } else { 6144 };
        let max_size: u64 = env_or("AMPLIHACK_BENCH_MAX_SIZE_KIB", default_kib) * 1024;
        println!(
            "  size: {} bytes ({} profile), limit {max_size}",
            bytes.len(),
            if dist { "dist" } else { "release" }
        );
        if bytes.len() as u64 > max_size {
            println!(
                "  FAIL: amplihack-hooks is {} bytes, over {max_size}",
                bytes.len()
            );
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
