//! Gemini CLI: the `hooks` key of `~/.gemini/settings.json` (user) and
//! `<project>/.gemini/settings.json` (project, for a trusted folder). No local scope.

use amplihack_settings::safe_file::Syntax;

use super::{Host, HostSpec, Registration};
use crate::scopes::Scope;

/// Gemini CLI reads its settings with comments and trailing commas allowed.
pub const SYNTAX: Syntax = Syntax::Jsonc;

pub const SPEC: HostSpec = HostSpec {
    host: Host::Gemini,
    files: &[
        (Scope::User, |l| l.home.join(".gemini/settings.json")),
        (Scope::Project, |l| l.project.join(".gemini/settings.json")),
    ],
    home: |l| l.home.join(".gemini"),
    always_found: false,
    syntax: SYNTAX,
    registration: Registration::JsonHooks,
    stamps: &[],
    trust_note: None,
    shadowed: None,
    sessions: None,
};
