//! AMCP's hook files, read unchanged: `<project>/.amcp/hooks.toml` or `.json` and
//! `$XDG_CONFIG_HOME/amcp/hooks.toml` or `.json` (`~/.config/amcp/`), TOML first when both exist.
//!
//! ```toml
//! [[hooks.PreToolUse.handlers]]
//! matcher = "write_file|apply_patch"   # a regex over AMCP's tool names; "*" or "" for all
//! type = "command"                     # or "python" with `script` or `function`
//! command = "./scripts/validate-writes.sh"
//! timeout = 30                         # seconds
//! enabled = true
//! ```
//!
//! Each handler becomes a one-handler group whose matcher names the host's tools the AMCP regex
//! selects (the whole name must match, as AMCP's names are whole names), with [`Protocol::Amcp`].

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use amplihack_protocol::tool::{ARG_ALIASES, amcp_tool};
use amplihack_protocol::{EventName, HookEvent};

use super::{Fields, Lines, OnFailure, Protocol, located};
use crate::execute::Finished;
use crate::handlers::DEFAULT_TIMEOUT_SECS;
use crate::handlers::http::ISOLATED;
use crate::handlers::{Group, Handler, PluginConfig};
use crate::model::ConfigError;

/// The name AMCP plugins are listed under.
pub const NAME: &str = "amcp";

/// AMCP's events (all of them Claude Code's too).
const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "PreCompact",
    "Notification",
];

/// Runs `module.function` with the event as AMCP calls a function handler: the input as a dict;
/// a coroutine awaited; a dict returned is the JSON answer, a string is printed as it is.
/// Run with `python3 -I -B` ([`crate::handlers::http::ISOLATED`]): the project directory (the
/// working directory) is not on `sys.path`. Only the target's top-level package is loaded from
/// it, by absolute path, from source (never a `.pyc` found there), and only when no such name is
/// loaded or installed (the standard library, site-packages): a repo's `json.py` or `inspect.py`
/// never runs, nor does a repo's copy of a package a user-level handler names. What
/// `-I` drops that is the user's own comes back after the standard library: absolute
/// `PYTHONPATH` entries and the user's site-packages.
const FUNCTION_SHIM: &str = r#"import asyncio, importlib, importlib.machinery as m, importlib.util, inspect, json, os, sys
root = os.getcwd()
class Source(m.SourceFileLoader):
    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)
def finder(path):
    if path == root or path.startswith(root + os.sep):
        return m.FileFinder(path, (Source, m.SOURCE_SUFFIXES))
    raise ImportError
sys.path_hooks.insert(0, finder)
sys.path_importer_cache.clear()
sys.path += [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if os.path.isabs(p)]
import site; site.addsitedir(site.getusersitepackages())
name = sys.argv[1]
module, _, function = name.rpartition('.')
top = module.partition('.')[0]
if top not in sys.modules and importlib.util.find_spec(top) is None:
    spec = m.PathFinder.find_spec(top, [root])
    if spec is not None and spec.loader is not None:
        sys.modules[top] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[top])
handler = getattr(importlib.import_module(module), function)
result = handler(json.load(sys.stdin))
if inspect.isawaitable(result):
    result = asyncio.run(result)
if hasattr(result, 'to_dict'):
    result = result.to_dict()
if isinstance(result, (dict, list)):
    print(json.dumps(result))
elif result is not None:
    print(result)
"#;

/// How a function handler's label begins: `python3 -c call:<module.function> <module path>.py`.
const FUNCTION_LABEL: &str = "python3 -c call:";

/// The `module.function` of a function handler's label (`None` for any other handler).
pub fn function_of(label: &str) -> Option<&str> {
    label
        .strip_prefix(FUNCTION_LABEL)
        .and_then(|rest| rest.split(' ').next())
}

/// The AMCP hook file of a directory (`.amcp/` or `~/.config/amcp/`), if any.
pub fn file_in(dir: &Path) -> Option<PathBuf> {
    // One stat for everyone without AMCP: the directory first.
    if !dir.is_dir() {
        return None;
    }
    ["hooks.toml", "hooks.json"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|f| f.is_file())
}

