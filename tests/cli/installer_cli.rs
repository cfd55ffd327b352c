//! `amplihack install | uninstall | doctor | status`, run as a user runs them, in a temporary
//! home whose bin directory has a space in its path.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use support::{TestEnv, hook_commands, stderr, stdout};

const CANONICAL: [(&str, &str, Option<&str>, Option<u64>); 8] = [
    ("SessionStart", "session-start", None, Some(10)),
    ("Stop", "stop", None, Some(120)),
    ("PreToolUse", "pre-tool-use", Some("*"), None),
    ("PostToolUse", "post-tool-use", Some("*"), None),
    (
        "UserPromptSubmit",
        "workflow-classification-reminder",
        None,
        Some(5),
    ),
    ("UserPromptSubmit", "user-prompt-submit", None, Some(10)),
    ("PreCompact", "pre-compact", None, Some(30)),
    ("SessionEnd", "session-end", None, Some(5)),
];

/// Under Amplifier, one row per event: the bridge stops at the first hook that injects context.
const NOT_UNDER_AMPLIFIER: &str = "workflow-classification-reminder";

/// amplihack's command for `sub`: Claude Code's entries `exec` the binary (one process less).
fn ours(env: &TestEnv, sub: &str, amplifier: bool) -> String {
    format!(
        "{}\"{}\" {sub}{}",
        if amplifier { "" } else { "exec " },
        env.deployed_hooks().display(),
        if amplifier { " --host amplifier" } else { "" }
    )
}

fn assert_success(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "failed: {}\n{}",
        stdout(output),
        stderr(output)
    );
}

/// Our wrappers, exactly as the canonical table says, in order, first on each event.
fn assert_canonical(env: &TestEnv, settings: &Value, amplifier: bool) {
    let table: Vec<_> = CANONICAL
        .iter()
        .copied()
        .filter(|c| !amplifier || c.1 != NOT_UNDER_AMPLIFIER)
        .collect();
    for &(event, sub, matcher, timeout) in &table {
        let groups = settings["hooks"][event]
            .as_array()
            .unwrap_or_else(|| panic!("{event} missing: {settings}"));
        let position = table
            .iter()
            .filter(|c| c.0 == event)
            .position(|c| c.1 == sub)
            .expect("in table");
        let group = &groups[position];
        let mut expected_handler = json!({"type": "command", "command": ours(env, sub, amplifier)});
        if let Some(t) = timeout {
            expected_handler["timeout"] = json!(t);
        }
        let mut expected = json!({"hooks": [expected_handler]});
        if let Some(m) = matcher {
            expected = json!({"matcher": m, "hooks": expected["hooks"]});
        }
        assert_eq!(group, &expected, "{event}/{sub}");
    }
    let ours_count = hook_commands(settings)
        .iter()
        .filter(|(_, c)| c.contains("amplihack-hooks"))
        .count();
    assert_eq!(ours_count, table.len(), "exactly one set: {settings}");
}

#[test]
fn fresh_install_deploys_binaries_and_registers_the_canonical_table_for_both_hosts() {
    let env = TestEnv::new();
    let output = env.run_amplihack(&["install"]);
    assert_success(&output);
    for name in ["amplihack-hooks", "amplihack"] {
        let path = env.bin_dir().join(name);
        let mode = std::fs::metadata(&path)
            .expect("deployed")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755, "{name}");
    }
    let settings = env.read_json(&env.claude_settings_path());
    assert_canonical(&env, &settings, false);
    let event_order: Vec<&String> = settings["hooks"]
        .as_object()
        .expect("hooks")
        .keys()
        .collect();
    assert_eq!(
        event_order,
        [
            "SessionStart",
            "Stop",
            "PreToolUse",
            "PostToolUse",
            "UserPromptSubmit",
            "PreCompact",
            "SessionEnd"
        ]
    );
    // Amplifier: the app bundle listed under bundle.app; no user-level bridge file, which no
    // host reads.
    assert!(
        !env.home
            .join(".amplifier/hooks/amplihack/hooks.json")
            .exists()
    );
    assert!(!env.home.join(".amplifier/hooks").exists());
    let yaml = env.read(&env.home.join(".amplifier/settings.yaml"));
    assert!(
        yaml.contains(".local/share/amplihack/amplifier-bundle.yaml\""),
        "{yaml}"
    );
    assert!(
        stdout(&output).contains("is not on your PATH"),
        "{}",
        stdout(&output)
    );
    // The registered command really runs through a shell, space and all.
    let registered = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .expect("command")
        .to_string();
    let run = env
        .command(std::path::Path::new("/bin/sh"))
        .arg("-c")
        .arg(format!("{registered} < /dev/null"))
        .output()
        .expect("sh");
    assert_eq!(
        run.status.code(),
        Some(1),
        "empty stdin is invalid input: {}",
        stderr(&run)
    );
    assert!(stderr(&run).contains("stdin is empty"));
}

/// `--plugin-events` is the managed scope's: elsewhere amplihack follows the plugins itself.
#[test]
fn plugin_events_outside_the_managed_scope_are_refused_before_anything_is_written() {
    let env = TestEnv::new();
    let output = env.run_amplihack(&["install", "--plugin-events", "SubagentStart"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--plugin-events is for --scope managed"),
        "{}",
        stderr(&output)
    );
    assert!(!env.claude_settings_path().exists());
}

#[test]
fn second_install_is_byte_identical_and_makes_no_backup() {
    let env = TestEnv::new();
    env.write(&env.claude_settings_path(), "{\n  \"model\": \"opus\"\n}\n");
    assert_success(&env.run_amplihack(&["install"]));
    let first = env.read(&env.claude_settings_path());
    let backups = env.backups_of(&env.claude_settings_path());
    assert_eq!(backups.len(), 1);
    let output = env.run_amplihack(&["install"]);
    assert_success(&output);
    assert_eq!(env.read(&env.claude_settings_path()), first);
    assert_eq!(env.backups_of(&env.claude_settings_path()), backups);
    assert!(stdout(&output).contains("unchanged"));
}

#[test]
fn everything_of_the_users_is_kept_in_place() {
    let env = TestEnv::new();
    let original = r#"{
    "permissions": {"allow": ["Bash(ls)"], "defaultMode": "default"},
    "zeta": 1,
    "hooks": {
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-one"}]},
            {"matcher": "*", "hooks": [
                {"type": "command", "command": "/old/place/amplihack-hooks pre-tool-use"},
                {"type": "command", "command": "shares-a-wrapper-with-ours"}
            ]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "guard-two"}]}
        ]
    },
    "alpha": {"nested": [1, 2, 3]}
}
"#;
    env.write(&env.claude_settings_path(), original);
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let text = env.read(&env.claude_settings_path());
    let settings: Value = serde_json::from_str(&text).expect("valid");
    assert_canonical(&env, &settings, false);
    let keys: Vec<&String> = settings.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        ["permissions", "zeta", "hooks", "alpha"],
        "top-level order kept"
    );
    assert_eq!(
        settings["permissions"],
        json!({"allow": ["Bash(ls)"], "defaultMode": "default"})
    );
    // Untouched members keep their exact text.
    for line in [
        r#""permissions": {"allow": ["Bash(ls)"], "defaultMode": "default"},"#,
        r#""alpha": {"nested": [1, 2, 3]}"#,
        r#"{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-one"}]},"#,
    ] {
        assert!(text.contains(line), "lost formatting of {line}:\n{text}");
    }
    let users: Vec<String> = hook_commands(&settings)
        .into_iter()
        .filter(|(_, c)| !c.contains("amplihack-hooks"))
        .map(|(e, c)| format!("{e}:{c}"))
        .collect();
    assert_eq!(
        users,
        [
            "Notification:notify-send hi",
            "PreToolUse:guard-one",
            "PreToolUse:shares-a-wrapper-with-ours",
            "PreToolUse:guard-two"
        ],
        "the user's hooks, in their order"
    );
    // The shared wrapper lost only our handler.
    assert_eq!(
        settings["hooks"]["PreToolUse"][2],
        json!({"matcher": "*", "hooks": [{"type": "command", "command": "shares-a-wrapper-with-ours"}]})
    );
}

