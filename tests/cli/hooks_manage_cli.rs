//! `amplihack hooks …`: managing the user's plugins.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stderr, stdout};

fn json_out(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

#[test]
fn list_shows_each_plugin_with_its_state() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "mine",
        &one_group("PreToolUse", Some("Bash"), vec![command("true")]),
    );
    env.plugin(&env.user_hooks_dir(), "broken", &json!({"hooks": []}));
    env.plugin(
        &env.project_hooks_dir(),
        "theirs",
        &one_group("Stop", None, vec![command("true")]),
    );
    let report = json_out(&env.run_amplihack(&["hooks", "list", "--json"]));
    let states: Vec<(String, String, String)> = report["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .map(|p| {
            (
                p["level"].as_str().unwrap_or_default().into(),
                p["name"].as_str().unwrap_or_default().into(),
                p["state"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("user".into(), "broken".into(), "invalid".into()),
            ("user".into(), "mine".into(), "active".into()),
            ("project".into(), "theirs".into(), "untrusted".into())
        ]
    );
    let text = stdout(&env.run_amplihack(&["hooks", "list"]));
    assert!(text.contains("PreToolUse(Bash)"), "{text}");
}

#[test]
fn validate_reports_file_field_and_fix_and_exits_1() {
    let env = TestEnv::new();
    env.plugin(&env.user_hooks_dir(), "ok", &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}, {"type": "prompt", "prompt": "?"}]}]}}));
    let bad = env.plugin(
        &env.user_hooks_dir(),
        "bad",
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}),
    );
    let output = env.run_amplihack(&["hooks", "validate"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains(&format!("invalid: {}: `hooks.Stop[0].hooks[0].command`: is missing or empty; fix: give the shell command to run", bad.display())), "{text}");
    assert!(
        text.contains("type `prompt` is not run by amplihack"),
        "{text}"
    );
    std::fs::remove_dir_all(bad.parent().expect("dir")).expect("rm");
    assert!(env.run_amplihack(&["hooks", "validate"]).status.success());
}

#[test]
fn test_runs_the_pipeline_and_answers_as_the_binary_would_for_the_chosen_host() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "guard",
        &one_group(
            "PreToolUse",
            Some("Write"),
            vec![command("echo 'no writes' >&2; exit 2")],
        ),
    );
    env.plugin(
        &env.user_hooks_dir(),
        "note",
        &one_group(
            "PreToolUse",
            None,
            vec![command("echo '{\"contextInjection\": \"noted\"}'")],
        ),
    );
    let args = |host: &'static str| {
        vec![
            "hooks",
            "test",
            "PreToolUse",
            "--tool",
            "Write",
            "--input",
            "{\"file_path\": \"/x\"}",
            "--host",
            host,
            "--json",
        ]
    };
    let claude = json_out(&env.run_amplihack(&args("claude")));
    assert_eq!(claude["runs"].as_array().map(Vec::len), Some(2), "{claude}");
    assert_eq!(
        claude["reply"]["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    assert!(
        claude["reply"]["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .is_some_and(|c| c.contains("noted"))
    );
    let amplifier = json_out(&env.run_amplihack(&args("amplifier")));
    assert_eq!(amplifier["reply"]["decision"], "block", "{amplifier}");

    // The built-in guard answers through the same pipeline as the binary: same bytes.
    let input = "{\"command\":\"git push --no-verify\"}";
    for host in ["claude", "amplifier"] {
        let shown = json_out(&env.run_amplihack(&[
            "hooks",
            "test",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            input,
            "--host",
            host,
            "--json",
        ]));
        assert_eq!(shown["builtins"], json!(["bash-guard"]), "{shown}");
        let payload = shown["payload"].clone();
        let (binary, _) = env.run_hooks(&["--host", host, "pre-tool-use"], &payload, &[]);
        let answered: Value = serde_json::from_slice(&binary.stdout).expect("binary reply");
        assert_eq!(shown["reply"], answered, "{host}");
        assert!(answered.to_string().contains("--no-verify"), "{answered}");
    }
    let text = stdout(&env.run_amplihack(&["hooks", "test", "PreToolUse", "--tool", "Bash"]));
    assert!(
        text.contains("1 handler(s) ran")
            && text.contains("built-ins: bash-guard")
            && text.contains("reply to Claude Code:"),
        "{text}"
    );
    let text = stdout(&env.run_amplihack(&["hooks", "test", "Stop", "--host", "amplifier"]));
    assert!(text.contains("reply to Amplifier:"), "{text}");
}

/// `hooks test` runs the binary's whole pipeline, normalisation first: under Amplifier a plugin
/// sees the tool as Claude Code names it (`Bash`, not `bash`), as it does under the binary.
#[test]
fn test_under_amplifier_shows_plugins_the_tool_as_claude_code_names_it() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "seer",
        &one_group(
            "PreToolUse",
            None,
            vec![command(
                r#"tool=$(sed -n 's/.*"tool_name": *"\([^"]*\)".*/\1/p'); echo "{\"contextInjection\": \"saw $tool\"}""#,
            )],
        ),
    );
    let shown = json_out(&env.run_amplihack(&[
        "hooks",
        "test",
        "PreToolUse",
        "--tool",
        "bash",
        "--input",
        "{\"command\": \"ls\"}",
        "--host",
        "amplifier",
        "--json",
    ]));
    assert_eq!(shown["payload"]["tool_name"], "bash", "{shown}");
    assert!(shown["reply"].to_string().contains("saw Bash"), "{shown}");
    let (binary, _) = env.run_hooks(
        &["--host", "amplifier", "pre-tool-use"],
        &shown["payload"],
        &[],
    );
    let answered: Value = serde_json::from_slice(&binary.stdout).expect("binary reply");
    assert_eq!(shown["reply"], answered);
}

