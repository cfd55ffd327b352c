//! amplihack in the real GitHub Copilot CLI (tests/hosts/copilot, pinned 1.0.102), offline: BYOK
//! against the fake Chat Completions server, a scratch HOME, the user's own files beside ours.
//!
//! After `amplihack install --host copilot` (the Claude-format file `~/.copilot/hooks/amplihack.json`):
//! the `--no-verify` guard denies and the model is told why; PROJECT.md, the prompt reminder and a
//! user plugin's context reach the model once each; a plugin's deny is honoured; PostToolUse
//! metrics record the tool; lock mode's Stop block keeps Copilot working (Copilot stops it after 8
//! in a row); a deleted binary lets every tool run (Copilot denies the tool when a hook fails);
//! `doctor` is clean; `uninstall` gives the user's files back byte for byte and the next turn
//! calls amplihack no more. And what amplihack's entries cost a turn beside `true` entries.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::gate;
use crate::support;
use crate::support::capabilities::{Capability, Trust, proved};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{
    Cli, TURN_LIMIT, cli_command, configure_provider, logged_payloads, turn_args,
};
use crate::support::{TestEnv, run_with_timeout, stderr, stdout};

const PROJECT_MARKER: &str = "PROJECT-MARKER-C0P1L07";
const REMINDER_MARKER: &str = "REMINDER-MARKER-C0P1L07";
const PLUGIN_MARKER: &str = "PLUGIN-CONTEXT-C0P1L07";
/// amplihack's entries against `true` ones, as Copilot times its hooks: see
/// [`amplihacks_entries_cost_about_what_true_entries_cost`].
const SPEED_GOAL: f64 = 1.0;
/// Where the whole turn's figure against entries that start a process doing nothing (`/bin/true`)
/// fails: issue 36's 1.5.
const WHOLE_TURN_LIMIT: f64 = 1.5;
/// Where the whole turn's figure against the shell's builtin `true` fails: twice the goal, as
/// every gate (tests/bench/gate.rs). No hook that is a program meets 1.0 here: Copilot's shell
/// runs a builtin `true` in itself, and the same entries starting `/bin/true` measure 1.26-1.43
/// of it on the 2-core test machine.
const WHOLE_TURN_BUILTIN_LIMIT: f64 = 2.0;
const PLUGIN_DENY: &str = "PLUGIN-DENY-C0P1L07: no removing build here";

/// The user's own Copilot hooks file, there before amplihack (with its own formatting).
const MINE: &str = "{\n    \"hooks\": {\n        \"SessionStart\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"MINE_COMMAND\", \"timeout\": 5 } ] } ]\n    }\n}\n";

/// One Copilot turn in `cwd` (the project unless given).
fn turn(env: &TestEnv, models: &FakeModels, prompt: &str, cwd: Option<&Path>) -> Run {
    configure_provider(env, Cli::Copilot, models);
    let mut command = cli_command(env, Cli::Copilot, models);
    command.args(turn_args(Cli::Copilot, models, prompt, &[]));
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let (output, elapsed) = run_with_timeout(command, b"", TURN_LIMIT);
    Run { output, elapsed }
}

struct Run {
    output: std::process::Output,
    elapsed: std::time::Duration,
}

impl Run {
    fn describe(&self, models: &FakeModels) -> String {
        format!(
            "copilot exited {:?} after {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}",
            self.output.status.code(),
            self.elapsed,
            stdout(&self.output),
            stderr(&self.output),
            models.describe()
        )
    }
}

/// The project: a git work tree with PROJECT.md and a prompt reminder of its own.
fn project(env: &TestEnv) {
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git");
    assert!(git.success());
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# The project\n\n{PROJECT_MARKER}\n"),
    );
    env.write(
        &env.project.join(".claude/context/WORKFLOW_REMINDER.md"),
        &format!("{REMINDER_MARKER}: classify the request first.\n"),
    );
    std::fs::create_dir_all(env.project.join("src")).expect("src");
}

