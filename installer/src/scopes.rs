//! Where each scope's settings live, for each host.

use std::path::{Path, PathBuf};

use amplihack_settings::claude_paths;
use amplihack_state::StateDir;
use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR`) and `~/.amplifier/settings.yaml`.
    User,
    /// `<project>/.claude/settings.json`, `<project>/.amplifier/settings.yaml` and the bridge's
    /// `<project>/.amplifier/hooks/amplihack/`.
    Project,
    /// `<project>/.claude/settings.local.json`, `<project>/.amplifier/settings.local.yaml` and
    /// the bridge's `<project>/.amplifier/hooks/amplihack/`.
    Local,
    /// The machine's policy files, for every user of it; root writes them. Claude Code's
    /// `managed-settings.json` in `/etc/claude-code/` (Linux) or `/Library/Application
    /// Support/ClaudeCode/` (macOS), Codex's `/etc/codex/requirements.toml` and Copilot CLI's
    /// `/etc/github-copilot/policy.d/amplihack.json`.
    Managed,
}

impl Scope {
    /// The scopes a user's own commands cover when none is named.
    pub const ALL: [Scope; 3] = [Scope::User, Scope::Project, Scope::Local];
    /// Every scope, the machine's managed one included (what `doctor` looks at).
    pub const EVERY: [Scope; 4] = [Scope::User, Scope::Project, Scope::Local, Scope::Managed];

    pub fn from_name(name: &str) -> Option<Scope> {
        Scope::EVERY.into_iter().find(|s| s.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Managed => "managed",
        }
    }
}

/// `HOME` is not set, or empty: amplihack cannot find the settings it edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoHome;

impl std::fmt::Display for NoHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "HOME is not set: amplihack needs it to find ~/.claude/settings.json; set HOME and run again",
        )
    }
}

impl std::error::Error for NoHome {}

#[derive(Debug, Clone)]
pub struct Locations {
    pub home: PathBuf,
    pub claude_config_dir: PathBuf,
    pub project: PathBuf,
}

impl Locations {
    /// From the environment: `HOME`, `CLAUDE_CONFIG_DIR`, and the project (the git work tree
    /// holding `start`, else `start` itself).
    pub fn from_env(start: &Path) -> Result<Locations, NoHome> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or(NoHome)?;
        let claude_config_dir = claude_paths::config_dir(&home, &|name| std::env::var(name).ok());
        Ok(Locations {
            home,
            claude_config_dir,
            project: project_root(start),
        })
    }

    pub fn claude_settings(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => claude_paths::user(&self.claude_config_dir),
            Scope::Project => claude_paths::project(&self.project),
            Scope::Local => claude_paths::local(&self.project),
            Scope::Managed => claude_paths::managed(&claude_paths::managed_dir()),
        }
    }

    /// amplihack's own plugin in Amplifier's hooks directory, for the `hook-shell` bridge. The
    /// bridge reads only the project's directory: the user-level path is where earlier versions
    /// wrote one, which install, doctor --fix and uninstall take back (the Amplifier app loads
    /// amplihack from `bundle.app` in the scope's settings file).
    pub fn amplifier_registration(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User | Scope::Managed => self.home.join(".amplifier/hooks"),
            Scope::Project | Scope::Local => self.project.join(".amplifier/hooks"),
        }
        .join(amplihack_engine::discovery::AMPLIHACK_DIR)
        .join("hooks.json")
    }

    /// amplihack's state directory for this home.
    pub fn state(&self) -> StateDir {
        let home = self.home.to_string_lossy().into_owned();
        StateDir::locate(&|name| {
            if name == "HOME" {
                Some(home.clone())
            } else {
                std::env::var(name).ok()
            }
        })
        .unwrap_or_else(|| StateDir::at(self.home.join(".local/state/amplihack")))
    }
}

/// The git work tree containing `start` (a directory with `.git`), else `start`.
pub fn project_root(start: &Path) -> PathBuf {
    let start = if start.is_absolute() {
        start.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(start)
    };
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or(start)
}
