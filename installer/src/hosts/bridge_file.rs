//! The hosts whose registration is one file of amplihack's own that the host loads in-process
//! (opencode's bridge plugin, Pi's bridge extension, Cline's bridge plugin): written with the
//! absolute path of `amplihack-hooks`, recognised by its first line, refused over a file of the
//! user's with the same name, deleted at uninstall (with the folder when that left it empty).

use std::path::{Path, PathBuf};

use super::{Host, Target};
use crate::error::CommandError;
use crate::finding::Finding;
use crate::safe_file::{self, EditOptions, EditReport};
use crate::scopes::Scope;

/// One host's bridge file.
pub struct BridgeFile {
    pub host: Host,
    /// The file's name in the host's folder.
    pub file: &'static str,
    /// The file as shipped; [`BridgeFile::text`] bakes the binary's path in.
    pub template: &'static str,
    /// The first line of every file amplihack writes: how install, doctor and uninstall know
    /// the file is amplihack's (a file without it is the user's and is never touched).
    pub header: &'static str,
    /// What the host calls it: `bridge plugin`, `bridge extension`.
    pub kind: &'static str,
    /// The folder of a project's copy, relative to the project: `.opencode/plugin`.
    pub project_dir: &'static str,
}

/// The placeholder in a template the binary's path (a JSON string literal) replaces.
const PLACEHOLDER: &str = "\"@AMPLIHACK_HOOKS@\"";

/// The bridge file of `host`, for the hosts registered so.
pub fn of(host: Host) -> Option<&'static BridgeFile> {
    match host {
        Host::Opencode => Some(&super::opencode::BRIDGE),
        Host::Pi => Some(&super::pi::BRIDGE),
        Host::Cline => Some(&super::cline::BRIDGE),
        _ => None,
    }
}

impl BridgeFile {
    /// The file that runs `hooks_binary`.
    pub fn text(&self, hooks_binary: &Path) -> String {
        let quoted = serde_json::Value::from(hooks_binary.to_string_lossy()).to_string();
        self.template.replacen(PLACEHOLDER, &quoted, 1)
    }

    /// Whether `text` is a bridge file amplihack wrote.
    pub fn is_ours(&self, text: &str) -> bool {
        text.starts_with(self.header)
    }

    /// What keeps a project's copy (this machine's binary path) out of the project's commits:
    /// the project and the pattern for its `.git/info/exclude`. None for the user scope.
    pub fn git_exclusion(&self, target: &Target) -> Option<(PathBuf, String)> {
        if target.host != self.host || target.scope != Scope::Project {
            return None;
        }
        let project = target.path.ancestors().nth(self.depth())?;
        Some((
            project.to_path_buf(),
            format!("/{}/{}", self.project_dir, self.file),
        ))
    }

    /// How many levels below its project a project's copy is.
    pub fn depth(&self) -> usize {
        self.project_dir.split('/').count() + 1
    }

    fn not_ours(&self, path: &Path) -> String {
        format!(
            "{} is not amplihack's {} (its first line is not `{} ...`); rename or move your file, then run the command again",
            path.display(),
            self.kind,
            self.header
        )
    }

    /// Writes (or repoints) the file; refuses a file of the same name that is not ours.
    pub fn register(
        &self,
        target: &Target,
        hooks_binary: &Path,
        options: &EditOptions,
    ) -> Result<EditReport, CommandError> {
        let wanted = self.text(hooks_binary);
        let own = EditOptions {
            backup: false,
            ..*options
        };
        Ok(safe_file::edit_text(
            &target.path,
            &own,
            |current| match current {
                Some(text) if !self.is_ours(text) => Err(self.not_ours(&target.path)),
                _ => Ok(Some(wanted.clone())),
            },
        )?)
    }

    /// Checks, before anything is written, that `register` will not refuse the file.
    pub fn probe(&self, target: &Target) -> Result<(), CommandError> {
        match safe_file::read_text(&target.path)? {
            Some(text) if !self.is_ours(&text) => Err(CommandError::Refused(format!(
                "{}; nothing was changed",
                self.not_ours(&target.path)
            ))),
            _ => Ok(()),
        }
    }

    /// Deletes the file if it is ours (a file of the user's is left alone).
    pub fn unregister(
        &self,
        target: &Target,
        options: &EditOptions,
    ) -> Result<EditReport, CommandError> {
        let own = EditOptions {
            backup: false,
            ..*options
        };
        Ok(safe_file::edit_text(&target.path, &own, |current| {
            Ok(match current {
                Some(text) if !self.is_ours(text) => Some(text.to_string()),
                _ => None,
            })
        })?)
    }

    /// After the file went: the lock sidecar beside it, its folder when that left it empty,
    /// and for a project each folder up to the project that is empty too. The user's host
    /// directory stays even when empty: it is the host's (and how `--host all` finds it).
    pub fn remove_leftovers(&self, target: &Target) {
        let Some(dir) = target.path.parent() else {
            return;
        };
        let _ = std::fs::remove_file(dir.join(format!(".{}.amplihack.lock", self.file)));
        if std::fs::remove_dir(dir).is_err() || target.scope != Scope::Project {
            return;
        }
        for parent in dir.ancestors().skip(1).take(self.depth() - 2) {
            if std::fs::remove_dir(parent).is_err() {
                return;
            }
        }
    }

    /// Whether the file at `target` is amplihack's.
    pub fn holds_ours(&self, target: &Target) -> bool {
        safe_file::read_text(&target.path)
            .ok()
            .flatten()
            .is_some_and(|t| self.is_ours(&t))
    }

    /// doctor's and status's check: the file is there, is ours, runs the deployed binary
    /// (which exists), and is this version's text.
    pub fn check(&self, target: &Target, hooks_binary: &Path) -> Vec<Finding> {
        let host = self.host.name();
        let fix = format!(
            "amplihack install --scope {} --host {host} (or amplihack doctor --fix)",
            target.scope.as_str()
        );
        let place = format!(
            "{} ({} {} scope)",
            target.path.display(),
            self.host.title(),
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
        if !self.is_ours(&text) {
            return vec![Finding::problem(
                format!("{place}: not amplihack's {}", self.kind),
                format!("rename or move the file, then `amplihack install --host {host}`"),
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
            _ if text != self.text(hooks_binary) => vec![Finding::problem(
                format!("{place}: not this version's {}", self.kind),
                fix,
            )],
            _ => vec![Finding::ok(format!(
                "{place}: amplihack's {}, running {wanted}",
                self.kind
            ))],
        }
    }
}

/// The binary a bridge file runs, as written in it.
pub fn binary_in(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("const HOOKS = "))?;
    let literal = line.strip_prefix("const HOOKS = ")?.strip_suffix(';')?;
    serde_json::from_str(literal).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bridge_names_the_binary_and_is_recognised_by_its_first_line() {
        for host in Host::ALL {
            let Some(bridge) = of(host) else { continue };
            let text = bridge.text(Path::new("/opt/my \"bin\"/amplihack-hooks"));
            assert!(bridge.is_ours(&text), "{host:?}");
            assert!(!text.contains("@AMPLIHACK_HOOKS@"), "{host:?}");
            assert!(
                text.contains(&format!("--host\", \"{}\"", host.name())),
                "{host:?}"
            );
            assert_eq!(
                binary_in(&text).as_deref(),
                Some("/opt/my \"bin\"/amplihack-hooks"),
                "{host:?}"
            );
            assert!(!bridge.is_ours("// my own plugin\nexport default () => {};\n"));
        }
    }
}
