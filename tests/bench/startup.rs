//! Startup and dispatch cost of `amplihack-hooks`, measured against starting `/bin/true` with the
//! same stdin, interleaved in one run so both see the same machine load.
//!
//! Run: `cargo bench --bench startup` (release build). Prints the median and p90 wall time of
//! each, the median ratio, the peak resident set size of amplihack-hooks and the binary's size,
//! and exits non-zero when the ratio exceeds `AMPLIHACK_BENCH_MAX_RATIO` (default 1.5) or the
//! peak RSS exceeds `AMPLIHACK_BENCH_MAX_RSS_KIB` (default 8192).

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
#[allow(clippy::zombie_processes)]
fn run_once(program: &Path, args: &[&str], stdin: &Path) -> Sample {
    let input = File::open(stdin).expect("payload file");
    let started = Instant::now();
    let child = Command::new(program)
        .args(args)
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

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let hooks = PathBuf::from(env!("CARGO_BIN_EXE_amplihack-hooks"));
    let truth = ["/bin/true", "/usr/bin/true"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("/bin/true");
    let runs: usize = env_or("AMPLIHACK_BENCH_RUNS", 400);
    let max_ratio: f64 = env_or("AMPLIHACK_BENCH_MAX_RATIO", 1.5);
    let max_rss: i64 = env_or("AMPLIHACK_BENCH_MAX_RSS_KIB", 8192);
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.328");
    let log_dir = tempfile::tempdir().expect("tempdir");

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
        let (mut base, mut ours, mut rss) = (Vec::new(), Vec::new(), 0i64);
        // SAFETY (set_var): single-threaded at this point; the children inherit the log directory.
        unsafe { std::env::set_var("AMPLIHACK_LOG_DIR", log_dir.path()) };
        for _ in 0..10 {
            run_once(&truth, &[], &stdin);
            run_once(&hooks, &["pre-tool-use"], &stdin);
        }
        for _ in 0..runs {
            base.push(run_once(&truth, &[], &stdin).wall);
            let sample = run_once(&hooks, &["pre-tool-use"], &stdin);
            ours.push(sample.wall);
            rss = rss.max(sample.max_rss_kib);
        }
        base.sort();
        ours.sort();
        let ratio = ms(percentile(&ours, 0.5)) / ms(percentile(&base, 0.5));
        println!(
            "{label:<28} /bin/true median {:.3} ms (p90 {:.3}) | amplihack-hooks median {:.3} ms (p90 {:.3}) | ratio {ratio:.2} | peak RSS {rss} KiB",
            ms(percentile(&base, 0.5)),
            ms(percentile(&base, 0.9)),
            ms(percentile(&ours, 0.5)),
            ms(percentile(&ours, 0.9)),
        );
        if ratio > max_ratio {
            println!("  FAIL: median ratio {ratio:.2} exceeds {max_ratio}");
            failed = true;
        }
        if rss > max_rss {
            println!("  FAIL: peak RSS {rss} KiB exceeds {max_rss} KiB");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
