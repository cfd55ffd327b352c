//! Qwen Code: Claude Code's events, fields and replies, its own tool names
//! ([`crate::tool::HOST_TOOLS`]), `timeout` in milliseconds, and a UserPromptSubmit that fires
//! again with `prompt: ""` on every tool-result continuation. Claude Code has no such event, so
//! a continuation is renamed to one amplihack does not know: it passes through untouched, and
//! neither the reminders nor the user's plugins run on it.

use serde_json::{Map, Value};

use super::Dialect;
use crate::host::Host;

pub const DIALECT: Dialect = Dialect {
    timeout_per_second: 1000,
    adjust: Some(continuation),
    ..Dialect::claude_like(Host::Qwen, super::claude_code::render)
};

/// The name a tool-result continuation gets: no host sends it, amplihack does not know it.
pub const CONTINUATION: &str = "QwenPromptContinuation";

fn continuation(map: &mut Map<String, Value>) -> bool {
    let is_prompt = map.get("hook_event_name").and_then(Value::as_str) == Some("UserPromptSubmit");
    let empty = map
        .get("prompt")
        .and_then(Value::as_str)
        .is_some_and(|p| p.trim().is_empty());
    if is_prompt && empty {
        map.insert("hook_event_name".into(), Value::from(CONTINUATION));
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::host::Host;

    #[test]
    fn an_empty_prompt_is_a_continuation() {
        let (event, _) = super::super::parse(
            Host::Qwen,
            br#"{"hook_event_name":"UserPromptSubmit","prompt":""}"#,
            None,
        )
        .expect("parses");
        assert!(!event.name.is_known());
        let (event, _) = super::super::parse(
            Host::Qwen,
            br#"{"hook_event_name":"UserPromptSubmit","prompt":"fix the bug"}"#,
            None,
        )
        .expect("parses");
        assert_eq!(event.name.as_str(), "UserPromptSubmit");
    }
}
