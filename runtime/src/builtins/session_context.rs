//! Session start: the project's context for the model.
//!
//! * `.claude/context/PROJECT.md`, at most [`PROJECT_MAX`] characters;
//! * the user's preferences ([`super::preferences::locate`]), at most [`PREFERENCES_MAX`];
//! * the most recent entries of `.claude/context/DISCOVERIES.md`, at most [`DISCOVERIES_MAX`];
//! * after a compaction (`source: compact`), the same again plus the path of the transcript
//!   copy that `pre-compact` kept.
//!
//! Each part is cut with a visible marker naming the whole file, so that all built-in context
//! together stays well under Claude Code's 10,000 characters and the user's plugins still fit.

use std::path::Path;

use amplihack_protocol::{EventName, Payload, Reply};
use amplihack_state::session;

use super::{Result, cap, display_relative, preferences, read_capped};
use crate::pipeline::Call;

pub const PROJECT_FILE: &str = ".claude/context/PROJECT.md";
pub const DISCOVERIES_FILE: &str = ".claude/context/DISCOVERIES.md";
pub const PROJECT_MAX: usize = 4_000;
pub const PREFERENCES_MAX: usize = 2_500;
pub const DISCOVERIES_MAX: usize = 1_500;

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    let Payload::SessionStart { source } = &event.payload else {
        return Ok(Reply::default());
    };
    if event.name != EventName::SessionStart {
        return Ok(Reply::default());
    }
    let root = ctx.project_root(event);
    let mut reply = Reply::default();
    if let Some(project) = read_capped(&root.join(PROJECT_FILE), PROJECT_MAX)? {
        reply.context.push(format!(
            "Project context (from {PROJECT_FILE}):\n\n{}",
            project.text
        ));
    }
    if let Some(path) = preferences::locate(ctx, &root)
        && let Some(prefs) = read_capped(&path, PREFERENCES_MAX)?
    {
        reply.context.push(format!(
            "The user's preferences (from {}); follow them:\n\n{}",
            display_relative(&root, &path),
            prefs.text
        ));
    }
    if let Some(discoveries) = recent_discoveries(&root.join(DISCOVERIES_FILE))? {
        reply.context.push(format!(
            "Recent discoveries (from {DISCOVERIES_FILE}, newest first):\n\n{discoveries}"
        ));
    }
    if source == "compact" {
        let state = ctx.state();
        let exported = state
            .as_ref()
            .map(|s| session::load(s, event.session_id.as_deref()))
            .and_then(|s| s.transcript_exports.last().cloned());
        reply.context.push(match exported {
            Some(path) => format!(
                "This conversation was just compacted. The full transcript from before the compaction is at {path}: read it if you need details that the summary lost."
            ),
            None => "This conversation was just compacted; the project context above is restated.".into(),
        });
    }
    Ok(reply)
}

/// The newest entries of a discoveries file, newest first, within [`DISCOVERIES_MAX`].
///
/// Entries are its `## ` sections. Sections whose heading holds a date (`YYYY-MM-DD`) are
/// ordered by it; otherwise the file's order is taken as oldest first (entries are appended).
pub fn recent_discoveries(path: &Path) -> Result<Option<String>> {
    let Some(file) = read_capped(path, 200_000)? else {
        return Ok(None);
    };
    let mut entries: Vec<(Option<String>, usize, String)> = Vec::new();
    let mut current: Option<String> = None;
    for line in file.text.lines() {
        if line.starts_with("## ") {
            if let Some(entry) = current.take() {
                entries.push((date_in(&entry), entries.len(), entry));
            }
            current = Some(String::new());
        }
        if let Some(entry) = current.as_mut() {
            entry.push_str(line);
            entry.push('\n');
        }
    }
    if let Some(entry) = current.take() {
        entries.push((date_in(&entry), entries.len(), entry));
    }
    if entries.is_empty() {
        return Ok(Some(cap(&file.text, DISCOVERIES_MAX, path).text));
    }
    // Newest first: by date where there is one, else by position.
    entries.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let total = entries.len();
    let mut out = String::new();
    let mut shown = 0;
    for (_, _, entry) in &entries {
        let entry = entry.trim();
        if out.chars().count() + entry.chars().count() + 2 > DISCOVERIES_MAX && shown > 0 {
            break;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&cap(entry, DISCOVERIES_MAX - 200, path).text);
        shown += 1;
    }
    if shown < total {
        out.push_str(&format!(
            "\n\n[{} older entries in {DISCOVERIES_FILE}]",
            total - shown
        ));
    }
    Ok(Some(out))
}

fn date_in(entry: &str) -> Option<String> {
    let heading = entry.lines().next()?;
    let bytes = heading.as_bytes();
    (0..bytes.len().saturating_sub(9)).find_map(|i| {
        let candidate = heading.get(i..i + 10)?;
        let ok = candidate.char_indices().all(|(j, c)| match j {
            4 | 7 => c == '-',
            _ => c.is_ascii_digit(),
        });
        ok.then(|| candidate.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_discoveries_first_within_the_cap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("DISCOVERIES.md");
        let mut text = String::from("# Discoveries\n\n");
        for day in 1..=28 {
            text.push_str(&format!(
                "## Finding {day} (2026-02-{day:02})\n{}\n\n",
                "detail ".repeat(20)
            ));
        }
        std::fs::write(&path, text).expect("write");
        let recent = recent_discoveries(&path).expect("read").expect("some");
        assert!(recent.starts_with("## Finding 28 (2026-02-28)"), "{recent}");
        assert!(
            recent.chars().count() <= DISCOVERIES_MAX + 80,
            "{}",
            recent.len()
        );
        assert!(recent.contains("older entries"), "{recent}");
        assert!(!recent.contains("Finding 1 "), "{recent}");
    }

    #[test]
    fn undated_entries_newest_last_in_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("DISCOVERIES.md");
        std::fs::write(&path, "## old\na\n## new\nb\n").expect("write");
        let recent = recent_discoveries(&path).expect("read").expect("some");
        assert!(recent.starts_with("## new"), "{recent}");
    }
}
