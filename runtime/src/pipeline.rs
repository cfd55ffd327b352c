//! The one pipeline every event goes through, whoever calls: the `amplihack-hooks` binary and
//! `amplihack hooks test` both call [`parse`], [`process`] (which is [`normalise`], then
//! [`run`]), then [`render`].
//!
//! 0. the host's dialect read into Claude Code's event model ([`parse`]: Gemini's `BeforeTool`
//!    is PreToolUse, Qwen's `run_shell_command` is `Bash`), then normalisation: the event as Claude Code names it (tool and event names) and, under
//!    Amplifier, the session id from the environment when the event has none;
//! 1. the row's built-ins, in table order (each sees the reply so far; one that fails is reported
//!    and skipped, the others still answer);
//! 2. unless a built-in denied, the user's plugins ([`amplihack_engine::forward`]), with the
//!    stop-loop guard applied to what the plugins answered;
//! 3. the merge, and the context cap across everything.

use std::time::{Duration, Instant};

use amplihack_engine::{forward, stop_guard};
use amplihack_protocol::{
    Builtin, Decision, EventName, Hook, HookEvent, Host, Rendered, Reply, hosts,
};

use crate::builtin_audit;
use crate::builtins;
use crate::context::Context;

/// Time kept back from the deadline for merging and replying after the user's hooks.
const REPLY_MARGIN: Duration = Duration::from_millis(300);

pub struct Call<'a> {
    pub hook: &'static Hook,
    pub event: &'a HookEvent,
    /// The event exactly as the host sent it (handed to plugins byte for byte).
    pub raw: &'a [u8],
    pub ctx: &'a Context,
    pub deadline: Instant,
}

impl Call<'_> {
    /// Time left before the deadline, less the margin for replying.
    pub fn time_left(&self) -> Duration {
        self.deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(REPLY_MARGIN)
    }
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub reply: Reply,
    /// What forwarding ran (none when the row does not forward or a built-in denied).
    pub forwarded: Option<forward::Outcome>,
    /// One line each for stderr and the failure log: failed built-ins, broken plugins.
    pub problems: Vec<String>,
}

/// Whether `AMPLIHACK_DISABLE` (comma-separated built-in names, or `all`) turns `builtin` off.
pub fn disabled(builtin: Builtin, setting: Option<&str>) -> bool {
    setting.is_some_and(|list| {
        list.split(',')
            .map(str::trim)
            .any(|name| name == "all" || name == builtin.name())
    })
}

/// An event after the pipeline ran: the event as normalised (what built-ins and plugins saw) and
/// what they answered.
#[derive(Debug)]
pub struct Processed {
    pub event: HookEvent,
    pub outcome: Outcome,
}

/// The whole pipeline from the host's event to the outcome: [`normalise`], then [`run`].
pub fn process(
    hook: &'static Hook,
    event: HookEvent,
    raw: Vec<u8>,
    ctx: &Context,
    deadline: Instant,
) -> Processed {
    let (event, raw) = normalise(event, raw, ctx);
    let outcome = run(&Call {
        hook,
        event: &event,
        raw: &raw,
        ctx,
        deadline,
    });
    Processed { event, outcome }
}

/// The pipeline's first step. Plugins see the tool and the event as Claude Code names them
/// (`Bash`, not Amplifier's `bash`; `SessionEnd`, not the specification's `SessionStop`); the
/// host's bytes are kept otherwise. Under Amplifier an event without a session id gets the one
/// its bridge sets in the environment (`AMPLIFIER_SESSION_ID`).
pub fn normalise(mut event: HookEvent, raw: Vec<u8>, ctx: &Context) -> (HookEvent, Vec<u8>) {
    let raw = as_claude_code_names_it(&mut event, raw);
    if event.session_id.is_none() && ctx.host == Host::Amplifier {
        event.session_id = ctx.var(amplihack_env::AMPLIFIER_SESSION_ID);
    }
    (event, raw)
}

fn as_claude_code_names_it(event: &mut HookEvent, input: Vec<u8>) -> Vec<u8> {
    use serde_json::Value;
    let tool = match (event.tool(), event.raw.get("tool_name")) {
        (Some(tool), Some(Value::String(sent))) if tool.name != *sent => Some(tool.name.clone()),
        _ => None,
    };
    let name = match event.raw.get("hook_event_name") {
        Some(Value::String(sent)) if event.name.is_known() && event.name.as_str() != sent => {
            Some(event.name.as_str().to_string())
        }
        _ => None,
    };
    if tool.is_none() && name.is_none() {
        return input;
    }
    if let Some(tool) = tool {
        event.raw.insert("tool_name".into(), Value::String(tool));
    }
    if let Some(name) = name {
        event
            .raw
            .insert("hook_event_name".into(), Value::String(name));
    }
    serde_json::to_vec(&event.raw).unwrap_or(input)
}

