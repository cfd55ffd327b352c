//! Claude Code: the `hooks` key of its settings files: `~/.claude/settings.json` (or
//! `$CLAUDE_CONFIG_DIR`), `<project>/.claude/settings.json`, `settings.local.json`, and the
//! machine's managed settings (root writes them).

use amplihack_settings::safe_file::Syntax;

use super::sessions::{HostSession, Sessions, jsonl_files};
use super::{Host, HostSpec, Registration};
use crate::scopes::Locations;
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
    sessions: Some(Sessions {
        where_kept: "~/.claude/projects/<project>/<session>.jsonl",
        list: sessions,
        causes: &[
            (
                "hooks switched off: `disableAllHooks: true` in a settings file (or in `--settings`)",
                "remove `disableAllHooks` (`/hooks` in Claude Code shows it)",
            ),
            (
                "a policy that allows only managed hooks: `allowManagedHooksOnly: true` in the managed settings",
                "an administrator registers amplihack for every user: `sudo amplihack install --scope managed`",
            ),
            (
                "a project whose settings Claude Code does not trust yet (it asks once per folder)",
                "start `claude` in the project and accept the folder, or use --scope user",
            ),
            (
                "a binary that moved or was removed",
                "amplihack doctor --fix",
            ),
        ],
    }),
};

/// Claude Code's transcripts: `<config dir>/projects/<project>/<session id>.jsonl` (a
/// subagent's, in a directory below, are not sessions).
fn sessions(locations: &Locations) -> Vec<HostSession> {
    jsonl_files(&locations.claude_config_dir.join("projects"), 1)
        .into_iter()
        .filter_map(|(path, modified)| {
            let id = path.file_stem()?.to_string_lossy().into_owned();
            let project = path.parent()?.file_name()?.to_string_lossy().into_owned();
            Some(HostSession {
                id,
                project: Some(project),
                path,
                modified,
            })
        })
        .collect()
}
