//! amplihack in the real Cline CLI (`cline` 3.0.65, tests/hosts/cline), offline against the
//! fake Chat Completions server (`CLINE_PROVIDER_SETTINGS_PATH`, the local session backend),
//! through amplihack's bridge plugin: `amplihack install --host cline` writes it into
//! `~/.cline/plugins/` (or a project's `.cline/plugins/`), and Cline's plugin host runs
//! `amplihack-hooks dispatch --host cline` on each hook. What the model was sent and what is on
//! disk are the proof.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::gate;
use crate::support;
use crate::support::TestEnv;
use crate::support::capabilities::{self, Capability, Trust};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{Cli, run_turn};

const VERSION: &str = "3.0.65";
const PROJECT_NOTE: &str = "PROJECT-NOTE-7731: this project ships on Fridays.";
const TEAM_NOTE: &str = "TEAM-NOTE-4410: the staging DB is read-only today.";
const GUARD_REASON: &str = "skipping the repository's verification hooks is not allowed";
const PLUGIN_REASON: &str = "Deploys are frozen until Monday";
/// A user plugin's context after each tool call.
const POST_NOTE: &str = "POST-NOTE-9120";
/// A Cline plugin of the user's own, beside amplihack's: it must be left as it was.
const USER_PLUGIN: &str = "// my own plugin\nexport default { name: \"mine\", manifest: { capabilities: [\"hooks\"] }, hooks: {} };\n";
/// A Cline hook file of the user's own (a script per event): it must keep running, unchanged.
const USER_HOOK: &str = "#!/bin/sh\ncat > /dev/null\necho '{}'\n";

fn plugin_file(env: &TestEnv) -> PathBuf {
    env.home.join(".cline/plugins/amplihack.js")
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

/// A user of Cline (it ran once, so its own files are there), with a plugin and a hook file of
/// their own, PROJECT.md in the project and two Claude Code plugins of their own in
/// `~/.amplifier/hooks/`: a context note on every prompt, and a deploy freeze.
fn user_setup(env: &TestEnv) {
    let models = FakeModels::start(Vec::new());
    let first = run_turn(env, Cli::Cline, &models, "Say hello.");
    assert!(first.output.status.success(), "{}", first.describe());
    env.write(&env.home.join(".cline/plugins/mine.js"), USER_PLUGIN);
    env.write(&env.home.join(".cline/hooks/PreToolUse.sh"), USER_HOOK);
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

/// Every file under `dir` with its bytes, but Cline's own records (`data/`: sessions, logs,
/// databases; each turn adds to them).
fn cline_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with(".cline/data") {
                    todo.push(path);
                }
            } else {
                files.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}

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
/// deny one command (the plugin API's skip: the rest of the task goes on) and their reasons reach
/// the model, project and plugin context reaching it once from the first request; doctor clean;
/// uninstall gives Cline's files back byte for byte (the user's own plugin and hook file
/// untouched), and the next turn runs no amplihack.
#[test]
fn amplihack_works_in_cline_through_its_bridge_plugin() {
    let env = TestEnv::new();
    user_setup(&env);
    let before = cline_files(&env.home.join(".cline"));

    let install = amplihack(&env, &["install", "--host", "cline"]);
    assert_ok(&install, "install");
    let plugin = env.read(&plugin_file(&env));
    assert!(
        plugin.contains(
            &serde_json::to_string(&env.deployed_hooks().to_string_lossy()).expect("json")
        ),
        "the plugin does not run the deployed binary:\n{plugin}"
    );

    let models = FakeModels::start(vec![
        Turn::shell("git commit --no-verify -m test"),
        Turn::shell("make deploy"),
        Turn::shell("echo still-here"),
    ]);
    let run = run_turn(&env, Cli::Cline, &models, "Commit, then deploy.");
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
        "the task did not go on after a deny: {results:#?}"
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
        support::stdout(&doctor).contains("amplihack's bridge plugin"),
        "{}",
        support::stdout(&doctor)
    );

    let uninstall = amplihack(&env, &["uninstall", "--host", "cline", "--keep-binaries"]);
    assert_ok(&uninstall, "uninstall");
    assert!(!plugin_file(&env).exists(), "the plugin is still there");
    let after_files = cline_files(&env.home.join(".cline"));
    assert_eq!(
        after_files.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "Cline's files differ after uninstall"
    );
    for (path, bytes) in &before {
        assert_eq!(&after_files[path], bytes, "{} changed", path.display());
    }

    let after = FakeModels::start(vec![Turn::shell("echo make deploy-after")]);
    let run = run_turn(&env, Cli::Cline, &after, "Deploy it now.");
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
        capabilities::proved("cline", VERSION, capability);
    }
}