/// Steps 1 to 3, on a normalised event.
pub fn run(call: &Call<'_>) -> Outcome {
    let mut outcome = Outcome::default();
    let switched_off = call.ctx.var(amplihack_env::AMPLIHACK_DISABLE);
    let mut decided = Vec::new();
    for builtin in call.hook.builtins_for(&call.event.name, call.ctx.host) {
        if disabled(builtin, switched_off.as_deref()) {
            continue;
        }
        let began = Instant::now();
        match builtins::run(builtin, call, &outcome.reply) {
            Ok(reply) => {
                if builtin_audit::worth_recording(reply.decision) {
                    decided.extend(reply.decision.map(|decision| builtin_audit::Decided {
                        builtin,
                        decision,
                        reason: reply.reason.clone(),
                        took: began.elapsed(),
                    }));
                }
                outcome.reply.merge(crate::model_text::own(reply))
            }
            Err(e) => outcome
                .problems
                .push(format!("built-in {} failed, skipped: {e}", builtin.name())),
        }
    }
    builtin_audit::record(call, &decided, &mut outcome.problems);
    let state = call.ctx.state();
    // The host called amplihack in this session: one small file per session, for `doctor`'s
    // check of hosts that stopped calling. Not worth a complaint when it cannot be written.
    // At each turn's edges too, not only SessionStart: a SessionStart the host gave up on (a
    // busy machine, a bridge's time limit) must not make a session that called amplihack look
    // silent. Once the file exists each is one failed exclusive open; tool calls pay nothing.
    if matches!(
        call.event.name,
        EventName::SessionStart
            | EventName::UserPromptSubmit
            | EventName::Stop
            | EventName::SessionEnd
    ) && let Some(state) = &state
    {
        let _ = amplihack_state::calls::record(
            state,
            call.ctx.host.name(),
            call.event.session_id.as_deref(),
        );
    }
    if call.hook.forwards && outcome.reply.decision != Some(Decision::Deny) {
        let var = |name: &str| call.ctx.var(name);
        let mut forwarded = forward::forward(&forward::Request {
            event: call.event,
            raw: call.raw,
            host: call.ctx.host,
            var: &var,
            budget: call.time_left(),
        });
        if let Some(state) = &state {
            let var = |name: &str| call.ctx.var(name);
            let cap = stop_guard::cap(call.ctx.host, &var);
            stop_guard::apply(&mut forwarded.reply, call.event, state, cap);
        }
        outcome.problems.extend(forwarded.problems.iter().cloned());
        outcome.reply.merge(forwarded.reply.clone());
        outcome.forwarded = Some(forwarded);
    }
    // Claude Code keeps any one long answer itself (saved whole, previewed: the forward did the
    // same per plugin output); every other host gets the total capped.
    if call.ctx.host != Host::ClaudeCode {
        forward::cap_context(
            &mut outcome.reply,
            state.as_ref(),
            call.event.session_id.as_deref(),
        );
    }
    outcome
}

/// The reply in the dialect of the host that called.
pub fn render(host: Host, event: &HookEvent, reply: &Reply) -> Rendered {
    (hosts::dialect(host).render)(event, reply)
}

/// The host's bytes read into Claude Code's event model (its event, tool and field names
/// renamed: [`hosts::parse`]), with the bytes plugins are handed: the host's own, unless a name
/// had to change. Whoever calls the pipeline starts here.
pub fn parse(
    host: Host,
    input: Vec<u8>,
    implied: Option<amplihack_protocol::EventName>,
) -> Result<(HookEvent, Vec<u8>), amplihack_protocol::InvalidInput> {
    let (event, changed) = hosts::parse(host, &input, implied)?;
    if !changed {
        return Ok((event, input));
    }
    let raw = serde_json::to_vec(&event.raw).unwrap_or(input);
    Ok((event, raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn amplifier_event(raw: &str, session: Option<&str>) -> (HookEvent, Vec<u8>) {
        let overrides: HashMap<String, String> = session
            .map(|s| {
                (
                    amplihack_env::AMPLIFIER_SESSION_ID.to_string(),
                    s.to_string(),
                )
            })
            .into_iter()
            .collect();
        let ctx = Context::with_overrides(Host::Amplifier, overrides, std::path::Path::new("/"));
        let event = HookEvent::parse(raw.as_bytes(), None).expect("a valid event");
        normalise(event, raw.as_bytes().to_vec(), &ctx)
    }

    #[test]
    fn normalising_names_the_tool_as_claude_code_does_and_fills_amplifiers_session() {
        let (event, raw) = amplifier_event(
            r#"{"hook_event_name":"PreToolUse","tool_name":"bash","tool_input":{"command":"ls"}}"#,
            Some("from-env"),
        );
        let seen: serde_json::Value = serde_json::from_slice(&raw).expect("json");
        assert_eq!(seen["tool_name"], "Bash");
        assert_eq!(seen["tool_input"]["command"], "ls");
        assert_eq!(event.session_id.as_deref(), Some("from-env"));
    }

    #[test]
    fn normalising_keeps_the_hosts_bytes_when_nothing_needs_renaming() {
        let text = r#"{"hook_event_name": "PreToolUse", "session_id": "s",  "tool_name": "Bash", "tool_input": {}}"#;
        let (event, raw) = amplifier_event(text, Some("from-env"));
        assert_eq!(raw, text.as_bytes());
        assert_eq!(event.session_id.as_deref(), Some("s"));
    }
}
