//! Parsing: the captured Claude Code payloads, every accepted alias, Amplifier's bridge payloads,
//! and every kind of invalid input.

use std::path::PathBuf;

use amplihack_protocol::{EventName, HookEvent, InvalidInput, Payload};
use serde_json::{Value, json};

fn fixtures(version: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(version);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let stem = path
                .file_stem()
                .expect("stem")
                .to_string_lossy()
                .into_owned();
            (stem, std::fs::read(&path).expect("read fixture"))
        })
        .collect()
}

fn parse(value: Value, implied: Option<EventName>) -> Result<HookEvent, InvalidInput> {
    HookEvent::parse(value.to_string().as_bytes(), implied)
}

#[test]
fn every_captured_payload_parses_as_its_event_and_keeps_every_field() {
    for (version, at_least) in [
        ("claude-code-2.1.328", 9),
        ("claude-code-2.0.30", 9),
        ("claude-code-2.1.332", 3),
    ] {
        let files = fixtures(version);
        assert!(files.len() >= at_least, "{version}: fixtures missing");
        for (stem, bytes) in files {
            let event =
                HookEvent::parse(&bytes, None).unwrap_or_else(|e| panic!("{version}/{stem}: {e}"));
            let expected_name = stem.split('-').next().expect("event part of the name");
            assert_eq!(event.name.as_str(), expected_name, "{version}/{stem}");
            assert!(event.name.is_known(), "{version}/{stem}");
            let original: Value = serde_json::from_slice(&bytes).expect("fixture is JSON");
            assert_eq!(
                Value::Object(event.raw.clone()),
                original,
                "{version}/{stem}: raw payload must be kept whole"
            );
            let key_order: Vec<_> = original.as_object().expect("object").keys().collect();
            assert_eq!(
                event.raw.keys().collect::<Vec<_>>(),
                key_order,
                "{version}/{stem}: key order"
            );
            assert!(event.session_id.is_some(), "{version}/{stem}: session_id");
        }
    }
}

#[test]
fn captured_payloads_expose_the_typed_fields() {
    let by_name: std::collections::HashMap<_, _> =
        fixtures("claude-code-2.1.328").into_iter().collect();
    let parsed = |stem: &str| HookEvent::parse(&by_name[stem], None).expect("parses");

    let pre = parsed("PreToolUse-Bash");
    let call = pre.tool().expect("tool call");
    assert_eq!(call.name, "Bash");
    assert!(call.bash_command().is_some());
    assert!(call.use_id.is_some());
    assert_eq!(pre.matcher_target().as_deref(), Some("Bash"));

    assert!(
        matches!(parsed("PostToolUse-Write").payload, Payload::ToolResult { ref response, .. } if response["type"] == "create")
    );
    assert!(
        matches!(parsed("PostToolUseFailure-Bash").payload, Payload::ToolFailure { ref error, .. } if error == "Exit code 3")
    );
    assert!(
        matches!(parsed("PostToolBatch").payload, Payload::ToolBatch { ref calls } if calls.len() == 1 && calls[0].name == "Write")
    );
    assert!(
        matches!(parsed("UserPromptSubmit").payload, Payload::Prompt { ref prompt } if !prompt.is_empty())
    );
    assert!(matches!(
        parsed("Stop").payload,
        Payload::Stop {
            stop_hook_active: false,
            ..
        }
    ));
    assert!(matches!(
        parsed("Stop-after-block").payload,
        Payload::Stop {
            stop_hook_active: true,
            ..
        }
    ));
    assert!(
        matches!(parsed("SessionStart").payload, Payload::SessionStart { ref source } if source == "startup")
    );
    assert_eq!(
        parsed("SessionStart").matcher_target().as_deref(),
        Some("startup")
    );
    assert!(
        matches!(parsed("SessionEnd").payload, Payload::SessionEnd { reason: Some(ref r) } if r == "other")
    );
}

