//! Releases end to end, as a user without Rust meets them: `packaging/build-release` builds two
//! versions, a loopback server shaped like GitHub releases serves them (with the `latest`
//! redirect), and with no cargo on PATH `curl | sh` installs working hooks, a tampered archive or
//! a missing checksum tool is refused with nothing written, `amplihack update` moves to the newer
//! version and `--rollback` back, and a corrupted newer release leaves the installed one working.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::releases::Releases;
use crate::support::{TestEnv, repo_root, run_with_timeout, stderr, stdout};

/// PATH without cargo or rustc: what a user of the release has.
const USER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fn build_release(version: &str, out: &Path) {
    let mut command = Command::new(repo_root().join("packaging/build-release"));
    command
        .args(["--version", version, "--out"])
        .arg(out)
        .env("CARGO_TARGET_DIR", repo_root().join("target/release-test"))
        // The archives' shape and the install, verify and update flows are under test, not the
        // code generation: the quicker `release` profile (the startup benchmark measures `dist`).
        .env("AMPLIHACK_CARGO_PROFILE", "release");
    let (output, _) = run_with_timeout(command, b"", Duration::from_secs(1_500));
    assert!(
        output.status.success(),
        "build-release {version}: {}",
        stderr(&output)
    );
}

fn target() -> &'static str {
    amplihack_target()
}

fn amplihack_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        _ => "aarch64-apple-darwin",
    }
}

/// `curl -fsSL $BASE/latest/download/install.sh | sh -s -- --yes` in the test's home (the argument
/// reaches `amplihack install`).
fn curl_sh(env: &TestEnv, releases: &Releases, path: &str, extra: &[(&str, &str)]) -> Output {
    let mut command = env.command(Path::new("/bin/sh"));
    command
        .args([
            "-c",
            "curl -fsSL \"$AMPLIHACK_RELEASES_URL/latest/download/install.sh\" | sh -s -- --yes",
        ])
        .env("PATH", path)
        .env("AMPLIHACK_RELEASES_URL", &releases.url)
        .env_remove("AMPLIHACK_BIN_DIR");
    for (k, v) in extra {
        command.env(k, v);
    }
    run_with_timeout(command, b"", Duration::from_secs(120)).0
}

fn user_bin(env: &TestEnv) -> PathBuf {
    env.home.join(".local/bin")
}

fn amplihack(env: &TestEnv, releases: &Releases, args: &[&str]) -> Output {
    let mut command = env.command(&user_bin(env).join("amplihack"));
    command
        .args(args)
        .env("PATH", USER_PATH)
        .env("AMPLIHACK_RELEASES_URL", &releases.url);
    run_with_timeout(command, b"", Duration::from_secs(120)).0
}

fn reported(binary: &Path) -> String {
    let output = Command::new(binary)
        .arg("--version")
        .output()
        .expect("runs");
    stdout(&output).trim().to_string()
}

fn hooks_deny_no_verify(env: &TestEnv) {
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "r", "cwd": env.project,
        "tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}});
    let mut command = env.command(&user_bin(env).join("amplihack-hooks"));
    command.arg("pre-tool-use");
    let (output, _) = run_with_timeout(
        command,
        payload.to_string().as_bytes(),
        Duration::from_secs(30),
    );
    let reply: Value = serde_json::from_slice(&output.stdout).expect("a reply");
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "deny",
        "{reply}"
    );
}

/// A directory of symlinks to every tool install.sh may use except `leave_out`.
fn path_without(root: &Path, leave_out: &[&str]) -> String {
    let dir = root.join("limited-path");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for tool in [
        "sh",
        "curl",
        "tar",
        "gzip",
        "uname",
        "mktemp",
        "cut",
        "rm",
        "cat",
        "dirname",
        "sha256sum",
        "shasum",
        "sed",
        "basename",
        "mkdir",
        "cp",
        "mv",
        "chmod",
        "ls",
    ] {
        if leave_out.contains(&tool) {
            continue;
        }
        for d in ["/usr/bin", "/bin"] {
            let real = Path::new(d).join(tool);
            if real.exists() {
                let _ = std::os::unix::fs::symlink(&real, dir.join(tool));
                break;
            }
        }
    }
    dir.display().to_string()
}

fn nothing_written(env: &TestEnv) {
    assert!(!env.home.join(".local").exists(), "nothing installed");
    assert!(!env.home.join(".claude").exists(), "no settings written");
}

