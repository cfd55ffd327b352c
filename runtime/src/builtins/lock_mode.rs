//! Stop: lock mode keeps the agent working, compatible with amplihack's `/amplihack:lock` files
//! in `<project>/.claude/runtime/locks/`:
//!
//! * `.lock_active` turns it on (its `locked_at:` line, else its modification time, dates it);
//! * the block reason is `.continuation_prompt`, else `.lock_message`, else the goal in
//!   `.lock_goal`, else [`DEFAULT_PROMPT`] (a prompt file that is empty or over 1,000
//!   characters is passed over);
//! * a per-session counter, kept per lock episode in the session record: past
//!   `AMPLIHACK_MAX_LOCK_ITERATIONS` (default 50) continuations the safety valve unlocks, resets
//!   the counter and tells the user;
//! * a lock older than `AMPLIHACK_LOCK_TTL_SECONDS` (default 24 h) expires, and the user is told.
//!
//! `amplihack lock [--message TEXT]`, `amplihack unlock` and `amplihack lock --status` use the
//! functions here. (Claude Code 2.1.143+ also ends a turn after 8 consecutive Stop blocks unless
//! `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` says otherwise; that cap is the host's.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use amplihack_protocol::{EventName, Reply};
use amplihack_state::{files, session, time};

use super::{BuiltinError, Result};
use crate::pipeline::Call;

pub const LOCKS_DIR: &str = ".claude/runtime/locks";
pub const ACTIVE: &str = ".lock_active";
pub const CONTINUATION_PROMPT: &str = ".continuation_prompt";
pub const MESSAGE: &str = ".lock_message";
pub const GOAL: &str = ".lock_goal";
pub const DEFAULT_MAX_ITERATIONS: u32 = 50;
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);
const PROMPT_MAX_CHARS: usize = 1_000;

pub const DEFAULT_PROMPT: &str = "Lock mode is on: keep working on the user's task. Look for remaining TODOs, next steps and unfinished work, and pursue them; stop only when the task is completely done.";

/// A lock, as found on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct LockInfo {
    pub dir: PathBuf,
    /// `locked_at` as written, or the file's modification time.
    pub locked_at: String,
    pub age: Duration,
    /// Which file the reason comes from, and the reason.
    pub source: &'static str,
    pub reason: String,
}

pub fn locks_dir(root: &Path) -> PathBuf {
    root.join(LOCKS_DIR)
}

/// The lock of the project at `root`, if lock mode is on.
pub fn status(root: &Path) -> Option<LockInfo> {
    let dir = locks_dir(root);
    let active = dir.join(ACTIVE);
    let meta = std::fs::metadata(&active).ok()?;
    let text = std::fs::read_to_string(&active).unwrap_or_default();
    let now = time::now_unix().as_secs() as i64;
    let written = text.lines().find_map(|l| {
        l.trim()
            .strip_prefix("locked_at:")
            .map(|v| v.trim().to_string())
    });
    let (locked_at, since) = match written.as_deref().and_then(time::parse_utc) {
        Some(secs) => (written.clone().unwrap_or_default(), secs),
        None => {
            let secs = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(now, |d| d.as_secs() as i64);
            (time::utc(secs), secs)
        }
    };
    let (source, reason) = reason(&dir);
    Some(LockInfo {
        dir,
        locked_at,
        age: Duration::from_secs(now.saturating_sub(since).max(0) as u64),
        source,
        reason,
    })
}

/// The block reason, by precedence, and the file it came from.
pub fn reason(dir: &Path) -> (&'static str, String) {
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty() && t.chars().count() <= PROMPT_MAX_CHARS)
    };
    if let Some(prompt) = read(CONTINUATION_PROMPT) {
        return (CONTINUATION_PROMPT, prompt);
    }
    if let Some(message) = read(MESSAGE) {
        return (MESSAGE, message);
    }
    if let Some(goal) = std::fs::read_to_string(dir.join(GOAL))
        .ok()
        .map(|t| t.trim().chars().take(PROMPT_MAX_CHARS).collect::<String>())
        .filter(|t| !t.is_empty())
    {
        return (
            GOAL,
            format!("Lock mode is on: keep working until this goal is fully met.\n\n{goal}"),
        );
    }
    ("default", DEFAULT_PROMPT.to_string())
}

/// Turns lock mode on (a new episode: every session's count starts again).
pub fn lock(root: &Path, message: Option<&str>) -> std::result::Result<LockInfo, BuiltinError> {
    amplihack_state::project::runtime_dir(root)?;
    let dir = locks_dir(root);
    files::private_dir(&dir)?;
    files::replace(
        &dir.join(ACTIVE),
        format!("locked_at: {}\n", time::utc_now_millis()).as_bytes(),
    )?;
    if let Some(message) = message {
        files::replace(
            &dir.join(MESSAGE),
            format!("{}\n", message.trim()).as_bytes(),
        )?;
    }
    status(root).ok_or_else(|| BuiltinError::Other(format!("{} vanished", dir.display())))
}

