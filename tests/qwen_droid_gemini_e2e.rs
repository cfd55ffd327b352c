//! Qwen Code, Factory Droid and Gemini CLI run amplihack for real: the pinned CLIs
//! (tests/hosts/<cli>), offline against the fake model server (Chat Completions for Qwen and
//! Droid, Gemini's streamGenerateContent for Gemini), in a scratch home whose `settings.json`
//! holds the user's comments and provider settings. After `amplihack install --host <cli>`:
//! the Bash guard denies `git commit --no-verify` and its reason reaches the model; PROJECT.md
//! and a user plugin's context reach the model once; a user plugin's deny is honoured; `doctor`
//! is clean. Then `uninstall` gives the settings file back byte for byte and the next turn runs
//! without amplihack. Each test also times turns with amplihack's entries against the same
//! entries running `true` (tests/bench/gate.rs: figure beside goal, fail over twice the goal).

use std::path::Path;

use serde_json::json;

use crate::gate;
use crate::support;
use crate::support::capabilities::{Capability, Trust, proved};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{
    Cli, cli_command, logged_payloads, logging_hook, register_command_hook, run_turn, turn_args,
};
use crate::support::{TestEnv, command, one_group, run_with_timeout, stderr, stdout};

const PROJECT_MARK: &str = "PROJECT-MD-MARK-7f3a";
const PLUGIN_MARK: &str = "USER-PLUGIN-CONTEXT-5c1e";
const PLUGIN_DENY: &str = "USER-PLUGIN-DENY-9b2d";
/// The guard's reason names what it blocked.
const GUARD_REASON: &str = "amplihack blocked `git commit --no-verify`";
/// The workflow reminder's marker (runtime/src/builtins/workflow_reminder.rs).
const REMINDER_MARK: &str = "amplihack-workflow-classification";

/// The user's settings file as they wrote it: comments, a trailing comma, and the provider
/// settings the CLI needs to reach the fake model.
fn user_settings(cli: Cli, models: &FakeModels) -> String {
    // Both Qwen and Gemini strip comments, then refuse a trailing comma (JSON.parse): none here.
    // Qwen adds `"$version": 4` to a file without it on its first run: the user's has it.
    match cli {
        Cli::Qwen => "{\n  // my provider: an OpenAI-compatible endpoint\n  \"security\": {\"auth\": {\"selectedType\": \"openai\"}},\n  \"model\": {\"name\": \"fake-model\"}, /* pinned */\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"telemetry\": {\"enabled\": false},\n  \"$version\": 4\n}\n".to_string(),
        Cli::Gemini => "{\n  // API key auth, endpoint from the environment\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"model\": {\"name\": \"gemini-2.5-flash\"}, // pinned\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  /* no telemetry */ \"telemetry\": {\"enabled\": false}\n}\n".to_string(),
        Cli::Droid => format!(
            "{{\n  \"customModels\": [\n    {{\n      \"model\": \"fake-model\",\n      \"displayName\": \"Fake\",\n      \"baseUrl\": \"{}\",\n      \"apiKey\": \"dummy\",\n      \"provider\": \"generic-chat-completion-api\",\n      \"maxOutputTokens\": 4096\n    }}\n  ]\n}}\n",
            models.openai_base()
        ),
        other => panic!("{other:?} is not tested here"),
    }
}

/// One headless turn of `cli` on `prompt` in the project, with the settings as they are.
fn turn(env: &TestEnv, cli: Cli, models: &FakeModels, script: Vec<Turn>) -> std::process::Output {
    models.reset(script);
    let mut command = cli_command(env, cli, models);
    command.args(turn_args(cli, models, "Please run the commands.", &[]));
    let (output, _) = run_with_timeout(command, b"", support::host_clis::TURN_LIMIT);
    output
}

fn describe(output: &std::process::Output, models: &FakeModels) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output),
        models.describe()
    )
}

fn assert_success(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
}

/// A user plugin (Claude Code format, in `~/.amplifier/hooks/`): context at session start, and
/// a deny of any command that mentions `plugin-forbidden`.
fn user_plugin(env: &TestEnv) {
    let deny = env.script(
        &env.root().join("plugin/deny.sh"),
        &format!(
            "if grep -q plugin-forbidden; then\n  echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{PLUGIN_DENY}\"}}}}'\nfi"
        ),
    );
    let mut config = one_group(
        "SessionStart",
        None,
        vec![command(&format!("echo {PLUGIN_MARK}"))],
    );
    config["hooks"]["PreToolUse"] = json!([{
        "matcher": "Bash",
        "hooks": [command(&format!("'{}'", deny.display()))]
    }]);
    env.plugin(&env.user_hooks_dir(), "my-plugin", &config);
}

