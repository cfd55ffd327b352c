//! Amplifier (the native module and the `hook-shell` bridge): Claude Code's names but for its
//! tools ([`crate::tool::HOST_TOOLS`]) and the specification's `SessionStop`; replies are
//! rendered by [`crate::amplifier`].

use super::Dialect;
use crate::event::HookEvent;
use crate::host::Host;
use crate::reply::{Rendered, Reply};

pub const DIALECT: Dialect = Dialect::claude_like(Host::Amplifier, render);

pub fn render(event: &HookEvent, reply: &Reply) -> Rendered {
    crate::amplifier::render(&event.name, reply)
}
