//! A survey, not a gate: published Claude Code plugins run natively and through amplihack in the
//! real Claude Code, the same scripted session both ways, and a report of what differed.
//!
//! Skipped (prints `SKIPPED <why>` and passes) unless `AMPLIHACK_COMPARE_PLUGINS` names a directory
//! of plugin directories (each with `hooks/hooks.json`; fetched by hand, never committed). For each
//! plugin, one session natively (`--plugin-dir <plugin>`) and one per amplihack build (the plugin
//! copied unchanged into `~/.amplifier/hooks/<name>/`, then `amplihack install` into a temporary
//! HOME). The fake model asks for a Bash call, a failing Bash call (PostToolUseFailure), a Write
//! that `--allowedTools` does not allow (PermissionRequest), a subagent (SubagentStart and
//! SubagentStop), then ends; a `prompt` handler's question is answered `{"ok": true}`.
//!
//! Nothing is wrapped: what the plugin's handlers received is read from Claude Code's own debug
//! log (`Hooks:` lines) natively and from amplihack's audit log under amplihack, plus the prompt
//! handlers' questions the fake recorded. Reported per plugin and build: handler runs per event,
//! the texts reaching the model that one way gave and the other did not, permission denials,
//! files written in the project and HOME, and hook complaints in the debug log.
//!
//! `tests/fixtures/compare-repro/` holds two small plugins of ours that reproduce what the survey
//! of published plugins found (a `Task` matcher on the Agent tool; plain-stdout and exit-2 texts):
//! `AMPLIHACK_COMPARE_PLUGINS=tests/fixtures/compare-repro cargo test --test compare_plugins -- --nocapture`.
//!
//! - `AMPLIHACK_COMPARE_BUILDS=name=<dir>,name=<dir>`: directories holding `amplihack` and
//!   `amplihack-hooks` (a `target/release`); default: this test's own build, named `this`.
//! - `AMPLIHACK_COMPARE_ONLY=a,b`: only these plugin directories.
//! - `AMPLIHACK_COMPARE_OUT=<dir>`: also write `<plugin>.<session>.<build>.json`, the debug logs
//!   and `report.txt` there.
//! - `AMPLIHACK_COMPARE_PROMPT_ANSWER=<json>`: what the fake answers `prompt` handlers (default
//!   `{"ok": true, ...}`); `AMPLIHACK_COMPARE_RAW=1`: report paths and ids as they were.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::TestEnv;
use crate::support::fake_anthropic::{FakeAnthropic, Turn};

/// What the fake answers a `prompt` handler's question with (recognised by Claude Code's
/// evaluator system text).
fn prompt_marker() -> String {
    std::env::var("AMPLIHACK_COMPARE_PROMPT_MARKER")
        // "You are evaluating a hook in Claude Code", "... a stop-condition hook ...".
        .unwrap_or_else(|_| "You are evaluating a ".into())
}
fn prompt_answer() -> String {
    std::env::var("AMPLIHACK_COMPARE_PROMPT_ANSWER")
        .unwrap_or_else(|_| r#"{"ok": true, "reason": "COMPARE: the fake model allows it"}"#.into())
}
const RUN_LIMIT: Duration = Duration::from_secs(240);

/// The sessions a plugin is run in: the scripted tool calls, and for plugins with PreCompact
/// handlers a `/compact` (the fake's first answer is the summary).
#[derive(Clone, Copy, PartialEq)]
enum Session {
    Scripted,
    Compact,
}

impl Session {
    fn prompt(self) -> &'static str {
        match self {
            Session::Scripted => "please do the scripted things",
            Session::Compact => "/compact",
        }
    }

    fn script(self, project: &Path) -> Vec<Turn> {
        match self {
            Session::Scripted => script(project),
            Session::Compact => vec![Turn::text("Summary: nothing happened yet.")],
        }
    }
}

