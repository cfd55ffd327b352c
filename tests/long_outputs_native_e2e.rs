//! Long hook outputs, as Claude Code keeps them: the same plugin (`tests/fixtures/plugins/long-notes`:
//! a SessionStart context of 15,000 characters and a PostToolUse one of 12,000) loaded natively
//! with `--plugin-dir` and through amplihack, in the real Claude Code. Natively each output over
//! 10,000 characters is saved whole under the session's `tool-results/` and the model gets
//! `<persisted-output>`, the size, the path and a 2 KB preview; through amplihack the model gets
//! the same form (amplihack's own answers beside it), and the saved file holds the whole output.

use serde_json::Value;

use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{self, native};

fn plugin() -> std::path::PathBuf {
    support::repo_root().join("tests/fixtures/plugins/long-notes")
}

/// Each text the model was sent that carries the plugin's output, once per text (the first main
/// request that has it), with the saved file's path replaced by `PATH` and the file's contents.
fn persisted(fake: &FakeAnthropic) -> Vec<(String, String)> {
    fn walk(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::String(text) if text.contains("LONG-NOTES") => found.push(text.clone()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
            Value::Object(map) => map.values().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for request in fake.main_requests() {
        walk(&request["messages"], &mut texts);
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for text in texts {
        for part in text.split("<persisted-output>\n").skip(1) {
            let part = part.split("</persisted-output>").next().unwrap_or_default();
            let path = part
                .split("saved to: ")
                .nth(1)
                .and_then(|s| s.split('\n').next())
                .unwrap_or_default();
            let saved = std::fs::read_to_string(path).unwrap_or_else(|_| "(absent)".into());
            let shown = format!(
                "<persisted-output>\n{}</persisted-output>",
                part.replace(path, "PATH")
            );
            if !seen.iter().any(|(s, _)| *s == shown) {
                seen.push((shown, saved));
            }
        }
    }
    seen.sort();
    seen
}

#[test]
fn long_outputs_reach_the_model_as_natively() {
    let script = || vec![Turn::bash("echo hi"), Turn::text("done")];
    let native = persisted(&native::natively(&plugin(), script()).fake);
    assert_eq!(
        native.len(),
        2,
        "natively both outputs are kept: {native:#?}"
    );
    for (shown, saved) in &native {
        assert!(
            shown.contains("Preview (first 2KB):\nLONG-NOTES "),
            "{shown}"
        );
        assert!(
            saved.len() >= 12_000 && saved.starts_with("LONG-NOTES "),
            "{saved:.80}"
        );
    }

    let forwarded = native::through_amplihack(&plugin(), script());
    assert_eq!(
        persisted(&forwarded.fake),
        native,
        "under amplihack (left) and natively (right)"
    );
    let complaints = forwarded.run.hook_complaints();
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}
