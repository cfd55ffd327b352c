//! Loss-free edits of a JSON settings file.
//!
//! Every edit: follows a symlink to its target (a dotfile manager's link stays a link), reads
//! only a regular file of at most [`MAX_BYTES`] (a FIFO, a device or a socket is refused at once,
//! never waited on), takes a lock on a sidecar file (the settings file itself is replaced, so
//! locking it would protect nothing), parses the file and refuses to touch one it cannot parse
//! (naming path, line and column), computes the new text keeping the user's formatting, backs the
//! old file up (mode 0600, the last five kept), writes a temporary file in the target's
//! directory, fsyncs it, re-reads the target and starts over if someone else (Claude Code itself
//! writes this file) changed it meanwhile, renames the temporary file over the target with the
//! target's mode, and fsyncs the directory. A crash at any point leaves the old file or the new
//! one, never a torn one.
//!
//! The lock sidecar and the backups live beside the path the user named (`~/.claude/`), also
//! when that path is a symlink: a dotfiles repository the link points into gets nothing of ours.
//! A target with more than one hard link is written in place instead of renamed over (a rename
//! would cut it off from its other names): the backup is written and synced first, so a crash
//! mid-write leaves a torn file and, beside it, the backup of what it held.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use amplihack_state::bounded::{self, ReadError};
use amplihack_state::files::{self, StageStep};
use serde_json::Value;

use crate::json_text;
use crate::registration::ShapeError;

pub const BACKUP_MARKER: &str = ".amplihack-backup-";
pub const KEEP_BACKUPS: usize = 5;
const MAX_ATTEMPTS: usize = 10;
/// The most a settings file may weigh: settings are kilobytes; this bounds every read.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug)]
pub enum FileError {
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    Shape {
        path: PathBuf,
        error: ShapeError,
    },
    Io {
        /// What failed: the file itself, or its lock, temporary, backup or directory.
        path: PathBuf,
        action: &'static str,
        source: io::Error,
        /// The file being edited, when `path` is something beside it.
        file: Option<PathBuf>,
    },
    LockTimeout {
        path: PathBuf,
        lock: PathBuf,
        waited: Duration,
    },
    Contended {
        path: PathBuf,
    },
    /// A text edit refused the file (for example YAML it cannot parse), with the reason.
    Refused {
        path: PathBuf,
        message: String,
    },
    /// The file (or the symlink's target) is a FIFO, a device or a socket.
    NotRegular {
        path: PathBuf,
        target: PathBuf,
        kind: &'static str,
    },
    /// Larger than [`MAX_BYTES`].
    TooLarge {
        path: PathBuf,
    },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Parse {
                path,
                line,
                column,
                message,
            } => write!(
                f,
                "{}:{line}:{column}: not valid JSON: {message}. Fix the JSON at that line and column, then run the command again; the file was not changed",
                path.display()
            ),
            FileError::Shape { path, error } => {
                write!(
                    f,
                    "{}: {}; the file was not changed",
                    path.display(),
                    error.message()
                )
            }
            FileError::Io {
                path,
                action,
                source,
                file,
            } => {
                match file {
                    Some(file) if file != path => {
                        write!(f, "{}: cannot {action} {}", file.display(), path.display())?
                    }
                    _ => write!(f, "{}: cannot {action}", path.display())?,
                }
                write!(f, ": {source}; {}", fix_for(source, path))?;
                if *action != "sync the directory" {
                    write!(f, "; the file was not changed")?;
                }
                Ok(())
            }
            FileError::LockTimeout { path, lock, waited } => write!(
                f,
                "{}: another amplihack has held the lock {} for {:.1} s; wait for it to finish and run the command again",
                path.display(),
                lock.display(),
                waited.as_secs_f64()
            ),
            FileError::Refused { path, message } => {
                write!(f, "{}: {message}; the file was not changed", path.display())
            }
            FileError::NotRegular { path, target, kind } => {
                write!(f, "{}", path.display())?;
                if target != path {
                    write!(f, " (a symlink to {})", target.display())?;
                }
                write!(
                    f,
                    ": is {kind}, not a regular file; amplihack reads and edits only regular files: move it aside (or point the link at a regular file) and run the command again; the file was not changed"
                )
            }
            FileError::TooLarge { path } => write!(
                f,
                "{}: is larger than {} MiB, which no settings file is; move it aside (or point the link at the real settings file) and run the command again; the file was not changed",
                path.display(),
                MAX_BYTES / (1024 * 1024)
            ),
            FileError::Contended { path } => write!(
                f,
                "{}: the file kept changing while amplihack was editing it ({MAX_ATTEMPTS} attempts); close the program writing it and run the command again",
                path.display()
            ),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl FileError {
    /// Names `file`, the file being edited, in an error about something beside it.
    fn about(self, file: &Path) -> FileError {
        match self {
            FileError::Io {
                path,
                action,
                source,
                file: None,
            } => FileError::Io {
                path,
                action,
                source,
                file: Some(file.to_path_buf()),
            },
            other => other,
        }
    }
}

/// What to do about an I/O failure on `file` (the settings file, or what failed beside it).
fn fix_for(error: &io::Error, file: &Path) -> String {
    let quote = |p: &Path| amplihack_protocol::command::shell_quote(&p.to_string_lossy());
    let dir = file
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| ".".into());
    let quoted_dir = file.parent().map(quote).unwrap_or_else(|| ".".into());
    use ErrorKind as K;
    match error.kind() {
        K::StorageFull | K::QuotaExceeded => {
            format!("free some space on the disk that holds {dir}, then run the command again")
        }
        K::ReadOnlyFilesystem => format!(
            "{dir} is on a read-only file system: remount it read-write, or choose another scope (--scope project or --scope local)"
        ),
        K::PermissionDenied => format!(
            "you may not write in {dir}: check its owner and mode with `ls -ld {quoted_dir}` and make it yours (chown) or writable (chmod u+w), or install to another scope"
        ),
        K::IsADirectory => format!(
            "a directory is where the file should be: move it aside (mv {0} {0}.dir) and run the command again",
            quote(file)
        ),
        K::NotADirectory => format!(
            "a parent of {} is a file, not a directory: move it aside and run the command again",
            file.display()
        ),
        // ELOOP ("Too many levels of symbolic links" on Linux and macOS alike; its ErrorKind is not
        // stable yet), or the limit of our own walk.
        _ if error
            .to_string()
            .to_lowercase()
            .contains("levels of symbolic links") =>
        {
            format!(
                "the symlink at {} leads back to itself: point it at a real file or replace it with one",
                file.display()
            )
        }
        _ => "correct the cause above and run the command again".into(),
    }
}

