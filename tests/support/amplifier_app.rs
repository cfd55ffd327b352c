//! The real Amplifier app for end-to-end tests: the offline kit (`<repo>/../shared/amplifier-app`,
//! or `$AMPLIHACK_AMPLIFIER_APP_KIT`), installed into `tests/amplifier/app-venv` (git-ignored;
//! about a minute the first time, then idempotent), one turn at a time with the kit's `run.sh`
//! against the fake Messages API.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

use super::fake_anthropic::{FakeAnthropic, Turn};
use super::{TestEnv, repo_root, run_with_timeout, stderr, stdout};

/// The offline app kit, or why there is none (the test then prints `SKIPPED <why>`).
pub fn kit() -> Result<PathBuf, String> {
    let kit = std::env::var_os("AMPLIHACK_AMPLIFIER_APP_KIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/amplifier-app"));
    if kit.join("run.sh").is_file() && kit.join("install.sh").is_file() {
        Ok(kit)
    } else {
        Err(format!(
            "no Amplifier app kit at {} (set AMPLIHACK_AMPLIFIER_APP_KIT)",
            kit.display()
        ))
    }
}

/// The app's virtualenv, installed by the kit (idempotent).
/// One real app at a time, across every module of the test binary: the app's virtualenv is
/// shared (`install.sh` and the app itself install modules into it).
static ONE_APP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the app to this test until dropped. Take it before a [`crate::support::TestEnv`] (whose
/// share of the machine a speed test waits on: [`crate::support::alone`]).
pub fn one_app() -> std::sync::MutexGuard<'static, ()> {
    ONE_APP
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub fn app_venv(kit: &Path) -> PathBuf {
    let venv = repo_root().join("tests/amplifier/app-venv");
    let mut install = Command::new(kit.join("install.sh"));
    install.arg(&venv);
    let (output, _) = run_with_timeout(install, b"", Duration::from_secs(900));
    assert!(
        output.status.success(),
        "install.sh: {}{}",
        stdout(&output),
        stderr(&output)
    );
    venv
}

/// One turn of the real app in the test's project and home, with `orchestrator`.
pub fn app_turn(
    env: &TestEnv,
    kit: &Path,
    venv: &Path,
    api: &FakeAnthropic,
    orchestrator: &str,
    prompt: &str,
) -> Output {
    let mut run = env.command(&kit.join("run.sh"));
    run.arg(venv)
        .arg(&env.project)
        .arg(&env.home)
        .arg(prompt)
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("AMP_ORCHESTRATOR", orchestrator);
    // The app installs the module with `uv pip install -e`, which fetches its build backend:
    // the machine's certificate and proxy settings, as a user's shell has them.
    for name in [
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NO_PROXY",
        "https_proxy",
        "http_proxy",
        "no_proxy",
    ] {
        if let Some(value) = std::env::var_os(name) {
            run.env(name, value);
        }
    }
    let (output, took) = run_with_timeout(run, b"", Duration::from_secs(240));
    eprintln!(
        "app turn ({orchestrator}) took {:.1} s, exit {:?}",
        took.as_secs_f64(),
        output.status.code()
    );
    output
}

/// The model asking for the app's shell tool.
pub fn bash(command: &str) -> Turn {
    Turn::ToolUse {
        name: "bash".into(),
        input: json!({"command": command}),
    }
}

/// Every tool result in a request, as text.
pub fn tool_results(request: &Value) -> String {
    let mut found = String::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                found.push_str(&block["content"].to_string());
                found.push('\n');
            }
        }
    }
    found
}
