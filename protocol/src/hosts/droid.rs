//! Factory's Droid: Claude Code's events, fields and replies; its own tool names (`Execute`,
//! `Create`: [`crate::tool::HOST_TOOLS`]). `droid exec` delivers no UserPromptSubmit.

use super::Dialect;
use crate::event::EventName;
use crate::host::Host;

pub const DIALECT: Dialect = Dialect {
    delivers: Some(&[
        EventName::SessionStart,
        EventName::SessionEnd,
        EventName::UserPromptSubmit,
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::Notification,
        EventName::Stop,
        EventName::SubagentStop,
        EventName::PreCompact,
    ]),
    ..Dialect::claude_like(Host::Droid, super::claude_code::render)
};
