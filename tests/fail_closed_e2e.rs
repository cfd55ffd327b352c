//! `amplihack install --fail-closed` in the real Claude Code (tests/claude-code, 2.1.332), the
//! real Copilot CLI (tests/hosts/copilot, 1.0.102) and the real Mistral Vibe (3.0.3, from PyPI:
//! `SKIPPED` without a Python >= 3.12), offline against the fake model servers.
//!
//! With --fail-closed and the deployed `amplihack-hooks` removed, or replaced by one that
//! crashes, a shell call is refused, and the model reads a reason that names the fix.
//! Without the flag the same call runs. The choice is recorded: a plain re-install and
//! `doctor --fix` keep it, `--fail-open` undoes it, and `status` says it per host. With the binary
//! in place, amplihack's own deny still reaches the model.

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::fake_models::{FakeModels, Turn as ModelTurn};
use crate::support::host_clis::{Cli, run_turn};
use crate::support::{TestEnv, stderr, stdout};

/// The shell call the model asks for: its output (`hi-42`) is not in the command's own text, so
/// finding it in what the model saw means the command ran.
const CALL: &str = "echo hi-$((40+2))";
const RAN: &str = "hi-42";
/// What the refusal names.
const FIX: &str = "`amplihack doctor --fix` or `amplihack install`";

/// What becomes of the deployed binary before the turn.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Binary {
    /// Left as installed.
    Intact,
    Removed,
    /// Replaced by a program that dies of SIGSEGV.
    Crashing,
}

fn amplihack_ok(env: &TestEnv, args: &[&str]) -> String {
    let out = env.run_amplihack(args);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "amplihack {args:?}: {said}");
    said
}

