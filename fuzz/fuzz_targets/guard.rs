//! Any bytes as a Bash command: the parser and the guard must return, never panic or overflow.
//! libFuzzer's `-timeout` catches a stall; `-max_len` large inputs (the guard is linear).
#![no_main]

use amplihack_runtime::builtins::bash_guard::{GuardContext, check};
use amplihack_runtime::builtins::shell;
use libfuzzer_sys::fuzz_target;

fn var(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/u".to_string()),
        "CLAUDE_PROJECT_DIR" => Some("/home/u/work/proj".to_string()),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let command = String::from_utf8_lossy(data);
    let _ = shell::parse(&command, &var);
    let _ = shell::parse_as_written(&command);
    let ctx = GuardContext {
        cwd: "/home/u/work/proj".into(),
        project_root: "/home/u/work/proj".into(),
        home: Some("/home/u".into()),
        var: &var,
    };
    let _ = check(&command, &ctx);
});
