//! Matchers, as Claude Code 2.1.332 evaluates them: `*`, empty or missing match everything; a
//! pattern made only of letters, digits, `_`, `-`, spaces and the separators `|` and `,` is a list
//! of names matched exactly; anything else is an unanchored JavaScript regular expression
//! (`RegExp.test`: ECMAScript syntax and semantics, through `regress`), so lookahead, lookbehind
//! and backreferences work, and a pattern JavaScript rejects (`(?i)^bash$`, `(?P<t>Bash)`, an
//! unclosed group) never matches, as Claude Code never runs it; `hooks validate` warns of it
//! ([`problem`]). Each pattern is compiled once per process.
//!
//! And a handler's `if`: one permission-rule pattern, `Tool` or `Tool(pattern)`, tested against
//! the tool call ([`condition_holds`]).

use std::cell::RefCell;
use std::collections::HashMap;

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
    if !is_expression(pattern) {
        return pattern.split(['|', ',']).any(|name| name.trim() == target);
    }
    with_compiled(pattern, |re| re.is_some_and(|re| re.find(target).is_some()))
}

/// Whether `pattern` takes the regular-expression path (it is not `*`, empty, or a list of names).
fn is_expression(pattern: &str) -> bool {
    let pattern = pattern.trim();
    !(pattern.is_empty()
        || pattern == "*"
        || pattern
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | ',' | ' ' | '-')))
}

/// Why a matcher never matches anything in Claude Code (JavaScript rejects it), if it does not:
/// for `hooks validate` and `hooks list`.
pub fn problem(matcher: &str) -> Option<String> {
    if !is_expression(matcher) {
        return None;
    }
    regress::Regex::new(matcher.trim()).err().map(|error| {
        format!(
            "matcher `{}` is not a JavaScript regular expression ({error}): Claude Code never runs its group, and neither does amplihack",
            matcher.trim()
        )
    })
}

thread_local! {
    /// Every expression this process compiled (`None`: JavaScript rejects it).
    static COMPILED: RefCell<HashMap<String, Option<regress::Regex>>> = RefCell::new(HashMap::new());
}

/// `f` of `pattern` compiled as a JavaScript RegExp (no flags), compiled once per process.
fn with_compiled<T>(pattern: &str, f: impl FnOnce(Option<&regress::Regex>) -> T) -> T {
    COMPILED.with_borrow_mut(|compiled| {
        let re = compiled
            .entry(pattern.to_string())
            .or_insert_with(|| regress::Regex::new(pattern).ok());
        f(re.as_ref())
    })
}

/// Whether a handler's `if` rule holds for a tool call, as Claude Code 2.1.332 reads the rule (a
/// permission rule, checked in the real Claude Code by tests/if_conditions_native_e2e.rs): never
/// on an event without a tool; `Tool` alone matches every call of it; `Bash(prefix:*)` and
/// `Bash(prefix *)` match a command that is `prefix` or starts with `prefix ` (so `Bash(git *)`
/// holds for a bare `git`, not for `gitk`); other patterns are globs (`*` any text, inside a word
/// too) over the Bash command (any of its `&&`, `||`, `;` or `|` parts) or the file path (or its
/// name). A rule that is not `Tool` or `Tool(pattern)` (`Bash(git *`, an unclosed parenthesis)
/// names no tool, so it never holds, as in Claude Code.
pub fn condition_holds(rule: &str, tool: Option<&str>, input: Option<&Value>) -> bool {
    let Some(tool) = tool else { return false };
    let rule = rule.trim();
    let Some((name, pattern)) = rule
        .strip_suffix(')')
        .and_then(|r| r.split_once('('))
        .map(|(name, pattern)| (name.trim(), pattern.trim()))
    else {
        return !rule.contains(['(', ')']) && rule == tool;
    };
    if name != tool {
        return false;
    }
    let field = |key: &str| input.and_then(|i| i.get(key)).and_then(Value::as_str);
    if let Some(command) = field("command") {
        let parts = command.split(['&', '|', ';', '\n']).map(str::trim);
        return parts.filter(|p| !p.is_empty()).any(|part| {
            match pattern
                .strip_suffix(":*")
                .or_else(|| pattern.strip_suffix(" *"))
            {
                Some(prefix) => part == prefix || glob(&format!("{prefix} *"), part),
                None => glob(pattern, part),
            }
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
    use super::{condition_holds, matches, problem};
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
            // Checked in the real Claude Code (tests/if_conditions_native_e2e.rs): a trailing
            // ` *` also holds for the bare word, not for a longer one; `*` inside a word globs.
            ("Bash(git *)", Some("Bash"), bash("git"), true),
            ("Bash(git *)", Some("Bash"), bash("gitk --all"), false),
            ("Bash(git:*)", Some("Bash"), bash("git"), true),
            ("Bash(git)", Some("Bash"), bash("git status"), false),
            ("Bash(git)", Some("Bash"), bash("git"), true),
            ("Bash(gi*)", Some("Bash"), bash("gitk --all"), true),
            (
                "Bash(git * --oneline)",
                Some("Bash"),
                bash("git log --oneline"),
                true,
            ),
            (
                "Bash(git * --oneline)",
                Some("Bash"),
                bash("git status"),
                false,
            ),
            (
                "Bash(git *)",
                Some("Bash"),
                bash("echo 'unterminated"),
                false,
            ),
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
            // No tool: never. A rule that is not `Tool(pattern)` names no tool: never.
            ("Bash(git *)", None, json!({}), false),
            ("Bash(git *", Some("Bash"), bash("ls"), false),
            ("Bash(git *", Some("Bash"), bash("git status"), false),
            ("Bash(ls) | Bash(git *)", Some("Bash"), bash("ls"), false),
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
            // JavaScript's RegExp: lookaround and backreferences work; what it rejects (Python
            // and Rust syntax, an unclosed group) never matches, whatever the name.
            (Some("^(?!Write$).*"), Some("Edit"), true),
            (Some("^(?!Write$).*"), Some("Write"), false),
            (Some("(?<=W)rite$"), Some("Write"), true),
            (Some("(?<=W)rite$"), Some("Edit"), false),
            (Some("^(E)dit\\1?$"), Some("Edit"), true),
            (Some("^(E)dit\\1?$"), Some("Write"), false),
            (Some("(?i)^bash$"), Some("Bash"), false),
            (Some("(?i)^bash$"), Some("bash"), false),
            (Some("^(?P<t>Bash)$"), Some("Bash"), false),
            (Some("^(?<t>Bash)$"), Some("Bash"), true),
            (Some("(unclosed"), Some("(unclosed"), false),
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

    #[test]
    fn only_patterns_javascript_rejects_are_problems() {
        for (matcher, rejected) in [
            ("Bash", false),
            ("Edit|Write", false),
            ("*", false),
            ("^(?!Write$).*", false),
            ("mcp__.*", false),
            ("(?i)^bash$", true),
            ("^(?P<t>Bash)$", true),
            ("(unclosed", true),
        ] {
            assert_eq!(problem(matcher).is_some(), rejected, "{matcher}");
        }
        let text = problem("(?i)^bash$").unwrap_or_default();
        assert!(
            text.contains("`(?i)^bash$`") && text.contains("never runs"),
            "{text}"
        );
    }
}
