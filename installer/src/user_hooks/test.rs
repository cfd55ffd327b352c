//! `amplihack hooks test`: run an event through the built-ins and plugins, as a host would.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use amplihack_protocol::{EventName, Host, table};
use amplihack_runtime::context::Context as RuntimeContext;
use amplihack_runtime::pipeline;
use serde_json::{Value, json};

use crate::commands::{CommandError, Outcome};

use super::{Context, outcome_of};

/// `amplihack hooks test`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct TestArgs {
    /// The event, e.g. PreToolUse
    pub event: String,
    /// Tool name for tool events (default Bash)
    #[arg(long)]
    pub tool: Option<String>,
    /// Tool input as JSON (default {"command":"true"})
    #[arg(long)]
    pub input: Option<String>,
    /// A whole event payload from a file instead
    #[arg(long, conflicts_with_all = ["tool", "input"])]
    pub payload: Option<PathBuf>,
    /// Answer as the binary would to this host
    #[arg(long, value_enum, default_value = "claude")]
    pub host: super::HostArg,
}

pub fn test(ctx: &Context, args: &TestArgs) -> Result<Outcome, CommandError> {
    let name = EventName::parse(&args.event);
    if !name.is_known() {
        return Err(CommandError::usage(format!(
            "unknown event `{}`: use a Claude Code event name such as PreToolUse, UserPromptSubmit or SessionStart",
            args.event
        )));
    }
    let payload: Value = match &args.payload {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| CommandError::refused(format!("{}: {e}", file.display())))?;
            serde_json::from_str(&text).map_err(|e| {
                CommandError::refused(format!("{}: not valid JSON: {e}", file.display()))
            })?
        }
        None => sample_event(&name, ctx, args)?,
    };
    let raw = serde_json::to_vec(&payload).unwrap_or_default();
    let host = Host::from(args.host);
    let (event, raw) = pipeline::parse(host, raw, Some(name.clone()))
        .map_err(|e| CommandError::refused(format!("the sample event is invalid: {e}")))?;
    let overrides = HashMap::from([
        (
            amplihack_env::CLAUDE_PROJECT_DIR.to_string(),
            ctx.locations.project.to_string_lossy().into_owned(),
        ),
        (
            "HOME".to_string(),
            ctx.locations.home.to_string_lossy().into_owned(),
        ),
    ]);
    let runtime_ctx = RuntimeContext::with_overrides(host, overrides, &ctx.locations.project);
    // The event's registered built-ins and its plugins, exactly as the binary runs them (the
    // same pipeline, normalisation first).
    let hook = table::find("dispatch")
        .ok_or_else(|| CommandError::Internal("the hook table has no `dispatch` row".into()))?;
    let pipeline::Processed { event, outcome } = pipeline::process(
        hook,
        event,
        raw,
        &runtime_ctx,
        Instant::now() + Duration::from_secs(60),
    );
    let builtins: Vec<&str> = hook
        .builtins_for(&event.name, host)
        .iter()
        .map(|b| b.name())
        .collect();
    let result = outcome.forwarded.unwrap_or_default();
    let mut text = format!(
        "event {}: {} handler(s) ran\n",
        event.name,
        result.runs.len()
    );
    let mut runs = Vec::new();
    for run in &result.runs {
        let f = run.finished.as_ref();
        let exit = if run.detached {
            "started (async)".to_string()
        } else if f.is_none() {
            "evaluated in-process (no process)".to_string() // a rule (dialects::proposal)
        } else {
            f.and_then(|f| f.exit)
                .map_or("killed".into(), |c| format!("exit {c}"))
        };
        text.push_str(&format!(
            "  {}:{} [priority {}] {}\n    {exit} in {:.0} ms; decision: {}\n",
            run.level.as_str(),
            run.plugin,
            run.priority,
            run.command,
            f.map_or(0.0, |f| f.duration.as_secs_f64() * 1000.0),
            run.reply.decision.map_or("none", |d| d.as_str()),
        ));
        for (label, stream) in [
            ("stdout", f.map(|f| f.stdout.trim())),
            ("stderr", f.map(|f| f.stderr.trim())),
        ] {
            if let Some(s) = stream.filter(|s| !s.is_empty()) {
                text.push_str(&format!(
                    "    {label}: {}\n",
                    s.lines().next().unwrap_or_default()
                ));
            }
        }
        runs.push(json!({"plugin": format!("{}:{}", run.level.as_str(), run.plugin), "command": run.command, "priority": run.priority,
            "exit": f.and_then(|f| f.exit), "timed_out": f.is_some_and(|f| f.timed_out), "async": run.detached,
            "stdout": f.map(|f| f.stdout.clone()), "stderr": f.map(|f| f.stderr.clone()), "decision": run.reply.decision.map(|d| d.as_str())}));
    }
    for skipped in &result.skipped {
        text.push_str(&format!("  skipped {skipped}\n"));
    }
    for problem in &outcome.problems {
        text.push_str(&format!("  problem: {problem}\n"));
    }
    let rendered = pipeline::render(host, &event, &outcome.reply).stdout;
    text.push_str(&format!(
        "built-ins: {}\nreply to {}: {}\n",
        if builtins.is_empty() {
            "none".to_string()
        } else {
            builtins.join(", ")
        },
        host.title(),
        rendered.as_deref().unwrap_or("(nothing)")
    ));
    let reply = rendered
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .unwrap_or(Value::Null);
    Ok(outcome_of(
        "test",
        text,
        json!({"event": event.name.as_str(), "host": host.name(), "payload": payload, "builtins": builtins, "runs": runs, "skipped": result.skipped, "problems": outcome.problems,
               "reply": reply}),
        0,
    ))
}

fn sample_event(name: &EventName, ctx: &Context, args: &TestArgs) -> Result<Value, CommandError> {
    let mut event = json!({"hook_event_name": name.as_str(), "session_id": "amplihack-hooks-test", "cwd": ctx.locations.project});
    let tool_input: Value = match &args.input {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| CommandError::usage(format!("--input is not valid JSON: {e}")))?,
        None => json!({"command": "true"}),
    };
    match name {
        EventName::PreToolUse
        | EventName::PermissionRequest
        | EventName::PostToolUse
        | EventName::PostToolUseFailure => {
            event["tool_name"] = json!(args.tool.clone().unwrap_or_else(|| "Bash".into()));
            event["tool_input"] = tool_input;
            if *name == EventName::PostToolUse {
                event["tool_response"] = json!({});
            }
            if *name == EventName::PostToolUseFailure {
                event["error"] = json!("Exit code 1");
            }
        }
        EventName::UserPromptSubmit => event["prompt"] = json!("amplihack hooks test"),
        EventName::SessionStart => event["source"] = json!("startup"),
        EventName::SessionEnd => event["reason"] = json!("other"),
        EventName::Stop | EventName::SubagentStop => event["stop_hook_active"] = json!(false),
        EventName::PreCompact | EventName::PostCompact => event["trigger"] = json!("manual"),
        EventName::Notification => {
            event["message"] = json!("amplihack hooks test");
            event["notification_type"] = json!("idle_prompt");
        }
        _ => {}
    }
    Ok(event)
}
