//! Google's Gemini CLI: its own event names (`BeforeTool`, `AfterAgent`, ...) and tool names,
//! `timeout` in milliseconds. A tool is denied only by a top-level `decision: "deny"` (Claude
//! Code's `permissionDecision` is ignored), context is `hookSpecificOutput.additionalContext`,
//! and AfterAgent's `decision: "block"` keeps the agent working, as Claude Code's Stop does.
//! When stdout is empty Gemini reads stderr as the reply, so amplihack always answers on stdout.

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Decision, Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    events: &[
        ("BeforeTool", "PreToolUse"),
        ("AfterTool", "PostToolUse"),
        ("BeforeAgent", "UserPromptSubmit"),
        ("AfterAgent", "Stop"),
        ("PreCompress", "PreCompact"),
    ],
    fields: &[("prompt_response", "last_assistant_message")],
    delivers: Some(&[
        EventName::SessionStart,
        EventName::SessionEnd,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::Stop,
        // Not PreCompact: Gemini fires PreCompress before every model call with a history,
        // ahead of its own threshold check (0.61.0 `ChatCompressionService.compress`), not when
        // it compacts; amplihack's transcript copy would run on every call. The name is still
        // read (a plugin the user registered by hand), it is just not registered.
        EventName::Notification,
    ]),
    timeout_per_second: 1000,
    ..Dialect::claude_like(Host::Gemini, render)
};

/// Gemini reads stderr as the reply when stdout is empty, and shows it otherwise: amplihack's
/// notes on a handled event go to its log only ([`super::notes_on_stderr`]).
pub const NOTES_ON_STDERR: bool = false;

fn can_block(event: &EventName) -> bool {
    matches!(
        event,
        EventName::PreToolUse | EventName::UserPromptSubmit | EventName::Stop
    )
}

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let label = DIALECT
        .event_label(&event.name)
        .unwrap_or(event.name.static_name());
    let denied = matches!(reply.decision, Some(Decision::Deny));
    if denied && can_block(&event.name) {
        let verdict = if event.name == EventName::PreToolUse {
            "deny"
        } else {
            "block"
        };
        out.insert("decision".into(), json!(verdict));
        out.insert("reason".into(), json!(reply.block_reason()));
    }
    let mut message = reply.system_message.clone();
    if denied && !can_block(&event.name) {
        message = reply.reason.clone().or(message);
    }
    if let Some(message) = message {
        out.insert("systemMessage".into(), json!(message));
    }
    let context = reply.all_context();
    if !context.is_empty() {
        out.insert(
            "hookSpecificOutput".into(),
            json!({"hookEventName": label, "additionalContext": context.join("\n\n")}),
        );
    }
    if let Some(input) = &reply.updated_input
        && event.name == EventName::PreToolUse
    {
        let specific = out
            .entry("hookSpecificOutput")
            .or_insert_with(|| json!({"hookEventName": label}));
        if let Value::Object(specific) = specific {
            specific.insert("tool_input".into(), input.clone());
        }
    }
    if let Some(reason) = &reply.halt {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(reason));
    }
    Rendered {
        // Never empty: Gemini would read stderr (amplihack's notes) as the reply.
        stdout: Some(Value::Object(out).to_string()),
        stderr: None,
        exit_code: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(raw: &str, reply: &Reply) -> Value {
        let (event, _) = super::super::parse(Host::Gemini, raw.as_bytes(), None).expect("event");
        serde_json::from_str(render(&event, reply).stdout.as_deref().expect("stdout"))
            .expect("json")
    }

    #[test]
    fn replies_table() {
        let tool = r#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"x"}}"#;
        let stop =
            r#"{"hook_event_name":"AfterAgent","prompt_response":"done","stop_hook_active":false}"#;
        let start = r#"{"hook_event_name":"SessionStart","source":"startup"}"#;
        let cases: &[(&str, Reply, Value)] = &[
            (
                tool,
                Reply::deny("no"),
                json!({"decision":"deny","reason":"no"}),
            ),
            (
                stop,
                Reply::deny("keep going"),
                json!({"decision":"block","reason":"keep going"}),
            ),
            (
                start,
                Reply::plain_context("ctx"),
                json!({"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"}}),
            ),
            (tool, Reply::default(), json!({})),
        ];
        for (raw, reply, want) in cases {
            assert_eq!(&out(raw, reply), want, "{raw}");
        }
    }
}
