//! Matchers, as Claude Code 2.1.328 evaluates them: `*`, empty or missing match everything; a
//! pattern made only of letters, digits, `_`, `-`, spaces and the separators `|` and `,` is a list
//! of names matched exactly; anything else is an unanchored regular expression; an expression that
//! does not compile is compared exactly instead of failing the plugin.
//!
//! And a handler's `if`: one permission-rule pattern, `Tool` or `Tool(pattern)`, tested against
//! the tool call ([`condition_holds`]).

use serde_json::Value;

/// Whether `matcher` selects an event whose matcher target is `target`. Events without a matcher
/// field (`target` is `None`) are matched by every group, as Claude Code ignores matchers there.
pub fn matches(matcher: Option<&str>, target: Option<&str>) -> bool {
    let Some(target) = target else { return true };
    // The subagent tool is `Agent` since Claude Code 2.1 and was `Task` before (Amplifier's `task`
    // too); Claude Code 2.1.328 still runs a `Task` matcher for an `Agent` call, so either name
    // matches either tool.
    match target {
        "Agent" => matches_one(matcher, "Agent") || matches_one(matcher, "Task"),
        "Task" => matches_one(matcher, "Task") || matches_one(matcher, "Agent"),
        _ => matches_one(matcher, target),
    }
}

fn matches_one(matcher: Option<&str>, target: &str) -> bool {
    let pattern = matcher.unwrap_or("").trim();
    if pattern.is_empty() || pattern == "*" {
        return true;
    }
    if pattern
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | ',' | ' ' | '-'))
    {
        return pattern.split(['|', ',']).any(|name| name.trim() == target);
    }
    match regex_lite::Regex::new(pattern) {
        Ok(re) => re.is_match(target),
        Err(_) => pattern == target,
    }
}

/// Whether a handler's `if` rule holds for a tool call. Claude Code's rules: never on an event
/// without a tool; `Tool` alone matches every call of it; `Bash(prefix:*)` matches a command that
/// starts with `prefix`, other patterns are globs (`*` any text) over the Bash command (any of its
/// `&&`, `||`, `;` or `|` parts) or the file path (or its name); a rule that cannot be read holds
/// (best-effort, failing open as Claude Code does).
pub fn condition_holds(rule: &str, tool: Option<&str>, input: Option<&Value>) -> bool {
    let Some(tool) = tool else { return false };
    let rule = rule.trim();
    let Some((name, pattern)) = rule
        .strip_suffix(')')
        .and_then(|r| r.split_once('('))
        .map(|(name, pattern)| (name.trim(), pattern.trim()))
    else {
        return rule.contains(['(', ')']) || rule == tool;
    };
    if name != tool {
        return false;
    }
    let field = |key: &str| input.and_then(|i| i.get(key)).and_then(Value::as_str);
    if let Some(command) = field("command") {
        let parts = command.split(['&', '|', ';', '\n']).map(str::trim);
        return parts
            .filter(|p| !p.is_empty())
            .any(|part| match pattern.strip_suffix(":*") {
                Some(prefix) => part == prefix || part.starts_with(&format!("{prefix} ")),
                None => glob(pattern, part),
            });
    }
    match field("file_path")
        .or_else(|| field("notebook_path"))
        .or_else(|| field("path"))
    {
        Some(path) => {
            let file_name = path.rsplit('/').next().unwrap_or(path);
            glob(pattern, path) || glob(pattern, file_name)
        }
        None => true,
    }
}

/// `*` matches any text (also empty); everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::{condition_holds, matches};
    use serde_json::json;

    #[test]
    fn if_conditions() {
        let bash = |c: &str| json!({"command": c});
        let cases = [
            (
                "Bash(git commit:*)",
                Some("Bash"),
                bash("git commit -m x"),
                true,
            ),
            (
                "Bash(git commit:*)",
                Some("Bash"),
                bash("cd a && git commit"),
                true,
            ),
            (
                "Bash(git commit:*)",
                Some("Bash"),
                bash("git commits"),
                false,
            ),
            ("Bash(git commit:*)", Some("Bash"), bash("git push"), false),
            ("Bash(git *)", Some("Bash"), bash("git status"), true),
            ("Bash(git *)", Some("Bash"), bash("ls"), false),
            ("Bash(npm test)", Some("Bash"), bash("npm test"), true),
            ("Bash", Some("Bash"), bash("anything"), true),
            (
                "Bash(git *)",
                Some("Edit"),
                json!({"file_path": "/a/git x"}),
                false,
            ),
            (
                "Edit(*.ts)",
                Some("Edit"),
                json!({"file_path": "/src/a.ts"}),
                true,
            ),
            (
                "Edit(*.ts)",
                Some("Edit"),
                json!({"file_path": "/src/a.rs"}),
                false,
            ),
            (
                "Edit(src/*)",
                Some("Edit"),
                json!({"file_path": "src/a/b.rs"}),
                true,
            ),
            // No tool: never. An unreadable rule: holds (fail open).
            ("Bash(git *)", None, json!({}), false),
            ("Bash(git *", Some("Bash"), bash("ls"), true),
        ];
        for (rule, tool, input, want) in cases {
            assert_eq!(
                condition_holds(rule, tool, Some(&input)),
                want,
                "{rule} {tool:?} {input}"
            );
        }
    }

    #[test]
    fn claude_code_matcher_semantics() {
        let cases: &[(Option<&str>, Option<&str>, bool)] = &[
            (None, Some("Bash"), true),
            (Some(""), Some("Bash"), true),
            (Some("*"), Some("Bash"), true),
            (Some("Bash"), Some("Bash"), true),
            (Some("Bash"), Some("bash"), false),
            (Some("Bash"), Some("BashOutput"), false),
            (Some("Edit|Write"), Some("Write"), true),
            (Some("Edit|Write"), Some("MultiEdit"), false),
            (Some("Edit.*"), Some("NotebookEdit"), true),
            (Some("^Edit$"), Some("NotebookEdit"), false),
            (Some("mcp__memory__.*"), Some("mcp__memory__store"), true),
            (Some("mcp__memory"), Some("mcp__memory__store"), false),
            (Some("startup|resume"), Some("resume"), true),
            (Some("(unclosed"), Some("(unclosed"), true),
            (Some("(unclosed"), Some("Bash"), false),
            (Some("Bash"), None, true),
            // 2.1.191 and 2.1.195: comma lists, spaces, and hyphenated names are exact.
            (Some("Bash, Write"), Some("Write"), true),
            (Some("code-reviewer"), Some("code-reviewer"), true),
            (Some("code-reviewer"), Some("xcode-reviewerx"), false),
            // 2.1.328 runs a `Task` matcher for its `Agent` tool (the subagent tool's old name).
            (Some("Task"), Some("Agent"), true),
            (Some("Task|Write"), Some("Agent"), true),
            (Some("Agent"), Some("Task"), true),
            (Some("Ta.*"), Some("Agent"), true),
            (Some("Task"), Some("Bash"), false),
            (Some("Agent"), Some("Agents"), false),
        ];
        for (matcher, target, want) in cases {
            assert_eq!(
                matches(*matcher, *target),
                *want,
                "{matcher:?} vs {target:?}"
            );
        }
    }
}
