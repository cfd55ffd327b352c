//! Factory's Droid: the `hooks` key of `~/.factory/settings.json` (user),
//! `<project>/.factory/settings.json` (project) and `settings.local.json` (local).

use std::path::PathBuf;

use amplihack_settings::safe_file::Syntax;

use crate::scopes::{Locations, Scope};

/// Droid's settings are read as JSONC too: a file with comments installs and uninstalls with
/// every comment kept (harmless if Droid itself never allows them).
pub const SYNTAX: Syntax = Syntax::Jsonc;

pub fn registration_file(locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(locations.home.join(".factory/settings.json")),
        Scope::Project => Some(locations.project.join(".factory/settings.json")),
        Scope::Local => Some(locations.project.join(".factory/settings.local.json")),
        Scope::Managed => None,
    }
}
