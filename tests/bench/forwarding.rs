//! What forwarding to the user's plugins costs, measured with the binary users run (`subject.rs`).
//!
//! Run: `cargo bench --bench forwarding`. Every figure is a ratio against a reference measured in
//! the same run, interleaved, so both sides see the same machine load; absolute times are
//! printed, never gated. The goals (`gate.rs`: it fails only over twice a goal, or the limit
//! given):
//! * 8 plugins whose handlers each sleep 200 ms take at most 1.15x one such plugin (they run in
//!   parallel; one after another would be 8x);
//! * what 100 plugins that do not match the event add is at most 0.25x starting one `sh -c true`,
//!   failing over 0.75: the plugin index (`engine/src/plugin_index.rs`) leaves two `fstatat`s a
//!   plugin relative to the level's directory and one small read of about 6 KB (0.20-0.26x,
//!   most of it the 200 `fstatat`s); before it every call parsed every file (1.28-1.65x), with
//!   absolute `statx`s and a listing it was 0.53-0.58x, and with a text index 0.29-0.35x;
//! * what one matching handler adds is at most 2x starting `sh -c true` itself (on a quiet
//!   machine about 1.4x: `sh -c true` plus 0.3 ms);
//! * what an untrusted repository at the caps (1,000 plugin directories of 1 MiB hooks files)
//!   adds to a call is at most 6.5x `sh -c true` (the goal of 5 ms, on this 2-core machine):
//!   trust comes before any file is read; and so does a repository trusted once whose 1,000
//!   plugins were then replaced by 1 MiB ones (the listing's stats against the recorded ones,
//!   one file hashed, nothing parsed).

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

/// A home whose `~/.amplifier/hooks` holds `plugins` (name, matcher, command).
fn home_with(plugins: &[(String, &str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    for (name, matcher, command) in plugins {
        let dir = home.path().join(".amplifier/hooks").join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let config = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}});
        std::fs::write(dir.join("hooks.json"), config.to_string()).expect("write");
    }
    if !plugins.is_empty() {
        age(&home.path().join(".amplifier"));
    }
    home
}

/// Dates every file and directory under `dir` a minute back, as a user's plugins are: the plugin
/// index never trusts a stamp younger than a second (`plugin_index::RACY`, a second edit within
/// the same tick would go unseen), so a tree made just now is parsed on every call until it ages,
/// and the first attempt would time that instead of the idle path.
fn age(dir: &Path) {
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            age(&entry.path());
        }
    }
    std::fs::File::open(dir)
        .and_then(|f| f.set_modified(past))
        .expect("date the directory");
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::File::options()
                .write(true)
                .open(entry.path())
                .and_then(|f| f.set_modified(past))
                .expect("date the file");
        }
    }
}

