//! opencode, which has no command hooks: amplihack's bridge plugin (installed into opencode's
//! plugin directory) sends Claude Code's events, with opencode's tool names, and reads Claude
//! Code's JSON reply. Always JSON: the bridge parses what it gets.

use super::{Dialect, as_json, json_reply};
use crate::event::{EventName, HookEvent};
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    host: Host::Opencode,
    events: &[],
    fields: &[],
    delivers: Some(&[
        EventName::SessionStart,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::Stop,
        EventName::PreCompact,
    ]),
    timeout_per_second: 1,
    render,
    adjust: None,
};

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    let rendered = super::claude_code::render(event, reply);
    json_reply(as_json(event, &rendered), rendered)
}
