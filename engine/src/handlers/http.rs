//! `{"type": "http", "url": "...", "headers": {...}, "allowedEnvVars": [...]}`: Claude Code POSTs
//! the event to the URL and reads the answer as a command's (2.1.63). `amplihack-hooks` links no
//! HTTP client: under Claude Code the handler is registered as Claude Code's own hook entry, as
//! written ([`HandlerKind::host_entry`]); under Amplifier it does not run, and `hooks validate`
//! and `hooks list` say so.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Http {
    pub url: String,
    /// The handler as written, for Claude Code to run.
    pub raw: Map<String, Value>,
}

impl Http {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Http, FieldError> {
        Ok(Http {
            url: required_string(handler, at, "url", "the URL to POST the event to")?,
            raw: handler.clone(),
        })
    }
}

impl HandlerKind for Http {
    fn type_name(&self) -> &'static str {
        "http"
    }

    fn label(&self) -> &str {
        &self.url
    }

    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        Err("an `http` handler is a POST: Claude Code runs it (registered as its own hook entry), Amplifier does not".into())
    }

    fn host_entry(&self) -> Option<(&Map<String, Value>, super::Version)> {
        Some((&self.raw, (2, 1, 63)))
    }
}
