//! Claude Code: the model every other host is read into. Nothing to rename; replies are
//! rendered by [`crate::claude`].

use super::Dialect;
use crate::claude;
use crate::event::HookEvent;
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub const DIALECT: Dialect = Dialect::claude_like(Host::ClaudeCode, render);

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    claude::render_labelled(&event.name, &claude::Labels::of(event), reply)
}
