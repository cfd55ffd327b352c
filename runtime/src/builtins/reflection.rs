//! Stop, opt-in: once per session, a headless Claude (`claude -p`) reflects on the session.
//!
//! The opt-in is the user's alone: `AMPLIHACK_ENABLE_REFLECTION=1`, or `{"enabled": true}` in
//! `~/.amplihack/.claude/tools/amplihack/.reflection_config` (where amplihack's framework keeps
//! the user's files, as for the preferences). A file in the project never switches it on: it
//! spends the user's model access, and a repository can commit the predecessor's
//! `.claude/tools/amplihack/.reflection_config`. Off whatever those say under
//! `AMPLIHACK_SKIP_REFLECTION`, in reflection's own child session, when lock mode already
//! blocked this stop, and under Amplifier (the hook table does not run it there: nothing a Stop
//! hook answers reaches the user).
//!
//! It runs `claude -p --tools "" --no-session-persistence --settings '{"disableAllHooks": true}'`
//! (`AMPLIHACK_CLAUDE_BIN`, else `claude` on PATH) in a private directory of amplihack's state,
//! never in the project (so none of the project's Claude Code settings, hooks or CLAUDE.md
//! apply), on a bounded digest of the transcript, with a timeout inside the Stop deadline
//! (`AMPLIHACK_REFLECTION_TIMEOUT_SECS`, default 90 s). The child gets [`CHILD_MARKER`] and
//! `AMPLIHACK_SKIP_REFLECTION`, so its own hooks (were any on) never reflect, remind or lock
//! again. The findings go to `.claude/runtime/reflection/<session>/findings.md` (written without
//! following a link); that one stop is blocked with a short summary and the path. It is tried
//! once per session; any failure lets the stop through and is reported (stderr and the failure
//! log).

use std::io::{BufRead, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use amplihack_protocol::{Decision, EventName, Reply};
use amplihack_state::{bounded, files, project, session, session_key};
use serde_json::Value;

use super::{BuiltinError, Result, preferences, read_capped};
use crate::pipeline::Call;

/// Set in the reflection child's environment.
pub const CHILD_MARKER: &str = amplihack_env::AMPLIHACK_REFLECTION_CHILD;
/// The user's opt-in file, under `~/.amplihack` (see the module).
pub const CONFIG: &str = ".claude/tools/amplihack/.reflection_config";
/// Bytes of the opt-in file read, at most.
const CONFIG_MAX: u64 = 4 * 1024;
/// What the child gets as `--settings`: no hooks of any level run in it.
pub const CHILD_SETTINGS: &str = r#"{"disableAllHooks": true}"#;
pub const OUTPUT_DIR: &str = ".claude/runtime/reflection";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);
/// Characters of transcript the child reads at most.
pub const DIGEST_MAX: usize = 6_000;
const PER_MESSAGE: usize = 500;
/// Characters of findings put in the block reason; the rest is in the file.
const SUMMARY_MAX: usize = 1_200;

/// Whether the user opted in (see the module): the environment, else the user's config file.
pub fn enabled(var: &dyn Fn(&str) -> Option<String>) -> bool {
    if var(amplihack_env::AMPLIHACK_SKIP_REFLECTION).is_some() || var(CHILD_MARKER).is_some() {
        return false;
    }
    if var(amplihack_env::AMPLIHACK_ENABLE_REFLECTION)
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
    {
        return true;
    }
    let Some(home) = var("HOME") else {
        return false;
    };
    bounded::read_bounded(&user_config(Path::new(&home)), CONFIG_MAX)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<Value>(&b.bytes).ok())
        .is_some_and(|v| v["enabled"] == Value::Bool(true))
}

/// The user's opt-in file.
pub fn user_config(home: &Path) -> PathBuf {
    home.join(".amplihack").join(CONFIG)
}