fn io_error<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        path: path.to_path_buf(),
        action,
        source,
        file: None,
    }
}

/// What an edit wants the file to become, given its current value (`None`: no file).
pub enum NewContent {
    Value(Value),
    /// Remove the file (an uninstall that left our own registration file empty).
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Unchanged,
    Created,
    Updated,
    Deleted,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Unchanged => "unchanged",
            Action::Created => "created",
            Action::Updated => "updated",
            Action::Deleted => "deleted",
        }
    }
}

/// The result of one edit, planned or done.
#[derive(Debug)]
pub struct EditReport {
    pub path: PathBuf,
    /// The file actually written (the symlink's target).
    pub target: PathBuf,
    pub action: Action,
    pub before_text: Option<String>,
    pub after_text: Option<String>,
    pub before: Value,
    pub after: Value,
    pub backup: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy)]
pub struct EditOptions {
    pub dry_run: bool,
    pub lock_timeout: Duration,
    /// Back the old file up first. On for the user's files; off for amplihack's own state files.
    pub backup: bool,
    /// What the file's reader accepts: strict JSON, or JSONC for a host that reads comments.
    pub syntax: Syntax,
}

/// What a settings file's reader accepts. Claude Code's settings are strict JSON (a comment
/// there would break Claude Code: refused, as before); Qwen Code and Gemini CLI read theirs with
/// comments and trailing commas allowed, and amplihack then keeps every one of them
/// ([`json_text::blank_jsonc`]). Which host reads which is the installer's per-host flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    #[default]
    Json,
    Jsonc,
}

impl EditOptions {
    /// For amplihack's own state (install manifest, trust store, disabled plugins): locked and
    /// atomic like every edit, without backups nobody would read.
    pub fn state() -> EditOptions {
        EditOptions {
            backup: false,
            ..EditOptions::default()
        }
    }
}

