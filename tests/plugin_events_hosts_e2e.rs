//! A user plugin's handler on an event beyond amplihack's own rows runs under a host other than
//! Claude Code, for real: the pinned Qwen Code (tests/hosts/qwen), offline against the fake model
//! server. After `amplihack install --host qwen`, Qwen's settings hold a `dispatch --host qwen`
//! entry for each such event the plugin handles, and a headless turn runs the plugin's handler
//! through amplihack; disabling the plugin takes the entries out and the handler no longer runs;
//! uninstall gives the settings file back byte for byte.

use serde_json::json;

use crate::support;
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{Cli, cli_command, turn_args};
use crate::support::{TestEnv, command, run_with_timeout, stderr, stdout};

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

/// Codex runs no hook nobody trusted: the `dispatch` entry amplihack adds for a plugin's
/// SubagentStop, after a user's own entry on that event, is trusted through the real Codex
/// (`codex app-server` lists it trusted), and the user's entry keeps its key and its trust.
#[test]
fn codex_trusts_the_plugin_event_entry_and_keeps_the_users_trust() {
    use crate::support::host_clis::{CodexAppServer, codex_home};
    let env = TestEnv::new();
    let hooks_json = codex_home(&env).join("hooks.json");
    let users = "{\n  \"hooks\": {\n    \"SubagentStop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"/bin/true\"}]}\n    ]\n  }\n}\n";
    env.write(&hooks_json, users);
    let mut server = CodexAppServer::start(&env);
    let listed = server.hooks(&env.project);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    server.trust(&listed);
    let user_key = listed[0].key.clone();
    drop(server);
    let mark = env.mark("events", "SubagentStop");
    env.plugin(
        &env.user_hooks_dir(),
        "subagents",
        &support::one_group("SubagentStop", None, vec![command(&mark)]),
    );
    let amplihack = |args: &[&str]| {
        let mut command = env.amplihack(args);
        command
            .env(Cli::Codex.bin_var(), Cli::Codex.bin())
            .env("CODEX_HOME", codex_home(&env));
        let (output, _) = run_with_timeout(command, b"", std::time::Duration::from_secs(120));
        output
    };
    ok(&amplihack(&["install", "--host", "codex"]));
    let listed = CodexAppServer::start(&env).hooks(&env.project);
    // Codex's trust keys are `<file>:<event>:<group>:<handler>`: the user's first, ours after.
    let subagent: Vec<_> = listed
        .iter()
        .filter(|h| h.key.contains(":subagent_stop:"))
        .collect();
    assert_eq!(subagent.len(), 2, "{listed:#?}");
    assert!(
        subagent
            .iter()
            .any(|h| h.entry.to_string().contains("dispatch --host codex")),
        "{subagent:#?}"
    );
    let untrusted: Vec<_> = listed
        .iter()
        .filter(|h| h.trust_status != "trusted")
        .collect();
    assert!(untrusted.is_empty(), "{untrusted:#?}");
    assert!(user_key.ends_with(":subagent_stop:0:0"), "{user_key}");
    assert!(
        subagent[1].key.ends_with(":subagent_stop:1:0")
            && subagent[1]
                .entry
                .to_string()
                .contains("dispatch --host codex"),
        "{subagent:#?}"
    );
    ok(&amplihack(&[
        "uninstall",
        "--host",
        "codex",
        "--keep-binaries",
    ]));
    assert_eq!(env.read(&hooks_json), users);
}
