//! Running one handler: `sh -c` in the project directory, in its own process group, the event on
//! stdin, stdout and stderr captured up to a cap, and the whole group killed at its timeout.
//!
//! Plain threads, no async runtime: a handful of threads per handler costs microseconds, and the
//! binary stays small and quick to start.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
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

/// Tracks a process group that is not our child's (a collector's adopted handler), so that a
/// stop signal kills it too.
pub fn track_group(group: libc::pid_t) {
    let _ = track(group);
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

/// What running a handler came to.
pub enum Ran {
    Finished(Finished),
    /// The first line of its stdout declared it async (`{"async": true}`): Claude Code stops
    /// waiting for such a handler and reads its answer when it ends. Its pipes are handed over
    /// so that someone can do the same after we have answered.
    Declared(Handoff),
}

/// A handler that declared itself async, still running, with its pipes.
pub struct Handoff {
    /// Its process group (its pid).
    pub group: libc::pid_t,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// What it printed before it was handed over (the declaration, and maybe more).
    pub stdout_so_far: Vec<u8>,
    pub stderr_so_far: Vec<u8>,
    /// Its `asyncTimeout` (milliseconds in the declaration).
    pub timeout: Option<Duration>,
}

impl Ran {
    /// The finished run; a declared-async handler here is one whose answer is not waited for.
    pub fn finished(self) -> Finished {
        match self {
            Ran::Finished(finished) => finished,
            Ran::Declared(_) => Finished::default(),
        }
    }
}

/// Runs a handler to completion or to its timeout. With `sniff_async`, a handler whose first
/// line of stdout is `{"async": true, ...}` is handed back running ([`Ran::Declared`]).
pub fn run(spawn: &Spawn<'_>, sniff_async: bool) -> Ran {
    let started = Instant::now();
    let mut command = base_command(spawn);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Ran::Finished(Finished {
                spawn_error: Some(e.to_string()),
                duration: started.elapsed(),
                ..Finished::default()
            });
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
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    // The waiter closes `exited_tx` when the handler ends: a pipe the read loop can poll.
    let (exited_rx, exited_tx) = match std::io::pipe() {
        Ok((rx, tx)) => (Some(rx), Some(tx)),
        Err(_) => (None, None),
    };
    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        let status = child.wait();
        drop(exited_tx);
        let _ = done_tx.send(status);
    });
    let deadline = started + spawn.timeout;
    let mut pipes = Pipes::new(stdout, stderr);
    let ended = pipes.read_until(
        deadline,
        exited_rx.as_ref().map(AsRawFd::as_raw_fd),
        sniff_async,
    );
    if let Ended::Declared(timeout) = ended
        && let (Some(stdout), Some(stderr)) = (pipes.out.fd.take(), pipes.err.fd.take())
    {
        untrack(slot);
        return Ran::Declared(Handoff {
            group: pid,
            stdout,
            stderr,
            stdout_so_far: pipes.out.kept,
            stderr_so_far: pipes.err.kept,
            timeout,
        });
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let (exit, timed_out) = match (&ended, done_rx.recv_timeout(left)) {
        (Ended::TimedOut, _) | (_, Err(_)) => {
            // SAFETY: killpg on the group we created for this handler (its pid is the group id).
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            let _ = done_rx.recv_timeout(Duration::from_secs(2));
            (None, true)
        }
        (_, Ok(status)) => (status.ok().and_then(|s| s.code()), false),
    };
    untrack(slot);
    Ran::Finished(pipes.finished(exit, timed_out, started))
}

/// One output pipe being read: what was kept of it, up to [`OUTPUT_CAP`].
#[derive(Default)]
pub struct Capture {
    pub fd: Option<OwnedFd>,
    pub kept: Vec<u8>,
    pub truncated: bool,
}

impl Capture {
    /// Reads what is ready; false at end of file (the pipe is then closed).
    fn read_ready(&mut self) -> bool {
        let Some(fd) = &self.fd else { return false };
        let mut buffer = [0u8; 16 * 1024];
        // SAFETY: reading into our own buffer from a descriptor we own; poll said it is ready.
        let n = unsafe { libc::read(fd.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            return true;
        }
        if n <= 0 {
            self.fd = None;
            return false;
        }
        let n = n as usize;
        let room = OUTPUT_CAP.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&buffer[..n.min(room)]);
        self.truncated |= n > room;
        true
    }
}

