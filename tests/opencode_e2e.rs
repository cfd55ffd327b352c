//! amplihack in the real opencode (1.18.33, tests/hosts/opencode), offline against the fake
//! Chat Completions server, through amplihack's own bridge plugin: `amplihack install --host
//! opencode` writes it into `$XDG_CONFIG_HOME/opencode/plugin/`, and opencode runs
//! `amplihack-hooks dispatch --host opencode` on each event. What the model was sent and what is
//! on disk are the proof.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::gate;
use crate::support;
use crate::support::TestEnv;
use crate::support::capabilities::{Capability, Trust, proved};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{
    Cli, cli_command, configure_provider, opencode_config_dir, run_turn,
};

const PROJECT_NOTE: &str = "PROJECT-NOTE-7731: this project ships on Fridays.";
const TEAM_NOTE: &str = "TEAM-NOTE-4410: the staging DB is read-only today.";
const GUARD_REASON: &str = "skipping the repository's verification hooks is not allowed";
const PLUGIN_REASON: &str = "Deploys are frozen until Monday";

fn plugin_file(env: &TestEnv) -> PathBuf {
    opencode_config_dir(env).join("plugin/amplihack.js")
}

/// `amplihack` with the scratch XDG directories opencode is run with.
fn amplihack(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let mut command = env.amplihack(args);
    command.env("XDG_CONFIG_HOME", env.home.join(".config"));
    let (output, _) = support::run_with_timeout(command, b"", Duration::from_secs(60));
    output
}

