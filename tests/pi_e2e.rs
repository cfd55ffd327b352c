//! amplihack in the real Pi (`@mariozechner/pi-coding-agent` 0.73.1, tests/hosts/pi), offline
//! against the fake Chat Completions server (a provider extension of the test's own, passed with
//! `-e`), through amplihack's bridge extension: `amplihack install --host pi` writes it into
//! `~/.pi/agent/extensions/` (or a project's `.pi/extensions/`), and Pi runs `amplihack-hooks
//! dispatch --host pi` on each event. What the model was sent and what is on disk are the proof.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::gate;
use crate::support;
use crate::support::TestEnv;
use crate::support::capabilities::{self, Capability, Trust};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{Cli, run_turn, run_turn_with};

const VERSION: &str = "0.73.1";
const PROJECT_NOTE: &str = "PROJECT-NOTE-7731: this project ships on Fridays.";
const TEAM_NOTE: &str = "TEAM-NOTE-4410: the staging DB is read-only today.";
const GUARD_REASON: &str = "skipping the repository's verification hooks is not allowed";
const PLUGIN_REASON: &str = "Deploys are frozen until Monday";
/// A user plugin's context after each tool call.
const POST_NOTE: &str = "POST-NOTE-9120";
/// A Pi extension of the user's own, beside amplihack's: it must be left as it was.
const USER_EXTENSION: &str = "// my own extension\nexport default function (pi) {\n  pi.on(\"agent_start\", async () => {});\n}\n";

fn extension_file(env: &TestEnv) -> PathBuf {
    env.home.join(".pi/agent/extensions/amplihack.js")
}

fn amplihack(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let (output, _) = support::run_with_timeout(env.amplihack(args), b"", Duration::from_secs(60));
    output
}

fn assert_ok(output: &std::process::Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        support::stdout(output),
        support::stderr(output)
    );
}

/// A user of Pi (it ran once, so its own files are there), with an extension of their own,
/// PROJECT.md in the project and two Claude Code plugins of their own in `~/.amplifier/hooks/`:
/// a context note on every prompt, and a deploy freeze.
fn user_setup(env: &TestEnv) {
    let models = FakeModels::start(Vec::new());
    let first = run_turn(env, Cli::Pi, &models, "Hello.");
    assert!(first.output.status.success(), "{}", first.describe());
    env.write(
        &env.home.join(".pi/agent/extensions/mine.js"),
        USER_EXTENSION,
    );
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# Project\n\n{PROJECT_NOTE}\n"),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "team-notes",
        &support::one_group(
            "UserPromptSubmit",
            None,
            vec![support::command(&format!("echo '{TEAM_NOTE}'"))],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "post-notes",
        &support::one_group(
            "PostToolUse",
            None,
            vec![support::command(&format!(
                r#"echo '{{"hookSpecificOutput":{{"hookEventName":"PostToolUse","additionalContext":"{POST_NOTE}"}}}}'"#
            ))],
        ),
    );
    support::copy_dir(
        &support::repo_root().join("tests/fixtures/plugins/freeze-deploys"),
        &env.user_hooks_dir().join("freeze-deploys"),
    );
}

/// Every file under `dir` with its bytes, but Pi's session records (each turn adds one).
fn pi_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("agent/sessions") {
                    todo.push(path);
                }
            } else {
                files.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}

/// Whether every main request holds `note` exactly once.
fn once_in_every_request(models: &FakeModels, note: &str) {
    let requests = models.main_requests();
    assert!(!requests.is_empty(), "{}", models.describe());
    for (n, request) in requests.iter().enumerate() {
        assert_eq!(
            support::fake_models::count_in_strings(request, note),
            1,
            "{note} in main request {n}: {request:#}"
        );
    }
}

