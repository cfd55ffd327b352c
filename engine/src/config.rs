//! A plugin's `hooks.json`: Claude Code's schema (including `async`, `asyncRewake` with
//! `rewakeMessage`, and `if`) plus the seed fields `enabled`, `priority` and `description`, validated with errors that name the file, the field and the fix.

use std::path::{Path, PathBuf};

use amplihack_protocol::EventName;
use amplihack_protocol::event::json_kind as kind;
use serde_json::Value;

use crate::handlers::{HandlerKind, Kind};
use crate::model::{OnFailure, Protocol, Rewake};

pub use crate::handlers::DEFAULT_TIMEOUT_SECS;
pub use crate::handlers::{Group, Handler, PluginConfig};
pub use crate::model::ConfigError;

/// A hooks file's text: a regular file of at most [`amplihack_state::bounded::HOOKS_FILE_CAP`] bytes (a repository
/// controls it, and it is read on every call before any trust).
/// Each one read is remembered, with the SHA-256 of its bytes ([`take_read`]): trust checks that
/// what was parsed is what it trusted, not only what the file holds when it checks.
pub fn read_small(file: &Path) -> Result<String, amplihack_state::bounded::ReadError> {
    let text = amplihack_state::bounded::read_text(file, amplihack_state::bounded::HOOKS_FILE_CAP)?;
    READ.with(|read| {
        read.borrow_mut().push((
            file.to_path_buf(),
            amplihack_state::trust::sha_of_bytes(text.as_bytes()),
        ))
    });
    Ok(text)
}

thread_local! {
    static READ: std::cell::RefCell<Vec<(PathBuf, String)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The hooks files [`read_small`] read on this thread since the last call, each with the SHA-256
/// of the bytes read.
pub fn take_read() -> Vec<(PathBuf, String)> {
    READ.with(|read| std::mem::take(&mut *read.borrow_mut()))
}

/// A field's place in a hooks file, `<at>.<name>`, spelled out only for an error: a valid file
/// (every plugin's, on every hook call) formats nothing.
#[derive(Clone, Copy)]
struct Field<'a>(&'a str, &'a str);

impl Field<'_> {
    fn path(self) -> String {
        if self.0.is_empty() {
            self.1.to_string()
        } else {
            format!("{}.{}", self.0, self.1)
        }
    }
}

struct Checker<'a> {
    file: &'a Path,
}

impl Checker<'_> {
    fn error(
        &self,
        field: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            field: field.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    /// The file's JSON, or where it stops being JSON.
    fn json(&self, text: &str) -> Result<Value, ConfigError> {
        serde_json::from_str(text).map_err(|e| {
            self.error(
                format!("line {}, column {}", e.line(), e.column()),
                format!("not valid JSON ({e})"),
                "correct the JSON at that position",
            )
        })
    }

    fn bool_field(
        &self,
        value: Option<&Value>,
        field: Field<'_>,
        default: bool,
    ) -> Result<bool, ConfigError> {
        match value {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.error(
                field.path(),
                format!("is {}, not a boolean", kind(other)),
                "use true or false",
            )),
        }
    }

    fn string_field(
        &self,
        value: Option<&Value>,
        field: Field<'_>,
    ) -> Result<Option<String>, ConfigError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.error(
                field.path(),
                format!("is {}, not a string", kind(other)),
                "make it a string",
            )),
        }
    }
}

