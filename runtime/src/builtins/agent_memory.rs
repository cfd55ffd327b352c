//! UserPromptSubmit: the memory of each agent the prompt names.
//!
//! Agents are the project's `.claude/agents/**/*.md` (named by their front matter's `name:`, else
//! the file's stem). A prompt names one as `@name`, or by the name as a whole word. For each, the
//! newest [`PER_AGENT`] memory entries recorded for that agent in this project's store
//! ([`amplihack_state::memory`]) are injected, at most [`MAX_CHARS`] characters in all. The prompt
//! also goes into the session record (the first prompt, and the agents named).

use std::path::{Path, PathBuf};

use amplihack_protocol::{Payload, Reply};
use amplihack_state::{memory, session};

use super::{BuiltinError, Result};
use crate::pipeline::Call;

pub const AGENTS_DIR: &str = ".claude/agents";
pub const PER_AGENT: usize = 5;
pub const MAX_CHARS: usize = 3_000;
/// Bounds on the agents directory walk: depth and files.
const MAX_DEPTH: usize = 4;
const MAX_FILES: usize = 500;
/// Directory entries looked at, at most (a repository's `.claude/agents` may be huge, or a link
/// to `/`).
const MAX_ENTRIES: usize = 5_000;

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let Payload::Prompt { prompt } = &call.event.payload else {
        return Ok(Reply::default());
    };
    let ctx = call.ctx;
    let state = ctx.state().ok_or(BuiltinError::NoStateDir)?;
    let root = ctx.project_root(call.event);
    let named = named_agents(prompt, &defined_agents(&root.join(AGENTS_DIR)));
    let first_prompt: String = prompt.trim().chars().take(500).collect();
    session::update(&state, call.event.session_id.as_deref(), |s| {
        if s.first_prompt.is_none() && !first_prompt.is_empty() && !first_prompt.starts_with('/') {
            s.first_prompt = Some(first_prompt.clone());
        }
        if s.project.is_none() {
            s.project = Some(root.to_string_lossy().into_owned());
        }
        for agent in &named {
            if !s.agents.contains(agent) {
                s.agents.push(agent.clone());
            }
        }
    })?;
    if named.is_empty() {
        return Ok(Reply::default());
    }
    let entries = memory::Store::for_project(&state, &root).entries()?;
    let mut out = String::new();
    for agent in &named {
        let mine: Vec<&memory::Entry> = entries
            .iter()
            .rev()
            .filter(|e| e.agent.as_deref() == Some(agent.as_str()))
            .take(PER_AGENT)
            .collect();
        if mine.is_empty() {
            continue;
        }
        out.push_str(&format!("## Memory for the {agent} agent (newest first)\n"));
        for entry in mine {
            out.push_str(&format!(
                "- [{} {}] {}\n",
                entry.time,
                entry.kind,
                entry.text.trim()
            ));
        }
        out.push('\n');
    }
    if out.is_empty() {
        return Ok(Reply::default());
    }
    let store = memory::Store::for_project(&state, &root);
    let body = super::cap(out.trim_end(), MAX_CHARS, store.path()).text;
    Ok(Reply::context(format!(
        "What amplihack remembers for the agents this prompt names:\n\n{body}"
    )))
}

/// Agent names defined under `dir` (recursively, bounded), sorted, deduplicated.
pub fn defined_agents(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack: Vec<(PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
    let (mut files, mut seen) = (0, 0);
    'walk: while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                break 'walk;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < MAX_DEPTH {
                stack.push((path, depth + 1));
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
                files += 1;
                if files > MAX_FILES {
                    break 'walk;
                }
                if let Some(name) = agent_name(&path) {
                    found.push(name);
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The front matter's `name:`, else the file stem.
fn agent_name(path: &Path) -> Option<String> {
    let head: String = amplihack_state::bounded::read_bounded(path, 16 * 1024)
        .ok()??
        .text()
        .chars()
        .take(4_000)
        .collect();
    let front = head
        .strip_prefix("---")
        .and_then(|rest| rest.split("\n---").next());
    let named = front.and_then(|f| {
        f.lines().find_map(|l| {
            l.trim()
                .strip_prefix("name:")
                .map(|n| n.trim().trim_matches(['"', '\'']).to_string())
        })
    });
    named
        .filter(|n| !n.is_empty())
        .or_else(|| Some(path.file_stem()?.to_string_lossy().into_owned()))
}

/// The agents of `known` that `prompt` names, in the order of `known`.
pub fn named_agents(prompt: &str, known: &[String]) -> Vec<String> {
    let lower = prompt.to_lowercase();
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
    known
        .iter()
        .filter(|name| {
            let needle = name.to_lowercase();
            lower.match_indices(&needle).any(|(i, _)| {
                let before = lower[..i].chars().next_back();
                let after = lower[i + needle.len()..].chars().next();
                (before == Some('@') || !is_word(before)) && !is_word(after)
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_named_as_words_or_mentions() {
        let known: Vec<String> = ["architect", "builder", "fix-agent", "reviewer"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cases: &[(&str, &[&str])] = &[
            ("ask @architect to sketch it", &["architect"]),
            (
                "have the Builder and the reviewer pair on it",
                &["builder", "reviewer"],
            ),
            ("run fix-agent on the failing test", &["fix-agent"]),
            ("the architecture is fine", &[]),
            ("rebuilder reviewers", &[]),
            ("/dev implement the parser", &[]),
        ];
        for (prompt, want) in cases {
            assert_eq!(named_agents(prompt, &known), *want, "{prompt}");
        }
    }

    #[test]
    fn agent_files_define_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let agents = dir.path();
        std::fs::create_dir_all(agents.join("amplihack/core")).expect("mkdir");
        std::fs::write(agents.join("amplihack/core/architect.md"), "# Architect\n").expect("w");
        std::fs::write(
            agents.join("tester.md"),
            "---\nname: test-writer\ndescription: x\n---\nbody",
        )
        .expect("w");
        assert_eq!(defined_agents(agents), ["architect", "test-writer"]);
    }
}
