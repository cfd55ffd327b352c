//! Events in: one JSON object from the host becomes a [`HookEvent`].
//!
//! Strict where the contract is strict: malformed JSON, a non-object, or a *known* event missing a
//! field its host always sends is [`InvalidInput`], never an unknown event. A valid object whose
//! event is not known yet is [`EventName::Unknown`] and passes through, so a newer host does not
//! break an older binary.

use serde_json::{Map, Value};
use std::fmt;

use crate::tool::canonical_tool_name;

pub use crate::claude_version::Version;

/// The newest Claude Code the tests run amplihack against (pinned in
/// `tests/claude-code/package.json`; a test keeps the two in step): past it, parity is unproven
/// (`amplihack doctor` says so).
pub const NEWEST_TESTED_CLAUDE_CODE: Version = (2, 1, 332);

/// Since 2.1.101 Claude Code skips only the entry of an event it does not know, not the whole
/// settings file.
pub const UNKNOWN_EVENTS_SAFE_SINCE: Version = (2, 1, 101);

macro_rules! event_names {
    ($($variant:ident since $since:expr),* $(,)?) => {
        /// Every event of Claude Code's hook contract (core, extended and newer), plus `Unknown`.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum EventName {
            $($variant,)*
            /// A well-formed event this build does not know; passed through untouched.
            Unknown(String),
        }

        impl EventName {
            /// All known events, in the order of the contract.
            pub const KNOWN: &'static [EventName] = &[$(EventName::$variant,)*];

            /// The name of a known event; `""` for an unknown one.
            pub const fn static_name(&self) -> &'static str {
                match self {
                    $(EventName::$variant => stringify!($variant),)*
                    EventName::Unknown(_) => "",
                }
            }

            /// The first Claude Code version that delivers the event (from the changelog and
            /// docs; one documented without a version counts from [`UNKNOWN_EVENTS_SAFE_SINCE`],
            /// where registering it can do no harm). `None` for an unknown event.
            pub const fn since(&self) -> Option<Version> {
                match self {
                    $(EventName::$variant => Some($since),)*
                    EventName::Unknown(_) => None,
                }
            }

            /// The name as Claude Code spells it (`hook_event_name`, `hookSpecificOutput.hookEventName`).
            pub fn as_str(&self) -> &str {
                match self {
                    $(EventName::$variant => stringify!($variant),)*
                    EventName::Unknown(name) => name,
                }
            }
        }
    };
}

// Claude Code's events and the version each came in: a new event is one row here (and, if
// amplihack reads its fields or renders its answer specially, a line where it does).
event_names!(
    PreToolUse since (1, 0, 38),
    PermissionRequest since (2, 0, 45),
    PermissionDenied since (2, 1, 89),
    PostToolUse since (1, 0, 38),
    PostToolUseFailure since UNKNOWN_EVENTS_SAFE_SINCE,
    PostToolBatch since UNKNOWN_EVENTS_SAFE_SINCE,
    UserPromptSubmit since (1, 0, 54),
    UserPromptExpansion since UNKNOWN_EVENTS_SAFE_SINCE,
    Notification since (1, 0, 38),
    Stop since (1, 0, 38),
    StopFailure since (2, 1, 78),
    SubagentStart since (2, 0, 43),
    SubagentStop since (1, 0, 41),
    PreCompact since (1, 0, 48),
    PostCompact since (2, 1, 76),
    SessionStart since (1, 0, 62),
    SessionEnd since (1, 0, 85),
    Setup since (2, 1, 10),
    ConfigChange since (2, 1, 49),
    InstructionsLoaded since (2, 1, 69),
    TeammateIdle since (2, 1, 33),
    TaskCreated since (2, 1, 84),
    TaskCompleted since (2, 1, 33),
    WorktreeCreate since (2, 1, 50),
    WorktreeRemove since (2, 1, 50),
    Elicitation since (2, 1, 76),
    ElicitationResult since (2, 1, 76),
    CwdChanged since (2, 1, 83),
    FileChanged since (2, 1, 83),
    MessageDisplay since (2, 1, 152),
    DirectoryAdded since UNKNOWN_EVENTS_SAFE_SINCE,
    PreModelSwitch since (2, 1, 251),
    PostModelSwitch since (2, 1, 251),
    PreSkillShellCommand since (2, 1, 332),
);

impl EventName {
    /// Looks an event up by its Claude Code name. `PreToolUse`, `preToolUse`, `pre_tool_use` and
    /// `pre-tool-use` are the same event: spelling drift between hosts must not turn a known event
    /// into an unknown one that would skip our checks.
    ///
    /// `SessionStop`, the name amplihack's specification and its predecessor give the end of a
    /// session, is `SessionEnd`.
    pub fn parse(name: &str) -> EventName {
        let wanted = fold(name);
        if wanted == "sessionstop" {
            return EventName::SessionEnd;
        }
        EventName::KNOWN
            .iter()
            .find(|known| fold(known.as_str()) == wanted)
            .cloned()
            .unwrap_or_else(|| EventName::Unknown(name.to_string()))
    }