impl Default for EditOptions {
    fn default() -> Self {
        // `AMPLIHACK_LOCK_TIMEOUT_MS` shortens or lengthens the wait for another amplihack.
        let lock_timeout = std::env::var(amplihack_env::AMPLIHACK_LOCK_TIMEOUT_MS)
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(Duration::from_secs(10), Duration::from_millis);
        EditOptions {
            dry_run: false,
            lock_timeout,
            backup: true,
            syntax: Syntax::Json,
        }
    }
}

/// Follows symlinks to the file that holds the bytes (which need not exist yet).
pub fn resolve_target(path: &Path) -> Result<PathBuf, FileError> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link =
                    fs::read_link(&current).map_err(io_error(&current, "read the symlink"))?;
                current = if link.is_absolute() {
                    link
                } else {
                    current.parent().unwrap_or(Path::new("/")).join(link)
                };
            }
            _ => return Ok(current),
        }
    }
    Err(FileError::Io {
        path: path.to_path_buf(),
        action: "follow the symlink",
        source: io::Error::other("too many levels of symbolic links"),
        file: None,
    })
}

thread_local! {
    /// The last file `read_json` parsed: its path, its syntax, its text and its value.
    static PARSED: std::cell::RefCell<Option<(PathBuf, Syntax, String, Value)>> =
        const { std::cell::RefCell::new(None) };
}

/// How a file's text is written, beyond its JSON: a leading byte-order mark, and whether every
/// line ends in CRLF. Edits are made on the plain text and written back the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoding {
    pub bom: bool,
    pub crlf: bool,
}

impl Encoding {
    pub fn decode(text: &str) -> (Encoding, String) {
        let (bom, rest) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let lf = rest.matches('\n').count();
        let crlf = lf > 0 && rest.matches("\r\n").count() == lf;
        let work = if crlf {
            rest.replace("\r\n", "\n")
        } else {
            rest.to_string()
        };
        (Encoding { bom, crlf }, work)
    }

    pub fn encode(self, text: &str) -> String {
        let body = if self.crlf {
            text.replace('\n', "\r\n")
        } else {
            text.to_string()
        };
        if self.bom {
            format!("\u{feff}{body}")
        } else {
            body
        }
    }
}

/// Reads and parses a settings file without changing anything. `Ok(None)` when it does not exist.
pub fn read_json(path: &Path) -> Result<Option<(String, Value)>, FileError> {
    read_json_as(path, Syntax::Json)
}

/// [`read_json`] for a file whose reader accepts `syntax`.
pub fn read_json_as(path: &Path, syntax: Syntax) -> Result<Option<(String, Value)>, FileError> {
    let target = resolve_target(path)?;
    let text = match read_regular(path, &target)? {
        Some(bytes) => String::from_utf8(bytes).map_err(|e| FileError::Parse {
            path: path.to_path_buf(),
            line: 1,
            column: e.utf8_error().valid_up_to() + 1,
            message: "the file is not UTF-8".into(),
        })?,
        None => return Ok(None),
    };
    // One command reads the same file several times (a check before anything is written, a
    // preview without the lock, the edit under it): the same bytes are parsed once.
    if let Some(value) = PARSED.with(|cache| {
        cache
            .borrow()
            .as_ref()
            .filter(|(p, s, t, _)| p == &target && *s == syntax && *t == text)
            .map(|(_, _, _, v)| v.clone())
    }) {
        return Ok(Some((text, value)));
    }
    let (_, work) = Encoding::decode(&text);
    // Comments and trailing commas become spaces: positions in errors stay the user's.
    let work = match syntax {
        Syntax::Json => work,
        Syntax::Jsonc => json_text::blank_jsonc(&work),
    };
    if work.trim().is_empty() {
        // An empty file is a settings file nobody has written yet.
        return Ok(Some((text, Value::Object(Default::default()))));
    }
    // Parsers disagree on which of two equal keys counts; never rewrite such a file silently.
    if let Some((line, column, key)) = json_text::duplicate_key(&work) {
        return Err(FileError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: format!(
                "the key \"{key}\" appears twice in one object (JSON readers disagree on which value counts); remove one of them"
            ),
        });
    }
    let value: Value = serde_json::from_str(&work).map_err(|e| {
        let message = e.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.clone(), |i| message[..i].to_string());
        FileError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;
    PARSED.with(|cache| {
        *cache.borrow_mut() = Some((target.clone(), syntax, text.clone(), value.clone()))
    });
    Ok(Some((text, value)))
}

