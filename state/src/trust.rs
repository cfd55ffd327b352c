//! Trust for project-level plugins, like `direnv allow`: `<state>/trust.json` records a SHA-256
//! of every hooks file of each trusted project, `{"projects": {"<project>": {"<file>": "<sha>"}}}`.
//! Any change to those files (edited, added, removed) needs trust again. Only the hooks files are
//! hashed, not the scripts they call (as direnv hashes only `.envrc`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::StateDir;
use crate::files::{self, Lock, StateError};
use crate::memory::hex;

pub type Fingerprint = BTreeMap<String, String>;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrustStore {
    #[serde(default)]
    pub projects: BTreeMap<String, Fingerprint>,
}

pub fn path(state: &StateDir) -> PathBuf {
    state.file("trust.json")
}

/// SHA-256 of each file, by path. An unreadable file hashes as such (and so is never trusted).
pub fn fingerprint(files: &[PathBuf]) -> Fingerprint {
    files
        .iter()
        .map(|file| {
            let digest = match std::fs::read(file) {
                Ok(bytes) => hex(&Sha256::digest(&bytes)),
                Err(e) => format!("unreadable: {e}"),
            };
            (file.to_string_lossy().into_owned(), digest)
        })
        .collect()
}

pub fn load(state: &StateDir) -> Result<TrustStore, StateError> {
    Ok(files::read_json(&path(state))?.unwrap_or_default())
}

/// Whether `files` are exactly what was trusted for `project`.
pub fn is_trusted(state: &StateDir, project: &Path, files: &[PathBuf]) -> bool {
    !files.is_empty()
        && load(state).is_ok_and(|store| {
            store.projects.get(project.to_string_lossy().as_ref()) == Some(&fingerprint(files))
        })
}

/// Records (`Some`) or withdraws (`None`) trust for `project`.
pub fn set(
    state: &StateDir,
    project: &Path,
    fingerprint: Option<Fingerprint>,
) -> Result<(), StateError> {
    let _lock = Lock::acquire(&state.dir("locks"), "trust", files::LOCK_TIMEOUT)?;
    let mut store = load(state)?;
    let key = project.to_string_lossy().into_owned();
    match fingerprint {
        Some(f) => {
            store.projects.insert(key, f);
        }
        None => {
            store.projects.remove(&key);
        }
    }
    files::write_json(&path(state), &store)
}
