//! `install`, `uninstall`, `doctor`, `status` and `reregister`, one module each, with what they
//! share: the registration files ([`shared`]), the change report ([`render`]) and the checks
//! `doctor` and `status` make ([`checks`]). Each returns an [`Outcome`]: the text for a person,
//! the JSON for `--json`, and the exit code.

use std::path::PathBuf;

use serde_json::Value;

use crate::registration::Host;
use crate::scopes::Scope;

pub use amplihack_protocol::VERSION;

mod checks;
mod doctor;
mod install;
mod render;
mod reregister;
mod shared;
mod status;
mod uninstall;

pub use checks::Finding;
pub use doctor::{DoctorArgs, doctor};
pub use install::{InstallArgs, install};
pub use reregister::reregister;
pub use status::status;
pub use uninstall::{UninstallArgs, uninstall};

pub struct Outcome {
    pub text: String,
    pub json: Value,
    pub code: i32,
}

pub use crate::error::CommandError;

/// One file amplihack registers hooks in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub scope: Scope,
    pub path: PathBuf,
}

/// Whether a dry run shows each file's full JSON Patch and diff (`--verbose`) or one summary
/// line per file (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    #[default]
    Summary,
    Full,
}
