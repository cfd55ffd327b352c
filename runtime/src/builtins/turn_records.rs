//! The end of a turn without the host waiting for amplihack's records.
//!
//! Stop and SessionEnd write the session's record into the project's memory store
//! ([`session_record::write`]): a locked, atomic rewrite of a file that also holds the user's
//! memories, so it is fsynced twice (the file and its directory), 5-15 ms on an ordinary disk
//! where a `true` entry costs nothing. The host does not need that record to go on, so the hook
//! does not wait for it:
//!
//! 1. the hook writes a *pending* file, `<state>/pending-records/<session key>.json` (the project
//!    root, the session, and the end reason at SessionEnd; atomically, without fsync: a few
//!    hundred bytes in the page cache), and the session state's `ended` at SessionEnd (as before,
//!    no fsync);
//! 2. it starts this binary again, detached ([`FLAG`]: its own process group, no stdin, stdout or
//!    stderr, so the host neither waits for it nor kills it with the hook; forked and not waited
//!    for, not even for its `execve`), and answers;
//! 3. that writer takes `<state>/locks/pending-records.lock` (one writer at a time, so the
//!    records of one session are written in the order their turns ended), and writes the record
//!    of every pending file there, oldest first, durably as before; a pending file is removed only
//!    after its record is written. At SessionEnd it then prunes old session state.
//!
//! Nothing is lost on a crash of the hook, the writer or the host: a pending file stays until its
//! record is written, and the next writer (the next turn's end, any session) writes it. What a
//! record says is derived from what is already on disk (the session state, the metrics file), so
//! a later write is the same record, or a newer one. A second turn's end before the writer ran
//! replaces the pending file of that session: one record, the newest. The one window left is a
//! power cut in the few milliseconds between the pending file's write and the writer's fsync, the
//! window any write without fsync has; amplihack's earlier record of the session is then what
//! stays.

use std::path::{Path, PathBuf};

use amplihack_state::files::{self, Durability, Lock};
use amplihack_state::{StateDir, session, session_key};
use serde_json::{Value, json};

use super::{BuiltinError, Result, session_end, session_record};

/// The hidden argument that makes `amplihack-hooks` the records' writer:
/// `--write-records <state dir>` (started by a Stop or SessionEnd hook, never by a host).
pub const FLAG: &str = "--write-records";

/// Under the state directory: one pending file per session.
pub const DIR: &str = "pending-records";

/// How long a writer waits for the one before it.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Records that the session's record is to be (re)written, `ended` at SessionEnd, and starts the
/// writer. The pending file is written before the writer starts: a writer that cannot start
/// leaves it for the next one, and a failure to fork is reported (one to `execve`, a binary
/// removed meanwhile, ends the writer: the next one writes the record).
pub fn defer(
    state: &StateDir,
    root: &Path,
    session: Option<&str>,
    ended: Option<&str>,
) -> Result<()> {
    let dir = state.dir(DIR);
    files::private_dir(&dir)?;
    let pending = json!({"root": root, "session": session, "ended": ended});
    files::replace_with(
        &dir.join(format!("{}.json", session_key(session))),
        pending.to_string().as_bytes(),
        0o600,
        Durability::Disposable,
    )?;
    start_writer(state.path())
}

fn start_writer(state: &Path) -> Result<()> {
    let exe = std::env::current_exe().map_err(|source| BuiltinError::Io {
        path: PathBuf::from("/proc/self/exe"),
        action: "find",
        source,
    })?;
    // Not waited for, not even for its execve (platform::spawn::start_detached).
    amplihack_platform::spawn::start_detached(&exe, &[FLAG.as_ref(), state.as_os_str()]).map_err(
        |source| BuiltinError::Io {
            path: exe,
            action: "start the records' writer",
            source,
        },
    )
}

/// The writer's program ([`FLAG`]): every pending record written, oldest first; each failure one
/// line in the failure log (the writer has no stderr anyone reads). Exit 0, or 1 when any failed.
pub fn writer_main(state: &str) -> i32 {
    let state = StateDir::at(state);
    let failed = match write_pending(&state) {
        Ok(failures) => failures,
        Err(e) => vec![e.to_string()],
    };
    for failure in &failed {
        let _ = crate::failure_log::append(&format!("records' writer: {failure}"));
    }
    i32::from(!failed.is_empty())
}

/// Writes every pending record under the writers' lock; returns what failed. Each pending file
/// is first claimed (renamed to `.claimed`, replacing a claim a writer that died left), so a turn
/// that ends meanwhile writes a new pending file, which stays for the next writer; a claim is
/// removed once its record is written.
pub fn write_pending(state: &StateDir) -> Result<Vec<String>> {
    let _one_writer = Lock::acquire(&state.dir("locks"), DIR, LOCK_WAIT)?;
    let dir = state.dir(DIR);
    let mut failures = Vec::new();
    let listed = |extension: &str| -> Vec<PathBuf> {
        let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == extension))
                    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found.into_iter().map(|(_, p)| p).collect()
    };
    for path in listed("json") {
        let _ = std::fs::rename(&path, path.with_extension("claimed"));
    }
    let mut pruned = false;
    for path in listed("claimed") {
        let record = amplihack_state::bounded::read_text(&path, 64 * 1024)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok());
        let Some(record) = record else {
            // A damaged pending file says nothing a later turn's end will not say again.
            failures.push(format!("{}: not a pending record; removed", path.display()));
            let _ = std::fs::remove_file(&path);
            continue;
        };
        let (Some(root), session, ended) = (
            record["root"].as_str(),
            record["session"].as_str(),
            record["ended"].as_str(),
        ) else {
            failures.push(format!("{}: no project root; removed", path.display()));
            let _ = std::fs::remove_file(&path);
            continue;
        };
        match session_record::write(state, Path::new(root), session, ended) {
            Ok(()) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(e) => failures.push(e.to_string()),
        }
        if ended.is_some() && !pruned {
            session::prune(state, session_end::KEEP);
            pruned = true;
        }
    }
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use amplihack_state::memory::Store;

    /// A pending file a hook left, and a claim a writer that died left, are both written by the
    /// next writer, in order, and removed only then.
    #[test]
    fn the_next_writer_writes_what_an_earlier_one_left() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(scratch.path().join("state"));
        let root = scratch.path().join("project");
        std::fs::create_dir_all(&root).expect("project");
        for (session, prompt) in [("one", "first task"), ("two", "second task")] {
            session::update(&state, Some(session), |s| {
                s.first_prompt = Some(prompt.into());
            })
            .expect("session state");
        }
        let dir = state.dir(DIR);
        files::private_dir(&dir).expect("dir");
        let pending = |session: &str, ended: Option<&str>| {
            json!({"root": root, "session": session, "ended": ended}).to_string()
        };
        // A writer that died after claiming session one's record; a hook's pending SessionEnd
        // of session two whose writer never started.
        std::fs::write(dir.join("one.claimed"), pending("one", None)).expect("claim");
        std::fs::write(dir.join("two.json"), pending("two", Some("now (exit)"))).expect("pending");
        std::fs::write(dir.join("bad.json"), "{ not json").expect("damaged");

        let failures = write_pending(&state).expect("writer");
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("bad.claimed"), "{failures:?}");
        let texts: Vec<String> = Store::for_project(&state, &root)
            .entries()
            .expect("memory")
            .into_iter()
            .map(|e| e.text)
            .collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(
            texts.iter().any(|t| t == "First prompt: first task"),
            "{texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t == "First prompt: second task\nEnded: now (exit)"),
            "{texts:?}"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).expect("dir").flatten().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
