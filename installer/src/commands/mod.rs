//! `install`, `uninstall`, `doctor`, `status` and `reregister`, one module each, with what they
//! share: the registration files ([`shared`]), the change report ([`render`]) and the checks
//! `doctor` and `status` make ([`checks`]). Each returns an [`Outcome`]: the text for a person,
//! the JSON for `--json`, and the exit code.

use std::path::PathBuf;

use serde_json::Value;

pub use amplihack_protocol::VERSION;

pub(crate) mod checks;
mod doctor;
mod install;
pub(crate) mod managed_hosts;
mod render;
mod reregister;
pub(crate) mod shared;
mod silence;
mod status;
mod uninstall;

pub use checks::Finding;
pub use doctor::{DoctorArgs, doctor};
pub use install::{InstallArgs, install};
pub use reregister::reregister;
pub use status::{StatusArgs, status};
pub use uninstall::{UninstallArgs, uninstall};

pub struct Outcome {
    pub text: String,
    pub json: Value,
    pub code: i32,
}

pub use crate::error::CommandError;

pub use crate::hosts::Target;

/// `--yes`: amplihack never prompts; accepted so that scripts written for tools that do work.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct YesArg {
    /// Do not ask for confirmation (amplihack never prompts; accepted for scripts)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// The flags of a command that changes files: `--dry-run`, `--verbose` and `--yes`.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct ChangeArgs {
    /// Change nothing; print a summary line per file that would change
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run, also print each change as an RFC 6902 JSON Patch and a unified diff
    #[arg(long, short = 'v')]
    pub verbose: bool,
    #[command(flatten)]
    pub yes: YesArg,
}

impl ChangeArgs {
    pub fn detail(&self) -> Detail {
        if self.verbose {
            Detail::Full
        } else {
            Detail::Summary
        }
    }
}

/// `--bin-dir` of the commands that look at the deployed binaries.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BinDirArg {
    /// Where the binaries are (default: where install deployed them)
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
}

impl BinDirArg {
    /// The binaries' directory: `--bin-dir`, else where install deployed them (the manifest's
    /// record), else the default (`$AMPLIHACK_BIN_DIR` or `~/.local/bin`).
    pub fn resolve(
        &self,
        manifest: &amplihack_state::manifest::Manifest,
        home: &std::path::Path,
    ) -> PathBuf {
        self.bin_dir
            .clone()
            .or_else(|| manifest.bin_dir.clone())
            .unwrap_or_else(|| crate::deploy::bin_dir(None, home))
    }
}

/// Whether a dry run shows each file's full JSON Patch and diff (`--verbose`) or one summary
/// line per file (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    #[default]
    Summary,
    Full,
}
