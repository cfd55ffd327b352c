//! Starting a program in a process group of its own, its stdin, stdout and stderr our pipes, and
//! optionally confined (`crate::confine`): amplihack's handlers.
//!
//! [`start`] does not wait for it to start: `fork` and `execve`, the parent going on at
//! once. `std::process::Command` (like `posix_spawn`) holds the parent until the child has called
//! `execve`, to report a failure to start; starting 4 handlers then waits for 4 executable loads
//! one after the other, on a busy machine each behind a wait for a core. Here a failure to start
//! comes back through a close-on-exec pipe that the caller polls with the handler's other pipes.
//!
//! Everything the child needs (paths, arguments, environment) is prepared before `fork`: between
//! `fork` and `execve` the child calls only async-signal-safe functions (the process has threads).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::confine::Entry;

/// A started handler: its pid (also its process group's id), and our ends of its pipes.
pub struct Started {
    pub pid: u32,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// Readable with the `errno` of a failed `execve` (4 bytes), or at end of file once the
    /// handler runs; `None` when it was started by [`start_waiting`] (it runs already).
    pub exec_error: Option<OwnedFd>,
}

/// Starts a handler as [`start`] does, but waits for it to have called `execve`
/// (`std::process::Command`; the child clears its signal mask first, so std forks rather than
/// vforks): for one handler, or the last of a batch, when there is nothing else to start
/// meanwhile.
pub fn start_waiting(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    confine: Option<Entry>,
) -> std::io::Result<Started> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let Some((program, args)) = argv.split_first() else {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    // The caller holds the stop signals blocked while it starts and records the handler
    // (crate::signals::hold_stop_signals), and a vfork child inherits that mask: the handler starts with
    // none blocked, or a plugin's `signal.alarm` never fires and `kill` does not stop it.
    // A confined handler enters its ruleset last, after std has set up its pipes and directory.
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (sigemptyset, sigprocmask on a local set; prctl and
    // landlock_restrict_self on the prepared ruleset's descriptor), allocating nothing.
    unsafe {
        command.pre_exec(move || {
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            match confine {
                Some(entry) => entry.enter(),
                None => Ok(()),
            }
        });
    }
    let mut child = command.spawn()?;
    let missing = || std::io::Error::other("a pipe to the handler was not set up");
    // The Child is not kept: the caller reaps the pid itself (waitpid), and dropping a Child
    // neither waits for nor kills it.
    Ok(Started {
        pid: child.id(),
        stdin: child.stdin.take().map(OwnedFd::from).ok_or_else(missing)?,
        stdout: child.stdout.take().map(OwnedFd::from).ok_or_else(missing)?,
        stderr: child.stderr.take().map(OwnedFd::from).ok_or_else(missing)?,
        exec_error: None,
    })
}

fn c_string(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a NUL byte in an argument",
        )
    })
}

/// `program` as `execvp` would find it on `path` (a name with a `/` is used as it is).
fn resolve(program: &str, path: Option<&OsStr>) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.is_empty() {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    }
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = path
        .map(OsStr::to_os_string)
        .unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// Starts `argv` in `cwd` with our environment plus `env`, in a process group of its own, under
