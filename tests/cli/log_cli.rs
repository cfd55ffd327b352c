//! `amplihack log` over what the real hook binary recorded: plugins' runs and built-ins'
//! decisions, with the host that called; `--follow` against a writer.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stdout};

fn event(env: &TestEnv, name: &str, cmd: &str) -> Value {
    json!({"hook_event_name": name, "session_id": "sess-1", "cwd": env.project, "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t1"})
}

/// A table for a person with what changes from run to run taken out: the time and duration
/// cells, and the test's paths ([`support::snapshot::stable`]); cells joined by ` | ` (column widths follow the durations).
fn stable(env: &TestEnv, text: &str) -> String {
    support::snapshot::stable(env, text)
        .lines()
        .map(|line| {
            let mut cells: Vec<String> = line
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            if cells.len() >= 8 && !line.starts_with("TIME") {
                cells[0] = "[TIME]".into();
                cells[6] = "[TOOK]".into();
            }
            cells.join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn plugins(env: &TestEnv) {
    env.plugin(
        &env.user_hooks_dir(),
        "fmt",
        &one_group(
            "PreToolUse",
            None,
            vec![command(
                "echo 'fmt: no .fmt.toml here' >&2; echo more >&2; exit 1",
            )],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "gate",
        &one_group(
            "PreToolUse",
            Some("Bash"),
            vec![command(
                r#"grep -q deploy && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no deploys on Friday"}}'; exit 0"#,
            )],
        ),
    );
}

#[test]
fn plugin_runs_and_builtin_decisions_are_logged_with_their_host() {
    let env = TestEnv::new();
    plugins(&env);
    env.run_hooks(
        &["pre-tool-use"],
        &event(&env, "PreToolUse", "make deploy"),
        &[],
    );
    // The Bash guard denies: a built-in's line, and no plugin runs.
    env.run_hooks(
        &["pre-tool-use"],
        &event(&env, "PreToolUse", "rm -rf ~"),
        &[],
    );
    // Lock mode blocks a stop, under Amplifier.
    assert!(env.run_amplihack(&["lock"]).status.success());
    let stop = json!({"hook_event_name": "Stop", "session_id": "amp-7", "cwd": env.project});
    env.run_hooks(&["stop", "--host", "amplifier"], &stop, &[]);

    let output = env.run_amplihack(&["log"]);
    assert!(output.status.success());
    insta::assert_snapshot!("log_of_real_runs", stable(&env, &stdout(&output)));

    // --json: one object per line, the records as written.
    let output = env.run_amplihack(&["log", "--json", "--decision", "block"]);
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["plugin"], "builtin:lock-mode");
    assert_eq!(lines[0]["host"], "amplifier");
    assert_eq!(lines[0]["kind"], "builtin");

    // doctor mentions the last day's failures, and the command that shows them.
    let doctor = stdout(&env.run_amplihack(&["doctor"]));
    assert!(
        doctor.contains(
            "note: in the last day 1 hook run(s) failed: user:fmt 1; see them: amplihack log --failed --since 1d"
        ),
        "{doctor}"
    );

    // What the audit file holds of the tool input: nothing (the command text is not recorded).
    let audit = std::fs::read_to_string(env.home.join(".local/state/amplihack/audit.jsonl"))
        .expect("audit");
    assert!(!audit.contains("make deploy"), "{audit}");
}

#[test]
fn follow_prints_what_a_writer_appends() {
    let env = TestEnv::new();
    plugins(&env);
    env.run_hooks(&["pre-tool-use"], &event(&env, "PreToolUse", "ls"), &[]);
    let mut child = env
        .amplihack(&["log", "--follow", "--json", "--plugin", "gate"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("amplihack log --follow");
    let out = child.stdout.take().expect("stdout");
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    // The line already there is printed first.
    let first = receive
        .recv_timeout(Duration::from_secs(20))
        .expect("first line");
    assert!(first.contains("\"user:gate\""), "{first}");
    // Two more calls, with the file rotated between them.
    env.run_hooks(
        &["pre-tool-use"],
        &event(&env, "PreToolUse", "make deploy"),
        &[],
    );
    let state = env.home.join(".local/state/amplihack");
    std::fs::rename(state.join("audit.jsonl"), state.join("audit.jsonl.1")).expect("rotate");
    env.run_hooks(
        &["pre-tool-use"],
        &event(&env, "PreToolUse", "deploy again"),
        &[],
    );
    let mut decisions = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while decisions.len() < 2 && Instant::now() < deadline {
        if let Ok(line) = receive.recv_timeout(Duration::from_millis(200)) {
            let v: Value = serde_json::from_str(&line).expect("JSON line");
            decisions.push(v["decision"].clone());
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(decisions, vec![json!("deny"), json!("deny")]);
}
