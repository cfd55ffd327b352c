//! A plugin's declared timeout is honoured as natively: a SessionStart handler that declares
//! `"timeout": 30` and takes 9 s before printing its context (`tests/fixtures/plugins/
//! slow-context`) is waited for by Claude Code, and the model is sent the context. Through
//! amplihack (`amplihack install` with the plugin in `~/.amplifier/hooks/`) the registration is
//! raised to hold the 30 s and amplihack-hooks' deadline follows, so the model is sent it too,
//! where amplihack's own 8 s deadline used to kill the handler.

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{self, TestEnv};

const CONTEXT: &str = "slow-context: the deploy window is Tuesday 14:00";

fn plugin() -> std::path::PathBuf {
    support::repo_root().join("tests/fixtures/plugins/slow-context")
}

fn model_saw(fake: &FakeAnthropic) -> bool {
    fake.main_requests()
        .iter()
        .any(|r| r.to_string().contains(CONTEXT))
}

#[test]
fn a_slow_session_start_within_its_declared_timeout_reaches_the_model_as_natively() {
    let native_env = TestEnv::new();
    let dir = native_env.root().join("plugins/slow-context");
    support::copy_dir(&plugin(), &dir);
    let fake = FakeAnthropic::start(vec![Turn::text("done")]);
    let dir_arg = dir.to_string_lossy().into_owned();
    native_env.claude_with(&fake.url, &["-p", "go", "--plugin-dir", &dir_arg], &[]);
    assert!(model_saw(&fake), "natively the model is sent the context");

    let env = TestEnv::new();
    support::copy_dir(&plugin(), &env.user_hooks_dir().join("slow-context"));
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    let fake = FakeAnthropic::start(vec![Turn::text("done")]);
    let run = env.claude_with(&fake.url, &["-p", "go"], &[]);
    assert!(
        model_saw(&fake),
        "under amplihack the model is sent the context too\n{}",
        run.hook_complaints().join("\n")
    );
}
