//! Running one handler: `sh -c` in the project directory, in its own process group, the event on
//! stdin, stdout and stderr captured up to a cap, and the whole group killed at its timeout.
//!
//! No threads and no async runtime: [`run_all`] waits for every handler of a batch in one poll(2)
//! on the calling thread, and the binary stays small and quick to start.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use amplihack_platform::io::{self, Watch};
use amplihack_platform::{process, signals};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes kept of each of stdout and stderr; the rest is read and dropped (so a flood cannot
/// block the handler or fill our memory) and reported.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// How long to wait for a finished handler's pipes to close: a background child it left behind
/// may hold them open, and that must not hold up the answer.
const PIPE_GRACE: Duration = Duration::from_millis(100);

pub struct Spawn<'a> {
    /// What names the handler (its shell command, or its executable and arguments).
    pub label: &'a str,
    /// The program and its arguments (`/bin/sh -c <command>` for the shell form).
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub stdin: &'a [u8],
    pub timeout: Duration,
    /// Run confined to these rules (a project plugin's code: crate::confinement), with a private
    /// temporary directory of its own as `TMPDIR`, writable and removed when it ends.
    pub confine: Option<&'a amplihack_platform::confine::Rules>,
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
    /// A pinned file (a confined handler's, shown as its verified copy) whose path changed while
    /// the handler ran: a file renamed over it detaches the copy's mount, so the handler may have
    /// run bytes trust never hashed. Its answer is not used (crate::answer).
    pub pinned_changed: Option<PathBuf>,
}

/// The process groups of the handlers running now, so that they can be killed when amplihack is
/// stopped (a signal from the host, or its own deadline). Plain atomics: read from a signal handler.
static GROUPS: [std::sync::atomic::AtomicU32; 256] =
    [const { std::sync::atomic::AtomicU32::new(0) }; 256];

