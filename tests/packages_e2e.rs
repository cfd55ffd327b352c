//! The packages agent users install amplihack with, each installed from the file
//! `packaging/build-release` wrote, offline, into a scratch prefix, environment or cargo root:
//!
//! * npm: `npm install -g` of `amplihack` and this platform's `@amplihack/<platform>`, and a
//!   project's `npm install` run through `npx`;
//! * PyPI: the wheel, `pip install --no-index` into a fresh virtual environment (uv tool, pipx
//!   and uvx install the same wheel);
//! * crates: `cargo install` of the packaged `amplihack` crate, its workspace dependencies taken
//!   from the packaged crates too (not the source tree).
//!
//! Each then runs `amplihack --version`, `install` (a scratch home) and `doctor`, checks that the
//! hosts run the package's native `amplihack-hooks` by its absolute path (no node or Python in
//! between) and that it answers, and that `amplihack update` names the package manager's own
//! command, exits 1 and changes nothing; `uninstall` leaves the package's binaries to it.
//!
//! One release is built per test run (`AMPLIHACK_CARGO_PROFILE=dev` makes it quick).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TestEnv, hook_commands, repo_root, run_with_timeout, stderr, stdout};

/// The workspace's version: the crates are written only for it.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The one release the package tests share, built once per test run.
fn release() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = repo_root().join("target/release-test/packages");
        let _ = std::fs::remove_dir_all(&out);
        let started = Instant::now();
        let mut command = Command::new(repo_root().join("packaging/build-release"));
        command
            .args(["--version", VERSION, "--out"])
            .arg(&out)
            .env("CARGO_TARGET_DIR", repo_root().join("target/release-test"))
            // The packages' shape and their installs are under test, not the code generation:
            // the quicker `release` profile, shared with tests/release_e2e.rs's builds.
            .env(
                "AMPLIHACK_CARGO_PROFILE",
                std::env::var("AMPLIHACK_CARGO_PROFILE").unwrap_or_else(|_| "release".into()),
            );
        let (output, _) = run_with_timeout(command, b"", Duration::from_secs(1_500));
        assert!(
            output.status.success(),
            "build-release: {}",
            stderr(&output)
        );
        eprintln!("packages_e2e: release built in {:?}", started.elapsed());
        out
    })
}

fn npm_platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x64",
        ("linux", "aarch64") => "linux-arm64",
        ("macos", "x86_64") => "darwin-x64",
        _ => "darwin-arm64",
    }
}

fn target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        _ => "aarch64-apple-darwin",
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(mut command: Command, what: &str) -> Output {
    let (output, _) = run_with_timeout(
        {
            command.env("AMPLIHACK_RELEASES_URL", "http://127.0.0.1:9/releases");
            command
        },
        b"",
        Duration::from_secs(900),
    );
    assert!(
        output.status.success(),
        "{what}: {}\n{}",
        stdout(&output),
        stderr(&output)
    );
    output
}

/// A native executable (ELF or Mach-O), not a script.
fn is_native(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes.starts_with(b"\x7fELF")
        || bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || bytes.starts_with(&[0xca, 0xfe, 0xba, 0xbe])
}

/// The size and modification time of each of `files`, to see that nothing replaced them.
fn stamps(files: &[PathBuf]) -> Vec<(u64, std::time::SystemTime)> {
    files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (m.len(), m.modified().expect("mtime"))
        })
        .collect()
}

/// What every package must give: `amplihack` runs (as the user calls it: `launcher`, with
/// `extra_path` first on PATH), `install` registers `package_bin`'s native amplihack-hooks in
/// place, `doctor` is content, the hook answers, and `update` sends the user to `update_command`.
fn installed_package_works(
    env: &TestEnv,
    launcher: &Path,
    extra_path: &Path,
    package_bin: &Path,
    update_command: &str,
) {
    let package_bin = package_bin.canonicalize().expect("package bin dir");
    let hooks = package_bin.join("amplihack-hooks");
    assert!(is_native(&hooks), "{} is not native", hooks.display());
    let amplihack = |args: &[&str]| {
        let mut command = env.command(launcher);
        let mut path = vec![extra_path.to_path_buf()];
        path.extend(std::env::split_paths(&env.path()));
        command
            .args(args)
            .env("PATH", std::env::join_paths(path).expect("PATH"));
        command
    };

    let version = run(amplihack(&["--version"]), "amplihack --version");
    assert_eq!(stdout(&version).trim(), format!("amplihack {VERSION}"));

    let install = run(amplihack(&["install", "--yes"]), "amplihack install");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home.join(".claude/settings.json")).expect("settings"),
    )
    .expect("json");
    let commands = hook_commands(&settings);
    assert!(!commands.is_empty(), "{settings}");
    for (event, command) in &commands {
        assert!(
            command.contains(&hooks.display().to_string()),
            "{event}: {command} is not {}\n{}",
            hooks.display(),
            stdout(&install)
        );
    }
    assert!(
        !env.home.join(".local/bin/amplihack-hooks").exists(),
        "the package's binaries are registered in place, not copied"
    );
    assert!(
        stdout(&install).contains(update_command),
        "{}",
        stdout(&install)
    );
    run(amplihack(&["doctor"]), "amplihack doctor");

    // The registered hook answers, natively.
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "p", "cwd": env.project,
        "tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}});
    let mut command = env.command(&hooks);
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

    // `update` leaves the package manager's files to it.
    let binaries = [package_bin.join("amplihack"), hooks.clone()];
    let before = stamps(&binaries);
    for args in [&["update"][..], &["update", "--rollback"]] {
        let (output, _) = run_with_timeout(amplihack(args), b"", Duration::from_secs(60));
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(&format!("`{update_command}`")),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert_eq!(
        stamps(&binaries),
        before,
        "update changed the package's files"
    );

    // `uninstall` takes the registrations and leaves the binaries to the package manager.
    run(amplihack(&["uninstall", "--yes"]), "amplihack uninstall");
    assert!(
        binaries.iter().all(|b| b.is_file()),
        "uninstall removed them"
    );
}

