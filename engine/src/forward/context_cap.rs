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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_within_the_cap_is_left_alone() {
        let mut reply = Reply {
            context: vec!["a".repeat(CONTEXT_CAP)],
            ..Reply::default()
        };
        let before = reply.clone();
        cap_context(&mut reply, None, Some("s"));
        assert_eq!(reply, before);
    }

    #[test]
    fn context_past_the_cap_is_cut_and_saved_whole() {
        let state_root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(state_root.path());
        let mut reply = Reply {
            context: vec!["a".repeat(CONTEXT_CAP)],
            plain_context: vec!["b".repeat(10)],
            ..Reply::default()
        };
        cap_context(&mut reply, Some(&state), Some("s"));
        assert!(reply.plain_context.is_empty());
        let [kept] = reply.context.as_slice() else {
            panic!("one context: {:?}", reply.context);
        };
        assert_eq!(kept.chars().count(), CONTEXT_CAP);
        assert!(kept.contains(&format!("[context cut at {CONTEXT_CAP} characters; all")));
        let saved: Vec<_> = std::fs::read_dir(state.context_dir())
            .expect("context dir")
            .flatten()
            .collect();
        assert_eq!(saved.len(), 1);
        let whole = std::fs::read_to_string(saved[0].path()).expect("saved");
        assert_eq!(whole.chars().count(), CONTEXT_CAP + 10 + 2);

        let mut unsaved = Reply {
            context: vec!["a".repeat(CONTEXT_CAP + 1)],
            ..Reply::default()
        };
        cap_context(&mut unsaved, None, None);
        assert!(unsaved.context[0].ends_with(&format!(
            "[context cut at {CONTEXT_CAP} characters of {}]",
            CONTEXT_CAP + 1
        )));
    }
}
