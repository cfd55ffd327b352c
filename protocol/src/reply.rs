//! Replies out: what a hook decided about one event, before it is rendered for a host.

use serde_json::Value;

/// A hook's verdict. On tool events it is a permission decision; on the events that can be blocked
/// (UserPromptSubmit, Stop, PostToolUse, ...) `Deny` is a block and `Allow` means "carry on".
/// Ordered as Claude Code ranks them when hooks disagree: deny over defer over ask over allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decision {
    Allow,
    Ask,
    /// `defer` (PreToolUse in `-p`, PreSkillShellCommand): the host decides later; on
    /// PreSkillShellCommand it keeps the command from running.
    Defer,
    Deny,
}

impl Decision {
    /// Claude Code's spellings, including the deprecated `approve`/`block`.
    pub fn parse(value: &str) -> Option<Decision> {
        match value {
            "allow" | "approve" => Some(Decision::Allow),
            "ask" => Some(Decision::Ask),
            "defer" => Some(Decision::Defer),
            "deny" | "block" => Some(Decision::Deny),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Defer => "defer",
            Decision::Deny => "deny",
        }
    }
}

/// What the hook answers for one event. The default reply says nothing and changes nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub decision: Option<Decision>,
    /// Why: shown to the model for a deny or a block, to the user for allow/ask.
    pub reason: Option<String>,
    /// Replaces the tool input (PreToolUse, PermissionRequest allow).
    pub updated_input: Option<Value>,
    /// Context for the model, in order: answered as `additionalContext` (Claude Code labels it
    /// `<event> hook additional context: `).
    pub context: Vec<String>,
    /// Context for the model that handlers printed as plain text (exit 0, not JSON) on the events
    /// where Claude Code hands that to the model (SessionStart, UserPromptSubmit,
    /// UserPromptExpansion): Claude Code
    /// labels it `<event>[:<source>] hook success: `, so it is kept apart to be labelled alike.
    pub plain_context: Vec<String>,
    /// Context Claude Code hands the model with no label: what background (`async`) handlers
    /// answered, delivered at a later event.
    pub unlabelled_context: Vec<String>,
    /// A warning for the user.
    pub system_message: Option<String>,
    /// `continue: false`: stop the agent altogether, with this reason for the user.
    pub halt: Option<String>,
    /// `suppressOutput`: hide the hook's output from the transcript (Amplifier honours it).
    pub suppress_output: bool,
    /// `hookSpecificOutput` fields amplihack does not interpret itself (`sessionTitle`,
    /// `updatedToolOutput`, `updatedMCPToolOutput`, `watchPaths`, `retry`, ...): handed to Claude
    /// Code unchanged, so a plugin's answer means what it means natively.
    pub passthrough: serde_json::Map<String, Value>,
    /// `terminalSequence`: written to the terminal by Claude Code.
    pub terminal_sequence: Option<String>,
    /// Model-backed handlers (`type: prompt`) for the host to put to its own model: Claude Code
    /// runs them itself (registered as its own hook entries); amplihack's Amplifier module asks the
    /// session's provider.
    pub model_questions: Vec<ModelQuestion>,
}

/// A model-backed handler (`prompt`, the proposal's `llm`), ready for a model: its question filled
/// in (`$ARGUMENTS`, or `{{tool}}`/`{{args}}`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelQuestion {
    pub prompt: String,
    pub model: Option<String>,
    pub timeout_secs: f64,
    /// The answer's limit; the host's default when `None`.
    pub max_tokens: Option<u64>,
    /// An identical question is answered again from the session's cache.
    pub cache: bool,
    /// What a failed model call does: `warn` (the default: the event goes on, with a line in the
    /// log), `ignore`, or `block` (the event is refused).
    pub on_failure: String,
    /// An `agent` handler: a subagent with read-only tools answers, not one model call.
    pub agent: bool,
}

impl Reply {
    pub fn is_empty(&self) -> bool {
        *self == Reply::default()
    }

    /// Why a deny or a block, for a host that must give one: the reply's reason, or a plain
    /// "Blocked by amplihack" when a handler blocked without saying why.
    pub fn block_reason(&self) -> String {
        self.reason
            .clone()
            .unwrap_or_else(|| "Blocked by amplihack".into())
    }

