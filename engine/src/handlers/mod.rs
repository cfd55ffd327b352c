//! Handler kinds, one file each, behind one interface ([`HandlerKind`]): how a `hooks.json`
//! handler of that `type` is read, what names it, and what amplihack runs for it (or why it
//! cannot run here).
//!
//! * [`command`]: shell form (`command` to `/bin/sh -c`);
//! * [`exec`]: exec form (`command` plus `args`: no shell);
//! * [`prompt`], [`agent`]: evaluated by a model;
//! * [`http`]: a POST to a URL;
//! * [`mcp_tool`]: a call to an MCP server's tool;
//! * [`llm`]: the proposal's model-judged hook; [`rule`]: its in-process rule.

use std::path::Path;

use amplihack_protocol::{EventName, HookEvent, ModelQuestion, Reply};
use serde_json::{Map, Value};

pub mod agent;
pub mod command;
pub mod exec;
pub mod http;
pub mod llm;
pub mod mcp_tool;
pub mod prompt;
pub mod rule;

/// Handler timeout when none is configured (seconds). Any positive timeout is accepted, as Claude
/// Code accepts it; a handler amplihack waits for is also bounded by amplihack's own deadline.
pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;

/// What a handler's placeholders stand for when it runs.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// `${CLAUDE_PLUGIN_ROOT}`: the plugin's directory.
    pub plugin_root: &'a Path,
    /// `${CLAUDE_PLUGIN_DATA}`: the plugin's own persistent directory.
    pub plugin_data: &'a Path,
    /// `${AMPLIFIER_HOOKS_DIR}`: the level's hooks directory.
    pub hooks_dir: &'a Path,
    /// `${CLAUDE_PROJECT_DIR}`: where handlers run.
    pub project_dir: &'a Path,
}

/// A field of the handler that is wrong: (field, problem, fix). The caller names the file.
pub type FieldError = (String, String, String);

/// What a handler kind plans from, for one event (all borrowed: planning allocates only what the
/// plan holds).
#[derive(Clone, Copy)]
pub struct Planning<'a> {
    pub event: &'a HookEvent,
    /// Whether the handler applies to this tool call: not amplihack itself, its `if` holding
    /// (asked only by the kinds that honour it; lazily, as it costs).
    pub applies: &'a dyn Fn() -> bool,
    /// amplihack's Amplifier module asks the session's provider for model-backed handlers.
    pub module_asks: bool,
    /// The app's Python, under Amplifier.
    pub python: Option<&'a str>,
    /// The handler's timeout, seconds.
    pub timeout_secs: f64,
    /// The handler's `on_failure`, as written.
    pub on_failure: &'a str,
}

/// What the forwarder does with a handler on one event.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "moved once from plan to forwarder; boxing would allocate on every call"
)]
pub enum Plan {
    /// Nothing: it does not apply, or cannot run here (`hooks validate` and `hooks list` say so).
    Skip,
    /// Answered in-process, no process starts (a rule that holds).
    Answered(Reply),
    /// Claude Code refuses to run it on this event; reported as the hook's failure where
    /// amplihack asks the model itself.
    Refused(String),
    /// A model answers it.
    Ask(ModelQuestion),
    /// A process runs: this program, or `None` for [`HandlerKind::program`]'s.
    Process(Option<Vec<String>>),
}

