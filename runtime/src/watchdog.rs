//! The deadline and the signals: whatever happens, `amplihack-hooks` answers in time and leaves
//! no handler behind. All of the runtime's `unsafe` for signals and timers lives here: a one-shot
//! `ITIMER_REAL` for the subcommand's deadline whose handler re-executes the binary to report,
//! and handlers for the host's stop signals that kill the handlers' process groups.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use amplihack_engine::forward;
use amplihack_protocol::Hook;
use amplihack_protocol::table::HOOKS;

/// Set by whichever of the main thread and the watchdog finishes first; the other stays quiet.
static FINISHED: AtomicBool = AtomicBool::new(false);

/// Claims the answer: true when the other side (the main thread or the watchdog) already has.
pub(crate) fn already_finished() -> bool {
    FINISHED.swap(true, Ordering::SeqCst)
}

/// The subcommand's own deadline, or the one its registration was raised to (`--timeout N`:
/// what the host allows it, so the deadline stays inside it).
/// `AMPLIHACK_HOOK_DEADLINE_MS` overrides both (tests, slow machines).
pub(crate) fn deadline(subcommand: &Hook, registered_secs: Option<u64>) -> Duration {
    std::env::var(amplihack_env::AMPLIHACK_HOOK_DEADLINE_MS)
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or_else(|| {
            registered_secs.map_or(subcommand.deadline, |secs| subcommand.deadline_under(secs))
        })
}

/// When the host gives up on us (SIGTERM, SIGHUP, SIGINT), the handlers we started go too: every
/// handler's process group is killed before we exit. No orphans.
pub(crate) fn on_stop_signals() {
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
pub(crate) const DEADLINE_FLAG: &str = "--deadline-exceeded";
static DEADLINE_ROW: AtomicUsize = AtomicUsize::new(0);
static DEADLINE_MS: AtomicU64 = AtomicU64::new(0);

/// Arms a one-shot `ITIMER_REAL` for the subcommand's deadline. No thread: a call pays two
/// system calls, not a thread's start. When it fires first, the handler kills the handlers'
/// groups and re-executes this binary to write the report (a signal handler may not allocate,
/// format or take locks; `execve` is async-signal-safe), so the failure is still one line on
/// stderr and one in the log, and the exit status is 0 with nothing on stdout.
pub(crate) fn arm_watchdog(subcommand: &'static Hook, after: Duration) {
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
        crate::report(
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
    if already_finished() {
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
pub(crate) fn deadline_exceeded(row: &str, ms: &str) -> i32 {
    let name = row
        .parse::<usize>()
        .ok()
        .and_then(|i| HOOKS.get(i))
        .map_or("?", |h| h.subcommand);
    crate::report(
        name,
        "deadline exceeded, event let through",
        &format!("no answer after {ms} ms"),
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writes_nul_terminated_digits_without_allocating() {
        let mut out = [0xffu8; 24];
        decimal(0, &mut out);
        assert_eq!(&out[..2], b"0\0");
        decimal(18_446_744_073_709_551_615, &mut out);
        assert_eq!(&out[..21], b"18446744073709551615\0");
    }
}