fn file_in(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    assert!(path.is_file(), "build-release wrote no {}", path.display());
    path
}

#[test]
fn npm_package_runs_the_native_binaries() {
    if !have("npm") {
        eprintln!("SKIPPED npm is not installed");
        return;
    }
    let release = release();
    let main = file_in(&release.join("npm"), &format!("amplihack-{VERSION}.tgz"));
    let platform = file_in(
        &release.join("npm"),
        &format!("amplihack-{}-{VERSION}.tgz", npm_platform()),
    );
    let env = TestEnv::new();
    let npm = |args: &[&std::ffi::OsStr], dir: &Path| {
        let mut command = env.command(Path::new("npm"));
        command.args(args).args([
            "--offline",
            "--no-audit",
            "--no-fund",
            "--update-notifier=false",
            "--loglevel=error",
        ]);
        command.arg(&main).arg(&platform).current_dir(dir);
        command
    };

    // npm install -g, into a scratch prefix.
    let prefix = env.root().join("npm prefix");
    let started = Instant::now();
    let global = npm(
        &[
            "install".as_ref(),
            "-g".as_ref(),
            "--prefix".as_ref(),
            prefix.as_os_str(),
        ],
        &env.project,
    );
    run(global, "npm install -g");
    eprintln!("packages_e2e: npm install -g took {:?}", started.elapsed());
    let package_bin = prefix
        .join("lib/node_modules/@amplihack")
        .join(npm_platform())
        .join("bin");
    let launcher = prefix.join("bin/amplihack");
    assert!(
        std::fs::read_to_string(&launcher)
            .unwrap_or_default()
            .starts_with("#!/usr/bin/env node"),
        "npm's amplihack is the launcher"
    );
    installed_package_works(
        &env,
        &launcher,
        &prefix.join("bin"),
        &package_bin,
        "npm install -g amplihack@latest",
    );

    // A project's npm install, run through npx.
    let project = env.root().join("node project");
    std::fs::create_dir_all(&project).expect("mkdir");
    run(npm(&["install".as_ref()], &project), "npm install");
    let npx = |args: &[&str]| {
        let mut command = env.command(Path::new("npx"));
        command
            .args(["--offline", "--no-install", "amplihack"])
            .args(args)
            .current_dir(&project);
        command
    };
    let version = run(npx(&["--version"]), "npx amplihack --version");
    assert_eq!(stdout(&version).trim(), format!("amplihack {VERSION}"));
    let (update, _) = run_with_timeout(npx(&["update"]), b"", Duration::from_secs(60));
    assert_eq!(update.status.code(), Some(1), "{}", stderr(&update));
    let canonical = project.canonicalize().expect("project");
    assert!(
        stderr(&update).contains(&format!(
            "`npm install amplihack@latest (in {})`",
            canonical.display()
        )),
        "{}",
        stderr(&update)
    );
}

#[test]
fn wheel_installs_with_pip_and_runs_natively() {
    if !have("python3") {
        eprintln!("SKIPPED python3 is not installed");
        return;
    }
    let release = release();
    let tag = match target() {
        "x86_64-unknown-linux-gnu" => "manylinux_2_17_x86_64.manylinux2014_x86_64",
        "aarch64-unknown-linux-gnu" => "manylinux_2_17_aarch64.manylinux2014_aarch64",
        "x86_64-apple-darwin" => "macosx_10_12_x86_64",
        _ => "macosx_11_0_arm64",
    };
    let wheel = file_in(
        &release.join("pypi"),
        &format!("amplihack-{VERSION}-py3-none-{tag}.whl"),
    );
    let env = TestEnv::new();
    let venv = env.root().join("venv");
    let mut make = env.command(Path::new("python3"));
    make.args(["-m", "venv"]).arg(&venv);
    let (made, _) = run_with_timeout(make, b"", Duration::from_secs(120));
    if !made.status.success() {
        eprintln!(
            "SKIPPED python3 cannot make a virtual environment (python3-venv missing?): {}",
            stderr(&made)
        );
        return;
    }
    let mut pip = env.command(&venv.join("bin/python"));
    pip.args([
        "-m",
        "pip",
        "install",
        "--no-index",
        "--no-cache-dir",
        "--disable-pip-version-check",
    ])
    .arg(&wheel);
    run(pip, "pip install");
    let bin = venv.join("bin");
    assert!(
        is_native(&bin.join("amplihack")),
        "pip's amplihack is native"
    );
    let python = venv.canonicalize().expect("venv").join("bin/python");
    installed_package_works(
        &env,
        &bin.join("amplihack"),
        &bin,
        &bin,
        &format!("{} -m pip install --upgrade amplihack", python.display()),
    );
}