/// The interface every handler kind implements.
pub trait HandlerKind {
    /// Its `type` in `hooks.json`.
    fn type_name(&self) -> &'static str;
    /// The text that names it in logs and the audit log; two handlers with the same label on one
    /// event run once (as Claude Code dedupes identical commands).
    fn label(&self) -> &str;
    /// The program and arguments amplihack runs for it, or why it cannot run under amplihack.
    fn program(&self, context: &Context<'_>) -> Result<Vec<String>, String>;
    /// Why amplihack never runs it, wherever it is (read once per handler at every parse of a
    /// plugin file, so cheap for the kinds that always run); `None` when it runs.
    fn never_runs(&self) -> Option<String> {
        let nowhere = Path::new("");
        let context = Context {
            plugin_root: nowhere,
            plugin_data: nowhere,
            hooks_dir: nowhere,
            project_dir: nowhere,
        };
        self.program(&context).err()
    }
    /// Whether the process it runs is the plugin's own code, confined when the plugin is a
    /// project's (crate::confinement); false for a program of amplihack's own (a model asked, a
    /// POST made), which needs the network and the host's credentials.
    fn runs_plugin_code(&self) -> bool {
        true
    }
    /// Its timeout when the handler gives none.
    fn default_timeout_secs(&self) -> f64 {
        DEFAULT_TIMEOUT_SECS
    }
    /// For a kind Claude Code runs itself (model-backed, http, mcp_tool): the handler as written,
    /// to register with Claude Code as its own hook entry, and the first version that has it.
    fn host_entry(&self) -> Option<(&Map<String, Value>, Version)> {
        None
    }
    /// What runs for this (enabled) handler on this event. The default: nothing unless the
    /// handler applies; its refusal if the event refuses it; else [`HandlerKind::when_applies`].
    fn plan(&self, planning: &Planning<'_>) -> Plan {
        if !(planning.applies)() {
            return Plan::Skip;
        }
        match self.refused_on(&planning.event.name) {
            Some(why) => Plan::Refused(why),
            None => self.when_applies(planning),
        }
    }
    /// Why Claude Code refuses to run it on this event, if it does.
    fn refused_on(&self, _event: &EventName) -> Option<String> {
        None
    }
    /// What runs when it applies and is not refused: by default its [`HandlerKind::program`].
    fn when_applies(&self, _planning: &Planning<'_>) -> Plan {
        Plan::Process(None)
    }
    /// Its label and the command as Claude Code names it to the model when it blocks; `written`
    /// is the handler's `command` field.
    fn names(&self, _context: &Context<'_>, written: &str) -> (String, String) {
        (written.to_string(), written.to_string())
    }
}

pub use amplihack_protocol::claude_version::Version;

/// The plugin model ([`crate::model`], a leaf) holding this crate's handler kinds.
pub type Handler = crate::model::Handler<Kind>;
/// A matcher group of [`Handler`]s.
pub type Group = crate::model::Group<Kind>;
/// A plugin's groups, as every dialect's reader produces them.
pub type PluginConfig = crate::model::PluginConfig<Kind>;

/// One handler's kind, as parsed from its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Command(command::Command),
    Exec(exec::Exec),
    Prompt(prompt::Prompt),
    Agent(agent::Agent),
    Http(http::Http),
    McpTool(mcp_tool::McpTool),
    /// The proposal's `type: llm`; never read from `hooks.json`.
    Llm(llm::Llm),
    /// Evaluated in-process (the proposal's `type: matcher`); never read from `hooks.json`.
    Rule(rule::Rule),
}

impl Kind {
    /// Reads a handler object's kind-specific fields; `at` is its JSON path in the file.
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Kind, FieldError> {
        let type_name = match handler.get("type") {
            None | Some(Value::Null) => "command",
            Some(Value::String(name)) => name.as_str(),
            Some(other) => {
                return Err((
                    format!("{at}.type"),
                    format!(
                        "is {}, not a string",
                        amplihack_protocol::event::json_kind(other)
                    ),
                    "use \"command\"".into(),
                ));
            }
        };
        Ok(match type_name {
            "command" if handler.contains_key("args") => {
                Kind::Exec(exec::Exec::parse(handler, at)?)
            }
            "command" => Kind::Command(command::Command::parse(handler, at)?),
            "prompt" => Kind::Prompt(prompt::Prompt::parse(handler, at)?),
            "agent" => Kind::Agent(agent::Agent::parse(handler, at)?),
            "http" => Kind::Http(http::Http::parse(handler, at)?),
            "mcp_tool" => Kind::McpTool(mcp_tool::McpTool::parse(handler, at)?),
            other => {
                return Err((
                    format!("{at}.type"),
                    format!("`{other}` is not a handler type"),
                    "use \"command\", \"prompt\", \"agent\", \"http\" or \"mcp_tool\"".into(),
                ));
            }
        })
    }

    fn inner(&self) -> &dyn HandlerKind {
        match self {
            Kind::Command(k) => k,
            Kind::Exec(k) => k,
            Kind::Prompt(k) => k,
            Kind::Agent(k) => k,
            Kind::Http(k) => k,
            Kind::McpTool(k) => k,
            Kind::Llm(k) => k,
            Kind::Rule(k) => k,
        }
    }
}

impl HandlerKind for Kind {
    fn type_name(&self) -> &'static str {
        self.inner().type_name()
    }

    fn label(&self) -> &str {
        self.inner().label()
    }

    fn program(&self, context: &Context<'_>) -> Result<Vec<String>, String> {
        self.inner().program(context)
    }

    fn never_runs(&self) -> Option<String> {
        self.inner().never_runs()
    }

    fn host_entry(&self) -> Option<(&Map<String, Value>, Version)> {
        self.inner().host_entry()
    }

    fn default_timeout_secs(&self) -> f64 {
        self.inner().default_timeout_secs()
    }

    fn runs_plugin_code(&self) -> bool {
        self.inner().runs_plugin_code()
    }

    fn plan(&self, planning: &Planning<'_>) -> Plan {
        self.inner().plan(planning)
    }

    fn refused_on(&self, event: &EventName) -> Option<String> {
        self.inner().refused_on(event)
    }

    fn when_applies(&self, planning: &Planning<'_>) -> Plan {
        self.inner().when_applies(planning)
    }

    fn names(&self, context: &Context<'_>, written: &str) -> (String, String) {
        self.inner().names(context, written)
    }
}

