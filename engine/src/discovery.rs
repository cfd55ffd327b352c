//! Finding plugins, in a documented, deterministic order:
//!
//! 1. the user level, `~/.amplifier/hooks/`, then the project level, `<project>/.amplifier/hooks/`
//!    (the project is the nearest directory holding `.amplifier`, looking up from
//!    `CLAUDE_PROJECT_DIR`, `AMPLIFIER_PROJECT_DIR` or the event's `cwd`, below the home directory);
//! 2. in each level, `hooks.json` itself, then one plugin per subdirectory, in byte order of
//!    the names: `<name>/hooks.json`, or a Claude Code plugin's `<name>/hooks/hooks.json`, else the
//!    `hooks` of its manifest `<name>/.claude-plugin/plugin.json`.

use std::path::{Path, PathBuf};

use crate::config::{self, ConfigError, PluginConfig};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    User,
    Project,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::User => "user",
            Level::Project => "project",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Plugin {
    /// The subdirectory's name, or `hooks.json` for the level's own file.
    pub name: String,
    pub level: Level,
    /// `CLAUDE_PLUGIN_ROOT`: the plugin's directory.
    pub root: PathBuf,
    /// `AMPLIFIER_HOOKS_DIR`: the level's hooks directory.
    pub hooks_dir: PathBuf,
    pub file: PathBuf,
    pub config: Result<PluginConfig, ConfigError>,
}

/// The hooks files of one level, in order, without reading them.
pub fn plugin_files(hooks_dir: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let mut found = Vec::new();
    let own = hooks_dir.join("hooks.json");
    if own.is_file() {
        found.push(("hooks.json".to_string(), hooks_dir.to_path_buf(), own));
    }
    let mut subdirs: Vec<PathBuf> = match std::fs::read_dir(hooks_dir) {
        // The entry's type from readdir itself (no stat), a symlink followed: this pays for the
        // `hooks.yaml` stat below, so 100 plugins cost what they did.
        Ok(entries) => entries
            .flatten()
            .filter(|e| match e.file_type() {
                Ok(t) if t.is_dir() => true,
                Ok(t) if !t.is_symlink() => false,
                _ => e.path().is_dir(),
            })
            .map(|e| e.path())
            .collect(),
        Err(_) => return found,
    };
    // By name (one parent): comparing whole paths component by component cost more than reading
    // a hundred plugins' files.
    subdirs.sort_unstable_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    for dir in subdirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = [
            dir.join("hooks.json"),
            dir.join("hooks/hooks.json"),
            dir.join(MANIFEST),
        ]
        .into_iter()
        .find(|f| f.is_file());
        let yaml = dir.join(crate::dialects::proposal::FILE);
        if let Some(file) = file
            && !(name == AMPLIHACK_DIR && is_amplihack_registration(&file))
        {
            found.push((name.clone(), dir.clone(), file));
        }
        // The proposal's YAML, beside or instead of hooks.json (dialects::proposal).
        if yaml.is_file() {
            found.push((name, dir, yaml));
        }
    }
    found
}

/// A Claude Code plugin's manifest, whose `hooks` (inline, or the path of a hooks file) is read
/// when the plugin has no `hooks.json` of its own.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";

/// The directory `amplihack install` registers amplihack in for Amplifier's bridge.
pub const AMPLIHACK_DIR: &str = "amplihack";

/// amplihack's own bridge registration: every handler runs `amplihack-hooks`. It is not a user
/// plugin: never listed, trusted, fingerprinted or forwarded.
pub fn is_amplihack_registration(file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    match config::parse(file, &text) {
        Ok(config) => {
            let mut handlers = config
                .groups
                .iter()
                .flat_map(|g| g.handlers.iter())
                .peekable();
            handlers.peek().is_some()
                && handlers.all(|h| amplihack_protocol::command::runs_amplihack_hooks(&h.command))
        }
        Err(_) => false,
    }
}