/// The commands of amplihack's entries replaced by `true`: the same events, matchers and
/// timeouts, nothing run.
fn with_true_entries(text: &str) -> String {
    let mut value: serde_json::Value =
        serde_json::from_str(&amplihack_settings::json_text::blank_jsonc(text)).expect("jsonc");
    for groups in value["hooks"].as_object_mut().expect("hooks").values_mut() {
        for group in groups.as_array_mut().expect("groups") {
            for handler in group["hooks"].as_array_mut().expect("handlers") {
                if handler["command"]
                    .as_str()
                    .is_some_and(|c| c.contains("amplihack-hooks"))
                {
                    handler["command"] = json!("true");
                }
            }
        }
    }
    serde_json::to_string_pretty(&value).expect("json")
}

fn timed_turn(env: &TestEnv, cli: Cli, models: &FakeModels) -> f64 {
    let script = vec![Turn::shell("echo one"), Turn::shell("echo two")];
    models.reset(script);
    let mut command = cli_command(env, cli, models);
    command.args(turn_args(cli, models, "Please run the commands.", &[]));
    let (output, elapsed) = run_with_timeout(command, b"", support::host_clis::TURN_LIMIT);
    assert_success(&output);
    elapsed.as_secs_f64()
}

/// The speed figure: a turn of two shell calls with amplihack's entries against the same turn
/// with `true` in their place, interleaved, medians of three each. Goal: no slower than `true`
/// within the turn's noise (1.10); fails over twice that.
fn speed(env: &TestEnv, cli: Cli, models: &FakeModels, settings: &Path) {
    const GOAL: f64 = 1.10;
    let ours = std::fs::read_to_string(settings).expect("settings");
    let stub = with_true_entries(&ours);
    let mut best = (f64::INFINITY, String::new());
    let label = format!("{} turn, amplihack vs true", cli.name());
    let passed = gate::gate(&label, GOAL, || {
        let (mut with_ours, mut with_true) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            std::fs::write(settings, &ours).expect("write");
            with_ours.push(timed_turn(env, cli, models));
            std::fs::write(settings, &stub).expect("write");
            with_true.push(timed_turn(env, cli, models));
        }
        std::fs::write(settings, &ours).expect("write");
        with_ours.sort_by(f64::total_cmp);
        with_true.sort_by(f64::total_cmp);
        let (a, b) = (with_ours[1], with_true[1]);
        let detail = format!("amplihack {a:.2} s, true {b:.2} s");
        if a / b < best.0 {
            best = (a / b, detail.clone());
        }
        Some((a / b, detail))
    });
    support::figure(&format!(
        "{}: a turn of two shell calls, amplihack's entries vs the same entries running `true`: {} (medians of 3); ratio {:.2} (goal {GOAL:.2}, fails over {:.2})",
        cli.name(),
        best.1,
        best.0,
        GOAL * gate::FAIL_FACTOR
    ));
    assert!(passed, "{label}: over twice the goal");
}

/// What let amplihack's entries run in these tests: Gemini's runs trust the workspace
/// (`GEMINI_CLI_TRUST_WORKSPACE`, [`cli_command`]); Qwen (folder trust off, its default) and Droid
/// asked nothing.
fn trust_step(cli: Cli) -> Capability {
    Capability::TrustStep(match cli {
        Cli::Gemini => Trust::UserTrustsTheFolder,
        _ => Trust::NoneAsked,
    })
}

