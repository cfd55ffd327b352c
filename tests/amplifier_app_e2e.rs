//! amplihack in the real Amplifier app (`amplifier`, microsoft/amplifier-app-cli with
//! amplifier-foundation, the loop-streaming and loop-basic orchestrators and amplifier-core 2.0.2),
//! loaded from what `amplihack install --host amplifier` writes, against the fake Messages API.
//!
//! The app is installed with the offline kit's `install.sh` (`<repo>/../shared/amplifier-app`, or
//! `$AMPLIHACK_AMPLIFIER_APP_KIT`) into `tests/amplifier/app-venv` (git-ignored; about a minute
//! the first time, then idempotent), and each turn runs with the kit's `run.sh`. Where the kit does
//! not exist, the test prints `SKIPPED <reason>` and passes. Each app run spends ~9 s on GitHub
//! retries the app always makes, so the runs are few and each checks much.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::amplifier_app::{app_turn, app_venv, bash, kit, one_app, tool_results};
use crate::support::capabilities::{Capability, Trust, proved, python_version, skipped};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, command, one_group, repo_root, run_with_timeout, stderr, stdout};

#[test]
fn amplihack_works_in_the_real_amplifier_app_and_uninstall_takes_it_back() {
    let kit = match kit() {
        Ok(kit) => kit,
        Err(reason) => {
            println!("SKIPPED {reason}");
            skipped("amplifier", &reason);
            return;
        }
    };
    let _serial = one_app();
    let venv = app_venv(&kit);
    let env = TestEnv::new();
    let git = |args: &[&str]| {
        let output = env
            .command(Path::new("git"))
            .args(args)
            .output()
            .expect("git");
        assert!(output.status.success(), "git {args:?}: {}", stderr(&output));
        stdout(&output)
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    env.write(&env.project.join("a.txt"), "a\n");
    git(&["add", "a.txt"]);

    // The user's own settings, comments and all (with the two keys run.sh would otherwise add).
    let settings = env.home.join(".amplifier/settings.yaml");
    let original = "# my Amplifier settings\nupdates:\n  auto_prompt: false   # offline\nconfig:\n  providers:\n    - module: provider-anthropic\n      source: PROVIDER\n      config:\n        default_model: claude-sonnet-4-5\n        priority: 1\n"
        .replace("PROVIDER", &kit.join("src/amplifier-module-provider-anthropic").display().to_string());
    env.write(&settings, &original);

    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "App-context marker: the plugh project.",
    );
    let context = |text: &str| {
        format!(
            "echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"{text}\"}}}}'"
        )
    };
    env.plugin(
        &env.user_hooks_dir(),
        "user-ctx",
        &one_group(
            "UserPromptSubmit",
            None,
            vec![command(&format!(
                "{}; {}",
                env.mark("ran", "user-plugin"),
                context("user-plugin-context-xyzzy")
            ))],
        ),
    );
    env.plugin(
        &env.project_hooks_dir(),
        "project-ctx",
        &one_group(
            "UserPromptSubmit",
            None,
            vec![command(&format!(
                "{}; {}; {}",
                env.mark("ran", "project-plugin"),
                // Who ran it: amplihack-hooks, or the bridge (the app's Python).
                env.mark("project-runner", "$(ps -o comm= -p $PPID)"),
                context("project-plugin-context-thud")
            ))],
        ),
    );
    let trust = env.run_amplihack(&["hooks", "trust"]);
    assert!(trust.status.success(), "{}", stderr(&trust));
    env.write(
        &env.project.join(".claude/context/USER_PREFERENCES.md"),
        "# Preferences\n\n### Verbosity\nterse-pirate-mode\n",
    );
    env.write(
        &env.project.join(".claude/agents/core/architect.md"),
        "---\nname: architect\n---\nDesigns things.\n",
    );
    let remember = env.run_amplihack(&[
        "memory",
        "add",
        "--agent",
        "architect",
        "Prefers ports-and-adapters over layered designs",
    ]);
    assert!(remember.status.success(), "{}", stderr(&remember));

    let doctor = env.run_amplihack(&["doctor"]);
    assert!(
        doctor.status.success(),
        "doctor after an Amplifier-only install: {}",
        stdout(&doctor)
    );

    // Session 1, loop-streaming: a --no-verify commit, then an allowed command, then text.
    let api = FakeAnthropic::start(vec![
        bash("git commit --no-verify -m sneaky"),
        bash("echo allowed-command"),
        Turn::text("done"),
    ]);
    let out = app_turn(
        &env,
        &kit,
        &venv,
        &api,
        "loop-streaming",
        "commit it, @architect",
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let requests = api.main_requests();
    assert_eq!(requests.len(), 3, "{}", stderr(&out));
    let first = requests[0].to_string();
    assert!(
        first.contains("App-context marker"),
        "PROJECT.md in the first request: {first}"
    );
    let version = python_version(&venv, "amplifier_app_cli");
    // Installed for the user, nothing trusted by the app: amplihack's module ran.
    proved(
        "amplifier",
        &version,
        Capability::TrustStep(Trust::NoneAsked),
    );
    assert!(
        first.contains("amplihack-workflow-classification"),
        "the reminder: {first}"
    );
    assert!(
        first.contains("- Verbosity: terse-pirate-mode"),
        "preferences: {first}"
    );
    assert!(
        first.contains("Prefers ports-and-adapters over layered designs"),
        "the agent's memory: {first}"
    );
    for text in [
        "user-plugin-context-xyzzy",
        "project-plugin-context-thud",
        "App-context marker",
    ] {
        assert_eq!(first.matches(text).count(), 1, "{text} once: {first}");
    }
    let mut ran = env.marks("ran");
    ran.sort();
    assert_eq!(ran, ["project-plugin", "user-plugin"], "each plugin once");
    proved("amplifier", &version, Capability::Context);
    let denied = tool_results(&requests[1]);
    assert!(
        denied.contains("amplihack blocked `git commit --no-verify`"),
        "the guard's reason in the model's next request: {denied}"
    );
    proved("amplifier", &version, Capability::DenyWithReason);
    assert!(
        env.command(Path::new("git"))
            .args(["rev-parse", "--verify", "-q", "HEAD"])
            .output()
            .is_ok_and(|o| !o.status.success()),
        "nothing was committed"
    );
    assert!(tool_results(&requests[2]).contains("allowed-command"));
    let metrics = env.read(
        &env.project
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl"),
    );
    assert_eq!(
        metrics.lines().count(),
        1,
        "one allowed tool call: {metrics}"
    );
    assert!(metrics.contains("\"tool_name\":\"Bash\""), "{metrics}");
    // The plugins' context (UserPromptSubmit), the guard's deny (PreToolUse), the metrics line
    // (PostToolUse).
    proved(
        "amplifier",
        &version,
        Capability::Events(vec!["UserPromptSubmit", "PreToolUse", "PostToolUse"]),
    );
    let sessions = session_records(&env);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(
        sessions[0].contains("First prompt: commit it"),
        "the session record: {sessions:?}"
    );

    // Session 2, loop-basic: the same guard and session context; with the real hook-shell
    // bridge composed into the same session (the project's local settings list both app
    // bundles: the app takes the most specific list whole).
    let local = env.project.join(".amplifier/settings.local.yaml");
    let bridge = bridge_bundle(&env).unwrap_or_else(|e| panic!("{e}"));
    let ours = amplifier_yaml_uri(&env.read(&settings));
    env.write(
        &local,
        &format!(
            "bundle:\n  app:\n    - \"{ours}\"\n    - \"file://{}\"\n",
            bridge.display()
        ),
    );
    let api = FakeAnthropic::start(vec![
        bash("git commit --no-verify -m again"),
        Turn::text("ok"),
    ]);
    let out = app_turn(&env, &kit, &venv, &api, "loop-basic", "commit again");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let requests = api.main_requests();
    assert_eq!(requests.len(), 2, "{}", stderr(&out));
    let first = requests[0].to_string();
    assert!(first.contains("App-context marker"));
    assert_eq!(
        first.matches("user-plugin-context-xyzzy").count(),
        1,
        "{first}"
    );
    let runners = env.marks("project-runner");
    assert_eq!(runners.len(), 2, "{runners:?}");
    assert_eq!(runners[0], "amplihack-hooks", "session 1: amplihack ran it");
    // The bridge runs project plugins itself (and honours only its own contextInjection form, so
    // this plugin's context is not sent); amplihack leaves them to it.
    assert_ne!(
        runners[1], "amplihack-hooks",
        "the bridge ran it: {runners:?}"
    );
    assert!(tool_results(&requests[1]).contains("amplihack blocked `git commit --no-verify`"));
    let mut ran = env.marks("ran");
    ran.sort();
    assert_eq!(
        ran,
        [
            "project-plugin",
            "project-plugin",
            "user-plugin",
            "user-plugin"
        ],
        "each plugin once more, with the bridge in the session too"
    );
    assert_eq!(session_records(&env).len(), 2);
    std::fs::remove_file(&local).expect("remove the local settings");

    // Uninstall gives the user's settings back byte for byte; the next session runs without
    // amplihack.
    let uninstall = env.run_amplihack(&["uninstall"]);
    assert!(uninstall.status.success(), "{}", stderr(&uninstall));
    assert_eq!(
        env.read(&settings),
        original,
        "the user's settings.yaml, byte for byte"
    );
    let log = env.log_file();
    let log_before = std::fs::read_to_string(&log).unwrap_or_default();
    let api = FakeAnthropic::start(vec![
        bash("git commit --no-verify -m free"),
        Turn::text("ok"),
    ]);
    let out = app_turn(
        &env,
        &kit,
        &venv,
        &api,
        "loop-streaming",
        "commit once more",
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let seen = api.everything_the_model_saw();
    assert!(
        !seen.contains("App-context marker") && !seen.contains("amplihack"),
        "{seen}"
    );
    assert_eq!(env.marks("ran").len(), 4, "no plugin ran");
    assert_eq!(session_records(&env).len(), 2, "no session record");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        log_before
    );

    // The app's own `amplifier bundle add --app` rewrites settings.yaml with its YAML dumper
    // (comments and amplihack's marks dropped): uninstall still takes out exactly amplihack's
    // entry and keeps the rest.
    assert!(
        env.run_amplihack(&["install", "--host", "amplifier"])
            .status
            .success()
    );
    let team = env.root().join("team/bundle.yaml");
    env.write(&team, "bundle:\n  name: team\n  version: 0.1.0\n");
    let mut add = env.command(&venv.join("bin/amplifier"));
    add.args([
        "bundle",
        "add",
        &format!("file://{}", team.display()),
        "--app",
    ]);
    let (added, _) = run_with_timeout(add, b"", Duration::from_secs(120));
    assert!(
        added.status.success(),
        "{}{}",
        stdout(&added),
        stderr(&added)
    );
    let dumped = env.read(&settings);
    assert!(
        !dumped.contains('#') && dumped.contains(BUNDLE_SUFFIX),
        "rewritten by the app: {dumped}"
    );
    assert!(env.run_amplihack(&["uninstall"]).status.success());
    let left = env.read(&settings);
    assert!(!left.contains(BUNDLE_SUFFIX), "{left}");
    assert_eq!(
        left,
        dumped
            .lines()
            .filter(|l| !l.contains(BUNDLE_SUFFIX))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
        "only amplihack's line went"
    );
}

const BUNDLE_SUFFIX: &str = "/amplihack/amplifier-bundle.yaml";

/// A plugin's `prompt` handler in the real app: the session's own provider is asked (the fake
/// Messages API answers the question, marked), its refusal denies the tool call, and the reason
/// reaches the model; no key of amplihack's is involved.
#[test]
fn a_prompt_handler_is_answered_by_the_sessions_own_model_in_the_app() {
    let kit = match kit() {
        Ok(kit) => kit,
        Err(reason) => {
            println!("SKIPPED {reason}");
            skipped("amplifier", &reason);
            return;
        }
    };
    let _serial = one_app();
    let venv = app_venv(&kit);
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    support::copy_dir(
        &repo_root().join("tests/fixtures/plugins/prompt-guard"),
        &env.user_hooks_dir().join("prompt-guard"),
    );
    let api = FakeAnthropic::start_with(
        vec![bash("echo guarded-ran > guarded.txt"), Turn::text("done")],
        vec![(
            "PROMPT-GUARD-QUESTION",
            r#"{"ok": false, "reason": "PROMPT-GUARD: the model says this call may not run"}"#,
        )],
    );
    let output = app_turn(&env, &kit, &venv, &api, "loop-streaming", "run it");
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let asked = api.canned_requests();
    assert_eq!(asked.len(), 1, "the session's provider was asked once");
    assert!(
        asked[0].to_string().contains("echo guarded-ran"),
        "the question carries the event: {}",
        asked[0]
    );
    assert!(!env.project.join("guarded.txt").exists(), "the tool ran");
    let next = api.main_requests();
    assert!(
        next.last().is_some_and(
            |r| tool_results(r).contains("PROMPT-GUARD: the model says this call may not run")
        ),
        "the reason reached the model: {:?}",
        next.last().map(tool_results)
    );
}

/// A plugin's `agent` handler in the real app: a subagent on the session's own provider, offered
/// read-only tools (Read, Grep, Glob), reads a project file the model asks for, and its refusal
/// (its last answer) denies the tool call; the reason reaches the model.
#[test]
fn an_agent_handler_runs_a_read_only_subagent_on_the_sessions_model_in_the_app() {
    let kit = match kit() {
        Ok(kit) => kit,
        Err(reason) => {
            println!("SKIPPED {reason}");
            skipped("amplifier", &reason);
            return;
        }
    };
    let _serial = one_app();
    let venv = app_venv(&kit);
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    env.write(
        &env.project.join("POLICY.md"),
        "NO-ECHO-POLICY: echo is not allowed here\n",
    );
    env.write(
        &env.user_hooks_dir().join("agent-guard/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "agent", "prompt": "AGENT-CHECK: does POLICY.md allow this call? $ARGUMENTS"}
        ]}]}})
        .to_string(),
    );
    let api = FakeAnthropic::start_with(
        vec![bash("echo agent-ran > ran.txt"), Turn::text("done")],
        vec![
            (
                "AGENT-CHECK",
                r#"tool_use {"name": "Read", "input": {"file_path": "POLICY.md"}}"#,
            ),
            (
                "AGENT-CHECK",
                r#"{"ok": false, "reason": "AGENT-GUARD: POLICY.md forbids echo"}"#,
            ),
        ],
    );
    let output = app_turn(&env, &kit, &venv, &api, "loop-basic", "run it");
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let asked = api.canned_requests();
    assert_eq!(asked.len(), 2, "a tool call, then the verdict: {asked:?}");
    let offered: Vec<&str> = asked[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(offered, ["Read", "Grep", "Glob"], "read-only tools only");
    assert!(
        asked[1].to_string().contains("NO-ECHO-POLICY"),
        "the file it read went back to it: {}",
        asked[1]
    );
    assert!(!env.project.join("ran.txt").exists(), "the tool ran");
    let next = api.main_requests();
    assert!(
        next.last()
            .is_some_and(|r| tool_results(r).contains("AGENT-GUARD: POLICY.md forbids echo")),
        "the reason reached the model: {:?}",
        next.last().map(tool_results)
    );
}

