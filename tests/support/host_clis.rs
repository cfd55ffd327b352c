//! The other agent CLIs, driven for real and offline against [`super::fake_models`]:
//! their binaries (pinned in tests/hosts/<name>/package.json, installed by ./test.sh), the
//! minimal model-provider configuration each needs in the scratch home, one headless turn, and
//! hooks registered by hand.
//!
//! Observed quirks (these versions, this machine):
//! - All six ran offline with no network at all (checked once under `unshare -n`), no login, and
//!   wrote only into the scratch home (and TMPDIR). Times are one whole turn (a shell call and a
//!   final text) run alone on a 2-core machine; in parallel they roughly double.
//! - Codex 0.169.0 (~0.4 s): the provider is given as `-c` overrides, not in `config.toml`, which
//!   stays free for what `codex app-server` writes there (`[hooks.state."<key>"] trusted_hash`).
//!   Needs `FAKE_API_KEY` (the provider's `env_key`) and `--skip-git-repo-check` outside a git
//!   repository. Hooks nobody trusted are skipped silently (`--dangerously-bypass-hook-trust`, or
//!   [`codex_trust_all`]); the trust key is `<hooks.json path>:pre_tool_use:<group>:<handler>`
//!   and the hash covers command, matcher and timeout. It writes `$CODEX_HOME`: sqlite state,
//!   `sessions/`, `tmp/`, and copies its system skills into `skills/.system` in every new home.
//!   Hook payload: `tool_name` `Bash`, `tool_input.command` (the model called `exec_command`).
//! - Copilot 1.0.102 (~0.9 s): environment only (`COPILOT_OFFLINE`, `COPILOT_PROVIDER_*`). On
//!   first run it unpacks itself (235 MB): `COPILOT_PKG_CACHE_HOME` shares one copy
//!   ([`copilot_pkg_cache`]). Writes `~/.copilot/` (config.json, session-state, session-store.db,
//!   logs) and `~/.cache/Microsoft/DeveloperTools/deviceid`. Hooks: the Claude-format (PascalCase)
//!   file `~/.copilot/hooks/*.json`; payload `tool_name` `Bash`.
//! - Qwen 0.24.4 (~3 s, most of it its own start-up): `OPENAI_*` variables plus
//!   `security.auth.selectedType` in `~/.qwen/settings.json`, beside the hooks (`timeout` in ms).
//!   Writes `~/.qwen/` (projects/<cwd>/chats, tmp, usage_record.jsonl, extension-store). Payload
//!   `tool_name` `run_shell_command`.
//! - Droid 0.225.2 (~0.5 s): `customModels` in `~/.factory/settings.json` (beside the hooks),
//!   `-m custom:fake-model`, `FACTORY_AIRGAP_ENABLED=1`, `FACTORY_DISABLE_KEYRING=1`. Writes
//!   `~/.factory/` (sessions, logs, state, telemetry id, certs, two bundled droids). Payload
//!   `tool_name` `Execute`; the model must send all four `Execute` arguments.
//! - Gemini 0.61.0 (~2 s): the model must keep a Gemini name (`gemini-2.5-flash`);
//!   `GOOGLE_GEMINI_BASE_URL` is the server root (no `/v1`); `GEMINI_CLI_TRUST_WORKSPACE=true`;
//!   `selectedType` in `~/.gemini/settings.json` beside the hooks (`timeout` in ms). Two
//!   `streamGenerateContent` requests per turn, no side requests seen. Writes `~/.gemini/`
//!   (projects.json, history, tmp/<project>/chats). Hook event `BeforeTool`, payload `tool_name`
//!   `run_shell_command`.
//! - opencode 1.18.33 (~3.7 s): `@ai-sdk/openai-compatible` is bundled (no download). It npm-
//!   installs `@opencode-ai/plugin` into every config directory it reads (`~/.config/opencode`,
//!   a project's `.opencode`) in the background: `npm_config_offline=true` and a registry on the
//!   fake make that fail at once (a logged warning) instead of going online and filling `~/.npm`
//!   with 100 MB. The first request is a tool-less title. No command hooks: a bridge plugin
//!   ([`opencode_bridge`]) gets `input.tool` `bash` and `output.args` `{command, description}`.
//! - Pi 0.73.1 (~2 s): the provider is an extension of the test's own ([`pi_provider`], `-e`),
//!   `PI_OFFLINE=1`; prints `--version` on stderr. Writes `~/.pi/agent/` (auth.json, sessions).
//!   No command hooks: extensions (`tool_call` gets `toolName` `bash`, `input` `{command}`).
//! - Cline 3.0.65 (~4 s alone, 10 s and more beside other work: its plugin process starts per
//!   run): `CLINE_PROVIDER_SETTINGS_PATH` (the file needs `updatedAt`),
//!   `CLINE_SESSION_BACKEND_MODE=local` (else it leaves a hub daemon running). A one-word prompt
//!   is read as a subcommand. Writes `~/.cline/data/`. Shell tool `run_commands {commands: [...]}`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