/// One PreToolUse call of the captured Bash `event` (a file) with `home` as HOME.
fn time_hook(home: &Path, event: &Path) -> Duration {
    let stdin = std::fs::File::open(event).expect("payload");
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
    let mut ok = true;
    // The captured call, sent from a project that exists, as a host sends it.
    let scratch = tempfile::tempdir().expect("tempdir");
    let event = captured::rehomed_file("claude-code-2.1.328/PreToolUse-Bash.json", scratch.path());

    let empty = home_with(&[]);
    let sleepers = home_with(
        &(0..8)
            .map(|i| (format!("sleeper-{i}"), "*", "sleep 0.2"))
            .collect::<Vec<_>>(),
    );
    let sleeper = home_with(&[("sleeper".to_string(), "*", "sleep 0.2")]);
    ok &= gate("8 handlers sleeping 200 ms vs one", 1.15, || {
        let (mut eight, mut one) = (Vec::new(), Vec::new());
        for _ in 0..10 {
            eight.push(time_hook(sleepers.path(), &event));
            one.push(time_hook(sleeper.path(), &event));
        }
        let (eight, one) = (median(eight), median(one));
        Some((
            ms(eight) / ms(one),
            format!("8: {:.1} ms, 1: {:.1} ms", ms(eight), ms(one)),
        ))
    });

    let idle = home_with(
        &(0..100)
            .map(|i| (format!("plugin-{i:03}"), "Write|Edit", "true"))
            .collect::<Vec<_>>(),
    );
    let one = home_with(&[("one".to_string(), "Bash", "true")]);
    let medians = || {
        let (mut none, mut hundred, mut single, mut sh) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            none.push(time_hook(empty.path(), &event));
            hundred.push(time_hook(idle.path(), &event));
            single.push(time_hook(one.path(), &event));
            sh.push(time_sh_true());
        }
        let [none, hundred, single, sh] = [none, hundred, single, sh].map(|v| ms(median(v)));
        println!(
            "  medians: no plugins {none:.3} ms, 100 idle plugins {hundred:.3} ms, one handler {single:.3} ms, sh -c true {sh:.3} ms"
        );
        (none, hundred, single, sh)
    };
    ok &= gate::gate_failing_over(
        "100 plugins that do not match vs sh -c true",
        0.25,
        0.75,
        || {
            let (none, hundred, _, sh) = medians();
            Some((
                (hundred - none) / sh,
                format!("added {:.3} ms", hundred - none),
            ))
        },
    );
    ok &= gate("one handler's cost vs sh -c true", 2.0, || {
        let (none, _, single, sh) = medians();
        Some((
            (single - none) / sh,
            format!(
                "added {:.3} ms, {:+.3} ms beyond sh -c true",
                single - none,
                single - none - sh
            ),
        ))
    });
    // An untrusted repository at the caps: 1,000 plugin directories, each with a 1 MiB
    // hooks.json (hard links of one file). Nothing of it may be read before trust says no.
    let hostile = tempfile::tempdir().expect("tempdir");
    let hostile_event =
        captured::rehomed_file("claude-code-2.1.328/PreToolUse-Bash.json", hostile.path());
    let hooks = hostile.path().join("project/.amplifier/hooks");
    std::fs::create_dir_all(&hooks).expect("hooks");
    let big = hostile.path().join("big.json");
    let rule = r#"{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]},"#;
    let mut text = String::from("{\"hooks\":{\"PreToolUse\":[");
    while text.len() < (1 << 20) - 200 {
        text.push_str(rule);
    }
    text.push_str(rule.trim_end_matches(','));
    text.push_str("]}}");
    std::fs::write(&big, text).expect("big");
    for i in 0..1_000 {
        let dir = hooks.join(format!("p{i:04}"));
        std::fs::create_dir_all(&dir).expect("plugin dir");
        std::fs::hard_link(&big, dir.join("hooks.json")).expect("link");
    }
    ok &= gate(
        "1,000 untrusted plugins at the caps vs sh -c true",
        UNTRUSTED_GOAL,
        || {
            let (mut none, mut hostile_calls, mut sh) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..runs / 3 {
                none.push(time_hook(empty.path(), &event));
                hostile_calls.push(time_hook(empty.path(), &hostile_event));
                sh.push(time_sh_true());
            }
            let [none, hostile_calls, sh] = [none, hostile_calls, sh].map(|v| ms(median(v)));
            Some((
                (hostile_calls - none) / sh,
                format!(
                    "added {:.3} ms (goal 5 ms), sh -c true {sh:.3} ms",
                    hostile_calls - none
                ),
            ))
        },
    );
    // Trusted once, then changed at the caps: 1,000 small plugins trusted, then each hooks.json
    // replaced by a 1 MiB one. The listing's stats and the recorded ones say so (one file
    // hashed), before anything is parsed.
    let changed = tempfile::tempdir().expect("tempdir");
    let changed_event =
        captured::rehomed_file("claude-code-2.1.328/PreToolUse-Bash.json", changed.path());
    let project = changed.path().join("project");
    let hooks = project.join(".amplifier/hooks");
    let small = r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}}"#;
    for i in 0..1_000 {
        let dir = hooks.join(format!("p{i:04}"));
        std::fs::create_dir_all(&dir).expect("plugin dir");
        std::fs::write(dir.join("hooks.json"), small).expect("small");
    }
    // Settled (past the racy window), so trust records their metadata as it would for a user.
    std::thread::sleep(Duration::from_millis(2_100));
    let trusted = Command::new(env!("CARGO_BIN_EXE_amplihack"))
        .args(["hooks", "trust", "--project"])
        .arg(&project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", empty.path())
        .stdout(Stdio::null())
        .output()
        .expect("trust");
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    for i in 0..1_000 {
        let file = hooks.join(format!("p{i:04}/hooks.json"));
        std::fs::remove_file(&file).expect("rm");
        std::fs::hard_link(&big, &file).expect("link");
    }
    ok &= gate(
        "1,000 plugins changed after trust, at the caps, vs sh -c true",
        UNTRUSTED_GOAL,
        || {
            let (mut none, mut changed_calls, mut sh) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..runs / 3 {
                none.push(time_hook(empty.path(), &event));
                changed_calls.push(time_hook(empty.path(), &changed_event));
                sh.push(time_sh_true());
            }
            let [none, changed_calls, sh] = [none, changed_calls, sh].map(|v| ms(median(v)));
            Some((
                (changed_calls - none) / sh,
                format!(
                    "added {:.3} ms (goal 5 ms), sh -c true {sh:.3} ms",
                    changed_calls - none
                ),
            ))
        },
    );
    if !ok {
        std::process::exit(1);
    }
}

/// The goal of 5 ms on this 2-core machine (hostile-repos round 2), where `sh -c true` takes
/// 0.75 ms, as the ratio every figure here is: about 6.5 process starts.
const UNTRUSTED_GOAL: f64 = 6.5;
