//! Stage 5, the audit. What one forwarded call leaves in the audit log ([`amplihack_state::audit`]): a line per
//! handler run (with its deny reason, and its stderr's first line when it failed); the call's
//! first line also carries amplihack's own time around the handlers (`overhead_ms`).

use std::time::Instant;

use amplihack_protocol::{HookEvent, Host};
use amplihack_state::StateDir;
use amplihack_state::audit::{self, About, Policy, Record};

use serde_json::Value;

use super::Run;
use crate::discovery::Plugin;

/// The id Claude Code gives a plugin directory it loads with `--plugin-dir`: its manifest's
/// name (else the directory's), `@inline`. A level's own hooks file is no plugin: `None`.
pub(super) fn plugin_id(plugin: &Plugin) -> Option<String> {
    if plugin.root == plugin.hooks_dir {
        return None;
    }
    let manifest = crate::discovery::read_small(&plugin.root.join(crate::discovery::MANIFEST)).ok();
    let name = manifest
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|m| m.get("name").and_then(Value::as_str).map(str::to_string))
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| plugin.name.clone());
    Some(format!("{name}@inline"))
}

/// What the call was about, for its audit lines: the tool and its call's id (a tool event), the
/// working directory, the (sub)agent, where the host sent them; the trace and span of the
/// `TRACEPARENT` the host propagated. Reads nothing but the event and one variable.
pub fn about(event: &HookEvent, var: &dyn Fn(&str) -> Option<String>) -> About {
    let raw_str = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| event.raw.get(*n).and_then(Value::as_str))
            .and_then(audit::capped)
    };
    let tool = event.tool();
    let (trace_id, span_id) = var(amplihack_env::TRACEPARENT)
        .as_deref()
        .and_then(audit::traceparent)
        .unzip();
    About {
        tool_name: tool
            .and_then(|t| audit::capped(&t.name))
            .or_else(|| raw_str(&["tool_name", "toolName"])),
        cwd: event.cwd.as_deref().and_then(audit::capped),
        agent_id: raw_str(&["agent_id", "agentId"]),
        tool_use_id: tool
            .and_then(|t| t.use_id.as_deref())
            .and_then(audit::capped)
            .or_else(|| raw_str(&["tool_use_id", "toolUseId"])),
        trace_id,
        span_id,
    }
}

/// The call being recorded.
pub struct Call<'a> {
    pub state: &'a StateDir,
    pub host: Host,
    pub event: &'a HookEvent,
    pub session: Option<&'a str>,
    /// When forwarding began: the overhead is the time since, less the handlers' own.
    pub started: Instant,
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

/// Appends the call's lines in one write; a log that cannot be written is a problem line, never
/// a failure of the call.
pub fn record(call: &Call<'_>, runs: &[Run], problems: &mut Vec<String>) {
    let time = audit::now_text();
    let base = Record {
        time,
        host: Some(call.host.name().to_string()),
        session: call.session.map(str::to_string),
        event: call.event.name.as_str().to_string(),
        about: about(call.event, call.var),
        ..Record::default()
    };
    let mut records: Vec<Record> = runs.iter().map(|run| of_run(&base, run)).collect();
    let handlers = handlers_wall_ms(&records);
    let total = call.started.elapsed().as_secs_f64() * 1000.0;
    if let Some(first) = records.first_mut() {
        first.overhead_ms = Some(round(total - handlers).max(0.0));
    }
    if let Err(e) = audit::append(call.state, &records, Policy::from_var(call.var)) {
        problems.push(format!("audit log unavailable: {e}"));
    }
}

fn of_run(base: &Record, run: &Run) -> Record {
    let finished = run.finished.as_ref();
    let mut record = Record {
        plugin: format!("{}:{}", run.level.as_str(), run.plugin),
        command: Some(run.command.clone()),
        priority: Some(run.priority),
        exit: finished.and_then(|f| f.exit),
        duration_ms: finished.map(|f| round(f.duration.as_secs_f64() * 1000.0)),
        decision: run.reply.decision.map(|d| d.as_str().to_string()),
        reason: run.reply.reason.as_deref().and_then(audit::first_line),
        timed_out: finished.is_some_and(|f| f.timed_out),
        output_cut: finished.is_some_and(|f| f.truncated),
        detached: run.detached,
        ..base.clone()
    };
    if record.failed() {
        record.stderr = finished.and_then(|f| {
            f.spawn_error
                .as_deref()
                .and_then(audit::first_line)
                .or_else(|| audit::first_line(&f.stderr))
        });
    }
    record
}

/// The handlers' own wall time: the handlers of one priority run side by side (the longest
/// counts), priorities one after another; detached runs do not hold the call.
fn handlers_wall_ms(records: &[Record]) -> f64 {
    let mut longest: Vec<(i64, f64)> = Vec::new();
    for record in records.iter().filter(|r| !r.detached) {
        let (priority, ms) = (
            record.priority.unwrap_or(0),
            record.duration_ms.unwrap_or(0.0),
        );
        match longest.iter_mut().find(|(p, _)| *p == priority) {
            Some((_, max)) => *max = max.max(ms),
            None => longest.push((priority, ms)),
        }
    }
    longest.iter().map(|(_, ms)| ms).sum()
}

/// Milliseconds to the microsecond: enough for a person, short on disk.
fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}
