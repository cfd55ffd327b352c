//! opencode: no hook settings; amplihack's bridge plugin goes in its plugin directory
//! (`$XDG_CONFIG_HOME/opencode/plugin/`, default `~/.config/opencode/plugin/`; project
//! `<project>/.opencode/plugin/`).

use std::path::PathBuf;

use crate::scopes::{Locations, Scope};

/// opencode's configuration directory for this user.
pub fn config_dir(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::XDG_CONFIG_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".config"), PathBuf::from)
        .join("opencode")
}

/// Not written yet: the bridge plugin is installed by its own step.
pub fn registration_file(_locations: &Locations, _scope: Scope) -> Option<PathBuf> {
    None
}
