//! Files and directories a repository could have planted: walks that never follow a link, opens
//! that never block on a FIFO, and the kinds of refusal the system reports.
//!
//! Every call here is relative to a directory already open ([`BorrowedFd`]), so a name is looked
//! up once, in the directory that was checked, and a link swapped in between two steps is never
//! followed.

use std::ffi::{CStr, CString};
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What a directory entry is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file of this many bytes.
    File(u64),
    Directory,
    Link,
    /// A FIFO, a socket or a device.
    Other,
}

/// Why the system refused to open a name the way amplihack asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The last component is a symbolic link (or, for a directory walk, may be one: see
    /// [`kind_at`] to tell).
    Link,
    /// A component is not a directory.
    NotDirectory,
    /// A FIFO nobody reads, opened without blocking.
    NotRegular,
}

/// The refusal behind an open's error, when it is one.
pub fn refusal(e: &io::Error) -> Option<Refusal> {
    match e.raw_os_error() {
        Some(libc::ELOOP) => Some(Refusal::Link),
        Some(libc::ENOTDIR) => Some(Refusal::NotDirectory),
        Some(libc::ENXIO) => Some(Refusal::NotRegular),
        _ => None,
    }
}

/// The error reading a directory as a file reports.
pub fn is_a_directory() -> io::Error {
    io::Error::from_raw_os_error(libc::EISDIR)
}

/// How a file is opened in a directory. Every open is close-on-exec, never follows a link in
/// the last component and never blocks (a FIFO opens at once, then is refused by its kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Appending, the file existing already.
    Append,
    /// Writing a file that must not exist yet (created 0600 before the umask).
    CreateNew,
}

fn retry<T>(mut call: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match call() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            done => return done,
        }
    }
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn open_raw(
    dir: libc::c_int,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    retry(|| {
        // SAFETY: `name` is a valid C string; `dir` is an open descriptor or AT_FDCWD.
        let fd = unsafe {
            libc::openat(
                dir,
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                libc::c_uint::from(mode),
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh descriptor nobody else owns.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        } else {
            Err(io::Error::last_os_error())
        }
    })
}

/// A path as the system takes it; a NUL byte in it is an `InvalidInput` error.
pub fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
}

/// Opens a directory the user named (links on the way are followed: the user chose it).
pub fn open_dir(path: &CStr) -> io::Result<OwnedFd> {
    open_raw(libc::AT_FDCWD, path, libc::O_RDONLY | libc::O_DIRECTORY, 0)
}

/// Opens the directory `name` in `dir`, refusing a link.
pub fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    open_raw(
        dir.as_raw_fd(),
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )
}

/// Creates the directory `name` in `dir` with `mode` (before the umask).
pub fn make_dir_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: valid descriptor and C string.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) })
}

/// Opens the file `name` in `dir` (see [`Access`]).
pub fn open_file_at(dir: BorrowedFd<'_>, name: &CStr, access: Access) -> io::Result<OwnedFd> {
    let flags = match access {
        Access::Read => libc::O_RDONLY,
        Access::Append => libc::O_WRONLY | libc::O_APPEND,
        Access::CreateNew => libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
    };
    open_raw(
        dir.as_raw_fd(),
        name,
        flags | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0o600,
    )
}

fn kind_from(st: &libc::stat) -> Kind {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File(u64::try_from(st.st_size).unwrap_or(0)),
        libc::S_IFDIR => Kind::Directory,
        libc::S_IFLNK => Kind::Link,
        _ => Kind::Other,
    }
}

/// What `name` in `dir` is, without following it.
pub fn kind_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Kind> {
    // SAFETY: a zeroed `stat` is a valid out-buffer; valid descriptor and C string.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(kind_from(&st))
}

/// What an open file is, and whether this process's effective user owns it.
pub fn inspect(fd: BorrowedFd<'_>) -> io::Result<(Kind, bool)> {
    // SAFETY: a zeroed `stat` is a valid out-buffer; `fd` is open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok((kind_from(&st), st.st_uid == effective_uid()))
}

/// Sets an open file's permission bits, whatever the umask.
pub fn set_mode(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    // SAFETY: valid descriptor.
    check(unsafe { libc::fchmod(fd.as_raw_fd(), mode as libc::mode_t) })
}

/// Renames `from` to `to`, both in `dir` (an entry `to` is replaced, never written through).
pub fn rename_at(dir: BorrowedFd<'_>, from: &CStr, to: &CStr) -> io::Result<()> {
    // SAFETY: valid descriptors and C strings.
    check(unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) })
}

/// Removes the entry `name` in `dir` itself (a link is removed, not what it names).
pub fn remove_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: valid descriptor and C string.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) })
}

/// Makes a directory's entries durable (after a rename in it). Best effort.
pub fn sync_dir(dir: BorrowedFd<'_>) {
    // SAFETY: valid descriptor.
    unsafe { libc::fsync(dir.as_raw_fd()) };
}

/// Options that refuse a link in the last component and never block on a FIFO.
pub fn no_follow_no_block(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
}

/// Options that never block on a FIFO and never make a terminal the controlling one (a link is
/// followed).
pub fn no_block_no_tty(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
}

/// The user this process acts as (files it creates belong to it).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The user who started this process.
pub fn real_uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// Sets the process's file-creation mask, returning the previous one. Process-wide: for tests
/// and the one-shot start of a program.
// `mode_t` is 32 bits on Linux, 16 on macOS: the conversion is not useless everywhere.
#[allow(clippy::useless_conversion)]
pub fn set_umask(mask: u32) -> u32 {
    // SAFETY: umask cannot fail.
    u32::from(unsafe { libc::umask(mask as libc::mode_t) })
}