fn track(pid: u32) -> Option<usize> {
    use std::sync::atomic::Ordering;
    GROUPS.iter().position(|slot| {
        slot.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

/// Tracks a process group that is not our child's (a collector's adopted handler), so that a
/// stop signal kills it too.
pub fn track_group(group: u32) {
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
            process::kill_group(pid);
        }
    }
}

/// Cancels every running handler's whole process group: SIGTERM to each (its handler may clean
/// up), then, once `grace` has passed with anything of a group left, SIGKILL to it.
/// Async-signal-safe (atomics, `kill`, `waitpid` and `nanosleep`).
pub fn cancel_all_groups(grace: Duration) {
    const STEP: Duration = Duration::from_millis(100);
    let running = || {
        GROUPS
            .iter()
            .map(|slot| slot.load(std::sync::atomic::Ordering::SeqCst))
            .filter(|pid| *pid > 0)
    };
    running().for_each(process::terminate_group);
    let mut waited = Duration::ZERO;
    while waited < grace {
        if running().all(process::group_gone) {
            return;
        }
        process::nap(STEP.min(grace - waited));
        waited += STEP;
    }
    kill_all_groups();
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
    pub group: u32,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// What it printed before it was handed over (the declaration, and maybe more).
    pub stdout_so_far: Vec<u8>,
    pub stderr_so_far: Vec<u8>,
    /// Its `asyncTimeout` (milliseconds in the declaration).
    pub timeout: Option<Duration>,
    /// Its private temporary directory (a confined handler), for whoever follows it to remove.
    pub private_tmp: Option<tempfile::TempDir>,
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
    run_all(std::slice::from_ref(spawn), sniff_async)
        .pop()
        .unwrap_or_else(|| Ran::Finished(Finished::default()))
}

/// Runs handlers in parallel, each to completion or to its own timeout; the results in the same
/// order. One thread does all the waiting: it feeds every handler's stdin, reads every stdout and
/// stderr, and learns of every exit (a pidfd on Linux) in a single poll(2), with the nearest
/// deadline as its timeout. No work is handed between threads, so a busy machine, where a woken
/// thread waits for a core, does not add a scheduling delay per handler.
pub fn run_all(spawns: &[Spawn<'_>], sniff_async: bool) -> Vec<Ran> {
    // Each but the last starts without waiting for its exec (they load in parallel); the last
    // waits, as nothing else is left to start (and its start copies no memory).
    let last = spawns.len().saturating_sub(1);
    let mut jobs: Vec<Job<'_>> = spawns
        .iter()
        .enumerate()
        .map(|(i, spawn)| Job::start(spawn, sniff_async, i == last))
        .collect();
    let mut fds: Vec<Watch> = Vec::with_capacity(jobs.len() * 4);
    let mut owners: Vec<(usize, Stream)> = Vec::with_capacity(jobs.len() * 4);
    let mut idle_checks = 0u32;
    loop {
        let now = Instant::now();
        let mut wake: Option<Instant> = None;
        let mut tick = false;
        fds.clear();
        owners.clear();
        for (index, job) in jobs.iter_mut().enumerate() {
            let Some(next) = job.step(now) else { continue };
            wake = Some(wake.map_or(next, |w| w.min(next)));
            tick |= job.pidfd.is_none() && job.exit.is_none();
            for (stream, watch) in job.interests() {
                fds.push(watch);
                owners.push((index, stream));
            }
        }
        let Some(wake) = wake else { break };
        let mut wait = wake.saturating_duration_since(now);
        if tick {
            // No pidfd (not Linux, or an old kernel): look for exits on a short, growing tick.
            idle_checks = idle_checks.saturating_add(1);
            wait = wait.min(Duration::from_millis(u64::from(idle_checks.min(10))));
        }
        if let Err(e) = io::wait_ready(&mut fds, wait) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // poll itself failed (no memory): nothing more can be waited for; stop them all.
            for job in &mut jobs {
                job.give_up();
            }
            break;
        }
        for (fd, (index, stream)) in fds.iter().zip(&owners) {
            if fd.is_ready() {
                jobs[*index].ready(*stream);
            }
        }
    }
    jobs.into_iter().map(Job::into_ran).collect()
}

#[derive(Debug, Clone, Copy)]
enum Stream {
    Stdin,
    Stdout,
    Stderr,
    Exit,
    ExecError,
}

/// One handler being run by [`run_all`].
struct Job<'a> {
    started: Instant,
    deadline: Instant,
    pid: u32,
    /// Readable once the handler has called `execve` (end of file) or failed to (its errno).
    exec_error: Option<OwnedFd>,
    /// Why it could not start, learnt from `exec_error`.
    start_error: Option<String>,
    slot: Option<usize>,
    input: &'a [u8],
    stdin: Option<OwnedFd>,
    written: usize,
    pipes: Pipes,
    /// Readable once the handler has ended (Linux); without it, exits are looked for on a tick.
    pidfd: Option<OwnedFd>,
    /// Its exit code once reaped (`Some(None)`: ended by a signal).
    exit: Option<Option<i32>>,
    /// Set once it has ended with a pipe still open: a background child of its own holds it.
    grace_until: Option<Instant>,
    sniffing: bool,
    /// Killed at its timeout; reaped (or given up on) by this time.
    killed_until: Option<Instant>,
    result: Option<Ran>,
    /// A confined handler's `TMPDIR`, removed when the job is dropped.
    private_tmp: Option<tempfile::TempDir>,
    /// Its pinned paths as they were just before it started, checked again when it has ended.
    witness: Option<amplihack_platform::exact::Witness>,
}

/// A confined handler, ready to start: its private temporary directory, its environment with
/// `TMPDIR` naming it, and the ruleset, made before `fork`.
struct Confined {
    tmp: tempfile::TempDir,
    env: Vec<(String, String)>,
    confinement: amplihack_platform::confine::Confinement,
}

/// Prepares a confined handler; `Ok(None)`: the kernel confines nothing (no Landlock), and it
/// runs as the user's own plugins do (`doctor` says so).
fn prepare_confined(
    rules: &amplihack_platform::confine::Rules,
    env: &[(String, String)],
) -> Result<Option<Confined>, String> {
    use amplihack_platform::confine;
    if matches!(confine::support(), confine::Support::Absent { .. }) {
        return Ok(None);
    }
    let tmp = tempfile::Builder::new()
        .prefix("amplihack-handler-")
        .tempdir()
        .map_err(|e| format!("its private temporary directory: {e}"))?;
    let mut rules = rules.clone();
    rules.write.push(tmp.path().to_path_buf());
    let Some(confinement) = confine::prepare(&rules).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let mut env = env.to_vec();
    for key in ["TMPDIR", "TMP", "TEMP"] {
        env.push((key.into(), tmp.path().to_string_lossy().into_owned()));
    }
    Ok(Some(Confined {
        tmp,
        env,
        confinement,
    }))
}

