//! The Amplifier CLI hooks proposal's YAML, as a plugin's `hooks.yaml`:
//!
//! ```yaml
//! hooks:
//!   PreToolUse:
//!     - type: command            # the proposal's JSON on stdin and stdout
//!       command: "python ~/.amplifier/hooks/pre_tool.py"
//!       timeout_ms: 5000
//!       on_failure: "warn"       # warn | block | ignore
//!     - type: matcher            # evaluated in-process
//!       match: {tool: "Bash", args: {command: "rm *"}}
//!       action: "block"
//!       message: "..."
//! ```
//!
//! Its events map to the host's ([`EVENTS`]): `ModelSwitch` ("when model changes": logging, quota
//! tracking) is Claude Code's `PostModelSwitch` (2.1.251); `Checkpoint` and `MemoryUpdate` have no
//! counterpart in Claude Code 2.1.332 or Amplifier: such hooks are listed as not run. `type:
//! llm` is a model-backed handler ([`crate::handlers::llm`]), asked through the host's own model
//! access.

use std::path::Path;

use serde_json::{Map, Value, json};

use amplihack_protocol::{EventName, HookEvent};

use super::{Fields, Lines, OnFailure, Protocol, located};
use crate::execute::Finished;
use crate::handlers::DEFAULT_TIMEOUT_SECS;
use crate::handlers::rule::{Action, Rule};
use crate::handlers::{Group, Handler, PluginConfig};
use crate::handlers::{Kind, llm};
use crate::model::ConfigError;

/// The proposal's events and the host's names for them.
pub const EVENTS: &[(&str, &str)] = &[
    ("PreToolUse", "PreToolUse"),
    ("PostToolUse", "PostToolUse"),
    ("SessionStart", "SessionStart"),
    ("SessionStop", "SessionEnd"),
    ("PromptSubmit", "UserPromptSubmit"),
    ("ResponseComplete", "Stop"),
    ("Error", "PostToolUseFailure"),
    ("ModelSwitch", "PostModelSwitch"),
];

/// The proposal's events no host delivers.
pub const WITHOUT_COUNTERPART: &[&str] = &["Checkpoint", "MemoryUpdate"];

/// The file name of a plugin written in this dialect.
pub const FILE: &str = "hooks.yaml";

pub fn parse(file: &Path, text: &str) -> Result<PluginConfig, ConfigError> {
    // Lines are recorded only when something is to be reported (a second, rarer pass).
    match parse_with(file, text, false) {
        Ok(config) if config.skipped.is_empty() => Ok(config),
        _ => parse_with(file, text, true),
    }
}

fn parse_with(file: &Path, text: &str, with_lines: bool) -> Result<PluginConfig, ConfigError> {
    let (root, lines) = super::yaml_tree(file, text, with_lines)?;
    let error =
        |field: &str, problem: String, fix: &str| located(file, &lines, field, problem, fix);
    let hooks = match root.get("hooks") {
        Some(Value::Object(hooks)) => hooks,
        Some(_) => {
            return Err(error(
                "hooks",
                "is not a mapping".into(),
                "key it by event: hooks:\\n  PreToolUse: [...]",
            ));
        }
        None => {
            return Err(error(
                "hooks",
                "is missing".into(),
                "write hooks:\\n  PreToolUse:\\n    - type: command",
            ));
        }
    };
    let needs = match root.get(crate::confinement::FIELD) {
        None => Default::default(),
        Some(declared) => crate::confinement::parse(declared)
            .map_err(|(field, problem, fix)| error(&field, problem, &fix))?,
    };
    let mut groups = Vec::new();
    let mut skipped = Vec::new();
    for (event, list) in hooks {
        let at = format!("hooks.{event}");
        let Value::Array(list) = list else {
            return Err(error(
                &at,
                "is not a list".into(),
                "list its hooks, each starting with `- type:`",
            ));
        };
        let host_event = EVENTS
            .iter()
            .find(|(name, host)| name == event || host == event)
            .map(|(_, host)| *host);
        let Some(host_event) = host_event else {
            if WITHOUT_COUNTERPART.contains(&event.as_str()) {
                skipped.push(format!(
                    "{at} (line {}): no host delivers `{event}` (Claude Code 2.1.328 and Amplifier have no counterpart): its {} hook(s) never run",
                    lines.get(&at).copied().unwrap_or(0),
                    list.len()
                ));
                continue;
            }
            let names: Vec<&str> = EVENTS.iter().map(|(name, _)| *name).collect();
            return Err(error(
                &at,
                format!("`{event}` is not an event of the proposal"),
                &format!("use one of {}", names.join(", ")),
            ));
        };
        let mut handlers = Vec::new();
        for (i, hook) in list.iter().enumerate() {
            let at = format!("{at}[{i}]");
            let Value::Object(hook) = hook else {
                return Err(error(
                    &at,
                    "is not a mapping".into(),
                    "write `- type: command` and its fields",
                ));
            };
            handlers.push(read_hook(hook, &at, &lines, file)?);
        }
        groups.push(Group {
            event: host_event.to_string(),
            matcher: None,
            handlers,
        });
    }
    Ok(PluginConfig {
        description: None,
        enabled: true,
        groups,
        skipped,
        needs,
    })
}

