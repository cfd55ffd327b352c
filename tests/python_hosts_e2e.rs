//! Mistral Vibe (`mistral-vibe` 3.0.3) and Kimi CLI (`kimi-cli` 1.52.0), the two agent CLIs from
//! PyPI, run amplihack for real: each from its venv under tests/hosts/<cli>/ (built by
//! tests/hosts/python-host.sh in ./test.sh's install step with a Python >= 3.12 found on the
//! machine; without one the tests print `SKIPPED`), offline against the fake model server (Chat
//! Completions, streamed), in a scratch home whose TOML file holds the user's comments and hooks.
//! After `amplihack install --host <cli>`: the Bash guard denies `git commit --no-verify` and its
//! reason reaches the model; a user plugin's deny is honoured; context: Vibe hands the model
//! PROJECT.md and the plugin's SessionStart context once, on the session's first tool result (it
//! has no session or prompt event), Kimi hands the model no hook's text at all, so there the test
//! proves that the SessionStart ran (the plugin's handler ran) and that nothing reached the
//! model; `doctor` is clean; `uninstall` gives the TOML file back byte for byte and the next turn
//! runs without amplihack. Each also times a turn with amplihack's entries against the same
//! entries running `true`, and writes what it proved as one JSON record (see
//! [`capabilities::proved`]).
//!
//! Observed (these versions, this machine): Vibe ~5-7 s a turn (a Rust TUI launching the Python
//! app server that runs the hooks); Kimi ~5 s, through the package's original Typer CLI (its
//! `kimi` script in 1.52.0 is a deprecation gate that, run bare, downloads an install script:
//! the wrapper never runs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::gate;
use crate::support;
use crate::support::capabilities::{self, Capability, Trust};
use crate::support::fake_models::{FakeModels, Turn};
use crate::support::{TestEnv, command, one_group, run_with_timeout, stderr, stdout};

const PROJECT_MARK: &str = "PROJECT-MD-MARK-7f3a";
const PLUGIN_MARK: &str = "USER-PLUGIN-CONTEXT-5c1e";
const PLUGIN_DENY: &str = "USER-PLUGIN-DENY-9b2d";
const KEEP_GOING: &str = "KEEP-GOING-MARK-41d0";
const GUARD_REASON: &str = "amplihack blocked `git commit --no-verify`";
const FAKE_MODEL: &str = "fake-model";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PyCli {
    Vibe,
    Kimi,
}

impl PyCli {
    fn name(self) -> &'static str {
        match self {
            PyCli::Vibe => "vibe",
            PyCli::Kimi => "kimi",
        }
    }

    fn package(self) -> (&'static str, &'static str) {
        match self {
            PyCli::Vibe => ("mistral-vibe", "3.0.3"),
            PyCli::Kimi => ("kimi-cli", "1.52.0"),
        }
    }

    /// The wrapper python-host.sh writes (`$AMPLIHACK_<NAME>_BIN` overrides it); `None`, with
    /// `SKIPPED` printed, where it was not installed (no Python >= 3.12 on the machine).
    pub(crate) fn bin(self) -> Option<PathBuf> {
        let var = format!("AMPLIHACK_{}_BIN", self.name().to_ascii_uppercase());
        let bin = std::env::var_os(&var)
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                support::repo_root().join(format!("tests/hosts/{0}/bin/{0}", self.name()))
            });
        if bin.exists() {
            return Some(bin);
        }
        let why = format!(
            "{} is not installed (tests/hosts/python-host.sh {} installs it where a Python >= 3.12 is found; ./test.sh runs it)",
            bin.display(),
            self.name()
        );
        println!("SKIPPED {}: {why}", self.name());
        capabilities::skipped(self.name(), &why);
        None
    }

    /// The host's TOML file amplihack registers in (user scope).
    pub(crate) fn settings(self, env: &TestEnv) -> PathBuf {
        match self {
            PyCli::Vibe => env.home.join(".vibe/hooks.toml"),
            PyCli::Kimi => env.home.join(".kimi/config.toml"),
        }
    }

    /// The user's file as they wrote it: comments, and (Vibe) a hook of their own; Kimi's as
    /// Kimi writes it, with its `hooks = []` among the other keys.
    fn original(self, env: &TestEnv) -> String {
        match self {
            PyCli::Vibe => format!(
                "# my Vibe hooks\n\n[[hooks]]\nname = \"my-log\"   # keep\ntype = \"post_tool\"\ncommand = \"cat >> '{}'\"\n\n# end\n",
                env.root().join("user-hook.log").display()
            ),
            PyCli::Kimi => "# my Kimi settings\ndefault_model = \"\"\ndefault_thinking = false\nhooks = []\nmerge_all_available_skills = false\n\n[models]\n\n[providers]\n\n[loop_control]\nmax_steps_per_turn = 50  # short\n".to_string(),
        }
    }
}

