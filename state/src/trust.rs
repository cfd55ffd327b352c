//! Trust for project-level plugins, like `direnv allow`: `<state>/trust.json` records a SHA-256
//! of every file each trusted project's plugins run (which files: the engine's `trust_scope`),
//! `{"projects": {"<project>": {"<file>": "<sha>"}}, "stats": {...}}`. Any change to those files
//! (edited, added, removed) needs trust again.
//!
//! Checking runs on every hook call of a project with plugins, so it reads no file whose size,
//! modification time and inode are those recorded at trust time (`stats`, as git's index does);
//! a file whose metadata moved is hashed, and trusted still when its content did not change.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::StateDir;
use crate::bounded;
use crate::files::{self, Lock, StateError};
use crate::memory::hex;

/// What was trusted: each file's SHA-256 and its metadata then.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fingerprint {
    pub sha: BTreeMap<String, String>,
    pub stat: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrustStore {
    #[serde(default)]
    pub projects: BTreeMap<String, BTreeMap<String, String>>,
    /// Per project, each settled file's metadata when it was trusted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, BTreeMap<String, String>>,
    /// Per project, the plugins whose parts trust cannot pin the user accepted by name
    /// (`hooks trust --accept NAME`), each with exactly the parts accepted then: a part added
    /// later is not accepted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accepted: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

pub fn path(state: &StateDir) -> PathBuf {
    state.file("trust.json")
}

/// The SHA-256 of `bytes` as trust records it (lowercase hex).
pub fn sha_of_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A file's SHA-256, read in pieces, regular files of at most [`bounded::TRUSTED_FILE_CAP`] only:
/// anything else hashes as "unreadable: why", which no trusted file ever equals.
fn sha_of(file: &Path) -> String {
    let mut hasher = Sha256::new();
    match bounded::stream(file, bounded::TRUSTED_FILE_CAP, |bytes| {
        hasher.update(bytes)
    }) {
        Ok(()) => hex(&hasher.finalize()),
        Err(e) => format!("unreadable: {e}"),
    }
}

/// `size:mtime:ctime:inode`. The change time cannot be set from user space, so content written
/// back with its old modification time still shows.
fn stat_of(file: &Path) -> Option<String> {
    let m = std::fs::metadata(file).ok()?;
    Some(format!(
        "{}:{}.{}:{}.{}:{}",
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.ino()
    ))
}

/// A file changed this recently may change again within the file system's clock tick without its
/// metadata moving ("racy git"): its metadata is not recorded, so it is hashed at every check.
const RACY: std::time::Duration = std::time::Duration::from_secs(2);

fn settled(file: &Path) -> bool {
    let Ok(m) = std::fs::metadata(file) else {
        return false;
    };
    let changed = std::time::Duration::new(m.ctime().max(0) as u64, m.ctime_nsec() as u32).max(
        std::time::Duration::new(m.mtime().max(0) as u64, m.mtime_nsec() as u32),
    );
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .is_ok_and(|now| changed + RACY < now)
}

/// SHA-256 and metadata of each file. An unreadable file hashes as such (and so is never trusted).
pub fn fingerprint(files: &[PathBuf]) -> Fingerprint {
    let mut print = Fingerprint::default();
    for file in files {
        let key = file.to_string_lossy().into_owned();
        if let Some(stat) = stat_of(file).filter(|_| settled(file)) {
            print.stat.insert(key.clone(), stat);
        }
        print.sha.insert(key, sha_of(file));
    }
    print
}

pub fn load(state: &StateDir) -> Result<TrustStore, StateError> {
    Ok(files::read_json(&path(state))?.unwrap_or_default())
}

/// Why a project's plugins are not trusted.
#[derive(Debug, Clone, PartialEq)]
pub enum Untrusted {
    /// Never trusted (or trust was withdrawn).
    Never,
    /// Trusted once; this file changed, appeared or went since.
    Changed(String),
}

/// Whether the user ever trusted `project` (and did not withdraw it): without a record nothing
/// of the project's needs reading to know it does not run.
pub fn is_recorded(state: &StateDir, project: &Path) -> bool {
    load(state).is_ok_and(|store| {
        store
            .projects
            .contains_key(project.to_string_lossy().as_ref())
    })
}

/// Trust before work for a project trusted before, at the cost of stats: `Err` when a file
/// trusted then changed or went (its size moved, or its metadata moved and its content differs:
/// hashed only then), or the plugin files `present` lists (a directory listing, made only when
/// every trusted file is unchanged) hold one never trusted. Nothing is parsed and no handler
/// resolved; `Ok` says only that nothing changed yet, and [`check`] still decides on the full set.
pub fn unchanged(
    state: &StateDir,
    project: &Path,
    present: impl FnOnce() -> Vec<PathBuf>,
) -> Result<(), Untrusted> {
    let key = project.to_string_lossy();
    let store = load(state).map_err(|_| Untrusted::Never)?;
    let Some(trusted) = store.projects.get(key.as_ref()) else {
        return Err(Untrusted::Never);
    };
    let stats = store.stats.get(key.as_ref());
    for (name, sha) in trusted {
        let file = Path::new(name);
        let now = stat_of(file);
        let recorded = stats.and_then(|s| s.get(name));
        if recorded.is_some() && now.as_ref() == recorded {
            continue;
        }
        // Another size is other content: no need to read it.
        let size = |stat: &String| stat.split(':').next().map(str::to_string);
        let resized = recorded
            .and_then(size)
            .is_some_and(|was| now.as_ref().and_then(size) != Some(was));
        if now.is_none() || resized || sha_of(file) != *sha {
            return Err(Untrusted::Changed(name.clone()));
        }
    }
    match present()
        .iter()
        .map(|f| f.to_string_lossy())
        .find(|name| !trusted.contains_key(name.as_ref()))
    {
        Some(new) => Err(Untrusted::Changed(new.into_owned())),
        None => Ok(()),
    }
}

/// `Ok` when `files` are exactly what was trusted for `project`, and each of `parsed` (a file
/// amplihack itself read and parsed this call, with the SHA-256 of the bytes it read: a hooks
/// file, whose commands run) hashes as trusted: a file rewritten between amplihack's read and
/// this check, and back, is caught. Which files: only the engine's `trust_scope::check` asks, so
/// every caller checks the same set.
pub fn check(
    state: &StateDir,
    project: &Path,
    files: &[PathBuf],
    parsed: &[(PathBuf, String)],
) -> Result<(), Untrusted> {
    let key = project.to_string_lossy();
    let store = load(state).map_err(|_| Untrusted::Never)?;
    let Some(trusted) = store
        .projects
        .get(key.as_ref())
        .filter(|_| !files.is_empty())
    else {
        return Err(Untrusted::Never);
    };
    let stats = store.stats.get(key.as_ref());
    for file in files {
        let name = file.to_string_lossy();
        let Some(sha) = trusted.get(name.as_ref()) else {
            return Err(Untrusted::Changed(name.into_owned()));
        };
        let unchanged = stats
            .and_then(|s| s.get(name.as_ref()))
            .is_some_and(|recorded| stat_of(file).as_ref() == Some(recorded));
        if !unchanged && sha_of(file) != *sha {
            return Err(Untrusted::Changed(name.into_owned()));
        }
    }
    for (file, sha) in parsed {
        let name = file.to_string_lossy();
        if trusted.get(name.as_ref()) != Some(sha) {
            return Err(Untrusted::Changed(name.into_owned()));
        }
    }
    match trusted
        .keys()
        .find(|name| !files.iter().any(|f| f.to_string_lossy() == name.as_str()))
    {
        Some(gone) => Err(Untrusted::Changed(gone.clone())),
        None => Ok(()),
    }
}

/// Where the verified private copies of trusted files live, one per content (and exec bit):
/// `<state>/trusted-copies/<sha>` (0400) or `<sha>.x` (0500), in a 0700 directory that a
/// confined handler can neither read nor write (amplihack's state is hidden from it).
pub fn copies_dir(state: &StateDir) -> PathBuf {
    state.dir("trusted-copies")
}

/// One trusted file: where it is, and its verified private copy (exactly the bytes whose SHA-256
/// trust recorded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactCopy {
    pub path: PathBuf,
    pub copy: PathBuf,
}

