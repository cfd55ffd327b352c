//! Amplifier: amplihack's app bundle under `bundle.app` in `~/.amplifier/settings.yaml`,
//! `<project>/.amplifier/settings.yaml` or `settings.local.yaml`, and for a project the
//! hook-shell bridge's `.amplifier/hooks/amplihack/hooks.json`. No managed scope.

use amplihack_settings::safe_file::Syntax;

use super::{Host, HostSpec, Registration};
use crate::scopes::Scope;

pub const SPEC: HostSpec = HostSpec {
    host: Host::Amplifier,
    files: &[
        (Scope::User, |l| l.home.join(".amplifier/settings.yaml")),
        (Scope::Project, |l| {
            l.project.join(".amplifier/settings.yaml")
        }),
        (Scope::Local, |l| {
            l.project.join(".amplifier/settings.local.yaml")
        }),
    ],
    home: |l| l.home.join(".amplifier"),
    always_found: true,
    syntax: Syntax::Json,
    registration: Registration::AmplifierApp,
    stamps: &[],
    trust_note: None,
    shadowed: None,
    sessions: None,
};