/// Claude Code 2.1.332's newer events: what their matchers are tested against (`to_model` with
/// `[1m]` dropped; the shell tool).
#[test]
fn newer_events_match_as_claude_code_matches_them() {
    let by_name: std::collections::HashMap<_, _> =
        fixtures("claude-code-2.1.332").into_iter().collect();
    let parsed = |stem: &str| HookEvent::parse(&by_name[stem], None).expect("parses");
    assert_eq!(
        parsed("PreModelSwitch").matcher_target().as_deref(),
        Some("claude-haiku-5-5")
    );
    assert_eq!(
        parsed("PostModelSwitch").matcher_target().as_deref(),
        Some("claude-haiku-5-5")
    );
    assert_eq!(
        parsed("PreSkillShellCommand").matcher_target().as_deref(),
        Some("Bash")
    );
    for (to_model, target) in [
        ("claude-opus-5-5[1m]", "claude-opus-5-5"),
        ("sonnet", "sonnet"),
        ("x[1m]y", "x[1m]y"),
    ] {
        let event = parse(
            json!({"hook_event_name": "PreModelSwitch", "to_model": to_model}),
            None,
        )
        .expect("parses");
        assert_eq!(
            event.matcher_target().as_deref(),
            Some(target),
            "{to_model}"
        );
    }
}

