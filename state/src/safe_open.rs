//! Opening files a repository could have planted, safely: the one place amplihack opens a file
//! under a work tree, or a file a host names.
//!
//! * [`Dir`] is a directory reached from a root one component at a time (`openat` with
//!   `O_NOFOLLOW | O_DIRECTORY`), each component a real directory owned by this user, never a
//!   symbolic link; missing ones are created 0700. Files in it are opened with `O_NOFOLLOW`
//!   (and `O_NONBLOCK`, so a planted FIFO never blocks) and must be regular files. A link
//!   anywhere on the way is refused with [`StateError::Refused`]: nothing is written through it.
//! * Any other path is read through [`crate::bounded`] (regular files only, at most a cap).

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::fs::Permissions;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use amplihack_platform::fs::{self, Access, Kind, Refusal};

use crate::bounded::{Bounded, read_from};
use crate::files::{StateError, io_error};

/// A directory reached without following a link (see the module).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

fn refused(path: &Path, why: &'static str) -> StateError {
    StateError::Refused {
        path: path.to_path_buf(),
        why,
    }
}

/// A link or a non-directory where a directory belongs is a refusal, not an I/O error.
fn walk_error(path: &Path, action: &'static str, e: io::Error) -> StateError {
    match fs::refusal(&e) {
        Some(Refusal::Link) => refused(path, "is a symbolic link"),
        Some(Refusal::NotDirectory) => refused(path, "is not a directory"),
        Some(Refusal::NotRegular) => refused(path, "is not a regular file"),
        None => io_error(path, action)(e),
    }
}

fn c_name(name: &OsStr, path: &Path) -> Result<CString, StateError> {
    CString::new(name.as_bytes()).map_err(|_| refused(path, "has a NUL byte in its name"))
}

/// A single plain name (no `/`, `.`, `..`).
fn plain(name: &str, path: &Path) -> Result<CString, StateError> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(n)), None) => c_name(n, path),
        _ => Err(refused(path, "is not a plain file name")),
    }
}

/// Whether `name` in `dir` is a symbolic link itself (without following it).
fn is_link(dir: BorrowedFd<'_>, name: &CString) -> bool {
    matches!(fs::kind_at(dir, name), Ok(Kind::Link))
}

/// A refusal naming a link as a link (Linux answers "not a directory" for a link to a directory
/// opened as a directory without following, "too many links" for the others).
fn walk_error_at(
    dir: BorrowedFd<'_>,
    name: &CString,
    path: &Path,
    action: &'static str,
    e: io::Error,
) -> StateError {
    if matches!(fs::refusal(&e), Some(Refusal::Link | Refusal::NotDirectory)) && is_link(dir, name)
    {
        return refused(path, "is a symbolic link");
    }
    walk_error(path, action, e)
}

impl Dir {
    /// `root/rel`, each component of `rel` a real directory; `None` when one is missing.
    pub fn open(root: &Path, rel: &Path) -> Result<Option<Dir>, StateError> {
        Dir::root(root)?.descend(rel, false)
    }

    /// `root/rel`, creating the missing components (0700).
    pub fn create(root: &Path, rel: &Path) -> Result<Dir, StateError> {
        Dir::root(root)?
            .descend(rel, true)?
            .ok_or_else(|| refused(&root.join(rel), "vanished while it was created"))
    }

    /// The root itself: the user chose it (a project directory may be a link); what is below
    /// it is walked without following links.
    fn root(root: &Path) -> Result<Dir, StateError> {
        let name = c_name(root.as_os_str(), root)?;
        let fd = fs::open_dir(&name).map_err(|e| io_error(root, "open directory")(e))?;
        Ok(Dir {
            fd,
            path: root.to_path_buf(),
        })
    }

