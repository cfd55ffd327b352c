//! Deploying the binaries into the bin directory, so the hosts are given a stable path: never a
//! build directory or a package manager's cache.

use amplihack_state::files::{self, StateError};
use std::error::Error as StdError;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub const BINARIES: [&str; 2] = ["amplihack-hooks", "amplihack"];

/// `--bin-dir`, else `$AMPLIHACK_BIN_DIR`, else `~/.local/bin`; made absolute.
pub fn bin_dir(flag: Option<&Path>, home: &Path) -> PathBuf {
    let dir = flag
        .map(Path::to_path_buf)
        .or_else(|| {
            std::env::var_os(amplihack_env::AMPLIHACK_BIN_DIR)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| home.join(".local/bin"));
    if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir().unwrap_or_default().join(dir)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyAction {
    /// Written (new or different).
    Copied,
    /// Already there with the same bytes.
    Unchanged,
    /// We are running from the bin directory itself.
    InPlace,
}

impl CopyAction {
    pub fn as_str(self) -> &'static str {
        match self {
            CopyAction::Copied => "copied",
            CopyAction::Unchanged => "unchanged",
            CopyAction::InPlace => "in place",
        }
    }
}

#[derive(Debug)]
pub struct Deployment {
    pub dir: PathBuf,
    pub copies: Vec<(&'static str, CopyAction)>,
    pub on_path: bool,
}

impl Deployment {
    pub fn hooks_binary(&self) -> PathBuf {
        self.dir.join("amplihack-hooks")
    }
}

/// Why deploying the binaries, the Amplifier module or its bundle failed, with the cause.
#[derive(Debug)]
pub enum DeployError {
    /// The system would not say where the running `amplihack` is.
    NoSource(std::io::Error),
    /// The running `amplihack` has no directory (it cannot have come from one).
    NoSourceDir(PathBuf),
    /// A binary is not next to the running `amplihack`: the user's to fix (build or reinstall).
    Missing(PathBuf),
    /// Copying a binary into the bin directory failed.
    Copy { to: PathBuf, source: std::io::Error },
    /// Writing a file of the native Amplifier module failed.
    Module(StateError),
    /// Writing the Amplifier app's bundle file failed.
    Bundle(StateError),
}

impl DeployError {
    /// A user's to fix (a missing binary; a state path refused, busy or damaged), rather than a
    /// failure of the system or of amplihack.
    pub fn is_users(&self) -> bool {
        match self {
            DeployError::Missing(_) => true,
            DeployError::Module(error) | DeployError::Bundle(error) => {
                !matches!(error, StateError::Io { .. })
            }
            DeployError::NoSource(_) | DeployError::NoSourceDir(_) | DeployError::Copy { .. } => {
                false
            }
        }
    }
}

impl fmt::Display for DeployError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeployError::NoSource(e) => write!(f, "cannot locate the running amplihack: {e}"),
            DeployError::NoSourceDir(exe) => {
                write!(f, "{}: has no parent directory", exe.display())
            }
            DeployError::Missing(path) => write!(
                f,
                "{}: not found next to the running amplihack; build both binaries (`cargo build --release`) or reinstall with ./install.sh",
                path.display()
            ),
            DeployError::Copy { to, source } => {
                write!(f, "{}: cannot install: {source}", to.display())
            }
            DeployError::Module(e) => write!(f, "cannot deploy the Amplifier module: {e}"),
            DeployError::Bundle(e) => write!(f, "cannot deploy the Amplifier bundle: {e}"),
        }
    }
}

impl StdError for DeployError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            DeployError::NoSource(source) | DeployError::Copy { source, .. } => Some(source),
            DeployError::Module(error) | DeployError::Bundle(error) => Some(error),
            DeployError::NoSourceDir(_) | DeployError::Missing(_) => None,
        }
    }
}

/// The directory the running `amplihack` came from, where `amplihack-hooks` is expected too.
pub fn source_dir() -> Result<PathBuf, DeployError> {
    let exe = std::env::current_exe().map_err(DeployError::NoSource)?;
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or(DeployError::NoSourceDir(exe))
}