/// The whole story in one home: install, a turn where amplihack's guard and a user's plugin each
/// deny a command and their reasons reach the model, project and plugin context reaching it once;
/// doctor clean; uninstall gives Pi's files back byte for byte (the user's own extension
/// untouched), and the next turn runs no amplihack.
#[test]
fn amplihack_works_in_pi_through_its_bridge_extension() {
    let env = TestEnv::new();
    user_setup(&env);
    let before = pi_files(&env.home.join(".pi"));

    let install = amplihack(&env, &["install", "--host", "pi"]);
    assert_ok(&install, "install");
    let extension = env.read(&extension_file(&env));
    assert!(
        extension.contains(
            &serde_json::to_string(&env.deployed_hooks().to_string_lossy()).expect("json")
        ),
        "the extension does not run the deployed binary:\n{extension}"
    );

    let models = FakeModels::start(vec![
        Turn::shell("git commit --no-verify -m test"),
        Turn::shell("make deploy"),
        Turn::shell("echo still-here"),
    ]);
    let run = run_turn(&env, Cli::Pi, &models, "Commit, then deploy.");
    assert!(
        run.output.status.success(),
        "{}\n{}",
        run.describe(),
        models.describe()
    );
    let results = models.tool_results();
    assert!(
        results.iter().any(|r| r.contains(GUARD_REASON)),
        "amplihack's guard reason did not reach the model: {results:#?}\n{}",
        run.describe()
    );
    assert!(
        results.iter().any(|r| r.contains(PLUGIN_REASON)),
        "the plugin's deny did not reach the model: {results:#?}"
    );
    assert!(
        models.tool_result_contains("still-here"),
        "an allowed command did not run: {results:#?}"
    );
    once_in_every_request(&models, PROJECT_NOTE);
    once_in_every_request(&models, TEAM_NOTE);
    // PostToolUse context, after the one allowed command: in the last request only.
    let last = models.last_main_request().expect("a request");
    assert_eq!(
        support::fake_models::count_in_strings(&last, POST_NOTE),
        1,
        "{last:#}"
    );

    let doctor = amplihack(&env, &["doctor"]);
    assert_ok(&doctor, "doctor");
    assert!(
        support::stdout(&doctor).contains("amplihack's bridge extension"),
        "{}",
        support::stdout(&doctor)
    );

    let uninstall = amplihack(&env, &["uninstall", "--host", "pi", "--keep-binaries"]);
    assert_ok(&uninstall, "uninstall");
    assert!(
        !extension_file(&env).exists(),
        "the extension is still there"
    );
    let after_files = pi_files(&env.home.join(".pi"));
    assert_eq!(
        after_files.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "Pi's files differ after uninstall"
    );
    for (path, bytes) in &before {
        assert_eq!(&after_files[path], bytes, "{} changed", path.display());
    }

    let after = FakeModels::start(vec![Turn::shell("echo make deploy-after")]);
    let run = run_turn(&env, Cli::Pi, &after, "Deploy.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        after.tool_result_contains("deploy-after"),
        "the command was denied without amplihack: {:#?}",
        after.tool_results()
    );
    let seen = after.everything_the_model_saw();
    assert!(
        !seen.contains(PROJECT_NOTE) && !seen.contains(TEAM_NOTE),
        "{seen}"
    );
    for capability in [
        Capability::Events(vec![
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
        ]),
        Capability::DenyWithReason,
        Capability::Context,
        Capability::TrustStep(Trust::NoneAsked),
    ] {
        capabilities::proved("pi", VERSION, capability);
    }
}

/// Lock mode in Pi: at the end of a turn with no tool call amplihack's Stop says "keep
/// working", and the bridge queues the reason as a follow-up prompt (`sendUserMessage(...,
/// {deliverAs: "followUp"})` from `turn_end`), which the same `pi -p` run sends; the safety valve
/// then ends it.
#[test]
fn lock_mode_keeps_pi_working() {
    let env = TestEnv::new();
    user_setup(&env);
    assert_ok(&amplihack(&env, &["install", "--host", "pi"]), "install");
    assert_ok(
        &amplihack(&env, &["lock", "--message", "KEEP-GOING-5521"]),
        "lock",
    );
    let models = FakeModels::start(Vec::new());
    let run = run_turn_with(
        &env,
        Cli::Pi,
        &models,
        "Work on it.",
        &[],
        &[("AMPLIHACK_MAX_LOCK_ITERATIONS", "1")],
    );
    assert!(run.output.status.success(), "{}", run.describe());
    let continued = models
        .main_requests()
        .iter()
        .filter(|r| support::fake_models::count_in_strings(r, "KEEP-GOING-5521") > 0)
        .count();
    assert!(
        continued > 0,
        "the continuation never reached the model\n{}",
        models.describe()
    );
    let status = amplihack(&env, &["lock", "--status"]);
    assert!(
        !support::stdout(&status).contains("KEEP-GOING-5521"),
        "the safety valve did not unlock: {}",
        support::stdout(&status)
    );
    for capability in [
        Capability::Events(vec!["Stop"]),
        Capability::KeepGoing,
        Capability::LockMode,
    ] {
        capabilities::proved("pi", VERSION, capability);
    }
}