/// Applies `change` to the file at `path` as described in the module documentation.
pub fn edit_json(
    path: &Path,
    options: &EditOptions,
    change: impl FnMut(Option<&Value>) -> Result<NewContent, ShapeError>,
) -> Result<EditReport, FileError> {
    edit_json_read(path, options, None, change)
}

/// [`edit_json`] when the caller has just read the file with [`read_json`] (`current`): the
/// preview that decides whether anything changes uses that instead of reading and parsing the file
/// again. A change is still planned on what is read under the lock, as always.
pub fn edit_json_known(
    path: &Path,
    options: &EditOptions,
    current: Option<(String, Value)>,
    change: impl FnMut(Option<&Value>) -> Result<NewContent, ShapeError>,
) -> Result<EditReport, FileError> {
    edit_json_read(path, options, Some(current), change)
}

fn edit_json_read(
    path: &Path,
    options: &EditOptions,
    known: Option<Option<(String, Value)>>,
    mut change: impl FnMut(Option<&Value>) -> Result<NewContent, ShapeError>,
) -> Result<EditReport, FileError> {
    let target = resolve_target(path)?;

    // `render`: splice the new text (needed to write, or to show a dry run); a preview that only
    // decides whether anything changes skips it.
    let plan = |current: Option<(String, Value)>,
                change: &mut dyn FnMut(Option<&Value>) -> Result<NewContent, ShapeError>,
                render: bool| {
        let wanted =
            change(current.as_ref().map(|(_, v)| v)).map_err(|error| FileError::Shape {
                path: path.to_path_buf(),
                error,
            })?;
        let (before_text, before) = match current {
            Some((text, value)) => (Some(text), value),
            None => (None, Value::Null),
        };
        let (action, after_text, after) = match (wanted, &before_text) {
            (NewContent::Delete, None) => (Action::Unchanged, None, Value::Null),
            (NewContent::Delete, Some(_)) => (Action::Deleted, None, Value::Null),
            (NewContent::Value(value), None) => {
                (Action::Created, Some(json_text::fresh(&value)), value)
            }
            (NewContent::Value(value), Some(text)) if value == before => {
                (Action::Unchanged, Some(text.clone()), value)
            }
            (NewContent::Value(value), Some(_)) if !render => (Action::Updated, None, value),
            (NewContent::Value(value), Some(text)) => {
                // A byte-order mark and CRLF line endings stay as they were.
                let (encoding, work) = Encoding::decode(text);
                let new_text = if work.trim().is_empty() {
                    json_text::fresh(&value)
                } else {
                    json_text::splice(&work, &before, &value)
                };
                (Action::Updated, Some(encoding.encode(&new_text)), value)
            }
        };
        Ok::<_, FileError>(EditReport {
            path: path.to_path_buf(),
            target: target.clone(),
            action,
            before_text,
            after_text,
            before,
            after,
            backup: None,
        })
    };

    // A no-op needs no directory, lock or backup: re-runs stay cheap and leave nothing behind.
    let current = match known {
        Some(current) => current,
        None => read_json_as(path, options.syntax)?,
    };
    let preview = plan(current, &mut change, options.dry_run)?;
    if options.dry_run || preview.action == Action::Unchanged {
        return Ok(preview);
    }

    commit(path, &target, options, || {
        plan(read_json_as(path, options.syntax)?, &mut change, true)
    })
}

/// The write both kinds of edit share, under the sidecar lock: `attempt` reads the file and plans
/// the edit; the old bytes are backed up, the new ones staged beside the file, and renamed into
/// place only if nobody changed the file meanwhile (else the edit starts over from their
/// version); then the directory is synced and old backups pruned.
fn commit(
    path: &Path,
    target: &Path,
    options: &EditOptions,
    attempt: impl FnMut() -> Result<EditReport, FileError>,
) -> Result<EditReport, FileError> {
    let sites = Sites::of(path, target);
    let dir_existed = sites.dir.is_dir();
    let lock_existed = sites.lock.exists();
    let result = commit_locked(path, target, options, &sites, attempt);
    if result.is_err() {
        // A failed edit leaves nothing of ours behind: no lock sidecar, no directory we made.
        if !lock_existed {
            let _ = fs::remove_file(&sites.lock);
        }
        if !dir_existed {
            let _ = fs::remove_dir(&sites.dir);
        }
    }
    result.map_err(|e| e.about(path))
}

