//! Cline CLI: its hook files (a script per event) cannot deny one tool (their only block,
//! `cancel`, ends the whole task and the model never learns why) and cannot add context before
//! the first tool. Its plugin API can: `beforeTool` → `{skip, reason}` skips that one call and the
//! model reads the reason as its result, `beforeRun` → `{appendContext}` reaches the first
//! request. So amplihack's registration is its own bridge plugin
//! (`installer/assets/cline/amplihack.js`), written with the absolute path of `amplihack-hooks`
//! into Cline's plugin folder: `~/.cline/plugins/` for the user (`$CLINE_DIR/plugins` when that
//! is set), `<project>/.cline/plugins/` for a project, which Cline loads with no consent. It
//! sits beside the user's own plugins and hook files, never over one (docs/src/hosts/cline.md).

use std::path::{Path, PathBuf};

use super::bridge_file::BridgeFile;
use super::sessions::{HostSession, Sessions, claude_project_name};
use super::{Host, HostSpec, Registration};
use crate::scopes::{Locations, Scope};

/// The plugin file's name in a plugin folder.
pub const PLUGIN_FILE: &str = "amplihack.js";

/// The bridge plugin.
pub const BRIDGE: BridgeFile = BridgeFile {
    host: Host::Cline,
    file: PLUGIN_FILE,
    template: include_str!("../../assets/cline/amplihack.js"),
    header: "// amplihack bridge plugin for Cline:",
    kind: "bridge plugin",
    project_dir: ".cline/plugins",
};

/// Cline's directory for this user: `$CLINE_DIR`, else `~/.cline`.
pub fn home(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::CLINE_DIR)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".cline"), PathBuf::from)
}

/// The bridge plugin's path: the user's plugin folder, or the project's `.cline/plugins/`
/// (Cline has no local or managed scope).
pub const SPEC: HostSpec = HostSpec {
    host: Host::Cline,
    files: &[
        (Scope::User, |l| home(l).join("plugins").join(PLUGIN_FILE)),
        (Scope::Project, |l| {
            l.project.join(".cline/plugins").join(PLUGIN_FILE)
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
        where_kept: "~/.cline/data/sessions/<session>/<session>.json",
        list: sessions,
        causes: &[
            (
                "a Cline that loads no plugin from ~/.cline/plugins (another `--config` directory or $CLINE_DIR than the one amplihack installed into)",
                "install again with the same CLINE_DIR, or run Cline without the other directory",
            ),
            (
                "Cline's plugin process not loading in its 4 s (a busy machine; ~/.cline/data/logs/cline.log says \"plugin loading failed; continuing without plugins\")",
                "give it longer: export CLINE_PLUGIN_IMPORT_TIMEOUT_MS=30000",
            ),
            (
                "plugins turned off or filtered in Cline's settings",
                "let Cline load ~/.cline/plugins/amplihack.js",
            ),
            (
                "a binary that moved or was removed",
                "amplihack doctor --fix",
            ),
        ],
    }),
};

/// The largest session record read (Cline's are about 1 KB).
const RECORD_LIMIT: u64 = 1 << 20;

/// Cline's session records: `~/.cline/data/sessions/<id>/<id>.json`, the id the one the bridge
/// sends as `session_id`, its `cwd` the project.
fn sessions(locations: &Locations) -> Vec<HostSession> {
    let Ok(dirs) = std::fs::read_dir(home(locations).join("data/sessions")) else {
        return Vec::new();
    };
    dirs.flatten()
        .filter_map(|dir| {
            let id = dir.file_name().to_string_lossy().into_owned();
            let path = dir.path().join(format!("{id}.json"));
            let meta = std::fs::metadata(&path).ok()?;
            if !meta.is_file() || meta.len() > RECORD_LIMIT {
                return None;
            }
            let record: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            let project = record
                .get("cwd")
                .and_then(serde_json::Value::as_str)
                .map(|cwd| claude_project_name(Path::new(cwd)));
            Some(HostSession {
                id,
                modified: meta.modified().ok()?,
                path,
                project,
            })
        })
        .collect()
}