impl<'a> Job<'a> {
    fn start(spawn: &Spawn<'a>, sniff_async: bool, wait_for_exec: bool) -> Job<'a> {
        let started = Instant::now();
        let mut job = Job {
            started,
            // A timeout past any clock (a plugin's `"timeout": 1e300`) is a year.
            deadline: started
                .checked_add(spawn.timeout)
                .unwrap_or(started + Duration::from_secs(365 * 24 * 3600)),
            pid: 0,
            exec_error: None,
            start_error: None,
            slot: None,
            input: spawn.stdin,
            stdin: None,
            written: 0,
            pipes: Pipes::new(None, None),
            pidfd: None,
            exit: None,
            grace_until: None,
            sniffing: sniff_async,
            killed_until: None,
            result: None,
            private_tmp: None,
            witness: None,
        };
        let confined = match spawn
            .confine
            .map(|rules| prepare_confined(rules, spawn.env))
        {
            None => None,
            Some(Ok(prepared)) => prepared,
            // Never run unconfined what was to be confined: it fails to start (fail-open for the
            // call, its plugin named).
            Some(Err(e)) => {
                job.result = Some(Ran::Finished(Finished {
                    spawn_error: Some(format!("could not be confined, so it did not run: {e}")),
                    duration: started.elapsed(),
                    ..Finished::default()
                }));
                return job;
            }
        };
        let (env, entry) = match &confined {
            Some(confined) => (confined.env.as_slice(), Some(confined.confinement.entry())),
            None => (spawn.env, None),
        };
        let start = if wait_for_exec {
            amplihack_platform::spawn::start_waiting
        } else {
            amplihack_platform::spawn::start
        };
        // A stop signal or the deadline between the start and `track` would find the new group
        // unrecorded and leave it running: they wait until it is recorded.
        // Taken before the mounts are made in the child: any change after it is seen.
        job.witness = spawn
            .confine
            .filter(|_| {
                confined
                    .as_ref()
                    .is_some_and(|c| c.confinement.pinned() > 0)
            })
            .map(|rules| amplihack_platform::exact::Witness::new(&rules.pinned));
        let held = signals::hold_stop_signals();
        let started_handler = match start(spawn.argv, spawn.cwd, env, entry) {
            Ok(started_handler) => started_handler,
            Err(e) => {
                job.result = Some(Ran::Finished(Finished {
                    spawn_error: Some(e.to_string()),
                    duration: started.elapsed(),
                    ..Finished::default()
                }));
                return job;
            }
        };
        job.pid = started_handler.pid;
        job.slot = track(job.pid);
        drop(held);
        // The ruleset was copied into the child; only the directory is kept.
        job.private_tmp = confined.map(|confined| confined.tmp);
        job.pidfd = process::end_notice(job.pid);
        job.stdin = Some(started_handler.stdin);
        job.pipes = Pipes::new(Some(started_handler.stdout), Some(started_handler.stderr));
        job.exec_error = started_handler.exec_error;
        if let Some(fd) = &job.stdin {
            // A handler that never reads its stdin must not block us: writes go out as the pipe
            // has room.
            io::set_nonblocking(fd.as_fd());
            job.feed();
        }
        job
    }

    /// Writes what the stdin pipe has room for; closes it when all is written or it is broken.
    fn feed(&mut self) {
        while let Some(fd) = &self.stdin {
            let rest = &self.input[self.written..];
            if rest.is_empty() {
                self.stdin = None;
                return;
            }
            match io::write_some(fd.as_fd(), rest) {
                Ok(n) if n > 0 => self.written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                // EPIPE: it closed its stdin without reading it all, as a handler may.
                _ => self.stdin = None,
            }
        }
    }

    /// Settles what time alone decides; `None` once the job is over, else when to look again.
    fn step(&mut self, now: Instant) -> Option<Instant> {
        if self.result.is_some() {
            return None;
        }
        if let Some(until) = self.killed_until {
            if self.exit.is_some() || now >= until {
                self.finish(None, true);
                return None;
            }
            return Some(until);
        }
        if now >= self.deadline {
            // The group we created for this handler (its pid is the group id).
            process::kill_group(self.pid);
            self.stdin = None;
            self.pipes.out.fd = None;
            self.pipes.err.fd = None;
            self.killed_until = Some(now + Duration::from_secs(2));
            self.reap();
            return self.step(now);
        }
        let pipes_open = self.pipes.out.fd.is_some() || self.pipes.err.fd.is_some();
        if self.exit.is_none() && (!pipes_open || self.pidfd.is_none()) {
            self.reap();
        }
        if let Some(exit) = self.exit {
            let grace_over = self.grace_until.is_some_and(|t| now >= t);
            if !pipes_open || grace_over {
                self.finish(exit, false);
                return None;
            }
            let until = *self.grace_until.get_or_insert(now + PIPE_GRACE);
            return Some(until.min(self.deadline));
        }
        Some(self.deadline)
    }

    /// What to poll for.
    fn interests(&self) -> impl Iterator<Item = (Stream, Watch)> + '_ {
        let readable: fn(RawFd) -> Watch = Watch::readable;
        [
            (
                Stream::Stdin,
                self.stdin.as_ref(),
                Watch::writable as fn(RawFd) -> Watch,
            ),
            (Stream::Stdout, self.pipes.out.fd.as_ref(), readable),
            (Stream::Stderr, self.pipes.err.fd.as_ref(), readable),
            (
                Stream::Exit,
                self.pidfd.as_ref().filter(|_| self.exit.is_none()),
                readable,
            ),
            (Stream::ExecError, self.exec_error.as_ref(), readable),
        ]
        .into_iter()
        .filter_map(|(stream, fd, watch)| fd.map(|fd| (stream, watch(fd.as_raw_fd()))))
    }

