//! The plugin circuit breaker's per-session record: `<state>/sessions/<session>.breaker.json`
//! (0600), how many times in a row each of the session's failing plugin handlers failed, and
//! which are parked (not run again in this session).
//!
//! Small and bounded: only handlers whose last run failed are listed, at most [`ENTRIES`] of
//! them, each command cut at [`COMMAND_CAP`] characters. A success removes the handler's entry;
//! a new session starts with none (and the sessions directory is pruned after a week);
//! `amplihack hooks enable NAME` removes a plugin's parked entries from every session.
//!
//! The threshold is `AMPLIHACK_PLUGIN_FAILURE_LIMIT` (default [`DEFAULT_LIMIT`]; `0` turns the
//! breaker off).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::files::{self, Lock, StateError};
use crate::{StateDir, session, session_key};

pub const LIMIT_VAR: &str = amplihack_env::AMPLIHACK_PLUGIN_FAILURE_LIMIT;
pub const DEFAULT_LIMIT: u32 = 5;
/// The most handlers one session's record lists.
pub const ENTRIES: usize = 32;
/// The longest command kept, in characters.
pub const COMMAND_CAP: usize = 200;
const SUFFIX: &str = ".breaker.json";

/// One handler that failed on its last run(s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// `level:name`, as the audit log names plugins.
    pub plugin: String,
    pub command: String,
    /// Failures in a row.
    pub fails: u32,
    pub parked: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Breaker {
    pub handlers: Vec<Entry>,
}

/// One run's result, as the breaker counts it.
pub struct Ran<'a> {
    pub plugin: &'a str,
    pub command: &'a str,
    pub failed: bool,
}

/// The threshold: `None` when the breaker is off.
pub fn limit(var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
    let n = var(LIMIT_VAR)
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(DEFAULT_LIMIT);
    (n > 0).then_some(n)
}

pub fn path(state: &StateDir, session: Option<&str>) -> PathBuf {
    session::dir(state).join(format!("{}{SUFFIX}", session_key(session)))
}

fn capped(command: &str) -> String {
    command.chars().take(COMMAND_CAP).collect()
}