fn script(project: &Path) -> Vec<Turn> {
    vec![
        // PATH shows what a SessionStart handler's CLAUDE_ENV_FILE did to the Bash tool's shell.
        Turn::bash("echo compare-first; echo \"PATH=$PATH\""),
        Turn::bash("echo compare-failing >&2; exit 3"),
        Turn::ToolUse {
            name: "Write".into(),
            input: json!({
                "file_path": project.join("compare-written.txt").to_string_lossy(),
                "content": "written by the scripted model\n"
            }),
        },
        Turn::ToolUse {
            name: "Agent".into(),
            // In the foreground: a background subagent ends the session at a time that varies.
            input: json!({"subagent_type": "general-purpose", "description": "look",
                          "prompt": "say hi", "run_in_background": false}),
        },
        // The subagent's own turn.
        Turn::text("hi from the subagent"),
        Turn::text("done"),
    ]
}

/// What one session gave.
#[derive(Debug, Default)]
struct Seen {
    /// Handler runs per event (natively from the debug log; under amplihack from its audit log and
    /// the debug log's non-amplihack entries).
    events: BTreeMap<String, usize>,
    /// Handler runs per event that exited non-zero.
    failures: BTreeMap<String, usize>,
    /// `prompt` handler questions the fake model was asked.
    prompt_questions: usize,
    /// What those questions said (the system text's start and the last message's).
    prompt_texts: Vec<String>,
    /// Normalised lines of the conversation the model was given (all main requests).
    texts: BTreeSet<String>,
    /// Permission denials: `tool: input`.
    denials: Vec<String>,
    /// Files in the project and in HOME (outside the host's and amplihack's own), with sizes.
    files: BTreeMap<String, u64>,
    /// Debug-log lines where Claude Code complained about a hook, and amplihack's failure log.
    complaints: Vec<String>,
    /// The final result text, turns, error flag.
    outcome: String,
    /// Handler commands that ran (normalised), to see which handler kinds ran at all.
    handlers: BTreeSet<String>,
    /// Claude Code's debug log of the session, kept for reading by hand.
    debug_log: String,
    /// The main requests' bodies, kept for reading by hand.
    requests: Vec<Value>,
}

struct Paths {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    plugin: PathBuf,
}

impl Paths {
    fn normalise(&self, text: &str) -> String {
        let mut out = text.to_string();
        if std::env::var_os("AMPLIHACK_COMPARE_RAW").is_some() {
            return out;
        }
        for (path, token) in [
            (&self.plugin, "<plugin>"),
            (&self.project, "<project>"),
            (&self.home, "<home>"),
            (&self.root, "<root>"),
        ] {
            let p = path.to_string_lossy();
            out = out.replace(p.as_ref(), token);
            if token == "<plugin>" {
                out = out.replace("${CLAUDE_PLUGIN_ROOT}", token);
            }
            // JSON-escaped forms of the same path, and Claude Code's directory name for it.
            out = out.replace(&p.replace('/', "\\/"), token);
            out = out.replace(&p.replace(['/', ' ', '.'], "-"), token);
        }
        // Any other mention of a session's temporary directory (`amplihack-testXXXXXX`).
        let mut rest = out.as_str();
        let mut cleaned = String::with_capacity(out.len());
        while let Some(at) = rest.find("amplihack-test") {
            cleaned.push_str(&rest[..at]);
            cleaned.push_str("amplihack-test#");
            let after = &rest[at + "amplihack-test".len()..];
            let skip = after
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(after.len());
            rest = &after[skip..];
        }
        cleaned.push_str(rest);
        normalise_volatile(&cleaned)
    }
}

