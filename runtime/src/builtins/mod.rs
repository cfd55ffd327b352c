//! amplihack's own behaviour, one file per built-in. Each takes the parsed event and the
//! environment and returns a [`Reply`]; none of them touches stdout.

pub mod bash_guard;
pub mod project_context;
pub mod shell;

use amplihack_protocol::{EventName, HookEvent, Reply};

use crate::context::Context;

/// The built-in behaviour a subcommand runs before (later) forwarding to user hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// Deny Bash commands that skip verification or delete protected directories.
    BashGuard,
    /// Inject `.claude/context/PROJECT.md` at session start.
    ProjectContext,
    /// Nothing yet: the event is accepted and answered with an empty reply.
    None,
}

impl Builtin {
    /// The built-in for an event named in the payload (`dispatch`).
    pub fn for_event(event: &EventName) -> Builtin {
        match event {
            EventName::PreToolUse => Builtin::BashGuard,
            EventName::SessionStart => Builtin::ProjectContext,
            _ => Builtin::None,
        }
    }

    /// Runs the built-in. An `Err` is an internal failure (reported, then failed open).
    pub fn run(self, event: &HookEvent, ctx: &Context) -> Result<Reply, String> {
        match self {
            Builtin::BashGuard => Ok(bash_guard_reply(event, ctx)),
            Builtin::ProjectContext if event.name == EventName::SessionStart => {
                project_context::reply(event, ctx)
            }
            _ => Ok(Reply::default()),
        }
    }
}

fn bash_guard_reply(event: &HookEvent, ctx: &Context) -> Reply {
    if event.name != EventName::PreToolUse {
        return Reply::default();
    }
    let Some(command) = event.tool().and_then(|call| call.bash_command()) else {
        return Reply::default();
    };
    let cwd = ctx.working_dir(event);
    let guard = bash_guard::GuardContext {
        project_root: ctx.project_dir(event).unwrap_or_else(|| cwd.clone()),
        home: ctx.var("HOME"),
        cwd,
        var: &|name| ctx.var(name),
    };
    match bash_guard::check(command, &guard) {
        Some(reason) => Reply::deny(reason),
        None => Reply::default(),
    }
}
