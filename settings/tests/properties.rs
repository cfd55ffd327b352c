//! Properties of registration over arbitrary user settings: install keeps everything of the
//! user's, is idempotent to the byte, and uninstall gives the user's settings back.

use std::path::Path;

use amplihack_settings::json_text;
use amplihack_settings::registration::{self, Host};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-zA-Z0-9 _./\\\\\"'é✓-]{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A user's hook wrapper: a matcher maybe, one to three commands that are not ours.
fn user_wrapper() -> impl Strategy<Value = Value> {
    (
        proptest::option::of("[A-Za-z*|]{1,8}"),
        prop::collection::vec("[a-z][a-z0-9 ./-]{0,20}", 1..4),
    )
        .prop_map(|(matcher, commands)| {
            let hooks: Vec<Value> = commands
                .into_iter()
                .map(|c| json!({"type": "command", "command": c}))
                .collect();
            let mut wrapper = Map::new();
            if let Some(m) = matcher {
                wrapper.insert("matcher".into(), json!(m));
            }
            wrapper.insert("hooks".into(), Value::Array(hooks));
            Value::Object(wrapper)
        })
}

const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionStart",
    "Notification",
    "UserPromptSubmit",
    "SubagentStop",
];

fn settings() -> impl Strategy<Value = Value> {
    let others = prop::collection::vec(
        (
            "[a-z]{1,8}".prop_filter("not hooks", |k| k != "hooks"),
            value(),
        ),
        0..6,
    );
    let hooks = proptest::option::of(prop::collection::vec(
        (
            prop::sample::select(EVENTS),
            prop::collection::vec(user_wrapper(), 1..3),
        ),
        1..4,
    ));
    (others, hooks, 0..7usize).prop_map(|(others, hooks, position)| {
        let mut root: Map<String, Value> = others.into_iter().collect();
        if let Some(hooks) = hooks {
            let hooks: Map<String, Value> = hooks
                .into_iter()
                .map(|(e, w)| (e.to_string(), Value::Array(w)))
                .collect();
            // Put `hooks` somewhere in the middle of the user's keys.
            let mut entries: Vec<(String, Value)> = root.into_iter().collect();
            entries.insert(
                position.min(entries.len()),
                ("hooks".into(), Value::Object(hooks)),
            );
            root = entries.into_iter().collect();
        }
        Value::Object(root)
    })
}

fn installed(value: &Value, binary: &Path) -> Value {
    let mut copy = value.clone();
    registration::install(&mut copy, binary, Host::ClaudeCode).expect("installable");
    copy
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn install_keeps_the_users_settings_and_uninstall_gives_them_back(user in settings(), pretty in any::<bool>()) {
        let binary = Path::new("/home/a user/.local/bin/amplihack-hooks");
        let original_text = if pretty { json_text::fresh(&user) } else { user.to_string() };

        let after = installed(&user, binary);
        let text = json_text::splice(&original_text, &user, &after);
        let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
        prop_assert_eq!(&parsed, &after);

        // Every top-level key of the user's, in the user's order.
        let user_keys: Vec<&String> = user.as_object().expect("object").keys().collect();
        let kept_keys: Vec<&String> = parsed.as_object().expect("object").keys().filter(|k| user_keys.contains(k)).collect();
        prop_assert_eq!(&kept_keys, &user_keys);

        // Idempotent, to the byte.
        let again = installed(&parsed, binary);
        prop_assert_eq!(&json_text::splice(&text, &parsed, &again), &text);

        // Exactly one set of ours.
        prop_assert_eq!(registration::find_ours(&parsed).len(), registration::canonical(Host::ClaudeCode).len());

        // Uninstall restores the user's value (plus an empty `hooks` if there was none).
        let mut removed = parsed.clone();
        registration::uninstall(&mut removed).expect("uninstall");
        let mut expected = user.clone();
        expected.as_object_mut().expect("object").entry("hooks").or_insert(json!({}));
        prop_assert_eq!(&removed, &expected);
    }
}

/// `text` (pretty-printed JSON) with comments added: a `// ...` after some lines that end in a
/// `,`, `{` or `[`, a `/* ... */` line before some others. `marks` picks which.
fn commented(text: &str, marks: &[bool]) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mark = marks.get(i % marks.len().max(1)).copied().unwrap_or(false);
        if i > 0 && mark && i % 3 == 0 {
            out.push_str(&format!("  /* note {i}: \"hooks\" {{ */\n"));
        }
        out.push_str(line);
        if mark && (line.ends_with(',') || line.ends_with('{') || line.ends_with('[')) {
            out.push_str(&format!(" // line {i}, é"));
        }
        out.push('\n');
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A JSONC file (Gemini's, Qwen's): install keeps every comment where it was, and
    /// uninstall gives the text back byte for byte.
    #[test]
    fn jsonc_install_and_uninstall_keep_every_comment(user in settings(), marks in prop::collection::vec(any::<bool>(), 1..8)) {
        let binary = Path::new("/home/a user/.local/bin/amplihack-hooks");
        let original_text = commented(&json_text::fresh(&user), &marks);
        let read = |text: &str| -> Value {
            serde_json::from_str(&json_text::blank_jsonc(text)).expect("valid JSONC")
        };
        prop_assert_eq!(&read(&original_text), &user);

        let mut after = user.clone();
        registration::install(&mut after, binary, Host::Gemini).expect("installable");
        let text = json_text::splice(&original_text, &user, &after);
        prop_assert_eq!(&read(&text), &after);
        for comment in ["// line", "/* note"] {
            prop_assert_eq!(text.matches(comment).count(), original_text.matches(comment).count(), "{}", text);
        }

        // Uninstall: amplihack's entries out, and the `hooks` key if install added it.
        let mut removed = after.clone();
        registration::uninstall(&mut removed).expect("uninstall");
        if user.get("hooks").is_none() {
            removed.as_object_mut().expect("object").remove("hooks");
        }
        prop_assert_eq!(&removed, &user);
        prop_assert_eq!(&json_text::splice(&text, &after, &removed), &original_text);
    }
}