/// A Claude Code plugin manifest's `hooks`: the events inline, or the path (from the plugin's
/// directory) of a hooks file. A manifest without `hooks` has none.
pub fn parse_manifest(file: &Path, text: &str) -> Result<PluginConfig, ConfigError> {
    let checker = Checker { file };
    let manifest = checker.json(text)?;
    let description = manifest.get("description").cloned();
    match manifest.get("hooks") {
        None => Ok(PluginConfig {
            description: None,
            enabled: true,
            groups: Vec::new(),
            skipped: Vec::new(),
            needs: Default::default(),
        }),
        Some(Value::String(relative)) => {
            let root = file
                .parent()
                .and_then(Path::parent)
                .unwrap_or(Path::new("."));
            let hooks_file = manifest_hooks_file(root, relative).map_err(|problem| {
                checker.error(
                    "hooks",
                    problem,
                    "point it at a hooks file inside the plugin's directory, relative to it (\"hooks/hooks.json\")",
                )
            })?;
            let text = read_small(&hooks_file).map_err(|e| {
                checker.error(
                    "hooks",
                    format!("names {}, which cannot be read: {e}", hooks_file.display()),
                    "point it at the plugin's hooks file, relative to the plugin",
                )
            })?;
            let mut config = parse(&hooks_file, &text)?;
            // The manifest's declaration, when it has one, is the plugin's.
            if let Some(declared) = manifest.get(crate::confinement::FIELD) {
                config.needs = crate::confinement::parse(declared)
                    .map_err(|(field, problem, fix)| checker.error(field, problem, fix))?;
            }
            Ok(config)
        }
        Some(inline) => {
            let mut wrapped = serde_json::json!({"hooks": inline, "description": description});
            if let Some(declared) = manifest.get(crate::confinement::FIELD) {
                wrapped[crate::confinement::FIELD] = declared.clone();
            }
            parse(file, &wrapped.to_string())
        }
    }
}

/// The hooks file a manifest names, which must be inside the plugin's directory (`root`): a
/// relative path without `..` that, links followed, stays there. Trust hashes the plugin's
/// directory; a hooks file elsewhere would bring commands nobody trusted.
fn manifest_hooks_file(root: &Path, relative: &str) -> Result<PathBuf, String> {
    let named = Path::new(relative);
    if named.is_absolute() {
        return Err(format!(
            "is an absolute path ({relative}), outside the plugin"
        ));
    }
    if named
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("leaves the plugin's directory ({relative})"));
    }
    let file = root.join(named);
    // A link inside the plugin to a file elsewhere is outside too.
    if let (Ok(real), Ok(real_root)) = (file.canonicalize(), root.canonicalize())
        && !real.starts_with(&real_root)
    {
        return Err(format!(
            "names {}, a link to {}, outside the plugin",
            file.display(),
            real.display()
        ));
    }
    Ok(file)
}

