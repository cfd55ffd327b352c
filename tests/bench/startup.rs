//! Startup and dispatch cost of `amplihack-hooks`, measured against starting `/bin/true` with the
//! same stdin, interleaved in one run so both see the same machine load.
//!
//! It measures the binary a user gets: `$AMPLIHACK_BENCH_BINARY` (`./test.sh` passes the one
//! `./install.sh` deployed), else the static release build of `packaging/build`.
//!
//! Run: `cargo bench --bench startup`. Prints the median and p90 wall time of each, the median
//! ratio, the peak resident set size of amplihack-hooks and the binary's size, and exits non-zero
//! when the ratio exceeds `AMPLIHACK_BENCH_MAX_RATIO` (default 1.15) or the peak RSS exceeds
//! `AMPLIHACK_BENCH_MAX_RSS_KIB` (default 4096). It also measures what the built-ins add, the
//! same call with them on and off: under 0.05 ms for pre-tool-use's guard, under 0.1 ms for
//! post-tool-use's metrics line. And it checks the binary carries no TLS, HTTP client or async
//! runtime (`rustls`, `ureq`, `tokio`) and is at most 4 MiB (`AMPLIHACK_BENCH_MAX_SIZE_KIB`), and
//! times `amplihack install` on 1 MiB of user settings (gate 75 ms; the goal is 50).
//!
//! A shared 2-core machine has bursts of noise that can move one median by 10%; a measurement
//! that falls short is taken again, up to three times in all, and the best one counts. A slower
//! binary fails all three; a noisy minute does not fail the build.

use std::fs::File;
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
fn run_once(program: &Path, args: &[&str], stdin: &Path) -> Sample {
    run_with(program, args, stdin, &[])
}

// The child is reaped by `wait4` below (std has no wait that returns rusage).
#[allow(clippy::zombie_processes)]
fn run_with(program: &Path, args: &[&str], stdin: &Path, env: &[(&str, &str)]) -> Sample {
    let input = File::open(stdin).expect("payload file");
    let started = Instant::now();
    let child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::from(input))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
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

/// The binary under test: `$AMPLIHACK_BENCH_BINARY`, else the static release build.
fn binary_under_test() -> PathBuf {
    if let Some(path) = std::env::var_os("AMPLIHACK_BENCH_BINARY") {
        return PathBuf::from(path);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("packaging/build"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run packaging/build");
    assert!(out.status.success(), "packaging/build failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("amplihack-hooks")
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

fn measure(truth: &Path, hooks: &Path, stdin: &Path, runs: usize) -> Measured {
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

const ATTEMPTS: usize = 3;

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let hooks = binary_under_test();
    let truth = ["/bin/true", "/usr/bin/true"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("/bin/true");
    let runs: usize = env_or("AMPLIHACK_BENCH_RUNS", 400);
    let max_ratio: f64 = env_or("AMPLIHACK_BENCH_MAX_RATIO", 1.15);
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

    let mut failed = false;
    println!("amplihack-hooks startup benchmark: {runs} interleaved runs each, stdin from a file");
    println!(
        "binary: {} ({} bytes)",
        hooks.display(),
        std::fs::metadata(&hooks).map(|m| m.len()).unwrap_or(0)
    );
    for (label, payload) in [
        ("pre-tool-use, allowed Bash", "PreToolUse-Bash.json"),
        ("pre-tool-use, Write", "PreToolUse-Write.json"),
    ] {
        let stdin = fixtures.join(payload);
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
        if best.ratio() > max_ratio {
            println!(
                "  FAIL: median ratio {:.2} exceeds {max_ratio} in {ATTEMPTS} attempts",
                best.ratio()
            );
            failed = true;
        }
        if best.rss > max_rss {
            println!("  FAIL: peak RSS {} KiB exceeds {max_rss} KiB", best.rss);
            failed = true;
        }
    }
    // What the built-ins themselves cost: the same call with them on and off
    // (`AMPLIHACK_DISABLE=all`), interleaved. pre-tool-use runs the Bash guard; post-tool-use
    // appends the metrics line (into a throwaway project).
    let project = sandbox.path().join("project");
    std::fs::create_dir_all(&project).expect("project");
    let project = project.to_string_lossy().into_owned();
    for (label, subcommand, payload, limit_ms) in [
        (
            "pre-tool-use built-ins (Bash guard)",
            "pre-tool-use",
            "PreToolUse-Bash.json",
            0.05,
        ),
        (
            "post-tool-use built-ins (metrics line)",
            "post-tool-use",
            "PostToolUse-Bash.json",
            0.1,
        ),
    ] {
        let stdin = fixtures.join(payload);
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
            let added = ms(percentile(&with, 0.5)) - ms(percentile(&without, 0.5));
            println!(
                "{label:<40} on {:.3} ms | off {:.3} ms | added {added:+.3} ms (limit {limit_ms} ms){}",
                ms(percentile(&with, 0.5)),
                ms(percentile(&without, 0.5)),
                if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                },
            );
            best = best.min(added);
            if best <= limit_ms {
                break;
            }
        }
        if best > limit_ms {
            println!("  FAIL: {label} add {best:.3} ms, over {limit_ms} ms");
            failed = true;
        }
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
        // The goal is under 50 ms (measured 43-45 ms here); the gate leaves room for a slower
        // disk's fsyncs on a shared machine and still catches the 180-290 ms this once took.
        let limit_ms = 75.0;
        let mut best = f64::MAX;
        for attempt in 1..=ATTEMPTS {
            let mut times = Vec::new();
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
                times.push(started.elapsed());
            }
            times.sort();
            let median = ms(percentile(&times, 0.5));
            println!(
                "amplihack install, {} KiB of settings        median {median:.1} ms (limit {limit_ms} ms){}",
                text.len() / 1024,
                if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                }
            );
            best = best.min(median);
            if best <= limit_ms {
                break;
            }
        }
        if best > limit_ms {
            println!(
                "  FAIL: installing on 1 MiB of settings took {best:.1} ms, over {limit_ms} ms"
            );
            failed = true;
        }
    }
    let metrics_lines = std::fs::read_to_string(
        Path::new(&project).join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
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
        let bytes = std::fs::read(&hooks).expect("read the binary");
        for needle in ["rustls", "ureq", "tokio"] {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                println!("  FAIL: amplihack-hooks contains `{needle}`");
                failed = true;
            }
        }
        let max_size: u64 = env_or("AMPLIHACK_BENCH_MAX_SIZE_KIB", 4096) * 1024;
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
