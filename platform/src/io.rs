//! Standard streams, pipes and waiting for descriptors to be ready.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Waits until standard input has something to read, or was closed; false only when it was
/// closed with nothing written. Anything but a pipe (a file, a terminal) counts as arrived, as
/// does a wait the system refuses.
pub fn stdin_arrives() -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: poll on one pollfd of our own, its length passed with it.
        let ready = unsafe { libc::poll(&mut fd, 1, -1) };
        if ready >= 0 {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true;
        }
    }
    let mut waiting: libc::c_int = 0;
    // SAFETY: FIONREAD stores the byte count into our own integer.
    let known = unsafe { libc::ioctl(0, libc::FIONREAD, &mut waiting) } == 0;
    !(known && waiting == 0 && fd.revents & libc::POLLHUP != 0)
}

/// Makes reads and writes on `fd` return at once (`WouldBlock`) instead of waiting. Best effort.
pub fn set_nonblocking(fd: BorrowedFd<'_>) {
    // SAFETY: fcntl on an open descriptor; no memory is involved.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Writes what `fd` takes now of `bytes` (one write(2)); how many bytes went.
pub fn write_some(fd: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: writing from our own slice, its length passed with it, to an open descriptor.
    let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// Reads what `fd` has now into `buffer` (one read(2)); how many bytes came, 0 at end of file.
pub fn read_some(fd: BorrowedFd<'_>, buffer: &mut [u8]) -> io::Result<usize> {
    // SAFETY: reading into our own buffer, its length passed with it, from an open descriptor.
    let n = unsafe { libc::read(fd.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// A second descriptor for this process's standard input (not close-on-exec, as dup(2) makes it).
pub fn duplicate_stdin() -> Option<OwnedFd> {
    // SAFETY: dup(2) of descriptor 0; the new descriptor is owned here.
    let fd = unsafe { libc::dup(0) };
    // SAFETY: a fresh descriptor nobody else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Takes ownership of descriptor `fd`, which the process that started us left open for us, if it
/// is open.
pub fn take_inherited(fd: RawFd) -> Option<OwnedFd> {
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
    // SAFETY: open, left to us by our parent, and owned nowhere else in this process.
    open.then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What one descriptor is watched for by [`wait_ready`], and whether it was ready.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Watch(libc::pollfd);

impl Watch {
    fn new(fd: RawFd, events: libc::c_short) -> Watch {
        Watch(libc::pollfd {
            fd,
            events,
            revents: 0,
        })
    }

    /// Ready when `fd` has something to read, or was closed.
    pub fn readable(fd: RawFd) -> Watch {
        Watch::new(fd, libc::POLLIN)
    }

    /// Ready when `fd` has room to write, or its reader is gone.
    pub fn writable(fd: RawFd) -> Watch {
        Watch::new(fd, libc::POLLOUT)
    }

    /// A place kept in the list that is never ready.
    pub fn nothing() -> Watch {
        Watch::new(-1, libc::POLLIN)
    }

    /// Whether the last [`wait_ready`] found it ready (or closed, or in error).
    pub fn is_ready(&self) -> bool {
        self.0.revents != 0
    }
}

/// Waits until one of `watches` is ready or `timeout` has passed (rounded up to a millisecond,
/// at most a minute); how many are ready. An interrupted wait is an `Interrupted` error.
pub fn wait_ready(watches: &mut [Watch], timeout: Duration) -> io::Result<usize> {
    let ms = timeout.as_micros().div_ceil(1000).min(60_000) as libc::c_int;
    // SAFETY: poll over our own array of pollfd (Watch is one), its length passed with it.
    let ready = unsafe {
        libc::poll(
            watches.as_mut_ptr().cast::<libc::pollfd>(),
            watches.len() as libc::nfds_t,
            ms,
        )
    };
    usize::try_from(ready).map_err(|_| io::Error::last_os_error())
}

/// A pipe, both ends close-on-exec: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_pipe_is_watched_written_and_read_without_blocking() {
        let (read, write) = pipe().expect("pipe");
        set_nonblocking(read.as_fd());
        let mut buffer = [0u8; 8];
        let empty = read_some(read.as_fd(), &mut buffer).expect_err("nothing yet");
        assert_eq!(empty.kind(), io::ErrorKind::WouldBlock);
        let mut watches = [Watch::readable(read.as_raw_fd()), Watch::nothing()];
        assert_eq!(
            wait_ready(&mut watches, Duration::from_millis(1)).expect("wait"),
            0
        );
        assert_eq!(write_some(write.as_fd(), b"abc").expect("write"), 3);
        let mut watches = [
            Watch::readable(read.as_raw_fd()),
            Watch::nothing(),
            Watch::writable(write.as_raw_fd()),
        ];
        assert_eq!(
            wait_ready(&mut watches, Duration::from_secs(5)).expect("wait"),
            2
        );
        assert!(watches[0].is_ready() && !watches[1].is_ready() && watches[2].is_ready());
        assert_eq!(read_some(read.as_fd(), &mut buffer).expect("read"), 3);
        assert_eq!(&buffer[..3], b"abc");
        drop(write);
        // A child forked meanwhile by another test holds the write end until its exec.
        let mut watches = [Watch::readable(read.as_raw_fd())];
        wait_ready(&mut watches, Duration::from_secs(10)).expect("wait");
        assert_eq!(read_some(read.as_fd(), &mut buffer).expect("end"), 0);
    }
}
