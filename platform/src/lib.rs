//! What amplihack needs of the operating system, named for what it does, not how: every
//! `unsafe` call into libc lives here, behind functions that are safe to call. Unix only today;
//! a Windows build is this crate to write (each module's interface says what the rest of
//! amplihack relies on).
//!
//! No other crate of amplihack calls libc (issue 34): `fs` (no-follow walks, non-blocking
//! opens, locks), `io` (pipes, non-blocking reads and writes, waiting for descriptors), `process`
//! (process groups, how a child ended, pidfds), `spawn` (starting a handler in a group of its
//! own), `signals` (the host's stop signals, the deadline, holding them back), `confine`
//! (Landlock), `exact` (a handler's pinned files shown as their verified copies: a mount namespace). Only tests in `tests/` still call libc themselves.

#[cfg(not(unix))]
compile_error!(
    "amplihack-platform implements Unix only: a port writes its modules for the new platform"
);

pub mod confine;
pub mod exact;
pub mod fs;
pub mod io;
pub mod process;
pub mod signals;
pub mod spawn;
pub mod stamp;
