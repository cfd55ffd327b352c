//! Claude Code's managed settings, which an organisation deploys to every machine: what they say
//! about hooks. With `allowManagedHooksOnly: true` (in `managed-settings.json` or a
//! `managed-settings.d/` drop-in) Claude Code runs no user, project, local or plugin hook, so an
//! amplihack registered anywhere but the managed scope silently does nothing (`doctor` says so).

use std::path::{Path, PathBuf};

use amplihack_settings::claude_paths;
use serde_json::Value;

use crate::registration;

/// Where amplihack's binaries go for the managed scope when `--bin-dir` names none: a place
/// every user of the machine can run them from (root's `~/.local/bin` is not).
pub const MANAGED_BIN_DIR: &str = "/usr/local/bin";

/// The key that keeps every hook but the managed ones from running.
pub const HOOKS_ONLY_KEY: &str = "allowManagedHooksOnly";

/// What the managed settings in one directory say about hooks.
#[derive(Debug, Default, PartialEq)]
pub struct Managed {
    /// The file (or drop-in) that sets `allowManagedHooksOnly: true`, the last one read.
    pub hooks_only_from: Option<PathBuf>,
    /// amplihack's entries are in the managed settings file.
    pub ours: bool,
    /// Files that exist but cannot be read as a JSON object, with why (Claude Code 2.1.259 and
    /// later refuses to start over such a file).
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Reads the managed settings file and drop-ins in `dir`.
pub fn read(dir: &Path) -> Managed {
    let mut managed = Managed::default();
    let file = claude_paths::managed(dir);
    let files = std::iter::once(file.clone())
        .filter(|f| f.exists())
        .chain(claude_paths::managed_drop_ins(dir));
    for path in files {
        let value = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
        match value {
            Ok(value @ Value::Object(_)) => {
                if value.get(HOOKS_ONLY_KEY) == Some(&Value::Bool(true)) {
                    managed.hooks_only_from = Some(path.clone());
                }
                if path == file && !registration::find_ours(&value).is_empty() {
                    managed.ours = true;
                }
            }
            Ok(_) => managed
                .unreadable
                .push((path, "not a JSON object".to_string())),
            Err(why) => managed.unreadable.push((path, why)),
        }
    }
    managed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_managed_files_say() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(dir.path()), Managed::default());
        let file = claude_paths::managed(dir.path());
        std::fs::write(&file, r#"{"allowManagedHooksOnly": false}"#).expect("write");
        assert_eq!(read(dir.path()).hooks_only_from, None);
        let drop_ins = dir.path().join("managed-settings.d");
        std::fs::create_dir(&drop_ins).expect("mkdir");
        std::fs::write(
            drop_ins.join("10-hooks.json"),
            r#"{"allowManagedHooksOnly": true}"#,
        )
        .expect("write");
        std::fs::write(drop_ins.join("20-broken.json"), "{").expect("write");
        let read = read(dir.path());
        assert_eq!(read.hooks_only_from, Some(drop_ins.join("10-hooks.json")));
        assert_eq!(read.unreadable.len(), 1);
        assert!(!read.ours);
        std::fs::write(
            &file,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "exec /usr/local/bin/amplihack-hooks stop"}]}]}}"#,
        )
        .expect("write");
        assert!(super::read(dir.path()).ours);
    }
}
