//! The file primitives every state record uses.
//!
//! * directories are created 0700 and files 0600, set explicitly after creation so that no umask
//!   makes them group- or world-accessible (nor unusable);
//! * [`replace`] writes a temporary file in the same directory, fsyncs it, renames it over the
//!   target and fsyncs the directory: a reader sees the old file or the new one, never a torn one;
//! * [`append_line`] appends one line with a single `write` on an `O_APPEND` file, so lines from
//!   concurrent sessions never interleave;
//! * [`Lock`] is an advisory lock on a sidecar under `<state>/locks/`, taken with a timeout
//!   (never an unbounded wait), because a hook must answer in time.

use std::fmt;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use amplihack_platform::fs::{Refusal, no_follow_no_block, refusal};

/// Why a state file could not be read or written. Each names the file and the cause.
#[derive(Debug)]
pub enum StateError {
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
    /// A record file that does not parse: left exactly as it is.
    Corrupt { path: PathBuf, problem: String },
    /// Another amplihack held the lock for longer than the timeout.
    Busy { path: PathBuf, waited: Duration },
    /// A path amplihack will not read or write through: a symbolic link, not a regular file,
    /// another user's directory (see [`crate::safe_open`]).
    Refused { path: PathBuf, why: &'static str },
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Io {
                path,
                action,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            StateError::Corrupt { path, problem } => write!(
                f,
                "{} is not valid ({problem}); it was left untouched: fix or remove it",
                path.display()
            ),
            StateError::Busy { path, waited } => write!(
                f,
                "{} is locked by another amplihack (waited {} ms); try again",
                path.display(),
                waited.as_millis()
            ),
            StateError::Refused { path, why } => write!(
                f,
                "{} {why}: amplihack does not read or write through it (a repository may have planted it)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StateError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub fn io_error<'a>(
    path: &'a Path,
    action: &'static str,
) -> impl FnOnce(io::Error) -> StateError + 'a {
    move |source| StateError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// Creates `dir` and its missing parents, each new one 0700.
pub fn private_dir(dir: &Path) -> Result<(), StateError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut cursor = Some(dir);
    while let Some(d) = cursor {
        if d.exists() {
            break;
        }
        missing.push(d);
        cursor = d.parent();
    }
    for d in missing.into_iter().rev() {
        match fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => fs::set_permissions(d, Permissions::from_mode(0o700))
                .map_err(io_error(d, "set permissions of"))?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error(d, "create directory")(e)),
        }
    }
    Ok(())
}

/// Reads a file; `None` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>, StateError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, "read")(e)),
    }
}

/// The step of [`stage`] that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageStep {
    Create,
    Write,
    Permissions,
    Sync,
}

/// Why [`stage`] failed: the step, the temporary file (once it exists) and the cause.
#[derive(Debug)]
pub struct StageError {
    pub step: StageStep,
    pub temp: Option<PathBuf>,
    pub source: io::Error,
}

impl From<StageError> for io::Error {
    fn from(e: StageError) -> io::Error {
        e.source
    }
}

/// How hard an atomic write works to survive a crash of the machine. Either way a reader sees
/// the old file or the new one, never a torn one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The file and its directory are fsynced: what a user would miss (settings, memory, trust,
    /// the install manifest, the binaries).
    Durable,
    /// No fsync: records amplihack can lose and start afresh (a session's record, which a crash
    /// at worst leaves damaged, moved aside and begun again). Each fsync costs a hook on the
    /// session's path 5-15 ms on an ordinary disk.
    Disposable,
}

