//! OpenAI's Codex CLI: Claude Code's wire format (its own shell tool, `exec_command`, arrives as
//! `Bash`), but every reply is checked against a strict schema (`additionalProperties: false`):
//! one key it does not know makes the hook "Failed", and a failed PreToolUse lets the tool run.
//! So the reply is Claude Code's, cut down to the keys Codex 0.169.0's output schemas allow.

use serde_json::Value;

use super::{Dialect, as_json, json_reply};
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    delivers: Some(&[
        EventName::SessionStart,
        EventName::SessionEnd,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PermissionRequest,
        EventName::PostToolUse,
        EventName::PreCompact,
        EventName::PostCompact,
        EventName::SubagentStart,
        EventName::SubagentStop,
        EventName::Stop,
    ]),
    own_events: OWN_EVENTS,
    ..Dialect::claude_like(Host::Codex, render)
};

/// Codex's events Claude Code does not have, in 0.169.0 and 0.171.0 alike: before and after each
/// model request (`model`; after it also `status`, `error`, `token_usage`; 0.171.0 adds
/// `request_id`, `attempt_number`, `thread_id`, `response_id`). Seen in the real CLIs
/// (tests/codex_model_events_e2e.rs). Its source prepares `StopFailure` (with a `recovery.model`
/// answer) and renames the second to `PostModelResponse`; no released binary has those yet.
pub const OWN_EVENTS: &[&str] = &["PreModelRequest", "PostModelRequest"];

/// Codex waits 600 s for a hook registered without a timeout; amplihack's tool rows answer (or
/// fail open) within their 50 s deadline, so they are registered with this one.
pub const UNSET_TIMEOUT_SECS: u64 = 60;

/// Codex clamps a SessionEnd hook's timeout to 3 s, warning on every run ("clamping SessionEnd
/// hook timeout to 3s"); amplihack's SessionEnd answers within 1.2 s.
pub fn timeout_cap_secs(event: &EventName) -> Option<u64> {
    (*event == EventName::SessionEnd).then_some(3)
}

/// The top-level keys Codex's command-hook output schemas allow.
const TOP_LEVEL: &[&str] = &[
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
];

/// The `hookSpecificOutput` keys they allow.
const SPECIFIC: &[&str] = &[
    "hookEventName",
    "additionalContext",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "updatedToolOutput",
    "updatedMCPToolOutput",
];

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let rendered = super::claude_code::render(event, reply);
    let mut out = as_json(event, &rendered);
    out.retain(|key, value| {
        TOP_LEVEL.contains(&key.as_str())
            // `decision` takes `block` only.
            && (key != "decision" || value.as_str() == Some("block"))
    });
    if let Some(Value::Object(specific)) = out.get_mut("hookSpecificOutput") {
        let permission_request = event.name == EventName::PermissionRequest;
        specific.retain(|key, _| {
            SPECIFIC.contains(&key.as_str()) || (permission_request && key == "decision")
        });
        // `defer` is Claude Code's only: Codex knows allow, deny and ask.
        if let Some(decision) = specific.get_mut("permissionDecision")
            && decision.as_str() == Some("defer")
        {
            *decision = Value::from("ask");
        }
        if specific.len() == 1 && specific.contains_key("hookEventName") {
            out.remove("hookSpecificOutput");
        }
    }
    json_reply(out, rendered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::Decision;
    use serde_json::Map;

    fn event(raw: &str) -> HookEvent {
        HookEvent::parse(raw.as_bytes(), None).expect("event")
    }

    fn keys(rendered: &Rendered) -> Map<String, Value> {
        serde_json::from_str(rendered.stdout.as_deref().unwrap_or("{}")).expect("json")
    }

    #[test]
    fn only_schema_keys_leave() {
        let pre = event(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"}}"#,
        );
        let mut reply = Reply::deny("no --no-verify");
        reply.terminal_sequence = Some("\u{7}".into());
        reply
            .passthrough
            .insert("sessionTitle".into(), Value::from("t"));
        let out = keys(&render(&pre, &reply));
        assert!(
            out.keys().all(|k| TOP_LEVEL.contains(&k.as_str())),
            "{out:?}"
        );
        let specific = out["hookSpecificOutput"].as_object().expect("specific");
        assert!(
            specific.keys().all(|k| SPECIFIC.contains(&k.as_str())),
            "{specific:?}"
        );
        assert_eq!(specific["permissionDecision"], "deny");
    }

    #[test]
    fn plain_context_becomes_additional_context() {
        let start = event(r#"{"hook_event_name":"SessionStart","source":"startup"}"#);
        let reply = Reply::plain_context("PROJECT.md says hi");
        let out = keys(&render(&start, &reply));
        assert_eq!(
            out["hookSpecificOutput"]["additionalContext"],
            "PROJECT.md says hi"
        );
    }

    #[test]
    fn defer_is_asked() {
        let pre = event(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"}}"#,
        );
        let reply = Reply {
            decision: Some(Decision::Defer),
            ..Reply::default()
        };
        let out = keys(&render(&pre, &reply));
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "ask");
    }
}
