//! What one plugin costs a Bash call in the real Claude Code, natively (`--plugin-dir`) and
//! through amplihack (built-ins included), from Claude Code's own debug log:
//! `Hooks: PreToolUse:Bash [...] finished with status 0 (N ms)`.
//!
//! The plugin has 4 distinct command handlers on PreToolUse and 4 on PostToolUse, each its own
//! script by `${CLAUDE_PLUGIN_ROOT}` path that reads the event, as published plugins write them. Natively Claude Code runs the 4 in parallel, so a call costs the
//! time from the first of each 4 starting to the last finishing; through amplihack it runs
//! amplihack once per event. Sessions alternate
//! (native, amplihack, ...) so both see the same machine load. Checks, and exits non-zero when it
//! fails: through amplihack a Bash call costs at most what it costs natively (median ratio ≤ 1).
//!
//! Run: `cargo bench --bench claude_code_plugins` (needs test.sh's test hosts).
//! `AMPLIHACK_BENCH_CALLS` (default 30) Bash calls per session, `AMPLIHACK_BENCH_SESSIONS`
//! (default 2) sessions each way.

#[path = "../support/mod.rs"]
mod support;

use serde_json::json;
use support::TestEnv;
use support::fake_anthropic::{FakeAnthropic, Turn};

const HANDLERS: usize = 4;

fn plugin(dir: &std::path::Path) {
    // As published plugins write them: a script of the plugin's, by its placeholder path.
    let handler = |event: &str, i: usize| json!({"type": "command", "command": format!("\"${{CLAUDE_PLUGIN_ROOT}}/hooks/check\" {event} {i}")});
    let group = |event: &str| json!([{"matcher": "Bash", "hooks": (1..=HANDLERS).map(|i| handler(event, i)).collect::<Vec<_>>()}]);
    let hooks =
        json!({"hooks": {"PreToolUse": group("PreToolUse"), "PostToolUse": group("PostToolUse")}});
    std::fs::create_dir_all(dir.join(".claude-plugin")).expect("mkdir");
    std::fs::write(
        dir.join(".claude-plugin/plugin.json"),
        r#"{"name": "four-checks"}"#,
    )
    .expect("write");
    std::fs::create_dir_all(dir.join("hooks")).expect("mkdir");
    std::fs::write(dir.join("hooks/hooks.json"), hooks.to_string()).expect("write");
    let check = dir.join("hooks/check");
    std::fs::write(
        &check,
        "#!/bin/sh\n# Reads the event, as every real check does.\ncat > /dev/null\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn script(calls: usize) -> Vec<Turn> {
    let mut turns: Vec<Turn> = (0..calls)
        .map(|i| Turn::bash(&format!("echo {i}")))
        .collect();
    turns.push(Turn::text("done"));
    turns
}

/// Each finished hook line of `event` on Bash, in log order: (when it finished, how long it
/// ran), in milliseconds. The log's timestamps (`2026-11-24T14:25:16.121Z`) are the finish times.
fn hook_runs(log: &str, event: &str) -> Vec<(f64, f64)> {
    let prefix = format!("Hooks: {event}:Bash [");
    log.lines()
        .filter(|l| l.contains(&prefix) && l.contains("finished with status"))
        .filter_map(|l| {
            let open = l.rfind('(')?;
            let took = l[open + 1..]
                .strip_suffix("ms)")?
                .trim()
                .parse::<f64>()
                .ok()?;
            let time = l.split_whitespace().next()?.split('T').nth(1)?;
            let time = time.strip_suffix('Z')?;
            let mut parts = time.split(':');
            let hours: f64 = parts.next()?.parse().ok()?;
            let minutes: f64 = parts.next()?.parse().ok()?;
            let seconds: f64 = parts.next()?.parse().ok()?;
            Some((((hours * 60.0 + minutes) * 60.0 + seconds) * 1000.0, took))
        })
        .collect()
}

/// Per Bash call, how long its hooks held it up: for each event, from the first of its
/// `per_call` handlers starting to the last finishing (Claude Code starts the handlers of one
/// event together and waits for all), PreToolUse plus PostToolUse.
fn per_call(log: &str, per_call: usize) -> Vec<f64> {
    let spans = |event: &str| -> Vec<f64> {
        hook_runs(log, event)
            .chunks(per_call)
            .filter(|c| c.len() == per_call)
            .map(|c| {
                let end = c.iter().map(|(done, _)| *done).fold(f64::MIN, f64::max);
                let start = c
                    .iter()
                    .map(|(done, took)| done - took)
                    .fold(f64::MAX, f64::min);
                end - start
            })
            .collect()
    };
    spans("PreToolUse")
        .into_iter()
        .zip(spans("PostToolUse"))
        .map(|(pre, post)| pre + post)
        .collect()
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let calls = number("AMPLIHACK_BENCH_CALLS", 30);
    let sessions = number("AMPLIHACK_BENCH_SESSIONS", 2);
    let (mut native, mut through) = (Vec::new(), Vec::new());
    for _ in 0..sessions {
        let env = TestEnv::new();
        let dir = env.root().join("plugins/four-checks");
        plugin(&dir);
        let fake = FakeAnthropic::start(script(calls));
        let run = env.claude_with(
            &fake.url,
            &["-p", "go", "--plugin-dir", &dir.to_string_lossy()],
            &[],
        );
        native.extend(per_call(&run.debug_log, HANDLERS));

        let env = TestEnv::new();
        let dir = env.root().join("plugins/four-checks");
        plugin(&dir);
        let installed = env.run_amplihack(&["install", "--host", "claude"]);
        assert!(
            installed.status.success(),
            "{}",
            support::stderr(&installed)
        );
        support::copy_dir(&dir, &env.user_hooks_dir().join("four-checks"));
        let fake = FakeAnthropic::start(script(calls));
        let run = env.claude_with(&fake.url, &["-p", "go"], &[]);
        through.extend(per_call(&run.debug_log, 1));
    }
    assert!(
        native.len() >= calls && through.len() >= calls,
        "too few measured calls: {} native, {} through amplihack",
        native.len(),
        through.len()
    );
    let (native, through) = (median(native), median(through));
    let ratio = through / native;
    println!(
        "{:<58} {native:>8.1} ms",
        "a Bash call's hooks, natively (median)"
    );
    println!(
        "{:<58} {through:>8.1} ms",
        "the same through amplihack (median)"
    );
    let verdict = if ratio <= 1.0 { "ok" } else { "FAIL" };
    println!(
        "{:<58} {ratio:>8.2}x  (limit 1.00x)  {verdict}",
        "through amplihack / natively"
    );
    if ratio > 1.0 {
        std::process::exit(1);
    }
}