/// A handler named in one line, for lists and notes: its label's first line, cut to
/// [`SHORT_NAME_CHARS`] characters with `…` (a prompt handler's label is its whole prompt,
/// kilobytes in some published plugins).
pub fn short_name(label: &str) -> String {
    let first = label.trim().lines().next().unwrap_or_default().trim_end();
    let more_lines = label.trim().lines().nth(1).is_some();
    match first.char_indices().nth(SHORT_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", first[..cut].trim_end()),
        None if more_lines => format!("{first} …"),
        None => first.to_string(),
    }
}

/// How long a [`short_name`] may be, in characters.
pub const SHORT_NAME_CHARS: usize = 60;

/// A model-backed handler's question: `$ARGUMENTS` replaced by the event's JSON, or the JSON
/// appended when the prompt has no placeholder (as Claude Code does).
pub fn with_arguments(prompt: &str, event: &Map<String, Value>) -> String {
    let arguments = Value::Object(event.clone()).to_string();
    if prompt.contains("$ARGUMENTS") {
        prompt.replace("$ARGUMENTS", &arguments)
    } else {
        format!("{prompt}\n\n{arguments}")
    }
}

/// A required non-empty string field.
pub(crate) fn required_string(
    handler: &Map<String, Value>,
    at: &str,
    key: &str,
    what: &str,
) -> Result<String, FieldError> {
    match handler.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err((
            format!("{at}.{key}"),
            "is missing or empty".into(),
            format!("give {what}"),
        )),
    }
}

/// An optional string field.
pub(crate) fn optional_string(
    handler: &Map<String, Value>,
    at: &str,
    key: &str,
) -> Result<Option<String>, FieldError> {
    match handler.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err((
            format!("{at}.{key}"),
            format!(
                "is {}, not a string",
                amplihack_protocol::event::json_kind(other)
            ),
            "make it a string".into(),
        )),
    }
}

/// Replaces each placeholder verbatim (exec form: each argument is one argv entry, no shell).
pub fn substitute_verbatim(text: &str, context: &Context<'_>) -> String {
    let mut out = text.to_string();
    for (placeholder, value) in placeholders(context) {
        if out.contains(placeholder) {
            out = out.replace(placeholder, &value);
        }
    }
    out
}

