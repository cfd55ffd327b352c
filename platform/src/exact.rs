//! Showing a process exactly the bytes that were checked: each pinned file's verified private
//! copy bind-mounted, read-only, over the file's path, in a mount namespace of the process's own.
//! The process (a handler) and what it starts read the path by name and get the copy, whatever
//! is written to the file meanwhile; nobody else sees the mounts.
//!
//! Prepared in the parent ([`Overlay::new`]: every path and the id maps as C strings, before
//! `fork`), entered in the child between `fork` and `exec` ([`Entry::enter`]: system calls only,
//! nothing allocated). The child must be a real `fork` child (a new user namespace needs a
//! process with one thread, and a `vfork` child shares its parent's memory): both spawn paths of
//! `crate::spawn` fork.
//!
//! Entered as a user other than root: `unshare(CLONE_NEWUSER | CLONE_NEWNS)`, `setgroups` denied,
//! the user's own ids mapped to themselves (so the program started keeps no capability over the
//! mounts); as root: `unshare(CLONE_NEWNS)` alone. Then every mount is made private (nothing
//! reaches the parent's namespace), and each copy is bound over its path and made read-only.
//!
//! What it does not cover: a file renamed over a pinned path (or a directory on its way renamed)
//! *after* the mounts are made and before the process opens it, by a process outside the
//! namespace (inside, the rename fails: `EBUSY` on a mountpoint). The kernel then detaches the
//! mount on the replaced name in every namespace (Linux 3.18 on), and the process opens the new
//! file. Writes into the file, and any change before the mounts, are covered. A [`Witness`]
//! taken before the process starts tells afterwards whether any pinned path changed meanwhile,
//! so that the process's answer is not used.
//!
//! Linux only; elsewhere [`support`] says why not and nothing is prepared.

use std::ffi::CString;
use std::path::{Path, PathBuf};

/// Whether this system can show a process exactly the checked bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Available,
    /// Not here, and why (user namespaces switched off, a kernel without them, not Linux).
    Absent {
        why: String,
    },
}

/// A file's pinned path and its verified private copy.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pin {
    pub path: PathBuf,
    pub copy: PathBuf,
}

/// Prepared mounts: what [`Entry::enter`] does in the child. Kept by the parent until the child
/// has started.
#[derive(Debug)]
pub struct Overlay {
    /// (copy, path) of each pin.
    mounts: Vec<(CString, CString)>,
    /// `None` as root (no user namespace); else the lines for `uid_map` and `gid_map`.
    maps: Option<(CString, CString)>,
}

/// What the child needs of an [`Overlay`]: valid while its [`Overlay`] lives.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    overlay: *const Overlay,
}

// SAFETY: an Entry only reads its Overlay, which the parent keeps unchanged and alive until the
// child has started (the child has its own copy of the memory after fork).
unsafe impl Send for Entry {}
// SAFETY: as above: read only.
unsafe impl Sync for Entry {}

fn c_path(path: &Path) -> std::io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a NUL byte in {}", path.display()),
        )
    })
}

impl Overlay {
    /// The mounts for `pins` (absolute paths).
    pub fn new(pins: &[Pin]) -> std::io::Result<Overlay> {
        let mounts = pins
            .iter()
            .map(|pin| Ok((c_path(&pin.copy)?, c_path(&pin.path)?)))
            .collect::<std::io::Result<Vec<_>>>()?;
        // SAFETY: getuid and getgid only return numbers.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let maps = (uid != 0).then(|| {
            (
                CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default(),
                CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default(),
            )
        });
        Ok(Overlay { mounts, maps })
    }

    pub fn entry(&self) -> Entry {
        Entry {
            overlay: std::ptr::from_ref(self),
        }
    }

    /// How many files it pins.
    pub fn len(&self) -> usize {
        self.mounts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mounts.is_empty()
    }
}

