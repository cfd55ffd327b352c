//! Tool names. Everything inside amplihack works with Claude Code's names (`Bash`, `Write`);
//! each host names its tools its own way (Amplifier `bash`, Qwen and Gemini `run_shell_command`,
//! Droid `Execute`, ...), and the AMCP plugin dialect has its own too.
//!
//! [`HOST_TOOLS`] is the one table of the hosts' names, keyed by host: a new host is one row.
//! The pipeline's first step renames a host's tool to Claude Code's
//! ([`crate::hosts::normalise`]), so the Bash guard, the metrics and every matcher read one name.
//! [`TOOLS`] is the AMCP dialect's names, by Claude Code's.

use crate::host::Host;

/// Each host's tool names that differ from Claude Code's: (host's name, Claude Code's name).
/// A host not listed names its tools as Claude Code does.
pub const HOST_TOOLS: &[(Host, &[(&str, &str)])] = &[
    (
        Host::Amplifier,
        &[
            ("bash", "Bash"),
            ("write_file", "Write"),
            ("edit_file", "Edit"),
            ("multi_edit", "MultiEdit"),
            ("read_file", "Read"),
            ("grep", "Grep"),
            ("glob", "Glob"),
            ("web_fetch", "WebFetch"),
            ("web_search", "WebSearch"),
            ("task", "Task"),
            ("todo", "TodoWrite"),
            ("notebook_edit", "NotebookEdit"),
        ],
    ),
    (
        Host::Codex,
        &[
            ("exec_command", "Bash"),
            ("shell", "Bash"),
            ("local_shell", "Bash"),
            ("apply_patch", "Edit"),
        ],
    ),
    (
        Host::Copilot,
        &[
            ("bash", "Bash"),
            ("edit", "Edit"),
            ("create", "Write"),
            ("view", "Read"),
            ("glob", "Glob"),
            ("grep", "Grep"),
            ("web_fetch", "WebFetch"),
        ],
    ),
    (
        Host::Qwen,
        // Qwen Code 0.24.4's tool names (its `ToolNames`).
        &[
            ("run_shell_command", "Bash"),
            ("write_file", "Write"),
            ("edit", "Edit"),
            ("read_file", "Read"),
            ("glob", "Glob"),
            ("grep_search", "Grep"),
            ("list_directory", "LS"),
            ("web_fetch", "WebFetch"),
            ("web_search", "WebSearch"),
            ("todo_write", "TodoWrite"),
            ("agent", "Task"),
            ("notebook_edit", "NotebookEdit"),
        ],
    ),
    // Droid 0.225.2: Claude Code's names but for these (Read, LS, Grep, Glob, Edit, MultiEdit,
    // Task, TodoWrite, WebSearch are the same).
    (
        Host::Droid,
        &[
            ("Execute", "Bash"),
            ("Create", "Write"),
            ("ApplyPatch", "Edit"),
            ("FetchUrl", "WebFetch"),
        ],
    ),
    (
        Host::Gemini,
        // Gemini CLI 0.61.0's tool names (its `*_TOOL_NAME` constants).
        &[
            ("run_shell_command", "Bash"),
            ("write_file", "Write"),
            ("replace", "Edit"),
            ("read_file", "Read"),
            ("read_many_files", "Read"),
            ("glob", "Glob"),
            ("grep_search", "Grep"),
            // Gemini CLI before 0.2x named its grep tool so.
            ("search_file_content", "Grep"),
            ("list_directory", "LS"),
            ("web_fetch", "WebFetch"),
            ("google_web_search", "WebSearch"),
            ("write_todos", "TodoWrite"),
            ("invoke_agent", "Task"),
        ],
    ),
    (
        Host::Opencode,
        &[
            ("bash", "Bash"),
            ("write", "Write"),
            ("edit", "Edit"),
            ("read", "Read"),
            ("glob", "Glob"),
            ("grep", "Grep"),
            ("list", "LS"),
            ("webfetch", "WebFetch"),
            ("todowrite", "TodoWrite"),
            ("task", "Task"),
        ],
    ),
    // Mistral Vibe 3.0.3: hooks get the qualified name (`file_system.bash`); the model's names
    // (`bash`, ...) are Vibe's own inside.
    (
        Host::Vibe,
        &[
            ("file_system.bash", "Bash"),
            ("file_system.write_file", "Write"),
            ("file_system.edit", "Edit"),
            ("file_system.read_file", "Read"),
            ("bash", "Bash"),
            ("write_file", "Write"),
            ("edit", "Edit"),
            ("read_file", "Read"),
            ("todo", "TodoWrite"),
        ],
    ),
    // Kimi CLI 1.52.0's tool names.
    (
        Host::Kimi,
        &[
            ("Shell", "Bash"),
            ("WriteFile", "Write"),
            ("StrReplaceFile", "Edit"),
            ("ReadFile", "Read"),
            ("FetchURL", "WebFetch"),
            ("SearchWeb", "WebSearch"),
            ("SetTodoList", "TodoWrite"),
            ("Agent", "Task"),
        ],
    ),
    // Pi 0.73.1's built-in tools (`read`, `bash`, `edit`, `write` offered by default).
    (
        Host::Pi,
        &[
            ("bash", "Bash"),
            ("write", "Write"),
            ("edit", "Edit"),
            ("read", "Read"),
            ("grep", "Grep"),
            ("find", "Glob"),
            ("ls", "LS"),
        ],
    ),
    // Cline CLI 3.0.65's tools (`editor` is a Write when it has no `old_text`: hosts::cline).
    (
        Host::Cline,
        &[
            ("run_commands", "Bash"),
            ("editor", "Edit"),
            ("read_files", "Read"),
            ("search_codebase", "Grep"),
            ("fetch_web_content", "WebFetch"),
            ("spawn_agent", "Task"),
        ],
    ),
];