    pub fn is_known(&self) -> bool {
        !matches!(self, EventName::Unknown(_))
    }
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool call, with the tool named as Claude Code names it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Claude Code's name (`Bash`), even when Amplifier sent `bash`. Empty when the bridge sent none.
    pub name: String,
    /// The tool's input object (`{}` when Amplifier's bridge sent none).
    pub input: Value,
    pub use_id: Option<String>,
}

impl ToolCall {
    /// `tool_input.command` of a Bash call, the one input the built-in guard reads.
    pub fn bash_command(&self) -> Option<&str> {
        if self.name == "Bash" {
            self.input.get("command").and_then(Value::as_str)
        } else {
            None
        }
    }
}

/// The typed part of an event: what built-ins and the engine read. Everything else stays in
/// [`HookEvent::raw`].
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// PreToolUse, PermissionRequest, PermissionDenied.
    Tool(ToolCall),
    /// PostToolUse.
    ToolResult { call: ToolCall, response: Value },
    /// PostToolUseFailure.
    ToolFailure { call: ToolCall, error: String },
    /// PostToolBatch.
    ToolBatch { calls: Vec<ToolCall> },
    /// UserPromptSubmit, UserPromptExpansion.
    Prompt { prompt: String },
    /// Stop, SubagentStop.
    Stop {
        stop_hook_active: bool,
        last_assistant_message: Option<String>,
    },
    /// SessionStart. `source` is Claude Code's name; Amplifier's bridge sends `trigger`.
    SessionStart { source: String },
    /// SessionEnd. Amplifier's bridge sends no reason.
    SessionEnd { reason: Option<String> },
    /// PreCompact, PostCompact.
    Compact { trigger: Option<String> },
    /// Notification.
    Notification {
        message: String,
        notification_type: Option<String>,
    },
    /// Events whose fields no built-in reads (and unknown events).
    Other,
}

/// One event, as read from the host.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEvent {
    pub name: EventName,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub payload: Payload,
    /// Every field the host sent, in its order, known or not.
    pub raw: Map<String, Value>,
}

/// Why an input is not a valid event. The message names the problem and what a host must send.
#[derive(Debug, Clone, PartialEq)]
pub enum InvalidInput {
    Empty,
    NotUtf8 {
        valid_up_to: usize,
    },
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    NotAnObject {
        found: &'static str,
    },
    /// No `hook_event_name` in the payload and no event implied by the subcommand.
    NoEvent,
    MissingField {
        event: String,
        field: &'static str,
    },
    WrongType {
        event: String,
        field: String,
        expected: &'static str,
        found: &'static str,
    },
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidInput::Empty => write!(
                f,
                "stdin is empty: expected one JSON object describing the hook event"
            ),
            InvalidInput::NotUtf8 { valid_up_to } => {
                write!(
                    f,
                    "stdin is not UTF-8 (invalid byte at offset {valid_up_to}): hook events are JSON, which is UTF-8"
                )
            }
            InvalidInput::NotJson {
                line,
                column,
                message,
            } => {
                write!(
                    f,
                    "stdin is not valid JSON at line {line}, column {column}: {message}"
                )
            }
            InvalidInput::NotAnObject { found } => {
                write!(
                    f,
                    "stdin holds a JSON {found}: a hook event must be a JSON object"
                )
            }
            InvalidInput::NoEvent => write!(
                f,
                "the event has no `hook_event_name`: pass it in the payload, or call an event subcommand such as `pre-tool-use` instead of `dispatch`"
            ),
            InvalidInput::MissingField { event, field } => {
                write!(f, "{event} event is missing the required field `{field}`")
            }
            InvalidInput::WrongType {
                event,
                field,
                expected,
                found,
            } => {
                write!(
                    f,
                    "{event} event field `{field}` must be {expected}, found {found}"
                )
            }
        }
    }
}

impl std::error::Error for InvalidInput {}

/// How a JSON value's type is named in error messages ("a string", "an object").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Field access with the accepted aliases and type checks, for one event.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    event: &'a EventName,
}