/// The project scope: the extension goes in `<project>/.pi/extensions/`, kept out of the
/// project's commits (it holds this machine's path). Installed for the user too, Pi loads both
/// copies, and amplihack still runs once per event: the context reaches the model once.
/// Uninstalling the project scope gives the project back as it was.
#[test]
fn pi_project_scope_beside_user_scope_runs_amplihack_once() {
    let env = TestEnv::new();
    user_setup(&env);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git init");
    assert!(git.success());
    let exclude = env.project.join(".git/info/exclude");
    let exclude_before = std::fs::read(&exclude).expect("exclude");
    assert_ok(
        &amplihack(&env, &["install", "--host", "pi", "--scope", "project"]),
        "install --scope project",
    );
    assert_ok(&amplihack(&env, &["install", "--host", "pi"]), "install");
    let project_extension = env.project.join(".pi/extensions/amplihack.js");
    assert!(project_extension.is_file());
    assert!(
        env.read(&exclude)
            .lines()
            .any(|l| l == "/.pi/extensions/amplihack.js")
    );

    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m x")]);
    let run = run_turn(&env, Cli::Pi, &models, "Commit.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains(GUARD_REASON)),
        "{:#?}",
        models.tool_results()
    );
    once_in_every_request(&models, PROJECT_NOTE);
    once_in_every_request(&models, TEAM_NOTE);
    assert_ok(&amplihack(&env, &["doctor"]), "doctor");

    assert_ok(
        &amplihack(
            &env,
            &[
                "uninstall",
                "--host",
                "pi",
                "--scope",
                "project",
                "--keep-binaries",
            ],
        ),
        "uninstall --scope project",
    );
    assert!(
        !env.project.join(".pi").exists(),
        "the project's .pi/ stayed"
    );
    assert_eq!(std::fs::read(&exclude).expect("exclude"), exclude_before);
    assert!(extension_file(&env).is_file(), "the user scope went too");
}

/// doctor's silence check: a Pi session run with `--no-extensions` after amplihack was
/// registered called no amplihack, and doctor names it (Pi's own session record) with the causes.
#[test]
fn doctor_finds_a_pi_session_that_ran_without_amplihack() {
    let env = TestEnv::new();
    user_setup(&env);
    assert_ok(&amplihack(&env, &["install", "--host", "pi"]), "install");
    let models = FakeModels::start(Vec::new());
    let run = run_turn(&env, Cli::Pi, &models, "Hello.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert_ok(
        &amplihack(&env, &["doctor"]),
        "doctor after a session with amplihack",
    );

    let run = run_turn_with(&env, Cli::Pi, &models, "Hello.", &["--no-extensions"], &[]);
    assert!(run.output.status.success(), "{}", run.describe());
    let doctor = amplihack(&env, &["doctor"]);
    let out = support::stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{out}");
    assert!(
        out.contains("Pi ran session") && out.contains("--no-extensions"),
        "{out}"
    );
}

/// Pi turns with the bridge calling amplihack against the same bridge calling `true`,
/// interleaved: amplihack costs a turn no more than a process that does nothing.
#[test]
fn a_pi_turn_with_amplihack_costs_about_what_a_true_hook_does() {
    let _alone = support::alone();
    let env = TestEnv::new();
    user_setup(&env);
    assert_ok(&amplihack(&env, &["install", "--host", "pi"]), "install");
    let ours = env.read(&extension_file(&env));
    let binary = serde_json::to_string(&env.deployed_hooks().to_string_lossy()).expect("json");
    let theirs = ours.replace(&binary, "\"/bin/true\"");
    assert_ne!(ours, theirs);

    let turn = |text: &str, n: usize| -> f64 {
        env.write(&extension_file(&env), text);
        let models = FakeModels::start(vec![Turn::shell(&format!("echo turn-{n}"))]);
        let run = run_turn(&env, Cli::Pi, &models, "Echo.");
        assert!(run.output.status.success(), "{}", run.describe());
        run.elapsed.as_secs_f64()
    };
    // The goal: no slower than `true` beyond noise (6 hook calls on a ~2.5 s turn).
    const GOAL: f64 = 1.10;
    let mut best = (f64::INFINITY, String::new());
    let passed = gate::gate("Pi turn, amplihack vs `true`", GOAL, || {
        let (mut a, mut t) = (Vec::new(), Vec::new());
        for n in 0..3 {
            t.push(turn(&theirs, n));
            a.push(turn(&ours, n));
        }
        let (a, t) = (support::median(&mut a), support::median(&mut t));
        let detail = format!("amplihack {a:.2} s, true {t:.2} s (medians of 3)");
        if a / t < best.0 {
            best = (a / t, detail.clone());
        }
        Some((a / t, detail))
    });
    support::figure(&format!(
        "Pi turn, bridge calling amplihack vs `true`: {} | {:.2} (goal {GOAL}, fails over {:.2})",
        best.1,
        best.0,
        GOAL * gate::FAIL_FACTOR
    ));
    assert!(passed, "over twice the goal");
}