use super::fake_models::FakeModels;
use super::{TestEnv, run_with_timeout, test_host};

/// The model name every CLI is configured with (Gemini keeps a Gemini name: see [`Cli::model`]).
pub const FAKE_MODEL: &str = "fake-model";

/// How long one turn may take before the test fails.
pub const TURN_LIMIT: Duration = Duration::from_secs(240);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cli {
    Codex,
    Copilot,
    Qwen,
    Droid,
    Gemini,
    Opencode,
    Pi,
    Cline,
}

impl Cli {
    pub const ALL: [Cli; 8] = [
        Cli::Codex,
        Cli::Copilot,
        Cli::Qwen,
        Cli::Droid,
        Cli::Gemini,
        Cli::Opencode,
        Cli::Pi,
        Cli::Cline,
    ];

    /// Lower-case name: the directory under tests/hosts and the `--host` value.
    pub fn name(self) -> &'static str {
        match self {
            Cli::Codex => "codex",
            Cli::Copilot => "copilot",
            Cli::Qwen => "qwen",
            Cli::Droid => "droid",
            Cli::Gemini => "gemini",
            Cli::Opencode => "opencode",
            Cli::Pi => "pi",
            Cli::Cline => "cline",
        }
    }

    /// The variable that overrides the binary: `AMPLIHACK_<NAME>_BIN`.
    pub fn bin_var(self) -> String {
        format!("AMPLIHACK_{}_BIN", self.name().to_ascii_uppercase())
    }

    /// The binary, relative to the repository.
    pub fn relative_bin(self) -> &'static str {
        match self {
            Cli::Codex => "tests/hosts/codex/node_modules/.bin/codex",
            Cli::Copilot => "tests/hosts/copilot/node_modules/.bin/copilot",
            Cli::Qwen => "tests/hosts/qwen/node_modules/.bin/qwen",
            Cli::Droid => "tests/hosts/droid/node_modules/@factory/cli-linux-x64/bin/droid",
            Cli::Gemini => "tests/hosts/gemini/node_modules/.bin/gemini",
            Cli::Opencode => "tests/hosts/opencode/node_modules/opencode-linux-x64/bin/opencode",
            Cli::Pi => "tests/hosts/pi/node_modules/.bin/pi",
            Cli::Cline => "tests/hosts/cline/node_modules/.bin/cline",
        }
    }

    /// The binary: the Codex of [`each_codex`]'s round, else `$AMPLIHACK_<NAME>_BIN`, else the
    /// repository's copy.
    pub fn bin(self) -> PathBuf {
        if self == Cli::Codex
            && let Some(bin) = CODEX_ROUND.with_borrow(Clone::clone)
        {
            return bin;
        }
        test_host(&self.bin_var(), self.relative_bin())
    }

    /// The version of the binary [`Cli::bin`] names, from its npm package (what the tests
    /// record as tested: [`super::capabilities`]).
    pub fn version(self) -> String {
        super::capabilities::npm_version(&self.bin())
    }

    /// The model the CLI is configured to ask for.
    pub fn model(self) -> &'static str {
        match self {
            Cli::Gemini => "gemini-2.5-flash",
            _ => FAKE_MODEL,
        }
    }

    /// The event that fires before a tool runs (opencode: the plugin hook's name).
    pub fn pre_tool_event(self) -> &'static str {
        match self {
            Cli::Gemini => "BeforeTool",
            Cli::Opencode => "tool.execute.before",
            Cli::Pi => "tool_call",
            Cli::Cline => "beforeTool",
            _ => "PreToolUse",
        }
    }

    /// The event that fires after a tool ran (opencode: the plugin hook's name).
    pub fn post_tool_event(self) -> &'static str {
        match self {
            Cli::Gemini => "AfterTool",
            Cli::Opencode => "tool.execute.after",
            Cli::Pi => "tool_result",
            Cli::Cline => "afterTool",
            _ => "PostToolUse",
        }
    }

    /// The shell tool's name in the hook payload (`tool_name`; opencode: `tool`).
    pub fn shell_tool_in_hooks(self) -> &'static str {
        match self {
            Cli::Codex | Cli::Copilot => "Bash",
            Cli::Qwen | Cli::Gemini => "run_shell_command",
            Cli::Droid => "Execute",
            Cli::Opencode | Cli::Pi => "bash",
            Cli::Cline => "run_commands",
        }
    }

    /// The settings file this CLI's user-scope hooks go in (by [`register_command_hook`]), which
    /// for Qwen, Droid and Gemini also holds the provider settings; opencode: its config file
    /// (its hooks are plugins, in `plugin/` beside it).
    pub fn user_settings(self, env: &TestEnv) -> PathBuf {
        match self {
            Cli::Codex => codex_home(env).join("hooks.json"),
            Cli::Copilot => env.home.join(".copilot/hooks/amplihack-test.json"),
            Cli::Qwen => env.home.join(".qwen/settings.json"),
            Cli::Droid => env.home.join(".factory/settings.json"),
            Cli::Gemini => env.home.join(".gemini/settings.json"),
            Cli::Opencode => opencode_config_dir(env).join("opencode.json"),
            Cli::Pi => env.home.join(".pi/agent/settings.json"),
            Cli::Cline => env.root().join("cline-provider.json"),
        }
    }

    /// Whether the CLI's hook `timeout` is in milliseconds (else seconds).
    pub fn timeout_in_ms(self) -> bool {
        matches!(self, Cli::Qwen | Cli::Gemini)
    }
}