pub fn run(call: &Call<'_>, so_far: &Reply) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    if event.name != EventName::Stop || so_far.decision == Some(Decision::Deny) {
        return Ok(Reply::default());
    }
    if !enabled(&|name| ctx.var(name)) {
        return Ok(Reply::default());
    }
    let root = ctx.project_root(event);
    let state = ctx.state().ok_or(BuiltinError::NoStateDir)?;
    let session_id = event.session_id.as_deref();
    let first = session::update(&state, session_id, |s| {
        !std::mem::replace(&mut s.reflected, true)
    })?;
    if !first {
        return Ok(Reply::default());
    }
    let digest = event
        .transcript_path
        .as_deref()
        .map(|p| digest(Path::new(p)))
        .unwrap_or_default();
    let mut prompt = String::from(PROMPT);
    if let Some(prefs) =
        preferences::locate(ctx, &root).and_then(|p| read_capped(&p, 1_500).ok().flatten())
    {
        prompt.push_str(
            "\n\n## The user's preferences (do not criticise behaviour that follows them)\n",
        );
        prompt.push_str(&prefs.text);
    }
    prompt.push_str("\n\n## The session\n");
    prompt.push_str(if digest.is_empty() {
        "(no transcript was available)"
    } else {
        &digest
    });

    let timeout = ctx
        .var(amplihack_env::AMPLIHACK_REFLECTION_TIMEOUT_SECS)
        .and_then(|v| v.parse().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
        .min(call.time_left().saturating_sub(Duration::from_secs(1)));
    let program = ctx
        .var(amplihack_env::AMPLIHACK_CLAUDE_BIN)
        .unwrap_or_else(|| "claude".into());
    // A directory of amplihack's own, never the project: no project settings, hooks or
    // CLAUDE.md reach the child.
    let side = state.dir("reflection");
    files::private_dir(&side)?;
    let findings = run_claude(&program, &prompt, &side, timeout, &|n| ctx.var(n))?;

    let dir = project::writable(&root, &Path::new(OUTPUT_DIR).join(session_key(session_id)))?;
    let path = dir.path().join("findings.md");
    dir.replace("findings.md", findings.as_bytes())?;
    session::update(&state, session_id, |s| {
        s.reflection = Some(path.to_string_lossy().into_owned());
    })?;
    let summary = super::cap(findings.trim(), SUMMARY_MAX, &path).text;
    Ok(Reply::deny(format!(
        "amplihack reflected on this session. Findings (all of them: {}):\n\n{summary}\n\nShow the user these findings in a few lines, then stop.",
        path.display()
    )))
}

const PROMPT: &str = "You are reviewing a finished session between a user and an AI coding agent. Write brief findings in Markdown with exactly these sections:
## Summary
(two or three sentences: what was asked, what was done)
## What went well
## What to improve
(label each item [AMPLIHACK] for the agent's tooling and workflow, or [PROJECT] for the project itself)
## Suggested follow-ups
Be concrete and short; no preamble.";

/// Runs the headless Claude with `prompt` on stdin; its stdout, or why it failed.
fn run_claude(
    program: &str,
    prompt: &str,
    cwd: &Path,
    timeout: Duration,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<String> {
    let mut command = Command::new(program);
    command
        .args([
            "-p",
            "--output-format",
            "text",
            "--tools",
            "",
            "--no-session-persistence",
            "--settings",
            CHILD_SETTINGS,
        ])
        .current_dir(cwd)
        .env(CHILD_MARKER, "1")
        .env(amplihack_env::AMPLIHACK_SKIP_REFLECTION, "1");
    // Nothing tells the child where the project is; a nested Claude Code refuses to start
    // inside another's session unless told it is not one.
    for name in [
        amplihack_env::CLAUDECODE,
        amplihack_env::CLAUDE_PID,
        amplihack_env::CLAUDE_CODE_SSE_PORT,
        amplihack_env::CLAUDE_PROJECT_DIR,
        amplihack_env::AMPLIFIER_PROJECT_DIR,
    ] {
        command.env_remove(name);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(depth) =
        var(amplihack_env::AMPLIHACK_SESSION_DEPTH).and_then(|d| d.parse::<u32>().ok())
    {
        command.env(
            amplihack_env::AMPLIHACK_SESSION_DEPTH,
            (depth + 1).to_string(),
        );
    } else {
        command.env(amplihack_env::AMPLIHACK_SESSION_DEPTH, "1");
    }
    let mut child = command.spawn().map_err(|e| {
        BuiltinError::Other(format!(
            "reflection could not start `{program}`: {e} (set AMPLIHACK_CLAUDE_BIN to the Claude CLI)"
        ))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = prompt.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(prompt.as_bytes());
        });
    }
    let reader = drain(child.stdout.take(), 1024 * 1024);
    let errors = drain(child.stderr.take(), 4_000);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                // The child leads a process group of its own.
                amplihack_platform::process::kill_group(child.id());
                let _ = child.wait();
                return Err(BuiltinError::Other(format!(
                    "reflection's `{program} -p` gave no answer within {} s; the stop went through",
                    timeout.as_secs()
                )));
            }
        }
    };
    let out = reader.join().unwrap_or_default();
    if !status.success() || out.trim().is_empty() {
        let err = errors.join().unwrap_or_default();
        return Err(BuiltinError::Other(format!(
            "reflection's `{program} -p` failed ({status}): {}",
            err.lines().next().unwrap_or("no output")
        )));
    }
    Ok(out)
}

