//! The fields of a hooks file no reader knows, for `amplihack hooks validate`: a `hooks.yaml` rule
//! with `mesage:` loses its text silently otherwise. Each dialect's fields are listed once here;
//! for Claude Code's `hooks.json` the list is every field any supported Claude Code version knows
//! (the 2.1.332 command-hook schema, the other handler types' fields) plus amplihack's own
//! (`priority`, `enabled`, `description`), so a field one version adds is never flagged.
//!
//! Not on the hook path: only `validate` reads files twice.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Lines, json_tree, toml_tree, yaml_tree};

/// Which fields a level of a file may hold.
struct Level {
    what: &'static str,
    known: &'static [&'static str],
}

const CLAUDE_TOP: Level = Level {
    what: "hooks file",
    known: &["hooks", "description", "enabled", "priority", "confinement"],
};
const CLAUDE_GROUP: Level = Level {
    what: "matcher group",
    known: &["matcher", "hooks", "priority", "enabled", "description"],
};
const CLAUDE_HANDLER: Level = Level {
    what: "handler",
    known: &[
        // Claude Code 2.1.332's command-hook schema.
        "type",
        "command",
        "args",
        "if",
        "shell",
        "timeout",
        "onFailure",
        "statusMessage",
        "once",
        "async",
        "asyncRewake",
        "holdsTools",
        "rewakeMessage",
        "rewakeSummary",
        "cloud",
        // prompt and agent handlers
        "prompt",
        "model",
        "continueOnBlock",
        // http
        "url",
        "headers",
        "allowedEnvVars",
        // mcp_tool
        "server",
        "tool",
        "input",
        // amplihack's own
        "priority",
        "enabled",
        "description",
    ],
};
const PROPOSAL_TOP: Level = Level {
    what: "hooks.yaml",
    known: &["hooks", "confinement"],
};
const PROPOSAL_HOOK: Level = Level {
    what: "hook",
    known: &[
        "type",
        "command",
        "timeout_ms",
        "on_failure",
        "async",
        "enabled",
        "match",
        "action",
        "message",
        "model",
        "prompt",
        "max_tokens",
        "cache",
    ],
};
const PROPOSAL_MATCH: Level = Level {
    what: "match",
    known: &["tool", "args"],
};
const AMCP_TOP: Level = Level {
    what: "AMCP hook file",
    known: &["hooks", "confinement"],
};
const AMCP_EVENT: Level = Level {
    what: "event",
    known: &["handlers"],
};
const AMCP_HANDLER: Level = Level {
    what: "handler",
    known: &[
        "matcher", "type", "command", "script", "function", "timeout", "enabled",
    ],
};

/// The dialect a file is read in, as `discovery::parse_file` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Claude,
    Proposal,
    Amcp,
}

/// One field no reader knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// Its path: `hooks.PreToolUse[0].mesage`.
    pub field: String,
    pub line: Option<usize>,
    /// What holds it: `hook`, `handler`, ...
    pub within: &'static str,
    /// A known field one or two edits away.
    pub meant: Option<&'static str>,
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.field.rsplit('.').next().unwrap_or(&self.field);
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        write!(
            f,
            "`{}`: a {} has no field `{name}`, it is ignored",
            self.field, self.within
        )?;
        match self.meant {
            Some(meant) => write!(f, "; did you mean `{meant}`?"),
            None => write!(f, "; remove it or correct its name"),
        }
    }
}

/// The unknown fields of `text`, in document order; nothing for a file that does not parse (its
/// error is reported elsewhere).
pub fn unknown_keys(file: &Path, text: &str, dialect: Dialect) -> Vec<Unknown> {
    let tree = match dialect {
        Dialect::Proposal => yaml_tree(file, text, true),
        Dialect::Amcp if file.extension().is_some_and(|e| e == "toml") => {
            toml_tree(file, text, true)
        }
        _ => json_tree(file, text, true),
    };
    let Ok((root, lines)) = tree else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut check = |map: &Map<String, Value>, at: &str, level: &Level| {
        for key in map.keys() {
            if !level.known.contains(&key.as_str()) {
                let field = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                found.push(Unknown {
                    line: line(&lines, &field),
                    field,
                    within: level.what,
                    meant: closest(key, level.known),
                });
            }
        }
    };
    let Some(top) = root.as_object() else {
        return found;
    };
    let events = top.get("hooks").and_then(Value::as_object);
    match dialect {
        Dialect::Claude => {
            check(top, "", &CLAUDE_TOP);
            for (event, groups) in events.into_iter().flatten() {
                for (g, group) in items(groups) {
                    let at = format!("hooks.{event}[{g}]");
                    check(group, &at, &CLAUDE_GROUP);
                    for (h, handler) in group.get("hooks").map(items).into_iter().flatten() {
                        check(handler, &format!("{at}.hooks[{h}]"), &CLAUDE_HANDLER);
                    }
                }
            }
        }
        Dialect::Proposal => {
            check(top, "", &PROPOSAL_TOP);
            for (event, hooks) in events.into_iter().flatten() {
                for (i, hook) in items(hooks) {
                    let at = format!("hooks.{event}[{i}]");
                    check(hook, &at, &PROPOSAL_HOOK);
                    if let Some(matching) = hook.get("match").and_then(Value::as_object) {
                        check(matching, &format!("{at}.match"), &PROPOSAL_MATCH);
                    }
                }
            }
        }
        Dialect::Amcp => {
            check(top, "", &AMCP_TOP);
            for (event, section) in events.into_iter().flatten() {
                let Some(section) = section.as_object() else {
                    continue;
                };
                let at = format!("hooks.{event}");
                check(section, &at, &AMCP_EVENT);
                for (i, handler) in section.get("handlers").map(items).into_iter().flatten() {
                    check(handler, &format!("{at}.handlers[{i}]"), &AMCP_HANDLER);
                }
            }
        }
    }
    found
}

