//! The plugin index: what each level's plugins handle, so that an event none of them handles
//! costs the `stat`s that decide the level's files and one small read, not a listing and a parse
//! of every file.
//!
//! One index per level directory, in amplihack's state (`plugin-index/<FNV-1a of the path>`, binary:
//! [`may_handle`] says the format, read with one open and one read, nothing parsed but fixed-size
//! records):
//! every `stat` the level's listing made ([`discovery::listed_files`]: the level's directory, each
//! candidate file of each plugin directory whether found or not, the `hooks/` or
//! `.claude-plugin/` directory a file was found in, each link) and the level's AMCP file's, with
//! what each found ([`Probe`]), then per event the matchers of its groups. A check replays those
//! `stat`s relative to the level's directory, opened once (`fstatat`), and no directory is read:
//! an entry added, removed or renamed in the level changes the level directory's own mtime, and
//! every other way the listing could change (a file edited in place or replaced, a candidate
//! created or removed in a plugin directory, a link pointed elsewhere) changes one of the replayed
//! `stat`s. So a check sees every change a listing would see. For 100 plugins that is two
//! `fstatat`s each: the found `hooks.json` and the `hooks.yaml` beside it.
//!
//! A stamp whose mtime is not older than the listing by [`RACY`] is never trusted: a second edit
//! in the same tick of the file system's clock (coarse, a few ms) could leave size and mtime as
//! they were. The index is still written, and is used once its stamps are older than that.
//!
//! The index is used only while every replayed `stat` finds what it found, is rebuilt from the
//! parsed plugins when any differs (written atomically, without fsync: it is a cache), and a
//! damaged or foreign copy is a miss. A level with a plugin that does not parse, a plugin manifest
//! (which may name its hooks file anywhere), or the level refused as a whole, has no index: it is
//! read every time, so a problem is reported every time.
//!
//! What it decides is only whether a level can be skipped for an event: every plugin that could
//! run is still read, parsed, trusted and run as before.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use amplihack_protocol::HookEvent;
use amplihack_state::StateDir;
use amplihack_state::files::{self, Durability};

use crate::discovery::{self, Level, Listing, Plugin};
use crate::matcher;
use amplihack_platform::stamp::{DirFd, Probe, Stamp};

/// The index format's first bytes; a copy of another version is a miss.
const HEADER: &[u8] = b"amplihack plugin index 4\n";

/// How much older than the listing a stamp's mtime must be to be trusted (see the module).
pub const RACY: i128 = 1_000_000_000;

/// The index of the level at `dir`: named by a 64-bit FNV-1a of the path (the path itself is
/// inside and checked, so two paths of one name are only misses; no cryptographic hash, whose
/// CPU-feature detection alone costs a call microseconds).
fn index_file(state: &StateDir, dir: &Path) -> PathBuf {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in dir.as_os_str().as_encoded_bytes() {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
    }
    state.dir("plugin-index").join(format!("{hash:016x}"))
}

/// The most an index is read: 1,000 plugins' probes and matchers fit many times over.
const INDEX_CAP: u64 = 4 << 20;

/// The `stat`s that find the level's AMCP file ([`discovery::amcp_file`]'s), made now: call it
/// before the level's files are read, and hand the result to [`store`].
pub fn amcp_probes(dir: &Path, level: Level) -> Vec<Probe> {
    let mut probes = Vec::new();
    let Some(amcp) = discovery::amcp_dir(dir, level) else {
        return probes;
    };
    let at = DirFd::open(Path::new("/"));
    let mut buf = Vec::new();
    let bytes = amcp.as_os_str().as_encoded_bytes();
    if at
        .probe(bytes, false, &mut buf, &mut probes)
        .is_some_and(|s| s.is_dir())
    {
        for name in ["hooks.toml", "hooks.json"] {
            let file = amcp.join(name);
            let file = file.as_os_str().as_encoded_bytes();
            if at.probe(file, true, &mut buf, &mut probes).is_some() {
                break;
            }
        }
    }
    probes
}

/// A probe's flags in the index.
const REGULAR: u8 = 1;
const FOUND: u8 = 2;

/// Reads an index in order, each read bounds-checked: a damaged copy is a miss, never a panic.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Some(u32::from_le_bytes(b))
    }

    fn i64(&mut self) -> Option<i64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Some(i64::from_le_bytes(b))
    }

    /// A length-prefixed byte string.
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u32()?).ok()?;
        self.take(n)
    }
}

