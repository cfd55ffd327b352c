//! `amplihack install` when the file system fights back: a full disk, a read-only or foreign-owned
//! `~/.claude`, a settings file that links into a read-only directory, a directory or a symlink
//! loop where the file should be. Each time the settings file keeps its bytes, nothing of ours is
//! left beside it (no backup, temporary or lock sidecar), and one error line names the settings
//! file, the cause and the fix.
//!
//! The disk and permission faults need a mount namespace and a user namespace in which amplihack
//! is not the owner of `~/.claude` (`unshare --user --map-root-user --mount`, as an unprivileged
//! user gets on most Linux systems). Where `unshare` is refused those cases say so and pass.

use crate::support;

use std::path::PathBuf;
use std::process::Command;

use support::TestEnv;

/// A user's settings worth keeping: 40 KiB of their own hooks and permissions.
fn seed(env: &TestEnv) -> PathBuf {
    let allow: Vec<String> = (0..800).map(|i| format!("Bash(tool-{i}:*)")).collect();
    let settings = serde_json::json!({
        "permissions": {"allow": allow},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}
    });
    let path = env.root().join("seed.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&settings).unwrap_or_default(),
    )
    .expect("seed");
    path
}

struct Fault {
    name: &'static str,
    /// Shell run (in the namespaces) before `amplihack install`; `$CLAUDE` is `~/.claude`,
    /// `$SEED` the settings to start from, `$ROOT` a scratch directory.
    setup: &'static str,
    namespaced: bool,
    /// Words the error line must hold: the cause, then the fix.
    cause: &'static str,
    fix: &'static str,
    /// The settings file may be a symlink: compare what it points to.
    target: &'static str,
}

const FAULTS: &[Fault] = &[
    Fault {
        name: "disk full",
        setup: r#"mount -t tmpfs -o size=160k tmpfs "$CLAUDE" && cp "$SEED" "$CLAUDE/settings.json" && (dd if=/dev/zero of="$CLAUDE/filler" bs=4k 2>/dev/null || true)"#,
        namespaced: true,
        cause: "No space left on device",
        fix: "free some space",
        target: "settings.json",
    },
    Fault {
        name: "read-only ~/.claude",
        setup: r#"mount -t tmpfs tmpfs "$CLAUDE" && cp "$SEED" "$CLAUDE/settings.json" && mount -o remount,ro "$CLAUDE""#,
        namespaced: true,
        cause: "Read-only file system",
        fix: "remount it read-write",
        target: "settings.json",
    },
    Fault {
        name: "settings linked into a read-only directory",
        setup: r#"mkdir -p "$ROOT/dotfiles" && mount -t tmpfs tmpfs "$ROOT/dotfiles" && cp "$SEED" "$ROOT/dotfiles/settings.json" && mount -o remount,ro "$ROOT/dotfiles" && ln -s "$ROOT/dotfiles/settings.json" "$CLAUDE/settings.json""#,
        namespaced: true,
        cause: "Read-only file system",
        // The fix names where the file really is.
        fix: "dotfiles is on a read-only file system: remount it read-write",
        target: "../dotfiles/settings.json",
    },
    Fault {
        name: "foreign-owned ~/.claude",
        // Owned by a user this namespace does not map: not ours to write, even as its root.
        setup: r#"true"#,
        namespaced: true,
        cause: "Permission denied",
        fix: "chown",
        target: "settings.json",
    },
    Fault {
        name: "a directory where the file should be",
        setup: r#"mkdir "$CLAUDE/settings.json" && cp "$SEED" "$CLAUDE/settings.json/kept""#,
        namespaced: false,
        cause: "Is a directory",
        fix: "move it aside",
        target: "settings.json/kept",
    },
    Fault {
        name: "a symlink loop where the file should be",
        setup: r#"ln -s settings.json "$CLAUDE/settings.json""#,
        namespaced: false,
        cause: "symbolic links",
        fix: "point it at a real file",
        target: "",
    },
];

