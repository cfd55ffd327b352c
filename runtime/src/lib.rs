//! The runtime behind `amplihack-hooks`: read one event, run the built-in, reply in the host's
//! dialect, and fail open.
//!
//! Exit codes, exactly:
//! * `0`: the event was handled, or amplihack itself failed (error, panic, deadline, oversized
//!   stdin). A failure prints one line on stderr, appends it to the failure log, and prints
//!   nothing on stdout, so the host carries on as if the hook were not there.
//! * `1`: invalid input (not JSON, not an object, a known event missing a field) or a usage
//!   error. Both hosts treat 1 as a non-blocking error.
//! * `2`: never used to report a failure. (Blocks are sent as JSON on exit 0, which both hosts
//!   honour and which carries the reason.)

pub mod builtins;
pub mod context;
pub mod failure_log;
pub mod model_text;
pub mod pipeline;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use amplihack_engine::forward;
use amplihack_protocol::table::{self, HOOKS};
use amplihack_protocol::{Hook, HookEvent, Host, InvalidInput, Rendered};

use context::Context;

/// The most stdin we parse. Claude Code's largest payloads are Write and PostToolUse events that
/// carry file contents (tens of kilobytes is typical). Past this bound the event is drained and
/// skipped (fail open) instead of holding hundreds of megabytes in a process that runs on every
/// tool call.
pub const MAX_STDIN: usize = 16 * 1024 * 1024;

pub use amplihack_protocol::VERSION;

/// Set by whichever of the main thread and the watchdog finishes first; the other stays quiet.
static FINISHED: AtomicBool = AtomicBool::new(false);
static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);

enum Failure {
    Invalid(InvalidInput),
    Internal(String),
}

struct Invocation {
    subcommand: &'static Hook,
    host: Option<Host>,
    /// `--standby`: started ahead of its event (by amplihack's Amplifier module).
    standby: bool,
}

enum Command {
    Run(Invocation),
    /// A predecessor's subcommand that did nothing (`precommit-prefs`): drain stdin, answer
    /// nothing, exit 0.
    Retired,
    Help,
    Version,
    Table,
}

pub fn usage() -> String {
    let mut text = format!(
        "amplihack-hooks {VERSION}: the hook binary that Claude Code and Amplifier call on every event.\n\n\
         Usage: amplihack-hooks [--host claude|amplifier] <SUBCOMMAND> < event.json\n\n\
         Reads one JSON event on stdin and answers in the calling host's dialect.\n\
         Exit 0: handled (or amplihack failed and let the event through); 1: invalid input.\n\n\
         Subcommands:\n"
    );
    for hook in HOOKS {
        text.push_str(&format!("  {:<34} {}\n", hook.subcommand, hook.about));
    }
    text.push_str(
        "\nOptions:\n  --host claude|amplifier   the calling host (default: detected; Claude Code unless AMPLIFIER_* is set)\n  -h, --help                this text\n  -V, --version             the version\n  --table                   the hook table as JSON (subcommand, event, deadline, registered timeout)\n  --standby                 started ahead of the event: wait for it; the deadline counts from its arrival, and a stdin closed empty exits 0 quietly\n",
    );
    text
}

fn parse_args(args: &[OsString]) -> Result<Command, String> {
    let mut host = None;
    let mut subcommand = None;
    let mut standby = false;
    let mut iter = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = iter.next() {
        match arg.as_ref() {
            "-h" | "--help" | "help" => return Ok(Command::Help),
            "--standby" => standby = true,
            "-V" | "--version" => return Ok(Command::Version),
            "--table" => return Ok(Command::Table),
            "--host" => {
                let value = iter
                    .next()
                    .ok_or("--host needs a value: claude or amplifier")?;
                host =
                    Some(Host::from_flag(&value).ok_or_else(|| {
                        format!("unknown --host `{value}`: use claude or amplifier")
                    })?);
            }
            other if other.starts_with("--host=") => {
                let value = &other["--host=".len()..];
                host =
                    Some(Host::from_flag(value).ok_or_else(|| {
                        format!("unknown --host `{value}`: use claude or amplifier")
                    })?);
            }
            other if subcommand.is_none() && !other.starts_with('-') => {
                subcommand = Some(match (table::find(other), table::legacy(other)) {
                    (Some(hook), _) | (None, Some(Some(hook))) => hook,
                    (None, Some(None)) => return Ok(Command::Retired),
                    (None, None) => {
                        let hint = Hook::suggest(other)
                            .map(|s| format!("; did you mean `{s}`?"))
                            .unwrap_or_default();
                        return Err(format!(
                            "unknown subcommand `{other}`{hint} (run `amplihack-hooks --help` for the list)"
                        ));
                    }
                });
            }
            other => {
                return Err(format!(
                    "unexpected argument `{other}` (run `amplihack-hooks --help`)"
                ));
            }
        }
    }
    let subcommand =
        subcommand.ok_or("missing subcommand (run `amplihack-hooks --help` for the list)")?;
    Ok(Command::Run(Invocation {
        subcommand,
        host,
        standby,
    }))
}

