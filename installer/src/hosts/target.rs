//! One registration file: a host, a scope and the file's path.

use std::path::PathBuf;

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
