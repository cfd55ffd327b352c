//! Copilot CLI: a hooks file of amplihack's own, in Claude Code's format:
//! `~/.copilot/hooks/amplihack.json` (user) and `<project>/.github/hooks/amplihack.json`
//! (project; Copilot loads it for a trusted folder). No local scope.

use std::path::PathBuf;

use crate::scopes::{Locations, Scope};

pub const FILE_NAME: &str = "amplihack.json";

pub fn registration_file(locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(locations.home.join(".copilot/hooks").join(FILE_NAME)),
        Scope::Project => Some(locations.project.join(".github/hooks").join(FILE_NAME)),
        Scope::Local | Scope::Managed => None,
    }
}