impl Entry {
    /// Puts the calling process, for good, in a mount namespace of its own where each pinned
    /// path shows its copy, read-only. Async-signal-safe and allocation-free: made to be called
    /// in a `fork` child before `exec` (never in a `vfork` child, nor with threads running).
    pub fn enter(self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: the Overlay outlives the child's start (see `Entry`).
            let overlay = unsafe { &*self.overlay };
            // SAFETY: system calls on C strings prepared before fork.
            unsafe { linux::enter(overlay) }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = self;
            Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::Overlay;
    use std::ffi::CStr;

    fn check(ret: libc::c_int) -> std::io::Result<()> {
        if ret < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Writes `text` to the file `path` (a /proc file of our own).
    unsafe fn write_file(path: &CStr, text: &CStr) -> std::io::Result<()> {
        // SAFETY: open, write, close on a C string and a byte slice prepared before fork.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            check(fd)?;
            let bytes = text.to_bytes();
            let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
            let error = std::io::Error::last_os_error();
            libc::close(fd);
            if written != bytes.len() as isize {
                return Err(error);
            }
        }
        Ok(())
    }

    pub(super) unsafe fn enter(overlay: &Overlay) -> std::io::Result<()> {
        // SAFETY: system calls on C strings prepared before fork; no allocation.
        unsafe {
            match &overlay.maps {
                None => check(libc::unshare(libc::CLONE_NEWNS))?,
                Some((uid_map, gid_map)) => {
                    check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
                    write_file(c"/proc/self/setgroups", c"deny")?;
                    write_file(c"/proc/self/uid_map", uid_map)?;
                    write_file(c"/proc/self/gid_map", gid_map)?;
                }
            }
            // Nothing mounted here reaches the namespace we came from.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for (copy, path) in &overlay.mounts {
                check(libc::mount(
                    copy.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
                check(libc::mount(
                    std::ptr::null(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }
}

/// What each pinned path named just before a process was started with its mounts, to tell
/// afterwards whether a pinned path changed during the run (a file renamed over it, which
/// detaches its mount, or written). Each file is held open (`O_PATH`) meanwhile, so its inode
/// number cannot pass to another file and make a replaced path look unchanged.
#[derive(Debug)]
pub struct Witness {
    seen: Vec<(PathBuf, Option<std::fs::File>, Option<Identity>)>,
}

/// What a path's file is: device and inode, size, last change of its bytes and of its inode
/// (a rename or link changes the latter too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

impl Witness {
    /// Each pin's path as it is now: opened `O_PATH` (no read, no side effect) and its identity.
    /// A path that cannot be opened is remembered as absent.
    pub fn new(pins: &[Pin]) -> Witness {
        use std::os::unix::fs::OpenOptionsExt;
        let seen = pins
            .iter()
            .map(|pin| {
                let held = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
                    .open(&pin.path)
                    .ok();
                let identity = held
                    .as_ref()
                    .and_then(|file| file.metadata().ok())
                    .map(|meta| Identity::of(&meta));
                (pin.path.clone(), held, identity)
            })
            .collect();
        Witness { seen }
    }

    /// The first pinned path whose file is not the one, or not as it was, when this was taken
    /// (one `stat` each); `None`: all unchanged.
    pub fn changed(&self) -> Option<&Path> {
        self.seen.iter().find_map(|(path, _, before)| {
            let now = std::fs::metadata(path).ok().map(|meta| Identity::of(&meta));
            (now != *before).then_some(path.as_path())
        })
    }
}

/// Whether [`Entry::enter`] works here: tried once in a forked child (a bind mount of a file
/// over itself in a namespace of its own), remembered for the process.
pub fn support() -> Support {
    static SUPPORT: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
    SUPPORT.get_or_init(probe).clone()
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Support {
    Support::Absent {
        why: "this operating system has no mount namespaces; amplihack pins exact bytes only on Linux".into(),
    }
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    let file = PathBuf::from("/proc/self/exe");
    let Ok(real) = file.canonicalize() else {
        return Support::Absent {
            why: "/proc is not mounted".into(),
        };
    };
    let pin = Pin {
        path: real.clone(),
        copy: real,
    };
    let Ok(overlay) = Overlay::new(std::slice::from_ref(&pin)) else {
        return Support::Absent {
            why: "the probe's path holds a NUL byte".into(),
        };
    };
    let entry = overlay.entry();
    // SAFETY: fork; the child makes system calls on memory prepared before fork and ends with
    // _exit, reporting only its errno as the exit code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Support::Absent {
            why: format!("could not fork to try: {}", std::io::Error::last_os_error()),
        };
    }
    if pid == 0 {
        let code = match entry.enter() {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(libc::EIO).clamp(1, 255),
        };
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(code) }
    }
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid on our own child into our own integer.
    let reaped = loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break r;
        }
    };
    if reaped == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Support::Available;
    }
    let errno = if reaped == pid && libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        libc::EIO
    };
    let cause = std::io::Error::from_raw_os_error(errno);
    Support::Absent {
        why: format!(
            "this system does not let a process make a mount namespace of its own ({cause}; unprivileged user namespaces may be switched off: sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `script` with `sh -c` in a fork child that entered `overlay`: whether it succeeded
    /// and its stdout; `None` when entering failed (std reports it as a failure to spawn).
    fn run_in(overlay: &Overlay, script: &str) -> Option<(bool, String)> {
        use std::os::unix::process::CommandExt;
        let entry = overlay.entry();
        let mut command = std::process::Command::new("/bin/sh");
        command.args(["-c", script]);
        // SAFETY: enter is async-signal-safe and allocates nothing; std forks for pre_exec.
        unsafe { command.pre_exec(move || entry.enter()) };
        let output = command.output().ok()?;
        Some((
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        ))
    }

    #[test]
    fn support_is_reported() {
        match support() {
            Support::Available => {}
            Support::Absent { why } => assert!(!why.is_empty()),
        }
    }

    /// The process reads the copy at the path, cannot write it, and the path outside is
    /// untouched: no mount leaked to our namespace.
    #[test]
    fn a_child_reads_the_copy_at_the_path_read_only_and_nothing_leaks() {
        if support() != Support::Available {
            println!("SKIPPED no mount namespaces here: {:?}", support());
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        let (path, copy) = (root.join("check.sh"), root.join("copy"));
        std::fs::write(&path, "echo untrusted\n").expect("write");
        std::fs::write(&copy, "echo trusted\n").expect("write");
        let overlay = Overlay::new(&[Pin {
            path: path.clone(),
            copy,
        }])
        .expect("prepared");
        let quoted = path.display().to_string();
        let (ok, out) = run_in(&overlay, &format!("sh '{quoted}'")).expect("entered");
        assert!(ok);
        assert_eq!(out, "trusted\n");
        let (ok, _) = run_in(&overlay, &format!("echo x >> '{quoted}'")).expect("entered");
        assert!(!ok, "the copy is read-only");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "echo untrusted\n",
            "outside, the file is as it was"
        );
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        assert!(!mounts.contains(&quoted), "a mount leaked: {mounts}");
    }

    /// A witness sees a file renamed over a pinned path, a write into it, and a path put back
    /// as it was with the same inode (a link kept aside and renamed back) as changed; nothing
    /// done, as unchanged. Prints what one check costs.
    #[test]
    fn a_witness_sees_every_change_of_a_pinned_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("check.sh");
        let pin = |path: &Path| Pin {
            path: path.to_path_buf(),
            copy: path.to_path_buf(),
        };
        type Change = fn(&Path);
        let cases: [(&str, Change, bool); 5] = [
            ("nothing", |_| {}, false),
            ("read", |p| drop(std::fs::read(p)), false),
            (
                "renamed over",
                |p| {
                    std::fs::write(p.with_extension("new"), "echo trusted\n").expect("write");
                    std::fs::rename(p.with_extension("new"), p).expect("rename");
                },
                true,
            ),
            (
                "written in place",
                |p| std::fs::write(p, "echo trusted\n").expect("write"),
                true,
            ),
            (
                "renamed over, then the original put back",
                |p| {
                    std::fs::hard_link(p, p.with_extension("kept")).expect("link");
                    std::fs::write(p.with_extension("new"), "echo other\n").expect("write");
                    std::fs::rename(p.with_extension("new"), p).expect("rename");
                    std::fs::rename(p.with_extension("kept"), p).expect("back");
                },
                true,
            ),
        ];
        for (what, change, changed) in cases {
            std::fs::write(&path, "echo trusted\n").expect("write");
            let witness = Witness::new(&[pin(&path)]);
            change(&path);
            assert_eq!(witness.changed().is_some(), changed, "{what}");
        }
        let gone = Witness::new(&[pin(&dir.path().join("gone"))]);
        assert_eq!(gone.changed(), None, "absent before and after");
        let pins: Vec<Pin> = (0..8).map(|_| pin(&path)).collect();
        let witness = Witness::new(&pins);
        let rounds = 1000;
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            assert_eq!(witness.changed(), None);
        }
        let each = started.elapsed() / rounds;
        println!(
            "checking 8 pinned paths after a run: {:.1} us (goal under 50 us)",
            each.as_secs_f64() * 1e6
        );
    }

    /// A pinned path that is gone: the child fails to enter (it does not run).
    #[test]
    fn a_missing_path_fails_the_entry() {
        if support() != Support::Available {
            println!("SKIPPED no mount namespaces here");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let copy = dir.path().join("copy");
        std::fs::write(&copy, "x").expect("write");
        let overlay = Overlay::new(&[Pin {
            path: dir.path().join("gone"),
            copy,
        }])
        .expect("prepared");
        assert_eq!(run_in(&overlay, "echo ran"), None);
    }
}