fn proof(cli: Cli) {
    // Its speed part wants the machine to itself.
    let _alone = support::alone();
    let env = TestEnv::new();
    let models = FakeModels::start(Vec::new());
    let settings = cli.user_settings(&env);
    let original = user_settings(cli, &models);
    env.write(&settings, &original);
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# The project\n{PROJECT_MARK}: the test project.\n"),
    );
    user_plugin(&env);
    // A git repository: Droid's own shield refuses a `git commit` it cannot scan.
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git init");
    assert!(git.success());

    assert_success(&env.run_amplihack(&["install", "--host", cli.name()]));
    let installed = env.read(&settings);
    assert!(installed.contains("amplihack-hooks"), "{installed}");
    for comment in ["// ", "/*"] {
        assert_eq!(
            installed.matches(comment).count(),
            original.matches(comment).count(),
            "{installed}"
        );
    }

    // The guard's deny, a plugin's deny, then a harmless command, and a final text.
    let output = turn(
        &env,
        cli,
        &models,
        vec![
            Turn::shell("git commit --no-verify -m x || touch commit-ran"),
            Turn::shell("echo plugin-forbidden > plugin-ran"),
            Turn::shell("echo still-working"),
        ],
    );
    let why = describe(&output, &models);
    assert!(output.status.success(), "{why}");
    assert!(
        !env.project.join("commit-ran").exists(),
        "the guard did not deny: {why}"
    );
    assert!(
        !env.project.join("plugin-ran").exists(),
        "the plugin's deny was not honoured: {why}"
    );
    let saw = models.everything_the_model_saw();
    assert!(
        saw.contains(GUARD_REASON),
        "the guard's reason never reached the model: {saw}\n{why}"
    );
    let version = cli.version();
    proved(cli.name(), &version, Capability::DenyWithReason);
    proved(cli.name(), &version, trust_step(cli));
    assert!(
        saw.contains(PLUGIN_DENY),
        "the plugin's reason never reached the model: {saw}\n{why}"
    );
    assert!(models.tool_result_contains("still-working"), "{why}");
    for (mark, what) in [
        (PROJECT_MARK, "PROJECT.md"),
        (PLUGIN_MARK, "the user plugin's context"),
    ] {
        assert_eq!(
            models.count_in_last(mark),
            1,
            "{what} should reach the model exactly once: {saw}\n{why}"
        );
    }
    proved(cli.name(), &version, Capability::Context);
    // The guard's deny (PreToolUse), the plugin's context (its SessionStart handler).
    proved(
        cli.name(),
        &version,
        Capability::Events(vec!["SessionStart", "PreToolUse"]),
    );
    // Qwen's continuations (UserPromptSubmit with an empty prompt) do not repeat the reminder.
    assert!(models.count_in_last(REMINDER_MARK) <= 1, "{saw}");
    // Nothing amplihack wrote went astray: no complaint in its log.
    let log = std::fs::read_to_string(env.root().join("logs/hooks.log")).unwrap_or_default();
    assert!(!log.contains("ERROR") && !log.contains("panicked"), "{log}");

    let doctor = env.run_amplihack(&["doctor"]);
    assert_success(&doctor);

    speed(&env, cli, &models, &settings);

    assert_success(&env.run_amplihack(&["uninstall", "--host", cli.name()]));
    assert_eq!(
        env.read(&settings),
        original,
        "not given back byte for byte"
    );
    // The next turn runs without amplihack: nothing denies the commit any more.
    let output = turn(
        &env,
        cli,
        &models,
        vec![Turn::shell(
            "git commit --no-verify -m x || touch commit-ran",
        )],
    );
    assert!(output.status.success(), "{}", describe(&output, &models));
    assert!(
        env.project.join("commit-ran").exists(),
        "something still denied the commit: {}\ntool results: {:#?}",
        describe(&output, &models),
        models.tool_results()
    );
    assert!(!models.everything_the_model_saw().contains(GUARD_REASON));
    assert_eq!(models.count_in_last(PROJECT_MARK), 0);
}

#[test]
fn qwen_runs_amplihack() {
    proof(Cli::Qwen);
}

#[test]
fn droid_runs_amplihack() {
    proof(Cli::Droid);
}

#[test]
fn gemini_runs_amplihack() {
    proof(Cli::Gemini);
}

