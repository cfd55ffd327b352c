//! `{"type": "prompt", "prompt": "... $ARGUMENTS ...", "model": "..."}`: Claude Code asks a model
//! whether the event may go on (`{ok, reason}`). amplihack holds no model access of its own: under
//! Claude Code the handler is registered as Claude Code's own hook entry, as written, so Claude Code
//! evaluates it with the user's model access ([`HandlerKind::host_entry`]); under Amplifier the
//! binary hands it, `$ARGUMENTS` filled in, to amplihack's module (`modelHandlers`), which asks the
//! session's own provider.

use amplihack_protocol::{EventName, ModelQuestion};
use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, Plan, Planning, optional_string, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub prompt: String,
    pub model: Option<String>,
    /// The handler as written, for Claude Code to run.
    pub raw: Map<String, Value>,
}

impl Prompt {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Prompt, FieldError> {
        Ok(Prompt {
            prompt: required_string(handler, at, "prompt", "the question for the model")?,
            model: optional_string(handler, at, "model")?,
            raw: handler.clone(),
        })
    }
}

impl Prompt {
    /// The question as the model gets it ([`super::with_arguments`]).
    pub fn with_arguments(&self, event: &Map<String, Value>) -> String {
        super::with_arguments(&self.prompt, event)
    }
}

/// Why Claude Code 2.1.332 refuses a model-backed handler (`prompt`, or `agent` when `agent`) on
/// this event, in its words (it reports it as a hook failure and runs nothing), or `None`.
/// Observed: a prompt on SessionStart, an agent on PermissionRequest; from its event reference:
/// neither on PreSkillShellCommand. SessionEnd and Setup have no conversation either, as
/// SessionStart has none.
pub fn refused_on(event: &EventName, agent: bool) -> Option<String> {
    let kind = if agent { "agent" } else { "prompt" };
    match event {
        EventName::PreSkillShellCommand => {
            Some("prompt and agent hooks don't run on PreSkillShellCommand".into())
        }
        EventName::PermissionRequest if agent => Some(
            "agent-type hooks are not supported for PermissionRequest events (an agent hook answers ok or not ok, and cannot return the allow / deny decision a permission request needs). Use a command- or http-type hook instead."
                .into(),
        ),
        EventName::SessionStart | EventName::SessionEnd | EventName::Setup => Some(format!(
            "{kind}-type hooks are not supported for {event} events (no conversation context is available). Use a command-type hook instead."
        )),
        _ => None,
    }
}

impl HandlerKind for Prompt {
    fn type_name(&self) -> &'static str {
        "prompt"
    }

    fn label(&self) -> &str {
        &self.prompt
    }

    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        Err("a `prompt` handler is answered by a model: Claude Code runs it (registered as its own hook entry), amplihack's Amplifier module asks the session's provider".into())
    }

    fn host_entry(&self) -> Option<(&Map<String, Value>, super::Version)> {
        Some((&self.raw, (2, 0, 30)))
    }

    fn refused_on(&self, event: &EventName) -> Option<String> {
        refused_on(event, false)
    }

    /// A model answers it: the host's own (Claude Code runs its copy of the handler; amplihack's
    /// Amplifier module asks the session's provider).
    fn when_applies(&self, planning: &Planning<'_>) -> Plan {
        Plan::Ask(ModelQuestion {
            prompt: self.with_arguments(&planning.event.raw),
            model: self.model.clone(),
            timeout_secs: planning.timeout_secs,
            ..ModelQuestion::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_where_claude_code_refuses_them() {
        for (event, agent, refused) in [
            (EventName::SessionStart, false, true),
            (EventName::PreSkillShellCommand, false, true),
            (EventName::PreSkillShellCommand, true, true),
            (EventName::PermissionRequest, true, true),
            (EventName::PermissionRequest, false, false),
            (EventName::PreToolUse, false, false),
            (EventName::Stop, true, false),
        ] {
            assert_eq!(
                refused_on(&event, agent).is_some(),
                refused,
                "{event} agent: {agent}"
            );
        }
        assert_eq!(
            refused_on(&EventName::SessionStart, false).as_deref(),
            Some(
                "prompt-type hooks are not supported for SessionStart events (no conversation context is available). Use a command-type hook instead."
            )
        );
    }
}