/// The Codex versions the tests run, each installed by test.sh in its directory: the pinned one
/// (tests/hosts/codex) and the newest (tests/hosts/codex-0.171).
pub const CODEX_VERSIONS: [(&str, &str); 2] = [
    ("0.169.0", "tests/hosts/codex/node_modules/.bin/codex"),
    ("0.171.0", "tests/hosts/codex-0.171/node_modules/.bin/codex"),
];

thread_local! {
    /// The Codex binary of the running [`each_codex`] round on this thread.
    static CODEX_ROUND: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// Runs `test` once per Codex version ([`CODEX_VERSIONS`]), [`Cli::bin`] naming that version's
/// binary meanwhile (what the test runs, and what it hands amplihack as `AMPLIHACK_CODEX_BIN`).
pub fn each_codex(mut test: impl FnMut(&str)) {
    for (version, relative) in CODEX_VERSIONS {
        let bin = super::repo_root().join(relative);
        assert!(
            bin.exists(),
            "Codex {version} is not installed at {relative} (./test.sh installs it)"
        );
        CODEX_ROUND.with_borrow_mut(|round| *round = Some(bin));
        // Captured with the test's output: a failure says which version it was.
        eprintln!("Codex {version}:");
        test(version);
        CODEX_ROUND.with_borrow_mut(|round| *round = None);
    }
}

/// `$CODEX_HOME` for a test: `<home>/.codex`.
pub fn codex_home(env: &TestEnv) -> PathBuf {
    env.home.join(".codex")
}

/// `$XDG_CONFIG_HOME/opencode` for a test.
pub fn opencode_config_dir(env: &TestEnv) -> PathBuf {
    env.home.join(".config/opencode")
}

/// Where Copilot unpacks its own package (about 235 MB) on first run: shared by every test, kept
/// beside its node_modules (git-ignored), so that each scratch home does not get a copy.
pub fn copilot_pkg_cache() -> PathBuf {
    super::repo_root().join("tests/hosts/copilot/pkg-cache")
}

/// Reads a JSON object file (an empty object when it does not exist).
pub fn read_json_object(path: &Path) -> Value {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let value: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
            assert!(value.is_object(), "{}: not a JSON object", path.display());
            value
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

/// Sets `keys` (top-level, replacing) in the JSON object file at `path`, keeping what else it
/// holds.
pub fn merge_json(path: &Path, keys: Value) {
    let mut value = read_json_object(path);
    for (k, v) in keys.as_object().expect("keys object") {
        merge_value(&mut value[k.as_str()], v);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, serde_json::to_string_pretty(&value).expect("json")).expect("write");
}

/// Objects merge key by key; anything else replaces.
fn merge_value(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                merge_value(into.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (into, from) => *into = from.clone(),
    }
}

/// A command for `cli` with the test's environment: HOME, every XDG directory and CODEX_HOME in
/// the scratch home, the CLI's offline switches and its provider variables pointing at `models`.
/// It runs in the project directory.
pub fn cli_command(env: &TestEnv, cli: Cli, models: &FakeModels) -> Command {
    let mut command = env.command(&cli.bin());
    command
        .env("XDG_CONFIG_HOME", env.home.join(".config"))
        .env("XDG_DATA_HOME", env.home.join(".local/share"))
        .env("XDG_CACHE_HOME", env.home.join(".cache"))
        .env("XDG_STATE_HOME", env.home.join(".local/state"))
        .env("CODEX_HOME", codex_home(env))
        .env("AMPLIHACK_LOG_DIR", env.root().join("logs"))
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("CI", "1");
    match cli {
        Cli::Codex => {
            command.env("FAKE_API_KEY", "dummy");
        }
        Cli::Copilot => {
            command
                .env("COPILOT_OFFLINE", "true")
                .env("COPILOT_PROVIDER_BASE_URL", models.openai_base())
                .env("COPILOT_PROVIDER_TYPE", "openai")
                .env("COPILOT_PROVIDER_API_KEY", "dummy")
                .env("COPILOT_MODEL", FAKE_MODEL)
                .env("COPILOT_AUTO_UPDATE", "false")
                .env("COPILOT_PKG_CACHE_HOME", copilot_pkg_cache());
        }
        Cli::Qwen => {
            command
                .env("OPENAI_BASE_URL", models.openai_base())
                .env("OPENAI_API_KEY", "dummy")
                .env("OPENAI_MODEL", FAKE_MODEL);
        }
        Cli::Droid => {
            command
                .env("FACTORY_AIRGAP_ENABLED", "1")
                .env("FACTORY_DISABLE_KEYRING", "1");
        }
        Cli::Gemini => {
            command
                .env("GOOGLE_GEMINI_BASE_URL", &models.url)
                .env("GEMINI_API_KEY", "dummy")
                .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        }
        Cli::Opencode => {
            command
                .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                .env("npm_config_offline", "true")
                .env(
                    "npm_config_registry",
                    format!("{}/npm-registry/", models.url),
                );
        }
        Cli::Pi => {
            command
                .env("PI_OFFLINE", "1")
                .env("PI_SKIP_VERSION_CHECK", "1")
                .env("PI_TELEMETRY", "0")
                .arg("-e")
                .arg(pi_provider(env));
        }
        Cli::Cline => {
            command
                .env("CLINE_PROVIDER_SETTINGS_PATH", cli.user_settings(env))
                .env("CLINE_SESSION_BACKEND_MODE", "local")
                // Cline gives its plugin process 4 s to load, then runs without plugins (its log:
                // "plugin loading failed; continuing without plugins"): too short on a busy
                // 2-core machine.
                .env("CLINE_PLUGIN_IMPORT_TIMEOUT_MS", "60000");
        }
    }
    command
}

/// The Codex `-c` overrides that select the fake provider (so `config.toml` stays whatever the
/// test or the installer made it: `codex app-server` writes hook trust there).
pub fn codex_provider_overrides(models: &FakeModels) -> Vec<String> {
    [
        format!("model=\"{FAKE_MODEL}\""),
        "model_provider=\"fake\"".to_string(),
        "model_providers.fake.name=\"Fake\"".to_string(),
        format!("model_providers.fake.base_url=\"{}\"", models.openai_base()),
        "model_providers.fake.wire_api=\"responses\"".to_string(),
        "model_providers.fake.env_key=\"FAKE_API_KEY\"".to_string(),
        "approval_policy=\"never\"".to_string(),
        "sandbox_mode=\"danger-full-access\"".to_string(),
    ]
    .into_iter()
    .flat_map(|o| ["-c".to_string(), o])
    .collect()
}

/// Writes the CLI's provider settings into the scratch home, merged into a settings file the
/// test may already have written (Qwen, Droid and Gemini keep hooks there too). Codex and
/// Copilot need no file (command-line overrides and environment).
pub fn configure_provider(env: &TestEnv, cli: Cli, models: &FakeModels) {
    match cli {
        Cli::Codex | Cli::Copilot => {}
        Cli::Qwen => merge_json(
            &cli.user_settings(env),
            json!({
                "security": {"auth": {"selectedType": "openai"}},
                "model": {"name": FAKE_MODEL},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false}
            }),
        ),
        Cli::Droid => merge_json(
            &cli.user_settings(env),
            json!({
                "customModels": [{
                    "model": FAKE_MODEL, "displayName": "Fake", "baseUrl": models.openai_base(),
                    "apiKey": "dummy", "provider": "generic-chat-completion-api",
                    "maxOutputTokens": 4096
                }]
            }),
        ),
        Cli::Gemini => merge_json(
            &cli.user_settings(env),
            json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "model": {"name": cli.model()},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false}
            }),
        ),
        Cli::Opencode => merge_json(
            &cli.user_settings(env),
            json!({
                "$schema": "https://opencode.ai/config.json",
                "provider": {"fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": models.openai_base(), "apiKey": "dummy"},
                    "models": {FAKE_MODEL: {"name": "Fake model"}}
                }},
                "model": format!("fake/{FAKE_MODEL}"),
                "autoupdate": false,
                "share": "disabled"
            }),
        ),
        Cli::Pi => env.write(&pi_provider(env), &pi_provider_text(models)),
        Cli::Cline => env.write(
            &cli.user_settings(env),
            &json!({
                "version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                "providers": {"openai-compatible": {"settings": {
                    "provider": "openai-compatible", "apiKey": "dummy", "model": FAKE_MODEL,
                    "baseUrl": models.openai_base()
                }, "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}
            })
            .to_string(),
        ),
    }
}

