//! The real Codex CLI (pinned in tests/hosts/codex), offline against the fake Responses server,
//! with amplihack installed by `amplihack install --host codex` into a scratch HOME and
//! CODEX_HOME: never `--dangerously-bypass-hook-trust`, so every hook that runs was trusted the
//! way the installer trusts them, through `codex app-server`.

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::gate;
use crate::support;
use crate::support::capabilities::{Capability, Trust, proved};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::host_clis::{Cli, CodexAppServer, codex_home, each_codex, run_turn};
use crate::support::{TestEnv, stderr, stdout};

/// The user's own Codex files before amplihack arrives: a hook of theirs (trusted by them) and a
/// config with comments, which uninstall must give back byte for byte.
const USER_CONFIG: &str = "# my Codex settings\nmodel_reasoning_effort = \"high\"  # keep\n\n[tui]\nnotifications = true\n";

const PROJECT_MARKER: &str = "PROJECT-MD-MARKER: the widgets service is written in Go.";
const PLUGIN_NOTE: &str = "TEAM-NOTE: the staging DB is read-only today.";

/// `amplihack` in the test's environment, finding the pinned Codex through
/// `AMPLIHACK_CODEX_BIN`: the installer's own override, and the tests' name for the pinned CLI.
fn amplihack(env: &TestEnv, args: &[&str]) -> Output {
    let mut command = env.amplihack(args);
    command
        .env(Cli::Codex.bin_var(), Cli::Codex.bin())
        .env("CODEX_HOME", codex_home(env))
        .env("AMPLIHACK_LOG_DIR", env.root().join("logs"));
    let (output, _) = support::run_with_timeout(command, b"", Duration::from_secs(120));
    output
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

/// A git project with `.claude/context/PROJECT.md`, a user plugin adding context on every
/// prompt (and marking each run), and the freeze-deploys plugin denying `make deploy`.
fn project_and_plugins(env: &TestEnv) {
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git init");
    assert!(git.success());
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# Project\n\n{PROJECT_MARKER}\n"),
    );
    let mark = env.mark("plugin-ran", "prompt");
    env.plugin(
        &env.user_hooks_dir(),
        "team-notes",
        &support::one_group(
            "UserPromptSubmit",
            None,
            vec![support::command(&format!("{mark}; echo '{PLUGIN_NOTE}'"))],
        ),
    );
    support::copy_dir(
        &support::repo_root().join("tests/fixtures/plugins/freeze-deploys"),
        &env.user_hooks_dir().join("freeze-deploys"),
    );
}

/// The user's hooks.json (one hook of theirs, logging its payloads) and config.toml, trusted by
/// the user through Codex; returns both files' bytes.
fn users_codex_files(env: &TestEnv) -> (PathBuf, String, PathBuf, String) {
    let log = env.root().join("user-hook.jsonl");
    let hook = support::host_clis::logging_hook(env, "user-hook", &log);
    let hooks_json = codex_home(env).join("hooks.json");
    let user_hooks = format!(
        "{{\n  \"hooks\": {{\n    \"PreToolUse\": [\n      {{ \"matcher\": \"Bash\", \"hooks\": [ {{ \"type\": \"command\", \"command\": {}, \"timeout\": 20 }} ] }}\n    ]\n  }}\n}}\n",
        serde_json::to_string(&hook).expect("json")
    );
    env.write(&hooks_json, &user_hooks);
    let config = codex_home(env).join("config.toml");
    env.write(&config, USER_CONFIG);
    // The user trusted their own hook (Codex's TUI does the same).
    let mut server = CodexAppServer::start(env);
    let listed = server.hooks(&env.project);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    server.trust(&listed);
    drop(server);
    let config_text = env.read(&config);
    (hooks_json, user_hooks, config, config_text)
}

fn everything(models: &FakeModels) -> String {
    models.everything_the_model_saw()
}

/// How many times `needle` is in the last main request (the whole conversation).
fn in_last(models: &FakeModels, needle: &str) -> usize {
    models.count_in_last(needle)
}

/// In the pinned Codex and the newest (0.169.0 and 0.171.0).
#[test]
fn codex_runs_amplihacks_guard_context_and_plugins_then_gets_its_files_back() {
    each_codex(guard_context_and_plugins_then_files_back);
}

