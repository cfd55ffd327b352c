//! Codex: amplihack's entries in `hooks.json` beside Codex's `config.toml`, in `$CODEX_HOME`
//! (default `~/.codex`) for the user scope and `<project>/.codex/` for the project scope (which
//! Codex loads only for a trusted project). No local scope.

use std::path::PathBuf;

use crate::scopes::{Locations, Scope};

/// Codex's home directory: `$CODEX_HOME`, else `~/.codex`.
pub fn home(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::CODEX_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".codex"), PathBuf::from)
}

pub fn registration_file(locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(home(locations).join("hooks.json")),
        Scope::Project => Some(locations.project.join(".codex/hooks.json")),
        Scope::Local | Scope::Managed => None,
    }
}
