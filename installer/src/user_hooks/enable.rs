//! `amplihack hooks enable|disable`: turn a plugin on or off without touching its files.

use std::path::{Path, PathBuf};

use amplihack_state::plugins;
use serde_json::json;

use crate::commands::{CommandError, Outcome};

use super::{Context, outcome_of};

/// Marks plugins named `name` disabled (or enabled again) in `<state>/plugins.json`; the plugin's
/// own files are not touched, so a project's trust is not disturbed.
pub fn set_enabled(ctx: &Context, name: &str, enabled: bool) -> Result<Outcome, CommandError> {
    let roots: Vec<PathBuf> = ctx
        .plugins()
        .into_iter()
        .filter(|p| p.name == name)
        .map(|p| p.root)
        .collect();
    if roots.is_empty() {
        return Err(CommandError::refused(format!(
            "no hook plugin named `{name}` (see `amplihack hooks list`)"
        )));
    }
    let refs: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
    plugins::set_disabled(&ctx.state(), &refs, !enabled)?;
    let verb = if enabled { "enabled" } else { "disabled" };
    let mut text: String = roots
        .iter()
        .map(|r| format!("{verb}: {}\n", r.display()))
        .collect();
    // Enabled again: handlers the circuit breaker parked run again, in every session.
    if enabled {
        for (session, entry) in amplihack_state::breaker::unpark(&ctx.state(), name)? {
            text.push_str(&format!(
                "runs again in session {session}: {} `{}` (parked after {} failures in a row)\n",
                entry.plugin, entry.command, entry.fails
            ));
        }
    }
    Ok(outcome_of(
        if enabled { "enable" } else { "disable" },
        text,
        json!({"plugins": roots, "enabled": enabled}),
        0,
    ))
}
