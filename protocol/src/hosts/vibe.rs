//! Mistral Vibe (3.0.3): command hooks in `hooks.toml`, in Vibe's own protocol. Three events,
//! `pre_tool`, `post_tool` and `post_agent` (PreToolUse, PostToolUse, Stop); qualified tool names
//! (`file_system.bash`); replies are snake_case JSON on stdout with exit 0 (any other exit is a
//! failed hook, which lets the tool run):
//! - pre_tool: `{"decision": "deny", "reason"}` skips the tool, the reason its result;
//!   `{"hook_specific_output": {"tool_input"}}` rewrites the input;
//! - post_tool: `{"hook_specific_output": {"additional_context"}}` is appended to the tool's
//!   result (the only way text reaches the model: Vibe has no session or prompt event, so
//!   amplihack's session context rides on a session's first tool result, see [`LATE_SESSION_START`]);
//! - post_agent: `{"decision": "deny", "reason"}` runs the turn again with the reason as a user
//!   message (Claude Code's Stop block).
//!
//! `system_message` is shown to the user only.

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Decision, Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    events: &[
        ("pre_tool", "PreToolUse"),
        ("post_tool", "PostToolUse"),
        ("post_agent", "Stop"),
    ],
    fields: &[("tool_output", "tool_response")],
    delivers: Some(&[
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::Stop,
    ]),
    ..Dialect::claude_like(Host::Vibe, render)
};

/// Vibe delivers no SessionStart: amplihack runs its SessionStart (built-ins and the user's
/// plugins) on a session's first `post_tool`, and the context goes with that tool's result.
pub const LATE_SESSION_START: bool = true;

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let denied = reply.decision == Some(Decision::Deny);
    let mut context = reply.all_context();
    match event.name {
        EventName::PreToolUse | EventName::Stop if denied => {
            out.insert("decision".into(), json!("deny"));
            out.insert("reason".into(), json!(reply.block_reason()));
        }
        // Vibe's post_tool deny replaces the tool's output; Claude Code's PostToolUse block only
        // tells the model why: the reason goes after the output instead.
        EventName::PostToolUse if denied => context.push(reply.block_reason()),
        _ => {}
    }
    let mut specific = Map::new();
    if event.name == EventName::PostToolUse && !context.is_empty() {
        specific.insert("additional_context".into(), json!(context.join("\n\n")));
    }
    if event.name == EventName::PreToolUse
        && !denied
        && let Some(input) = &reply.updated_input
    {
        specific.insert("tool_input".into(), input.clone());
    }
    if !specific.is_empty() {
        out.insert("hook_specific_output".into(), Value::Object(specific));
    }
    if let Some(message) = &reply.system_message {
        out.insert("system_message".into(), json!(message));
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
        let (event, _) = super::super::parse(Host::Vibe, raw.as_bytes(), None).expect("event");
        let rendered = render(&event, reply);
        assert_eq!(rendered.exit_code, 0);
        serde_json::from_str(rendered.stdout.as_deref().unwrap_or("{}")).expect("json")
    }

    #[test]
    fn events_and_tools_read_as_claude_codes() {
        let (event, _) = super::super::parse(
            Host::Vibe,
            br#"{"hook_event_name":"pre_tool","tool_name":"file_system.bash","tool_input":{"timeout":120,"command":"ls"}}"#,
            None,
        )
        .expect("parses");
        assert_eq!(event.name, EventName::PreToolUse);
        assert_eq!(event.tool().map(|t| t.name.as_str()), Some("Bash"));
        let (event, _) = super::super::parse(
            Host::Vibe,
            br#"{"hook_event_name":"post_agent","agent_name":"main"}"#,
            None,
        )
        .expect("parses");
        assert_eq!(event.name, EventName::Stop);
    }

    #[test]
    fn session_start_is_not_registered_but_reaches_plugins() {
        let vibe = super::super::dialect(Host::Vibe);
        assert!(!vibe.delivers(&EventName::SessionStart));
        assert!(vibe.reaches_plugins(&EventName::SessionStart));
        assert!(!vibe.reaches_plugins(&EventName::UserPromptSubmit));
        assert!(super::super::session_start_on_first_tool(Host::Vibe));
        assert!(!super::super::session_start_on_first_tool(Host::Kimi));
        assert_eq!(vibe.event_label(&EventName::Stop), Some("post_agent"));
    }

    #[test]
    fn replies_table() {
        let pre = r#"{"hook_event_name":"pre_tool","tool_name":"file_system.bash","tool_input":{"command":"x"}}"#;
        let post = r#"{"hook_event_name":"post_tool","tool_name":"file_system.bash","tool_input":{"command":"x"},"tool_output":{}}"#;
        let stop = r#"{"hook_event_name":"post_agent","agent_name":"main"}"#;
        let cases: &[(&str, Reply, Value)] = &[
            (
                pre,
                Reply::deny("no"),
                json!({"decision":"deny","reason":"no"}),
            ),
            (
                stop,
                Reply::deny("keep going"),
                json!({"decision":"deny","reason":"keep going"}),
            ),
            (
                post,
                Reply::plain_context("ctx"),
                json!({"hook_specific_output":{"additional_context":"ctx"}}),
            ),
            (
                post,
                Reply::deny("why"),
                json!({"hook_specific_output":{"additional_context":"why"}}),
            ),
            (pre, Reply::plain_context("nowhere to go"), json!({})),
            (pre, Reply::default(), json!({})),
        ];
        for (raw, reply, want) in cases {
            assert_eq!(&out(raw, reply), want, "{raw} {reply:?}");
        }
    }
}