/// Where an edit writes: the temporary file beside the target (a rename stays within one
/// directory); the lock sidecar and the backups beside the path the user named, which differs
/// from the target's only when that path is a symlink.
struct Sites {
    /// The target's directory and name.
    dir: PathBuf,
    name: String,
    /// The named path's directory and name: backups go there.
    side_dir: PathBuf,
    side_name: String,
    lock: PathBuf,
}

impl Sites {
    fn of(path: &Path, target: &Path) -> Sites {
        let split = |p: &Path| {
            (
                p.parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| PathBuf::from(".")),
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "settings".into()),
            )
        };
        let (dir, name) = split(target);
        let (side_dir, side_name) = split(path);
        let lock = side_dir.join(format!(".{side_name}.amplihack.lock"));
        Sites {
            dir,
            name,
            side_dir,
            side_name,
            lock,
        }
    }
}

fn commit_locked(
    path: &Path,
    target: &Path,
    options: &EditOptions,
    sites: &Sites,
    mut attempt: impl FnMut() -> Result<EditReport, FileError>,
) -> Result<EditReport, FileError> {
    let Sites {
        dir,
        name,
        side_dir,
        side_name,
        lock: lock_path,
    } = sites;
    // Directories we create are private: settings can hold secrets (`env`). (The named path's
    // directory is the target's, or holds the symlink.)
    amplihack_state::files::private_dir(dir).map_err(|e| FileError::Io {
        path: dir.to_path_buf(),
        action: "create the directory",
        source: std::io::Error::other(e.to_string()),
        file: None,
    })?;
    let _lock = lock(lock_path, target, options.lock_timeout)?;
    remove_stale_temporaries(dir, name);

    for _ in 0..MAX_ATTEMPTS {
        let mut report = attempt()?;
        if report.action == Action::Unchanged {
            return Ok(report);
        }
        let backup = match (&report.before_text, options.backup) {
            (Some(text), true) => Some(write_backup(side_dir, side_name, text)?),
            _ => None,
        };
        // From here a failure leaves the file as it was, so its backup goes too.
        let discard = |backup: Option<PathBuf>| {
            if let Some(backup) = backup {
                let _ = fs::remove_file(backup);
            }
        };
        // A target with other hard links is written in place: a rename would cut it off them.
        let in_place = {
            use std::os::unix::fs::MetadataExt;
            fs::symlink_metadata(target).is_ok_and(|m| m.is_file() && m.nlink() > 1)
        };
        let staged = match &report.after_text {
            Some(text) if !in_place => match stage(dir, name, target, text) {
                Ok(staged) => Some(staged),
                Err(e) => {
                    discard(backup);
                    return Err(e);
                }
            },
            _ => None,
        };
        // Someone else wrote the file since we read it: start over from their version.
        match read_bytes(target) {
            Ok(now) if now == report.before_text => {}
            Ok(_) => {
                discard(backup);
                continue;
            }
            Err(e) => {
                discard(backup);
                return Err(e);
            }
        }
        let written = match (staged, &report.after_text) {
            (Some(staged), _) => staged.persist(target).map(drop).map_err(|e| FileError::Io {
                path: target.to_path_buf(),
                action: "rename into place",
                source: e.error,
                file: None,
            }),
            (None, Some(text)) => write_in_place(target, text),
            (None, None) => fs::remove_file(target).map_err(io_error(target, "remove")),
        };
        if let Err(e) = written {
            discard(backup);
            return Err(e);
        }
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error(dir, "sync the directory"))?;
        prune_backups(side_dir, side_name);
        report.backup = backup;
        return Ok(report);
    }
    Err(FileError::Contended {
        path: path.to_path_buf(),
    })
}

