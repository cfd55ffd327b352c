//! Hostile-repository cases: amplihack's helpers and installers never run the repository's code (findings 5, 6, 13, 15, 17, 19, 20).

use std::path::Path;

use serde_json::json;

use super::harness::{bash_event, changed, home_snapshot, python_payload, ran};
use crate::support::{TestEnv, one_group, stderr, stdout};

/// Plants Python modules in the project that record they ran when imported.
fn plant_modules(env: &TestEnv, modules: &[&str]) {
    for module in modules {
        let file = if module.ends_with('/') {
            env.project.join(module).join("__init__.py")
        } else {
            env.project.join(format!("{module}.py"))
        };
        env.write(&file, &python_payload(env, &format!("repo {module} ran")));
    }
}

/// Finding 5: amplihack's Python helpers (the `http` POST under Amplifier, the AMCP function
/// shim) run in the project directory, isolated: a repository's modules shadowing the standard
/// library never run, while the user's own (trusted by definition) handlers still fire.
#[test]
fn python_helpers_never_import_the_repository_modules() {
    let shadows: &[(&str, &[&str])] = &[
        (
            "the http helper's imports",
            &["json", "re", "os", "urllib/"],
        ),
        (
            "the shim's imports",
            &["asyncio", "importlib/", "inspect", "site"],
        ),
        (
            "what a handler imports",
            &["posixpath", "string", "textwrap", "enum", "typing"],
        ),
    ];
    for (repo, modules) in shadows {
        // A user-level http handler, run under Amplifier with the app's Python.
        let stub = crate::support::http_stub::HttpStub::start(vec![("200 OK", "")]);
        let env = TestEnv::new();
        plant_modules(&env, modules);
        env.plugin(
            &env.user_hooks_dir(),
            "notify",
            &one_group(
                "PreToolUse",
                Some("Bash"),
                vec![json!({"type": "http", "url": stub.url})],
            ),
        );
        let before = home_snapshot(&env);
        let (out, _) = env.run_hooks(
            &["--host", "amplifier", "pre-tool-use"],
            &bash_event(&env, "ls"),
            &[("AMPLIHACK_PYTHON", "python3")],
        );
        assert_eq!(
            stub.received().len(),
            1,
            "{repo}: the POST was made: {}",
            stderr(&out)
        );
        assert_eq!(ran(&env), Vec::<String>::new(), "{repo}: http helper");
        assert_eq!(
            changed(&before, &home_snapshot(&env)),
            Vec::<std::path::PathBuf>::new()
        );
        assert_no_bytecode(&env.project, repo);

        // A user-level AMCP function handler, under Claude Code: the module it names (in the
        // project, as AMCP resolves it) imports the standard library, which must stay the real one.
        let env = TestEnv::new();
        plant_modules(&env, modules);
        let fired = env.root().join("fired");
        env.write(&env.project.join("myhooks/__init__.py"), "");
        env.write(
            &env.project.join("myhooks/handlers.py"),
            &format!(
                "import json, re, inspect, os, posixpath, string, textwrap, enum, typing, urllib.parse\n\
                 def check(data):\n    open({:?}, 'a').write(data['tool_name'] + ' ' + json.__file__ + '\\n')\n    return {{}}\n",
                fired.display().to_string()
            ),
        );
        env.write(
            &env.home.join(".config/amcp/hooks.toml"),
            "[[hooks.PreToolUse.handlers]]\nmatcher = \"*\"\ntype = \"python\"\nfunction = \"myhooks.handlers.check\"\n",
        );
        let before = home_snapshot(&env);
        let (out, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
        let fired = std::fs::read_to_string(&fired).unwrap_or_default();
        assert!(
            fired.starts_with("bash ") && !fired.contains(&*env.project.to_string_lossy()),
            "{repo}: the user's function ran with the real json: {fired:?} {} {}",
            stdout(&out),
            stderr(&out)
        );
        assert_eq!(ran(&env), Vec::<String>::new(), "{repo}: AMCP shim");
        assert_eq!(
            changed(&before, &home_snapshot(&env)),
            Vec::<std::path::PathBuf>::new()
        );
        assert_no_bytecode(&env.project, repo);
    }
}

/// `-B`: no `__pycache__` is written into the project.
fn assert_no_bytecode(project: &Path, repo: &str) {
    let mut found = Vec::new();
    let mut dirs = vec![project.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.ends_with("__pycache__") {
                found.push(path);
            } else if path.is_dir() {
                dirs.push(path);
            }
        }
    }
    assert!(
        found.is_empty(),
        "{repo}: bytecode written into the project: {found:?}"
    );
}