/// The user's AMCP directory: `$XDG_CONFIG_HOME/amcp`, else `<home>/.config/amcp`.
pub fn user_dir(home: &Path) -> PathBuf {
    match std::env::var_os(amplihack_env::XDG_CONFIG_HOME).filter(|x| !x.is_empty()) {
        Some(config) => PathBuf::from(config).join("amcp"),
        None => home.join(".config/amcp"),
    }
}

/// Reads one AMCP hook file (TOML or JSON by its extension).
pub fn parse(file: &Path, text: &str) -> Result<PluginConfig, ConfigError> {
    // Lines are recorded only to locate a problem (a second, rarer pass).
    parse_with(file, text, false).or_else(|_| parse_with(file, text, true))
}

fn parse_with(file: &Path, text: &str, with_lines: bool) -> Result<PluginConfig, ConfigError> {
    let is_json = file.extension().is_some_and(|e| e == "json");
    let (root, lines) = if is_json {
        super::json_tree(file, text, with_lines)?
    } else {
        super::toml_tree(file, text, with_lines)?
    };
    let error =
        |field: &str, problem: String, fix: &str| located(file, &lines, field, problem, fix);
    let Some(hooks) = root.get("hooks") else {
        return Err(error(
            "hooks",
            "is missing".into(),
            "add [[hooks.PreToolUse.handlers]] tables",
        ));
    };
    let Value::Object(hooks) = hooks else {
        return Err(error(
            "hooks",
            "is not a table".into(),
            "key it by event name: [hooks.PreToolUse]",
        ));
    };
    let needs = match root.get(crate::confinement::FIELD) {
        None => Default::default(),
        Some(declared) => crate::confinement::parse(declared)
            .map_err(|(field, problem, fix)| error(&field, problem, &fix))?,
    };
    let mut groups = Vec::new();
    for (event, section) in hooks {
        let at = format!("hooks.{event}");
        if !EVENTS.contains(&event.as_str()) {
            return Err(error(
                &at,
                format!("`{event}` is not an AMCP hook event"),
                &format!("use one of {}", EVENTS.join(", ")),
            ));
        }
        let handlers = match section.get("handlers") {
            Some(Value::Array(handlers)) => handlers,
            _ => {
                return Err(error(
                    &format!("{at}.handlers"),
                    "is missing or not an array".into(),
                    &format!("list them as [[hooks.{event}.handlers]] tables"),
                ));
            }
        };
        for (i, handler) in handlers.iter().enumerate() {
            let at = format!("{at}.handlers[{i}]");
            let Value::Object(handler) = handler else {
                return Err(error(
                    &at,
                    "is not a table".into(),
                    "write type = \"command\" and command = \"...\"",
                ));
            };
            groups.push(read_handler(event, handler, (&at, i), &lines, file)?);
        }
    }
    Ok(PluginConfig {
        description: Some(format!("AMCP hooks ({})", file.display())),
        enabled: true,
        groups,
        skipped: Vec::new(),
        needs,
    })
}