/// Whether this machine lets us make the namespaces the namespaced cases need.
fn namespaces_available() -> bool {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn install_under_faults_keeps_the_settings_and_names_file_cause_and_fix() {
    let can_namespace = namespaces_available();
    for fault in FAULTS {
        if fault.namespaced && !can_namespace {
            eprintln!(
                "SKIPPED {}: `unshare --user --map-root-user --mount` is not permitted here",
                fault.name
            );
            continue;
        }
        let env = TestEnv::new();
        let seed = seed(&env);
        let claude = env.home.join(".claude");
        std::fs::create_dir_all(&claude).expect("claude dir");
        if fault.name == "foreign-owned ~/.claude" {
            std::fs::copy(&seed, claude.join("settings.json")).expect("copy");
            for path in [claude.clone(), claude.join("settings.json")] {
                std::os::unix::fs::chown(&path, Some(65534), Some(65534)).expect("chown");
            }
        }
        let out = env.root().join("out");
        std::fs::create_dir_all(&out).expect("out");
        // Inside the namespaces (the mounts vanish with them), record the state before and after.
        let script = format!(
            r#"set -e
{setup}
snapshot() {{ ls -A "$CLAUDE" > "$OUT/ls-$1"; cat "$CLAUDE/{target}" > "$OUT/bytes-$1" 2>/dev/null || echo none > "$OUT/bytes-$1"; }}
snapshot before
set +e
"$AMPLIHACK" install -y --host claude 2> "$OUT/stderr" > "$OUT/stdout"
echo $? > "$OUT/rc"
snapshot after
"#,
            setup = fault.setup,
            target = fault.target,
        );
        let mut command = if fault.namespaced {
            let mut c = Command::new("unshare");
            c.args(["--user", "--map-root-user", "--mount", "sh", "-c", &script]);
            c
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", &script]);
            c
        };
        let status = command
            .env("HOME", &env.home)
            .env_remove("XDG_STATE_HOME")
            .env("CLAUDE", &claude)
            .env("SEED", &seed)
            .env("ROOT", env.root())
            .env("OUT", &out)
            .env("AMPLIHACK", support::amplihack_bin())
            .status()
            .expect("run the fault script");
        assert!(status.success(), "{}: the setup failed", fault.name);
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
        let stderr = read("stderr");
        assert_ne!(
            read("rc").trim(),
            "0",
            "{}: install claimed success: {stderr}",
            fault.name
        );
        assert_eq!(
            read("bytes-before"),
            read("bytes-after"),
            "{}: the settings changed",
            fault.name
        );
        assert_eq!(
            read("ls-before"),
            read("ls-after"),
            "{}: something was left beside the settings (backup, temporary or lock)",
            fault.name
        );
        let settings = claude.join("settings.json");
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(&settings.display().to_string()))
            .collect();
        assert_eq!(
            lines.len(),
            1,
            "{}: one error line names the settings file: {stderr}",
            fault.name
        );
        for word in [fault.cause, fault.fix, "the file was not changed"] {
            assert!(
                lines[0].contains(word),
                "{}: {word:?} missing from: {}",
                fault.name,
                lines[0]
            );
        }
    }
}

/// A failure of the system, not the user's: uninstall cannot remove a binary (its directory is
/// read-only). It exits 3 (an internal failure, the documented code) with one line naming what
/// it could not do, the path and the system's cause, not 1 (a refusal the user can fix).
#[test]
fn a_removal_the_system_refuses_exits_3_with_the_path_and_its_cause() {
    if !namespaces_available() {
        eprintln!("SKIPPED: `unshare --user --map-root-user --mount` is not permitted here");
        return;
    }
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "-y", "--host", "claude"]);
    assert!(install.status.success(), "{}", support::stderr(&install));
    let bin = env.bin_dir();
    assert!(env.deployed_hooks().is_file(), "installed binaries");
    let out = env.root().join("out");
    std::fs::create_dir_all(&out).expect("out");
    let script = r#"set -e
mount --bind "$BIN" "$BIN" && mount -o remount,bind,ro "$BIN"
set +e
"$AMPLIHACK" uninstall -y --host claude 2> "$OUT/stderr" > "$OUT/stdout"
echo $? > "$OUT/rc"
"#;
    let status = env
        .command(std::path::Path::new("unshare"))
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .env("AMPLIHACK_BIN_DIR", &bin)
        .env("BIN", &bin)
        .env("OUT", &out)
        .env("AMPLIHACK", support::amplihack_bin())
        .status()
        .expect("run the fault script");
    assert!(status.success(), "the setup failed");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
    let stderr = read("stderr");
    assert_eq!(read("rc").trim(), "3", "{stderr}");
    let binary = bin.join("amplihack-hooks");
    let binary = binary.display().to_string();
    let line = stderr
        .lines()
        .find(|l| l.contains("could not remove"))
        .unwrap_or_else(|| panic!("no line says what failed: {stderr}"));
    assert!(
        line.contains(&binary) || line.contains(&bin.join("amplihack").display().to_string()),
        "{line}"
    );
    assert!(line.contains("Read-only file system"), "{line}");
}
