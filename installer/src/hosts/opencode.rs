//! opencode: no hook settings. amplihack's registration is its own bridge plugin
//! (`installer/assets/opencode/amplihack.js`), written with the absolute path of
//! `amplihack-hooks` into opencode's plugin directory: `$XDG_CONFIG_HOME/opencode/plugin/`
//! (default `~/.config/opencode/plugin/`) for the user, `<project>/.opencode/plugin/` for a
//! project. opencode loads every `.js` file there in-process; the plugin runs
//! `amplihack-hooks dispatch --host opencode` per event (docs/src/hosts/opencode.md).

use std::path::PathBuf;

use super::bridge_file::BridgeFile;
use super::{Host, HostSpec, Registration};
use crate::scopes::{Locations, Scope};

/// The plugin file's name in a plugin directory.
pub const PLUGIN_FILE: &str = "amplihack.js";

/// The bridge plugin (`installer/assets/opencode/amplihack.js`).
pub const BRIDGE: BridgeFile = BridgeFile {
    host: Host::Opencode,
    file: PLUGIN_FILE,
    template: include_str!("../../assets/opencode/amplihack.js"),
    header: "// amplihack bridge plugin for opencode:",
    kind: "bridge plugin",
    project_dir: ".opencode/plugin",
};

/// opencode's configuration directory for this user.
pub fn config_dir(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::XDG_CONFIG_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".config"), PathBuf::from)
        .join("opencode")
}

/// The bridge plugin's path: the user's plugin directory, or the project's `.opencode/plugin/`
/// (opencode has no local or managed scope).
pub const SPEC: HostSpec = HostSpec {
    host: Host::Opencode,
    files: &[
        (Scope::User, |l| {
            config_dir(l).join("plugin").join(PLUGIN_FILE)
        }),
        (Scope::Project, |l| {
            l.project.join(".opencode/plugin").join(PLUGIN_FILE)
        }),
    ],
    home: config_dir,
    always_found: false,
    syntax: amplihack_settings::safe_file::Syntax::Json,
    registration: Registration::BridgePlugin,
    stamps: &[],
    trust_note: None,
    shadowed: None,
    sessions: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_project_scopes_only() {
        let locations = Locations {
            home: PathBuf::from("/h"),
            claude_config_dir: PathBuf::from("/h/.claude"),
            project: PathBuf::from("/p"),
        };
        assert_eq!(
            SPEC.file(&locations, Scope::Project),
            Some(PathBuf::from("/p/.opencode/plugin/amplihack.js"))
        );
        assert_eq!(SPEC.file(&locations, Scope::Local), None);
        assert_eq!(SPEC.file(&locations, Scope::Managed), None);
    }
}
