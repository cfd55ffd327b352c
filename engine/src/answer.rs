//! One handler's output read as Claude Code reads it, into a [`Reply`].
//!
//! Exit 0: a JSON object on stdout is an answer; other text is context for UserPromptSubmit and
//! SessionStart and ignored elsewhere. Exit 2: a block, with stderr as the reason, routed per event
//! by the renderer. Any other exit, a timeout or a failure to start: a non-blocking warning.

use amplihack_protocol::{Decision, EventName, Reply};
use serde_json::Value;

use crate::execute::Finished;

/// The reply and, separately, a warning for the user (non-blocking failures).
pub fn interpret(event: &EventName, plugin: &str, finished: &Finished) -> (Reply, Option<String>) {
    if let Some(error) = &finished.spawn_error {
        return (
            Reply::default(),
            Some(format!("hook from {plugin} could not start: {error}")),
        );
    }
    if finished.timed_out {
        return (
            Reply::default(),
            Some(format!(
                "hook from {plugin} timed out after {:.1} s and was stopped",
                finished.duration.as_secs_f64()
            )),
        );
    }
    match finished.exit {
        Some(0) => (from_stdout(event, finished.stdout.trim()), None),
        Some(2) => {
            let reason = finished.stderr.trim();
            let reason = if reason.is_empty() {
                format!("blocked by hook from {plugin}")
            } else {
                reason.to_string()
            };
            (Reply::deny(reason), None)
        }
        code => {
            let first_line = finished.stderr.lines().next().unwrap_or("no stderr output");
            let code = code.map_or("a signal".to_string(), |c| c.to_string());
            (
                Reply::default(),
                Some(format!(
                    "hook from {plugin} failed with exit {code}: {first_line}"
                )),
            )
        }
    }
}

fn takes_plain_text_context(event: &EventName) -> bool {
    matches!(
        event,
        EventName::UserPromptSubmit | EventName::SessionStart | EventName::UserPromptExpansion
    )
}

fn from_stdout(event: &EventName, stdout: &str) -> Reply {
    if stdout.is_empty() {
        return Reply::default();
    }
    match serde_json::from_str::<Value>(stdout) {
        Ok(Value::Object(answer)) => from_json(&answer),
        _ if takes_plain_text_context(event) => Reply::context(stdout),
        _ => Reply::default(),
    }
}

fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

fn from_json(answer: &serde_json::Map<String, Value>) -> Reply {
    let mut reply = Reply {
        suppress_output: answer.get("suppressOutput") == Some(&Value::Bool(true)),
        ..Reply::default()
    };
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);

    // Top-level decision (legacy approve/block too), then the event-specific ones, which win.
    if let Some(decision) = answer
        .get("decision")
        .and_then(Value::as_str)
        .and_then(Decision::parse)
    {
        reply.decision = Some(decision);
        reply.reason = text(answer.get("reason"));
    }
    if let Some(specific) = specific {
        if let Some(decision) = specific
            .get("permissionDecision")
            .and_then(Value::as_str)
            .and_then(Decision::parse)
        {
            reply.decision = Some(decision);
            reply.reason = text(specific.get("permissionDecisionReason")).or(reply.reason.take());
        }
        // PermissionRequest: {"decision": {"behavior": "allow"|"deny", "message", "updatedInput"}}
        if let Some(behavior) = specific
            .get("decision")
            .and_then(|d| d.get("behavior"))
            .and_then(Value::as_str)
            .and_then(Decision::parse)
        {
            reply.decision = Some(behavior);
            reply.reason = specific
                .get("decision")
                .and_then(|d| text(d.get("message")))
                .or(reply.reason.take());
            if let Some(input) = specific.get("decision").and_then(|d| d.get("updatedInput")) {
                reply.updated_input = Some(input.clone());
            }
        }
        if let Some(input) = specific.get("updatedInput") {
            reply.updated_input = Some(input.clone());
        }
        if let Some(context) = text(specific.get("additionalContext")) {
            reply.context.push(context);
        }
    }
    // The seeds' Amplifier-style fields. `newContent` has no Claude Code equivalent; its text is
    // handed to the model as context so it is not lost.
    for key in ["contextInjection", "newContent"] {
        if let Some(context) = text(answer.get(key)) {
            reply.context.push(context);
        }
    }
    reply.system_message = text(answer.get("systemMessage"));
    if answer.get("continue").and_then(Value::as_bool) == Some(false) {
        reply.halt =
            Some(text(answer.get("stopReason")).unwrap_or_else(|| "stopped by a hook".into()));
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn finished(exit: Option<i32>, stdout: &str, stderr: &str) -> Finished {
        Finished {
            exit,
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration: Duration::from_millis(5),
            ..Finished::default()
        }
    }

    #[test]
    fn every_output_form() {
        use EventName as E;
        let deny = |r: &str| Reply::deny(r);
        let cases: Vec<(E, Finished, Reply, bool)> = vec![
            (E::PreToolUse, finished(Some(0), "", ""), Reply::default(), false),
            (E::PreToolUse, finished(Some(0), "just text", ""), Reply::default(), false),
            (E::UserPromptSubmit, finished(Some(0), "remember X\n", ""), Reply::context("remember X"), false),
            (E::SessionStart, finished(Some(0), "ctx", ""), Reply::context("ctx"), false),
            (E::PreToolUse, finished(Some(2), "", "no way\n"), deny("no way"), false),
            (E::PreToolUse, finished(Some(2), "{\"decision\":\"approve\"}", ""), deny("blocked by hook from p"), false),
            (E::PreToolUse, finished(Some(1), "", "oops\nmore"), Reply::default(), true),
            (E::PreToolUse, Finished { timed_out: true, ..finished(None, "", "") }, Reply::default(), true),
            (E::Stop, finished(Some(0), &json!({"decision": "block", "reason": "again"}).to_string(), ""), deny("again"), false),
            (
                E::PreToolUse,
                finished(Some(0), &json!({"decision": "approve", "reason": "fine"}).to_string(), ""),
                Reply { decision: Some(Decision::Allow), reason: Some("fine".into()), ..Reply::default() },
                false,
            ),
            (
                E::PreToolUse,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "sure?", "updatedInput": {"command": "ls"}, "additionalContext": "c"}}).to_string(), ""),
                Reply { decision: Some(Decision::Ask), reason: Some("sure?".into()), updated_input: Some(json!({"command": "ls"})), context: vec!["c".into()], ..Reply::default() },
                false,
            ),
            (
                E::PermissionRequest,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "nope"}}}).to_string(), ""),
                deny("nope"),
                false,
            ),
            (E::SessionStart, finished(Some(0), &json!({"contextInjection": "amp ctx"}).to_string(), ""), Reply::context("amp ctx"), false),
            (E::PostToolUse, finished(Some(0), &json!({"newContent": "replacement"}).to_string(), ""), Reply::context("replacement"), false),
            (
                E::Stop,
                finished(Some(0), &json!({"continue": false, "stopReason": "enough", "systemMessage": "bye", "suppressOutput": true}).to_string(), ""),
                Reply { halt: Some("enough".into()), system_message: Some("bye".into()), suppress_output: true, ..Reply::default() },
                false,
            ),
        ];
        for (event, output, want, warns) in cases {
            let (reply, warning) = interpret(&event, "p", &output);
            assert_eq!(reply, want, "{event} {output:?}");
            assert_eq!(warning.is_some(), warns, "{event} {output:?}: {warning:?}");
        }
    }
}
