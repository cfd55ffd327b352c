//! Hostile-repository cases: what trust covers is exactly what runs (findings 2, 3, 7, 8, 11, 14,
//! 16, 21).
//!
//! One row per repository. Each row builds the repository (and does what the user did: trust it,
//! install their own plugin into it), then changes it as a `git pull` would; the table then makes
//! hook calls in it and checks that none of the repository's code ran, that nothing was written
//! outside amplihack's state, and that the user was told why in one clear line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{bash_event, changed, home_snapshot, link, payload, python_payload, ran};
use crate::support::{self, TestEnv, command, one_group, stderr, stdout};

struct Row {
    finding: &'static str,
    /// Builds the repository and does what the user did; returns what amplihack told them.
    build: fn(&TestEnv) -> String,
    /// What the user is told (in `build`'s output or the hook call's), in one line.
    told: fn(&TestEnv) -> String,
}

fn hooks_dir(env: &TestEnv) -> PathBuf {
    env.project_hooks_dir()
}

/// A plugin whose one PreToolUse handler runs `cmd`.
fn plugin(env: &TestEnv, dir: &Path, name: &str, cmd: &str) {
    env.plugin(
        dir,
        name,
        &one_group("PreToolUse", None, vec![command(cmd)]),
    );
}

/// `amplihack <args>` in the project; its stdout and stderr.
fn amplihack(env: &TestEnv, args: &[&str]) -> String {
    let output = env.run_amplihack(args);
    format!("{}{}", stdout(&output), stderr(&output))
}

/// `amplihack hooks trust`, which must succeed: the user reviewed what is there now.
fn trust(env: &TestEnv) -> String {
    let output = env.run_amplihack(&["hooks", "trust"]);
    assert!(output.status.success(), "trust: {}", stderr(&output));
    stdout(&output)
}

/// A `git pull` that changed a file, a second later (so its metadata moves too).
fn pull(env: &TestEnv, path: &Path, text: &str) {
    env.write(path, text);
}

