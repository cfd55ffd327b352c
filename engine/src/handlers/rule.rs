//! A rule evaluated in-process, no process started: the proposal's `type: matcher` hook
//! (`match.tool` and `match.args.<name>` globs, `action`, `message`).
//!
//! Globs as Python's `fnmatch` reads them (the proposal is Python): `*` any text (`/` included),
//! `?` one character, `[abc]`/`[!abc]` a class; and `**/` also matches nothing, so `**/.env*`
//! matches `.env` as well as `a/b/.env.local`. A tool glob matches the host's name or the
//! Amplifier/AMCP name of the same tool (`Bash` and `bash`); an argument named `path` finds the
//! host's `file_path`. A string argument is matched as it stands; any other as its JSON.

use amplihack_protocol::{Decision, Reply};
use serde_json::Value;

use super::{Context, HandlerKind, Plan, Planning};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Block,
    Allow,
    /// Lets the call go on with a message for the user.
    Warn,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub tool: Option<String>,
    pub args: Vec<(String, String)>,
    pub action: Action,
    pub message: Option<String>,
    label: String,
}

impl Rule {
    pub fn new(
        tool: Option<String>,
        args: Vec<(String, String)>,
        action: Action,
        message: Option<String>,
    ) -> Rule {
        let mut label = format!("rule: tool {}", tool.as_deref().unwrap_or("*"));
        for (name, glob) in &args {
            label.push_str(&format!(", {name} {glob}"));
        }
        Rule {
            tool,
            args,
            action,
            message,
            label,
        }
    }

    /// Whether the rule holds for a tool call (never on an event without one, unless it names
    /// neither tool nor arguments).
    pub fn holds(&self, tool: Option<(&str, &Value)>) -> bool {
        let Some((name, input)) = tool else {
            return self.tool.is_none() && self.args.is_empty();
        };
        let tool_ok = self.tool.as_deref().is_none_or(|glob| {
            let canonical = amplihack_protocol::tool::canonical_tool_name(name);
            glob_matches(glob, name)
                || glob_matches(glob, canonical)
                || glob_matches(glob, amplihack_protocol::tool::amcp_tool(name))
                || glob.eq_ignore_ascii_case(name)
        });
        tool_ok
            && self.args.iter().all(|(arg, glob)| {
                match amplihack_protocol::tool::tool_arg(input, arg) {
                    Some(Value::String(text)) => glob_matches(glob, text),
                    Some(other) => glob_matches(glob, &other.to_string()),
                    None => false,
                }
            })
    }

    /// Its answer when it holds.
    pub fn reply(&self) -> Reply {
        match self.action {
            Action::Block => Reply::deny(
                self.message
                    .clone()
                    .unwrap_or_else(|| format!("blocked by {}", self.label)),
            ),
            Action::Allow => Reply {
                decision: Some(Decision::Allow),
                reason: self.message.clone(),
                ..Reply::default()
            },
            Action::Warn => Reply {
                system_message: self.message.clone(),
                ..Reply::default()
            },
        }
    }
}

impl HandlerKind for Rule {
    fn type_name(&self) -> &'static str {
        "matcher"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        Err("a rule is evaluated in-process: no program runs".into())
    }

    /// In-process (the proposal's `type: matcher`): its answer when it holds, whatever the
    /// handler's `if` (a rule has none).
    fn plan(&self, planning: &Planning<'_>) -> Plan {
        let tool = planning.event.tool();
        if self.holds(tool.map(|t| (t.name.as_str(), &t.input))) {
            Plan::Answered(self.reply())
        } else {
            Plan::Skip
        }
    }
}

