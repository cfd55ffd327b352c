//! amplihack's own behaviour, one file per built-in. Each takes the call (event, environment,
//! deadline) and the reply so far, and returns its own [`Reply`]; none touches stdout. Which
//! built-ins a subcommand runs, and in which order, is the hook table's
//! ([`amplihack_protocol::table`]).

pub mod agent_memory;
pub mod bash_guard;
pub mod lock_mode;
pub mod metrics;
pub mod plugin_events;
pub mod preferences;
pub mod reflection;
pub mod session_context;
pub mod session_end;
pub mod session_record;
pub mod stale_registrations;
pub mod transcript_export;
pub mod turn_records;
pub mod version_check;
pub mod workflow_reminder;

/// The shell lexer lives in the protocol crate, shared with command recognition; re-exported
/// here for the guard's fuzz targets and benches.
pub use amplihack_protocol::shell;

use std::fmt;
use std::path::{Path, PathBuf};

use amplihack_protocol::{Builtin, Reply};
use amplihack_state::StateError;

use crate::pipeline::Call;

/// Why a built-in could not do its work. The pipeline reports it (one line on stderr and in the
/// failure log) and lets the event through.
#[derive(Debug)]
pub enum BuiltinError {
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    State(StateError),
    /// No state directory: neither HOME nor XDG_STATE_HOME is set.
    NoStateDir,
    Other(String),
}

impl fmt::Display for BuiltinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuiltinError::Io {
                path,
                action,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            BuiltinError::State(e) => e.fmt(f),
            BuiltinError::NoStateDir => f.write_str(
                "no state directory: set HOME (or XDG_STATE_HOME) in the hook's environment",
            ),
            BuiltinError::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for BuiltinError {}

impl From<StateError> for BuiltinError {
    fn from(e: StateError) -> Self {
        BuiltinError::State(e)
    }
}

pub type Result<T> = std::result::Result<T, BuiltinError>;

/// Runs one built-in.
pub fn run(builtin: Builtin, call: &Call<'_>, so_far: &Reply) -> Result<Reply> {
    match builtin {
        Builtin::SessionContext => session_context::run(call),
        Builtin::VersionCheck => version_check::run(call),
        Builtin::StaleRegistrations => stale_registrations::run(call),
        Builtin::BashGuard => Ok(bash_guard::run(call)),
        Builtin::Metrics => metrics::run(call),
        Builtin::WorkflowReminder => workflow_reminder::run(call),
        Builtin::Preferences => preferences::run(call),
        Builtin::AgentMemory => agent_memory::run(call),
        Builtin::LockMode => lock_mode::run(call),
        Builtin::Reflection => reflection::run(call, so_far),
        Builtin::SessionRecord => session_record::run(call),
        Builtin::TranscriptExport => transcript_export::run(call),
        Builtin::SessionEnd => session_end::run(call),
    }
}

/// The largest Claude Code settings file a hook reads or edits (the project's are the
/// repository's: a link to `/dev/zero` is refused by `bounded::check_regular`, not read).
pub const SETTINGS_MAX: u64 = 8 * 1024 * 1024;

/// A project text file read with a cap on its size, for context.
pub struct Capped {
    pub text: String,
    pub truncated: bool,
}

/// Reads at most `max_chars` characters of `path` (trimmed); `None` when it is missing or
/// empty. Past the cap the text ends with a visible marker naming the whole file. A regular file
/// only ([`amplihack_state::bounded::read_bounded`]): a FIFO or a device is refused.
pub fn read_capped(path: &Path, max_chars: usize) -> Result<Option<Capped>> {
    // Four bytes a character is UTF-8's worst case.
    let limit = (max_chars as u64) * 4 + 4;
    let Some(read) = amplihack_state::bounded::read_bounded(path, limit)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&read.bytes);
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    Ok(Some(cap(text, max_chars, path)))
}

/// Cuts `text` to `max_chars` characters, marking the cut and naming where the rest is.
pub fn cap(text: &str, max_chars: usize, whole: &Path) -> Capped {
    let marker = format!(
        "\n[… truncated to {max_chars} characters; the whole text is in {}]",
        whole.display()
    );
    if text.chars().count() <= max_chars {
        return Capped {
            text: text.to_string(),
            truncated: false,
        };
    }
    let keep = max_chars.saturating_sub(marker.chars().count());
    let mut cut: String = text.chars().take(keep).collect();
    cut.push_str(&marker);
    Capped {
        text: cut,
        truncated: true,
    }
}

/// A path under the project root, as shown to the model and the user.
pub fn display_relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use amplihack_state::project::RUNTIME_DIR;

    /// Everything the built-ins write into a work tree is under the directory git ignores.
    #[test]
    fn project_files_live_under_the_self_ignoring_runtime_directory() {
        for path in [
            super::metrics::DIR,
            super::transcript_export::LOGS_DIR,
            super::reflection::OUTPUT_DIR,
        ] {
            assert!(path.starts_with(&format!("{RUNTIME_DIR}/")), "{path}");
        }
    }
}
