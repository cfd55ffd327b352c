//! Processes and their groups.

/// Ends every process of the group `leader` leads, at once (it cannot refuse). Nothing happens
/// when the group is gone already.
pub fn kill_group(leader: u32) {
    let Ok(group) = libc::pid_t::try_from(leader) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}
