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
        turn_records::Writer::Now,
    )?;
    start_otel_export(&state)?;
    Ok(Reply::default())
}

/// `amplihack install --otel` chose the session's end: `amplihack log export --otlp` starts
/// detached (its own process group, its output appended to `otel-export.log`), and this hook
/// does not wait for it. The hook binary sends nothing itself. One `stat` when it was not chosen.
fn start_otel_export(state: &amplihack_state::StateDir) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let marker = state.file(amplihack_state::OTEL_SESSION_END_MARKER);
    if !marker.exists() {
        return Ok(());
    }
    let text = amplihack_state::bounded::read_text(&marker, 4096)
        .map_err(|e| BuiltinError::Other(format!("{}: {e}", marker.display())))?;
    let program = text.trim();
    if program.is_empty() {
        return Ok(());
    }
    let log = state.file("otel-export.log");
    amplihack_state::files::rotate(&log, 1024 * 1024);
    let output = amplihack_state::files::open_append(&log).ok();
    let stdio = |file: Option<&std::fs::File>| {
        file.and_then(|f| f.try_clone().ok())
            .map_or_else(std::process::Stdio::null, std::process::Stdio::from)
    };
    let started = std::process::Command::new(program)
        .args(["log", "export", "--otlp"])
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(stdio(output.as_ref()))
        .stderr(stdio(output.as_ref()))
        .spawn();
    match started {
        Ok(_child) => Ok(()), // not waited for: it outlives this hook
        Err(e) => Err(BuiltinError::Other(format!(
            "the OpenTelemetry export ({program} log export --otlp, named in {}) could not start: {e}; run `amplihack install --otel` again",
            marker.display()
        ))),
    }
}
