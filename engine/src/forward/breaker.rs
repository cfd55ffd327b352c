//! The plugin circuit breaker ([`amplihack_state::breaker`]): a handler that failed
//! `AMPLIHACK_PLUGIN_FAILURE_LIMIT` times in a row (default 5) is parked for the rest of the
//! session. The call that parks it tells the user once, as the host shows a non-blocking hook
//! error (the same `systemMessage` a failure gets), on stderr and in the failure log, and adds a
//! `parked` line to the audit log (`amplihack log`); `amplihack doctor` lists parked handlers.
//! The next session, or `amplihack hooks enable NAME`, runs it again.
//!
//! Cost: nothing when no handler matched; one read of a file that usually does not exist when
//! some did; a write only when a handler failed, or succeeded after failing.

use amplihack_state::audit::{self, Policy, Record};
use amplihack_state::breaker::{self, Breaker, Entry, Ran};

use super::*;

/// The session's breaker, when it is on and there are handlers to check.
pub(super) fn load(
    var: &dyn Fn(&str) -> Option<String>,
    state: &StateDir,
    session: Option<&str>,
    any: bool,
) -> Option<(u32, Breaker)> {
    let limit = breaker::limit(var)?;
    any.then(|| (limit, Breaker::load(state, session)))
}

/// Leaves out the parked handlers (listed as skipped).
pub(super) fn leave_out_parked(
    candidates: &mut Vec<Candidate<'_>>,
    known: &Breaker,
    skipped: &mut Vec<String>,
) {
    if known.handlers.iter().all(|e| !e.parked) {
        return;
    }
    candidates.retain(|c| {
        let parked = known.parked(&c.source(), &c.command);
        if parked {
            skipped.push(format!(
                "{}: `{}` parked for this session after failing {} times in a row",
                c.source(),
                c.command,
                known
                    .handlers
                    .iter()
                    .find(|e| e.plugin == c.source())
                    .map_or(0, |e| e.fails)
            ));
        }
        !parked
    });
}

/// It failed as the breaker counts it: an exit other than 0 and 2, a timeout, no start.
fn failed(run: &Run) -> bool {
    !run.detached
        && run
            .finished
            .as_ref()
            .is_some_and(|f| f.timed_out || f.exit.is_none_or(|c| c != 0 && c != 2))
}

/// Counts the call's runs; a handler parked just now is told to the user once.
pub(super) fn count(call: &Call<'_>, (limit, known): &(u32, Breaker), outcome: &mut Outcome) {
    let sources: Vec<String> = outcome
        .runs
        .iter()
        .map(|r| format!("{}:{}", r.level.as_str(), r.plugin))
        .collect();
    let runs: Vec<Ran<'_>> = outcome
        .runs
        .iter()
        .zip(&sources)
        .filter(|(run, _)| !run.detached && run.finished.is_some())
        .map(|(run, source)| Ran {
            plugin: source,
            command: &run.command,
            failed: failed(run),
        })
        .collect();
    let parked = match breaker::record(call.state, call.session, &runs, *limit, known) {
        Ok(parked) => parked,
        Err(e) => {
            outcome
                .problems
                .push(format!("plugin failure counts unavailable: {e}"));
            return;
        }
    };
    if parked.is_empty() {
        return;
    }
    let mut records = Vec::new();
    for entry in &parked {
        let message = message(entry);
        outcome.problems.push(message.clone());
        if outcome.reply.decision != Some(Decision::Deny) {
            outcome.reply.merge(Reply {
                system_message: Some(message.clone()),
                ..Reply::default()
            });
        }
        records.push(Record {
            time: audit::now_text(),
            host: Some(call.host.name().to_string()),
            session: call.session.map(str::to_string),
            event: call.event.name.as_str().to_string(),
            plugin: entry.plugin.clone(),
            command: Some(entry.command.clone()),
            decision: Some(PARKED.to_string()),
            reason: Some(format!("failed {} times in a row", entry.fails)),
            about: about(call.event, call.var),
            ..Record::default()
        });
    }
    if let Err(e) = audit::append(call.state, &records, Policy::from_var(call.var)) {
        outcome.problems.push(format!("audit log unavailable: {e}"));
    }
}

/// The audit line's decision for a handler parked.
pub const PARKED: &str = "parked";

/// What the user is told, once.
pub fn message(entry: &Entry) -> String {
    let name = entry
        .plugin
        .split_once(':')
        .map_or(entry.plugin.as_str(), |(_, n)| n);
    format!(
        "hook from {} (`{}`) failed {} times in a row: parked for the rest of this session (it runs again in the next session, or after `amplihack hooks enable {name}`; {} sets how many failures park a handler)",
        entry.plugin,
        entry.command,
        entry.fails,
        breaker::LIMIT_VAR
    )
}