/// Rewrites a hard-linked file through its inode (mode, owner and every link kept), synced.
fn write_in_place(target: &Path, text: &str) -> Result<(), FileError> {
    let mut file = amplihack_platform::fs::no_follow_no_block(OpenOptions::new().write(true))
        .open(target)
        .map_err(io_error(target, "open for writing"))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.set_len(text.len() as u64))
        .and_then(|()| file.sync_all())
        .map_err(io_error(target, "write in place"))
}

/// A text edit: the current text (`None`: no file) to the new text (`None`: remove the file), or
/// a refusal with its reason.
pub type TextChange<'a> = dyn FnMut(Option<&str>) -> Result<Option<String>, String> + 'a;

/// Like [`edit_json`] for a text file whose edit is computed by `change` from the current text
/// (`None`: no file) into the new text (`None`: remove the file), or refused with a reason. The
/// same lock, backup, staged write, re-read and rename.
pub fn edit_text(
    path: &Path,
    options: &EditOptions,
    mut change: impl FnMut(Option<&str>) -> Result<Option<String>, String>,
) -> Result<EditReport, FileError> {
    let target = resolve_target(path)?;
    let plan = |before: Option<String>, change: &mut TextChange<'_>| {
        let after = change(before.as_deref()).map_err(|message| FileError::Refused {
            path: path.to_path_buf(),
            message,
        })?;
        let action = match (&before, &after) {
            (None, None) => Action::Unchanged,
            (Some(_), None) => Action::Deleted,
            (None, Some(_)) => Action::Created,
            (Some(b), Some(a)) if a == b => Action::Unchanged,
            (Some(_), Some(_)) => Action::Updated,
        };
        Ok::<_, FileError>(EditReport {
            path: path.to_path_buf(),
            target: target.clone(),
            action,
            before_text: before,
            after_text: after,
            before: Value::Null,
            after: Value::Null,
            backup: None,
        })
    };
    let read = || read_utf8(path, &target);
    let preview = plan(read()?, &mut change)?;
    if options.dry_run || preview.action == Action::Unchanged {
        return Ok(preview);
    }
    commit(path, &target, options, || plan(read()?, &mut change))
}

/// A settings file's text, for reading only (symlinks followed; a regular UTF-8 file of at most
/// [`MAX_BYTES`], else the error naming it). `Ok(None)` when it does not exist.
pub fn read_text(path: &Path) -> Result<Option<String>, FileError> {
    read_utf8(path, &resolve_target(path)?)
}

/// `target`'s text (`path` resolves to it), `None` when it does not exist; not UTF-8 is an error
/// naming `path` and where the text stops being UTF-8.
fn read_utf8(path: &Path, target: &Path) -> Result<Option<String>, FileError> {
    read_regular(path, target)?
        .map(|bytes| {
            String::from_utf8(bytes).map_err(|e| FileError::Parse {
                path: path.to_path_buf(),
                line: 1,
                column: e.utf8_error().valid_up_to() + 1,
                message: "the file is not UTF-8".into(),
            })
        })
        .transpose()
}

