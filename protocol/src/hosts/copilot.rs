//! GitHub Copilot CLI, through its Claude Code format (PascalCase events, nested
//! `matcher`/`hooks`): Claude Code's payloads but for PostToolUse's `tool_result` (Claude Code's
//! `tool_response`), and context read only from a top-level `additionalContext` (the one in
//! `hookSpecificOutput` is dropped, observed with 1.0.102). A hook that fails denies the tool
//! ([`super::fails_closed`]), so amplihack's reply is exit 0 unless it denies. Stop's
//! `decision:block` keeps the agent working, at most 8 times in a row (Copilot's cap, 1.0.72).

use serde_json::Value;

use super::{Dialect, as_json, json_reply};
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Decision, Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    // No event renamed: amplihack registers the Claude Code format, whose payloads carry Claude
    // Code's event names (1.0.21). (The names of Copilot's own camelCase format would become the
    // registered keys here, `agentStop` in a PascalCase file.)
    fields: &[
        ("tool_result", "tool_response"),
        ("toolResult", "tool_response"),
    ],
    delivers: Some(&[
        EventName::SessionStart,
        EventName::SessionEnd,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::PostToolUseFailure,
        EventName::PermissionRequest,
        EventName::Stop,
        EventName::SubagentStart,
        EventName::SubagentStop,
        EventName::PreCompact,
        EventName::Notification,
    ]),
    ..Dialect::claude_like(Host::Copilot, render)
};

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let mut rendered = super::claude_code::render(event, reply);
    if reply.decision != Some(Decision::Deny) {
        // Any other non-zero exit would deny the tool: Copilot fails closed.
        rendered.exit_code = 0;
    }
    let mut out = as_json(event, &rendered);
    if let Some(Value::Object(specific)) = out.get_mut("hookSpecificOutput") {
        let context = specific.remove("additionalContext");
        if specific.len() == 1 && specific.contains_key("hookEventName") {
            out.remove("hookSpecificOutput");
        }
        if let Some(context) = context {
            out.insert("additionalContext".into(), context);
        }
    }
    json_reply(out, rendered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_goes_to_the_top_level() {
        let start =
            HookEvent::parse(br#"{"hook_event_name":"SessionStart"}"#, None).expect("event");
        for reply in [Reply::plain_context("ctx"), Reply::context("ctx")] {
            let out: Value =
                serde_json::from_str(render(&start, &reply).stdout.as_deref().expect("stdout"))
                    .expect("json");
            assert_eq!(out, serde_json::json!({"additionalContext": "ctx"}));
        }
    }

    /// A PascalCase file takes Claude Code's names only (`agentStop` there never fires).
    #[test]
    fn events_keep_claude_codes_names() {
        for event in DIALECT.delivers.unwrap_or_default() {
            assert_eq!(DIALECT.event_label(event), Some(event.static_name()));
        }
    }

    #[test]
    fn a_stop_block_is_top_level_and_exits_0() {
        let stop = HookEvent::parse(br#"{"hook_event_name":"Stop"}"#, None).expect("event");
        let rendered = render(&stop, &Reply::deny("keep going"));
        let out: Value =
            serde_json::from_str(rendered.stdout.as_deref().expect("stdout")).expect("json");
        assert_eq!(out["decision"], "block", "{out}");
        assert_eq!(out["reason"], "keep going", "{out}");
        assert_eq!(rendered.exit_code, 0);
    }

    #[test]
    fn a_deny_stays_a_deny() {
        let pre = HookEvent::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"}}"#,
            None,
        )
        .expect("event");
        let rendered = render(&pre, &Reply::deny("no"));
        let out: Value =
            serde_json::from_str(rendered.stdout.as_deref().expect("stdout")).expect("json");
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    }
}
