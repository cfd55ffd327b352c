//! SessionEnd: mark the session ended, then finish the session's record in memory and remove
//! amplihack's per-session state older than [`KEEP`] after the host has its answer
//! ([`turn_records`]). Quick by design: Claude Code before 2.1.74 gave SessionEnd hooks 1.5 s.

use std::time::Duration;

use amplihack_protocol::{EventName, Payload, Reply};
use amplihack_state::session;

use super::{BuiltinError, Result, reflection, turn_records};
use crate::pipeline::Call;

/// Per-session state is kept this long after its last change.
pub const KEEP: Duration = Duration::from_secs(7 * 86_400);

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    if event.name != EventName::SessionEnd || ctx.var(reflection::CHILD_MARKER).is_some() {
        return Ok(Reply::default());
    }
    let state = ctx.state().ok_or(BuiltinError::NoStateDir)?;
    let reason = match &event.payload {
        Payload::SessionEnd { reason } => reason.clone().unwrap_or_else(|| "ended".into()),
        _ => "ended".into(),
    };
    let root = ctx.project_root(event);
    let now = amplihack_state::time::utc_now();
    session::update(&state, event.session_id.as_deref(), |s| {
        s.ended = Some(now.clone());
    })?;
    // The record and the pruning are written after the host has its answer (turn_records).
    turn_records::defer(
        &state,
        &root,
        event.session_id.as_deref(),
        Some(&format!("{now} ({reason})")),
    )?;
    Ok(Reply::default())
}