/// The project scope in each CLI: amplihack's entries in the project's own settings file
/// (`.qwen/`, `.factory/`, `.gemini/settings.json`), none in the user's, run in a real turn (the
/// guard's deny reaches the model); uninstall takes the file it created away again.
#[test]
fn each_cli_runs_amplihack_from_the_projects_settings() {
    for (cli, dir) in [
        (Cli::Qwen, ".qwen"),
        (Cli::Droid, ".factory"),
        (Cli::Gemini, ".gemini"),
    ] {
        let env = TestEnv::new();
        let models = FakeModels::start(Vec::new());
        let user = cli.user_settings(&env);
        env.write(&user, &user_settings(cli, &models));
        // A git repository: Droid's own shield refuses a `git commit` it cannot scan.
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&env.project)
            .status()
            .expect("git init");
        assert!(git.success());
        let install = ["install", "--scope", "project", "--host", cli.name()];
        assert_success(&env.run_amplihack(&install));
        let project_file = env.project.join(dir).join("settings.json");
        assert!(
            env.read(&project_file).contains("amplihack-hooks"),
            "{}: {}",
            cli.name(),
            env.read(&project_file)
        );
        assert!(
            !env.read(&user).contains("amplihack-hooks"),
            "{}",
            cli.name()
        );

        let output = turn(
            &env,
            cli,
            &models,
            vec![
                Turn::shell("git commit --no-verify -m x || touch commit-ran"),
                Turn::shell("echo still-working"),
            ],
        );
        let why = format!("{}: {}", cli.name(), describe(&output, &models));
        assert!(output.status.success(), "{why}");
        assert!(
            !env.project.join("commit-ran").exists(),
            "not denied: {why}"
        );
        assert!(
            models.everything_the_model_saw().contains(GUARD_REASON),
            "{why}"
        );
        proved(cli.name(), &cli.version(), trust_step(cli));
        assert!(models.tool_result_contains("still-working"), "{why}");

        let uninstall = ["uninstall", "--scope", "project", "--host", cli.name()];
        assert_success(&env.run_amplihack(&uninstall));
        assert!(
            !project_file.exists(),
            "{}: {}",
            cli.name(),
            env.read(&project_file)
        );
    }
}

/// Lock mode in each CLI: amplihack's Stop answer (Gemini's AfterAgent `decision: "block"`,
/// Claude Code's `decision: "block"` in Qwen and Droid) keeps the agent working, the lock's
/// message reaching the model as the continuation, until the safety valve lets the stop through.
#[test]
fn each_cli_keeps_working_while_the_project_is_locked() {
    const MARK: &str = "LOCK-MARK-93c1: finish the migration";
    for cli in [Cli::Qwen, Cli::Droid, Cli::Gemini] {
        let env = TestEnv::new();
        let models = FakeModels::start(Vec::new());
        env.write(&cli.user_settings(&env), &user_settings(cli, &models));
        assert_success(&env.run_amplihack(&["install", "--host", cli.name()]));
        assert_success(&env.run_amplihack(&["lock", "--message", MARK]));
        models.reset(Vec::new());
        let mut command = cli_command(&env, cli, &models);
        command
            .args(turn_args(cli, &models, "Migrate the schema.", &[]))
            .env("AMPLIHACK_MAX_LOCK_ITERATIONS", "1");
        let (output, _) = run_with_timeout(command, b"", support::host_clis::TURN_LIMIT);
        let why = format!("{}: {}", cli.name(), describe(&output, &models));
        assert!(output.status.success(), "{why}");
        let main = models.main_requests();
        assert_eq!(main.len(), 2, "one continuation while locked: {why}");
        let version = cli.version();
        proved(cli.name(), &version, Capability::Events(vec!["Stop"]));
        proved(cli.name(), &version, Capability::KeepGoing);
        assert!(models.count_in_last(MARK) >= 1, "{why}");
        assert_eq!(
            main.first()
                .map_or(0, |body| body.to_string().matches(MARK).count()),
            0,
            "the lock's message comes with the continuation: {why}"
        );
        proved(cli.name(), &version, Capability::LockMode);
    }
}

/// Why `amplihack doctor` reports a Droid `hooks.json`: with one beside `settings.json`, Droid
/// runs its hooks and ignores the settings file's `hooks` key, where amplihack's entries are.
#[test]
fn droid_ignores_the_settings_hooks_beside_a_hooks_json() {
    let env = TestEnv::new();
    let (settings_log, hooks_json_log) = (env.root().join("a.jsonl"), env.root().join("b.jsonl"));
    let in_settings = logging_hook(&env, "a", &settings_log);
    let in_hooks_json = logging_hook(&env, "b", &hooks_json_log);
    register_command_hook(&env, Cli::Droid, "PreToolUse", &in_settings);
    env.write(
        &env.home.join(".factory/hooks.json"),
        &json!({"PreToolUse": [{"matcher": "*", "hooks": [command(&in_hooks_json)]}]}).to_string(),
    );
    let models = FakeModels::start(vec![Turn::shell("echo hi")]);
    let run = run_turn(&env, Cli::Droid, &models, "go");
    assert!(run.output.status.success(), "{}", run.describe());
    assert_eq!(
        logged_payloads(&hooks_json_log).len(),
        1,
        "{}",
        run.describe()
    );
    assert_eq!(
        logged_payloads(&settings_log).len(),
        0,
        "Droid now runs both: the doctor check can go"
    );
}