/// A length-prefixed byte string appended to `out`.
fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> Option<()> {
    out.extend_from_slice(&u32::try_from(bytes.len()).ok()?.to_le_bytes());
    out.extend_from_slice(bytes);
    Some(())
}

/// Whether the level at `dir` may have a plugin for `event`: `None` where no index of its
/// current state exists (list and read the level, then [`store`]).
///
/// The index is binary (little-endian; a byte string is a `u32` length then the bytes): the
/// header, the level's directory, its AMCP directory (empty: none), when it was listed (`i64`
/// ns), the number of events, then per event its name and its groups' matchers (a count, then
/// each as a byte string, `u32::MAX` for none), the number of probes, then per probe its flags
/// ([`REGULAR`]: only a regular file counts; [`FOUND`]), how many leading bytes its path shares
/// with the previous probe's, the rest of its path NUL-terminated, and where it found something,
/// the [`Stamp`] ([`Stamp::BYTES`]). 100 plugins take about 6 KB. The event's matchers are looked
/// at first: where the level may handle the event, it is read anyway and nothing needs checking.
pub fn may_handle(state: &StateDir, dir: &Path, level: Level, event: &HookEvent) -> Option<bool> {
    let bytes = read_index(&index_file(state, dir))?;
    let mut r = Reader {
        bytes: bytes.strip_prefix(HEADER)?,
    };
    let amcp = discovery::amcp_dir(dir, level);
    if r.bytes()? != dir.as_os_str().as_encoded_bytes()
        || r.bytes()?
            != amcp
                .as_deref()
                .map_or(&[][..], |a| a.as_os_str().as_encoded_bytes())
    {
        return None;
    }
    let observed = i128::from(r.i64()?);
    let name = event.name.as_str().as_bytes();
    let target = event.matcher_target();
    for _ in 0..r.u32()? {
        let this = r.bytes()? == name;
        for _ in 0..r.u32()? {
            let matcher = match r.u32()? {
                u32::MAX => None,
                n => Some(std::str::from_utf8(r.take(usize::try_from(n).ok()?)?).ok()?),
            };
            if this && matcher::matches(matcher, target.as_deref()) {
                return Some(true);
            }
        }
    }
    // No group of the index matches: true only while the level is as it was listed.
    let count = r.u32()?;
    let at = DirFd::open(dir);
    let mut path: Vec<u8> = Vec::with_capacity(256);
    for _ in 0..count {
        let [flags, shared] = r.take(2)? else {
            return None;
        };
        let rest = CStr::from_bytes_until_nul(r.bytes)
            .ok()?
            .to_bytes_with_nul();
        r.take(rest.len())?;
        if usize::from(*shared) > path.len().saturating_sub(1) {
            return None;
        }
        path.truncate(usize::from(*shared));
        path.extend_from_slice(rest);
        let recorded = match flags & FOUND {
            0 => None,
            _ => Some(Stamp::from_bytes(r.take(Stamp::BYTES)?.try_into().ok()?)),
        };
        let found = at
            .stat_c(CStr::from_bytes_with_nul(&path).ok()?)
            .filter(|s| flags & REGULAR == 0 || s.is_file());
        if found != recorded || found.is_some_and(|s| s.mtime_ns > observed - RACY) {
            return None;
        }
    }
    r.bytes.is_empty().then_some(false)
}

/// The index file's bytes, at most [`INDEX_CAP`]: one open and a read or two (no `stat`; not
/// blocking on a FIFO put in its place).
fn read_index(path: &Path) -> Option<Vec<u8>> {
    let file = amplihack_platform::fs::no_block_no_tty(std::fs::OpenOptions::new().read(true))
        .open(path)
        .ok()?;
    let mut bytes = Vec::with_capacity(32 * 1024);
    file.take(INDEX_CAP + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= INDEX_CAP).then_some(bytes)
}

/// Records what the level's `plugins` (just read from `listing`, the level's AMCP file found by
/// `amcp`) handle, unless one of them does not parse or is a manifest. Best-effort: a cache that
/// cannot be written is read again next time.
pub fn store(
    state: &StateDir,
    dir: &Path,
    level: Level,
    (listing, amcp): (&Listing, &[Probe]),
    plugins: &[Plugin],
) {
    if let Some(bytes) = encode(dir, level, (listing, amcp), plugins) {
        let path = index_file(state, dir);
        let _ = files::replace_with(&path, &bytes, 0o600, Durability::Disposable);
    }
}