fn cli_command(
    env: &TestEnv,
    cli: PyCli,
    bin: &Path,
    models: &FakeModels,
    prompt: &str,
) -> Command {
    let mut command = env.command(bin);
    command
        .env("XDG_CONFIG_HOME", env.home.join(".config"))
        .env("XDG_DATA_HOME", env.home.join(".local/share"))
        .env("XDG_CACHE_HOME", env.home.join(".cache"))
        .env("XDG_STATE_HOME", env.home.join(".local/state"))
        .env("AMPLIHACK_LOG_DIR", env.root().join("logs"))
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("CI", "1");
    match cli {
        PyCli::Vibe => {
            let providers = json!([{"name": "fake", "api_base": models.openai_base(),
                "api_key_env_var": "FAKE_API_KEY", "api_style": "openai"}]);
            let model_list = json!([{"name": FAKE_MODEL, "provider": "fake", "alias": "fake"}]);
            command
                .env("FAKE_API_KEY", "dummy")
                .env("VIBE_ACTIVE_MODEL", "fake")
                .env("VIBE_PROVIDERS", providers.to_string())
                .env("VIBE_MODELS", model_list.to_string())
                .args(["-p", prompt, "--auto-approve"]);
        }
        PyCli::Kimi => {
            command
                .env("KIMI_BASE_URL", models.openai_base())
                .env("KIMI_API_KEY", "dummy")
                .env("KIMI_MODEL_NAME", FAKE_MODEL)
                .env("KIMI_CLI_NO_AUTO_UPDATE", "1")
                .args(["--print", "-p", prompt]);
        }
    }
    command
}

pub(crate) fn turn(
    env: &TestEnv,
    cli: PyCli,
    bin: &Path,
    models: &FakeModels,
    script: Vec<Turn>,
) -> (Output, f64) {
    models.reset(script);
    let command = cli_command(env, cli, bin, models, "Please run the commands.");
    let (output, elapsed) = run_with_timeout(command, b"", support::host_clis::TURN_LIMIT);
    (output, elapsed.as_secs_f64())
}

pub(crate) fn describe(output: &Output, models: &FakeModels) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output),
        models.describe()
    )
}

/// A user plugin (Claude Code format, in `~/.amplifier/hooks/`): context at session start (and a
/// file that says it ran), and a deny of any command that mentions `plugin-forbidden`.
fn user_plugin(env: &TestEnv) -> PathBuf {
    let ran = env.root().join("plugin-session-start-ran");
    let deny = env.script(
        &env.root().join("plugin/deny.sh"),
        &format!(
            "if grep -q plugin-forbidden; then\n  echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{PLUGIN_DENY}\"}}}}'\nfi"
        ),
    );
    let mut config = one_group(
        "SessionStart",
        None,
        vec![command(&format!(
            "touch '{}'; echo {PLUGIN_MARK}",
            ran.display()
        ))],
    );
    config["hooks"]["PreToolUse"] = json!([{
        "matcher": "Bash",
        "hooks": [command(&format!("'{}'", deny.display()))]
    }]);
    // Keeps the agent going once: the first Stop is blocked with a reason.
    let once = env.root().join("kept-going");
    let keep_going = env.script(
        &env.root().join("plugin/stop.sh"),
        &format!(
            "cat > /dev/null\nif [ ! -e '{0}' ]; then\n  touch '{0}'\n  echo '{{\"decision\":\"block\",\"reason\":\"{KEEP_GOING}\"}}'\nfi",
            once.display()
        ),
    );
    config["hooks"]["Stop"] = json!([{"hooks": [command(&format!("'{}'", keep_going.display()))]}]);
    // Every event amplihack hands the plugins, logged.
    let log = env.root().join("events.log");
    for event in EVENTS {
        let logger =
            json!({"hooks": [command(&format!("cat >> '{0}'; echo >> '{0}'", log.display()))]});
        match config["hooks"][event].as_array_mut() {
            Some(groups) => groups.push(logger),
            None => config["hooks"][event] = json!([logger]),
        }
    }
    env.plugin(&env.user_hooks_dir(), "my-plugin", &config);
    ran
}