impl Breaker {
    /// The session's record (none yet, or unreadable: empty).
    pub fn load(state: &StateDir, session: Option<&str>) -> Breaker {
        files::read_json(&path(state, session))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    pub fn parked(&self, plugin: &str, command: &str) -> bool {
        let command = capped(command);
        self.handlers
            .iter()
            .any(|e| e.parked && e.plugin == plugin && e.command == command)
    }

    /// Counts `runs`; returns the handlers that reached `limit` just now (parked from now on).
    fn count(&mut self, runs: &[Ran<'_>], limit: u32) -> Vec<Entry> {
        let mut parked = Vec::new();
        for run in runs {
            let command = capped(run.command);
            let at = self
                .handlers
                .iter()
                .position(|e| e.plugin == run.plugin && e.command == command);
            match (at, run.failed) {
                (Some(at), false) => {
                    self.handlers.remove(at);
                }
                (None, false) => {}
                (Some(at), true) => {
                    let entry = &mut self.handlers[at];
                    entry.fails = entry.fails.saturating_add(1);
                    if !entry.parked && entry.fails >= limit {
                        entry.parked = true;
                        parked.push(entry.clone());
                    }
                }
                (None, true) => {
                    let entry = Entry {
                        plugin: run.plugin.to_string(),
                        command,
                        fails: 1,
                        parked: limit <= 1,
                    };
                    if entry.parked {
                        parked.push(entry.clone());
                    }
                    self.handlers.push(entry);
                }
            }
        }
        // Bounded: the oldest handlers that are not parked go first.
        while self.handlers.len() > ENTRIES {
            let at = self.handlers.iter().position(|e| !e.parked).unwrap_or(0);
            self.handlers.remove(at);
        }
        parked
    }
}

/// Counts a call's runs in the session's record, under the session's breaker lock, and writes
/// it only when it changed. Returns the handlers parked just now.
pub fn record(
    state: &StateDir,
    session: Option<&str>,
    runs: &[Ran<'_>],
    limit: u32,
    known: &Breaker,
) -> Result<Vec<Entry>, StateError> {
    // Nothing that failed, nothing that failed before: nothing to write (the common call).
    if !runs.iter().any(|r| r.failed) && known.handlers.is_empty() {
        return Ok(Vec::new());
    }
    let key = session_key(session);
    let _lock = Lock::acquire(
        &state.dir("locks"),
        &format!("breaker-{key}"),
        Duration::from_secs(2),
    )?;
    let file = path(state, session);
    let mut breaker = files::read_json::<Breaker>(&file)?.unwrap_or_default();
    let before = breaker.clone();
    let parked = breaker.count(runs, limit);
    if breaker != before {
        files::private_dir(&session::dir(state))?;
        if breaker.handlers.is_empty() {
            let _ = std::fs::remove_file(&file);
        } else {
            files::write_json_with(&file, &breaker, files::Durability::Disposable)?;
        }
    }
    Ok(parked)
}

/// Every session's parked handlers: (session file's key, entry), for `doctor`.
pub fn all_parked(state: &StateDir) -> Vec<(String, Entry)> {
    let mut out = Vec::new();
    for (key, breaker) in every(state) {
        out.extend(
            breaker
                .handlers
                .into_iter()
                .filter(|e| e.parked)
                .map(|e| (key.clone(), e)),
        );
    }
    out
}

/// `hooks enable NAME`: the plugin `name`'s handlers run again in every session. Returns the
/// entries that were parked.
pub fn unpark(state: &StateDir, name: &str) -> Result<Vec<(String, Entry)>, StateError> {
    let mut freed = Vec::new();
    for (key, _) in every(state) {
        let _lock = Lock::acquire(
            &state.dir("locks"),
            &format!("breaker-{key}"),
            Duration::from_secs(2),
        )?;
        let file = session::dir(state).join(format!("{key}{SUFFIX}"));
        let Some(mut breaker) = files::read_json::<Breaker>(&file)? else {
            continue;
        };
        let is_it = |e: &Entry| e.plugin.split_once(':').is_some_and(|(_, n)| n == name);
        freed.extend(
            breaker
                .handlers
                .iter()
                .filter(|e| e.parked && is_it(e))
                .map(|e| (key.clone(), e.clone())),
        );
        let before = breaker.handlers.len();
        breaker.handlers.retain(|e| !is_it(e));
        if breaker.handlers.len() != before {
            if breaker.handlers.is_empty() {
                let _ = std::fs::remove_file(&file);
            } else {
                files::write_json_with(&file, &breaker, files::Durability::Disposable)?;
            }
        }
    }
    Ok(freed)
}

/// Every session's record, by session key (at most a few hundred files: the directory is pruned).
fn every(state: &StateDir) -> Vec<(String, Breaker)> {
    let Ok(entries) = std::fs::read_dir(session::dir(state)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            let key = name.strip_suffix(SUFFIX)?.to_string();
            let breaker = read_small(&entry.path())?;
            Some((key, breaker))
        })
        .collect()
}

fn read_small(path: &std::path::Path) -> Option<Breaker> {
    let text = crate::bounded::read_text(path, 64 * 1024).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(plugin: &'static str, failed: bool) -> Ran<'static> {
        Ran {
            plugin,
            command: "fmt.sh",
            failed,
        }
    }

    #[test]
    fn parks_after_n_in_a_row_and_a_success_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let s = Some("sess");
        let run = |failed: bool| {
            let known = Breaker::load(&state, s);
            record(&state, s, &[ran("user:fmt", failed)], 3, &known).unwrap()
        };
        assert!(run(true).is_empty());
        assert!(run(true).is_empty());
        assert!(run(false).is_empty(), "a success resets the count");
        assert!(!path(&state, s).exists(), "no failures: no file");
        assert!(run(true).is_empty());
        assert!(run(true).is_empty());
        let parked = run(true);
        assert_eq!(parked.len(), 1, "parked at the third in a row");
        assert!(Breaker::load(&state, s).parked("user:fmt", "fmt.sh"));
        assert!(run(true).is_empty(), "reported once");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(path(&state, s)).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        // Another session: not parked.
        assert!(!Breaker::load(&state, Some("other")).parked("user:fmt", "fmt.sh"));
        assert_eq!(all_parked(&state).len(), 1);
        // `hooks enable fmt`.
        assert_eq!(unpark(&state, "fmt").unwrap().len(), 1);
        assert!(!Breaker::load(&state, s).parked("user:fmt", "fmt.sh"));
        assert!(all_parked(&state).is_empty());
    }

    #[test]
    fn bounded() {
        let mut breaker = Breaker::default();
        let names: Vec<String> = (0..ENTRIES * 2).map(|i| format!("user:p{i}")).collect();
        let long = "x".repeat(COMMAND_CAP * 3);
        let runs: Vec<Ran<'_>> = names
            .iter()
            .map(|n| Ran {
                plugin: n,
                command: &long,
                failed: true,
            })
            .collect();
        breaker.count(&runs, 5);
        assert_eq!(breaker.handlers.len(), ENTRIES);
        assert!(
            breaker
                .handlers
                .iter()
                .all(|e| e.command.len() == COMMAND_CAP)
        );
    }

    #[test]
    fn the_limit() {
        let of = |v: Option<&str>| limit(&|_| v.map(str::to_string));
        assert_eq!(of(None), Some(DEFAULT_LIMIT));
        assert_eq!(of(Some("2")), Some(2));
        assert_eq!(of(Some("0")), None);
        assert_eq!(of(Some("many")), Some(DEFAULT_LIMIT));
    }
}
