//! A host's own records of the sessions it ran, for `doctor`'s check of a host that stopped
//! calling amplihack: each host that keeps them lists them ([`Sessions::list`]), and says why it
//! may run a session without calling a hook registered for it, each cause with its fix.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::scopes::Locations;

/// One session a host ran, as its own records show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSession {
    /// The id the host sends in its hook payloads (`session_id`).
    pub id: String,
    /// The host's record of it.
    pub path: PathBuf,
    /// When the host last wrote it.
    pub modified: SystemTime,
    /// The project it ran in, as the host names it in its records (Claude Code's directory
    /// name: the path with every other character than letters and digits as `-`); `None` when
    /// the record does not say.
    pub project: Option<String>,
}

/// What a host keeps of its sessions, and why one may not call amplihack.
pub struct Sessions {
    /// Where the records are, for a person.
    pub where_kept: &'static str,
    pub list: fn(&Locations) -> Vec<HostSession>,
    /// The likely causes of a session that did not call amplihack, each with its fix.
    pub causes: &'static [(&'static str, &'static str)],
}

/// Claude Code's name for a project in its records: the path, every character but ASCII
/// letters and digits as `-`.
pub fn claude_project_name(project: &Path) -> String {
    project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The `*.jsonl` files under `dir`, down to `depth` directory levels, with their modification
/// time (the ones that cannot be read are left out).
pub fn jsonl_files(dir: &Path, depth: usize) -> Vec<(PathBuf, SystemTime)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_dir() && depth > 0 {
            found.extend(jsonl_files(&path, depth - 1));
        } else if meta.is_file()
            && path.extension().is_some_and(|e| e == "jsonl")
            && let Ok(modified) = meta.modified()
        {
            found.push((path, modified));
        }
    }
    found
}
