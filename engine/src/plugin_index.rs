//! The plugin index: what each level's plugins handle, so that an event none of them handles
//! costs the `stat`s that decide the level's files and one small read, not a listing and a parse
//! of every file.
//!
//! One index per level directory, in amplihack's state (`plugin-index/<digest of the path>.json`):
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
use std::path::{Path, PathBuf};

use amplihack_protocol::HookEvent;
use amplihack_state::StateDir;
use amplihack_state::files::{self, Durability};
use serde_json::Value;

use crate::discovery::{self, Level, Listing, Plugin};
use crate::matcher;
use amplihack_platform::stamp::{DirFd, Probe, Stamp};

/// The index format's first line; a copy of another version is a miss.
const HEADER: &str = "amplihack plugin index 3";

/// How much older than the listing a stamp's mtime must be to be trusted (see the module).
pub const RACY: i128 = 1_000_000_000;

fn index_file(state: &StateDir, dir: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    state.dir("plugin-index").join(name)
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

/// Whether the level at `dir` may have a plugin for `event`: `None` where no index of its
/// current state exists (list and read the level, then [`store`]).
///
/// The index is text: the header, the level's directory, its AMCP directory, when it was listed,
/// the number of probes, a line per probe (`r` or `a`, regular files only or anything; the stamp
/// or `-`; the path), then a line per event, `<event>\t<its groups' matchers as a JSON array>`.
/// The event's line is looked at first: where the level may handle the event, it is read anyway
/// and nothing needs checking.
pub fn may_handle(state: &StateDir, dir: &Path, level: Level, event: &HookEvent) -> Option<bool> {
    let text = amplihack_state::bounded::read_text(&index_file(state, dir), INDEX_CAP).ok()?;
    let mut lines = text.lines();
    let amcp = discovery::amcp_dir(dir, level);
    if lines.next() != Some(HEADER)
        || lines.next() != dir.to_str()
        || lines.next() != Some(amcp.as_deref().and_then(Path::to_str).unwrap_or(""))
    {
        return None;
    }
    let observed: i128 = lines.next()?.parse().ok()?;
    let count: usize = lines.next()?.parse().ok()?;
    let probes: Vec<&str> = lines.by_ref().take(count).collect();
    if probes.len() != count {
        return None;
    }
    let name = event.name.as_str();
    let target = event.matcher_target();
    for line in lines {
        let (event, matchers) = line.split_once('\t')?;
        if event == name {
            let matchers: Vec<Option<String>> = serde_json::from_str(matchers).ok()?;
            if matchers
                .iter()
                .any(|m| matcher::matches(m.as_deref(), target.as_deref()))
            {
                return Some(true);
            }
        }
    }
    // No group of the index matches: true only while the level is as it was listed.
    let at = DirFd::open(dir);
    let mut buf = Vec::new();
    for probe in probes {
        let mut fields = probe.splitn(3, '\t');
        let (kind, stamp, path) = (fields.next()?, fields.next()?, fields.next()?);
        let found = at
            .stat(path.as_bytes(), &mut buf)
            .filter(|s| kind == "a" || s.is_file());
        let recorded = match stamp {
            "-" => None,
            text => Some(Stamp::from_text(text)?),
        };
        if found != recorded || found.is_some_and(|s| s.mtime_ns > observed - RACY) {
            return None;
        }
    }
    Some(false)
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
    // A plugin manifest may name its hooks file elsewhere, which no probe here covers.
    if listing
        .files
        .iter()
        .any(|f| f.file.ends_with(discovery::MANIFEST))
    {
        return;
    }
    let Some(dir_text) = dir.to_str() else {
        return;
    };
    let amcp_dir = discovery::amcp_dir(dir, level);
    let Some(amcp_text) = amcp_dir.as_deref().map_or(Some(""), Path::to_str) else {
        return;
    };
    let mut events: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
    for plugin in plugins {
        let Ok(config) = &plugin.config else {
            return;
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
    let probes: Vec<&Probe> = listing.probes.iter().chain(amcp).collect();
    let mut text = format!(
        "{HEADER}\n{dir_text}\n{amcp_text}\n{}\n{}\n",
        listing.observed_ns,
        probes.len()
    );
    for probe in probes {
        // A path the text cannot carry: no index rather than a wrong one.
        let Some(path) = std::str::from_utf8(&probe.path)
            .ok()
            .filter(|p| !p.contains(['\t', '\n', '\r']))
        else {
            return;
        };
        let stamp = probe.found.map_or("-".to_string(), Stamp::to_text);
        let kind = if probe.regular { "r" } else { "a" };
        text.push_str(&format!("{kind}\t{stamp}\t{path}\n"));
    }
    for (event, matchers) in events {
        if event.contains(['\t', '\n', '\r']) {
            return; // not a name any host sends: no index rather than a wrong one
        }
        text.push_str(&format!(
            "{event}\t{}\n",
            Value::from(
                matchers
                    .iter()
                    .map(|m| m.map(Value::from).unwrap_or(Value::Null))
                    .collect::<Vec<_>>()
            )
        ));
    }
    let path = index_file(state, dir);
    let _ = files::replace_with(&path, text.as_bytes(), 0o600, Durability::Disposable);
}
