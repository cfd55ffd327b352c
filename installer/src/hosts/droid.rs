//! Factory's Droid: the `hooks` key of `~/.factory/settings.json` (user),
//! `<project>/.factory/settings.json` (project) and `settings.local.json` (local).

use std::path::{Path, PathBuf};

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

/// The file Droid reads hooks from instead of `registration`'s `hooks` key: a `hooks.json`
/// beside it, when there is one. Droid 0.225.2 then ignores the settings file's hooks entirely
/// (observed: a hook in each, only `hooks.json`'s ran), so amplihack's entries would never run.
pub fn shadowed_by(registration: &Path) -> Option<PathBuf> {
    let hooks = registration.with_file_name("hooks.json");
    hooks.is_file().then_some(hooks)
}

/// What to tell the user when [`shadowed_by`] finds a `hooks.json`: the problem, and the fix.
pub fn shadowed_message(registration: &Path, hooks: &Path) -> (String, String) {
    (
        format!(
            "Droid reads its hooks from {} and then ignores the `hooks` key of {}, where amplihack's entries are: they do not run",
            hooks.display(),
            registration.display()
        ),
        format!(
            "move the events in {} into the `hooks` key of {} and remove {} (Droid reads one or the other)",
            hooks.display(),
            registration.display(),
            hooks.display()
        ),
    )
}
