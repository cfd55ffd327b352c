//! The other hook dialects of our specifications, each read into the plugin model forwarding runs
//! ([`crate::model::PluginConfig`]):
//!
//! * [`amcp`]: AMCP's `.amcp/hooks.toml`/`.json` and `~/.config/amcp/hooks.*`;
//! * [`proposal`]: the Amplifier CLI hooks proposal's YAML, as a plugin's `hooks.yaml`.
//!
//! Past the readers nothing knows which dialect a hook came from except through two fields of a
//! handler: its [`Protocol`] (what it reads on stdin and prints on stdout) and its [`OnFailure`]
//! policy; and the in-process [`crate::handlers::rule`] kind.
//!
//! Each dialect's file holds all of that dialect: reading its file, and translating what its
//! handlers read, are given and answer. This file holds what they share: the line-located parse
//! trees ([`Fields`], [`toml_tree`], [`json_tree`], [`yaml_tree`]), the dispatch by [`Protocol`]
//! ([`input`], [`env`], [`output`]) and the failure policy ([`on_failure`]).

use std::collections::HashMap;
use std::path::Path;

use amplihack_protocol::{Decision, HookEvent, Reply};
use serde_json::{Map, Value};

use crate::execute::Finished;
use crate::model::ConfigError;

pub mod amcp;
pub mod proposal;
pub mod unknown_keys;

pub use crate::model::{OnFailure, Protocol};

/// Where each field of a parsed TOML or YAML file starts: `hooks.PreToolUse.handlers[0].timeout`
/// to its line (1-based).
pub type Lines = HashMap<String, usize>;

/// An error located in the file: the field, and the line where it (or its nearest parent) is.
pub fn located(
    file: &Path,
    lines: &Lines,
    field: &str,
    problem: impl Into<String>,
    fix: impl Into<String>,
) -> ConfigError {
    let mut at = field;
    let line = loop {
        if let Some(line) = lines.get(at) {
            break Some(*line);
        }
        match at.rfind(['.', '[']) {
            Some(cut) => at = &at[..cut],
            None => break None,
        }
    };
    ConfigError {
        file: file.to_path_buf(),
        field: match line {
            Some(line) => format!("{field} (line {line})"),
            None => field.to_string(),
        },
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// One hook's table in a dialect's file, its fields read with errors located at their line.
pub struct Fields<'a> {
    pub map: &'a Map<String, Value>,
    /// Its path in the file: `hooks.PreToolUse.handlers[0]`.
    pub at: &'a str,
    pub lines: &'a Lines,
    pub file: &'a Path,
}

impl Fields<'_> {
    pub fn error(&self, field: &str, problem: String, fix: &str) -> ConfigError {
        located(
            self.file,
            self.lines,
            &format!("{}.{field}", self.at),
            problem,
            fix,
        )
    }

    /// An optional string (absent or null: `None`).
    pub fn string(&self, field: &str) -> Result<Option<String>, ConfigError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.error(
                field,
                format!("is {other}, not a string"),
                "quote it as a string",
            )),
        }
    }

    /// A required, non-empty string.
    pub fn required(&self, field: &str, fix: &str) -> Result<String, ConfigError> {
        self.string(field)?
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| self.error(field, "is missing or empty".into(), fix))
    }

    /// An optional boolean.
    pub fn boolean(&self, field: &str, default: bool) -> Result<bool, ConfigError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.error(
                field,
                format!("is {other}, not a boolean"),
                "use true or false",
            )),
        }
    }

    /// An optional positive number (`default` when absent).
    pub fn positive(&self, field: &str, default: f64, fix: &str) -> Result<f64, ConfigError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => match v.as_f64() {
                Some(n) if n > 0.0 && n.is_finite() => Ok(n),
                _ => Err(self.error(field, format!("is {v}"), fix)),
            },
        }
    }

    /// The handler kind of a Claude Code handler object the dialect's hook amounts to.
    pub fn kind(&self, handler: Value) -> Result<crate::handlers::Kind, ConfigError> {
        let Value::Object(handler) = handler else {
            return Err(self.error("type", "cannot be read".into(), "check the hook's fields"));
        };
        crate::handlers::Kind::parse(&handler, self.at)
            .map_err(|(field, problem, fix)| located(self.file, self.lines, &field, problem, fix))
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A TOML file as JSON, with the line of every field.
pub fn toml_tree(file: &Path, text: &str, with_lines: bool) -> Result<(Value, Lines), ConfigError> {
    let syntax = |e: toml::de::Error| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        ConfigError {
            file: file.to_path_buf(),
            field: format!("line {line}"),
            problem: format!("not valid TOML ({})", e.message().trim()),
            fix: "correct the TOML at that line".into(),
        }
    };
    let value: Value = toml::from_str(text).map_err(syntax)?;
    let mut lines = Lines::new();
    if !with_lines {
        return Ok((value, lines));
    }
    let table = toml::de::DeTable::parse(text).map_err(syntax)?;
    fn walk(text: &str, prefix: &str, value: &toml::de::DeValue<'_>, lines: &mut Lines) {
        match value {
            toml::de::DeValue::Table(table) => {
                for (key, value) in table {
                    let path = if prefix.is_empty() {
                        key.get_ref().to_string()
                    } else {
                        format!("{prefix}.{}", key.get_ref())
                    };
                    lines.insert(path.clone(), line_of(text, key.span().start));
                    walk(text, &path, value.get_ref(), lines);
                }
            }
            toml::de::DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{prefix}[{i}]");
                    lines.insert(path.clone(), line_of(text, item.span().start));
                    walk(text, &path, item.get_ref(), lines);
                }
            }
            _ => {}
        }
    }
    walk(
        text,
        "",
        &toml::de::DeValue::Table(table.into_inner()),
        &mut lines,
    );
    Ok((value, lines))
}

