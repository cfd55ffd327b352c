//! One machine, many hosts: every host × scope × command (`install`, `uninstall`, `doctor`,
//! `status`, `log`), a scope a host lacks refused with exit 1 before anything is written, and
//! removing one host that leaves the others (and the binaries they run) working. Snapshots of
//! what people read: `doctor` on a machine with several hosts, `uninstall --host` naming what
//! remains, the refusal of a scope.

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::snapshot::shown;
use support::{TestEnv, stderr, stdout};

/// Each host's `--host` name, the name people read, and its scopes (as the README lists them).
const HOSTS: &[(&str, &str, &[&str])] = &[
    (
        "claude",
        "Claude Code",
        &["user", "project", "local", "managed"],
    ),
    ("amplifier", "Amplifier", &["user", "project", "local"]),
    ("codex", "Codex", &["user", "project", "managed"]),
    ("copilot", "Copilot CLI", &["user", "project", "managed"]),
    ("qwen", "Qwen Code", &["user", "project"]),
    ("droid", "Droid", &["user", "project", "local"]),
    ("gemini", "Gemini CLI", &["user", "project"]),
    ("opencode", "opencode", &["user", "project"]),
];

const SCOPES: [&str; 4] = ["user", "project", "local", "managed"];

fn env_with_git() -> TestEnv {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    env
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

/// The registrations `status --json` lists: (host, scope, path).
fn registered(env: &TestEnv, host: &str) -> Vec<(String, String, PathBuf)> {
    let status = env.run_amplihack(&["status", "--host", host, "--json"]);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    json_of(&status)["registrations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["host"].as_str().unwrap_or_default().to_string(),
                r["scope"].as_str().unwrap_or_default().to_string(),
                PathBuf::from(r["path"].as_str().unwrap_or_default()),
            )
        })
        .collect()
}

/// Every host × every scope × every command.
#[test]
fn every_host_scope_and_command() {
    for &(host, title, scopes) in HOSTS {
        for scope in SCOPES {
            let env = env_with_git();
            let case = format!("--host {host} --scope {scope}");
            if !scopes.contains(&scope) {
                // Refused before anything is written: no binaries, no host file.
                for command in ["install", "uninstall"] {
                    let output = env.run_amplihack(&[command, "--host", host, "--scope", scope]);
                    let message = stderr(&output);
                    assert_eq!(output.status.code(), Some(1), "{command} {case}: {message}");
                    assert!(
                        message.contains(&format!(
                            "{title} has no {scope} scope (its scopes: {})",
                            scopes.join(", ")
                        )),
                        "{command} {case}: {message}"
                    );
                }
                assert!(!env.bin_dir().exists(), "{case}: nothing deployed");
                continue;
            }
            if scope == "managed" {
                // Writes /etc: proven in a private mount namespace (managed_scope_e2e,
                // managed_hosts_e2e).
                continue;
            }
            let install = env.run_amplihack(&["install", "--host", host, "--scope", scope]);
            assert_eq!(
                install.status.code(),
                Some(0),
                "install {case}: {}",
                stderr(&install)
            );
            let rows = registered(&env, host);
            let Some((_, _, file)) = rows
                .iter()
                .find(|(h, s, p)| h == host && s == scope && p.exists())
            else {
                panic!("{case}: status lists the registration: {rows:?}");
            };
            assert!(
                rows.iter().all(|(h, _, _)| h == host),
                "{case}: status --host {host} lists only {host}: {rows:?}"
            );
            let doctor = env.run_amplihack(&["doctor", "--host", host, "--json"]);
            let findings = json_of(&doctor)["findings"].to_string();
            assert_eq!(doctor.status.code(), Some(0), "doctor {case}: {findings}");
            assert!(
                findings.contains(&file.display().to_string()),
                "doctor {case} checks {}: {findings}",
                file.display()
            );
            let log = env.run_amplihack(&["log", "--host", host]);
            assert_eq!(log.status.code(), Some(0), "log {case}: {}", stderr(&log));
            let uninstall = env.run_amplihack(&["uninstall", "--host", host, "--scope", scope]);
            assert_eq!(
                uninstall.status.code(),
                Some(0),
                "uninstall {case}: {}",
                stderr(&uninstall)
            );
            assert!(registered(&env, host).is_empty(), "{case}: gone");
            assert!(
                !env.deployed_hooks().exists(),
                "{case}: the last registration took the binaries with it"
            );
        }
        // Every command takes the host, and `all`.
        let env = env_with_git();
        for host in [host, "all"] {
            for command in ["doctor", "status", "log"] {
                let output = env.run_amplihack(&[command, "--host", host]);
                assert!(
                    matches!(output.status.code(), Some(0 | 1)),
                    "{command} --host {host}: {}",
                    stderr(&output)
                );
            }
        }
        let doctor = env.run_amplihack(&["doctor", "--host", host]);
        assert_eq!(
            doctor.status.code(),
            Some(1),
            "nothing registered for {host}"
        );
        assert!(
            stdout(&doctor).contains(&format!("amplihack install --host {host}")),
            "{}",
            stdout(&doctor)
        );
    }
}

