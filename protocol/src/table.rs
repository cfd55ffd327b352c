//! The hook table: every subcommand of `amplihack-hooks`, the event it serves, how `amplihack
//! install` registers it, its own deadline and the built-ins it runs. The runtime dispatches from
//! it and the installer registers from it. Adding a built-in is one [`Builtin`] variant, one file
//! in `runtime/src/builtins/` and its name in a row here.

use std::time::Duration;

use crate::event::EventName;
use crate::host::Host;

/// The program name of the hook binary, wherever it is installed.
pub const HOOKS_BINARY: &str = "amplihack-hooks";

/// amplihack's built-in behaviours. Each is one file in `runtime/src/builtins/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `.claude/context/PROJECT.md`, the user's preferences and recent discoveries at session
    /// start (and again after a compaction, with the exported transcript's path).
    SessionContext,
    /// Says once per session when the running binary is not the version `install` deployed.
    VersionCheck,
    /// Repairs stale registrations (legacy Python hooks, a moved binary, a registration that
    /// would run twice) with the installer's loss-free edit.
    StaleRegistrations,
    /// Denies Bash commands that skip verification or delete protected directories.
    BashGuard,
    /// One metrics line per tool call.
    Metrics,
    /// The reminder to classify new work, on new topics only.
    WorkflowReminder,
    /// The user's preferences, compact, on every prompt.
    Preferences,
    /// The memory of the agents a prompt names.
    AgentMemory,
    /// Keeps the agent working while the user has locked the project (`amplihack lock`).
    LockMode,
    /// Opt-in: once per session, a headless `claude -p` reflects on the transcript (Claude Code
    /// only: see [`Builtin::runs_under`]).
    Reflection,
    /// Writes the session's record to memory at each stop.
    SessionRecord,
    /// Copies the transcript before a compaction.
    TranscriptExport,
    /// Finishes the session record and prunes per-session state older than 7 days.
    SessionEnd,
}

impl Builtin {
    /// Whether it runs for `host`. Reflection runs under Claude Code only: it reflects with a
    /// headless `claude -p` on Claude Code's transcript, spending the user's Claude access to
    /// block a stop (and the Amplifier app processes no hook result at the end of a turn, so
    /// there its findings would reach no one).
    pub fn runs_under(self, host: Host) -> bool {
        self != Builtin::Reflection || host == Host::ClaudeCode
    }

    pub fn name(self) -> &'static str {
        match self {
            Builtin::SessionContext => "session-context",
            Builtin::VersionCheck => "version-check",
            Builtin::StaleRegistrations => "stale-registrations",
            Builtin::BashGuard => "bash-guard",
            Builtin::Metrics => "metrics",
            Builtin::WorkflowReminder => "workflow-reminder",
            Builtin::Preferences => "preferences",
            Builtin::AgentMemory => "agent-memory",
            Builtin::LockMode => "lock-mode",
            Builtin::Reflection => "reflection",
            Builtin::SessionRecord => "session-record",
            Builtin::TranscriptExport => "transcript-export",
            Builtin::SessionEnd => "session-end",
        }
    }
}

/// How the installer writes a row into a host's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub matcher: Option<&'static str>,
    /// Seconds; `None` leaves the host's default (10 minutes in Claude Code since 2.1.3, 60 s
    /// before).
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub subcommand: &'static str,
    /// The event assumed when the payload names none (Amplifier's bridge never does). `None` for
    /// `dispatch`, which runs whatever the payload names.
    pub event: Option<EventName>,
    /// `Some` for the rows `amplihack install` registers, in this order.
    pub registered: Option<Registration>,
    /// amplihack answers (or fails open) before this, below the registered timeout.
    pub deadline: Duration,
    /// Run in this order, before the user's plugins.
    pub builtins: &'static [Builtin],
    /// Whether it forwards the event to the user's plugins. Two rows serve UserPromptSubmit;
    /// only `user-prompt-submit` forwards, so each plugin runs once per prompt.
    pub forwards: bool,
    pub about: &'static str,
}

const fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Events registered without a timeout must answer inside Claude Code's older 60 s default too.
const UNREGISTERED_DEADLINE: Duration = secs(50);

const fn registered(
    matcher: Option<&'static str>,
    timeout_secs: Option<u64>,
) -> Option<Registration> {
    Some(Registration {
        matcher,
        timeout_secs,
    })
}

use Builtin as B;

