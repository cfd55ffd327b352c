//! The deadline and the signals: whatever happens, `amplihack-hooks` answers in time and leaves
//! no handler behind. The runtime's signals and timers are set here (through `amplihack_platform::signals`): a one-shot
//! `ITIMER_REAL` for the subcommand's deadline whose handler re-executes the binary to report,
//! and handlers for the host's stop signals that kill the handlers' process groups.

use std::ffi::CStr;
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
    amplihack_platform::signals::on_stop(
        forward::kill_handlers,
        b"amplihack-hooks: stopped by a signal; its handlers were stopped too\n",
    );
}

/// A collector's stop signals (SessionEnd asks it to stop): its handler is cancelled as Claude
/// Code cancels a background handler at the end of a session (SIGTERM, then SIGKILL after a
/// grace), and the collector exits 0.
pub(crate) fn on_cancel_signals() {
    amplihack_platform::signals::on_stop(
        amplihack_engine::background::cancel_handler,
        b"amplihack-hooks: the session ended; its background handler was cancelled\n",
    );
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
    let armed = amplihack_platform::signals::deadline(after, on_deadline);
    if let Err(e) = armed {
        crate::report(
            subcommand.subcommand,
            "watchdog unavailable",
            &e.to_string(),
        );
    }
}

fn on_deadline() {
    if already_finished() {
        // The answer is already on its way out.
        return;
    }
    forward::kill_handlers();
    let (mut row, mut ms) = ([0u8; 24], [0u8; 24]);
    decimal(DEADLINE_ROW.load(Ordering::SeqCst) as u64, &mut row);
    decimal(DEADLINE_MS.load(Ordering::SeqCst), &mut ms);
    const FALLBACK: &[u8] =
        b"amplihack-hooks: deadline exceeded, event let through (the report could not be written)\n";
    // `decimal` always ends what it writes with a NUL.
    let (Ok(row), Ok(ms)) = (
        CStr::from_bytes_until_nul(&row),
        CStr::from_bytes_until_nul(&ms),
    ) else {
        return;
    };
    amplihack_platform::signals::run_self_instead(
        [c"amplihack-hooks", c"--deadline-exceeded", row, ms],
        FALLBACK,
    )
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
