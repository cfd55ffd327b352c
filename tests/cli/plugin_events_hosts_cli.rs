//! The user's plugins get every event a host delivers, under every JSON host amplihack is
//! registered with, not only Claude Code: a plugin's handler on an event beyond amplihack's own
//! rows there gets one `amplihack-hooks dispatch --host <host>` entry in the host's file, named as
//! the host names it, which runs the plugin; it goes when no plugin needs it, and uninstall gives
//! the file back byte for byte.

use crate::support;

use serde_json::{Value, json};
use support::{TestEnv, command, one_group, stderr, stdout};

fn ok(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

/// One host's case: its name, its user file (relative to the home), what the user had there
/// before (`None`: no file), the plugin's event (Claude Code's name) and the host's name for it.
struct Case {
    host: &'static str,
    file: &'static str,
    before: Option<&'static str>,
    event: &'static str,
    label: &'static str,
}

const CASES: &[Case] = &[
    Case {
        host: "codex",
        file: ".codex/hooks.json",
        before: Some(
            "{\n  \"hooks\": {\n    \"SubagentStop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"/bin/true\"}]}\n    ]\n  }\n}\n",
        ),
        event: "SubagentStop",
        label: "SubagentStop",
    },
    Case {
        host: "copilot",
        file: ".copilot/hooks/amplihack.json",
        before: None,
        event: "Notification",
        label: "Notification",
    },
    Case {
        host: "qwen",
        file: ".qwen/settings.json",
        before: Some("{\n  // mine\n  \"model\": {\"name\": \"x\"}\n}\n"),
        event: "Notification",
        label: "Notification",
    },
    Case {
        host: "droid",
        file: ".factory/settings.json",
        before: Some("{\n  // mine\n  \"model\": \"x\"\n}\n"),
        event: "SubagentStop",
        label: "SubagentStop",
    },
    Case {
        host: "gemini",
        file: ".gemini/settings.json",
        before: Some("{\n  // mine\n  \"ui\": {\"theme\": \"dark\"}\n}\n"),
        event: "Notification",
        label: "Notification",
    },
];

/// The file as JSON (the cases' comments are whole `//` lines).
fn parse(text: &str) -> Value {
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).expect("json")
}

/// The commands of amplihack's `dispatch` entries on `label`.
fn dispatch_entries(value: &Value, label: &str) -> Vec<Value> {
    value["hooks"][label]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter(|h| {
            h["command"]
                .as_str()
                .is_some_and(|c| c.contains("amplihack-hooks") && c.contains(" dispatch"))
        })
        .collect()
}

#[test]
fn every_json_host_gets_dispatch_entries_for_the_plugins_events_and_gives_them_back() {
    for case in CASES {
        let env = TestEnv::new();
        let host = case.host;
        let file = env.home.join(case.file);
        if let Some(before) = case.before {
            env.write(&file, before);
        }
        let mark = env.mark("ran", &format!("{host}-{}", case.event));
        env.plugin(
            &env.user_hooks_dir(),
            "notes",
            &one_group(case.event, None, vec![command(&mark)]),
        );

        let out = ok(&env.run_amplihack(&["install", "--host", host]));
        assert!(
            out.contains("plugin events registered"),
            "{host}: the install says nothing of the plugin's event\n{out}"
        );
        let value = parse(&env.read(&file));
        let entries = dispatch_entries(&value, case.label);
        assert_eq!(entries.len(), 1, "{host}: {value:#}");
        let entry = &entries[0];
        let line = entry["command"].as_str().unwrap_or_default();
        assert!(line.contains(&format!("--host {host}")), "{host}: {line}");
        assert!(
            line.contains(&env.deployed_hooks().to_string_lossy().to_string()),
            "{host}: not the deployed binary: {line}"
        );
        match host {
            // Copilot denies the tool when a hook fails: guarded against a missing binary.
            "copilot" => assert!(line.starts_with("[ -x "), "{line}"),
            // Codex's own default (600 s) is too long a safety net.
            "codex" => assert!(entry["timeout"].is_u64(), "{entry}"),
            _ => {}
        }
        if host == "codex" {
            // Codex keys its trust by position: the user's entry keeps its place, first.
            assert_eq!(
                value["hooks"][case.label][0]["hooks"][0]["command"], "/bin/true",
                "{value:#}"
            );
        }
        // `doctor` sees amplihack's registration as canonical with the entry in it.
        let doctor = stdout(&env.run_amplihack(&["doctor"]));
        assert!(!doctor.contains("is registered 2 times"), "{doctor}");

        // The entry, run as the host runs it, reaches the plugin.
        let payload = json!({
            "hook_event_name": case.label,
            "session_id": format!("s-{host}"),
            "cwd": env.project,
            "message": "hello",
            "last_assistant_message": "done",
        });
        let mut run = env.command(std::path::Path::new("/bin/sh"));
        run.args(["-c", line]).current_dir(&env.project);
        let (output, _) = support::run_with_timeout(
            run,
            payload.to_string().as_bytes(),
            std::time::Duration::from_secs(60),
        );
        assert!(output.status.success(), "{host}: {}", stderr(&output));
        assert_eq!(
            env.marks("ran"),
            [format!("{host}-{}", case.event)],
            "{host}: the plugin did not run\n{}",
            stderr(&output)
        );

        // A re-install keeps exactly one.
        ok(&env.run_amplihack(&["install", "--host", host]));
        let again = parse(&env.read(&file));
        assert_eq!(dispatch_entries(&again, case.label).len(), 1, "{again:#}");

        // The plugin disabled: the entry goes; enabled: it is back.
        ok(&env.run_amplihack(&["hooks", "disable", "notes"]));
        let disabled = parse(&env.read(&file));
        assert!(
            dispatch_entries(&disabled, case.label).is_empty(),
            "{host}: {disabled:#}"
        );
        if host == "codex" {
            assert_eq!(
                disabled["hooks"][case.label][0]["hooks"][0]["command"], "/bin/true",
                "{disabled:#}"
            );
        }
        ok(&env.run_amplihack(&["hooks", "enable", "notes"]));
        let enabled = parse(&env.read(&file));
        assert_eq!(
            dispatch_entries(&enabled, case.label).len(),
            1,
            "{enabled:#}"
        );

        // Uninstall: the file as it was (or none, as there was none).
        ok(&env.run_amplihack(&["uninstall", "--host", host, "--keep-binaries"]));
        match case.before {
            Some(before) => assert_eq!(env.read(&file), before, "{host}"),
            None => assert!(!file.exists(), "{host}: {}", env.read(&file)),
        }
        assert!(
            !env.home
                .join(".local/state/amplihack/host-plugin-events.json")
                .exists(),
            "{host}: the record outlived the uninstall"
        );
    }
}

