//! Lock mode's state: `<state>/lock-mode/<project>-<hash>.json`, one record per locked project,
//! written by `amplihack lock` and removed by `amplihack unlock` (or when the lock expires or
//! its safety valve opens).
//!
//! It lives in amplihack's state, not in the work tree, so that only the user can lock a
//! project: a repository that commits `.claude/runtime/locks/.lock_active` and a
//! `.continuation_prompt` (the predecessor's files) switches nothing on.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::files::{self, StateError};
use crate::{StateDir, project_stem};

/// One locked project.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LockRecord {
    /// The project root, as the hooks see it.
    pub project: String,
    /// When it was locked (UTC, `time::utc_now_millis`); also names the lock episode.
    pub locked_at: String,
    /// What the agent is told at each stop (`amplihack lock --message`).
    pub message: Option<String>,
}

/// Where the record of `project` lives.
pub fn path(state: &StateDir, project: &Path) -> PathBuf {
    state
        .dir("lock-mode")
        .join(format!("{}.json", project_stem(project)))
}

/// The lock of `project`, if the user set one.
pub fn load(state: &StateDir, project: &Path) -> Result<Option<LockRecord>, StateError> {
    let found: Option<LockRecord> = files::read_json(&path(state, project))?;
    // Two project paths with the same stem (a hash collision) never share a lock.
    Ok(found.filter(|r| Path::new(&r.project) == project))
}

pub fn set(state: &StateDir, record: &LockRecord) -> Result<(), StateError> {
    files::write_json(&path(state, Path::new(&record.project)), record)
}

/// Removes the lock of `project`; whether there was one.
pub fn clear(state: &StateDir, project: &Path) -> Result<bool, StateError> {
    let file = path(state, project);
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(files::io_error(&file, "remove")(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_load_clear_per_project() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(dir.path());
        let (a, b) = (Path::new("/work/a"), Path::new("/other/a"));
        assert_eq!(load(&state, a).expect("load"), None);
        let record = LockRecord {
            project: "/work/a".into(),
            locked_at: "2026-01-01T00:00:00.000Z".into(),
            message: Some("finish".into()),
        };
        set(&state, &record).expect("set");
        assert_eq!(load(&state, a).expect("load"), Some(record));
        assert_eq!(
            load(&state, b).expect("load"),
            None,
            "same name, other project"
        );
        assert!(clear(&state, a).expect("clear"));
        assert!(!clear(&state, a).expect("again"));
        assert_eq!(load(&state, a).expect("load"), None);
    }
}