/// Transcript export where the app compacts. The app's context module (context-simple) compacts
/// each request's view of the conversation once it passes `compact_threshold` of the model's
/// window (default 0.92 of about 167,000 tokens) and then emits `context:compaction`; the test
/// lowers that threshold the way a user would, through the app's own settings (an app bundle whose
/// `session.context.config` the app merges into the session's context module), so that a
/// conversation a few kilobytes long compacts. amplihack's module answers the turn's first
/// compaction with `pre-compact` and the session's whole conversation: the copy lands in
/// `.claude/runtime/logs/<session>/`, private, with the conversation in it.
#[test]
fn where_the_app_compacts_the_transcript_is_exported() {
    let kit = match kit() {
        Ok(kit) => kit,
        Err(reason) => {
            println!("SKIPPED {reason}");
            skipped("amplifier", &reason);
            return;
        }
    };
    let _serial = one_app();
    let venv = app_venv(&kit);
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install", "--host", "amplifier"]);
    assert!(install.status.success(), "{}", stderr(&install));
    let ours = amplifier_yaml_uri(&env.read(&env.home.join(".amplifier/settings.yaml")));
    assert!(!ours.is_empty(), "amplihack's app bundle is registered");
    let small = env.root().join("small-context.yaml");
    env.write(
        &small,
        &format!(
            "bundle:\n  name: small-context\n  version: 0.1.0\nsession:\n  context:\n    config:\n      compact_threshold: {COMPACT_THRESHOLD}\n"
        ),
    );
    env.write(
        &env.project.join(".amplifier/settings.local.yaml"),
        &format!(
            "bundle:\n  app:\n    - \"{ours}\"\n    - \"file://{}\"\n",
            small.display()
        ),
    );
    let api = FakeAnthropic::start(vec![
        bash("echo tool-output-plover; head -c 12000 /dev/zero | tr '\\0' y"),
        bash("echo second-call-xyzzy"),
        Turn::text("done"),
    ]);
    let out = app_turn(
        &env,
        &kit,
        &venv,
        &api,
        "loop-streaming",
        "remember the word frobozz-prompt",
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(api.main_requests().len(), 3, "{}", stderr(&out));
    let compactions = app_events(&env, "context:compaction");
    assert!(
        compactions > 0,
        "the app compacted (its own event log): {}",
        stderr(&out)
    );

    let logs = env.project.join(".claude/runtime/logs");
    let sessions: Vec<PathBuf> = std::fs::read_dir(&logs)
        .unwrap_or_else(|e| panic!("{}: {e}; {}", logs.display(), stderr(&out)))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(sessions.len(), 1, "one session's exports: {sessions:?}");
    let dir = &sessions[0];
    let mut copies: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the session's logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("transcript-") && n.ends_with(".jsonl"))
        })
        .collect();
    copies.sort();
    // context-simple compacts every request's view past its threshold (here the second and the
    // third); the whole conversation stays in the session, so one copy per turn keeps it.
    assert!(compactions >= 2, "the app compacted {compactions} time(s)");
    assert_eq!(
        copies.len(),
        1,
        "one transcript copy for the turn in {}",
        dir.display()
    );
    let metadata = env.read(&dir.join("compaction_metadata.jsonl"));
    assert_eq!(
        metadata.lines().count(),
        copies.len(),
        "one metadata line per copy: {metadata}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    };
    assert_eq!(mode(dir), 0o700, "{}", dir.display());
    for copy in &copies {
        assert_eq!(mode(copy), 0o600, "{}", copy.display());
    }
    // The copy holds the conversation up to the turn's first compaction: the prompt, the first
    // call and what it printed.
    let newest = env.read(copies.last().expect("a copy"));
    for text in ["frobozz-prompt", "tool-output-plover"] {
        assert!(
            newest.contains(text),
            "{text} in the exported transcript: {newest:.2000}"
        );
    }
    let version = python_version(&venv, "amplifier_app_cli");
    proved(
        "amplifier",
        &version,
        Capability::Events(vec!["PreCompact"]),
    );
    proved("amplifier", &version, Capability::TranscriptExport);
    println!(
        "the app compacted {compactions} time(s); amplihack kept {} transcript copies",
        copies.len()
    );
}

