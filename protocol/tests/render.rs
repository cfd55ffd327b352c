//! Rendering: one table of (event, reply) → exactly what each host is sent.

use amplihack_protocol::{Decision, EventName, Reply, amplifier, claude};
use serde_json::{Value, json};

fn deny(reason: &str) -> Reply {
    Reply::deny(reason)
}

fn ask(reason: &str) -> Reply {
    Reply {
        decision: Some(Decision::Ask),
        reason: Some(reason.into()),
        ..Reply::default()
    }
}

fn stdout_json(stdout: Option<String>) -> Value {
    stdout.map_or(Value::Null, |s| {
        serde_json::from_str(&s).expect("stdout is JSON")
    })
}

#[test]
fn claude_code_dialect() {
    use EventName as E;
    let cases = vec![
        (E::PreToolUse, Reply::default(), Value::Null),
        (E::Stop, Reply::default(), Value::Null),
        (
            E::PreToolUse,
            deny("no"),
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}),
        ),
        (
            E::PreToolUse,
            Reply {
                decision: Some(Decision::Allow),
                updated_input: Some(json!({"command":"ls -la"})),
                ..Reply::default()
            },
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}),
        ),
        (
            E::PermissionRequest,
            deny("no"),
            json!({"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no"}}}),
        ),
        (E::PermissionRequest, ask("hm"), Value::Null),
        (
            E::Stop,
            deny("keep going"),
            json!({"decision":"block","reason":"keep going"}),
        ),
        (
            E::UserPromptSubmit,
            deny("nope"),
            json!({"decision":"block","reason":"nope"}),
        ),
        (
            E::PostToolUse,
            deny("look"),
            json!({"decision":"block","reason":"look"}),
        ),
        (
            E::SessionStart,
            Reply::context("ctx"),
            json!({"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"}}),
        ),
        (
            E::UserPromptSubmit,
            Reply {
                context: vec!["a".into(), "b".into()],
                ..Reply::default()
            },
            json!({"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"a\n\nb"}}),
        ),
        // Events that cannot take context or a block get nothing rather than something invalid.
        (E::SessionEnd, Reply::context("ctx"), Value::Null),
        // A block where none is possible reaches the user, as Claude Code shows exit-2 stderr there.
        (E::SessionEnd, deny("x"), json!({"systemMessage": "x"})),
        (
            E::SessionStart,
            deny("careful"),
            json!({"systemMessage": "careful"}),
        ),
        (E::Notification, Reply::context("ctx"), Value::Null),
        (
            E::Stop,
            Reply {
                halt: Some("done".into()),
                system_message: Some("note".into()),
                ..Reply::default()
            },
            json!({"systemMessage":"note","continue":false,"stopReason":"done"}),
        ),
    ];
    for (event, reply, want) in cases {
        let rendered = claude::render(&event, &reply);
        assert_eq!(rendered.exit_code, 0, "{event} {reply:?}");
        assert_eq!(stdout_json(rendered.stdout), want, "{event} {reply:?}");
    }
}

#[test]
fn amplifier_dialect_uses_only_forms_the_bridge_honours() {
    use EventName as E;
    let cases = vec![
        (E::PreToolUse, Reply::default(), Value::Null),
        (
            E::PreToolUse,
            deny("no"),
            json!({"decision":"block","reason":"no"}),
        ),
        (
            E::UserPromptSubmit,
            deny("no"),
            json!({"decision":"block","reason":"no"}),
        ),
        (
            E::PreToolUse,
            ask("check"),
            json!({"decision":"block","reason":"confirmation required (Amplifier cannot ask): check"}),
        ),
        // Not blockable under Amplifier: the reason reaches the model as context instead.
        (
            E::PostToolUse,
            deny("look"),
            json!({"contextInjection":"look"}),
        ),
        (
            E::Stop,
            deny("keep going"),
            json!({"contextInjection":"keep going"}),
        ),
        (E::SessionEnd, deny("x"), json!({"contextInjection":"x"})),
        (
            E::SessionStart,
            Reply::context("ctx"),
            json!({"contextInjection":"ctx"}),
        ),
        (
            E::PreToolUse,
            Reply {
                system_message: Some("warn".into()),
                ..deny("no")
            },
            json!({"decision":"block","reason":"no","systemMessage":"warn"}),
        ),
        // Alone, a systemMessage is dropped by the kernel: send nothing rather than pretend.
        (
            E::PreToolUse,
            Reply {
                system_message: Some("warn".into()),
                ..Reply::default()
            },
            Value::Null,
        ),
        (
            E::PreToolUse,
            Reply {
                updated_input: Some(json!({})),
                ..Reply::default()
            },
            Value::Null,
        ),
        (
            E::Stop,
            Reply {
                halt: Some("x".into()),
                ..Reply::default()
            },
            Value::Null,
        ),
    ];
    for (event, reply, want) in cases {
        let rendered = amplifier::render(&event, &reply);
        assert_eq!(rendered.exit_code, 0, "{event} {reply:?}");
        let mut got = stdout_json(rendered.stdout);
        // `hookResult` rides along for the native module; the bridge ignores unknown keys.
        if let Some(map) = got.as_object_mut() {
            map.remove("hookResult");
            if map.is_empty() {
                got = Value::Null;
            }
        }
        assert_eq!(got, want, "{event} {reply:?}");
        for forbidden in ["hookSpecificOutput", "additionalContext", "continue"] {
            assert!(
                got.get(forbidden).is_none(),
                "{event}: {forbidden} is not honoured by the bridge"
            );
        }
        if got.get("decision").is_some() {
            assert!(
                matches!(
                    event,
                    E::PreToolUse | E::UserPromptSubmit | E::PermissionRequest
                ),
                "{event}: block on a path that does not block"
            );
        }
    }
}

/// The native module's `hookResult`: every Amplifier hook action, from the same reply.
#[test]
fn amplifier_hook_result_maps_every_action() {
    use EventName as E;
    let cases: Vec<(E, Reply, Value)> = vec![
        (
            E::PreToolUse,
            deny("no"),
            json!({"action": "deny", "reason": "no"}),
        ),
        (
            E::PreToolUse,
            ask("look first"),
            json!({"action": "ask_user", "reason": "look first", "approval_prompt": "look first", "approval_default": "deny"}),
        ),
        (
            E::PreToolUse,
            Reply {
                updated_input: Some(json!({"command": "ls"})),
                ..Reply::default()
            },
            json!({"action": "modify", "data": {"tool_input": {"command": "ls"}}}),
        ),
        (
            E::SessionStart,
            Reply::context("ctx"),
            json!({"action": "inject_context", "context_injection": "ctx"}),
        ),
        (
            E::Stop,
            deny("keep going"),
            json!({"action": "inject_context", "reason": "keep going", "context_injection": "keep going"}),
        ),
        (
            E::PreToolUse,
            Reply {
                system_message: Some("fyi".into()),
                suppress_output: true,
                ..Reply::default()
            },
            json!({"action": "continue", "user_message": "fyi", "user_message_level": "info", "suppress_output": true}),
        ),
        (
            E::PreToolUse,
            Reply {
                system_message: Some("careful".into()),
                ..deny("no")
            },
            json!({"action": "deny", "reason": "no", "user_message": "careful", "user_message_level": "warning"}),
        ),
    ];
    for (event, reply, want) in cases {
        let got = stdout_json(amplifier::render(&event, &reply).stdout);
        assert_eq!(got["hookResult"], want, "{event} {reply:?}");
    }
    assert!(
        amplifier::render(&E::PreToolUse, &Reply::default())
            .stdout
            .is_none()
    );
}