/// A JSON file, with the line of every field (found by a second, cheap pass over the text).
pub fn json_tree(file: &Path, text: &str, with_lines: bool) -> Result<(Value, Lines), ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError {
        file: file.to_path_buf(),
        field: format!("line {}, column {}", e.line(), e.column()),
        problem: format!("not valid JSON ({e})"),
        fix: "correct the JSON at that position".into(),
    })?;
    // Each object key's line, in document order: good enough to point at a field.
    let mut lines = Lines::new();
    if !with_lines {
        return Ok((value, lines));
    }
    fn walk(value: &Value, prefix: &str, text: &str, from: &mut usize, lines: &mut Lines) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    let path = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    let needle = format!("\"{key}\"");
                    if let Some(at) = text[*from..].find(&needle) {
                        *from += at;
                        lines.insert(path.clone(), line_of(text, *from));
                    }
                    walk(value, &path, text, from, lines);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{prefix}[{i}]");
                    if let Some(line) = lines.get(prefix).copied() {
                        lines.entry(path.clone()).or_insert(line);
                    }
                    walk(item, &path, text, from, lines);
                }
            }
            _ => {}
        }
    }
    walk(&value, "", text, &mut 0, &mut lines);
    Ok((value, lines))
}

/// A YAML file (its first document) as JSON, with the line of every field.
/// Without `with_lines` no line is recorded (the cheap pass every call makes; a file with a
/// problem is read again with them, to locate it).
pub fn yaml_tree(file: &Path, text: &str, with_lines: bool) -> Result<(Value, Lines), ConfigError> {
    use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
    use yaml_rust2::scanner::Marker;

    enum Frame {
        Map(Map<String, Value>, Option<String>, String),
        Seq(Vec<Value>, String),
    }
    #[derive(Default)]
    struct Builder {
        track: bool,
        stack: Vec<Frame>,
        done: Option<Value>,
        lines: Lines,
        error: Option<String>,
    }
    impl Builder {
        /// The path of the next value, recording its line.
        fn next_path(&mut self, line: usize) -> String {
            if !self.track {
                return String::new();
            }
            let path = match self.stack.last() {
                Some(Frame::Map(_, Some(key), path)) if path.is_empty() => key.clone(),
                Some(Frame::Map(_, Some(key), path)) => format!("{path}.{key}"),
                Some(Frame::Seq(items, path)) => format!("{path}[{}]", items.len()),
                _ => String::new(),
            };
            self.lines.entry(path.clone()).or_insert(line);
            path
        }
        fn put(&mut self, value: Value) {
            match self.stack.last_mut() {
                Some(Frame::Map(map, key, _)) => match key.take() {
                    Some(key) => {
                        map.insert(key, value);
                    }
                    None => {
                        *key = Some(match value {
                            Value::String(s) => s,
                            other => other.to_string(),
                        });
                    }
                },
                Some(Frame::Seq(items, _)) => items.push(value),
                None => {
                    if self.done.is_none() {
                        self.done = Some(value);
                    }
                }
            }
        }
    }
    fn expecting_key(stack: &[Frame]) -> bool {
        matches!(stack.last(), Some(Frame::Map(_, None, _)))
    }
    fn scalar(text: &str, style: yaml_rust2::scanner::TScalarStyle) -> Value {
        if style != yaml_rust2::scanner::TScalarStyle::Plain {
            return Value::String(text.to_string());
        }
        match text {
            "~" | "null" | "Null" | "NULL" | "" => Value::Null,
            "true" | "True" | "TRUE" => Value::Bool(true),
            "false" | "False" | "FALSE" => Value::Bool(false),
            _ => text
                .parse::<i64>()
                .map(Value::from)
                .ok()
                .or_else(|| {
                    text.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(Value::from)
                })
                .unwrap_or_else(|| Value::String(text.to_string())),
        }
    }
    impl MarkedEventReceiver for Builder {
        fn on_event(&mut self, event: Event, mark: Marker) {
            let line = mark.line();
            match event {
                Event::MappingStart(..) => {
                    let path = self.next_path(line);
                    self.stack.push(Frame::Map(Map::new(), None, path));
                }
                Event::SequenceStart(..) => {
                    let path = self.next_path(line);
                    self.stack.push(Frame::Seq(Vec::new(), path));
                }
                Event::MappingEnd => {
                    if let Some(Frame::Map(map, _, _)) = self.stack.pop() {
                        self.put(Value::Object(map));
                    }
                }
                Event::SequenceEnd => {
                    if let Some(Frame::Seq(items, _)) = self.stack.pop() {
                        self.put(Value::Array(items));
                    }
                }
                Event::Scalar(text, style, _, _) => {
                    if expecting_key(&self.stack) {
                        // The key's line is its value's line.
                        if let Some(Frame::Map(_, _, path)) =
                            self.stack.last().filter(|_| self.track)
                        {
                            let path = if path.is_empty() {
                                text.clone()
                            } else {
                                format!("{path}.{text}")
                            };
                            self.lines.insert(path, line);
                        }
                        self.put(Value::String(text));
                    } else {
                        self.next_path(line);
                        self.put(scalar(&text, style));
                    }
                }
                Event::Alias(_) => {
                    self.error
                        .get_or_insert_with(|| format!("line {line}: anchors and aliases"));
                    self.next_path(line);
                    self.put(Value::Null);
                }
                _ => {}
            }
        }
    }
    let mut builder = Builder {
        track: with_lines,
        ..Builder::default()
    };
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut builder, false).map_err(|e| ConfigError {
        file: file.to_path_buf(),
        field: format!(
            "line {}, column {}",
            e.marker().line(),
            e.marker().col() + 1
        ),
        problem: format!("not valid YAML ({})", e.info()),
        fix: "correct the YAML at that position".into(),
    })?;
    if let Some(error) = builder.error {
        return Err(ConfigError {
            file: file.to_path_buf(),
            field: error,
            problem: "are not supported in hook files".into(),
            fix: "write the value out in full".into(),
        });
    }
    Ok((builder.done.unwrap_or(Value::Null), builder.lines))
}

