//! Model-backed handlers answered with the model access the user already has, never a key of
//! amplihack's, and no HTTP in this binary:
//!
//! * under Amplifier, amplihack's module puts the question to the session's own provider (the
//!   binary hands it over as `modelHandlers`, see [`crate::forward`]);
//! * under Claude Code (and `amplihack hooks test`), `amplihack-hooks --ask-model SPEC` runs the
//!   Claude Code that called it, `claude -p`, with hooks off: Claude Code's own login (OAuth,
//!   keychain, `apiKeyHelper` or key) answers. Which Claude Code: `$AMPLIHACK_CLAUDE` when set; the
//!   one whose pid Claude Code gives its hooks (`CLAUDE_PID`); else the nearest ancestor process
//!   that is Claude Code (older versions); else `claude` on PATH.
//!
//! Both read the model's verdict the same way ([`verdict`]): `{"safe": false}` (the proposal's),
//! `{"ok": false}` (Claude Code's `prompt`) or `{"decision": "block"|"deny"}` refuses, with its
//! `reason`. With `cache`, an identical request (model, max_tokens, prompt) is answered from a
//! cache kept for the session in the plugin's data directory (0600).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use amplihack_protocol::claude_version::{self, Version};
use serde_json::{Map, Value, json};

use crate::handlers::llm::Llm;

pub use crate::handlers::llm::ASK_FLAG;
/// Names the Claude Code program to ask, overriding the search.
pub const CLAUDE_VAR: &str = amplihack_env::AMPLIHACK_CLAUDE;
/// Flags Claude Code has had since 2.1 that keep a side question out of the user's history.
const QUIET_SINCE: Version = (2, 1, 0);

/// How long `claude --version` may take to answer.
const VERSION_WAIT: Duration = Duration::from_secs(30);

/// `amplihack-hooks --ask-model SPEC`: the proposal's event on stdin, its answer
/// (`{"action": "allow"|"block", "message"}`) on stdout, exit 0; any failure is one line on stderr
/// and exit 1, for the hook's `on_failure`.
pub fn ask_main(spec: &str) -> i32 {
    let var = |name: &str| std::env::var(name).ok();
    match ask(spec, &var) {
        Ok(answer) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{answer}");
            0
        }
        Err(why) => {
            eprintln!("llm hook: {why}");
            1
        }
    }
}

fn ask(spec: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Value, String> {
    let llm = parse_spec(spec)?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("cannot read the event: {e}"))?;
    let event: Value =
        serde_json::from_str(&input).map_err(|e| format!("the event is not JSON: {e}"))?;
    let prompt = llm.render(event["tool"].as_str(), &event["args"]);
    let key = json!([llm.model, llm.max_tokens, prompt]).to_string();
    let cache = match (llm.cache, var(amplihack_env::CLAUDE_PLUGIN_DATA)) {
        (true, Some(data)) => Some(Cache::at(Path::new(&data), event["session_id"].as_str())),
        _ => None,
    };
    if let Some(answer) = cache.as_ref().and_then(|c| c.get(&key)) {
        return Ok(answer);
    }
    let text = ask_claude(&llm, &prompt, var)?;
    let refusal = verdict(&text)?;
    let answer = match refusal {
        Some(reason) => json!({"action": "block", "message": reason}),
        None => json!({"action": "allow", "message": null}),
    };
    if let Some(cache) = &cache {
        cache.put(&key, &answer);
    }
    Ok(answer)
}

fn parse_spec(spec: &str) -> Result<Llm, String> {
    let spec: Value = serde_json::from_str(spec).map_err(|e| format!("bad spec: {e}"))?;
    let model = spec["model"].as_str().ok_or("bad spec: no model")?;
    let prompt = spec["prompt"].as_str().ok_or("bad spec: no prompt")?;
    Ok(Llm::new(
        model.into(),
        prompt.into(),
        spec["max_tokens"]
            .as_u64()
            .unwrap_or(crate::handlers::llm::DEFAULT_MAX_TOKENS),
        spec["cache"].as_bool().unwrap_or(false),
    ))
}

/// A model's answer read as a verdict: `Some(reason)` refuses, `None` lets the event go on; an
/// answer with no JSON object in it is an error (the hook's failure).
pub fn verdict(text: &str) -> Result<Option<String>, String> {
    let (start, end) = (text.find('{'), text.rfind('}'));
    let object = match (start, end) {
        (Some(start), Some(end)) if start < end => {
            serde_json::from_str::<Value>(&text[start..=end]).ok()
        }
        _ => None,
    };
    let Some(Value::Object(verdict)) = object else {
        let shown: String = text.chars().take(200).collect();
        return Err(format!("the model did not answer with JSON: {shown}"));
    };
    let refused = verdict.get("safe") == Some(&Value::Bool(false))
        || verdict.get("ok") == Some(&Value::Bool(false))
        || matches!(
            verdict.get("decision").and_then(Value::as_str),
            Some("block" | "deny")
        );
    Ok(refused.then(|| {
        verdict
            .get("reason")
            .and_then(Value::as_str)
            .filter(|r| !r.trim().is_empty())
            .unwrap_or("the model judged it unsafe")
            .to_string()
    }))
}

