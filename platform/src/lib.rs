//! What amplihack needs of the operating system, named for what it does, not how: every
//! `unsafe` call into libc lives here, behind functions that are safe to call. Unix only today;
//! a Windows build is this crate to write (each module's interface says what the rest of
//! amplihack relies on).
//!
//! Being moved here piece by piece (issue 34): the process groups and signal masks of the
//! handler runner (`amplihack-engine`'s `spawn` and `execute`), the watchdog's timers and
//! signals (`amplihack-runtime`), the `openat`/`O_NOFOLLOW` walks (`amplihack-state`'s
//! `safe_open`) still call libc where they are.

#[cfg(not(unix))]
compile_error!(
    "amplihack-platform implements Unix only: a port writes its modules for the new platform"
);

pub mod confine;
pub mod fs;
pub mod io;
pub mod process;
pub mod signals;
pub mod spawn;