    pub fn deny(reason: impl Into<String>) -> Reply {
        Reply {
            decision: Some(Decision::Deny),
            reason: Some(reason.into()),
            ..Reply::default()
        }
    }

    pub fn context(text: impl Into<String>) -> Reply {
        Reply {
            context: vec![text.into()],
            ..Reply::default()
        }
    }

    /// A handler's plain stdout handed to the model (see [`Reply::plain_context`]).
    pub fn plain_context(text: impl Into<String>) -> Reply {
        Reply {
            plain_context: vec![text.into()],
            ..Reply::default()
        }
    }

    /// Every context text, plain stdout first, for a host that does not label them.
    pub fn all_context(&self) -> Vec<String> {
        self.plain_context
            .iter()
            .chain(&self.context)
            .chain(&self.unlabelled_context)
            .cloned()
            .collect()
    }

    /// Folds another hook's answer into this one, the way Claude Code merges parallel hooks:
    /// the most restrictive decision wins (deny over ask over allow) and keeps its reason, any
    /// halt wins, contexts and messages accumulate in order, a later updated input replaces an
    /// earlier one.
    pub fn merge(&mut self, other: Reply) {
        match (self.decision, other.decision) {
            (_, None) => {}
            (None, Some(_)) => {
                self.decision = other.decision;
                self.reason = other.reason;
            }
            (Some(mine), Some(theirs)) if theirs > mine => {
                self.decision = Some(theirs);
                self.reason = other.reason;
            }
            (Some(mine), Some(theirs)) if theirs == mine => {
                self.reason = join(self.reason.take(), other.reason, "\n");
            }
            _ => {}
        }
        if other.updated_input.is_some() {
            self.updated_input = other.updated_input;
        }
        self.context.extend(other.context);
        self.plain_context.extend(other.plain_context);
        self.unlabelled_context.extend(other.unlabelled_context);
        self.system_message = join(self.system_message.take(), other.system_message, "\n");
        if self.halt.is_none() {
            self.halt = other.halt;
        }
        self.suppress_output |= other.suppress_output;
        self.passthrough.extend(other.passthrough);
        if other.terminal_sequence.is_some() {
            self.terminal_sequence = other.terminal_sequence;
        }
        self.model_questions.extend(other.model_questions);
    }
}

fn join(a: Option<String>, b: Option<String>, sep: &str) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}{sep}{b}")),
        (a, b) => a.or(b),
    }
}

/// A reply rendered for one host: what to print and how to exit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// Printed as one write, or not at all.
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit_code: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(decision: Option<Decision>, reason: &str) -> Reply {
        Reply {
            decision,
            reason: Some(reason.into()),
            ..Reply::default()
        }
    }

    #[test]
    fn most_restrictive_decision_wins_and_keeps_its_reason() {
        use Decision::*;
        let cases = [
            (Some(Allow), Some(Deny), Some(Deny), "b"),
            (Some(Deny), Some(Allow), Some(Deny), "a"),
            (Some(Ask), Some(Allow), Some(Ask), "a"),
            (Some(Ask), Some(Defer), Some(Defer), "b"),
            (Some(Defer), Some(Deny), Some(Deny), "b"),
            (Some(Defer), Some(Allow), Some(Defer), "a"),
            (Some(Allow), Some(Ask), Some(Ask), "b"),
            (None, Some(Allow), Some(Allow), "b"),
            (Some(Deny), None, Some(Deny), "a"),
            (Some(Deny), Some(Deny), Some(Deny), "a\nb"),
        ];
        for (first, second, want, reason) in cases {
            let mut merged = with(first, "a");
            merged.merge(with(second, "b"));
            assert_eq!(merged.decision, want, "{first:?} + {second:?}");
            assert_eq!(
                merged.reason.as_deref(),
                Some(reason),
                "{first:?} + {second:?}"
            );
        }
    }

    #[test]
    fn contexts_accumulate_in_order_and_halt_wins() {
        let mut merged = Reply::context("one");
        merged.merge(Reply {
            context: vec!["two".into()],
            halt: Some("stop".into()),
            ..Reply::default()
        });
        merged.merge(Reply::context("three"));
        assert_eq!(merged.context, ["one", "two", "three"]);
        assert_eq!(merged.halt.as_deref(), Some("stop"));
    }
}