fn guard_context_and_plugins_then_files_back(version: &str) {
    let env = TestEnv::new();
    project_and_plugins(&env);
    let (hooks_json, user_hooks, config, user_config) = users_codex_files(&env);

    let install = ok(&amplihack(&env, &["install", "--host", "codex"]));
    assert!(install.contains("codex"), "{install}");

    // Every entry trusted by the installer, the user's still trusted at its key.
    let listed = CodexAppServer::start(&env).hooks(&env.project);
    let untrusted: Vec<_> = listed
        .iter()
        .filter(|h| h.trust_status != "trusted")
        .collect();
    assert!(untrusted.is_empty(), "{untrusted:#?}");
    assert!(listed.len() > 5, "{listed:#?}");

    let models = FakeModels::start(vec![
        Turn::shell("git commit --no-verify -m wip"),
        Turn::shell("make deploy"),
        Turn::shell("echo still-here"),
    ]);
    let run = run_turn(&env, Cli::Codex, &models, "Commit and deploy, please.");
    assert!(run.output.status.success(), "{}", run.describe());
    let saw = everything(&models);
    let describe = || format!("{}\nrequests:\n{}", run.describe(), models.describe());

    // The guard: denied, and the model told why.
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains("amplihack blocked `git commit --no-verify`")),
        "{}",
        describe()
    );
    proved("codex", version, Capability::DenyWithReason);
    // The plugin's deny honoured.
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains("Deploys are frozen until Monday")),
        "{}",
        describe()
    );
    assert!(models.tool_result_contains("still-here"), "{}", describe());
    // PROJECT.md (SessionStart) and the plugin's context (UserPromptSubmit): once each.
    assert_eq!(in_last(&models, PROJECT_MARKER), 1, "{}", describe());
    assert_eq!(in_last(&models, PLUGIN_NOTE), 1, "{}", describe());
    assert_eq!(env.marks("plugin-ran").len(), 1, "{saw}");
    proved("codex", version, Capability::Context);
    // No reply of amplihack's failed Codex's schema ("hook: <event> Failed"), and no timeout
    // Codex has to clamp.
    assert!(!run.stderr().contains("Failed"), "{}", describe());
    assert!(!run.stderr().contains("clamping"), "{}", describe());
    let events = vec![
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ];
    for event in &events {
        assert!(
            run.stderr().contains(&format!("hook: {event} Completed")),
            "{event}: {}",
            describe()
        );
    }
    proved("codex", version, Capability::Events(events));
    // Every entry ran, and only trusted ones run: the installer's trust step did it.
    proved("codex", version, Capability::TrustStep(Trust::ByInstall));
    // The user's own hook still ran (its key, and so its trust, unchanged).
    let user_log = support::host_clis::logged_payloads(&env.root().join("user-hook.jsonl"));
    assert_eq!(user_log.len(), 3, "{user_log:#?}");

    let doctor = ok(&amplihack(&env, &["doctor"]));
    assert!(doctor.contains("no problems found"), "{doctor}");
    assert!(doctor.contains("Codex trusts all"), "{doctor}");

    ok(&amplihack(&env, &["uninstall", "--host", "codex"]));
    assert_eq!(env.read(&hooks_json), user_hooks);
    assert_eq!(env.read(&config), user_config);

    let marks_before = env.marks("plugin-ran").len();
    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m wip")]);
    let run = run_turn(&env, Cli::Codex, &models, "Commit, please.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert_eq!(env.marks("plugin-ran").len(), marks_before, "amplihack ran");
    assert_eq!(in_last(&models, PROJECT_MARKER), 0);
    assert!(
        !models
            .tool_results()
            .iter()
            .any(|r| r.contains("amplihack blocked")),
        "{}",
        models.describe()
    );
}

/// With no config.toml and no hooks.json before, uninstall leaves neither behind.
#[test]
fn codex_uninstall_removes_what_install_created() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    ok(&amplihack(&env, &["install", "--host", "codex"]));
    let config = codex_home(&env).join("config.toml");
    assert!(env.read(&config).contains("trusted_hash"));
    ok(&amplihack(&env, &["uninstall", "--host", "codex"]));
    assert!(!config.exists(), "{}", env.read(&config));
    assert!(!codex_home(&env).join("hooks.json").exists());
}

