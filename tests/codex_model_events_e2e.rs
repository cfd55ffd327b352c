//! Codex's own events, in the real Codex 0.169.0 and 0.171.0: before and after each model request
//! (`PreModelRequest`, `PostModelRequest`, which Claude Code does not have). A user's plugin in
//! `~/.amplifier/hooks/` that names them gets them under Codex once `amplihack install --host
//! codex` registered them (a `dispatch --host codex` entry each, trusted as amplihack's own), with
//! Codex's payload: the model, and after the request its status and token usage.

use std::time::Duration;

use serde_json::Value;

use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{Cli, codex_home, each_codex, run_turn};
use crate::support::{self, TestEnv};

#[test]
fn a_plugin_gets_codexs_model_request_events() {
    each_codex(|version| {
        let env = TestEnv::new();
        let log = env.root().join("model-events.jsonl");
        let record = support::command(&format!("cat >> '{0}'; echo >> '{0}'", log.display()));
        env.plugin(
            &env.user_hooks_dir(),
            "model-watch",
            &serde_json::json!({"hooks": {
                "PreModelRequest": [{"hooks": [record.clone()]}],
                "PostModelRequest": [{"hooks": [record]}],
            }}),
        );
        let mut install = env.amplihack(&["install", "--host", "codex"]);
        install
            .env(Cli::Codex.bin_var(), Cli::Codex.bin())
            .env("CODEX_HOME", codex_home(&env));
        let (installed, _) = support::run_with_timeout(install, b"", Duration::from_secs(120));
        assert!(
            installed.status.success(),
            "{version}: {}",
            support::stderr(&installed)
        );
        let hooks = env.read(&codex_home(&env).join("hooks.json"));
        for event in ["PreModelRequest", "PostModelRequest"] {
            assert!(
                hooks.contains(&format!("\"{event}\"")),
                "{version}: {hooks}"
            );
        }

        let models = FakeModels::start(vec![Turn::shell("echo hi")]);
        let run = run_turn(&env, Cli::Codex, &models, "Echo.");
        assert!(run.output.status.success(), "{version}: {}", run.describe());
        let events: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("a payload"))
            .collect();
        let named = |name: &str| {
            events
                .iter()
                .filter(|e| e["hook_event_name"] == name)
                .collect::<Vec<_>>()
        };
        // One model request per model turn: the shell call's, and the one after it.
        let (pre, post) = (named("PreModelRequest"), named("PostModelRequest"));
        assert_eq!(
            (pre.len(), post.len()),
            (2, 2),
            "{version}: {events:#?}\n{}",
            run.describe()
        );
        assert!(
            pre.iter().all(|e| e["model"] == "fake-model"),
            "{version}: {pre:#?}"
        );
        assert!(
            post.iter()
                .all(|e| e["status"] == "completed" && e["token_usage"].is_object()),
            "{version}: {post:#?}"
        );
    });
}