/// A cached `.pyc` committed next to the module a user's AMCP handler names (its header matching
/// the source's size and mtime, as an attacker can make it) is not what runs: the source is.
#[test]
fn the_amcp_shim_runs_source_never_a_committed_pyc() {
    let env = TestEnv::new();
    let fired = env.root().join("fired");
    let module = env.project.join("myhooks/handlers.py");
    env.write(&env.project.join("myhooks/__init__.py"), "");
    let benign = format!(
        "def check(data):\n    open({:?}, 'a').write('source\\n')\n    return {{}}\n",
        fired.display().to_string()
    );
    // The same length as the benign source, so the `.pyc` header matches it.
    let evil = python_payload(&env, "repo pyc ran");
    let evil = format!("{evil}def check(data):\n    return {{}}\n");
    let evil = format!("{evil:<width$}", width = benign.len().max(evil.len()));
    let benign = format!("{benign:<width$}", width = evil.len());
    env.write(&module, &evil);
    let compiled = std::process::Command::new("python3")
        .args([
            "-c",
            "import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True)",
        ])
        .arg(&module)
        .status()
        .expect("python3");
    assert!(compiled.success());
    let mtime = std::fs::metadata(&module)
        .expect("meta")
        .modified()
        .expect("mtime");
    env.write(&module, &benign);
    std::fs::File::options()
        .write(true)
        .open(&module)
        .and_then(|f| f.set_modified(mtime))
        .expect("mtime");
    env.write(
        &env.home.join(".config/amcp/hooks.toml"),
        "[[hooks.PreToolUse.handlers]]\nmatcher = \"*\"\ntype = \"python\"\nfunction = \"myhooks.handlers.check\"\n",
    );
    let (out, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(
        std::fs::read_to_string(&fired).unwrap_or_default(),
        "source\n",
        "{}",
        stderr(&out)
    );
    assert_eq!(ran(&env), Vec::<String>::new());
}

/// A repository shaped like a clone: `Cargo.toml` and an executable `packaging/build` that
/// records it ran and offers a fake `amplihack` that records it too. `own`: its `Cargo.toml` is
/// amplihack's (the root package and the hooks binary), else another project's.
fn plant_fake_clone(env: &TestEnv, dir: &Path, what: &str, own: bool) {
    let manifest = if own {
        "[package]\nname = \"amplihack\"\n\n[[bin]]\nname = \"amplihack-hooks\"\npath = \"bins/amplihack-hooks/main.rs\"\n"
    } else {
        "[package]\nname = \"evil\"\n\n[[bin]]\nname = \"evil-hooks\"\n"
    };
    env.write(&dir.join("Cargo.toml"), manifest);
    let bin = dir.join("fake-bin");
    env.script(
        &bin.join("amplihack"),
        &format!(
            "{}\necho \"$@\" >> '{}'",
            super::harness::payload(env, &format!("{what}-amplihack")),
            env.root().join("fake-amplihack-args").display()
        ),
    );
    env.script(
        &dir.join("packaging/build"),
        &format!(
            "{}\necho '{}'",
            super::harness::payload(env, &format!("{what}-build")),
            bin.display()
        ),
    );
}

/// Finding 6: `curl … | sh` (and `| sh -s -- --scope project`, which the README has run inside a
/// project) never runs the current directory's `packaging/build`, whatever its shape; run as a
/// file of a clone, install.sh builds that clone (its own directory, not the current one).
#[test]
fn install_sh_piped_never_builds_the_current_directory() {
    let script = crate::support::repo_root().join("install.sh");
    let invocations: &[(&str, &[&str])] = &[
        ("curl | sh", &["-s"]),
        (
            "curl | sh -s -- --scope project",
            &["-s", "--", "--scope", "project"],
        ),
    ];
    for (how, args) in invocations {
        let env = TestEnv::new();
        plant_fake_clone(&env, &env.project, "repo", true);
        // A file named like the script in the repository changes nothing either.
        env.script(
            &env.project.join("install.sh"),
            &super::harness::payload(&env, "repo-install.sh"),
        );
        let before = home_snapshot(&env);
        let mut sh = env.command(Path::new("sh"));
        sh.args(*args)
            .env("AMPLIHACK_RELEASES_URL", "http://127.0.0.1:1");
        let (out, took) = crate::support::run_with_timeout(
            sh,
            &std::fs::read(&script).expect("install.sh"),
            std::time::Duration::from_secs(60),
        );
        assert_eq!(ran(&env), Vec::<String>::new(), "{how}: {}", stderr(&out));
        assert!(!out.status.success(), "{how}: the download fails");
        assert!(
            stderr(&out).contains("could not download"),
            "{how}: {}",
            stderr(&out)
        );
        assert!(took < std::time::Duration::from_secs(30), "{how}: {took:?}");
        assert_eq!(
            changed(&before, &home_snapshot(&env)),
            Vec::<std::path::PathBuf>::new()
        );
    }

    // Saved into a repository that is not amplihack's and run there (`curl -fsSLO
    // .../install.sh && sh install.sh`, the read-it-first way): a download, never its build.
    let env = TestEnv::new();
    plant_fake_clone(&env, &env.project, "repo", false);
    std::fs::copy(&script, env.project.join("install.sh")).expect("copy");
    for how in [&["install.sh"][..], &["./install.sh", "--scope", "project"]] {
        let mut sh = env.command(Path::new("sh"));
        sh.args(how)
            .current_dir(&env.project)
            .env("AMPLIHACK_RELEASES_URL", "http://127.0.0.1:1");
        let (out, _) =
            crate::support::run_with_timeout(sh, b"", std::time::Duration::from_secs(60));
        assert_eq!(ran(&env), Vec::<String>::new(), "{how:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("could not download"),
            "{how:?}: {}",
            stderr(&out)
        );
    }

    // Run as a file of amplihack's clone, from inside another such repository: the clone is built.
    let env = TestEnv::new();
    plant_fake_clone(&env, &env.project, "repo", true);
    let clone = env.root().join("clone");
    plant_fake_clone(&env, &clone, "clone", true);
    std::fs::copy(&script, clone.join("install.sh")).expect("copy");
    let mut sh = env.command(Path::new("sh"));
    sh.arg(clone.join("install.sh"))
        .args(["--scope", "project"]);
    let (out, _) = crate::support::run_with_timeout(sh, b"", std::time::Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ran(&env), ["clone-build", "clone-amplihack"]);
    assert_eq!(
        std::fs::read_to_string(env.root().join("fake-amplihack-args")).unwrap_or_default(),
        "install --scope project\n"
    );
}

/// This machine's release target, as archives are named.
fn release_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        _ => "aarch64-apple-darwin",
    }
}

