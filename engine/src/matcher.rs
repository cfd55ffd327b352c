//! Matchers, as Claude Code evaluates them: `*`, empty or missing match everything; a pattern of
//! word characters joined by `|` matches one of those names exactly; anything else is an
//! unanchored regular expression; an expression that does not compile is compared exactly
//! instead of failing the plugin.

/// Whether `matcher` selects an event whose matcher target is `target`. Events without a matcher
/// field (`target` is `None`) are matched by every group, as Claude Code ignores matchers there.
pub fn matches(matcher: Option<&str>, target: Option<&str>) -> bool {
    let Some(target) = target else { return true };
    let pattern = matcher.unwrap_or("").trim();
    if pattern.is_empty() || pattern == "*" {
        return true;
    }
    if pattern
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
    {
        return pattern.split('|').any(|name| name == target);
    }
    match regex_lite::Regex::new(pattern) {
        Ok(re) => re.is_match(target),
        Err(_) => pattern == target,
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

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