#[test]
fn disable_and_enable_a_plugin_without_touching_its_files() {
    let env = TestEnv::new();
    let file = env.plugin(
        &env.user_hooks_dir(),
        "noisy",
        &one_group("PreToolUse", None, vec![command(&env.mark("ran", "noisy"))]),
    );
    let before = env.read(&file);
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    assert!(
        env.run_amplihack(&["hooks", "disable", "noisy"])
            .status
            .success()
    );
    env.run_hooks(&["pre-tool-use"], &payload, &[]);
    assert!(env.marks("ran").is_empty());
    assert_eq!(env.read(&file), before);
    assert!(
        env.run_amplihack(&["hooks", "enable", "noisy"])
            .status
            .success()
    );
    env.run_hooks(&["pre-tool-use"], &payload, &[]);
    assert_eq!(env.marks("ran"), ["noisy"]);
    let missing = env.run_amplihack(&["hooks", "disable", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("no hook plugin named `nope`"));
}

#[test]
fn install_from_a_directory_or_a_git_repository() {
    let env = TestEnv::new();
    // A Claude Code plugin layout: hooks/hooks.json and a script under the plugin root.
    let source = env.root().join("src/guard-plugin");
    env.script(&source.join("scripts/guard.sh"), "exit 0");
    env.write(
        &source.join("hooks/hooks.json"),
        &one_group(
            "PreToolUse",
            None,
            vec![command("${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh")],
        )
        .to_string(),
    );
    let output = env.run_amplihack(&["hooks", "install", &source.display().to_string()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        env.user_hooks_dir()
            .join("guard-plugin/hooks/hooks.json")
            .is_file()
    );
    assert!(
        env.user_hooks_dir()
            .join("guard-plugin/scripts/guard.sh")
            .is_file()
    );
    let again = env.run_amplihack(&["hooks", "install", &source.display().to_string()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already exists; pass --force"));

    // From git, into the project, which then stays trusted (it had no other plugins).
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&source)
            .env("HOME", &env.home)
            .output()
            .expect("git");
        assert!(out.status.success(), "{}", stderr(&out));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "plugin",
    ]);
    let url = format!("file://{}", source.display());
    let output = env.run_amplihack(&[
        "hooks", "install", &url, "--level", "project", "--name", "from-git",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        env.project_hooks_dir()
            .join("from-git/hooks/hooks.json")
            .is_file()
    );
    assert!(!env.project_hooks_dir().join("from-git/.git").exists());
    let list = json_out(&env.run_amplihack(&["hooks", "list", "--json"]));
    assert!(
        list["plugins"]
            .as_array()
            .expect("plugins")
            .iter()
            .any(|p| p["name"] == "from-git" && p["state"] == "active"),
        "{list}"
    );

    // Invalid plugins are refused.
    let bad = env.root().join("src/bad");
    env.write(&bad.join("hooks.json"), "{\"hooks\": 1}");
    let output = env.run_amplihack(&["hooks", "install", &bad.display().to_string()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("`hooks`: is a number, not an object"),
        "{}",
        stderr(&output)
    );
}

/// Every plugin layout the engine runs installs: hooks inline in `.claude-plugin/plugin.json`,
/// and a manifest naming its hooks file; a manifest naming a file outside the plugin, or declaring
/// no hooks, is refused. `hooks list` names a prompt handler in one line.
#[test]
fn install_takes_every_layout_the_engine_runs_and_list_names_handlers_in_one_line() {
    let env = TestEnv::new();
    let long_prompt = format!(
        "You review shell commands for safety.\n{}",
        "Answer ok or not ok with a reason. ".repeat(100)
    );
    let inline = env.root().join("src/inline-plugin");
    env.write(
        &inline.join(".claude-plugin/plugin.json"),
        &json!({"name": "inline-plugin", "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}],
            "SessionStart": [{"hooks": [{"type": "prompt", "prompt": long_prompt}]}]
        }})
        .to_string(),
    );
    let pointing = env.root().join("src/pointing-plugin");
    env.write(
        &pointing.join(".claude-plugin/plugin.json"),
        &json!({"name": "pointing-plugin", "hooks": "./config/hooks.json"}).to_string(),
    );
    env.write(
        &pointing.join("config/hooks.json"),
        &one_group("Stop", None, vec![command("exit 0")]).to_string(),
    );
    for (source, name) in [(&inline, "inline-plugin"), (&pointing, "pointing-plugin")] {
        let output = env.run_amplihack(&["hooks", "install", &source.display().to_string()]);
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert!(
            env.user_hooks_dir()
                .join(name)
                .join(".claude-plugin/plugin.json")
                .is_file()
        );
    }
    let list = env.run_amplihack(&["hooks", "list"]);
    let text = stdout(&list);
    assert!(
        text.contains("inline-plugin") && text.contains("PreToolUse(Bash), SessionStart"),
        "{text}"
    );
    assert!(
        text.contains("pointing-plugin") && text.contains("Stop"),
        "{text}"
    );
    assert!(
        text.contains("prompt `You review shell commands for safety. …` handler on SessionStart"),
        "{text}"
    );
    assert!(
        text.lines().all(|line| line.chars().count() < 400),
        "no handler's name runs over lines: {text}"
    );

    let outside = env.root().join("src/outside-plugin");
    env.write(&env.root().join("src/elsewhere.json"), "{\"hooks\": {}}");
    env.write(
        &outside.join(".claude-plugin/plugin.json"),
        &json!({"name": "outside", "hooks": "../elsewhere.json"}).to_string(),
    );
    let empty = env.root().join("src/skills-only");
    env.write(
        &empty.join(".claude-plugin/plugin.json"),
        &json!({"name": "skills-only"}).to_string(),
    );
    for (source, says) in [
        (&outside, "a file outside the plugin"),
        (&empty, "declares no hooks"),
    ] {
        let output = env.run_amplihack(&["hooks", "install", &source.display().to_string()]);
        assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
        assert!(stderr(&output).contains(says), "{}", stderr(&output));
    }
}

#[test]
fn import_claude_moves_the_users_hooks_and_leaves_amplihacks() {
    let env = TestEnv::new();
    assert!(
        env.run_amplihack(&["install", "--host", "claude"])
            .status
            .success()
    );
    let mut settings = env.read_json(&env.claude_settings_path());
    settings["hooks"]["PreToolUse"].as_array_mut().expect("array").push(json!({"matcher": "Bash", "hooks": [{"type": "command", "command": env.mark("ran", "imported")}]}));
    settings["hooks"]["Notification"] =
        json!([{"hooks": [{"type": "command", "command": "notify-send hi"}]}]);
    env.write(
        &env.claude_settings_path(),
        &serde_json::to_string_pretty(&settings).expect("json"),
    );

    let output = env.run_amplihack(&["hooks", "import-claude"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("moved 2 matcher group(s)"),
        "{}",
        stdout(&output)
    );
    let after = env.read_json(&env.claude_settings_path());
    let remaining = support::hook_commands(&after);
    assert!(
        remaining.iter().all(|(_, c)| c.contains("amplihack-hooks")),
        "{remaining:?}"
    );
    // amplihack's eight, and `dispatch` on Notification: the imported Notification hook needs an
    // event amplihack's table does not register, so it is registered for it.
    assert_eq!(remaining.len(), 9, "{remaining:?}");
    assert!(
        remaining
            .iter()
            .any(|(event, c)| event == "Notification" && c.ends_with("amplihack-hooks\" dispatch")),
        "{remaining:?}"
    );
    let plugin = env.read_json(&env.user_hooks_dir().join("claude-import/hooks.json"));
    assert_eq!(plugin["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    assert_eq!(
        plugin["hooks"]["Notification"][0]["hooks"][0]["command"],
        "notify-send hi"
    );
    // The imported hook now runs through amplihack, once.
    env.run_hooks(&["pre-tool-use"], &json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}), &[]);
    assert_eq!(env.marks("ran"), ["imported"]);
}

/// amplihack's own bridge registration in `.amplifier/hooks/amplihack/` is not a user plugin: it
/// is never listed, and never reported as an untrusted project plugin.
#[test]
fn amplihacks_own_registration_is_not_a_plugin() {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--scope", "project", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    assert!(
        env.project_hooks_dir()
            .join("amplihack/hooks.json")
            .is_file()
    );
    let listed = json_out(&env.run_amplihack(&["hooks", "list", "--json"]));
    assert_eq!(listed["plugins"], json!([]), "{listed}");
    let (output, _) = env.run_hooks(
        &["session-start"],
        &json!({"hook_event_name": "SessionStart", "session_id": "own", "cwd": env.project, "source": "startup"}),
        &[],
    );
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains("not trusted"), "{text}");
    assert!(
        !stderr(&output).contains("not trusted"),
        "{}",
        stderr(&output)
    );
}

