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

use super::{Context, HandlerKind};

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
                || glob_matches(glob, crate::dialects::amcp_tool(name))
                || glob.eq_ignore_ascii_case(name)
        });
        tool_ok
            && self
                .args
                .iter()
                .all(|(arg, glob)| match crate::dialects::tool_arg(input, arg) {
                    Some(Value::String(text)) => glob_matches(glob, text),
                    Some(other) => glob_matches(glob, &other.to_string()),
                    None => false,
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
}

/// fnmatch-style glob over the whole text.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let pattern: Vec<char> = glob.chars().collect();
    let text: Vec<char> = text.chars().collect();
    matches_from(&pattern, &text)
}

fn matches_from(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') => {
            // `**/` may match nothing at all.
            if p.len() >= 3 && p[1] == '*' && p[2] == '/' && matches_from(&p[3..], t) {
                return true;
            }
            let rest = {
                let mut i = 0;
                while i < p.len() && p[i] == '*' {
                    i += 1;
                }
                &p[i..]
            };
            (0..=t.len()).any(|skip| matches_from(rest, &t[skip..]))
        }
        Some('?') => !t.is_empty() && matches_from(&p[1..], &t[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(2).position(|c| *c == ']').map(|i| i + 2) else {
                return t.first() == Some(&'[') && matches_from(&p[1..], &t[1..]);
            };
            let Some(c) = t.first() else { return false };
            let (negated, set) = match p[1] {
                '!' => (true, &p[2..close]),
                _ => (false, &p[1..close]),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= *c && *c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == *c;
                    i += 1;
                }
            }
            hit != negated && matches_from(&p[close + 1..], &t[1..])
        }
        Some(c) => t.first() == Some(c) && matches_from(&p[1..], &t[1..]),
    }
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
    }
}
