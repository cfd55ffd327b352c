//! What a hook call knows about its surroundings: environment variables, the process working
//! directory, the host, amplihack's state directory and the project root. Built-ins read it
//! through here so tests (and `amplihack hooks test`) can give them a fixed world.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use amplihack_protocol::{HookEvent, Host};
use amplihack_state::StateDir;

/// Looks up one environment variable.
type VarLookup = Box<dyn Fn(&str) -> Option<String>>;

pub struct Context {
    vars: VarLookup,
    process_cwd: Option<String>,
    pub host: Host,
}

impl Context {
    /// The real process environment.
    pub fn from_process(host: Host) -> Context {
        Context {
            vars: Box::new(|name| std::env::var(name).ok().filter(|v| !v.is_empty())),
            process_cwd: std::env::current_dir()
                .ok()
                .map(|p| p.to_string_lossy().into_owned()),
            host,
        }
    }

    /// The process environment with some variables set (for `amplihack hooks test`).
    pub fn with_overrides(host: Host, overrides: HashMap<String, String>, cwd: &Path) -> Context {
        Context {
            vars: Box::new(move |name| {
                overrides
                    .get(name)
                    .cloned()
                    .or_else(|| std::env::var(name).ok())
                    .filter(|v| !v.is_empty())
            }),
            process_cwd: Some(cwd.to_string_lossy().into_owned()),
            host,
        }
    }

    /// A fixed environment, for tests.
    pub fn fixed(host: Host, vars: HashMap<String, String>, cwd: &str) -> Context {
        Context {
            vars: Box::new(move |name| vars.get(name).cloned()),
            process_cwd: Some(cwd.to_string()),
            host,
        }
    }

    pub fn var(&self, name: &str) -> Option<String> {
        (self.vars)(name)
    }

    /// Whether a variable is set to a true value (`1`, `true`, `yes`, `on`).
    pub fn flag(&self, name: &str) -> bool {
        self.var(name).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    }

    pub fn state(&self) -> Option<StateDir> {
        StateDir::locate(&|name| self.var(name))
    }

    /// Where the tool call runs: the payload's `cwd`, else our own working directory (the
    /// bridge runs hooks in the project directory and sends no `cwd`).
    pub fn working_dir(&self, event: &HookEvent) -> String {
        event
            .cwd
            .clone()
            .or_else(|| self.process_cwd.clone())
            .unwrap_or_else(|| "/".into())
    }

    /// The project root: `CLAUDE_PROJECT_DIR` (Claude Code and Amplifier set it), `AMPLIFIER_PROJECT_DIR`, else
    /// the git work tree of the working directory, else the working directory. A session started
    /// in a subdirectory finds the project's files.
    pub fn project_root(&self, event: &HookEvent) -> PathBuf {
        if let Some(dir) = amplihack_env::project_root(|name| self.var(name)) {
            return PathBuf::from(dir);
        }
        let cwd = PathBuf::from(self.working_dir(event));
        git_work_tree(&cwd).unwrap_or(cwd)
    }
}

/// The nearest directory at or above `start` holding `.git`.
pub fn git_work_tree(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}
