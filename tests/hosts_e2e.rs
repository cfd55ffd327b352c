//! One machine, many hosts, in the real Claude Code: removing amplihack from one host leaves
//! another guarded (the binaries stay while a registration names them).

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, stderr, stdout};

#[test]
fn removing_one_host_leaves_claude_code_guarded() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    std::fs::create_dir_all(env.home.join(".gemini")).expect("gemini installed");
    for host in ["claude", "gemini"] {
        let output = env.run_amplihack(&["install", "--host", host]);
        assert_eq!(output.status.code(), Some(0), "{host}: {}", stderr(&output));
    }
    let output = env.run_amplihack(&["uninstall", "--host", "gemini"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(env.deployed_hooks().is_file(), "Claude Code still runs it");

    let fake = FakeAnthropic::start(vec![
        Turn::bash("git commit --no-verify -m wip"),
        Turn::text("understood"),
    ]);
    let run = env.claude(&fake.url, "commit my work");
    let denials = run.result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(denials.len(), 1, "the commit is denied: {}", run.result);
    assert_eq!(denials[0]["tool_name"], "Bash");
}

/// A Claude Code session with its hooks switched off is noticed by `doctor`, by its id; a normal
/// session is not.
#[test]
fn doctor_notices_a_claude_code_session_that_did_not_call_amplihack() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".git")).expect("git dir");
    let output = env.run_amplihack(&["install", "--host", "claude"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let fake = FakeAnthropic::start(vec![Turn::text("hello")]);
    let normal = env.claude(&fake.url, "say hello");
    let normal_id = normal.result["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!normal_id.is_empty(), "{}", normal.result);
    let doctor = env.run_amplihack(&["doctor", "--host", "claude"]);
    assert_eq!(
        doctor.status.code(),
        Some(0),
        "a session that called amplihack is fine: {}",
        stdout(&doctor)
    );

    let fake = FakeAnthropic::start(vec![Turn::text("hello")]);
    let silent = env.claude_with(
        &fake.url,
        &[
            "-p",
            "say hello",
            "--settings",
            r#"{"disableAllHooks": true}"#,
        ],
        &[],
    );
    let silent_id = silent.result["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !silent_id.is_empty() && silent_id != normal_id,
        "{}",
        silent.result
    );
    let doctor = env.run_amplihack(&["doctor"]);
    let text = stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("Claude Code ran session {silent_id}"))
            && text.contains("did not call amplihack in it")
            && text.contains("disableAllHooks"),
        "{text}"
    );
    assert!(!text.contains(&normal_id), "{text}");
}

/// `amplihack` in the test's environment with the pinned Codex (`AMPLIHACK_CODEX_BIN`) and the
/// scratch `CODEX_HOME`.
fn amplihack_for_codex(env: &TestEnv, args: &[&str]) -> std::process::Output {
    use crate::support::host_clis::{Cli, codex_home};
    let mut command = env.amplihack(args);
    command
        .env(Cli::Codex.bin_var(), Cli::Codex.bin())
        .env("CODEX_HOME", codex_home(env))
        .env("AMPLIHACK_LOG_DIR", env.root().join("logs"));
    let (output, _) =
        crate::support::run_with_timeout(command, b"", std::time::Duration::from_secs(120));
    output
}

/// The ids of Codex's session records (`rollout-<time>-<id>.jsonl`) under `$CODEX_HOME/sessions`.
fn codex_rollout_ids(env: &TestEnv) -> Vec<String> {
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned())
                && stem.starts_with("rollout-")
                && stem.len() > 36
            {
                found.push(stem[stem.len() - 36..].to_string());
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &crate::support::host_clis::codex_home(env).join("sessions"),
        &mut found,
    );
    found.sort();
    found
}

