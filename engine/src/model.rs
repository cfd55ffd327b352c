//! The plugin model: what every dialect's reader produces and forwarding runs, a plugin's
//! [`PluginConfig`] of [`Group`]s of [`Handler`]s. Types only, and a strict leaf: nothing else in
//! the engine is below it. What a handler runs, its kind `K`, is a parameter: the handler kinds
//! build on this model, and name it with theirs (`handlers::Handler` is `Handler<handlers::Kind>`).

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
pub struct Handler<K> {
    /// What it runs and how (shell form, exec form, prompt, ...).
    pub kind: K,
    /// Its label (its kind's `label`): the shell command, or the executable and its arguments.
    pub command: String,
    pub timeout_secs: f64,
    /// Whether the hook file gave the timeout (amplihack's registration for the event is raised
    /// to hold it), rather than the default.
    pub timeout_declared: bool,
    pub is_async: bool,
    /// `asyncRewake: true`: runs in the background; an exit 2 wakes the model with its stderr,
    /// prefixed by `rewakeMessage`.
    pub rewake: Option<Rewake>,
    /// `if`: one permission-rule pattern (`Bash(git commit:*)`); the handler runs only for tool
    /// calls it matches.
    pub condition: Option<String>,
    /// Lower runs first; handlers of one priority run in parallel.
    pub priority: i64,
    pub enabled: bool,
    pub description: Option<String>,
    /// What it reads and prints: Claude Code's JSON, or another dialect's.
    pub protocol: Protocol,
    /// What its failure does (fail-open unless the hook file asks otherwise).
    pub on_failure: OnFailure,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Group<K> {
    pub event: String,
    pub matcher: Option<String>,
    pub handlers: Vec<Handler<K>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PluginConfig<K> {
    pub description: Option<String>,
    pub enabled: bool,
    pub groups: Vec<Group<K>>,
    /// Handlers valid for Claude Code that amplihack does not run (prompt, agent, http,
    /// mcp_tool), one note each with why. Reported by `amplihack hooks validate` and `hooks list`.
    pub skipped: Vec<String>,
    /// What the plugin declares it needs beyond the confinement a project's handlers run under
    /// (`"confinement"` in its hooks file or manifest; crate::confinement).
    pub needs: Needs,
}

/// A plugin's declared needs: network, and paths to read or write beyond the default
/// confinement. Paths as written (`~/...` or absolute).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    pub network: NetworkNeed,
    pub read: Vec<String>,
    pub write: Vec<String>,
}

/// The network a plugin declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NetworkNeed {
    #[default]
    None,
    /// TCP ports: connect to these remote ports, bind these local ones.
    Ports {
        connect: Vec<u16>,
        bind: Vec<u16>,
    },
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    /// Where in the file, as a JSON path: `hooks.PreToolUse[0].hooks[1].timeout`.
    pub field: String,
    pub problem: String,
    pub fix: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: `{}`: {}; fix: {}",
            self.file.display(),
            self.field,
            self.problem,
            self.fix
        )
    }
}

/// What a handler reads on stdin and prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Claude Code's hook JSON, as the host sent it.
    #[default]
    Claude,
    /// AMCP's: Claude Code's with AMCP's tool names (`write_file`, `path`), `AMCP_*` variables,
    /// `feedback` and `updatedResponse` in the answer.
    Amcp,
    /// The proposal's: `{event, tool, args, session_id, timestamp}` in, `{action, modified_args,
    /// message}` out.
    Proposal,
}

/// What a failure of the handler (timeout, crash, unreadable answer) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// A warning on stderr and in the log; the call goes on (fail-open).
    #[default]
    Warn,
    /// Nothing said; the call goes on.
    Ignore,
    /// The tool call is denied, with the reason (fail-closed, where the user asked for it).
    Block,
}

impl OnFailure {
    /// Its name in the proposal's YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Warn => "warn",
            OnFailure::Ignore => "ignore",
            OnFailure::Block => "block",
        }
    }
}

/// An `asyncRewake` handler: its exit 2 wakes the model with this message and its stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewake {
    pub message: Option<String>,
}
