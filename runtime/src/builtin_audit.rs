//! Built-ins' decisions in the audit log ([`amplihack_state::audit`]): a line for each deny,
//! ask or defer a built-in answers (the Bash guard's denials, lock mode's blocks, ...), with the
//! host that called. An allow writes nothing: the common call costs no I/O.

use std::time::Duration;

use amplihack_protocol::{Builtin, Decision};
use amplihack_state::audit::{self, Kind, Policy, Record};

use crate::pipeline::Call;

/// One built-in that decided.
pub struct Decided {
    pub builtin: Builtin,
    pub decision: Decision,
    pub reason: Option<String>,
    pub took: Duration,
}

/// Whether a built-in's answer is worth a line.
pub fn worth_recording(decision: Option<Decision>) -> bool {
    decision.is_some_and(|d| d != Decision::Allow)
}

/// One write for the call's lines; a log that cannot be written is a problem line.
pub fn record(call: &Call<'_>, decided: &[Decided], problems: &mut Vec<String>) {
    if decided.is_empty() {
        return;
    }
    let Some(state) = call.ctx.state() else {
        return;
    };
    let time = audit::now_text();
    let var = |name: &str| call.ctx.var(name);
    let about = amplihack_engine::forward::about(call.event, &var);
    let records: Vec<Record> = decided
        .iter()
        .map(|d| Record {
            time: time.clone(),
            kind: Kind::Builtin,
            host: Some(call.ctx.host.name().to_string()),
            session: call.event.session_id.clone(),
            event: call.event.name.as_str().to_string(),
            plugin: format!("builtin:{}", d.builtin.name()),
            duration_ms: Some((d.took.as_secs_f64() * 1_000_000.0).round() / 1000.0),
            decision: Some(d.decision.as_str().to_string()),
            reason: d.reason.as_deref().and_then(audit::first_line),
            about: about.clone(),
            ..Record::default()
        })
        .collect();
    if let Err(e) = audit::append(&state, &records, Policy::from_var(&var)) {
        problems.push(format!("audit log unavailable: {e}"));
    }
}
