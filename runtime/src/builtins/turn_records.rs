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
//! 2. at SessionEnd, and at Stop under a host that never ends a session ([`Writer`]), it starts
//!    this binary again, detached ([`FLAG`]: its own process group, no stdin, stdout or
//!    stderr, so the host neither waits for it nor kills it with the hook; forked and not waited
//!    for, not even for its `execve`), and answers. A Stop under a host that delivers SessionEnd
//!    starts none: the session's end writes the newest record, which supersedes the turn's, and a
//!    writer per turn competed with the host for the CPU and the disk at every turn's end;
//! 3. that writer takes `<state>/locks/pending-records.lock` (one writer at a time, so the
//!    records of one session are written in the order their turns ended), and writes the record
//!    of every pending file there, oldest first, durably as before; a pending file is removed only
//!    after its record is written. At SessionEnd it then prunes old session state.
//!
//! Nothing is lost on a crash of the hook, the writer or the host: a pending file stays until its
//! record is written, and the next writer (the next session's end, any session's, or `amplihack
//! memory`) writes it. What a
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

/// When a turn's end starts the records' writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// Now: SessionEnd, and Stop under a host that never ends a session.
    Now,
    /// At the session's end (or any later writer's run): Stop under a host that delivers
    /// SessionEnd. The SessionEnd record supersedes every Stop record of the session, so a writer
    /// per turn would write records nobody reads before the session ends, beside the host.
    AtSessionEnd,
}

impl Writer {
    /// Stop's choice under `host`: a writer per turn only where no SessionEnd will come.
    pub fn at_stop(host: amplihack_protocol::Host) -> Writer {
        if amplihack_protocol::hosts::dialect(host)
            .delivers(&amplihack_protocol::EventName::SessionEnd)
        {
            Writer::AtSessionEnd
        } else {
            Writer::Now
        }
    }
}

/// Records that the session's record is to be (re)written, `ended` at SessionEnd, and makes the
/// writer due when `writer` says now (started after the reply, [`start_due`]). The pending file
/// is written before the writer starts: a writer
/// that cannot start leaves it for the next one, and a failure to fork is reported (one to
/// `execve`, a binary removed meanwhile, ends the writer: the next one writes the record). A
/// pending file that already says the same (a later turn's Stop) is left as it is.
pub fn defer(
    state: &StateDir,
    root: &Path,
    session: Option<&str>,
    ended: Option<&str>,
    writer: Writer,
) -> Result<()> {
    let dir = state.dir(DIR);
    let path = dir.join(format!("{}.json", session_key(session)));
    let pending = json!({"root": root, "session": session, "ended": ended}).to_string();
    let same = amplihack_state::bounded::read_text(&path, 64 * 1024).is_ok_and(|t| t == pending);
    if !same {
        files::replace_with(&path, pending.as_bytes(), 0o600, Durability::Disposable)?;
    }
    if writer == Writer::Now {
        let _ = DUE.set(state.path().to_path_buf());
    }
    Ok(())
}

/// The state directory whose writer is due, once this hook has answered ([`start_due`]).
static DUE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Starts the records' writer [`defer`] made due, if any: called once the host has its answer.
/// A writer that cannot start leaves the pending files for the next one.
pub fn start_due() -> Result<()> {
    match DUE.get() {
        Some(state) => start_writer(state),
        None => Ok(()),
    }
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
    amplihack_platform::process::lower_priority();
    i32::from(!flush(&StateDir::at(state)))
}

/// Writes every pending record now ([`write_pending`]), each failure one line in the failure log;
/// whether all were written. The writer's work, and what `amplihack memory` does first, so a
/// session still running shows its newest record.
pub fn flush(state: &StateDir) -> bool {
    let failed = match write_pending(state) {
        Ok(failures) => failures,
        Err(e) => vec![e.to_string()],
    };
    for failure in &failed {
        let _ = crate::failure_log::append(&format!("records' writer: {failure}"));
    }
    failed.is_empty()
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

    /// A writer per turn only under the hosts that never end a session; every host is named, so
    /// a new one is decided here.
    #[test]
    fn stop_starts_a_writer_only_where_no_session_end_comes() {
        use amplihack_protocol::Host;
        let table = [
            (Host::ClaudeCode, Writer::AtSessionEnd),
            (Host::Amplifier, Writer::AtSessionEnd),
            (Host::Codex, Writer::AtSessionEnd),
            (Host::Copilot, Writer::AtSessionEnd),
            (Host::Qwen, Writer::AtSessionEnd),
            (Host::Droid, Writer::AtSessionEnd),
            (Host::Gemini, Writer::AtSessionEnd),
            (Host::Opencode, Writer::Now),
            (Host::Vibe, Writer::Now),
            (Host::Kimi, Writer::AtSessionEnd),
            (Host::Pi, Writer::AtSessionEnd),
            (Host::Cline, Writer::Now),
        ];
        assert_eq!(table.len(), Host::ALL.len());
        for (host, writer) in table {
            assert_eq!(Writer::at_stop(host), writer, "{host:?}");
        }
    }

    /// A later turn's Stop leaves the pending file as it is (no write); SessionEnd's replaces it.
    #[test]
    fn a_pending_file_that_says_the_same_is_not_rewritten() {
        use std::os::unix::fs::MetadataExt;
        let scratch = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(scratch.path().join("state"));
        let root = scratch.path().join("project");
        let path = state
            .dir(DIR)
            .join(format!("{}.json", session_key(Some("s1"))));
        let stamp = || {
            let meta = std::fs::metadata(&path).expect("pending file");
            (meta.ino(), meta.mtime_nsec(), meta.len())
        };
        defer(&state, &root, Some("s1"), None, Writer::AtSessionEnd).expect("first stop");
        let first = stamp();
        defer(&state, &root, Some("s1"), None, Writer::AtSessionEnd).expect("second stop");
        assert_eq!(stamp(), first);
        defer(
            &state,
            &root,
            Some("s1"),
            Some("now (exit)"),
            Writer::AtSessionEnd,
        )
        .expect("session end");
        assert_ne!(stamp(), first);
        let text = std::fs::read_to_string(&path).expect("pending");
        assert!(text.contains("now (exit)"), "{text}");
    }

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
