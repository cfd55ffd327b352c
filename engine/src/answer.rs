//! One handler's output read as Claude Code reads it, into a [`Reply`].
//!
//! As Claude Code 2.1.328 reads it: stdout that starts with `{` is a JSON answer, and a valid one
//! decides whatever the exit code (unless it is 2); other text is context for UserPromptSubmit and
//! SessionStart and ignored elsewhere. Exit 2: a block whatever the JSON says, with the JSON's
//! `reason` or else stderr as the message, routed per event by the renderer. Any other exit without
//! a JSON answer, a timeout or a failure to start: a non-blocking warning.

use amplihack_protocol::{Decision, EventName, Reply};
use serde_json::Value;

use crate::execute::Finished;

/// Who answered: what a warning names, and what Claude Code 2.1.328 tells the model about a
/// handler that blocked with exit 2 (`[<command>]: <stderr>` and, for a plugin's handler,
/// `This hook comes from the <name>@inline plugin.`).
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// The plugin's directory name, as warnings name it.
    pub plugin: &'a str,
    /// The command as Claude Code shows it: `${CLAUDE_PLUGIN_ROOT}` filled in, nothing quoted.
    /// `None` for another dialect's handler (AMCP, the proposal's), which Claude Code never
    /// runs: its block's reason is its stderr alone.
    pub command: Option<&'a str>,
    /// The plugin's id (`<name>@inline`, the id Claude Code gives a plugin directory it loads
    /// with `--plugin-dir`); `None` for a level's own hooks file, which is no plugin.
    pub plugin_id: Option<&'a str>,
}

impl Origin<'_> {
    /// Claude Code's text for an exit-2 block: stderr as it came (untrimmed), else
    /// `No stderr output`, then the attribution on its own line.
    pub fn blocking_error(&self, stderr: &str) -> String {
        let Some(command) = self.command else {
            return Some(stderr.trim()).filter(|s| !s.is_empty()).map_or_else(
                || format!("blocked by hook from {}", self.plugin),
                str::to_string,
            );
        };
        let stderr = if stderr.is_empty() {
            "No stderr output"
        } else {
            stderr
        };
        let attribution = self
            .plugin_id
            .map(|id| format!("\nThis hook comes from the {id} plugin."))
            .unwrap_or_default();
        format!("[{command}]: {stderr}{attribution}")
    }
}

/// The reply and, separately, a warning for the user (non-blocking failures).
pub fn interpret(
    event: &EventName,
    origin: &Origin<'_>,
    finished: &Finished,
) -> (Reply, Option<String>) {
    let plugin = origin.plugin;
    if let Some(error) = &finished.spawn_error {
        return (
            Reply::default(),
            Some(format!("hook from {plugin} could not start: {error}")),
        );
    }
    // Treated as a file changed since trust: nothing of its answer is used, and the user is told.
    if let Some(file) = &finished.pinned_changed {
        return (
            Reply::default(),
            Some(format!(
                "hook from {plugin}: its answer was discarded: {} changed during the run (a file was renamed over it or written into it while the handler ran, so it may have run bytes never trusted; review it, then `amplihack hooks trust`)",
                file.display()
            )),
        );
    }
    if finished.timed_out {
        return (
            Reply::default(),
            Some(format!(
                "hook from {plugin} timed out after {:.1} s and was stopped",
                finished.duration.as_secs_f64()
            )),
        );
    }
    let json = json_answer(finished.stdout.trim());
    match (finished.exit, json) {
        (_, Some(Err(error))) if finished.exit != Some(2) => (
            Reply::default(),
            Some(format!(
                "hook from {plugin} printed output that starts with {{ but is not a JSON object: {error}"
            )),
        ),
        (Some(0), None)
            if takes_plain_text_context(event) && !finished.stdout.trim().is_empty() =>
        {
            // Claude Code 2.1.328 labels it `hook success`, not `additional context`.
            (Reply::plain_context(finished.stdout.trim()), None)
        }
        (Some(0), None) => (Reply::default(), None),
        // Exit 2 blocks whatever the JSON says; its `reason`, if any, is the message.
        (Some(2), json) => {
            let (mut reply, json_reason) = match json {
                Some(Ok(answer)) => (from_json(event, &answer), text(answer.get("reason"))),
                _ => (Reply::default(), None),
            };
            // A JSON reason is the model's text as it is; stderr comes as Claude Code frames it.
            let reason = json_reason
                .or(reply.reason.take())
                .unwrap_or_else(|| origin.blocking_error(&finished.stderr));
            reply.decision = Some(Decision::Deny);
            reply.reason = Some(reason);
            (reply, None)
        }
        // Claude Code 2.1.332 rejects the whole answer (its schema is keyed by `hookEventName`):
        // nothing of it is used, and the user is shown why.
        (_, Some(Ok(answer))) if lacks_event_name(&answer) => (
            Reply::default(),
            Some(format!("hook from {plugin}: {MISSING_EVENT_NAME}")),
        ),
        // Any exit: a valid JSON object decides (Claude Code ignores the exit code then).
        (_, Some(Ok(answer))) => (from_json(event, &answer), None),
        (code, _) => {
            let first_line = finished.stderr.lines().next().unwrap_or("no stderr output");
            let code = code.map_or("a signal".to_string(), |c| c.to_string());
            (
                Reply::default(),
                Some(format!(
                    "hook from {plugin} failed with exit {code}: {first_line}"
                )),
            )
        }
    }
}

