//! `amplihack hooks …`: managing the user's own hook plugins in `.amplifier/hooks/`, one module
//! per command.

mod enable;
mod import_claude;
mod install;
mod list;
mod test;
mod trust;
mod validate;

pub use enable::set_enabled;
pub use import_claude::import_claude;
pub use install::{InstallArgs, install};
pub use list::list;
pub use test::{TestArgs, test};
pub use trust::trust;
pub use validate::validate;

use std::path::{Path, PathBuf};

use amplihack_engine::discovery::{self, Level, Plugin};
use amplihack_engine::trust_scope;
use amplihack_state::StateDir;
use serde_json::{Value, json};

use crate::commands::{CommandError, Outcome};
use crate::scopes::Locations;

/// The host whose dialect a reply is shown in.
pub use crate::hosts::HostArg;

/// Which hooks directory: `~/.amplifier/hooks/` (user) or the project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HooksLevel {
    User,
    Project,
}

pub struct Context {
    pub locations: Locations,
}

impl Context {
    /// The project is found as the hook engine finds it: the nearest directory holding
    /// `.amplifier/hooks` at or above `start` (below the home directory), else the git work tree,
    /// so `amplihack hooks trust` trusts exactly the plugins the hooks would run, nested projects
    /// and parent directories included.
    pub fn new(start: &Path) -> Result<Context, CommandError> {
        let mut locations = Locations::from_env(start)?;
        let start = if start.is_absolute() {
            start.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(start)
        };
        if let Some(project) = discovery::project_with_hooks(&start, Some(&locations.home)) {
            locations.project = project;
        }
        Ok(Context { locations })
    }

    pub(crate) fn user_dir(&self) -> PathBuf {
        self.locations.home.join(".amplifier/hooks")
    }

    pub(crate) fn project_dir(&self) -> PathBuf {
        self.locations.project.join(".amplifier/hooks")
    }

    pub(crate) fn levels(&self) -> Vec<(Level, PathBuf)> {
        let mut levels = vec![(Level::User, self.user_dir())];
        if !discovery::same_dir(&self.project_dir(), &self.user_dir()) {
            levels.push((Level::Project, self.project_dir()));
        }
        levels
    }

    pub(crate) fn plugins(&self) -> Vec<Plugin> {
        self.levels()
            .iter()
            .flat_map(|(level, dir)| discovery::load_level(dir, *level))
            .collect()
    }

    pub(crate) fn state(&self) -> StateDir {
        self.locations.state()
    }

    /// Every file the project's plugins run: what trusting them covers (the hook engine's own
    /// resolution); or why trust cannot cover it.
    pub(crate) fn project_files(&self) -> Result<Vec<PathBuf>, trust_scope::Refusal> {
        let plugins = discovery::load_level(&self.project_dir(), Level::Project);
        trust_scope::files_to_trust(&self.locations.project, &plugins)
    }

    /// What trusting the project's plugins covers, per handler; or why trust cannot.
    pub(crate) fn project_scope(&self) -> Result<trust_scope::Scope, trust_scope::Refusal> {
        let plugins = discovery::load_level(&self.project_dir(), Level::Project);
        trust_scope::scope(&self.locations.project, &plugins)
    }

    /// The project's plugins trusted but held back: each runs a part trust cannot pin that the
    /// user has not accepted (the hook engine's own check); empty when not trusted at all.
    pub(crate) fn project_held_back(&self) -> Vec<String> {
        let plugins = discovery::load_level(&self.project_dir(), Level::Project);
        trust_scope::check(&self.state(), &self.locations.project, &plugins).unwrap_or_default()
    }

    /// Whether the project's plugins run: the hook engine's own check.
    pub(crate) fn project_trusted(&self) -> bool {
        let plugins = discovery::load_level(&self.project_dir(), Level::Project);
        !plugins.is_empty()
            && trust_scope::check(&self.state(), &self.locations.project, &plugins).is_ok()
    }
}

fn outcome_of(command: &str, text: String, json: Value, code: i32) -> Outcome {
    let mut json = json;
    json["command"] = json!(format!("hooks {command}"));
    // Plugin names, file names and messages come from repositories: nothing in them may act on
    // the terminal (a file named `zz\r\e[1A\e[2K` erased the trusted files listed above it).
    let text = amplihack_protocol::printable::printable_lines(&text).into_owned();
    Outcome { text, json, code }
}
