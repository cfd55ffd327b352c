//! Tool names: Amplifier's tools are lowercase snake_case (`bash`, `write_file`); Claude Code's are
//! CamelCase (`Bash`, `Write`); the AMCP dialect has its own. Everything inside amplihack works
//! with Claude Code's names. [`TOOLS`] is the one table of them: a tool is a row, a host or
//! dialect a column (a new host adds a column, a new tool a row).

/// One tool, by the name each host or dialect gives it.
#[derive(Debug, Clone, Copy)]
pub struct ToolNames {
    /// Claude Code's name, the one amplihack uses inside.
    pub claude: &'static str,
    /// Amplifier's, when it has the tool.
    pub amplifier: Option<&'static str>,
    /// The AMCP dialect's names (the first is the one amplihack writes), none when it has none.
    pub amcp: &'static [&'static str],
}

const fn tool(
    claude: &'static str,
    amplifier: Option<&'static str>,
    amcp: &'static [&'static str],
) -> ToolNames {
    ToolNames {
        claude,
        amplifier,
        amcp,
    }
}

/// Every tool a host or dialect names differently from Claude Code. Names not listed are the same
/// everywhere (`mcp__memory__store`).
pub const TOOLS: &[ToolNames] = &[
    tool("Bash", Some("bash"), &["bash"]),
    tool("Write", Some("write_file"), &["write_file"]),
    tool("Edit", Some("edit_file"), &["apply_patch", "edit_file"]),
    tool(
        "MultiEdit",
        Some("multi_edit"),
        &["apply_patch", "edit_file"],
    ),
    tool("Read", Some("read_file"), &["read_file"]),
    tool("Grep", Some("grep"), &["grep"]),
    tool("Glob", Some("glob"), &["glob"]),
    tool("WebFetch", Some("web_fetch"), &["web_fetch"]),
    tool("WebSearch", Some("web_search"), &["web_search"]),
    tool("Task", Some("task"), &["task"]),
    tool("TodoWrite", Some("todo"), &["todo_write", "todo"]),
    tool("NotebookEdit", Some("notebook_edit"), &[]),
];

/// The Claude Code name of a tool, whichever host named it.
pub fn canonical_tool_name(name: &str) -> &str {
    TOOLS
        .iter()
        .find(|t| t.amplifier == Some(name))
        .map_or(name, |t| t.claude)
}

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
    use super::{amcp_tool, canonical_tool_name, claude_tools_for_amcp};

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
}
