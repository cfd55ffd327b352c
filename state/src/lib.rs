//! amplihack's own state, owned here and nowhere else.
//!
//! Everything amplihack remembers between calls lives under one directory,
//! `$XDG_STATE_HOME/amplihack`, else `~/.local/state/amplihack` ([`StateDir`]), and is read and
//! written through this crate:
//!
//! * [`files`]: the primitives: private directories (0700) and files (0600) whatever the umask,
//!   atomic replacement, whole-line appends, and a lock with a timeout;
//! * typed records, one module each: [`session`] (per-session counters and notices),
//!   [`memory`] (the per-project memory store), [`trust`] (trusted project plugins),
//!   [`lock_mode`] (the projects the user locked),
//!   [`plugins`] (disabled plugins), [`manifest`] (what `amplihack install` registered), and
//!   [`audit`] (one line per forwarded handler run);
//! * [`project`]: the one directory amplihack writes into a work tree, which git ignores;
//! * [`safe_open`]: the one way a file a repository (or a host) could have planted is opened:
//!   never through a symbolic link under the work tree, regular files only, reads bounded.
//!
//! A record file we cannot parse is never overwritten: it is moved aside to `<file>.damaged`, a
//! new one is started, and the damage is reported once ([`files::take_notes`]).

pub mod audit;
pub mod bounded;
pub mod breaker;
pub mod calls;
pub mod files;
pub mod git_index;
pub mod lock_mode;
pub mod manifest;
pub mod memory;
pub mod plugins;
pub mod project;
pub mod safe_open;
pub mod session;
pub mod time;
pub mod trust;

use std::fmt;
use std::path::{Path, PathBuf};

pub use files::StateError;

/// amplihack's state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// `$XDG_STATE_HOME/amplihack`, else `$HOME/.local/state/amplihack`; empty variables count as
    /// unset. `None` when neither is set.
    pub fn locate(var: &dyn Fn(&str) -> Option<String>) -> Option<StateDir> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        let base = var(amplihack_env::XDG_STATE_HOME)
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
        Some(StateDir {
            root: base.join("amplihack"),
        })
    }

    /// From the process environment.
    pub fn from_env() -> Option<StateDir> {
        Self::locate(&|name| std::env::var(name).ok())
    }

    pub fn at(root: impl Into<PathBuf>) -> StateDir {
        StateDir { root: root.into() }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// A file directly in the state directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// A subdirectory (not created).
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Where whole contexts that were cut at the cap are saved.
    pub fn context_dir(&self) -> PathBuf {
        self.dir("context")
    }

    /// The failure log `hooks.log` goes here unless `AMPLIHACK_LOG_DIR` says otherwise.
    pub fn log_dir(&self) -> PathBuf {
        self.root.clone()
    }
}

impl fmt::Display for StateDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root.display().fmt(f)
    }
}

/// In the state directory when `amplihack install --otel` chose the session's end: the
/// `amplihack` whose `log export --otlp` the hook binary starts, detached, at SessionEnd.
pub const OTEL_SESSION_END_MARKER: &str = "otel-session-end";

/// A project as a file name in the state directory: `<slug of its last part>-<8 hex of the SHA-256
/// of its path>`, so that two projects of the same name never share a file.
pub fn project_stem(project: &Path) -> String {
    use sha2::{Digest, Sha256};
    let name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = memory::hex(&Sha256::digest(project.to_string_lossy().as_bytes()));
    format!("{slug}-{}", &hash[..8])
}

/// A session id as a file name: `[A-Za-z0-9_-]` kept, anything else `_`, `unknown` when absent.
pub fn session_key(session: Option<&str>) -> String {
    let id = session.filter(|s| !s.is_empty()).unwrap_or("unknown");
    id.chars()
        .take(128)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_rules() {
        type Env<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Env<'_>, Option<&str>)] = &[
            (&[("HOME", "/h")], Some("/h/.local/state/amplihack")),
            (
                &[("HOME", "/h"), (amplihack_env::XDG_STATE_HOME, "/x")],
                Some("/x/amplihack"),
            ),
            (
                &[("HOME", "/h"), (amplihack_env::XDG_STATE_HOME, "")],
                Some("/h/.local/state/amplihack"),
            ),
            (&[], None),
        ];
        for (env, want) in cases {
            let got = StateDir::locate(&|k| {
                env.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            });
            assert_eq!(
                got.map(|s| s.path().to_string_lossy().into_owned())
                    .as_deref(),
                *want,
                "{env:?}"
            );
        }
    }

    #[test]
    fn session_keys_are_safe_file_names() {
        for (id, want) in [
            (Some("abc-123_x"), "abc-123_x"),
            (Some("../../etc"), "______etc"),
            (None, "unknown"),
            (Some(""), "unknown"),
        ] {
            assert_eq!(session_key(id), want);
        }
    }
}