/// Parses and validates one `hooks.json`.
pub fn parse(file: &Path, text: &str) -> Result<PluginConfig, ConfigError> {
    let checker = Checker { file };
    let root = checker.json(text)?;
    let Value::Object(root) = root else {
        return Err(checker.error(
            "(top level)",
            format!("is {}, not an object", kind(&root)),
            "write {\"hooks\": {\"PreToolUse\": [...]}}",
        ));
    };
    let description = checker.string_field(root.get("description"), Field("", "description"))?;
    let enabled = checker.bool_field(root.get("enabled"), Field("", "enabled"), true)?;
    let plugin_priority = match root.get("priority") {
        None => 0,
        Some(v) => v.as_i64().ok_or_else(|| {
            checker.error(
                "priority",
                format!("is {}, not an integer", kind(v)),
                "use a whole number; lower runs first",
            )
        })?,
    };
    let needs = match root.get(crate::confinement::FIELD) {
        None => Default::default(),
        Some(declared) => crate::confinement::parse(declared)
            .map_err(|(field, problem, fix)| checker.error(field, problem, fix))?,
    };
    let hooks = match root.get("hooks") {
        None => return Err(checker.error("hooks", "is missing", "add \"hooks\": {\"<EventName>\": [{\"matcher\": \"...\", \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]}]}")),
        Some(Value::Object(hooks)) => hooks,
        Some(other) => return Err(checker.error("hooks", format!("is {}, not an object", kind(other)), "key it by event name, e.g. \"hooks\": {\"PreToolUse\": []}")),
    };
    let mut groups = Vec::new();
    let mut skipped = Vec::new();
    for (event, list) in hooks {
        let Value::Array(list) = list else {
            return Err(checker.error(
                format!("hooks.{event}"),
                format!("is {}, not an array", kind(list)),
                "make it an array of matcher groups",
            ));
        };
        for (g, group) in list.iter().enumerate() {
            let at = format!("hooks.{event}[{g}]");
            let Value::Object(group) = group else {
                return Err(checker.error(
                    &at,
                    format!("is {}, not an object", kind(group)),
                    "write {\"matcher\": \"...\", \"hooks\": [...]}",
                ));
            };
            let matcher = checker.string_field(group.get("matcher"), Field(&at, "matcher"))?;
            let Some(Value::Array(handlers)) = group.get("hooks") else {
                return Err(checker.error(
                    format!("{at}.hooks"),
                    "is missing or not an array",
                    "list the handlers: \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]",
                ));
            };
            let mut parsed = Vec::new();
            for (h, handler) in handlers.iter().enumerate() {
                let at = format!("{at}.hooks[{h}]");
                let Value::Object(handler) = handler else {
                    return Err(checker.error(
                        &at,
                        format!("is {}, not an object", kind(handler)),
                        "write {\"type\": \"command\", \"command\": \"...\"}",
                    ));
                };
                let handler_kind = Kind::parse(handler, &at)
                    .map_err(|(field, problem, fix)| checker.error(field, problem, fix))?;
                if let Some(why) = handler_kind.never_runs() {
                    skipped.push(format!(
                        "{at}: type `{}` is not run by amplihack: {why}",
                        handler_kind.type_name()
                    ));
                }
                let command = handler_kind.label().to_string();
                let timeout_secs = match handler.get("timeout") {
                    None => handler_kind.default_timeout_secs(),
                    Some(v) => match v.as_f64() {
                        Some(t) if t > 0.0 && t.is_finite() => t,
                        Some(t) => {
                            return Err(checker.error(
                                format!("{at}.timeout"),
                                format!("is {t} s"),
                                "use a positive number of seconds",
                            ));
                        }
                        None => {
                            return Err(checker.error(
                                format!("{at}.timeout"),
                                format!("is {}, not a number", kind(v)),
                                "use a number of seconds",
                            ));
                        }
                    },
                };
                let priority = match handler.get("priority") {
                    None => plugin_priority,
                    Some(v) => v.as_i64().ok_or_else(|| {
                        checker.error(
                            format!("{at}.priority"),
                            format!("is {}, not an integer", kind(v)),
                            "use a whole number; lower runs first",
                        )
                    })?,
                };
                // Claude Code's `onFailure: "block"` (2.1.295), where it acts on it.
                let fails_closed = checker
                    .string_field(handler.get("onFailure"), Field(&at, "onFailure"))?
                    .as_deref()
                    == Some("block")
                    && crate::answer::on_failure_honoured(&EventName::parse(event));
                parsed.push(Handler {
                    kind: handler_kind,
                    command,
                    timeout_secs,
                    timeout_declared: handler.get("timeout").is_some(),
                    is_async: checker.bool_field(
                        handler.get("async"),
                        Field(&at, "async"),
                        false,
                    )?,
                    rewake: checker
                        .bool_field(handler.get("asyncRewake"), Field(&at, "asyncRewake"), false)?
                        .then(|| {
                            checker.string_field(
                                handler.get("rewakeMessage"),
                                Field(&at, "rewakeMessage"),
                            )
                        })
                        .transpose()?
                        .map(|message| Rewake { message }),
                    condition: checker.string_field(handler.get("if"), Field(&at, "if"))?,
                    priority,
                    enabled: checker.bool_field(
                        handler.get("enabled"),
                        Field(&at, "enabled"),
                        true,
                    )?,
                    description: checker
                        .string_field(handler.get("description"), Field(&at, "description"))?,
                    protocol: Protocol::Claude,
                    // Async handlers never block: they run in the background, not through it.
                    on_failure: if fails_closed {
                        OnFailure::Block
                    } else {
                        OnFailure::Warn
                    },
                });
            }
            groups.push(Group {
                event: event.clone(),
                matcher,
                handlers: parsed,
            });
        }
    }
    Ok(PluginConfig {
        description,
        enabled,
        groups,
        skipped,
        needs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_configs_name_the_field_and_the_fix() {
        let cases = [
            ("{", "line 1, column 1", "not valid JSON"),
            ("[]", "(top level)", "not an object"),
            ("{}", "hooks", "is missing"),
            ("{\"hooks\": []}", "hooks", "not an object"),
            ("{\"hooks\": {\"Stop\": {}}}", "hooks.Stop", "not an array"),
            (
                "{\"hooks\": {\"Stop\": [3]}}",
                "hooks.Stop[0]",
                "not an object",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"matcher\": 1, \"hooks\": []}]}}",
                "hooks.Stop[0].matcher",
                "not a string",
            ),
            (
                "{\"hooks\": {\"Stop\": [{}]}}",
                "hooks.Stop[0].hooks",
                "missing or not an array",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\"}]}]}}",
                "hooks.Stop[0].hooks[0].command",
                "missing or empty",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"x\", \"timeout\": -5}]}]}}",
                "hooks.Stop[0].hooks[0].timeout",
                "is -5 s",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"x\", \"timeout\": \"5\"}]}]}}",
                "hooks.Stop[0].hooks[0].timeout",
                "not a number",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"x\", \"async\": \"yes\"}]}]}}",
                "hooks.Stop[0].hooks[0].async",
                "not a boolean",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"x\", \"asyncRewake\": 1}]}]}}",
                "hooks.Stop[0].hooks[0].asyncRewake",
                "not a boolean",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"x\", \"if\": [\"Bash\"]}]}]}}",
                "hooks.Stop[0].hooks[0].if",
                "not a string",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"x\", \"priority\": 1.5}]}]}}",
                "hooks.Stop[0].hooks[0].priority",
                "not an integer",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"shell\", \"command\": \"x\"}]}]}}",
                "hooks.Stop[0].hooks[0].type",
                "not a handler type",
            ),
            (
                "{\"enabled\": 0, \"hooks\": {}}",
                "enabled",
                "not a boolean",
            ),
        ];
        for (text, field, problem) in cases {
            let error = parse(Path::new("/p/hooks.json"), text).expect_err(text);
            assert_eq!(error.field, field, "{text}");
            assert!(error.problem.contains(problem), "{text}: {error}");
            assert!(!error.fix.is_empty());
            assert!(error.to_string().starts_with("/p/hooks.json: "), "{error}");
        }
    }

    #[test]
    fn valid_config_with_seed_fields() {
        let text = r#"{"description": "d", "priority": 5, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "a", "timeout": 2},
            {"command": "b", "async": true, "priority": -1, "enabled": false, "description": "bee"},
            {"type": "prompt", "prompt": "is this ok?"}
        ]}]}}"#;
        let config = parse(Path::new("/p/hooks.json"), text).expect("valid");
        let handlers = &config.groups[0].handlers;
        assert_eq!(handlers.len(), 3);
        assert_eq!(handlers[2].kind.type_name(), "prompt");
        assert_eq!((handlers[0].timeout_secs, handlers[0].priority), (2.0, 5));
        assert!(handlers[1].is_async && !handlers[1].enabled && handlers[1].priority == -1);
        assert_eq!(config.skipped.len(), 1);
    }

    #[test]
    fn a_plugin_manifest_declares_hooks_inline_or_by_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let manifest = dir.path().join(".claude-plugin/plugin.json");
        std::fs::create_dir_all(manifest.parent().expect("parent")).expect("mkdir");
        let inline = r#"{"name": "p", "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "node a.js", "statusMessage": "..."}]}]}}"#;
        let parsed = parse_manifest(&manifest, inline).expect("inline hooks");
        assert_eq!(parsed.groups.len(), 1);
        assert_eq!(parsed.groups[0].handlers[0].command, "node a.js");

        std::fs::write(
            dir.path().join("more-hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"command": "b"}]}]}}"#,
        )
        .expect("write");
        let by_path = parse_manifest(&manifest, r#"{"hooks": "./more-hooks.json"}"#).expect("path");
        assert_eq!(by_path.groups[0].event, "Stop");

        let none = parse_manifest(&manifest, r#"{"name": "skills-only"}"#).expect("no hooks");
        assert!(none.groups.is_empty());
        let missing = parse_manifest(&manifest, r#"{"hooks": "./absent.json"}"#);
        assert!(missing.is_err_and(|e| e.field == "hooks" && e.problem.contains("absent.json")));
    }
}
