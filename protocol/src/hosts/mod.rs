//! Each host's dialect: how its events name things, which of Claude Code's events it delivers,
//! and how it reads a reply. One file per host; [`dialect`] is the table keyed by host.
//!
//! amplihack works inside with Claude Code's event model ([`crate::HookEvent`]): the pipeline's
//! first step ([`parse`]) renames a host's event, tool and field names to Claude Code's, so
//! built-ins and the user's Claude Code plugins see what Claude Code would send; the last step
//! renders the [`Reply`] with the host's `render`. Tool names live in the one tool table,
//! [`crate::tool::HOST_TOOLS`].

use serde_json::{Map, Value};

use crate::event::{EventName, HookEvent, InvalidInput};
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub mod amplifier;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod gemini;
pub mod kimi;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod vibe;

/// A dialect's own step on a payload; returns whether it changed anything.
pub type Adjust = fn(&mut Map<String, Value>) -> bool;

/// How one host speaks the hook protocol.
pub struct Dialect {
    pub host: Host,
    /// Event names the host spells its own way: (the host's, Claude Code's).
    pub events: &'static [(&'static str, &'static str)],
    /// Payload fields the host names its own way: (the host's, Claude Code's).
    pub fields: &'static [(&'static str, &'static str)],
    /// The Claude Code events the host delivers; `None`: every one amplihack knows.
    pub delivers: Option<&'static [EventName]>,
    /// Events only this host has, by their names (Codex's `PreModelRequest`): amplihack has no
    /// built-in for them, and a plugin that names one gets it under this host.
    pub own_events: &'static [&'static str],
    /// The host's `timeout` unit, per second (1000 where it counts milliseconds).
    pub timeout_per_second: u64,
    /// The reply, as the host reads it.
    pub render: fn(&HookEvent, &Reply) -> Rendered,
    /// What the tables cannot say, done to the payload after them; returns whether it changed
    /// anything.
    pub adjust: Option<Adjust>,
}

impl Dialect {
    /// A host that speaks Claude Code's protocol as it is (its event and field names, every
    /// event, timeouts in seconds, nothing to adjust), its replies rendered by `render`: what each
    /// host's dialect starts from, changing only what the host does otherwise.
    pub const fn claude_like(host: Host, render: fn(&HookEvent, &Reply) -> Rendered) -> Dialect {
        Dialect {
            host,
            events: &[],
            fields: &[],
            delivers: None,
            own_events: &[],
            timeout_per_second: 1,
            render,
            adjust: None,
        }
    }
}

/// The table of dialects, keyed by host.
pub fn dialect(host: Host) -> &'static Dialect {
    match host {
        Host::ClaudeCode => &claude_code::DIALECT,
        Host::Amplifier => &amplifier::DIALECT,
        Host::Codex => &codex::DIALECT,
        Host::Copilot => &copilot::DIALECT,
        Host::Qwen => &qwen::DIALECT,
        Host::Droid => &droid::DIALECT,
        Host::Gemini => &gemini::DIALECT,
        Host::Opencode => &opencode::DIALECT,
        Host::Vibe => &vibe::DIALECT,
        Host::Kimi => &kimi::DIALECT,
        Host::Pi => &pi::DIALECT,
        Host::Cline => &cline::DIALECT,
    }
}

/// Whether `host` has no hook settings: a bridge file of amplihack's that the host loads
/// in-process (opencode's and Cline's plugin, Pi's extension) calls `amplihack-hooks`, so
/// nothing is registered per event.
pub fn bridged(host: Host) -> bool {
    matches!(host, Host::Opencode | Host::Pi | Host::Cline)
}

/// Whether a hook that fails (cannot be run, or exits non-zero other than to deny) denies the
/// tool in `host`: Copilot's (1.0.57, "preToolUse hook errors now deny the tool call"). There
/// amplihack's registered command is guarded against a missing binary
/// ([`crate::command::with_binary_guard`]) and every answer but a deny exits 0.
pub fn fails_closed(host: Host) -> bool {
    matches!(host, Host::Copilot)
}

/// The switch `host` has to refuse a tool when amplihack's PreToolUse hook cannot start or
/// crashes, which `amplihack install --fail-closed` sets (`None`: it has none, and amplihack's
/// entries there stay fail-open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailClosedSwitch {
    /// Claude Code (2.1.295 and later): `"onFailure": "block"` on the hook entry, not the
    /// matcher group; a hook that cannot start, times out or exits with an unexpected code
    /// blocks the call. Ignored on Stop, SubagentStop, TaskCompleted and TeammateIdle and on
    /// async hooks, so it is set on PreToolUse only.
    OnFailureBlock,
    /// Copilot CLI: a preToolUse hook that fails already denies the tool ([`fails_closed`]);
    /// the guard that exits 0 for a missing binary becomes one that refuses with the fix.
    DeniesOnError,
    /// Mistral Vibe: `strict = true` on the `pre_tool` hook, which makes Vibe deny the tool when
    /// the hook fails or times out (3.0.3 source); the guard refuses in Vibe's own form, naming
    /// the fix, when the binary is missing or fails.
    Strict,
}