/// In the real Codex: the `session_id` Codex sends its hooks is the id in its session record's
/// name, so a session with amplihack's hooks working is not reported by `doctor`; a session run
/// with Codex's hooks switched off is reported, exit 1, by its id. Switched off the way a user or a
/// managed config does it in Codex 0.169: `[features] hooks = false` (here `-c features.hooks=false`
/// for the one session; the older `codex_hooks` still works, with a deprecation notice).
#[test]
fn doctor_notices_a_codex_session_that_did_not_call_amplihack() {
    use crate::support::fake_models::{FakeModels, Turn};
    use crate::support::host_clis::{Cli, codex_home, run_turn, run_turn_with};
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    let install = amplihack_for_codex(&env, &["install", "--host", "codex"]);
    assert_eq!(install.status.code(), Some(0), "{}", stderr(&install));

    let models = FakeModels::start(vec![Turn::text("hello")]);
    let normal = run_turn(&env, Cli::Codex, &models, "Say hello.");
    assert!(normal.output.status.success(), "{}", normal.describe());
    let ids = codex_rollout_ids(&env);
    assert_eq!(ids.len(), 1, "one session record: {ids:?}");
    let normal_id = ids[0].clone();
    let calls = env.home.join(".local/state/amplihack/calls/codex");
    let called: Vec<String> = std::fs::read_dir(&calls)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        called,
        vec![normal_id.clone()],
        "the hook's session_id is the record's id ({}): {}",
        calls.display(),
        normal.describe()
    );
    let doctor = amplihack_for_codex(&env, &["doctor", "--host", "codex"]);
    assert_eq!(
        doctor.status.code(),
        Some(0),
        "a session that called amplihack is fine: {}",
        stdout(&doctor)
    );

    let models = FakeModels::start(vec![Turn::text("hello")]);
    let silent = run_turn_with(
        &env,
        Cli::Codex,
        &models,
        "Say hello.",
        &["-c", "features.hooks=false"],
        &[],
    );
    assert!(silent.output.status.success(), "{}", silent.describe());
    assert!(
        !silent.stderr().contains("hook: SessionStart"),
        "hooks switched off: {}",
        silent.describe()
    );
    let ids = codex_rollout_ids(&env);
    let silent_id = ids
        .iter()
        .find(|id| **id != normal_id)
        .unwrap_or_else(|| panic!("a second session record: {ids:?}"))
        .clone();
    let doctor = amplihack_for_codex(&env, &["doctor"]);
    let text = stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("Codex ran session {silent_id}"))
            && text.contains("did not call amplihack in it")
            && text.contains("`[features] hooks = false`"),
        "{text}"
    );
    assert!(!text.contains(&normal_id), "{text}");
}

const COPILOT_PROJECT_MARKER: &str = "PROJECT-MARKER-B07H-H0575";

/// One Copilot turn in the project with repository hooks loaded in prompt mode (as in a trusted
/// folder): Copilot 1.0.102 then runs the project's `.claude/settings.json` hooks too.
fn copilot_turn_with_repo_hooks(
    env: &TestEnv,
    script: Vec<crate::support::fake_models::Turn>,
) -> (
    crate::support::fake_models::FakeModels,
    crate::support::host_clis::CliRun,
) {
    use crate::support::fake_models::FakeModels;
    use crate::support::host_clis::{Cli, run_turn_with};
    let models = FakeModels::start(script);
    let run = run_turn_with(
        env,
        Cli::Copilot,
        &models,
        "Commit the work.",
        &[],
        &[("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS", "true")],
    );
    (models, run)
}

