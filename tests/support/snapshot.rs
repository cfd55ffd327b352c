//! The one set of filters every snapshot of what people read goes through: the test's own paths
//! (`[HOME]`, `[PROJECT]`, `[ROOT]`), backup timestamps, log times and run times. Nothing else is
//! filtered: a change in any other part of these outputs shows in review.

use std::process::Output;

use super::{TestEnv, stderr, stdout};

/// The output with the test's own paths and the backup files' timestamps made stable.
pub fn stable(env: &TestEnv, text: &str) -> String {
    let text = text
        .replace(&env.project.display().to_string(), "[PROJECT]")
        .replace(&env.home.display().to_string(), "[HOME]")
        .replace(&env.root().display().to_string(), "[ROOT]");
    let marker = "amplihack-backup-";
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(marker) {
        let after = &rest[at + marker.len()..];
        let stamp = after
            .find(|c: char| !(c.is_ascii_digit() || c == 'T' || c == '.' || c == 'Z'))
            .unwrap_or(after.len());
        out.push_str(&rest[..at + marker.len()]);
        out.push_str("[TIME]");
        rest = &after[stamp..];
    }
    out.push_str(rest);
    // The failure log's lines start with their time.
    out.lines()
        .map(|line| match line.split_once(" amplihack-hooks ") {
            Some((time, tail)) if time.starts_with("20") => {
                format!("[TIME] amplihack-hooks {tail}")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `exit 0 in 8 ms` becomes `exit 0 in [T] ms`: run times vary.
pub fn without_run_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" in ") {
        let after = &rest[at + 4..];
        let digits = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        out.push_str(&rest[..at + 4]);
        if digits > 0 && after[digits..].starts_with(" ms") {
            out.push_str("[T]");
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A command's exit code, stdout and stderr, as a snapshot shows them.
pub fn both(output: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        output.status.code().unwrap_or(-1),
        stdout(output),
        stderr(output)
    )
}

/// `$ amplihack ARGS` and what it printed, filtered ([`stable`]).
pub fn shown(env: &TestEnv, args: &[&str], output: &Output) -> String {
    stable(
        env,
        &format!("$ amplihack {}\n{}", args.join(" "), both(output)),
    )
}

/// A `--json` output for a snapshot: pretty, the test's paths made stable ([`stable`]), and what
/// varies from run to run replaced: the version (`"version"`), and the time of each host's last
/// call (`"last_call"."at"`).
pub fn stable_json(env: &TestEnv, value: &serde_json::Value) -> String {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    match key.as_str() {
                        "version" if inner.is_string() => *inner = "[VERSION]".into(),
                        "last_call" => {
                            if let Some(at) = inner.get_mut("at") {
                                *at = "[TIME]".into();
                            }
                        }
                        _ => walk(inner),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut value = value.clone();
    walk(&mut value);
    stable(
        env,
        &serde_json::to_string_pretty(&value).unwrap_or_default(),
    )
}