/// What a handler of this protocol reads on stdin.
pub fn input(protocol: Protocol, event: &HookEvent, host_bytes: &[u8]) -> Vec<u8> {
    if protocol == Protocol::Claude {
        return host_bytes.to_vec();
    }
    let Ok(Value::Object(raw)) = serde_json::from_slice::<Value>(host_bytes) else {
        return host_bytes.to_vec();
    };
    match protocol {
        Protocol::Claude => host_bytes.to_vec(),
        Protocol::Amcp => amcp::input(event, raw, host_bytes),
        Protocol::Proposal => proposal::input(event, raw, host_bytes),
    }
}

/// The environment a handler of this protocol gets beside the usual.
pub fn env(protocol: Protocol, event: &HookEvent, project_dir: &Path) -> Vec<(String, String)> {
    match protocol {
        Protocol::Amcp => amcp::env(event, project_dir),
        _ => Vec::new(),
    }
}

/// A handler's output rewritten into Claude Code's answer, which [`crate::answer`] reads; or why
/// the answer cannot be read (the handler's failure, for its [`OnFailure`]).
pub fn output(
    protocol: Protocol,
    event: &HookEvent,
    finished: Finished,
) -> (Finished, Option<String>) {
    match protocol {
        Protocol::Claude => (finished, None),
        Protocol::Amcp => amcp::output(event, finished),
        Protocol::Proposal => proposal::output(event, finished),
    }
}