/// The first half of every atomic write amplihack makes (state records, hosts' settings, the
/// deployed binaries): `bytes` in a new file `<dir>/<prefix>XXXXXX`, created 0600, written, given
/// `mode` (after the write, so no byte is readable beyond the owner before it is complete),
/// fsynced. [`publish`] renames it over its target; dropped, it is removed.
pub fn stage(
    dir: &Path,
    prefix: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<tempfile::NamedTempFile, StageError> {
    stage_with(dir, prefix, bytes, mode, Durability::Durable)
}

/// [`stage`], fsynced only when `durability` asks for it.
pub fn stage_with(
    dir: &Path,
    prefix: &str,
    bytes: &[u8],
    mode: u32,
    durability: Durability,
) -> Result<tempfile::NamedTempFile, StageError> {
    let mut temp = tempfile::Builder::new()
        .prefix(prefix)
        .permissions(Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(|source| StageError {
            step: StageStep::Create,
            temp: None,
            source,
        })?;
    let failed = |step, temp: &tempfile::NamedTempFile| {
        let path = temp.path().to_path_buf();
        move |source| StageError {
            step,
            temp: Some(path),
            source,
        }
    };
    temp.write_all(bytes)
        .map_err(failed(StageStep::Write, &temp))?;
    temp.as_file()
        .set_permissions(Permissions::from_mode(mode))
        .map_err(failed(StageStep::Permissions, &temp))?;
    if durability == Durability::Durable {
        temp.as_file()
            .sync_all()
            .map_err(failed(StageStep::Sync, &temp))?;
    }
    Ok(temp)
}

/// The second half: renames a [`stage`]d file over `target` (a reader sees the old file or the
/// new one, never a torn one), then fsyncs `dir`, the directory both are in.
pub fn publish(
    staged: tempfile::NamedTempFile,
    target: &Path,
    dir: &Path,
) -> Result<(), Published> {
    publish_with(staged, target, dir, Durability::Durable)
}

/// [`publish`], the directory fsynced only when `durability` asks for it.
pub fn publish_with(
    staged: tempfile::NamedTempFile,
    target: &Path,
    dir: &Path,
    durability: Durability,
) -> Result<(), Published> {
    // A file amplihack may lose to a crash: swapped in place of the old one, which is then
    // removed, instead of renamed over it (`exchange` says why: a rename over a file costs
    // 0.1-4 ms on ext4). No old file yet, or no swap on this system: the rename below.
    if durability == Durability::Disposable
        && amplihack_platform::fs::exchange(staged.path(), target).is_ok()
    {
        // The staged name now holds what `target` held.
        if fs::remove_file(staged.path()).is_ok() {
            let _ = staged.into_temp_path().keep(); // nothing left to remove
            return Ok(());
        }
        // Not a file (a directory was at `target`): put it back; the rename below refuses it
        // as it always did.
        let _ = amplihack_platform::fs::exchange(staged.path(), target);
    }
    staged
        .persist(target)
        .map_err(|e| Published::Rename(e.error))?;
    if durability == Durability::Disposable {
        return Ok(());
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(Published::SyncDir)
}

/// Which part of [`publish`] failed: the rename (the target is unchanged), or the directory's
/// fsync after it (the target is replaced, not yet durably).
#[derive(Debug)]
pub enum Published {
    Rename(io::Error),
    SyncDir(io::Error),
}

impl From<Published> for io::Error {
    fn from(e: Published) -> io::Error {
        match e {
            Published::Rename(e) | Published::SyncDir(e) => e,
        }
    }
}

/// Atomically replaces `path` with `bytes` and `mode`, creating its directory (0700) if missing:
/// [`stage`] then [`publish`].
pub fn replace_with_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), StateError> {
    replace_with(path, bytes, mode, Durability::Durable)
}

/// The one atomic replace of a state file: its mode and durability are the parameters.
pub fn replace_with(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    durability: Durability,
) -> Result<(), StateError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir)?;
    let staged = stage_with(dir, ".amplihack-", bytes, mode, durability).map_err(|e| {
        match (e.step, e.temp) {
            (StageStep::Create, _) => io_error(dir, "create a temporary file in")(e.source),
            (StageStep::Permissions, Some(temp)) => io_error(&temp, "set permissions of")(e.source),
            _ => io_error(path, "write")(e.source),
        }
    })?;
    match publish_with(staged, path, dir, durability) {
        Ok(()) | Err(Published::SyncDir(_)) => Ok(()),
        Err(Published::Rename(e)) => Err(io_error(path, "replace")(e)),
    }
}

