//! The runtime behind `amplihack-hooks`: read one event, run the built-in, reply in the host's
//! dialect, and fail open.
//!
//! Exit codes, exactly:
//! * `0`: the event was handled, or amplihack itself failed (error, panic, deadline, oversized
//!   stdin). A failure prints one line on stderr, appends it to the failure log, and prints
//!   nothing on stdout, so the host carries on as if the hook were not there.
//! * `1`: invalid input (not JSON, not an object, a known event missing a field) or a usage
//!   error. Every host treats 1 as a non-blocking error. Under a host where a
//!   failing hook denies the tool (`--host copilot`), these exit 0 too, reported the same way.
//! * `2`: never used to report a failure. (Blocks are sent as JSON on exit 0, which every host
//!   honour and which carries the reason.)
//!
//! `lib.rs` is the run itself (arguments to reply, fail-open); beside it, [`args`] (the command
//! line), `stdin` (the bounded read, `--standby`'s wait), `watchdog` (the deadline timer and the
//! stop signals, with their `unsafe`), and [`pipeline`] (from the host's event to the reply,
//! normalisation first).

pub mod args;
pub mod builtin_audit;
pub mod builtins;
pub mod calling_host;
pub mod context;
pub mod failure_log;
mod late_session_start;
pub mod model_text;
pub mod pipeline;
mod stdin;
mod watchdog;

use std::ffi::OsString;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use amplihack_protocol::{Host, InvalidInput, Rendered};

use context::Context;

pub use amplihack_protocol::VERSION;
pub use stdin::MAX_STDIN;

pub use args::usage;
use args::{Command, Invocation, parse_args};
use stdin::{input_arrives, read_stdin};
use watchdog::{
    DEADLINE_FLAG, arm_watchdog, deadline, deadline_exceeded, on_cancel_signals, on_stop_signals,
};

static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);

pub(crate) enum Failure {
    Invalid(InvalidInput),
    Internal(String),
}

/// The whole program; returns the exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    if let [flag, spec] = args.as_slice()
        && flag == amplihack_engine::background::COLLECT_FLAG
    {
        // A background handler's collector (started by a forward, never by a host).
        on_cancel_signals();
        return amplihack_engine::background::collect(&spec.to_string_lossy());
    }
    if let [flag, spec] = args.as_slice()
        && flag == amplihack_engine::host_model::ASK_FLAG
    {
        // One `llm` hook's question for the host's model (started by a forward, never by a host).
        return amplihack_engine::host_model::ask_main(&spec.to_string_lossy());
    }
    if let [flag, state] = args.as_slice()
        && flag == builtins::turn_records::FLAG
    {
        // The records' writer (started by a Stop or SessionEnd hook, never by a host).
        return builtins::turn_records::writer_main(&state.to_string_lossy());
    }
    if let [flag, row, ms] = args.as_slice()
        && flag == DEADLINE_FLAG
    {
        return deadline_exceeded(&row.to_string_lossy(), &ms.to_string_lossy());
    }
    let mut invocation = match parse_args(&args) {
        Ok(Command::Help) => return write_stdout(&usage(), 0),
        Ok(Command::Version) => return write_stdout(&format!("amplihack-hooks {VERSION}\n"), 0),
        Ok(Command::Table) => return write_stdout(&args::table_json(), 0),
        Ok(Command::Retired) => {
            let _ = read_stdin();
            return 0;
        }
        Ok(Command::Run(invocation)) => invocation,
        Err(message) => {
            eprintln!("amplihack-hooks: {message}");
            return amplihack_protocol::hosts::problem_exit_code(args::named_host(&args));
        }
    };
    let named = invocation
        .host
        .unwrap_or_else(|| Host::detect(|name| std::env::var(name).ok()));
    match calling_host::calling_host(named, |name| std::env::var_os(name), Path::exists) {
        Some(host) if host != named => invocation.host = Some(host),
        Some(_) => {}
        None => {
            // Copilot runs this Claude Code registration and its own amplihack entry for the
            // same event: that one answers. Never twice.
            let _ = read_stdin();
            return 0;
        }
    }
    let name = invocation.subcommand.subcommand;
    panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        if let Ok(mut slot) = PANIC_MESSAGE.lock() {
            *slot = Some(format!("{payload}{location}"));
        }
    }));
    on_stop_signals();
    if invocation.standby && !input_arrives() {
        // A standby whose event never came: its starter closed stdin without writing.
        return 0;
    }
    let deadline = deadline(invocation.subcommand, invocation.registered_secs);
    let started = Instant::now();
    arm_watchdog(invocation.subcommand, deadline);

    let outcome = panic::catch_unwind(AssertUnwindSafe(|| handle(&invocation, started + deadline)));
    if watchdog::already_finished() {
        // The watchdog is already reporting and exiting; do not race it.
        loop {
            std::thread::park();
        }
    }
    let code = match outcome {
        Ok(Ok(rendered)) => {
            if let Some(text) = &rendered.stderr {
                eprintln!("{text}");
            }
            match &rendered.stdout {
                Some(text) => write_stdout(&format!("{text}\n"), rendered.exit_code),
                None => rendered.exit_code,
            }
        }
        Ok(Err(Failure::Invalid(problem))) => {
            report(name, "invalid input", &problem.to_string());
            amplihack_protocol::hosts::problem_exit_code(invocation.host)
        }
        Ok(Err(Failure::Internal(message))) => {
            report(name, "internal error, event let through", &message);
            0
        }
        Err(_) => {
            let message = PANIC_MESSAGE
                .lock()
                .ok()
                .and_then(|mut m| m.take())
                .unwrap_or_else(|| "panic".into());
            report(name, "panic, event let through", &message);
            0
        }
    };
    // The host has its answer: only now the records' writer, if one is due (its fork, and the
    // copies of pages it makes, after the reply).
    if let Err(e) = builtins::turn_records::start_due() {
        report(
            name,
            "records not written now (the next writer writes them)",
            &e.to_string(),
        );
    }
    code
}