    /// The directory below this one along `rel` (plain components only).
    pub fn descend(self, rel: &Path, create: bool) -> Result<Option<Dir>, StateError> {
        let mut dir = self;
        for part in rel.components() {
            let Component::Normal(name) = part else {
                return Err(refused(&dir.path.join(rel), "is not a plain relative path"));
            };
            match dir.step(name, create)? {
                Some(next) => dir = next,
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    fn step(&self, name: &OsStr, create: bool) -> Result<Option<Dir>, StateError> {
        let path = self.path.join(name);
        let c = c_name(name, &path)?;
        let here = self.fd.as_fd();
        let mut made = false;
        let fd = match fs::open_dir_at(here, &c) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                match fs::make_dir_at(here, &c, 0o700) {
                    Ok(()) => made = true,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(walk_error(&path, "create directory", e)),
                }
                fs::open_dir_at(here, &c)
                    .map_err(|e| walk_error_at(here, &c, &path, "open directory", e))?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(walk_error_at(here, &c, &path, "open directory", e)),
        };
        let (_, mine) = fs::inspect(fd.as_fd()).map_err(io_error(&path, "inspect"))?;
        if !mine {
            return Err(refused(&path, "belongs to another user"));
        }
        if made {
            // Whatever the umask.
            fs::set_mode(fd.as_fd(), 0o700).map_err(io_error(&path, "set permissions of"))?;
        }
        Ok(Some(Dir { fd, path }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` in this directory (never through a link, never blocking); a regular file
    /// only.
    fn open_file(
        &self,
        name: &str,
        access: Access,
        action: &'static str,
    ) -> Result<File, StateError> {
        let path = self.path.join(name);
        let c = plain(name, &path)?;
        let here = self.fd.as_fd();
        let fd: OwnedFd = fs::open_file_at(here, &c, access)
            .map_err(|e| walk_error_at(here, &c, &path, action, e))?;
        let (kind, _) = fs::inspect(fd.as_fd()).map_err(io_error(&path, "inspect"))?;
        if !matches!(kind, Kind::File(_)) {
            return Err(refused(&path, "is not a regular file"));
        }
        Ok(File::from(fd))
    }

    /// A new file (0600); `None` when `name` exists already (whatever it is: never followed).
    pub fn create_new(&self, name: &str) -> Result<Option<File>, StateError> {
        match self.open_file(name, Access::CreateNew, "create") {
            Ok(file) => {
                file.set_permissions(Permissions::from_mode(0o600))
                    .map_err(io_error(&self.path.join(name), "set permissions of"))?;
                Ok(Some(file))
            }
            Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::AlreadyExists => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// `name` opened for appending, created 0600 when missing.
    pub fn open_append(&self, name: &str) -> Result<File, StateError> {
        match self.open_file(name, Access::Append, "open") {
            Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                // Created 0600 (whatever the umask); another call may have created it first.
                if let Some(file) = self.create_new(name)? {
                    drop(file);
                }
                self.open_file(name, Access::Append, "open")
            }
            opened => opened,
        }
    }

    /// Appends `line` (a newline is added) with one write, so concurrent lines never interleave.
    pub fn append_line(&self, name: &str, line: &str) -> Result<(), StateError> {
        let mut record = String::with_capacity(line.len() + 1);
        record.push_str(line);
        record.push('\n');
        self.open_append(name)?
            .write_all(record.as_bytes())
            .map_err(io_error(&self.path.join(name), "append to"))
    }

    /// Atomically replaces `name` with `bytes` (0600): a temporary file, fsynced, renamed over
    /// it (a rename replaces a link; it never writes through one).
    pub fn replace(&self, name: &str, bytes: &[u8]) -> Result<(), StateError> {
        let path = self.path.join(name);
        let target = plain(name, &path)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = format!(".amplihack-{}-{nanos}.tmp", std::process::id());
        let mut file = self
            .create_new(&temp)?
            .ok_or_else(|| refused(&self.path.join(&temp), "exists already"))?;
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        let temp_c = plain(&temp, &path)?;
        let renamed = written.and_then(|()| fs::rename_at(self.fd.as_fd(), &temp_c, &target));
        if let Err(e) = renamed {
            let _ = self.remove(&temp);
            return Err(io_error(&path, "replace")(e));
        }
        fs::sync_dir(self.fd.as_fd());
        Ok(())
    }

    /// A regular file's first `max` bytes; `None` when it does not exist. A link is refused.
    pub fn read(&self, name: &str, max: u64) -> Result<Option<Bounded>, StateError> {
        let path = self.path.join(name);
        match self.open_file(name, Access::Read, "read") {
            Ok(file) => read_from(file, max)
                .map(Some)
                .map_err(io_error(&path, "read")),
            Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// A regular file opened for reading (never through a link); `None` when it does not exist.
    pub fn open_read(&self, name: &str) -> Result<Option<File>, StateError> {
        match self.open_file(name, Access::Read, "read") {
            Ok(file) => Ok(Some(file)),
            Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Removes `name` (the entry itself, link or not); whether it was there.
    pub fn remove(&self, name: &str) -> Result<bool, StateError> {
        let path = self.path.join(name);
        let c = plain(name, &path)?;
        match fs::remove_at(self.fd.as_fd(), &c) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_error(&path, "remove")(e)),
        }
    }

    /// Renames a regular file `name` past `max_bytes` to `<name>.1` (one generation kept).
    pub fn rotate(&self, name: &str, max_bytes: u64) {
        let (Ok(from), Ok(to)) = (
            plain(name, &self.path),
            plain(&format!("{name}.1"), &self.path),
        ) else {
            return;
        };
        if matches!(fs::kind_at(self.fd.as_fd(), &from), Ok(Kind::File(size)) if size > max_bytes) {
            let _ = fs::rename_at(self.fd.as_fd(), &from, &to);
        }
    }
}

/// Refuses `path` when it, or a directory between `root` and it, is a symbolic link (or another
/// user's directory): for a file under a work tree that another module writes by path (the
/// project's Claude Code settings). `Ok` when it does not exist.
pub fn check_beneath(root: &Path, path: &Path) -> Result<(), StateError> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| refused(path, "is not under the project"))?;
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(refused(path, "is not a plain relative path"));
    };
    let Some(dir) = Dir::open(root, parent)? else {
        return Ok(());
    };
    if is_link(dir.fd.as_fd(), &c_name(name, path)?) {
        return Err(refused(path, "is a symbolic link"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounded::{check_regular, read_bounded};
    use std::os::unix::fs::symlink;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn creates_private_directories_and_files_and_appends() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = Dir::create(root.path(), Path::new("a/b")).expect("create");
        dir.append_line("x.jsonl", "one").expect("append");
        dir.append_line("x.jsonl", "two").expect("append");
        dir.replace("r.json", b"{}").expect("replace");
        dir.replace("r.json", b"{\"a\":1}").expect("replace again");
        dir.rotate("r.json", 100);
        assert!(
            dir.read("r.json", 10).expect("read").is_some(),
            "small: kept"
        );
        dir.rotate("r.json", 3);
        assert!(
            dir.read("r.json", 10).expect("read").is_none(),
            "past the cap: rotated"
        );
        assert!(dir.remove("r.json.1").expect("remove"));
        dir.replace("r.json", b"{\"a\":1}")
            .expect("replace after rotation");
        let b = root.path().join("a/b");
        assert_eq!(
            std::fs::read_to_string(b.join("x.jsonl")).expect("r"),
            "one\ntwo\n"
        );
        assert_eq!(std::fs::read(b.join("r.json")).expect("r"), b"{\"a\":1}");
        assert_eq!(mode(&b), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        assert_eq!(mode(&b.join("x.jsonl")), 0o600);
        assert_eq!(mode(&b.join("r.json")), 0o600);
        let names: Vec<_> = std::fs::read_dir(&b)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
        assert_eq!(
            dir.read("x.jsonl", 4).expect("read"),
            Some(Bounded {
                bytes: b"one\n".to_vec(),
                truncated: true
            })
        );
        assert!(dir.read("missing", 4).expect("read").is_none());
        assert!(
            Dir::open(root.path(), Path::new("a/none"))
                .expect("open")
                .is_none()
        );
    }

    /// A link anywhere on the way, or as the file, is refused; nothing is written outside.
    #[test]
    fn links_are_never_followed() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = root.path().join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        std::fs::write(outside.join("bashrc"), "safe\n").expect("write");
        let project = root.path().join("project");
        std::fs::create_dir_all(project.join("d/files")).expect("mkdir");
        symlink(&outside, project.join("d/linked")).expect("link dir");
        symlink(outside.join("bashrc"), project.join("d/files/log")).expect("link file");
        symlink("/dev/zero", project.join("d/files/zero")).expect("link zero");
        let refusal = |r: Result<(), StateError>| {
            assert!(
                matches!(r, Err(StateError::Refused { .. })),
                "{:?}",
                r.err()
            )
        };
        let linked = Dir::create(&project, Path::new("d/linked/x"));
        assert!(
            matches!(&linked, Err(StateError::Refused { why, .. }) if *why == "is a symbolic link"),
            "{linked:?}"
        );
        refusal(Dir::open(&project, Path::new("d/linked")).map(drop));
        let files = Dir::create(&project, Path::new("d/files")).expect("dir");
        refusal(files.append_line("log", "evil"));
        refusal(files.read("zero", 10).map(drop));
        // Replacing a link replaces the link, never its target.
        files.replace("log", b"mine").expect("replace");
        assert_eq!(
            std::fs::read_to_string(outside.join("bashrc")).expect("r"),
            "safe\n"
        );
        assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 1);
        // A file another module writes by path: refused when a link is on the way.
        let check = |rel: &str| check_beneath(&project, &project.join(rel));
        refusal(check("d/files/zero"));
        refusal(check("d/linked/settings.json"));
        check("d/files/new.json").expect("absent is fine");
        check("d/none/new.json").expect("absent is fine");
        // A path with `..` is refused before anything is opened.
        refusal(Dir::create(&project, Path::new("../outside")).map(drop));
    }

    #[test]
    fn only_regular_files_are_read_and_within_the_bound() {
        let root = tempfile::tempdir().expect("tempdir");
        let file = root.path().join("f");
        std::fs::write(&file, "0123456789").expect("write");
        let read = read_bounded(&file, 4).expect("read").expect("some");
        assert_eq!((read.text().as_str(), read.truncated), ("0123", true));
        let whole = read_bounded(&file, 10).expect("read").expect("some");
        assert!(!whole.truncated);
        let zero = root.path().join("zero");
        symlink("/dev/zero", &zero).expect("link");
        assert!(matches!(
            read_bounded(&zero, 4),
            Err(StateError::Refused { .. })
        ));
        assert!(matches!(
            check_regular(&zero, 4),
            Err(StateError::Refused { .. })
        ));
        assert!(matches!(
            check_regular(&file, 4),
            Err(StateError::Refused { .. })
        ));
        assert!(matches!(check_regular(&file, 10), Ok(true)));
        assert!(matches!(
            check_regular(&root.path().join("no"), 10),
            Ok(false)
        ));
        let fifo = root.path().join("fifo");
        fs::make_fifo(&fifo).expect("fifo");
        assert!(matches!(
            read_bounded(&fifo, 4),
            Err(StateError::Refused { .. })
        ));
        assert!(
            read_bounded(&root.path().join("none"), 4)
                .expect("ok")
                .is_none()
        );
    }
}
