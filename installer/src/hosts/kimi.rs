//! Kimi CLI (Python, 1.52.0, its final release): amplihack's entries are `[[hooks]]` tables
//! ([`super::toml_hooks`]) in `$KIMI_SHARE_DIR/config.toml` (default `~/.kimi/config.toml`),
//! which also holds the user's models and providers. Kimi reads no project hooks: the user scope
//! only, so no trust step.

use std::path::PathBuf;

use super::{Host, HostSpec, Registration};
use crate::scopes::{Locations, Scope};

/// Kimi's home directory: `$KIMI_SHARE_DIR`, else `~/.kimi`.
pub fn home(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::KIMI_SHARE_DIR)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".kimi"), PathBuf::from)
}

pub const SPEC: HostSpec = HostSpec {
    host: Host::Kimi,
    files: &[(Scope::User, |l| home(l).join("config.toml"))],
    home,
    always_found: false,
    syntax: amplihack_settings::safe_file::Syntax::Json,
    registration: Registration::TomlHooks,
    stamps: &[],
    trust_note: None,
    shadowed: None,
    sessions: Some(super::sessions::Sessions {
        where_kept: "$KIMI_SHARE_DIR/sessions/<project>/<session>/",
        list: sessions,
        causes: &[
            (
                "Kimi run with --config-file or --config (they replace config.toml, hooks and all)",
                "run it without them, or add amplihack's [[hooks]] tables to that file",
            ),
            (
                "a binary that moved or was removed",
                "amplihack doctor --fix",
            ),
        ],
    }),
};

/// Kimi's session records: `$KIMI_SHARE_DIR/sessions/<project hash>/<session id>/`.
fn sessions(locations: &Locations) -> Vec<super::sessions::HostSession> {
    let mut found = Vec::new();
    let projects = std::fs::read_dir(home(locations).join("sessions"));
    for project in projects.into_iter().flatten().flatten() {
        for entry in std::fs::read_dir(project.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(meta) = entry.metadata() else { continue };
            let Ok(modified) = meta.modified() else {
                continue;
            };
            if meta.is_dir() {
                found.push(super::sessions::HostSession {
                    id: entry.file_name().to_string_lossy().into_owned(),
                    path: entry.path(),
                    modified,
                    project: None,
                });
            }
        }
    }
    found
}
