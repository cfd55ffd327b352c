//! Where Claude Code keeps its settings: defined here once, for the installer (which writes them)
//! and the hook binary (which repairs stale registrations in them).

use std::path::{Path, PathBuf};

/// `$CLAUDE_CONFIG_DIR`, else `<home>/.claude` (empty variables count as unset).
pub fn config_dir(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    var(amplihack_env::CLAUDE_CONFIG_DIR)
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".claude"), PathBuf::from)
}

/// The user's settings file.
pub fn user(config_dir: &Path) -> PathBuf {
    config_dir.join("settings.json")
}

/// The project's shared settings file.
pub fn project(root: &Path) -> PathBuf {
    root.join(".claude/settings.json")
}

/// The project's local (uncommitted) settings file.
pub fn local(root: &Path) -> PathBuf {
    root.join(".claude/settings.local.json")
}

/// Where an organisation's managed settings live on this system (`managed-settings.json` and the
/// `managed-settings.d/` drop-ins): `/Library/Application Support/ClaudeCode` on macOS,
/// `/etc/claude-code` on Linux (and WSL). Claude Code ranks them above every other scope.
pub fn managed_dir() -> PathBuf {
    if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/ClaudeCode")
    } else {
        PathBuf::from("/etc/claude-code")
    }
}

/// The managed settings file in `dir` ([`managed_dir`]).
pub fn managed(dir: &Path) -> PathBuf {
    dir.join("managed-settings.json")
}

/// The managed drop-ins in `dir` (since Claude Code 2.1.83), merged after the file, by name.
pub fn managed_drop_ins(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join("managed-settings.d"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    found.sort();
    found
}

/// The three files Claude Code merges, named by scope, in its order: user, project, local.
pub fn all(config_dir: &Path, root: &Path) -> [(&'static str, PathBuf); 3] {
    [
        ("user", user(config_dir)),
        ("project", project(root)),
        ("local", local(root)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_locations() {
        let home = Path::new("/h");
        let unset = |_: &str| None;
        assert_eq!(config_dir(home, &unset), Path::new("/h/.claude"));
        let empty = |_: &str| Some(String::new());
        assert_eq!(config_dir(home, &empty), Path::new("/h/.claude"));
        let set = |_: &str| Some("/cfg".to_string());
        assert_eq!(config_dir(home, &set), Path::new("/cfg"));
        let names: Vec<(&str, PathBuf)> = all(Path::new("/cfg"), Path::new("/p")).into();
        assert_eq!(
            names,
            [
                ("user", PathBuf::from("/cfg/settings.json")),
                ("project", PathBuf::from("/p/.claude/settings.json")),
                ("local", PathBuf::from("/p/.claude/settings.local.json")),
            ]
        );
    }
}
