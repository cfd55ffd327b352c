//! The stop-loop guard for the user's plugins. A plugin that blocks Stop every time keeps the
//! agent working forever (the most common complaint about amplihack's predecessors). amplihack
//! counts consecutive Stop/SubagentStop blocks *by plugins* per session (a block with
//! `stop_hook_active` continues the streak; one without starts a new one) in the session record
//! and, past the cap, lets the stop through and tells the user. amplihack's own lock mode is not
//! counted here: it has its own, larger, safety valve.

use amplihack_protocol::{Decision, EventName, HookEvent, Payload, Reply};
use amplihack_state::{StateDir, session};

/// Consecutive blocks allowed before the guard lets the stop through; the same as Claude Code's
/// own cap. `AMPLIHACK_STOP_BLOCK_CAP` changes it; `0` turns the guard off.
pub const DEFAULT_CAP: u32 = 8;

/// Applies the guard to the plugins' merged reply.
pub fn apply(reply: &mut Reply, event: &HookEvent, state: &StateDir, cap: u32) {
    if !matches!(event.name, EventName::Stop | EventName::SubagentStop) || cap == 0 {
        return;
    }
    let blocked = reply.decision == Some(Decision::Deny);
    let active = matches!(
        event.payload,
        Payload::Stop {
            stop_hook_active: true,
            ..
        }
    );
    let streak = session::update(state, event.session_id.as_deref(), |s| {
        s.plugin_stop_blocks = match (blocked, active) {
            (false, _) => 0,
            (true, true) => s.plugin_stop_blocks + 1,
            (true, false) => 1,
        };
        let streak = s.plugin_stop_blocks;
        if streak > cap {
            s.plugin_stop_blocks = 0;
        }
        streak
    });
    let Ok(streak) = streak else { return };
    if streak > cap {
        let why = reply.reason.take().unwrap_or_default();
        reply.decision = None;
        let note = format!(
            "amplihack let the agent stop: hooks blocked Stop {} times in a row (the cap is {cap}; AMPLIHACK_STOP_BLOCK_CAP changes it). Last reason: {why}",
            streak - 1
        );
        reply.system_message = Some(match reply.system_message.take() {
            Some(message) => format!("{message}\n{note}"),
            None => note,
        });
    }
}