/// Replaces `path` with `bytes` (mode 0600, no fsync: a record amplihack may lose to a crash)
/// where the caller holds the file's lock, so one writer at a time: the bytes go into a staging
/// file kept beside it, `<path>.next` (reused, so no file is created: creating one costs 0.1-0.2
/// ms on a busy ext4), which is then swapped with `path` ([`amplihack_platform::fs::exchange`]);
/// the old bytes stay in the staging file for the next time. A reader of `path` sees the old file
/// or the new one, never a torn one. The first time (no `path` yet) the staging file is renamed.
pub fn replace_locked(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    use std::os::unix::fs::FileExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir)?;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".next");
    let staging = dir.join(name);
    let file = no_follow_no_block(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600),
    )
    .open(&staging)
    .map_err(io_error(&staging, "open"))?;
    let meta = file
        .metadata()
        .map_err(io_error(&staging, "read the metadata of"))?;
    if !meta.is_file() {
        return Err(StateError::Refused {
            path: staging,
            why: "is not a regular file",
        });
    }
    if meta.permissions().mode() & 0o7777 != 0o600 {
        file.set_permissions(Permissions::from_mode(0o600))
            .map_err(io_error(&staging, "set permissions of"))?;
    }
    // Never truncated to nothing first: ext4 flushes a file emptied and rewritten at its close.
    file.write_all_at(bytes, 0)
        .and_then(|()| file.set_len(bytes.len() as u64))
        .map_err(io_error(&staging, "write"))?;
    drop(file);
    if amplihack_platform::fs::exchange(&staging, path).is_ok() {
        return Ok(());
    }
    fs::rename(&staging, path).map_err(io_error(path, "replace"))
}

/// Atomically replaces `path` with `bytes`, mode 0600.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    replace_with_mode(path, bytes, 0o600)
}

/// Opens `path` for appending, creating it 0600 (and its directory 0700). Never through a
/// link: a symbolic link planted at `path` (`hooks.log -> ~/.bashrc`) is refused (`O_NOFOLLOW`),
/// and so is anything but a regular file (`O_NONBLOCK`, so a planted FIFO never blocks).
pub fn open_append(path: &Path) -> Result<File, StateError> {
    if let Some(dir) = path.parent() {
        private_dir(dir)?;
    }
    let existed = fs::symlink_metadata(path).is_ok();
    let file = no_follow_no_block(OpenOptions::new().create(true).append(true).mode(0o600))
        .open(path)
        .map_err(|e| match refusal(&e) {
            Some(Refusal::Link) => StateError::Refused {
                path: path.to_path_buf(),
                why: "is a symbolic link",
            },
            Some(Refusal::NotRegular) => StateError::Refused {
                path: path.to_path_buf(),
                why: "is not a regular file",
            },
            _ => io_error(path, "open")(e),
        })?;
    let meta = file
        .metadata()
        .map_err(io_error(path, "read the metadata of"))?;
    if !meta.is_file() {
        return Err(StateError::Refused {
            path: path.to_path_buf(),
            why: "is not a regular file",
        });
    }
    if !existed {
        file.set_permissions(Permissions::from_mode(0o600))
            .map_err(io_error(path, "set permissions of"))?;
    }
    Ok(file)
}

/// Appends `line` (a newline is added) with one write.
pub fn append_line(path: &Path, line: &str) -> Result<(), StateError> {
    let mut record = String::with_capacity(line.len() + 1);
    record.push_str(line);
    record.push('\n');
    open_append(path)?
        .write_all(record.as_bytes())
        .map_err(io_error(path, "append to"))
}

/// Renames `path` past `max_bytes` to `<path>.1` (one generation kept).
pub fn rotate(path: &Path, max_bytes: u64) {
    if fs::symlink_metadata(path).is_ok_and(|m| m.len() > max_bytes) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = fs::rename(path, PathBuf::from(old));
    }
}

/// How long a state lock is waited for, unless `AMPLIHACK_LOCK_TIMEOUT_MS` says otherwise.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// An exclusive advisory lock, released on drop.
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Locks `<locks_dir>/<name>.lock`, waiting at most `timeout`.
    pub fn acquire(locks_dir: &Path, name: &str, timeout: Duration) -> Result<Lock, StateError> {
        private_dir(locks_dir)?;
        let path = locks_dir.join(format!("{name}.lock"));
        Lock::at(&path, timeout).map_err(|e| match e {
            LockError::Open(e) => io_error(&path, "open lock")(e),
            LockError::Lock(e) => io_error(&path, "lock")(e),
            LockError::Busy(waited) => StateError::Busy { path, waited },
        })
    }

    /// Locks the sidecar file `path` (created 0600 when missing), waiting at most `timeout`:
    /// the one lock every locked write takes (state records, hosts' settings files).
    pub fn at(path: &Path, timeout: Duration) -> Result<Lock, LockError> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path)
            .and_then(|file| {
                file.set_permissions(Permissions::from_mode(0o600))?;
                Ok(file)
            })
            .map_err(LockError::Open)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(LockError::Busy(started.elapsed()));
                }
                Err(fs::TryLockError::Error(e)) => return Err(LockError::Lock(e)),
            }
        }
    }
}