/// Asks Claude Code, `claude -p`, with hooks off, no tools, `max_tokens` as its output limit.
fn ask_claude(
    llm: &Llm,
    prompt: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let program = claude_program(var).ok_or(
        "no Claude Code to ask: llm hooks use Claude Code's model access (install it, or set AMPLIHACK_CLAUDE to its path)",
    )?;
    let (exe, base_args) = program.split_first().ok_or("no Claude Code to ask")?;
    let version = claude_version::from_env(var).or_else(|| claude_version_of(&program));
    let mut command = Command::new(exe);
    command
        .args(base_args)
        .args(["-p", "--output-format", "json", "--model", &llm.model])
        // One answer: a model that reaches for a tool ends the question (a failure, for on_failure).
        .args(["--max-turns", "1"])
        .args(["--settings", r#"{"disableAllHooks": true}"#]);
    if version.is_some_and(|v| v >= QUIET_SINCE) {
        command.args(["--tools", "", "--no-session-persistence"]);
    }
    // A nested Claude Code refuses to start inside another's session unless told it is not one.
    for name in [
        amplihack_env::CLAUDECODE,
        amplihack_env::CLAUDE_PID,
        amplihack_env::CLAUDE_CODE_SSE_PORT,
    ] {
        command.env_remove(name);
    }
    command
        .env(
            amplihack_env::CLAUDE_CODE_MAX_OUTPUT_TOKENS,
            llm.max_tokens.to_string(),
        )
        .current_dir(side_dir(var))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(exe).display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(prompt.as_bytes());
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("Claude Code did not finish: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Option<Map<String, Value>> = match serde_json::from_str(stdout.trim()) {
        Ok(Value::Object(result)) => Some(result),
        _ => None,
    };
    match result {
        Some(result) if result.get("is_error") != Some(&Value::Bool(true)) => Ok(result
            .get("result")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()),
        Some(result) => Err(format!(
            "Claude Code's model call failed: {}",
            result.get("result").and_then(Value::as_str).unwrap_or("")
        )),
        None => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let first = stderr.lines().next().unwrap_or("no output");
            Err(format!(
                "Claude Code answered no result ({}): {first}",
                output.status
            ))
        }
    }
}

/// Where the side question runs: the plugin's data directory (no project CLAUDE.md is read).
fn side_dir(var: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    var(amplihack_env::CLAUDE_PLUGIN_DATA)
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

/// The Claude Code program (and its script, for a Node install) to run.
pub fn claude_program(var: &dyn Fn(&str) -> Option<String>) -> Option<Vec<OsString>> {
    if let Some(path) = var(CLAUDE_VAR).filter(|p| !p.is_empty()) {
        return Some(vec![path.into()]);
    }
    if let Some(program) = var(amplihack_env::CLAUDE_PID)
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        .and_then(program_of)
    {
        return Some(program);
    }
    let mut pid = parent_of(std::process::id());
    for _ in 0..8 {
        let Some(current) = pid.filter(|p| *p > 1) else {
            break;
        };
        if let Some(program) = program_of(current).filter(|p| is_claude(p)) {
            return Some(program);
        }
        pid = parent_of(current);
    }
    let path = var("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("claude"))
        .find(|candidate| candidate.is_file())
        .map(|found| vec![found.into_os_string()])
}

/// A process's program: its executable, and for Node or Bun the script it runs.
fn program_of(pid: u32) -> Option<Vec<OsString>> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<&[u8]> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .collect();
    let name = exe.file_name()?.to_string_lossy();
    if name.starts_with("node") || name.starts_with("bun") {
        use std::os::unix::ffi::OsStrExt;
        let script = args.iter().skip(1).find(|a| !a.starts_with(b"-"))?;
        let script = std::ffi::OsStr::from_bytes(script).to_os_string();
        return Some(vec![exe.into_os_string(), script]);
    }
    Some(vec![exe.into_os_string()])
}

/// Whether a program is Claude Code: `claude`, `claude.exe`, or a script of `@anthropic-ai/claude-code`.
fn is_claude(program: &[OsString]) -> bool {
    program.iter().any(|part| {
        let part = Path::new(part);
        let name = part.file_name().map(|n| n.to_string_lossy().into_owned());
        matches!(name.as_deref(), Some("claude" | "claude.exe"))
            || part.to_string_lossy().contains("claude-code/cli")
    })
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `claude --version` → (2, 1, 328), waited for at most 30 s (2.0.x starts Node); `None` when it
/// does not answer in time or says no version. `program` is the command line that starts Claude
/// Code (its first element the executable).
pub fn claude_version_of(program: &[OsString]) -> Option<Version> {
    let (exe, args) = program.split_first()?;
    let mut child = Command::new(exe)
        .args(args)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < VERSION_WAIT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    claude_version::parse(&String::from_utf8_lossy(&output.stdout))
}

/// Answers kept for one session: `<plugin data>/llm-cache/<session>.json`, a JSON object from
/// request to answer.
struct Cache {
    file: PathBuf,
}

impl Cache {
    fn at(data: &Path, session: Option<&str>) -> Cache {
        let session: String = session
            .unwrap_or("none")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .take(80)
            .collect();
        Cache {
            file: data.join("llm-cache").join(format!("{session}.json")),
        }
    }

    fn entries(&self) -> Map<String, Value> {
        match std::fs::read_to_string(&self.file)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        {
            Some(Value::Object(entries)) => entries,
            _ => Map::new(),
        }
    }

    fn get(&self, key: &str) -> Option<Value> {
        self.entries().remove(key)
    }

    /// Best effort: a cache that cannot be written only means the model is asked again.
    fn put(&self, key: &str, answer: &Value) {
        let mut entries = self.entries();
        entries.insert(key.into(), answer.clone());
        let bytes = Value::Object(entries).to_string();
        let _ = amplihack_state::files::replace(&self.file, bytes.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_in_each_form() {
        let cases: &[(&str, Result<Option<&str>, &str>)] = &[
            (r#"{"safe": false, "reason": "risky"}"#, Ok(Some("risky"))),
            (r#"{"safe": true, "reason": "fine"}"#, Ok(None)),
            (r#"{"ok": false, "reason": "no"}"#, Ok(Some("no"))),
            (r#"{"ok": true}"#, Ok(None)),
            (r#"{"decision": "block", "reason": "b"}"#, Ok(Some("b"))),
            (
                r#"{"decision": "deny"}"#,
                Ok(Some("the model judged it unsafe")),
            ),
            (
                "```json\n{\"safe\": false, \"reason\": \"x\"}\n```",
                Ok(Some("x")),
            ),
            ("Sure! {\"safe\": true}", Ok(None)),
            ("I cannot decide", Err("did not answer with JSON")),
            ("{not json}", Err("did not answer with JSON")),
        ];
        for (text, expected) in cases {
            match (verdict(text), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got.as_deref(), *want, "{text}"),
                (Err(why), Err(needle)) => assert!(why.contains(needle), "{text}: {why}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_cache_keeps_answers_per_session_privately() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::at(dir.path(), Some("s/1../x"));
        assert_eq!(cache.file, dir.path().join("llm-cache/s1x.json"));
        assert_eq!(cache.get("k"), None);
        cache.put("k", &json!({"action": "block"}));
        cache.put("j", &json!({"action": "allow"}));
        assert_eq!(cache.get("k"), Some(json!({"action": "block"})));
        assert_eq!(Cache::at(dir.path(), Some("other")).get("k"), None);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache.file).expect("file").permissions();
        assert_eq!(mode.mode() & 0o777, 0o600);
    }

    #[test]
    fn claude_code_is_found_where_the_hook_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let on_path = dir.path().join("claude");
        std::fs::write(&on_path, "").expect("write");
        let path = dir.path().to_string_lossy().into_owned();
        let lookup = |named: Option<&'static str>| {
            let path = path.clone();
            move |name: &str| match name {
                CLAUDE_VAR => named.map(String::from),
                "PATH" => Some(path.clone()),
                _ => None,
            }
        };
        assert_eq!(
            claude_program(&lookup(Some("/opt/claude"))),
            Some(vec![OsString::from("/opt/claude")])
        );
        // No CLAUDE_PID and no Claude Code among this test's ancestors (unless the test runs
        // inside one): PATH.
        let found = claude_program(&lookup(None)).expect("found");
        assert!(is_claude(&found), "{found:?}");
        assert!(is_claude(&[OsString::from(
            "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"
        )]));
        assert!(!is_claude(&[
            OsString::from("/usr/bin/node"),
            OsString::from("/srv/app.js")
        ]));
        assert_eq!(
            parent_of(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }
}
