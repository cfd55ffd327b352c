//! The host's stop signals and a one-shot deadline, for a process that must answer in time and
//! leave nothing running behind it. What runs in a handler here may only do what is safe in a
//! signal handler: no allocation, no lock, no formatting.

use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What runs when the host stops us (a plain function, signal-safe).
static ON_STOP: AtomicUsize = AtomicUsize::new(0);
/// The note written when it has run.
static STOP_NOTE: AtomicUsize = AtomicUsize::new(0);
static STOP_NOTE_LEN: AtomicUsize = AtomicUsize::new(0);
/// What runs when the deadline passes.
static ON_DEADLINE: AtomicUsize = AtomicUsize::new(0);

fn call(slot: &AtomicUsize) {
    let f = slot.load(Ordering::SeqCst);
    if f != 0 {
        // SAFETY: only ever stored from a `fn()` below.
        let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(f) };
        f();
    }
}

/// When the host gives up on us (SIGTERM, SIGHUP, SIGINT): `then` runs, `note` goes to stderr,
/// and the process exits 0. `then` must be signal-safe.
pub fn on_stop(then: fn(), note: &'static [u8]) {
    extern "C" fn stop(_signal: libc::c_int) {
        call(&ON_STOP);
        let (note, len) = (
            STOP_NOTE.load(Ordering::SeqCst),
            STOP_NOTE_LEN.load(Ordering::SeqCst),
        );
        // SAFETY: write(2) and _exit(2) are async-signal-safe; the note is 'static.
        unsafe {
            libc::write(2, note as *const libc::c_void, len);
            libc::_exit(0);
        }
    }
    ON_STOP.store(then as usize, Ordering::SeqCst);
    STOP_NOTE.store(note.as_ptr() as usize, Ordering::SeqCst);
    STOP_NOTE_LEN.store(note.len(), Ordering::SeqCst);
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        // SAFETY: installs a handler that only calls async-signal-safe functions.
        unsafe {
            libc::signal(signal, stop as *const () as libc::sighandler_t);
        }
    }
}

/// Runs `then` once, `after` from now, on this thread, interrupting whatever it is doing (no
/// thread is started: two system calls). `then` must be signal-safe.
pub fn deadline(after: Duration, then: fn()) -> io::Result<()> {
    extern "C" fn fire(_signal: libc::c_int) {
        call(&ON_DEADLINE);
    }
    ON_DEADLINE.store(then as usize, Ordering::SeqCst);
    // SAFETY: installs a handler that only calls a signal-safe function; the timer is our own.
    let armed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = fire as *const () as libc::sighandler_t;
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
    if armed {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// Replaces this process with a fresh run of its own executable with `args` (the first is the
/// program's name), the environment kept; signal-safe. When that fails, `fallback` goes to
/// stderr and the process exits 0.
pub fn run_self_instead(args: [&CStr; 4], fallback: &'static [u8]) -> ! {
    let argv = [
        args[0].as_ptr(),
        args[1].as_ptr(),
        args[2].as_ptr(),
        args[3].as_ptr(),
        std::ptr::null(),
    ];
    // SAFETY: execve, write and _exit are async-signal-safe; every argument is NUL-terminated
    // and the vector ends with a null pointer.
    unsafe {
        libc::execve(c"/proc/self/exe".as_ptr(), argv.as_ptr(), environ);
        libc::write(2, fallback.as_ptr().cast(), fallback.len());
        libc::_exit(0)
    }
}

/// The host's stop signals and the deadline's alarm, held back on this thread until this is
/// dropped (then they are delivered): see [`hold_stop_signals`].
pub struct StopSignalsHeld(libc::sigset_t);

/// Holds back SIGTERM, SIGHUP, SIGINT and SIGALRM on this thread while something that must not
/// be cut short (starting a child and recording it) is done. A child started meanwhile clears
/// its mask ([`crate::spawn`]).
pub fn hold_stop_signals() -> StopSignalsHeld {
    // SAFETY: sigset operations on local values; pthread_sigmask on this thread only.
    unsafe {
        let mut stop: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut stop);
        for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGALRM] {
            libc::sigaddset(&mut stop, signal);
        }
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &stop, &mut before);
        StopSignalsHeld(before)
    }
}

impl Drop for StopSignalsHeld {
    fn drop(&mut self) {
        // SAFETY: restores the mask `hold_stop_signals` saved.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}
