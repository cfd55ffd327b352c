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

/// The cap in force: `AMPLIHACK_STOP_BLOCK_CAP`, else the host's own
/// (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, which hooks inherit from Claude Code; `0` means the host
/// has none), else [`DEFAULT_CAP`]. Following the host's setting means amplihack never stops a
/// session earlier than the host itself would.
pub fn cap(var: &dyn Fn(&str) -> Option<String>) -> u32 {
    let parse = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
    parse("AMPLIHACK_STOP_BLOCK_CAP")
        .or_else(|| parse("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"))
        .unwrap_or(DEFAULT_CAP)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_cap_is_followed_unless_amplihacks_is_set() {
        let cases: &[(&[(&str, &str)], u32)] = &[
            (&[], DEFAULT_CAP),
            (&[("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "20")], 20),
            (&[("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "0")], 0),
            (
                &[
                    ("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "20"),
                    ("AMPLIHACK_STOP_BLOCK_CAP", "3"),
                ],
                3,
            ),
            (&[("AMPLIHACK_STOP_BLOCK_CAP", "junk")], DEFAULT_CAP),
        ];
        for (env, want) in cases {
            let got = cap(&|k| {
                env.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            });
            assert_eq!(got, *want, "{env:?}");
        }
    }
}