/// `--host all` with a scope some hosts found lack: the others are registered, and those are
/// named rather than skipped without a word.
#[test]
fn all_hosts_in_a_scope_some_lack_names_them() {
    let env = env_with_git();
    std::fs::create_dir_all(env.home.join(".gemini")).expect("gemini installed");
    let output = env.run_amplihack(&["install", "--scope", "local"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(
            "Gemini CLI has no local scope: amplihack is registered for Claude Code, Amplifier only"
        ),
        "{}",
        stdout(&output)
    );
}

/// Removing one host leaves the others' entries and the binaries they run; the last one takes
/// the binaries.
#[test]
fn uninstalling_one_host_keeps_what_the_others_run() {
    let env = env_with_git();
    for host in ["claude", "codex", "gemini"] {
        let output = env.run_amplihack(&["install", "--host", host]);
        assert_eq!(output.status.code(), Some(0), "{host}: {}", stderr(&output));
    }
    let output = env.run_amplihack(&["uninstall", "--host", "gemini", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json = json_of(&output);
    assert_eq!(json["binaries_kept"], true, "{json}");
    let still: Vec<&str> = json["still_registered"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["host"].as_str())
        .collect();
    assert_eq!(still, ["claude", "codex"], "{json}");
    assert!(
        env.deployed_hooks().is_file(),
        "Claude Code and Codex still run it"
    );
    // The hook still answers for Claude Code.
    let hooks = env.read(&env.claude_settings_path());
    assert!(hooks.contains(&env.deployed_hooks().display().to_string()));
    for host in ["codex", "claude"] {
        let output = env.run_amplihack(&["uninstall", "--host", host]);
        assert_eq!(output.status.code(), Some(0), "{host}: {}", stderr(&output));
    }
    assert!(!env.deployed_hooks().exists(), "the last host took them");
}

/// What people read: `doctor` on a machine with several hosts, `uninstall --host` naming what
/// remains, and the refusal of a scope.
#[test]
fn several_hosts_as_people_read_them() {
    let env = env_with_git();
    for dir in [".codex", ".gemini", ".qwen"] {
        std::fs::create_dir_all(env.home.join(dir)).expect("host dir");
    }
    for args in [
        &["install", "--host", "claude"][..],
        &["install", "--host", "gemini"],
        &["install", "--host", "codex", "--scope", "project"],
    ] {
        let output = env.run_amplihack(args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let mut text = Vec::new();
    for args in [
        &["doctor"][..],
        &["uninstall", "--host", "gemini"],
        &["install", "--host", "gemini", "--scope", "local"],
        &["install", "--scope", "managed", "--host", "gemini"],
    ] {
        text.push(shown(&env, args, &env.run_amplihack(args)));
    }
    insta::assert_snapshot!("several_hosts", text.join("\n"));
}

/// `doctor` without `--host` reports every host it finds: installed and not registered (with the
/// command that registers it), and registered where the host is gone.
#[test]
fn doctor_reports_every_host_on_the_machine() {
    let env = env_with_git();
    std::fs::create_dir_all(env.home.join(".factory")).expect("droid installed");
    let output = env.run_amplihack(&["install", "--host", "gemini", "--scope", "project"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !env.home.join(".gemini").exists(),
        "Gemini CLI never ran here"
    );
    let doctor = env.run_amplihack(&["doctor"]);
    let text = stdout(&doctor);
    assert!(
        text.contains("note: Droid is installed")
            && text.contains("to guard it too: amplihack install --host droid"),
        "{text}"
    );
    assert!(
        text.contains(
            "Gemini CLI: amplihack is registered (project) but Gemini CLI is not installed here"
        ),
        "{text}"
    );
    assert_eq!(doctor.status.code(), Some(0), "notes, not problems: {text}");
    // One host named: only that one.
    let droid = stdout(&env.run_amplihack(&["doctor", "--host", "gemini"]));
    assert!(!droid.contains("Droid"), "{droid}");
}

/// Issue 35 finding 10: a project's host folder committed as a link (`.gemini -> ../elsewhere`)
/// is refused for every host at project scope, naming the link and the fix, and nothing is
/// written where it leads.
#[test]
fn a_committed_link_for_a_hosts_project_folder_is_refused_for_every_host() {
    let cases: &[(&str, &str)] = &[
        ("claude", ".claude"),
        ("amplifier", ".amplifier"),
        ("codex", ".codex"),
        ("copilot", ".github"),
        ("qwen", ".qwen"),
        ("droid", ".factory"),
        ("gemini", ".gemini"),
        ("opencode", ".opencode"),
    ];
    for (host, folder) in cases {
        let env = env_with_git();
        let elsewhere = env
            .project
            .parent()
            .expect("parent")
            .join(format!("elsewhere-{host}"));
        std::fs::create_dir_all(&elsewhere).expect("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, env.project.join(folder)).expect("link");
        let output = env.run_amplihack(&["install", "--host", host, "--scope", "project"]);
        let err = stderr(&output);
        assert_ne!(output.status.code(), Some(0), "{host}: {err}");
        assert!(
            err.contains(&format!("{folder} is a symbolic link"))
                && err.contains("replace the link with a directory")
                && err.contains("nothing was changed"),
            "{host}: {err}"
        );
        let written: Vec<_> = std::fs::read_dir(&elsewhere).expect("read").collect();
        assert!(
            written.is_empty(),
            "{host}: wrote {written:?} through the link"
        );
    }
}