fn read_bytes(path: &Path) -> Result<Option<String>, FileError> {
    Ok(read_regular(path, path)?.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// The bytes of `target` (what `path` resolves to), `None` when it does not exist. Only a regular
/// file is read ([`bounded::open_regular`]: never blocking on a FIFO), and at most
/// [`MAX_BYTES`].
fn read_regular(path: &Path, target: &Path) -> Result<Option<Vec<u8>>, FileError> {
    use std::io::Read;
    let file = match bounded::open_regular(target) {
        Ok((file, _)) => file,
        Err(ReadError::Io(e)) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(ReadError::Io(e)) => return Err(io_error(path, "read")(e)),
        // What reading a directory reports (EISDIR), with its fix.
        Err(ReadError::NotRegular("a directory")) => {
            return Err(io_error(path, "read")(
                amplihack_platform::fs::is_a_directory(),
            ));
        }
        Err(ReadError::NotRegular(kind)) => {
            return Err(FileError::NotRegular {
                path: path.to_path_buf(),
                target: target.to_path_buf(),
                kind: if kind == "a FIFO" {
                    "a FIFO (named pipe)"
                } else {
                    kind
                },
            });
        }
        Err(ReadError::TooLarge { .. }) => {
            return Err(FileError::TooLarge {
                path: path.to_path_buf(),
            });
        }
    };
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(path, "read"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    Ok(Some(bytes))
}

fn lock(lock_path: &Path, target: &Path, timeout: Duration) -> Result<files::Lock, FileError> {
    files::Lock::at(lock_path, timeout).map_err(|e| match e {
        files::LockError::Open(e) => io_error(lock_path, "open the lock file")(e),
        files::LockError::Lock(e) => FileError::Io {
            path: lock_path.to_path_buf(),
            action: "lock",
            source: e,
            file: None,
        },
        files::LockError::Busy(_) => FileError::LockTimeout {
            path: target.to_path_buf(),
            lock: lock_path.to_path_buf(),
            waited: timeout,
        },
    })
}

fn temporary_prefix(name: &str) -> String {
    format!(".{name}.amplihack-tmp-")
}

/// Temporaries left by a killed run; we hold the lock, so none of them is anyone's work.
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let prefix = temporary_prefix(name);
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn stage(
    dir: &Path,
    name: &str,
    target: &Path,
    text: &str,
) -> Result<tempfile::NamedTempFile, FileError> {
    let mode = fs::metadata(target)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o644);
    files::stage(dir, &temporary_prefix(name), text.as_bytes(), mode).map_err(|e| {
        let action = match e.step {
            StageStep::Create => "create the temporary file",
            StageStep::Write => "write",
            StageStep::Permissions => "set permissions",
            StageStep::Sync => "sync",
        };
        // Before it exists, named as the file it would have been, so the fix names its directory.
        let temp = e
            .temp
            .unwrap_or_else(|| dir.join(format!("{}…", temporary_prefix(name))));
        io_error(&temp, action)(e.source)
    })
}

fn write_backup(dir: &Path, name: &str, text: &str) -> Result<PathBuf, FileError> {
    let stamp = backup_stamp();
    let mut path = dir.join(format!("{name}{BACKUP_MARKER}{stamp}"));
    let mut n = 1;
    while path.exists() {
        path = dir.join(format!("{name}{BACKUP_MARKER}{stamp}-{n}"));
        n += 1;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode_0600()
        .open(&path)
        .map_err(io_error(&path, "create the backup"))?;
    if let Err(e) = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
    {
        let _ = fs::remove_file(&path); // never a truncated backup
        return Err(io_error(&path, "write the backup")(e));
    }
    Ok(path)
}

trait Mode0600 {
    fn mode_0600(&mut self) -> &mut Self;
}

impl Mode0600 for OpenOptions {
    fn mode_0600(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::mode(self, 0o600)
    }
}

/// `YYYYMMDDTHHMMSS.mmmZ`: sorts by time as text.
fn backup_stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let iso = amplihack_state::time::utc_now();
    let compact: String = iso.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!(
        "{}.{:03}Z",
        compact.trim_end_matches('Z'),
        now.subsec_millis()
    )
}

/// Backups of `name` in `dir`, oldest first.
pub fn backups(dir: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!("{name}{BACKUP_MARKER}");
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

fn prune_backups(dir: &Path, name: &str) {
    let all = backups(dir, name);
    if all.len() > KEEP_BACKUPS {
        for old in &all[..all.len() - KEEP_BACKUPS] {
            let _ = fs::remove_file(old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Claude Code writes settings.json without our lock. A write between our read and our rename
    /// is seen on the re-read; the edit starts over from that version and keeps its change.
    #[test]
    fn a_writer_that_ignores_the_lock_is_detected_and_its_change_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"a\": 1}").expect("write");
        let mut calls = 0;
        let report = edit_json(&path, &EditOptions::default(), |current| {
            calls += 1;
            // Call 1 is the unlocked preview; call 2 is the first locked attempt, after its read.
            if calls == 2 {
                std::fs::write(&path, "{\"a\": 1, \"theirs\": true}").expect("concurrent write");
            }
            let mut value = current.cloned().unwrap_or_else(|| json!({}));
            value["ours"] = json!(true);
            Ok(NewContent::Value(value))
        })
        .expect("edit");
        assert_eq!(calls, 3, "started over once");
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(written, json!({"a": 1, "theirs": true, "ours": true}));
        assert_eq!(report.action, Action::Updated);
        // The backup of the abandoned attempt was removed; the kept one holds what we replaced.
        let kept = backups(dir.path(), "settings.json");
        assert_eq!(kept.len(), 1);
        assert_eq!(
            std::fs::read_to_string(&kept[0]).expect("backup"),
            "{\"a\": 1, \"theirs\": true}"
        );
    }

    fn add_ours(current: Option<&Value>) -> Result<NewContent, ShapeError> {
        let mut value = current.cloned().unwrap_or_else(|| json!({}));
        value["ours"] = json!(true);
        Ok(NewContent::Value(value))
    }

    /// A FIFO, a device or a socket where the settings file should be (or where its symlink
    /// points) is refused at once, naming the file; nothing is created beside it.
    #[test]
    fn files_that_are_not_regular_are_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("settings.json");
        amplihack_platform::fs::make_fifo(&fifo).expect("fifo");
        let device = dir.path().join("device.json");
        std::os::unix::fs::symlink("/dev/zero", &device).expect("symlink");
        for (path, kind) in [(&fifo, "a FIFO"), (&device, "a device")] {
            let started = std::time::Instant::now();
            let error = edit_json(path, &EditOptions::default(), add_ours).expect_err("refused");
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{kind}: no wait"
            );
            let message = error.to_string();
            assert!(
                message.starts_with(&path.display().to_string()) && message.contains(kind),
                "{message}"
            );
            let error = read_json(path).expect_err("refused");
            assert!(matches!(error, FileError::NotRegular { .. }), "{error}");
            let error = read_text(path).expect_err("refused");
            assert!(matches!(error, FileError::NotRegular { .. }), "{error}");
        }
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["device.json", "settings.json"]);
    }

    #[test]
    fn reads_are_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        let file = File::create(&path).expect("create");
        file.set_len(MAX_BYTES + 1).expect("sparse");
        let error = read_json(&path).expect_err("too large");
        assert!(matches!(error, FileError::TooLarge { .. }), "{error}");
        assert!(error.to_string().contains("larger than 16 MiB"), "{error}");
    }

    /// A hard-linked settings file keeps its links (it is written in place, after the backup).
    #[test]
    fn a_hard_linked_file_keeps_its_links() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        let other = dir.path().join("dotfiles-settings.json");
        std::fs::write(
            &path,
            "{\"a\": 1, \"long\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n",
        )
        .expect("write");
        std::fs::hard_link(&path, &other).expect("link");
        let report = edit_json(&path, &EditOptions::default(), |current| {
            let mut value = current.cloned().unwrap_or_else(|| json!({}));
            value.as_object_mut().expect("object").remove("long");
            Ok(NewContent::Value(value))
        })
        .expect("edit");
        assert_eq!(std::fs::metadata(&path).expect("meta").nlink(), 2);
        let written = std::fs::read_to_string(&other).expect("other");
        assert_eq!(
            serde_json::from_str::<Value>(&written).expect("json"),
            json!({"a": 1})
        );
        assert_eq!(written, std::fs::read_to_string(&path).expect("path"));
        let backup = report.backup.expect("backed up");
        assert!(
            std::fs::read_to_string(backup)
                .expect("backup")
                .contains("long"),
            "the backup holds the old bytes"
        );
    }

    /// With a symlinked settings file, the backup and the lock sidecar are written beside the
    /// link, under the link's name; the target's directory gets only the new bytes.
    #[test]
    fn a_symlinks_backup_and_lock_go_beside_the_link() {
        let home = tempfile::tempdir().expect("tempdir");
        let dotfiles = tempfile::tempdir().expect("tempdir");
        let target = dotfiles.path().join("claude-settings.json");
        std::fs::write(&target, "{\"a\": 1}").expect("write");
        let path = home.path().join("settings.json");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        let report = edit_json(&path, &EditOptions::default(), add_ours).expect("edit");
        assert_eq!(report.target, target);
        assert!(std::fs::symlink_metadata(&path).expect("meta").is_symlink());
        assert_eq!(backups(home.path(), "settings.json").len(), 1);
        assert!(home.path().join(".settings.json.amplihack.lock").exists());
        let in_dotfiles: Vec<_> = std::fs::read_dir(dotfiles.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(in_dotfiles, ["claude-settings.json"]);
        assert!(
            std::fs::read_to_string(&target)
                .expect("target")
                .contains("ours")
        );
    }
}
