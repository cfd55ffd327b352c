//! Factory's Droid: the `hooks` key of `~/.factory/settings.json` (user),
//! `<project>/.factory/settings.json` (project) and `settings.local.json` (local).

use std::path::{Path, PathBuf};

use amplihack_settings::safe_file::Syntax;

use super::{Host, HostSpec, Registration};
use crate::scopes::Scope;

/// Droid's settings are read as JSONC too: a file with comments installs and uninstalls with
/// every comment kept (harmless if Droid itself never allows them).
pub const SYNTAX: Syntax = Syntax::Jsonc;

pub const SPEC: HostSpec = HostSpec {
    host: Host::Droid,
    files: &[
        (Scope::User, |l| l.home.join(".factory/settings.json")),
        (Scope::Project, |l| l.project.join(".factory/settings.json")),
        (Scope::Local, |l| {
            l.project.join(".factory/settings.local.json")
        }),
    ],
    home: |l| l.home.join(".factory"),
    always_found: false,
    syntax: SYNTAX,
    registration: Registration::JsonHooks,
    stamps: &[],
    trust_note: None,
    shadowed: Some(|registration| {
        shadowed_by(registration).map(|hooks| shadowed_message(registration, &hooks))
    }),
    sessions: None,
};

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