/// `host`'s row of [`HOST_TOOLS`] (empty for a host that uses Claude Code's names).
pub fn host_tools(host: Host) -> &'static [(&'static str, &'static str)] {
    HOST_TOOLS
        .iter()
        .find(|(h, _)| *h == host)
        .map_or(&[], |(_, names)| names)
}

/// The Claude Code name of `host`'s tool (itself when the host has no other name for it).
pub fn claude_name_for(host: Host, name: &str) -> &str {
    host_tools(host)
        .iter()
        .find(|(theirs, _)| *theirs == name)
        .map_or(name, |(_, claude)| claude)
}

/// The Claude Code name of a tool named in an event that did not say its host: Amplifier's
/// names are understood everywhere (its bridge's events and the specification's examples use
/// them); other hosts' are renamed by their `--host` ([`claude_name_for`]).
pub fn canonical_tool_name(name: &str) -> &str {
    claude_name_for(Host::Amplifier, name)
}

/// One tool, by the names the AMCP dialect gives it.
#[derive(Debug, Clone, Copy)]
pub struct ToolNames {
    /// Claude Code's name, the one amplihack uses inside.
    pub claude: &'static str,
    /// The AMCP dialect's names (the first is the one amplihack writes), none when it has none.
    pub amcp: &'static [&'static str],
}

