//! Running one handler: `sh -c` in the project directory, in its own process group, the event on
//! stdin, stdout and stderr captured up to a cap, and the whole group killed at its timeout.
//!
//! Plain threads, no async runtime: a handful of threads per handler costs microseconds, and the
//! binary stays small and quick to start.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Bytes kept of each of stdout and stderr; the rest is read and dropped (so a flood cannot
/// block the handler or fill our memory) and reported.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// How long to wait for a finished handler's pipes to close: a background child it left behind
/// may hold them open, and that must not hold up the answer.
const PIPE_GRACE: Duration = Duration::from_millis(100);

pub struct Spawn<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub stdin: &'a [u8],
    pub timeout: Duration,
}

#[derive(Debug, Clone, Default)]
pub struct Finished {
    /// `None` when it was killed (timeout) or could not be started.
    pub exit: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// Output past [`OUTPUT_CAP`] was dropped.
    pub truncated: bool,
    pub duration: Duration,
    /// It could not be started at all.
    pub spawn_error: Option<String>,
}

fn base_command(spawn: &Spawn<'_>) -> Command {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(spawn.command)
        .current_dir(spawn.cwd)
        .process_group(0);
    for (key, value) in spawn.env {
        command.env(key, value);
    }
    command
}

fn reader(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<(Vec<u8>, bool)> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut truncated = false;
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buffer[..n.min(room)]);
                    truncated |= n > room;
                }
            }
        }
        let _ = tx.send((kept, truncated));
    });
    rx
}

/// Runs a handler to completion or to its timeout.
/// The process groups of the handlers running now, so that they can be killed when amplihack is
/// stopped (a signal from the host, or its own deadline). Plain atomics: read from a signal handler.
static GROUPS: [std::sync::atomic::AtomicI32; 256] =
    [const { std::sync::atomic::AtomicI32::new(0) }; 256];

fn track(pid: libc::pid_t) -> Option<usize> {
    use std::sync::atomic::Ordering;
    GROUPS.iter().position(|slot| {
        slot.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

fn untrack(slot: Option<usize>) {
    if let Some(slot) = slot {
        GROUPS[slot].store(0, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Kills every running handler's whole process group. Async-signal-safe (atomics and `kill`).
pub fn kill_all_groups() {
    for slot in &GROUPS {
        let pid = slot.load(std::sync::atomic::Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) on a process group this process created for a handler.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

pub fn run(spawn: &Spawn<'_>) -> Finished {
    let started = Instant::now();
    let mut command = base_command(spawn);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Finished {
                spawn_error: Some(e.to_string()),
                duration: started.elapsed(),
                ..Finished::default()
            };
        }
    };
    let pid = child.id() as libc::pid_t;
    let slot = track(pid);
    if let Some(mut stdin) = child.stdin.take() {
        let input = spawn.stdin.to_vec();
        // A handler that never reads stdin gets EPIPE or blocks only this thread.
        thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let stdout = child.stdout.take().map(reader);
    let stderr = child.stderr.take().map(reader);
    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    let (exit, timed_out) = match done_rx.recv_timeout(spawn.timeout) {
        Ok(status) => (status.ok().and_then(|s| s.code()), false),
        Err(_) => {
            // SAFETY: killpg on the group we created for this handler (its pid is the group id).
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            let _ = done_rx.recv_timeout(Duration::from_secs(2));
            (None, true)
        }
    };
    let collect = |rx: Option<mpsc::Receiver<(Vec<u8>, bool)>>| {
        rx.and_then(|rx| rx.recv_timeout(PIPE_GRACE).ok())
            .map(|(bytes, cut)| (String::from_utf8_lossy(&bytes).into_owned(), cut))
            .unwrap_or_default()
    };
    let (stdout, cut_out) = collect(stdout);
    let (stderr, cut_err) = collect(stderr);
    untrack(slot);
    Finished {
        exit,
        timed_out,
        stdout,
        stderr,
        truncated: cut_out || cut_err,
        duration: started.elapsed(),
        spawn_error: None,
    }
}

/// Starts an `async: true` handler detached: its stdin is an unlinked temporary file (so nothing
/// has to stay behind to feed a pipe), its output is discarded, and it is never waited for.
pub fn start_detached(spawn: &Spawn<'_>) -> Result<u32, String> {
    let mut input = tempfile::tempfile().map_err(|e| format!("temporary stdin: {e}"))?;
    input
        .write_all(spawn.stdin)
        .map_err(|e| format!("temporary stdin: {e}"))?;
    std::io::Seek::rewind(&mut input).map_err(|e| format!("temporary stdin: {e}"))?;
    let mut command = base_command(spawn);
    command
        .stdin(Stdio::from(input))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
        .spawn()
        .map(|child| child.id())
        .map_err(|e| e.to_string())
}

/// Where handlers run: the first candidate that exists (an event's `cwd` may name a directory
/// that is gone), else our own working directory.
pub fn working_dir(candidates: &[Option<PathBuf>]) -> PathBuf {
    candidates
        .iter()
        .flatten()
        .find(|dir| dir.is_dir())
        .cloned()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"))
}
