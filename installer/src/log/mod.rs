//! `amplihack log`: the hook runs and built-in decisions recorded in the audit log
//! ([`amplihack_state::audit`]), newest last; `--stats` for what they cost; `--follow` to watch.
//!
//! [`filter`] picks the records, [`render`] writes them for a person, [`stats`] sums them up,
//! [`follow`] reads what is appended.

pub mod filter;
pub mod follow;
pub mod recent;
pub mod render;
pub mod stats;

use std::io::Write;
use std::time::Duration;

use amplihack_state::StateDir;
use amplihack_state::audit::{self, Record};

use crate::commands::CommandError;
use filter::{DecisionArg, Filter};
use render::Style;

/// What `amplihack log` was asked: its flags, and the global `--json`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LogArgs {
    /// Only this session (an id, or the start of one)
    #[arg(long)]
    pub session: Option<String>,
    /// Only this plugin (`fmt`, `user:fmt`) or built-in (`bash-guard`)
    #[arg(long)]
    pub plugin: Option<String>,
    /// Only this event (PreToolUse, Stop, ...)
    #[arg(long)]
    pub event: Option<String>,
    /// Only this decision
    #[arg(long, value_enum)]
    pub decision: Option<DecisionArg>,
    /// Only handler runs that failed (an exit other than 0 and 2, a timeout, no start)
    #[arg(long)]
    pub failed: bool,
    /// Only what happened since: an age (30m, 1h, 2d, 1w) or an RFC 3339 time
    #[arg(long, value_name = "AGE|TIME")]
    pub since: Option<String>,
    /// Only calls from this host (`all`: every host, the default)
    #[arg(long, value_enum)]
    pub host: Option<crate::hosts::HostChoice>,
    /// How many of the newest lines (0: all)
    #[arg(long, short = 'n', default_value_t = 50)]
    pub lines: usize,
    /// Per plugin and handler: runs, p50/p95/max duration, failures, timeouts, denials
    #[arg(long, conflicts_with = "follow")]
    pub stats: bool,
    /// Keep watching: print each new line as it is written (Ctrl-C to stop)
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// The global `--json`: JSON Lines.
    #[arg(skip)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<LogCommand>,
}

/// `amplihack log <command>`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum LogCommand {
    /// Send the audit records not sent yet to an OpenTelemetry receiver (see `install --otel`)
    Export(crate::otel::ExportArgs),
}

/// How often `--follow` looks at the file.
const FOLLOW_EVERY: Duration = Duration::from_millis(250);

/// The most read of one file: its newest lines past this (a retention set very high).
const READ_CAP: u64 = 256 * 1024 * 1024;

/// Every record of the log's files, oldest first, and how many lines could not be read.
/// Regular files only (a FIFO in its place would hang the reader), each read from its last
/// [`READ_CAP`] bytes at most.
pub fn read_all(state: &StateDir) -> (Vec<Record>, usize) {
    let mut records = Vec::new();
    let mut bad = 0;
    for file in audit::files_oldest_first(state) {
        if let Some(text) = read_tail(&file) {
            let (mut some, unreadable) = audit::parse(&text);
            records.append(&mut some);
            bad += unreadable;
        }
    }
    (records, bad)
}

fn read_tail(path: &std::path::Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut file, len) = amplihack_state::bounded::open_regular(path).ok()?;
    let skip = len.saturating_sub(READ_CAP);
    if skip > 0 {
        file.seek(SeekFrom::Start(skip)).ok()?;
    }
    let mut bytes = Vec::new();
    file.take(READ_CAP).read_to_end(&mut bytes).ok()?;
    if skip > 0 {
        // Started mid-line: from the next whole one.
        let start = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..start);
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `amplihack doctor`'s note on the last day's failed hook runs, if any.
pub fn doctor_note() -> Option<recent::Trouble> {
    let state = StateDir::from_env()?;
    let now = amplihack_state::time::now_unix().as_secs_f64();
    recent::trouble(&read_all(&state).0, now)
}

