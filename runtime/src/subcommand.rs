//! The subcommands of `amplihack-hooks`: which event each one implies, which built-in it runs, and
//! its own deadline, kept below the timeout the installer registers for it (or the host's default)
//! so that amplihack answers, or fails open, before the host gives up on it.

use std::time::Duration;

use amplihack_protocol::EventName;

use crate::builtins::Builtin;

pub struct Subcommand {
    pub name: &'static str,
    /// The event assumed when the payload names none (Amplifier's bridge never does).
    /// `None` for `dispatch`, which requires the payload to name it.
    pub event: Option<EventName>,
    pub builtin: Builtin,
    pub deadline: Duration,
    /// Whether it forwards the event to the user's plugins. The canonical table registers two
    /// subcommands on UserPromptSubmit; only `user-prompt-submit` forwards, so each plugin runs
    /// once per prompt.
    pub forwards: bool,
    pub about: &'static str,
}

const fn seconds(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Claude Code's default hook timeout was 60 s before 2.1.3; events registered without a timeout
/// must answer inside the older bound too.
const UNREGISTERED_DEADLINE: Duration = Duration::from_secs(50);

pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "session-start",
        event: Some(EventName::SessionStart),
        builtin: Builtin::ProjectContext,
        deadline: seconds(8),
        forwards: true,
        about: "SessionStart: inject .claude/context/PROJECT.md (registered timeout 10 s)",
    },
    Subcommand {
        name: "stop",
        event: Some(EventName::Stop),
        builtin: Builtin::None,
        deadline: seconds(110),
        forwards: true,
        about: "Stop (registered timeout 120 s)",
    },
    Subcommand {
        name: "pre-tool-use",
        event: Some(EventName::PreToolUse),
        builtin: Builtin::BashGuard,
        deadline: UNREGISTERED_DEADLINE,
        forwards: true,
        about: "PreToolUse: deny --no-verify and recursive deletion of protected directories",
    },
    Subcommand {
        name: "post-tool-use",
        event: Some(EventName::PostToolUse),
        builtin: Builtin::None,
        deadline: UNREGISTERED_DEADLINE,
        forwards: true,
        about: "PostToolUse",
    },
    Subcommand {
        name: "workflow-classification-reminder",
        event: Some(EventName::UserPromptSubmit),
        builtin: Builtin::None,
        deadline: seconds(4),
        forwards: false,
        about: "UserPromptSubmit, built-in only; user hooks are forwarded once, by user-prompt-submit (registered timeout 5 s)",
    },
    Subcommand {
        name: "user-prompt-submit",
        event: Some(EventName::UserPromptSubmit),
        builtin: Builtin::None,
        deadline: seconds(8),
        forwards: true,
        about: "UserPromptSubmit (registered timeout 10 s)",
    },
    Subcommand {
        name: "pre-compact",
        event: Some(EventName::PreCompact),
        builtin: Builtin::None,
        deadline: seconds(25),
        forwards: true,
        about: "PreCompact (registered timeout 30 s)",
    },
    Subcommand {
        name: "session-end",
        event: Some(EventName::SessionEnd),
        builtin: Builtin::None,
        // Claude Code gives all SessionEnd hooks 1.5 s together unless configured otherwise.
        deadline: Duration::from_millis(1_200),
        forwards: true,
        about: "SessionEnd",
    },
    Subcommand {
        name: "subagent-stop",
        event: Some(EventName::SubagentStop),
        builtin: Builtin::None,
        deadline: UNREGISTERED_DEADLINE,
        forwards: true,
        about: "SubagentStop",
    },
    Subcommand {
        name: "notification",
        event: Some(EventName::Notification),
        builtin: Builtin::None,
        deadline: UNREGISTERED_DEADLINE,
        forwards: true,
        about: "Notification",
    },
    Subcommand {
        name: "dispatch",
        event: None,
        builtin: Builtin::None,
        deadline: UNREGISTERED_DEADLINE,
        forwards: true,
        about: "any event: taken from the payload's hook_event_name",
    },
];

pub fn find(name: &str) -> Option<&'static Subcommand> {
    SUBCOMMANDS.iter().find(|s| s.name == name)
}

impl Subcommand {
    /// The built-in to run for the event that actually arrived.
    pub fn builtin_for(&self, event: &EventName) -> Builtin {
        if self.event.is_none() {
            Builtin::for_event(event)
        } else {
            self.builtin
        }
    }
}
