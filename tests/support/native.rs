//! One plugin run both ways in the real Claude Code, for the comparisons with native: loaded by
//! Claude Code itself (`--plugin-dir`), and copied unchanged into `~/.amplifier/hooks/` behind
//! `amplihack install`. Each run has its own environment and its own fake model.

use std::path::Path;

use super::fake_anthropic::{FakeAnthropic, Turn};
use super::{ClaudeRun, TestEnv, copy_dir, stderr};

/// One way of running the plugin: its environment, the fake model it talked to, and the run.
pub struct Ran {
    pub env: TestEnv,
    pub fake: FakeAnthropic,
    pub run: ClaudeRun,
}

/// `plugin` (a directory) loaded by Claude Code with `--plugin-dir`, one `-p` session of `script`.
pub fn natively(plugin: &Path, script: Vec<Turn>) -> Ran {
    let env = TestEnv::new();
    let name = plugin.file_name().expect("a plugin directory");
    let dir = env.root().join("plugins").join(name);
    copy_dir(plugin, &dir);
    let fake = FakeAnthropic::start(script);
    let dir_arg = dir.to_string_lossy().into_owned();
    let run = env.claude_with(&fake.url, &["-p", "go", "--plugin-dir", &dir_arg], &[]);
    Ran { env, fake, run }
}

/// `plugin` copied into the user's `~/.amplifier/hooks/` after `amplihack install`, the same
/// session.
pub fn through_amplihack(plugin: &Path, script: Vec<Turn>) -> Ran {
    let env = TestEnv::new();
    let install = env.run_amplihack(&["install"]);
    assert!(install.status.success(), "{}", stderr(&install));
    let name = plugin.file_name().expect("a plugin directory");
    copy_dir(plugin, &env.user_hooks_dir().join(name));
    let fake = FakeAnthropic::start(script);
    let run = env.claude_with(&fake.url, &["-p", "go"], &[]);
    Ran { env, fake, run }
}

/// What Claude Code, amplihack, Amplifier and npm keep under HOME (relative paths: a file, or a
/// directory and everything in it): what is left there after a session and is not in this list
/// is a plugin's.
pub const HOSTS_OWN_HOME_FILES: &[&str] = &[
    ".claude.json",
    ".claude.json.backup",
    ".claude/projects",
    ".claude/statsig",
    ".claude/todos",
    ".claude/shell-snapshots",
    ".claude/settings.json",
    ".claude/backups",
    ".claude/debug",
    ".claude/session-env",
    ".claude/plugins",
    ".claude/telemetry",
    ".claude/file-history",
    ".claude/sessions",
    ".claude/tasks",
    ".claude/paste-cache",
    ".claude/cache",
    ".claude/history.jsonl",
    ".claude/.last-cleanup",
    ".claude/state/mcp-discover-verdicts.json",
    ".claude/.settings.json.amplihack.lock",
    ".npm",
    ".cache",
    ".local/state/amplihack",
    ".local/share/amplihack",
    ".local/share/man",
    ".local/share/bash-completion",
    ".local/share/zsh",
    ".config/fish",
    ".local/share/fish",
    ".amplifier/settings.yaml",
    ".amplifier/bundles",
];

/// Every file below `dir` (links not followed), named relative to `base`, with its metadata; a
/// path in `skip` (relative to `base`) is left out with everything below it.
pub fn files_below(dir: &Path, base: &Path, skip: &[String]) -> Vec<(String, std::fs::Metadata)> {
    fn walk(dir: &Path, base: &Path, skip: &[String], out: &mut Vec<(String, std::fs::Metadata)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap_or(&path).to_string_lossy();
            if skip
                .iter()
                .any(|s| rel == *s || rel.starts_with(&format!("{s}/")))
            {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                walk(&path, base, skip, out);
            } else {
                out.push((rel.into_owned(), meta));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, base, skip, &mut out);
    out
}
