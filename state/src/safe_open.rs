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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

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

/// A link (`ELOOP`) or a non-directory where a directory belongs is a refusal, not an I/O error.
fn walk_error(path: &Path, action: &'static str, e: io::Error) -> StateError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => refused(path, "is a symbolic link"),
        Some(libc::ENOTDIR) => refused(path, "is not a directory"),
        Some(libc::ENXIO) => refused(path, "is not a regular file"),
        _ => io_error(path, action)(e),
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

fn openat(dir: RawFd, name: &CString, flags: i32, mode: libc::mode_t) -> io::Result<OwnedFd> {
    loop {
        // SAFETY: `name` is a valid C string; `dir` is an open descriptor (or AT_FDCWD).
        let fd = unsafe {
            libc::openat(
                dir,
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                libc::c_uint::from(mode),
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh descriptor we own.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Whether `name` in `dir` is a symbolic link itself (`fstatat` without following it).
fn is_link(dir: RawFd, name: &CString) -> bool {
    // SAFETY: zeroed `stat` is a valid out-buffer; valid descriptor and C string.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let ret = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    ret == 0 && is(&st, libc::S_IFLNK)
}

/// A refusal naming a link as a link (Linux answers `ENOTDIR` for a link to a directory opened
/// with `O_NOFOLLOW | O_DIRECTORY`, `ELOOP` for the others).
fn walk_error_at(
    dir: RawFd,
    name: &CString,
    path: &Path,
    action: &'static str,
    e: io::Error,
) -> StateError {
    if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) && is_link(dir, name) {
        return refused(path, "is a symbolic link");
    }
    walk_error(path, action, e)
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: zeroed `stat` is a valid out-buffer; `fd` is open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

fn is(st: &libc::stat, kind: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == kind
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
        let fd = openat(libc::AT_FDCWD, &name, libc::O_RDONLY | libc::O_DIRECTORY, 0)
            .map_err(|e| io_error(root, "open directory")(e))?;
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
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let mut made = false;
        let fd = match openat(self.fd.as_raw_fd(), &c, flags, 0) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                // SAFETY: valid descriptor and C string.
                match check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o700) }) {
                    Ok(()) => made = true,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(walk_error(&path, "create directory", e)),
                }
                openat(self.fd.as_raw_fd(), &c, flags, 0).map_err(|e| {
                    walk_error_at(self.fd.as_raw_fd(), &c, &path, "open directory", e)
                })?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(walk_error_at(
                    self.fd.as_raw_fd(),
                    &c,
                    &path,
                    "open directory",
                    e,
                ));
            }
        };
        let st = fstat(fd.as_raw_fd()).map_err(io_error(&path, "inspect"))?;
        // SAFETY: geteuid cannot fail.
        if st.st_uid != unsafe { libc::geteuid() } {
            return Err(refused(&path, "belongs to another user"));
        }
        if made {
            // Whatever the umask.
            // SAFETY: valid descriptor.
            check(unsafe { libc::fchmod(fd.as_raw_fd(), 0o700) })
                .map_err(io_error(&path, "set permissions of"))?;
        }
        Ok(Some(Dir { fd, path }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` in this directory with `flags` (plus `O_NOFOLLOW | O_NONBLOCK`); a regular
    /// file only.
    fn open_file(&self, name: &str, flags: i32, action: &'static str) -> Result<File, StateError> {
        let path = self.path.join(name);
        let c = plain(name, &path)?;
        let fd = openat(
            self.fd.as_raw_fd(),
            &c,
            flags | libc::O_NOFOLLOW | libc::O_NONBLOCK,
            0o600,
        )
        .map_err(|e| walk_error_at(self.fd.as_raw_fd(), &c, &path, action, e))?;
        let st = fstat(fd.as_raw_fd()).map_err(io_error(&path, "inspect"))?;
        if !is(&st, libc::S_IFREG) {
            return Err(refused(&path, "is not a regular file"));
        }
        Ok(File::from(fd))
    }

    /// A new file (0600); `None` when `name` exists already (whatever it is: never followed).
    pub fn create_new(&self, name: &str) -> Result<Option<File>, StateError> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        match self.open_file(name, flags, "create") {
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
        let flags = libc::O_WRONLY | libc::O_APPEND;
        match self.open_file(name, flags, "open") {
            Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                // Created 0600 (whatever the umask); another call may have created it first.
                if let Some(file) = self.create_new(name)? {
                    drop(file);
                }
                self.open_file(name, flags, "open")
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
        let renamed = written.and_then(|()| {
            // SAFETY: valid descriptors and C strings.
            check(unsafe {
                libc::renameat(
                    self.fd.as_raw_fd(),
                    temp_c.as_ptr(),
                    self.fd.as_raw_fd(),
                    target.as_ptr(),
                )
            })
        });
        if let Err(e) = renamed {
            let _ = self.remove(&temp);
            return Err(io_error(&path, "replace")(e));
        }
        // SAFETY: valid descriptor.
        unsafe { libc::fsync(self.fd.as_raw_fd()) };
        Ok(())
    }

    /// A regular file's first `max` bytes; `None` when it does not exist. A link is refused.
    pub fn read(&self, name: &str, max: u64) -> Result<Option<Bounded>, StateError> {
        let path = self.path.join(name);
        match self.open_file(name, libc::O_RDONLY, "read") {
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
        match self.open_file(name, libc::O_RDONLY, "read") {
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
        // SAFETY: valid descriptor and C string.
        match check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }) {
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
        // SAFETY: zeroed `stat` is a valid out-buffer; valid descriptor and C string.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let found = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                from.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        } == 0;
        if found && is(&st, libc::S_IFREG) && u64::try_from(st.st_size).unwrap_or(0) > max_bytes {
            // SAFETY: valid descriptors and C strings.
            let _ = unsafe {
                libc::renameat(
                    self.fd.as_raw_fd(),
                    from.as_ptr(),
                    self.fd.as_raw_fd(),
                    to.as_ptr(),
                )
            };
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
    if is_link(dir.fd.as_raw_fd(), &c_name(name, path)?) {
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
        let c = CString::new(fifo.as_os_str().as_bytes()).expect("c");
        // SAFETY: valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