/// Pi's fake provider: an extension of the test's own, passed with `-e` (Pi reads custom models
/// from `~/.pi/agent/models.json`, a user file the tests leave alone).
pub fn pi_provider(env: &TestEnv) -> PathBuf {
    env.root().join("pi-fake-provider.js")
}

fn pi_provider_text(models: &FakeModels) -> String {
    let base = serde_json::to_string(&models.openai_base()).expect("json");
    format!(
        r#"export default function (pi) {{
  pi.registerProvider("fake", {{ name: "Fake", baseUrl: {base}, apiKey: "dummy",
    api: "openai-completions", compat: {{ supportsDeveloperRole: false, supportsReasoningEffort: false }},
    models: [{{ id: "{FAKE_MODEL}", name: "Fake", reasoning: false, input: ["text"], contextWindow: 128000,
      maxTokens: 4096, cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }} }}] }});
}}
"#
    )
}

/// The arguments for one headless turn on `prompt` (after the CLI's own `extra` ones).
pub fn turn_args(cli: Cli, models: &FakeModels, prompt: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    match cli {
        Cli::Codex => {
            args.push("exec".into());
            args.extend(codex_provider_overrides(models));
            args.extend([
                "--skip-git-repo-check".into(),
                "--color".into(),
                "never".into(),
            ]);
        }
        Cli::Copilot => {
            args.extend(["--allow-all-tools".into(), "--no-auto-update".into()]);
        }
        Cli::Qwen | Cli::Gemini => args.push("--yolo".into()),
        Cli::Droid => {
            args.extend(["exec".into(), "-m".into(), format!("custom:{FAKE_MODEL}")]);
            args.extend(["--auto".into(), "high".into()]);
        }
        Cli::Opencode => args.push("run".into()),
        Cli::Pi => args.extend([
            "--provider".into(),
            "fake".into(),
            "--model".into(),
            FAKE_MODEL.into(),
        ]),
        Cli::Cline => args.extend([
            "-P".into(),
            "openai-compatible".into(),
            "-m".into(),
            FAKE_MODEL.into(),
        ]),
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    match cli {
        Cli::Codex | Cli::Droid | Cli::Opencode | Cli::Cline => args.push(prompt.into()),
        Cli::Copilot | Cli::Qwen | Cli::Gemini | Cli::Pi => {
            args.extend(["-p".into(), prompt.into()])
        }
    }
    args
}

/// One CLI turn's outcome.
pub struct CliRun {
    pub cli: Cli,
    pub output: Output,
    pub elapsed: Duration,
}

impl CliRun {
    pub fn stdout(&self) -> String {
        super::stdout(&self.output)
    }

    pub fn stderr(&self) -> String {
        super::stderr(&self.output)
    }

    /// Both streams, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "{} exited {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
            self.cli.name(),
            self.output.status.code(),
            self.elapsed,
            self.stdout(),
            self.stderr()
        )
    }
}

