//! Reading files a repository controls, before anything about them is trusted: regular files
//! only (a FIFO would block the hook, `/dev/zero` would never end), and never more than a cap.
//! Every read of a project's hooks files, manifests and the files trust hashes goes through here.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

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
/// non-blocking (a FIFO opens at once) and the type is checked on the open file.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_and_large_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("cstring");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