/// `amplihack hooks install` cannot be turned against the user: whatever the name or source, it
/// writes only the plugin's own directory, a `-` source never reaches git as an option, and links
/// to files outside the plugin are left out.
#[test]
fn plugin_install_stays_inside_its_destination() {
    let env = TestEnv::new();
    let source = env.root().join("src plugin");
    env.write(
        &source.join("hooks.json"),
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    let secret = env.root().join("secret.txt");
    env.write(&secret, "outside");
    std::os::unix::fs::symlink(&secret, source.join("leak.txt")).expect("link");
    std::os::unix::fs::symlink("hooks.json", source.join("inner-link.json")).expect("link");
    let keep = env.user_hooks_dir().join("keep/hooks.json");
    env.write(&keep, &json!({"hooks": {}}).to_string());
    let src = source.display().to_string();
    for name in [
        ".",
        "..",
        "",
        "a/b",
        "../escape",
        "/abs",
        "amplihack",
        "-rf",
    ] {
        let flag = format!("--name={name}");
        let output = env.run_amplihack(&["hooks", "install", &src, &flag, "--force"]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "--name {name:?}: {}",
            stdout(&output)
        );
        assert!(
            stderr(&output).contains("cannot be a plugin name"),
            "{name:?}: {}",
            stderr(&output)
        );
    }
    assert!(keep.is_file(), "nothing of the level was touched");
    // A source that contains the destination, or lies inside it.
    let home = env.home.display().to_string();
    let inside = env.run_amplihack(&["hooks", "install", &home, "--name", "x"]);
    assert_eq!(inside.status.code(), Some(1));
    // A source that begins with `-` is a path or a URL, never an option.
    let dashed = env.run_amplihack(&[
        "hooks",
        "install",
        "--",
        "--upload-pack=touch /tmp/amplihack-pwned",
    ]);
    assert_eq!(dashed.status.code(), Some(1));
    assert!(!Path::new("/tmp/amplihack-pwned").exists());
    // Links to outside the plugin are left out; links inside are kept.
    let ok = env.run_amplihack(&["hooks", "install", &src, "--name", "good"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stdout(&ok).contains("left out"), "{}", stdout(&ok));
    let installed = env.user_hooks_dir().join("good");
    assert!(installed.join("hooks.json").is_file());
    assert!(
        installed.join("leak.txt").symlink_metadata().is_err(),
        "outside link left out"
    );
    assert!(
        installed.join("inner-link.json").is_file(),
        "inside link kept"
    );
    let again = env.run_amplihack(&[
        "hooks",
        "install",
        &installed.display().to_string(),
        "--name",
        "good",
        "--force",
    ]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "replacing a plugin with itself is refused"
    );
    assert!(
        installed.join("hooks.json").is_file(),
        "and the plugin is still there"
    );
}

/// The untrusted-plugins message names the directory and the exact command, and that command
/// works: for a nested project whose hooks are found in a parent of the session's directory.
#[test]
fn the_untrusted_message_gives_a_command_that_works() {
    let env = TestEnv::new();
    let nested = env.project.join("apps/web app");
    let deeper = nested.join("src/deep");
    std::fs::create_dir_all(&deeper).expect("mkdir");
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    env.plugin(
        &nested.join(".amplifier/hooks"),
        "nested",
        &one_group("Stop", None, vec![command(&env.mark("ran", "nested"))]),
    );
    let stop = json!({"hook_event_name": "Stop", "session_id": "t1", "cwd": deeper, "stop_hook_active": false});
    let run = |session: &str| {
        let mut payload = stop.clone();
        payload["session_id"] = json!(session);
        let mut command = env.hooks(&["stop"]);
        command.current_dir(&deeper);
        support::run_with_timeout(
            command,
            payload.to_string().as_bytes(),
            std::time::Duration::from_secs(30),
        )
        .0
    };
    let first = run("t1");
    let answer: Value = serde_json::from_slice(&first.stdout).expect("a message");
    let message = answer["systemMessage"].as_str().expect("told").to_string();
    assert!(message.contains(&nested.display().to_string()), "{message}");
    let command_line = message
        .split("run: ")
        .nth(1)
        .expect("a command")
        .trim()
        .to_string();
    assert!(env.marks("ran").is_empty());
    // The command, exactly as given, from another directory.
    let mut shell = env.command(Path::new("/bin/sh"));
    shell
        .args(["-c", &command_line])
        .current_dir(env.root())
        .env(
            "PATH",
            format!(
                "{}:{}",
                support::amplihack_bin().parent().expect("dir").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        );
    let (trusted, _) = support::run_with_timeout(shell, b"", std::time::Duration::from_secs(30));
    assert!(
        trusted.status.success(),
        "{command_line}: {}",
        stderr(&trusted)
    );
    run("t2");
    assert_eq!(env.marks("ran"), ["nested"], "the plugin runs once trusted");
}