#[test]
fn camel_case_aliases_mean_the_same_as_snake_case() {
    let cases = [
        (
            json!({"hook_event_name":"PreToolUse","session_id":"s","transcript_path":"/t","tool_name":"Bash","tool_input":{"command":"ls"}}),
            json!({"hookEventName":"PreToolUse","sessionId":"s","transcriptPath":"/t","toolName":"Bash","toolInput":{"command":"ls"}}),
        ),
        (
            json!({"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{},"tool_response":{"ok":1}}),
            json!({"hookEventName":"PostToolUse","toolName":"Write","toolInput":{},"toolResult":{"ok":1}}),
        ),
        (
            json!({"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{},"tool_response":{"ok":1}}),
            json!({"hook_event_name":"PostToolUse","tool_name":"write_file","tool_input":{},"tool_result":{"ok":1}}),
        ),
        (
            json!({"hook_event_name":"Stop","stop_hook_active":true}),
            json!({"hookEventName":"Stop","stopHookActive":true}),
        ),
        (
            json!({"hook_event_name":"UserPromptSubmit","prompt":"hi"}),
            json!({"hookEventName":"UserPromptSubmit","userPrompt":"hi"}),
        ),
        (
            json!({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}),
            json!({"hook_event_name":"PreToolUse","tool_name":"bash","tool_input":{"command":"ls"}}),
        ),
        (
            json!({"hook_event_name":"SessionStart","source":"resume"}),
            json!({"hook_event_name":"SessionStart","trigger":"resume"}),
        ),
    ];
    for (canonical, alias) in cases {
        let a = parse(canonical.clone(), None).unwrap_or_else(|e| panic!("{canonical}: {e}"));
        let b = parse(alias.clone(), None).unwrap_or_else(|e| panic!("{alias}: {e}"));
        assert_eq!(a.name, b.name, "{alias}");
        assert_eq!(a.payload, b.payload, "{alias}");
        assert_eq!(a.session_id, b.session_id, "{alias}");
        assert_eq!(a.transcript_path, b.transcript_path, "{alias}");
    }
}

/// What Amplifier's bridge really writes to a hook's stdin (reference §1.1): no event name, so the
/// event comes from the subcommand.
#[test]
fn amplifier_bridge_payloads_parse_with_the_implied_event() {
    let cases = [
        (
            EventName::SessionStart,
            json!({"session_id": "S", "trigger": "startup", "timestamp": "t"}),
        ),
        (
            EventName::UserPromptSubmit,
            json!({"prompt": "please list files", "timestamp": "t"}),
        ),
        (
            EventName::PreToolUse,
            json!({"tool_name": "", "tool_input": {}, "timestamp": "t"}),
        ),
        (
            EventName::PreToolUse,
            json!({"tool_name": "bash", "tool_input": {"command": "ls"}, "timestamp": "t"}),
        ),
        (
            EventName::PostToolUse,
            json!({"tool_name": "", "tool_input": {}, "tool_result": {"output": {"returncode": 0}, "success": true}, "timestamp": "t"}),
        ),
        (
            EventName::SessionEnd,
            json!({"session_id": "S", "timestamp": "t"}),
        ),
        (
            EventName::Stop,
            json!({"length": 4, "parent_id": null, "response_preview": "done", "session_id": "S", "timestamp": "t"}),
        ),
        (
            EventName::PreCompact,
            json!({"parent_id": null, "session_id": "S", "timestamp": "t", "trigger": "auto"}),
        ),
        (
            EventName::Notification,
            json!({"message": "hi", "parent_id": null, "session_id": "S", "timestamp": "t", "type": "idle_prompt"}),
        ),
    ];
    for (implied, payload) in cases {
        let event = parse(payload.clone(), Some(implied.clone()))
            .unwrap_or_else(|e| panic!("{payload}: {e}"));
        assert_eq!(event.name, implied, "{payload}");
    }
    let bash = parse(
        json!({"tool_name": "bash", "tool_input": {"command": "ls"}}),
        Some(EventName::PreToolUse),
    )
    .expect("parses");
    assert_eq!(bash.tool().map(|t| t.name.as_str()), Some("Bash"));
}

#[test]
fn the_payloads_event_wins_over_the_subcommands() {
    let event = parse(
        json!({"hook_event_name":"SubagentStop","stop_hook_active":false}),
        Some(EventName::Stop),
    )
    .expect("parses");
    assert_eq!(event.name, EventName::SubagentStop);
}

#[test]
fn unknown_events_pass_through_and_spelling_drift_is_tolerated() {
    let unknown = parse(
        json!({"hook_event_name":"TimeTravel","when":"yesterday"}),
        None,
    )
    .expect("parses");
    assert_eq!(unknown.name, EventName::Unknown("TimeTravel".into()));
    assert_eq!(unknown.payload, Payload::Other);
    for spelling in ["PreToolUse", "preToolUse", "pre_tool_use", "pre-tool-use"] {
        let event = parse(
            json!({"hook_event_name": spelling, "tool_name":"Bash","tool_input":{}}),
            None,
        )
        .expect("parses");
        assert_eq!(event.name, EventName::PreToolUse, "{spelling}");
    }
}

#[test]
fn invalid_input_is_never_mistaken_for_an_unknown_event() {
    let cases: Vec<(&[u8], Option<EventName>, &str)> = vec![
        (b"", Some(EventName::PreToolUse), "stdin is empty"),
        (b"  \n", Some(EventName::PreToolUse), "stdin is empty"),
        (b"\xff\xfe{}", Some(EventName::PreToolUse), "not UTF-8"),
        (
            b"{\"tool_name\": ",
            Some(EventName::PreToolUse),
            "not valid JSON at line 1, column",
        ),
        (
            b"{\n  \"a\": 1,\n}",
            Some(EventName::PreToolUse),
            "line 3, column 1",
        ),
        (b"[1,2]", Some(EventName::PreToolUse), "JSON an array"),
        (b"\"text\"", Some(EventName::Stop), "JSON a string"),
        (
            b"{\"tool_name\":\"Bash\"}",
            Some(EventName::PreToolUse),
            "PreToolUse event is missing the required field `tool_input`",
        ),
        (
            b"{\"tool_input\":{}}",
            Some(EventName::PreToolUse),
            "missing the required field `tool_name`",
        ),
        (
            b"{\"hook_event_name\":\"PreToolUse\",\"tool_input\":{}}",
            None,
            "missing the required field `tool_name`",
        ),
        (
            b"{\"tool_name\":\"Bash\",\"tool_input\":\"ls\"}",
            Some(EventName::PreToolUse),
            "`tool_input` must be an object, found a string",
        ),
        (
            b"{\"tool_name\":7,\"tool_input\":{}}",
            Some(EventName::PreToolUse),
            "`tool_name` must be a string, found a number",
        ),
        (
            b"{\"stop_hook_active\":\"yes\"}",
            Some(EventName::Stop),
            "`stop_hook_active` must be a boolean",
        ),
        (
            b"{}",
            Some(EventName::Notification),
            "missing the required field `message`",
        ),
        (
            b"{\"tool_calls\":{}}",
            Some(EventName::PostToolBatch),
            "`tool_calls` must be an array",
        ),
        (
            b"{\"tool_calls\":[1]}",
            Some(EventName::PostToolBatch),
            "`tool_calls[0]` must be an object",
        ),
        (
            b"{\"session_id\":5,\"prompt\":\"x\"}",
            Some(EventName::UserPromptSubmit),
            "`session_id` must be a string",
        ),
        (
            b"{\"hook_event_name\":3}",
            None,
            "`hook_event_name` must be a string",
        ),
        (b"{\"prompt\":\"x\"}", None, "no `hook_event_name`"),
        (
            b"{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\"}",
            None,
            "PostToolUse event is missing the required field `tool_input`",
        ),
        (
            b"{\"hook_event_name\":\"UserPromptExpansion\"}",
            None,
            "missing the required field `prompt`",
        ),
    ];
    for (bytes, implied, expected) in cases {
        let shown = String::from_utf8_lossy(bytes);
        match HookEvent::parse(bytes, implied) {
            Ok(event) => panic!("{shown}: accepted as {:?}", event.name),
            Err(problem) => assert!(
                problem.to_string().contains(expected),
                "{shown}: {problem} (wanted `{expected}`)"
            ),
        }
    }
}

/// amplihack's hook specification, "Hook Input JSON Contract":
/// the required and optional fields per event, with `SessionStop` the end of a session.
#[test]
fn the_specified_contract_requires_only_what_it_lists() {
    let cases = [
        (
            json!({"hook_event_name":"SessionStart"}),
            EventName::SessionStart,
            Payload::SessionStart {
                source: "startup".into(),
            },
        ),
        (
            json!({"hook_event_name":"UserPromptSubmit"}),
            EventName::UserPromptSubmit,
            Payload::Prompt {
                prompt: String::new(),
            },
        ),
        (
            json!({"hook_event_name":"UserPromptSubmit","user_prompt":"hi"}),
            EventName::UserPromptSubmit,
            Payload::Prompt {
                prompt: "hi".into(),
            },
        ),
        (
            json!({"hook_event_name":"Stop"}),
            EventName::Stop,
            Payload::Stop {
                stop_hook_active: false,
                last_assistant_message: None,
            },
        ),
        (
            json!({"hook_event_name":"PreCompact"}),
            EventName::PreCompact,
            Payload::Compact { trigger: None },
        ),
        (
            json!({"hook_event_name":"SessionStop"}),
            EventName::SessionEnd,
            Payload::SessionEnd { reason: None },
        ),
        (
            json!({"hookEventName":"SessionStop","transcriptPath":"/t"}),
            EventName::SessionEnd,
            Payload::SessionEnd { reason: None },
        ),
        (
            json!({"hook_event_name":"session_stop"}),
            EventName::SessionEnd,
            Payload::SessionEnd { reason: None },
        ),
        (
            json!({"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}),
            EventName::PostToolUse,
            Payload::ToolResult {
                call: amplihack_protocol::ToolCall {
                    name: "Bash".into(),
                    input: json!({"command":"ls"}),
                    use_id: None,
                },
                response: serde_json::Value::Null,
            },
        ),
    ];
    for (payload, name, want) in cases {
        let event = parse(payload.clone(), None).unwrap_or_else(|e| panic!("{payload}: {e}"));
        assert_eq!(event.name, name, "{payload}");
        assert_eq!(event.payload, want, "{payload}");
    }
    // The optional fields, when present, are read.
    let stop = parse(
        json!({"hook_event_name":"SessionStop","session_id":"s","transcript_path":"/t"}),
        None,
    )
    .expect("parse");
    assert_eq!(
        (stop.session_id.as_deref(), stop.transcript_path.as_deref()),
        (Some("s"), Some("/t"))
    );
    // A future event with a valid discriminator is Unknown, untouched.
    let future = parse(
        json!({"hook_event_name":"FutureEvent","payload":{"anything":true}}),
        None,
    )
    .expect("parse");
    assert_eq!(future.name, EventName::Unknown("FutureEvent".into()));
}

/// The newest Claude Code amplihack claims to be tested with is the one the tests pin.
#[test]
fn the_newest_tested_claude_code_is_the_pinned_one() {
    let package =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/claude-code/package.json");
    let text = std::fs::read_to_string(&package).expect("package.json");
    let pinned: Value = serde_json::from_str(&text).expect("json");
    let version = pinned["dependencies"]["@anthropic-ai/claude-code"]
        .as_str()
        .expect("a pinned version");
    let (major, minor, patch) = amplihack_protocol::event::NEWEST_TESTED_CLAUDE_CODE;
    assert_eq!(version, format!("{major}.{minor}.{patch}"));
}
