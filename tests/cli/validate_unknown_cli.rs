//! `amplihack hooks validate` warns, with the line and the field, about fields no reader of the
//! file's dialect knows; Claude Code fields any supported version knows are not flagged.

use crate::support;

use support::{TestEnv, stdout};

#[test]
fn unknown_fields_are_warned_with_line_and_field() {
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    env.write(
        &hooks.join("guard/hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - type: matcher\n      match: {tool: Bash, args: {command: \"rm *\"}}\n      action: block\n      mesage: \"no rm -rf here\"\n",
    );
    env.write(
        &hooks.join("fmt/hooks.json"),
        r#"{
  "description": "format on save",
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit", "hooks": [
        {"type": "command", "command": "fmt.sh", "onFailure": "block", "statusMessage": "formatting", "asyncRewake": false, "holdsTools": false},
        {"type": "command", "command": "lint.sh", "timout": 5}
      ]}
    ]
  }
}"#,
    );
    let output = env.run_amplihack(&["hooks", "validate"]);
    assert!(output.status.success(), "warnings are not errors");
    let home = env.home.display().to_string();
    let lines: Vec<String> = stdout(&output)
        .lines()
        .map(|l| l.replace(&home, "~"))
        .collect();
    insta::assert_snapshot!("validate_unknown_fields", lines.join("\n"));
}
