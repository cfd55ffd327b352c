//! What identifies a file's version without reading it ([`Stamp`]), and the `stat`s that take it:
//! relative to a directory opened once ([`DirFd`], `fstatat`), so a name below a level is
//! resolved from there and not from `/` again (about 0.6 µs a call instead of 1 µs on the 2-core
//! test machine), and recorded ([`Probe`]) so that the plugin index can replay exactly the `stat`s
//! a listing made.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A file's device and inode, size, mtime and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    /// `st_mode & S_IFMT`.
    pub kind: u32,
}

impl Stamp {
    fn of(st: &libc::stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            size: u64::try_from(st.st_size).unwrap_or(0),
            mtime_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
            kind: st.st_mode & libc::S_IFMT,
        }
    }

    pub fn is_file(&self) -> bool {
        self.kind == libc::S_IFREG
    }

    pub fn is_dir(&self) -> bool {
        self.kind == libc::S_IFDIR
    }

    /// `dev:ino:size:mtime_ns:kind`, as the index keeps it.
    pub fn to_text(self) -> String {
        format!(
            "{}:{}:{}:{}:{}",
            self.dev, self.ino, self.size, self.mtime_ns, self.kind
        )
    }

    pub fn from_text(text: &str) -> Option<Stamp> {
        let mut parts = text.split(':');
        let stamp = Stamp {
            dev: parts.next()?.parse().ok()?,
            ino: parts.next()?.parse().ok()?,
            size: parts.next()?.parse().ok()?,
            mtime_ns: parts.next()?.parse().ok()?,
            kind: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(stamp)
    }
}

/// One `stat` a listing made: the path (relative to the level's directory, or absolute), whether
/// only a regular file counted, and what it found (`None`: nothing, or not a regular file where
/// one was wanted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub path: Vec<u8>,
    pub regular: bool,
    pub found: Option<Stamp>,
}

/// A directory opened for `stat`s below it (`O_PATH`: nothing is read through it).
pub struct DirFd(Option<OwnedFd>);

impl DirFd {
    /// `dir` opened; when it cannot be, every relative `stat` finds nothing.
    pub fn open(dir: &Path) -> DirFd {
        let Ok(path) = CString::new(dir.as_os_str().as_bytes()) else {
            return DirFd(None);
        };
        // SAFETY: a valid NUL-terminated path; the result is checked before use.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        // SAFETY: a descriptor just opened and owned by nothing else.
        DirFd((fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// `stat` of `path` (relative to this directory, or absolute), following links as
    /// `std::fs::metadata` does; `buf` is reused for the NUL-terminated copy.
    pub fn stat(&self, path: &[u8], buf: &mut Vec<u8>) -> Option<Stamp> {
        let absolute = path.first() == Some(&b'/');
        let fd = match (&self.0, absolute) {
            (_, true) => libc::AT_FDCWD,
            (Some(fd), false) => fd.as_raw_fd(),
            (None, false) => return None,
        };
        if path.contains(&0) {
            return None;
        }
        buf.clear();
        buf.extend_from_slice(path);
        buf.push(0);
        // SAFETY: zeroed `stat` is a valid value of a plain C struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `buf` is NUL-terminated without an inner NUL; `st` is a valid out pointer.
        let rc = unsafe { libc::fstatat(fd, buf.as_ptr().cast(), &mut st, 0) };
        (rc == 0).then(|| Stamp::of(&st))
    }

    /// [`DirFd::stat`], recorded in `probes`; `regular`: only a regular file counts.
    pub fn probe(
        &self,
        path: &[u8],
        regular: bool,
        buf: &mut Vec<u8>,
        probes: &mut Vec<Probe>,
    ) -> Option<Stamp> {
        let found = self.stat(path, buf).filter(|s| !regular || s.is_file());
        probes.push(Probe {
            path: path.to_vec(),
            regular,
            found,
        });
        found
    }
}

#[cfg(test)]
mod tests {
    use super::{DirFd, Stamp};

    #[test]
    fn stamps_round_trip_and_follow_what_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("f"), "one").expect("write");
        let at = DirFd::open(dir.path());
        let mut buf = Vec::new();
        let first = at.stat(b"f", &mut buf).expect("stat");
        assert!(first.is_file() && !first.is_dir());
        assert_eq!(Stamp::from_text(&first.to_text()), Some(first));
        assert!(at.stat(b".", &mut buf).is_some_and(|s| s.is_dir()));
        assert_eq!(at.stat(b"missing", &mut buf), None);
        assert_eq!(at.stat(b"f\0x", &mut buf), None);
        let absolute = dir.path().join("f");
        assert_eq!(
            at.stat(absolute.as_os_str().as_encoded_bytes(), &mut buf),
            Some(first)
        );
        std::fs::write(dir.path().join("f"), "three").expect("write");
        assert_ne!(at.stat(b"f", &mut buf), Some(first));
        for bad in ["", "1:2:3:4", "1:2:3:4:5:6", "a:2:3:4:5"] {
            assert_eq!(Stamp::from_text(bad), None, "{bad}");
        }
    }
}
