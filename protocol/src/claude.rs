//! Replies rendered for Claude Code: JSON on stdout, exit 0.
//!
//! A deny is `hookSpecificOutput.permissionDecision: "deny"` on PreToolUse (observed with Claude
//! Code 2.1.328: the tool does not run and the reason reaches the model), the permission-dialog
//! decision object on PermissionRequest, and a top-level `decision: "block"` on the events that
//! honour it. An empty reply prints nothing at all.

use serde_json::{Map, Value, json};

use crate::event::{EventName, HookEvent};
use crate::reply::{Decision, Rendered, Reply};

/// How Claude Code 2.1.328 names one hook's output to the model (observed with --plugin-dir):
/// plain stdout as `<success> hook success: <text>`, `additionalContext` as `<additional> hook
/// additional context: <text>`, each handler's text its own paragraph. amplihack answers once for
/// all its handlers, so Claude Code labels only the first text; the others carry their labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    /// `SessionStart:startup`, `UserPromptSubmit`.
    pub success: String,
    /// `SessionStart`, `PreToolUse:Bash`, `Stop`.
    pub additional: String,
}

impl Labels {
    /// The names Claude Code gives hooks of this event: the tool on tool events, the source on
    /// SessionStart's plain output.
    pub fn of(event: &HookEvent) -> Labels {
        let name = event.name.as_str();
        let field = |key: &str| event.raw.get(key).and_then(Value::as_str);
        let additional = match (event.tool(), field("tool_name")) {
            (Some(_), Some(tool)) => format!("{name}:{tool}"),
            (Some(call), None) => format!("{name}:{}", call.name),
            (None, _) => name.to_string(),
        };
        let success = match event.name {
            EventName::SessionStart => format!("{name}:{}", field("source").unwrap_or("startup")),
            _ => additional.clone(),
        };
        Labels {
            success,
            additional,
        }
    }

    /// Labels from the event's name alone.
    pub fn named(event: &EventName) -> Labels {
        Labels {
            success: event.as_str().to_string(),
            additional: event.as_str().to_string(),
        }
    }
}

/// The model's context as one text, and whether it goes out as plain stdout (which Claude Code
/// labels `hook success`) rather than `additionalContext`. Plain stdout only when the first text is
/// one and nothing else needs JSON; plain texts always come first.
fn context_text(labels: &Labels, reply: &Reply, plain_allowed: bool) -> Option<(bool, String)> {
    // Claude Code would read stdout that starts with `{` as JSON.
    let plain = plain_allowed
        && reply
            .plain_context
            .first()
            .is_some_and(|t| !t.trim_start().starts_with('{'));
    let success = reply
        .plain_context
        .iter()
        .map(|t| (format!("{} hook success: ", labels.success), t));
    let additional = reply.context.iter().map(|t| {
        (
            format!("{} hook additional context: ", labels.additional),
            t,
        )
    });
    let unlabelled = reply.unlabelled_context.iter().map(|t| (String::new(), t));
    // Claude Code hands the model plain-text context before JSON context, also when something
    // else (a systemMessage) forces this answer into JSON.
    let ordered: Vec<(String, &String)> = success.chain(additional).chain(unlabelled).collect();
    let (_, first) = ordered.first()?;
    let mut text = (*first).clone();
    for (label, t) in &ordered[1..] {
        text.push_str("\n\n");
        text.push_str(label);
        text.push_str(t);
    }
    Some((plain, text))
}

/// Events where a top-level `decision: "block"` with a `reason` is honoured (Elicitation and
/// ElicitationResult since 2.1.284: it declines the MCP request).
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
            | E::Elicitation
            | E::ElicitationResult
    ) || blocks_with_exit_2(event)
}

/// Events whose block is an exit 2 (the contract since they came, 2.1.33): the task is not
/// completed, the teammate keeps working, and the model gets the reason. amplihack also prints
/// the reason as `decision: "block"`, which Claude Code 2.1.332 takes as the message over stderr
/// (observed: `TaskCompleted hook feedback:\n<reason>`), so its own command is not named.
fn blocks_with_exit_2(event: &EventName) -> bool {
    matches!(event, EventName::TaskCompleted | EventName::TeammateIdle)
}

/// Events answered with `hookSpecificOutput.permissionDecision` (allow, deny, ask, defer), as
/// PreToolUse is: PreModelSwitch (2.1.251) and PreSkillShellCommand (2.1.332), where deny, ask
/// and defer keep the shell command from running.
pub fn takes_permission_decision(event: &EventName) -> bool {
    matches!(
        event,
        EventName::PreToolUse | EventName::PreModelSwitch | EventName::PreSkillShellCommand
    )
}

/// Events where a handler's plain stdout reaches the model as it is: PreCompact's, which Claude
/// Code 2.1.332 hands the compaction as `Additional Instructions:`.
fn passes_plain_stdout(event: &EventName) -> bool {
    *event == EventName::PreCompact
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
            | E::PostModelSwitch
    )
}

/// [`render_labelled`] with labels from the event's name alone.
pub fn render(event: &EventName, reply: &Reply) -> Rendered {
    render_labelled(event, &Labels::named(event), reply)
}

pub fn render_labelled(event: &EventName, labels: &Labels, reply: &Reply) -> Rendered {
    let mut out = Map::new();
    let mut specific = Map::new();

    match (event, reply.decision) {
        (event, decision) if takes_permission_decision(event) => {
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
            out.insert("reason".into(), json!(reply.block_reason()));
        }
        // Allow is the default everywhere else, and ask has no meaning off the permission path.
        _ => {}
    }
    // A block where none is possible (SessionStart, SessionEnd, Notification, ...): Claude Code
    // shows such a hook's exit-2 stderr to the user, so the reason goes to the user.
    let unblockable = reply.decision == Some(Decision::Deny)
        && !takes_permission_decision(event)
        && *event != EventName::PermissionRequest
        && !takes_top_level_block(event);
    let system_message = match (unblockable, &reply.reason, &reply.system_message) {
        (true, Some(reason), Some(message)) => Some(format!("{reason}\n{message}")),
        (true, Some(reason), None) => Some(reason.clone()),
        (_, _, message) => message.clone(),
    };

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
    let needs_json = !out.is_empty() || !specific.is_empty();
    let context = takes_additional_context(event)
        .then(|| context_text(labels, reply, !needs_json))
        .flatten();
    if let Some((true, text)) = context {
        return Rendered {
            stdout: Some(text),
            stderr: None,
            exit_code: 0,
        };
    }
    if passes_plain_stdout(event) && !needs_json && !reply.plain_context.is_empty() {
        return Rendered {
            stdout: Some(reply.plain_context.join("\n\n")),
            stderr: None,
            exit_code: 0,
        };
    }
    if let Some((_, text)) = context {
        specific.insert("additionalContext".into(), json!(text));
    }
    if !specific.is_empty() {
        let mut with_name = Map::new();
        with_name.insert("hookEventName".into(), json!(event.as_str()));
        with_name.extend(specific);
        out.insert("hookSpecificOutput".into(), Value::Object(with_name));
    }

    let exit_2 = blocks_with_exit_2(event) && reply.decision == Some(Decision::Deny);
    let stderr = exit_2
        .then(|| {
            out.get("reason")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .flatten();
    Rendered {
        stdout: (!out.is_empty()).then(|| Value::Object(out).to_string()),
        stderr,
        exit_code: if exit_2 { 2 } else { 0 },
    }
}