/// Waits for, then holds, the exclusive lock on `file` (flock(2), advisory) until it is closed.
/// Best effort: a file that cannot be locked is left unlocked.
pub fn hold_lock(file: &std::fs::File) {
    // SAFETY: flock on an open descriptor; no memory is involved.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
}

/// Whether another open file holds the exclusive lock on `file` (see [`hold_lock`]). When it is
/// free, `file` holds a shared lock on it until it is closed.
pub fn locked_elsewhere(file: &std::fs::File) -> bool {
    // SAFETY: flock on an open descriptor, without waiting; no memory is involved.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) != 0 }
}

/// Creates a FIFO at `path` (tests plant them where a file is expected).
pub fn make_fifo(path: &Path) -> io::Result<()> {
    let c = c_path(path)?;
    // SAFETY: a valid C string.
    check(unsafe { libc::mkfifo(c.as_ptr(), 0o600) })
}

/// Swaps the names `a` and `b` atomically (`renameat2` with `RENAME_EXCHANGE`): both must exist.
/// A reader of either name sees one file or the other, never none. Where the system or the file
/// system has no such swap, an `Unsupported` or the system's error, and the caller renames.
///
/// Why not a rename over `b`: ext4 (mounted as by default, `auto_da_alloc`) starts the new file's
/// writeback inside a rename that replaces a file, so that programs which never fsync do not
/// leave an empty file after a crash; on a busy disk that rename waits for the journal, 0.1-4 ms
/// where the swap takes 14 µs (issue 36). Use it only for files amplihack may lose to a crash.
pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        const RENAME_EXCHANGE: libc::c_uint = 1 << 1;
        let (a, b) = (c_path(a)?, c_path(b)?);
        // SAFETY: two NUL-terminated paths; the kernel reads them and nothing else.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                RENAME_EXCHANGE,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (a, b);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn c(s: &str) -> CString {
        CString::new(s).expect("no NUL")
    }

    #[test]
    fn a_walk_refuses_links_and_tells_kinds() {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(root.path().join("d")).expect("dir");
        std::fs::write(root.path().join("f"), b"abc").expect("file");
        std::os::unix::fs::symlink("d", root.path().join("l")).expect("link");
        make_fifo(&root.path().join("p")).expect("fifo");
        let dir = open_dir(&c_path(root.path()).expect("c")).expect("open");
        let at = dir.as_fd();
        assert_eq!(kind_at(at, &c("f")).expect("f"), Kind::File(3));
        assert_eq!(kind_at(at, &c("d")).expect("d"), Kind::Directory);
        assert_eq!(kind_at(at, &c("l")).expect("l"), Kind::Link);
        assert_eq!(kind_at(at, &c("p")).expect("p"), Kind::Other);
        assert!(open_dir_at(at, &c("d")).is_ok());
        let linked = open_dir_at(at, &c("l")).expect_err("a link is refused");
        assert!(matches!(
            refusal(&linked),
            Some(Refusal::Link | Refusal::NotDirectory)
        ));
        let file = open_file_at(at, &c("f"), Access::Read).expect("read");
        assert_eq!(
            inspect(file.as_fd()).expect("inspect"),
            (Kind::File(3), true)
        );
        // A FIFO opens at once for reading (nothing blocks) and is told by its kind.
        let fifo = open_file_at(at, &c("p"), Access::Read).expect("fifo");
        assert_eq!(inspect(fifo.as_fd()).expect("inspect").0, Kind::Other);
        drop(fifo);
        // For writing, nobody reads it: refused at once.
        let unread = open_file_at(at, &c("p"), Access::Append).expect_err("unread fifo");
        assert_eq!(refusal(&unread), Some(Refusal::NotRegular));
        std::os::unix::fs::symlink("f", root.path().join("lf")).expect("link");
        let through = open_file_at(at, &c("lf"), Access::Read).expect_err("no follow");
        assert_eq!(refusal(&through), Some(Refusal::Link));
    }

    #[test]
    fn a_held_lock_is_seen_from_another_open_file() {
        let root = tempfile::tempdir().expect("tempdir");
        let path = root.path().join("pid");
        std::fs::write(&path, b"1").expect("file");
        let holder = std::fs::File::open(&path).expect("open");
        assert!(!locked_elsewhere(
            &std::fs::File::open(&path).expect("open")
        ));
        hold_lock(&holder);
        assert!(locked_elsewhere(&std::fs::File::open(&path).expect("open")));
        drop(holder);
        assert!(!locked_elsewhere(
            &std::fs::File::open(&path).expect("open")
        ));
    }

    #[test]
    fn create_rename_remove_in_a_directory() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = open_dir(&c_path(root.path()).expect("c")).expect("open");
        let at = dir.as_fd();
        make_dir_at(at, &c("sub"), 0o700).expect("mkdir");
        let made = open_dir_at(at, &c("sub")).expect("sub");
        set_mode(made.as_fd(), 0o700).expect("chmod");
        let new = open_file_at(at, &c("a"), Access::CreateNew).expect("create");
        drop(new);
        let again = open_file_at(at, &c("a"), Access::CreateNew).expect_err("exists");
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        rename_at(at, &c("a"), &c("b")).expect("rename");
        sync_dir(at);
        assert_eq!(kind_at(at, &c("b")).expect("b"), Kind::File(0));
        remove_at(at, &c("b")).expect("remove");
        assert_eq!(
            kind_at(at, &c("b")).expect_err("gone").kind(),
            io::ErrorKind::NotFound
        );
    }
}