/// The reply once the handler's [`OnFailure`] policy has had its say over a failure (`why`:
/// the warning [`crate::answer`] gave, or the unreadable answer).
pub fn on_failure(
    policy: OnFailure,
    plugin: &str,
    reply: Reply,
    why: Option<String>,
) -> (Reply, Option<String>) {
    let Some(why) = why else {
        return (reply, None);
    };
    match policy {
        OnFailure::Warn => (reply, Some(why)),
        OnFailure::Ignore => (reply, None),
        OnFailure::Block => {
            let reason = format!("{why} (on_failure: block, in {plugin}: the call is denied)");
            (
                Reply {
                    decision: Some(Decision::Deny),
                    reason: Some(reason.clone()),
                    ..reply
                },
                Some(reason),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AMCP_TOML: &str = include_str!("../../../tests/fixtures/dialects/amcp/hooks.toml");
    const AMCP_JSON: &str = include_str!("../../../tests/fixtures/dialects/amcp/hooks.json");
    const YAML: &str = include_str!("../../../tests/fixtures/dialects/proposal/hooks.yaml");
    const YAML_TYPES: &str =
        include_str!("../../../tests/fixtures/dialects/proposal/hook-types.yaml");

    /// The specifications' own examples read into the plugin model, field by field.
    #[test]
    fn the_specifications_examples_read_into_the_plugin_model() {
        let toml = amcp::parse(Path::new("/p/.amcp/hooks.toml"), AMCP_TOML).expect("toml");
        let summary: Vec<(String, String, f64, Protocol)> = toml
            .groups
            .iter()
            .flat_map(|g| {
                g.handlers.iter().map(move |h| {
                    (
                        g.event.clone(),
                        h.command.clone(),
                        h.timeout_secs,
                        h.protocol,
                    )
                })
            })
            .collect();
        let want = [
            ("PreToolUse", "./scripts/validate-writes.sh", 30.0),
            ("PreToolUse", "python3 ./scripts/log_all_tools.py", 5.0),
            (
                "PostToolUse",
                "$AMCP_PROJECT_DIR/scripts/lint-file.sh",
                60.0,
            ),
        ];
        assert_eq!(summary.len(), want.len(), "{summary:?}");
        for ((event, command, timeout, protocol), (e, c, t)) in summary.iter().zip(want) {
            assert_eq!((event.as_str(), command.as_str(), *timeout), (e, c, t));
            assert_eq!(*protocol, Protocol::Amcp);
        }
        assert_eq!(toml.groups[1].matcher, None, "`*` matches every tool");
        let json = amcp::parse(Path::new("/p/.amcp/hooks.json"), AMCP_JSON).expect("json");
        assert_eq!(json.groups[0].matcher, toml.groups[0].matcher);

        let yaml = proposal::parse(Path::new("/h/p/hooks.yaml"), YAML).expect("yaml");
        let events: Vec<&str> = yaml.groups.iter().map(|g| g.event.as_str()).collect();
        assert_eq!(
            events,
            ["PreToolUse", "PostToolUse", "SessionStart", "SessionEnd"]
        );
        let pre = &yaml.groups[0].handlers;
        assert_eq!(
            (pre[0].timeout_secs, pre[0].on_failure),
            (5.0, OnFailure::Warn)
        );
        assert!(matches!(pre[1].kind, crate::handlers::Kind::Rule(_)));
        assert!(yaml.groups[1].handlers[0].is_async);
        let types = proposal::parse(Path::new("/h/p/hooks.yaml"), YAML_TYPES).expect("types");
        let llm = &types.groups[0].handlers[2];
        assert_eq!(types.groups[0].handlers.len(), 3);
        assert_eq!(llm.protocol, Protocol::Proposal);
        assert!(
            llm.command.starts_with("llm claude-3-haiku: Evaluate"),
            "{}",
            llm.command
        );
    }

    /// Errors name the file, the field and its line, and the fix; nothing is dropped silently.
    #[test]
    fn errors_are_located_by_line_and_field() {
        type Parse = fn(&Path, &str) -> Result<crate::config::PluginConfig, ConfigError>;
        let cases: &[(Parse, &str, &str, &str)] = &[
            (
                amcp::parse,
                "[hooks.PreToolUse\n",
                "line 1",
                "not valid TOML",
            ),
            (
                amcp::parse,
                "[hooks.PreToolUse]\n[[hooks.PreToolUse.handlers]]\ntype = \"command\"\ntimeout = -1\ncommand = \"x\"\n",
                "hooks.PreToolUse.handlers[0].timeout (line 4)",
                "is -1",
            ),
            (
                amcp::parse,
                "[[hooks.PreToolUse.handlers]]\ntype = \"ruby\"\n",
                "hooks.PreToolUse.handlers[0].type (line 2)",
                "not an AMCP handler type",
            ),
            (
                amcp::parse,
                "[[hooks.PreToolUse.handlers]]\ntype = \"python\"\n",
                "hooks.PreToolUse.handlers[0].script (line 1)",
                "missing",
            ),
            (
                amcp::parse,
                "\n[[hooks.BeforeAll.handlers]]\ncommand = \"x\"\n",
                "hooks.BeforeAll (line 2)",
                "not an AMCP hook event",
            ),
            (
                amcp::parse,
                "[[hooks.Stop.handlers]]\ncommand = \"x\"\nenabled = \"yes\"\n",
                "hooks.Stop.handlers[0].enabled (line 3)",
                "not a boolean",
            ),
            (
                proposal::parse,
                "hooks:\n  PreToolUse:\n    - type: command\n      command: x\n      on_failure: explode\n",
                "hooks.PreToolUse[0].on_failure (line 5)",
                "not a failure policy",
            ),
            (
                proposal::parse,
                "hooks:\n  PreToolUse:\n    - type: matcher\n      match: {tool: Bash}\n      action: maybe\n",
                "hooks.PreToolUse[0].action (line 5)",
                "not block",
            ),
            (
                proposal::parse,
                "hooks:\n  PreToolUse:\n    - type: command\n      command: x\n      timeout_ms: soon\n",
                "hooks.PreToolUse[0].timeout_ms (line 5)",
                "soon",
            ),
            (
                proposal::parse,
                "hooks:\n  Lunch:\n    - type: command\n      command: x\n",
                "hooks.Lunch (line 2)",
                "not an event",
            ),
            (
                proposal::parse,
                "hooks:\n  PreToolUse:\n    - type: command\n     command: [\n",
                "line 4",
                "not valid YAML",
            ),
            (
                proposal::parse,
                "hooks:\n  PreToolUse:\n    - type: matcher\n      match:\n        args:\n          path: 3\n      action: block\n",
                "hooks.PreToolUse[0].match.args.path (line 6)",
                "not a string",
            ),
        ];
        for (parse, text, field, problem) in cases {
            let error = parse(Path::new("/p/f"), text).expect_err(text);
            assert!(error.field.starts_with(field), "{text}: {error}");
            assert!(error.problem.contains(problem), "{text}: {error}");
            assert!(!error.fix.is_empty() && error.to_string().starts_with("/p/f: "));
        }
        // Events no host has are listed, with their line, not dropped.
        let config = proposal::parse(
            Path::new("/p/f"),
            "hooks:\n  Checkpoint:\n    - type: command\n      command: x\n",
        )
        .expect("valid");
        assert!(config.skipped[0].contains("line 2") && config.skipped[0].contains("Checkpoint"));
    }
}
