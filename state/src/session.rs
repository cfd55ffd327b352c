//! Per-session state: `<state>/sessions/<session>.json`, one typed record per session (and its
//! staging file `<session>.json.next`, [`files::replace_locked`]), read and updated under a lock (a session's hooks can run in parallel: Claude Code starts the two
//! UserPromptSubmit hooks together). The session's env file (`<session>.env`) lives beside it.
//!
//! Session records are disposable: one that does not parse is moved aside
//! (`<session>.json.damaged`, reported once) and the session starts afresh, so a damaged file cannot stop
//! lock mode or the reminder from working, and its bytes are kept for a look.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::files::{self, Lock, StateError};
use crate::{StateDir, session_key, time};

/// What amplihack remembers about one session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// When the record was created and last written (UTC).
    pub started: String,
    pub updated: String,
    /// The project root the session runs in.
    pub project: Option<String>,
    /// UserPromptSubmit events seen (Claude Code sends no turn count).
    pub prompts: u64,
    /// The prompt number that last got the classification reminder.
    pub last_reminder: Option<u64>,
    /// The first prompt, for the session record.
    pub first_prompt: Option<String>,
    /// Agents the prompts named.
    pub agents: Vec<String>,
    /// Consecutive Stop blocks by the user's plugins (the stop-loop guard).
    pub plugin_stop_blocks: u32,
    /// Stops lock mode has blocked in this session, in the lock episode `lock_episode` (the
    /// lock's `locked_at`): a new `amplihack lock` starts the count again.
    pub lock_iterations: u32,
    pub lock_episode: Option<String>,
    /// Reflection ran (it runs at most once per session).
    pub reflected: bool,
    /// Reflection findings, once written.
    pub reflection: Option<String>,
    /// Transcript copies made before compactions.
    pub transcript_exports: Vec<String>,
    /// One-per-session notices already given (`version`, `registrations`, `untrusted:<dir>`).
    pub notices: Vec<String>,
    /// Set by SessionEnd.
    pub ended: Option<String>,
}

impl SessionState {
    /// Records a notice; `true` the first time it is given in this session.
    pub fn first_notice(&mut self, key: &str) -> bool {
        if self.notices.iter().any(|n| n == key) {
            return false;
        }
        self.notices.push(key.to_string());
        true
    }
}

/// The sessions directory of a state directory.
pub fn dir(state: &StateDir) -> PathBuf {
    state.dir("sessions")
}

pub fn record_path(state: &StateDir, session: Option<&str>) -> PathBuf {
    dir(state).join(format!("{}.json", session_key(session)))
}

/// The session's env file: what SessionStart plugins export for the session's later hooks.
pub fn env_file(state: &StateDir, session: Option<&str>) -> PathBuf {
    dir(state).join(format!("{}.env", session_key(session)))
}

/// The session's record (the default when there is none, or it is unreadable).
pub fn load(state: &StateDir, session: Option<&str>) -> SessionState {
    read(&record_path(state, session)).unwrap_or_default()
}

fn read(path: &Path) -> Result<SessionState, StateError> {
    Ok(files::read_json::<SessionState>(path)?.unwrap_or_default())
}

/// Reads, changes and writes the session's record under its lock; returns what `change`
/// returned. The record is written only when `change` altered it.
pub fn update<R>(
    state: &StateDir,
    session: Option<&str>,
    change: impl FnOnce(&mut SessionState) -> R,
) -> Result<R, StateError> {
    let key = session_key(session);
    let _lock = Lock::acquire(
        &state.dir("locks"),
        &format!("session-{key}"),
        lock_timeout(),
    )?;
    let path = record_path(state, session);
    let mut record = read(&path)?;
    let before = record.clone();
    let result = change(&mut record);
    if record != before {
        let now = time::utc_now();
        if record.started.is_empty() {
            record.started = now.clone();
        }
        record.updated = now;
        // Disposable: a crash can at worst damage it, and a damaged record is moved aside and
        // begun again; an fsync would cost every prompt, stop and session end 5-15 ms. Under
        // the session's lock: through the record's staging file, swapped in (no file created,
        // no rename over a file, each 0.1-4 ms on a busy ext4).
        let mut text = serde_json::to_string_pretty(&record).map_err(|e| StateError::Corrupt {
            path: path.clone(),
            problem: e.to_string(),
        })?;
        text.push('\n');
        files::replace_locked(&path, text.as_bytes())?;
    }
    Ok(result)
}

fn lock_timeout() -> Duration {
    std::env::var(amplihack_env::AMPLIHACK_LOCK_TIMEOUT_MS)
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(files::LOCK_TIMEOUT, Duration::from_millis)
}

/// Removes per-session files (records, env files, corrupt copies, overflow contexts) last
/// modified more than `older_than` ago, and their session locks. Returns how many went.
pub fn prune(state: &StateDir, older_than: Duration) -> usize {
    let cutoff = std::time::SystemTime::now()
        .checked_sub(older_than)
        .unwrap_or(std::time::UNIX_EPOCH);
    let mut removed = 0;
    for dir in [dir(state), state.context_dir()] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < cutoff);
            if old && entry.file_type().is_ok_and(|t| t.is_file()) {
                let path = entry.path();
                if std::fs::remove_file(&path).is_ok() {
                    removed += 1;
                    if let Some(stem) = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_suffix(".json"))
                    {
                        let _ = std::fs::remove_file(
                            state.dir("locks").join(format!("session-{stem}.lock")),
                        );
                    }
                }
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_updates_lose_nothing() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path().join("state"));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..25 {
                        update(&state, Some("s1"), |r| r.prompts += 1).expect("update");
                    }
                });
            }
        });
        assert_eq!(load(&state, Some("s1")).prompts, 200);
    }

    #[test]
    fn a_corrupt_record_is_moved_aside_and_the_session_goes_on() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path());
        let path = record_path(&state, Some("s"));
        files::private_dir(path.parent().expect("parent")).expect("dir");
        std::fs::write(&path, "{broken").expect("write");
        update(&state, Some("s"), |r| r.prompts = 1).expect("update");
        assert_eq!(load(&state, Some("s")).prompts, 1);
        let aside = std::fs::read_to_string(format!("{}.damaged", path.display())).expect("kept");
        assert_eq!(aside, "{broken");
    }

    #[test]
    fn pruning_removes_only_old_files() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path());
        update(&state, Some("new"), |r| r.prompts = 1).expect("update");
        update(&state, Some("old"), |r| r.prompts = 1).expect("update");
        let old = record_path(&state, Some("old"));
        let week_ago = std::time::SystemTime::now() - Duration::from_secs(8 * 86_400);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .and_then(|f| f.set_modified(week_ago))
            .expect("age");
        assert_eq!(prune(&state, Duration::from_secs(7 * 86_400)), 1);
        assert!(!old.exists());
        assert!(record_path(&state, Some("new")).exists());
    }
}
