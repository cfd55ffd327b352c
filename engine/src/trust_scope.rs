//! What trusting a project's plugins covers: every file they run, not only their hooks files.
//!
//! * every file under each plugin's directory, recursively (`.git` and `__pycache__` aside);
//! * the level's own `hooks.json`;
//! * any file inside the project that a handler's command names, as a path relative to the
//!   project (handlers run there) or under `$CLAUDE_PROJECT_DIR`/`$AMPLIFIER_PROJECT_DIR`:
//!   `python3 scripts/check.py`, `"$CLAUDE_PROJECT_DIR"/tools/lint.sh`.
//!
//! So a `git pull` that changes a trusted plugin's script asks for trust again.

use std::path::{Path, PathBuf};

use crate::discovery::Plugin;

/// Directories whose contents no handler runs.
const SKIPPED_DIRS: &[&str] = &[".git", "__pycache__"];
/// A plugin directory larger than this is fingerprinted up to here (a bound on every call's cost).
const MAX_FILES: usize = 5_000;

/// The files trust covers for `plugins` of `project`, sorted, each once.
pub fn files_to_trust(project: &Path, plugins: &[Plugin]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for plugin in plugins {
        files.push(plugin.file.clone());
        if plugin.root != plugin.hooks_dir {
            walk(&plugin.root, &mut files);
        }
        if let Ok(config) = &plugin.config {
            for group in &config.groups {
                for handler in &group.handlers {
                    named_files(project, &handler.command, &mut files);
                }
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if files.len() >= MAX_FILES {
            return;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()) {
                walk(&path, files);
            }
        } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
            files.push(path);
        }
    }
}

/// Files inside `project` that `command` names.
fn named_files(project: &Path, command: &str, files: &mut Vec<PathBuf>) {
    let project_text = project.to_string_lossy();
    for word in amplihack_protocol::command::leading_words(command, 64) {
        let mut word = word;
        for var in [
            "CLAUDE_PROJECT_DIR",
            "AMPLIFIER_PROJECT_DIR",
            "AMCP_PROJECT_DIR",
        ] {
            word = word
                .replace(&format!("${{{var}}}"), &project_text)
                .replace(&format!("${var}"), &project_text);
        }
        if word.starts_with('-')
            || word.contains('$')
            || !word.contains(['/', '.'])
            || word.split('/').any(|part| part == "..")
        {
            continue;
        }
        let path = project.join(&word);
        if path.starts_with(project) && path.is_file() {
            files.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{Level, load_level};

    #[test]
    fn trust_covers_plugin_directories_and_the_project_files_commands_name() {
        let project = tempfile::tempdir().expect("tempdir");
        let root = project.path();
        let hooks = root.join(".amplifier/hooks");
        let write = |path: &Path, text: &str| {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(
            &hooks.join("lint/hooks.json"),
            r#"{"hooks": {"PreToolUse": [{"hooks": [
                {"type": "command", "command": "python3 scripts/check.py --strict"},
                {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/tools/lint.sh"},
                {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/run.sh"},
                {"type": "command", "command": "echo not-a-file ../outside.sh"}
            ]}]}}"#,
        );
        write(&hooks.join("lint/run.sh"), "echo");
        write(&hooks.join("lint/lib/helper.py"), "x = 1");
        write(&hooks.join("lint/.git/HEAD"), "ref");
        write(&hooks.join("lint/__pycache__/helper.pyc"), "bytecode");
        write(&hooks.join("hooks.json"), r#"{"hooks": {}}"#);
        write(&root.join("scripts/check.py"), "print()");
        write(&root.join("tools/lint.sh"), "true");
        write(&root.join("unrelated.txt"), "not run by any plugin");
        write(&root.parent().expect("parent").join("outside.sh"), "true");
        let plugins = load_level(&hooks, Level::Project);
        let got: Vec<String> = files_to_trust(root, &plugins)
            .iter()
            .map(|p| p.strip_prefix(root).expect("inside").display().to_string())
            .collect();
        assert_eq!(
            got,
            [
                ".amplifier/hooks/hooks.json",
                ".amplifier/hooks/lint/hooks.json",
                ".amplifier/hooks/lint/lib/helper.py",
                ".amplifier/hooks/lint/run.sh",
                "scripts/check.py",
                "tools/lint.sh",
            ]
        );
    }
}
