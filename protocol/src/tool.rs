//! Tool names: Amplifier's tools are lowercase snake_case (`bash`, `write_file`); Claude Code's are
//! CamelCase (`Bash`, `Write`). Everything inside amplihack works with Claude Code's names.

/// Amplifier tool name → Claude Code tool name. Names not listed are returned unchanged.
const AMPLIFIER_TO_CLAUDE: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("read_file", "Read"),
    ("write_file", "Write"),
    ("edit_file", "Edit"),
    ("multi_edit", "MultiEdit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("web_fetch", "WebFetch"),
    ("web_search", "WebSearch"),
    ("task", "Task"),
    ("todo", "TodoWrite"),
    ("notebook_edit", "NotebookEdit"),
];

/// The Claude Code name of a tool, whichever host named it.
pub fn canonical_tool_name(name: &str) -> &str {
    AMPLIFIER_TO_CLAUDE
        .iter()
        .find(|(amplifier, _)| *amplifier == name)
        .map_or(name, |(_, claude)| claude)
}

#[cfg(test)]
mod tests {
    use super::canonical_tool_name;

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
