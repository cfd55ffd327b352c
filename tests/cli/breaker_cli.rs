//! The plugin circuit breaker: a handler that fails N times in a row (default 5) is parked for
//! the session, told to the user once (Claude Code's non-blocking-error `systemMessage`, stderr,
//! the failure log), recorded by `log` and listed by `doctor`; it runs again in another session
//! and after `hooks enable`.

use serde_json::{Value, json};

use crate::support::{TestEnv, command, one_group, stderr, stdout};

fn event(session: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": session, "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "t"})
}

fn reply(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

#[test]
fn a_handler_failing_n_times_in_a_row_is_parked_for_the_session() {
    for (limit, n) in [(None, 5usize), (Some("2"), 2)] {
        let env = TestEnv::new();
        let ran = env.mark("ran", "x");
        env.plugin(
            &env.user_hooks_dir(),
            "flaky",
            &one_group(
                "PreToolUse",
                None,
                vec![command(&format!("{ran}; echo kaput >&2; exit 3"))],
            ),
        );
        let extra: Vec<(&str, &str)> = limit
            .map(|l| vec![("AMPLIHACK_PLUGIN_FAILURE_LIMIT", l)])
            .unwrap_or_default();
        let parked_text = format!("failed {n} times in a row: parked for the rest of this session");
        for call in 1..=n {
            let (output, _) = env.run_hooks(&["pre-tool-use"], &event("s1"), &extra);
            assert_eq!(output.status.code(), Some(0));
            let told = reply(&output)["systemMessage"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(
                told.contains("hook from flaky failed with exit 3: kaput"),
                "{told}"
            );
            // Told once, on the call that parks it, in the same non-blocking form.
            assert_eq!(
                told.contains(&parked_text),
                call == n,
                "call {call}: {told}"
            );
            assert_eq!(
                stderr(&output).contains(&parked_text),
                call == n,
                "{}",
                stderr(&output)
            );
        }
        // Parked: it does not run again in this session, and nothing more is said.
        let (output, _) = env.run_hooks(&["pre-tool-use"], &event("s1"), &extra);
        assert_eq!(output.status.code(), Some(0));
        assert!(
            reply(&output)["systemMessage"].is_null(),
            "{}",
            stdout(&output)
        );
        assert!(output.stderr.is_empty(), "{}", stderr(&output));
        assert_eq!(env.marks("ran").len(), n);
        // The failure log has it, once.
        let log = std::fs::read_to_string(env.log_file()).unwrap_or_default();
        assert_eq!(
            log.matches(&parked_text).count(),
            1,
            "{}: {log}",
            env.log_file().display()
        );
        // `log` shows the parking.
        let out = env.run_amplihack(&["--json", "log", "--decision", "parked"]);
        let lines: Vec<Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(lines.len(), 1, "{}", stdout(&out));
        assert_eq!(lines[0]["plugin"], "user:flaky");
        assert_eq!(lines[0]["reason"], format!("failed {n} times in a row"));
        // `doctor` lists it.
        let out = env.run_amplihack(&["doctor"]);
        assert!(
            stdout(&out).contains("note: session s1: hook from user:flaky"),
            "{}",
            stdout(&out)
        );
        // Another session runs it.
        env.run_hooks(&["pre-tool-use"], &event("s2"), &extra);
        assert_eq!(env.marks("ran").len(), n + 1);
        // `hooks enable` runs it again in the first session too.
        let out = env.run_amplihack(&["hooks", "enable", "flaky"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("runs again in session s1: user:flaky"),
            "{}",
            stdout(&out)
        );
        env.run_hooks(&["pre-tool-use"], &event("s1"), &extra);
        assert_eq!(env.marks("ran").len(), n + 2);
        assert!(!stdout(&env.run_amplihack(&["doctor"])).contains("parked for the rest"));
        // The record is private and small.
        let record = env
            .home
            .join(".local/state/amplihack/sessions/s1.breaker.json");
        let meta = std::fs::metadata(&record).expect("the session's breaker record");
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o600
        );
        assert!(meta.len() < 1024, "{}", meta.len());
    }
}

#[test]
fn a_success_starts_the_count_again_and_zero_turns_it_off() {
    let env = TestEnv::new();
    let flag = env.root().join("fail");
    env.plugin(
        &env.user_hooks_dir(),
        "flaky",
        &one_group(
            "PreToolUse",
            None,
            vec![command(&format!(
                "[ -e '{}' ] && exit 1; exit 0",
                flag.display()
            ))],
        ),
    );
    let parks = |extra: &[(&str, &str)]| env.run_hooks(&["pre-tool-use"], &event("s"), extra).0;
    std::fs::write(&flag, "").unwrap();
    for _ in 0..4 {
        parks(&[]);
    }
    std::fs::remove_file(&flag).unwrap();
    parks(&[]);
    std::fs::write(&flag, "").unwrap();
    for _ in 0..4 {
        let output = parks(&[]);
        assert!(!stderr(&output).contains("parked"), "{}", stderr(&output));
    }
    // Off: never parked.
    for _ in 0..3 {
        let output = parks(&[("AMPLIHACK_PLUGIN_FAILURE_LIMIT", "0")]);
        assert!(!stderr(&output).contains("parked"), "{}", stderr(&output));
    }
}
