//! Long outputs, kept as Claude Code keeps them: natively, Claude Code saves any one hook output
//! over [`OUTPUT_THRESHOLD`] characters whole under the session's `tool-results/` and gives the
//! model `<persisted-output>` with the size, the path and a preview of its first 2 KB (2.1.332).
//! Under Claude Code amplihack does the same per plugin output, so a plugin's long text reaches
//! the model as it does natively, whatever the other plugins and the built-ins answered. The other
//! hosts have no such rule: there the total is capped ([`super::cap_context`]).

use super::*;

/// Claude Code keeps an output over this many characters in a file.
pub const OUTPUT_THRESHOLD: usize = 10_000;
/// The preview's length, in characters ("Preview (first 2KB)").
const PREVIEW_CHARS: usize = 2_000;

/// Each of `reply`'s context texts (one plugin's answer) over [`OUTPUT_THRESHOLD`] characters,
/// saved whole where Claude Code saves them and replaced by what Claude Code shows the model.
pub fn keep_long_outputs(reply: &mut Reply, event: &HookEvent, state: &StateDir) {
    for (texts, field) in [
        (&mut reply.context, "additionalContext"),
        (&mut reply.plain_context, "stdout"),
    ] {
        for text in texts.iter_mut() {
            if text.chars().count() > OUTPUT_THRESHOLD {
                *text = persisted(text, event, state, field);
            }
        }
    }
}

/// What the model is given for `text`, saved whole in the session's `tool-results/` (amplihack's
/// own context directory where the event names no transcript); `text` cut to the threshold
/// where neither can be written, saying so.
fn persisted(text: &str, event: &HookEvent, state: &StateDir, field: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    let hash: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    let id = event
        .raw
        .get("tool_use_id")
        .and_then(Value::as_str)
        .filter(|id| is_plain_name(id))
        .map_or_else(
            || format!("{}", amplihack_state::time::now_unix().as_nanos()),
            str::to_string,
        );
    let name = format!("hook-{id}-{}-{hash}-{field}.txt", event.name.as_str());
    let path = tool_results_dir(event)
        .unwrap_or_else(|| state.context_dir())
        .join(name);
    let preview: String = text.chars().take(PREVIEW_CHARS).collect();
    match files::replace(&path, text.as_bytes()) {
        Ok(()) => format!(
            "<persisted-output>\nOutput too large ({:.1}KB). Full output saved to: {}\n\nPreview (first 2KB):\n{preview}\n...\n</persisted-output>",
            text.len() as f64 / 1024.0,
            path.display()
        ),
        Err(error) => {
            let head: String = text.chars().take(OUTPUT_THRESHOLD).collect();
            format!("{head}\n\n[output cut at {OUTPUT_THRESHOLD} characters: {error}]")
        }
    }
}

/// `<transcript's directory>/<session>/tool-results`, where Claude Code keeps a session's long
/// outputs: only for a transcript path of Claude Code's shape (`…/<session>.jsonl`, an existing
/// directory).
fn tool_results_dir(event: &HookEvent) -> Option<PathBuf> {
    let transcript = Path::new(event.transcript_path.as_deref()?);
    let session = transcript
        .file_name()?
        .to_str()?
        .strip_suffix(".jsonl")
        .filter(|s| is_plain_name(s))?;
    let dir = transcript
        .parent()
        .filter(|d| d.is_absolute() && d.is_dir())?;
    Some(dir.join(session).join("tool-results"))
}

/// A name that is one path component of letters, digits, `-` and `_`.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(transcript: &Path) -> HookEvent {
        let raw = serde_json::json!({
            "hook_event_name": "PostToolUse", "session_id": "s1", "tool_use_id": "toolu_1",
            "transcript_path": transcript, "tool_name": "Bash", "tool_input": {"command": "ls"},
            "tool_response": {}
        });
        HookEvent::parse(raw.to_string().as_bytes(), None).expect("event")
    }

    #[test]
    fn an_output_over_the_threshold_is_saved_whole_and_previewed_as_claude_code_does() {
        let root = tempfile::tempdir().expect("tempdir");
        let transcript = root.path().join("s1.jsonl");
        std::fs::write(&transcript, "").expect("transcript");
        let state = StateDir::at(root.path().join("state"));
        let long = format!("LONG {}", "x".repeat(12_000));
        let mut reply = Reply {
            context: vec!["short".into(), long.clone()],
            ..Reply::default()
        };
        keep_long_outputs(&mut reply, &event(&transcript), &state);
        assert_eq!(reply.context[0], "short");
        let shown = &reply.context[1];
        assert!(
            shown.starts_with(
                "<persisted-output>\nOutput too large (11.7KB). Full output saved to: "
            ),
            "{shown}"
        );
        assert!(shown.ends_with("\n...\n</persisted-output>"), "{shown}");
        let path = shown
            .split("saved to: ")
            .nth(1)
            .and_then(|s| s.split('\n').next())
            .expect("path");
        assert!(
            path.starts_with(
                &root
                    .path()
                    .join("s1/tool-results/hook-toolu_1-PostToolUse-")
                    .display()
                    .to_string()
            ),
            "{path}"
        );
        assert!(path.ends_with("-additionalContext.txt"), "{path}");
        assert_eq!(std::fs::read_to_string(path).expect("saved"), long);
        let preview = shown
            .split("Preview (first 2KB):\n")
            .nth(1)
            .expect("preview");
        assert!(preview.starts_with(&long[..2_000]) && !preview.contains(&long[..2_001]));
    }

    #[test]
    fn an_output_at_the_threshold_is_left_alone() {
        let root = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(root.path().join("state"));
        let mut reply = Reply {
            context: vec!["y".repeat(OUTPUT_THRESHOLD)],
            ..Reply::default()
        };
        let before = reply.clone();
        keep_long_outputs(&mut reply, &event(&root.path().join("s1.jsonl")), &state);
        assert_eq!(reply, before);
    }
}