/// A user plugin, Claude Code style, in `~/.amplifier/hooks/notes/`: SessionStart context on
/// stdout, and a PreToolUse deny of `rm -rf build`.
fn user_plugin(env: &TestEnv) {
    let dir = env.user_hooks_dir().join("notes");
    env.script(
        &dir.join("start.sh"),
        &format!("cat > /dev/null\necho '{PLUGIN_MARKER}'"),
    );
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": PLUGIN_DENY}});
    env.script(
        &dir.join("guard.sh"),
        &format!("if grep -q 'rm -rf build'; then echo '{deny}'; fi\nexit 0"),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "notes",
        &json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": format!("'{}'", dir.join("start.sh").display())}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("'{}'", dir.join("guard.sh").display())}]}]
        }}),
    );
}

/// The user's own Copilot files: a hooks file whose SessionStart logs the project variables
/// Copilot sets, and Copilot's config.json.
fn users_copilot_files(env: &TestEnv) -> (PathBuf, PathBuf, PathBuf) {
    let log = env.root().join("mine.jsonl");
    let script = env.script(
        &env.root().join("hooks/mine.sh"),
        &format!(
            "cat > /dev/null\nprintf '{{\"copilot\":\"%s\",\"claude\":\"%s\",\"pwd\":\"%s\"}}\\n' \"$COPILOT_PROJECT_DIR\" \"$CLAUDE_PROJECT_DIR\" \"$PWD\" >> '{}'",
            log.display()
        ),
    );
    let mine = env.home.join(".copilot/hooks/mine.json");
    env.write(
        &mine,
        &MINE.replace("MINE_COMMAND", &format!("'{}'", script.display())),
    );
    let config = env.home.join(".copilot/config.json");
    env.write(
        &config,
        "{\n  \"banner\": \"never\",\n  \"theme\": \"dark\"\n}\n",
    );
    (mine, config, log)
}

