//! The audit log `<state>/audit.jsonl`: one JSON line per hook decision worth keeping, appended
//! whole so concurrent sessions never interleave, and read back by `amplihack log`.
//!
//! Two kinds of line ([`Kind`]), each a [`Record`]:
//! * a forwarded handler run (time, host, session, event, plugin, command, exit, duration,
//!   decision and its reason, the first line of stderr when it failed, whether it timed out, ran
//!   detached or had its output cut);
//! * a built-in's decision (a deny, an ask, a block; never an allow: an allowed call costs no
//!   write).
//!
//! The first handler line of a call also carries `overhead_ms`: amplihack's own time in that
//! call's forwarding (finding the plugins, trust, spawning, merging), apart from the handlers.
//!
//! Tool inputs are never recorded. A reason and a stderr line are cut to their first line of at
//! most [`TEXT_CAP`] characters.
//!
//! Bounded ([`Policy`]): past `AMPLIHACK_AUDIT_MAX_MB` (default 10) MiB the file becomes
//! `audit.jsonl.1` (the older ones move up to `.2`, …) and only `AMPLIHACK_AUDIT_KEEP` (default 3)
//! rotated files are kept. The files are private (0600, in a 0700 directory).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StateDir;
use crate::files::{self, StateError};

/// The retention settings, read by the hook binary on each append.
pub const MAX_MB_VAR: &str = amplihack_env::AMPLIHACK_AUDIT_MAX_MB;
pub const KEEP_VAR: &str = amplihack_env::AMPLIHACK_AUDIT_KEEP;
const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
const DEFAULT_KEEP: u32 = 3;
/// The most rotated files kept, whatever the setting says.
const KEEP_LIMIT: u32 = 99;
/// The longest reason or stderr line kept, in characters.
pub const TEXT_CAP: usize = 200;

/// What a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A forwarded handler run (lines without a `kind`, as older amplihack wrote them, are these).
    #[default]
    Handler,
    /// A built-in's deny, ask or block.
    Builtin,
}

/// One line of the audit log. Every field is optional on reading: older lines lack `host`,
/// `kind`, `reason` and `stderr`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Record {
    /// Seconds since the epoch with milliseconds, as text: `1763819420.123`.
    pub time: String,
    #[serde(skip_serializing_if = "is_handler")]
    pub kind: Kind,
    /// `claude` or `amplifier`.
    pub host: Option<String>,
    pub session: Option<String>,
    pub event: String,
    /// `level:name` for a plugin (`user:fmt`), `builtin:<name>` for a built-in.
    pub plugin: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    pub exit: Option<i32>,
    pub duration_ms: Option<f64>,
    pub decision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    pub timed_out: bool,
    pub output_cut: bool,
    #[serde(rename = "async")]
    pub detached: bool,
    /// On a call's first handler line: amplihack's own milliseconds around the handlers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_ms: Option<f64>,
    /// What the call was about, where the host sent it (each cut at [`FIELD_CAP`] characters).
    #[serde(flatten)]
    pub about: About,
}

/// The call's context a fleet's pipeline keys on: the tool, the directory, the (sub)agent, the
/// tool call's id, and the W3C trace the host propagated (`TRACEPARENT`). Each only when known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct About {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// 32 lowercase hex digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// 16 lowercase hex digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
}

/// The longest `tool_name`, `cwd`, `agent_id` or `tool_use_id` kept, in characters: a host's
/// value past it is cut (a line stays bounded whatever the host sends).
pub const FIELD_CAP: usize = 1024;

/// `text` cut at [`FIELD_CAP`] characters; an empty text is none.
pub fn capped(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.chars().take(FIELD_CAP).collect())
}

/// The trace and span ids of a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`); `None` for
/// anything else, and for the all-zero ids the format calls invalid. Version `ff` is invalid;
/// a later version may carry more fields after the flags.
pub fn traceparent(value: &str) -> Option<(String, String)> {
    let mut parts = value.trim().split('-');
    let (version, trace, span, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let zero = |s: &str| s.bytes().all(|b| b == b'0');
    let valid = hex(version, 2)
        && version != "ff"
        && hex(trace, 32)
        && !zero(trace)
        && hex(span, 16)
        && !zero(span)
        && hex(flags, 2)
        && (version != "00" || parts.next().is_none());
    valid.then(|| (trace.to_string(), span.to_string()))
}

fn is_handler(kind: &Kind) -> bool {
    *kind == Kind::Handler
}

impl Record {
    /// Seconds since the epoch (fractional); `None` for a time that is not a number.
    pub fn unix_time(&self) -> Option<f64> {
        self.time.parse::<f64>().ok().filter(|t| t.is_finite())
    }

    /// It failed: a non-zero exit (2 is a deliberate block, not a failure), a timeout, or a
    /// process that never started.
    pub fn failed(&self) -> bool {
        let ran = self.kind == Kind::Handler && !self.detached && self.duration_ms.is_some();
        ran && (self.timed_out || self.exit.is_none_or(|code| code != 0 && code != 2))
    }
}

/// `text`'s first non-empty line, cut at [`TEXT_CAP`] characters (with `…` when cut).
pub fn first_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut kept: String = line.chars().take(TEXT_CAP).collect();
    if line.chars().nth(TEXT_CAP).is_some() {
        kept.push('…');
    }
    Some(kept)
}