/// Copies both binaries into `dir` atomically (temporary file, fsync, rename), keeping ones that
/// are already identical. With `dry_run`, says what it would do.
pub fn deploy(dir: &Path, dry_run: bool) -> Result<Deployment, DeployError> {
    let source = source_dir()?;
    let mut copies = Vec::new();
    for name in BINARIES {
        let from = source.join(name);
        if !from.is_file() {
            return Err(DeployError::Missing(from));
        }
        let to = dir.join(name);
        let action = if to.canonicalize().ok() == from.canonicalize().ok() {
            CopyAction::InPlace
        } else if same_stamp(&from, &to) {
            CopyAction::Unchanged
        } else if same_bytes(&from, &to) {
            if !dry_run {
                stamp(&from, &to);
            }
            CopyAction::Unchanged
        } else {
            if !dry_run {
                copy_atomically(&from, &to).map_err(|source| DeployError::Copy {
                    to: to.clone(),
                    source,
                })?;
            }
            CopyAction::Copied
        };
        copies.push((name, action));
    }
    Ok(Deployment {
        dir: dir.to_path_buf(),
        copies,
        on_path: on_path(dir),
    })
}

/// Whether `to` is the copy an earlier install made of `from`: the same size and modification
/// time, to the nanosecond ([`copy_atomically`] and [`stamp`] give the copy the source's). A
/// no-change install then reads no binary (the bytes are compared only when they differ).
fn same_stamp(from: &Path, to: &Path) -> bool {
    let (Ok(a), Ok(b)) = (std::fs::metadata(from), std::fs::metadata(to)) else {
        return false;
    };
    a.len() == b.len()
        && a.modified()
            .ok()
            .is_some_and(|m| Some(m) == b.modified().ok())
}

/// Gives `to` the modification time of `from`, whose bytes it holds (best effort: a copy left
/// unstamped is compared byte by byte next time).
fn stamp(from: &Path, to: &Path) {
    if let Ok(time) = std::fs::metadata(from).and_then(|m| m.modified()) {
        // Read-only: the owner may set the times, and a running binary cannot be opened for writing.
        let _ = std::fs::File::open(to).and_then(|f| f.set_modified(time));
    }
}

/// Whether two files hold the same bytes: sizes first, then 64 KiB at a time (no whole-file
/// buffers: the binaries are megabytes and `install` runs often).
fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(ma), Ok(mb)) = (fs_err::metadata(a), fs_err::metadata(b)) else {
        return false;
    };
    if ma.len() != mb.len() {
        return false;
    }
    let (Ok(mut fa), Ok(mut fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = match fa.read(&mut ba) {
            Ok(0) => return true,
            Ok(n) => n,
            Err(_) => return false,
        };
        if fb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// Creates `dir` and its missing parents 0755 (a bin directory must be readable and searchable,
/// and never writable by others), whatever the umask.
pub fn create_bin_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    for d in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o755).create(d) {
            Ok(()) => std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))?,
            // Another install made it meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn copy_atomically(from: &Path, to: &Path) -> std::io::Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    create_bin_dir(dir)?;
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bytes = fs_err::read(from)?;
    let staged = files::stage(dir, &format!(".{name}.amplihack-tmp-"), &bytes, 0o755)?;
    // The copy carries the source's time: a later install finds it identical by size and time.
    if let Ok(time) = std::fs::metadata(from).and_then(|m| m.modified()) {
        staged.as_file().set_modified(time)?;
    }
    Ok(files::publish(staged, to, dir)?)
}

pub fn on_path(dir: &Path) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|p| p == dir))
}

/// The version a deployed binary reports (`<name> <version>`), if it runs.
pub fn reported_version(binary: &Path) -> Option<String> {
    let output = std::process::Command::new(binary)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().nth(1).map(str::to_string)
}

