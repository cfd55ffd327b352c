//! Which audit records `amplihack log` shows: the filters, the `--since` window, and the
//! decision as a person reads it (a deny on an event that is not a permission is a block).

use amplihack_state::audit::{Kind, Record};

/// The decisions `--decision` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecisionArg {
    Deny,
    Ask,
    Block,
    /// A plugin handler the circuit breaker parked for its session.
    Parked,
}

impl DecisionArg {
    fn as_str(self) -> &'static str {
        match self {
            DecisionArg::Deny => "deny",
            DecisionArg::Ask => "ask",
            DecisionArg::Block => "block",
            DecisionArg::Parked => amplihack_engine::forward::PARKED,
        }
    }
}

/// The decision as shown: `deny`, `block`, `ask`, `defer`, `allow`; `None` when none was given.
/// A deny on an event that does not take a permission decision (Claude Code's
/// `permissionDecision`: PreToolUse, PreModelSwitch, ...) refuses something else: the stop, the
/// prompt, ... : a block.
pub fn shown_decision(record: &Record) -> Option<&str> {
    let decision = record.decision.as_deref()?;
    let event = amplihack_protocol::EventName::parse(&record.event);
    let permission = amplihack_protocol::claude::takes_permission_decision(&event)
        || event == amplihack_protocol::EventName::PermissionRequest;
    Some(if decision == "deny" && !permission {
        "block"
    } else {
        decision
    })
}

/// The name `--plugin` matches: `user:fmt` by `user:fmt` or `fmt`, `builtin:bash-guard` by
/// `bash-guard` too.
fn plugin_matches(record: &Record, wanted: &str) -> bool {
    record.plugin == wanted
        || record
            .plugin
            .split_once(':')
            .is_some_and(|(_, n)| n == wanted)
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// A session id, or a unique start of one.
    pub session: Option<String>,
    pub plugin: Option<String>,
    pub event: Option<String>,
    pub decision: Option<DecisionArg>,
    pub failed: bool,
    /// Seconds since the epoch: records before are left out.
    pub since: Option<f64>,
    pub host: Option<String>,
}

impl Filter {
    pub fn keeps(&self, record: &Record) -> bool {
        let session_ok = self.session.as_deref().is_none_or(|wanted| {
            record
                .session
                .as_deref()
                .is_some_and(|s| s.starts_with(wanted))
        });
        let event_ok =
            (self.event.as_deref()).is_none_or(|wanted| record.event.eq_ignore_ascii_case(wanted));
        let host_ok = self
            .host
            .as_deref()
            .is_none_or(|wanted| record.host.as_deref() == Some(canonical_host(wanted)));
        let since_ok = self
            .since
            .is_none_or(|since| record.unix_time().is_some_and(|t| t >= since));
        let decision_ok = self
            .decision
            .is_none_or(|wanted| shown_decision(record) == Some(wanted.as_str()));
        session_ok
            && event_ok
            && host_ok
            && since_ok
            && decision_ok
            && (self.plugin.as_deref()).is_none_or(|p| plugin_matches(record, p))
            && (!self.failed || record.failed())
    }
}

/// `claude-code` and `claude` are one host; so are `amplifier` and its spellings.
fn canonical_host(name: &str) -> &str {
    match name.to_ascii_lowercase().as_str() {
        "claude" | "claude-code" | "claude_code" | "claudecode" => "claude",
        "amplifier" => "amplifier",
        _ => name,
    }
}

/// Whether a record is a built-in's.
pub fn is_builtin(record: &Record) -> bool {
    record.kind == Kind::Builtin
}

/// Why `--since` could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinceError(pub String);

impl std::fmt::Display for SinceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--since {:?} is neither an age (30s, 15m, 1h, 2d, 1w) nor an RFC 3339 time \
             (2026-11-25T19:00:00Z)",
            self.0
        )
    }
}

impl std::error::Error for SinceError {}

/// `--since`: an age before `now` (`30s`, `15m`, `1h`, `2d`, `1w`) or an RFC 3339 time (an
/// offset such as `+02:00` is honoured); seconds since the epoch.
pub fn parse_since(text: &str, now: f64) -> Result<f64, SinceError> {
    let text = text.trim();
    let error = || SinceError(text.to_string());
    if let Some(unit) = text.chars().last().filter(char::is_ascii_alphabetic)
        && text.len() > 1
        && text[..text.len() - 1].chars().all(|c| c.is_ascii_digit())
    {
        let n: f64 = text[..text.len() - 1].parse().map_err(|_| error())?;
        let seconds = match unit {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86_400.0,
            'w' => 604_800.0,
            _ => return Err(error()),
        };
        return Ok(now - n * seconds);
    }
    let base = amplihack_state::time::parse_utc(text).ok_or_else(error)?;
    Ok((base - offset_seconds(text).ok_or_else(error)?) as f64)
}