pub const HOOKS: &[Hook] = &[
    Hook {
        subcommand: "session-start",
        event: Some(EventName::SessionStart),
        registered: registered(None, Some(10)),
        deadline: secs(8),
        builtins: &[B::SessionContext, B::VersionCheck, B::StaleRegistrations],
        forwards: true,
        about: "SessionStart: project context, preferences, discoveries; version and registration checks",
    },
    Hook {
        subcommand: "stop",
        event: Some(EventName::Stop),
        registered: registered(None, Some(120)),
        deadline: secs(110),
        builtins: &[B::LockMode, B::Reflection, B::SessionRecord],
        forwards: true,
        about: "Stop: lock mode, opt-in reflection, the session record",
    },
    Hook {
        subcommand: "pre-tool-use",
        event: Some(EventName::PreToolUse),
        registered: registered(Some("*"), None),
        deadline: UNREGISTERED_DEADLINE,
        builtins: &[B::BashGuard],
        forwards: true,
        about: "PreToolUse: deny --no-verify and recursive deletion of protected directories",
    },
    Hook {
        subcommand: "post-tool-use",
        event: Some(EventName::PostToolUse),
        registered: registered(Some("*"), None),
        deadline: UNREGISTERED_DEADLINE,
        builtins: &[B::Metrics],
        forwards: true,
        about: "PostToolUse: one metrics line per tool call",
    },
    Hook {
        subcommand: "workflow-classification-reminder",
        event: Some(EventName::UserPromptSubmit),
        registered: registered(None, Some(5)),
        deadline: secs(4),
        builtins: &[B::WorkflowReminder],
        forwards: false,
        about: "UserPromptSubmit: a reminder to classify new work, on new topics only",
    },
    Hook {
        subcommand: "user-prompt-submit",
        event: Some(EventName::UserPromptSubmit),
        registered: registered(None, Some(10)),
        deadline: secs(8),
        builtins: &[B::Preferences, B::AgentMemory],
        forwards: true,
        about: "UserPromptSubmit: your preferences and the memory of the agents the prompt names",
    },
    Hook {
        subcommand: "pre-compact",
        event: Some(EventName::PreCompact),
        registered: registered(None, Some(30)),
        deadline: secs(25),
        builtins: &[B::TranscriptExport],
        forwards: true,
        about: "PreCompact: keep a copy of the transcript",
    },
    Hook {
        subcommand: "session-end",
        event: Some(EventName::SessionEnd),
        registered: registered(None, Some(5)),
        // Claude Code before 2.1.74 gave all SessionEnd hooks 1.5 s together.
        deadline: Duration::from_millis(1_200),
        builtins: &[B::SessionEnd],
        forwards: true,
        about: "SessionEnd: finish the session record, prune old session state",
    },
    Hook {
        subcommand: "subagent-stop",
        event: Some(EventName::SubagentStop),
        registered: None,
        deadline: UNREGISTERED_DEADLINE,
        builtins: &[],
        forwards: true,
        about: "SubagentStop: your plugins only",
    },
    Hook {
        subcommand: "notification",
        event: Some(EventName::Notification),
        registered: None,
        deadline: UNREGISTERED_DEADLINE,
        builtins: &[],
        forwards: true,
        about: "Notification: your plugins only",
    },
    Hook {
        subcommand: "dispatch",
        event: None,
        registered: None,
        deadline: UNREGISTERED_DEADLINE,
        builtins: &[],
        forwards: true,
        about: "any event, taken from the payload's hook_event_name: that event's built-ins and your plugins",
    },
];

/// The flag amplihack's registration adds to a row whose timeout it raised for the plugins
/// (`session-start --timeout 33`): the seconds the host was told, so that the binary's own
/// deadline can follow without reading anything ([`Hook::deadline_under`]).
pub const TIMEOUT_FLAG: &str = "--timeout";

/// What amplihack keeps for itself after a plugin's declared timeout: the reply margin and the
/// built-ins that run before the plugins.
const PLUGIN_SLACK: Duration = Duration::from_secs(1);

/// What a registration raised for the plugins keeps between amplihack's deadline and the host's
/// timeout: a quarter of it, at most 2 s (10 s registered: an 8 s deadline, as the table's rows).
fn headroom(registered_secs: u64) -> Duration {
    Duration::from_millis(registered_secs.saturating_mul(250).min(2_000))
}

/// The registered timeout for a row whose event has a plugin declaring `declared` seconds: the
/// smallest whole number of seconds whose deadline ([`Hook::deadline_under`]) leaves the plugin
/// all of it; never below `base` (what the row registers without plugins); at most `cap` (the
/// host's maximum for the event). `None` when the row's own deadline already does.
pub fn timeout_for_plugins(
    hook: &Hook,
    base: Option<u64>,
    declared: f64,
    cap: Option<u64>,
) -> Option<u64> {
    let needed = Duration::try_from_secs_f64(declared)
        .ok()?
        .saturating_add(PLUGIN_SLACK);
    if hook.deadline >= needed {
        return None;
    }
    let mut secs = needed.as_secs().max(1);
    while hook.deadline_under(secs) < needed {
        secs += 1;
    }
    let secs = secs.max(base.unwrap_or(0));
    Some(cap.map_or(secs, |cap| secs.min(cap)))
}

