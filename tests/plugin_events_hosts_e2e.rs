//! A user plugin's handler on an event beyond amplihack's own rows runs under a host other than
//! Claude Code, for real: the pinned Qwen Code (tests/hosts/qwen), offline against the fake model
//! server. After `amplihack install --host qwen`, Qwen's settings hold a `dispatch --host qwen`
//! entry for each such event the plugin handles, and a headless turn runs the plugin's handler
//! through amplihack; disabling the plugin takes the entries out and the handler no longer runs;
//! uninstall gives the settings file back byte for byte.

mod support;

use serde_json::json;
use support::fake_models::{FakeModels, Turn};
use support::host_clis::{Cli, cli_command, turn_args};
use support::{TestEnv, command, run_with_timeout, stderr, stdout};

fn ok(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

const SETTINGS: &str = "{\n  // my provider: an OpenAI-compatible endpoint\n  \"security\": {\"auth\": {\"selectedType\": \"openai\"}},\n  \"model\": {\"name\": \"fake-model\"}, /* pinned */\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"telemetry\": {\"enabled\": false},\n  \"$version\": 4\n}\n";

fn turn(env: &TestEnv, models: &FakeModels, script: Vec<Turn>) -> std::process::Output {
    models.reset(script);
    let mut command = cli_command(env, Cli::Qwen, models);
    command.args(turn_args(
        Cli::Qwen,
        models,
        "Please run the commands.",
        &[],
    ));
    let (output, _) = run_with_timeout(command, b"", support::host_clis::TURN_LIMIT);
    output
}

#[test]
fn qwen_runs_a_user_plugins_handler_on_an_event_amplihack_does_not_register_itself() {
    let env = TestEnv::new();
    let models = FakeModels::start(Vec::new());
    let settings = Cli::Qwen.user_settings(&env);
    env.write(&settings, SETTINGS);
    let batch = env.mark("events", "PostToolBatch");
    let failure = env.mark("events", "PostToolUseFailure");
    env.plugin(
        &env.user_hooks_dir(),
        "watcher",
        &json!({"hooks": {
            "PostToolBatch": [{"hooks": [command(&batch)]}],
            "PostToolUseFailure": [{"matcher": "*", "hooks": [command(&failure)]}],
        }}),
    );

    let install = ok(&env.run_amplihack(&["install", "--host", "qwen"]));
    assert!(install.contains("PostToolBatch"), "{install}");
    let installed = env.read(&settings);
    assert_eq!(
        installed.matches("dispatch --host qwen").count(),
        2,
        "{installed}"
    );

    let script = || {
        vec![
            Turn::shell("echo batch-one"),
            Turn::tool(
                "read_file",
                json!({"file_path": env.project.join("no-such-file.txt")}),
            ),
        ]
    };
    let output = turn(&env, &models, script());
    let why = format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}\nlog:\n{}",
        output.status.code(),
        stdout(&output),
        stderr(&output),
        models.describe(),
        std::fs::read_to_string(env.root().join("logs/hooks.log")).unwrap_or_default()
    );
    assert!(output.status.success(), "{why}");
    let marks = env.marks("events");
    eprintln!("events the plugin saw: {marks:?}");
    assert!(
        marks.iter().any(|m| m == "PostToolBatch"),
        "the plugin's PostToolBatch handler never ran: {marks:?}\n{why}"
    );
    assert!(
        marks.iter().any(|m| m == "PostToolUseFailure"),
        "the plugin's PostToolUseFailure handler never ran: {marks:?}\n{why}"
    );

    // Disabled: the entries go, and the next turn runs none of its handlers.
    ok(&env.run_amplihack(&["hooks", "disable", "watcher"]));
    assert!(
        !env.read(&settings).contains("dispatch --host qwen"),
        "{}",
        env.read(&settings)
    );
    let seen = env.marks("events").len();
    let output = turn(&env, &models, script());
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(env.marks("events").len(), seen, "{:?}", env.marks("events"));

    ok(&env.run_amplihack(&["hooks", "enable", "watcher"]));
    ok(&env.run_amplihack(&["uninstall", "--host", "qwen", "--keep-binaries"]));
    assert_eq!(env.read(&settings), SETTINGS);
}