/// fnmatch-style glob over the whole text, in time proportional to the pattern's length times
/// the text's (no backtracking, whatever the stars).
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    // reach[i]: the pattern so far matches text[..i].
    let mut reach = vec![false; text.len() + 1];
    reach[0] = true;
    let pattern: Vec<char> = glob.chars().collect();
    let mut pi = 0;
    while pi < pattern.len() {
        let mut next = vec![false; text.len() + 1];
        match pattern[pi] {
            '*' => {
                let double = pattern.get(pi + 1) == Some(&'*') && pattern.get(pi + 2) == Some(&'/');
                let mut seen = false;
                for i in 0..=text.len() {
                    if double {
                        // `**/`: nothing, or any text that ends with `/`.
                        next[i] = reach[i] || (i > 0 && text[i - 1] == '/' && seen);
                        seen |= reach[i];
                    } else {
                        seen |= reach[i];
                        next[i] = seen;
                    }
                }
                pi += if double { 3 } else { 1 };
                while !double && pattern.get(pi) == Some(&'*') {
                    pi += 1;
                }
            }
            '[' if pattern[pi..].iter().skip(2).any(|c| *c == ']') => {
                let close = pattern[pi..]
                    .iter()
                    .skip(2)
                    .position(|c| *c == ']')
                    .map_or(pattern.len(), |i| pi + i + 2);
                let (negated, set) = match pattern.get(pi + 1) {
                    Some('!') => (true, &pattern[pi + 2..close]),
                    _ => (false, &pattern[pi + 1..close]),
                };
                let in_set = |c: char| {
                    let mut i = 0;
                    while i < set.len() {
                        if i + 2 < set.len() && set[i + 1] == '-' {
                            if set[i] <= c && c <= set[i + 2] {
                                return true;
                            }
                            i += 3;
                        } else {
                            if set[i] == c {
                                return true;
                            }
                            i += 1;
                        }
                    }
                    false
                };
                for i in 0..text.len() {
                    next[i + 1] = reach[i] && in_set(text[i]) != negated;
                }
                pi = close + 1;
            }
            c => {
                for i in 0..text.len() {
                    next[i + 1] = reach[i] && (c == '?' || text[i] == c);
                }
                pi += 1;
            }
        }
        reach = next;
    }
    reach[text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn globs_as_fnmatch_reads_them() {
        let cases = [
            ("rm *", "rm -rf /", true),
            ("rm *", "git rm x", false),
            ("**/.env*", "/home/u/p/.env.local", true),
            ("**/.env*", ".env", true),
            ("**/.env*", "/p/env", false),
            ("*.py", "a/b.py", true),
            ("?at", "cat", true),
            ("[!c]at", "cat", false),
            ("[a-c]at", "bat", true),
            ("Bash", "Bash", true),
            ("Ba*", "Read", false),
            ("[", "[", true),
        ];
        for (glob, text, want) in cases {
            assert_eq!(glob_matches(glob, text), want, "{glob} {text}");
        }
    }

    #[test]
    fn a_rule_holds_on_its_tool_and_every_argument_glob() {
        let rule = Rule::new(
            Some("Write".into()),
            vec![("path".into(), "**/.env*".into())],
            Action::Block,
            Some("no env".into()),
        );
        let cases = [
            (Some(("Write", json!({"file_path": "/p/.env"}))), true),
            (Some(("write_file", json!({"path": "/p/.env"}))), true),
            (Some(("Write", json!({"file_path": "/p/main.rs"}))), false),
            (Some(("Edit", json!({"file_path": "/p/.env"}))), false),
            (Some(("Write", json!({}))), false),
            (None, false),
        ];
        for (tool, want) in cases {
            let tool = tool.as_ref().map(|(n, i)| (*n, i));
            assert_eq!(rule.holds(tool), want, "{tool:?}");
        }
        assert_eq!(rule.reply(), Reply::deny("no env"));
        let bash = Rule::new(
            Some("Bash".into()),
            vec![("command".into(), "rm *".into())],
            Action::Block,
            None,
        );
        assert!(bash.holds(Some(("bash", &json!({"command": "rm -rf build"})))));
        // Many stars against a long text that does not match: quick, not exponential.
        let started = std::time::Instant::now();
        assert!(!glob_matches("*a*a*a*a*a*a*a*a*b", &"a".repeat(2_000)));
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