/// Reads a pipe to its end on a thread (keeping at most `cap` bytes), so a chatty child never
/// blocks on a full pipe.
fn drain(pipe: Option<impl Read + Send + 'static>, cap: u64) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.by_ref().take(cap).read_to_end(&mut out);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        }
        String::from_utf8_lossy(&out).into_owned()
    })
}

/// A bounded digest of a Claude Code transcript (JSONL): the first user prompt, then as many of
/// the latest messages as fit in [`DIGEST_MAX`] characters, each cut at 500.
pub fn digest(path: &Path) -> String {
    let Ok(Some(file)) = bounded::open_if_regular(path) else {
        return String::new();
    };
    let mut messages: Vec<(String, String)> = Vec::new();
    for line in std::io::BufReader::new(file.take(32 * 1024 * 1024)).lines() {
        let Ok(line) = line else { break };
        let Ok(entry) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let role = entry["type"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            continue;
        }
        let text = message_text(&entry["message"]["content"]);
        if text.trim().is_empty() {
            continue;
        }
        let mut short: String = text.trim().chars().take(PER_MESSAGE).collect();
        if text.trim().chars().count() > PER_MESSAGE {
            short.push('…');
        }
        messages.push((role.to_string(), short));
    }
    let Some(first) = messages.iter().position(|(r, _)| r == "user") else {
        return String::new();
    };
    let head = format!("user: {}\n", messages[first].1);
    let mut tail: Vec<String> = Vec::new();
    let mut used = head.chars().count();
    for (role, text) in messages.iter().skip(first + 1).rev() {
        let line = format!("{role}: {text}\n");
        if used + line.chars().count() > DIGEST_MAX {
            break;
        }
        used += line.chars().count();
        tail.push(line);
    }
    let skipped = messages.len() - first - 1 - tail.len();
    let mut out = head;
    if skipped > 0 {
        out.push_str(&format!("[… {skipped} messages left out …]\n"));
    }
    out.extend(tail.into_iter().rev());
    out
}

fn message_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_keeps_the_first_prompt_and_the_latest_messages_within_the_cap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let mut text = String::new();
        text.push_str(&serde_json::json!({"type": "user", "message": {"role": "user", "content": "build the parser"}}).to_string());
        text.push('\n');
        for i in 0..100 {
            text.push_str(&serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": format!("step {i} {}", "x".repeat(300))}, {"type": "tool_use", "name": "Bash"}]}}).to_string());
            text.push('\n');
        }
        text.push_str("not json\n");
        std::fs::write(&path, text).expect("write");
        let d = digest(&path);
        assert!(d.starts_with("user: build the parser\n"), "{d}");
        assert!(d.contains("step 99"), "latest kept");
        assert!(!d.contains("step 0 "), "oldest dropped");
        assert!(d.contains("messages left out"));
        assert!(
            d.chars().count() <= DIGEST_MAX + 100,
            "{}",
            d.chars().count()
        );
    }

    #[test]
    fn opt_in_and_switches() {
        let home = tempfile::tempdir().expect("tempdir");
        let h = home.path().to_string_lossy().into_owned();
        let with = |pairs: Vec<(&'static str, String)>| {
            move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())
        };
        assert!(!enabled(&with(vec![("HOME", h.clone())])));
        assert!(enabled(&with(vec![
            ("HOME", h.clone()),
            (amplihack_env::AMPLIHACK_ENABLE_REFLECTION, "1".into())
        ])));
        // The user's own file switches it on.
        let config = user_config(home.path());
        std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir");
        std::fs::write(&config, r#"{"enabled": true}"#).expect("write");
        assert!(enabled(&with(vec![("HOME", h.clone())])));
        let child = with(vec![("HOME", h.clone()), (CHILD_MARKER, "1".into())]);
        assert!(!enabled(&child));
        let skip = with(vec![
            ("HOME", h.clone()),
            (amplihack_env::AMPLIHACK_SKIP_REFLECTION, "1".into()),
        ]);
        assert!(!enabled(&skip));
        // A link to a device is refused, not read.
        std::fs::remove_file(&config).expect("rm");
        std::os::unix::fs::symlink("/dev/zero", &config).expect("link");
        assert!(!enabled(&with(vec![("HOME", h)])));
    }

    /// A project's own config file (a repository can commit it) switches nothing on.
    #[test]
    fn the_projects_config_file_is_not_an_opt_in() {
        let home = tempfile::tempdir().expect("tempdir");
        let project = home.path().join("repo");
        std::fs::create_dir_all(project.join(".claude/tools/amplihack")).expect("mkdir");
        std::fs::write(project.join(CONFIG), r#"{"enabled": true}"#).expect("write");
        let h = home.path().to_string_lossy().into_owned();
        assert!(!enabled(&move |n: &str| (n == "HOME").then(|| h.clone())));
    }
}
