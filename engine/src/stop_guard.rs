//! The stop-loop guard for the user's plugins. A plugin that blocks Stop every time keeps the
//! agent working forever (the most common complaint about amplihack's predecessors). amplihack
//! counts consecutive Stop/SubagentStop blocks *by plugins* per session (a block with
//! `stop_hook_active` continues the streak; one without starts a new one) in the session record
//! and, past the cap, lets the stop through and tells the user. amplihack's own lock mode is not
//! counted here: it has its own, larger, safety valve.
//!
//! Where the host caps consecutive Stop blocks itself (Claude Code 2.1.143 and later), amplihack
//! adds no cap of its own: the user sees exactly the host's behaviour (with a plugin that blocks
//! every stop, Claude Code 2.1.328 ends the turn after its 11th; a cap of amplihack's ended it one
//! turn earlier, with a message of its own).

use amplihack_protocol::claude_version::{self, Version};
use amplihack_protocol::{Decision, EventName, HookEvent, Host, Payload, Reply};
use amplihack_state::{StateDir, session};

/// Consecutive blocks allowed before the guard lets the stop through; the same as Claude Code's
/// own cap. `AMPLIHACK_STOP_BLOCK_CAP` changes it; `0` turns the guard off.
pub const DEFAULT_CAP: u32 = 8;

/// The first Claude Code that caps consecutive Stop blocks itself.
const HOST_CAPS_SINCE: Version = (2, 1, 143);

/// The cap in force (`0`: no guard): `AMPLIHACK_STOP_BLOCK_CAP` when set; none under a Claude Code
/// that caps Stop blocks itself; else the host's setting (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, which
/// hooks inherit from Claude Code; `0` means the host has none), else [`DEFAULT_CAP`]. amplihack
/// never stops a session earlier than the host itself would.
pub fn cap(host: Host, var: &dyn Fn(&str) -> Option<String>) -> u32 {
    let parse = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
    if let Some(own) = parse(amplihack_env::AMPLIHACK_STOP_BLOCK_CAP) {
        return own;
    }
    if host == Host::ClaudeCode && host_caps_stops(var) {
        return 0;
    }
    parse(amplihack_env::CLAUDE_CODE_STOP_HOOK_BLOCK_CAP).unwrap_or(DEFAULT_CAP)
}

/// Whether the calling Claude Code caps Stop blocks itself: its version, from `AI_AGENT`
/// (`claude-code_2-1-328_harness`, which it sets for hooks), is 2.1.143 or later; or, without
/// that, it sets `CLAUDE_PID` (2.1.214 and later). Environment only: no file is read.
pub fn host_caps_stops(var: &dyn Fn(&str) -> Option<String>) -> bool {
    if let Some(version) = claude_version::from_env(var) {
        return version >= HOST_CAPS_SINCE;
    }
    var(amplihack_env::CLAUDE_PID).is_some()
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

    /// host, its environment, the cap in force
    type Case<'a> = (Host, &'a [(&'a str, &'a str)], u32);

    #[test]
    fn the_hosts_cap_is_followed_unless_amplihacks_is_set() {
        const NEW: (&str, &str) = (amplihack_env::AI_AGENT, "claude-code_2-1-328_harness");
        let cases: &[Case<'_>] = &[
            (Host::ClaudeCode, &[], DEFAULT_CAP),
            (
                Host::ClaudeCode,
                &[(amplihack_env::CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, "20")],
                20,
            ),
            (
                Host::ClaudeCode,
                &[(amplihack_env::CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, "0")],
                0,
            ),
            (
                Host::ClaudeCode,
                &[
                    (amplihack_env::CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, "20"),
                    (amplihack_env::AMPLIHACK_STOP_BLOCK_CAP, "3"),
                ],
                3,
            ),
            (
                Host::ClaudeCode,
                &[(amplihack_env::AMPLIHACK_STOP_BLOCK_CAP, "junk")],
                DEFAULT_CAP,
            ),
            // A Claude Code that caps Stop blocks itself: no second cap.
            (Host::ClaudeCode, &[NEW], 0),
            (
                Host::ClaudeCode,
                &[NEW, (amplihack_env::CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, "20")],
                0,
            ),
            (
                Host::ClaudeCode,
                &[(amplihack_env::AI_AGENT, "claude-code_2-1-143_x")],
                0,
            ),
            (
                Host::ClaudeCode,
                &[(amplihack_env::AI_AGENT, "claude-code_2-1-142_x")],
                DEFAULT_CAP,
            ),
            (
                Host::ClaudeCode,
                &[(amplihack_env::AI_AGENT, "claude-code_2-0-30")],
                DEFAULT_CAP,
            ),
            (Host::ClaudeCode, &[(amplihack_env::CLAUDE_PID, "42")], 0),
            (
                Host::ClaudeCode,
                &[NEW, (amplihack_env::AMPLIHACK_STOP_BLOCK_CAP, "5")],
                5,
            ),
            // Amplifier has no cap of its own.
            (Host::Amplifier, &[NEW], DEFAULT_CAP),
        ];
        for (host, env, want) in cases {
            let got = cap(*host, &|k| {
                env.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            });
            assert_eq!(got, *want, "{host:?} {env:?}");
        }
    }
}