/// Why [`Lock::at`] did not lock: the sidecar could not be opened, locking it failed, or another
/// process held it for the whole wait.
#[derive(Debug)]
pub enum LockError {
    Open(io::Error),
    Lock(io::Error),
    Busy(Duration),
}

/// Reads a JSON record; `None` when the file does not exist.
///
/// A record that is damaged (not UTF-8, not JSON, not the record's shape) is moved aside to
/// `<file>.damaged`, kept for the user, and read as absent: the caller starts a new one, and the
/// damage is reported once (see [`take_notes`]), not on every call that reads it.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, StateError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, "read")(e)),
    };
    let parsed = match std::str::from_utf8(&bytes) {
        Err(e) => Err(format!(
            "not UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        )),
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| e.to_string()),
    };
    match parsed {
        Ok(found) => Ok(found),
        Err(problem) => {
            set_aside(path, &problem)?;
            Ok(None)
        }
    }
}

static NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// What this process found damaged and set aside, each once; the caller reports them (the hook
/// binary on stderr and in its failure log, `amplihack` as warnings).
pub fn take_notes() -> Vec<String> {
    NOTES
        .lock()
        .map(|mut notes| std::mem::take(&mut *notes))
        .unwrap_or_default()
}

fn set_aside(path: &Path, problem: &str) -> Result<(), StateError> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(".damaged");
    let aside = PathBuf::from(aside);
    fs::rename(path, &aside).map_err(|_| StateError::Corrupt {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    })?;
    if let Ok(mut notes) = NOTES.lock() {
        notes.push(format!(
            "{} was damaged ({problem}); it was moved to {} and a new one was started",
            path.display(),
            aside.display()
        ));
    }
    Ok(())
}

/// Writes a JSON record atomically and durably (pretty, so a person can read it).
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), StateError> {
    write_json_with(path, value, Durability::Durable)
}