/// Ids, times and numbers differ from run to run: every run of digits (with the hex and dashes
/// around it, for ids) becomes `#`.
fn normalise_volatile(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_hexdigit() || chars[i] == '-' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_hexdigit() || chars[j] == '-') {
                j += 1;
            }
            let run: String = chars[i..j].iter().collect();
            let digits = run.chars().filter(char::is_ascii_digit).count();
            let hexy = run.len() >= 8 && digits >= 2;
            if hexy || (digits > 0 && run.chars().all(|c| c.is_ascii_digit())) {
                out.push('#');
            } else {
                out.push_str(&run);
            }
            i = j;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn builds() -> Vec<(String, PathBuf)> {
    match std::env::var("AMPLIHACK_COMPARE_BUILDS") {
        Ok(spec) if !spec.trim().is_empty() => spec
            .split(',')
            .map(|item| {
                let (name, dir) = item.split_once('=').unwrap_or(("build", item));
                (name.trim().to_string(), PathBuf::from(dir.trim()))
            })
            .collect(),
        _ => vec![(
            "this".into(),
            support::amplihack_bin()
                .parent()
                .expect("bin dir")
                .to_path_buf(),
        )],
    }
}

/// Runs with a limit; on overrun the process is killed and `None` returned.
fn run_limited(mut command: Command) -> Option<std::process::Output> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().expect("spawn");
    // Drain the pipes while waiting.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader_out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut buf);
        buf
    });
    let reader_err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut buf);
        buf
    });
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(std::process::Output {
                status,
                stdout: reader_out.join().unwrap_or_default(),
                stderr: reader_err.join().unwrap_or_default(),
            });
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn claude_session(
    env: &TestEnv,
    fake: &FakeAnthropic,
    session: Session,
    extra_args: &[String],
) -> (Value, String) {
    let debug_file = env.root().join("claude-debug.txt");
    let mut command = env.command(&support::claude_bin());
    command
        .args(["-p", session.prompt()])
        .args(extra_args)
        .args(["--output-format", "json", "--allowedTools", "Bash Agent"])
        .arg("--debug-file")
        .arg(&debug_file)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-fake")
        .env("ANTHROPIC_BASE_URL", &fake.url)
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("AMPLIHACK_LOG_DIR", env.root().join("logs"));
    let output = run_limited(command);
    let debug_log = std::fs::read_to_string(&debug_file).unwrap_or_default();
    let result = match output {
        None => json!({"result": "TIMED OUT", "is_error": true}),
        Some(output) => String::from_utf8_lossy(&output.stdout)
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .unwrap_or_else(|| {
                json!({"result": format!("NO JSON RESULT; stderr: {}",
                    String::from_utf8_lossy(&output.stderr).chars().take(300).collect::<String>()),
                    "is_error": true})
            }),
    };
    (result, debug_log)
}

/// One handler run Claude Code logged: its event, its command, its exit status (none for an
/// async one, whose end is not logged).
type HookRun = (String, String, Option<i64>);

/// Debug lines for a finished command name the event first and the command in brackets:
/// `Hooks: PreToolUse:Bash [cmd] (plugin p@inline) finished with status 0 (24ms)`, and at the end
/// of a session, without the prefix, `SessionEnd:other [cmd] completed with status 0`. An async
/// handler is `Hooks: Registering async hook async_hook_N (PreToolUse:Bash) with timeout …`.
fn debug_hook_runs(debug_log: &str, paths: &Paths, skip: &str) -> Vec<HookRun> {
    let mut runs = Vec::new();
    // At SessionEnd an async handler's registration is followed by a `completed` line for the
    // same start: one run, not two.
    let mut just_registered: Option<String> = None;
    for line in debug_log.lines() {
        let rest = line.split_once("] ").map_or(line, |(_, r)| r);
        let rest = rest.strip_prefix("Hooks: ").unwrap_or(rest);
        if let Some(registered) = rest.strip_prefix("Registering async hook ") {
            let event = registered
                .split_once('(')
                .map(|(_, e)| e.split([':', ')']).next().unwrap_or_default())
                .unwrap_or_default();
            runs.push((event.to_string(), "(async)".to_string(), None));
            just_registered = Some(event.to_string());
            continue;
        }
        let after_registration = just_registered.take();
        if !line.contains('[') {
            continue;
        }
        let Some((_, status)) = rest
            .split_once(" finished with status ")
            .or_else(|| rest.split_once(" completed with status "))
        else {
            continue;
        };
        let event = rest
            .split([':', ' '])
            .next()
            .unwrap_or_default()
            .to_string();
        if rest.contains(" completed with status ") && after_registration.as_ref() == Some(&event) {
            continue;
        }
        let command = rest
            .find('[')
            .and_then(|s| rest.rfind(']').map(|e| &rest[s + 1..e.max(s + 1)]))
            .unwrap_or_default();
        if !skip.is_empty() && command.contains(skip) {
            continue;
        }
        let status = status
            .split(|c: char| !c.is_ascii_digit() && c != '-')
            .next()
            .and_then(|n| n.parse().ok());
        runs.push((event, paths.normalise(command), status));
    }
    runs
}

