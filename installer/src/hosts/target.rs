//! One registration file: a host, a scope and the file's path.

use std::path::{Path, PathBuf};

use amplihack_protocol::Host;

use crate::scopes::Scope;

/// One file amplihack registers hooks in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub scope: Scope,
    pub path: PathBuf,
}

impl Target {
    /// A project- or local-scope file whose way from the project root passes a symbolic link
    /// (a committed `.gemini -> ../elsewhere`): the link and where it leads, so install refuses
    /// rather than write outside the project through it.
    pub fn linked_out_of(&self, project: &Path) -> Option<(PathBuf, PathBuf)> {
        if !matches!(
            self.scope,
            crate::scopes::Scope::Project | crate::scopes::Scope::Local
        ) {
            return None;
        }
        let rest = self.path.strip_prefix(project).ok()?;
        let mut at = project.to_path_buf();
        for part in rest.components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = std::fs::read_link(&at).unwrap_or_default();
                    return Some((at, target));
                }
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// The registration file, read as its host reads it ([`super::syntax`]).
    pub fn read_json(
        &self,
    ) -> Result<Option<(String, serde_json::Value)>, amplihack_settings::safe_file::FileError> {
        amplihack_settings::safe_file::read_json_as(&self.path, super::syntax(self.host))
    }

    /// `options` for an edit of the registration file, in its host's syntax.
    pub fn edit_options(
        &self,
        options: &amplihack_settings::safe_file::EditOptions,
    ) -> amplihack_settings::safe_file::EditOptions {
        amplihack_settings::safe_file::EditOptions {
            syntax: super::syntax(self.host),
            ..*options
        }
    }
}
