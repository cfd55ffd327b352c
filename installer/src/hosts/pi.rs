//! Pi (`@mariozechner/pi-coding-agent`): no command hooks. amplihack's registration is its own
//! bridge extension (`installer/assets/pi/amplihack.js`), written with the absolute path of
//! `amplihack-hooks` into Pi's extensions folder: `~/.pi/agent/extensions/` for the user,
//! `<project>/.pi/extensions/` for a project. Pi loads every `.js` file there in-process, a
//! project's with no consent; the extension runs `amplihack-hooks dispatch --host pi` per event
//! (docs/src/hosts/pi.md).

use std::path::{Path, PathBuf};

use super::bridge_file::BridgeFile;
use super::sessions::{HostSession, Sessions, claude_project_name, jsonl_files};
use super::{Host, HostSpec, Registration};
use crate::scopes::{Locations, Scope};

/// The extension file's name in an extensions folder.
pub const EXTENSION_FILE: &str = "amplihack.js";

/// The bridge extension.
pub const BRIDGE: BridgeFile = BridgeFile {
    host: Host::Pi,
    file: EXTENSION_FILE,
    template: include_str!("../../assets/pi/amplihack.js"),
    header: "// amplihack bridge extension for Pi:",
    kind: "bridge extension",
    project_dir: ".pi/extensions",
};

/// Pi's directory for this user (`~/.pi`; it keeps its settings, sessions and extensions in
/// `agent/` there).
fn home(locations: &Locations) -> PathBuf {
    locations.home.join(".pi")
}

/// The bridge extension's path: the user's extensions folder, or the project's
/// `.pi/extensions/` (Pi has no local or managed scope).
pub const SPEC: HostSpec = HostSpec {
    host: Host::Pi,
    files: &[
        (Scope::User, |l| {
            home(l).join("agent/extensions").join(EXTENSION_FILE)
        }),
        (Scope::Project, |l| {
            l.project.join(".pi/extensions").join(EXTENSION_FILE)
        }),
    ],
    home,
    always_found: false,
    syntax: amplihack_settings::safe_file::Syntax::Json,
    registration: Registration::BridgePlugin,
    stamps: &[],
    trust_note: None,
    shadowed: None,
    sessions: Some(Sessions {
        where_kept: "~/.pi/agent/sessions/--<project>--/<time>_<session>.jsonl",
        list: sessions,
        causes: &[
            (
                "Pi run with `--no-extensions` (or `-ne`), which loads no extension from a folder",
                "run Pi without it, or pass the extension with `-e ~/.pi/agent/extensions/amplihack.js`",
            ),
            (
                "an `extensions` filter in ~/.pi/agent/settings.json or .pi/settings.json that leaves amplihack.js out",
                "let the filter include amplihack.js",
            ),
            (
                "a binary that moved or was removed",
                "amplihack doctor --fix",
            ),
        ],
    }),
};

/// Pi's session records: `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, the id (a UUID)
/// the one the bridge sends as `session_id`; the folder names the project (its path, `/` as
/// `-`).
fn sessions(locations: &Locations) -> Vec<HostSession> {
    jsonl_files(&home(locations).join("agent/sessions"), 1)
        .into_iter()
        .filter_map(|(path, modified)| {
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            let id = stem.rsplit_once('_')?.1.to_string();
            // Pi's folder name is the path without its first `/`, each `/` as `-`, between `--`s:
            // as Claude Code's name for the same path.
            let project = path.parent().and_then(|d| d.file_name()).map(|d| {
                let inner = d.to_string_lossy();
                let inner = inner.strip_prefix("--").unwrap_or(&inner);
                let inner = inner.strip_suffix("--").unwrap_or(inner);
                claude_project_name(Path::new(&format!("/{inner}")))
            });
            (id.matches('-').count() == 4).then_some(HostSession {
                id,
                path,
                modified,
                project,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_project_scopes_only() {
        let locations = Locations {
            home: PathBuf::from("/h"),
            claude_config_dir: PathBuf::from("/h/.claude"),
            project: PathBuf::from("/p"),
        };
        assert_eq!(
            SPEC.file(&locations, Scope::User),
            Some(PathBuf::from("/h/.pi/agent/extensions/amplihack.js"))
        );
        assert_eq!(
            SPEC.file(&locations, Scope::Project),
            Some(PathBuf::from("/p/.pi/extensions/amplihack.js"))
        );
        assert_eq!(SPEC.file(&locations, Scope::Local), None);
    }
}