/// context-simple's `compact_threshold` for the compaction test: a fraction of the model's window
/// that the conversation passes only once the first tool's 12,000 characters are in it.
const COMPACT_THRESHOLD: f64 = 0.01;

/// How many times an event is in the app's own event log (hooks-logging, per session).
fn app_events(env: &TestEnv, event: &str) -> usize {
    let mut count = 0;
    let projects = env.home.join(".amplifier/projects");
    for project in std::fs::read_dir(&projects).into_iter().flatten().flatten() {
        for session in std::fs::read_dir(project.path().join("sessions"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let log =
                std::fs::read_to_string(session.path().join("events.jsonl")).unwrap_or_default();
            count += log
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|v| v["event"] == event)
                .count();
        }
    }
    count
}

fn amplifier_yaml_uri(text: &str) -> String {
    text.lines()
        .find(|l| l.contains(BUNDLE_SUFFIX))
        .map(|l| {
            l.trim()
                .trim_start_matches("- ")
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_default()
}

/// A bundle naming the real hook-shell bridge: a copy of the one vendored in
/// `tests/amplifier/hook-shell/` in the test's directory (the app may build in a module's source,
/// never in this repository), or the HEAD of `$AMPLIHACK_HOOK_SHELL_MIRROR` (a git directory of
/// the bridge's repository) when that is set; or why it cannot be made.
fn bridge_bundle(env: &TestEnv) -> Result<PathBuf, String> {
    let source = env.root().join("hook-shell");
    std::fs::create_dir_all(&source).map_err(|e| e.to_string())?;
    let (script, from) = match std::env::var_os("AMPLIHACK_HOOK_SHELL_MIRROR") {
        Some(mirror) => (
            "git --git-dir \"$1\" archive HEAD | tar -x -C \"$2\"",
            PathBuf::from(mirror),
        ),
        None => (
            "cp -R \"$1\"/. \"$2\"",
            repo_root().join("tests/amplifier/hook-shell"),
        ),
    };
    let copied = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(&from)
        .arg(&source)
        .status()
        .map_err(|e| e.to_string())?;
    if !copied.success() {
        return Err(format!("cannot copy the bridge from {}", from.display()));
    }
    let bundle = env.root().join("hook-shell-bundle.yaml");
    env.write(
        &bundle,
        &format!(
            "bundle:\n  name: hook-shell\n  version: 0.1.0\nhooks:\n  - module: hook-shell\n    source: \"{}\"\n",
            source.display()
        ),
    );
    Ok(bundle)
}

/// amplihack's session records, as `amplihack memory list --kind session` shows them.
fn session_records(env: &TestEnv) -> Vec<String> {
    let list = env.session_memory();
    let value: Value = serde_json::from_str(&stdout(&list)).unwrap_or(Value::Null);
    value["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Speed in the real app, side by side with the peer: one session with amplihack's module and the
/// real hook-shell bridge, each running 4 plugins that sleep 50 ms
/// on every `tool:pre` (amplihack the user level's, the bridge the project's). Per tool call:
/// amplihack's share runs from the model's answer having been sent to the first of the bridge's
/// plugins starting (so the orchestrator's own work and the bridge's setup count against
/// amplihack), the bridge's from there to the tool starting. Interleaved by construction; the
/// check is the ratio of medians, the times are printed.
#[test]
fn in_the_real_app_amplihack_costs_at_most_the_bridge_on_tool_pre() {
    let kit = match kit() {
        Ok(kit) => kit,
        Err(reason) => {
            support::figure(&format!("SKIPPED {reason}"));
            return;
        }
    };
    let _serial = one_app();
    let _alone = support::alone();
    let env = TestEnv::new();
    let bridge = bridge_bundle(&env).unwrap_or_else(|e| panic!("{e}"));
    let venv = app_venv(&kit);
    // Project scope: the project's bridge registration is there too, and the bridge calls it;
    // amplihack must still run once per event (its bridge call steps aside for the module).
    let install = env.run_amplihack(&["install", "--host", "amplifier", "--scope", "project"]);
    assert!(install.status.success(), "{}", stderr(&install));
    assert!(
        env.project
            .join(".amplifier/hooks/amplihack/hooks.json")
            .is_file()
    );
    let ours = amplifier_yaml_uri(&env.read(&env.project.join(".amplifier/settings.yaml")));
    env.write(
        &env.project.join(".amplifier/settings.local.yaml"),
        &format!(
            "bundle:\n  app:\n    - \"{ours}\"\n    - \"file://{}\"\n",
            bridge.display()
        ),
    );
    for i in 0..4 {
        env.plugin(
            &env.user_hooks_dir(),
            &format!("user-{i}"),
            &one_group(
                "PreToolUse",
                Some("*"),
                vec![command(&format!(
                    "{}; sleep 0.05",
                    env.mark("user-run", &i.to_string())
                ))],
            ),
        );
        env.plugin(
            &env.project_hooks_dir(),
            &format!("project-{i}"),
            &one_group(
                "PreToolUse",
                Some("*"),
                vec![command(&format!(
                    "{}; sleep 0.05 # {i}",
                    env.mark("bridge-start", "$(date +%s.%N)")
                ))],
            ),
        );
    }
    const CALLS: usize = 8;
    let mut script: Vec<Turn> = (0..CALLS).map(|_| bash("date +%s.%N")).collect();
    script.push(Turn::text("done"));
    let api = FakeAnthropic::start(script);
    let out = app_turn(&env, &kit, &venv, &api, "loop-streaming", "time it");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let answered = api.main_answered();
    let requests = api.main_requests();
    assert_eq!(requests.len(), CALLS + 1, "{}", stderr(&out));
    let starts: Vec<f64> = env
        .marks("bridge-start")
        .iter()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert_eq!(starts.len(), 4 * CALLS, "each bridge plugin once per call");
    assert_eq!(
        env.marks("user-run").len(),
        4 * CALLS,
        "each user plugin once per call: amplihack ran once, not again through the bridge"
    );
    let (mut ours_ms, mut theirs_ms) = (Vec::new(), Vec::new());
    for i in 0..CALLS {
        // The latest tool result: the request carries the whole conversation.
        let result = requests[i + 1]["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        let tool = first_timestamp(&result).unwrap_or_else(|| panic!("no time in {result}"));
        let first = starts
            .iter()
            .copied()
            .filter(|s| *s > answered[i] && *s < tool)
            .fold(f64::INFINITY, f64::min);
        assert!(
            first.is_finite(),
            "call {i}: no bridge plugin between answer and tool"
        );
        ours_ms.push((first - answered[i]) * 1000.0);
        theirs_ms.push((tool - first) * 1000.0);
    }
    let (ours, theirs) = (
        support::median(&mut ours_ms),
        support::median(&mut theirs_ms),
    );
    let ratio = ours / theirs;
    support::figure(&format!(
        "in the app, 4 plugins sleeping 50 ms on tool:pre: amplihack {ours:.1} ms (with the orchestrator's own work), the bridge {theirs:.1} ms (medians of {CALLS}); ratio {ratio:.2} (goal 1.00, fails over 2.00)"
    ));
    // The goal is 1.00; like every benchmark (tests/bench/gate.rs), it fails only over twice it.
    assert!(
        ratio <= 2.0,
        "amplihack {ours_ms:?} vs the bridge {theirs_ms:?}"
    );
}

/// The first `seconds.nanoseconds` epoch time in a text.
fn first_timestamp(text: &str) -> Option<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|t| t.parse::<f64>().ok())
        .find(|t| *t > 1e9)
}
