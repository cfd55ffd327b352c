//! The one reader of files amplihack does not control (a repository's, a host's, the user's
//! settings), before anything about them is trusted: regular files only (a FIFO would block the
//! hook, `/dev/zero` would never end), opened without blocking, and never more than a cap.
//! Every read of a project's hooks files, manifests, the files trust hashes, hosts' settings
//! (`amplihack_settings::safe_file`) and the built-ins' inputs goes through [`open_regular`]:
//!
//! * [`read_text`] / [`stream`]: the whole file, refused over the cap ([`ReadError`]);
//! * [`read_bounded`] / [`read_from`]: the first bytes up to a cap, and whether there was more
//!   ([`Bounded`]); [`open_if_regular`] and [`check_regular`] for callers that read themselves.
//!   These answer [`StateError`]s, and `None` for a file that does not exist.
//!
//! Paths under a work tree that must not be reached through a link are opened by
//! [`crate::safe_open::Dir`], which reads through [`read_from`] too.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::files::{StateError, io_error};

/// The most any hooks file, manifest or AMCP file may hold (the largest real one is a few KB).
pub const HOOKS_FILE_CAP: u64 = 1024 * 1024;
/// The most any one file trust hashes may hold (a plugin's script, a bundled binary).
pub const TRUSTED_FILE_CAP: u64 = 64 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// A FIFO, a device, a socket or a directory: what it is.
    NotRegular(&'static str),
    /// More than `cap` bytes.
    TooLarge {
        cap: u64,
    },
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotRegular(kind) => write!(f, "is {kind}, not a regular file"),
            ReadError::TooLarge { cap } => write!(f, "is larger than {cap} bytes"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// What a file that is not regular is, in words.
fn kind_of(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Opens `path` (a link followed) only if it is a regular file, without ever blocking: the open is
/// non-blocking (a FIFO opens at once; no terminal becomes the controlling one) and the type is
/// checked on the open file, so nothing swapped in between a check and the read is read either.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let file = amplihack_platform::fs::no_block_no_tty(std::fs::OpenOptions::new().read(true))
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// The text of a regular file of at most `cap` bytes.
pub fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    let (file, len) = open_regular(path)?;
    if len > cap {
        return Err(ReadError::TooLarge { cap });
    }
    let mut text = String::with_capacity(usize::try_from(len).unwrap_or(0).min(64 * 1024));
    // Bounded again while reading: the file may grow after the size was taken.
    file.take(cap + 1).read_to_string(&mut text)?;
    if text.len() as u64 > cap {
        return Err(ReadError::TooLarge { cap });
    }
    Ok(text)
}

/// Feeds a regular file of at most `cap` bytes to `sink`, 64 KB at a time.
pub fn stream(path: &Path, cap: u64, mut sink: impl FnMut(&[u8])) -> Result<(), ReadError> {
    let (file, len) = open_regular(path)?;
    if len > cap {
        return Err(ReadError::TooLarge { cap });
    }
    let mut reader = file.take(cap + 1);
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        total += n as u64;
        if total > cap {
            return Err(ReadError::TooLarge { cap });
        }
        sink(&buf[..n]);
    }
}

/// At most `max` bytes of a file, and whether there was more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Bounded {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

fn refused(path: &Path, why: &'static str) -> StateError {
    StateError::Refused {
        path: path.to_path_buf(),
        why,
    }
}

/// Reads at most `max` bytes, and whether there was more.
pub fn read_from(file: impl Read, max: u64) -> io::Result<Bounded> {
    let mut bytes = Vec::new();
    let mut limited = file.take(max.saturating_add(1));
    limited.read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > max;
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX).min(bytes.len()));
    Ok(Bounded { bytes, truncated })
}

/// Opens `path` for reading if it is a regular file (links followed: the caller named it);
/// `None` when it does not exist. A FIFO, a device (`/dev/zero`) or a directory is refused
/// without reading or blocking.
pub fn open_if_regular(path: &Path) -> Result<Option<File>, StateError> {
    match open_regular(path) {
        Ok((file, _)) => Ok(Some(file)),
        Err(ReadError::Io(e))
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(ReadError::Io(e)) => Err(io_error(path, "read")(e)),
        Err(ReadError::NotRegular(_) | ReadError::TooLarge { .. }) => {
            Err(refused(path, "is not a regular file"))
        }
    }
}

/// At most `max` bytes of the regular file `path`; `None` when it does not exist.
pub fn read_bounded(path: &Path, max: u64) -> Result<Option<Bounded>, StateError> {
    let Some(file) = open_if_regular(path)? else {
        return Ok(None);
    };
    read_from(file, max)
        .map(Some)
        .map_err(io_error(path, "read"))
}

/// Whether `path` can be read whole within `max` bytes: `Ok(false)` when it does not exist,
/// refused when it is not a regular file or is larger (one `stat`, for files another module
/// reads whole).
pub fn check_regular(path: &Path, max: u64) -> Result<bool, StateError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => Err(refused(path, "is not a regular file")),
        Ok(meta) if meta.len() > max => Err(refused(path, "is larger than amplihack reads")),
        Ok(_) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(io_error(path, "inspect")(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_and_large_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        amplihack_platform::fs::make_fifo(&fifo).expect("fifo");
        assert!(matches!(
            read_text(&fifo, 10),
            Err(ReadError::NotRegular("a FIFO"))
        ));
        assert!(matches!(
            read_text(Path::new("/dev/zero"), 10),
            Err(ReadError::NotRegular("a device"))
        ));
        let big = dir.path().join("big");
        std::fs::write(&big, "x".repeat(11)).expect("write");
        assert!(matches!(
            read_text(&big, 10),
            Err(ReadError::TooLarge { cap: 10 })
        ));
        assert_eq!(read_text(&big, 11).expect("fits"), "x".repeat(11));
        let mut seen = 0;
        stream(&big, 11, |b| seen += b.len()).expect("stream");
        assert_eq!(seen, 11);
    }
}
