//! A repository's handlers run confined (issue 35): a trusted project plugin's handler cannot
//! append to `~/.bashrc`, read `~/.ssh/id_*` or connect to a loopback port, unless its plugin
//! declares that; the user's own plugins run as before. Real processes, a scratch home.

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stderr, stdout};

/// Whether this kernel confines at all (Landlock); the tests say SKIPPED where it does not.
fn landlock() -> bool {
    matches!(
        amplihack_platform::confine::support(),
        amplihack_platform::confine::Support::Full { .. }
    )
}

fn event(env: &TestEnv, session: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": session, "cwd": env.project, "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"})
}

/// The probe every plugin here runs: what it could do, one `name:yes|no` a line, into `out`.
fn probe(out: &std::path::Path, port: u16) -> String {
    format!(
        r#"{{ if echo x >> "$HOME/.bashrc"; then echo bashrc:yes; else echo bashrc:no; fi
if cat "$HOME/.ssh/id_rsa" >/dev/null; then echo ssh:yes; else echo ssh:no; fi
if python3 -c 'import socket; socket.create_connection(("127.0.0.1", {port}), 2)'; then echo net:yes; else echo net:no; fi
if echo t > "$TMPDIR/probe" && [ "$TMPDIR" != "${{HOME}}" ]; then echo tmp:yes; else echo tmp:no; fi
if cat /etc/passwd >/dev/null; then echo system:yes; else echo system:no; fi
if ls "$HOME/.local/state/amplihack" >/dev/null; then echo state:yes; else echo state:no; fi
if echo d > "$CLAUDE_PLUGIN_DATA/d"; then echo data:yes; else echo data:no; fi
}} > '{}' 2>/dev/null"#,
        out.display()
    )
}

#[test]
fn a_project_plugins_handler_reads_writes_and_connects_only_as_declared() {
    if !landlock() {
        println!("SKIPPED this kernel has no Landlock (ABI 6 or later)");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("port").port();
    // level, declaration, what it could do
    let cases: &[(&str, Option<Value>, &str)] = &[
        (
            "project",
            None,
            "bashrc:no ssh:no net:no tmp:yes system:yes state:no data:yes",
        ),
        (
            "project",
            Some(
                json!({"network": {"connect": [port]}, "read": ["~/.ssh/id_rsa"], "write": ["~/.bashrc"]}),
            ),
            "bashrc:yes ssh:yes net:yes tmp:yes system:yes state:no data:yes",
        ),
        (
            "project",
            Some(json!({"network": true})),
            "bashrc:no ssh:no net:yes tmp:yes system:yes state:no data:yes",
        ),
        (
            "user",
            None,
            "bashrc:yes ssh:yes net:yes tmp:yes system:yes state:yes data:yes",
        ),
    ];
    for (level, declared, want) in cases {
        let env = TestEnv::new();
        env.write(&env.home.join(".bashrc"), "# mine\n");
        env.write(&env.home.join(".ssh/id_rsa"), "PRIVATE KEY\n");
        let out = env.project.join("probe.txt");
        let mut config = one_group("PreToolUse", None, vec![command(&probe(&out, port))]);
        if let Some(declared) = declared {
            config["confinement"] = declared.clone();
        }
        let dir = if *level == "project" {
            env.project_hooks_dir()
        } else {
            env.user_hooks_dir()
        };
        env.plugin(&dir, "probe", &config);
        // The probe reads paths under `$HOME`, a variable trust does not follow: the user
        // accepts that part by name (issue 35's `--accept`).
        if *level == "project" {
            let trust = env.run_amplihack(&["hooks", "trust", "--accept", "probe"]);
            assert!(trust.status.success(), "{}", stderr(&trust));
        }
        let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, "s1"), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let got = env
            .read(&out)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(&got, want, "{level} {declared:?}: {}", stdout(&output));
        let bashrc = env.read(&env.home.join(".bashrc"));
        assert_eq!(
            bashrc.starts_with("# mine\n") && bashrc.len() > "# mine\n".len(),
            want.contains("bashrc:yes"),
            "{bashrc}"
        );
    }
}