#[test]
fn reinstall_after_a_move_or_an_upgrade_repairs_paths_order_and_duplicates() {
    let env = TestEnv::new();
    let legacy = json!({"hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "mine"}]},
            {"hooks": [{"type": "command", "command": "\"/gone/bin/amplihack-hooks\" user-prompt-submit", "timeout": 10}]},
            {"hooks": [{"type": "command", "command": "/gone/bin/amplihack-hooks workflow-classification-reminder", "timeout": 5}]}
        ],
        "PreToolUse": [
            {"matcher": "*", "hooks": [{"type": "command", "command": "python3 ~/.claude/tools/amplihack/hooks/pre_tool_use.py"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "/other/target/debug/amplihack-hooks pre-tool-use"}]}
        ],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "/gone/bin/amplihack-hooks session-stop-event", "timeout": 30}]}]
    }});
    env.write(
        &env.claude_settings_path(),
        &serde_json::to_string_pretty(&legacy).expect("json"),
    );
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let settings = env.read_json(&env.claude_settings_path());
    assert_canonical(&env, &settings, false);
    assert_eq!(
        settings["hooks"]["UserPromptSubmit"][2],
        json!({"hooks": [{"type": "command", "command": "mine"}]})
    );
    assert_eq!(
        settings["hooks"]["SessionEnd"].as_array().map(Vec::len),
        Some(1),
        "the legacy session-stop-event entry is replaced by session-end: {settings}"
    );

    // The binaries move: re-running with the new bin dir repoints every entry.
    let moved = env.root().join("elsewhere");
    assert_success(&env.run_amplihack(&["install", "--bin-dir", &moved.display().to_string()]));
    let commands = hook_commands(&env.read_json(&env.claude_settings_path()));
    let ours: Vec<&(String, String)> = commands
        .iter()
        .filter(|(_, c)| c.contains("amplihack-hooks"))
        .collect();
    assert_eq!(ours.len(), CANONICAL.len());
    assert!(
        ours.iter()
            .all(|(_, c)| c.starts_with(&format!("exec {}/amplihack-hooks ", moved.display()))),
        "{ours:?}"
    );
}

#[test]
fn unparseable_or_misshapen_files_are_refused_untouched() {
    let cases = [
        (
            "{\n  \"model\": \"opus\",\n  \"hooks\": {\n}\n,}",
            "settings.json:5:2: not valid JSON",
        ),
        (
            "{\n  \"a\": 1 // comment\n}",
            "settings.json:2:10: not valid JSON",
        ),
        ("[1, 2]", "the top level is an array, not an object"),
        (
            "{\"hooks\": []}",
            "field `hooks` is an array, not an object",
        ),
        (
            "{\"hooks\": {\"PreToolUse\": {\"matcher\": \"*\"}}}",
            "field `hooks.PreToolUse` is an object, not an array",
        ),
    ];
    for (contents, message) in cases {
        let env = TestEnv::new();
        env.write(&env.claude_settings_path(), contents);
        let output = env.run_amplihack(&["install"]);
        assert_eq!(output.status.code(), Some(1), "{contents}");
        assert!(
            stderr(&output).contains(message),
            "{contents}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(&env.claude_settings_path().display().to_string()),
            "names the path"
        );
        assert_eq!(
            env.read(&env.claude_settings_path()),
            contents,
            "file touched"
        );
        assert!(env.backups_of(&env.claude_settings_path()).is_empty());
        assert!(
            !env.home
                .join(".amplifier/hooks/amplihack/hooks.json")
                .exists(),
            "nothing written when one file is refused"
        );
    }
}

