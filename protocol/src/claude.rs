//! Replies rendered for Claude Code: JSON on stdout, exit 0.
//!
//! A deny is `hookSpecificOutput.permissionDecision: "deny"` on PreToolUse (observed with Claude
//! Code 2.1.328: the tool does not run and the reason reaches the model), the permission-dialog
//! decision object on PermissionRequest, and a top-level `decision: "block"` on the events that
//! honour it. An empty reply prints nothing at all.

use serde_json::{Map, Value, json};

use crate::event::EventName;
use crate::reply::{Decision, Rendered, Reply};

/// Events where a top-level `decision: "block"` with a `reason` is honoured.
fn takes_top_level_block(event: &EventName) -> bool {
    use EventName as E;
    matches!(
        event,
        E::UserPromptSubmit
            | E::UserPromptExpansion
            | E::PostToolUse
            | E::PostToolUseFailure
            | E::PostToolBatch
            | E::Stop
            | E::SubagentStop
            | E::PreCompact
            | E::ConfigChange
            | E::TaskCreated
    )
}

/// Events whose `hookSpecificOutput` accepts `additionalContext`.
fn takes_additional_context(event: &EventName) -> bool {
    use EventName as E;
    matches!(
        event,
        E::PreToolUse
            | E::PostToolUse
            | E::PostToolUseFailure
            | E::PostToolBatch
            | E::SubagentStart
            | E::Setup
            | E::UserPromptSubmit
            | E::UserPromptExpansion
            | E::SessionStart
            | E::Stop
            | E::SubagentStop
    )
}

pub fn render(event: &EventName, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let mut specific = Map::new();

    match (event, reply.decision) {
        (EventName::PreToolUse, decision) => {
            if let Some(decision) = decision {
                specific.insert("permissionDecision".into(), json!(decision.as_str()));
                if let Some(reason) = &reply.reason {
                    specific.insert("permissionDecisionReason".into(), json!(reason));
                }
            }
            if let Some(input) = &reply.updated_input {
                specific.insert("updatedInput".into(), input.clone());
            }
        }
        (EventName::PermissionRequest, Some(Decision::Allow)) => {
            let mut decision = Map::new();
            decision.insert("behavior".into(), json!("allow"));
            if let Some(input) = &reply.updated_input {
                decision.insert("updatedInput".into(), input.clone());
            }
            specific.insert("decision".into(), Value::Object(decision));
        }
        (EventName::PermissionRequest, Some(Decision::Deny)) => {
            let mut decision = Map::new();
            decision.insert("behavior".into(), json!("deny"));
            if let Some(reason) = &reply.reason {
                decision.insert("message".into(), json!(reason));
            }
            specific.insert("decision".into(), Value::Object(decision));
        }
        (event, Some(Decision::Deny)) if takes_top_level_block(event) => {
            out.insert("decision".into(), json!("block"));
            out.insert(
                "reason".into(),
                json!(
                    reply
                        .reason
                        .clone()
                        .unwrap_or_else(|| "Blocked by amplihack".into())
                ),
            );
        }
        // Allow is the default everywhere else, and ask has no meaning off the permission path.
        _ => {}
    }
    // A block where none is possible (SessionStart, SessionEnd, Notification, ...): Claude Code
    // shows such a hook's exit-2 stderr to the user, so the reason goes to the user.
    let unblockable = reply.decision == Some(Decision::Deny)
        && !matches!(event, EventName::PreToolUse | EventName::PermissionRequest)
        && !takes_top_level_block(event);
    let system_message = match (unblockable, &reply.reason, &reply.system_message) {
        (true, Some(reason), Some(message)) => Some(format!("{reason}\n{message}")),
        (true, Some(reason), None) => Some(reason.clone()),
        (_, _, message) => message.clone(),
    };

    if !reply.context.is_empty() && takes_additional_context(event) {
        specific.insert(
            "additionalContext".into(),
            json!(reply.context.join("\n\n")),
        );
    }
    if let Some(message) = system_message {
        out.insert("systemMessage".into(), json!(message));
    }
    for (key, value) in &reply.passthrough {
        specific.entry(key.clone()).or_insert_with(|| value.clone());
    }
    if let Some(sequence) = &reply.terminal_sequence {
        out.insert("terminalSequence".into(), json!(sequence));
    }
    if let Some(reason) = &reply.halt {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(reason));
    }
    if !specific.is_empty() {
        let mut with_name = Map::new();
        with_name.insert("hookEventName".into(), json!(event.as_str()));
        with_name.extend(specific);
        out.insert("hookSpecificOutput".into(), Value::Object(with_name));
    }

    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        stderr: None,
        exit_code: 0,
    }
}