/// The index's bytes ([`may_handle`] says the format); `None` where the level gets none.
fn encode(
    dir: &Path,
    level: Level,
    (listing, amcp): (&Listing, &[Probe]),
    plugins: &[Plugin],
) -> Option<Vec<u8>> {
    // A plugin manifest may name its hooks file elsewhere, which no probe here covers.
    if listing
        .files
        .iter()
        .any(|f| f.file.ends_with(discovery::MANIFEST))
    {
        return None;
    }
    let mut events: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
    for plugin in plugins {
        let Ok(config) = &plugin.config else {
            return None;
        };
        if !config.enabled {
            continue;
        }
        for group in &config.groups {
            events
                .entry(group.event.as_str())
                .or_default()
                .insert(group.matcher.as_deref());
        }
    }
    let mut out = HEADER.to_vec();
    put_bytes(&mut out, dir.as_os_str().as_encoded_bytes())?;
    let amcp_dir = discovery::amcp_dir(dir, level);
    put_bytes(
        &mut out,
        amcp_dir
            .as_deref()
            .map_or(&[][..], |a| a.as_os_str().as_encoded_bytes()),
    )?;
    out.extend_from_slice(&i64::try_from(listing.observed_ns).ok()?.to_le_bytes());
    out.extend_from_slice(&u32::try_from(events.len()).ok()?.to_le_bytes());
    for (event, matchers) in events {
        put_bytes(&mut out, event.as_bytes())?;
        out.extend_from_slice(&u32::try_from(matchers.len()).ok()?.to_le_bytes());
        for matcher in matchers {
            match matcher {
                // u32::MAX marks none: a matcher that long is no index.
                Some(m) if m.len() < u32::MAX as usize => put_bytes(&mut out, m.as_bytes())?,
                Some(_) => return None,
                None => out.extend_from_slice(&u32::MAX.to_le_bytes()),
            }
        }
    }
    let probes: Vec<&Probe> = listing.probes.iter().chain(amcp).collect();
    out.extend_from_slice(&u32::try_from(probes.len()).ok()?.to_le_bytes());
    let mut previous: &[u8] = &[];
    for probe in probes {
        // A path with a NUL cannot be a path; no index rather than a wrong one.
        if probe.path.contains(&0) {
            return None;
        }
        let flags = if probe.regular { REGULAR } else { 0 } | probe.found.map_or(0, |_| FOUND);
        let shared = previous
            .iter()
            .zip(&probe.path)
            .take(usize::from(u8::MAX))
            .take_while(|(a, b)| a == b)
            .count();
        out.push(flags);
        out.push(u8::try_from(shared).ok()?);
        out.extend_from_slice(&probe.path[shared..]);
        out.push(0);
        if let Some(stamp) = probe.found {
            out.extend_from_slice(&stamp.to_bytes()?);
        }
        previous = &probe.path;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way an index can be cut short or filled with junk is a miss, never a panic.
    #[test]
    fn a_damaged_index_is_a_miss_at_every_length() {
        let home = tempfile::tempdir().expect("tempdir");
        let hooks = home.path().join(".amplifier/hooks");
        std::fs::create_dir_all(hooks.join("p")).expect("plugin dir");
        let text = r#"{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"true"}]}]}}"#;
        std::fs::write(hooks.join("p/hooks.json"), text).expect("hooks.json");
        let state = StateDir::at(home.path().join("state"));
        let listing = discovery::listed_files(&hooks).expect("listing");
        let mut listing = listing.clone();
        listing.observed_ns += 10 * RACY; // stamps old enough to be trusted
        let plugins = discovery::load_listed(&hooks, Level::User, Ok(listing.clone()));
        let bytes = encode(&hooks, Level::User, (&listing, &[]), &plugins).expect("an index");
        let event = HookEvent::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#,
            None,
        )
        .expect("event");
        let file = index_file(&state, &hooks);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("index dir");
        std::fs::write(&file, &bytes).expect("write");
        assert_eq!(may_handle(&state, &hooks, Level::User, &event), Some(false));
        for cut in 0..bytes.len() {
            std::fs::write(&file, &bytes[..cut]).expect("write");
            assert_eq!(
                may_handle(&state, &hooks, Level::User, &event),
                None,
                "{cut}"
            );
        }
        for at in HEADER.len()..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xff;
            std::fs::write(&file, &damaged).expect("write");
            // Any answer but a panic (a flipped flag may still agree with the file system).
            let _ = may_handle(&state, &hooks, Level::User, &event);
        }
    }
}