/// In the real Copilot CLI, which runs a repository's `.claude/settings.json` hooks as its own:
/// with amplihack registered for Claude Code in the project and for Copilot, amplihack answers
/// each event once (PROJECT.md reaches the model once, the guard denies once); with only Claude
/// Code's registration, that one answers, in Copilot's form.
#[test]
fn copilot_running_claude_codes_registration_calls_amplihack_once_per_event() {
    use crate::support::fake_models::Turn;
    use crate::support::host_clis::{logged_payloads, logging_hook};
    let env = TestEnv::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git");
    assert!(git.success());
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# The project\n\n{COPILOT_PROJECT_MARKER}\n"),
    );
    for host in ["claude", "copilot"] {
        let scope = if host == "claude" { "project" } else { "user" };
        let output = env.run_amplihack(&["install", "--host", host, "--scope", scope]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    // A hook of the user's own beside amplihack's in .claude/settings.json: Copilot runs it.
    let settings = env.project.join(".claude/settings.json");
    let log = env.root().join("claude-settings-hook.jsonl");
    let hook = logging_hook(&env, "claude-settings", &log);
    let mut value = env.read_json(&settings);
    value["hooks"]["PreToolUse"]
        .as_array_mut()
        .expect("amplihack's PreToolUse groups")
        .push(serde_json::json!({"hooks": [{"type": "command", "command": hook}]}));
    env.write(&settings, &value.to_string());

    let (models, run) = copilot_turn_with_repo_hooks(
        &env,
        vec![
            Turn::shell("git commit --no-verify -m wip"),
            Turn::shell("echo still-here"),
        ],
    );
    let seen = format!("{}\nrequests:\n{}", run.describe(), models.describe());
    assert!(run.output.status.success(), "{seen}");
    let by_copilot = logged_payloads(&log);
    // (After a deny Copilot runs no further hooks for that tool call.)
    assert!(
        by_copilot
            .iter()
            .any(|p| p["tool_input"]["command"] == "echo still-here"),
        "Copilot ran .claude/settings.json's PreToolUse: {by_copilot:#?}\n{seen}"
    );
    assert_eq!(models.count_in_last(COPILOT_PROJECT_MARKER), 1, "{seen}");
    // The guard's reason, once in the conversation's tool results.
    assert_eq!(
        models.count_in_last("amplihack blocked `git commit --no-verify`"),
        1,
        "{seen}"
    );
    assert!(models.tool_result_contains("still-here"), "{seen}");
    // PostToolUse's metrics built-in records each tool call once: amplihack ran once for it.
    let metrics = env
        .project
        .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl");
    let recorded = logged_payloads(&metrics);
    assert_eq!(
        recorded.len(),
        1,
        "one PostToolUse, one record: {recorded:#?}\n{seen}"
    );

    // Only Claude Code's registration: it answers, once, as Copilot's.
    let output = env.run_amplihack(&["uninstall", "--host", "copilot"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (models, run) = copilot_turn_with_repo_hooks(
        &env,
        vec![
            Turn::shell("git commit --no-verify -m wip"),
            Turn::shell("echo still-here"),
        ],
    );
    let seen = format!("{}\nrequests:\n{}", run.describe(), models.describe());
    assert!(run.output.status.success(), "{seen}");
    assert_eq!(models.count_in_last(COPILOT_PROJECT_MARKER), 1, "{seen}");
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains("amplihack blocked `git commit --no-verify`")),
        "{seen}"
    );
    assert!(models.tool_result_contains("still-here"), "{seen}");
}

/// Which hosts run Claude Code's registrations, in the versions the tests pin: Copilot does (the
/// test above). Every other host, given a logging hook on every Claude Code event in each of
/// Claude Code's settings files (user, project, project-local) and one hook of its own, runs its
/// own on the tool call and never Claude Code's, so amplihack registered for both cannot run
/// twice there. (Codex runs with its hook trust bypassed: an untrusted file would not hide one.)
#[test]
fn no_host_but_copilot_runs_claude_codes_registrations() {
    use crate::support::fake_models::{FakeModels, Turn};
    use crate::support::host_clis::{
        Cli, logged_payloads, logging_hook, register_command_hook, run_turn_with,
    };
    for cli in [
        Cli::Codex,
        Cli::Qwen,
        Cli::Droid,
        Cli::Gemini,
        Cli::Opencode,
    ] {
        let env = TestEnv::new();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&env.project)
            .status()
            .expect("git");
        assert!(git.success());
        let claude_log = env.root().join("claude-settings.jsonl");
        let claude_hook = logging_hook(&env, "claude-settings", &claude_log);
        let group = serde_json::json!([{"hooks": [{"type": "command", "command": claude_hook}]}]);
        let mut hooks = serde_json::Map::new();
        for event in [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd",
        ] {
            hooks.insert(event.to_string(), group.clone());
        }
        let settings = serde_json::json!({ "hooks": hooks }).to_string();
        for file in [
            env.home.join(".claude/settings.json"),
            env.project.join(".claude/settings.json"),
            env.project.join(".claude/settings.local.json"),
        ] {
            env.write(&file, &settings);
        }
        let own_log = env.root().join("own.jsonl");
        let own_hook = logging_hook(&env, "own", &own_log);
        register_command_hook(&env, cli, cli.pre_tool_event(), &own_hook);

        let models = FakeModels::start(vec![Turn::shell("echo ran-the-tool")]);
        let args: &[&str] = match cli {
            Cli::Codex => &["--dangerously-bypass-hook-trust"],
            _ => &[],
        };
        let run = run_turn_with(&env, cli, &models, "Run the tool.", args, &[]);
        let seen = format!("{}\nrequests:\n{}", run.describe(), models.describe());
        assert!(run.output.status.success(), "{seen}");
        assert!(models.tool_result_contains("ran-the-tool"), "{seen}");
        assert!(
            !logged_payloads(&own_log).is_empty(),
            "{}: its own hook ran on the tool call\n{seen}",
            cli.name()
        );
        assert_eq!(
            logged_payloads(&claude_log),
            Vec::<serde_json::Value>::new(),
            "{}: ran a hook from Claude Code's settings\n{seen}",
            cli.name()
        );
    }
}
