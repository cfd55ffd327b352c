//! What amplihack writes into a user's work tree: everything lives under
//! `<project>/.claude/runtime/` (metrics, lock mode, transcripts, reflection), a directory that
//! ignores itself with a `.gitignore` of `*`, as tool caches do (`.pytest_cache`, `target/`), so
//! none of it ever shows in `git status`, nor in a plugin that shows the model `git status`.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::files::{self, StateError};

/// amplihack's directory in a project, relative to its root.
pub const RUNTIME_DIR: &str = ".claude/runtime";

const IGNORE_ALL: &str =
    "# Written by amplihack: its runtime files (metrics, locks, transcripts) stay out of git.\n*\n";

/// `<root>/.claude/runtime`, created (0700) with its `.gitignore` when missing: call it before
/// writing anything under it. One `stat` when both are there.
pub fn runtime_dir(root: &Path) -> Result<PathBuf, StateError> {
    let dir = root.join(RUNTIME_DIR);
    let ignore = dir.join(".gitignore");
    match fs::symlink_metadata(&ignore) {
        Ok(_) => return Ok(dir),
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Ok(dir),
        Err(_) => {}
    }
    files::private_dir(&dir)?;
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&ignore)
    {
        Ok(mut file) => {
            // Whatever the umask (as every file amplihack creates).
            file.set_permissions(fs::Permissions::from_mode(0o600))
                .and_then(|()| file.write_all(IGNORE_ALL.as_bytes()))
                .map_err(files::io_error(&ignore, "write"))?;
        }
        // Another call wrote it first.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(files::io_error(&ignore, "create")(e)),
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let dir = runtime_dir(repo.path()).expect("runtime dir");
        fs::create_dir_all(dir.join("metrics")).expect("mkdir");
        fs::write(dir.join("metrics/post_tool_use_metrics.jsonl"), "{}\n").expect("write");
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
