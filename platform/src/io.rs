//! Standard streams.

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
