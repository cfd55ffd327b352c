//! Reading the event: stdin, bounded ([`MAX_STDIN`]), and, for `--standby`, waiting for it to
//! arrive.

use std::io::Read;
use std::time::{Duration, Instant};

use crate::Failure;

/// The most stdin we parse. Claude Code's largest payloads are Write and PostToolUse events that
/// carry file contents (tens of kilobytes is typical). Past this bound the event is drained and
/// skipped (fail open) instead of holding hundreds of megabytes in a process that runs on every
/// tool call.
pub const MAX_STDIN: usize = 16 * 1024 * 1024;

/// For `--standby`: waits until stdin has something to read; false when it was closed empty. The
/// process is started ahead of its event, so its start is off the event's path; the deadline
/// counts from the event's arrival. Anything but a pipe (a file, a terminal) counts as arrived.
pub(crate) fn input_arrives() -> bool {
    amplihack_platform::io::stdin_arrives()
}

pub(crate) fn read_stdin() -> Result<Vec<u8>, Failure> {
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
