//! Why an `amplihack` command failed, kept with its cause, and the exit code each kind maps to.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | done; or `doctor`/`hooks validate` found nothing wrong |
//! | 1 | a check found a problem (`doctor`, `hooks validate`), or the command refused: a file, a name or a state the user can fix (the message says how); nothing was changed |
//! | 2 | a command line amplihack cannot act on: an unknown flag, a bad value, flags that do not go together (clap's own usage errors exit 2 too) |
//! | 3 | an internal failure: the system refused an operation amplihack needed (I/O), or a bug |

use std::error::Error as StdError;
use std::fmt;
use std::path::PathBuf;

use amplihack_runtime::builtins::BuiltinError;
use amplihack_settings::safe_file::FileError;
use amplihack_state::files::StateError;

use crate::deploy::DeployError;
use crate::managed::PluginEventsError;
use crate::update::UpdateError;

/// The exit codes, documented in the manual's `amplihack` page (docs/src/using/amplihack.md).
pub mod exit {
    pub const OK: i32 = 0;
    /// A check found a problem, or the command refused something the user can fix.
    pub const PROBLEM: i32 = 1;
    /// The command line itself: a flag's value, flags that do not go together.
    pub const USAGE: i32 = 2;
    /// The system failed an operation amplihack needed, or amplihack has a bug.
    pub const INTERNAL: i32 = 3;
}

/// A failed command. `Display` is the one line a person reads (what, where, the fix);
/// [`std::error::Error::source`] keeps the cause.
#[derive(Debug)]
pub enum CommandError {
    /// A command line amplihack cannot act on (a flag's value, flags that do not go together).
    Usage(String),
    /// Refused: a file, a name or a state the user can fix; the message says how.
    Refused(String),
    /// A settings or state file that could not be edited safely (unparseable, misshapen,
    /// locked by another process, or the system refused a read or write).
    File(FileError),
    /// One of amplihack's own records (lock, memory, trust, audit log) could not be used.
    State(StateError),
    /// A built-in's state (lock mode, memory) could not be used.
    Builtin(BuiltinError),
    /// `amplihack update` refused a release (download, manifest, checksum, archive).
    Update(UpdateError),
    /// `--plugin-events` refused.
    PluginEvents(PluginEventsError),
    /// The binaries, the Amplifier module or its bundle could not be deployed.
    Deploy(DeployError),
    /// `--scope` names a scope the host lacks.
    NoSuchScope(crate::hosts::NoSuchScope),
    /// The system refused an operation amplihack needed on `path`.
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// amplihack's own failure.
    Internal(String),
}

impl CommandError {
    pub fn usage(message: impl Into<String>) -> Self {
        CommandError::Usage(message.into())
    }

    pub fn refused(message: impl Into<String>) -> Self {
        CommandError::Refused(message.into())
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CommandError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// The exit code of this kind of failure (see [`exit`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            CommandError::Usage(_) | CommandError::PluginEvents(_) => exit::USAGE,
            CommandError::Refused(_) | CommandError::NoSuchScope(_) => exit::PROBLEM,
            CommandError::File(FileError::Io { .. }) => exit::INTERNAL,
            CommandError::File(_) => exit::PROBLEM,
            CommandError::State(error) | CommandError::Builtin(BuiltinError::State(error)) => {
                state_code(error)
            }
            CommandError::Builtin(BuiltinError::Io { .. } | BuiltinError::Other(_)) => {
                exit::INTERNAL
            }
            CommandError::Builtin(BuiltinError::NoStateDir) => exit::PROBLEM,
            CommandError::Update(UpdateError::Io { .. }) => exit::INTERNAL,
            CommandError::Update(_) => exit::PROBLEM,
            CommandError::Deploy(error) if error.is_users() => exit::PROBLEM,
            CommandError::Deploy(_) => exit::INTERNAL,
            CommandError::Io { .. } | CommandError::Internal(_) => exit::INTERNAL,
        }
    }
}

/// A damaged, busy or refused record is the user's to fix (the message says how); a read or
/// write the system refused is not.
fn state_code(error: &StateError) -> i32 {
    match error {
        StateError::Io { .. } => exit::INTERNAL,
        _ => exit::PROBLEM,
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Usage(message)
            | CommandError::Refused(message)
            | CommandError::Internal(message) => f.write_str(message),
            CommandError::File(error) => error.fmt(f),
            CommandError::Update(error) => error.fmt(f),
            CommandError::State(error) => error.fmt(f),
            CommandError::Builtin(error) => error.fmt(f),
            CommandError::PluginEvents(error) => error.fmt(f),
            CommandError::Deploy(error) => error.fmt(f),
            CommandError::NoSuchScope(error) => error.fmt(f),
            CommandError::Io {
                action,
                path,
                source,
            } => write!(f, "could not {action} {}: {source}", path.display()),
        }
    }
}