fn read_handler(
    event: &str,
    handler: &Map<String, Value>,
    (at, order): (&str, usize),
    lines: &Lines,
    file: &Path,
) -> Result<Group, ConfigError> {
    let fields = Fields {
        map: handler,
        at,
        lines,
        file,
    };
    let error = |field: &str, problem: String, fix: &str| fields.error(field, problem, fix);
    let string = |field: &str| fields.string(field);
    let type_name = string("type")?.unwrap_or_else(|| "command".into());
    let (kind_json, label) = match type_name.as_str() {
        "command" => {
            let command = fields.required("command", "give the command to run")?;
            (json!({"type": "command", "command": command}), command)
        }
        "python" => match (string("script")?, string("function")?) {
            (Some(script), None) => {
                // AMCP resolves a relative script from its hooks file's directory; one found
                // there is run from there, else from the project directory (where handlers run).
                let beside = file.parent().map(|dir| dir.join(&script));
                let script = match beside {
                    Some(path) if Path::new(&script).is_relative() && path.is_file() => {
                        path.to_string_lossy().into_owned()
                    }
                    _ => script,
                };
                (
                    json!({"type": "command", "command": "python3", "args": [script]}),
                    format!("python3 {script}"),
                )
            }
            (None, Some(function)) => {
                if !function.contains('.') {
                    return Err(error(
                        "function",
                        format!("`{function}` is not `module.function`"),
                        "name the module and the function: mypackage.hooks.validate",
                    ));
                }
                (
                    json!({"type": "command", "command": "python3", "args": [ISOLATED[0], ISOLATED[1], "-c", FUNCTION_SHIM, function]}),
                    // The label names the module's file ([`function_of`] reads it back: trust
                    // covers the module's package).
                    format!(
                        "{FUNCTION_LABEL}{function} {}.py",
                        function
                            .rsplit_once('.')
                            .map_or("", |(m, _)| m)
                            .replace('.', "/")
                    ),
                )
            }
            (Some(_), Some(_)) => {
                return Err(error(
                    "function",
                    "is given with `script`".into(),
                    "keep one of `script` and `function`",
                ));
            }
            (None, None) => {
                return Err(error(
                    "script",
                    "is missing (and so is `function`)".into(),
                    "give script = \"./hook.py\" or function = \"package.module.function\"",
                ));
            }
        },
        other => {
            return Err(error(
                "type",
                format!("`{other}` is not an AMCP handler type"),
                "use \"command\" or \"python\"",
            ));
        }
    };
    let kind = fields.kind(kind_json)?;
    let timeout_secs = fields.positive(
        "timeout",
        DEFAULT_TIMEOUT_SECS,
        "use a positive number of seconds",
    )?;
    let enabled = fields.boolean("enabled", true)?;
    let matcher = string("matcher")?;
    let matcher = match matcher.as_deref().map(str::trim) {
        None | Some("" | "*") => None,
        // As AMCP: a pattern that is not a regular expression matches that exact name.
        Some(pattern) => {
            Some(host_matcher(pattern).unwrap_or_else(|_| format!("^{}$", regex_escape(pattern))))
        }
    };
    Ok(Group {
        event: event.to_string(),
        matcher,
        handlers: vec![Handler {
            command: label,
            kind,
            timeout_secs,
            timeout_declared: timeout_secs != DEFAULT_TIMEOUT_SECS,
            is_async: false,
            rewake: None,
            condition: None,
            // AMCP runs an event's handlers one after another, in the file's order, and stops at
            // the first that denies: each its own priority.
            priority: i64::try_from(order).unwrap_or(i64::MAX),
            enabled,
            description: None,
            protocol: Protocol::Amcp,
            on_failure: OnFailure::Warn,
        }],
    })
}