/// The events the test's plugin logs.
const EVENTS: [&str; 9] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "SessionEnd",
];

/// amplihack's commands replaced by `true`: the same tables, nothing run.
fn with_true_entries(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("command = ") && line.contains("amplihack-hooks") {
                "command = \"true\"".to_string()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The speed figure: a turn of two shell calls with amplihack's entries against the same turn
/// with `true` in their place, interleaved, medians of three each. Goal 1.10; fails over 2.2.
fn speed(env: &TestEnv, cli: PyCli, bin: &Path, models: &FakeModels, settings: &Path) -> f64 {
    const GOAL: f64 = 1.10;
    let ours = std::fs::read_to_string(settings).expect("settings");
    let stub = with_true_entries(&ours);
    let mut best = (f64::INFINITY, String::new());
    let label = format!("{} turn, amplihack vs true", cli.name());
    let timed = || {
        let (output, secs) = turn(
            env,
            cli,
            bin,
            models,
            vec![Turn::shell("echo one"), Turn::shell("echo two")],
        );
        assert!(output.status.success(), "{}", describe(&output, models));
        secs
    };
    let passed = gate::gate(&label, GOAL, || {
        let (mut with_ours, mut with_true) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            std::fs::write(settings, &ours).expect("write");
            with_ours.push(timed());
            std::fs::write(settings, &stub).expect("write");
            with_true.push(timed());
        }
        std::fs::write(settings, &ours).expect("write");
        let (a, b) = (
            support::median(&mut with_ours),
            support::median(&mut with_true),
        );
        let detail = format!("amplihack {a:.2} s, true {b:.2} s");
        if a / b < best.0 {
            best = (a / b, detail.clone());
        }
        Some((a / b, detail))
    });
    support::figure(&format!(
        "{}: a turn of two shell calls, amplihack's entries vs the same entries running `true`: {} (medians of 3); ratio {:.2} (goal {GOAL:.2}, fails over {:.2})",
        cli.name(),
        best.1,
        best.0,
        GOAL * gate::FAIL_FACTOR
    ));
    assert!(passed, "{label}: over twice the goal");
    best.0
}

/// The events amplihack handed the test's plugin in the run (its log of every event).
fn events_seen(env: &TestEnv) -> Vec<String> {
    let text = std::fs::read_to_string(env.root().join("events.log")).unwrap_or_default();
    let mut seen: Vec<String> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .flatten()
        .filter_map(|v| v["hook_event_name"].as_str().map(str::to_string))
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

fn proof(cli: PyCli) {
    let Some(bin) = cli.bin() else { return };
    let _alone = support::alone();
    let env = TestEnv::new();
    let models = FakeModels::start(Vec::new());
    let settings = cli.settings(&env);
    let original = cli.original(&env);
    env.write(&settings, &original);
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        &format!("# The project\n{PROJECT_MARK}: the test project.\n"),
    );
    let plugin_ran = user_plugin(&env);
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git init");
    assert!(git.success());

    let install = env.run_amplihack(&["install", "--host", cli.name()]);
    assert!(
        install.status.success(),
        "{}{}",
        stdout(&install),
        stderr(&install)
    );
    let installed = env.read(&settings);
    assert!(installed.contains("amplihack-hooks"), "{installed}");
    assert_eq!(
        installed.matches('#').count(),
        original.matches('#').count() + usize::from(cli == PyCli::Kimi),
        "the user's comments are kept (Kimi: one of amplihack's, where `hooks = []` was): {installed}"
    );

    let (output, _) = turn(
        &env,
        cli,
        &bin,
        &models,
        vec![
            Turn::shell("git commit --no-verify -m x || touch commit-ran"),
            Turn::shell("echo plugin-forbidden > plugin-ran"),
            Turn::shell("echo still-working"),
        ],
    );
    let why = describe(&output, &models);
    assert!(output.status.success(), "{why}");
    assert!(
        !env.project.join("commit-ran").exists(),
        "the guard did not deny: {why}"
    );
    assert!(
        !env.project.join("plugin-ran").exists(),
        "the plugin's deny was not honoured: {why}"
    );
    let saw = models.everything_the_model_saw();
    assert!(
        saw.contains(GUARD_REASON),
        "the guard's reason never reached the model: {saw}\n{why}\ntool results: {:#?}",
        models.tool_results()
    );
    assert!(
        saw.contains(PLUGIN_DENY),
        "the plugin's reason never reached the model: {why}"
    );
    assert!(models.tool_result_contains("still-working"), "{why}");
    assert!(
        plugin_ran.exists(),
        "the plugin's SessionStart never ran: {why}"
    );
    let context = match cli {
        PyCli::Vibe => {
            for (mark, what) in [
                (PROJECT_MARK, "PROJECT.md"),
                (PLUGIN_MARK, "the plugin's context"),
            ] {
                assert_eq!(
                    models.count_in_last(mark),
                    1,
                    "{what} should reach the model once: {why}"
                );
            }
            // The user's own hook in the same file still ran.
            assert!(
                env.root().join("user-hook.log").exists(),
                "the user's hook did not run: {why}"
            );
            "first tool result"
        }
        PyCli::Kimi => {
            // Kimi turns no hook output into context: amplihack ran the SessionStart (the
            // plugin's handler ran), and nothing of it reached the model.
            assert_eq!(models.count_in_last(PROJECT_MARK), 0, "{why}");
            assert_eq!(models.count_in_last(PLUGIN_MARK), 0, "{why}");
            "none"
        }
    };
    // The plugin's Stop block kept the agent going: one more request, the reason in it.
    assert!(
        saw.contains(KEEP_GOING),
        "the Stop block did not keep the agent going: {why}"
    );
    let events = events_seen(&env);
    let log = std::fs::read_to_string(env.root().join("logs/hooks.log")).unwrap_or_default();
    assert!(!log.contains("panic"), "{log}");

    let doctor = env.run_amplihack(&["doctor"]);
    assert!(
        doctor.status.success(),
        "{}{}",
        stdout(&doctor),
        stderr(&doctor)
    );
    // `amplihack log --host <cli>`: the guard's and the plugin's denials, under this host.
    let audit = env.run_amplihack(&["log", "--host", cli.name(), "--decision", "deny"]);
    let audit = stdout(&audit);
    assert!(
        audit.contains("builtin:bash-guard") && audit.contains(GUARD_REASON),
        "{audit}"
    );
    assert!(audit.contains(PLUGIN_DENY), "{audit}");
    assert!(
        audit.lines().skip(1).all(|l| l.contains(cli.name())),
        "{audit}"
    );

    let ratio = speed(&env, cli, &bin, &models, &settings);
    // The speed test's turns with `true` in amplihack's place ran sessions that never called
    // amplihack: doctor finds them in the host's own session records.
    let silent = env.run_amplihack(&["doctor", "--host", cli.name()]);
    assert!(
        !silent.status.success() && stdout(&silent).contains("did not call amplihack in it"),
        "{}",
        stdout(&silent)
    );

    let uninstall = env.run_amplihack(&["uninstall", "--host", cli.name()]);
    assert!(
        uninstall.status.success(),
        "{}{}",
        stdout(&uninstall),
        stderr(&uninstall)
    );
    assert_eq!(
        env.read(&settings),
        original,
        "not given back byte for byte"
    );
    let (output, _) = turn(
        &env,
        cli,
        &bin,
        &models,
        vec![Turn::shell(
            "git commit --no-verify -m x || touch commit-ran",
        )],
    );
    assert!(output.status.success(), "{}", describe(&output, &models));
    assert!(
        env.project.join("commit-ran").exists(),
        "something still denied the commit: {}",
        describe(&output, &models)
    );
    assert!(!models.everything_the_model_saw().contains(GUARD_REASON));

    let (_, version) = cli.package();
    let events: Vec<&'static str> = capabilities::EVENTS
        .iter()
        .copied()
        .filter(|e| events.iter().any(|seen| seen == e))
        .collect();
    eprintln!(
        "{}: a turn with amplihack {ratio:.2}x the same entries running true",
        cli.name()
    );
    for capability in [
        Capability::Events(events),
        Capability::DenyWithReason,
        Capability::KeepGoing,
        Capability::TrustStep(Trust::NoneAsked),
    ] {
        capabilities::proved(cli.name(), version, capability);
    }
    if context != "none" {
        capabilities::proved(cli.name(), version, Capability::Context);
    }
}

#[test]
fn vibe_runs_amplihack() {
    proof(PyCli::Vibe);
}

#[test]
fn kimi_runs_amplihack() {
    proof(PyCli::Kimi);
}

/// Vibe's project scope: `.vibe/hooks.toml` in the project, kept out of git, run by Vibe only in
/// a folder the user trusted (install and doctor say so until then); uninstall leaves the
/// project as it was.
#[test]
fn vibe_runs_a_projects_hooks_only_when_trusted() {
    let cli = PyCli::Vibe;
    let Some(bin) = cli.bin() else { return };
    let env = TestEnv::new();
    let models = FakeModels::start(Vec::new());
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git init");
    assert!(git.success());
    let install = env.run_amplihack(&["install", "--scope", "project", "--host", "vibe"]);
    let said = format!("{}{}", stdout(&install), stderr(&install));
    assert!(install.status.success(), "{said}");
    assert!(said.contains("only in a folder you trusted"), "{said}");
    let file = env.project.join(".vibe/hooks.toml");
    assert!(env.read(&file).contains("--host vibe"));
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&env.project)
        .output()
        .expect("git status");
    assert_eq!(stdout(&status), "", "nothing of amplihack's in git status");
    let doctor = env.run_amplihack(&["doctor"]);
    assert!(
        stdout(&doctor).contains("only in a folder you trusted"),
        "{}",
        stdout(&doctor)
    );

    let commit = || {
        vec![Turn::shell(
            "git commit --no-verify -m x || touch commit-ran",
        )]
    };
    // Not trusted: Vibe does not read the project's hooks.
    let (output, _) = turn(&env, cli, &bin, &models, commit());
    assert!(output.status.success(), "{}", describe(&output, &models));
    assert!(
        env.project.join("commit-ran").exists(),
        "an untrusted project's hooks ran: {}",
        describe(&output, &models)
    );
    std::fs::remove_file(env.project.join("commit-ran")).expect("rm");
    // Trusted for this run (`--trust`): the guard denies.
    models.reset(commit());
    let mut command = cli_command(&env, cli, &bin, &models, "Please run the commands.");
    command.arg("--trust");
    let (output, _) = run_with_timeout(command, b"", support::host_clis::TURN_LIMIT);
    let why = describe(&output, &models);
    assert!(output.status.success(), "{why}");
    assert!(
        !env.project.join("commit-ran").exists(),
        "the guard did not deny: {why}"
    );
    assert!(
        models.everything_the_model_saw().contains(GUARD_REASON),
        "{why}"
    );

    let uninstall = env.run_amplihack(&["uninstall", "--host", "vibe"]);
    assert!(
        uninstall.status.success(),
        "{}{}",
        stdout(&uninstall),
        stderr(&uninstall)
    );
    assert!(
        !env.project.join(".vibe").exists(),
        "the project's .vibe/ is left"
    );
    let exclude = env.read(&env.project.join(".git/info/exclude"));
    assert!(!exclude.contains(".vibe"), "{exclude}");
    let version = cli.package().1;
    capabilities::proved("vibe", version, Capability::DenyWithReason);
    capabilities::proved(
        "vibe",
        version,
        Capability::TrustStep(Trust::UserTrustsTheFolder),
    );
}

/// Kimi reads no project hooks: `--scope project` (or local, managed) is refused, nothing written.
#[test]
fn kimi_has_only_the_user_scope() {
    let env = TestEnv::new();
    for scope in ["project", "local", "managed"] {
        let refused = env.run_amplihack(&["install", "--scope", scope, "--host", "kimi"]);
        let said = stderr(&refused);
        assert!(!refused.status.success(), "{scope}: {said}");
        assert!(
            said.contains(&format!("Kimi CLI has no {scope} scope (its scopes: user)")),
            "{said}"
        );
    }
    assert!(!env.home.join(".kimi").exists());
    assert!(!env.project.join(".kimi").exists());
}
