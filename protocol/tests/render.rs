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
            // Each text its own paragraph with Claude Code's label, as when each handler answers.
            json!({"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"a\n\nUserPromptSubmit hook additional context: b"}}),
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

/// Claude Code 2.1.332's forms: the newer events, `defer`, the Elicitation decline and the
/// TaskCompleted block (exit 2 with the reason as `decision: "block"` too, which 2.1.332 takes as
/// the message: `TaskCompleted hook feedback:\n<reason>`).
#[test]
fn claude_code_2_1_332_forms() {
    use EventName as E;
    let defer = Reply {
        decision: Some(Decision::Defer),
        ..Reply::default()
    };
    let cases = vec![
        (
            E::PreModelSwitch,
            deny("not that one"),
            json!({"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"deny","permissionDecisionReason":"not that one"}}),
            None,
        ),
        (
            E::PreModelSwitch,
            ask("sure?"),
            json!({"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"ask","permissionDecisionReason":"sure?"}}),
            None,
        ),
        (
            E::PreSkillShellCommand,
            defer.clone(),
            json!({"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"defer"}}),
            None,
        ),
        (
            E::PreToolUse,
            defer,
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}),
            None,
        ),
        (
            E::PostModelSwitch,
            Reply::context("mind the budget"),
            json!({"hookSpecificOutput":{"hookEventName":"PostModelSwitch","additionalContext":"mind the budget"}}),
            None,
        ),
        (
            E::Elicitation,
            deny("no forms"),
            json!({"decision":"block","reason":"no forms"}),
            None,
        ),
        (
            E::ElicitationResult,
            deny("no"),
            json!({"decision":"block","reason":"no"}),
            None,
        ),
        (
            E::TaskCompleted,
            deny("tests fail"),
            json!({"decision":"block","reason":"tests fail"}),
            Some("tests fail"),
        ),
        (
            E::TeammateIdle,
            deny("keep at it"),
            json!({"decision":"block","reason":"keep at it"}),
            Some("keep at it"),
        ),
    ];
    for (event, reply, want, exit_2) in cases {
        let rendered = claude::render(&event, &reply);
        assert_eq!(stdout_json(rendered.stdout), want, "{event} {reply:?}");
        assert_eq!(rendered.stderr.as_deref(), exit_2, "{event} {reply:?}");
        let code = if exit_2.is_some() { 2 } else { 0 };
        assert_eq!(rendered.exit_code, code, "{event} {reply:?}");
    }
    // PreCompact: plain stdout goes out as it is (the compaction's extra instructions).
    let rendered = claude::render(
        &E::PreCompact,
        &Reply {
            plain_context: vec!["keep the API notes".into(), "and the plan".into()],
            ..Reply::default()
        },
    );
    assert_eq!(
        rendered.stdout.as_deref(),
        Some("keep the API notes\n\nand the plan")
    );
    // Amplifier has no compaction instructions: nothing goes to its model.
    let plain = Reply::plain_context("keep the API notes");
    assert_eq!(amplifier::render(&E::PreCompact, &plain).stdout, None);
    assert!(amplifier::hook_result(&E::PreCompact, &plain).is_none());
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

/// Plain stdout and `additionalContext` reach the model under Claude Code's own labels (2.1.328,
/// observed natively): `SessionStart:startup hook success: `, `SessionStart hook additional
/// context: `. Claude Code labels the first text of amplihack's one answer by the form amplihack
/// picks, so amplihack picks the form of its first text and labels the others itself.
#[test]
fn claude_code_labels_each_context_as_natively() {
    use EventName as E;
    use amplihack_protocol::claude::Labels;
    let session = Labels {
        success: "SessionStart:startup".into(),
        additional: "SessionStart".into(),
    };
    let reply = |plain: &[&str], context: &[&str]| Reply {
        plain_context: plain.iter().map(|s| s.to_string()).collect(),
        context: context.iter().map(|s| s.to_string()).collect(),
        ..Reply::default()
    };
    let cases: Vec<(E, Reply, Option<&str>)> = vec![
        // Plain stdout alone: printed as plain stdout, which Claude Code labels itself.
        (E::SessionStart, reply(&["P1"], &[]), Some("P1")),
        (
            E::SessionStart,
            reply(&["P1", "P2"], &["C1"]),
            Some(
                "P1\n\nSessionStart:startup hook success: P2\n\nSessionStart hook additional context: C1",
            ),
        ),
        // additionalContext alone, or first: JSON.
        (E::SessionStart, reply(&[], &["C1", "C2"]), None),
        // Plain text that Claude Code would read as JSON goes out as JSON.
        (E::SessionStart, reply(&["{not json"], &[]), None),
    ];
    for (event, reply, plain) in cases {
        let rendered = claude::render_labelled(&event, &session, &reply);
        match plain {
            Some(text) => assert_eq!(rendered.stdout.as_deref(), Some(text), "{reply:?}"),
            None => {
                let json = stdout_json(rendered.stdout);
                let text = json["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let mut want: Vec<String> = reply.plain_context.clone();
                want.extend(reply.context.iter().cloned());
                assert!(text.starts_with(&want[0]), "{text}");
                for (i, t) in want.iter().enumerate().skip(1) {
                    let label = if i < reply.plain_context.len() {
                        "SessionStart:startup hook success: "
                    } else {
                        "SessionStart hook additional context: "
                    };
                    assert!(text.contains(&format!("\n\n{label}{t}")), "{text}");
                }
            }
        }
    }
    // Anything else that needs JSON (a message for the user) takes the context along in it, the
    // plain text first, as Claude Code orders it (the first text takes Claude Code's own label).
    let mut with_message = reply(&["P1"], &["C1"]);
    with_message.system_message = Some("hi".into());
    let json =
        stdout_json(claude::render_labelled(&E::SessionStart, &session, &with_message).stdout);
    assert_eq!(
        json["hookSpecificOutput"]["additionalContext"],
        "P1\n\nSessionStart hook additional context: C1"
    );
    assert_eq!(json["systemMessage"], "hi");
}

#[test]
fn labels_name_the_tool_and_the_source_as_claude_code_does() {
    use amplihack_protocol::claude::Labels;
    let cases = [
        (
            json!({"hook_event_name": "SessionStart", "source": "resume"}),
            "SessionStart:resume",
            "SessionStart",
        ),
        (
            json!({"hook_event_name": "SessionStart"}),
            "SessionStart:startup",
            "SessionStart",
        ),
        (
            json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
            "UserPromptSubmit",
            "UserPromptSubmit",
        ),
        (
            json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}),
            "PostToolUse:Bash",
            "PostToolUse:Bash",
        ),
        (json!({"hook_event_name": "Stop"}), "Stop", "Stop"),
    ];
    for (payload, success, additional) in cases {
        let event = amplihack_protocol::HookEvent::parse(payload.to_string().as_bytes(), None)
            .unwrap_or_else(|e| panic!("{payload}: {e:?}"));
        assert_eq!(
            Labels::of(&event),
            Labels {
                success: success.into(),
                additional: additional.into()
            },
            "{payload}"
        );
    }
}
