//! One audit line as one OTLP log record. The mapping (the manual's OpenTelemetry page lists it):
//!
//! * time: the line's `time`; observed time: when the export read it;
//! * severity: `WARN` for a failed handler run, else `INFO`;
//! * event name `amplihack.hook`; body: `<plugin> <event>: <decision or exit>`;
//! * trace and span: the line's `trace_id`/`span_id` (the host's `TRACEPARENT`);
//! * attributes: the line's other fields, under OpenTelemetry's semantic-convention names where
//!   one exists (`session.id`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.agent.id`,
//!   `process.exit.code`), else `amplihack.<field>`.

use std::time::{Duration, SystemTime};

use amplihack_state::audit::{Kind, Record};
use opentelemetry::logs::{AnyValue, LogRecord as _, Severity};
use opentelemetry::trace::{SpanId, TraceFlags, TraceId};
use opentelemetry_sdk::logs::SdkLogRecord;

pub const EVENT_NAME: &str = "amplihack.hook";

/// Fills `out` (a new record of the export's logger) from `record`.
pub fn fill(record: &Record, out: &mut SdkLogRecord) {
    if let Some(time) = exact_time(&record.time) {
        out.set_timestamp(SystemTime::UNIX_EPOCH + time);
    }
    out.set_observed_timestamp(SystemTime::now());
    let (severity, text) = if record.failed() {
        (Severity::Warn, "WARN")
    } else {
        (Severity::Info, "INFO")
    };
    out.set_severity_number(severity);
    out.set_severity_text(text);
    out.set_event_name(EVENT_NAME);
    out.set_body(AnyValue::from(body(record)));
    let about = &record.about;
    if let (Some(trace), Some(span)) = (&about.trace_id, &about.span_id)
        && let (Ok(trace), Ok(span)) = (TraceId::from_hex(trace), SpanId::from_hex(span))
    {
        out.set_trace_context(trace, span, Some(TraceFlags::SAMPLED));
    }
    let text = |out: &mut SdkLogRecord, key: &'static str, value: &Option<String>| {
        if let Some(value) = value {
            out.add_attribute(key, value.clone());
        }
    };
    out.add_attribute(
        "amplihack.kind",
        match record.kind {
            Kind::Handler => "handler",
            Kind::Builtin => "builtin",
        },
    );
    text(out, "amplihack.host", &record.host);
    text(out, "session.id", &record.session);
    out.add_attribute("amplihack.event", record.event.clone());
    out.add_attribute("amplihack.plugin", record.plugin.clone());
    text(out, "amplihack.command", &record.command);
    if let Some(priority) = record.priority {
        out.add_attribute("amplihack.priority", priority);
    }
    if let Some(exit) = record.exit {
        out.add_attribute("process.exit.code", i64::from(exit));
    }
    if let Some(ms) = record.duration_ms {
        out.add_attribute("amplihack.duration_ms", ms);
    }
    text(out, "amplihack.decision", &record.decision);
    text(out, "amplihack.reason", &record.reason);
    text(out, "amplihack.stderr", &record.stderr);
    out.add_attribute("amplihack.timed_out", record.timed_out);
    out.add_attribute("amplihack.output_cut", record.output_cut);
    out.add_attribute("amplihack.async", record.detached);
    out.add_attribute("amplihack.failed", record.failed());
    if let Some(ms) = record.overhead_ms {
        out.add_attribute("amplihack.overhead_ms", ms);
    }
    text(out, "gen_ai.tool.name", &about.tool_name);
    text(out, "gen_ai.tool.call.id", &about.tool_use_id);
    text(out, "gen_ai.agent.id", &about.agent_id);
    text(out, "amplihack.cwd", &about.cwd);
}

/// `1763819420.123` as written, to the nanosecond (a float would move it by a few).
fn exact_time(text: &str) -> Option<Duration> {
    let (secs, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let secs: u64 = secs.parse().ok()?;
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos: u32 = format!("{fraction:0<9}").parse().ok()?;
    Some(Duration::new(secs, nanos))
}

/// `user:fmt PreToolUse: deny`, `user:fmt Stop: exit 1`.
pub fn body(record: &Record) -> String {
    let outcome = match (&record.decision, record.exit, record.timed_out) {
        (_, _, true) => "timed out".to_string(),
        (Some(decision), _, _) => decision.clone(),
        (None, Some(code), _) => format!("exit {code}"),
        (None, None, _) if record.detached => "started".to_string(),
        (None, None, _) => "did not start".to_string(),
    };
    format!("{} {}: {outcome}", record.plugin, record.event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_to_the_nanosecond() {
        let cases = [
            (
                "1795633200.001",
                Some(Duration::new(1_795_633_200, 1_000_000)),
            ),
            ("1795633200", Some(Duration::new(1_795_633_200, 0))),
            ("-1.5", None),
            ("12.x", None),
        ];
        for (text, want) in cases {
            assert_eq!(exact_time(text), want, "{text}");
        }
    }

    #[test]
    fn bodies_say_what_happened() {
        let base = Record {
            plugin: "user:fmt".into(),
            event: "Stop".into(),
            ..Record::default()
        };
        let cases = [
            (
                Record {
                    exit: Some(1),
                    ..base.clone()
                },
                "user:fmt Stop: exit 1",
            ),
            (
                Record {
                    decision: Some("deny".into()),
                    exit: Some(2),
                    ..base.clone()
                },
                "user:fmt Stop: deny",
            ),
            (
                Record {
                    timed_out: true,
                    ..base.clone()
                },
                "user:fmt Stop: timed out",
            ),
            (
                Record {
                    detached: true,
                    ..base.clone()
                },
                "user:fmt Stop: started",
            ),
            (base.clone(), "user:fmt Stop: did not start"),
        ];
        for (record, want) in cases {
            assert_eq!(body(&record), want);
        }
    }
}