/// `amplihack doctor`'s note on plugin handlers the circuit breaker parked
/// ([`amplihack_state::breaker`]): one line each, and `parked_handlers` in JSON.
pub fn parked_note(outcome: &mut crate::commands::Outcome) {
    let Some(state) = StateDir::from_env() else {
        return;
    };
    let parked = amplihack_state::breaker::all_parked(&state);
    if parked.is_empty() {
        return;
    }
    for (session, entry) in &parked {
        outcome.text.push_str(&format!(
            "note: session {session}: {}\n",
            amplihack_engine::forward::parked_message(entry)
        ));
    }
    outcome.json["parked_handlers"] = serde_json::json!(
        parked
            .iter()
            .map(|(session, e)| serde_json::json!({
                "session": session,
                "plugin": e.plugin,
                "command": e.command,
                "fails": e.fails,
            }))
            .collect::<Vec<_>>()
    );
}

fn filter_of(args: &LogArgs, now: f64) -> Result<Filter, CommandError> {
    let since = match &args.since {
        Some(text) => Some(filter::parse_since(text, now)?),
        None => None,
    };
    Ok(Filter {
        session: args.session.clone(),
        plugin: args.plugin.clone(),
        event: args.event.clone(),
        decision: args.decision,
        failed: args.failed,
        since,
        // The log records a host by its `--host` name.
        host: args
            .host
            .and_then(crate::hosts::HostChoice::host)
            .map(|h| h.name().to_string()),
    })
}

/// The whole output of a `log` or `log --stats` that does not follow; `now` in seconds since the
/// epoch.
pub fn report(
    args: &LogArgs,
    state: &StateDir,
    now: f64,
    style: Style,
) -> Result<String, CommandError> {
    let filter = filter_of(args, now)?;
    let (records, bad) = read_all(state);
    let kept: Vec<Record> = records.into_iter().filter(|r| filter.keeps(r)).collect();
    let mut out = String::new();
    if args.stats {
        let computed = stats::compute(&kept);
        if args.json {
            out = format!("{}\n", stats::json(&computed, filter.since));
        } else {
            let window = match filter.since {
                Some(since) => format!("since {}", amplihack_state::time::utc(since as i64)),
                None => "in the whole log".to_string(),
            };
            out = stats::text(&computed, &window, style);
        }
    } else {
        let newest = newest(&kept, args.lines);
        if args.json {
            for record in newest {
                out.push_str(&serde_json::to_string(record).unwrap_or_default());
                out.push('\n');
            }
        } else {
            out = render::table(newest, style);
        }
    }
    if bad > 0 && !args.json {
        out.push_str(&format!(
            "({bad} unreadable line(s) in {} skipped)\n",
            audit::path(state).display()
        ));
    }
    Ok(out)
}

fn newest(records: &[Record], lines: usize) -> &[Record] {
    if lines == 0 {
        records
    } else {
        &records[records.len().saturating_sub(lines)..]
    }
}

