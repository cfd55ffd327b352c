//! Every host the installer serves, as a value: [`HostSpec`], one per host, in the host's own
//! file, and [`spec`], the table keyed by [`Host`] (whose [`Host::ALL`] is the one list of
//! hosts). Every command (install, uninstall, doctor, status, log, `hooks *`) asks the spec: the
//! files per scope (and so the scopes a host lacks), its own directory, the syntax of its
//! files, what it stamps into them, its trust step and its checks. The registration itself is the
//! same loss-free JSON edit as Claude Code's ([`amplihack_settings::registration`], written in the
//! host's dialect: [`amplihack_protocol::hosts`]), except for Amplifier's app bundle and
//! opencode's bridge plugin.
//!
//! A new host: its dialect in `protocol/src/hosts/`, its file here with its `SPEC`, and a row in
//! [`spec`] (and [`Host`]'s list).

use std::path::{Path, PathBuf};

pub use amplihack_protocol::Host;
use amplihack_settings::safe_file::Syntax;

use crate::scopes::{Locations, Scope};

pub mod amplifier;
pub mod bridge_file;
mod choice;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod codex_requirements;
pub mod codex_trust;
pub mod copilot;
pub mod copilot_policy;
pub mod droid;
pub mod gemini;
pub mod kimi;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod sessions;
mod target;
pub mod toml_hooks;
pub mod vibe;

pub use choice::{HostArg, HostChoice};
pub use target::Target;

/// Where amplihack's entries go in one scope of a host.
pub type Locate = fn(&Locations) -> PathBuf;

/// How amplihack's entries are written into a host's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// The `hooks` key of a JSON (or JSONC) settings file, edited like Claude Code's.
    JsonHooks,
    /// Amplifier: amplihack's app bundle under `bundle.app` of a `settings.yaml`, and the
    /// hook-shell bridge's `hooks.json` of a project.
    AmplifierApp,
    /// One file of amplihack's own the host loads in-process ([`bridge_file`]): opencode's
    /// bridge plugin, Pi's bridge extension, Cline's bridge plugin.
    BridgePlugin,
    /// `[[hooks]]` tables in the host's own TOML file ([`toml_hooks`]): Mistral Vibe, Kimi CLI.
    TomlHooks,
}

/// A note for the user about one registration file: the message and its fix.
pub type Note = (String, String);

/// A host's trust step, asked of one registration file: `(scope, file, home)`.
pub type TrustNote = fn(Scope, &Path, &Path) -> Option<Note>;

/// Everything the installer knows of one host.
pub struct HostSpec {
    pub host: Host,
    /// The file amplihack's entries go in, per scope the host has; a scope not listed is one
    /// the host lacks (refused by every command that names it).
    pub files: &'static [(Scope, Locate)],
    /// The host's own directory for this user (it creates it on its first run).
    pub home: Locate,
    /// Counted as installed without its directory (amplihack's first hosts: `--host all` has
    /// always meant both).
    pub always_found: bool,
    /// How the host reads its registration file.
    pub syntax: Syntax,
    /// How amplihack's entries are written.
    pub registration: Registration,
    /// Keys the host writes itself into a settings file it loads (Qwen's `$version`): in a file
    /// amplihack created they came with amplihack's entries and go with them at uninstall.
    pub stamps: &'static [&'static str],
    /// What the user must do before the host runs a registration amplihack wrote (Copilot's
    /// folder trust): `(scope, file, home)`.
    pub trust_note: Option<TrustNote>,
    /// When the host reads its hooks from another file than the registration (so amplihack's
    /// entries there do not run): Droid's `hooks.json`.
    pub shadowed: Option<fn(&Path) -> Option<Note>>,
    /// The host's own records of the sessions it ran, where it keeps them: `doctor` finds a
    /// session in which a registered amplihack was not called.
    pub sessions: Option<sessions::Sessions>,
}

/// The table of hosts: each host's description, from its own file.
pub fn spec(host: Host) -> &'static HostSpec {
    match host {
        Host::ClaudeCode => &claude_code::SPEC,
        Host::Amplifier => &amplifier::SPEC,
        Host::Codex => &codex::SPEC,
        Host::Copilot => &copilot::SPEC,
        Host::Qwen => &qwen::SPEC,
        Host::Droid => &droid::SPEC,
        Host::Gemini => &gemini::SPEC,
        Host::Opencode => &opencode::SPEC,
        Host::Vibe => &vibe::SPEC,
        Host::Kimi => &kimi::SPEC,
        Host::Pi => &pi::SPEC,
        Host::Cline => &cline::SPEC,
    }
}