/// Claude Code's words (2.1.332) for an answer whose `hookSpecificOutput` has no
/// `hookEventName`, which it then ignores whole.
const MISSING_EVENT_NAME: &str = "Hook JSON output validation failed \u{2014} hookSpecificOutput is missing required field \"hookEventName\"";

/// An answer Claude Code's validation rejects: a `hookSpecificOutput` object without
/// `hookEventName` (as published plugins print `{"hookSpecificOutput":{"permissionDecision":...}}`).
fn lacks_event_name(answer: &serde_json::Map<String, Value>) -> bool {
    answer
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .is_some_and(|specific| !specific.contains_key("hookEventName"))
}

/// Where plain stdout on exit 0 is not ignored: context for the model, and PreCompact's extra
/// instructions for the compaction (Claude Code 2.1.332: `Additional Instructions:`).
fn takes_plain_text_context(event: &EventName) -> bool {
    matches!(
        event,
        EventName::UserPromptSubmit
            | EventName::SessionStart
            | EventName::UserPromptExpansion
            | EventName::PreCompact
    )
}

/// Whether Claude Code acts on a handler's `onFailure: "block"` on this event (2.1.332 ignores
/// it on Stop, SubagentStop, TaskCompleted and TeammateIdle, logging `not blocking`; async
/// handlers never block).
pub fn on_failure_honoured(event: &EventName) -> bool {
    !matches!(
        event,
        EventName::Stop
            | EventName::SubagentStop
            | EventName::TaskCompleted
            | EventName::TeammateIdle
    )
}

/// A handler with `onFailure: "block"` that failed, as Claude Code 2.1.332 counts failure: it
/// could not start, timed out, or exited with a code other than 0 and 2 (a valid JSON answer
/// does not save it). Exit 0 with output that is not JSON is no failure. The text is Claude
/// Code's (observed): the model gets it as the hook's error. `None`: it did not fail.
pub fn failure_block(origin: &Origin<'_>, finished: &Finished) -> Option<String> {
    let command = origin.command.unwrap_or(origin.plugin);
    let blocking = "blocking because onFailure is \"block\"";
    if finished.pinned_changed.is_some() {
        return None; // not the handler's failure: its answer is discarded (interpret)
    }
    if finished.timed_out {
        return Some(format!("[{command}]: timed out; {blocking}"));
    }
    let detail = match (&finished.spawn_error, finished.exit) {
        (Some(error), _) => error.to_string(),
        (None, Some(0 | 2)) => return None,
        (None, _) => finished.stderr.trim_end().to_string(),
    };
    let detail = if detail.is_empty() {
        "No stderr output"
    } else {
        &detail
    };
    Some(format!("[{command}]: failed; {blocking}\n{detail}"))
}

