//! The hook protocol, typed, for every host that calls `amplihack-hooks` (Claude Code, Amplifier, Codex, Copilot CLI, Qwen Code, Droid, Gemini CLI, opencode, Pi and Cline CLI).
//!
//! * [`event`]: one JSON event read from stdin becomes a [`HookEvent`]: a typed view of the fields
//!   the built-ins and the engine need, plus every field the host sent, kept verbatim so the event
//!   can be handed on unchanged.
//! * [`reply`]: one [`Reply`] per event (decision, reason, updated input, context, messages).
//! * [`claude`] and [`amplifier`]: the reply rendered in the dialect of the host that called.
//!   Claude Code reads `hookSpecificOutput`/`decision`; Amplifier's `hook-shell` bridge honours
//!   only a top-level `decision: "block"` and `contextInjection` (see the manual, `docs/src/using/amplifier.md`).
//!
//! * [`hosts`]: each host's dialect (Codex, Copilot, Qwen, Droid, Gemini, opencode beside the
//!   two above): its names read into Claude Code's event model, its reply rendered.
//! * [`claude_version`]: Claude Code's version: parsed, read from the environment, compared.
//! * [`shell`]: the one shell lexer (the Bash guard's, hardened against hostile input) and the
//!   one table of command wrappers ([`shell::WRAPPERS`]), for the guard and command recognition.
//! * [`table`]: every subcommand, its event, registration, deadline and built-ins.
//!
//! Nothing here does I/O: the runtime crate owns stdin, stdout, the clock and the file system.

pub mod amplifier;
pub mod claude;
pub mod claude_version;
pub mod command;
pub mod event;
pub mod host;
pub mod hosts;
pub mod printable;
pub mod reply;
pub mod shell;
pub mod table;
pub mod tool;

pub use event::{EventName, HookEvent, InvalidInput, Payload, ToolCall};

/// The version both binaries report: a release's (`AMPLIHACK_RELEASE_VERSION` at build time,
/// set by `packaging/build-release`), else the crate's.
pub const VERSION: &str = match option_env!("AMPLIHACK_RELEASE_VERSION") {
    Some(version) => version,
    None => env!("CARGO_PKG_VERSION"),
};
pub use host::Host;
pub use reply::{Decision, ModelQuestion, Rendered, Reply};
pub use table::{Builtin, Hook};