/// Finding 20: `amplihack update` fetches over HTTPS only (plain http:// for a loopback site, as
/// the tests' own), and a manifest's asset `name` is a plain file name: anything else is refused
/// with the reason before a byte is written.
#[test]
fn update_refuses_plain_http_and_asset_names_that_are_paths() {
    let env = TestEnv::new();
    let before = home_snapshot(&env);
    for (url, how) in [
        (
            "http://releases.example/releases",
            "plain http to another host",
        ),
        (
            "http://127.0.0.1:1@releases.example/releases",
            "a loopback user@ in front of another host",
        ),
        ("ftp://127.0.0.1/releases", "another scheme"),
    ] {
        let mut update = env.amplihack(&["update", "--check"]);
        update.env("AMPLIHACK_RELEASES_URL", url);
        let (out, took) =
            crate::support::run_with_timeout(update, b"", std::time::Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(1), "{how}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("AMPLIHACK_RELEASES_URL") && stderr(&out).contains("HTTPS only"),
            "{how}: {}",
            stderr(&out)
        );
        assert!(
            took < std::time::Duration::from_secs(10),
            "{how}: no network: {took:?}"
        );
        // install.sh says the same.
        let mut sh = env.command(Path::new("sh"));
        sh.arg("-s").env("AMPLIHACK_RELEASES_URL", url);
        let script =
            std::fs::read(crate::support::repo_root().join("install.sh")).expect("install.sh");
        let (out, _) =
            crate::support::run_with_timeout(sh, &script, std::time::Duration::from_secs(60));
        assert!(
            !out.status.success() && stderr(&out).contains("AMPLIHACK_RELEASES_URL is"),
            "{how}: {}",
            stderr(&out)
        );
    }

    for name in [
        "/tmp/amplihack.tar.gz",
        "../amplihack.tar.gz",
        "x/../../amplihack.tar.gz",
        "..",
    ] {
        let site = env.root().join("site");
        let manifest = json!({"version": "99.0.0", "artifacts": [
            {"name": name, "target": release_target(), "sha256": "0".repeat(64)}]});
        env.write(
            &site.join("v99.0.0/dist-manifest.json"),
            &manifest.to_string(),
        );
        let releases = crate::support::releases::Releases::serve(&site, "99.0.0");
        let mut update = env.amplihack(&["update"]);
        update.env("AMPLIHACK_RELEASES_URL", &releases.url);
        let (out, _) =
            crate::support::run_with_timeout(update, b"", std::time::Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("not a plain file name") && stderr(&out).contains(name),
            "{name}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        changed(&before, &home_snapshot(&env)),
        Vec::<std::path::PathBuf>::new()
    );
}

/// Findings 17 and 19: the user's settings file as a FIFO, a hard link, or a symlink into a
/// dotfiles repository. A FIFO is refused at once naming the file (never waited on); a hard link
/// keeps its other name up to date; a symlink's target directory gets nothing but the new bytes
/// (the backup and the lock sidecar stay beside the link, in `~/.claude`).
#[test]
fn unusual_settings_files_are_refused_or_kept_as_they_are() {
    use std::os::unix::fs::MetadataExt;
    // A FIFO where a host's settings file should be: install refuses within seconds, naming it;
    // doctor and uninstall do not wait on it either; nothing is written beside it.
    let settings_files = |env: &TestEnv| {
        [
            ("claude", env.claude_settings_path()),
            ("amplifier", env.home.join(".amplifier/settings.yaml")),
        ]
    };
    for host in ["claude", "amplifier"] {
        let env = TestEnv::new();
        let settings = settings_files(&env)
            .into_iter()
            .find(|(h, _)| *h == host)
            .map(|(_, p)| p)
            .expect("host");
        std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
        let status = std::process::Command::new("mkfifo")
            .arg(&settings)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let before = home_snapshot(&env);
        for args in [
            &["install", "--yes", "--host", host][..],
            &["doctor"],
            &["uninstall", "--yes"],
        ] {
            let (out, took) = crate::support::run_with_timeout(
                env.amplihack(args),
                b"",
                std::time::Duration::from_secs(60),
            );
            assert!(
                took < std::time::Duration::from_secs(20),
                "{host} {args:?}: no hang: {took:?}"
            );
            if args[0] == "install" {
                assert!(!out.status.success(), "{}", stdout(&out));
                assert!(
                    stderr(&out).contains(&*settings.to_string_lossy())
                        && stderr(&out).contains("FIFO"),
                    "{host}: {}",
                    stderr(&out)
                );
            }
        }
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(
            &std::fs::symlink_metadata(&settings)
                .expect("meta")
                .file_type()
        ));
        let sidecars: Vec<_> = changed(&before, &home_snapshot(&env))
            .into_iter()
            .filter(|p| p.starts_with(settings.parent().expect("dir")))
            .collect();
        assert_eq!(sidecars, Vec::<std::path::PathBuf>::new(), "{host}");
    }

    // A hard link: both names see the registration.
    let env = TestEnv::new();
    let settings = env.claude_settings_path();
    let dotfiles = env.root().join("dotfiles/claude-settings.json");
    env.write(&dotfiles, "{\"model\": \"sonnet\"}\n");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    std::fs::hard_link(&dotfiles, &settings).expect("hard link");
    let out = env.run_amplihack(&["install", "--yes", "--host", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&settings).expect("meta").nlink(), 2);
    let text = std::fs::read_to_string(&dotfiles).expect("dotfiles");
    assert!(
        text.contains("amplihack-hooks") && text.contains("sonnet"),
        "{text}"
    );

    // A symlink into a dotfiles repository: nothing of ours lands there.
    let env = TestEnv::new();
    let settings = env.claude_settings_path();
    let dotfiles = env.root().join("dotfiles/claude-settings.json");
    env.write(&dotfiles, "{\"model\": \"sonnet\"}\n");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    std::os::unix::fs::symlink(&dotfiles, &settings).expect("symlink");
    let out = env.run_amplihack(&["install", "--yes", "--host", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let in_dotfiles: Vec<_> = std::fs::read_dir(dotfiles.parent().expect("dir"))
        .expect("dotfiles")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(in_dotfiles, ["claude-settings.json"]);
    assert!(
        std::fs::read_to_string(&dotfiles)
            .expect("dotfiles")
            .contains("amplihack-hooks")
    );
    assert_eq!(
        env.backups_of(&settings).len(),
        1,
        "the backup is beside the link"
    );
}

/// What a command writes for the project path.
type Expected = fn(&str) -> String;

/// Finding 15: a repository cloned under a name that is a command (``q`touch$IFS.INJECTED`q``,
/// `q$(touch .INJECTED)q`) or that simply has a space: a user-level plugin's `${CLAUDE_PROJECT_DIR}`
/// in backticks, in `"$(…)"` and in a heredoc runs nothing of the name and gets the path exactly.
#[test]
fn a_project_directory_name_never_runs_through_a_placeholder() {
    // (command writing to the mark, what it writes for the project path)
    let contexts: &[(&str, Expected)] = &[
        ("echo G:`echo \"${CLAUDE_PROJECT_DIR}\"`", |p| {
            format!("G:{p}")
        }),
        ("echo U:`echo ${CLAUDE_PROJECT_DIR}`", |p| format!("U:{p}")),
        (
            "printf '%s\\n' \"$(printf '%s' \"${CLAUDE_PROJECT_DIR}\")\"",
            |p| p.to_string(),
        ),
        ("cat <<EOF\n${CLAUDE_PROJECT_DIR}\nEOF", |p| p.to_string()),
        ("printf '%s\\n' ${CLAUDE_PROJECT_DIR}", |p| p.to_string()),
    ];
    for name in [
        "q`touch$IFS.INJECTED`q",
        "q$(touch .INJECTED)q",
        "My Project",
    ] {
        let env = TestEnv::new();
        let project = env.root().join(name);
        std::fs::create_dir_all(&project).expect("project");
        let mark = env.root().join("mark");
        let handlers: Vec<_> = contexts
            .iter()
            .map(|(command, _)| {
                crate::support::command(&format!("{{ {command}\n}} >> '{}'", mark.display()))
            })
            .collect();
        env.plugin(
            &env.user_hooks_dir(),
            "paths",
            &one_group("PreToolUse", Some("Bash"), handlers),
        );
        let mut event = bash_event(&env, "ls");
        event["cwd"] = json!(project);
        let value = project.to_string_lossy().into_owned();
        let (out, _) = env.run_hooks(
            &["pre-tool-use"],
            &event,
            &[("CLAUDE_PROJECT_DIR", value.as_str())],
        );
        let injected: Vec<_> = [env.root(), &env.project, &project, &env.home]
            .iter()
            .map(|d| d.join(".INJECTED"))
            .filter(|f| f.exists())
            .collect();
        assert_eq!(
            injected,
            Vec::<std::path::PathBuf>::new(),
            "{name:?}: {}",
            stderr(&out)
        );
        let mut got: Vec<String> = std::fs::read_to_string(&mark)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        let mut want: Vec<String> = contexts.iter().map(|(_, f)| f(&value)).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name:?}: {}", stderr(&out));
    }
}

/// A user-level AMCP function naming the user's own package (on `PYTHONPATH`, outside the
/// project): a repository that ships a package of the same name does not replace it.
#[test]
fn the_amcp_shim_prefers_the_users_installed_package() {
    let env = TestEnv::new();
    let fired = env.root().join("fired");
    let site = env.root().join("user-python");
    env.write(&site.join("userpkg/__init__.py"), "");
    env.write(
        &site.join("userpkg/hooks.py"),
        &format!(
            "def check(data):\n    open({:?}, 'a').write('user package\\n')\n    return {{}}\n",
            fired.display().to_string()
        ),
    );
    env.write(
        &env.project.join("userpkg/__init__.py"),
        &python_payload(&env, "repo userpkg ran"),
    );
    env.write(
        &env.project.join("userpkg/hooks.py"),
        &format!(
            "{}def check(data):\n    return {{}}\n",
            python_payload(&env, "repo userpkg.hooks ran")
        ),
    );
    env.write(
        &env.home.join(".config/amcp/hooks.toml"),
        "[[hooks.PreToolUse.handlers]]\nmatcher = \"*\"\ntype = \"python\"\nfunction = \"userpkg.hooks.check\"\n",
    );
    let site = site.to_string_lossy().into_owned();
    let (out, _) = env.run_hooks(
        &["pre-tool-use"],
        &bash_event(&env, "ls"),
        &[("PYTHONPATH", site.as_str())],
    );
    assert_eq!(
        std::fs::read_to_string(&fired).unwrap_or_default(),
        "user package\n",
        "{}",
        stderr(&out)
    );
    assert_eq!(ran(&env), Vec::<String>::new());
}