/// Configures the provider and runs one headless turn of `cli` on `prompt` in the project.
pub fn run_turn(env: &TestEnv, cli: Cli, models: &FakeModels, prompt: &str) -> CliRun {
    run_turn_with(env, cli, models, prompt, &[], &[])
}

/// [`run_turn`] with extra arguments (before the prompt) and environment.
pub fn run_turn_with(
    env: &TestEnv,
    cli: Cli,
    models: &FakeModels,
    prompt: &str,
    args: &[&str],
    extra_env: &[(&str, &str)],
) -> CliRun {
    configure_provider(env, cli, models);
    let mut command = cli_command(env, cli, models);
    command
        .args(turn_args(cli, models, prompt, args))
        .envs(extra_env.iter().copied());
    let (output, elapsed) = run_with_timeout(command, b"", TURN_LIMIT);
    CliRun {
        cli,
        output,
        elapsed,
    }
}

/// Registers `command` as a user-scope command hook for `event` (all tools), the way each CLI
/// reads them, next to whatever the file holds. opencode has no command hooks: a bridge plugin
/// (`plugin/<name>.js`) runs `command` through `sh -c` on the plugin hook `event` with a JSON
/// payload on stdin (`hook_event_name`, `tool_name`, `tool_input`, `session_id`, `call_id`, and
/// `tool_response` after a tool), and throws (denying the tool) when it exits 2.
pub fn register_command_hook(env: &TestEnv, cli: Cli, event: &str, command: &str) {
    assert!(
        !matches!(cli, Cli::Pi | Cli::Cline),
        "{cli:?}: no command hooks written here (Pi has extensions; Cline's hook files are not used)"
    );
    if cli == Cli::Opencode {
        let plugins = opencode_config_dir(env).join("plugin");
        std::fs::create_dir_all(&plugins).expect("mkdir plugin");
        let count = std::fs::read_dir(&plugins).map_or(0, |d| d.count());
        let file = plugins.join(format!("amplihack-test-{count}.js"));
        env.write(&file, &opencode_bridge(event, command));
        return;
    }
    let timeout = if cli.timeout_in_ms() { 30_000 } else { 30 };
    let group = json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]});
    let path = cli.user_settings(env);
    let mut settings = read_json_object(&path);
    match settings["hooks"][event].as_array_mut() {
        Some(groups) => groups.push(group),
        None => settings["hooks"][event] = json!([group]),
    }
    env.write(
        &path,
        &serde_json::to_string_pretty(&settings).expect("json"),
    );
}

