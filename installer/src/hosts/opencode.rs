//! opencode: no hook settings. amplihack's registration is its own bridge plugin
//! (`installer/assets/opencode/amplihack.js`), written with the absolute path of
//! `amplihack-hooks` into opencode's plugin directory: `$XDG_CONFIG_HOME/opencode/plugin/`
//! (default `~/.config/opencode/plugin/`) for the user, `<project>/.opencode/plugin/` for a
//! project. opencode loads every `.js` file there in-process; the plugin runs
//! `amplihack-hooks dispatch --host opencode` per event (docs/src/hosts/opencode.md).

use std::path::{Path, PathBuf};

use super::{Host, HostSpec, Registration, Target};
use crate::error::CommandError;
use crate::finding::Finding;
use crate::safe_file::{self, EditOptions, EditReport};
use crate::scopes::{Locations, Scope};

/// The plugin file's name in a plugin directory.
pub const PLUGIN_FILE: &str = "amplihack.js";

/// The plugin as shipped; [`plugin_text`] bakes the binary's path in.
const TEMPLATE: &str = include_str!("../../assets/opencode/amplihack.js");

/// The placeholder in [`TEMPLATE`] the binary's path (a JSON string literal) replaces.
const PLACEHOLDER: &str = "\"@AMPLIHACK_HOOKS@\"";

/// The first line of every bridge plugin amplihack writes: how install, doctor and uninstall
/// know the file is amplihack's (a file without it is the user's and is never touched).
pub const HEADER: &str = "// amplihack bridge plugin for opencode:";

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

/// What keeps a project's bridge plugin (this machine's binary path) out of the project's
/// commits: the project and the pattern for its `.git/info/exclude`. None for the user scope.
pub fn git_exclusion(target: &Target) -> Option<(PathBuf, &'static str)> {
    if target.host != Host::Opencode || target.scope != Scope::Project {
        return None;
    }
    let project = target.path.ancestors().nth(3)?;
    Some((project.to_path_buf(), "/.opencode/plugin/amplihack.js"))
}

/// The bridge plugin that runs `hooks_binary`.
pub fn plugin_text(hooks_binary: &Path) -> String {
    let quoted = serde_json::Value::from(hooks_binary.to_string_lossy()).to_string();
    TEMPLATE.replacen(PLACEHOLDER, &quoted, 1)
}

/// Whether `text` is a bridge plugin amplihack wrote.
pub fn is_ours(text: &str) -> bool {
    text.starts_with(HEADER)
}

/// The binary a bridge plugin runs, as written in it.
pub fn binary_in(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("const HOOKS = "))?;
    let literal = line.strip_prefix("const HOOKS = ")?.strip_suffix(';')?;
    serde_json::from_str(literal).ok()
}

fn not_ours(path: &Path) -> String {
    format!(
        "{} is not amplihack's bridge plugin (its first line is not `{HEADER} ...`); rename or move your file, then run the command again",
        path.display()
    )
}

/// Writes (or repoints) the bridge plugin; refuses a file of the same name that is not ours.
pub fn register(
    target: &Target,
    hooks_binary: &Path,
    options: &EditOptions,
) -> Result<EditReport, CommandError> {
    let wanted = plugin_text(hooks_binary);
    let own = EditOptions {
        backup: false,
        ..*options
    };
    Ok(safe_file::edit_text(
        &target.path,
        &own,
        |current| match current {
            Some(text) if !is_ours(text) => Err(not_ours(&target.path)),
            _ => Ok(Some(wanted.clone())),
        },
    )?)
}

/// Checks, before anything is written, that `register` will not refuse the file.
pub fn probe(target: &Target) -> Result<(), CommandError> {
    match safe_file::read_text(&target.path)? {
        Some(text) if !is_ours(&text) => Err(CommandError::Refused(format!(
            "{}; nothing was changed",
            not_ours(&target.path)
        ))),
        _ => Ok(()),
    }
}

/// Deletes the bridge plugin if it is ours (a file of the user's is left alone), then the plugin
/// directory and `.opencode/` when that left them empty.
pub fn unregister(target: &Target, options: &EditOptions) -> Result<EditReport, CommandError> {
    let own = EditOptions {
        backup: false,
        ..*options
    };
    Ok(safe_file::edit_text(&target.path, &own, |current| {
        Ok(match current {
            Some(text) if !is_ours(text) => Some(text.to_string()),
            _ => None,
        })
    })?)
}

/// After the plugin went: the lock sidecar beside it, the plugin directory when that left it
/// empty, and a project's `.opencode/` when empty too. The user's opencode directory stays even
/// when empty: it is opencode's (and how `--host all` finds opencode installed).
pub fn remove_leftovers(target: &Target) {
    let Some(dir) = target.path.parent() else {
        return;
    };
    let _ = std::fs::remove_file(dir.join(format!(".{PLUGIN_FILE}.amplihack.lock")));
    if std::fs::remove_dir(dir).is_ok()
        && target.scope == Scope::Project
        && let Some(dot_opencode) = dir.parent()
    {
        let _ = std::fs::remove_dir(dot_opencode);
    }
}

/// Whether the file at `target` is amplihack's bridge plugin.
pub fn holds_ours(target: &Target) -> bool {
    safe_file::read_text(&target.path)
        .ok()
        .flatten()
        .is_some_and(|t| is_ours(&t))
}

/// doctor's and status's check: the plugin is there, is ours, runs the deployed binary (which
/// exists), and is this version's text.
pub fn check(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
    let fix = format!(
        "amplihack install --scope {} --host opencode (or amplihack doctor --fix)",
        target.scope.as_str()
    );
    let place = format!(
        "{} (opencode {} scope)",
        target.path.display(),
        target.scope.as_str()
    );
    let text = match safe_file::read_text(&target.path) {
        Err(e) => {
            return vec![Finding::problem(
                e.to_string(),
                "fix the file as described, then run `amplihack doctor` again".into(),
            )];
        }
        Ok(None) => return vec![Finding::problem(format!("{place}: missing"), fix)],
        Ok(Some(text)) => text,
    };
    if !is_ours(&text) {
        return vec![Finding::problem(
            format!("{place}: not amplihack's bridge plugin"),
            "rename or move the file, then `amplihack install --host opencode`".into(),
        )];
    }
    let wanted = hooks_binary.to_string_lossy();
    match binary_in(&text) {
        Some(binary) if binary != wanted => {
            let gone = if Path::new(&binary).exists() {
                ""
            } else {
                " (which does not exist)"
            };
            vec![Finding::problem(
                format!("{place}: runs {binary}{gone}, not the deployed {wanted}"),
                fix,
            )]
        }
        _ if text != plugin_text(hooks_binary) => vec![Finding::problem(
            format!("{place}: not this version's bridge plugin"),
            fix,
        )],
        _ => vec![Finding::ok(format!(
            "{place}: amplihack's bridge plugin, running {wanted}"
        ))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_the_binary_and_is_recognised_by_its_first_line() {
        let text = plugin_text(Path::new("/opt/my \"bin\"/amplihack-hooks"));
        assert!(is_ours(&text));
        assert!(!text.contains("@AMPLIHACK_HOOKS@"));
        assert_eq!(
            binary_in(&text).as_deref(),
            Some("/opt/my \"bin\"/amplihack-hooks")
        );
        assert!(!is_ours(
            "// my own plugin\nexport const X = async () => ({});\n"
        ));
    }

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
