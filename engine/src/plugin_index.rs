//! The plugin index: what each level's plugins handle, so that an event none of them handles
//! costs the `stat`s that find the files (which [`discovery::listed_files`] makes anyway) and one
//! small read, not a parse of every file.
//!
//! One index per level directory, in amplihack's state (`plugin-index/<digest of the path>.json`):
//! the stamps ([`Stamp`]: device, inode, size, mtime) of every file and directory that decide
//! the level's plugins, and per event the matchers of its groups. It is used only while every
//! stamp is the same as now, is rebuilt from the parsed plugins when any differs (written
//! atomically, without fsync: it is a cache), and a damaged or foreign copy is a miss. A level
//! with a plugin that does not parse, a plugin manifest (which may name its hooks file anywhere),
//! or the level refused as a whole, has no index: it is read every time, so a problem is reported
//! every time.
//!
//! What it decides is only whether a level can be skipped for an event: every plugin that could
//! run is still read, parsed, trusted and run as before.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use amplihack_protocol::HookEvent;
use amplihack_state::StateDir;
use amplihack_state::files::{self, Durability};
use serde_json::Value;

use crate::discovery::{self, Level, Listing, Plugin, Stamp};
use crate::matcher;

/// The index format's first line; a copy of another version is a miss.
const HEADER: &str = "amplihack plugin index 2";

/// A digest of a level's stamps now: its listing's files and directories, and its AMCP file. A
/// cache key, not a defence: a collision could only make a level be skipped, never run.
fn stamps_key(dir: &Path, level: Level, listing: &Listing) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let amcp = discovery::amcp_file(dir, level)
        .and_then(|(_, file)| std::fs::metadata(file).ok())
        .map(|m| Stamp::of(&m));
    let mut hasher = DefaultHasher::new();
    for stamp in listing
        .dirs
        .iter()
        .chain(listing.files.iter().map(|f| &f.stamp))
        .chain(amcp.as_ref())
    {
        (stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns).hash(&mut hasher);
    }
    (listing.dirs.len(), listing.files.len()).hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

fn index_file(state: &StateDir, dir: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    state.dir("plugin-index").join(name)
}

/// The most an index is read: 1,000 plugins' matchers fit many times over.
const INDEX_CAP: u64 = 4 << 20;

/// Whether the level at `dir` may have a plugin for `event`: `None` where no index of its
/// current state exists (read the level, then [`store`]).
///
/// The index is text: the header, the level's directory, the stamps' digest, then a line per
/// event, `<event>\t<its groups' matchers as a JSON array>`; only the event's own line is parsed.
pub fn may_handle(
    state: &StateDir,
    dir: &Path,
    level: Level,
    listing: &Listing,
    event: &HookEvent,
) -> Option<bool> {
    let text = amplihack_state::bounded::read_text(&index_file(state, dir), INDEX_CAP).ok()?;
    let mut lines = text.lines();
    if lines.next() != Some(HEADER)
        || lines.next() != dir.to_str()
        || lines.next() != Some(stamps_key(dir, level, listing).as_str())
    {
        return None;
    }
    let name = event.name.as_str();
    let Some(matchers) = lines.find_map(|line| {
        line.split_once('\t')
            .filter(|(event, _)| *event == name)
            .map(|(_, matchers)| matchers)
    }) else {
        return Some(false);
    };
    let matchers: Vec<Option<String>> = serde_json::from_str(matchers).ok()?;
    let target = event.matcher_target();
    Some(
        matchers
            .iter()
            .any(|m| matcher::matches(m.as_deref(), target.as_deref())),
    )
}

/// Records what the level's `plugins` (just read from `listing`) handle, unless one of them does
/// not parse or is a manifest. Best-effort: a cache that cannot be written is read again next
/// time.
pub fn store(state: &StateDir, dir: &Path, level: Level, listing: &Listing, plugins: &[Plugin]) {
    // A plugin manifest may name its hooks file elsewhere, which no stamp here covers.
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
    let mut text = format!(
        "{HEADER}\n{dir_text}\n{}\n",
        stamps_key(dir, level, listing)
    );
    for (event, matchers) in events {
        if event.contains(['\t', '\n']) {
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
