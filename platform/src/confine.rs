//! Confining a process started by amplihack: what it may read, what it may write, which TCP
//! ports it may reach. Prepared in the parent ([`prepare`]: every path opened, every rule made,
//! before `fork`), entered in the child between `fork` and `exec` ([`Entry::enter`]: two system
//! calls, nothing allocated), kept by everything the child then runs.
//!
//! Linux: the kernel's Landlock LSM (the `landlock` crate builds the ruleset). Landlock only
//! grants: a process in a ruleset can open what some rule allows and nothing else. "Everything but
//! these secrets" is therefore written as the grants that cover everything else: from each
//! readable root, a directory holding no hidden path is granted whole, a hidden path is skipped,
//! and a directory on the way to a hidden path is not granted itself but entry by entry, each
//! entry in turn by the same rule (so `~` is granted as its entries but `.ssh`, `.config` as its
//! entries but `gh`). A link among those entries that leads to, into or above a hidden path is not
//! granted. A directory on the way holds at most [`MAX_ENTRIES`] entries that are granted; past it
//! the rest are not readable (a handler is refused more, never allowed more).
//!
//! Elsewhere nothing is confined: [`support`] says so and [`prepare`] returns `None`.

use std::path::{Path, PathBuf};

/// The most entries of one directory on the way to a hidden path that are granted one by one.
pub const MAX_ENTRIES: usize = 4_096;

/// What a confined process may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Hierarchies it may read and execute from (a file, or a directory and all beneath it).
    pub read: Vec<PathBuf>,
    /// Hierarchies it may read, execute, create in, write and remove (a device such as
    /// `/dev/null` may be named alone).
    pub write: Vec<PathBuf>,
    /// Paths it may never open, even beneath `read` or `write`: each is left out of every grant.
    /// A hidden path that does not exist is ignored; one that is a link is hidden at its target
    /// too.
    pub hidden: Vec<PathBuf>,
    /// Readable as named, hidden or not (what the user agreed to).
    pub also_read: Vec<PathBuf>,
    /// Writable as named, hidden or not (what the user agreed to).
    pub also_write: Vec<PathBuf>,
    pub network: Network,
    /// Files shown as their verified private copies, read-only (`crate::exact`), entered before
    /// the ruleset. Empty where [`crate::exact::support`] is absent.
    pub pinned: Vec<crate::exact::Pin>,
}

/// Which TCP it may use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Network {
    /// No TCP connect or bind at all.
    #[default]
    None,
    /// Connect to these remote ports (any address) and bind these local ports, nothing else.
    Ports { connect: Vec<u16>, bind: Vec<u16> },
    /// Any network use.
    Any,
}

/// What confinement this system provides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Files, TCP and signals are confined.
    Full { abi: i32 },
    /// Confined, but not everything: what is not (`missing`, one phrase each).
    Partial {
        abi: i32,
        missing: Vec<&'static str>,
    },
    /// Nothing is confined, and why.
    Absent { why: String },
}

/// What a ruleset could not be made of.
#[derive(Debug)]
pub struct ConfineError {
    pub what: String,
    pub cause: String,
}

impl std::fmt::Display for ConfineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot confine: {}: {}", self.what, self.cause)
    }
}

impl std::error::Error for ConfineError {}

/// A prepared confinement: what [`Entry::enter`] puts a child under. Kept by the parent until the
/// child has started; one may serve any number of children.
#[derive(Debug)]
pub struct Confinement {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// The pinned files' mounts, when there are any.
    exact: Option<crate::exact::Overlay>,
}

/// What the child needs of a [`Confinement`]: copied into a `pre_exec` closure or a forked child.
/// Valid while its [`Confinement`] lives.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::RawFd,
    exact: Option<crate::exact::Entry>,
}