/// Stdout that starts with `{` is a JSON answer (Claude Code's rule): the object, or why not.
fn json_answer(stdout: &str) -> Option<Result<serde_json::Map<String, Value>, String>> {
    if !stdout.starts_with('{') {
        return None;
    }
    Some(match serde_json::from_str::<Value>(stdout) {
        Ok(Value::Object(answer)) => Ok(answer),
        Ok(_) => Err("not an object".into()),
        Err(e) => Err(e.to_string()),
    })
}

/// The reply in a JSON answer printed by a handler that declared itself async: its last line
/// that is a JSON object other than the `{"async": true}` declaration (or the whole rest).
pub fn async_answer(event: &EventName, stdout: &str) -> Option<Reply> {
    let declared = |answer: &serde_json::Map<String, Value>| answer.contains_key("async");
    let rest: Vec<&str> = stdout
        .lines()
        .skip_while(|line| {
            line.trim().is_empty()
                || matches!(json_answer(line.trim()), Some(Ok(a)) if declared(&a))
        })
        .collect();
    if let Some(Ok(answer)) = json_answer(rest.join("\n").trim()) {
        return Some(from_json(event, &answer));
    }
    rest.iter()
        .rev()
        .find_map(|line| match json_answer(line.trim()) {
            Some(Ok(answer)) if !declared(&answer) => Some(from_json(event, &answer)),
            _ => None,
        })
}

/// The `hookSpecificOutput` fields read into [`Reply`]'s own fields.
const INTERPRETED: [&str; 6] = [
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
    "decision",
];

fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

