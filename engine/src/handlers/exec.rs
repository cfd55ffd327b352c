//! Exec form: `{"type": "command", "command": "<executable>", "args": ["...", ...]}` (Claude Code
//! 2.1.139 and later). No shell: the executable is spawned with the arguments as they are, each
//! element one argv entry with `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and
//! `${CLAUDE_PROJECT_DIR}` substituted verbatim; anything else (`$HOME`) stays literal. As under
//! Claude Code, a `command` with spaces names one executable (and fails to start); `shell` is
//! ignored.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, required_string, substitute_verbatim};

#[derive(Debug, Clone, PartialEq)]
pub struct Exec {
    pub program: String,
    pub args: Vec<String>,
    /// `command` and `args` as one line, for logs.
    label: String,
}

impl Exec {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Exec, FieldError> {
        let program = required_string(handler, at, "command", "the executable to run")?;
        let Some(Value::Array(items)) = handler.get("args") else {
            return Err((
                format!("{at}.args"),
                "is not an array".into(),
                "list the arguments as strings: \"args\": [\"script.js\"]".into(),
            ));
        };
        let mut args = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Value::String(arg) = item else {
                return Err((
                    format!("{at}.args[{i}]"),
                    format!(
                        "is {}, not a string",
                        amplihack_protocol::event::json_kind(item)
                    ),
                    "make every argument a string".into(),
                ));
            };
            args.push(arg.clone());
        }
        let label = std::iter::once(&program)
            .chain(&args)
            .map(|a| amplihack_protocol::command::shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Exec {
            program,
            args,
            label,
        })
    }
}

impl HandlerKind for Exec {
    fn type_name(&self) -> &'static str {
        "command"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn program(&self, context: &Context<'_>) -> Result<Vec<String>, String> {
        Ok(std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| substitute_verbatim(a, context))
            .collect())
    }
}