/// Turns lock mode off; returns whether it was on. The goal, message and prompt files go too.
pub fn unlock(root: &Path) -> std::result::Result<bool, BuiltinError> {
    let dir = locks_dir(root);
    let was = dir.join(ACTIVE).exists();
    for name in [ACTIVE, CONTINUATION_PROMPT, MESSAGE, GOAL] {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(BuiltinError::Io {
                    path,
                    action: "remove",
                    source,
                });
            }
        }
    }
    Ok(was)
}

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    // Reflection's own headless session must be able to stop.
    if event.name != EventName::Stop || ctx.var(super::reflection::CHILD_MARKER).is_some() {
        return Ok(Reply::default());
    }
    let root = ctx.project_root(event);
    let Some(lock) = status(&root) else {
        return Ok(Reply::default());
    };
    let ttl = ctx
        .var("AMPLIHACK_LOCK_TTL_SECONDS")
        .and_then(|v| v.parse().ok())
        .map_or(DEFAULT_TTL, Duration::from_secs);
    if lock.age > ttl {
        unlock(&root)?;
        return Ok(notice(format!(
            "amplihack: lock mode expired (locked at {}, over {} h ago) and is now off. `amplihack lock` turns it on again.",
            lock.locked_at,
            ttl.as_secs() / 3600
        )));
    }
    let max = ctx
        .var("AMPLIHACK_MAX_LOCK_ITERATIONS")
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(DEFAULT_MAX_ITERATIONS)
        .max(1);
    let state = ctx.state().ok_or(BuiltinError::NoStateDir)?;
    let count = session::update(&state, event.session_id.as_deref(), |s| {
        if s.lock_episode.as_deref() != Some(lock.locked_at.as_str()) {
            s.lock_episode = Some(lock.locked_at.clone());
            s.lock_iterations = 0;
        }
        s.lock_iterations += 1;
        let count = s.lock_iterations;
        if count > max {
            s.lock_iterations = 0;
            s.lock_episode = None;
        }
        count
    })?;
    if count > max {
        unlock(&root)?;
        return Ok(notice(format!(
            "amplihack: lock mode safety valve: the agent was kept working {max} times (AMPLIHACK_MAX_LOCK_ITERATIONS), so lock mode is now off. `amplihack lock` turns it on again."
        )));
    }
    Ok(Reply::deny(format!(
        "{}\n\n(amplihack lock mode, continuation {count} of at most {max}; `amplihack unlock` ends it.)",
        lock.reason
    )))
}

fn notice(message: String) -> Reply {
    Reply {
        system_message: Some(message),
        ..Reply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.continuation_prompt` > `.lock_message` > `.lock_goal` > default; an empty or oversized
    /// prompt is passed over.
    #[test]
    fn reason_precedence() {
        let long = "x".repeat(1_001);
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case<'_>] = &[
            (&[], "default", DEFAULT_PROMPT),
            (&[(GOAL, "ship v2")], GOAL, "ship v2"),
            (
                &[(GOAL, "ship v2"), (MESSAGE, "finish the docs")],
                MESSAGE,
                "finish the docs",
            ),
            (
                &[
                    (GOAL, "g"),
                    (MESSAGE, "m"),
                    (CONTINUATION_PROMPT, "keep going!"),
                ],
                CONTINUATION_PROMPT,
                "keep going!",
            ),
            (
                &[(CONTINUATION_PROMPT, "  \n"), (MESSAGE, "m")],
                MESSAGE,
                "m",
            ),
            (
                &[(CONTINUATION_PROMPT, long.as_str())],
                "default",
                DEFAULT_PROMPT,
            ),
        ];
        for (present, want_source, want_text) in cases {
            let dir = tempfile::tempdir().expect("tempdir");
            for (name, text) in *present {
                std::fs::write(dir.path().join(name), text).expect("write");
            }
            let (source, text) = reason(dir.path());
            assert_eq!(source, *want_source, "{present:?}");
            assert!(text.contains(want_text), "{present:?}: {text}");
        }
    }

    #[test]
    fn lock_status_unlock() {
        let root = tempfile::tempdir().expect("tempdir");
        assert!(status(root.path()).is_none());
        let info = lock(root.path(), Some("finish the parser")).expect("lock");
        assert_eq!(info.source, MESSAGE);
        assert!(info.age < Duration::from_secs(5));
        assert!(unlock(root.path()).expect("unlock"));
        assert!(status(root.path()).is_none());
        assert!(!root.path().join(LOCKS_DIR).join(MESSAGE).exists());
        assert!(!unlock(root.path()).expect("again"));
    }

    #[test]
    fn the_predecessors_lock_file_is_dated() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = locks_dir(root.path());
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join(ACTIVE),
            "locked_at: 2020-01-01T00:00:00\nsession_id: x\n",
        )
        .expect("write");
        let info = status(root.path()).expect("on");
        assert!(info.age > Duration::from_secs(365 * 86_400));
    }
}
