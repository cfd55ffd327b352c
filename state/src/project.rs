//! What amplihack writes into a user's work tree: everything lives under
//! `<project>/.claude/runtime/` (metrics, lock mode, transcripts, reflection), a directory that
//! ignores itself with a `.gitignore` of `*`, as tool caches do (`.pytest_cache`, `target/`), so
//! none of it ever shows in `git status`, nor in a plugin that shows the model `git status`.

use std::io::Write;
use std::path::Path;

use crate::files::{self, StateError};
use crate::safe_open::Dir;

/// amplihack's directory in a project, relative to its root.
pub const RUNTIME_DIR: &str = ".claude/runtime";

const IGNORE_ALL: &str =
    "# Written by amplihack: its runtime files (metrics, locks, transcripts) stay out of git.\n*\n";

/// `<root>/.claude/runtime`, created (0700) with its `.gitignore` when missing: open it before
/// writing anything under it. It is reached without following a link ([`Dir`]): a repository
/// that commits `.claude`, `.claude/runtime` or anything below as a symbolic link gets a
/// [`StateError::Refused`], and nothing is written.
pub fn runtime_dir(root: &Path) -> Result<Dir, StateError> {
    let dir = Dir::create(root, Path::new(RUNTIME_DIR))?;
    // Whatever is there already (even a link) is left alone, and never written through.
    if let Some(mut file) = dir.create_new(".gitignore")? {
        file.write_all(IGNORE_ALL.as_bytes())
            .map_err(files::io_error(&dir.path().join(".gitignore"), "write"))?;
    }
    Ok(dir)
}

/// A directory under the runtime directory (`under` starts with [`RUNTIME_DIR`]), created 0700
/// with every part on the way, for writing; a link on the way is refused.
pub fn writable(root: &Path, under: &Path) -> Result<Dir, StateError> {
    let rest = under
        .strip_prefix(RUNTIME_DIR)
        .map_err(|_| StateError::Refused {
            path: root.join(under),
            why: "is not under .claude/runtime",
        })?;
    runtime_dir(root)?
        .descend(rest, true)?
        .ok_or_else(|| StateError::Refused {
            path: root.join(under),
            why: "vanished while it was created",
        })
}

/// A directory under the runtime directory, for reading: `None` when a part is missing; a link
/// on the way is refused.
pub fn readable(root: &Path, under: &Path) -> Result<Option<Dir>, StateError> {
    Dir::open(root, under)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn what_amplihack_writes_never_shows_in_git_status() {
        let repo = tempfile::tempdir().expect("tempdir");
        git(repo.path(), &["init", "-q"]);
        writable(repo.path(), Path::new(".claude/runtime/metrics"))
            .expect("runtime dir")
            .append_line("post_tool_use_metrics.jsonl", "{}")
            .expect("append");
        let dir = repo.path().join(RUNTIME_DIR);
        assert_eq!(git(repo.path(), &["status", "--porcelain"]), "");
        // A user who tracks .claude/ still sees their own files, and never ours.
        fs::write(repo.path().join(".claude/settings.json"), "{}").expect("write");
        assert_eq!(
            git(repo.path(), &["status", "--porcelain", "-uall"]),
            "?? .claude/settings.json\n"
        );
        // Idempotent, and an existing runtime directory gets its .gitignore too.
        fs::remove_file(dir.join(".gitignore")).expect("rm");
        runtime_dir(repo.path()).expect("again");
        runtime_dir(repo.path()).expect("and again");
        assert_eq!(
            fs::read_to_string(dir.join(".gitignore")).expect("read"),
            IGNORE_ALL
        );
    }
}