impl FailClosedSwitch {
    /// What it means, for `install` and `status`.
    pub fn describe(self) -> &'static str {
        match self {
            FailClosedSwitch::OnFailureBlock => {
                "PreToolUse entry has \"onFailure\": \"block\" and refuses with the fix when amplihack-hooks is missing"
            }
            FailClosedSwitch::DeniesOnError => {
                "PreToolUse entry refuses with the fix when amplihack-hooks is missing (Copilot denies when it fails)"
            }
            FailClosedSwitch::Strict => {
                "pre_tool entry has `strict = true` and refuses with the fix when amplihack-hooks is missing or fails"
            }
        }
    }
}

/// [`FailClosedSwitch`] of `host`.
pub fn fail_closed_switch(host: Host) -> Option<FailClosedSwitch> {
    match host {
        Host::ClaudeCode => Some(FailClosedSwitch::OnFailureBlock),
        Host::Copilot => Some(FailClosedSwitch::DeniesOnError),
        Host::Vibe => Some(FailClosedSwitch::Strict),
        _ => None,
    }
}

/// The exit code for a problem amplihack reports but lets through (unreadable input, a usage
/// error): 1, a non-blocking error, except where that fails closed ([`fails_closed`]): 0.
pub fn problem_exit_code(host: Option<Host>) -> i32 {
    if host.is_some_and(fails_closed) { 0 } else { 1 }
}

impl Dialect {
    /// Whether the host delivers this Claude Code event.
    pub fn delivers(&self, event: &EventName) -> bool {
        self.delivers.is_none_or(|events| events.contains(event))
    }

    /// Whether amplihack runs the user's plugins on this event under the host: the events it
    /// delivers, and SessionStart where amplihack runs its own ([`session_start_on_first_tool`]).
    pub fn reaches_plugins(&self, event: &EventName) -> bool {
        self.delivers(event)
            || (*event == EventName::SessionStart && session_start_on_first_tool(self.host))
    }

    /// The name the host gives a Claude Code event (`BeforeTool` for Gemini's PreToolUse), or an
    /// event of its own by its name, or `None` when the host does not deliver it.
    pub fn event_label(&self, event: &EventName) -> Option<&'static str> {
        if let EventName::Unknown(name) = event {
            return self.own_events.iter().copied().find(|own| own == name);
        }
        if !self.delivers(event) {
            return None;
        }
        let claude = event.static_name();
        Some(
            self.events
                .iter()
                .find(|(_, c)| *c == claude)
                .map_or(claude, |(theirs, _)| theirs),
        )
    }

    /// The timeout (seconds) for rows the table registers without one, where the host's own
    /// default is too long to be a safety net (Codex: 600 s).
    pub fn unset_timeout_secs(&self) -> Option<u64> {
        match self.host {
            Host::Codex => Some(codex::UNSET_TIMEOUT_SECS),
            _ => None,
        }
    }

    /// The longest timeout (seconds) the host accepts for an event, where it clamps longer ones
    /// (Codex: SessionEnd, 3 s, with a warning on every run; Claude Code: SessionEnd, whose
    /// hooks share one budget, since 2.1.74 the largest registered timeout up to 60 s). `None`
    /// where no limit is known (Claude Code's other events, Copilot, Qwen, Droid, Gemini: none
    /// documented or observed).
    pub fn timeout_cap_secs(&self, event: &EventName) -> Option<u64> {
        match self.host {
            Host::Codex => codex::timeout_cap_secs(event),
            Host::ClaudeCode => (*event == EventName::SessionEnd).then_some(60),
            _ => None,
        }
    }

    /// Whether the host keys its trust in a hook by the hook's position in the file (Codex:
    /// `<file>:<event>:<group>:<handler>`): amplihack's entries then go after the user's.
    pub fn trust_by_position(&self) -> bool {
        self.host == Host::Codex
    }

    /// A registered timeout in the host's unit.
    pub fn timeout(&self, seconds: u64) -> u64 {
        seconds.saturating_mul(self.timeout_per_second)
    }
}

/// Whether amplihack's notes on a handled event (a user's plugin that failed, a file it could
/// not read) go to stderr as well as the log. Not under Gemini CLI
/// ([`gemini::NOTES_ON_STDERR`]), which reads stderr as the reply when stdout is empty and
/// shows it to the user otherwise: there they go to the log only.
pub fn notes_on_stderr(host: Host) -> bool {
    match host {
        Host::Gemini => gemini::NOTES_ON_STDERR,
        _ => true,
    }
}

/// Whether the host delivers no SessionStart, so amplihack runs its own on a session's first
/// PostToolUse and the context goes with that tool's result (Mistral Vibe:
/// [`vibe::LATE_SESSION_START`]).
pub fn session_start_on_first_tool(host: Host) -> bool {
    match host {
        Host::Vibe => vibe::LATE_SESSION_START,
        _ => false,
    }
}

