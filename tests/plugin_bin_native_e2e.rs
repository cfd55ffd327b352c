//! A plugin's `bin/` on the Bash tool's PATH, in the real Claude Code: natively (`--plugin-dir`)
//! Claude Code appends each loaded plugin's `bin/` directory to the PATH of its Bash tool; through
//! amplihack (the same plugins copied into `~/.amplifier/hooks/`) amplihack's SessionStart writes
//! the same entries to the host's env file. The model's Bash call of the plugins' commands gives
//! the same output both ways, and the same PATH after the one Claude Code was started with: the
//! entries in plugin order, then what a plugin's SessionStart handler exported. Plugins: a `bin/`
//! directory, none, a `bin` file, a `bin` link to a directory, a directory name with a space;
//! and, through amplihack only, an untrusted project plugin with a `bin/`, which must not appear.
//! What Claude Code was seen doing is in `docs/src/plugins/your-hooks.md`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support;
use crate::support::TestEnv;
use crate::support::fake_anthropic::{FakeAnthropic, Turn};

/// (directory, what its `bin` is, the command in it)
const PLUGINS: [(&str, &str, &str); 5] = [
    ("aa-tools", "dir", "aa-tool"),
    ("bb-nobin", "none", ""),
    ("cc-binfile", "file", ""),
    ("dd tools", "dir", "dd-tool"),
    ("ee-link", "link", "ee-tool"),
];

fn write_exec(file: &Path, text: &str) {
    std::fs::write(file, text).expect("write");
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A plugin as Claude Code loads it (`.claude-plugin/plugin.json`, `hooks/hooks.json`: a
/// SessionStart handler; `aa-tools`' also exports a PATH entry of its own).
fn make_plugin(dir: &Path, bin: &str, tool: &str) {
    let name: String = dir
        .file_name()
        .expect("name")
        .to_string_lossy()
        .replace(' ', "-");
    std::fs::create_dir_all(dir.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(dir.join("hooks")).expect("mkdir");
    std::fs::write(
        dir.join(".claude-plugin/plugin.json"),
        format!(r#"{{"name": "{name}", "version": "1.0.0"}}"#),
    )
    .expect("write");
    let start = if name == "aa-tools" {
        r#"echo 'export PATH="$PATH:/opt/aa-exported"' >> "$CLAUDE_ENV_FILE""#
    } else {
        "true"
    };
    let hooks = serde_json::json!({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": start}]}
    ]}});
    std::fs::write(dir.join("hooks/hooks.json"), hooks.to_string()).expect("write");
    let tool_dir = match bin {
        "dir" => dir.join("bin"),
        "link" => {
            std::os::unix::fs::symlink("tools", dir.join("bin")).expect("link");
            dir.join("tools")
        }
        "file" => {
            std::fs::write(dir.join("bin"), "not a directory\n").expect("write");
            return;
        }
        _ => return,
    };
    std::fs::create_dir_all(&tool_dir).expect("mkdir");
    write_exec(
        &tool_dir.join(tool),
        &format!("#!/bin/sh\necho \"{tool} ran with $# args\"\n"),
    );
}

fn script() -> Vec<Turn> {
    vec![
        Turn::bash(
            "echo \"PATH=$PATH\"; aa-tool; dd-tool one; ee-tool; command -v repo-tool || echo no repo-tool",
        ),
        Turn::text("done"),
    ]
}

/// What the Bash call gave back: its output lines, the PATH line cut to what follows `base` (the
/// PATH Claude Code was started with), the plugins' directory named `<plugins>`.
fn bash_output(fake: &FakeAnthropic, base: &str, plugins: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    for request in fake.main_requests() {
        for message in request["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    texts.push(match &block["content"] {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                }
            }
        }
    }
    let text = texts.first().cloned().unwrap_or_default();
    let plugins = format!("{}/", plugins.display());
    text.lines()
        .map(|line| match line.strip_prefix("PATH=") {
            Some(path) => match path.strip_prefix(base) {
                Some(tail) => format!(
                    "PATH=<started with>{}",
                    tail.replace(&plugins, "<plugins>/")
                ),
                None => format!("PATH= (not starting with the started one) {path}"),
            },
            None => line.to_string(),
        })
        .collect()
}

#[test]
fn a_plugins_bin_is_on_the_bash_tools_path_as_natively() {
    // Natively: Claude Code loads each plugin with --plugin-dir, in this order.
    let native_env = TestEnv::new();
    let native_plugins = native_env.root().join("plugins");
    let mut args: Vec<String> = vec!["-p".into(), "go".into()];
    for (name, bin, tool) in PLUGINS {
        let dir = native_plugins.join(name);
        make_plugin(&dir, bin, tool);
        args.push("--plugin-dir".into());
        args.push(dir.to_string_lossy().into_owned());
    }
    let native_fake = FakeAnthropic::start(script());
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let native_run = native_env.claude_with(&native_fake.url, &arg_refs, &[]);
    let base = native_env.path().to_string_lossy().into_owned();
    let native = bash_output(&native_fake, &base, &native_plugins);

    // Through amplihack: the same plugins in the user's hooks directory, and a project plugin
    // with a `bin/` that nobody trusted.
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    for (name, bin, tool) in PLUGINS {
        make_plugin(&env.user_hooks_dir().join(name), bin, tool);
    }
    make_plugin(
        &env.project_hooks_dir().join("repo-tools"),
        "dir",
        "repo-tool",
    );
    let fake = FakeAnthropic::start(script());
    let run = env.claude_with(&fake.url, &["-p", "go"], &[]);
    let base = env.path().to_string_lossy().into_owned();
    let forwarded = bash_output(&fake, &base, &env.user_hooks_dir());

    // The native run is the reference: what Claude Code 2.1.332 was seen doing.
    assert_eq!(
        native,
        [
            "PATH=<started with>:<plugins>/aa-tools/bin:<plugins>/dd tools/bin:<plugins>/ee-link/bin:/opt/aa-exported",
            "aa-tool ran with 0 args",
            "dd-tool ran with 1 args",
            "ee-tool ran with 0 args",
            "no repo-tool",
        ],
        "natively: {}",
        native_run.debug_log
    );
    assert_eq!(
        forwarded, native,
        "through amplihack (left) and natively (right)"
    );
    assert!(
        run.hook_complaints().is_empty(),
        "{}",
        run.hook_complaints().join("\n")
    );
}
