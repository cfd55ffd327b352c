//! The memory store: one file per project, `<state>/memory/<project>-<hash>.jsonl`, one entry a
//! line, readable with `cat` and greppable. Entries carry time, project, agent (optional), kind
//! and text. amplihack writes a `session` entry per session (updated at each stop, finished at
//! session end); `amplihack memory add` writes `note` entries, optionally for one agent.
//!
//! Appends are single whole-line writes; rewrites (update, forget) happen under the store's lock
//! and refuse a file with a line that does not parse, naming the file and the line.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::files::{self, Lock, StateError};
use crate::{StateDir, time};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub time: String,
    pub project: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `session`, `note`, `reflection`, ...
    pub kind: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl Entry {
    pub fn new(project: &Path, kind: &str, text: &str) -> Entry {
        let time = time::utc_now();
        let project = project.to_string_lossy().into_owned();
        let seed = format!("{}\0{project}\0{kind}\0{text}", time::now_unix().as_nanos());
        Entry {
            id: format!("m-{}", &hex(&Sha256::digest(seed.as_bytes()))[..10]),
            time,
            project,
            agent: None,
            kind: kind.to_string(),
            text: text.to_string(),
            session: None,
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub struct Store {
    path: PathBuf,
    locks: PathBuf,
    lock_name: String,
}

impl Store {
    /// The store of the project rooted at `project`.
    pub fn for_project(state: &StateDir, project: &Path) -> Store {
        let file = crate::project_stem(project);
        Store {
            path: state.dir("memory").join(format!("{file}.jsonl")),
            locks: state.dir("locks"),
            lock_name: format!("memory-{file}"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> Result<Lock, StateError> {
        Lock::acquire(&self.locks, &self.lock_name, files::LOCK_TIMEOUT)
    }

    /// Every entry, oldest first. A line that does not parse is an error naming it.
    pub fn entries(&self) -> Result<Vec<Entry>, StateError> {
        let Some(text) = files::read_optional(&self.path)? else {
            return Ok(Vec::new());
        };
        parse(&self.path, &text)
    }

    pub fn add(&self, entry: &Entry) -> Result<(), StateError> {
        let line = serde_json::to_string(entry).map_err(|e| StateError::Corrupt {
            path: self.path.clone(),
            problem: e.to_string(),
        })?;
        let _lock = self.lock()?;
        files::append_line(&self.path, &line)
    }

    /// Replaces the entry with `id` by `change(existing)`; adds it when there is none.
    pub fn upsert(
        &self,
        id: &str,
        change: impl FnOnce(Option<Entry>) -> Entry,
    ) -> Result<(), StateError> {
        let _lock = self.lock()?;
        let mut entries = self.entries()?;
        match entries.iter().position(|e| e.id == id) {
            Some(i) => {
                let updated = change(Some(entries[i].clone()));
                entries[i] = updated;
            }
            None => entries.push(change(None)),
        }
        self.rewrite(&entries)
    }

    /// Removes the entries whose id starts with `prefix` (at least 4 characters); returns them.
    pub fn forget(&self, prefix: &str) -> Result<Vec<Entry>, StateError> {
        let _lock = self.lock()?;
        let entries = self.entries()?;
        let (gone, kept): (Vec<Entry>, Vec<Entry>) = entries
            .into_iter()
            .partition(|e| prefix.len() >= 4 && e.id.starts_with(prefix));
        if !gone.is_empty() {
            self.rewrite(&kept)?;
        }
        Ok(gone)
    }

    fn rewrite(&self, entries: &[Entry]) -> Result<(), StateError> {
        let mut text = String::new();
        for entry in entries {
            let line = serde_json::to_string(entry).map_err(|e| StateError::Corrupt {
                path: self.path.clone(),
                problem: e.to_string(),
            })?;
            text.push_str(&line);
            text.push('\n');
        }
        files::replace(&self.path, text.as_bytes())
    }
}

fn parse(path: &Path, text: &str) -> Result<Vec<Entry>, StateError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| StateError::Corrupt {
                path: path.to_path_buf(),
                problem: format!("line {}: {e}", i + 1),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_upsert_forget_round_trip() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path());
        let project = Path::new("/work/my project");
        let store = Store::for_project(&state, project);
        let mut note = Entry::new(project, "note", "use tabs");
        note.agent = Some("builder".into());
        store.add(&note).expect("add");
        store
            .upsert("session-s1", |old| {
                let mut e = old.unwrap_or_else(|| Entry::new(project, "session", ""));
                e.id = "session-s1".into();
                e.text = "first".into();
                e
            })
            .expect("upsert");
        store
            .upsert("session-s1", |old| {
                let mut e = old.expect("exists");
                e.text = "second".into();
                e
            })
            .expect("upsert again");
        let entries = store.entries().expect("entries");
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0], note);
        assert_eq!(entries[1].text, "second");
        assert!(
            store.forget("m-").expect("forget").is_empty(),
            "prefix too short"
        );
        assert_eq!(store.forget(&note.id[..6]).expect("forget").len(), 1);
        assert_eq!(store.entries().expect("entries").len(), 1);
        // Another project has its own file.
        let other = Store::for_project(&state, Path::new("/work/other"));
        assert_ne!(other.path(), store.path());
    }

    #[test]
    fn a_damaged_line_stops_rewrites_and_is_named() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path());
        let store = Store::for_project(&state, Path::new("/p"));
        store
            .add(&Entry::new(Path::new("/p"), "note", "a"))
            .expect("add");
        files::append_line(store.path(), "{oops").expect("damage");
        let before = std::fs::read_to_string(store.path()).expect("read");
        let err = store.forget("m-00000").expect_err("refused");
        assert!(err.to_string().contains("line 2"), "{err}");
        assert_eq!(std::fs::read_to_string(store.path()).expect("read"), before);
    }
}
