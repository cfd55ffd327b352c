//! The sessions each host called amplihack in: `<state>/calls/<host>/<session>`, an empty file
//! made once per session (at its SessionStart, or the first prompt, stop or end of it that
//! reached amplihack), whose modification time is when. `amplihack
//! doctor` compares them with the host's own session records: a session the host ran after
//! amplihack was registered, with no file here, is one where the host never called amplihack.

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::{StateDir, files, session_key};

/// The directory of one host's calls (`host` is its `--host` name).
pub fn dir(state: &StateDir, host: &str) -> PathBuf {
    state.dir("calls").join(session_key(Some(host)))
}

/// Where the record of `host` calling amplihack in `session` is.
pub fn path(state: &StateDir, host: &str, session: &str) -> PathBuf {
    dir(state, host).join(session_key(Some(session)))
}

/// Records that `host` called amplihack in `session`: one small file, made once (a second call
/// finds it and writes nothing). Without a session id there is nothing to record.
pub fn record(state: &StateDir, host: &str, session: Option<&str>) -> std::io::Result<()> {
    let Some(session) = session.filter(|s| !s.is_empty()) else {
        return Ok(());
    };
    let path = path(state, host, session);
    // Private, as every file of amplihack's state: the sessions a user ran are theirs.
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
    };
    let made = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            files::private_dir(&dir(state, host)).map_err(std::io::Error::other)?;
            create()
        }
        other => other,
    };
    match made {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether `host` called amplihack in `session`.
pub fn called(state: &StateDir, host: &str, session: &str) -> bool {
    path(state, host, session).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_recorded_once_per_host() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path().join("state"));
        assert!(!called(&state, "claude", "s-1"));
        record(&state, "claude", Some("s-1")).expect("recorded");
        record(&state, "claude", Some("s-1")).expect("again: nothing written");
        record(&state, "claude", None).expect("no id: nothing");
        assert!(called(&state, "claude", "s-1"));
        assert!(!called(&state, "codex", "s-1"));
        assert!(!called(&state, "claude", "../s-1"), "ids are file names");
    }
}