/// The whole program; returns the exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    if let [flag, spec] = args.as_slice()
        && flag == amplihack_engine::background::COLLECT_FLAG
    {
        // A background handler's collector (started by a forward, never by a host).
        on_stop_signals();
        return amplihack_engine::background::collect(&spec.to_string_lossy());
    }
    if let [flag, spec] = args.as_slice()
        && flag == amplihack_engine::host_model::ASK_FLAG
    {
        // One `llm` hook's question for the host's model (started by a forward, never by a host).
        return amplihack_engine::host_model::ask_main(&spec.to_string_lossy());
    }
    if let [flag, row, ms] = args.as_slice()
        && flag == DEADLINE_FLAG
    {
        return deadline_exceeded(&row.to_string_lossy(), &ms.to_string_lossy());
    }
    let invocation = match parse_args(&args) {
        Ok(Command::Help) => return write_stdout(&usage(), 0),
        Ok(Command::Version) => return write_stdout(&format!("amplihack-hooks {VERSION}\n"), 0),
        Ok(Command::Table) => return write_stdout(&table_json(), 0),
        Ok(Command::Retired) => {
            let _ = read_stdin();
            return 0;
        }
        Ok(Command::Run(invocation)) => invocation,
        Err(message) => {
            eprintln!("amplihack-hooks: {message}");
            return 1;
        }
    };
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
    let deadline = deadline(invocation.subcommand);
    let started = Instant::now();
    arm_watchdog(invocation.subcommand, deadline);

    let outcome = panic::catch_unwind(AssertUnwindSafe(|| handle(&invocation, started + deadline)));
    if FINISHED.swap(true, Ordering::SeqCst) {
        // The watchdog is already reporting and exiting; do not race it.
        loop {
            std::thread::park();
        }
    }
    match outcome {
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
            1
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
    }
}

/// For `--standby`: waits until stdin has something to read; false when it was closed empty. The
/// process is started ahead of its event, so its start is off the event's path; the deadline
/// counts from the event's arrival. Anything but a pipe (a file, a terminal) counts as arrived.
fn input_arrives() -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: poll on one pollfd of our own, its length passed with it.
        let ready = unsafe { libc::poll(&mut fd, 1, -1) };
        if ready >= 0 {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true;
        }
    }
    let mut waiting: libc::c_int = 0;
    // SAFETY: FIONREAD stores the byte count into our own integer.
    let known = unsafe { libc::ioctl(0, libc::FIONREAD, &mut waiting) } == 0;
    !(known && waiting == 0 && fd.revents & libc::POLLHUP != 0)
}

/// The hook table as JSON, for tools that run the binary (the Amplifier module reads deadlines).
fn table_json() -> String {
    let rows: Vec<serde_json::Value> = HOOKS
        .iter()
        .map(|h| {
            serde_json::json!({
                "subcommand": h.subcommand,
                "event": h.event_name(),
                "deadline_ms": h.deadline.as_millis() as u64,
                "timeout_secs": h.registered.and_then(|r| r.timeout_secs),
                "matcher": h.registered.and_then(|r| r.matcher),
                "builtins": h.builtins.iter().map(|b| b.name()).collect::<Vec<_>>(),
                "forwards": h.forwards,
            })
        })
        .collect();
    format!("{}\n", serde_json::Value::Array(rows))
}

/// `AMPLIHACK_HOOK_DEADLINE_MS` overrides the subcommand's own deadline (tests, slow machines).
fn deadline(subcommand: &Hook) -> Duration {
    std::env::var(amplihack_env::AMPLIHACK_HOOK_DEADLINE_MS)
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(subcommand.deadline, Duration::from_millis)
}

/// When the host gives up on us (SIGTERM, SIGHUP, SIGINT), the handlers we started go too: every
/// handler's process group is killed before we exit. No orphans.
fn on_stop_signals() {
    extern "C" fn stop(_signal: libc::c_int) {
        forward::kill_handlers();
        const NOTE: &[u8] =
            b"amplihack-hooks: stopped by a signal; its handlers were stopped too\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe.
        unsafe {
            libc::write(2, NOTE.as_ptr().cast(), NOTE.len());
            libc::_exit(0);
        }
    }
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        // SAFETY: installs a handler that only calls async-signal-safe functions.
        unsafe {
            libc::signal(signal, stop as *const () as libc::sighandler_t);
        }
    }
}

/// The deadline's re-exec flag: the watchdog replaces the process image with
/// `amplihack-hooks --deadline-exceeded <row> <ms>`, which reports and exits 0.
const DEADLINE_FLAG: &str = "--deadline-exceeded";
static DEADLINE_ROW: AtomicUsize = AtomicUsize::new(0);
static DEADLINE_MS: AtomicU64 = AtomicU64::new(0);