#[test]
fn cargo_installs_from_the_packaged_crates() {
    if !have("cargo") {
        eprintln!("SKIPPED cargo is not installed");
        return;
    }
    let release = release();
    let crates = release.join("crates");
    let env = TestEnv::new();
    // The packaged crates, unpacked: `amplihack` is installed from its own, and each workspace
    // dependency is patched to its packaged crate (offline, so nothing comes from crates.io
    // but the registry's dependencies, from this machine's cache).
    let unpacked = env.root().join("crates");
    std::fs::create_dir_all(&unpacked).expect("mkdir");
    let mut patches = Vec::new();
    // Every workspace crate but the root one, as Cargo.toml's `members` lists them.
    let manifest = std::fs::read_to_string(crate::support::repo_root().join("Cargo.toml"))
        .expect("Cargo.toml");
    let members: Vec<String> = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = ["))
        .expect("a members line")
        .split(['"', ',', ']', ' '])
        .filter(|m| !m.is_empty() && *m != ".")
        .map(str::to_string)
        .collect();
    assert!(members.contains(&"platform".to_string()), "{members:?}");
    for name in &members {
        let file = file_in(&crates, &format!("amplihack-{name}-{VERSION}.crate"));
        run(
            {
                let mut tar = Command::new("tar");
                tar.arg("-xzf").arg(&file).arg("-C").arg(&unpacked);
                tar
            },
            "unpack",
        );
        patches.push(format!(
            "patch.crates-io.amplihack-{name}.path={:?}",
            unpacked
                .join(format!("amplihack-{name}-{VERSION}"))
                .display()
                .to_string()
        ));
    }
    let root_crate = file_in(&crates, &format!("amplihack-{VERSION}.crate"));
    run(
        {
            let mut tar = Command::new("tar");
            tar.arg("-xzf").arg(&root_crate).arg("-C").arg(&unpacked);
            tar
        },
        "unpack",
    );
    let cargo_root = env.root().join("cargo root");
    let mut install = Command::new("cargo");
    install
        .args(["install", "--offline", "--path"])
        .arg(unpacked.join(format!("amplihack-{VERSION}")))
        .arg("--root")
        .arg(&cargo_root)
        .env(
            "CARGO_TARGET_DIR",
            repo_root().join("target/release-test/cargo-install"),
        )
        .env_remove("RUSTFLAGS");
    for patch in &patches {
        install.args(["--config", patch]);
    }
    // A cheap profile for quick runs of the packaging (as for build-release).
    if std::env::var("AMPLIHACK_CARGO_PROFILE").is_ok_and(|p| p == "dev") {
        install.arg("--debug");
    }
    let started = Instant::now();
    run(install, "cargo install");
    eprintln!("packages_e2e: cargo install took {:?}", started.elapsed());
    let bin = cargo_root.join("bin");
    installed_package_works(
        &env,
        &bin.join("amplihack"),
        &bin,
        &bin,
        "cargo install --locked amplihack",
    );
}

/// cargo-binstall's `pkg-url` and `bin-dir` name the archive build-release writes and the
/// binaries' place in it.
#[test]
fn binstall_metadata_points_at_the_release_archives() {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("Cargo.toml");
    let field = |key: &str| {
        manifest
            .lines()
            .skip_while(|l| l.trim() != "[package.metadata.binstall]")
            .find_map(|l| l.strip_prefix(&format!("{key} = ")))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| panic!("no {key} in [package.metadata.binstall]"))
    };
    let render = |template: String, bin: &str| {
        template
            .replace("{ repo }", "https://github.com/amplihack/amplihack-hooks")
            .replace("{ version }", VERSION)
            .replace("{ target }", target())
            .replace("{ bin }", bin)
            .replace("{ binary-ext }", "")
    };
    let archive = format!("amplihack-{}.tar.gz", target());
    assert_eq!(
        render(field("pkg-url"), ""),
        format!(
            "https://github.com/amplihack/amplihack-hooks/releases/download/v{VERSION}/{archive}"
        ),
        "the URL install.sh and update use"
    );
    assert_eq!(field("pkg-fmt"), "tgz");
    // What build-release's archive holds: amplihack-<target>/<bin> (release_e2e checks the listing).
    for bin in ["amplihack", "amplihack-hooks"] {
        assert_eq!(
            render(field("bin-dir"), bin),
            format!("amplihack-{}/{bin}", target())
        );
    }
}