/// The offset after the seconds (and any fraction): `Z` or nothing is 0, `+02:00` is 7200.
fn offset_seconds(text: &str) -> Option<i64> {
    let rest = text.get(19..)?;
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    match rest {
        "" | "Z" | "z" => Some(0),
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest.get(1..)?.split_once(':')?;
            let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
            (h < 24 && m < 60).then_some(sign * (h * 3600 + m * 60))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(event: &str, plugin: &str, decision: Option<&str>) -> Record {
        Record {
            time: "1000.5".into(),
            host: Some("claude".into()),
            session: Some("abc-123".into()),
            event: event.into(),
            plugin: plugin.into(),
            decision: decision.map(str::to_string),
            exit: Some(0),
            duration_ms: Some(3.0),
            ..Record::default()
        }
    }

    #[test]
    fn filters() {
        let deny = record("PreToolUse", "builtin:bash-guard", Some("deny"));
        let block = record("Stop", "builtin:lock-mode", Some("deny"));
        let failed = Record {
            exit: Some(1),
            ..record("PostToolUse", "user:fmt", None)
        };
        let amplifier = Record {
            host: Some("amplifier".into()),
            ..record("PreToolUse", "project:lint", Some("ask"))
        };
        let all = [&deny, &block, &failed, &amplifier];
        let cases: Vec<(Filter, Vec<&Record>)> = vec![
            (Filter::default(), all.to_vec()),
            (
                Filter {
                    decision: Some(DecisionArg::Deny),
                    ..Filter::default()
                },
                vec![&deny],
            ),
            (
                Filter {
                    decision: Some(DecisionArg::Block),
                    ..Filter::default()
                },
                vec![&block],
            ),
            (
                Filter {
                    decision: Some(DecisionArg::Ask),
                    ..Filter::default()
                },
                vec![&amplifier],
            ),
            (
                Filter {
                    failed: true,
                    ..Filter::default()
                },
                vec![&failed],
            ),
            (
                Filter {
                    plugin: Some("bash-guard".into()),
                    ..Filter::default()
                },
                vec![&deny],
            ),
            (
                Filter {
                    plugin: Some("user:fmt".into()),
                    ..Filter::default()
                },
                vec![&failed],
            ),
            (
                Filter {
                    event: Some("stop".into()),
                    ..Filter::default()
                },
                vec![&block],
            ),
            (
                Filter {
                    host: Some("amplifier".into()),
                    ..Filter::default()
                },
                vec![&amplifier],
            ),
            (
                Filter {
                    host: Some("claude-code".into()),
                    ..Filter::default()
                },
                vec![&deny, &block, &failed],
            ),
            (
                Filter {
                    session: Some("abc".into()),
                    ..Filter::default()
                },
                all.to_vec(),
            ),
            (
                Filter {
                    session: Some("xyz".into()),
                    ..Filter::default()
                },
                vec![],
            ),
            (
                Filter {
                    since: Some(1000.6),
                    ..Filter::default()
                },
                vec![],
            ),
            (
                Filter {
                    since: Some(1000.0),
                    ..Filter::default()
                },
                all.to_vec(),
            ),
        ];
        for (filter, want) in cases {
            let got: Vec<&Record> = all.iter().copied().filter(|r| filter.keeps(r)).collect();
            assert_eq!(got, want, "{filter:?}");
        }
    }

    #[test]
    fn since() {
        let now = 1_800_000_000.0;
        let cases: &[(&str, Option<f64>)] = &[
            ("30s", Some(now - 30.0)),
            ("15m", Some(now - 900.0)),
            ("1h", Some(now - 3600.0)),
            ("2d", Some(now - 172_800.0)),
            ("1w", Some(now - 604_800.0)),
            ("2026-11-25T19:00:00Z", Some(1_795_633_200.0)),
            ("2026-11-25T19:00:00.250Z", Some(1_795_633_200.0)),
            ("2026-11-25T21:00:00+02:00", Some(1_795_633_200.0)),
            ("2026-11-25T17:30:00-01:30", Some(1_795_633_200.0)),
            ("2026-11-25T19:00:00", Some(1_795_633_200.0)),
            ("1y", None),
            ("h", None),
            ("yesterday", None),
            ("2026-11-25T19:00:00+2", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_since(text, now).ok(), *want, "{text}");
        }
        assert!(
            parse_since("soon", now)
                .unwrap_err()
                .to_string()
                .contains("RFC 3339")
        );
    }
}
