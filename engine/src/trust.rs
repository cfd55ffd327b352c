//! Trust for project-level plugins, like `direnv allow`: a project's hooks come with a repository
//! someone cloned, so they run only after `amplihack hooks trust`, which records a SHA-256 of
//! every hooks file of the project. Any change (a file edited, added or removed) needs trust again.
//!
//! The record is `<state>/trust.json`: `{"projects": {"<project>": {"<hooks file>": "<sha256>"}}}`.
//! Only the hooks files are hashed, not the scripts they call (as direnv hashes only `.envrc`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

pub type Fingerprint = BTreeMap<String, String>;

pub fn store_path(state_dir: &Path) -> PathBuf {
    state_dir.join("trust.json")
}

/// SHA-256 of each file, by path. An unreadable file hashes as such (and so is never trusted).
pub fn fingerprint(files: &[PathBuf]) -> Fingerprint {
    files
        .iter()
        .map(|file| {
            let digest = match std::fs::read(file) {
                Ok(bytes) => Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect(),
                Err(e) => format!("unreadable: {e}"),
            };
            (file.to_string_lossy().into_owned(), digest)
        })
        .collect()
}

/// The fingerprint recorded for `project`, if any.
pub fn recorded(state_dir: &Path, project: &Path) -> Option<Fingerprint> {
    let text = std::fs::read_to_string(store_path(state_dir)).ok()?;
    let store: Value = serde_json::from_str(&text).ok()?;
    let entry = store
        .get("projects")?
        .get(project.to_string_lossy().as_ref())?
        .as_object()?;
    Some(
        entry
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect(),
    )
}

pub fn is_trusted(state_dir: &Path, project: &Path, files: &[PathBuf]) -> bool {
    !files.is_empty() && recorded(state_dir, project).is_some_and(|r| r == fingerprint(files))
}