fn read_hook(
    hook: &Map<String, Value>,
    at: &str,
    lines: &Lines,
    file: &Path,
) -> Result<Handler, ConfigError> {
    let fields = Fields {
        map: hook,
        at,
        lines,
        file,
    };
    let type_name = fields.required("type", "use command, matcher or llm")?;
    let on_failure = match fields.string("on_failure")?.as_deref() {
        None | Some("warn") => OnFailure::Warn,
        Some("ignore") => OnFailure::Ignore,
        Some("block") => OnFailure::Block,
        Some(other) => {
            return Err(fields.error(
                "on_failure",
                format!("`{other}` is not a failure policy"),
                "use warn, block or ignore",
            ));
        }
    };
    let timeout_secs = fields.positive(
        "timeout_ms",
        DEFAULT_TIMEOUT_SECS * 1000.0,
        "use a positive number of milliseconds",
    )? / 1000.0;
    let (kind, command) = match type_name.as_str() {
        "command" => {
            let command = fields.required("command", "give the command to run")?;
            let kind = fields.kind(json!({"type": "command", "command": command}))?;
            (kind, command)
        }
        "matcher" => {
            let rule = read_rule(hook, at, lines, file)?;
            let label = crate::handlers::HandlerKind::label(&rule).to_string();
            (Kind::Rule(rule), label)
        }
        "llm" => {
            let model = fields
                .string("model")?
                .unwrap_or_else(|| llm::DEFAULT_MODEL.into());
            let prompt =
                fields.required("prompt", "give the prompt, with {{tool}} and {{args}}")?;
            let max_tokens = match hook.get("max_tokens").filter(|v| !v.is_null()) {
                None => llm::DEFAULT_MAX_TOKENS,
                Some(v) => v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                    fields.error(
                        "max_tokens",
                        format!("is {v}"),
                        "use a positive whole number",
                    )
                })?,
            };
            let llm = llm::Llm::new(model, prompt, max_tokens, fields.boolean("cache", false)?);
            let label = crate::handlers::HandlerKind::label(&llm).to_string();
            (Kind::Llm(llm), label)
        }
        other => {
            return Err(fields.error(
                "type",
                format!("`{other}` is not a hook type of the proposal"),
                "use command, matcher or llm",
            ));
        }
    };
    Ok(Handler {
        kind,
        command,
        timeout_secs,
        timeout_declared: timeout_secs != DEFAULT_TIMEOUT_SECS,
        is_async: fields.boolean("async", false)?,
        rewake: None,
        condition: None,
        priority: 0,
        enabled: hook.get("enabled").and_then(Value::as_bool).unwrap_or(true),
        description: None,
        protocol: Protocol::Proposal,
        on_failure,
    })
}

fn read_rule(
    hook: &Map<String, Value>,
    at: &str,
    lines: &Lines,
    file: &Path,
) -> Result<Rule, ConfigError> {
    let error = |field: &str, problem: String, fix: &str| {
        located(file, lines, &format!("{at}.{field}"), problem, fix)
    };
    let matching = match hook.get("match") {
        Some(Value::Object(m)) => m,
        _ => {
            return Err(error(
                "match",
                "is missing or not a mapping".into(),
                "write match: {tool: \"Bash\", args: {command: \"rm *\"}}",
            ));
        }
    };
    let tool = match matching.get("tool") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.clone()),
        Some(other) => {
            return Err(error(
                "match.tool",
                format!("is {other}, not a string"),
                "give a tool name or glob",
            ));
        }
    };
    let mut args = Vec::new();
    match matching.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Object(globs)) => {
            for (name, glob) in globs {
                match glob {
                    Value::String(glob) => args.push((name.clone(), glob.clone())),
                    other => {
                        return Err(error(
                            &format!("match.args.{name}"),
                            format!("is {other}, not a string"),
                            "give a glob, quoted",
                        ));
                    }
                }
            }
        }
        Some(other) => {
            return Err(error(
                "match.args",
                format!("is {other}, not a mapping"),
                "map argument names to globs",
            ));
        }
    }
    let action = match hook.get("action").and_then(Value::as_str) {
        Some("block") => Action::Block,
        Some("allow") => Action::Allow,
        Some("warn") => Action::Warn,
        _ => {
            return Err(error(
                "action",
                "is missing or not block, allow or warn".into(),
                "use action: block",
            ));
        }
    };
    let message = match hook.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => {
            return Err(error(
                "message",
                format!("is {other}, not a string"),
                "quote it",
            ));
        }
    };
    Ok(Rule::new(tool, args, action, message))
}