fn break_binary(env: &TestEnv, how: Binary) {
    let binary = env.deployed_hooks();
    if how == Binary::Intact {
        return;
    }
    std::fs::remove_file(&binary).expect("remove amplihack-hooks");
    if how == Binary::Crashing {
        env.write(&binary, "#!/bin/sh\nkill -SEGV $$\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// The start of the reason the model is given.
fn reason(env: &TestEnv, how: Binary) -> String {
    let binary = env.deployed_hooks();
    match how {
        Binary::Intact => String::new(),
        Binary::Removed => format!("amplihack-hooks is missing at {}", binary.display()),
        Binary::Crashing => format!(
            "amplihack-hooks at {} failed, and amplihack is installed fail-closed",
            binary.display()
        ),
    }
}

fn git_project(env: &TestEnv) {
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git");
    assert!(git.success());
}

/// One Claude Code turn that asks for [`CALL`]: everything the model saw.
fn claude_turn(env: &TestEnv) -> (String, String) {
    let fake = FakeAnthropic::start(vec![Turn::bash(CALL), Turn::text("done")]);
    let run = env.claude(&fake.url, "Say hi through the shell.");
    let seen = fake.everything_the_model_saw();
    let results: Vec<String> = fake
        .main_requests()
        .last()
        .and_then(|r| r["messages"].as_array().cloned())
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect();
    let describe_results = format!("tool results: {results:#?}");
    let describe = format!(
        "{describe_results}\nresult: {}\nstderr: {}\nhook lines:\n{}",
        run.result,
        stderr(&run.output),
        run.hook_lines("amplihack-hooks").join("\n")
    );
    (seen, describe)
}

/// Claude Code: the table of cases, each from a fresh install.
#[test]
fn claude_code_refuses_the_tool_only_when_asked() {
    // (install flags, what happens to the binary, whether the call runs, whether the model is
    // told the fix)
    let cases: &[(&[&str], Binary, bool, bool)] = &[
        (&[], Binary::Removed, true, false),
        (&["--fail-closed"], Binary::Intact, true, false),
        (&["--fail-closed"], Binary::Removed, false, true),
        (&["--fail-closed"], Binary::Crashing, false, true),
    ];
    for (flags, binary, runs, told) in cases {
        let env = TestEnv::new();
        git_project(&env);
        let mut args = vec!["install", "--host", "claude"];
        args.extend_from_slice(flags);
        let said = amplihack_ok(&env, &args);
        let settings = env.read_json(&env.claude_settings_path());
        let entry = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
        let closed = flags.contains(&"--fail-closed");
        assert_eq!(
            entry["onFailure"] == "block",
            closed,
            "{flags:?}: {entry:#}"
        );
        if closed {
            assert!(
                said.contains(
                    "Claude Code: fail-closed: PreToolUse entry has \"onFailure\": \"block\""
                ),
                "{said}"
            );
            // Only the PreToolUse entry: Claude Code ignores it on Stop-type events.
            assert!(
                settings["hooks"]["Stop"][0]["hooks"][0]
                    .get("onFailure")
                    .is_none(),
                "{settings:#}"
            );
        }
        break_binary(&env, *binary);
        let (seen, describe) = claude_turn(&env);
        let case = format!("{flags:?} {binary:?}");
        assert_eq!(
            seen.contains(RAN),
            *runs,
            "{case}: did the call run?\n{describe}\n{seen}"
        );
        assert_eq!(
            seen.contains(FIX),
            *told,
            "{case}: the fix in what the model saw\n{describe}\n{seen}"
        );
        if *told {
            let reason = reason(&env, *binary);
            assert!(seen.contains(&reason), "{case}: {reason}\n{describe}");
        }
    }
}

/// The choice is recorded: a plain re-install and `doctor --fix` keep it, `status` shows it,
/// `doctor` flags a file that lost it, and `--fail-open` undoes it.
#[test]
fn the_choice_is_kept_until_undone() {
    let env = TestEnv::new();
    git_project(&env);
    let settings = env.claude_settings_path();
    let block = |env: &TestEnv| {
        env.read_json(&settings)["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"] == "block"
    };
    amplihack_ok(&env, &["install", "--host", "claude", "--fail-closed"]);
    assert!(block(&env));
    amplihack_ok(&env, &["install", "--host", "claude"]);
    assert!(block(&env), "a plain re-install keeps fail-closed");
    let status = amplihack_ok(&env, &["status"]);
    assert!(
        status.contains("fail-closed (install --fail-closed"),
        "{status}"
    );
    assert!(status.contains("Claude Code: fail-closed:"), "{status}");

    // The entry loses it by hand: doctor says so, --fix restores it.
    let mut value = env.read_json(&settings);
    let entry = &mut value["hooks"]["PreToolUse"][0]["hooks"][0];
    let command = entry["command"].as_str().expect("command").to_string();
    let open = amplihack_protocol::command::without_binary_guard(&command).to_string();
    entry["command"] = serde_json::json!(open);
    entry.as_object_mut().expect("entry").remove("onFailure");
    env.write(
        &settings,
        &serde_json::to_string_pretty(&value).expect("json"),
    );
    let doctor = env.run_amplihack(&["doctor"]);
    let said = format!("{}{}", stdout(&doctor), stderr(&doctor));
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    assert!(
        said.contains("PreToolUse is fail-open, but `install --fail-closed` is recorded"),
        "{said}"
    );
    amplihack_ok(&env, &["doctor", "--fix"]);
    assert!(block(&env), "doctor --fix restores fail-closed");
    let doctor = amplihack_ok(&env, &["doctor"]);
    assert!(doctor.contains("canonical, fail-closed"), "{doctor}");

    amplihack_ok(&env, &["install", "--host", "claude", "--fail-open"]);
    assert!(!block(&env), "--fail-open undoes it");
    let status = amplihack_ok(&env, &["status"]);
    assert!(!status.contains("fail-closed"), "{status}");
    amplihack_ok(&env, &["install", "--host", "claude"]);
    assert!(!block(&env), "and the re-install stays fail-open");
}

/// Where a host has no switch, `install --fail-closed` says so, and succeeds for the rest.
#[test]
fn hosts_without_a_switch_say_so() {
    let env = TestEnv::new();
    git_project(&env);
    let said = amplihack_ok(&env, &["install", "--host", "codex", "--fail-closed"]);
    assert!(
        said.contains("Codex: fail-closed not available: Codex has no switch"),
        "{said}"
    );
    let codex = env.read(&env.home.join(".codex/hooks.json"));
    assert!(!codex.contains("exit 2"), "{codex}");
}

/// One Copilot turn that asks for [`CALL`].
fn copilot_turn(env: &TestEnv) -> (FakeModels, String) {
    let models = FakeModels::start(vec![ModelTurn::shell(CALL)]);
    let run = run_turn(env, Cli::Copilot, &models, "Say hi through the shell.");
    let describe = format!("{}\n{}", run.describe(), models.describe());
    (models, describe)
}

/// Copilot: a preToolUse hook that fails already denies; fail-closed drops the guard that let a
/// missing binary through, and puts one that refuses with the fix in its place.
#[test]
fn copilot_refuses_the_tool_only_when_asked() {
    let cases: &[(&[&str], Binary, bool, bool)] = &[
        (&[], Binary::Removed, true, false),
        (&["--fail-closed"], Binary::Intact, true, false),
        (&["--fail-closed"], Binary::Removed, false, true),
        (&["--fail-closed"], Binary::Crashing, false, true),
    ];
    for (flags, binary, runs, told) in cases {
        let env = TestEnv::new();
        git_project(&env);
        let mut args = vec!["install", "--host", "copilot"];
        args.extend_from_slice(flags);
        let said = amplihack_ok(&env, &args);
        if flags.contains(&"--fail-closed") {
            assert!(said.contains("Copilot CLI: fail-closed:"), "{said}");
        }
        break_binary(&env, *binary);
        let (models, describe) = copilot_turn(&env);
        let case = format!("{flags:?} {binary:?}");
        let results = models.tool_results();
        assert_eq!(
            models.tool_result_contains(RAN),
            *runs,
            "{case}: did the call run? {results:#?}\n{describe}"
        );
        assert_eq!(
            models.everything_the_model_saw().contains(FIX),
            *told,
            "{case}: the fix in what the model saw: {results:#?}\n{describe}"
        );
        if *told {
            let reason = reason(&env, *binary);
            assert!(
                results.iter().any(|r| r.contains(&reason)),
                "{case}: {reason}: {results:#?}\n{describe}"
            );
        }
    }
}

/// With the binary in place, the fail-closed entry passes amplihack's own answers through:
/// the `--no-verify` guard's deny reaches the model in both hosts.
#[test]
fn amplihacks_own_deny_still_reaches_the_model() {
    const BLOCKED: &str = "amplihack blocked `git commit --no-verify`";
    let call = "git commit --no-verify -m x";
    let env = TestEnv::new();
    git_project(&env);
    amplihack_ok(&env, &["install", "--host", "claude", "--fail-closed"]);
    let fake = FakeAnthropic::start(vec![Turn::bash(call), Turn::text("done")]);
    let run = env.claude(&fake.url, "Commit it.");
    let seen = fake.everything_the_model_saw();
    assert!(
        seen.contains(BLOCKED),
        "Claude Code: {}\n{seen}",
        run.result
    );

    let env = TestEnv::new();
    git_project(&env);
    amplihack_ok(&env, &["install", "--host", "copilot", "--fail-closed"]);
    let models = FakeModels::start(vec![ModelTurn::shell(call)]);
    let run = run_turn(&env, Cli::Copilot, &models, "Commit it.");
    assert!(
        models.tool_results().iter().any(|r| r.contains(BLOCKED)),
        "Copilot: {:#?}\n{}",
        models.tool_results(),
        run.describe()
    );
}

/// Vibe: the same table. `--fail-closed` makes amplihack's `pre_tool` entry `strict = true` (Vibe
/// then denies the tool when the hook fails or times out) behind a guard that refuses in Vibe's
/// own `{"decision": "deny", "reason"}`, so the model reads the fix, not Vibe's generic "A strict
/// pre_tool hook failed".
#[test]
fn vibe_refuses_the_tool_only_when_asked() {
    use crate::python_hosts_e2e::{PyCli, describe, turn};
    let Some(vibe) = PyCli::Vibe.bin() else {
        return;
    };
    let cases: &[(&[&str], Binary, bool, bool)] = &[
        (&[], Binary::Removed, true, false),
        (&["--fail-closed"], Binary::Intact, true, false),
        (&["--fail-closed"], Binary::Removed, false, true),
        (&["--fail-closed"], Binary::Crashing, false, true),
    ];
    let models = FakeModels::start(Vec::new());
    for (flags, binary, runs, told) in cases {
        let env = TestEnv::new();
        git_project(&env);
        let mut args = vec!["install", "--host", "vibe"];
        args.extend_from_slice(flags);
        let said = amplihack_ok(&env, &args);
        let closed = flags.contains(&"--fail-closed");
        let file = env.read(&PyCli::Vibe.settings(&env));
        assert_eq!(file.contains("strict = true"), closed, "{flags:?}: {file}");
        if closed {
            assert!(
                said.contains("Mistral Vibe: fail-closed: pre_tool entry has `strict = true`"),
                "{said}"
            );
            let doctor = amplihack_ok(&env, &["doctor", "--host", "vibe"]);
            assert!(doctor.contains("canonical, fail-closed"), "{doctor}");
        }
        break_binary(&env, *binary);
        let (output, _) = turn(
            &env,
            PyCli::Vibe,
            &vibe,
            &models,
            vec![ModelTurn::shell(CALL), ModelTurn::text("done")],
        );
        let case = format!("{flags:?} {binary:?}");
        let why = describe(&output, &models);
        assert!(output.status.success(), "{case}: {why}");
        assert_eq!(
            models.tool_result_contains(RAN),
            *runs,
            "{case}: did the call run?\n{why}"
        );
        let seen = models.everything_the_model_saw();
        assert_eq!(seen.contains(FIX), *told, "{case}: the fix\n{why}");
        if *told {
            let reason = reason(&env, *binary);
            assert!(seen.contains(&reason), "{case}: {reason}\n{why}");
        }
    }
}