/// Installing again after the binaries moved changes every command, which Codex no longer trusts
/// (the hash covers the command): install trusts the new ones, and they run.
#[test]
fn codex_install_after_a_move_trusts_the_new_commands() {
    let env = TestEnv::new();
    project_and_plugins(&env);
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    ok(&amplihack(&env, &["install", "--host", "codex"]));
    let moved = env.root().join("moved bin");
    let moved_text = moved.to_string_lossy().into_owned();
    ok(&amplihack(
        &env,
        &["install", "--host", "codex", "--bin-dir", &moved_text],
    ));
    let listed = CodexAppServer::start(&env).hooks(&env.project);
    assert!(
        listed.iter().all(|h| h.trust_status == "trusted"
            && h.entry["command"]
                .as_str()
                .is_some_and(|c| c.contains("moved bin"))),
        "{listed:#?}"
    );
    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m wip")]);
    let run = run_turn(&env, Cli::Codex, &models, "Commit.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains("amplihack blocked `git commit --no-verify`")),
        "{}",
        models.describe()
    );
    let doctor = ok(&amplihack(&env, &["doctor"]));
    assert!(doctor.contains("no problems found"), "{doctor}");

    // `update` runs `reregister` with the new binaries' directory: trusted again too.
    let first = env.bin_dir().to_string_lossy().into_owned();
    ok(&amplihack(&env, &["reregister", "--bin-dir", &first]));
    let listed = CodexAppServer::start(&env).hooks(&env.project);
    assert!(
        listed.iter().all(|h| h.trust_status == "trusted"
            && h.entry["command"]
                .as_str()
                .is_some_and(|c| c.contains(&first))),
        "{listed:#?}"
    );
}

/// doctor reports an entry Codex would skip (its trust taken away) and `doctor --fix` trusts it
/// again.
#[test]
fn codex_doctor_reports_untrusted_entries_and_fixes_them() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    ok(&amplihack(&env, &["install", "--host", "codex"]));
    let config = codex_home(&env).join("config.toml");
    // Someone changed the trust: one hash no longer matches.
    let text = env.read(&config);
    let first = text.find("sha256:").expect("a hash") + "sha256:".len();
    let mut changed = text.clone();
    changed.replace_range(first..first + 4, "0000");
    env.write(&config, &changed);
    let doctor = amplihack(&env, &["doctor"]);
    assert_eq!(doctor.status.code(), Some(1), "{}", stdout(&doctor));
    assert!(
        stdout(&doctor).contains("Codex skips amplihack's entries it does not trust"),
        "{}",
        stdout(&doctor)
    );
    assert!(stdout(&doctor).contains("amplihack doctor --fix"));
    ok(&amplihack(&env, &["doctor", "--fix"]));
    let doctor = ok(&amplihack(&env, &["doctor"]));
    assert!(doctor.contains("no problems found"), "{doctor}");
}

/// A project scope Codex does not load (the project is not trusted) is said at install and by
/// doctor (both versions).
#[test]
fn codex_project_scope_states_the_project_trust_it_needs() {
    each_codex(project_scope_states_the_project_trust_it_needs);
}

fn project_scope_states_the_project_trust_it_needs(version: &str) {
    let env = TestEnv::new();
    project_and_plugins(&env);
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    let install = amplihack(&env, &["install", "--host", "codex", "--scope", "project"]);
    let said = format!("{}{}", stdout(&install), stderr(&install));
    assert!(install.status.success(), "{said}");
    assert!(said.contains("only for a trusted project"), "{said}");
    assert!(said.contains("trust_level = \"trusted\""), "{said}");
    let doctor = amplihack(&env, &["doctor"]);
    assert!(
        stdout(&doctor).contains("not trusted"),
        "{}",
        stdout(&doctor)
    );
    // Trusted by the user, the project's entries get trusted by doctor --fix and run.
    let project = env.project.canonicalize().expect("project");
    let config = codex_home(&env).join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        project.display()
    ));
    env.write(&config, &text);
    ok(&amplihack(&env, &["doctor", "--fix"]));
    let doctor = ok(&amplihack(&env, &["doctor"]));
    assert!(doctor.contains("no problems found"), "{doctor}");
    let models = FakeModels::start(vec![Turn::shell("git commit --no-verify -m wip")]);
    let run = run_turn(&env, Cli::Codex, &models, "Commit.");
    assert!(run.output.status.success(), "{}", run.describe());
    assert!(
        models
            .tool_results()
            .iter()
            .any(|r| r.contains("amplihack blocked")),
        "{}",
        models.describe()
    );
    assert_eq!(in_last(&models, PROJECT_MARKER), 1, "{}", models.describe());
    proved(
        "codex",
        version,
        Capability::TrustStep(Trust::UserTrustsTheFolder),
    );
}