/// A handler's stdout and stderr, read together by one thread with poll(2).
pub struct Pipes {
    pub out: Capture,
    pub err: Capture,
}

/// Why reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Both pipes closed, or the handler ended and its pipes stayed quiet for [`PIPE_GRACE`]
    /// (a background child of its own holds them).
    Closed,
    TimedOut,
    /// The first line of stdout declared the handler async, with this `asyncTimeout`.
    Declared(Option<Duration>),
}

impl Pipes {
    pub fn new(stdout: Option<OwnedFd>, stderr: Option<OwnedFd>) -> Pipes {
        Pipes {
            out: Capture {
                fd: stdout,
                ..Capture::default()
            },
            err: Capture {
                fd: stderr,
                ..Capture::default()
            },
        }
    }

    /// What was read, as a handler's result.
    pub fn finished(self, exit: Option<i32>, timed_out: bool, started: Instant) -> Finished {
        Finished {
            exit,
            timed_out,
            stdout: String::from_utf8_lossy(&self.out.kept).into_owned(),
            stderr: String::from_utf8_lossy(&self.err.kept).into_owned(),
            truncated: self.out.truncated || self.err.truncated,
            duration: started.elapsed(),
            spawn_error: None,
        }
    }

    /// Reads both pipes until they close, the deadline passes, or (with `sniff_async`) stdout's
    /// first line declares the handler async. `exited`, readable once the handler has ended,
    /// starts the grace period for pipes a background child keeps open.
    pub fn read_until(
        &mut self,
        deadline: Instant,
        exited: Option<RawFd>,
        sniff_async: bool,
    ) -> Ended {
        let mut sniffing = sniff_async;
        let mut exited = exited;
        let mut grace_until: Option<Instant> = None;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ended::TimedOut;
            }
            if self.out.fd.is_none() && self.err.fd.is_none() {
                return Ended::Closed;
            }
            if grace_until.is_some_and(|t| now >= t) {
                return Ended::Closed;
            }
            let wake = grace_until.map_or(deadline, |t| t.min(deadline));
            let mut fds: Vec<libc::pollfd> = [
                self.out.fd.as_ref().map(AsRawFd::as_raw_fd),
                self.err.fd.as_ref().map(AsRawFd::as_raw_fd),
                exited,
            ]
            .into_iter()
            .map(|fd| libc::pollfd {
                fd: fd.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
            let wait_ms = (wake - now).as_millis().clamp(1, 60_000) as libc::c_int;
            // SAFETY: poll over our own array of three pollfd; negative fds are ignored.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 3, wait_ms) };
            if ready < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Ended::Closed;
            }
            if fds[0].revents != 0 && self.out.read_ready() && sniffing {
                match sniff(&self.out.kept) {
                    Sniff::Undecided => {}
                    Sniff::Sync => sniffing = false,
                    Sniff::Async(timeout) => return Ended::Declared(timeout),
                }
            }
            if fds[0].revents != 0 && self.out.fd.is_none() {
                sniffing = false;
            }
            if fds[1].revents != 0 {
                self.err.read_ready();
            }
            if fds[2].revents != 0 {
                exited = None;
                grace_until = Some(Instant::now() + PIPE_GRACE);
            }
        }
    }
}

enum Sniff {
    Undecided,
    Sync,
    Async(Option<Duration>),
}

/// Claude Code's rule: once the first line of stdout holds a `}`, it is read as JSON once; an
/// object with `"async": true` declares the handler async.
fn sniff(stdout: &[u8]) -> Sniff {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim_start();
    let (line, complete) = match text.find('\n') {
        Some(end) => (&text[..end], true),
        None => (text, false),
    };
    if !line.contains('}') {
        return if complete {
            Sniff::Sync
        } else {
            Sniff::Undecided
        };
    }
    match serde_json::from_str::<serde_json::Value>(line.trim()) {
        Ok(serde_json::Value::Object(declared)) if declared.get("async") == Some(&true.into()) => {
            let timeout = declared
                .get("asyncTimeout")
                .and_then(serde_json::Value::as_f64)
                .filter(|ms| *ms > 0.0)
                .map(|ms| Duration::from_secs_f64(ms / 1000.0));
            Sniff::Async(timeout)
        }
        _ => Sniff::Sync,
    }
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
