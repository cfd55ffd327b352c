//! The stop-loop guard. A hook that blocks Stop every time keeps the agent working forever (the
//! most common complaint about amplihack's predecessors). Claude Code caps this itself only since
//! 2.1.143, so amplihack counts consecutive Stop/SubagentStop blocks per session (a block with
//! `stop_hook_active` continues the streak; one without starts a new one) and, past the cap, lets
//! the stop through and tells the user.

use std::path::Path;

use amplihack_protocol::{Decision, EventName, HookEvent, Payload, Reply};

/// Consecutive blocks allowed before the guard lets the stop through; the same as Claude Code's
/// own cap. `AMPLIHACK_STOP_BLOCK_CAP` changes it; `0` turns the guard off.
pub const DEFAULT_CAP: u32 = 8;

pub fn apply(
    reply: &mut Reply,
    event: &HookEvent,
    state: Option<&Path>,
    session_file: &str,
    cap: u32,
) {
    if !matches!(event.name, EventName::Stop | EventName::SubagentStop) || cap == 0 {
        return;
    }
    let Some(state) = state else { return };
    let counter = state
        .join("sessions")
        .join(format!("{session_file}.stop-blocks"));
    if reply.decision != Some(Decision::Deny) {
        let _ = std::fs::remove_file(&counter);
        return;
    }
    let active = matches!(
        event.payload,
        Payload::Stop {
            stop_hook_active: true,
            ..
        }
    );
    let previous: u32 = if active {
        std::fs::read_to_string(&counter)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    } else {
        0
    };
    let streak = previous + 1;
    if streak > cap {
        let _ = std::fs::remove_file(&counter);
        let why = reply.reason.take().unwrap_or_default();
        reply.decision = None;
        let note = format!(
            "amplihack let the agent stop: hooks blocked Stop {previous} times in a row (the cap is {cap}; AMPLIHACK_STOP_BLOCK_CAP changes it). Last reason: {why}"
        );
        reply.system_message = Some(match reply.system_message.take() {
            Some(message) => format!("{message}\n{note}"),
            None => note,
        });
        return;
    }
    let _ = std::fs::create_dir_all(counter.parent().unwrap_or(state));
    let _ = std::fs::write(&counter, streak.to_string());
}
