//! Background handlers still running when `claude -p` ends are cancelled under amplihack as
//! natively. Claude Code 2.1.332 cancels its own at the end of the session, before its SessionEnd
//! handlers run: SIGTERM to the handler's process group (a trap on it runs), then SIGKILL to what
//! is left 1.5 s later; one that ended before is not touched. The plugin
//! (`tests/fixtures/plugins/late-writers`) has `async: true` and first-line `{"async": true}`
//! handlers on PostToolUse and Stop that work 3 s and then write a file, one of 0.1 s that ends
//! during the session, and one that refuses SIGTERM. Natively (`--plugin-dir`) and through
//! amplihack (`~/.amplifier/hooks/`), the same files are written, and no more once the handlers
//! would have ended.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::support;
use crate::support::fake_anthropic::Turn;
use crate::support::native;

fn script() -> Vec<Turn> {
    vec![
        // Its PostToolUse handlers start; the quick one ends during the next call.
        Turn::bash("echo one"),
        Turn::bash("sleep 1; echo two"),
        Turn::text("done"),
    ]
}

/// The files the plugin's handlers wrote (`late/` in the project) and their contents.
fn written(project: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(project.join("late"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect()
}

#[test]
fn background_handlers_running_at_the_end_of_claude_p_are_cancelled_as_natively() {
    let plugin = support::repo_root().join("tests/fixtures/plugins/late-writers");
    let native = native::natively(&plugin, script());
    let forwarded = native::through_amplihack(&plugin, script());
    // Longer than any handler would have worked (3 s), had it been left running.
    std::thread::sleep(Duration::from_millis(3500));
    let expected: BTreeMap<String, String> = [
        ("post-quick.done", "done\n"),
        ("post-configured.cancelled", "SIGTERM\n"),
        ("post-declared.cancelled", "SIGTERM\n"),
        ("stop-configured.cancelled", "SIGTERM\n"),
        ("stop-declared.cancelled", "SIGTERM\n"),
        ("stop-stubborn.refused", "SIGTERM\n"),
        ("session-end", "ended\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(written(&native.env.project), expected, "natively");
    assert_eq!(
        written(&forwarded.env.project),
        expected,
        "under amplihack\n{}",
        forwarded.run.hook_complaints().join("\n")
    );
}
