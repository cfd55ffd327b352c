//! A plugin's `bin/` on the Bash tool's PATH: at SessionStart amplihack appends, to the host's env
//! file (`CLAUDE_ENV_FILE`), one `PATH` line per plugin it runs that has a `bin/` directory, in
//! plugin order and before what the plugins' own SessionStart handlers export (as Claude Code
//! has the entries in the shell before it sources env files). A project's plugins only once
//! trusted; nothing on any other event. Compared with the real Claude Code in
//! `tests/plugin_bin_native_e2e.rs`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support;
use support::{TestEnv, command, one_group, stderr};

fn session_start(session: &str) -> Value {
    json!({"hook_event_name": "SessionStart", "session_id": session, "source": "startup"})
}

/// `export PATH="$PATH":<bin>`, the bin quoted when it needs it (a space).
fn line(bin: &Path) -> String {
    let text = bin.display().to_string();
    if text.contains(' ') {
        format!("export PATH=\"$PATH\":\"{text}\"")
    } else {
        format!("export PATH=\"$PATH\":{text}")
    }
}

#[test]
fn session_start_puts_each_run_plugins_bin_on_the_bash_tools_path() {
    let env = TestEnv::new();
    let user = env.user_hooks_dir();
    let pre = || one_group("PreToolUse", None, vec![command("true")]);
    // (plugin, what its `bin` is)
    let plugins: [(&str, &str); 5] = [
        ("aa-tools", "dir"),
        ("bb-none", "none"),
        ("cc-file", "file"),
        ("dd space", "dir"),
        ("ee'quote", "dir"),
    ];
    for (name, bin) in plugins {
        env.plugin(&user, name, &pre());
        let bin_path = user.join(name).join("bin");
        match bin {
            "dir" => std::fs::create_dir_all(&bin_path).expect("mkdir"),
            "file" => std::fs::write(&bin_path, "x").expect("write"),
            _ => {}
        }
    }
    // One plugin exports at SessionStart: its line comes after the PATH entries.
    env.plugin(
        &user,
        "ff-exports",
        &one_group(
            "SessionStart",
            None,
            vec![command("echo 'export EXPORTED=1' >> \"$CLAUDE_ENV_FILE\"")],
        ),
    );
    env.plugin(&env.project_hooks_dir(), "repo-tools", &pre());
    let repo_bin = env.project_hooks_dir().join("repo-tools/bin");
    std::fs::create_dir_all(&repo_bin).expect("mkdir");

    let user_lines = [
        line(&user.join("aa-tools/bin")),
        line(&user.join("dd space/bin")),
    ];
    let host_file = env.root().join("claude-env.sh");
    let host = host_file.display().to_string();
    let with_file = [("CLAUDE_ENV_FILE", host.as_str())];
    let untrusted = format!("{}\n{}\nexport EXPORTED=1\n", user_lines[0], user_lines[1]);
    let (started, _) = env.run_hooks(&["session-start"], &session_start("sess-1"), &with_file);
    assert!(started.status.success(), "{}", stderr(&started));
    assert_eq!(
        env.read(&host_file),
        untrusted,
        "an untrusted project's bin/ never reaches PATH; a bin file, no bin and a path Claude Code refuses (a quote) give nothing"
    );
    // Another event adds nothing.
    let pre_event = json!({"hook_event_name": "PreToolUse", "session_id": "sess-1", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    env.run_hooks(&["pre-tool-use"], &pre_event, &with_file);
    assert_eq!(env.read(&host_file), untrusted);

    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", stderr(&trust));
    env.run_hooks(&["session-start"], &session_start("sess-1"), &with_file);
    assert_eq!(
        env.read(&host_file),
        format!("{untrusted}{}\nexport EXPORTED=1\n", line(&repo_bin)),
        "trusted: the project's entry, after the user's; a second SessionStart repeats no entry"
    );
}
