//! Whether git tracks a path of a work tree, read from the repository's index (`.git/index`,
//! versions 2 to 4, SHA-1 or SHA-256 object names) without running git: what amplihack writes
//! into a project must never land in a file the repository commits (issue 35 finding 9: a
//! repository that tracks `.claude/runtime/metrics/*.jsonl` got every tool call's line appended
//! to a tracked file).

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of an index read; a larger one is not read, and says "cannot tell".
pub const INDEX_CAP: u64 = 32 << 20;
/// The most of a `.git` file (`gitdir: …`) or a repository's `config` read.
const SMALL_CAP: u64 = 64 << 10;

/// What the index of the repository at `root` says about paths under `prefix` (relative,
/// `/`-separated, e.g. `.claude/runtime/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracked {
    /// No repository at `root`, or its index lists nothing under `prefix`.
    No,
    /// The index lists a path under `prefix`.
    Yes,
    /// The index could not be read (too large, malformed, an unknown version).
    CannotTell,
}

fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= cap).then_some(bytes)
}

/// The git directory of the work tree at `root`: `.git`, or where a `.git` file points.
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let text = read_capped(&dot_git, SMALL_CAP)?;
    let text = String::from_utf8(text).ok()?;
    let dir = text.trim().strip_prefix("gitdir:")?.trim();
    Some(root.join(dir))
}

/// Whether the repository at `root` tracks anything under `prefix`.
pub fn tracks_under(root: &Path, prefix: &str) -> Tracked {
    let Some(dir) = git_dir(root) else {
        return Tracked::No;
    };
    let index = dir.join("index");
    match std::fs::metadata(&index) {
        Err(_) => return Tracked::No,
        Ok(meta) if meta.len() > INDEX_CAP => return Tracked::CannotTell,
        Ok(_) => {}
    }
    let Some(bytes) = read_capped(&index, INDEX_CAP) else {
        return Tracked::CannotTell;
    };
    // A linked work tree keeps its config in the common directory.
    let sha256 = [dir.join("config"), dir.join("commondir")]
        .iter()
        .filter_map(|f| read_capped(f, SMALL_CAP))
        .any(|c| {
            String::from_utf8_lossy(&c)
                .to_ascii_lowercase()
                .contains("objectformat = sha256")
        });
    match entries_under(&bytes, if sha256 { 32 } else { 20 }, prefix.as_bytes()) {
        Some(true) => Tracked::Yes,
        Some(false) => Tracked::No,
        None => Tracked::CannotTell,
    }
}

/// Whether an entry of `index` starts with `prefix`; `None` when it cannot be read.
fn entries_under(index: &[u8], hash: usize, prefix: &[u8]) -> Option<bool> {
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(index.get(at..at + 4)?.try_into().ok()?))
    };
    if index.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(8)? as usize;
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the object name, flags.
    let fixed = 40 + hash + 2;
    for _ in 0..count {
        let start = at;
        let flags = u16::from_be_bytes(index.get(at + fixed - 2..at + fixed)?.try_into().ok()?);
        at += fixed;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let path = if version == 4 {
            // A varint: how many bytes of the previous path to drop, then the rest, NUL-ended.
            let mut strip: usize = 0;
            loop {
                let byte = *index.get(at)?;
                at += 1;
                strip = (strip << 7) | usize::from(byte & 0x7f);
                if byte & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let end = at + index.get(at..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&index[at..end]);
            at = end + 1;
            path
        } else {
            let end = at + index.get(at..)?.iter().position(|&b| b == 0)?;
            let path = index[at..end].to_vec();
            // Padded with NULs to a multiple of 8 bytes from the entry's start.
            let len = end - start;
            at = start + (len + 8) / 8 * 8;
            path
        };
        if path.starts_with(prefix) {
            return Some(true);
        }
        previous = path;
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// Every index version git writes, with the path among others before and after it.
    #[test]
    fn a_tracked_path_is_found_in_every_index_version() {
        for version in ["2", "3", "4"] {
            let repo = tempfile::tempdir().expect("tempdir");
            let root = repo.path();
            git(root, &["init", "-q"]);
            for file in ["a.txt", ".claude/settings.json", "src/deep/z.rs"] {
                let path = root.join(file);
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(path, "x").expect("write");
            }
            git(root, &["add", "-A"]);
            git(root, &["update-index", "--index-version", version]);
            assert_eq!(
                tracks_under(root, ".claude/runtime/"),
                Tracked::No,
                "v{version}"
            );
            let metrics = root.join(".claude/runtime/metrics/post_tool_use_metrics.jsonl");
            std::fs::create_dir_all(metrics.parent().expect("parent")).expect("mkdir");
            std::fs::write(&metrics, "{}\n").expect("write");
            git(
                root,
                &[
                    "add",
                    "-f",
                    ".claude/runtime/metrics/post_tool_use_metrics.jsonl",
                ],
            );
            git(root, &["update-index", "--index-version", version]);
            assert_eq!(
                tracks_under(root, ".claude/runtime/"),
                Tracked::Yes,
                "v{version}"
            );
        }
        let plain = tempfile::tempdir().expect("tempdir");
        assert_eq!(tracks_under(plain.path(), ".claude/runtime/"), Tracked::No);
    }
}
