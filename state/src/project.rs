//! What amplihack writes into a user's work tree: everything lives under
//! `<project>/.claude/runtime/` (metrics, transcripts, reflection findings), a directory that
//! ignores itself with a `.gitignore` of `*`, as tool caches do (`.pytest_cache`, `target/`), so
//! none of it ever shows in `git status`, nor in a plugin that shows the model `git status`.

use std::io::Write;
use std::path::Path;

use crate::files::{self, StateError};
use crate::safe_open::Dir;

/// amplihack's directory in a project, relative to its root.
pub const RUNTIME_DIR: &str = ".claude/runtime";

const IGNORE_ALL: &str = "# Written by amplihack: its runtime files (metrics, transcripts, reflection) stay out of git.\n*\n";

/// `<root>/.claude/runtime`, created (0700) with its `.gitignore` when missing: open it before
/// writing anything under it. It is reached without following a link ([`Dir`]): a repository
/// that commits `.claude`, `.claude/runtime` or anything below as a symbolic link gets a
/// [`StateError::Refused`], and nothing is written. So does one that commits a `.gitignore` there
/// that does not ignore everything (transcript copies would then show in `git status`, one
/// `git add -A` away from the repository's owner).
///
/// A repository that tracks anything under it (a committed `.claude/runtime/metrics/*.jsonl`)
/// gets [`StateError::Refused`] too: what amplihack writes would land in a tracked file (every
/// tool call's line, with absolute paths and the session id, one commit away from the
/// repository). So does one whose index cannot be read to tell.
pub fn runtime_dir(root: &Path) -> Result<Dir, StateError> {
    match crate::git_index::tracks_under(root, &format!("{RUNTIME_DIR}/")) {
        crate::git_index::Tracked::No => {}
        crate::git_index::Tracked::Yes => {
            return Err(StateError::Refused {
                path: root.join(RUNTIME_DIR),
                why: "holds files the repository tracks (git's index lists them), so what amplihack writes there would change committed files; nothing is written there (untrack them: git rm -r --cached .claude/runtime)",
            });
        }
        crate::git_index::Tracked::CannotTell => {
            return Err(StateError::Refused {
                path: root.join(".git/index"),
                why: "cannot be read to tell whether the repository tracks .claude/runtime, so amplihack writes nothing there",
            });
        }
    }
    let dir = Dir::create(root, Path::new(RUNTIME_DIR))?;
    let ignore = dir.path().join(".gitignore");
    match dir.read(".gitignore", IGNORE_MAX)? {
        Some(found) if ignores_everything(&found.bytes) && !found.truncated => {}
        Some(_) => {
            return Err(StateError::Refused {
                path: ignore,
                why: "does not ignore everything (amplihack writes `*`), so what amplihack writes there could reach git",
            });
        }
        None => {
            // Another call may have written it first; it is never written through a link.
            if let Some(mut file) = dir.create_new(".gitignore")? {
                file.write_all(IGNORE_ALL.as_bytes())
                    .map_err(files::io_error(&ignore, "write"))?;
            }
        }
    }
    Ok(dir)
}

/// The most of a runtime `.gitignore` read.
const IGNORE_MAX: u64 = 4 * 1024;

/// Whether a `.gitignore` ignores everything in its directory: `*` and nothing else but comments
/// and blank lines (a `!pattern` would let something back in).
fn ignores_everything(text: &[u8]) -> bool {
    let lines: Vec<&str> = std::str::from_utf8(text)
        .unwrap_or("!")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    lines == ["*"]
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

    /// Issue 35 finding 9: a repository that tracks a file under the runtime directory gets
    /// nothing written there; the tracked file keeps its bytes.
    #[test]
    fn a_repository_that_tracks_the_runtime_directory_gets_nothing_written() {
        let repo = tempfile::tempdir().expect("tempdir");
        git(repo.path(), &["init", "-q"]);
        let metrics = repo
            .path()
            .join(".claude/runtime/metrics/post_tool_use_metrics.jsonl");
        fs::create_dir_all(metrics.parent().expect("parent")).expect("mkdir");
        fs::write(&metrics, "{\"committed\": true}\n").expect("write");
        git(repo.path(), &["add", "-f", "."]);
        let refused = writable(repo.path(), Path::new(".claude/runtime/metrics"))
            .and_then(|dir| dir.append_line("post_tool_use_metrics.jsonl", "{}"));
        assert!(
            matches!(&refused, Err(StateError::Refused { why, .. }) if why.contains("tracks")),
            "{refused:?}"
        );
        assert_eq!(
            fs::read_to_string(&metrics).expect("read"),
            "{\"committed\": true}\n"
        );
        // The work tree is what the index holds: nothing appended to the tracked file.
        assert_eq!(git(repo.path(), &["diff", "--name-only"]), "");
    }

    /// A repository's own `.gitignore` in the runtime directory is accepted only when it ignores
    /// everything, as amplihack's does.
    #[test]
    fn a_gitignore_that_lets_files_through_is_refused() {
        for (text, ok) in [
            (IGNORE_ALL, true),
            ("*\n", true),
            ("# ours\n\n  *  \n", true),
            ("", false),
            ("# nothing ignored\n", false),
            ("*\n!logs/\n", false),
            ("metrics/\n", false),
        ] {
            let repo = tempfile::tempdir().expect("tempdir");
            let dir = repo.path().join(RUNTIME_DIR);
            fs::create_dir_all(&dir).expect("mkdir");
            fs::write(dir.join(".gitignore"), text).expect("write");
            let opened = runtime_dir(repo.path());
            assert_eq!(opened.is_ok(), ok, "{text:?}: {:?}", opened.err());
            if !ok {
                assert!(matches!(opened, Err(StateError::Refused { .. })));
            }
        }
    }
}
