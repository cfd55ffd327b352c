//! Plugins the user disabled with `amplihack hooks disable`: `<state>/plugins.json`,
//! `{"disabled": ["<plugin directory>", ...]}`. Kept here rather than in the plugin's own files, so
//! disabling a project plugin does not disturb its trust.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StateDir;
use crate::files::{self, Lock, StateError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plugins {
    #[serde(default)]
    pub disabled: Vec<String>,
}

pub fn path(state: &StateDir) -> PathBuf {
    state.file("plugins.json")
}

pub fn load(state: &StateDir) -> Result<Plugins, StateError> {
    Ok(files::read_json(&path(state))?.unwrap_or_default())
}

/// The disabled plugin directories (none when the file is missing or unreadable).
pub fn disabled(state: &StateDir) -> Vec<PathBuf> {
    load(state)
        .map(|p| p.disabled.into_iter().map(PathBuf::from).collect())
        .unwrap_or_default()
}

/// Marks plugin directories disabled (or enabled again).
pub fn set_disabled(state: &StateDir, roots: &[&Path], disabled: bool) -> Result<(), StateError> {
    let _lock = Lock::acquire(&state.dir("locks"), "plugins", files::LOCK_TIMEOUT)?;
    let mut plugins = load(state)?;
    for root in roots {
        let root = root.to_string_lossy().into_owned();
        plugins.disabled.retain(|d| *d != root);
        if disabled {
            plugins.disabled.push(root);
        }
    }
    files::write_json(&path(state), &plugins)
}