/// An AMCP matcher as a host matcher: a regex over AMCP's names, anchored at both ends, with each
/// name AMCP gives a host tool also accepted under the host's name (`write_file` matches `Write`).
pub fn host_matcher(pattern: &str) -> Result<String, String> {
    let anchored = format!("^(?:{pattern})$");
    let re = regex_lite::Regex::new(&anchored).map_err(|e| e.to_string())?;
    // The host tools whose AMCP name the regex matches, named exactly; and the regex itself for
    // names it matches as they are (MCP tools, Amplifier's names).
    let mut hosts: Vec<String> = amplihack_protocol::tool::TOOLS
        .iter()
        .filter(|t| !t.amcp.is_empty())
        .filter(|t| t.amcp.iter().any(|a| re.is_match(a)) || re.is_match(t.claude))
        .map(|t| regex_escape(t.claude))
        .collect();
    hosts.dedup();
    hosts.push(format!("(?:{pattern})"));
    Ok(format!("^(?:{})$", hosts.join("|")))
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

// What an AMCP handler reads, is given and answers, in and out of Claude Code's words.

/// What an AMCP handler reads on stdin: the host's event with AMCP's tool and argument names.
pub(super) fn input(event: &HookEvent, mut raw: Map<String, Value>, host_bytes: &[u8]) -> Vec<u8> {
    if let Some(tool) = event.tool() {
        raw.insert(
            "tool_name".into(),
            Value::String(amcp_tool(&tool.name).into()),
        );
        let key = if raw.contains_key("toolInput") && !raw.contains_key("tool_input") {
            "toolInput"
        } else {
            "tool_input"
        };
        if let Some(input) = raw.get(key).map(|i| renamed(i, true)) {
            raw.insert("tool_input".into(), input);
        }
    }
    serde_json::to_vec(&Value::Object(raw)).unwrap_or_else(|_| host_bytes.to_vec())
}

/// The `AMCP_*` variables an AMCP handler gets beside the usual.
pub(super) fn env(event: &HookEvent, project_dir: &Path) -> Vec<(String, String)> {
    let mut env = vec![
        (
            amplihack_env::AMCP_PROJECT_DIR.to_string(),
            project_dir.to_string_lossy().into_owned(),
        ),
        (
            amplihack_env::AMCP_HOOK_EVENT.into(),
            event.name.as_str().to_string(),
        ),
        (
            amplihack_env::AMCP_SESSION_ID.into(),
            event.session_id.clone().unwrap_or_default(),
        ),
    ];
    if let Some(tool) = event.tool() {
        env.push((
            amplihack_env::AMCP_TOOL_NAME.into(),
            amcp_tool(&tool.name).to_string(),
        ));
    }
    env
}

/// An AMCP handler's output in Claude Code's words (on exit 0, text that is not JSON is feedback).
pub(super) fn output(event: &HookEvent, mut finished: Finished) -> (Finished, Option<String>) {
    let text = finished.stdout.trim();
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(answer)) => {
            finished.stdout = Value::Object(in_claude_words(event, answer)).to_string();
        }
        // AMCP: on exit 0, output that is not JSON is feedback for the model.
        _ if finished.exit == Some(0) && !text.is_empty() => {
            let answer = json!({"feedback": text});
            if let Value::Object(answer) = answer {
                finished.stdout = Value::Object(in_claude_words(event, answer)).to_string();
            }
        }
        _ => {}
    }
    (finished, None)
}

/// AMCP's answer in Claude Code's words: `feedback` is context for the model, `updatedInput`
/// merges into the tool input (AMCP's `{**tool_input, **updated_input}`) in the host's argument
/// names, `updatedResponse` replaces a tool's output (Claude Code 2.1.328's `updatedToolOutput`).
fn in_claude_words(event: &HookEvent, mut answer: Map<String, Value>) -> Map<String, Value> {
    let event_name = event.name.as_str().to_string();
    let mut specific = match answer.remove("hookSpecificOutput") {
        Some(Value::Object(specific)) => specific,
        _ => Map::new(),
    };
    if let Some(feedback) = answer.remove("feedback").filter(|f| !f.is_null()) {
        let text = match feedback {
            Value::String(s) => s,
            other => other.to_string(),
        };
        let joined = match specific.get("additionalContext").and_then(Value::as_str) {
            Some(existing) => format!("{existing}\n{text}"),
            None => text,
        };
        specific.insert("additionalContext".into(), Value::String(joined));
    }
    if let Some(Value::Object(updated)) = specific.remove("updatedInput")
        && let Some(tool) = event.tool()
    {
        let mut merged = match &tool.input {
            Value::Object(input) => input.clone(),
            _ => Map::new(),
        };
        if let Value::Object(updated) = renamed(&Value::Object(updated), false) {
            merged.extend(updated);
        }
        specific.insert("updatedInput".into(), Value::Object(merged));
    }
    let response = answer
        .remove("updatedResponse")
        .or_else(|| specific.remove("updatedResponse"));
    if let Some(response) = response
        && event.name == EventName::PostToolUse
    {
        specific.insert("updatedToolOutput".into(), shaped_output(event, response));
    }
    if !specific.is_empty() {
        specific.insert("hookEventName".into(), Value::String(event_name));
        answer.insert("hookSpecificOutput".into(), Value::Object(specific));
    }
    answer
}