impl Confinement {
    pub fn entry(&self) -> Entry {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            Entry {
                fd: self.fd.as_raw_fd(),
                exact: self.exact.as_ref().map(crate::exact::Overlay::entry),
            }
        }
        #[cfg(not(target_os = "linux"))]
        Entry {
            exact: self.exact.as_ref().map(crate::exact::Overlay::entry),
        }
    }

    /// How many files it shows as their verified copies.
    pub fn pinned(&self) -> usize {
        self.exact.as_ref().map_or(0, crate::exact::Overlay::len)
    }
}

impl Entry {
    /// Puts the calling process, and everything it starts, under the confinement for good (and
    /// forbids it to gain privileges through set-user-id programs, which the kernel requires):
    /// first its pinned files' mounts (a confined process may not mount), then the ruleset.
    /// Async-signal-safe and allocation-free: made to be called between `fork` and `exec`, in a
    /// real `fork` child.
    pub fn enter(self) -> std::io::Result<()> {
        if let Some(exact) = self.exact {
            exact.enter()?;
        }
        #[cfg(target_os = "linux")]
        {
            // SAFETY: prctl and landlock_restrict_self(2) take integers only; the descriptor is
            // the prepared ruleset, kept open by its Confinement.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, self.fd, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

/// The kernel's Landlock ABI version, or why there is none.
#[cfg(target_os = "linux")]
fn kernel_abi() -> Result<i32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset(2) with a null attribute and the VERSION flag only returns
    // a number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version >= 1 {
        return Ok(version as i32);
    }
    Err(match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)".into()
        }
        _ => "this kernel has no Landlock (Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK)".into(),
    })
}