#[test]
fn releases_install_verify_update_and_roll_back_without_rust() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let root = scratch.path().join("releases");
    let (old, new) = (root.join("v0.1.1"), root.join("v0.1.2"));
    build_release("0.1.1", &old);
    build_release("0.1.2", &new);

    // What build-release leaves.
    let asset = format!("amplihack-{}.tar.gz", target());
    for file in [
        asset.clone(),
        format!("{asset}.sha256"),
        "dist-manifest.json".into(),
        "install.sh".into(),
    ] {
        assert!(new.join(&file).is_file(), "{file} missing");
    }
    let sum = std::fs::read_to_string(new.join(format!("{asset}.sha256"))).expect("sum");
    assert!(
        sum.ends_with(&format!("  {asset}\n")),
        "sha256sum format: {sum}"
    );
    let check = Command::new("sha256sum")
        .args(["-c", &format!("{asset}.sha256")])
        .current_dir(&new)
        .output()
        .expect("sha256sum");
    assert!(check.status.success(), "{}", stdout(&check));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(new.join("dist-manifest.json")).expect("m"))
            .expect("json");
    assert_eq!(manifest["version"], "0.1.2");
    assert_eq!(manifest["artifacts"][0]["target"], target());
    assert_eq!(manifest["artifacts"][0]["name"], asset);
    assert_eq!(
        manifest["artifacts"][0]["sha256"],
        sum.split_whitespace().next().unwrap_or_default()
    );
    let listing = Command::new("tar")
        .args(["-tzf"])
        .arg(new.join(&asset))
        .output()
        .expect("tar");
    for entry in [
        "amplihack",
        "amplihack-hooks",
        "README.md",
        "LICENSE",
        "amplifier/pyproject.toml",
        "amplifier/amplifier_module_hooks_amplihack/__init__.py",
        // __init__.py imports it: without it `pip install ./amplifier` gives a module that fails.
        "amplifier/amplifier_module_hooks_amplihack/agent.py",
        "completions/bash/amplihack",
        "completions/bash/amplihack-hooks",
        "completions/zsh/_amplihack",
        "completions/zsh/_amplihack-hooks",
        "completions/fish/amplihack.fish",
        "completions/fish/amplihack-hooks.fish",
        "man/man1/amplihack.1",
        "man/man1/amplihack-hooks.1",
        "man/man1/amplihack-install.1",
    ] {
        assert!(
            stdout(&listing).contains(&format!("amplihack-{}/{entry}", target())),
            "{}",
            stdout(&listing)
        );
    }

    // A tampered copy (archive changed, checksum not) and a corrupted "newer" release.
    for (name, version) in [("v9.9.9", "9.9.9"), ("v0.1.3", "0.1.3")] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        for file in [format!("{asset}.sha256"), "install.sh".into()] {
            std::fs::copy(new.join(&file), dir.join(&file)).expect("copy");
        }
        let mut bytes = std::fs::read(new.join(&asset)).expect("archive");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(dir.join(&asset), bytes).expect("tamper");
        let mut m = manifest.clone();
        m["version"] = json!(version);
        std::fs::write(dir.join("dist-manifest.json"), m.to_string()).expect("manifest");
    }
    let releases = Releases::serve(&root, "0.1.2");

    // A tampered archive is refused, with nothing written.
    let env = TestEnv::new();
    let refused = curl_sh(
        &env,
        &releases,
        USER_PATH,
        &[("AMPLIHACK_VERSION", "9.9.9")],
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("checksum mismatch"),
        "{}",
        stderr(&refused)
    );
    nothing_written(&env);

    // No checksum tool: refused before anything is downloaded.
    let limited = path_without(env.root(), &["sha256sum", "shasum"]);
    let refused = curl_sh(&env, &releases, &limited, &[]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("neither sha256sum nor shasum"),
        "{}",
        stderr(&refused)
    );
    nothing_written(&env);

    // curl | sh, pinned to the older version, with no cargo on PATH.
    assert!(
        !Command::new("sh")
            .args(["-c", "command -v cargo"])
            .env("PATH", USER_PATH)
            .status()
            .expect("sh")
            .success()
    );
    let installed = curl_sh(
        &env,
        &releases,
        USER_PATH,
        &[("AMPLIHACK_VERSION", "0.1.1")],
    );
    assert!(
        installed.status.success(),
        "{}\n{}",
        stdout(&installed),
        stderr(&installed)
    );
    assert!(
        stderr(&installed).contains("sha256 verified"),
        "{}",
        stderr(&installed)
    );
    assert_eq!(
        reported(&user_bin(&env).join("amplihack-hooks")),
        "amplihack-hooks 0.1.1"
    );
    let settings = env.read_json(&env.claude_settings_path());
    assert!(
        settings
            .to_string()
            .contains(&user_bin(&env).join("amplihack-hooks").display().to_string())
    );
    hooks_deny_no_verify(&env);
    // The man pages and completions came with it.
    for file in [
        "man/man1/amplihack.1",
        "man/man1/amplihack-hooks.1",
        "bash-completion/completions/amplihack",
        "fish/vendor_completions.d/amplihack-hooks.fish",
    ] {
        assert!(
            env.home.join(".local/share").join(file).is_file(),
            "curl | sh installed no {file}"
        );
    }

    // update --check only reports; update moves both binaries and re-registers.
    let check = amplihack(&env, &releases, &["update", "--check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(
        stdout(&check).contains("can move to 0.1.2"),
        "{}",
        stdout(&check)
    );
    assert_eq!(
        reported(&user_bin(&env).join("amplihack")),
        "amplihack 0.1.1"
    );
    let update = amplihack(&env, &releases, &["update"]);
    assert!(
        update.status.success(),
        "{}\n{}",
        stdout(&update),
        stderr(&update)
    );
    for name in ["amplihack", "amplihack-hooks"] {
        assert_eq!(
            reported(&user_bin(&env).join(name)),
            format!("{name} 0.1.2")
        );
    }
    let doctor = amplihack(&env, &releases, &["doctor"]);
    assert!(
        doctor.status.success(),
        "doctor after update: {}",
        stdout(&doctor)
    );
    hooks_deny_no_verify(&env);

    // A second update at the newest version changes nothing.
    let settings_before = env.read(&env.claude_settings_path());
    let binary_before = std::fs::read(user_bin(&env).join("amplihack-hooks")).expect("bin");
    let again = amplihack(&env, &releases, &["update"]);
    assert!(again.status.success());
    assert!(stdout(&again).contains("up to date"), "{}", stdout(&again));
    assert_eq!(env.read(&env.claude_settings_path()), settings_before);
    assert_eq!(
        std::fs::read(user_bin(&env).join("amplihack-hooks")).expect("bin"),
        binary_before
    );

    // --rollback restores the previous pair.
    let back = amplihack(&env, &releases, &["update", "--rollback"]);
    assert!(
        back.status.success(),
        "{}\n{}",
        stdout(&back),
        stderr(&back)
    );
    for name in ["amplihack", "amplihack-hooks"] {
        assert_eq!(
            reported(&user_bin(&env).join(name)),
            format!("{name} 0.1.1")
        );
    }
    assert!(amplihack(&env, &releases, &["doctor"]).status.success());

    // A corrupted newer release, and an unreachable server: refused, the installed pair works.
    releases.set_latest("0.1.3");
    let corrupt = amplihack(&env, &releases, &["update"]);
    assert_eq!(corrupt.status.code(), Some(1));
    assert!(
        stderr(&corrupt).contains("checksum mismatch"),
        "{}",
        stderr(&corrupt)
    );
    let mut offline = env.command(&user_bin(&env).join("amplihack"));
    offline
        .args(["update"])
        .env("PATH", USER_PATH)
        .env("AMPLIHACK_RELEASES_URL", "http://127.0.0.1:9/releases");
    let (offline, _) = run_with_timeout(offline, b"", Duration::from_secs(60));
    assert_eq!(offline.status.code(), Some(1));
    assert!(
        stderr(&offline).contains("cannot download"),
        "{}",
        stderr(&offline)
    );
    for name in ["amplihack", "amplihack-hooks"] {
        assert_eq!(
            reported(&user_bin(&env).join(name)),
            format!("{name} 0.1.1")
        );
    }
    hooks_deny_no_verify(&env);
    let leftovers: Vec<_> = std::fs::read_dir(user_bin(&env))
        .expect("bin")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "staging left behind: {leftovers:?}");
}

/// The release site `install.sh` downloads from by default is the one `amplihack update` uses:
/// the repository's releases (Cargo.toml's `repository`, the one place it is written).
#[test]
fn install_sh_and_update_default_to_the_same_releases() {
    let script = std::fs::read_to_string(repo_root().join("install.sh")).expect("install.sh");
    let line = script
        .lines()
        .find(|l| l.starts_with("DEFAULT_RELEASES_URL="))
        .expect("a DEFAULT_RELEASES_URL line");
    assert_eq!(
        line,
        format!(
            "DEFAULT_RELEASES_URL=\"{}/releases\"",
            env!("CARGO_PKG_REPOSITORY")
        )
    );
}
