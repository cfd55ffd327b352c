//! What `amplihack install` did, so that `uninstall`, `doctor`, `update` and the session-start
//! checks find it again: `<state>/install.json` with the bin directory, the version deployed and
//! every settings file that holds a registration (in any project).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StateDir;
use crate::files::{self, Lock, StateError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin_dir: Option<PathBuf>,
    /// The version of the binaries `install` deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default)]
    pub registrations: Vec<Registration>,
    /// The hosts `install` installed for (`claude`, `amplifier`): what `doctor` checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Settings files `install` created (they did not exist before): `uninstall` removes them
    /// again when nothing but amplihack's entries was ever in them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<PathBuf>,
    /// Settings files that had no `hooks` key before `install` added one: `uninstall` takes the
    /// key out again when it is left empty, so the file comes back byte for byte.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks_key_added: Vec<PathBuf>,
    /// Event keys that held an empty array (`"Stop": []`) before `install` added to them, per
    /// file: the user's, so `uninstall` leaves them, empty again, where it removes the ones it
    /// emptied otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_events: Vec<EmptyEvent>,
    /// Man pages and completion scripts `install` wrote, and the directories it made for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub docs: Vec<PathBuf>,
    /// A host's own directory in the home (`~/.claude`, `~/.copilot`) that `install` created:
    /// `uninstall` removes it again when empty. One that was there before is the host's, kept
    /// even when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
    /// `install --fail-closed` was asked (and not undone by `--fail-open`): amplihack's
    /// PreToolUse entries refuse the tool when `amplihack-hooks` is missing or crashes, where
    /// the host has a switch for it. `install`, `doctor --fix` and `update` keep it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_closed: bool,
}

/// An event key of a settings file that was the user's and empty before install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmptyEvent {
    pub path: PathBuf,
    pub event: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// `claude` or `amplifier`.
    pub host: String,
    /// `user`, `project` or `local`.
    pub scope: String,
    pub path: PathBuf,
    /// When it was first registered (seconds since the Unix epoch): a session the host ran
    /// after this that did not call amplihack is reported by `doctor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
}

impl Manifest {
    pub fn is_empty(&self) -> bool {
        self.registrations.is_empty()
            && self.bin_dir.is_none()
            && self.created.is_empty()
            && self.hooks_key_added.is_empty()
            && self.empty_events.is_empty()
            && self.hosts.is_empty()
            && self.created_dirs.is_empty()
    }
}

pub fn path(state: &StateDir) -> PathBuf {
    state.file("install.json")
}

pub fn load(state: &StateDir) -> Result<Manifest, StateError> {
    Ok(files::read_json(&path(state))?.unwrap_or_default())
}

/// Changes the manifest under its lock. A manifest left with nothing in it is removed.
pub fn update(state: &StateDir, change: impl FnOnce(&mut Manifest)) -> Result<(), StateError> {
    let _lock = Lock::acquire(&state.dir("locks"), "install", files::LOCK_TIMEOUT)?;
    let mut manifest = load(state)?;
    let before = manifest.clone();
    change(&mut manifest);
    if manifest == before {
        // Nothing to record: no write, no fsync (a re-install changes nothing here).
        return Ok(());
    }
    let file = path(state);
    if manifest.is_empty() {
        match std::fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(files::io_error(&file, "remove")(e)),
        }
    } else {
        files::write_json(&file, &manifest)
    }
}

/// Whether `path` is recorded for `host`.
pub fn records(manifest: &Manifest, host: &str, path: &Path) -> bool {
    manifest
        .registrations
        .iter()
        .any(|r| r.host == host && r.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A re-install records nothing new: no write, no fsync (an atomic rewrite has a new inode).
    #[test]
    fn an_update_that_changes_nothing_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(dir.path());
        let inode = || std::fs::metadata(path(&state)).expect("manifest").ino();
        update(&state, |m| m.hosts.push("claude".into())).expect("first");
        let first = inode();
        update(&state, |m| m.hosts.dedup()).expect("unchanged");
        assert_eq!(inode(), first, "rewritten without a change");
        update(&state, |m| m.hosts.push("amplifier".into())).expect("changed");
        assert_ne!(inode(), first, "a change is written");
    }
}