fn complaints(debug_log: &str, paths: &Paths) -> Vec<String> {
    debug_log
        .lines()
        .filter(|l| {
            (l.contains("[ERROR]") && l.contains("ook"))
                || l.contains("is not a JSON object")
                || l.contains("validation failed")
                || l.contains("non-blocking status")
                || l.contains("Failed with")
        })
        .map(|l| {
            let l = l.split_once("] ").map_or(l, |(_, r)| r);
            paths.normalise(l).chars().take(240).collect()
        })
        .collect()
}

/// The lines of every text in the conversation that mentions a hook: Claude Code labels what a
/// hook gave the model (`SessionStart:startup hook success: …`, `… hook additional context: …`,
/// `PreToolUse:Bash hook error: …`, `Stop hook feedback: …`), and the rest of the conversation
/// (the plugin's own agents and skills, which Claude Code lists natively) is not the hooks' doing.
fn conversation_lines(fake: &FakeAnthropic, paths: &Paths) -> BTreeSet<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) if s.to_lowercase().contains("hook") => {
                // The agent and skill listings quote the plugins' own descriptions: left out, up
                // to the next text Claude Code labels as a hook's.
                let mut listing = false;
                for line in s.lines() {
                    if line.contains("Available agent types")
                        || line.contains("skills are available")
                    {
                        listing = true;
                        continue;
                    }
                    if listing && hook_label(line) {
                        listing = false;
                    }
                    if !listing {
                        out.push(line.to_string());
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut lines = Vec::new();
    for request in fake.main_requests() {
        walk(&request["messages"], &mut lines);
        // What the tools gave back (a CLAUDE_ENV_FILE's effect on the Bash tool's shell shows
        // here), marked as such.
        for message in request["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    let mut texts = Vec::new();
                    all_strings(&block["content"], &mut texts);
                    lines.extend(
                        texts
                            .iter()
                            .flat_map(|t| t.lines())
                            .map(|l| format!("[tool] {l}")),
                    );
                }
            }
        }
        // The system text carries SessionStart context on some versions.
        let mut system = Vec::new();
        walk(&request["system"], &mut system);
        lines.extend(system.into_iter().filter(|l| l.contains("hook")));
    }
    lines
        .iter()
        .map(|l| paths.normalise(l.trim()))
        .filter(|l| !l.is_empty())
        .collect()
}

/// `SessionStart:startup hook success: …`, `Stop hook feedback:`: a line that starts a hook's text.
fn hook_label(line: &str) -> bool {
    line.split_once(" hook ")
        .is_some_and(|(head, _)| !head.is_empty() && !head.contains(' '))
}

fn all_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| all_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| all_strings(v, out)),
        _ => {}
    }
}

/// Every line of the plugin's own text files (agents, skills, commands): natively Claude Code
/// lists them to the model, through amplihack it does not (amplihack forwards hooks only).
fn plugin_file_lines(dir: &Path, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            plugin_file_lines(&path, out);
        } else if path.extension().is_some_and(|e| e == "md")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            out.extend(
                text.lines()
                    .map(|l| normalise_volatile(l.trim()))
                    .filter(|l| l.len() > 3),
            );
        }
    }
}