/// The placeholders Claude Code substitutes, with their values.
pub fn placeholders(context: &Context<'_>) -> [(&'static str, String); 4] {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    [
        ("${CLAUDE_PLUGIN_ROOT}", text(context.plugin_root)),
        ("${CLAUDE_PLUGIN_DATA}", text(context.plugin_data)),
        ("${CLAUDE_PROJECT_DIR}", text(context.project_dir)),
        ("${AMPLIFIER_HOOKS_DIR}", text(context.hooks_dir)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_fit_one_line() {
        let long = "Check whether the command is safe. ".repeat(10);
        let cases = [
            ("echo hi", "echo hi".to_string()),
            (
                "You are a reviewer.\nRead the diff and answer ok or not.",
                "You are a reviewer. …".to_string(),
            ),
            (
                long.as_str(),
                "Check whether the command is safe. Check whether the command…".to_string(),
            ),
            ("  ", String::new()),
        ];
        for (label, want) in cases {
            assert_eq!(short_name(label), want, "{label}");
        }
    }
    use std::path::PathBuf;

    fn context_at(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
        (root.join("data"), root.join("hooks"), root.join("project"))
    }

    /// A handler as written, its `type`, and its argv or a word of why it cannot run.
    type Case<'a> = (&'a str, &'a str, Result<&'a [&'a str], &'a str>);

    /// Each kind, as written in a published plugin, and what amplihack runs for it.
    #[test]
    fn each_kind_gives_its_program_or_says_why_it_cannot_run() {
        let root = Path::new("/plug in");
        let (data, hooks, project) = context_at(root);
        let context = Context {
            plugin_root: root,
            plugin_data: &data,
            hooks_dir: &hooks,
            project_dir: &project,
        };
        let cases: &[Case<'_>] = &[
            (
                r#"{"type": "command", "command": "echo hi"}"#,
                "command",
                Ok(&["/bin/sh", "-c", "echo hi"]),
            ),
            // Only words: run as the shell would, without it.
            (
                r#"{"command": "node ${CLAUDE_PLUGIN_ROOT}/a.js"}"#,
                "command",
                Ok(&["node", "/plug in/a.js"]),
            ),
            (
                r#"{"command": "node ${CLAUDE_PLUGIN_ROOT}/a.js > /tmp/log"}"#,
                "command",
                Ok(&[
                    "/bin/sh",
                    "-c",
                    "node \"${CLAUDE_PLUGIN_ROOT}\"/a.js > /tmp/log",
                ]),
            ),
            // Claude Code 2.1.328 runs `shell: "bash"` with /bin/sh on Linux, as observed.
            (
                r#"{"command": "echo $0", "shell": "bash"}"#,
                "command",
                Ok(&["/bin/sh", "-c", "echo $0"]),
            ),
            (
                r#"{"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/a.js", "${CLAUDE_PLUGIN_DATA}", "$HOME", "${CLAUDE_PROJECT_DIR}"]}"#,
                "command",
                Ok(&[
                    "node",
                    "/plug in/a.js",
                    "/plug in/data",
                    "$HOME",
                    "/plug in/project",
                ]),
            ),
            (
                r#"{"command": "${CLAUDE_PLUGIN_ROOT}/bin/check", "args": []}"#,
                "command",
                Ok(&["/plug in/bin/check"]),
            ),
            (
                r#"{"type": "prompt", "prompt": "Is $ARGUMENTS safe?"}"#,
                "prompt",
                Err("model"),
            ),
            (
                r#"{"type": "agent", "prompt": "Check $ARGUMENTS"}"#,
                "agent",
                Err("model"),
            ),
            (
                r#"{"type": "http", "url": "https://example.com/hook"}"#,
                "http",
                Err("http"),
            ),
            (
                r#"{"type": "mcp_tool", "server": "s", "tool": "t"}"#,
                "mcp_tool",
                Err("MCP"),
            ),
        ];
        for (text, type_name, expected) in cases {
            let Ok(Value::Object(handler)) = serde_json::from_str::<Value>(text) else {
                panic!("{text}");
            };
            let kind = Kind::parse(&handler, "h").unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(kind.type_name(), *type_name, "{text}");
            match (kind.program(&context), expected) {
                (Ok(argv), Ok(want)) => assert_eq!(argv, *want, "{text}"),
                (Err(why), Err(needle)) => assert!(why.contains(needle), "{text}: {why}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// The kinds Claude Code runs itself are registered with it, from the version that has each.
    #[test]
    fn kinds_claude_code_runs_itself_and_since_when() {
        let cases: &[(&str, Option<Version>)] = &[
            (r#"{"command": "x"}"#, None),
            (r#"{"command": "x", "args": []}"#, None),
            (r#"{"type": "prompt", "prompt": "?"}"#, Some((2, 0, 30))),
            (r#"{"type": "http", "url": "http://h"}"#, Some((2, 1, 63))),
            (r#"{"type": "agent", "prompt": "?"}"#, Some((2, 1, 101))),
            (
                r#"{"type": "mcp_tool", "server": "s", "tool": "t"}"#,
                Some((2, 1, 118)),
            ),
        ];
        for (text, since) in cases {
            let Ok(Value::Object(handler)) = serde_json::from_str::<Value>(text) else {
                panic!("{text}");
            };
            let kind = Kind::parse(&handler, "h").unwrap_or_else(|e| panic!("{text}: {e:?}"));
            let entry = kind.host_entry();
            assert_eq!(entry.map(|(_, v)| v), *since, "{text}");
            assert!(
                entry.is_none_or(|(raw, _)| *raw == handler),
                "{text}: as written"
            );
        }
    }

    #[test]
    fn invalid_kind_fields_name_the_field() {
        let cases = [
            (r#"{"type": 3}"#, "h.type", "not a string"),
            (
                r#"{"type": "shell", "command": "x"}"#,
                "h.type",
                "not a handler type",
            ),
            (
                r#"{"command": "node", "args": "a.js"}"#,
                "h.args",
                "not an array",
            ),
            (
                r#"{"command": "node", "args": ["a", 1]}"#,
                "h.args[1]",
                "not a string",
            ),
            (
                r#"{"command": "x", "shell": "fish"}"#,
                "h.shell",
                "not a shell",
            ),
            (r#"{"type": "prompt"}"#, "h.prompt", "missing"),
            (r#"{"type": "http"}"#, "h.url", "missing"),
        ];
        for (text, field, problem) in cases {
            let Ok(Value::Object(handler)) = serde_json::from_str::<Value>(text) else {
                panic!("{text}");
            };
            let (at, why, fix) = Kind::parse(&handler, "h").expect_err(text);
            assert_eq!(at, field, "{text}");
            assert!(why.contains(problem), "{text}: {why}");
            assert!(!fix.is_empty());
        }
    }
}
