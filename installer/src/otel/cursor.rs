//! How far the export has sent: the file it was reading (device and inode, which a rotation's
//! rename keeps) and the offset past the last line the receiver accepted. The next export starts
//! there, reads the rest of that file (now `audit.jsonl.1` if it was rotated since) and then
//! every newer one: nothing is sent twice and nothing is skipped across a rotation.
//!
//! Kept in `<state>/otlp-cursor.json` (0600), written after each accepted batch.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use amplihack_state::StateDir;
use amplihack_state::audit;
use amplihack_state::files::{self, StateError};
use serde::{Deserialize, Serialize};

pub const FILE: &str = "otlp-cursor.json";

/// Where the next export starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub dev: u64,
    pub ino: u64,
    pub offset: u64,
}

pub fn path(state: &StateDir) -> PathBuf {
    state.file(FILE)
}

pub fn load(state: &StateDir) -> Result<Option<Cursor>, StateError> {
    files::read_json(&path(state))
}

pub fn save(state: &StateDir, cursor: &Cursor) -> Result<(), StateError> {
    files::write_json(&path(state), cursor)
}

/// One audit file still to send (from `offset`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub offset: u64,
}

/// The files to send, oldest first, each from where sending starts. No cursor (the first
/// export): every file from its start. A cursor whose file is gone (rotated past the kept
/// generations): every file that is left. A cursor past its file's end (the file was cut): that
/// file from its start.
pub fn pending(state: &StateDir, cursor: Option<Cursor>) -> Vec<Pending> {
    let files: Vec<Pending> = audit::files_oldest_first(state)
        .into_iter()
        .filter_map(|path| {
            let meta = std::fs::metadata(&path)
                .ok()
                .filter(std::fs::Metadata::is_file)?;
            Some((path, meta))
        })
        .map(|(path, meta)| Pending {
            path,
            dev: meta.dev(),
            ino: meta.ino(),
            offset: 0,
        })
        .collect();
    let Some(cursor) = cursor else {
        return files;
    };
    let Some(at) = files
        .iter()
        .position(|f| (f.dev, f.ino) == (cursor.dev, cursor.ino))
    else {
        return files;
    };
    let mut rest = files[at..].to_vec();
    let len = std::fs::metadata(&rest[0].path).map_or(0, |m| m.len());
    rest[0].offset = if cursor.offset <= len {
        cursor.offset
    } else {
        0
    };
    rest
}

/// Whole lines of `file` from `offset`: at most `max_bytes` of them (at least one line however
/// long it is, up to `line_cap`), and the offset past the last one. A line not yet ended by its
/// writer is left for the next export.
pub fn read_lines(file: &Path, offset: u64, max_bytes: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let (mut handle, len) = amplihack_state::bounded::open_regular(file)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    if offset >= len {
        return Ok((Vec::new(), offset));
    }
    handle.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    (&mut handle).take(max_bytes).read_to_end(&mut bytes)?;
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => {
            bytes.truncate(end + 1);
            let next = offset + bytes.len() as u64;
            Ok((bytes, next))
        }
        // One line longer than a batch: sent alone, however long (the writer caps its fields).
        None if offset + (bytes.len() as u64) < len && bytes.len() as u64 == max_bytes => {
            let mut rest = Vec::new();
            handle.read_to_end(&mut rest)?;
            match rest.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    bytes.extend_from_slice(&rest[..=end]);
                    let next = offset + bytes.len() as u64;
                    Ok((bytes, next))
                }
                None => Ok((Vec::new(), offset)),
            }
        }
        None => Ok((Vec::new(), offset)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resumes_in_the_renamed_file_after_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        std::fs::write(audit::path(&state), "a\nb\n").unwrap();
        let first = pending(&state, None);
        assert_eq!(first.len(), 1);
        let cursor = Cursor {
            dev: first[0].dev,
            ino: first[0].ino,
            offset: 2,
        };
        // Rotated: the file read is now `.1`, a new one follows.
        std::fs::rename(audit::path(&state), audit::rotated(&state, 1)).unwrap();
        std::fs::write(audit::path(&state), "c\n").unwrap();
        let next = pending(&state, Some(cursor));
        assert_eq!(next.len(), 2);
        assert_eq!(
            (next[0].path.clone(), next[0].offset),
            (audit::rotated(&state, 1), 2)
        );
        assert_eq!(
            (next[1].path.clone(), next[1].offset),
            (audit::path(&state), 0)
        );
        // A cursor past the end of a cut file: from its start.
        let cut = Cursor {
            offset: 99,
            ..cursor
        };
        assert_eq!(pending(&state, Some(cut))[0].offset, 0);
    }

    #[test]
    fn reads_whole_lines_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "one\ntwo\nthr").unwrap();
        assert_eq!(
            read_lines(&file, 0, 1024).unwrap(),
            (b"one\ntwo\n".to_vec(), 8)
        );
        assert_eq!(read_lines(&file, 0, 5).unwrap(), (b"one\n".to_vec(), 4));
        assert_eq!(read_lines(&file, 8, 1024).unwrap(), (Vec::new(), 8));
        // A line longer than a batch comes whole.
        assert_eq!(read_lines(&file, 4, 2).unwrap(), (b"two\n".to_vec(), 8));
    }
}
