//! Claude Code: the `hooks` key of its settings files: `~/.claude/settings.json` (or
//! `$CLAUDE_CONFIG_DIR`), `<project>/.claude/settings.json`, `settings.local.json`, and the
//! machine's managed settings (root writes them).

use amplihack_settings::safe_file::Syntax;

use super::{Host, HostSpec, Registration};
use crate::scopes::Scope;

pub const SPEC: HostSpec = HostSpec {
    host: Host::ClaudeCode,
    files: &[
        (Scope::User, |l| l.claude_settings(Scope::User)),
        (Scope::Project, |l| l.claude_settings(Scope::Project)),
        (Scope::Local, |l| l.claude_settings(Scope::Local)),
        (Scope::Managed, |l| l.claude_settings(Scope::Managed)),
    ],
    home: |l| l.claude_config_dir.clone(),
    always_found: true,
    syntax: Syntax::Json,
    registration: Registration::JsonHooks,
    stamps: &[],
    trust_note: None,
    shadowed: None,
};
