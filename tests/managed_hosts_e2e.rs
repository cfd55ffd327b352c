//! `--scope managed` for Codex and Copilot CLI, in the real CLIs, as root in a private mount
//! namespace where `/etc` is an overlay whose writes go to the test's own directory (as
//! `managed_scope_e2e` does for Claude Code): nothing outside the test changes.
//! - Codex 0.169: amplihack's hooks in the organisation's `/etc/codex/requirements.toml` run with
//!   no trust step (no `codex app-server`, no bypass flag) and the user's own files empty;
//!   `--allow-managed-hooks-only` and `--plugin-events` are written there; uninstall gives the
//!   organisation's bytes back.
//! - Copilot 1.0.102: amplihack's policy document in `/etc/github-copilot/policy.d/` runs with the
//!   user's own files empty; uninstall leaves `/etc` as it was.
//!
//! Each: doctor and status name the managed file. Skipped (`SKIPPED <why>`) unless run as root
//! where `unshare -m` and an overlay mount work.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::managed_scope_e2e::{Namespace, unavailable};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{Cli, TURN_LIMIT, cli_command, configure_provider, turn_args};
use crate::support::{TestEnv, run_with_timeout, stderr, stdout};

const PROJECT_MARKER: &str = "PROJECT-MARKER-MANAGED-F1EE7";

fn project(env: &TestEnv) {
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git");
    assert!(git.success());
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# The project\n\n{PROJECT_MARKER}\n"),
    );
}

/// One turn of `cli` in the namespace; what the model saw.
fn turn(env: &TestEnv, ns: &Namespace, cli: Cli) -> String {
    let models = FakeModels::start(vec![Turn::text("done")]);
    configure_provider(env, cli, &models);
    let mut command = cli_command(env, cli, &models);
    command.args(turn_args(cli, &models, "hello", &[]));
    let (output, _) = run_with_timeout(ns.wrap(command), b"", TURN_LIMIT);
    format!(
        "{}\n--- {} said:\n{}\n{}",
        models.everything_the_model_saw(),
        cli.name(),
        stdout(&output),
        stderr(&output)
    )
}

fn ok(ns: &Namespace, env: &TestEnv, args: &[&str]) -> String {
    let out = ns.amplihack(env, args);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "amplihack {args:?}: {said}");
    said
}

/// The user's own hook files for `cli`: none (the session runs amplihack from the machine's file).
fn users_files_empty(env: &TestEnv) {
    for dir in [".copilot/hooks", ".codex"] {
        let dir = env.home.join(dir);
        let empty = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .all(|e| !e.file_name().to_string_lossy().contains("hooks"))
            })
            .unwrap_or(true);
        assert!(empty, "{} holds a hooks file", dir.display());
    }
}

/// In every Codex the tests run (the pinned 0.169 and the newest, 0.171).
#[test]
fn codex_runs_amplihack_from_the_machines_requirements() {
    crate::support::host_clis::each_codex(|_| codex_managed_round());
}

