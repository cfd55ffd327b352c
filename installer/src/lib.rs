//! `amplihack`: installs, repairs, checks and removes amplihack's hooks in Claude Code's and
//! Amplifier's settings, and deploys the binaries they call.
//!
//! * [`registration`]: the canonical hook table and how our entries are recognised;
//! * [`json_text`]: edits that keep the user's formatting;
//! * [`safe_file`]: locked, backed-up, atomic edits that refuse unparseable files;
//! * [`scopes`]: where each scope's files are, for each host;
//! * [`deploy`]: copying the binaries into the bin directory;
//! * [`install_method`]: whether npm, pip, uv, pipx or cargo installed the binaries;
//! * [`commands`]: `install`, `uninstall`, `doctor`, `status`, `reregister`, one module each;
//! * [`user_hooks`]: `amplihack hooks …`, the user's own hook plugins;
//! * [`plugin_events`]: Claude Code registrations for the events the user's plugins need;
//! * [`lock`]: `amplihack lock|unlock`; [`memory`]: `amplihack memory …`;
//! * [`update`]: `amplihack update`, from verified release archives;
//! * [`error`]: why a command failed, with its cause, and its exit code;
//! * [`cli`]: the command line.

pub mod cli;
pub mod commands;
pub mod deploy;
pub mod docs;
pub mod error;
pub mod fail_closed;
pub mod finding;
pub mod hosts;
pub mod install_method;
pub mod lock;
pub mod log;
pub mod managed;
pub mod mdm;
pub mod memory;
pub mod otel;
pub mod plugin_events;
pub mod progress;
pub mod scopes;
pub mod update;
pub mod user_hooks;

pub use amplihack_settings::{json_text, registration, safe_file};
