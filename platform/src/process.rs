//! Processes and their groups: ending them, learning that they ended.

use std::os::fd::OwnedFd;

/// Ends every process of the group `leader` leads, at once (it cannot refuse). Nothing happens
/// when the group is gone already, or for leader 0 (which would name our own group).
/// Async-signal-safe.
pub fn kill_group(leader: u32) {
    let Ok(group) = libc::pid_t::try_from(leader) else {
        return;
    };
    if group > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// Asks the process `pid` to stop (SIGTERM: it may clean up first). A process gone already is
/// not an error.
pub fn ask_to_stop(pid: u32) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(pid)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) on one process; no memory is involved.
    if unsafe { libc::kill(pid, libc::SIGTERM) } == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ESRCH) => Ok(()),
        _ => Err(error),
    }
}

/// Asks every process of the group `leader` leads to stop (SIGTERM: each may clean up first).
/// Nothing happens when the group is gone already, or for leader 0. Async-signal-safe.
pub fn terminate_group(leader: u32) {
    let Ok(group) = libc::pid_t::try_from(leader) else {
        return;
    };
    if group > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe { libc::kill(-group, libc::SIGTERM) };
    }
}

/// Whether no process is left in the group `leader` led, once those of our own children in it
/// that have ended are collected (an uncollected child still counts as a member).
/// Async-signal-safe.
pub fn group_gone(leader: u32) -> bool {
    let Ok(group) = libc::pid_t::try_from(leader) else {
        return true;
    };
    if group <= 0 {
        return true;
    }
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid(2) without blocking on our children in that group, into our own integer;
    // kill(2) with signal 0 only asks whether the group has a member.
    unsafe {
        while libc::waitpid(-group, &mut status, libc::WNOHANG) > 0 {}
        libc::kill(-group, 0) != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
}

/// Sleeps `time` on this thread (a signal handled meanwhile may cut it short).
/// Async-signal-safe.
pub fn nap(time: std::time::Duration) {
    let wanted = libc::timespec {
        tv_sec: time.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(time.subsec_nanos() as i32),
    };
    // SAFETY: nanosleep(2) reads our own timespec; the remainder is not asked for.
    unsafe { libc::nanosleep(&wanted, std::ptr::null_mut()) };
}

/// How a child of ours ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it, or it is not ours to wait for any more.
    Signalled,
}

impl Ended {
    /// Its exit code; `None` when a signal ended it.
    pub fn code(self) -> Option<i32> {
        match self {
            Ended::Exited(code) => Some(code),
            Ended::Signalled => None,
        }
    }
}

/// Collects how our child `pid` ended, without waiting: `None` while it runs (or the look was
/// interrupted).
pub fn ended(pid: u32) -> Option<Ended> {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Some(Ended::Signalled);
    };
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid on one child, without blocking, into our own integer.
    let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    if reaped == pid {
        Some(if libc::WIFEXITED(status) {
            Ended::Exited(libc::WEXITSTATUS(status))
        } else {
            Ended::Signalled
        })
    } else if reaped < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
        // Not ours to wait for any more (ECHILD).
        Some(Ended::Signalled)
    } else {
        None
    }
}

/// A descriptor that becomes readable when our child `pid` ends (a pidfd: Linux 5.3 and later);
/// `None` where the system has none (then [`ended`] is asked on a tick).
#[cfg(target_os = "linux")]
pub fn end_notice(pid: u32) -> Option<OwnedFd> {
    use std::os::fd::{FromRawFd, RawFd};
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open(2) on our own child, not yet reaped; the new descriptor is close-on-exec.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a fresh descriptor nobody else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A descriptor that becomes readable when our child `pid` ends; none on this system.
#[cfg(not(target_os = "linux"))]
pub fn end_notice(_pid: u32) -> Option<OwnedFd> {
    None
}

/// Gives the child `command` starts our descriptor `fd` as its descriptor `target` (inherited
/// across exec), whatever number `fd` has.
pub fn pass_descriptor(command: &mut std::process::Command, fd: std::os::fd::RawFd, target: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only dup2/fcntl, which are async-signal-safe and allocate
    // nothing.
    unsafe {
        command.pre_exec(move || {
            let moved = if fd == target {
                libc::fcntl(target, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, target)
            };
            if moved < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// What a Rust program's runtime does before `main` that the hook binary keeps, for a binary
/// whose `main` is its own (`#![no_main]`, `bins/amplihack-hooks`): stdin, stdout and stderr
/// open (each one closed is opened on `/dev/null`, so no file of ours ever becomes fd 1), and
/// SIGPIPE ignored (a write to a reader that went away is an error, not death). What it leaves
/// out is the main thread's stack-overflow report (reading `/proc/self/maps`, an alternate
/// signal stack and two handlers: 17 system calls of the 40 an idle call makes); an overflow
/// still ends the process, by SIGSEGV.
pub fn start_like_std() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll on three pollfd structs we own; a zero timeout never blocks.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
    if polled > 0 {
        for pollfd in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
            // SAFETY: opening /dev/null takes the lowest free descriptor, the closed one.
            let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
            if fd >= 0 && fd != pollfd.fd {
                // SAFETY: both descriptors are ours.
                unsafe {
                    libc::dup2(fd, pollfd.fd);
                    libc::close(fd);
                }
            }
        }
    }
    // SAFETY: setting a signal's disposition to ignore involves no handler code.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Makes this process yield to others: the lowest CPU priority (nice 19) and the lowest
/// best-effort I/O priority (not the idle class, which a disk never idle would starve), for work
/// nobody waits for (the records' writer), so it never competes with the host whose turn
/// just ended. Best effort: a kernel that refuses leaves the priority as it was.
pub fn lower_priority() {
    // SAFETY: plain system calls on this process, no memory passed.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        #[cfg(target_os = "linux")]
        {
            // ioprio_set(IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_BE << 13 | 7).
            const IOPRIO_WHO_PROCESS: libc::c_long = 1;
            const IOPRIO_CLASS_BE: libc::c_long = 2;
            libc::syscall(
                libc::SYS_ioprio_set,
                IOPRIO_WHO_PROCESS,
                0,
                (IOPRIO_CLASS_BE << 13) | 7,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;
    use std::time::{Duration, Instant};

    fn wait_for(pid: u32) -> Ended {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(ended) = ended(pid) {
                return ended;
            }
            assert!(Instant::now() < until, "{pid} did not end");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn an_exit_code_a_killed_group_and_the_end_notice() {
        // Reaped by `ended`, not by std: only the pid is kept.
        let pid = Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .expect("sh")
            .id();
        assert_eq!(wait_for(pid), Ended::Exited(7));
        assert_eq!(wait_for(pid), Ended::Signalled, "reaped: not ours");

        let pid = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep")
            .id();
        let notice = end_notice(pid);
        assert_eq!(ended(pid), None, "still running");
        kill_group(pid);
        kill_group(0); // names our own group: nothing happens
        if let Some(notice) = notice {
            use std::os::fd::AsRawFd;
            let mut watch = [crate::io::Watch::readable(notice.as_raw_fd())];
            let ready = crate::io::wait_ready(&mut watch, Duration::from_secs(10)).expect("wait");
            assert_eq!(ready, 1);
        }
        assert_eq!(wait_for(pid), Ended::Signalled);
        assert_eq!(Ended::Exited(3).code(), Some(3));
        assert_eq!(Ended::Signalled.code(), None);
    }
}
