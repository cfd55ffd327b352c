//! What a hook call knows about its surroundings: environment variables, the process working
//! directory and the host. Built-ins read it through here so tests can give them a fixed world.

use std::collections::HashMap;

use amplihack_protocol::{HookEvent, Host};

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

    /// Where the tool call runs: the payload's `cwd`, else our own working directory (the
    /// bridge runs hooks in the project directory and sends no `cwd`).
    pub fn working_dir(&self, event: &HookEvent) -> String {
        event
            .cwd
            .clone()
            .or_else(|| self.process_cwd.clone())
            .unwrap_or_else(|| "/".into())
    }

    /// The project root: `CLAUDE_PROJECT_DIR` (both hosts set it), `AMPLIFIER_PROJECT_DIR`, then
    /// the working directory.
    pub fn project_dir(&self, event: &HookEvent) -> Option<String> {
        self.var("CLAUDE_PROJECT_DIR")
            .or_else(|| self.var("AMPLIFIER_PROJECT_DIR"))
            .or_else(|| Some(self.working_dir(event)))
    }
}