/// Now, as [`Record::time`] writes it.
pub fn now_text() -> String {
    let now = crate::time::now_unix();
    format!("{}.{:03}", now.as_secs(), now.subsec_millis())
}

/// How big the file grows and how many rotated files are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub max_bytes: u64,
    pub keep: u32,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_bytes: DEFAULT_MAX_BYTES,
            keep: DEFAULT_KEEP,
        }
    }
}

impl Policy {
    /// From [`MAX_MB_VAR`] and [`KEEP_VAR`]; a value that is not a number is ignored (the hook
    /// binary fails open), a size of 0 MiB counts as 1.
    pub fn from_var(var: &dyn Fn(&str) -> Option<String>) -> Policy {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let default = Policy::default();
        Policy {
            max_bytes: number(MAX_MB_VAR)
                .map(|mb| mb.clamp(1, 1024 * 1024) * 1024 * 1024)
                .unwrap_or(default.max_bytes),
            keep: number(KEEP_VAR)
                .map(|n| n.min(u64::from(KEEP_LIMIT)) as u32)
                .unwrap_or(default.keep),
        }
    }
}

pub fn path(state: &StateDir) -> PathBuf {
    state.file("audit.jsonl")
}

/// The `n`th rotated file (`audit.jsonl.<n>`, 1 the newest).
pub fn rotated(state: &StateDir, n: u32) -> PathBuf {
    generation(&path(state), n)
}

fn generation(file: &Path, n: u32) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Appends `records` in one write, rotating first when the file is past the policy's size.
pub fn append(state: &StateDir, records: &[Record], policy: Policy) -> Result<(), StateError> {
    if records.is_empty() {
        return Ok(());
    }
    let file = path(state);
    rotate(&file, policy);
    let mut text = String::new();
    for record in records {
        if !text.is_empty() {
            text.push('\n');
        }
        // A record of strings, numbers and booleans always serialises.
        text.push_str(&serde_json::to_string(record).unwrap_or_default());
    }
    files::append_line(&file, &text)
}

/// Past `max_bytes`: `.keep` is dropped, `.n` becomes `.n+1`, the file becomes `.1`. Two writers
/// rotating at once can lose one generation; neither loses its own line (each appends to the new
/// file). One `stat` when there is nothing to do.
fn rotate(file: &Path, policy: Policy) {
    if !std::fs::metadata(file).is_ok_and(|m| m.len() >= policy.max_bytes) {
        return;
    }
    if policy.keep == 0 {
        let _ = std::fs::remove_file(file);
        return;
    }
    let _ = std::fs::remove_file(generation(file, policy.keep));
    for n in (1..policy.keep).rev() {
        let _ = std::fs::rename(generation(file, n), generation(file, n + 1));
    }
    let _ = std::fs::rename(file, generation(file, 1));
    // Settings lowered since: older generations past `keep` go too.
    for n in policy.keep + 1..=KEEP_LIMIT {
        let old = generation(file, n);
        if std::fs::remove_file(&old).is_err() && !old.exists() {
            break;
        }
    }
}

/// The files that hold the log, oldest first: the rotated ones, then the current one (those that
/// exist).
pub fn files_oldest_first(state: &StateDir) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = (1..=KEEP_LIMIT)
        .map(|n| rotated(state, n))
        .take_while(|p| p.exists())
        .collect();
    out.reverse();
    let current = path(state);
    if current.exists() {
        out.push(current);
    }
    out
}