impl<'a> Fields<'a> {
    fn find(&self, names: &[&'static str]) -> Option<(&'static str, &'a Value)> {
        names
            .iter()
            .find_map(|name| self.map.get(*name).map(|v| (*name, v)))
    }

    fn wrong(&self, field: &str, expected: &'static str, found: &Value) -> InvalidInput {
        InvalidInput::WrongType {
            event: self.event.to_string(),
            field: field.to_string(),
            expected,
            found: json_kind(found),
        }
    }

    fn missing(&self, field: &'static str) -> InvalidInput {
        InvalidInput::MissingField {
            event: self.event.to_string(),
            field,
        }
    }

    /// A string field that may be absent (or null).
    fn opt_str(&self, names: &[&'static str]) -> Result<Option<String>, InvalidInput> {
        match self.find(names) {
            None | Some((_, Value::Null)) => Ok(None),
            Some((_, Value::String(s))) => Ok(Some(s.clone())),
            Some((name, other)) => Err(self.wrong(name, "a string", other)),
        }
    }

    fn req_str(&self, names: &[&'static str]) -> Result<String, InvalidInput> {
        self.opt_str(names)?.ok_or_else(|| self.missing(names[0]))
    }

    fn opt_bool(&self, names: &[&'static str]) -> Result<Option<bool>, InvalidInput> {
        match self.find(names) {
            None | Some((_, Value::Null)) => Ok(None),
            Some((_, Value::Bool(b))) => Ok(Some(*b)),
            Some((name, other)) => Err(self.wrong(name, "a boolean", other)),
        }
    }

    fn req_object(&self, names: &[&'static str]) -> Result<Value, InvalidInput> {
        match self.find(names) {
            None => Err(self.missing(names[0])),
            Some((_, v @ Value::Object(_))) => Ok(v.clone()),
            Some((name, other)) => Err(self.wrong(name, "an object", other)),
        }
    }

    fn tool_call(&self) -> Result<ToolCall, InvalidInput> {
        let name = self.req_str(&["tool_name", "toolName"])?;
        Ok(ToolCall {
            name: canonical_tool_name(&name).to_string(),
            input: self.req_object(&["tool_input", "toolInput"])?,
            use_id: self.opt_str(&["tool_use_id", "toolUseId"])?,
        })
    }
}

fn tool_call_in(entry: &Value, event: &EventName, index: usize) -> Result<ToolCall, InvalidInput> {
    let Value::Object(map) = entry else {
        return Err(InvalidInput::WrongType {
            event: event.to_string(),
            field: format!("tool_calls[{index}]"),
            expected: "an object",
            found: json_kind(entry),
        });
    };
    Fields { map, event }.tool_call()
}

impl HookEvent {
    /// Parses one event. `implied` is the event named by the subcommand that was called: it is
    /// used when the payload names none (Amplifier's bridge never sends `hook_event_name`). When
    /// the payload names an event, the payload wins: that is what the host fired, and the reply
    /// must name the same event.
    pub fn parse(bytes: &[u8], implied: Option<EventName>) -> Result<HookEvent, InvalidInput> {
        Self::from_map(Self::parse_object(bytes)?, implied)
    }

    /// One event's JSON object, not yet read as an event (a host's dialect renames its names
    /// first: [`crate::hosts::parse`]).
    pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, InvalidInput> {
        let text = std::str::from_utf8(bytes).map_err(|e| InvalidInput::NotUtf8 {
            valid_up_to: e.valid_up_to(),
        })?;
        if text.trim().is_empty() {
            return Err(InvalidInput::Empty);
        }
        let value: Value = serde_json::from_str(text).map_err(|e| InvalidInput::NotJson {
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })?;
        let Value::Object(raw) = value else {
            return Err(InvalidInput::NotAnObject {
                found: json_kind(&value),
            });
        };
        Ok(raw)
    }

    pub fn from_map(
        raw: Map<String, Value>,
        implied: Option<EventName>,
    ) -> Result<HookEvent, InvalidInput> {
        let named = match raw
            .get("hook_event_name")
            .or_else(|| raw.get("hookEventName"))
        {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(EventName::parse(s)),
            Some(other) => {
                return Err(InvalidInput::WrongType {
                    event: implied
                        .as_ref()
                        .map_or("hook".to_string(), ToString::to_string),
                    field: "hook_event_name".into(),
                    expected: "a string",
                    found: json_kind(other),
                });
            }
        };
        let name = named.or(implied).ok_or(InvalidInput::NoEvent)?;
        let fields = Fields {
            map: &raw,
            event: &name,
        };
        let session_id = fields.opt_str(&["session_id", "sessionId"])?;
        let transcript_path = fields.opt_str(&["transcript_path", "transcriptPath"])?;
        let cwd = fields.opt_str(&["cwd"])?;
        let payload = Self::payload(&fields)?;
        Ok(HookEvent {
            name,
            session_id,
            transcript_path,
            cwd,
            payload,
            raw,
        })
    }

    fn payload(f: &Fields<'_>) -> Result<Payload, InvalidInput> {
        use EventName as E;
        Ok(match f.event {
            E::PreToolUse | E::PermissionRequest | E::PermissionDenied => {
                Payload::Tool(f.tool_call()?)
            }
            E::PostToolUse => Payload::ToolResult {
                call: f.tool_call()?,
                // Optional in amplihack's contract (`Null` when absent); Amplifier's bridge names
                // it `tool_result`.
                response: f
                    .find(&["tool_response", "tool_result", "toolResponse", "toolResult"])
                    .map_or(Value::Null, |(_, v)| v.clone()),
            },
            E::PostToolUseFailure => Payload::ToolFailure {
                call: f.tool_call()?,
                error: f.opt_str(&["error"])?.unwrap_or_default(),
            },
            E::PostToolBatch => {
                let calls = match f.find(&["tool_calls", "toolCalls"]) {
                    None => return Err(f.missing("tool_calls")),
                    Some((_, Value::Array(items))) => items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| tool_call_in(v, f.event, i))
                        .collect::<Result<_, _>>()?,
                    Some((name, other)) => return Err(f.wrong(name, "an array", other)),
                };
                Payload::ToolBatch { calls }
            }
            // The contract requires nothing of UserPromptSubmit beyond its name: no prompt is an
            // empty one. UserPromptExpansion (Claude Code only) always carries its prompt.
            E::UserPromptSubmit => Payload::Prompt {
                prompt: f
                    .opt_str(&["prompt", "user_prompt", "userPrompt"])?
                    .unwrap_or_default(),
            },
            E::UserPromptExpansion => Payload::Prompt {
                prompt: f.req_str(&["prompt", "user_prompt", "userPrompt"])?,
            },
            E::Stop | E::SubagentStop => Payload::Stop {
                // Amplifier's Stop (`prompt:complete`) carries no flag: absent means not active.
                stop_hook_active: f
                    .opt_bool(&["stop_hook_active", "stopHookActive"])?
                    .unwrap_or(false),
                last_assistant_message: f
                    .opt_str(&["last_assistant_message", "lastAssistantMessage"])?,
            },
            // Nothing required beyond the name: a session with no source is a new one.
            E::SessionStart => Payload::SessionStart {
                source: f
                    .opt_str(&["source", "trigger"])?
                    .unwrap_or_else(|| "startup".into()),
            },
            E::SessionEnd => Payload::SessionEnd {
                reason: f.opt_str(&["reason"])?,
            },
            E::PreCompact | E::PostCompact => Payload::Compact {
                trigger: f.opt_str(&["trigger"])?,
            },
            E::Notification => Payload::Notification {
                message: f.req_str(&["message"])?,
                notification_type: f.opt_str(&["notification_type", "notificationType", "type"])?,
            },
            _ => Payload::Other,
        })
    }

    /// The tool call of a tool event, if this is one.
    pub fn tool(&self) -> Option<&ToolCall> {
        match &self.payload {
            Payload::Tool(call)
            | Payload::ToolResult { call, .. }
            | Payload::ToolFailure { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The value a matcher is tested against for this event (Claude Code's table, §1.3 of the
    /// reference). `None` for events that take no matcher: every matcher matches them.
    pub fn matcher_target(&self) -> Option<String> {
        use EventName as E;
        let field = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| self.raw.get(*n).and_then(Value::as_str))
                .map(str::to_string)
        };
        match &self.name {
            E::PreToolUse
            | E::PostToolUse
            | E::PostToolUseFailure
            | E::PermissionRequest
            | E::PermissionDenied => self.tool().map(|t| t.name.clone()),
            E::SessionStart => match &self.payload {
                Payload::SessionStart { source } => Some(source.clone()),
                _ => None,
            },
            E::SessionEnd => field(&["reason"]),
            E::Notification => field(&["notification_type", "notificationType", "type"]),
            E::PreCompact | E::PostCompact | E::Setup => field(&["trigger"]),
            E::SubagentStart | E::SubagentStop => field(&["agent_type", "agentType"]),
            E::ConfigChange | E::DirectoryAdded => field(&["source"]),
            E::StopFailure => field(&["error"]),
            E::InstructionsLoaded => field(&["load_reason"]),
            E::UserPromptExpansion => field(&["command_name"]),
            E::Elicitation | E::ElicitationResult => field(&["mcp_server_name"]),
            // Claude Code 2.1.332 tests these against `to_model`, a `[1m]` suffix dropped.
            E::PreModelSwitch | E::PostModelSwitch => field(&["to_model"]).map(|model| {
                model
                    .strip_suffix("[1m]")
                    .map_or(model.clone(), str::to_string)
            }),
            E::PreSkillShellCommand => field(&["tool_name"]),
            E::FileChanged => {
                field(&["file_path"]).map(|p| p.rsplit('/').next().unwrap_or_default().to_string())
            }
            _ => None,
        }
    }
}

/// serde_json appends " at line L column C" to its messages; we report the position ourselves.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}