/// A user whose opencode is set up (provider, a comment-free opencode.json of their own),
/// with PROJECT.md in the project and two Claude Code plugins of their own in
/// `~/.amplifier/hooks/`: a context note on every prompt, and a deploy freeze.
fn user_setup(env: &TestEnv, models: &FakeModels) {
    configure_provider(env, Cli::Opencode, models);
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
    support::copy_dir(
        &support::repo_root().join("tests/fixtures/plugins/freeze-deploys"),
        &env.user_hooks_dir().join("freeze-deploys"),
    );
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

/// The whole story in one home: install, a turn where amplihack's guard and a user's plugin each
/// deny a command and their reasons reach the model, project and plugin context reaching it once;
/// doctor clean; uninstall gives opencode's config back byte for byte, and the next turn runs no
/// amplihack.
#[test]
fn amplihack_works_in_opencode_through_its_bridge_plugin() {
    let env = TestEnv::new();
    let models = FakeModels::start(vec![
        Turn::shell("git commit --no-verify -m test"),
        Turn::shell("make deploy"),
        Turn::shell("echo still-here"),
    ]);
    user_setup(&env, &models);
    let config = opencode_config_dir(&env).join("opencode.json");
    let config_before = std::fs::read(&config).expect("opencode.json");

    let install = amplihack(&env, &["install", "--host", "opencode"]);
    assert_ok(&install, "install");
    let plugin = env.read(&plugin_file(&env));
    assert!(
        plugin.contains(
            &serde_json::to_string(&env.deployed_hooks().to_string_lossy()).expect("json")
        ),
        "the plugin does not run the deployed binary:\n{plugin}"
    );

    let run = run_turn(&env, Cli::Opencode, &models, "Commit, then deploy.");
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
    let version = Cli::Opencode.version();
    proved("opencode", &version, Capability::DenyWithReason);
    // opencode loads the user's plugins unasked.
    proved(
        "opencode",
        &version,
        Capability::TrustStep(Trust::NoneAsked),
    );
    assert!(
        results.iter().any(|r| r.contains(PLUGIN_REASON)),
        "the plugin's deny did not reach the model: {results:#?}"
    );
    assert!(
        models.tool_result_contains("still-here"),
        "an allowed command did not run: {results:#?}"
    );
    for note in [PROJECT_NOTE, TEAM_NOTE] {
        for (n, request) in models.main_requests().iter().enumerate() {
            assert_eq!(
                support::fake_models::count_in_strings(request, note),
                1,
                "{note} in main request {n}: {request:#}"
            );
        }
    }
    proved("opencode", &version, Capability::Context);
    // The guard's deny (`tool.execute.before`), the plugin's context (its UserPromptSubmit).
    proved(
        "opencode",
        &version,
        Capability::Events(vec!["UserPromptSubmit", "PreToolUse"]),
    );

    let doctor = amplihack(&env, &["doctor"]);
    assert_ok(&doctor, "doctor");
    assert!(
        support::stdout(&doctor).contains("amplihack's bridge plugin"),
        "{}",
        support::stdout(&doctor)
    );

    let uninstall = amplihack(
        &env,
        &["uninstall", "--host", "opencode", "--keep-binaries"],
    );
    assert_ok(&uninstall, "uninstall");
    assert!(
        !plugin_file(&env).exists(),
        "the bridge plugin is still there"
    );
    assert!(!plugin_file(&env).parent().expect("dir").exists());
    assert_eq!(
        std::fs::read(&config).expect("opencode.json"),
        config_before,
        "opencode.json changed"
    );

    let after = FakeModels::start(vec![Turn::shell("echo make deploy-after")]);
    let run = run_turn(&env, Cli::Opencode, &after, "Deploy.");
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
}

/// A bridge plugin whose binary is gone (a moved install) does nothing: the turn runs as without
/// amplihack. `doctor` names the problem and `doctor --fix` points the plugin at the binary again.
#[test]
fn a_missing_binary_leaves_opencode_working_and_doctor_fix_repoints_it() {
    let env = TestEnv::new();
    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m x; echo ran")]);
    user_setup(&env, &models);
    assert_ok(
        &amplihack(&env, &["install", "--host", "opencode"]),
        "install",
    );
    let moved = env.root().join("gone/amplihack-hooks");
    let text = env.read(&plugin_file(&env)).replace(
        &env.deployed_hooks().to_string_lossy().to_string(),
        &moved.to_string_lossy(),
    );
    env.write(&plugin_file(&env), &text);

    let run = run_turn(&env, Cli::Opencode, &models, "Commit.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        !models
            .tool_results()
            .iter()
            .any(|r| r.contains(GUARD_REASON)),
        "{:#?}",
        models.tool_results()
    );

    let doctor = amplihack(&env, &["doctor"]);
    assert_eq!(
        doctor.status.code(),
        Some(1),
        "{}",
        support::stdout(&doctor)
    );
    assert!(
        support::stdout(&doctor).contains("(which does not exist)"),
        "{}",
        support::stdout(&doctor)
    );
    assert_ok(&amplihack(&env, &["doctor", "--fix"]), "doctor --fix");
    assert_ok(&amplihack(&env, &["doctor"]), "doctor after --fix");
    assert!(
        env.read(&plugin_file(&env))
            .contains(&*env.deployed_hooks().to_string_lossy())
    );
}

/// A file of the user's named amplihack.js in the plugin directory is never overwritten.
#[test]
fn install_refuses_a_plugin_file_that_is_not_amplihacks() {
    let env = TestEnv::new();
    let mine = "// my own plugin\nexport const Mine = async () => ({});\n";
    env.write(&plugin_file(&env), mine);
    let install = amplihack(&env, &["install", "--host", "opencode"]);
    assert_eq!(
        install.status.code(),
        Some(1),
        "{}",
        support::stderr(&install)
    );
    let stderr = support::stderr(&install);
    assert!(
        stderr.contains(&*plugin_file(&env).to_string_lossy())
            && stderr.contains("not amplihack's bridge plugin"),
        "{stderr}"
    );
    assert_eq!(env.read(&plugin_file(&env)), mine);
}

/// opencode turns with the bridge calling amplihack against the same bridge calling `true`,
/// interleaved: amplihack costs a turn no more than a process that does nothing.
#[test]
fn a_turn_with_amplihack_costs_about_what_a_true_hook_does() {
    let _alone = support::alone();
    let env = TestEnv::new();
    let models = FakeModels::start(Vec::new());
    user_setup(&env, &models);
    assert_ok(
        &amplihack(&env, &["install", "--host", "opencode"]),
        "install",
    );
    let ours = env.read(&plugin_file(&env));
    let binary = serde_json::to_string(&env.deployed_hooks().to_string_lossy()).expect("json");
    let theirs = ours.replace(&binary, "\"/bin/true\"");
    assert_ne!(ours, theirs);

    let turn = |text: &str, n: usize| -> f64 {
        env.write(&plugin_file(&env), text);
        let models = FakeModels::start(vec![Turn::shell(&format!("echo turn-{n}"))]);
        let run = run_turn(&env, Cli::Opencode, &models, "Echo.");
        assert!(run.output.status.success(), "{}", run.describe());
        run.elapsed.as_secs_f64()
    };
    // The goal: no slower than `true` beyond noise (5 hook calls on a ~4 s turn).
    const GOAL: f64 = 1.10;
    let mut best = (f64::INFINITY, String::new());
    let passed = gate::gate("opencode turn, amplihack vs `true`", GOAL, || {
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
        "opencode turn, bridge calling amplihack vs `true`: {} | {:.2} (goal {GOAL}, fails over {:.2})",
        best.1,
        best.0,
        GOAL * gate::FAIL_FACTOR
    ));
    assert!(passed, "over twice the goal");
}

/// Lock mode in opencode: at `session.idle` amplihack's Stop says "keep working", and the bridge
/// sends the reason as the next prompt (`client.session.prompt`); the safety valve then ends it.
/// `opencode run` exits at the first idle, before a continuation can start (the Stop reply comes,
/// the process is gone), so this runs the turn on an `opencode serve` the plugin lives in.
#[test]
fn lock_mode_keeps_an_opencode_server_working_at_idle() {
    let env = TestEnv::new();
    let models = FakeModels::start(Vec::new());
    user_setup(&env, &models);
    assert_ok(
        &amplihack(&env, &["install", "--host", "opencode"]),
        "install",
    );
    assert_ok(
        &amplihack(&env, &["lock", "--message", "KEEP-GOING-5521"]),
        "lock",
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut serve = cli_command(&env, Cli::Opencode, &models);
    serve
        .args(["serve", "--port", &port.to_string()])
        .env("AMPLIHACK_MAX_LOCK_ITERATIONS", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let server = Server(serve.spawn().expect("opencode serve"));
    let url = format!("http://127.0.0.1:{port}");
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            up.elapsed() < Duration::from_secs(60),
            "opencode serve never listened"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut attach = cli_command(&env, Cli::Opencode, &models);
    attach.args(["run", "--attach", &url, "Work on it."]);
    let (output, _) = support::run_with_timeout(attach, b"", Duration::from_secs(120));
    assert_ok(&output, "opencode run --attach");

    let seen = |text: &str| {
        models
            .main_requests()
            .iter()
            .filter(|r| support::fake_models::count_in_strings(r, text) > 0)
            .count()
    };
    let waited = Instant::now();
    while seen("KEEP-GOING-5521") == 0 && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        seen("KEEP-GOING-5521") > 0,
        "the continuation never reached the model\n{}",
        models.describe()
    );
    let version = Cli::Opencode.version();
    proved("opencode", &version, Capability::Events(vec!["Stop"]));
    proved("opencode", &version, Capability::KeepGoing);
    proved("opencode", &version, Capability::LockMode);
    // The safety valve: one continuation, then the next idle unlocks and the session stops.
    std::thread::sleep(Duration::from_secs(3));
    let requests = models.main_requests().len();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(models.main_requests().len(), requests, "it kept going");
    let status = amplihack(&env, &["lock", "--status"]);
    assert!(
        !support::stdout(&status).contains("KEEP-GOING-5521"),
        "{}",
        support::stdout(&status)
    );
    drop(server);
}

/// An `opencode serve` this test started, stopped when the test ends (even when it fails).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The project scope: the plugin goes in `<project>/.opencode/plugin/`, kept out of the
/// project's commits (it holds this machine's path). Installed for the user too, opencode loads
/// both copies, and amplihack still runs once per event: the context reaches the model once.
/// Uninstalling the project scope gives the project back as it was.
#[test]
fn project_scope_beside_user_scope_runs_amplihack_once() {
    let env = TestEnv::new();
    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m x")]);
    user_setup(&env, &models);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git init");
    assert!(git.success());
    let exclude = env.project.join(".git/info/exclude");
    let exclude_before = std::fs::read(&exclude).expect("exclude");
    assert_ok(
        &amplihack(
            &env,
            &["install", "--host", "opencode", "--scope", "project"],
        ),
        "install --scope project",
    );
    assert_ok(
        &amplihack(&env, &["install", "--host", "opencode"]),
        "install",
    );
    let project_plugin = env.project.join(".opencode/plugin/amplihack.js");
    assert!(project_plugin.is_file());
    assert!(
        env.read(&exclude)
            .lines()
            .any(|l| l == "/.opencode/plugin/amplihack.js")
    );

    let run = run_turn(&env, Cli::Opencode, &models, "Commit.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains(GUARD_REASON)),
        "{:#?}",
        models.tool_results()
    );
    for request in models.main_requests() {
        for note in [PROJECT_NOTE, TEAM_NOTE] {
            assert_eq!(
                support::fake_models::count_in_strings(&request, note),
                1,
                "{note}: {request:#}"
            );
        }
    }
    assert_ok(&amplihack(&env, &["doctor"]), "doctor");

    assert_ok(
        &amplihack(
            &env,
            &[
                "uninstall",
                "--host",
                "opencode",
                "--scope",
                "project",
                "--keep-binaries",
            ],
        ),
        "uninstall --scope project",
    );
    // opencode keeps its own files in `.opencode/` (it installs `@opencode-ai/plugin` into each
    // configuration directory it reads); amplihack's plugin and its directory are gone.
    assert!(!project_plugin.exists());
    assert!(!env.project.join(".opencode/plugin").exists());
    assert_eq!(std::fs::read(&exclude).expect("exclude"), exclude_before);
    assert!(plugin_file(&env).is_file(), "the user scope went too");
}

/// Uninstall takes amplihack's plugin and its directory away, and leaves opencode's own
/// directory, even empty (it is opencode's, and how `--host all` finds opencode installed).
#[test]
fn uninstall_leaves_opencodes_own_directory() {
    let env = TestEnv::new();
    std::fs::create_dir_all(opencode_config_dir(&env)).expect("mkdir");
    assert_ok(
        &amplihack(&env, &["install", "--host", "opencode"]),
        "install",
    );
    assert!(plugin_file(&env).is_file());
    assert_ok(
        &amplihack(&env, &["uninstall", "--host", "opencode"]),
        "uninstall",
    );
    assert!(!plugin_file(&env).parent().expect("dir").exists());
    assert!(opencode_config_dir(&env).is_dir());
}