fn handle(invocation: &Invocation, deadline: Instant) -> Result<Rendered, Failure> {
    let input = read_stdin()?;
    // Fault injection, so the fail-open paths are tested through the real binary.
    match std::env::var(amplihack_env::AMPLIHACK_HOOKS_FAULT).as_deref() {
        Ok("panic") => panic!("fault injected by AMPLIHACK_HOOKS_FAULT=panic"),
        Ok("error") => {
            return Err(Failure::Internal(
                "fault injected by AMPLIHACK_HOOKS_FAULT=error".into(),
            ));
        }
        _ => {}
    }
    let host = invocation
        .host
        .unwrap_or_else(|| Host::detect(|name| std::env::var(name).ok()));
    let var = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if host == Host::Amplifier
        && var(amplihack_env::AMPLIHACK_AMPLIFIER_MODULE_ACTIVE)
        && !var(amplihack_env::AMPLIHACK_VIA_MODULE)
    {
        // amplihack's native Amplifier module is mounted and handles this event; this is the
        // hook-shell bridge running amplihack's older registration. Step aside: never twice.
        return Ok(Rendered::default());
    }
    let (event, input) = pipeline::parse(host, input, invocation.subcommand.event.clone())
        .map_err(Failure::Invalid)?;
    if !event.name.is_known()
        && amplihack_protocol::hosts::dialect(host)
            .event_label(&event.name)
            .is_none()
    {
        // Forward-compatible: a newer host's event passes through untouched. A host's own
        // events (Codex's PreModelRequest) go on to the plugins that name them.
        return Ok(Rendered::default());
    }
    let ctx = Context::from_process(host);
    let started = late_session_start::run(&event, &ctx, deadline);
    let pipeline::Processed { event, mut outcome } =
        pipeline::process(invocation.subcommand, event, input, &ctx, deadline);
    if let Some(started) = started {
        outcome = late_session_start::before(started, outcome);
    }
    for problem in outcome
        .problems
        .iter()
        .chain(&amplihack_state::files::take_notes())
    {
        if amplihack_protocol::hosts::notes_on_stderr(host) {
            report(invocation.subcommand.subcommand, "note", problem);
        } else {
            log_only(invocation.subcommand.subcommand, "note", problem);
        }
    }
    Ok(pipeline::render(host, &event, &outcome.reply))
}

/// One line on stderr and one in the failure log.
pub(crate) fn report(subcommand: &str, kind: &str, message: &str) {
    // One line, and nothing in it (a plugin's stderr, a file name) acts on the terminal.
    let message = message.replace(['\n', '\r'], " ");
    let message = amplihack_protocol::printable::printable(&message);
    let line = format!("amplihack-hooks {subcommand}: {kind}: {message}");
    let logged = match failure_log::append(&line) {
        Ok(path) => format!(" [log: {}]", path.display()),
        Err(e) => format!(" [log unavailable: {e}]"),
    };
    // A closed stderr must not turn a fail-open exit into a panic.
    let _ = writeln!(std::io::stderr(), "{line}{logged}");
}

/// One line in the failure log only (a host that reads stderr as the reply).
fn log_only(subcommand: &str, kind: &str, message: &str) {
    let message = message.replace(['\n', '\r'], " ");
    let _ = failure_log::append(&format!("amplihack-hooks {subcommand}: {kind}: {message}"));
}

/// Writes all of stdout at once; a host that stopped reading is not an error of ours.
fn write_stdout(text: &str, code: i32) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    code
}