/// What this system confines.
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        match kernel_abi() {
            Err(why) => Support::Absent { why },
            Ok(abi) => {
                let mut missing = Vec::new();
                if abi < 2 {
                    missing.push("moving or linking a file into another directory is refused even inside the project (Landlock ABI 2)");
                }
                if abi < 3 {
                    missing.push("truncating a readable file (Landlock ABI 3)");
                }
                if abi < 4 {
                    missing.push("network: TCP connect and bind (Landlock ABI 4)");
                }
                if abi < 6 {
                    missing.push(
                        "signals to processes outside, and abstract Unix sockets (Landlock ABI 6)",
                    );
                }
                if missing.is_empty() {
                    Support::Full { abi }
                } else {
                    Support::Partial { abi, missing }
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    Support::Absent {
        why: "this operating system has no Landlock; amplihack confines handlers only on Linux"
            .into(),
    }
}

/// Makes the ruleset for `rules`: `None` where the system confines nothing ([`support`]).
pub fn prepare(rules: &Rules) -> Result<Option<Confinement>, ConfineError> {
    #[cfg(target_os = "linux")]
    {
        if kernel_abi().is_err() {
            return Ok(None);
        }
        let Some(fd) = linux::prepare(rules)? else {
            return Ok(None);
        };
        let exact = match rules.pinned.is_empty() {
            true => None,
            false => Some(
                crate::exact::Overlay::new(&rules.pinned)
                    .map_err(|e| linux::error("the pinned files", e))?,
            ),
        };
        Ok(Some(Confinement { fd, exact }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = rules;
        Ok(None)
    }
}

/// The paths to grant so as to cover `roots` but no `hidden` path, in the order found; see the
/// module's description. `hidden` must be absolute and free of links
/// ([`real_hidden`]).
pub fn grants(roots: &[PathBuf], hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        let Ok(real) = root.canonicalize() else {
            continue;
        };
        if real.is_dir() {
            cover(&real, hidden, &mut out);
        } else if !conflicts(&real, hidden) {
            out.push(root.clone());
        }
    }
    out
}

/// `path` is a hidden path, lies beneath one, or holds one.
fn conflicts(path: &Path, hidden: &[PathBuf]) -> bool {
    hidden
        .iter()
        .any(|h| h.starts_with(path) || path.starts_with(h))
}

/// Grants for the real directory `dir`.
fn cover(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    if hidden.iter().any(|h| dir.starts_with(h)) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten().take(MAX_ENTRIES) {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_symlink() => {
                // Granted where it leads, unless that is a hidden path, beneath one or above one.
                if let Ok(target) = path.canonicalize()
                    && !conflicts(&target, hidden)
                {
                    out.push(path);
                }
            }
            Ok(kind) if kind.is_dir() => cover(&path, hidden, out),
            Ok(_) => {
                if !hidden.contains(&path) {
                    out.push(path);
                }
            }
            Err(_) => {}
        }
    }
}

/// The hidden paths as [`grants`] compares them: each one's place with its parent's links
/// resolved, and, when it is itself a link, where it leads.
pub fn real_hidden(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in hidden {
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        if let (Some(parent), Some(name)) = (path.parent(), path.file_name())
            && let Ok(parent) = parent.canonicalize()
        {
            out.push(parent.join(name));
        }
        if let Ok(real) = path.canonicalize() {
            out.push(real);
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{ConfineError, Network, Rules, grants, real_hidden};
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
        Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    };
    use std::os::fd::OwnedFd;

    /// The newest ABI the crate knows: on an older kernel what it lacks is left out (best effort,
    /// reported by `support`).
    const ABI_WANTED: ABI = ABI::V10;

    pub(super) fn error(what: impl Into<String>, cause: impl std::fmt::Display) -> ConfineError {
        ConfineError {
            what: what.into(),
            cause: cause.to_string(),
        }
    }

    pub(super) fn prepare(rules: &Rules) -> Result<Option<OwnedFd>, ConfineError> {
        let hidden = real_hidden(&rules.hidden);
        let read = AccessFs::from_read(ABI_WANTED);
        let all = AccessFs::from_all(ABI_WANTED);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(|e| error("the file rules", e))?;
        if rules.network != Network::Any {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI_WANTED))
                .map_err(|e| error("the network rules", e))?
                .scope(Scope::AbstractUnixSocket)
                .map_err(|e| error("the abstract socket scope", e))?;
        }
        let mut created = ruleset
            .scope(Scope::Signal)
            .map_err(|e| error("the signal scope", e))?
            .create()
            .map_err(|e| error("the ruleset", e))?;
        let chosen = [
            (grants(&rules.read, &hidden), read),
            (grants(&rules.write, &hidden), all),
            (rules.also_read.clone(), read),
            (rules.also_write.clone(), all),
        ];
        for (paths, access) in chosen {
            for path in paths {
                // Gone between listing and opening (or unreadable): nothing to grant.
                let Ok(fd) = PathFd::new(&path) else {
                    continue;
                };
                created = created
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|e| error(path.display().to_string(), e))?;
            }
        }
        if let Network::Ports { connect, bind } = &rules.network {
            let ports = connect
                .iter()
                .map(|p| (*p, AccessNet::ConnectTcp))
                .chain(bind.iter().map(|p| (*p, AccessNet::BindTcp)));
            for (port, access) in ports {
                created = created
                    .add_rule(NetPort::new(port, access))
                    .map_err(|e| error(format!("TCP port {port}"), e))?;
            }
        }
        Ok(created.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "x").expect("write");
    }

    /// The grants cover everything but the hidden paths: siblings whole, the way to a hidden path
    /// entry by entry, a link into a hidden path not at all.
    #[test]
    fn grants_cover_all_but_the_hidden() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        for file in [
            "home/.ssh/id_rsa",
            "home/.bashrc",
            "home/.config/gh/hosts.yml",
            "home/.config/git/config",
            "home/src/proj/a",
            "etc/passwd",
        ] {
            touch(&root.join(file));
        }
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/keys")).expect("link");
        std::os::unix::fs::symlink(root.join("home"), root.join("etc/home")).expect("link");
        std::os::unix::fs::symlink(root.join("etc"), root.join("home/etc")).expect("link");
        let hidden = real_hidden(&[
            root.join("home/.ssh"),
            root.join("home/.config/gh"),
            root.join("home/.netrc"), // absent: ignored
        ]);
        let mut granted: Vec<String> = grants(std::slice::from_ref(&root), &hidden)
            .into_iter()
            .map(|p| p.strip_prefix(&root).expect("inside").display().to_string())
            .collect();
        granted.sort();
        assert_eq!(
            granted,
            [
                "etc",
                "home/.bashrc",
                "home/.config/git",
                "home/etc",
                "home/src"
            ]
        );
    }

    /// A child under the rules: the hidden file and writes outside are refused, the rest works.
    #[test]
    fn a_confined_child_reads_and_writes_only_what_it_was_granted() {
        use std::os::unix::process::CommandExt;
        if !matches!(support(), Support::Full { .. } | Support::Partial { .. }) {
            println!("SKIPPED no Landlock on this kernel");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        touch(&root.join("home/.ssh/id_rsa"));
        touch(&root.join("home/.bashrc"));
        touch(&root.join("proj/file"));
        let rules = Rules {
            read: vec![PathBuf::from("/")],
            write: vec![root.join("proj"), PathBuf::from("/dev/null")],
            hidden: vec![root.join("home/.ssh")],
            network: Network::None,
            ..Rules::default()
        };
        let confinement = prepare(&rules).expect("prepared").expect("supported");
        let run = |script: &str| {
            let entry = confinement.entry();
            let mut command = std::process::Command::new("/bin/sh");
            command.args(["-c", script]).current_dir(&root);
            // SAFETY: enter is async-signal-safe and allocates nothing.
            unsafe { command.pre_exec(move || entry.enter()) };
            command.status().expect("ran").success()
        };
        for (script, allowed) in [
            ("cat home/.bashrc >/dev/null", true),
            ("cat /etc/hostname >/dev/null", true),
            ("echo x >> proj/file", true),
            ("cat home/.ssh/id_rsa", false),
            ("ls home/.ssh", false),
            ("echo x >> home/.bashrc", false),
            ("echo x > home/new", false),
        ] {
            assert_eq!(run(script), allowed, "{script}");
        }
    }

    /// A confined child with a pinned file reads the copy at its path (the ruleset allows it,
    /// through the mount), cannot write it, and still writes the project.
    #[test]
    fn a_confined_child_reads_its_pinned_files_as_their_copies() {
        use std::os::unix::process::CommandExt;
        if matches!(support(), Support::Absent { .. })
            || crate::exact::support() != crate::exact::Support::Available
        {
            println!("SKIPPED no Landlock or no mount namespaces here");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        touch(&root.join("proj/tools/check.sh"));
        std::fs::write(root.join("proj/tools/check.sh"), "echo untrusted").expect("write");
        touch(&root.join("state/copy"));
        std::fs::write(root.join("state/copy"), "echo trusted").expect("write");
        let rules = Rules {
            read: vec![PathBuf::from("/")],
            write: vec![root.join("proj"), PathBuf::from("/dev/null")],
            hidden: vec![root.join("state")],
            pinned: vec![crate::exact::Pin {
                path: root.join("proj/tools/check.sh"),
                copy: root.join("state/copy"),
            }],
            ..Rules::default()
        };
        let confinement = prepare(&rules).expect("prepared").expect("supported");
        assert_eq!(confinement.pinned(), 1);
        let run = |script: &str| {
            let entry = confinement.entry();
            let mut command = std::process::Command::new("/bin/sh");
            command.args(["-c", script]).current_dir(root.join("proj"));
            // SAFETY: enter is async-signal-safe and allocates nothing.
            unsafe { command.pre_exec(move || entry.enter()) };
            let out = command.output().expect("ran");
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        assert_eq!(run("sh tools/check.sh"), (true, "trusted\n".to_string()));
        assert!(!run("echo x >> tools/check.sh").0, "read-only");
        assert!(run("echo x > new").0, "the project is writable");
        assert!(
            !run("cat ../state/copy").0,
            "the copy's own place stays hidden"
        );
    }

    #[test]
    fn support_is_reported() {
        match support() {
            Support::Full { abi } | Support::Partial { abi, .. } => assert!(abi >= 1),
            Support::Absent { why } => assert!(!why.is_empty()),
        }
    }
}