/// Files a session left, relative to the project (`project/…`) and HOME (`home/…`), skipping the
/// host's and amplihack's own bookkeeping and the plugin's installed copy.
fn files_left(paths: &Paths, plugin_name: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut walk = |dir: &Path, prefix: &str, skip: &[String]| {
        for (rel, meta) in support::native::files_below(dir, dir, skip) {
            out.insert(format!("{prefix}/{rel}"), meta.len());
        }
    };
    walk(&paths.project, "project", &[]);
    let skip: Vec<String> = support::native::HOSTS_OWN_HOME_FILES
        .iter()
        .map(|s| s.to_string())
        .chain([format!(".amplifier/hooks/{plugin_name}")])
        .collect();
    walk(&paths.home, "home", &skip);
    // Backups the installer made of settings files: the installer's, not the plugin's.
    out.retain(|k, _| !k.contains(".claude/settings.json."));
    out.into_iter()
        .map(|(k, v)| (paths.normalise(&k), v))
        .collect()
}

fn denials(result: &Value, paths: &Paths) -> Vec<String> {
    result["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let input = &d["tool_input"];
            let what = input["command"]
                .as_str()
                .or_else(|| input["file_path"].as_str())
                .unwrap_or_default();
            paths.normalise(&format!(
                "{}: {what}",
                d["tool_name"].as_str().unwrap_or("?")
            ))
        })
        .collect()
}

fn outcome(result: &Value) -> String {
    format!(
        "turns={} error={} result={:?}",
        result["num_turns"],
        result["is_error"],
        result["result"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .take(80)
            .collect::<String>()
    )
}

/// The plugin as it is published, less its MCP servers (`.mcp.json`): amplihack forwards hooks,
/// and a plugin's MCP servers (often `npx` fetching packages) are Claude Code's business.
fn copy_plugin(from: &Path, to: &Path) {
    copy_tree(from, to);
    let _ = std::fs::remove_file(to.join(".mcp.json"));
}

/// Copies a tree as it is: symbolic links stay links (published plugins carry dangling ones).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            if let Ok(link) = std::fs::read_link(&source) {
                let _ = std::os::unix::fs::symlink(link, &target);
            }
        } else if kind.is_dir() {
            copy_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target).expect("copy");
        }
    }
}

/// One session natively; with no plugin, the baseline that tells Claude Code's own run-to-run
/// variation and amplihack's built-ins from the plugin's differences.
fn native(plugin_src: Option<&Path>, name: &str, session: Session) -> Seen {
    let env = TestEnv::new();
    let plugin = env.root().join("plugins").join(name);
    let mut args = Vec::new();
    if let Some(src) = plugin_src {
        copy_plugin(src, &plugin);
        args = vec!["--plugin-dir".into(), plugin.to_string_lossy().into_owned()];
    }
    let paths = Paths {
        root: env.root().to_path_buf(),
        home: env.home.clone(),
        project: env.project.clone(),
        plugin: plugin.clone(),
    };
    let fake = FakeAnthropic::start_with(
        session.script(&env.project),
        vec![(prompt_marker().as_str(), prompt_answer().as_str())],
    );
    let (result, debug_log) = claude_session(&env, &fake, session, &args);
    let runs = debug_hook_runs(&debug_log, &paths, "");
    let mut seen = Seen {
        prompt_questions: fake.canned_requests().len(),
        prompt_texts: prompt_texts(&fake, &paths),
        texts: conversation_lines(&fake, &paths),
        denials: denials(&result, &paths),
        files: files_left(&paths, name),
        complaints: complaints(&debug_log, &paths),
        outcome: outcome(&result),
        debug_log: debug_log.clone(),
        requests: fake.main_requests(),
        ..Seen::default()
    };
    for (event, command, status) in runs {
        *seen.events.entry(event.clone()).or_insert(0) += 1;
        if status.is_some_and(|s| s != 0) {
            *seen.failures.entry(event.clone()).or_insert(0) += 1;
        }
        seen.handlers.insert(format!("{event} {command}"));
    }
    seen
}

