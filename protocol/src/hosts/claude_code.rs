//! Claude Code: the model every other host is read into. Nothing to rename; replies are
//! rendered by [`crate::claude`].

use super::Dialect;
use crate::claude;
use crate::event::HookEvent;
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub const DIALECT: Dialect = Dialect {
    host: Host::ClaudeCode,
    events: &[],
    fields: &[],
    delivers: None,
    timeout_per_second: 1,
    render,
    adjust: None,
};

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    claude::render_labelled(&event.name, &claude::Labels::of(event), reply)
}
