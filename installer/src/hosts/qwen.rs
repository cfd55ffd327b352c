//! Qwen Code: the `hooks` key of `~/.qwen/settings.json` (user) and
//! `<project>/.qwen/settings.json` (project). No local scope.

use amplihack_settings::safe_file::Syntax;

use super::{Host, HostSpec, Registration};
use crate::scopes::Scope;

/// Qwen Code reads its settings with comments and trailing commas allowed.
pub const SYNTAX: Syntax = Syntax::Jsonc;

/// What Qwen Code writes into any settings file it loads (0.24.4 migrates a file without it):
/// in a file amplihack created, Qwen's reaction to amplihack's entries, not the user's.
pub const STAMPS: &[&str] = &["$version"];

pub const SPEC: HostSpec = HostSpec {
    host: Host::Qwen,
    files: &[
        (Scope::User, |l| l.home.join(".qwen/settings.json")),
        (Scope::Project, |l| l.project.join(".qwen/settings.json")),
    ],
    home: |l| l.home.join(".qwen"),
    always_found: false,
    syntax: SYNTAX,
    registration: Registration::JsonHooks,
    stamps: STAMPS,
    trust_note: None,
    shadowed: None,
    sessions: None,
};
