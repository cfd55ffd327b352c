//! Each of the six other agent CLIs runs a turn offline against the fake model server and fires a
//! command hook registered by hand: the infrastructure the per-host end-to-end tests build on.

use crate::support;
use crate::support::TestEnv;
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{
    Cli, codex_trust_all, logged_payloads, logging_hook, register_command_hook, run_turn,
    run_turn_with,
};

/// One turn where the model runs `echo hello-from-<cli>`: the pre-tool hook saw the call, with
/// the host's own tool name, and the command's output reached the model.
fn pre_tool_hook_fires(cli: Cli) {
    let env = TestEnv::new();
    let log = env.root().join("pre-tool.jsonl");
    let hook = logging_hook(&env, "pre-tool", &log);
    register_command_hook(&env, cli, cli.pre_tool_event(), &hook);
    let marker = format!("hello-from-{}", cli.name());
    let models = FakeModels::start(vec![Turn::shell(&format!("echo {marker}"))]);

    // Codex skips hooks nobody trusted; its own tests trust them through `codex app-server`
    // (codex_trust_all), this one bypasses the check.
    let args: &[&str] = match cli {
        Cli::Codex => &["--dangerously-bypass-hook-trust"],
        _ => &[],
    };
    let run = run_turn_with(
        &env,
        cli,
        &models,
        "Say hello through the shell.",
        args,
        &[],
    );
    eprintln!("{}: one turn took {:?}", cli.name(), run.elapsed);

    assert!(
        run.output.status.success(),
        "{}\nrequests:\n{}",
        run.describe(),
        models.describe()
    );
    let payloads = logged_payloads(&log);
    let call = payloads
        .iter()
        .find(|p| p.to_string().contains(&format!("echo {marker}")))
        .unwrap_or_else(|| {
            panic!(
                "the hook never saw the call: {payloads:#?}\n{}",
                run.describe()
            )
        });
    assert_eq!(call["tool_name"], cli.shell_tool_in_hooks(), "{call:#}");
    assert!(
        models.tool_result_contains(&marker),
        "the tool's output never reached the model: {:#?}\n{}",
        models.tool_results(),
        run.describe()
    );
    assert!(models.count_in_last(&marker) >= 1);
}

#[test]
fn codex_runs_a_turn_and_fires_pre_tool_use() {
    pre_tool_hook_fires(Cli::Codex);
}

#[test]
fn copilot_runs_a_turn_and_fires_pre_tool_use() {
    pre_tool_hook_fires(Cli::Copilot);
}

#[test]
fn qwen_runs_a_turn_and_fires_pre_tool_use() {
    pre_tool_hook_fires(Cli::Qwen);
}

#[test]
fn droid_runs_a_turn_and_fires_pre_tool_use() {
    pre_tool_hook_fires(Cli::Droid);
}

#[test]
fn gemini_runs_a_turn_and_fires_before_tool() {
    pre_tool_hook_fires(Cli::Gemini);
}

#[test]
fn opencode_runs_a_turn_and_fires_tool_execute_before() {
    pre_tool_hook_fires(Cli::Opencode);
}

/// The way an installer must trust its Codex hooks: `codex app-server`'s `hooks/list` and
/// `config/batchWrite`. Untrusted, a plain `codex exec` skips the hook silently; trusted that
/// way, it runs without the bypass flag.
#[test]
fn codex_runs_a_hook_trusted_through_the_app_server() {
    let env = TestEnv::new();
    let log = env.root().join("pre-tool.jsonl");
    let hook = logging_hook(&env, "pre-tool", &log);
    register_command_hook(&env, Cli::Codex, "PreToolUse", &hook);

    let models = FakeModels::start(vec![Turn::shell("echo untrusted")]);
    let run = run_turn(&env, Cli::Codex, &models, "Say hello.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        models.tool_result_contains("untrusted"),
        "{}",
        run.describe()
    );
    assert_eq!(
        logged_payloads(&log),
        Vec::<serde_json::Value>::new(),
        "an untrusted hook ran"
    );

    let hooks = codex_trust_all(&env);
    assert_eq!(hooks.len(), 1, "{hooks:#?}");
    assert_ne!(hooks[0].trust_status, "trusted", "{hooks:#?}");
    let config = env.read(&support::host_clis::codex_home(&env).join("config.toml"));
    assert!(config.contains(&hooks[0].current_hash), "{config}");

    let models = FakeModels::start(vec![Turn::shell("echo trusted")]);
    let run = run_turn(&env, Cli::Codex, &models, "Say hello.");
    assert!(run.output.status.success(), "{}", run.describe());
    let payloads = logged_payloads(&log);
    assert_eq!(payloads.len(), 1, "{payloads:#?}\n{}", run.describe());
    assert_eq!(payloads[0]["tool_input"]["command"], "echo trusted");
    assert!(models.tool_result_contains("trusted"));
}