/// The records of one file's text; lines that are not records (a line cut by a crash, a damaged
/// file) are counted, not fatal.
pub fn parse(text: &str) -> (Vec<Record>, usize) {
    let mut records = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Record>(line) {
            Ok(record) => records.push(record),
            Err(_) => bad += 1,
        }
    }
    (records, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(event: &str) -> Record {
        Record {
            time: "1763819420.123".into(),
            event: event.into(),
            plugin: "user:fmt".into(),
            ..Record::default()
        }
    }

    #[test]
    fn rotates_at_the_limit_and_keeps_n() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let policy = Policy {
            max_bytes: 300,
            keep: 2,
        };
        let one = serde_json::to_string(&record("Stop")).unwrap().len() as u64 + 1;
        // Fill past the limit several times over.
        for _ in 0..(300 / one + 1) * 4 {
            append(&state, &[record("Stop")], policy).unwrap();
        }
        assert!(std::fs::metadata(path(&state)).unwrap().len() < 300 + one);
        assert!(rotated(&state, 1).exists());
        assert!(rotated(&state, 2).exists());
        assert!(!rotated(&state, 3).exists(), "only 2 kept");
        assert_eq!(files_oldest_first(&state).len(), 3);
        for file in files_oldest_first(&state) {
            let mode = std::os::unix::fs::PermissionsExt::mode(
                &std::fs::metadata(&file).unwrap().permissions(),
            );
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
        // Lowering `keep` drops the generations past it at the next rotation.
        let fewer = Policy {
            max_bytes: 300,
            keep: 1,
        };
        for _ in 0..(300 / one + 1) {
            append(&state, &[record("Stop")], fewer).unwrap();
        }
        assert!(!rotated(&state, 2).exists());
        // keep 0: the file starts over.
        let none = Policy {
            max_bytes: 300,
            keep: 0,
        };
        for _ in 0..(300 / one + 1) {
            append(&state, &[record("Stop")], none).unwrap();
        }
        assert!(std::fs::metadata(path(&state)).unwrap().len() < 300 + one);
    }

    #[test]
    fn policy_from_env() {
        let cases: &[(&[(&str, &str)], Policy)] = &[
            (&[], Policy::default()),
            (
                &[(MAX_MB_VAR, "2"), (KEEP_VAR, "0")],
                Policy {
                    max_bytes: 2 * 1024 * 1024,
                    keep: 0,
                },
            ),
            (
                &[(MAX_MB_VAR, "lots"), (KEEP_VAR, "1000")],
                Policy {
                    max_bytes: DEFAULT_MAX_BYTES,
                    keep: KEEP_LIMIT,
                },
            ),
            (
                &[(MAX_MB_VAR, "0")],
                Policy {
                    max_bytes: 1024 * 1024,
                    keep: DEFAULT_KEEP,
                },
            ),
        ];
        for (env, want) in cases {
            let got = Policy::from_var(&|k| {
                env.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            });
            assert_eq!(got, *want, "{env:?}");
        }
    }

    #[test]
    fn reads_old_and_new_lines() {
        let old = r#"{"time":"1763819420.123","session":"s","event":"PreToolUse","plugin":"user:fmt","command":"fmt.sh","priority":0,"exit":1,"duration_ms":12.5,"decision":null,"timed_out":false,"output_cut":false,"async":false}"#;
        let new = serde_json::to_string(&Record {
            kind: Kind::Builtin,
            host: Some("claude".into()),
            decision: Some("deny".into()),
            reason: Some("no".into()),
            ..record("PreToolUse")
        })
        .unwrap();
        let (records, bad) = parse(&format!("{old}\n{new}\nnot json\n"));
        assert_eq!(bad, 1);
        assert_eq!(records[0].kind, Kind::Handler);
        assert_eq!(records[0].exit, Some(1));
        assert!(records[0].failed());
        assert_eq!(records[1].kind, Kind::Builtin);
        assert_eq!(records[1].host.as_deref(), Some("claude"));
        assert!(!new.contains("\"command\""), "{new}");
    }

    #[test]
    fn traceparents() {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        let span = "00f067aa0ba902b7";
        let cases: &[(String, bool)] = &[
            (format!("00-{trace}-{span}-01"), true),
            (format!(" 00-{trace}-{span}-00 "), true),
            (format!("01-{trace}-{span}-01-more"), true),
            (format!("00-{trace}-{span}-01-more"), false),
            (format!("ff-{trace}-{span}-01"), false),
            (format!("00-{}-{span}-01", "0".repeat(32)), false),
            (format!("00-{trace}-{}-01", "0".repeat(16)), false),
            (format!("00-{}-{span}-01", trace.to_uppercase()), false),
            (format!("00-{trace}-{span}"), false),
            ("".to_string(), false),
        ];
        for (value, ok) in cases {
            let got = traceparent(value);
            assert_eq!(got.is_some(), *ok, "{value}");
            if *ok {
                assert_eq!(got, Some((trace.to_string(), span.to_string())));
            }
        }
    }

    #[test]
    fn the_calls_context_is_written_only_when_known() {
        let bare = serde_json::to_string(&record("Stop")).unwrap();
        assert!(
            !bare.contains("tool_name") && !bare.contains("trace_id"),
            "{bare}"
        );
        let with = Record {
            about: About {
                tool_name: Some("Bash".into()),
                cwd: Some("/p".into()),
                agent_id: Some("a1".into()),
                tool_use_id: Some("toolu_1".into()),
                trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
                span_id: Some("00f067aa0ba902b7".into()),
            },
            ..record("PreToolUse")
        };
        let line = serde_json::to_string(&with).unwrap();
        assert!(line.contains(r#""tool_name":"Bash","cwd":"/p""#), "{line}");
        assert_eq!(parse(&line).0, vec![with]);
        assert_eq!(
            capped(&"x".repeat(FIELD_CAP * 2)).map(|s| s.len()),
            Some(FIELD_CAP)
        );
        assert_eq!(capped(""), None);
    }

    #[test]
    fn first_lines_are_capped() {
        assert_eq!(first_line("\n  boom \nmore"), Some("boom".into()));
        assert_eq!(first_line(" \n"), None);
        let long = "x".repeat(TEXT_CAP + 5);
        let cut = first_line(&long).unwrap();
        assert_eq!(cut.chars().count(), TEXT_CAP + 1);
        assert!(cut.ends_with('…'));
    }
}