/// A confined handler's answer still reaches the host, and its private temporary directory is
/// gone when it ends; a changed declaration is not trusted.
#[test]
fn a_confined_handler_answers_and_its_declaration_is_pinned_by_trust() {
    if !landlock() {
        println!("SKIPPED this kernel has no Landlock (ABI 6 or later)");
        return;
    }
    let env = TestEnv::new();
    env.write(&env.home.join(".ssh/id_rsa"), "PRIVATE KEY\n");
    let answer = r#"key=$(cat "$HOME/.ssh/id_rsa" 2>/dev/null); echo "{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"additionalContext\": \"checked by the repo in $TMPDIR/ key:$key\"}}""#;
    let file = env.plugin(
        &env.project_hooks_dir(),
        "repo",
        &one_group("PreToolUse", None, vec![command(answer)]),
    );
    let trust = env.run_amplihack(&["hooks", "trust", "--accept", "repo"]);
    assert!(trust.status.success(), "{}", stderr(&trust));
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, "s1"), &[]);
    let text = stdout(&output);
    assert!(text.contains("checked by the repo"), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    let reply: Value = serde_json::from_str(&text).expect("json");
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    let tmp = context
        .split_once(" in ")
        .and_then(|(_, rest)| rest.split_once("/ "))
        .map(|(tmp, _)| tmp)
        .unwrap_or_default();
    assert!(tmp.contains("amplihack-handler-"), "{context}");
    assert!(!std::path::Path::new(tmp).exists(), "removed: {tmp}");

    // Declaring more after trust changes the trusted file: it does not run until trusted again.
    let mut config: Value = serde_json::from_str(&env.read(&file)).expect("json");
    config["confinement"] = json!({"read": ["~/.ssh/id_rsa"]});
    env.write(&file, &config.to_string());
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, "s2"), &[]);
    assert!(
        !stdout(&output).contains("PRIVATE KEY"),
        "{}",
        stdout(&output)
    );
    assert!(!stdout(&output).contains("checked by the repo"));
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(
        stdout(&trust).contains("declares: read ~/.ssh/id_rsa"),
        "{}",
        stdout(&trust)
    );
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, "s3"), &[]);
    assert!(
        stdout(&output).contains("PRIVATE KEY"),
        "{}",
        stdout(&output)
    );
    let list = env.run_amplihack(&["hooks", "list"]);
    assert!(
        stdout(&list).contains("confined, and declares: read ~/.ssh/id_rsa"),
        "{}",
        stdout(&list)
    );
}

/// Handlers that run in the background stay confined: an `async` one (started by a collector)
/// and one that declares itself async on its first line (handed to a collector running).
#[test]
fn background_handlers_stay_confined() {
    if !landlock() {
        println!("SKIPPED this kernel has no Landlock (ABI 6 or later)");
        return;
    }
    let env = TestEnv::new();
    env.write(&env.home.join(".ssh/id_rsa"), "PRIVATE KEY\n");
    let probe = |name: &str| {
        format!(
            r#"if cat "$HOME/.ssh/id_rsa" >/dev/null 2>&1; then echo ssh:yes; else echo ssh:no; fi > '{}'"#,
            env.project.join(name).display()
        )
    };
    let mut started = command(&probe("async.txt"));
    started["async"] = json!(true);
    let declared = command(&format!(
        "echo '{{\"async\": true}}'; sleep 0.2; {}",
        probe("declared.txt")
    ));
    env.plugin(
        &env.project_hooks_dir(),
        "later",
        &one_group("PreToolUse", None, vec![started, declared]),
    );
    let trust = env.run_amplihack(&["hooks", "trust", "--accept", "later"]);
    assert!(trust.status.success(), "{}", stderr(&trust));
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event(&env, "s1"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for name in ["async.txt", "declared.txt"] {
        let file = env.project.join(name);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !std::fs::read_to_string(&file).is_ok_and(|t| t.ends_with('\n'))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(env.read(&file).trim(), "ssh:no", "{name}");
    }
}