/// Arms a one-shot `ITIMER_REAL` for the subcommand's deadline. No thread: a call pays two
/// system calls, not a thread's start. When it fires first, the handler kills the handlers'
/// groups and re-executes this binary to write the report (a signal handler may not allocate,
/// format or take locks; `execve` is async-signal-safe), so the failure is still one line on
/// stderr and one in the log, and the exit status is 0 with nothing on stdout.
fn arm_watchdog(subcommand: &'static Hook, after: Duration) {
    let row = HOOKS
        .iter()
        .position(|h| h.subcommand == subcommand.subcommand)
        .unwrap_or_default();
    DEADLINE_ROW.store(row, Ordering::SeqCst);
    DEADLINE_MS.store(after.as_millis() as u64, Ordering::SeqCst);
    // SAFETY: installs a handler that only uses async-signal-safe calls; the timer is our own.
    let armed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_deadline as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        let timer = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            it_value: libc::timeval {
                tv_sec: after.as_secs() as libc::time_t,
                tv_usec: libc::suseconds_t::from(after.subsec_micros().max(1) as i32),
            },
        };
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) == 0
            && libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) == 0
    };
    if !armed {
        report(
            subcommand.subcommand,
            "watchdog unavailable",
            &std::io::Error::last_os_error().to_string(),
        );
    }
}

unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

extern "C" fn on_deadline(_signal: libc::c_int) {
    if FINISHED.swap(true, Ordering::SeqCst) {
        // The answer is already on its way out.
        return;
    }
    forward::kill_handlers();
    let (mut row, mut ms) = ([0u8; 24], [0u8; 24]);
    decimal(DEADLINE_ROW.load(Ordering::SeqCst) as u64, &mut row);
    decimal(DEADLINE_MS.load(Ordering::SeqCst), &mut ms);
    let argv = [
        c"amplihack-hooks".as_ptr(),
        c"--deadline-exceeded".as_ptr(),
        row.as_ptr().cast::<libc::c_char>(),
        ms.as_ptr().cast::<libc::c_char>(),
        std::ptr::null(),
    ];
    const FALLBACK: &[u8] =
        b"amplihack-hooks: deadline exceeded, event let through (the report could not be written)\n";
    // SAFETY: execve, write and _exit are async-signal-safe; every argument is NUL-terminated.
    unsafe {
        libc::execve(c"/proc/self/exe".as_ptr(), argv.as_ptr(), environ);
        libc::write(2, FALLBACK.as_ptr().cast(), FALLBACK.len());
        libc::_exit(0);
    }
}

/// `value` in decimal, NUL-terminated, into `out` (no allocation: used in a signal handler).
fn decimal(mut value: u64, out: &mut [u8; 24]) {
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (value % 10) as u8;
        n += 1;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    for (i, digit) in digits[..n].iter().rev().enumerate() {
        out[i] = *digit;
    }
    out[n] = 0;
}

/// The re-executed watchdog: report the deadline for table row `row`, exit 0.
fn deadline_exceeded(row: &str, ms: &str) -> i32 {
    let name = row
        .parse::<usize>()
        .ok()
        .and_then(|i| HOOKS.get(i))
        .map_or("?", |h| h.subcommand);
    report(
        name,
        "deadline exceeded, event let through",
        &format!("no answer after {ms} ms"),
    );
    0
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
    let event =
        HookEvent::parse(&input, invocation.subcommand.event.clone()).map_err(Failure::Invalid)?;
    if !event.name.is_known() {
        // Forward-compatible: a newer host's event passes through untouched.
        return Ok(Rendered::default());
    }
    let ctx = Context::from_process(host);
    let pipeline::Processed { event, outcome } =
        pipeline::process(invocation.subcommand, event, input, &ctx, deadline);
    for problem in outcome
        .problems
        .iter()
        .chain(&amplihack_state::files::take_notes())
    {
        report(invocation.subcommand.subcommand, "note", problem);
    }
    Ok(pipeline::render(host, &event, &outcome.reply))
}

fn read_stdin() -> Result<Vec<u8>, Failure> {
    let mut stdin = std::io::stdin().lock();
    let mut input = Vec::with_capacity(16 * 1024);
    (&mut stdin)
        .take(MAX_STDIN as u64 + 1)
        .read_to_end(&mut input)
        .map_err(|e| Failure::Internal(format!("cannot read stdin: {e}")))?;
    if input.len() > MAX_STDIN {
        // Drain the rest so the host does not see a broken pipe, then let the event through;
        // for at most a second, so an endless writer cannot hold the event until the deadline.
        let started = Instant::now();
        let mut buffer = vec![0u8; 256 * 1024];
        while started.elapsed() < Duration::from_secs(1) {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        return Err(Failure::Internal(format!(
            "stdin is larger than the {} MiB cap; the event was not inspected",
            MAX_STDIN / (1024 * 1024)
        )));
    }
    Ok(input)
}

/// One line on stderr and one in the failure log.
fn report(subcommand: &str, kind: &str, message: &str) {
    let message = message.replace(['\n', '\r'], " ");
    let line = format!("amplihack-hooks {subcommand}: {kind}: {message}");
    let logged = match failure_log::append(&line) {
        Ok(path) => format!(" [log: {}]", path.display()),
        Err(e) => format!(" [log unavailable: {e}]"),
    };
    // A closed stderr must not turn a fail-open exit into a panic.
    let _ = writeln!(std::io::stderr(), "{line}{logged}");
}

/// Writes all of stdout at once; a host that stopped reading is not an error of ours.
fn write_stdout(text: &str, code: i32) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    code
}