impl HostSpec {
    /// The scopes the host has, in [`Scope::EVERY`]'s order.
    pub fn scopes(&self) -> Vec<Scope> {
        Scope::EVERY.into_iter().filter(|s| self.has(*s)).collect()
    }

    pub fn has(&self, scope: Scope) -> bool {
        self.files.iter().any(|(s, _)| *s == scope)
    }

    /// The file of `scope`, `None` where the host lacks it.
    pub fn file(&self, locations: &Locations, scope: Scope) -> Option<PathBuf> {
        self.files
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, locate)| locate(locations))
    }

    /// The refusal of a scope the host lacks: names the host and the scopes it has.
    pub fn lacks(&self, scope: Scope) -> Option<NoSuchScope> {
        (!self.has(scope)).then(|| NoSuchScope {
            host: self.host,
            scope,
            has: self.scopes(),
        })
    }
}

/// `--scope S` for a host that has no such scope: refused, nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoSuchScope {
    pub host: Host,
    pub scope: Scope,
    pub has: Vec<Scope>,
}

impl std::fmt::Display for NoSuchScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let has: Vec<&str> = self.has.iter().map(|s| s.as_str()).collect();
        write!(
            f,
            "{} has no {} scope (its scopes: {}); nothing was changed: choose one of them with --scope, or another host with --host",
            self.host.title(),
            self.scope.as_str(),
            has.join(", "),
        )
    }
}

impl std::error::Error for NoSuchScope {}

/// The file amplihack's entries for `host` go in at `scope` (`None`: the host has no such
/// scope).
pub fn registration_file(host: Host, locations: &Locations, scope: Scope) -> Option<PathBuf> {
    spec(host).file(locations, scope)
}

/// Whether `host` is installed for this user: its own directory exists (each creates it on its
/// first run), or it always counts ([`HostSpec::always_found`]).
pub fn found(host: Host, locations: &Locations) -> bool {
    spec(host).always_found || installed(host, locations)
}

/// Whether the host's own directory is there: the host ran for this user.
pub fn installed(host: Host, locations: &Locations) -> bool {
    home_dir(host, locations).is_dir()
}

/// The host's own directory for this user.
pub fn home_dir(host: Host, locations: &Locations) -> PathBuf {
    (spec(host).home)(locations)
}

/// What the user must do before the host runs a registration amplihack wrote (Copilot's folder
/// trust for a project): the message and the fix, for install's output and a doctor note.
pub fn trust_note(host: Host, scope: Scope, path: &Path, home: &Path) -> Option<Note> {
    spec(host)
        .trust_note
        .and_then(|note| note(scope, path, home))
}

/// How the host reads its registration file: JSONC (comments and trailing commas kept by every
/// edit) for the hosts that allow them, strict JSON for the others (Claude Code's settings).
pub fn syntax(host: Host) -> Syntax {
    spec(host).syntax
}

/// When the host reads its hooks from another file than `registration` (so amplihack's entries
/// there do not run): the problem and its fix.
pub fn shadowed(host: Host, registration: &Path) -> Option<Note> {
    spec(host)
        .shadowed
        .and_then(|shadowed| shadowed(registration))
}

/// The keys a host writes itself into a settings file it loads (Qwen's `$version`).
pub fn stamps(host: Host) -> &'static [&'static str] {
    spec(host).stamps
}

/// The hosts whose registration is `[[hooks]]` tables in a TOML file ([`toml_hooks`]).
pub fn edits_toml_hooks(host: Host) -> bool {
    spec(host).registration == Registration::TomlHooks
}

/// The hosts whose registration is a JSON hooks file edited like Claude Code's settings.
pub fn edits_json_hooks(host: Host) -> bool {
    spec(host).registration == Registration::JsonHooks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_has_its_spec_and_a_user_scope() {
        for host in Host::ALL {
            let spec = spec(host);
            assert_eq!(spec.host, host);
            assert!(spec.has(Scope::User), "{host:?}");
        }
    }

    #[test]
    fn a_scope_a_host_lacks_is_named_with_the_ones_it_has() {
        let refusal = spec(Host::Gemini).lacks(Scope::Local).expect("refused");
        assert_eq!(
            refusal.to_string(),
            "Gemini CLI has no local scope (its scopes: user, project); nothing was changed: choose one of them with --scope, or another host with --host"
        );
        assert!(spec(Host::ClaudeCode).lacks(Scope::Managed).is_none());
        assert!(spec(Host::Codex).lacks(Scope::Managed).is_none());
        assert!(spec(Host::Copilot).lacks(Scope::Managed).is_none());
        assert!(spec(Host::Gemini).lacks(Scope::Managed).is_some());
    }
}