fn from_json(event: &EventName, answer: &serde_json::Map<String, Value>) -> Reply {
    let mut reply = Reply {
        suppress_output: answer.get("suppressOutput") == Some(&Value::Bool(true)),
        ..Reply::default()
    };
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);

    // PermissionRequest is decided by `hookSpecificOutput.decision.behavior` alone: Claude Code
    // 2.1.328 leaves the dialog's answer unchanged for a top-level `decision: "approve"` and
    // rejects PreToolUse's `permissionDecision` there (observed with --plugin-dir).
    let permission_dialog = *event == EventName::PermissionRequest;
    // Top-level decision (legacy approve/block too), then the event-specific ones, which win.
    if let Some(decision) = answer
        .get("decision")
        .and_then(Value::as_str)
        .and_then(Decision::parse)
        .filter(|_| !permission_dialog)
    {
        reply.decision = Some(decision);
        reply.reason = text(answer.get("reason"));
    }
    if let Some(specific) = specific {
        if let Some(decision) = specific
            .get("permissionDecision")
            .and_then(Value::as_str)
            .and_then(Decision::parse)
            .filter(|_| !permission_dialog)
        {
            reply.decision = Some(decision);
            reply.reason = text(specific.get("permissionDecisionReason")).or(reply.reason.take());
        }
        // PermissionRequest: {"decision": {"behavior": "allow"|"deny", "message", "updatedInput"}}
        if let Some(behavior) = specific
            .get("decision")
            .and_then(|d| d.get("behavior"))
            .and_then(Value::as_str)
            .and_then(Decision::parse)
        {
            reply.decision = Some(behavior);
            reply.reason = specific
                .get("decision")
                .and_then(|d| text(d.get("message")))
                .or(reply.reason.take());
            if let Some(input) = specific.get("decision").and_then(|d| d.get("updatedInput")) {
                reply.updated_input = Some(input.clone());
            }
        }
        if let Some(input) = specific.get("updatedInput") {
            reply.updated_input = Some(input.clone());
        }
        if let Some(context) = text(specific.get("additionalContext")) {
            reply.context.push(context);
        }
        // The rest goes to Claude Code as it came, when it was meant for this event.
        if specific.get("hookEventName").and_then(Value::as_str) == Some(event.as_str()) {
            reply.passthrough = specific
                .iter()
                .filter(|(key, _)| !INTERPRETED.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
        }
    }
    reply.terminal_sequence = text(answer.get("terminalSequence"));
    // The seeds' Amplifier-style fields. `newContent` has no Claude Code equivalent; its text is
    // handed to the model as context so it is not lost.
    for key in ["contextInjection", "newContent"] {
        if let Some(context) = text(answer.get(key)) {
            reply.context.push(context);
        }
    }
    reply.system_message = text(answer.get("systemMessage"));
    if answer.get("continue").and_then(Value::as_bool) == Some(false) {
        reply.halt =
            Some(text(answer.get("stopReason")).unwrap_or_else(|| "stopped by a hook".into()));
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn finished(exit: Option<i32>, stdout: &str, stderr: &str) -> Finished {
        Finished {
            exit,
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration: Duration::from_millis(5),
            ..Finished::default()
        }
    }

    const ORIGIN: Origin<'static> = Origin {
        plugin: "p",
        command: Some("/plugins/p/check"),
        plugin_id: Some("p@inline"),
    };

    #[test]
    fn an_exit_2_block_reads_as_claude_code_frames_it() {
        let own_file = Origin {
            plugin_id: None,
            ..ORIGIN
        };
        let dialect = Origin {
            command: None,
            ..ORIGIN
        };
        let cases = [
            (
                ORIGIN,
                "no way\n",
                "[/plugins/p/check]: no way\n\nThis hook comes from the p@inline plugin.",
            ),
            (
                ORIGIN,
                "no way",
                "[/plugins/p/check]: no way\nThis hook comes from the p@inline plugin.",
            ),
            (
                ORIGIN,
                "",
                "[/plugins/p/check]: No stderr output\nThis hook comes from the p@inline plugin.",
            ),
            (own_file, "  spaced\n", "[/plugins/p/check]:   spaced\n"),
            (dialect, "  spaced\n", "spaced"),
            (dialect, "", "blocked by hook from p"),
        ];
        for (origin, stderr, want) in cases {
            let (reply, _) = interpret(&EventName::Stop, &origin, &finished(Some(2), "", stderr));
            assert_eq!(reply, Reply::deny(want), "{stderr:?}");
        }
    }

    #[test]
    fn every_output_form() {
        use EventName as E;
        let deny = |r: &str| Reply::deny(r);
        let cases: Vec<(E, Finished, Reply, bool)> = vec![
            (E::PreToolUse, finished(Some(0), "", ""), Reply::default(), false),
            (E::PreToolUse, finished(Some(0), "just text", ""), Reply::default(), false),
            (E::UserPromptSubmit, finished(Some(0), "remember X\n", ""), Reply::plain_context("remember X"), false),
            (E::SessionStart, finished(Some(0), "ctx", ""), Reply::plain_context("ctx"), false),
            (E::UserPromptExpansion, finished(Some(0), "ctx", ""), Reply::plain_context("ctx"), false),
            (E::PreToolUse, finished(Some(2), "", "no way\n"), deny(&ORIGIN.blocking_error("no way\n")), false),
            (E::PreToolUse, finished(Some(2), "{\"decision\":\"approve\"}", ""), deny(&ORIGIN.blocking_error("")), false),
            (E::PreToolUse, finished(Some(1), "", "oops\nmore"), Reply::default(), true),
            (E::PreToolUse, Finished { timed_out: true, ..finished(None, "", "") }, Reply::default(), true),
            (E::Stop, finished(Some(0), &json!({"decision": "block", "reason": "again"}).to_string(), ""), deny("again"), false),
            (
                E::PreToolUse,
                finished(Some(0), &json!({"decision": "approve", "reason": "fine"}).to_string(), ""),
                Reply { decision: Some(Decision::Allow), reason: Some("fine".into()), ..Reply::default() },
                false,
            ),
            (
                E::PreToolUse,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "sure?", "updatedInput": {"command": "ls"}, "additionalContext": "c"}}).to_string(), ""),
                Reply { decision: Some(Decision::Ask), reason: Some("sure?".into()), updated_input: Some(json!({"command": "ls"})), context: vec!["c".into()], ..Reply::default() },
                false,
            ),
            (
                E::PermissionRequest,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "nope"}}}).to_string(), ""),
                deny("nope"),
                false,
            ),
            // PermissionRequest: only `decision.behavior` answers the dialog (Claude Code 2.1.328).
            (E::PermissionRequest, finished(Some(0), &json!({"decision": "approve"}).to_string(), ""), Reply::default(), false),
            (
                E::PermissionRequest,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "permissionDecision": "allow"}}).to_string(), ""),
                Reply::default(),
                false,
            ),
            // Stop's additionalContext reaches the model (as a reminder, the turn going on).
            (
                E::Stop,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "more"}}).to_string(), ""),
                Reply::context("more"),
                false,
            ),
            // A top-level updatedInput is not read (Claude Code 2.1.328 ran the call unchanged).
            (E::PreToolUse, finished(Some(0), &json!({"updatedInput": {"command": "x"}}).to_string(), ""), Reply::default(), false),
            (E::SessionStart, finished(Some(0), &json!({"contextInjection": "amp ctx"}).to_string(), ""), Reply::context("amp ctx"), false),
            (E::PostToolUse, finished(Some(0), &json!({"newContent": "replacement"}).to_string(), ""), Reply::context("replacement"), false),
            (
                E::Stop,
                finished(Some(0), &json!({"continue": false, "stopReason": "enough", "systemMessage": "bye", "suppressOutput": true}).to_string(), ""),
                Reply { halt: Some("enough".into()), system_message: Some("bye".into()), suppress_output: true, ..Reply::default() },
                false,
            ),
        ];
        let mut cases = cases;
        cases.extend(vec![
            // Claude Code 2.1.328's leniency: a valid JSON object decides on any exit but 2 ...
            (E::Stop, finished(Some(1), &json!({"decision": "block", "reason": "r1"}).to_string(), "noise"), deny("r1"), false),
            // ... exit 2 blocks whatever the JSON says, with its reason when it has one ...
            (E::PreToolUse, finished(Some(2), &json!({"permissionDecision": "allow", "reason": "json says"}).to_string(), "stderr says"), deny("json says"), false),
            (E::PostToolUse, finished(Some(2), "not json", "stderr says\n"), deny(&ORIGIN.blocking_error("stderr says\n")), false),
            // ... and output that starts with { but is not JSON is an error, never context.
            (E::UserPromptSubmit, finished(Some(0), "{oops", ""), Reply::default(), true),
            (E::UserPromptSubmit, finished(Some(0), "[1, 2]", ""), Reply::plain_context("[1, 2]"), false),
            // Fields amplihack does not read itself reach Claude Code unchanged, for their event.
            (
                E::UserPromptSubmit,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "sessionTitle": "Fix login"}, "terminalSequence": "\u{7}"}).to_string(), ""),
                Reply { passthrough: json!({"sessionTitle": "Fix login"}).as_object().cloned().unwrap_or_default(), terminal_sequence: Some("\u{7}".into()), ..Reply::default() },
                false,
            ),
            (
                E::PostToolUse,
                finished(Some(0), &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedToolOutput": "x"}}).to_string(), ""),
                Reply::default(),
                false,
            ),
                   // Claude Code 2.1.332 rejects a hookSpecificOutput without hookEventName, whole (as
            // published selfish-pipeline 1.3.0 prints its guard's answers): shown, not used.
            (
                E::PreToolUse,
                finished(Some(0), &json!({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}, "systemMessage": "m"}).to_string(), ""),
                Reply::default(),
                true,
            ),
            (
                E::UserPromptSubmit,
                finished(Some(0), &json!({"hookSpecificOutput": {"additionalContext": "ctx"}}).to_string(), ""),
                Reply::default(),
                true,
            ),
        ]);
        for (event, output, want, warns) in cases {
            let (reply, warning) = interpret(&event, &ORIGIN, &output);
            assert_eq!(reply, want, "{event} {output:?}");
            assert_eq!(warning.is_some(), warns, "{event} {output:?}: {warning:?}");
        }
    }

    /// A pinned file changed during the run: whatever the handler printed or exited with, none of
    /// its answer is used, it is reported naming the plugin and the file, and it is no failure
    /// that blocks.
    #[test]
    fn an_answer_from_a_run_whose_pinned_file_changed_is_discarded_and_reported() {
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "untrusted"}}).to_string();
        for (exit, stdout) in [
            (Some(0), deny.as_str()),
            (Some(2), ""),
            (Some(0), "context"),
            (Some(1), ""),
        ] {
            let output = Finished {
                pinned_changed: Some("/p/tools/check.sh".into()),
                ..finished(exit, stdout, "why")
            };
            for event in [EventName::PreToolUse, EventName::UserPromptSubmit] {
                let (reply, warning) = interpret(&event, &ORIGIN, &output);
                assert_eq!(reply, Reply::default(), "{exit:?} {stdout}");
                let warning = warning.expect("reported");
                assert!(
                    warning.starts_with("hook from p: its answer was discarded: /p/tools/check.sh changed during the run"),
                    "{warning}"
                );
            }
            assert_eq!(failure_block(&ORIGIN, &output), None);
        }
    }

    #[test]
    fn on_failure_block_counts_failure_as_claude_code_does() {
        let blocking = "blocking because onFailure is \"block\"";
        let cases = [
            (finished(Some(0), "{oops", ""), None),
            (finished(Some(2), "", "no"), None),
            (
                finished(Some(3), "", "guard-crashed\n"),
                Some(format!(
                    "[/plugins/p/check]: failed; {blocking}\nguard-crashed"
                )),
            ),
            (
                finished(Some(1), "{\"systemMessage\": \"fine\"}", ""),
                Some(format!(
                    "[/plugins/p/check]: failed; {blocking}\nNo stderr output"
                )),
            ),
            (
                finished(None, "", ""),
                Some(format!(
                    "[/plugins/p/check]: failed; {blocking}\nNo stderr output"
                )),
            ),
            (
                Finished {
                    timed_out: true,
                    ..finished(None, "", "late")
                },
                Some(format!("[/plugins/p/check]: timed out; {blocking}")),
            ),
        ];
        for (output, want) in cases {
            assert_eq!(failure_block(&ORIGIN, &output), want, "{output:?}");
        }
        for (event, honoured) in [
            (EventName::PreToolUse, true),
            (EventName::PreSkillShellCommand, true),
            (EventName::Stop, false),
            (EventName::SubagentStop, false),
            (EventName::TaskCompleted, false),
            (EventName::TeammateIdle, false),
        ] {
            assert_eq!(on_failure_honoured(&event), honoured, "{event}");
        }
    }

    #[test]
    fn an_async_handler_answers_after_its_declaration() {
        let event = EventName::PostToolUse;
        let context = |text: &str| Some(Reply::context(text));
        let cases = [
            (
                "{\"async\": true}\n{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"later\"}}\n",
                context("later"),
            ),
            (
                "{\"async\":true,\"asyncTimeout\":5000}\nprogress...\n{\"systemMessage\": \"done\"}\n",
                Some(Reply {
                    system_message: Some("done".into()),
                    ..Reply::default()
                }),
            ),
            (
                "{\"async\": true}\n{\n  \"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"pretty\"}\n}\n",
                context("pretty"),
            ),
            (
                "{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"config async\"}}",
                context("config async"),
            ),
            ("{\"async\": true}\n", None),
            ("plain words\n", None),
        ];
        for (stdout, want) in cases {
            assert_eq!(async_answer(&event, stdout), want, "{stdout}");
        }
    }
}