fn through_amplihack(
    plugin_src: Option<&Path>,
    name: &str,
    build: &Path,
    session: Session,
) -> Seen {
    let env = TestEnv::new();
    let plugin = env.home.join(".amplifier/hooks").join(name);
    if let Some(src) = plugin_src {
        copy_plugin(src, &plugin);
    }
    let paths = Paths {
        root: env.root().to_path_buf(),
        home: env.home.clone(),
        project: env.project.clone(),
        plugin: plugin.clone(),
    };
    let mut install = env.command(&build.join("amplihack"));
    install
        .arg("install")
        .env("AMPLIHACK_BIN_DIR", env.bin_dir())
        .env("AMPLIHACK_CLAUDE_BIN", support::claude_bin());
    let installed = run_limited(install);
    let mut install_problem = Vec::new();
    match &installed {
        Some(o) if o.status.success() => {}
        Some(o) => install_problem.push(format!(
            "amplihack install failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .chars()
                .take(300)
                .collect::<String>()
        )),
        None => install_problem.push("amplihack install timed out".into()),
    }
    let fake = FakeAnthropic::start_with(
        session.script(&env.project),
        vec![(prompt_marker().as_str(), prompt_answer().as_str())],
    );
    let (result, debug_log) = claude_session(&env, &fake, session, &[]);
    let mut seen = Seen {
        prompt_questions: fake.canned_requests().len(),
        prompt_texts: prompt_texts(&fake, &paths),
        texts: conversation_lines(&fake, &paths),
        denials: denials(&result, &paths),
        files: files_left(&paths, name),
        complaints: complaints(&debug_log, &paths),
        outcome: outcome(&result),
        debug_log: debug_log.clone(),
        requests: fake.main_requests(),
        ..Seen::default()
    };
    seen.complaints.extend(install_problem);
    // Handlers amplihack ran (its audit log), and any plugin entries registered with Claude Code
    // itself (prompt handlers, say): debug lines not about amplihack-hooks.
    let audit = std::fs::read_to_string(env.home.join(".local/state/amplihack/audit.jsonl"))
        .unwrap_or_default();
    for line in audit.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if record["kind"] == "builtin" {
            continue; // a built-in's decision, not a plugin handler's run
        }
        let event = record["event"].as_str().unwrap_or("?").to_string();
        *seen.events.entry(event.clone()).or_insert(0) += 1;
        if record["exit"].as_i64().is_some_and(|s| s != 0) || record["timed_out"] == true {
            *seen.failures.entry(event.clone()).or_insert(0) += 1;
        }
        seen.handlers.insert(format!(
            "{event} {}",
            paths.normalise(record["command"].as_str().unwrap_or_default())
        ));
    }
    for (event, command, status) in debug_hook_runs(&debug_log, &paths, "amplihack-hooks") {
        if command == "(async)" {
            // amplihack's own async entries, if any, are in the audit log already.
            continue;
        }
        *seen.events.entry(event.clone()).or_insert(0) += 1;
        if status.is_some_and(|s| s != 0) {
            *seen.failures.entry(event.clone()).or_insert(0) += 1;
        }
        seen.handlers
            .insert(format!("{event} {command} (registered with Claude Code)"));
    }
    // amplihack's own failure log.
    if let Ok(entries) = std::fs::read_dir(env.root().join("logs")) {
        for entry in entries.flatten() {
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                // A handler's own failure is counted in `failures`, as natively.
                seen.complaints.extend(
                    text.lines()
                        .filter(|l| !l.contains("failed with exit"))
                        .map(|l| paths.normalise(l).chars().take(240).collect::<String>()),
                );
            }
        }
    }
    seen
}