/// An event the host does not deliver, or one amplihack's own rows cover there, gets no entry.
#[test]
fn no_entry_for_an_event_the_host_lacks_or_amplihack_already_registers() {
    let env = TestEnv::new();
    env.plugin(
        &env.user_hooks_dir(),
        "both",
        &json!({"hooks": {
            "PermissionRequest": [{"hooks": [command("true")]}],
            "PreToolUse": [{"matcher": "*", "hooks": [command("true")]}],
        }}),
    );
    let file = env.home.join(".gemini/settings.json");
    ok(&env.run_amplihack(&["install", "--host", "gemini"]));
    let value = parse(&env.read(&file));
    assert!(
        dispatch_entries(&value, "PermissionRequest").is_empty(),
        "{value:#}"
    );
    assert!(
        dispatch_entries(&value, "BeforeTool").is_empty(),
        "{value:#}"
    );
    assert!(
        value["hooks"].get("PermissionRequest").is_none(),
        "{value:#}"
    );
}

/// An entry taken out by hand is put back by `doctor --fix`, in every host's file.
#[test]
fn doctor_fix_puts_a_missing_plugin_event_entry_back() {
    for case in CASES {
        let env = TestEnv::new();
        let host = case.host;
        let file = env.home.join(case.file);
        env.plugin(
            &env.user_hooks_dir(),
            "notes",
            &one_group(case.event, None, vec![command("true")]),
        );
        ok(&env.run_amplihack(&["install", "--host", host]));
        let mut edited = parse(&env.read(&file));
        if let Some(hooks) = edited["hooks"].as_object_mut() {
            hooks.remove(case.label);
        }
        env.write(&file, &serde_json::to_string_pretty(&edited).expect("json"));
        let fixed = stdout(&env.run_amplihack(&["doctor", "--fix"]));
        let repaired = parse(&env.read(&file));
        assert_eq!(
            dispatch_entries(&repaired, case.label).len(),
            1,
            "{host}: {fixed}\n{repaired:#}"
        );
        assert!(fixed.contains("repaired"), "{host}: {fixed}");
    }
}

/// `doctor` counts the other hosts: a plugin's event Gemini delivers is not said to never reach
/// it (amplihack registers it there), one Gemini has no such event for is, naming Gemini.
#[test]
fn doctor_weighs_every_installed_host() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git");
    env.write(&env.home.join(".gemini/settings.json"), "{}\n");
    env.write(
        &env.user_hooks_dir().join("notes/hooks.json"),
        &json!({"hooks": {
            "Notification": [{"hooks": [{"type": "command", "command": "true"}]}],
            "PermissionRequest": [{"hooks": [{"type": "command", "command": "true"}]}]
        }})
        .to_string(),
    );
    ok(&env.run_amplihack(&["install", "--host", "gemini"]));
    let doctor = stdout(&env.run_amplihack(&["doctor"]));
    assert!(
        !doctor.contains("Notification never reaches it"),
        "Gemini delivers Notification:\n{doctor}"
    );
    assert!(
        doctor.contains("PermissionRequest never reaches it: Gemini CLI never delivers it"),
        "Gemini has no PermissionRequest:\n{doctor}"
    );
}
