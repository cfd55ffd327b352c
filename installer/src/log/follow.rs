//! `amplihack log --follow`: the lines appended to the audit file since the last look, across a
//! rotation (the rest of the renamed file is read before the new one) and a truncation.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use amplihack_state::audit::{self, Record};

pub struct Follower {
    path: PathBuf,
    /// The file being read (device, inode), and how far.
    id: Option<(u64, u64)>,
    offset: u64,
    /// A line not yet ended by its writer.
    partial: Vec<u8>,
}

/// A regular file's identity and size (anything else is not followed: a FIFO would block).
fn id_of(path: &Path) -> Option<((u64, u64), u64)> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| ((m.dev(), m.ino()), m.len()))
}

impl Follower {
    /// From the current end of `path` (or its start, once it appears).
    pub fn from_end(path: &Path) -> Follower {
        let now = id_of(path);
        Follower {
            path: path.to_path_buf(),
            id: now.map(|(id, _)| id),
            offset: now.map_or(0, |(_, len)| len),
            partial: Vec::new(),
        }
    }

    /// The records appended since the last poll, in order.
    pub fn poll(&mut self) -> Vec<Record> {
        let mut bytes = Vec::new();
        let current = id_of(&self.path);
        match (self.id, current) {
            (Some(old), Some((new, _))) if old != new => {
                // Rotated: the rest of the file we were reading is now `<path>.1`.
                let renamed = audit_generation(&self.path);
                if id_of(&renamed).is_some_and(|(id, _)| id == old) {
                    read_from(&renamed, self.offset, &mut bytes);
                }
                self.id = Some(new);
                self.offset = 0;
            }
            (Some(_), Some((_, len))) if len < self.offset => self.offset = 0, // truncated
            (None, Some((new, _))) => {
                self.id = Some(new);
                self.offset = 0;
            }
            _ => {}
        }
        if current.is_some() {
            // Checked as a regular file just now; opened non-blocking all the same.
            self.offset += read_from(&self.path, self.offset, &mut bytes);
        }
        self.partial.extend_from_slice(&bytes);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let complete: Vec<u8> = self.partial.drain(..=end).collect();
        audit::parse(&String::from_utf8_lossy(&complete)).0
    }
}

fn audit_generation(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// Appends what `path` holds past `offset` to `out`; how many bytes were read.
fn read_from(path: &Path, offset: u64, out: &mut Vec<u8>) -> u64 {
    let Ok((mut file, _)) = amplihack_state::bounded::open_regular(path) else {
        return 0;
    };
    if file.seek(SeekFrom::Start(offset)).is_err() {
        return 0;
    }
    let before = out.len();
    let _ = file.read_to_end(out);
    (out.len() - before) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use amplihack_state::StateDir;
    use amplihack_state::audit::Policy;

    fn record(n: usize) -> Record {
        Record {
            time: format!("{n}.000"),
            event: "Stop".into(),
            plugin: format!("user:p{n}"),
            ..Record::default()
        }
    }

    #[test]
    fn follows_a_writer_across_rotation_and_half_lines() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let path = audit::path(&state);
        let policy = Policy {
            max_bytes: 1000,
            keep: 2,
        };
        audit::append(&state, &[record(0)], policy).unwrap();
        let mut follower = Follower::from_end(&path);
        assert!(
            follower.poll().is_empty(),
            "what was there before is not repeated"
        );
        let mut seen = Vec::new();
        for n in 1..=20 {
            audit::append(&state, &[record(n)], policy).unwrap();
            if n % 3 == 0 {
                seen.extend(follower.poll());
            }
        }
        seen.extend(follower.poll());
        assert!(audit::rotated(&state, 1).exists(), "the test rotated");
        let plugins: Vec<String> = seen.iter().map(|r| r.plugin.clone()).collect();
        let want: Vec<String> = (1..=20).map(|n| format!("user:p{n}")).collect();
        assert_eq!(plugins, want);

        // A line written in two pieces comes out once, whole.
        let line = serde_json::to_string(&record(21)).unwrap();
        let (a, b) = line.split_at(10);
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(a.as_bytes()).unwrap();
        assert!(follower.poll().is_empty());
        file.write_all(format!("{b}\n").as_bytes()).unwrap();
        assert_eq!(follower.poll(), vec![record(21)]);
    }
}