#[test]
fn a_symlinked_settings_file_is_edited_at_its_target_and_stays_a_link_with_our_files_beside_the_link()
 {
    let env = TestEnv::new();
    let dotfiles = env.root().join("dotfiles/claude-settings.json");
    env.write(&dotfiles, "{\"model\": \"sonnet\"}\n");
    std::fs::set_permissions(&dotfiles, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::create_dir_all(env.home.join(".claude")).expect("mkdir");
    std::os::unix::fs::symlink(&dotfiles, env.claude_settings_path()).expect("symlink");
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    assert!(
        std::fs::symlink_metadata(env.claude_settings_path())
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    let target = env.read_json(&dotfiles);
    assert_canonical(&env, &target, false);
    assert_eq!(target["model"], "sonnet");
    assert_eq!(
        std::fs::metadata(&dotfiles)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777,
        0o600,
        "mode kept"
    );
    // The backup and the lock sidecar go beside the link, in the user's directory; the
    // directory the link points into (a dotfiles repository) gets nothing of ours.
    assert_eq!(
        env.backups_of(&env.claude_settings_path()).len(),
        1,
        "backup beside the link"
    );
    let dotfiles_dir: Vec<_> = std::fs::read_dir(dotfiles.parent().expect("dir"))
        .expect("dotfiles")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dotfiles_dir, ["claude-settings.json"]);
}

#[test]
fn backups_are_private_and_only_the_last_five_are_kept() {
    let env = TestEnv::new();
    for round in 0..7 {
        env.write(
            &env.claude_settings_path(),
            &format!("{{\"round\": {round}}}"),
        );
        assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    }
    let backups = env.backups_of(&env.claude_settings_path());
    assert_eq!(backups.len(), 5, "{backups:?}");
    for backup in &backups {
        assert_eq!(
            std::fs::metadata(backup)
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
    }
    assert_eq!(env.read_json(&backups[4]), json!({"round": 6}));
}

#[test]
fn claude_config_dir_is_honoured() {
    let env = TestEnv::new();
    let config = env.root().join("claude-config");
    let mut command = env.amplihack(&["install", "--host", "claude"]);
    command.env("CLAUDE_CONFIG_DIR", &config);
    let (output, _) = support::run_with_timeout(command, b"", std::time::Duration::from_secs(30));
    assert_success(&output);
    assert_canonical(&env, &env.read_json(&config.join("settings.json")), false);
    assert!(!env.claude_settings_path().exists());
}

#[test]
fn dry_run_changes_nothing_and_prints_a_json_patch_that_applies() {
    let env = TestEnv::new();
    env.write(&env.claude_settings_path(), "{\"model\": \"opus\"}");
    let output = env.run_amplihack(&["install", "--dry-run", "--json"]);
    assert_success(&output);
    assert_eq!(
        env.read(&env.claude_settings_path()),
        "{\"model\": \"opus\"}"
    );
    assert!(!env.bin_dir().exists(), "no binaries copied");
    let report: Value = serde_json::from_str(&stdout(&output)).expect("--json");
    let claude = report["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["host"] == "claude")
        .expect("claude file")
        .clone();
    let patch: json_patch::Patch =
        serde_json::from_value(claude["patch"].clone()).expect("RFC 6902 patch");
    let mut document = json!({"model": "opus"});
    json_patch::patch(&mut document, &patch).expect("patch applies");
    assert_canonical(&env, &document, false);
    assert!(
        claude["diff"]
            .as_str()
            .is_some_and(|d| d.contains("+    \"SessionStart\"")),
        "{}",
        claude["diff"]
    );

    // Short by default: one summary line per file; the patch and the diff behind --verbose.
    let human = stdout(&env.run_amplihack(&["install", "--dry-run"]));
    assert!(
        human.contains("would be updated") && human.contains("line(s) added"),
        "{human}"
    );
    assert!(!human.contains("JSON Patch (RFC 6902)"), "{human}");
    let verbose = stdout(&env.run_amplihack(&["install", "--dry-run", "--verbose"]));
    assert!(
        verbose.contains("JSON Patch (RFC 6902)") && verbose.contains("@@"),
        "{verbose}"
    );
}

#[test]
fn project_scope_writes_the_project_files_warns_about_tracked_paths_and_excludes_amplifiers() {
    let env = TestEnv::new();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&env.project)
            .env("HOME", &env.home)
            .output()
            .expect("git");
        assert!(status.status.success(), "git {args:?}: {}", stderr(&status));
    };
    git(&["init", "-q"]);
    env.write(&env.project.join(".claude/settings.json"), "{}\n");
    git(&["add", ".claude/settings.json"]);
    let output = env.run_amplihack(&["install", "--scope", "project"]);
    assert_success(&output);
    assert_canonical(
        &env,
        &env.read_json(&env.project.join(".claude/settings.json")),
        false,
    );
    assert_canonical(
        &env,
        &env.read_json(&env.project.join(".amplifier/hooks/amplihack/hooks.json")),
        true,
    );
    assert!(
        stdout(&output).contains("is tracked by git"),
        "{}",
        stdout(&output)
    );
    let exclude = env.read(&env.project.join(".git/info/exclude"));
    assert!(
        exclude.lines().any(|l| l == "/.amplifier/hooks/amplihack/"),
        "{exclude}"
    );
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&env.project)
        .output()
        .expect("git");
    // The bridge registration is excluded; the project's settings.yaml (the native module's
    // registration) is a settings file like .claude/settings.json.
    assert!(
        !stdout(&status).contains(".amplifier/hooks"),
        "{}",
        stdout(&status)
    );
    assert!(
        stdout(&status).contains(".amplifier/settings.yaml"),
        "{}",
        stdout(&status)
    );
    // Idempotent here too, exclude line included.
    assert_success(&env.run_amplihack(&["install", "--scope", "project"]));
    assert_eq!(env.read(&env.project.join(".git/info/exclude")), exclude);

    let local = env.run_amplihack(&["install", "--scope", "local", "--host", "claude"]);
    assert_success(&local);
    assert_canonical(
        &env,
        &env.read_json(&env.project.join(".claude/settings.local.json")),
        false,
    );
}

#[test]
fn uninstall_removes_exactly_what_install_added_from_every_scope() {
    let env = TestEnv::new();
    let user_original = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  }\n}\n";
    env.write(&env.claude_settings_path(), user_original);
    assert_success(&env.run_amplihack(&["install"]));
    assert_success(&env.run_amplihack(&["install", "--scope", "project"]));
    let output = env.run_amplihack(&["uninstall"]);
    assert_success(&output);
    assert_eq!(
        env.read_json(&env.claude_settings_path()),
        serde_json::from_str::<Value>(user_original).expect("json")
    );
    assert!(
        !env.project.join(".claude/settings.json").exists()
            || hook_commands(&env.read_json(&env.project.join(".claude/settings.json"))).is_empty()
    );
    assert!(
        !env.project.join(".claude").exists(),
        "the project settings file (and .claude/) install created are gone, not left as {{\"hooks\": {{}}}}"
    );
    assert!(!env.home.join(".amplifier/hooks/amplihack").exists());
    assert!(!env.project.join(".amplifier/hooks/amplihack").exists());
    assert!(!env.deployed_hooks().exists() && !env.bin_dir().join("amplihack").exists());
    // Nothing left to do the second time.
    assert_success(&env.run_amplihack(&["uninstall", "--keep-binaries"]));
}

/// A settings file with no `hooks` key comes back byte for byte, whatever the scope and the host:
/// the key install added goes with amplihack's entries. One that had an empty `hooks` keeps it.
#[test]
fn uninstall_gives_back_a_file_without_hooks_byte_for_byte() {
    for scope in ["user", "project", "local"] {
        for host in ["claude", "amplifier", "all"] {
            let env = TestEnv::new();
            let files = [
                (env.claude_settings_path(), "{\"model\":\"x\"}"),
                (
                    env.project.join(".claude/settings.json"),
                    "{\n  \"model\": \"y\"\n}\n",
                ),
                (
                    env.project.join(".claude/settings.local.json"),
                    "{\"permissions\": {}, \"hooks\": {}}",
                ),
                (
                    env.home.join(".amplifier/settings.yaml"),
                    "# mine\nconfig:\n  providers: []\n",
                ),
            ];
            for (path, text) in &files {
                env.write(path, text);
            }
            assert_success(&env.run_amplihack(&["install", "--scope", scope, "--host", host]));
            assert_success(&env.run_amplihack(&["uninstall"]));
            for (path, text) in &files {
                assert_eq!(&env.read(path), text, "{scope} {host}: {}", path.display());
            }
        }
    }
}

#[test]
fn uninstall_keep_binaries_and_single_scope() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install"]));
    assert_success(&env.run_amplihack(&["install", "--scope", "project"]));
    assert_success(&env.run_amplihack(&["uninstall", "--scope", "project", "--keep-binaries"]));
    assert!(env.deployed_hooks().exists());
    assert_canonical(&env, &env.read_json(&env.claude_settings_path()), false);
}

