//! Gemini CLI: the `hooks` key of `~/.gemini/settings.json` (user) and
//! `<project>/.gemini/settings.json` (project, for a trusted folder). No local scope.

use std::path::PathBuf;

use amplihack_settings::safe_file::Syntax;

use crate::scopes::{Locations, Scope};

/// Gemini CLI reads its settings with comments and trailing commas allowed.
pub const SYNTAX: Syntax = Syntax::Jsonc;

pub fn registration_file(locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(locations.home.join(".gemini/settings.json")),
        Scope::Project => Some(locations.project.join(".gemini/settings.json")),
        Scope::Local | Scope::Managed => None,
    }
}