/// A replacement output in the tool's own shape: Claude Code 2.1.328 rejects an
/// `updatedToolOutput` that does not match it ("does not match Bash's output shape"), so AMCP's
/// text for a Bash call becomes the call's `{stdout, stderr, ...}` with that text as `stdout`.
fn shaped_output(event: &HookEvent, response: Value) -> Value {
    let Value::String(text) = &response else {
        return response; // an object is taken as the tool's own shape
    };
    let original = event
        .raw
        .get("tool_response")
        .or_else(|| event.raw.get("toolResponse"));
    match original {
        Some(Value::Object(shape)) if shape.get("stdout").is_some_and(Value::is_string) => {
            let mut shape = shape.clone();
            shape.insert("stdout".into(), Value::String(text.clone()));
            shape.insert("stderr".into(), Value::String(String::new()));
            Value::Object(shape)
        }
        _ => response,
    }
}

/// A tool input in the dialect's argument names (`to_dialect`), or back in the host's.
fn renamed(input: &Value, to_dialect: bool) -> Value {
    let Value::Object(map) = input else {
        return input.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let key = ARG_ALIASES
            .iter()
            .find_map(|(host, dialect)| {
                if to_dialect && key == host {
                    Some(*dialect)
                } else if !to_dialect && key == dialect {
                    Some(*host)
                } else {
                    None
                }
            })
            .unwrap_or(key);
        out.insert(key.to_string(), value.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matcher::matches;

    #[test]
    fn amcp_matchers_select_the_hosts_tools() {
        let cases = [
            ("write_file|apply_patch", "Write", true),
            ("write_file|apply_patch", "Edit", true),
            ("write_file|apply_patch", "Bash", false),
            ("write_file", "write_file", true),
            ("write_file", "Write", true),
            ("bash", "Bash", true),
            ("bash", "bash_extra", false),
            (r"mcp\..*", "mcp.memory", true),
            (r"mcp__.*", "mcp__memory__store", true),
            ("read", "Read", false),
            // Not a regular expression: that exact name, as AMCP falls back.
            ("(oops", "(oops", true),
            ("(oops", "Bash", false),
        ];
        for (pattern, tool, want) in cases {
            let matcher =
                host_matcher(pattern).unwrap_or_else(|_| format!("^{}$", regex_escape(pattern)));
            assert_eq!(
                matches(Some(&matcher), Some(tool)),
                want,
                "{pattern} {tool}: {matcher}"
            );
        }
    }

    /// Trusting a project covers its AMCP file, the scripts its handlers name (relative or under
    /// `$AMCP_PROJECT_DIR`) and a function handler's module.
    #[test]
    fn trust_covers_what_amcp_handlers_run() {
        let project = tempfile::tempdir().expect("tempdir");
        let root = project.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(
            ".amcp/hooks.toml",
            "[[hooks.PreToolUse.handlers]]\ncommand = \"./scripts/a.sh\"\n[[hooks.PreToolUse.handlers]]\ncommand = \"$AMCP_PROJECT_DIR/scripts/b.sh\"\n[[hooks.PreToolUse.handlers]]\ntype = \"python\"\nfunction = \"pkg.checks.run\"\n",
        );
        for file in ["scripts/a.sh", "scripts/b.sh", "pkg/checks.py"] {
            write(file, "x");
        }
        let plugins = crate::discovery::load_level(
            &root.join(".amplifier/hooks"),
            crate::discovery::Level::Project,
        );
        let files = crate::trust_scope::files_to_trust(root, &plugins).expect("covered");
        for want in [
            ".amcp/hooks.toml",
            "scripts/a.sh",
            "scripts/b.sh",
            "pkg/checks.py",
        ] {
            assert!(files.contains(&root.join(want)), "{want}: {files:?}");
        }
    }
}
