//! A host that delivers no SessionStart (Mistral Vibe: only `pre_tool`, `post_tool` and
//! `post_agent`) gets amplihack's SessionStart on its session's first PostToolUse: the
//! `session-start` row (its built-ins: PROJECT.md and the other project context, the version and
//! registration checks; then the user's plugins' SessionStart handlers), run once per session
//! (a call record of its own, [`amplihack_state::calls`] under `<host>-session-start`, says it
//! ran), its context going out with the tool's result, the only text such a host hands the model.
//! Every event of such a host records the session's call, for doctor's silence check.

use std::time::Instant;

use amplihack_protocol::{EventName, HookEvent, hosts, table};
use serde_json::{Map, Value};

use crate::context::Context;
use crate::pipeline::{self, Outcome};

/// The session-start run, when `event` is the first PostToolUse of a session under a host that
/// needs one; `None` otherwise (another event, another host, no session id, no state directory,
/// or the session already had it).
pub fn run(event: &HookEvent, ctx: &Context, deadline: Instant) -> Option<Outcome> {
    if !hosts::session_start_on_first_tool(ctx.host) {
        return None;
    }
    let session = event.session_id.as_deref().filter(|s| !s.is_empty())?;
    let state = ctx.state()?;
    // Every event says the host called amplihack in this session (doctor's silence check): a
    // session that ran no tool still called it at its post_agent.
    let _ = amplihack_state::calls::record(&state, ctx.host.name(), Some(session));
    let sent = format!("{}-session-start", ctx.host.name());
    if event.name != EventName::PostToolUse
        || amplihack_state::calls::called(&state, &sent, session)
    {
        return None;
    }
    // Once per session, even when this run fails or runs out of time.
    let _ = amplihack_state::calls::record(&state, &sent, Some(session));
    let hook = table::find("session-start")?;
    let mut start = Map::new();
    start.insert("hook_event_name".into(), Value::from("SessionStart"));
    start.insert("source".into(), Value::from("startup"));
    for key in ["session_id", "transcript_path", "cwd"] {
        if let Some(value) = event.raw.get(key) {
            start.insert(key.into(), value.clone());
        }
    }
    let raw = serde_json::to_vec(&Value::Object(start)).ok()?;
    let parsed = HookEvent::parse(&raw, None).ok()?;
    let deadline = deadline.min(Instant::now() + hook.deadline);
    let mut outcome = pipeline::process(hook, parsed, raw, ctx, deadline).outcome;
    // SessionStart decides nothing: only its context and notes go on.
    outcome.reply.decision = None;
    outcome.reply.reason = None;
    Some(outcome)
}

/// The tool event's outcome with the session's start before it: its context first, then the
/// tool's, the notes of both.
pub fn before(started: Outcome, tool: Outcome) -> Outcome {
    let mut reply = started.reply;
    reply.merge(tool.reply);
    let mut problems = started.problems;
    problems.extend(tool.problems);
    Outcome {
        reply,
        forwarded: tool.forwarded,
        problems,
    }
}