fn amplihack_ok(env: &TestEnv, args: &[&str]) -> String {
    let out = env.run_amplihack(args);
    assert!(
        out.status.success(),
        "amplihack {args:?}: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    format!("{}{}", stdout(&out), stderr(&out))
}

fn metrics(env: &TestEnv) -> Vec<Value> {
    logged_payloads(
        &env.project
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
    )
}

#[test]
fn amplihack_in_the_real_copilot() {
    let env = TestEnv::new();
    project(&env);
    user_plugin(&env);
    let (mine, config, mine_log) = users_copilot_files(&env);
    let mine_before = std::fs::read(&mine).expect("mine");
    let config_before = std::fs::read(&config).expect("config");

    let install = amplihack_ok(&env, &["install", "--host", "copilot"]);
    let ours = env.home.join(".copilot/hooks/amplihack.json");
    assert!(ours.exists(), "{install}");
    assert_eq!(
        std::fs::read(&mine).expect("mine"),
        mine_before,
        "install touched mine.json"
    );
    assert_eq!(
        std::fs::read(&config).expect("config"),
        config_before,
        "install touched config.json"
    );

    // From a subdirectory: the project root comes from what Copilot sets.
    let models = FakeModels::start(vec![
        Turn::shell("git commit --no-verify -m wip"),
        Turn::shell("rm -rf build"),
        Turn::shell("echo still-here"),
    ]);
    let run = turn(
        &env,
        &models,
        "Let's work on committing the work.",
        Some(&env.project.join("src")),
    );
    let seen = run.describe(&models);
    assert!(run.output.status.success(), "{seen}");

    let results = models.tool_results();
    assert!(
        results
            .iter()
            .any(|r| r.contains("amplihack blocked `git commit --no-verify`")),
        "the model was not told why: {results:#?}\n{seen}"
    );
    let version = Cli::Copilot.version();
    proved("copilot", &version, Capability::DenyWithReason);
    // Installed for the user, nothing trusted: amplihack's entries ran.
    proved("copilot", &version, Capability::TrustStep(Trust::NoneAsked));
    assert!(
        results.iter().any(|r| r.contains(PLUGIN_DENY)),
        "the plugin's deny: {results:#?}\n{seen}"
    );
    assert!(
        models.tool_result_contains("still-here"),
        "{results:#?}\n{seen}"
    );
    for marker in [PROJECT_MARKER, REMINDER_MARKER, PLUGIN_MARKER] {
        assert_eq!(
            models.count_in_last(marker),
            1,
            "{marker} should reach the model once:\n{:#}",
            models.last_main_request().unwrap_or_default()
        );
    }
    proved("copilot", &version, Capability::Context);
    let recorded = metrics(&env);
    assert!(
        recorded
            .iter()
            .any(|m| m["tool_name"] == "Bash" && m["success"] == true),
        "PostToolUse metrics: {recorded:#?}"
    );
    // The guard's deny (PreToolUse), the plugin's context (SessionStart), the reminder
    // (UserPromptSubmit), the metrics line (PostToolUse).
    proved(
        "copilot",
        &version,
        Capability::Events(vec![
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
        ]),
    );
    // Run from src/, Copilot names the work tree's root (and runs hooks there).
    let vars = logged_payloads(&mine_log);
    let root = env.project.to_string_lossy();
    assert_eq!(
        vars,
        [json!({"copilot": root, "claude": root, "pwd": root})],
        "the user's own hook still runs, and sees the project root\n{seen}"
    );

    let doctor = amplihack_ok(&env, &["doctor"]);
    assert!(doctor.contains("copilot user scope"), "{doctor}");

    let config_now = std::fs::read(&config).expect("config");
    let uninstall = amplihack_ok(&env, &["uninstall", "--host", "copilot"]);
    assert!(!ours.exists(), "{uninstall}");
    assert_eq!(
        std::fs::read(&mine).expect("mine"),
        mine_before,
        "mine.json back byte for byte"
    );
    assert_eq!(
        std::fs::read(&config).expect("config"),
        config_now,
        "uninstall touched Copilot's config.json"
    );
    let names: Vec<String> = std::fs::read_dir(env.home.join(".copilot/hooks"))
        .expect("hooks dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["mine.json"]);

    let metrics_before = metrics(&env).len();
    let models = FakeModels::start(vec![Turn::shell("echo after-uninstall")]);
    let run = turn(&env, &models, "Let's work on something new.", None);
    let seen = run.describe(&models);
    assert!(run.output.status.success(), "{seen}");
    assert!(models.tool_result_contains("after-uninstall"), "{seen}");
    let everything = models.everything_the_model_saw();
    for marker in [PROJECT_MARKER, REMINDER_MARKER, PLUGIN_MARKER] {
        assert!(
            !everything.contains(marker),
            "{marker} after uninstall\n{seen}"
        );
    }
    assert_eq!(
        metrics(&env).len(),
        metrics_before,
        "amplihack ran after uninstall"
    );
    assert_eq!(
        logged_payloads(&mine_log).len(),
        vars.len() + 1,
        "the user's hook ran"
    );
}

/// Copilot denies the tool when a hook fails (1.0.57): with amplihack's binary deleted, its
/// guarded entries exit 0 and every tool still runs; `doctor` calls the missing binary an error.
#[test]
fn a_deleted_binary_never_denies_a_tool() {
    let env = TestEnv::new();
    project(&env);
    amplihack_ok(&env, &["install", "--host", "copilot"]);
    std::fs::remove_file(env.deployed_hooks()).expect("delete amplihack-hooks");

    let models = FakeModels::start(vec![Turn::shell("echo survives-a-missing-binary")]);
    let run = turn(&env, &models, "Say hello through the shell.", None);
    let seen = run.describe(&models);
    assert!(run.output.status.success(), "{seen}");
    assert!(
        models.tool_result_contains("survives-a-missing-binary"),
        "the tool was denied: {:#?}\n{seen}",
        models.tool_results()
    );
    assert!(
        !models.everything_the_model_saw().contains("Denied by"),
        "{seen}"
    );

    let doctor = env.run_amplihack(&["doctor"]);
    let said = format!("{}{}", stdout(&doctor), stderr(&doctor));
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "problem: {}: missing",
            env.deployed_hooks().display()
        )),
        "{said}"
    );
}