const fn tool(claude: &'static str, amcp: &'static [&'static str]) -> ToolNames {
    ToolNames { claude, amcp }
}

/// The AMCP dialect's tool names, by Claude Code's. Names not listed are the same everywhere
/// (`mcp__memory__store`).
pub const TOOLS: &[ToolNames] = &[
    tool("Bash", &["bash"]),
    tool("Write", &["write_file"]),
    tool("Edit", &["apply_patch", "edit_file"]),
    tool("MultiEdit", &["apply_patch", "edit_file"]),
    tool("Read", &["read_file"]),
    tool("Grep", &["grep"]),
    tool("Glob", &["glob"]),
    tool("WebFetch", &["web_fetch"]),
    tool("WebSearch", &["web_search"]),
    tool("Task", &["task"]),
    tool("TodoWrite", &["todo_write", "todo"]),
    tool("NotebookEdit", &[]),
];

/// The Claude Code tools an AMCP tool name stands for (itself, when it has no counterpart).
pub fn claude_tools_for_amcp(name: &str) -> Vec<&str> {
    let tools: Vec<&str> = TOOLS
        .iter()
        .filter(|t| t.amcp.contains(&name))
        .map(|t| t.claude)
        .collect();
    if tools.is_empty() { vec![name] } else { tools }
}

/// The AMCP name of a tool, whichever host named it (Claude Code's name when AMCP has none).
pub fn amcp_tool(name: &str) -> &str {
    let claude = canonical_tool_name(name);
    TOOLS
        .iter()
        .find(|t| t.claude == claude)
        .and_then(|t| t.amcp.first().copied())
        .unwrap_or(claude)
}

/// Argument names AMCP and the proposal write for the host's (`path` for `file_path`).
pub const ARG_ALIASES: &[(&str, &str)] = &[("file_path", "path")];

/// A tool argument by the name a rule or hook gives it (`path` finds `file_path` too).
pub fn tool_arg<'v>(input: &'v serde_json::Value, name: &str) -> Option<&'v serde_json::Value> {
    input.get(name).or_else(|| {
        ARG_ALIASES
            .iter()
            .find(|(_, dialect)| *dialect == name)
            .and_then(|(host, _)| input.get(*host))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amcp_names_map_both_ways() {
        assert_eq!(amcp_tool("Bash"), "bash");
        assert_eq!(amcp_tool("bash"), "bash");
        assert_eq!(amcp_tool("Edit"), "apply_patch");
        assert_eq!(amcp_tool("todo"), "todo_write");
        assert_eq!(amcp_tool("NotebookEdit"), "NotebookEdit");
        assert_eq!(amcp_tool("mcp__x__y"), "mcp__x__y");
        assert_eq!(claude_tools_for_amcp("apply_patch"), ["Edit", "MultiEdit"]);
        assert_eq!(claude_tools_for_amcp("todo"), ["TodoWrite"]);
        assert_eq!(claude_tools_for_amcp("custom"), ["custom"]);
    }

    #[test]
    fn amplifier_names_map_to_claude_names() {
        for (given, want) in [
            ("bash", "Bash"),
            ("write_file", "Write"),
            ("edit_file", "Edit"),
            ("read_file", "Read"),
            ("Bash", "Bash"),
            ("mcp__memory__store", "mcp__memory__store"),
            ("", ""),
        ] {
            assert_eq!(canonical_tool_name(given), want, "{given}");
        }
    }

    /// Every host's shell tool is Claude Code's `Bash`: the guard reads one name.
    #[test]
    fn each_hosts_shell_tool_is_bash() {
        for (host, shell) in [
            (Host::ClaudeCode, "Bash"),
            (Host::Amplifier, "bash"),
            (Host::Codex, "exec_command"),
            (Host::Copilot, "bash"),
            (Host::Qwen, "run_shell_command"),
            (Host::Droid, "Execute"),
            (Host::Gemini, "run_shell_command"),
            (Host::Opencode, "bash"),
            (Host::Vibe, "file_system.bash"),
            (Host::Kimi, "Shell"),
            (Host::Pi, "bash"),
            (Host::Cline, "run_commands"),
        ] {
            assert_eq!(claude_name_for(host, shell), "Bash", "{host:?}");
            assert_eq!(claude_name_for(host, "mcp__x__y"), "mcp__x__y", "{host:?}");
        }
    }

    /// Within one host, a name means one tool, and every host has at most one row.
    #[test]
    fn one_row_per_host_and_no_name_twice() {
        for (i, (host, names)) in HOST_TOOLS.iter().enumerate() {
            assert!(
                HOST_TOOLS[i + 1..].iter().all(|(h, _)| h != host),
                "{host:?} has two rows"
            );
            for (j, (theirs, _)) in names.iter().enumerate() {
                assert!(
                    names[j + 1..].iter().all(|(t, _)| t != theirs),
                    "{host:?} names {theirs} twice"
                );
            }
        }
    }
}
