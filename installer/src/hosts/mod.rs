//! Where each host beyond Claude Code and Amplifier keeps amplihack's registration, per scope,
//! and whether the host is installed. One file per host; the registration itself is the same
//! loss-free JSON edit as Claude Code's ([`amplihack_settings::registration`], written in the
//! host's dialect: [`amplihack_protocol::hosts`]).

use std::path::PathBuf;

use amplihack_protocol::Host;
use amplihack_settings::safe_file::Syntax;

use crate::scopes::{Locations, Scope};

pub mod codex;
pub mod codex_trust;
pub mod copilot;
pub mod droid;
pub mod gemini;
pub mod opencode;
pub mod qwen;

/// The file amplihack's entries for `host` go in at `scope` (`None`: the host has no such
/// scope). Claude Code's and Amplifier's are [`Locations`]' own.
pub fn registration_file(host: Host, locations: &Locations, scope: Scope) -> Option<PathBuf> {
    match host {
        Host::ClaudeCode => Some(locations.claude_settings(scope)),
        Host::Amplifier => locations.amplifier_settings(scope),
        Host::Codex => codex::registration_file(locations, scope),
        Host::Copilot => copilot::registration_file(locations, scope),
        Host::Qwen => qwen::registration_file(locations, scope),
        Host::Droid => droid::registration_file(locations, scope),
        Host::Gemini => gemini::registration_file(locations, scope),
        Host::Opencode => opencode::registration_file(locations, scope),
    }
}

/// Whether `host` is installed for this user: its own directory exists (each creates it on its
/// first run). Claude Code and Amplifier always count (amplihack's first hosts: `--host all`
/// has always meant both).
pub fn found(host: Host, locations: &Locations) -> bool {
    match host {
        Host::ClaudeCode | Host::Amplifier => true,
        other => home_dir(other, locations).is_some_and(|d| d.is_dir()),
    }
}

/// The host's own directory for this user.
pub fn home_dir(host: Host, locations: &Locations) -> Option<PathBuf> {
    match host {
        Host::ClaudeCode => Some(locations.claude_config_dir.clone()),
        Host::Amplifier => Some(locations.home.join(".amplifier")),
        Host::Codex => Some(codex::home(locations)),
        Host::Copilot => Some(locations.home.join(".copilot")),
        Host::Qwen => Some(locations.home.join(".qwen")),
        Host::Droid => Some(locations.home.join(".factory")),
        Host::Gemini => Some(locations.home.join(".gemini")),
        Host::Opencode => Some(opencode::config_dir(locations)),
    }
}

/// What the user must do before the host runs a registration amplihack wrote (Copilot's folder
/// trust for a project): the message and the fix, for install's output and a doctor note.
pub fn trust_note(
    host: Host,
    scope: Scope,
    path: &std::path::Path,
    home: &std::path::Path,
) -> Option<(String, String)> {
    match host {
        Host::Copilot => copilot::trust_note(scope, path, home),
        _ => None,
    }
}

/// How the host reads its registration file: JSONC (comments and trailing commas kept by every
/// edit) for the hosts that allow them, strict JSON for the others (Claude Code's settings).
pub fn syntax(host: Host) -> Syntax {
    match host {
        Host::Qwen => qwen::SYNTAX,
        Host::Gemini => gemini::SYNTAX,
        Host::Droid => droid::SYNTAX,
        _ => Syntax::Json,
    }
}

/// When the host reads its hooks from another file than `registration` (so amplihack's entries
/// there do not run): the problem and its fix. Only Droid has such a file
/// ([`droid::shadowed_by`]).
pub fn shadowed(host: Host, registration: &std::path::Path) -> Option<(String, String)> {
    match host {
        Host::Droid => droid::shadowed_by(registration)
            .map(|hooks| droid::shadowed_message(registration, &hooks)),
        _ => None,
    }
}

/// The keys a host writes itself into a settings file it loads (Qwen's `$version`): in a file
/// amplihack created, they came with amplihack's entries and go with them at uninstall.
pub fn stamps(host: Host) -> &'static [&'static str] {
    match host {
        Host::Qwen => qwen::STAMPS,
        _ => &[],
    }
}

/// The hosts whose registration is a JSON hooks file edited like Claude Code's settings.
pub fn edits_json_hooks(host: Host) -> bool {
    !matches!(host, Host::Amplifier | Host::Opencode)
}