/// Each file trusted for `project` with its verified private copy, for a handler to be shown
/// instead of the file (issue 35, finding 12: trust hashed a file, and the shell opened it again
/// by path). A copy is made once per content: the file opened once, read whole (bounded), those
/// bytes hashed and, equal to the trusted hash, written to the copy; later calls use the copy
/// without reading the file. A file whose bytes differ from what was trusted (changed since
/// the check, or mid-write) is `Err(Changed)`, as [`check`] says it.
pub fn exact_copies(state: &StateDir, project: &Path) -> Result<Vec<ExactCopy>, Untrusted> {
    use std::os::unix::fs::PermissionsExt;
    let key = project.to_string_lossy();
    let store = load(state).map_err(|_| Untrusted::Never)?;
    let Some(trusted) = store.projects.get(key.as_ref()) else {
        return Err(Untrusted::Never);
    };
    let dir = copies_dir(state);
    let mut out = Vec::with_capacity(trusted.len());
    for (name, sha) in trusted {
        let path = PathBuf::from(name);
        let changed = || Untrusted::Changed(name.clone());
        // A hash is 64 hex digits; anything else (an unreadable file's record) is never a name.
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(changed());
        }
        let executable = std::fs::metadata(&path)
            .map_err(|_| changed())?
            .permissions()
            .mode()
            & 0o111
            != 0;
        let copy = dir.join(if executable {
            format!("{sha}.x")
        } else {
            sha.clone()
        });
        if !copy.is_file() {
            let bytes = read_whole(&path).map_err(|_| changed())?;
            if sha_of_bytes(&bytes) != *sha {
                return Err(changed());
            }
            let mode = if executable { 0o500 } else { 0o400 };
            files::replace_with(&copy, &bytes, mode, files::Durability::Durable)
                .map_err(|_| changed())?;
        }
        out.push(ExactCopy { path, copy });
    }
    Ok(out)
}