pub fn is_executable(path: &Path) -> bool {
    fs_err::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The native Amplifier module's files, embedded so `install` can deploy them without the source.
const MODULE_FILES: [(&str, &str); 4] = [
    (
        "pyproject.toml",
        include_str!("../amplifier-module/pyproject.toml"),
    ),
    ("README.md", include_str!("../amplifier-module/README.md")),
    (
        "amplifier_module_hooks_amplihack/__init__.py",
        include_str!("../amplifier-module/amplifier_module_hooks_amplihack/__init__.py"),
    ),
    (
        "amplifier_module_hooks_amplihack/agent.py",
        include_str!("../amplifier-module/amplifier_module_hooks_amplihack/agent.py"),
    ),
];

/// Where the native Amplifier module is deployed: `$XDG_DATA_HOME/amplihack/amplifier-module`,
/// else `~/.local/share/amplihack/amplifier-module`. This path is the module's `source` in
/// Amplifier's settings.
pub fn module_dir(home: &Path) -> PathBuf {
    data_home(home).join("amplihack/amplifier-module")
}

/// `$XDG_DATA_HOME`, else `~/.local/share`.
pub fn data_home(home: &Path) -> PathBuf {
    std::env::var_os(amplihack_env::XDG_DATA_HOME)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".local/share"))
}

/// The app bundle amplihack deploys for the Amplifier app (listed under `bundle.app` in its
/// settings): `<data>/amplihack/amplifier-bundle.yaml`, beside the module directory.
pub fn bundle_file(home: &Path) -> PathBuf {
    module_dir(home).with_file_name("amplifier-bundle.yaml")
}

/// The bundle file's text: one hook module, `hooks-amplihack`, from the deployed module
/// directory (the app installs it with `uv pip install -e` into its own environment), calling
/// `hooks_binary`.
pub fn bundle_text(module: &Path, hooks_binary: &Path) -> String {
    let quoted = |p: &Path| serde_json::Value::String(p.to_string_lossy().into_owned()).to_string();
    format!(
        "# amplihack's hooks for the Amplifier app, composed onto every session through `bundle.app`\n\
         # in settings.yaml. Written by `amplihack install`; re-run it (or `amplihack uninstall`)\n\
         # rather than editing.\n\
         bundle:\n  name: amplihack\n  version: {}\n  description: amplihack hooks (hooks-amplihack runs amplihack-hooks on every event)\n\
         hooks:\n  - module: hooks-amplihack\n    source: {}\n    config:\n      binary: {}\n",
        amplihack_protocol::VERSION,
        quoted(module),
        quoted(hooks_binary)
    )
}

/// Writes the bundle file when it differs and returns its path.
pub fn deploy_bundle(
    home: &Path,
    module: &Path,
    hooks_binary: &Path,
    dry_run: bool,
) -> Result<PathBuf, DeployError> {
    let path = bundle_file(home);
    let text = bundle_text(module, hooks_binary);
    if dry_run || fs_err::read_to_string(&path).is_ok_and(|t| t == text) {
        return Ok(path);
    }
    files::replace(&path, text.as_bytes()).map_err(DeployError::Bundle)?;
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644));
    Ok(path)
}

/// Writes the module's files (those that differ) and returns its directory.
pub fn deploy_module(home: &Path, dry_run: bool) -> Result<PathBuf, DeployError> {
    let dir = module_dir(home);
    if dry_run {
        return Ok(dir);
    }
    for (name, text) in MODULE_FILES {
        let path = dir.join(name);
        if fs_err::read_to_string(&path).is_ok_and(|t| t == text) {
            continue;
        }
        files::replace(&path, text.as_bytes()).map_err(DeployError::Module)?;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644));
    }
    Ok(dir)
}

#[cfg(test)]
mod stamp_tests {
    use super::*;

    /// A no-change install reads no binary: the copy carries the source's size and time; any
    /// other file is compared byte by byte (and stamped once found identical).
    #[test]
    fn copies_are_recognised_by_their_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("src-bin");
        let to = dir.path().join("bin/deployed");
        std::fs::write(&from, b"binary one").unwrap();
        copy_atomically(&from, &to).unwrap();
        assert!(same_stamp(&from, &to), "a copy has the source's stamp");

        // Changed in place (same size): the time moves, the stamp no longer matches.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&to, b"binary two").unwrap();
        assert!(!same_stamp(&from, &to));
        assert!(!same_bytes(&from, &to));

        // The same bytes written by someone else: compared, then stamped.
        std::fs::write(&to, b"binary one").unwrap();
        assert!(!same_stamp(&from, &to));
        assert!(same_bytes(&from, &to));
        stamp(&from, &to);
        assert!(same_stamp(&from, &to));
    }
}
