//! Qwen Code: the `hooks` key of `~/.qwen/settings.json` (user) and
//! `<project>/.qwen/settings.json` (project). No local scope.

use std::path::PathBuf;

use amplihack_settings::safe_file::Syntax;

use crate::scopes::{Locations, Scope};

/// Qwen Code reads its settings with comments and trailing commas allowed.
pub const SYNTAX: Syntax = Syntax::Jsonc;

pub fn registration_file(locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(locations.home.join(".qwen/settings.json")),
        Scope::Project => Some(locations.project.join(".qwen/settings.json")),
        Scope::Local | Scope::Managed => None,
    }
}