/// Whether a plugin declaring `declared` seconds gets all of it under a registration of
/// `registered` seconds (raised, [`timeout_for_plugins`], or the row's own).
pub fn plugin_fits(hook: &Hook, registered: Option<u64>, declared: f64) -> bool {
    let deadline = registered.map_or(hook.deadline, |secs| hook.deadline_under(secs));
    Duration::try_from_secs_f64(declared)
        .is_ok_and(|declared| deadline >= declared.saturating_add(PLUGIN_SLACK))
}

/// Subcommand names earlier amplihack versions registered (amplihack-rs), with the row each
/// became: a registration they left behind keeps working until `install` (or the session-start
/// repair) replaces it. `None`: retired (`precommit-prefs` never did anything), the call is
/// drained and answered with nothing.
pub const LEGACY_SUBCOMMANDS: &[(&str, Option<&str>)] = &[
    ("session-stop-event", Some("session-end")),
    ("session-stop", Some("session-end")),
    ("sessionEnd", Some("session-end")),
    ("user-prompt", Some("user-prompt-submit")),
    ("agentStop", Some("stop")),
    ("precommit-prefs", None),
];

/// A legacy subcommand: `Some(row)` it became, `Some(None)` retired, `None` not a legacy name.
pub fn legacy(subcommand: &str) -> Option<Option<&'static Hook>> {
    LEGACY_SUBCOMMANDS
        .iter()
        .find(|(name, _)| *name == subcommand)
        .map(|(_, now)| now.and_then(find))
}

pub fn find(subcommand: &str) -> Option<&'static Hook> {
    HOOKS.iter().find(|h| h.subcommand == subcommand)
}

/// The rows `amplihack install` registers, in their canonical order.
pub fn registered_hooks() -> impl Iterator<Item = (&'static Hook, Registration)> {
    HOOKS.iter().filter_map(|h| Some((h, h.registered?)))
}