    fn ready(&mut self, stream: Stream) {
        if self.result.is_some() {
            return;
        }
        match stream {
            Stream::Stdin => self.feed(),
            Stream::Stdout => {
                let open = self.pipes.out.read_ready();
                if !open {
                    self.sniffing = false;
                } else if self.sniffing {
                    match sniff(&self.pipes.out.kept) {
                        Sniff::Undecided => {}
                        Sniff::Sync => self.sniffing = false,
                        Sniff::Async(timeout) => self.declared(timeout),
                    }
                }
            }
            Stream::Stderr => {
                self.pipes.err.read_ready();
            }
            Stream::Exit => self.reap(),
            Stream::ExecError => self.exec_outcome(),
        }
    }

    /// The error pipe is readable: the errno of a failed `execve`, or end of file (it runs).
    fn exec_outcome(&mut self) {
        let Some(fd) = self.exec_error.take() else {
            return;
        };
        let mut errno = [0u8; 4];
        if let Ok(4) = io::read_some(fd.as_fd(), &mut errno) {
            let error = std::io::Error::from_raw_os_error(i32::from_ne_bytes(errno));
            self.start_error = Some(error.to_string());
        }
    }

    /// Collects its exit status if it has ended.
    fn reap(&mut self) {
        if self.exit.is_some() || self.pid == 0 {
            return;
        }
        // Not ours to wait for any more (ECHILD) counts as ended by a signal.
        if let Some(ended) = process::ended(self.pid) {
            self.exit = Some(ended.code());
        }
    }

    /// Its first line declared it async: handed back running, with its pipes.
    fn declared(&mut self, timeout: Option<Duration>) {
        let (Some(stdout), Some(stderr)) = (self.pipes.out.fd.take(), self.pipes.err.fd.take())
        else {
            self.sniffing = false;
            return;
        };
        // A pinned path changed by now: it is stopped, not followed, and its answer discarded.
        if let Some(file) = self
            .witness
            .take()
            .and_then(|witness| witness.changed().map(Path::to_path_buf))
        {
            process::kill_group(self.pid);
            self.finish(None, false);
            if let Some(Ran::Finished(finished)) = &mut self.result {
                finished.pinned_changed = Some(file);
            }
            return;
        }
        untrack(self.slot.take());
        self.stdin = None;
        self.result = Some(Ran::Declared(Handoff {
            group: self.pid,
            stdout,
            stderr,
            stdout_so_far: std::mem::take(&mut self.pipes.out.kept),
            stderr_so_far: std::mem::take(&mut self.pipes.err.kept),
            timeout,
            private_tmp: self.private_tmp.take(),
        }));
    }