/// An opencode plugin that runs a command on one plugin hook, Claude-Code style.
pub fn opencode_bridge(event: &str, command: &str) -> String {
    let event = serde_json::to_string(event).expect("json");
    let command = serde_json::to_string(command).expect("json");
    format!(
        r#"// Written by amplihack's tests: runs a command hook on an opencode plugin hook.
import {{ spawnSync }} from "node:child_process";

export const AmplihackTestBridge = async ({{ directory }}) => ({{
  [{event}]: async (input, output) => {{
    const payload = {{
      hook_event_name: {event},
      session_id: input.sessionID,
      call_id: input.callID,
      cwd: directory,
      tool_name: input.tool,
      tool_input: input.args ?? output.args,
    }};
    if (output && "output" in output) payload.tool_response = output.output;
    const run = spawnSync("/bin/sh", ["-c", {command}], {{
      input: JSON.stringify(payload),
      encoding: "utf8",
    }});
    if (run.status === 2) throw new Error((run.stderr || "denied by hook").trim());
  }},
}});
"#
    )
}

/// A hook script that appends its stdin (one line per call) to `log`; returns the command to
/// register.
pub fn logging_hook(env: &TestEnv, name: &str, log: &Path) -> String {
    let script = env.root().join("hooks").join(format!("{name}.sh"));
    env.script(
        &script,
        &format!("cat >> '{}'\necho >> '{}'", log.display(), log.display()),
    );
    format!("'{}'", script.display())
}

/// The JSON payloads a [`logging_hook`] logged.
pub fn logged_payloads(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|v| v.unwrap_or_else(|e| panic!("hook stdin in {}: {e}\n{text}", log.display())))
        .collect()
}

