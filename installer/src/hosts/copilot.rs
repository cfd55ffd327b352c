//! Copilot CLI: a hooks file of amplihack's own, in Claude Code's format:
//! `~/.copilot/hooks/amplihack.json` (user) and `<project>/.github/hooks/amplihack.json`
//! (project; Copilot loads it for a trusted folder), and a policy document in the machine's
//! `/etc/github-copilot/policy.d/` (managed: [`super::copilot_policy`]). No local scope.
//!
//! Folder trust is Copilot's and the user's: `trustedFolders` in `~/.copilot/config.json`, a
//! file Copilot manages itself (it opens with `//` comment lines and is rewritten as Copilot
//! runs), and trusting a folder lets every hook in its `.github/hooks/` run, not only amplihack's.
//! amplihack reads it to say whether a project-scope registration will run; it never writes it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use amplihack_settings::safe_file::Syntax;

use super::{Host, HostSpec, Registration};
use crate::scopes::Scope;

pub const FILE_NAME: &str = "amplihack.json";
/// A repository's hooks directory, relative to the project.
const PROJECT_DIR: &str = ".github/hooks";

pub const SPEC: HostSpec = HostSpec {
    host: Host::Copilot,
    files: &[
        (Scope::User, |l| {
            l.home.join(".copilot/hooks").join(FILE_NAME)
        }),
        (Scope::Project, |l| {
            l.project.join(PROJECT_DIR).join(FILE_NAME)
        }),
        // The machine's policy hook directory, for every user: `copilot_policy`.
        (Scope::Managed, |_| {
            Path::new(super::copilot_policy::POLICY_DIR).join(FILE_NAME)
        }),
    ],
    home: |l| l.home.join(".copilot"),
    always_found: false,
    syntax: Syntax::Json,
    registration: Registration::JsonHooks,
    stamps: &[],
    trust_note: Some(trust_note),
    shadowed: None,
    sessions: None,
};

/// Copilot's own state file, which lists the folders the user trusted.
pub fn config_file(home: &Path) -> PathBuf {
    home.join(".copilot/config.json")
}

/// The folders `config.json` lists as trusted (`None`: it is missing or not JSON). Its `//`
/// comment lines, which Copilot writes, are skipped.
fn trusted_folders(home: &Path) -> Option<Vec<PathBuf>> {
    let text = std::fs::read_to_string(config_file(home)).ok()?;
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let value: Value = serde_json::from_str(&json).ok()?;
    Some(
        value
            .get("trustedFolders")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(PathBuf::from)
            .collect(),
    )
}

/// For a project-scope registration file (`<project>/.github/hooks/amplihack.json`) whose project
/// Copilot does not trust: what to tell the user, and the fix. `None` for the user scope or a
/// trusted project (named exactly, as Copilot compares them).
pub fn trust_note(scope: Scope, path: &Path, home: &Path) -> Option<(String, String)> {
    if scope != Scope::Project {
        return None;
    }
    let project = path.ancestors().nth(3)?;
    let trusted = trusted_folders(home)
        .unwrap_or_default()
        .iter()
        .any(|f| f.as_path() == project);
    (!trusted).then(|| {
        (
            format!(
                "{}: Copilot runs a repository's {PROJECT_DIR}/ only in a folder you trusted, and {} is not in `trustedFolders` of {}, so these hooks do not run yet",
                path.display(),
                project.display(),
                config_file(home).display()
            ),
            format!(
                "start `copilot` in {} and trust the folder when it asks (amplihack does not trust folders for you: trust lets every hook in the repository's {PROJECT_DIR}/ run), or use --scope user",
                project.display()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_scope_needs_the_folder_trusted() {
        let home = tempfile::tempdir().expect("tempdir");
        let project = Path::new("/work/repo");
        let file = project.join(PROJECT_DIR).join(FILE_NAME);
        let config = config_file(home.path());
        std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir");
        let cases: &[(Option<&str>, bool)] = &[
            (None, false),
            (Some("// managed\n{\"firstLaunchAt\": \"x\"}\n"), false),
            (
                Some("// managed\n{\"trustedFolders\": [\"/work\"]}\n"),
                false,
            ),
            (
                Some(
                    "// This file is managed automatically.\n{\n  \"trustedFolders\": [\"/other\", \"/work/repo\"]\n}\n",
                ),
                true,
            ),
            (Some("not json"), false),
        ];
        for (text, trusted) in cases {
            match text {
                Some(text) => std::fs::write(&config, text).expect("write"),
                None => {
                    let _ = std::fs::remove_file(&config);
                }
            }
            let note = trust_note(Scope::Project, &file, home.path());
            assert_eq!(note.is_none(), *trusted, "{text:?}: {note:?}");
            if let Some((message, fix)) = note {
                assert!(
                    message.contains("/work/repo is not in `trustedFolders`"),
                    "{message}"
                );
                assert!(fix.contains("start `copilot` in /work/repo"), "{fix}");
            }
            let user = home.path().join(".copilot/hooks").join(FILE_NAME);
            assert_eq!(trust_note(Scope::User, &user, home.path()), None);
        }
    }
}