fn codex_managed_round() {
    let env = TestEnv::new();
    let ns = Namespace::new(env.root());
    if let Some(why) = unavailable(&ns) {
        println!("SKIPPED {why}");
        return;
    }
    let real_before = std::fs::read(Path::new("/etc/codex/requirements.toml")).ok();
    project(&env);
    let organisation = "# Acme's Codex policy\nallowed_approval_policies = [\"never\", \"on-request\", \"untrusted\"]  # keep\n";
    let requirements = ns.upper.join("codex/requirements.toml");
    env.write(&requirements, organisation);
    let bin = env.root().join("system bin");
    let bin_arg = bin.to_string_lossy().into_owned();

    // An event Codex does not deliver is refused, naming the fix; nothing changes.
    let refused = ns.amplihack(
        &env,
        &[
            "install",
            "--scope",
            "managed",
            "--host",
            "codex",
            "--bin-dir",
            &bin_arg,
            "--plugin-events",
            "NoSuchEvent",
        ],
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("`NoSuchEvent` is not an event Codex delivers"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(env.read(&requirements), organisation);

    let said = ok(
        &ns,
        &env,
        &[
            "install",
            "--scope",
            "managed",
            "--host",
            "codex",
            "--bin-dir",
            &bin_arg,
            "--allow-managed-hooks-only",
            "--plugin-events",
            "PermissionRequest",
        ],
    );
    assert!(
        said.contains("every user's Codex on this machine now runs"),
        "{said}"
    );
    let written = env.read(&requirements);
    assert!(
        written.starts_with(organisation.trim_end()),
        "the organisation's keys first, as they were: {written}"
    );
    assert!(
        written.contains("allow_managed_hooks_only = true # amplihack")
            && written.contains(&format!("managed_dir = \"{bin_arg}\" # amplihack"))
            && written.contains("[[hooks.PermissionRequest]]")
            && written.contains(" dispatch --host codex"),
        "{written}"
    );
    let mode = std::fs::metadata(&requirements)
        .expect("file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "readable by every user");

    // The user's own files are empty: Codex runs amplihack from the requirements, untrusted by
    // hash and without a bypass flag.
    std::fs::create_dir_all(crate::support::host_clis::codex_home(&env)).expect("CODEX_HOME");
    users_files_empty(&env);
    let saw = turn(&env, &ns, Cli::Codex);
    assert!(saw.contains(PROJECT_MARKER), "{saw}");
    assert!(
        !crate::support::host_clis::codex_home(&env)
            .join("config.toml")
            .exists()
            || !env
                .read(&crate::support::host_clis::codex_home(&env).join("config.toml"))
                .contains("hooks.state"),
        "a trust step ran"
    );

    let doctor = ok(
        &ns,
        &env,
        &["doctor", "--host", "codex", "--bin-dir", &bin_arg],
    );
    assert!(
        doctor
            .contains("Codex: amplihack is registered in the managed /etc/codex/requirements.toml")
            && doctor.contains("allow_managed_hooks_only = true: Codex runs only managed hooks"),
        "{doctor}"
    );
    let status = ok(&ns, &env, &["status", "--host", "codex"]);
    assert!(
        status.contains("codex      managed  /etc/codex/requirements.toml  ok"),
        "{status}"
    );

    // Installed again (moved binaries): re-pointed, once; the plugin event kept.
    let moved = env.root().join("moved bin");
    let moved_arg = moved.to_string_lossy().into_owned();
    ok(
        &ns,
        &env,
        &[
            "install",
            "--scope",
            "managed",
            "--host",
            "codex",
            "--bin-dir",
            &moved_arg,
        ],
    );
    let again = env.read(&requirements);
    assert!(
        !again.contains("system bin/amplihack-hooks")
            && again.contains("moved bin/amplihack-hooks")
            && again.matches("[[hooks.PermissionRequest]]").count() == 1,
        "{again}"
    );

    ok(
        &ns,
        &env,
        &["uninstall", "--scope", "managed", "--host", "codex"],
    );
    assert_eq!(env.read(&requirements), organisation, "byte for byte");
    let left: Vec<String> = std::fs::read_dir(ns.upper.join("codex"))
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "requirements.toml" && !n.contains(".amplihack-backup-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        std::fs::read(Path::new("/etc/codex/requirements.toml")).ok(),
        real_before,
        "the machine's /etc changed"
    );
}

#[test]
fn copilot_runs_amplihack_from_the_machines_policy_directory() {
    let env = TestEnv::new();
    let ns = Namespace::new(env.root());
    if let Some(why) = unavailable(&ns) {
        println!("SKIPPED {why}");
        return;
    }
    let real_before = Path::new("/etc/github-copilot").exists();
    project(&env);
    let bin = env.root().join("system bin");
    let bin_arg = bin.to_string_lossy().into_owned();

    // Without it, the user's own files empty: amplihack does not run.
    users_files_empty(&env);
    assert!(!turn(&env, &ns, Cli::Copilot).contains(PROJECT_MARKER));

    let said = ok(
        &ns,
        &env,
        &[
            "install",
            "--scope",
            "managed",
            "--host",
            "copilot",
            "--bin-dir",
            &bin_arg,
        ],
    );
    assert!(
        said.contains("every user's Copilot CLI on this machine now runs"),
        "{said}"
    );
    let document = ns.upper.join("github-copilot/policy.d/amplihack.json");
    let written: serde_json::Value =
        serde_json::from_str(&env.read(&document)).expect("a JSON document");
    assert_eq!(written["version"], 1, "{written}");
    let mode = std::fs::metadata(&document)
        .expect("file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "readable by every user");

    users_files_empty(&env);
    let saw = turn(&env, &ns, Cli::Copilot);
    assert!(saw.contains(PROJECT_MARKER), "{saw}");

    let doctor = ok(
        &ns,
        &env,
        &["doctor", "--host", "copilot", "--bin-dir", &bin_arg],
    );
    assert!(
        doctor.contains(
            "Copilot CLI: amplihack is registered in the managed /etc/github-copilot/policy.d/amplihack.json"
        ),
        "{doctor}"
    );
    let status = ok(&ns, &env, &["status", "--host", "copilot"]);
    assert!(
        status.contains("copilot    managed  /etc/github-copilot/policy.d/amplihack.json  ok"),
        "{status}"
    );

    ok(
        &ns,
        &env,
        &["uninstall", "--scope", "managed", "--host", "copilot"],
    );
    assert!(
        !ns.upper.join("github-copilot").exists(),
        "amplihack's directories stayed in /etc"
    );
    assert!(!turn(&env, &ns, Cli::Copilot).contains(PROJECT_MARKER));
    assert_eq!(
        Path::new("/etc/github-copilot").exists(),
        real_before,
        "the machine's /etc changed"
    );
}