/// `amplihack log` from the command line: prints, and with `--follow` keeps printing until
/// stdout goes away (or the user interrupts). Returns the exit code.
pub fn main(args: &LogArgs) -> Result<i32, CommandError> {
    if let Some(LogCommand::Export(export)) = &args.command {
        return crate::otel::main(export);
    }
    let state = StateDir::from_env().ok_or_else(|| {
        CommandError::refused(
            "no state directory: neither XDG_STATE_HOME nor HOME is set; set HOME".to_string(),
        )
    })?;
    let style = Style {
        colour: !args.json
            && std::io::IsTerminal::is_terminal(&std::io::stdout())
            && std::env::var_os(amplihack_env::NO_COLOR).is_none_or(|v| v.is_empty()),
    };
    let now = amplihack_state::time::now_unix().as_secs_f64();
    if args.follow && args.stats {
        return Err(CommandError::usage(
            "--follow and --stats do not go together: --stats sums a window; drop one",
        ));
    }
    let mut out = std::io::stdout().lock();
    let filter = filter_of(args, now)?;
    let follower = args
        .follow
        .then(|| follow::Follower::from_end(&audit::path(&state)));
    let first = report(args, &state, now, style)?;
    if write!(out, "{first}").and_then(|()| out.flush()).is_err() {
        return Ok(0);
    }
    let Some(mut follower) = follower else {
        return Ok(0);
    };
    let (records, _) = read_all(&state);
    let shown: Vec<Record> = records.into_iter().filter(|r| filter.keeps(r)).collect();
    let widths = render::Widths::of(newest(&shown, args.lines));
    if shown.is_empty() && !args.json {
        // Nothing yet: the header, so the lines to come are labelled.
        if write!(out, "{}", render::header(&widths, style))
            .and_then(|()| out.flush())
            .is_err()
        {
            return Ok(0);
        }
    }
    loop {
        std::thread::sleep(FOLLOW_EVERY);
        for record in follower.poll().iter().filter(|r| filter.keeps(r)) {
            let line = if args.json {
                format!("{}\n", serde_json::to_string(record).unwrap_or_default())
            } else {
                render::line(record, &widths, style)
            };
            if out
                .write_all(line.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use amplihack_state::audit::{Kind, Policy};

    /// 2026-11-25T19:00:00Z.
    const NOW: f64 = 1_795_633_200.0;

    fn run(ago: f64, host: &str, event: &str, plugin: &str) -> Record {
        Record {
            time: format!("{:.3}", NOW - ago),
            host: Some(host.into()),
            session: Some("0b9e2f41-77aa-4c1e-9d0e-5e3c6a1f2b7d".into()),
            event: event.into(),
            plugin: plugin.into(),
            command: Some(format!("{}/run.sh", plugin.replace(':', "/"))),
            priority: Some(0),
            exit: Some(0),
            duration_ms: Some(12.0),
            ..Record::default()
        }
    }

    /// A day of an operator's log: old lines (no host), plugins, failures, built-ins' denials.
    fn world() -> (tempfile::TempDir, StateDir) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let mut records = vec![
            Record {
                host: None,
                ..run(3.0 * 86_400.0, "claude", "PostToolUse", "user:fmt")
            },
            Record {
                overhead_ms: Some(1.8),
                duration_ms: Some(4.2),
                ..run(7200.0, "claude", "PreToolUse", "user:fmt")
            },
            Record {
                exit: Some(1),
                duration_ms: Some(840.5),
                stderr: Some("fmt: config file .fmt.toml not found".into()),
                ..run(3600.0, "claude", "PostToolUse", "user:fmt")
            },
            Record {
                decision: Some("deny".into()),
                reason: Some("no deploys on Friday".into()),
                overhead_ms: Some(2.4),
                ..run(1800.0, "amplifier", "PreToolUse", "project:release-gate")
            },
            Record {
                exit: None,
                timed_out: true,
                duration_ms: Some(30_000.0),
                ..run(900.0, "claude", "Stop", "user:slow-tests")
            },
            Record {
                kind: Kind::Builtin,
                command: None,
                priority: None,
                exit: None,
                duration_ms: Some(0.1),
                decision: Some("deny".into()),
                reason: Some("amplihack blocked `rm` of `~`: it would recursively delete your home directory".into()),
                ..run(600.0, "claude", "PreToolUse", "builtin:bash-guard")
            },
            Record {
                kind: Kind::Builtin,
                command: None,
                priority: None,
                exit: None,
                duration_ms: Some(0.3),
                decision: Some("deny".into()),
                reason: Some("Lock mode is on: keep working on the task".into()),
                session: Some("77f0c1aa-0000".into()),
                ..run(60.0, "amplifier", "Stop", "builtin:lock-mode")
            },
            Record {
                decision: Some("ask".into()),
                reason: Some("this touches production".into()),
                duration_ms: Some(35.0),
                ..run(30.0, "claude", "PreToolUse", "project:release-gate")
            },
            Record {
                detached: true,
                exit: None,
                duration_ms: None,
                ..run(10.0, "claude", "PostToolUse", "user:notify")
            },
        ];
        for (i, ms) in [3.0, 5.0, 7.0, 9.0, 150.0].iter().enumerate() {
            records.push(Record {
                duration_ms: Some(*ms),
                ..run(5.0 - i as f64, "claude", "PreToolUse", "user:fmt")
            });
        }
        // Written in two files, as after a rotation.
        let policy = Policy::default();
        audit::append(&state, &records[..4], policy).unwrap();
        std::fs::rename(audit::path(&state), audit::rotated(&state, 1)).unwrap();
        audit::append(&state, &records[4..], policy).unwrap();
        (dir, state)
    }

    fn show(state: &StateDir, args: &LogArgs) -> String {
        report(args, state, NOW, Style::default())
            .unwrap()
            .replace(&state.path().display().to_string(), "[STATE]")
    }

    fn args() -> LogArgs {
        LogArgs {
            lines: 50,
            ..LogArgs::default()
        }
    }

    #[test]
    fn the_log_for_a_person() {
        let (_dir, state) = world();
        insta::assert_snapshot!("log_all", show(&state, &args()));
        insta::assert_snapshot!(
            "log_stats_last_day",
            show(
                &state,
                &LogArgs {
                    stats: true,
                    since: Some("1d".into()),
                    ..args()
                }
            )
        );
    }

    #[test]
    fn filters_pick_the_records() {
        let (_dir, state) = world();
        type Case = (fn(&mut LogArgs), &'static [&'static str]);
        let cases: &[Case] = &[
            (
                |a| a.decision = Some(DecisionArg::Deny),
                &["project:release-gate", "builtin:bash-guard"],
            ),
            (
                |a| a.decision = Some(DecisionArg::Block),
                &["builtin:lock-mode"],
            ),
            (
                |a| a.decision = Some(DecisionArg::Ask),
                &["project:release-gate"],
            ),
            (|a| a.failed = true, &["user:fmt", "user:slow-tests"]),
            (
                |a| {
                    a.host = Some(crate::hosts::HostChoice::One(
                        amplihack_protocol::Host::Amplifier,
                    ))
                },
                &["project:release-gate", "builtin:lock-mode"],
            ),
            (|a| a.session = Some("77f0".into()), &["builtin:lock-mode"]),
            (
                |a| {
                    a.since = Some("1m".into());
                    a.plugin = Some("fmt".into());
                },
                &["user:fmt"; 5],
            ),
            (|a| a.lines = 2, &["user:fmt", "user:fmt"]),
            (
                |a| a.event = Some("stop".into()),
                &["user:slow-tests", "builtin:lock-mode"],
            ),
            (
                |a| a.since = Some("2026-11-25T18:50:00Z".into()),
                &[
                    "builtin:bash-guard",
                    "builtin:lock-mode",
                    "project:release-gate",
                    "user:notify",
                    "user:fmt",
                    "user:fmt",
                    "user:fmt",
                    "user:fmt",
                    "user:fmt",
                ],
            ),
        ];
        for (set, want) in cases {
            let mut args = LogArgs {
                json: true,
                ..args()
            };
            set(&mut args);
            let out = show(&state, &args);
            let got: Vec<String> = out
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    v["plugin"].as_str().unwrap().to_string()
                })
                .collect();
            assert_eq!(got, *want, "{args:?}");
        }
    }

    #[test]
    fn a_fifo_in_place_of_the_file_is_skipped_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let made = std::process::Command::new("mkfifo")
            .arg(audit::path(&state))
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            return; // no mkfifo here
        }
        assert_eq!(read_all(&state), (Vec::new(), 0));
        let mut follower = follow::Follower::from_end(&audit::path(&state));
        assert!(follower.poll().is_empty());
    }

    #[test]
    fn stats_as_json() {
        let (_dir, state) = world();
        let out = show(
            &state,
            &LogArgs {
                stats: true,
                json: true,
                plugin: Some("fmt".into()),
                ..args()
            },
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let row = &v["rows"][0];
        assert_eq!(row["plugin"], "user:fmt");
        assert_eq!(row["handler"], "user/fmt/run.sh");
        assert_eq!(row["runs"], 8);
        assert_eq!(row["failures"], 1);
        assert_eq!(row["max_ms"], 840.5);
        assert_eq!(v["overhead"]["calls"], 1);
    }

    #[test]
    fn unreadable_lines_are_counted_and_a_bad_since_is_named() {
        let (_dir, state) = world();
        std::fs::write(audit::path(&state), "{not json\n").unwrap();
        insta::assert_snapshot!("log_unreadable", show(&state, &args()));
        let error = report(
            &LogArgs {
                since: Some("last tuesday".into()),
                ..args()
            },
            &state,
            NOW,
            Style::default(),
        )
        .err()
        .unwrap();
        let message = error.to_string();
        assert!(message.contains("--since \"last tuesday\""), "{message}");
    }
}