/// The project scope: the plugin goes in `<project>/.cline/plugins/`, kept out of the project's
/// commits. Installed for the user too, Cline keeps one plugin of a name (the project's), and
/// amplihack runs once per event: the context reaches the model once. Uninstalling the project
/// scope gives the project back as it was.
#[test]
fn cline_project_scope_beside_user_scope_runs_amplihack_once() {
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
        &amplihack(&env, &["install", "--host", "cline", "--scope", "project"]),
        "install --scope project",
    );
    assert_ok(&amplihack(&env, &["install", "--host", "cline"]), "install");
    assert!(env.project.join(".cline/plugins/amplihack.js").is_file());
    assert!(
        env.read(&exclude)
            .lines()
            .any(|l| l == "/.cline/plugins/amplihack.js")
    );

    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m x")]);
    let run = run_turn(&env, Cli::Cline, &models, "Commit the work.");
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
                "cline",
                "--scope",
                "project",
                "--keep-binaries",
            ],
        ),
        "uninstall --scope project",
    );
    assert!(
        !env.project.join(".cline/plugins").exists(),
        "the project's plugin folder stayed"
    );
    assert_eq!(std::fs::read(&exclude).expect("exclude"), exclude_before);
    assert!(plugin_file(&env).is_file(), "the user scope went too");
}

/// A bridge plugin whose binary is gone does nothing: the turn runs as without amplihack.
/// `doctor` names the binary and, from Cline's own session record, the session that ran without
/// amplihack; `doctor --fix` points the plugin at the binary again (the session stays named).
#[test]
fn a_missing_binary_leaves_cline_working_and_doctor_names_the_silent_session() {
    let env = TestEnv::new();
    user_setup(&env);
    assert_ok(&amplihack(&env, &["install", "--host", "cline"]), "install");
    let moved = env.root().join("gone/amplihack-hooks");
    let text = env.read(&plugin_file(&env)).replace(
        &env.deployed_hooks().to_string_lossy().to_string(),
        &moved.to_string_lossy(),
    );
    env.write(&plugin_file(&env), &text);

    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m x; echo ran")]);
    let run = run_turn(&env, Cli::Cline, &models, "Commit the work.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        models.tool_result_contains("ran"),
        "{:#?}",
        models.tool_results()
    );

    let doctor = amplihack(&env, &["doctor"]);
    let out = support::stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{out}");
    assert!(out.contains("(which does not exist)"), "{out}");
    assert!(out.contains("Cline CLI ran session"), "{out}");
    // The plugin is repaired; the past session stays a problem (it did run without amplihack).
    let fix = amplihack(&env, &["doctor", "--fix"]);
    assert!(
        support::stdout(&fix).contains("repaired:"),
        "{}",
        support::stdout(&fix)
    );
    assert!(
        env.read(&plugin_file(&env))
            .contains(&*env.deployed_hooks().to_string_lossy())
    );
}

/// Cline turns with the plugin calling amplihack against the same plugin calling `true`,
/// interleaved: amplihack costs a turn no more than a process that does nothing.
#[test]
fn a_cline_turn_with_amplihack_costs_about_what_a_true_hook_does() {
    let _alone = support::alone();
    let env = TestEnv::new();
    user_setup(&env);
    assert_ok(&amplihack(&env, &["install", "--host", "cline"]), "install");
    let ours = env.read(&plugin_file(&env));
    let binary = serde_json::to_string(&env.deployed_hooks().to_string_lossy()).expect("json");
    let theirs = ours.replace(&binary, "\"/bin/true\"");
    assert_ne!(ours, theirs);

    let turn = |text: &str, n: usize| -> f64 {
        env.write(&plugin_file(&env), text);
        let models = FakeModels::start(vec![Turn::shell(&format!("echo turn-{n}"))]);
        let run = run_turn(&env, Cli::Cline, &models, "Echo the turn.");
        assert!(run.output.status.success(), "{}", run.describe());
        run.elapsed.as_secs_f64()
    };
    // The goal: no slower than `true` beyond noise (5 hook calls on a turn of several seconds).
    const GOAL: f64 = 1.10;
    let mut best = (f64::INFINITY, String::new());
    let passed = gate::gate("Cline turn, amplihack vs `true`", GOAL, || {
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
        "Cline turn, plugin calling amplihack vs `true`: {} | {:.2} (goal {GOAL}, fails over {:.2})",
        best.1,
        best.0,
        GOAL * gate::FAIL_FACTOR
    ));
    assert!(passed, "over twice the goal");
}