    fn finish(&mut self, exit: Option<i32>, timed_out: bool) {
        untrack(self.slot.take());
        self.stdin = None;
        if self.exec_error.is_some() {
            self.exec_outcome(); // it has ended: the pipe is closed or holds the errno
        }
        let pipes = std::mem::replace(&mut self.pipes, Pipes::new(None, None));
        let mut finished = pipes.finished(exit, timed_out, self.started);
        if let Some(error) = self.start_error.take() {
            finished.exit = None;
            finished.spawn_error = Some(error);
        }
        finished.pinned_changed = self
            .witness
            .take()
            .and_then(|witness| witness.changed().map(Path::to_path_buf));
        self.result = Some(Ran::Finished(finished));
    }

    /// Waiting itself failed: the handler is stopped and counts as timed out.
    fn give_up(&mut self) {
        if self.result.is_none() {
            if self.pid > 0 {
                // The group we created for this handler.
                process::kill_group(self.pid);
            }
            self.finish(None, true);
        }
    }

    fn into_ran(mut self) -> Ran {
        self.give_up();
        self.result
            .take()
            .unwrap_or_else(|| Ran::Finished(Finished::default()))
    }
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
        // Poll said it is ready.
        let n = match io::read_some(fd.as_fd(), &mut buffer) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return true,
            Ok(n) if n > 0 => n,
            _ => {
                self.fd = None;
                return false;
            }
        };
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
            pinned_changed: None,
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
            let mut fds = [
                self.out.fd.as_ref().map(AsRawFd::as_raw_fd),
                self.err.fd.as_ref().map(AsRawFd::as_raw_fd),
                exited,
            ]
            .map(|fd| fd.map_or_else(Watch::nothing, Watch::readable));
            let wait_ms = (wake - now).as_millis().clamp(1, 60_000) as u64;
            if let Err(e) = io::wait_ready(&mut fds, Duration::from_millis(wait_ms)) {
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Ended::Closed;
            }
            if fds[0].is_ready() && self.out.read_ready() && sniffing {
                match sniff(&self.out.kept) {
                    Sniff::Undecided => {}
                    Sniff::Sync => sniffing = false,
                    Sniff::Async(timeout) => return Ended::Declared(timeout),
                }
            }
            if fds[0].is_ready() && self.out.fd.is_none() {
                sniffing = false;
            }
            if fds[1].is_ready() {
                self.err.read_ready();
            }
            if fds[2].is_ready() {
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
                .map(|ms| Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn<'a>(command: &'a str, stdin: &'a [u8], timeout_ms: u64) -> Spawn<'a> {
        let argv: &'static [String] = Box::leak(Box::new([
            "/bin/sh".to_string(),
            "-c".to_string(),
            command.to_string(),
        ]));
        Spawn {
            label: command,
            argv,
            cwd: Path::new("/"),
            env: &[],
            stdin,
            timeout: Duration::from_millis(timeout_ms),
            confine: None,
        }
    }

    /// command, stdin, timeout ms, exit, timed out, stdout
    type Case<'a> = (&'a str, &'a [u8], u64, Option<i32>, bool, &'a str);

    /// Every case runs in one batch, in parallel: the batch takes as long as its slowest handler,
    /// and each gets its own result.
    #[test]
    fn one_thread_runs_a_batch_in_parallel_each_to_its_own_end() {
        let big = vec![b'x'; 1 << 20];
        let cases: &[Case<'_>] = &[
            ("cat", b"the event", 5_000, Some(0), false, "the event"),
            ("exit 3", b"", 5_000, Some(3), false, ""),
            ("sleep 0.3; echo late", b"", 5_000, Some(0), false, "late\n"),
            // Never reads a megabyte of stdin: neither it nor the batch blocks.
            ("echo ignored", &big, 5_000, Some(0), false, "ignored\n"),
            // Reads all of it.
            (
                "wc -c | tr -d ' '",
                &big,
                5_000,
                Some(0),
                false,
                "1048576\n",
            ),
            // Ends but leaves a child holding its stdout: answered after the grace period.
            (
                "(sleep 30 &) ; echo done",
                b"",
                5_000,
                Some(0),
                false,
                "done\n",
            ),
            // Killed at its timeout, with what it printed so far.
            ("echo first; sleep 30", b"", 300, None, true, "first\n"),
        ];
        let spawns: Vec<Spawn<'_>> = cases
            .iter()
            .map(|(command, stdin, timeout, ..)| spawn(command, stdin, *timeout))
            .collect();
        let started = Instant::now();
        let ran = run_all(&spawns, false);
        let took = started.elapsed();
        assert_eq!(ran.len(), cases.len());
        for (ran, (command, _, _, exit, timed_out, stdout)) in ran.into_iter().zip(cases) {
            let finished = ran.finished();
            assert_eq!(finished.exit, *exit, "{command}: {finished:?}");
            assert_eq!(finished.timed_out, *timed_out, "{command}: {finished:?}");
            assert_eq!(finished.stdout, *stdout, "{command}: {finished:?}");
        }
        // In sequence it would take at least 0.3 + 0.3 + 0.1 s; in parallel about 0.3 s.
        assert!(took < Duration::from_millis(650), "took {took:?}");
    }

    /// Plugins write timeouts in the thousands of seconds (Claude Code reads seconds), and a
    /// timeout past any clock must not panic the runner.
    #[test]
    fn any_timeout_is_safe() {
        for timeout in [
            Duration::from_secs(3_600),
            Duration::from_secs(86_400 * 1_000),
            Duration::MAX,
        ] {
            let ran = run(
                &Spawn {
                    timeout,
                    ..spawn("exit 4", b"", 0)
                },
                false,
            )
            .finished();
            assert_eq!(ran.exit, Some(4), "{timeout:?}");
        }
    }

    #[test]
    fn output_past_the_cap_is_dropped_and_reported() {
        let ran = run(&spawn("head -c 3000000 /dev/zero", b"", 10_000), false).finished();
        assert_eq!(ran.exit, Some(0));
        assert!(ran.truncated);
        assert_eq!(ran.stdout.len(), OUTPUT_CAP);
    }

    #[test]
    fn a_first_line_declaring_async_hands_the_handler_back_running() {
        let ran = run(
            &spawn(
                "echo '{\"async\": true, \"asyncTimeout\": 500}'; sleep 1",
                b"",
                5_000,
            ),
            true,
        );
        let Ran::Declared(handoff) = ran else {
            panic!("not handed back");
        };
        assert_eq!(handoff.timeout, Some(Duration::from_millis(500)));
        process::kill_group(handoff.group);
    }

    /// Confined on every spawn path: the batch's first handlers are forked (platform::spawn::start),
    /// its last is started waiting for its exec (platform::spawn::start_waiting); each gets its own TMPDIR.
    #[test]
    fn every_spawn_path_confines() {
        use amplihack_platform::confine::{Network, Rules, Support, support};
        if !matches!(support(), Support::Full { .. }) {
            println!("SKIPPED no Landlock ABI 6 on this kernel");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "s").expect("write");
        let rules = Rules {
            read: vec![PathBuf::from("/")],
            write: vec![PathBuf::from("/dev/null")],
            hidden: vec![secret.clone()],
            network: Network::None,
            ..Rules::default()
        };
        let command = format!(
            "cat '{}' 2>/dev/null || echo refused; echo t > \"$TMPDIR/t\" && echo \"$TMPDIR\"",
            secret.display()
        );
        let spawns: Vec<Spawn<'_>> = (0..3)
            .map(|_| Spawn {
                confine: Some(&rules),
                ..spawn(&command, b"", 5_000)
            })
            .collect();
        let mut tmps = Vec::new();
        for ran in run_all(&spawns, false) {
            let finished = ran.finished();
            let mut lines = finished.stdout.lines();
            assert_eq!(lines.next(), Some("refused"), "{finished:?}");
            let tmp = lines.next().unwrap_or_default().to_string();
            assert!(tmp.contains("amplihack-handler-"), "{finished:?}");
            assert!(!Path::new(&tmp).exists(), "removed: {tmp}");
            tmps.push(tmp);
        }
        tmps.dedup();
        assert_eq!(tmps.len(), 3, "each its own: {tmps:?}");
        let unconfined = run(&spawn(&command, b"", 5_000), false).finished();
        assert!(unconfined.stdout.starts_with('s'), "{unconfined:?}");
    }

    #[test]
    fn a_command_that_cannot_start_says_why() {
        let ran = run(
            &Spawn {
                cwd: Path::new("/no/such/dir"),
                ..spawn("true", b"", 1_000)
            },
            false,
        )
        .finished();
        assert!(ran.spawn_error.is_some(), "{ran:?}");
    }
}
