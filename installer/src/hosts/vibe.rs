//! Mistral Vibe: amplihack's entries are `[[hooks]]` tables ([`super::toml_hooks`]) in
//! `$VIBE_HOME/hooks.toml` (default `~/.vibe/hooks.toml`) for the user, and in a project's
//! `.vibe/hooks.toml`, which Vibe reads only in a folder the user trusted (its
//! `trusted_folders.toml`, or `vibe --trust` for one run). No local or managed scope.

use std::path::{Path, PathBuf};

use super::{Host, HostSpec, Note, Registration, Target};
use crate::scopes::{Locations, Scope};

/// Vibe's home directory: `$VIBE_HOME`, else `~/.vibe`.
pub fn home(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::VIBE_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".vibe"), PathBuf::from)
}

pub const SPEC: HostSpec = HostSpec {
    host: Host::Vibe,
    files: &[
        (Scope::User, |l| home(l).join("hooks.toml")),
        (Scope::Project, |l| l.project.join(".vibe/hooks.toml")),
    ],
    home,
    always_found: false,
    syntax: amplihack_settings::safe_file::Syntax::Json,
    registration: Registration::TomlHooks,
    stamps: &[],
    trust_note: Some(trust_note),
    shadowed: None,
    sessions: Some(super::sessions::Sessions {
        where_kept: "$VIBE_HOME/logs/session/unified/<session>/",
        list: sessions,
        causes: &[
            (
                "a project Vibe does not trust (it reads a project's .vibe/hooks.toml only in a trusted folder)",
                "trust the folder in Vibe (its prompt, or `vibe --trust`), or use --scope user",
            ),
            (
                "a hook name used twice across Vibe's files (Vibe skips the second)",
                "remove the other entry named amplihack-*",
            ),
            (
                "a binary that moved or was removed",
                "amplihack doctor --fix",
            ),
        ],
    }),
};

/// What keeps a project's `.vibe/hooks.toml` that amplihack created (this machine's binary path)
/// out of the project's commits: the project and the pattern for its `.git/info/exclude`. None
/// for the user scope and other hosts.
pub fn git_exclusion(target: &Target) -> Option<(PathBuf, &'static str)> {
    if target.host != Host::Vibe || target.scope != Scope::Project {
        return None;
    }
    let project = target.path.ancestors().nth(2)?;
    Some((project.to_path_buf(), "/.vibe/*hooks.toml*"))
}

/// A project's `.vibe/hooks.toml` runs only in a folder Vibe trusts: the project, or a folder
/// above it, in `trusted_folders.toml`'s `trusted` list (none of them in `untrusted` nearer).
fn trust_note(scope: Scope, file: &Path, home: &Path) -> Option<Note> {
    if scope != Scope::Project {
        return None;
    }
    let project = file.parent()?.parent()?;
    let vibe_home = std::env::var_os(amplihack_env::VIBE_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| home.join(".vibe"), PathBuf::from);
    let store = vibe_home.join("trusted_folders.toml");
    let doc = amplihack_settings::safe_file::read_text(&store)
        .ok()
        .flatten()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok());
    let list = |key: &str| -> Vec<PathBuf> {
        doc.as_ref()
            .and_then(|d| d.get(key))
            .and_then(|i| i.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (trusted, untrusted) = (list("trusted"), list("untrusted"));
    let resolved = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    for dir in resolved.ancestors() {
        if trusted.iter().any(|t| t == dir) {
            return None;
        }
        if untrusted.iter().any(|t| t == dir) {
            break;
        }
    }
    Some((
        format!(
            "Mistral Vibe reads {} only in a folder you trusted, and {} is not trusted in {}: amplihack's project hooks do not run there until then",
            file.display(),
            project.display(),
            store.display()
        ),
        "trust the folder when Vibe asks (or run `vibe --trust` there), or use --scope user".into(),
    ))
}

/// Vibe's session records: a directory per session under `$VIBE_HOME/logs/session/unified/`,
/// named by the id its hooks get as `session_id` (their `transcript_path`), with a `meta.json`.
fn sessions(locations: &Locations) -> Vec<super::sessions::HostSession> {
    let dir = home(locations).join("logs/session/unified");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let Ok(modified) = meta.modified() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if meta.is_dir() && entry.path().join("meta.json").is_file() {
            found.push(super::sessions::HostSession {
                id: name,
                path: entry.path(),
                modified,
                project: None,
            });
        }
    }
    found
}