fn differences(native: &Seen, other: &Seen) -> Vec<String> {
    let mut out = Vec::new();
    let events: BTreeSet<&String> = native.events.keys().chain(other.events.keys()).collect();
    for event in events {
        let (n, o) = (
            native.events.get(event).copied().unwrap_or(0),
            other.events.get(event).copied().unwrap_or(0),
        );
        if n != o {
            out.push(format!(
                "event {event}: native {n} handler runs, amplihack {o}"
            ));
        }
    }
    if native.failures != other.failures {
        out.push(format!(
            "failed handler runs: native {:?}, amplihack {:?}",
            native.failures, other.failures
        ));
    }
    if native.prompt_questions != other.prompt_questions {
        out.push(format!(
            "prompt-handler questions to the model: native {}, amplihack {}",
            native.prompt_questions, other.prompt_questions
        ));
    }
    if native.prompt_questions == other.prompt_questions
        && native.prompt_texts != other.prompt_texts
    {
        out.push("prompt-handler questions worded differently (see prompt_texts)".into());
    }
    for line in native.texts.difference(&other.texts) {
        out.push(format!("text only natively: {}", clip(line)));
    }
    for line in other.texts.difference(&native.texts) {
        out.push(format!("text only via amplihack: {}", clip(line)));
    }
    if native.denials != other.denials {
        out.push(format!(
            "denials: native {:?}, amplihack {:?}",
            native.denials, other.denials
        ));
    }
    let names: BTreeSet<&String> = native.files.keys().chain(other.files.keys()).collect();
    for name in names {
        let (n, o) = (native.files.get(name), other.files.get(name));
        match (n, o) {
            (Some(_), None) => out.push(format!("file only natively: {name}")),
            (None, Some(_)) => out.push(format!("file only via amplihack: {name}")),
            _ => {}
        }
    }
    if native.outcome != other.outcome {
        out.push(format!(
            "outcome: native {}, amplihack {}",
            native.outcome, other.outcome
        ));
    }
    for c in &other.complaints {
        if !native.complaints.contains(c) {
            out.push(format!("complaint only via amplihack: {}", clip(c)));
        }
    }
    out
}

