//! Qwen Code: the `hooks` key of `~/.qwen/settings.json` (user) and
//! `<project>/.qwen/settings.json` (project). No local scope.

use std::path::PathBuf;

use amplihack_settings::safe_file::Syntax;

use crate::scopes::{Locations, Scope};

/// Qwen Code reads its settings with comments and trailing commas allowed.
pub const SYNTAX: Syntax = Syntax::Jsonc;

/// What Qwen Code writes into any settings file it loads (0.24.4 migrates a file without it):
/// in a file amplihack created, Qwen's reaction to amplihack's entries, not the user's.
pub const STAMPS: &[&str] = &["$version"];

pub fn registration_file(locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(locations.home.join(".qwen/settings.json")),
        Scope::Project => Some(locations.project.join(".qwen/settings.json")),
        Scope::Local | Scope::Managed => None,
    }
}