/// The objects of a list, with their index (anything else is the parser's to report).
fn items(value: &Value) -> Vec<(usize, &Map<String, Value>)> {
    match value {
        Value::Array(list) => list
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_object().map(|m| (i, m)))
            .collect(),
        _ => Vec::new(),
    }
}

fn line(lines: &Lines, field: &str) -> Option<usize> {
    lines.get(field).copied()
}

/// A known name at most two edits from `key` (and not further than half its length).
fn closest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|k| {
            (
                distance(&key.to_ascii_lowercase(), &k.to_ascii_lowercase()),
                *k,
            )
        })
        .filter(|(d, k)| *d <= 2 && *d * 2 <= k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(previous + usize::from(ca != *cb));
            previous = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_found_with_their_line() {
        let yaml = "hooks:\n  PreToolUse:\n    - type: matcher\n      match: {tool: Bash, argz: {command: \"rm *\"}}\n      action: block\n      mesage: \"no rm\"\n";
        let claude = r#"{
  "description": "fmt",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "x", "onFailure": "block", "holdsTools": true, "statusMessage": "s"},
          {"type": "command", "command": "y", "timout": 5}
        ]
      }
    ]
  },
  "hookz": {}
}"#;
        let toml = "[[hooks.PreToolUse.handlers]]\nmatcher = \"x\"\ncommand = \"y\"\ntimeout = 3\nenable = true\n";
        type Found<'a> = &'a [(&'a str, Option<usize>, Option<&'a str>)];
        let cases: &[(&str, &str, Dialect, Found<'_>)] = &[
            (
                "hooks.yaml",
                yaml,
                Dialect::Proposal,
                &[
                    ("hooks.PreToolUse[0].mesage", Some(6), Some("message")),
                    ("hooks.PreToolUse[0].match.argz", Some(4), Some("args")),
                ],
            ),
            (
                "hooks.json",
                claude,
                Dialect::Claude,
                &[
                    ("hookz", Some(14), Some("hooks")),
                    (
                        "hooks.PreToolUse[0].hooks[1].timout",
                        Some(9),
                        Some("timeout"),
                    ),
                ],
            ),
            (
                "hooks.toml",
                toml,
                Dialect::Amcp,
                &[(
                    "hooks.PreToolUse.handlers[0].enable",
                    Some(5),
                    Some("enabled"),
                )],
            ),
            (
                "hooks.json",
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "p", "model": "haiku", "continueOnBlock": true}]}]}}"#,
                Dialect::Claude,
                &[],
            ),
        ];
        for (name, text, dialect, want) in cases {
            let mut got: Vec<(String, Option<usize>, Option<&str>)> =
                unknown_keys(Path::new(name), text, *dialect)
                    .into_iter()
                    .map(|u| (u.field, u.line, u.meant))
                    .collect();
            got.sort();
            let mut want: Vec<(String, Option<usize>, Option<&str>)> = want
                .iter()
                .map(|(f, l, m)| (f.to_string(), *l, *m))
                .collect();
            want.sort();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn says_where_and_what() {
        let found = unknown_keys(
            Path::new("hooks.yaml"),
            "hooks:\n  Stop:\n    - type: command\n      command: x\n      frobnicate: 1\n",
            Dialect::Proposal,
        );
        assert_eq!(
            found[0].to_string(),
            "line 5: `hooks.Stop[0].frobnicate`: a hook has no field `frobnicate`, it is ignored; remove it or correct its name"
        );
    }
}
