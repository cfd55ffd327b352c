//! Kimi CLI (1.52.0, Python, the package's final release): Claude Code's event names and payload
//! fields (no `transcript_path`, no `permission_mode`), its own tool names (`Shell`, `WriteFile`,
//! `StrReplaceFile`, ...), `timeout` in whole seconds (1 to 600). It reads a reply's
//! `hookSpecificOutput.permissionDecision: "deny"` (or exit 2 with the reason on stderr) for
//! PreToolUse, UserPromptSubmit and Stop, and nothing else: no context reaches the model from any
//! event's stdout, and a top-level `decision: "block"` is not read. A Stop denied with a reason
//! runs one more turn, with the reason as a user message, once per prompt.

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Decision, Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    delivers: Some(&[
        EventName::SessionStart,
        EventName::SessionEnd,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::PostToolUseFailure,
        EventName::Stop,
        EventName::StopFailure,
        EventName::SubagentStart,
        EventName::SubagentStop,
        EventName::PreCompact,
        EventName::PostCompact,
        EventName::Notification,
    ]),
    ..Dialect::claude_like(Host::Kimi, render)
};

/// The events whose deny Kimi honours.
fn can_block(event: &EventName) -> bool {
    matches!(
        event,
        EventName::PreToolUse | EventName::UserPromptSubmit | EventName::Stop
    )
}

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    if reply.decision == Some(Decision::Deny) && can_block(&event.name) {
        out.insert(
            "hookSpecificOutput".into(),
            json!({
                "hookEventName": event.name.as_str(),
                "permissionDecision": "deny",
                "permissionDecisionReason": reply.block_reason(),
            }),
        );
    }
    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        stderr: None,
        exit_code: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(raw: &str, reply: &Reply) -> Value {
        let (event, _) = super::super::parse(Host::Kimi, raw.as_bytes(), None).expect("event");
        serde_json::from_str(render(&event, reply).stdout.as_deref().unwrap_or("{}")).expect("json")
    }

    #[test]
    fn replies_table() {
        let pre =
            r#"{"hook_event_name":"PreToolUse","tool_name":"Shell","tool_input":{"command":"x"}}"#;
        let stop = r#"{"hook_event_name":"Stop","stop_hook_active":false}"#;
        let start = r#"{"hook_event_name":"SessionStart","source":"startup"}"#;
        let deny = |event: &str, reason: &str| json!({"hookSpecificOutput":{"hookEventName":event,"permissionDecision":"deny","permissionDecisionReason":reason}});
        let cases: &[(&str, Reply, Value)] = &[
            (pre, Reply::deny("no"), deny("PreToolUse", "no")),
            (stop, Reply::deny("keep going"), deny("Stop", "keep going")),
            (start, Reply::plain_context("ctx"), json!({})),
            (pre, Reply::default(), json!({})),
        ];
        for (raw, reply, want) in cases {
            assert_eq!(&out(raw, reply), want, "{raw}");
        }
        let (event, _) = super::super::parse(Host::Kimi, pre.as_bytes(), None).expect("event");
        assert_eq!(event.tool().map(|t| t.name.as_str()), Some("Bash"));
    }
}