/// Lock mode's Stop block keeps Copilot working: the lock's message reaches the model as the next
/// prompt, again and again, until Copilot's own cap (8 blocks in a row) ends the turn.
#[test]
fn lock_mode_keeps_copilot_working_up_to_its_cap() {
    const LOCK: &str = "LOCK-MARKER-C0P1L07: keep going";
    let env = TestEnv::new();
    project(&env);
    amplihack_ok(&env, &["install", "--host", "copilot"]);
    amplihack_ok(&env, &["lock", "--message", LOCK]);

    let models = FakeModels::start(vec![Turn::text("First answer.")]);
    let run = turn(&env, &models, "Let's work on the task.", None);
    let seen = run.describe(&models);
    assert!(run.output.status.success(), "{seen}");
    let main = models.main_requests().len();
    assert_eq!(
        main, 9,
        "one request, then one per block (Copilot stops at 8)\n{seen}"
    );
    let version = Cli::Copilot.version();
    proved("copilot", &version, Capability::Events(vec!["Stop"]));
    proved("copilot", &version, Capability::KeepGoing);
    assert_eq!(models.count_in_last(LOCK), 8, "{seen}");
    proved("copilot", &version, Capability::LockMode);
}

/// What Copilot's hooks took in one session, by its own record (`hook.start` / `hook.end` in
/// `~/.copilot/session-state/<session>/events.jsonl`, millisecond timestamps): each hook
/// invocation's event type and time in ms. The record is then removed, so the next turn's stands
/// alone.
fn hook_times(env: &TestEnv) -> Vec<(String, f64)> {
    let state = env.home.join(".copilot/session-state");
    let mut starts = std::collections::HashMap::new();
    let mut times = Vec::new();
    for session in std::fs::read_dir(&state).expect("session-state").flatten() {
        for event in logged_payloads(&session.path().join("events.jsonl")) {
            let (Some(id), Some(at)) = (
                event["data"]["hookInvocationId"].as_str(),
                event["timestamp"].as_str().and_then(chrono_ms),
            ) else {
                continue;
            };
            match event["type"].as_str() {
                Some("hook.start") => {
                    let kind = event["data"]["hookType"].as_str().unwrap_or("?");
                    starts.insert(id.to_string(), (kind.to_string(), at));
                }
                Some("hook.end") => {
                    if let Some((kind, start)) = starts.remove(id) {
                        times.push((kind, at - start));
                    }
                }
                _ => {}
            }
        }
    }
    std::fs::remove_dir_all(&state).expect("remove session-state");
    times
}

/// Milliseconds into the day of an ISO timestamp (`2026-11-25T21:48:55.827Z`).
fn chrono_ms(timestamp: &str) -> Option<f64> {
    let time = timestamp.split_once('T')?.1.trim_end_matches('Z');
    let mut parts = time.split(':');
    let (h, m, s): (f64, f64, f64) = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    Some(((h * 60.0 + m) * 60.0 + s) * 1000.0)
}