/// A Codex turn with amplihack's entries against the same entries running `true`: an amplihack
/// entry costs about what an empty one does.
#[test]
fn codex_turns_with_amplihack_cost_about_what_true_entries_do() {
    let _alone = support::alone();
    const TURNS: usize = 5;
    let env = TestEnv::new();
    project_and_plugins(&env);
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    ok(&amplihack(&env, &["install", "--host", "codex"]));
    let hooks_json = codex_home(&env).join("hooks.json");
    let ours = env.read(&hooks_json);
    let mut with_true: Value = serde_json::from_str(&ours).expect("json");
    for groups in with_true["hooks"]
        .as_object_mut()
        .expect("hooks")
        .values_mut()
    {
        for group in groups.as_array_mut().expect("groups") {
            for handler in group["hooks"].as_array_mut().expect("handlers") {
                handler["command"] = json!("true");
            }
        }
    }
    let with_true = serde_json::to_string_pretty(&with_true).expect("json");
    // Trust the `true` entries too (Codex's own hashes), keeping amplihack's trust.
    env.write(&hooks_json, &with_true);
    let mut server = CodexAppServer::start(&env);
    let listed = server.hooks(&env.project);
    server.trust(&listed);
    drop(server);

    let turn = |hooks: &str| -> Duration {
        env.write(&hooks_json, hooks);
        let models = FakeModels::start(vec![Turn::shell("echo timing")]);
        let run = run_turn(&env, Cli::Codex, &models, "Echo something.");
        assert!(run.output.status.success(), "{}", run.describe());
        assert!(models.tool_result_contains("timing"), "{}", run.describe());
        run.elapsed
    };
    // Both trusted now; a warm-up of each.
    turn(&ours);
    turn(&with_true);
    let passed = gate::gate("codex turn, amplihack vs `true` entries", 1.10, || {
        let (mut a, mut t) = (Vec::new(), Vec::new());
        for _ in 0..TURNS {
            a.push(turn(&ours).as_secs_f64() * 1000.0);
            t.push(turn(&with_true).as_secs_f64() * 1000.0);
        }
        let (a, t) = (support::median(&mut a), support::median(&mut t));
        let ratio = a / t;
        let line = format!(
            "in the real Codex, a turn (SessionStart, 2 UserPromptSubmit, PreToolUse, PostToolUse, Stop): amplihack {a:.0} ms, `true` entries {t:.0} ms (medians of {TURNS}); ratio {ratio:.2} (goal 1.10, fails over 2.20)"
        );
        support::figure(&line);
        Some((ratio, format!("{a:.0} ms vs {t:.0} ms")))
    });
    assert!(passed, "amplihack's entries cost over twice the goal");
}

/// Lock mode under Codex (both versions): Stop's `decision: "block"` keeps the agent working
/// (the lock's message reaches the model as Codex's hook prompt) until the safety valve lets the
/// stop through.
#[test]
fn codex_keeps_working_while_the_project_is_locked() {
    each_codex(keeps_working_while_locked);
}

fn keeps_working_while_locked(version: &str) {
    let env = TestEnv::new();
    project_and_plugins(&env);
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    ok(&amplihack(&env, &["install", "--host", "codex"]));
    ok(&amplihack(
        &env,
        &["lock", "--message", "LOCK-MARKER: finish the migration"],
    ));
    let models = FakeModels::start(Vec::new());
    let run = support::host_clis::run_turn_with(
        &env,
        Cli::Codex,
        &models,
        "Migrate the schema.",
        &[],
        &[("AMPLIHACK_MAX_LOCK_ITERATIONS", "1")],
    );
    assert!(run.output.status.success(), "{}", run.describe());
    let main = models.main_requests();
    assert_eq!(main.len(), 2, "{}\n{}", run.describe(), models.describe());
    proved("codex", version, Capability::KeepGoing);
    assert_eq!(in_last(&models, "LOCK-MARKER: finish the migration"), 1);
    proved("codex", version, Capability::LockMode);
    assert!(!run.stderr().contains("Failed"), "{}", run.describe());
}