/// A hooks file's text, read without the size query `fs::read_to_string` makes first (hooks
/// files are small, and every hook call reads every plugin's: one system call less each).
fn read_small(file: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(4096);
    std::fs::File::open(file)?
        .take(u64::MAX)
        .read_to_string(&mut text)?;
    Ok(text)
}

pub fn load_level(hooks_dir: &Path, level: Level) -> Vec<Plugin> {
    let mut files = plugin_files(hooks_dir);
    // The level's AMCP hook file (dialects::amcp): a stat or two.
    let amcp = amcp_file(hooks_dir, level);
    if let Some((root, file)) = &amcp {
        files.push((
            crate::dialects::amcp::NAME.into(),
            root.clone(),
            file.clone(),
        ));
    }
    files
        .into_iter()
        .map(|(name, root, file)| {
            let config = match read_small(&file) {
                Ok(text) if file.ends_with(MANIFEST) => config::parse_manifest(&file, &text),
                Ok(text) if file.ends_with(crate::dialects::proposal::FILE) => {
                    crate::dialects::proposal::parse(&file, &text)
                }
                Ok(text) if amcp.as_ref().is_some_and(|(_, amcp)| *amcp == file) => {
                    crate::dialects::amcp::parse(&file, &text)
                }
                Ok(text) => config::parse(&file, &text),
                Err(e) => Err(ConfigError {
                    file: file.clone(),
                    field: "(file)".into(),
                    problem: format!("cannot be read: {e}"),
                    fix: "make it readable".into(),
                }),
            };
            Plugin {
                name,
                level,
                root,
                hooks_dir: hooks_dir.to_path_buf(),
                file,
                config,
            }
        })
        .collect()
}

/// Reads any hooks file by what it is: a Claude Code `hooks.json` or plugin manifest, the
/// proposal's `hooks.yaml`, or an AMCP hook file (`hooks.toml`, or `hooks.json` in `.amcp/` or an
/// `amcp` config directory). What `hooks validate FILE` reads.
pub fn parse_file(file: &Path, text: &str) -> Result<PluginConfig, ConfigError> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let dir = file.parent().and_then(Path::file_name);
    let in_amcp_dir = dir.is_some_and(|d| d == ".amcp")
        || (dir.is_some_and(|d| d == "amcp")
            && file
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|d| d == ".config"))
        || std::env::var_os("XDG_CONFIG_HOME")
            .is_some_and(|x| file.parent() == Some(Path::new(&x).join("amcp").as_path()));
    if file.ends_with(MANIFEST) {
        config::parse_manifest(file, text)
    } else if matches!(ext, "yaml" | "yml") {
        crate::dialects::proposal::parse(file, text)
    } else if ext == "toml" || in_amcp_dir {
        crate::dialects::amcp::parse(file, text)
    } else {
        config::parse(file, text)
    }
}

/// The AMCP hook file that goes with a level's hooks directory (`<dir>/../..` is the project or
/// the home): `<project>/.amcp/hooks.*`, or the user's `$XDG_CONFIG_HOME/amcp/hooks.*`; with the
/// directory its relative commands are read from (the project's; the user's own for the user).
pub fn amcp_file(hooks_dir: &Path, level: Level) -> Option<(PathBuf, PathBuf)> {
    let base = hooks_dir.parent().and_then(Path::parent)?;
    let dir = match level {
        Level::Project => base.join(".amcp"),
        Level::User => crate::dialects::amcp::user_dir(base),
    };
    crate::dialects::amcp::file_in(&dir).map(|file| (dir, file))
}

/// The project directory holding `.amplifier`, looking up from `start` but not reaching `home`
/// (whose `.amplifier` is the user level).
pub fn project_with_hooks(start: &Path, home: Option<&Path>) -> Option<PathBuf> {
    start
        .ancestors()
        .take_while(|dir| Some(*dir) != home)
        .find(|dir| dir.join(".amplifier/hooks").is_dir() || dir.join(".amcp").is_dir())
        .map(Path::to_path_buf)
}

/// Same file system object (so a project that *is* the home directory is one level, not two).
pub fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