/// What amplihack's entries cost in Copilot against the same entries running `true`, as Copilot
/// times its hooks: turns each way, interleaved (a session start, a prompt, [`CALLS`] shell calls,
/// a stop, a session end).
///
/// Gated: the tool-call hooks (PreToolUse and PostToolUse, which run on every call), the ratio of
/// the medians of their per-turn time, goal [`SPEED_GOAL`], failing over twice it
/// (tests/bench/gate.rs). And the whole turn's hooks, each event's median beside it, goal
/// [`SPEED_GOAL`] against the same entries starting `/bin/true`, failing over
/// [`WHOLE_TURN_LIMIT`], and against the builtin failing over [`WHOLE_TURN_BUILTIN_LIMIT`]: the
/// session's record is written after Copilot has its answer, and only at sessionEnd
/// (runtime/src/builtins/turn_records.rs), so agentStop starts nothing and sessionEnd waits for no
/// fsync.
#[test]
fn amplihacks_entries_cost_about_what_true_entries_cost() {
    let _alone = support::alone();
    const TURNS: usize = 4;
    const CALLS: usize = 4;
    let env = TestEnv::new();
    project(&env);
    amplihack_ok(&env, &["install", "--host", "copilot"]);
    // The binary users run when the caller names it (./test.sh's benchmarks: the one install.sh
    // deployed), else this build's.
    let binary = match std::env::var_os("AMPLIHACK_BENCH_BINARY") {
        Some(path) => {
            std::fs::copy(&path, env.deployed_hooks()).expect("copy AMPLIHACK_BENCH_BINARY");
            PathBuf::from(path).display().to_string()
        }
        None => "this build's amplihack-hooks".to_string(),
    };
    let file = env.home.join(".copilot/hooks/amplihack.json");
    let ours = env.read(&file);
    let mut trues: Value = serde_json::from_str(&ours).expect("json");
    for groups in trues["hooks"].as_object_mut().expect("hooks").values_mut() {
        for group in groups.as_array_mut().expect("groups") {
            for handler in group["hooks"].as_array_mut().expect("handlers") {
                handler["command"] = json!("true");
            }
        }
    }
    let trues = serde_json::to_string_pretty(&trues).expect("json");
    // The same entries starting a process that does nothing: what amplihack's work adds beyond
    // the process start a `true` builtin never pays (reported beside the gated figure).
    let bin_trues = trues.replace("\"true\"", "\"/bin/true\"");

    let one = |text: &str| {
        env.write(&file, text);
        let script = (0..CALLS)
            .map(|i| Turn::shell(&format!("echo timed-{i}")))
            .collect();
        let models = FakeModels::start(script);
        let run = turn(&env, &models, "Say hello through the shell.", None);
        assert!(run.output.status.success(), "{}", run.describe(&models));
        hook_times(&env)
    };
    let sum = |times: &[(String, f64)], kinds: &[&str]| {
        times
            .iter()
            .filter(|(k, _)| kinds.is_empty() || kinds.contains(&k.as_str()))
            .map(|(_, ms)| ms)
            .sum::<f64>()
    };
    const TOOL_HOOKS: [&str; 2] = ["preToolUse", "postToolUse"];
    let mut best: Option<(f64, String)> = None;
    let passed = gate::gate(
        "Copilot tool-call hooks: amplihack / true",
        SPEED_GOAL,
        || {
            let mut tool: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for i in 0..TURNS {
                for side in [i % 2, 1 - i % 2] {
                    let times = one(if side == 0 { &ours } else { &trues });
                    tool[side].push(sum(&times, &TOOL_HOOKS));
                }
            }
            let (a, t) = (support::median(&mut tool[0]), support::median(&mut tool[1]));
            let ratio = a / t.max(1.0);
            let detail = format!(
                "{CALLS} calls' PreToolUse+PostToolUse a turn: amplihack {a:.0} ms, true {t:.0} ms (medians of {TURNS} turns)"
            );
            if best.as_ref().is_none_or(|(b, _)| ratio < *b) {
                best = Some((ratio, detail.clone()));
            }
            Some((ratio, detail))
        },
    );
    let (ratio, detail) = best.unwrap_or((f64::INFINITY, "nothing measured".into()));
    support::figure(&format!(
        "copilot: tool-call hooks as Copilot times them, amplihack's entries ({binary}) vs the same entries running `true`: {detail}; ratio {ratio:.2} (goal {SPEED_GOAL:.2}, fails over {:.2})",
        SPEED_GOAL * gate::FAIL_FACTOR
    ));
    // The whole turn, per event. Gated against the same entries starting `/bin/true` (what
    // amplihack's work adds to the process start every program hook pays) at WHOLE_TURN_LIMIT,
    // and against the builtin `true` at WHOLE_TURN_BUILTIN_LIMIT.
    let mut best_whole: Option<(f64, String)> = None;
    let mut best_builtin = f64::INFINITY;
    let whole_passed = gate::gate_failing_over(
        "Copilot whole turn's hooks: amplihack / /bin/true",
        SPEED_GOAL,
        WHOLE_TURN_LIMIT,
        || {
            let mut turns: [Vec<Vec<(String, f64)>>; 3] = [Vec::new(), Vec::new(), Vec::new()];
            for i in 0..TURNS {
                for side in [i % 3, (i + 1) % 3, (i + 2) % 3] {
                    turns[side].push(one([&ours, &trues, &bin_trues][side]));
                }
            }
            let mut kinds: Vec<String> =
                turns[0].iter().flatten().map(|(k, _)| k.clone()).collect();
            kinds.sort();
            kinds.dedup();
            let per_event: Vec<String> = kinds
                .iter()
                .map(|kind| {
                    let side = |n: usize| {
                        let mut v: Vec<f64> = turns[n].iter().map(|t| sum(t, &[kind])).collect();
                        support::median(&mut v)
                    };
                    format!("{kind} {:.0}/{:.0}/{:.0}", side(0), side(2), side(1))
                })
                .collect();
            let mut whole: [Vec<f64>; 3] =
                [0, 1, 2].map(|n| turns[n].iter().map(|t| sum(t, &[])).collect());
            let [a, t, b] = whole.each_mut().map(|v| support::median(v));
            let ratio = a / b.max(1.0);
            let builtin = a / t.max(1.0);
            best_builtin = best_builtin.min(builtin);
            let detail = format!(
                "amplihack {a:.0} ms, /bin/true {b:.0} ms, builtin true {t:.0} ms (medians of {TURNS} turns); ms per event, amplihack//bin/true/builtin: {}; against the builtin {builtin:.2}, /bin/true against the builtin {:.2}",
                per_event.join(", "),
                b / t.max(1.0)
            );
            if best_whole.as_ref().is_none_or(|(b, _)| ratio < *b) {
                best_whole = Some((ratio, detail.clone()));
            }
            Some((ratio, detail))
        },
    );
    let (ratio, detail) = best_whole.unwrap_or((f64::INFINITY, "nothing measured".into()));
    support::figure(&format!(
        "copilot: a whole turn's hooks (sessionStart, userPromptSubmitted, {CALLS} calls, agentStop, sessionEnd) as Copilot times them, amplihack's entries vs the same entries running /bin/true: {detail}; ratio {ratio:.2} (goal {SPEED_GOAL:.2}, fails over {WHOLE_TURN_LIMIT:.2}); against the builtin `true` {best_builtin:.2} (fails over {WHOLE_TURN_BUILTIN_LIMIT:.2})"
    ));
    assert!(
        whole_passed,
        "a whole turn's hooks over {WHOLE_TURN_LIMIT}x the same entries running /bin/true"
    );
    assert!(
        best_builtin <= WHOLE_TURN_BUILTIN_LIMIT,
        "a whole turn's hooks over {WHOLE_TURN_BUILTIN_LIMIT}x `true`"
    );
    assert!(passed);
}