/// The proposal's name for a host event.
pub fn event_name(event: &EventName) -> &str {
    EVENTS
        .iter()
        .find(|(_, host)| *host == event.as_str())
        .map_or(event.as_str(), |(proposal, _)| proposal)
}

/// What a proposal handler reads on stdin: `{event, tool, args, session_id, timestamp}`, and
/// what else the host said.
pub(super) fn input(event: &HookEvent, mut raw: Map<String, Value>, host_bytes: &[u8]) -> Vec<u8> {
    let tool = event.tool();
    let mut out = json!({
        "event": event_name(&event.name),
        "tool": tool.map(|t| t.name.clone()),
        "args": tool.map(|t| t.input.clone()),
        "session_id": event.session_id,
        "timestamp": amplihack_state::time::utc_now(),
    });
    // What else the host said (the tool's result, the prompt), for hooks that want it.
    if let Value::Object(out) = &mut out {
        for (from, to) in [
            ("tool_response", "result"),
            ("error", "error"),
            ("prompt", "prompt"),
            // ModelSwitch (Claude Code's PostModelSwitch).
            ("from_model", "from_model"),
            ("to_model", "to_model"),
        ] {
            if let Some(value) = raw.remove(from) {
                out.insert(to.into(), value);
            }
        }
    }
    serde_json::to_vec(&out).unwrap_or_else(|_| host_bytes.to_vec())
}

/// A proposal handler's output in Claude Code's words, or why it is not an answer.
pub(super) fn output(event: &HookEvent, mut finished: Finished) -> (Finished, Option<String>) {
    if finished.exit != Some(0) || finished.timed_out || finished.spawn_error.is_some() {
        // Not an answer: the failure policy decides; a proposal hook has no exit 2.
        finished.stdout.clear();
        if finished.exit == Some(2) {
            let first = finished.stderr.lines().next().unwrap_or("no stderr output");
            let why = format!("failed with exit 2: {first}");
            finished.exit = Some(0);
            return (finished, Some(why));
        }
        return (finished, None);
    }
    let text = finished.stdout.trim();
    if text.is_empty() {
        return (finished, None); // nothing to say: allow
    }
    let answer = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(answer)) => answer,
        _ => {
            let why = format!(
                "its answer is not the proposal's JSON object: {}",
                text.chars().take(120).collect::<String>()
            );
            finished.stdout.clear();
            return (finished, Some(why));
        }
    };
    match in_claude_words(event, &answer) {
        Ok(claude) => finished.stdout = claude.to_string(),
        Err(why) => {
            finished.stdout.clear();
            return (finished, Some(why));
        }
    }
    (finished, None)
}

/// The proposal's `{action, modified_args, message}` in Claude Code's words.
fn in_claude_words(event: &HookEvent, answer: &Map<String, Value>) -> Result<Value, String> {
    let message = answer
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty());
    let action = match answer.get("action") {
        None | Some(Value::Null) => "allow",
        Some(Value::String(action)) => action.as_str(),
        Some(other) => return Err(format!("its `action` is {other}, not a string")),
    };
    let name = event.name.as_str();
    let tool_event = event.tool().is_some();
    Ok(match action {
        "allow" | "continue" => match message {
            Some(message) => json!({"systemMessage": message}),
            None => json!({}),
        },
        "block" => {
            let reason = message.unwrap_or("blocked by a hook").to_string();
            if event.name == EventName::PreToolUse {
                json!({"hookSpecificOutput": {"hookEventName": name, "permissionDecision": "deny", "permissionDecisionReason": reason}})
            } else {
                json!({"decision": "block", "reason": reason})
            }
        }
        "modify" if tool_event => {
            let Some(Value::Object(args)) = answer.get("modified_args") else {
                return Err("its `action` is modify without a `modified_args` object".into());
            };
            let mut out =
                json!({"hookSpecificOutput": {"hookEventName": name, "updatedInput": args}});
            if let Some(message) = message {
                out["systemMessage"] = Value::String(message.into());
            }
            out
        }
        "modify" => return Err(format!("`action: modify` has nothing to modify on {name}")),
        other => {
            return Err(format!(
                "its `action` is `{other}`, not allow, block or modify"
            ));
        }
    })
}
