//! `{"type": "agent", "prompt": "..."}`: Claude Code runs a subagent with read-only tools (up to 50
//! turns) to decide. amplihack holds no model access of its own, so it does not run these:
//! `amplihack hooks validate` and `hooks list` say so.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, optional_string, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    pub prompt: String,
    pub model: Option<String>,
}

impl Agent {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Agent, FieldError> {
        Ok(Agent {
            prompt: required_string(handler, at, "prompt", "the task for the agent")?,
            model: optional_string(handler, at, "model")?,
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
            "an `agent` handler is answered by a model-driven subagent, which amplihack-hooks does not run"
                .into(),
        )
    }
}
