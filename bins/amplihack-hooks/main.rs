//! `amplihack-hooks`: argument handling and the exit code only; everything else is in
//! `amplihack-runtime`.
//!
//! Its own `main` (`#![no_main]`): the hook starts on every tool call, and the Rust runtime's
//! set-up before `main` (the stack-overflow report: `/proc/self/maps` read and parsed, an
//! alternate signal stack) was 17 of an idle call's 40 system calls. What of it the hook needs is
//! [`amplihack_platform::process::start_like_std`]. The arguments come from std as usual (glibc
//! hands them to std's initialiser).
// Not in its (empty) unit-test build, whose `main` is the test harness's.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    amplihack_platform::process::start_like_std();
    // `exit` flushes std's stdout, as a return from a Rust `main` does.
    std::process::exit(amplihack_runtime::main(
        std::env::args_os().skip(1).collect(),
    ));
}
