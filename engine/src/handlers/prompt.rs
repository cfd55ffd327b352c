//! `{"type": "prompt", "prompt": "... $ARGUMENTS ...", "model": "..."}`: Claude Code asks a model
//! whether the event may go on (`{ok, reason}`). amplihack holds no model access of its own: under
//! Claude Code the handler is registered as Claude Code's own hook entry, as written, so Claude Code
//! evaluates it with the user's model access ([`HandlerKind::host_entry`]); under Amplifier the
//! binary hands it, `$ARGUMENTS` filled in, to amplihack's module (`modelHandlers`), which asks the
//! session's own provider.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, optional_string, required_string};

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
}