/// `confine` when given (entered in the child just before `execve`).
pub fn start(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    confine: Option<Entry>,
) -> std::io::Result<Started> {
    let Some(program) = argv.first() else {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    };
    let mut environment: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (key, value) in env {
        match environment
            .iter_mut()
            .find(|(k, _)| k.as_os_str() == OsStr::new(key))
        {
            Some(entry) => entry.1 = OsString::from(value),
            None => environment.push((OsString::from(key), OsString::from(value))),
        }
    }
    let path_var = environment
        .iter()
        .find(|(k, _)| k.as_os_str() == OsStr::new("PATH"))
        .map(|(_, v)| v.clone());
    let resolved = resolve(program, path_var.as_deref())?;
    let c_program = c_string(resolved.as_os_str().as_bytes())?;
    let c_args = argv
        .iter()
        .map(|a| c_string(a.as_bytes()))
        .collect::<std::io::Result<Vec<_>>>()?;
    let c_env = environment
        .into_iter()
        .map(|(k, v)| {
            let mut entry = k.into_vec();
            entry.push(b'=');
            entry.extend(v.into_vec());
            c_string(&entry)
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    let c_cwd = c_string(cwd.as_os_str().as_bytes())?;
    let mut arg_ptrs: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = c_env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());

    let (stdin_r, stdin_w) = crate::io::pipe()?;
    let (stdout_r, stdout_w) = crate::io::pipe()?;
    let (stderr_r, stderr_w) = crate::io::pipe()?;
    let (error_r, error_w) = crate::io::pipe()?;
    let fds = [
        stdin_r.as_raw_fd(),
        stdout_w.as_raw_fd(),
        stderr_w.as_raw_fd(),
        error_w.as_raw_fd(),
    ];

    // SAFETY: fork; the child runs only async-signal-safe calls on data prepared above, then
    // execve or _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: in the child, async-signal-safe calls only.
        unsafe { child(&fds, &c_cwd, &c_program, (&arg_ptrs, &env_ptrs), confine) }
    }
    // The parent: its own group too (either side may run first), and our ends only.
    // SAFETY: setpgid on our just-forked child.
    unsafe { libc::setpgid(pid, pid) };
    drop((stdin_r, stdout_w, stderr_w, error_w));
    // Reading the outcome never blocks.
    crate::io::set_nonblocking(error_r.as_fd());
    Ok(Started {
        // Positive: fork returned in the parent.
        pid: pid.unsigned_abs(),
        stdin: stdin_w,
        stdout: stdout_r,
        stderr: stderr_r,
        exec_error: Some(error_r),
    })
}

/// In the child: the errno of what just failed goes to the error pipe, and the child ends.
fn fail(error_w: RawFd) -> ! {
    let errno = std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    let bytes = errno.to_ne_bytes();
    // SAFETY: write and _exit are async-signal-safe.
    unsafe {
        libc::write(error_w, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(127)
    }
}

/// The child's side: group, directory, descriptors, signals, then execve; a failure's errno goes
/// to the error pipe.
///
/// # Safety
/// Called in the child right after `fork`; every call here is async-signal-safe.
unsafe fn child(
    fds: &[RawFd; 4],
    cwd: &CString,
    program: &CString,
    (argv, envp): (&[*const libc::c_char], &[*const libc::c_char]),
    confine: Option<Entry>,
) -> ! {
    let [stdin_r, stdout_w, stderr_w, error_w] = *fds;
    // SAFETY: async-signal-safe calls on descriptors and strings prepared before fork.
    unsafe {
        libc::setpgid(0, 0);
        if libc::chdir(cwd.as_ptr()) < 0 {
            fail(error_w);
        }
        for (from, to) in [(stdin_r, 0), (stdout_w, 1), (stderr_w, 2)] {
            if libc::dup2(from, to) < 0 {
                fail(error_w);
            }
        }
        // Rust ignores SIGPIPE; a handler gets the default, as from any shell. Signals blocked
        // here would stay blocked in the handler.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        // Confined last: two system calls on the ruleset prepared before fork.
        if let Some(entry) = confine
            && entry.enter().is_err()
        {
            fail(error_w);
        }
        libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr());
    }
    fail(error_w)
}

/// Starts `program` with `args` and our environment, detached: a process group of its own,
/// stdin, stdout and stderr on `/dev/null` (so a host reading our pipes never waits for it), and
/// not waited for, not even for its `execve` (`fork`, the parent going on at once: a hook that
/// starts a background writer answers without waiting for an executable to load, 0.2-1 ms on a
/// busy 2-core machine). A failure to fork is returned; one to `execve` ends the child with 127.
pub fn start_detached(program: &Path, args: &[&OsStr]) -> std::io::Result<()> {
    let c_program = c_string(program.as_os_str().as_bytes())?;
    let c_args = std::iter::once(program.as_os_str())
        .chain(args.iter().copied())
        .map(|a| c_string(a.as_bytes()))
        .collect::<std::io::Result<Vec<_>>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    let null = null.as_raw_fd();
    // SAFETY: fork; the child runs only async-signal-safe calls on data prepared above, then
    // execve or _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: in the child, async-signal-safe calls only; `environ` is the parent's.
        unsafe {
            libc::setpgid(0, 0);
            for to in 0..3 {
                libc::dup2(null, to);
            }
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            unsafe extern "C" {
                static environ: *const *const libc::c_char;
            }
            libc::execve(c_program.as_ptr(), arg_ptrs.as_ptr(), environ);
            libc::_exit(127)
        }
    }
    // SAFETY: setpgid on our just-forked child (either side may run first).
    unsafe { libc::setpgid(pid, pid) };
    Ok(())
}
