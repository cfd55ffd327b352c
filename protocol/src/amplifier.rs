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
//! * `updatedInput` and `continue: false` have no Amplifier equivalent and are not sent.

use serde_json::{Map, Value, json};

use crate::event::EventName;
use crate::reply::{Decision, Rendered, Reply};

fn can_block(event: &EventName) -> bool {
    matches!(
        event,
        EventName::PreToolUse | EventName::UserPromptSubmit | EventName::PermissionRequest
    )
}

pub fn render(event: &EventName, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let mut context = reply.context.clone();
    let restrictive = matches!(reply.decision, Some(Decision::Deny | Decision::Ask));

    if restrictive && can_block(event) {
        let reason = reply
            .reason
            .clone()
            .unwrap_or_else(|| "Blocked by amplihack".into());
        let reason = if reply.decision == Some(Decision::Ask) {
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
    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        stderr: None,
        exit_code: 0,
    }
}
