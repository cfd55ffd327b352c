//! `{"type": "prompt", "prompt": "... $ARGUMENTS ...", "model": "..."}`: Claude Code asks a model
//! whether the event may go on (`{ok, reason}`). amplihack holds no model access of its own, so it
//! does not run these: `amplihack hooks validate` and `hooks list` say so.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, optional_string, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub prompt: String,
    pub model: Option<String>,
}

impl Prompt {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Prompt, FieldError> {
        Ok(Prompt {
            prompt: required_string(handler, at, "prompt", "the question for the model")?,
            model: optional_string(handler, at, "model")?,
        })
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
        Err("a `prompt` handler is answered by a model, which amplihack-hooks does not call".into())
    }
}
