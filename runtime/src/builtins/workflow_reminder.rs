//! UserPromptSubmit (`workflow-classification-reminder`): a short reminder to classify the
//! request before starting, on new topics only. Claude Code sends no turn count, so amplihack
//! counts prompts itself in the session record.
//!
//! The text is `.claude/context/WORKFLOW_REMINDER.md` when the project has one, else
//! [`DEFAULT_TEXT`]. The decision is [`decide`], in this order: never for an empty prompt, a
//! nested session (`AMPLIHACK_SESSION_DEPTH` > 0, or reflection's own `claude -p`), a slash
//! command, or within [`QUIET_PROMPTS`] prompts of the last reminder; always for the first prompt
//! of a session; never for a follow-up (it opens with `also`, `and`, `then`, `what about`, `ok`,
//! `thanks`, ... or has under four words); otherwise only when it says it opens a new topic
//! (`new task`, `switching to`, `different question`, `moving on to`, `let's work on`, ...).

use amplihack_protocol::{Payload, Reply};
use amplihack_state::session;

use super::{BuiltinError, Result, read_capped};
use crate::pipeline::Call;

pub const OVERRIDE_FILE: &str = ".claude/context/WORKFLOW_REMINDER.md";
/// Prompts after a reminder during which no other is given.
pub const QUIET_PROMPTS: u64 = 3;

/// Plain text: Claude Code hands it to the model as a system reminder of its own, and from 2.1.292
/// escapes any tag in it ([`crate::model_text`]).
pub const DEFAULT_TEXT: &str = "This prompt opens a new topic (amplihack-workflow-classification). Before starting, classify it and say the class in one line:
- Q&A (explain, what is, how do I): answer directly.
- OPERATIONS (run a command, git status, clean up): do it directly.
- INVESTIGATION or DEVELOPMENT (understand code, implement, fix, refactor): follow the project's development workflow (for amplihack: `/dev`, the dev-orchestrator skill) before changing code.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Remind,
    Skip(&'static str),
}

const FOLLOW_UP_OPENERS: &[&str] = &[
    "also",
    "and",
    "then",
    "but",
    "so",
    "ok",
    "okay",
    "yes",
    "yep",
    "no",
    "nope",
    "thanks",
    "thank",
    "great",
    "good",
    "nice",
    "perfect",
    "continue",
    "go",
    "what about",
    "how about",
    "i meant",
    "to clarify",
    "actually",
    "instead",
    "again",
    "same",
    "now do",
    "please continue",
    "keep going",
    "additionally",
    "furthermore",
    "what's the status",
    "how's it going",
];

const NEW_TOPIC_PHRASES: &[&str] = &[
    "new task",
    "new topic",
    "different question",
    "different topic",
    "separate question",
    "unrelated",
    "switching to",
    "switch to",
    "moving on to",
    "move on to",
    "next i want",
    "now let's",
    "now lets",
    "let's work on",
    "lets work on",
    "let's switch",
    "change of topic",
];

/// Whether prompt number `number` (1-based) gets the reminder.
pub fn decide(prompt: &str, number: u64, last_reminder: Option<u64>, nested: bool) -> Verdict {
    let text = prompt.trim();
    if text.is_empty() {
        return Verdict::Skip("empty prompt");
    }
    if nested {
        return Verdict::Skip("nested session");
    }
    if text.starts_with('/') {
        return Verdict::Skip("slash command");
    }
    if last_reminder.is_some_and(|last| number.saturating_sub(last) <= QUIET_PROMPTS) {
        return Verdict::Skip("reminded recently");
    }
    if number <= 1 {
        return Verdict::Remind;
    }
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let opening = words.iter().take(3).copied().collect::<Vec<_>>().join(" ");
    let opens_with = |phrase: &str| opening == phrase || opening.starts_with(&format!("{phrase} "));
    if FOLLOW_UP_OPENERS.iter().any(|p| opens_with(p)) || words.len() < 4 {
        return Verdict::Skip("follow-up");
    }
    let spaced = format!(" {} ", words.join(" "));
    if NEW_TOPIC_PHRASES
        .iter()
        .any(|p| spaced.contains(&format!(" {p} ")))
    {
        return Verdict::Remind;
    }
    Verdict::Skip("same topic")
}

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let Payload::Prompt { prompt } = &call.event.payload else {
        return Ok(Reply::default());
    };
    let ctx = call.ctx;
    let state = ctx.state().ok_or(BuiltinError::NoStateDir)?;
    let nested = ctx
        .var(amplihack_env::AMPLIHACK_SESSION_DEPTH)
        .and_then(|d| d.trim().parse::<u32>().ok())
        .is_some_and(|d| d > 0)
        || ctx.var(super::reflection::CHILD_MARKER).is_some();
    let verdict = session::update(&state, call.event.session_id.as_deref(), |s| {
        s.prompts += 1;
        let verdict = decide(prompt, s.prompts, s.last_reminder, nested);
        if verdict == Verdict::Remind {
            s.last_reminder = Some(s.prompts);
        }
        verdict
    })?;
    if verdict != Verdict::Remind {
        return Ok(Reply::default());
    }
    let root = ctx.project_root(call.event);
    let text = match read_capped(&root.join(OVERRIDE_FILE), 2_000)? {
        Some(custom) => custom.text,
        None => DEFAULT_TEXT.to_string(),
    };
    Ok(Reply::context(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::{Remind, Skip};

    #[test]
    fn the_new_topic_heuristic() {
        let cases: &[(&str, u64, Option<u64>, bool, Verdict)] = &[
            ("implement the parser", 1, None, false, Remind),
            ("", 1, None, false, Skip("empty prompt")),
            ("/dev build it", 1, None, false, Skip("slash command")),
            (
                "implement the parser",
                1,
                None,
                true,
                Skip("nested session"),
            ),
            (
                "also add tests for the lexer please",
                2,
                Some(1),
                false,
                Skip("reminded recently"),
            ),
            (
                "also add tests for the lexer please",
                6,
                Some(1),
                false,
                Skip("follow-up"),
            ),
            (
                "and then refactor the module",
                9,
                Some(1),
                false,
                Skip("follow-up"),
            ),
            (
                "what about the error messages here",
                9,
                Some(1),
                false,
                Skip("follow-up"),
            ),
            ("ok do it", 9, Some(1), false, Skip("follow-up")),
            (
                "sandbox the tests in a temporary directory",
                9,
                Some(1),
                false,
                Skip("same topic"),
            ),
            (
                "android build fails on the emulator",
                9,
                Some(1),
                false,
                Skip("same topic"),
            ),
            (
                "new task: write a migration for the users table",
                9,
                Some(1),
                false,
                Remind,
            ),
            (
                "switching to the billing service, add retries",
                5,
                Some(1),
                false,
                Remind,
            ),
            (
                "switching to the billing service, add retries",
                4,
                Some(1),
                false,
                Skip("reminded recently"),
            ),
            (
                "Now let's look at the deployment scripts",
                12,
                Some(1),
                false,
                Remind,
            ),
            (
                "Moving on to documentation for the CLI",
                12,
                None,
                false,
                Remind,
            ),
        ];
        for (prompt, number, last, nested, want) in cases {
            assert_eq!(
                decide(prompt, *number, *last, *nested),
                *want,
                "{prompt:?} #{number} last {last:?}"
            );
        }
    }
}
