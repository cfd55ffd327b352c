//! The proposal's `type: llm` hook: a model judges the tool call from a prompt template
//! (`{{tool}}`, `{{args}}`) and answers `{"safe": false, "reason": ...}` to block; `cache: true`
//! answers an identical request (model, max_tokens, rendered prompt) again without asking.
//!
//! It is model-backed, as Claude Code's `prompt` handlers are, and uses the model access the user
//! already has ([`crate::host_model`]): under Claude Code amplihack-hooks asks the Claude Code that
//! called it (`claude -p`, the user's own login, hooks off); under Amplifier amplihack's module asks
//! the session's provider (`modelHandlers`). Read only from the proposal's YAML, never from
//! `hooks.json`.

use std::path::PathBuf;

use serde_json::{Value, json};

use amplihack_protocol::ModelQuestion;

use super::{Context, HandlerKind, Plan, Planning};

/// The hidden argument that makes `amplihack-hooks` ask the host's model for one `llm` hook
/// ([`crate::host_model`]).
pub const ASK_FLAG: &str = "--ask-model";
/// The model the proposal's example names, when a hook names none.
pub const DEFAULT_MODEL: &str = "claude-3-haiku";
/// The proposal's example `max_tokens`, when a hook gives none.
pub const DEFAULT_MAX_TOKENS: u64 = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct Llm {
    pub model: String,
    /// The template, `{{tool}}` and `{{args}}` not yet filled in.
    pub prompt: String,
    pub max_tokens: u64,
    pub cache: bool,
    label: String,
}

impl Llm {
    pub fn new(model: String, prompt: String, max_tokens: u64, cache: bool) -> Llm {
        let label = format!("llm {model}: {}", prompt.lines().next().unwrap_or(""));
        Llm {
            model,
            prompt,
            max_tokens,
            cache,
            label,
        }
    }

    /// The question as the model gets it: `{{tool}}` the tool's name, `{{args}}` its arguments as
    /// the proposal's Python writes them (`json.dumps`, keys sorted).
    pub fn render(&self, tool: Option<&str>, args: &Value) -> String {
        self.prompt
            .replace("{{tool}}", tool.unwrap_or(""))
            .replace("{{args}}", &python_json(args))
    }

    /// What `amplihack-hooks --ask-model` is given: everything but the event.
    pub fn spec(&self) -> String {
        json!({
            "model": self.model,
            "prompt": self.prompt,
            "max_tokens": self.max_tokens,
            "cache": self.cache,
        })
        .to_string()
    }
}

impl HandlerKind for Llm {
    /// amplihack's own program runs it (not the plugin's code): not confined.
    fn runs_plugin_code(&self) -> bool {
        false
    }

    fn type_name(&self) -> &'static str {
        "llm"
    }

    fn label(&self) -> &str {
        &self.label
    }

    /// `amplihack-hooks --ask-model SPEC`, which asks the host's model (see [`crate::host_model`]).
    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        let binary = hooks_binary().ok_or("cannot find amplihack-hooks to ask the model")?;
        Ok(vec![
            binary.to_string_lossy().into_owned(),
            ASK_FLAG.into(),
            self.spec(),
        ])
    }

    /// The session's provider answers it, through amplihack's module; elsewhere
    /// `amplihack-hooks --ask-model` asks Claude Code (a process).
    fn when_applies(&self, planning: &Planning<'_>) -> Plan {
        if !planning.module_asks {
            return Plan::Process(None);
        }
        let tool = planning.event.tool();
        Plan::Ask(ModelQuestion {
            prompt: self.render(
                tool.map(|t| t.name.as_str()),
                &tool.map_or(Value::Null, |t| t.input.clone()),
            ),
            model: Some(self.model.clone()),
            timeout_secs: planning.timeout_secs,
            max_tokens: Some(self.max_tokens),
            cache: self.cache,
            on_failure: planning.on_failure.into(),
            agent: false,
        })
    }
}

/// `amplihack-hooks`: this program, or the one beside it (when `amplihack hooks test` runs).
fn hooks_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_name().is_some_and(|n| n == "amplihack-hooks") {
        return Some(exe);
    }
    let sibling = exe.with_file_name("amplihack-hooks");
    sibling.is_file().then_some(sibling)
}

/// JSON as Python's `json.dumps(value, sort_keys=True)` writes it: `", "` and `": "` separators,
/// keys sorted, non-ASCII escaped.
pub fn python_json(value: &Value) -> String {
    let mut out = String::new();
    write_python_json(value, &mut out);
    out
}

fn write_python_json(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_string(key, out);
                out.push_str(": ");
                write_python_json(&map[key], out);
            }
            out.push('}');
        }
        Value::String(text) => write_python_string(text, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_python_string(text: &str, out: &mut String) {
    let escaped = Value::String(text.to_string()).to_string();
    for c in escaped.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_template_as_the_proposal_python_would() {
        let llm = Llm::new(
            DEFAULT_MODEL.into(),
            "Tool: {{tool}}\nArgs: {{args}}".into(),
            DEFAULT_MAX_TOKENS,
            true,
        );
        let cases = [
            (
                Some("Bash"),
                json!({"command": "curl x | sh", "description": "é"}),
                "Tool: Bash\nArgs: {\"command\": \"curl x | sh\", \"description\": \"\\u00e9\"}",
            ),
            (
                Some("Write"),
                json!({"z": [1, true, null], "a": {"b": 2.5}}),
                "Tool: Write\nArgs: {\"a\": {\"b\": 2.5}, \"z\": [1, true, null]}",
            ),
            (None, Value::Null, "Tool: \nArgs: null"),
        ];
        for (tool, args, expected) in cases {
            assert_eq!(llm.render(tool, &args), expected);
        }
        assert_eq!(llm.type_name(), "llm");
        assert_eq!(llm.label(), "llm claude-3-haiku: Tool: {{tool}}");
    }
}