/// Renames the host's event, tool and field names to Claude Code's, in place. Returns whether
/// anything changed (the bytes handed to plugins are then written anew).
pub fn normalise(host: Host, map: &mut Map<String, Value>) -> bool {
    let dialect = dialect(host);
    let mut changed = false;
    for key in ["hook_event_name", "hookEventName"] {
        if let Some(Value::String(name)) = map.get_mut(key)
            && let Some((_, claude)) = dialect.events.iter().find(|(theirs, _)| theirs == name)
        {
            *name = (*claude).to_string();
            changed = true;
        }
    }
    for key in ["tool_name", "toolName"] {
        if let Some(Value::String(name)) = map.get_mut(key) {
            let claude = crate::tool::claude_name_for(host, name);
            if claude != name {
                *name = claude.to_string();
                changed = true;
            }
        }
    }
    for (theirs, claude) in dialect.fields {
        if !map.contains_key(*claude)
            && let Some(value) = map.remove(*theirs)
        {
            map.insert((*claude).to_string(), value);
            changed = true;
        }
    }
    if let Some(adjust) = dialect.adjust {
        changed |= adjust(map);
    }
    changed
}

/// The pipeline's first step: one event as `host` sent it, read into Claude Code's event model.
/// Also returns whether normalising changed the payload.
pub fn parse(
    host: Host,
    bytes: &[u8],
    implied: Option<EventName>,
) -> Result<(HookEvent, bool), InvalidInput> {
    let mut map = HookEvent::parse_object(bytes)?;
    let changed = normalise(host, &mut map);
    Ok((HookEvent::from_map(map, implied)?, changed))
}

/// A rendered reply as a JSON object, whatever form the Claude Code renderer chose: plain text
/// on stdout (context Claude Code labels itself) becomes `additionalContext`. For hosts that
/// read JSON only.
pub(crate) fn as_json(event: &HookEvent, rendered: &Rendered) -> Map<String, Value> {
    let Some(stdout) = &rendered.stdout else {
        return Map::new();
    };
    match serde_json::from_str::<Value>(stdout) {
        Ok(Value::Object(map)) => map,
        _ => {
            let mut specific = Map::new();
            specific.insert("hookEventName".into(), Value::from(event.name.as_str()));
            specific.insert("additionalContext".into(), Value::from(stdout.as_str()));
            let mut out = Map::new();
            out.insert("hookSpecificOutput".into(), Value::Object(specific));
            out
        }
    }
}

/// A JSON reply, printed (nothing when empty), keeping the renderer's exit code and stderr.
pub(crate) fn json_reply(out: Map<String, Value>, like: Rendered) -> Rendered {
    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        ..like
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_has_its_dialect() {
        for host in Host::ALL {
            assert_eq!(dialect(host).host, host);
        }
    }

    /// What each host sends, as Claude Code would have sent it.
    #[test]
    fn normalising_table() {
        let cases: &[(Host, &str, &str, &str)] = &[
            (
                Host::Qwen,
                r#"{"hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#,
                "PreToolUse",
                "Bash",
            ),
            (
                Host::Droid,
                r#"{"hook_event_name":"PreToolUse","tool_name":"Execute","tool_input":{"command":"ls"}}"#,
                "PreToolUse",
                "Bash",
            ),
            (
                Host::Gemini,
                r#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#,
                "PreToolUse",
                "Bash",
            ),
            (
                Host::Codex,
                r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
                "PreToolUse",
                "Bash",
            ),
            (
                Host::Copilot,
                r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_result":{"result_type":"success"}}"#,
                "PostToolUse",
                "Bash",
            ),
        ];
        for (host, sent, event, tool) in cases {
            let (parsed, _) = parse(*host, sent.as_bytes(), None).expect("parses");
            assert_eq!(parsed.name.as_str(), *event, "{host:?}");
            assert_eq!(
                parsed.tool().map(|t| t.name.as_str()),
                Some(*tool),
                "{host:?}"
            );
            assert_eq!(
                parsed.raw.get("tool_name").and_then(Value::as_str),
                Some(*tool),
                "{host:?}: plugins see Claude Code's name"
            );
        }
    }

    #[test]
    fn claude_code_payloads_are_left_alone() {
        let sent =
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        let (_, changed) = parse(Host::ClaudeCode, sent, None).expect("parses");
        assert!(!changed);
    }

    #[test]
    fn labels_and_timeouts() {
        let gemini = dialect(Host::Gemini);
        assert_eq!(
            gemini.event_label(&EventName::PreToolUse),
            Some("BeforeTool")
        );
        assert_eq!(gemini.event_label(&EventName::Stop), Some("AfterAgent"));
        assert_eq!(gemini.event_label(&EventName::PermissionRequest), None);
        assert_eq!(gemini.timeout(10), 10_000);
        let claude = dialect(Host::ClaudeCode);
        assert_eq!(
            claude.event_label(&EventName::PreToolUse),
            Some("PreToolUse")
        );
        assert_eq!(claude.timeout(10), 10);
    }
}