/// The project scope (`.github/hooks/amplihack.json`) runs only in a folder the user trusted:
/// install and doctor say so until `trustedFolders` in Copilot's config.json names the project,
/// and they are right both ways in the real Copilot. amplihack never writes that file.
#[test]
fn project_scope_runs_once_the_folder_is_trusted() {
    let env = TestEnv::new();
    project(&env);
    let config = env.home.join(".copilot/config.json");
    env.write(
        &config,
        "// This file is managed automatically.\n{\n  \"banner\": \"never\"\n}\n",
    );
    let install = amplihack_ok(
        &env,
        &["install", "--scope", "project", "--host", "copilot"],
    );
    let file = env.project.join(".github/hooks/amplihack.json");
    assert!(file.exists(), "{install}");
    assert!(install.contains("is not in `trustedFolders`"), "{install}");
    let doctor = amplihack_ok(&env, &["doctor"]);
    assert!(doctor.contains("so these hooks do not run yet"), "{doctor}");

    let models = FakeModels::start(vec![Turn::shell("echo untrusted")]);
    let run = turn(&env, &models, "Let's work on the task.", None);
    assert!(run.output.status.success(), "{}", run.describe(&models));
    assert_eq!(
        models.count_in_last(PROJECT_MARKER),
        0,
        "{}",
        run.describe(&models)
    );

    let root = env.project.to_string_lossy();
    env.write(
        &config,
        &format!(
            "// This file is managed automatically.\n{{\n  \"trustedFolders\": [\"{root}\"]\n}}\n"
        ),
    );
    let doctor = amplihack_ok(&env, &["doctor"]);
    assert!(!doctor.contains("trustedFolders"), "{doctor}");
    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m wip")]);
    let run = turn(&env, &models, "Let's work on the task.", None);
    let seen = run.describe(&models);
    assert!(run.output.status.success(), "{seen}");
    assert_eq!(models.count_in_last(PROJECT_MARKER), 1, "{seen}");
    assert!(models.tool_result_contains("amplihack blocked"), "{seen}");
    proved(
        "copilot",
        &Cli::Copilot.version(),
        Capability::TrustStep(Trust::UserTrustsTheFolder),
    );

    let config_now = std::fs::read(&config).expect("config");
    amplihack_ok(
        &env,
        &["uninstall", "--scope", "project", "--host", "copilot"],
    );
    assert!(!file.exists());
    assert!(
        !env.project.join(".github").exists(),
        "install made .github/hooks/: it goes"
    );
    assert_eq!(std::fs::read(&config).expect("config"), config_now);
}