/// A regular file's bytes, read once from one open file, at most
/// [`bounded::TRUSTED_FILE_CAP`].
fn read_whole(path: &Path) -> Result<Vec<u8>, bounded::ReadError> {
    let mut bytes = Vec::new();
    bounded::stream(path, bounded::TRUSTED_FILE_CAP, |piece| {
        bytes.extend_from_slice(piece)
    })?;
    Ok(bytes)
}

/// Removes the copies no trusted file has any more (trust withdrawn or renewed).
fn prune_copies(state: &StateDir, store: &TrustStore) {
    let kept: std::collections::BTreeSet<&str> = store
        .projects
        .values()
        .flat_map(|files| files.values().map(String::as_str))
        .collect();
    let Ok(entries) = std::fs::read_dir(copies_dir(state)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let sha = name.strip_suffix(".x").unwrap_or(&name);
        if sha.len() == 64 && !kept.contains(sha) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The plugins of `project` the user accepted with what trust cannot pin, and those parts.
pub fn accepted(state: &StateDir, project: &Path) -> BTreeMap<String, Vec<String>> {
    load(state)
        .ok()
        .and_then(|mut store| store.accepted.remove(project.to_string_lossy().as_ref()))
        .unwrap_or_default()
}

/// Records what the user accepted for `project` (replacing what was recorded).
pub fn set_accepted(
    state: &StateDir,
    project: &Path,
    accepted: BTreeMap<String, Vec<String>>,
) -> Result<(), StateError> {
    let _lock = Lock::acquire(&state.dir("locks"), "trust", files::LOCK_TIMEOUT)?;
    let mut store = load(state)?;
    let key = project.to_string_lossy().into_owned();
    if accepted.is_empty() {
        store.accepted.remove(&key);
    } else {
        store.accepted.insert(key, accepted);
    }
    files::write_json(&path(state), &store)
}

/// Records (`Some`) or withdraws (`None`) trust for `project`.
pub fn set(
    state: &StateDir,
    project: &Path,
    fingerprint: Option<Fingerprint>,
) -> Result<(), StateError> {
    let _lock = Lock::acquire(&state.dir("locks"), "trust", files::LOCK_TIMEOUT)?;
    let mut store = load(state)?;
    let key = project.to_string_lossy().into_owned();
    match fingerprint {
        Some(f) => {
            store.projects.insert(key.clone(), f.sha);
            store.stats.insert(key, f.stat);
        }
        None => {
            store.projects.remove(&key);
            store.stats.remove(&key);
            store.accepted.remove(&key);
        }
    }
    files::write_json(&path(state), &store)?;
    prune_copies(state, &store);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_added_or_removed_file_withdraws_trust_and_a_touch_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(dir.path().join("state"));
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).expect("mkdir");
        let (a, b) = (project.join("a.sh"), project.join("b.sh"));
        std::fs::write(&a, "one").expect("write");
        std::fs::write(&b, "two").expect("write");
        let files = vec![a.clone(), b.clone()];
        assert_eq!(check(&state, &project, &files, &[]), Err(Untrusted::Never));
        set(&state, &project, Some(fingerprint(&files))).expect("trust");
        assert_eq!(check(&state, &project, &files, &[]), Ok(()));
        // Same content, new metadata (a checkout that rewrote it): still trusted.
        std::fs::write(&a, "one").expect("rewrite");
        assert_eq!(check(&state, &project, &files, &[]), Ok(()));
        // New content of the same size.
        std::fs::write(&a, "ONE").expect("edit");
        let named = Err(Untrusted::Changed(a.to_string_lossy().into_owned()));
        assert_eq!(check(&state, &project, &files, &[]), named);
        std::fs::write(&a, "one").expect("restore");
        // A file added, a file gone.
        let c = project.join("c.sh");
        std::fs::write(&c, "three").expect("write");
        let more = vec![a.clone(), b.clone(), c.clone()];
        let added = Err(Untrusted::Changed(c.to_string_lossy().into_owned()));
        assert_eq!(check(&state, &project, &more, &[]), added);
        let gone = Err(Untrusted::Changed(b.to_string_lossy().into_owned()));
        assert_eq!(check(&state, &project, std::slice::from_ref(&a), &[]), gone);
        // What amplihack parsed this call was other bytes than the file holds now (rewritten
        // and put back between its read and this check).
        let parsed = [(a.clone(), sha_of_bytes(b"evil"))];
        let named = Err(Untrusted::Changed(a.to_string_lossy().into_owned()));
        assert_eq!(check(&state, &project, &files, &parsed), named);
        let parsed = [(a.clone(), sha_of_bytes(b"one"))];
        assert_eq!(check(&state, &project, &files, &parsed), Ok(()));
        // Withdrawn.
        set(&state, &project, None).expect("untrust");
        assert_eq!(check(&state, &project, &files, &[]), Err(Untrusted::Never));
    }

    /// The copy holds exactly the trusted bytes, is made once, keeps the exec bit, and a file
    /// that no longer hashes as trusted gets none; withdrawn trust removes the copies.
    #[test]
    fn exact_copies_hold_the_trusted_bytes_or_say_changed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(dir.path().join("state"));
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).expect("mkdir");
        let (a, b) = (project.join("a.sh"), project.join("b.py"));
        std::fs::write(&a, "echo trusted").expect("write");
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::write(&b, "print(1)").expect("write");
        let files = vec![a.clone(), b.clone()];
        assert_eq!(exact_copies(&state, &project), Err(Untrusted::Never));
        set(&state, &project, Some(fingerprint(&files))).expect("trust");
        let copies = exact_copies(&state, &project).expect("copies");
        assert_eq!(copies.len(), 2);
        for ExactCopy { path, copy } in &copies {
            assert_eq!(
                std::fs::read(copy).expect("copy"),
                std::fs::read(path).expect("file")
            );
        }
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&copies[0].copy), 0o500);
        assert_eq!(mode(&copies[1].copy), 0o400);
        // Made once: an edit now does not change the copy, whose bytes are the trusted ones.
        std::fs::write(&a, "echo untrusted").expect("edit");
        let again = exact_copies(&state, &project).expect("copies");
        assert_eq!(
            std::fs::read(&again[0].copy).expect("copy"),
            b"echo trusted"
        );
        // No copy yet and the file differs: changed.
        std::fs::remove_dir_all(copies_dir(&state)).expect("rm");
        let named = Err(Untrusted::Changed(a.to_string_lossy().into_owned()));
        assert_eq!(exact_copies(&state, &project), named);
        std::fs::write(&a, "echo trusted").expect("restore");
        exact_copies(&state, &project).expect("copies");
        set(&state, &project, None).expect("untrust");
        assert_eq!(
            std::fs::read_dir(copies_dir(&state)).expect("dir").count(),
            0
        );
    }

    #[test]
    fn settled_files_are_checked_by_metadata_and_an_edit_shows_even_with_the_old_mtime() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(dir.path().join("state"));
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "echo one").expect("write");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let set_mtime = |when| {
            std::fs::File::options()
                .write(true)
                .open(&file)
                .and_then(|f| f.set_modified(when))
                .expect("set mtime")
        };
        set_mtime(old);
        // The change time is now; a file is settled once both are past the racy window.
        std::thread::sleep(RACY + std::time::Duration::from_millis(100));
        let files = vec![file.clone()];
        let print = fingerprint(&files);
        assert_eq!(print.stat.len(), 1, "a settled file's metadata is recorded");
        set(&state, dir.path(), Some(print)).expect("trust");
        assert_eq!(check(&state, dir.path(), &files, &[]), Ok(()));
        // Same size, old mtime restored: the change time still tells.
        std::fs::write(&file, "echo two").expect("edit");
        set_mtime(old);
        assert!(check(&state, dir.path(), &files, &[]).is_err());
    }
}
