//! `{"type": "agent", "prompt": "..."}`: a subagent with read-only tools (up to 50 turns, 60 s by
//! default) decides, answering `{ok, reason}`. Under Claude Code it is registered as Claude Code's
//! own hook entry, as written ([`HandlerKind::host_entry`]); under Amplifier the binary hands it,
//! `$ARGUMENTS` filled in, to amplihack's module (`modelHandlers`, `agent: true`), which runs the
//! subagent with the session's own provider and read-only tools of its own (Read, Grep, Glob).

use serde_json::{Map, Value};

use amplihack_protocol::{EventName, ModelQuestion};

use super::{Context, FieldError, HandlerKind, Plan, Planning, optional_string, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    pub prompt: String,
    pub model: Option<String>,
    /// The handler as written, for Claude Code to run.
    pub raw: Map<String, Value>,
}

impl Agent {
    /// The task as the subagent gets it ([`super::with_arguments`]).
    pub fn with_arguments(&self, event: &Map<String, Value>) -> String {
        super::with_arguments(&self.prompt, event)
    }

    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Agent, FieldError> {
        Ok(Agent {
            prompt: required_string(handler, at, "prompt", "the task for the agent")?,
            model: optional_string(handler, at, "model")?,
            raw: handler.clone(),
        })
    }
}

impl HandlerKind for Agent {
    fn type_name(&self) -> &'static str {
        "agent"
    }

    fn label(&self) -> &str {
        &self.prompt
    }

    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        Err(
            "an `agent` handler is answered by a model-driven subagent: Claude Code runs it (registered as its own hook entry), amplihack's Amplifier module with the session's provider"
                .into(),
        )
    }

    /// Claude Code's default for agent hooks.
    fn default_timeout_secs(&self) -> f64 {
        60.0
    }

    /// Documented from 2026-01-31 without a version: counted from 2.1.101, where an entry Claude
    /// Code does not know can no longer reject the whole settings file.
    fn host_entry(&self) -> Option<(&Map<String, Value>, super::Version)> {
        Some((&self.raw, (2, 1, 101)))
    }

    fn refused_on(&self, event: &EventName) -> Option<String> {
        super::prompt::refused_on(event, true)
    }

    /// A subagent amplihack's module runs with the session's provider (Claude Code runs its own
    /// copy of the handler: no process here).
    fn when_applies(&self, planning: &Planning<'_>) -> Plan {
        if !planning.module_asks {
            return Plan::Process(None);
        }
        Plan::Ask(ModelQuestion {
            prompt: self.with_arguments(&planning.event.raw),
            model: self.model.clone(),
            timeout_secs: planning.timeout_secs,
            agent: true,
            ..ModelQuestion::default()
        })
    }
}