#[test]
fn doctor_finds_problems_names_fixes_and_repairs_them() {
    let env = TestEnv::new();
    let output = env.run_amplihack(&["doctor"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("not registered in any scope"),
        "{}",
        stdout(&output)
    );

    assert_success(&env.run_amplihack(&["install"]));
    let clean = env.run_amplihack(&["doctor"]);
    assert_success(&clean);
    assert!(
        stdout(&clean).contains("no problems found"),
        "{}",
        stdout(&clean)
    );

    // A second scope with the same commands is fine (Claude Code runs identical commands once).
    assert_success(&env.run_amplihack(&["install", "--scope", "project", "--host", "claude"]));
    assert_success(&env.run_amplihack(&["doctor"]));
    // A stale path and a duplicate: the user scope's commands now differ from the project's.
    let mut settings = env.read_json(&env.claude_settings_path());
    settings["hooks"]["Stop"][0]["hooks"][0]["command"] = json!("/moved/away/amplihack-hooks stop");
    let duplicate = settings["hooks"]["PreToolUse"][0].clone();
    settings["hooks"]["PreToolUse"]
        .as_array_mut()
        .expect("array")
        .push(duplicate);
    env.write(&env.claude_settings_path(), &settings.to_string());
    let output = env.run_amplihack(&["doctor", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("json");
    let messages: Vec<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["problem"] == true)
        .map(|f| f["message"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("points at /moved/away/amplihack-hooks")
                && m.contains("does not exist")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("PreToolUse → pre-tool-use is registered 2 times")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("registered in the user and project scopes")),
        "{messages:?}"
    );
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["problem"] == true)
            .all(|f| f["fix"].is_string())
    );

    let human = env.run_amplihack(&["doctor"]);
    assert!(
        stdout(&human)
            .lines()
            .any(|l| l.trim_start().starts_with("fix: amplihack")),
        "{}",
        stdout(&human)
    );

    assert_success(&env.run_amplihack(&["uninstall", "--scope", "project", "--keep-binaries"]));
    let fixed = env.run_amplihack(&["doctor", "--fix"]);
    assert_success(&fixed);
    assert_success(&env.run_amplihack(&["doctor"]));
    assert_canonical(&env, &env.read_json(&env.claude_settings_path()), false);
}

/// `doctor` says when the installed Claude Code is newer than the newest amplihack was tested with
/// (and which that is), as a note: not a problem, exit 0. The real pinned one gets no note.
#[test]
fn doctor_notes_a_claude_code_newer_than_the_newest_tested() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let newer = env.script(
        &env.root().join("claude-newer/claude"),
        "echo '2.1.999 (Claude Code)'",
    );
    let pinned = support::claude_bin();
    for (claude, noted) in [(newer, true), (pinned, false)] {
        let mut doctor = env.amplihack(&["doctor"]);
        doctor.env("AMPLIHACK_CLAUDE_BIN", &claude);
        let (output, _) =
            support::run_with_timeout(doctor, b"", std::time::Duration::from_secs(60));
        assert_success(&output);
        let said = stdout(&output);
        assert_eq!(
            said.contains(
                "note: Claude Code 2.1.999 is newer than the newest version amplihack was tested with (2.1.332)"
            ),
            noted,
            "{said}"
        );
        assert_eq!(said.contains("is newer than the newest"), noted, "{said}");
    }
}

