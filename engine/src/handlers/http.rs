//! `{"type": "http", "url": "...", "headers": {...}, "allowedEnvVars": [...]}`: Claude Code POSTs
//! the event to the URL and reads the answer as a command's. `amplihack-hooks` links no HTTP
//! client; these are not run yet, and `amplihack hooks validate` and `hooks list` say so.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Http {
    pub url: String,
}

impl Http {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Http, FieldError> {
        Ok(Http {
            url: required_string(handler, at, "url", "the URL to POST the event to")?,
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
        Err("an `http` handler is not run by amplihack yet".into())
    }
}