/// The name the plugin's manifest gives (what Claude Code prefixes its commands with).
fn plugin_name(plugin: &Path) -> String {
    std::fs::read_to_string(plugin.join(".claude-plugin/plugin.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["name"].as_str().map(str::to_string))
        .unwrap_or_else(|| {
            plugin
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

fn clip(s: &str) -> String {
    let s: String = s.chars().take(200).collect();
    s
}

fn prompt_texts(fake: &FakeAnthropic, paths: &Paths) -> Vec<String> {
    fake.canned_requests()
        .iter()
        .map(|r| {
            let system = r["system"].to_string();
            let last = r["messages"]
                .as_array()
                .and_then(|m| m.last())
                .map(Value::to_string)
                .unwrap_or_default();
            paths
                .normalise(&format!("system: {system} | last: {last}"))
                .chars()
                .take(600)
                .collect()
        })
        .collect()
}

fn seen_json(seen: &Seen) -> Value {
    json!({
        "prompt_texts": seen.prompt_texts,
        "events": seen.events,
        "failures": seen.failures,
        "prompt_questions": seen.prompt_questions,
        "handlers": seen.handlers,
        "denials": seen.denials,
        "files": seen.files,
        "complaints": seen.complaints,
        "outcome": seen.outcome,
        "texts": seen.texts,
    })
}

#[test]
fn published_plugins_natively_and_through_amplihack() {
    let Some(dir) = std::env::var_os("AMPLIHACK_COMPARE_PLUGINS") else {
        println!(
            "SKIPPED AMPLIHACK_COMPARE_PLUGINS is not set (a directory of plugin directories)"
        );
        return;
    };
    let only: Option<Vec<String>> = std::env::var("AMPLIHACK_COMPARE_ONLY")
        .ok()
        .map(|s| s.split(',').map(|p| p.trim().to_string()).collect());
    let out_dir = std::env::var_os("AMPLIHACK_COMPARE_OUT").map(PathBuf::from);
    if let Some(out) = &out_dir {
        std::fs::create_dir_all(out).expect("out dir");
    }
    let mut plugins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("AMPLIHACK_COMPARE_PLUGINS")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("hooks/hooks.json").is_file())
        .filter(|p| {
            only.as_ref().is_none_or(|o| {
                o.iter()
                    .any(|n| p.file_name().is_some_and(|f| f.to_string_lossy() == *n))
            })
        })
        .collect();
    plugins.sort();
    let builds = builds();
    // What differs with no plugin at all (amplihack's built-ins, Claude Code's own variation) is
    // not the plugin's doing: left out of each plugin's differences.
    // What differs with no plugin at all (amplihack's built-ins, Claude Code's own variation) is
    // not the plugin's doing: left out of each plugin's differences.
    let mut baselines: BTreeMap<(usize, &str), BTreeSet<String>> = BTreeMap::new();
    for (kind, session) in [
        ("scripted", Session::Scripted),
        ("compact", Session::Compact),
    ] {
        let reference = native(None, "none", session);
        for (i, (_, dir)) in builds.iter().enumerate() {
            let seen = through_amplihack(None, "none", dir, session);
            baselines.insert(
                (i, kind),
                differences(&reference, &seen).into_iter().collect(),
            );
        }
    }
    let mut report = String::new();
    for plugin in &plugins {
        let name = plugin
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let listed = plugin_name(plugin);
        let mut own_lines = BTreeSet::new();
        plugin_file_lines(plugin, &mut own_lines);
        let hooks = std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap_or_default();
        let mut sessions = vec![("scripted", Session::Scripted)];
        if hooks.contains("\"PreCompact\"") {
            sessions.push(("compact", Session::Compact));
        }
        let mut section = format!("## {name}\n");
        for (kind, session) in sessions {
            let reference = native(Some(plugin), &name, session);
            section.push_str(&format!(
                "[{kind}] native: events {:?}; failed {:?}; prompt questions {}; denials {:?}; {}\n",
                reference.events,
                reference.failures,
                reference.prompt_questions,
                reference.denials,
                reference.outcome
            ));
            write_out(&out_dir, &format!("{name}.{kind}.native"), &reference);
            for (i, (build_name, build_dir)) in builds.iter().enumerate() {
                let seen = through_amplihack(Some(plugin), &name, build_dir, session);
                let all = differences(&reference, &seen);
                // The plugin's own commands, skills and agents, which Claude Code lists
                // natively: amplihack forwards hooks only.
                let listing = |d: &String| {
                    (d.starts_with("text only natively: - ") && d.contains(&format!(" {listed}:")))
                        || d.strip_prefix("text only natively: ")
                            .is_some_and(|l| own_lines.contains(l))
                };
                let listings = all.iter().filter(|d| listing(d)).count();
                let baseline = &baselines[&(i, kind)];
                let mut diffs: Vec<String> = all
                    .into_iter()
                    .filter(|d| !baseline.contains(d) && !listing(d))
                    .collect();
                if listings > 0 {
                    diffs.push(format!(
                        "{listings} line(s) listing the plugin's commands/skills/agents natively only"
                    ));
                }
                section.push_str(&format!(
                    "[{kind}] {build_name}: events {:?}; failed {:?}; prompt questions {}; {} difference(s)\n",
                    seen.events,
                    seen.failures,
                    seen.prompt_questions,
                    diffs.len()
                ));
                for d in &diffs {
                    section.push_str(&format!("  - {d}\n"));
                }
                write_out(&out_dir, &format!("{name}.{kind}.{build_name}"), &seen);
            }
        }
        println!("{section}");
        report.push_str(&section);
        if let Some(out) = &out_dir {
            let _ = std::fs::write(out.join("report.txt"), &report);
        }
    }
}

fn write_out(out_dir: &Option<PathBuf>, stem: &str, seen: &Seen) {
    if let Some(out) = out_dir {
        let _ = std::fs::write(
            out.join(format!("{stem}.json")),
            serde_json::to_string_pretty(&seen_json(seen)).unwrap_or_default(),
        );
        let _ = std::fs::write(out.join(format!("{stem}.debug.txt")), &seen.debug_log);
        let _ = std::fs::write(
            out.join(format!("{stem}.requests.json")),
            serde_json::to_string_pretty(&seen.requests).unwrap_or_default(),
        );
    }
}