/// Under `--host copilot` nothing but a deny may exit non-zero (any other failure denies the
/// tool): invalid input and usage errors exit 0 there, still reported on stderr, and 1 under
/// Claude Code as before.
#[test]
fn under_copilot_only_a_deny_exits_non_zero() {
    let env = TestEnv::new();
    let no_input = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash"});
    let no_verify = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}});
    let cases: &[(&[&str], &Value, i32, &str)] = &[
        (
            &["post-tool-use", "--host", "copilot"],
            &no_input,
            0,
            "missing the required field",
        ),
        (
            &["post-tool-use", "--host", "claude"],
            &no_input,
            1,
            "missing the required field",
        ),
        (
            &["frobnicate", "--host", "copilot"],
            &no_input,
            0,
            "unknown subcommand",
        ),
        (
            &["--host=copilot", "stop", "extra"],
            &no_input,
            0,
            "unexpected argument",
        ),
        (&["frobnicate"], &no_input, 1, "unknown subcommand"),
    ];
    for (args, payload, code, says) in cases {
        let (output, _) = env.run_hooks(args, payload, &[]);
        assert_eq!(
            output.status.code(),
            Some(*code),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(
            stderr(&output).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "", "{args:?}");
    }
    let (output, _) = env.run_hooks(&["pre-tool-use", "--host", "copilot"], &no_verify, &[]);
    let reply: Value = serde_json::from_str(&stdout(&output)).expect("json reply");
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "deny",
        "{reply}"
    );
}
