//! The last stage, the context cap: Claude Code cuts any one context at 10,000 characters; so do
//! we, across all sources.

use super::*;

/// Claude Code cuts any one context at 10,000 characters; so do we, across all sources.
pub const CONTEXT_CAP: usize = 10_000;

/// Caps the total context at [`CONTEXT_CAP`] characters: past it, the whole text goes to a file
/// under `<state>/context/` and the reply carries its start and the file's path instead.
pub fn cap_context(reply: &mut Reply, state: Option<&StateDir>, session: Option<&str>) {
    let texts = (reply.plain_context.iter())
        .chain(&reply.context)
        .chain(&reply.unlabelled_context);
    let total: usize = texts.clone().map(|c| c.chars().count()).sum::<usize>()
        + texts.count().saturating_sub(1) * 2;
    if total <= CONTEXT_CAP {
        return;
    }
    let full = reply.all_context().join("\n\n");
    reply.plain_context.clear();
    reply.unlabelled_context.clear();
    let saved = state.and_then(|state| {
        let stamp = amplihack_state::time::now_unix().as_nanos();
        let path = state
            .context_dir()
            .join(format!("{}-{stamp}.md", session_key(session)));
        files::replace(&path, full.as_bytes()).ok().map(|()| path)
    });
    let note = match &saved {
        Some(path) => format!(
            "\n\n[context cut at {CONTEXT_CAP} characters; all {total} are in {}]",
            path.display()
        ),
        None => format!("\n\n[context cut at {CONTEXT_CAP} characters of {total}]"),
    };
    let keep = CONTEXT_CAP.saturating_sub(note.chars().count());
    let head: String = full.chars().take(keep).collect();
    reply.context = vec![format!("{head}{note}")];
}
