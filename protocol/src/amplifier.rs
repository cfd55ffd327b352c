//! Replies rendered for Amplifier's `hook-shell` bridge.
//!
//! The bridge honours only three things (measured with amplifier-core 2.0.2): exit 2, a top-level
//! `decision: "block"` (with `reason` and an optional `systemMessage`), and `contextInjection`.
//! `hookSpecificOutput`, `additionalContext` and `continue: false` all become "continue", and a
//! lone `systemMessage` is dropped by the kernel. So:
//!
//! * a deny or a block is `{"decision":"block","reason":…}` only where a block means something
//!   (`tool:pre` and `prompt:submit`, and approval requests); elsewhere the reason is handed to the
//!   model as context instead, so a "block" never appears on a path that does not mean to block;
//! * `ask` cannot be asked under Amplifier (the bridge never produces `ask_user`): it is a block,
//!   because the hook's author wanted a person to look before the call ran;
//! * context is `contextInjection`; a `systemMessage` rides along only beside one of those two;
//! * `updatedInput` and `continue: false` have no equivalent the bridge reads.
//!
//! Beside those, every reply carries `hookResult`, the whole answer as Amplifier's `HookResult`
//! (`action` deny | ask_user | modify | inject_context | continue, `reason`, `context_injection`,
//! `approval_prompt`/`approval_default`, `data.tool_input`, `user_message` and its level,
//! `suppress_output`), which amplihack's native module reads; the bridge ignores unknown keys.

use serde_json::{Map, Value, json};

use crate::event::EventName;
use crate::reply::{Decision, Rendered, Reply};

fn can_block(event: &EventName) -> bool {
    matches!(
        event,
        EventName::PreToolUse | EventName::UserPromptSubmit | EventName::PermissionRequest
    )
}

/// The texts for the model. A PreCompact handler's plain stdout is Claude Code's instructions for
/// its compaction, which Amplifier has no place for: not handed to the model as context.
fn model_context(event: &EventName, reply: &Reply) -> Vec<String> {
    if *event == EventName::PreCompact {
        return reply
            .context
            .iter()
            .chain(&reply.unlabelled_context)
            .cloned()
            .collect();
    }
    reply.all_context()
}

pub fn render(event: &EventName, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let mut context = model_context(event, reply);
    // Amplifier has no `defer`: the user is asked, as for `ask`.
    let restrictive = matches!(
        reply.decision,
        Some(Decision::Deny | Decision::Ask | Decision::Defer)
    );

    if restrictive && can_block(event) {
        let reason = reply.block_reason();
        let reason = if matches!(reply.decision, Some(Decision::Ask | Decision::Defer)) {
            format!("confirmation required (Amplifier cannot ask): {reason}")
        } else {
            reason
        };
        out.insert("decision".into(), json!("block"));
        out.insert("reason".into(), json!(reason));
    } else if let (true, Some(reason)) = (restrictive, &reply.reason) {
        context.insert(0, reason.clone());
    }
    if !context.is_empty() {
        out.insert("contextInjection".into(), json!(context.join("\n\n")));
    }
    if let (Some(message), false) = (&reply.system_message, out.is_empty()) {
        out.insert("systemMessage".into(), json!(message));
    }
    if let Some(result) = hook_result(event, reply) {
        out.insert("hookResult".into(), result);
    }
    if !reply.model_questions.is_empty() {
        // For amplihack's module, which asks the session's own provider (the bridge ignores it).
        let questions: Vec<Value> = reply
            .model_questions
            .iter()
            .map(|q| {
                json!({
                    "prompt": q.prompt, "model": q.model, "timeout": q.timeout_secs,
                    "maxTokens": q.max_tokens, "cache": q.cache, "agent": q.agent,
                    "onFailure": if q.on_failure.is_empty() { "warn" } else { q.on_failure.as_str() },
                })
            })
            .collect();
        out.insert("modelHandlers".into(), Value::Array(questions));
    }
    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        stderr: None,
        exit_code: 0,
    }
}

/// The reply as Amplifier's `HookResult`, for the native module. `None` when there is nothing to
/// say. One action, by the registry's own precedence: deny, then ask_user, then modify (a new
/// `tool_input` on `tool:pre`), then inject_context.
pub fn hook_result(event: &EventName, reply: &Reply) -> Option<Value> {
    let mut context = model_context(event, reply);
    let mut result = Map::new();
    let blocks = matches!(
        event,
        EventName::PreToolUse | EventName::UserPromptSubmit | EventName::PermissionRequest
    );
    let action = match reply.decision {
        Some(Decision::Deny) if blocks => "deny",
        Some(Decision::Ask | Decision::Defer) if blocks => "ask_user",
        Some(Decision::Deny | Decision::Ask | Decision::Defer) => {
            // Where Amplifier cannot block (tool:post, Stop, ...), the reason reaches the model.
            if let Some(reason) = &reply.reason {
                context.insert(0, reason.clone());
            }
            "inject_context"
        }
        _ if reply.updated_input.is_some() && *event == EventName::PreToolUse => "modify",
        _ if !context.is_empty() => "inject_context",
        _ => "continue",
    };
    result.insert("action".into(), json!(action));
    if let Some(reason) = &reply.reason {
        result.insert("reason".into(), json!(reason));
    }
    if action == "ask_user" {
        result.insert(
            "approval_prompt".into(),
            json!(
                reply
                    .reason
                    .clone()
                    .unwrap_or_else(|| "A hook asks for your approval".into())
            ),
        );
        result.insert("approval_default".into(), json!("deny"));
    }
    if action == "modify"
        && let Some(input) = &reply.updated_input
    {
        result.insert("data".into(), json!({"tool_input": input}));
    }
    if !context.is_empty() {
        result.insert("context_injection".into(), json!(context.join("\n\n")));
    }
    if let Some(message) = reply.system_message.as_ref().or(reply.halt.as_ref()) {
        result.insert("user_message".into(), json!(message));
        let level = if reply.halt.is_some() || reply.decision == Some(Decision::Deny) {
            "warning"
        } else {
            "info"
        };
        result.insert("user_message_level".into(), json!(level));
    }
    if reply.suppress_output {
        result.insert("suppress_output".into(), json!(true));
    }
    (action != "continue" || result.len() > 1).then_some(Value::Object(result))
}