/// A file's own payload, as a shell script.
fn evil_script(env: &TestEnv, what: &str) -> String {
    format!("#!/bin/sh\n{}\n", payload(env, what))
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            finding: "2: installing one's own plugin does not trust the repo's AMCP file",
            build: |env| {
                env.write(
                    &env.project.join(".amcp/hooks.toml"),
                    &format!(
                        "[[hooks.PreToolUse.handlers]]\ntype = \"command\"\ncommand = {:?}\n",
                        payload(env, "EVIL-amcp-from-repo")
                    ),
                );
                let mine = env.root().join("myplugin");
                env.write(
                    &mine.join("hooks.json"),
                    &one_group("PreToolUse", None, vec![command("true")]).to_string(),
                );
                amplihack(
                    env,
                    &[
                        "hooks",
                        "install",
                        &mine.display().to_string(),
                        "--name",
                        "mine",
                        "--level",
                        "project",
                    ],
                )
            },
            told: |_| "not trusted: the project's other hook files".into(),
        },
        Row {
            finding: "2: import-claude into a project does not trust the repo's hooks.yaml",
            build: |env| {
                env.write(
                    &hooks_dir(env).join("rules/hooks.yaml"),
                    &format!(
                        "hooks:\n  PreToolUse:\n    - type: command\n      command: {:?}\n",
                        payload(env, "EVIL-yaml-from-repo")
                    ),
                );
                let settings = env.root().join("claude-settings.json");
                env.write(
                    &settings,
                    &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}})
                        .to_string(),
                );
                amplihack(
                    env,
                    &[
                        "hooks",
                        "import-claude",
                        "--from",
                        &settings.display().to_string(),
                        "--level",
                        "project",
                    ],
                )
            },
            told: |_| "not trusted: the project's other hook files".into(),
        },
        Row {
            finding: "2: installing one's own plugin that names a repo file does not trust that file",
            build: |env| {
                env.write(
                    &env.project.join("tools/lint.sh"),
                    &evil_script(env, "EVIL-repo-lint-named-by-my-plugin"),
                );
                let mine = env.root().join("myplugin");
                env.write(
                    &mine.join("hooks.json"),
                    &one_group("PreToolUse", None, vec![command("sh tools/lint.sh")]).to_string(),
                );
                amplihack(
                    env,
                    &[
                        "hooks",
                        "install",
                        &mine.display().to_string(),
                        "--name",
                        "mine",
                        "--level",
                        "project",
                    ],
                )
            },
            told: |env| {
                format!(
                    "not trusted: the project's other hook files (1 file(s): {})",
                    env.project.join("tools/lint.sh").display()
                )
            },
        },
        Row {
            finding: "3: Claude Code started in a monorepo package runs the root's hashed tools/lint.sh",
            build: |env| started_below(env, "packages/web", "EVIL-package-script"),
            told: |_| "lint marks: [\"my-trusted-lint\"]".into(),
        },
        Row {
            finding: "3: a trusted parent-directory plugin runs its hashed tools/lint.sh, not a nested clone's",
            build: |env| started_below(env, "cloned", "EVIL-cloned-repo-script"),
            told: |_| "lint marks: [\"my-trusted-lint\"]".into(),
        },
        Row {
            finding: "7: a manifest's hooks path out of the plugin is refused",
            build: |env| {
                let plug = hooks_dir(env).join("ccplug/.claude-plugin/plugin.json");
                env.write(
                    &plug,
                    r#"{"name":"ccplug","hooks":"../../../config/hooks.json"}"#,
                );
                let config = env.project.join("config/hooks.json");
                env.write(
                    &config,
                    &one_group("PreToolUse", None, vec![command("true")]).to_string(),
                );
                let told = trust(env);
                pull(
                    env,
                    &config,
                    &one_group(
                        "PreToolUse",
                        None,
                        vec![command(&payload(env, "EVIL-new-command"))],
                    )
                    .to_string(),
                );
                told
            },
            told: |_| "leaves the plugin's directory (../../../config/hooks.json)".into(),
        },
        Row {
            finding: "7: an absolute manifest hooks path is refused",
            build: |env| {
                let config = env.root().join("world-writable/hooks.json");
                env.write(
                    &config,
                    &one_group(
                        "PreToolUse",
                        None,
                        vec![command(&payload(env, "EVIL-absolute"))],
                    )
                    .to_string(),
                );
                env.write(
                    &hooks_dir(env).join("ccplug/.claude-plugin/plugin.json"),
                    &json!({"name": "ccplug", "hooks": config}).to_string(),
                );
                trust(env)
            },
            told: |_| "is an absolute path".into(),
        },
        Row {
            finding: "8: the level's own hooks.json running ${CLAUDE_PLUGIN_ROOT}/scripts/check.sh",
            build: |env| {
                env.write(
                    &hooks_dir(env).join("hooks.json"),
                    &one_group(
                        "PreToolUse",
                        None,
                        vec![command("sh \"${CLAUDE_PLUGIN_ROOT}/scripts/check.sh\"")],
                    )
                    .to_string(),
                );
                let script = hooks_dir(env).join("scripts/check.sh");
                env.write(&script, "true\n");
                let told = trust(env);
                pull(env, &script, &evil_script(env, "EVIL-level-script"));
                told
            },
            told: |env| changed_line(env, ".amplifier/hooks/scripts/check.sh"),
        },
        Row {
            finding: "8: a symlinked directory inside the project is followed and hashed",
            build: |env| {
                plugin(
                    env,
                    &hooks_dir(env),
                    "lint",
                    "sh \"${CLAUDE_PLUGIN_ROOT}/lib/run.sh\"",
                );
                link(
                    Path::new("../../../tools/lintlib"),
                    &hooks_dir(env).join("lint/lib"),
                );
                let script = env.project.join("tools/lintlib/run.sh");
                env.write(&script, "true\n");
                let told = trust(env);
                pull(env, &script, &evil_script(env, "EVIL-through-dir-link"));
                told
            },
            told: |env| changed_line(env, ".amplifier/hooks/lint/lib/run.sh"),
        },
        Row {
            finding: "8: a symlinked directory out of the project is refused",
            build: |env| {
                plugin(
                    env,
                    &hooks_dir(env),
                    "lint",
                    "sh \"${CLAUDE_PLUGIN_ROOT}/lib/run.sh\"",
                );
                let outside = env.root().join("outside-lib");
                env.write(
                    &outside.join("run.sh"),
                    &evil_script(env, "EVIL-outside-link"),
                );
                link(&outside, &hooks_dir(env).join("lint/lib"));
                amplihack(env, &["hooks", "trust"])
            },
            told: |env| {
                format!(
                    "{}: resolves to {}, outside the project",
                    hooks_dir(env).join("lint/lib").display(),
                    env.root().join("outside-lib").display()
                )
            },
        },
        Row {
            finding: "8: ${CLAUDE_PLUGIN_ROOT}/../.. inside the project is hashed",
            build: |env| {
                plugin(
                    env,
                    &hooks_dir(env),
                    "up",
                    "sh \"${CLAUDE_PLUGIN_ROOT}/../../../tools/lintlib/run.sh\"",
                );
                let script = env.project.join("tools/lintlib/run.sh");
                env.write(&script, "true\n");
                let told = trust(env);
                pull(env, &script, &evil_script(env, "EVIL-dotdot"));
                told
            },
            told: |env| changed_line(env, "tools/lintlib/run.sh"),
        },
        Row {
            finding: "8: ${CLAUDE_PLUGIN_ROOT}/../.. out of the project is refused",
            build: |env| {
                plugin(
                    env,
                    &hooks_dir(env),
                    "up",
                    "sh \"${CLAUDE_PLUGIN_ROOT}/../../../../outside.sh\"",
                );
                env.write(
                    &env.root().join("outside.sh"),
                    &evil_script(env, "EVIL-escape"),
                );
                amplihack(env, &["hooks", "trust"])
            },
            told: |env| {
                format!(
                    "{}: is named by a hook command",
                    env.root().join("outside.sh").display()
                )
            },
        },
        Row {
            finding: "8: cd dir && sh x.sh hashes dir/x.sh",
            build: |env| {
                plugin(
                    env,
                    &hooks_dir(env),
                    "cdlint",
                    "cd tools/lintlib && sh run.sh",
                );
                let script = env.project.join("tools/lintlib/run.sh");
                env.write(&script, "true\n");
                let told = trust(env);
                pull(env, &script, &evil_script(env, "EVIL-after-cd"));
                told
            },
            told: |env| changed_line(env, "tools/lintlib/run.sh"),
        },
        Row {
            finding: "8: a plugin past 5,000 files is refused, not cut short",
            build: |env| {
                plugin(env, &hooks_dir(env), "aaa-node", "true");
                let modules = hooks_dir(env).join("aaa-node/node_modules");
                std::fs::create_dir_all(&modules).expect("mkdir");
                for i in 0..5_001 {
                    std::fs::write(modules.join(format!("{i}.js")), "").expect("write");
                }
                plugin(
                    env,
                    &hooks_dir(env),
                    "zzz",
                    "sh \"${CLAUDE_PLUGIN_ROOT}/run.sh\"",
                );
                env.write(
                    &hooks_dir(env).join("zzz/run.sh"),
                    &evil_script(env, "EVIL-past-cap"),
                );
                amplihack(env, &["hooks", "trust"])
            },
            told: |env| {
                format!(
                    "{}: holds more than 5000 files",
                    hooks_dir(env).join("aaa-node").display()
                )
            },
        },
        Row {
            finding: "8: a committed __pycache__ .pyc (unchecked-hash) is hashed",
            build: |env| {
                let dir = hooks_dir(env).join("py");
                plugin(
                    env,
                    &hooks_dir(env),
                    "py",
                    "python3 \"${CLAUDE_PLUGIN_ROOT}/main.py\"",
                );
                env.write(&dir.join("main.py"), "import helper\n");
                env.write(&dir.join("helper.py"), "x = 1\n");
                let told = trust(env);
                // The repository adds bytecode Python loads without checking it against the source.
                let evil = env.root().join("evil_helper.py");
                env.write(&evil, &python_payload(env, "EVIL-pyc"));
                let compile = format!(
                    "import importlib.util, py_compile\n\
                     py_compile.compile({:?}, cfile=importlib.util.cache_from_source({:?}), \
                     invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n",
                    evil.display().to_string(),
                    dir.join("helper.py").display().to_string()
                );
                let status = std::process::Command::new("python3")
                    .args(["-c", &compile])
                    .status()
                    .expect("python3");
                assert!(status.success());
                told
            },
            told: |env| {
                format!(
                    "changed since you trusted them ({}",
                    hooks_dir(env)
                        .join("py/__pycache__/helper.cpython-")
                        .display()
                )
            },
        },
        Row {
            finding: "8: an AMCP function's package __init__.py is hashed",
            build: |env| {
                env.write(
                    &env.project.join(".amcp/hooks.toml"),
                    "[[hooks.PreToolUse.handlers]]\ntype = \"python\"\nfunction = \"hookpkg.checks.pre\"\n",
                );
                env.write(&env.project.join("hookpkg/__init__.py"), "");
                env.write(
                    &env.project.join("hookpkg/checks.py"),
                    "def pre(event):\n    return None\n",
                );
                let told = trust(env);
                pull(
                    env,
                    &env.project.join("hookpkg/__init__.py"),
                    &python_payload(env, "EVIL-package-init"),
                );
                told
            },
            told: |env| changed_line(env, "hookpkg/__init__.py"),
        },
        Row {
            finding: "11: manifest hooks -> /dev/zero is refused at once",
            build: |env| {
                env.write(
                    &hooks_dir(env).join("z/.claude-plugin/plugin.json"),
                    r#"{"name":"z","hooks":"/dev/zero"}"#,
                );
                amplihack(env, &["hooks", "validate"])
            },
            told: |_| "is an absolute path (/dev/zero)".into(),
        },
        Row {
            finding: "11: a 300 MB hooks.json is refused without reading it",
            build: |env| {
                let file = hooks_dir(env).join("big/hooks.json");
                std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
                std::fs::File::create(&file)
                    .and_then(|f| f.set_len(300 << 20))
                    .expect("sparse file");
                amplihack(env, &["hooks", "validate"])
            },
            told: |_| "cannot be read: is larger than 1048576 bytes".into(),
        },
        Row {
            finding: "11: a manifest naming a FIFO does not block",
            build: |env| {
                env.write(
                    &hooks_dir(env).join("fifo/.claude-plugin/plugin.json"),
                    r#"{"name":"fifo","hooks":"hooks/pipe.json"}"#,
                );
                let file = hooks_dir(env).join("fifo/hooks/pipe.json");
                std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
                let status = std::process::Command::new("mkfifo")
                    .arg(&file)
                    .status()
                    .expect("mkfifo");
                assert!(status.success());
                amplihack(env, &["hooks", "validate"])
            },
            told: |_| "which cannot be read: is a FIFO, not a regular file".into(),
        },
        Row {
            finding: "11: 20,000 empty plugin directories are refused after 1,000 names",
            build: |env| {
                let dir = hooks_dir(env);
                for i in 0..20_000 {
                    std::fs::create_dir_all(dir.join(format!("p{i:05}"))).expect("mkdir");
                }
                plugin(env, &dir, "zzz", &payload(env, "EVIL-among-many"));
                String::new()
            },
            told: |_| "holds more than 1000 entries".into(),
        },
        Row {
            finding: "11/21: the upward search stops at a world-writable directory such as /tmp",
            build: |env| {
                use std::os::unix::fs::PermissionsExt;
                let shared = env.root().join("shared");
                plugin(
                    env,
                    &shared.join(".amplifier/hooks"),
                    "x",
                    &payload(env, "EVIL-shared-tmp"),
                );
                std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777))
                    .expect("chmod");
                let mine = shared.join("mine");
                std::fs::create_dir_all(&mine).expect("mkdir");
                let mut event = bash_event(env, "ls");
                event["cwd"] = json!(mine);
                let mine_text = mine.display().to_string();
                let (output, _) = env.run_hooks(
                    &["pre-tool-use"],
                    &event,
                    &[("CLAUDE_PROJECT_DIR", mine_text.as_str())],
                );
                let mut command = env.amplihack(&["hooks", "list"]);
                command.current_dir(&mine);
                let (list, _) = support::run_with_timeout(command, b"", Duration::from_secs(60));
                format!("{}{}{}", stderr(&output), stdout(&list), stderr(&list))
            },
            told: |env| {
                format!(
                    "project level: {}\n  (no plugins)",
                    env.root().join("shared/mine/.amplifier/hooks").display()
                )
            },
        },
        Row {
            finding: "14: a trusted plugin with a script has its extra events registered",
            build: |env| {
                let claude = env.root().join("fake-claude");
                env.script(&claude, "echo '2.1.328 (Claude Code)'");
                let mut install = env.amplihack(&["install", "--host", "claude"]);
                install.env("AMPLIHACK_CLAUDE_BIN", &claude);
                let (output, _) = support::run_with_timeout(install, b"", Duration::from_secs(60));
                assert!(output.status.success(), "{}", stderr(&output));
                env.plugin(
                    &hooks_dir(env),
                    "notify",
                    &one_group(
                        "SubagentStart",
                        None,
                        vec![command("sh \"${CLAUDE_PLUGIN_ROOT}/n.sh\"")],
                    ),
                );
                env.write(&hooks_dir(env).join("notify/n.sh"), "true\n");
                trust(env);
                let (output, _) = env.run_hooks(
                    &["session-start"],
                    &json!({"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup", "cwd": env.project}),
                    &[("AI_AGENT", "claude-code_2-1-328_harness")],
                );
                let local: Value =
                    std::fs::read_to_string(env.project.join(".claude/settings.local.json"))
                        .ok()
                        .and_then(|t| serde_json::from_str(&t).ok())
                        .unwrap_or(Value::Null);
                format!(
                    "{}\nregistered in the project: {:?}\n",
                    stdout(&output),
                    support::hook_commands(&local)
                        .into_iter()
                        .filter(|(_, c)| c.ends_with("dispatch"))
                        .map(|(e, _)| e)
                        .collect::<Vec<_>>()
                )
            },
            told: |_| "registered in the project: [\"SubagentStart\"]".into(),
        },
        Row {
            finding: "16: a repo's amplihack/hooks.json chaining a command is shown, not hidden",
            build: |env| {
                plugin(
                    env,
                    &hooks_dir(env),
                    "amplihack",
                    &format!(
                        "/usr/local/bin/amplihack-hooks --host amplifier pre-tool-use; {}",
                        payload(env, "EVIL-behind-amplihack")
                    ),
                );
                let mut told = amplihack(env, &["hooks", "list"]);
                told.push_str(&amplihack(env, &["hooks", "validate"]));
                // What trust would cover, without trusting it.
                told.push_str(&amplihack(env, &["hooks", "untrust"]));
                told
            },
            told: |env| {
                let file = hooks_dir(env).join("amplihack/hooks.json");
                format!("ok: {}\nuntrusted: {}", file.display(), file.display())
            },
        },
        Row {
            finding: "21: an AMCP-only project is named by its .amcp directory",
            build: |env| {
                env.write(
                    &env.project.join(".amcp/hooks.toml"),
                    &format!(
                        "[[hooks.PreToolUse.handlers]]\ncommand = {:?}\n",
                        payload(env, "EVIL-amcp-untrusted")
                    ),
                );
                String::new()
            },
            told: |env| {
                format!(
                    "1 hook plugin(s) in {} are not trusted",
                    env.project.join(".amcp").display()
                )
            },
        },
    ]
}