/// Without `codex` to ask, install says plainly that Codex skips the entries until trusted and
/// what to do; doctor notes it.
#[test]
fn codex_install_without_codex_says_what_the_user_must_do() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    let mut command = env.amplihack(&["install", "--host", "codex"]);
    command.env("PATH", env.root().join("test-tools"));
    let (install, _) = support::run_with_timeout(command, b"", Duration::from_secs(60));
    let said = format!("{}{}", stdout(&install), stderr(&install));
    assert!(install.status.success(), "{said}");
    assert!(said.contains("`codex` is not on PATH"), "{said}");
    assert!(said.contains("AMPLIHACK_CODEX_BIN"), "{said}");
    assert!(said.contains("amplihack doctor --fix"), "{said}");
    let mut command = env.amplihack(&["doctor"]);
    command.env("PATH", env.root().join("test-tools"));
    let (doctor, _) = support::run_with_timeout(command, b"", Duration::from_secs(60));
    assert!(
        stdout(&doctor).contains("cannot ask Codex"),
        "{}",
        stdout(&doctor)
    );
}

/// A config.toml that is no longer TOML: uninstall refuses before touching anything, naming the
/// file and the fix.
#[test]
fn codex_uninstall_refuses_a_broken_config_toml_and_changes_nothing() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    ok(&amplihack(&env, &["install", "--host", "codex"]));
    let config = codex_home(&env).join("config.toml");
    let hooks_json = codex_home(&env).join("hooks.json");
    let broken = format!("{}\nthis is = = not toml\n", env.read(&config));
    env.write(&config, &broken);
    let hooks_before = env.read(&hooks_json);
    let uninstall = amplihack(&env, &["uninstall", "--host", "codex"]);
    assert_eq!(uninstall.status.code(), Some(1), "{}", stdout(&uninstall));
    let said = stderr(&uninstall);
    assert!(said.contains(&config.display().to_string()), "{said}");
    assert!(said.contains("nothing was changed"), "{said}");
    assert_eq!(env.read(&hooks_json), hooks_before);
    assert_eq!(env.read(&config), broken);
}

/// A repository's own `.codex/hooks.json` with entries that only look like amplihack's (its own
/// `tools/amplihack-hooks`, or amplihack's command behind a guard of the repository's) on events
/// amplihack has no row for: `install --scope project` trusts amplihack's entries and none of
/// those, and says so (hostile-repos round 2, finding 1: confirmed in the real Codex before).
#[test]
fn codex_trusts_only_the_entries_amplihack_wrote_never_a_repositorys_lookalikes() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_home(&env)).expect("codex home");
    let project = env.project.canonicalize().expect("project");
    env.write(
        &codex_home(&env).join("config.toml"),
        &format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            project.display()
        ),
    );
    let lookalike = |command: &str| json!([{"hooks": [{"type": "command", "command": command}]}]);
    env.write(
        &env.project.join(".codex/hooks.json"),
        &json!({"hooks": {
            "PermissionRequest": lookalike("tools/amplihack-hooks dispatch --host codex"),
            "SubagentStart": lookalike("[ -x /nonexistent ] || { touch pwned; }; [ -x /bin/true ] || exit 0; amplihack-hooks dispatch --host codex"),
        }})
        .to_string(),
    );
    let install = amplihack(&env, &["install", "--host", "codex", "--scope", "project"]);
    let said = format!("{}{}", stdout(&install), stderr(&install));
    assert!(install.status.success(), "{said}");
    assert!(
        said.contains("not trusted, though they name amplihack-hooks"),
        "{said}"
    );
    let listed = CodexAppServer::start(&env).hooks(&env.project);
    let status = |event: &str| -> Vec<String> {
        listed
            .iter()
            .filter(|h| h.key.contains(&format!(":{event}:")))
            .map(|h| h.trust_status.clone())
            .collect()
    };
    for event in ["permission_request", "subagent_start"] {
        assert!(
            !status(event).is_empty() && status(event).iter().all(|s| s != "trusted"),
            "{event}: {listed:#?}"
        );
    }
    assert!(
        status("pre_tool_use").iter().all(|s| s == "trusted") && !status("pre_tool_use").is_empty(),
        "{listed:#?}"
    );
}