impl StdError for CommandError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            // The typed error is the variant itself (its `Display` is this one's): its causes follow.
            CommandError::File(error) => error.source(),
            CommandError::Update(error) => error.source(),
            CommandError::State(error) => error.source(),
            CommandError::Builtin(error) => error.source(),
            CommandError::Deploy(error) => error.source(),
            CommandError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<FileError> for CommandError {
    fn from(error: FileError) -> Self {
        CommandError::File(error)
    }
}

impl From<UpdateError> for CommandError {
    fn from(error: UpdateError) -> Self {
        CommandError::Update(error)
    }
}

impl From<PluginEventsError> for CommandError {
    fn from(error: PluginEventsError) -> Self {
        CommandError::PluginEvents(error)
    }
}

impl From<DeployError> for CommandError {
    fn from(error: DeployError) -> Self {
        CommandError::Deploy(error)
    }
}

impl From<crate::hosts::NoSuchScope> for CommandError {
    fn from(error: crate::hosts::NoSuchScope) -> Self {
        CommandError::NoSuchScope(error)
    }
}

impl From<StateError> for CommandError {
    fn from(error: StateError) -> Self {
        CommandError::State(error)
    }
}

impl From<BuiltinError> for CommandError {
    fn from(error: BuiltinError) -> Self {
        CommandError::Builtin(error)
    }
}

impl From<crate::log::filter::SinceError> for CommandError {
    fn from(error: crate::log::filter::SinceError) -> Self {
        CommandError::Usage(error.to_string())
    }
}

/// No home directory: the user's to fix (set `HOME`).
impl From<crate::scopes::NoHome> for CommandError {
    fn from(error: crate::scopes::NoHome) -> Self {
        CommandError::Refused(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    fn io_error() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied")
    }

    /// Each kind of failure and its documented exit code: a user's mistake on the command line
    /// is 2, a refusal the user can fix is 1, what the system or amplihack failed is 3.
    #[test]
    fn each_kind_of_failure_has_its_exit_code() {
        let path = PathBuf::from("/x/settings.json");
        let cases: Vec<(CommandError, i32)> = vec![
            (CommandError::usage("--since: not a time"), exit::USAGE),
            (CommandError::refused("--message is empty"), exit::PROBLEM),
            (crate::scopes::NoHome.into(), exit::PROBLEM),
            (PluginEventsError::NotManaged.into(), exit::USAGE),
            (
                crate::log::filter::SinceError("yesterday".into()).into(),
                exit::USAGE,
            ),
            (
                CommandError::refused("no hook plugin named `x`"),
                exit::PROBLEM,
            ),
            (
                FileError::Parse {
                    path: path.clone(),
                    line: 1,
                    column: 2,
                    message: "oops".into(),
                }
                .into(),
                exit::PROBLEM,
            ),
            (
                FileError::LockTimeout {
                    path: path.clone(),
                    lock: path.clone(),
                    waited: Duration::from_millis(300),
                }
                .into(),
                exit::PROBLEM,
            ),
            (
                FileError::Io {
                    path: path.clone(),
                    action: "write",
                    source: io_error(),
                    file: None,
                }
                .into(),
                exit::INTERNAL,
            ),
            (
                StateError::Busy {
                    path: path.clone(),
                    waited: Duration::from_millis(1),
                }
                .into(),
                exit::PROBLEM,
            ),
            (
                StateError::Io {
                    path: path.clone(),
                    action: "read",
                    source: io_error(),
                }
                .into(),
                exit::INTERNAL,
            ),
            (BuiltinError::Other("bug".into()).into(), exit::INTERNAL),
            (UpdateError::NoPlatform.into(), exit::PROBLEM),
            (CommandError::io("write", &path, io_error()), exit::INTERNAL),
            (CommandError::Internal("bug".into()), exit::INTERNAL),
            (
                DeployError::Missing(PathBuf::from("/b/amplihack-hooks")).into(),
                exit::PROBLEM,
            ),
            (
                DeployError::Copy {
                    to: path.clone(),
                    source: io_error(),
                }
                .into(),
                exit::INTERNAL,
            ),
            (
                DeployError::Module(StateError::Refused {
                    path: path.clone(),
                    why: "is a symbolic link",
                })
                .into(),
                exit::PROBLEM,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error}");
        }
    }

    /// The cause is kept: an I/O failure under a typed error is its source.
    #[test]
    fn the_cause_is_kept() {
        let file: CommandError = FileError::Io {
            path: PathBuf::from("/x"),
            action: "write",
            source: io_error(),
            file: None,
        }
        .into();
        assert_eq!(file.source().map(|s| s.to_string()), Some("denied".into()));
        let io = CommandError::io("write the documentation under", "/d", io_error());
        assert_eq!(
            io.to_string(),
            "could not write the documentation under /d: denied"
        );
        assert!(io.source().is_some());
        assert!(CommandError::usage("x").source().is_none());
        let copy: CommandError = DeployError::Copy {
            to: PathBuf::from("/b/amplihack-hooks"),
            source: io_error(),
        }
        .into();
        assert_eq!(
            copy.to_string(),
            "/b/amplihack-hooks: cannot install: denied"
        );
        assert_eq!(copy.source().map(|s| s.to_string()), Some("denied".into()));
    }
}