/// The hook call's line for a file changed after trust.
fn changed_line(env: &TestEnv, file: &str) -> String {
    format!(
        "changed since you trusted them ({})",
        env.project.join(file).display()
    )
}

#[test]
fn trust_covers_exactly_what_runs() {
    let mut failures = Vec::new();
    for row in rows() {
        let env = TestEnv::new();
        let mut told = (row.build)(&env);
        let before = home_snapshot(&env);
        let started = Instant::now();
        for event in [
            bash_event(&env, "ls"),
            super::harness::write_event(&env, &env.project.join("x")),
        ] {
            let name = event["hook_event_name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let sub = if name == "PreToolUse" {
                "pre-tool-use"
            } else {
                "post-tool-use"
            };
            let (output, took) = env.run_hooks(&[sub], &event, &[]);
            told.push_str(&stdout(&output));
            told.push_str(&stderr(&output));
            if took > Duration::from_secs(5) {
                failures.push(format!("{}: a hook call took {took:?}", row.finding));
            }
        }
        let took = started.elapsed();
        let wanted = (row.told)(&env);
        let evil: Vec<String> = ran(&env);
        let written = changed(&before, &home_snapshot(&env));
        if !evil.is_empty() {
            failures.push(format!("{}: ran {evil:?}", row.finding));
        }
        if !written.is_empty() {
            failures.push(format!("{}: wrote {written:?}", row.finding));
        }
        if !told.contains(&wanted) {
            failures.push(format!(
                "{}: not told {wanted:?}; told:\n{told}",
                row.finding
            ));
        }
        eprintln!("{:<100} hook calls {took:?}", row.finding);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Hashing `__pycache__` does not cost the user their trust: a trusted Python plugin that imports
/// a module runs on every call without writing bytecode into the plugin.
#[test]
fn a_trusted_python_plugin_stays_trusted_after_it_runs() {
    let env = TestEnv::new();
    let dir = hooks_dir(&env).join("py");
    plugin(
        &env,
        &hooks_dir(&env),
        "py",
        "python3 \"${CLAUDE_PLUGIN_ROOT}/main.py\"",
    );
    env.write(&dir.join("main.py"), "import helper\nhelper.run()\n");
    env.write(
        &dir.join("helper.py"),
        &format!(
            "def run():\n    open({:?}, 'a').write('ran\\n')\n",
            env.root().join("marks/py").display().to_string()
        ),
    );
    trust(&env);
    for _ in 0..2 {
        let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
        assert!(!stderr(&output).contains("trusted"), "{}", stderr(&output));
    }
    let runs = std::fs::read_to_string(env.root().join("marks/py")).unwrap_or_default();
    assert_eq!(runs.lines().count(), 2, "{runs}");
    assert!(!dir.join("__pycache__").exists());
}

/// A trusted parent-level plugin running `sh tools/lint.sh`, and Claude Code started in `below`
/// (a monorepo package, a nested clone) whose own `tools/lint.sh` is the repository's `payload`:
/// what the hook call said, and which lint ran.
fn started_below(env: &TestEnv, below: &str, payload: &str) -> String {
    plugin(env, &hooks_dir(env), "lint", "sh tools/lint.sh");
    env.write(
        &env.project.join("tools/lint.sh"),
        &env.mark("lint", "my-trusted-lint"),
    );
    let mut told = trust(env);
    let dir = env.project.join(below);
    env.write(&dir.join("tools/lint.sh"), &evil_script(env, payload));
    let mut event = bash_event(env, "ls");
    event["cwd"] = json!(dir);
    let dir_text = dir.display().to_string();
    let (output, _) = env.run_hooks(
        &["pre-tool-use"],
        &event,
        &[("CLAUDE_PROJECT_DIR", dir_text.as_str())],
    );
    told.push_str(&stderr(&output));
    told.push_str(&format!("lint marks: {:?}\n", env.marks("lint")));
    told
}

/// Issue 35 finding 2, end to end: a handler with a part trust cannot pin is listed with it by
/// `hooks trust`, does not run until accepted by name, is shown `unaccepted` then `accepted, not
/// pinned` by `hooks list`, and runs once accepted; an unknown name is refused.
#[test]
fn a_part_trust_cannot_pin_runs_only_once_accepted_by_name() {
    let env = TestEnv::new();
    // In the project: a project handler runs confined, and may write there.
    let mark = env.project.join("marks-accepted");
    plugin(
        &env,
        &hooks_dir(&env),
        "runner",
        &format!("task lint 2>/dev/null; echo ran >> '{}'", mark.display()),
    );
    let said = trust(&env);
    assert!(
        said.contains("cannot pin: `task lint`")
            && said.contains("not run: runner runs parts trust cannot pin")
            && said.contains("amplihack hooks trust --accept runner"),
        "{said}"
    );
    let runs = || {
        std::fs::read_to_string(&mark)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let (output, _) = env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(runs(), 0, "ran before it was accepted");
    assert!(
        stderr(&output).contains("runner") && stderr(&output).contains("--accept NAME"),
        "{}",
        stderr(&output)
    );
    assert!(amplihack(&env, &["hooks", "list"]).contains("unaccepted"));
    let unknown = env.run_amplihack(&["hooks", "trust", "--accept", "nosuch"]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("--accept nosuch"),
        "{}",
        stderr(&unknown)
    );
    let accepted = env.run_amplihack(&["hooks", "trust", "--accept", "runner"]);
    assert!(accepted.status.success(), "{}", stderr(&accepted));
    assert!(
        stdout(&accepted).contains("accepted: runner"),
        "{}",
        stdout(&accepted)
    );
    let list = amplihack(&env, &["hooks", "list"]);
    assert!(list.contains("accepted, not pinned: `task lint`"), "{list}");
    env.run_hooks(&["pre-tool-use"], &bash_event(&env, "ls"), &[]);
    assert_eq!(runs(), 1, "did not run once accepted");
}