#[test]
fn doctor_checks_the_binaries_themselves() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install"]));
    std::fs::set_permissions(env.deployed_hooks(), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    let output = env.run_amplihack(&["doctor"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("amplihack-hooks: not executable"),
        "{}",
        stdout(&output)
    );
    std::fs::write(
        env.deployed_hooks(),
        "#!/bin/sh\necho amplihack-hooks 0.0.1\n",
    )
    .expect("write");
    std::fs::set_permissions(env.deployed_hooks(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let output = env.run_amplihack(&["doctor"]);
    assert!(
        stdout(&output).contains("version 0.0.1, expected"),
        "{}",
        stdout(&output)
    );
    assert_success(&env.run_amplihack(&["doctor", "--fix"]));
    assert_success(&env.run_amplihack(&["doctor"]));
}

#[test]
fn every_command_speaks_json() {
    let env = TestEnv::new();
    for args in [
        &["install", "--json"][..],
        &["status", "--json"],
        &["doctor", "--json"],
        &["uninstall", "--json", "--keep-binaries"],
    ] {
        let output = env.run_amplihack(args);
        let value: Value = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&output)));
        assert_eq!(value["command"], args[0], "{args:?}");
    }
    env.write(&env.claude_settings_path(), "{oops");
    let output = env.run_amplihack(&["install", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let value: Value = serde_json::from_str(&stdout(&output)).expect("error as json");
    assert!(
        value["error"]
            .as_str()
            .is_some_and(|e| e.contains("settings.json:1:2"))
    );
}

#[test]
fn status_shows_what_is_installed() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install"]));
    let output = env.run_amplihack(&["status"]);
    assert_success(&output);
    let text = stdout(&output);
    assert!(
        text.contains(&format!("amplihack-hooks  {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(
        text.contains(&env.claude_settings_path().display().to_string()) && text.contains("ok"),
        "{text}"
    );
}

#[test]
fn concurrent_installs_end_with_one_valid_file_and_one_set_of_entries() {
    let env = TestEnv::new();
    env.write(&env.claude_settings_path(), "{\"keep\": true}");
    let children: Vec<_> = (0..8)
        .map(|_| {
            env.amplihack(&["install", "--host", "claude"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let settings = env.read_json(&env.claude_settings_path());
    assert_canonical(&env, &settings, false);
    assert_eq!(settings["keep"], true);
}

/// Kills installs at points spread over a whole install's duration (measured first, so the
/// spread holds on a loaded machine too), covering deploy, lock, backup, staging and rename: the
/// settings file is always valid, and always either the old or the new.
#[test]
fn an_install_killed_at_any_point_leaves_the_old_or_the_new_file() {
    let env = TestEnv::new();
    let old = "{\n  \"old\": true\n}\n";
    let reference = TestEnv::new();
    reference.write(&reference.claude_settings_path(), old);
    // The new file as a completed install writes it (paths differ only in the env root).
    assert_success(&reference.run_amplihack(&["install", "--host", "claude"]));
    let new_shape = reference.read_json(&reference.claude_settings_path());
    let started = std::time::Instant::now();
    env.write(&env.claude_settings_path(), old);
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let full = started.elapsed();
    let rounds = 40u32;
    let mut seen_new = 0;
    let mut seen_old = 0;
    for round in 0..rounds {
        env.write(&env.claude_settings_path(), old);
        let mut child = env
            .amplihack(&["install", "--host", "claude"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Evenly from 0 to 1.3 × a full install, in a scrambled order.
        let slot = (round * 17) % rounds;
        std::thread::sleep(full.mul_f64(1.3 * f64::from(slot) / f64::from(rounds)));
        let _ = child.kill();
        let _ = child.wait();
        let text = env.read(&env.claude_settings_path());
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("round {round}: torn file ({e}): {text}"));
        if text == old {
            seen_old += 1;
        } else {
            assert_eq!(
                hook_commands(&value).len(),
                hook_commands(&new_shape).len(),
                "round {round}: {text}"
            );
            assert_eq!(value["old"], true);
            seen_new += 1;
        }
    }
    // Both outcomes occurred, so the kills did land before and after the rename.
    assert!(
        seen_old > 0 && seen_new > 0,
        "old {seen_old}, new {seen_new} (full install took {full:?})"
    );
}

#[test]
fn a_held_lock_makes_install_wait_then_refuse_without_touching_the_file() {
    let env = TestEnv::new();
    env.write(&env.claude_settings_path(), "{\"mine\": true}");
    let lock_path = env.home.join(".claude/.settings.json.amplihack.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .expect("lock file");
    lock.lock().expect("hold the lock");
    let mut command = env.amplihack(&["install", "--host", "claude"]);
    command.env("AMPLIHACK_LOCK_TIMEOUT_MS", "300");
    let started = std::time::Instant::now();
    let (output, _) = support::run_with_timeout(command, b"", std::time::Duration::from_secs(30));
    assert_eq!(output.status.code(), Some(1));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(
        stderr(&output).contains("another amplihack has held the lock"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains(&lock_path.display().to_string()),
        "names the lock file"
    );
    assert_eq!(env.read(&env.claude_settings_path()), "{\"mine\": true}");
    lock.unlock().expect("unlock");
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
}

/// Re-running the deployed `amplihack` (as a user does from PATH) keeps its own files in place.
#[test]
fn the_deployed_amplihack_reinstalls_itself_in_place() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install"]));
    let before = env.read(&env.claude_settings_path());
    let mut command = env.command(&env.bin_dir().join("amplihack"));
    command
        .args(["install", "--json"])
        .env("AMPLIHACK_BIN_DIR", env.bin_dir());
    let (output, _) = support::run_with_timeout(command, b"", std::time::Duration::from_secs(30));
    assert_success(&output);
    let report: Value = serde_json::from_str(&stdout(&output)).expect("json");
    let actions: Vec<&str> = report["binaries"]["copies"]
        .as_array()
        .expect("copies")
        .iter()
        .filter_map(|c| c["action"].as_str())
        .collect();
    assert_eq!(actions, ["in place", "in place"]);
    assert_eq!(env.read(&env.claude_settings_path()), before);
}

/// A project registered once and deleted since is not recreated by `doctor --fix`: the record is
/// forgotten. State files (the manifest) get no backups; the user's settings do.
#[test]
fn doctor_forgets_registrations_of_deleted_projects_instead_of_recreating_them() {
    let env = TestEnv::new();
    let other = env.root().join("scratch-project");
    std::fs::create_dir_all(&other).expect("mkdir");
    assert_success(&env.run_amplihack(&["install"]));
    assert_success(&env.run_amplihack(&[
        "install",
        "--scope",
        "project",
        "--project",
        &other.display().to_string(),
    ]));
    std::fs::remove_dir_all(&other).expect("delete the project");
    let output = env.run_amplihack(&["doctor"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("no longer exists"),
        "{}",
        stdout(&output)
    );
    let fixed = env.run_amplihack(&["doctor", "--fix"]);
    assert_success(&fixed);
    assert!(!other.exists(), "the deleted project was recreated");
    assert_success(&env.run_amplihack(&["doctor"]));
    let state = env.home.join(".local/state/amplihack");
    assert!(
        env.backups_of(&state.join("install.json")).is_empty(),
        "no backups of amplihack's own state"
    );
}

/// The native Amplifier module's registration in a user's settings.yaml with comments and an
/// unusual layout: added exactly, byte-identical on re-install, removed exactly; YAML that does
/// not parse is refused with its line and column and nothing is changed.
#[test]
fn amplifier_settings_yaml_keeps_the_users_bytes() {
    let env = TestEnv::new();
    let yaml = env.home.join(".amplifier/settings.yaml");
    let original = "# my Amplifier settings\nbundle:\n  active: foundation  # keep\nmodules:\n    hooks:\n    - module: hooks-logging\n      config: {level: debug}\n\n# end\n";
    env.write(&yaml, original);
    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert_success(&install);
    let installed = env.read(&yaml);
    let bundle = env
        .home
        .join(".local/share/amplihack/amplifier-bundle.yaml");
    assert_eq!(
        installed,
        original.replace(
            "  active: foundation  # keep\n",
            &format!(
                "  active: foundation  # keep\n  app:  # added by amplihack\n    - \"file://{}\"\n",
                bundle.display()
            )
        ),
        "exactly one entry added under bundle.app"
    );
    assert!(
        !env.home.join(".amplifier/hooks").exists(),
        "no user-level bridge file: no host reads it"
    );
    let module = env.home.join(".local/share/amplihack/amplifier-module");
    assert!(
        module
            .join("amplifier_module_hooks_amplihack/__init__.py")
            .is_file()
    );
    let bundle_text = env.read(&bundle);
    assert!(
        bundle_text.contains("- module: hooks-amplihack")
            && bundle_text.contains(&format!("source: \"{}\"", module.display()))
            && bundle_text.contains(&format!("binary: \"{}\"", env.deployed_hooks().display())),
        "{bundle_text}"
    );
    // An Amplifier-only install: doctor checks Amplifier only, and is clean.
    let doctor = env.run_amplihack(&["doctor"]);
    assert_success(&doctor);
    assert!(
        stdout(&doctor).contains("amplihack's app bundle")
            && !stdout(&doctor).contains("Claude Code"),
        "{}",
        stdout(&doctor)
    );
    let manifest = env.read_json(&env.home.join(".local/state/amplihack/install.json"));
    assert_eq!(manifest["hosts"], serde_json::json!(["amplifier"]));

    assert_success(&env.run_amplihack(&["install", "--host", "amplifier"]));
    assert_eq!(env.read(&yaml), installed, "byte-identical re-install");

    assert_success(&env.run_amplihack(&["uninstall", "--host", "amplifier"]));
    assert_eq!(env.read(&yaml), original, "exact uninstall");
    assert!(
        !module.exists(),
        "the deployed module goes with the binaries"
    );

    let broken = "modules:\n  hooks:\n    - module: x\n   bad: [\n";
    env.write(&yaml, broken);
    let refused = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("settings.yaml: not valid YAML at line"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(env.read(&yaml), broken, "nothing changed");
    assert!(
        !env.deployed_hooks().exists(),
        "refused before deploying anything"
    );
}

/// Entries the user edited around our command (an environment prefix, `nice`, a wrapper) are
/// still ours: a re-install does not add a second copy, and uninstall removes them.
#[test]
fn entries_wrapped_by_the_user_are_still_recognised() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let path = env.claude_settings_path();
    let hooks = env.deployed_hooks().display().to_string();
    let text = env.read(&path);
    let wrapped = text
        .replacen(
            &format!("\\\"{hooks}\\\" stop"),
            &format!("AMPLIHACK_LOG_DIR=/tmp/x nice -n 5 \\\"{hooks}\\\" stop"),
            1,
        )
        .replacen(
            &format!("\\\"{hooks}\\\" pre-tool-use"),
            &format!("timeout 30 \\\"{hooks}\\\" pre-tool-use"),
            1,
        );
    assert_ne!(wrapped, text, "the test edited the entries");
    env.write(&path, &wrapped);
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let settings = env.read_json(&path);
    assert_canonical(&env, &settings, false);
    env.write(&path, &wrapped);
    assert_success(&env.run_amplihack(&["uninstall", "--host", "claude", "--keep-binaries"]));
    // install created the file, so it goes once amplihack's entries are gone.
    if path.exists() {
        let left = hook_commands(&env.read_json(&path));
        assert!(left.is_empty(), "{left:?}");
    }
}

/// JSON that readers disagree on is never silently rewritten, and a byte-order mark and CRLF line
/// endings are kept as they were.
#[test]
fn duplicate_keys_are_refused_and_bom_and_crlf_are_kept() {
    let env = TestEnv::new();
    let path = env.claude_settings_path();
    let duplicated = "{\n  \"model\": \"opus\",\n  \"model\": \"sonnet\"\n}\n";
    env.write(&path, duplicated);
    let refused = env.run_amplihack(&["install", "--host", "claude"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused)
            .contains("settings.json:3:3: not valid JSON: the key \"model\" appears twice"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(env.read(&path), duplicated, "nothing changed");

    let original = "\u{feff}{\r\n  \"model\": \"opus\",\r\n  \"hooks\": {\r\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]\r\n  }\r\n}\r\n";
    env.write(&path, original);
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let installed = env.read(&path);
    assert!(installed.starts_with('\u{feff}'), "BOM kept");
    assert_eq!(
        installed.matches('\n').count(),
        installed.matches("\r\n").count(),
        "every line still ends in CRLF: {installed:?}"
    );
    assert!(installed.contains("amplihack-hooks"));
    assert_success(&env.run_amplihack(&["uninstall", "--host", "claude", "--keep-binaries"]));
    assert_eq!(env.read(&path), original, "uninstall gives the bytes back");
}

/// Nothing amplihack creates is group- or world-writable, whatever the umask: install (both
/// hosts, user and project scope), hooks that write state, backups and transcripts, under
/// `umask 000`.
#[test]
fn nothing_created_is_group_or_world_writable_under_umask_000() {
    let env = TestEnv::new();
    let under_umask = |program: &std::path::Path, args: &[&str], stdin: &[u8]| {
        let mut command = env.command(std::path::Path::new("/bin/sh"));
        command
            .args(["-c", "umask 000; exec \"$@\"", "sh"])
            .arg(program)
            .args(args)
            .env("AMPLIHACK_BIN_DIR", env.bin_dir())
            .env("CLAUDE_PROJECT_DIR", &env.project);
        let (output, _) =
            support::run_with_timeout(command, stdin, std::time::Duration::from_secs(60));
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    };
    let amplihack = support::amplihack_bin();
    under_umask(&amplihack, &["install"], b"");
    under_umask(
        &amplihack,
        &["install", "--scope", "project", "--host", "claude"],
        b"",
    );
    under_umask(&amplihack, &["lock"], b"");
    under_umask(&amplihack, &["memory", "add", "remember this"], b"");
    let hooks = env.deployed_hooks();
    let transcript = env.root().join("t.jsonl");
    env.write(&transcript, "{}\n");
    for (sub, payload) in [
        (
            "session-start",
            json!({"hook_event_name": "SessionStart", "session_id": "u", "source": "startup", "cwd": env.project}),
        ),
        (
            "user-prompt-submit",
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "u", "prompt": "implement it", "cwd": env.project}),
        ),
        (
            "post-tool-use",
            json!({"hook_event_name": "PostToolUse", "session_id": "u", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}, "cwd": env.project}),
        ),
        (
            "pre-compact",
            json!({"hook_event_name": "PreCompact", "session_id": "u", "trigger": "auto", "transcript_path": transcript, "cwd": env.project}),
        ),
        (
            "stop",
            json!({"hook_event_name": "Stop", "session_id": "u", "stop_hook_active": false, "cwd": env.project}),
        ),
        (
            "session-end",
            json!({"hook_event_name": "SessionEnd", "session_id": "u", "reason": "other", "cwd": env.project}),
        ),
    ] {
        under_umask(&hooks, &[sub], payload.to_string().as_bytes());
    }
    let mut loose = Vec::new();
    let mut stack = vec![env.home.clone(), env.project.clone(), env.bin_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.permissions().mode() & 0o022 != 0 {
                loose.push(format!(
                    "{:o} {}",
                    meta.permissions().mode() & 0o777,
                    path.display()
                ));
            }
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    assert!(loose.is_empty(), "group- or world-writable: {loose:#?}");
}

/// Installing a second scope whose commands would differ from an existing one (another bin
/// directory) is fixed at install time: both end up with the same commands, which Claude Code
/// runs once.
#[test]
fn a_second_scope_that_would_run_hooks_twice_is_fixed_at_install() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let elsewhere = env.root().join("other bin");
    let output = env.run_amplihack(&[
        "install",
        "--scope",
        "project",
        "--host",
        "claude",
        "--bin-dir",
        &elsewhere.display().to_string(),
    ]);
    assert_success(&output);
    assert!(
        stdout(&output).contains("would run twice"),
        "{}",
        stdout(&output)
    );
    let user = hook_commands(&env.read_json(&env.claude_settings_path()));
    let project = hook_commands(&env.read_json(&env.project.join(".claude/settings.json")));
    assert_eq!(user, project, "identical commands in both scopes");
    assert!(
        user.iter().all(|(_, c)| c.contains("other bin")),
        "{user:?}"
    );
    let doctor = env.run_amplihack(&["doctor", "--bin-dir", &elsewhere.display().to_string()]);
    assert!(!stdout(&doctor).contains("times"), "{}", stdout(&doctor));
}

/// Uninstall leaves no trace of what install created: no settings file holding only
/// `{"hooks": {}}`, no empty directories, no lock sidecars, no `.git/info/exclude` lines, no
/// manifest with nothing in it, and no backup it reports and then deletes.
#[test]
fn uninstall_leaves_no_trace_of_what_install_created() {
    let env = TestEnv::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git");
    assert!(git.success());
    let listing = |root: &Path| -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                found.push(
                    path.strip_prefix(root)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
                if path.is_dir() && !path.ends_with(".git/objects") && !path.ends_with(".git/refs")
                {
                    stack.push(path);
                }
            }
        }
        found.sort();
        found
    };
    let home_before = listing(&env.home);
    let project_before = listing(&env.project);
    let exclude_before = env.read(&env.project.join(".git/info/exclude"));
    assert_success(&env.run_amplihack(&["install"]));
    assert_success(&env.run_amplihack(&["install", "--scope", "project"]));
    let uninstall = env.run_amplihack(&["uninstall"]);
    assert_success(&uninstall);
    for line in stdout(&uninstall).lines().filter(|l| l.contains("backup:")) {
        let backup = line
            .split("backup: ")
            .nth(1)
            .unwrap_or("")
            .trim_end_matches(')');
        assert!(
            Path::new(backup).exists(),
            "reported a backup it deleted: {line}"
        );
    }
    assert_eq!(listing(&env.project), project_before, "project");
    assert_eq!(
        env.read(&env.project.join(".git/info/exclude")),
        exclude_before
    );
    let home_after: Vec<String> = listing(&env.home)
        .into_iter()
        .filter(|p| !p.ends_with(".amplihack-backup-") && !p.contains(".amplihack-backup-"))
        .collect();
    assert_eq!(home_after, home_before, "home");
}

/// The default install says plainly what serves Amplifier and what does not; a project install
/// outside a git work tree says which directory it took; every command with a plan takes -y.
#[test]
fn install_says_what_it_did_and_did_not_do() {
    let env = TestEnv::new();
    let user = stdout(&env.run_amplihack(&["install", "--yes"]));
    assert!(
        user.contains(".amplifier/settings.yaml") && !user.contains("hooks.json  created"),
        "{user}"
    );
    let project = stdout(&env.run_amplihack(&["install", "--scope", "project", "-y"]));
    assert!(
        project.contains(&format!("the project is {}", env.project.display())),
        "{project}"
    );
    for args in [
        &["doctor", "--fix", "-y"][..],
        &["uninstall", "--dry-run", "-y"],
        &["update", "--check", "-y"],
        &["hooks", "install", "/nonexistent", "-y"],
    ] {
        // (Never the network: update asks a closed loopback port.)
        let mut command = env.amplihack(args);
        command.env("AMPLIHACK_RELEASES_URL", "http://127.0.0.1:9/releases");
        let (output, _) =
            support::run_with_timeout(command, b"", std::time::Duration::from_secs(60));
        assert!(
            !stderr(&output).contains("unexpected argument"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// What earlier versions wrote for Amplifier (a `modules.hooks` entry the app never mounts, a
/// user-level bridge file no host reads) is taken back by a re-install; `doctor` notices a
/// missing bundle file or entry and `--fix` restores them; uninstall then gives back the
/// user's bytes.
#[test]
fn amplifier_reinstall_replaces_what_earlier_versions_wrote_and_doctor_fix_restores() {
    let env = TestEnv::new();
    let yaml = env.home.join(".amplifier/settings.yaml");
    let original = "updates:\n  auto_prompt: false\n";
    let legacy = format!(
        "{original}modules:  # added by amplihack\n  hooks:  # added by amplihack\n    - module: hooks-amplihack\n      source: \"/old/amplifier-module\"\n      config:\n        binary: \"/old/amplihack-hooks\"\n"
    );
    env.write(&yaml, &legacy);
    let bridge = env.home.join(".amplifier/hooks/amplihack/hooks.json");
    env.write(
        &bridge,
        r#"{"description": "x", "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/old/amplihack-hooks --host amplifier session-start"}]}]}}"#,
    );
    let doctor = env.run_amplihack(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1), "{}", stdout(&doctor));
    assert_success(&env.run_amplihack(&["install", "--host", "amplifier"]));
    let installed = env.read(&yaml);
    assert!(!installed.contains("modules:"), "{installed}");
    assert!(
        installed.starts_with(original) && installed.contains("bundle:"),
        "{installed}"
    );
    assert!(!bridge.exists(), "the unread bridge file is taken back");
    assert_success(&env.run_amplihack(&["doctor"]));

    let bundle = env
        .home
        .join(".local/share/amplihack/amplifier-bundle.yaml");
    std::fs::remove_file(&bundle).expect("remove the bundle");
    env.write(&yaml, original);
    let doctor = env.run_amplihack(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
    assert!(
        stdout(&doctor).contains("not listed under bundle.app"),
        "{}",
        stdout(&doctor)
    );
    assert_success(&env.run_amplihack(&["doctor", "--fix"]));
    assert!(bundle.is_file());
    assert_eq!(
        env.read(&yaml),
        installed,
        "--fix writes what install writes"
    );
    assert_success(&env.run_amplihack(&["uninstall"]));
    assert_eq!(env.read(&yaml), original);
    assert!(!bundle.exists());
}

/// The Amplifier app processes no hook result at the end of a turn, so lock mode cannot hold an
/// Amplifier session: in an Amplifier-only install `amplihack lock` says so plainly.
#[test]
fn lock_says_plainly_that_it_cannot_hold_an_amplifier_only_install() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install", "--host", "amplifier"]));
    let lock = env.run_amplihack(&["lock"]);
    assert_success(&lock);
    assert!(
        stdout(&lock).contains("lock mode does not work there"),
        "{}",
        stdout(&lock)
    );
    let json_lock: Value =
        serde_json::from_str(&stdout(&env.run_amplihack(&["lock", "--json"]))).expect("json");
    assert_eq!(json_lock["effective"], false, "{json_lock}");
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let lock = env.run_amplihack(&["lock"]);
    assert!(
        !stdout(&lock).contains("does not work") && stdout(&lock).contains("keeps working"),
        "{}",
        stdout(&lock)
    );
    assert_success(&env.run_amplihack(&["unlock"]));
}

/// The app replaces `bundle.app` lists across settings files instead of joining them: doctor
/// says when a project's own list hides amplihack's user-level bundle, and how to fix it.
#[test]
fn doctor_says_when_a_projects_app_bundles_hide_amplihacks() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install", "--host", "amplifier"]));
    let status = stdout(&env.run_amplihack(&["status"]));
    assert!(status.contains(".amplifier/settings.yaml  ok"), "{status}");
    let project = env.project.join(".amplifier/settings.yaml");
    env.write(
        &project,
        "bundle:\n  app:\n    - git+https://example.com/team-bundle@main\n",
    );
    let doctor = env.run_amplihack(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
    assert!(
        stdout(&doctor).contains("replaces the other settings files' lists")
            && stdout(&doctor).contains("--scope project"),
        "{}",
        stdout(&doctor)
    );
    assert_success(&env.run_amplihack(&["install", "--host", "amplifier", "--scope", "project"]));
    assert_success(&env.run_amplihack(&["doctor"]));
    assert!(env.read(&project).starts_with(
        "bundle:\n  app:\n    - git+https://example.com/team-bundle@main\n    - \"file://"
    ));
}

/// `install` puts both binaries' man pages and completions where `man` and the shells look, and
/// `amplihack completions SHELL` prints the same scripts; uninstall takes them back.
#[test]
fn install_puts_man_pages_and_completions_where_shells_find_them() {
    let env = TestEnv::new();
    assert_success(&env.run_amplihack(&["install", "--host", "claude"]));
    let share = env.home.join(".local/share");
    for page in ["amplihack.1", "amplihack-hooks.1", "amplihack-install.1"] {
        let text = env.read(&share.join("man/man1").join(page));
        assert!(text.contains(".TH"), "{page}");
    }
    let bash = share.join("bash-completion/completions/amplihack");
    for file in [
        bash.clone(),
        share.join("bash-completion/completions/amplihack-hooks"),
        share.join("zsh/site-functions/_amplihack"),
        share.join("fish/vendor_completions.d/amplihack-hooks.fish"),
    ] {
        assert!(file.is_file(), "{}", file.display());
    }
    let printed = env.run_amplihack(&["completions", "bash"]);
    assert_success(&printed);
    assert_eq!(printed.stdout, std::fs::read(&bash).expect("read"));
    // bash loads it: `complete -p` names the function, and it offers the commands.
    let shell = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}'; complete -p amplihack; COMP_WORDS=(amplihack ins); COMP_CWORD=1; _amplihack amplihack ins amplihack; echo \"${{COMPREPLY[@]}}\"",
            bash.display()
        ))
        .output()
        .expect("bash");
    let said = stdout(&shell);
    assert!(
        said.contains("-F _amplihack amplihack"),
        "{said}{}",
        stderr(&shell)
    );
    assert!(said.contains("install"), "{said}");
    let hooks = env.run_amplihack(&["completions", "zsh", "--binary", "amplihack-hooks"]);
    assert!(
        stdout(&hooks).contains("pre-tool-use"),
        "{}",
        stdout(&hooks)
    );
    assert_success(&env.run_amplihack(&["uninstall"]));
    assert!(!share.join("man").exists() && !share.join("bash-completion").exists());
}

/// After the binaries move, `install` and `reregister` (what `update` runs) repoint the bundle
/// file at the new `amplihack-hooks`; the settings file's entry, naming the bundle, stays put.
/// Uninstall alone also takes back what earlier versions wrote.
#[test]
fn amplifier_bundle_follows_the_binaries_and_uninstall_takes_back_old_entries() {
    let env = TestEnv::new();
    let yaml = env.home.join(".amplifier/settings.yaml");
    let bundle = env
        .home
        .join(".local/share/amplihack/amplifier-bundle.yaml");
    assert_success(&env.run_amplihack(&["install", "--host", "amplifier"]));
    let settings = env.read(&yaml);
    let moved = env.root().join("moved bin");
    let moved_arg = moved.display().to_string();
    assert_success(&env.run_amplihack(&[
        "install",
        "--host",
        "amplifier",
        "--bin-dir",
        &moved_arg,
    ]));
    assert!(
        env.read(&bundle)
            .contains(&format!("binary: \"{}/amplihack-hooks\"", moved.display())),
        "{}",
        env.read(&bundle)
    );
    assert_eq!(
        env.read(&yaml),
        settings,
        "the entry names the bundle, not the binary"
    );
    let first = env.bin_dir().display().to_string();
    assert_success(&env.run_amplihack(&["reregister", "--bin-dir", &first]));
    assert!(
        env.read(&bundle)
            .contains(&format!("binary: \"{first}/amplihack-hooks\"")),
        "{}",
        env.read(&bundle)
    );
    assert_success(&env.run_amplihack(&["uninstall"]));
    assert!(
        !yaml.exists(),
        "install created it; nothing of the user's was in it"
    );

    // What an earlier version wrote, taken back by uninstall alone.
    let original = "updates:\n  auto_prompt: false\n";
    env.write(
        &yaml,
        &format!("{original}modules:  # added by amplihack\n  hooks:  # added by amplihack\n    - module: hooks-amplihack\n      source: \"/old/module\"\n      config:\n        binary: \"/old/amplihack-hooks\"\n"),
    );
    let bridge = env.home.join(".amplifier/hooks/amplihack/hooks.json");
    env.write(
        &bridge,
        r#"{"description": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/amplihack-hooks --host amplifier stop"}]}]}}"#,
    );
    // ... and the install manifest as it recorded Amplifier then (the bridge file's path).
    let manifest = env.home.join(".local/state/amplihack/install.json");
    env.write(
        &manifest,
        &json!({"bin_dir": env.bin_dir(), "version": "0.0.9", "registrations": [
            {"host": "amplifier", "scope": "user", "path": bridge}
        ]})
        .to_string(),
    );
    let doctor = env.run_amplihack(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
    assert!(
        stdout(&doctor).contains("written by an earlier amplihack")
            && stdout(&doctor).contains("which the Amplifier app never mounts"),
        "{}",
        stdout(&doctor)
    );
    assert_success(&env.run_amplihack(&["uninstall", "--host", "amplifier"]));
    assert!(!manifest.exists(), "nothing left to record");
    assert_eq!(env.read(&yaml), original);
    assert!(!env.home.join(".amplifier/hooks").exists());
}

/// Each scope's Amplifier settings file: project → `.amplifier/settings.yaml` (a warning when git
/// tracks it), local → `.amplifier/settings.local.yaml`; uninstall of one scope leaves the other.
#[test]
fn amplifier_scopes_write_their_own_settings_files() {
    let env = TestEnv::new();
    let git = |args: &[&str]| {
        assert!(
            env.command(Path::new("git"))
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        );
    };
    git(&["init", "-q"]);
    let project = env.project.join(".amplifier/settings.yaml");
    env.write(&project, "bundle:\n  active: team\n");
    git(&["add", ".amplifier/settings.yaml"]);
    let install = env.run_amplihack(&["install", "--host", "amplifier", "--scope", "project"]);
    assert_success(&install);
    assert!(
        stdout(&install).contains("settings.yaml is tracked by git"),
        "{}",
        stdout(&install)
    );
    assert!(
        env.read(&project)
            .contains("amplihack/amplifier-bundle.yaml")
    );
    assert_success(&env.run_amplihack(&["install", "--host", "amplifier", "--scope", "local"]));
    let local = env.project.join(".amplifier/settings.local.yaml");
    assert!(env.read(&local).contains("amplihack/amplifier-bundle.yaml"));
    assert_success(&env.run_amplihack(&["doctor"]));
    assert_success(&env.run_amplihack(&[
        "uninstall",
        "--host",
        "amplifier",
        "--scope",
        "local",
        "--keep-binaries",
    ]));
    assert!(!local.exists(), "install created it");
    assert!(
        env.read(&project)
            .contains("amplihack/amplifier-bundle.yaml")
    );
    // The project scope still lists amplihack, so the bridge registration both scopes share stays.
    assert!(
        env.project
            .join(".amplifier/hooks/amplihack/hooks.json")
            .is_file()
    );
    assert_success(&env.run_amplihack(&["doctor"]));
    assert_success(&env.run_amplihack(&["uninstall"]));
    assert_eq!(env.read(&project), "bundle:\n  active: team\n");
}

/// The documented exit codes (README, "`amplihack`'s exit codes"): a command line amplihack
/// cannot act on exits 2, a refusal the user can fix exits 1, each with one `amplihack: error:`
/// line.
#[test]
fn a_usage_mistake_exits_2_and_a_refusal_1() {
    let env = TestEnv::new();
    for args in [
        &["log", "--since", "last tuesday"][..],
        &["log", "--follow", "--stats"],
        &["install", "--no-such-flag"],
    ] {
        let output = env.run_amplihack(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // A scope the host lacks is a refusal the user can fix, not a malformed command line.
    let no_scope = env.run_amplihack(&["install", "--scope", "managed", "--host", "amplifier"]);
    assert_eq!(no_scope.status.code(), Some(1), "{}", stderr(&no_scope));
    env.write(&env.claude_settings_path(), "{oops");
    let refused = env.run_amplihack(&["install", "--host", "claude"]);
    assert_eq!(refused.status.code(), Some(1));
    for message in [stderr(&refused), stderr(&no_scope)] {
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.starts_with("amplihack: error: "), "{message}");
    }
}

/// A host's own directory that was there before install (empty or not) is the host's: uninstall
/// keeps it; one install created is taken again when it is left empty.
#[test]
fn uninstall_keeps_a_hosts_directory_it_found() {
    for (host, dir, existed) in [
        ("copilot", ".copilot", true),
        ("copilot", ".copilot", false),
        ("gemini", ".gemini", true),
        ("claude", ".claude", false),
    ] {
        let env = TestEnv::new();
        std::fs::create_dir_all(env.project.join(".git")).expect("git");
        let home_dir = env.home.join(dir);
        if existed {
            std::fs::create_dir_all(&home_dir).expect("host dir");
        }
        assert_success(&env.run_amplihack(&["install", "--host", host]));
        assert!(home_dir.is_dir(), "{host}: install made or kept {dir}");
        assert_success(&env.run_amplihack(&["uninstall", "--host", host]));
        let left: Vec<_> = std::fs::read_dir(&home_dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        let backups_only = left
            .iter()
            .all(|n| n.to_string_lossy().contains(".amplihack-backup-"));
        assert_eq!(
            home_dir.is_dir(),
            existed || !backups_only || !left.is_empty(),
            "{host}: {dir} existed before: {existed}, left: {left:?}"
        );
    }
}