impl Hook {
    /// The event's name as hosts spell it (`dispatch` has none).
    pub fn event_name(&self) -> &'static str {
        match &self.event {
            Some(event) => event.static_name(),
            None => "",
        }
    }

    /// The built-ins for the event that actually arrived: a row's own; or those of every
    /// registered row of that event (in table order) for `dispatch`, and for the forwarding row
    /// under Amplifier, whose registration has only that row per event (its bridge stops at the
    /// first hook that injects context).
    pub fn builtins_for(&self, event: &EventName, host: Host) -> Vec<Builtin> {
        let together = self.event.is_none() || (host == Host::Amplifier && self.forwards);
        if !together {
            return self
                .builtins
                .iter()
                .copied()
                .filter(|b| b.runs_under(host))
                .collect();
        }
        let mut all = Vec::new();
        for hook in HOOKS
            .iter()
            .filter(|h| h.registered.is_some() && h.event.as_ref() == Some(event))
        {
            all.extend(hook.builtins.iter().copied().filter(|b| b.runs_under(host)));
        }
        all
    }

    /// amplihack's deadline when the host was told `registered_secs` for this row
    /// ([`TIMEOUT_FLAG`]): the row's own, or, when the registration was raised for a plugin,
    /// the registration less its headroom.
    pub fn deadline_under(&self, registered_secs: u64) -> Duration {
        let raised = Duration::from_secs(registered_secs).saturating_sub(headroom(registered_secs));
        self.deadline.max(raised)
    }

    /// The closest subcommand name to a mistyped one, for "did you mean".
    pub fn suggest(typed: &str) -> Option<&'static str> {
        let fold = |s: &str| -> String {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        if let Some(hook) = HOOKS.iter().find(|h| fold(h.subcommand) == fold(typed)) {
            return Some(hook.subcommand);
        }
        HOOKS
            .iter()
            .map(|h| (edit_distance(typed, h.subcommand), h.subcommand))
            .filter(|(d, name)| *d <= 3.max(name.len() / 3))
            .min_by_key(|(d, _)| *d)
            .map(|(_, name)| name)
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered row answers (or fails open) before the host's timeout for it.
    #[test]
    fn every_deadline_is_below_its_registered_timeout() {
        for (hook, registration) in registered_hooks() {
            let limit = registration
                .timeout_secs
                .map_or(Duration::from_secs(60), Duration::from_secs);
            assert!(
                hook.deadline < limit,
                "{}: {:?} >= {limit:?}",
                hook.subcommand,
                hook.deadline
            );
        }
    }

    /// Each plugin runs once per event: of the rows registered on one event, exactly one forwards.
    #[test]
    fn exactly_one_registered_row_per_event_forwards() {
        for (hook, _) in registered_hooks() {
            let forwarding = registered_hooks()
                .filter(|(h, _)| h.event == hook.event && h.forwards)
                .count();
            assert_eq!(forwarding, 1, "{}", hook.event_name());
        }
    }

    #[test]
    fn dispatch_runs_every_registered_builtin_of_the_event() {
        let dispatch = find("dispatch").expect("dispatch");
        assert_eq!(
            dispatch.builtins_for(&EventName::UserPromptSubmit, Host::ClaudeCode),
            [
                Builtin::WorkflowReminder,
                Builtin::Preferences,
                Builtin::AgentMemory
            ]
        );
        assert!(
            dispatch
                .builtins_for(&EventName::Notification, Host::ClaudeCode)
                .is_empty()
        );
        let prompt = find("user-prompt-submit").expect("row");
        assert_eq!(
            prompt.builtins_for(&EventName::UserPromptSubmit, Host::ClaudeCode),
            [Builtin::Preferences, Builtin::AgentMemory]
        );
        assert_eq!(
            prompt
                .builtins_for(&EventName::UserPromptSubmit, Host::Amplifier)
                .len(),
            3
        );
    }

    /// Reflection would spend the user's model access under Amplifier for a result the app
    /// never shows: it runs under Claude Code only, whichever row serves the Stop.
    #[test]
    fn reflection_runs_under_claude_code_only() {
        let stop = find("stop").expect("stop");
        for hook in [stop, find("dispatch").expect("dispatch")] {
            assert!(
                hook.builtins_for(&EventName::Stop, Host::ClaudeCode)
                    .contains(&Builtin::Reflection)
            );
            let amplifier = hook.builtins_for(&EventName::Stop, Host::Amplifier);
            assert!(!amplifier.contains(&Builtin::Reflection), "{amplifier:?}");
            assert!(amplifier.contains(&Builtin::LockMode), "{amplifier:?}");
        }
    }

    /// Declared timeouts × host caps: the registration leaves the plugin its declared time
    /// unless the host's cap does not allow it, and never runs past what the host was told.
    #[test]
    fn registrations_follow_declared_timeouts_within_host_caps() {
        let start = find("session-start").expect("row");
        let end = find("session-end").expect("row");
        let tool = find("pre-tool-use").expect("row");
        // (row, base, declared, cap) -> registered, fits
        type Case<'a> = (&'a Hook, Option<u64>, f64, Option<u64>, Option<u64>, bool);
        let cases: &[Case] = &[
            (start, Some(10), 5.0, None, None, true),
            (start, Some(10), 7.0, None, None, true),
            (start, Some(10), 7.5, None, Some(11), true),
            (start, Some(10), 30.0, None, Some(33), true),
            (start, Some(10), 30.0, Some(20), Some(20), false),
            (start, Some(10), 600.0, None, Some(603), true),
            (end, Some(5), 0.1, None, None, true),
            (end, Some(5), 1.1, None, Some(5), true),
            (end, Some(5), 2.0, Some(3), Some(3), false),
            (end, Some(5), 1.1, Some(3), Some(3), true),
            (end, Some(5), 30.0, Some(60), Some(33), true),
            (tool, None, 30.0, None, None, true),
            (tool, None, 120.0, None, Some(123), true),
            (tool, Some(60), 120.0, Some(60), Some(60), false),
        ];
        for &(hook, base, declared, cap, want, fits) in cases {
            let got = timeout_for_plugins(hook, base, declared, cap);
            assert_eq!(got, want, "{} {declared} cap {cap:?}", hook.subcommand);
            let registered = got.or(base);
            assert_eq!(
                plugin_fits(hook, got, declared),
                fits,
                "{} {declared} cap {cap:?}",
                hook.subcommand
            );
            if let Some(secs) = registered {
                let deadline = got.map_or(hook.deadline, |s| hook.deadline_under(s));
                assert!(
                    deadline < Duration::from_secs(secs),
                    "{}: {deadline:?} >= {secs} s",
                    hook.subcommand
                );
            }
        }
        // A row's own registration gives its own deadline.
        assert_eq!(start.deadline_under(10), start.deadline);
        assert_eq!(start.deadline_under(33), secs(31));
        assert_eq!(end.deadline_under(3), Duration::from_millis(2_250));
    }

    #[test]
    fn suggestions_for_typos() {
        for (typed, want) in [
            ("pre-tool-us", Some("pre-tool-use")),
            ("sesion-start", Some("session-start")),
            ("PreToolUse", Some("pre-tool-use")),
            ("xyz", None),
        ] {
            assert_eq!(Hook::suggest(typed), want, "{typed}");
        }
    }
}
