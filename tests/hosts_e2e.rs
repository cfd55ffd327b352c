//! One machine, many hosts, in the real Claude Code: removing amplihack from one host leaves
//! another guarded (the binaries stay while a registration names them).

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, stderr};

#[test]
fn removing_one_host_leaves_claude_code_guarded() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    std::fs::create_dir_all(env.home.join(".gemini")).expect("gemini installed");
    for host in ["claude", "gemini"] {
        let output = env.run_amplihack(&["install", "--host", host]);
        assert_eq!(output.status.code(), Some(0), "{host}: {}", stderr(&output));
    }
    let output = env.run_amplihack(&["uninstall", "--host", "gemini"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(env.deployed_hooks().is_file(), "Claude Code still runs it");

    let fake = FakeAnthropic::start(vec![
        Turn::bash("git commit --no-verify -m wip"),
        Turn::text("understood"),
    ]);
    let run = env.claude(&fake.url, "commit my work");
    let denials = run.result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(denials.len(), 1, "the commit is denied: {}", run.result);
    assert_eq!(denials[0]["tool_name"], "Bash");
}