/// What `codex app-server` reported of one hook in `hooks/list`.
#[derive(Clone, Debug)]
pub struct CodexHook {
    /// The trust key: `<source path>:<event>:<group>:<handler>`.
    pub key: String,
    pub current_hash: String,
    pub trust_status: String,
    /// The whole entry, as Codex sent it.
    pub entry: Value,
}

/// A JSON-RPC session with `codex app-server` over stdio, in the test's environment.
pub struct CodexAppServer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    next_id: u64,
    /// Everything the server sent, for failure messages.
    pub transcript: Vec<String>,
}

impl CodexAppServer {
    /// Starts `codex app-server` and does the `initialize` / `initialized` handshake.
    pub fn start(env: &TestEnv) -> CodexAppServer {
        use std::io::BufRead;
        use std::process::Stdio;
        let models = FakeModels::start(Vec::new());
        let mut command = cli_command(env, Cli::Codex, &models);
        command
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().expect("spawn codex app-server");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = CodexAppServer {
            child,
            stdin,
            lines,
            next_id: 1,
            transcript: Vec::new(),
        };
        server.request(
            "initialize",
            json!({"clientInfo": {"name": "amplihack-tests", "version": "0.0.0"}}),
        );
        server.send(&json!({"method": "initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("app-server stdin open");
        writeln!(stdin, "{message}").expect("write to codex app-server");
        stdin.flush().expect("flush");
    }

    /// Sends a request and waits (up to 60 s) for its response's `result`; panics on an error
    /// response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "codex app-server: no answer to {method}:\n{}",
                    self.transcript.join("\n")
                )
            });
            self.transcript.push(line.clone());
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] != json!(id) || message.get("method").is_some() {
                continue;
            }
            if let Some(error) = message.get("error") {
                panic!("codex app-server: {method} failed: {error}");
            }
            return message["result"].clone();
        }
    }

    /// `hooks/list` for the project: every hook Codex found, with its trust status.
    pub fn hooks(&mut self, cwd: &Path) -> Vec<CodexHook> {
        let result = self.request("hooks/list", json!({"cwds": [cwd]}));
        let mut found = Vec::new();
        collect_codex_hooks(&result, &mut found);
        found
    }

    /// Trusts `hooks` at their current hashes (`config/batchWrite` of
    /// `hooks.state."<key>".trusted_hash`).
    pub fn trust(&mut self, hooks: &[CodexHook]) {
        if hooks.is_empty() {
            return;
        }
        let edits: Vec<Value> = hooks
            .iter()
            .map(|h| {
                json!({
                    "keyPath": format!("hooks.state.\"{}\"", h.key),
                    "mergeStrategy": "upsert",
                    "value": {"trusted_hash": h.current_hash}
                })
            })
            .collect();
        self.request("config/batchWrite", json!({"edits": edits}));
    }
}

impl Drop for CodexAppServer {
    fn drop(&mut self) {
        // Closing stdin ends the server; kill it if it lingers.
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every object in a `hooks/list` result that has a `key` and a `currentHash`.
fn collect_codex_hooks(value: &Value, found: &mut Vec<CodexHook>) {
    match value {
        Value::Object(map) => {
            if let (Some(key), Some(hash)) = (
                map.get("key").and_then(Value::as_str),
                map.get("currentHash").and_then(Value::as_str),
            ) {
                found.push(CodexHook {
                    key: key.to_string(),
                    current_hash: hash.to_string(),
                    trust_status: map
                        .get("trustStatus")
                        .map(|s| s.as_str().map_or_else(|| s.to_string(), str::to_string))
                        .unwrap_or_default(),
                    entry: value.clone(),
                });
            }
            for v in map.values() {
                collect_codex_hooks(v, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_codex_hooks(v, found)),
        _ => {}
    }
}

/// Trusts every hook Codex finds for the test's project (user, project and plugin layers) the
/// way an installer must, through `codex app-server` (`hooks/list`, then `config/batchWrite`);
/// returns them as they were before. Codex writes the trust into `$CODEX_HOME/config.toml`.
pub fn codex_trust_all(env: &TestEnv) -> Vec<CodexHook> {
    let mut server = CodexAppServer::start(env);
    let hooks = server.hooks(&env.project);
    server.trust(&hooks);
    hooks
}