/// [`write_json`], as durable as `durability` says.
pub fn write_json_with<T: serde::Serialize>(
    path: &Path,
    value: &T,
    durability: Durability,
) -> Result<(), StateError> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| StateError::Corrupt {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    text.push('\n');
    replace_with(path, text.as_bytes(), 0o600, durability)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    /// Either durability replaces the whole file, private, leaving no temporary file behind.
    #[test]
    fn replace_with_either_durability() {
        let root = tempfile::tempdir().expect("tempdir");
        for (i, durability) in [Durability::Durable, Durability::Disposable]
            .into_iter()
            .enumerate()
        {
            let path = root.path().join(format!("d{i}/r.json"));
            replace_with(&path, b"old and longer", 0o600, durability).expect("first");
            replace_with(&path, b"new", 0o600, durability).expect("second");
            assert_eq!(fs::read(&path).expect("read"), b"new", "{durability:?}");
            assert_eq!(mode(&path), 0o600, "{durability:?}");
            let left: Vec<_> = fs::read_dir(path.parent().expect("dir"))
                .expect("list")
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .collect();
            assert_eq!(
                left,
                vec![std::ffi::OsString::from("r.json")],
                "{durability:?}"
            );
        }
    }

    /// A disposable replace swaps the new file in (no rename over a file, which ext4 makes wait
    /// for writeback): the old one is gone, a link at the target is replaced (not followed), and
    /// a directory there is refused and left as it was, as a rename refuses it.
    #[test]
    fn a_disposable_replace_swaps_files_and_refuses_a_directory() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = root.path().join("outside");
        fs::write(&outside, "user's").expect("outside");
        let link = root.path().join("d/link.json");
        private_dir(link.parent().expect("dir")).expect("dir");
        std::os::unix::fs::symlink(&outside, &link).expect("link");
        replace_with(&link, b"ours", 0o600, Durability::Disposable).expect("replace");
        assert!(!fs::symlink_metadata(&link).expect("meta").is_symlink());
        assert_eq!(fs::read(&link).expect("read"), b"ours");
        assert_eq!(fs::read(&outside).expect("read"), b"user's");
        let dir = root.path().join("d/dir.json");
        fs::create_dir(&dir).expect("dir");
        fs::write(dir.join("inside"), "kept").expect("inside");
        assert!(replace_with(&dir, b"ours", 0o600, Durability::Disposable).is_err());
        assert_eq!(fs::read(dir.join("inside")).expect("kept"), b"kept");
        let mut left: Vec<_> = fs::read_dir(root.path().join("d"))
            .expect("list")
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["dir.json", "link.json"]);
    }

    /// A locked replace writes through the staging file beside the record, reused (no file is
    /// created after the first time): the record is whole and private, the staging file keeps
    /// the previous bytes, a shorter record leaves nothing of a longer one, and a link planted as
    /// the staging file is refused, not followed.
    #[test]
    fn a_locked_replace_swaps_through_its_staging_file() {
        let root = tempfile::tempdir().expect("tempdir");
        let path = root.path().join("s/r.json");
        let staging = root.path().join("s/r.json.next");
        replace_locked(&path, b"first, and long").expect("first");
        assert_eq!(fs::read(&path).expect("read"), b"first, and long");
        replace_locked(&path, b"second").expect("second");
        assert_eq!(fs::read(&path).expect("read"), b"second");
        assert_eq!(fs::read(&staging).expect("staging"), b"first, and long");
        use std::os::unix::fs::MetadataExt;
        let reused = fs::metadata(&staging).expect("staging").ino();
        replace_locked(&path, b"third").expect("third");
        assert_eq!(fs::read(&path).expect("read"), b"third");
        assert_eq!(fs::metadata(&path).expect("record").ino(), reused);
        assert_eq!(mode(&path), 0o600);
        let outside = root.path().join("outside");
        fs::write(&outside, "user's").expect("outside");
        fs::remove_file(&staging).expect("rm");
        std::os::unix::fs::symlink(&outside, &staging).expect("link");
        assert!(replace_locked(&path, b"fourth").is_err());
        assert_eq!(fs::read(&outside).expect("outside"), b"user's");
        assert_eq!(fs::read(&path).expect("read"), b"third");
    }

    /// Whatever the umask, what we create is ours alone.
    #[test]
    fn private_whatever_the_umask() {
        let root = tempfile::tempdir().expect("tempdir");
        for umask in [0o000, 0o022, 0o077] {
            // The umask is process-wide; this test only creates files and restores it.
            let old = amplihack_platform::fs::set_umask(umask);
            let dir = root.path().join(format!("u{umask:o}/a/b"));
            private_dir(&dir).expect("dir");
            replace(&dir.join("r.json"), b"{}").expect("replace");
            append_line(&dir.join("l.jsonl"), "{}").expect("append");
            amplihack_platform::fs::set_umask(old);
            assert_eq!(mode(&dir), 0o700, "umask {umask:o}");
            assert_eq!(mode(dir.parent().expect("p")), 0o700);
            assert_eq!(mode(&dir.join("r.json")), 0o600);
            assert_eq!(mode(&dir.join("l.jsonl")), 0o600);
        }
    }

    #[test]
    fn a_held_lock_times_out_with_the_file_named() {
        let root = tempfile::tempdir().expect("tempdir");
        let held = Lock::acquire(root.path(), "x", LOCK_TIMEOUT).expect("first");
        let second = Lock::acquire(root.path(), "x", Duration::from_millis(30));
        assert!(
            matches!(&second, Err(StateError::Busy { path, .. }) if path.ends_with("x.lock")),
            "{:?}",
            second.err()
        );
        drop(held);
        Lock::acquire(root.path(), "x", Duration::from_millis(30)).expect("after release");
    }

    #[test]
    fn damaged_records_are_set_aside_and_reported_once() {
        let root = tempfile::tempdir().expect("tempdir");
        for (name, bytes) in [
            ("not-json.json", &b"{not json"[..]),
            ("not-utf8.json", &b"{\"a\": \"\xff\"}"[..]),
            ("wrong-shape.json", &b"[1, 2]"[..]),
        ] {
            let path = root.path().join(name);
            fs::write(&path, bytes).expect("write");
            let read = read_json::<std::collections::BTreeMap<String, String>>(&path);
            assert!(matches!(read, Ok(None)), "{name}: {read:?}");
            assert!(!path.exists(), "{name}");
            let aside = root.path().join(format!("{name}.damaged"));
            assert_eq!(fs::read(&aside).expect("kept"), bytes, "{name}");
            // (Other tests of this process may leave notes of their own files.)
            let ours = || -> Vec<String> {
                take_notes()
                    .into_iter()
                    .filter(|n| n.contains(&path.display().to_string()))
                    .collect()
            };
            let notes = ours();
            assert_eq!(notes.len(), 1, "{name}: {notes:?}");
            assert!(notes[0].contains(".damaged"), "{notes:?}");
            // Once: the next read finds nothing to report.
            assert!(matches!(read_json::<serde_json::Value>(&path), Ok(None)));
            assert!(ours().is_empty());
        }
    }
}
