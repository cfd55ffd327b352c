//! Every environment variable amplihack reads or sets, named once, each with what it means and
//! who sets it ([`Origin`]). Code names a variable through its constant here, never as a literal,
//! so a rename is one edit and a search finds every use.
//!
//! The manual's Environment page (`docs/src/using/environment.md`) documents every variable a user sets ([`Origin::User`]) and
//! names only variables listed here; the native Amplifier module (`amplifier/
//! amplifier_module_hooks_amplihack/__init__.py`) uses only names listed here. Both are checked
//! by this crate's tests.

/// Who sets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user, to configure amplihack: documented in the manual's Environment page.
    User,
    /// A host (Claude Code, Amplifier or its bridge) for the hooks it runs.
    Host,
    /// amplihack (or its Amplifier module) for the processes it starts.
    Amplihack,
    /// The build (`packaging/build-release`), read at compile time.
    Build,
    /// Tests only.
    Test,
}

macro_rules! variables {
    ($($(#[doc = $doc:literal])+ $name:ident: $origin:ident;)*) => {
        $($(#[doc = $doc])+ pub const $name: &str = stringify!($name);)*

        /// Every variable, with who sets it, in the order of this file.
        pub const ALL: &[(&str, Origin)] = &[$((stringify!($name), Origin::$origin),)*];
    };
}

variables! {
    // amplihack's own settings.
    /// Where `amplihack install` deploys the binaries (default `~/.local/bin`).
    AMPLIHACK_BIN_DIR: User;
    /// The release site `install.sh` and `amplihack update` use.
    AMPLIHACK_RELEASES_URL: User;
    /// The version `install.sh` installs.
    AMPLIHACK_VERSION: User;
    /// Built-ins to turn off, by name (`metrics,workflow-reminder`), or `all`.
    AMPLIHACK_DISABLE: User;
    /// Lock mode's safety valve: continuations before it lets a stop through (default 50).
    AMPLIHACK_MAX_LOCK_ITERATIONS: User;
    /// Lock mode's expiry in seconds (default 86400).
    AMPLIHACK_LOCK_TTL_SECONDS: User;
    /// `1` turns reflection on (Claude Code only).
    AMPLIHACK_ENABLE_REFLECTION: User;
    /// Turns reflection off, whatever else says.
    AMPLIHACK_SKIP_REFLECTION: User;
    /// The Claude Code CLI amplihack runs (`claude --version`, reflection); default `claude`.
    AMPLIHACK_CLAUDE_BIN: User;
    /// The Codex CLI `amplihack install`, `doctor` and `update` ask (`codex app-server`) to trust
    /// amplihack's Codex hooks; default `codex` on PATH.
    AMPLIHACK_CODEX_BIN: User;
    /// Reflection's timeout in seconds (default 90).
    AMPLIHACK_REFLECTION_TIMEOUT_SECS: User;
    /// Above 0 in nested sessions: no workflow reminder.
    AMPLIHACK_SESSION_DEPTH: User;
    /// Where the failure log `hooks.log` goes instead of the state directory.
    AMPLIHACK_LOG_DIR: User;
    /// Overrides a subcommand's own deadline, in milliseconds.
    AMPLIHACK_HOOK_DEADLINE_MS: User;
    /// How long an edit waits for another amplihack's lock, in milliseconds.
    AMPLIHACK_LOCK_TIMEOUT_MS: User;
    /// Consecutive Stop blocks by plugins before amplihack lets the stop through (`0`: off).
    AMPLIHACK_STOP_BLOCK_CAP: User;
    /// Failures in a row after which a plugin's handler is parked for the session (default 5;
    /// `0`: never).
    AMPLIHACK_PLUGIN_FAILURE_LIMIT: User;
    /// `panic` or `error`: makes `amplihack-hooks` fail on purpose, to see the fail-open path.
    AMPLIHACK_HOOKS_FAULT: User;
    /// The Claude Code command line an `llm` handler asks (default: the calling Claude Code).
    AMPLIHACK_CLAUDE: User;
    /// The audit file's size, in MiB, past which it is rotated (default 10).
    AMPLIHACK_AUDIT_MAX_MB: User;
    /// Rotated audit files kept (default 3; `0` keeps none).
    AMPLIHACK_AUDIT_KEEP: User;
    /// `amplihack log export --otlp`: the OTLP/HTTP base address (`/v1/logs` is appended;
    /// default `http://localhost:4318`).
    OTEL_EXPORTER_OTLP_ENDPOINT: User;
    /// `amplihack log export --otlp`: the logs endpoint, used as it is.
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: User;
    /// `amplihack log export --otlp`: headers (`key=value,...`, values percent-encoded).
    OTEL_EXPORTER_OTLP_HEADERS: User;
    /// `amplihack log export --otlp`: the logs' own headers, over the general ones.
    OTEL_EXPORTER_OTLP_LOGS_HEADERS: User;
    /// `amplihack log export --otlp`: the request timeout in milliseconds (default 10000).
    OTEL_EXPORTER_OTLP_TIMEOUT: User;
    /// `amplihack log export --otlp`: the logs' own timeout.
    OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: User;
    /// `amplihack log export --otlp`: must be `http/protobuf` when set (the one protocol sent).
    OTEL_EXPORTER_OTLP_PROTOCOL: User;
    /// `amplihack log export --otlp`: the logs' own protocol, as above.
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: User;
    /// `amplihack log export --otlp`: the resource's attributes (`key=value,...`).
    OTEL_RESOURCE_ATTRIBUTES: User;
    /// `amplihack log export --otlp`: the resource's `service.name` (default `amplihack`).
    OTEL_SERVICE_NAME: User;
    /// Set (non-empty): `amplihack log` prints no colour, even on a terminal (no-color.org).
    NO_COLOR: User;

    // Set by amplihack for what it starts.
    /// Set in every forwarded handler; when present, `amplihack-hooks` does not forward again.
    AMPLIHACK_FORWARDED: Amplihack;
    /// Set by the native Amplifier module for the binary it runs: its calls forward both levels.
    AMPLIHACK_VIA_MODULE: Amplihack;
    /// The Python the native Amplifier module runs on, for the helpers that need one (`http`).
    AMPLIHACK_PYTHON: Amplihack;
    /// Set by the native module while it is mounted: amplihack's bridge registration steps aside.
    AMPLIHACK_AMPLIFIER_MODULE_ACTIVE: Amplihack;
    /// Set by the native module when the hook-shell bridge is mounted too: project plugins are
    /// left to it.
    AMPLIHACK_BRIDGE_PRESENT: Amplihack;
    /// Set in the Claude Code that reflection starts, so that its own hooks do not reflect again.
    AMPLIHACK_REFLECTION_CHILD: Amplihack;
    /// The AMCP dialect's project root, given to AMCP handlers.
    AMCP_PROJECT_DIR: Amplihack;
    /// The AMCP dialect's event name, given to AMCP handlers.
    AMCP_HOOK_EVENT: Amplihack;
    /// The AMCP dialect's session id, given to AMCP handlers.
    AMCP_SESSION_ID: Amplihack;
    /// The AMCP dialect's tool name, given to AMCP handlers.
    AMCP_TOOL_NAME: Amplihack;

    // Set by the hosts.
    /// Claude Code's project root, given to hooks (amplihack gives it to forwarded handlers too).
    CLAUDE_PROJECT_DIR: Host;
    /// Amplifier's project root (amplihack gives it to forwarded handlers too).
    AMPLIFIER_PROJECT_DIR: Host;
    /// Set by Amplifier's bridge; its presence selects the Amplifier dialect.
    AMPLIFIER_SESSION_ID: Host;
    /// Set by Amplifier's bridge; its presence selects the Amplifier dialect.
    AMPLIFIER_HOOKS_DIR: Host;
    /// Amplifier's home directory (default `~/.amplifier`).
    AMPLIFIER_HOME: Host;
    /// The file a SessionStart handler writes `export` lines to (Claude Code).
    CLAUDE_ENV_FILE: Host;
    /// The file a SessionStart handler writes `export` lines to (Amplifier).
    AMPLIFIER_ENV_FILE: Host;
    /// A plugin's own directory, given to its handlers.
    CLAUDE_PLUGIN_ROOT: Host;
    /// A plugin's data directory, given to its handlers.
    CLAUDE_PLUGIN_DATA: Host;
    /// Claude Code's user settings directory (default `~/.claude`).
    CLAUDE_CONFIG_DIR: User;
    /// Claude Code's agent name and version for hooks: `claude-code_2-1-328_harness`.
    AI_AGENT: Host;
    /// The W3C trace context a host propagates to its hooks (`00-<trace>-<span>-<flags>`): the
    /// audit record's `trace_id` and `span_id`.
    TRACEPARENT: Host;
    /// Claude Code's process id, set for hooks since 2.1.214.
    CLAUDE_PID: Host;
    /// Set inside a Claude Code session; a nested one refuses to start while it is set.
    CLAUDECODE: Host;
    /// Claude Code's IDE port, removed for a nested Claude Code.
    CLAUDE_CODE_SSE_PORT: Host;
    /// Claude Code's own cap on consecutive Stop blocks.
    CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: Host;
    /// Claude Code's output limit, set for the Claude Code an `llm` handler asks.
    CLAUDE_CODE_MAX_OUTPUT_TOKENS: Host;
    /// Codex's home directory (default `~/.codex`): its `hooks.json` and `config.toml`.
    CODEX_HOME: Host;
    /// Mistral Vibe's home directory (default `~/.vibe`): its `hooks.toml`.
    VIBE_HOME: Host;
    /// Kimi CLI's home directory (default `~/.kimi`): its `config.toml`.
    KIMI_SHARE_DIR: Host;
    /// `1` in every hook and tool Copilot CLI runs, including the Claude Code hooks it runs from a
    /// repository's `.claude/settings.json`.
    COPILOT_CLI: Host;
    /// Copilot CLI's project root, given to hooks.
    COPILOT_PROJECT_DIR: Host;
    /// Cline CLI's directory (default `~/.cline`): its `plugins/` and `hooks/`.
    CLINE_DIR: Host;

    // The XDG base directories.
    /// amplihack's state is `$XDG_STATE_HOME/amplihack` (default `~/.local/state/amplihack`).
    XDG_STATE_HOME: User;
    /// User-level hooks live under `$XDG_CONFIG_HOME` (default `~/.config`).
    XDG_CONFIG_HOME: User;
    /// Where this user's systemd manager has its socket: `amplihack install --otel` uses a
    /// systemd user timer when `$XDG_RUNTIME_DIR/systemd/private` exists.
    XDG_RUNTIME_DIR: User;
    /// The native Amplifier module is deployed under `$XDG_DATA_HOME` (default `~/.local/share`).
    XDG_DATA_HOME: User;

    /// A release's version, given to the build by `packaging/build-release`.
    AMPLIHACK_RELEASE_VERSION: Build;
    /// Tests only: the offline Amplifier app kit.
    AMPLIHACK_AMPLIFIER_APP_KIT: Test;
    /// Tests only: a git directory of the hook-shell bridge's repository to measure instead.
    AMPLIHACK_HOOK_SHELL_MIRROR: Test;
}

/// The project root's variables, the first set one wins: Claude Code's, then Amplifier's.
/// Forwarded handlers get all of them, set to the same root.
pub const PROJECT_ROOT: [&str; 2] = [CLAUDE_PROJECT_DIR, AMPLIFIER_PROJECT_DIR];

/// The project root the environment names ([`PROJECT_ROOT`], in order), if any.
pub fn project_root(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    PROJECT_ROOT.iter().find_map(|name| var(name))
}

/// Whether `name` is one of amplihack's variables.
pub fn is_known(name: &str) -> bool {
    ALL.iter().any(|(known, _)| *known == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn repo_file(path: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `AMPLIHACK_X`-like words in backquotes (the manual) or quotes (Python).
    fn names_in(text: &str, quote: char) -> BTreeSet<String> {
        text.split(quote)
            .skip(1)
            .step_by(2)
            .filter(|word| {
                !word.is_empty()
                    && word.len() > 3
                    && word.contains('_')
                    && word
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            })
            .map(str::to_string)
            .collect()
    }

    /// The manual's Environment table: the rows between its header and the next blank line.
    fn readme_table() -> BTreeSet<String> {
        let readme = repo_file("docs/src/using/environment.md");
        let start = readme
            .find("| variable | effect |")
            .expect("the manual's Environment page has its table");
        let table: String = readme[start..]
            .lines()
            .take_while(|line| line.starts_with('|'))
            .map(|line| line.split('|').nth(1).unwrap_or("").to_string() + "\n")
            .collect();
        names_in(&table, '`')
    }

    #[test]
    fn names_are_unique_and_spelled_as_their_constants() {
        let mut seen = BTreeSet::new();
        for (name, _) in ALL {
            assert!(seen.insert(*name), "{name} twice");
        }
        assert_eq!(CLAUDE_PROJECT_DIR, "CLAUDE_PROJECT_DIR");
    }

    #[test]
    fn the_readme_table_documents_every_user_setting_and_names_only_these() {
        let documented = readme_table();
        for name in &documented {
            assert!(
                is_known(name),
                "the manual names {name}, which is not in amplihack-env"
            );
        }
        for (name, origin) in ALL {
            if *origin == Origin::User {
                assert!(
                    documented.contains(*name),
                    "{name} is a user setting missing from the manual's Environment table"
                );
            }
        }
    }

    #[test]
    fn the_python_module_uses_only_these_names() {
        let module = repo_file("amplifier/amplifier_module_hooks_amplihack/__init__.py");
        let used = names_in(&module, '"');
        assert!(used.contains(AMPLIHACK_VIA_MODULE), "{used:?}");
        for name in used {
            assert!(
                is_known(&name),
                "the Python module uses {name}, not in amplihack-env"
            );
        }
    }

    #[test]
    fn the_project_root_is_claude_codes_then_amplifiers() {
        let both = |name: &str| Some(format!("{name}-value"));
        assert_eq!(
            project_root(both).as_deref(),
            Some("CLAUDE_PROJECT_DIR-value")
        );
        let amplifier = |name: &str| (name == AMPLIFIER_PROJECT_DIR).then(|| "a".to_string());
        assert_eq!(project_root(amplifier).as_deref(), Some("a"));
        assert_eq!(project_root(|_: &str| None), None);
    }
}
