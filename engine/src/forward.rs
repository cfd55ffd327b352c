//! Forwarding one event to the user's plugins and merging their answers.
//!
//! Which plugins: under Claude Code, the user level and the (trusted) project level. Under
//! Amplifier, whose `hook-shell` bridge already runs the project's `.amplifier/hooks/`, only what
//! the bridge does not (the user level): each plugin runs exactly once per event under either host.
//!
//! How: matching handlers are grouped by priority (lower first); one priority's handlers run in
//! parallel, the priorities in sequence. A deny ends the event; an `updatedInput` becomes the
//! `tool_input` the next priority receives. Identical commands run once. `async` handlers start
//! detached and never delay the answer. amplihack's own registration is never run from here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use amplihack_protocol::{Decision, EventName, HookEvent, Host, ModelQuestion, Reply};
use serde_json::{Value, json};

use amplihack_protocol::command::runs_amplihack_hooks;
use amplihack_state::{StateDir, audit, files, plugins, session, session_key, trust};

use crate::answer;
use crate::background::{self, Background, Rewake};
use crate::dialects::{self, OnFailure, Protocol};
use crate::discovery::{self, Level, Plugin};
use crate::execute::{self, Finished, Ran, Spawn};
use crate::handlers::{Context, HandlerKind, Kind};
use crate::matcher;

/// Kills every handler still running (the host stopped amplihack, or its deadline passed).
pub fn kill_handlers() {
    execute::kill_all_groups();
}

/// Claude Code cuts any one context at 10,000 characters; so do we, across all sources.
pub const CONTEXT_CAP: usize = 10_000;

pub struct Request<'a> {
    pub event: &'a HookEvent,
    /// The event exactly as the host sent it.
    pub raw: &'a [u8],
    pub host: Host,
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// Time left for the whole forward.
    pub budget: Duration,
}

/// One handler the forward ran (or started, or skipped).
#[derive(Debug, Clone)]
pub struct Run {
    pub plugin: String,
    pub level: Level,
    pub command: String,
    pub priority: i64,
    pub detached: bool,
    pub finished: Option<Finished>,
    pub reply: Reply,
    pub warning: Option<String>,
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub reply: Reply,
    pub runs: Vec<Run>,
    /// Problems for one stderr line each (and the failure log): invalid plugins, failed hooks.
    pub problems: Vec<String>,
    /// Plugins discovered but not run (untrusted, disabled), as "level:name: why".
    pub skipped: Vec<String>,
}

/// The hooks directories to consult, in order, for this host.
pub fn levels(
    request_cwd: Option<&str>,
    host: Host,
    var: &dyn Fn(&str) -> Option<String>,
) -> Vec<(Level, PathBuf)> {
    let home = var("HOME").map(PathBuf::from);
    let mut levels = Vec::new();
    if let Some(user) = home
        .as_ref()
        .map(|h| h.join(".amplifier/hooks"))
        .filter(|d| {
            d.is_dir() || discovery::amcp_file(d, Level::User).is_some() // dialects::amcp
        })
    {
        levels.push((Level::User, user));
    }
    let start = amplihack_env::project_root(var).or_else(|| request_cwd.map(str::to_string));
    let project = start.and_then(|s| discovery::project_with_hooks(Path::new(&s), home.as_deref()));
    let project_dir = project.map(|p| p.join(".amplifier/hooks"));
    if let Some(dir) =
        project_dir.filter(|dir| !levels.iter().any(|(_, d)| discovery::same_dir(d, dir)))
    {
        levels.push((Level::Project, dir));
    }
    // Under amplihack's native module the bridge is not running the project's plugins (unless it
    // is mounted too): forward both levels.
    let module_alone = var(amplihack_env::AMPLIHACK_VIA_MODULE).is_some()
        && var(amplihack_env::AMPLIHACK_BRIDGE_PRESENT).is_none();
    if host == Host::Amplifier && !module_alone {
        // The bridge runs its own directory (the project's); do not run those plugins twice.
        let bridge = var(amplihack_env::AMPLIFIER_HOOKS_DIR).map(PathBuf::from);
        levels.retain(|(level, dir)| match &bridge {
            Some(bridge) => !discovery::same_dir(dir, bridge),
            None => *level != Level::Project,
        });
    }
    levels
}

struct Candidate<'p> {
    plugin: &'p Plugin,
    /// Its label: what the audit log names, and what identical handlers share.
    command: String,
    /// The command as Claude Code names it to the model when the handler blocks.
    shown: String,
    /// What runs: the program and its arguments.
    argv: Vec<String>,
    timeout: Duration,
    priority: i64,
    /// Runs in the background (`async`, or `asyncRewake` with its message).
    background: Option<Option<Rewake>>,
    /// What it reads and prints, and what its failure does (crate::dialects).
    protocol: Protocol,
    on_failure: OnFailure,
    /// Where it runs, and its `CLAUDE_PROJECT_DIR` (a project's plugin: the project root, where
    /// trust resolved what it names: crate::trust_scope::working_dir).
    cwd: PathBuf,
}

impl Candidate<'_> {
    /// `level:name`, as the audit log names plugins.
    fn source(&self) -> String {
        format!("{}:{}", self.plugin.level.as_str(), self.plugin.name)
    }

    fn run(
        &self,
        detached: bool,
        finished: Option<Finished>,
        reply: Reply,
        warning: Option<String>,
    ) -> Run {
        Run {
            plugin: self.plugin.name.clone(),
            level: self.plugin.level,
            command: self.command.clone(),
            priority: self.priority,
            detached,
            finished,
            reply,
            warning,
        }
    }
}

/// Kept for callers of the old path; see [`crate::handlers::command::substitute_quoted`].
pub use crate::handlers::command::substitute_quoted;

/// What a session env file sets, as a shell sourcing it would: `export PATH="/x:${PATH}"` gives
/// `/x:` and the real PATH, not the text `${PATH}`. A file with nothing a shell would expand is read
/// as it stands; otherwise `/bin/sh` sources it once (`set -a`: plain `K=V` lines count too) and
/// the variables that differ from ours are kept. A file the shell cannot evaluate in time gives
/// nothing rather than literal text that would break every later handler.
pub fn session_exports(text: &str, file: &Path, cwd: &Path) -> Vec<(String, String)> {
    if !text.contains(['$', '`', '\\', '(']) {
        return parse_env_file(text);
    }
    let argv = [
        "/bin/sh".to_string(),
        "-c".to_string(),
        "set -a; . \"$1\" >/dev/null 2>&1 </dev/null; exec env -0".to_string(),
        "sh".to_string(),
        file.to_string_lossy().into_owned(),
    ];
    let finished = execute::run(
        &Spawn {
            label: "source the session env file",
            argv: &argv,
            cwd,
            env: &[],
            stdin: b"",
            timeout: Duration::from_secs(2),
        },
        false,
    )
    .finished();
    if finished.exit != Some(0) {
        return Vec::new();
    }
    finished
        .stdout
        .split('\0')
        .filter_map(|entry| entry.split_once('='))
        .filter(|(key, value)| {
            !matches!(*key, "PWD" | "OLDPWD" | "SHLVL" | "_")
                && std::env::var_os(key).is_none_or(|ours| ours != *value)
        })
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// `export K=V` and `K=V` lines, quotes stripped, no evaluation (as the bridge reads them).
pub fn parse_env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
            let (key, value) = line.split_once('=')?;
            let valid = !key.is_empty()
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !key.starts_with(|c: char| c.is_ascii_digit());
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            valid.then(|| (key.to_string(), value.to_string()))
        })
        .collect()
}

pub fn forward(request: &Request<'_>) -> Outcome {
    let var = request.var;
    let mut outcome = Outcome::default();
    if var(amplihack_env::AMPLIHACK_FORWARDED).is_some() {
        return outcome;
    }
    let event = request.event;
    let Some(state) = StateDir::locate(var) else {
        return outcome;
    };
    let session = event
        .session_id
        .clone()
        .or_else(|| var(amplihack_env::AMPLIFIER_SESSION_ID));
    let background = Background {
        state: &state,
        session: session.as_deref(),
    };
    if background::delivers_on(&event.name) {
        outcome.reply.merge(background.deliver());
    }
    let (plugins, project_root) = discover(request, &state, &mut outcome);
    let cwd = (!plugins.is_empty()).then(|| handlers_dir(request, project_root));
    let cwd = cwd.unwrap_or_default();
    // amplihack's module puts model-backed handlers to the session's provider (host_model).
    let module_asks =
        request.host == Host::Amplifier && var(amplihack_env::AMPLIHACK_VIA_MODULE).is_some();
    // Under Amplifier an `http` handler's POST is made with the app's Python (handlers::http).
    let python = (request.host == Host::Amplifier)
        .then(|| var(amplihack_env::AMPLIHACK_PYTHON).unwrap_or_else(|| "python3".into()));
    let mut candidates = candidates(
        &plugins,
        event,
        &state,
        &cwd,
        (module_asks, python.as_deref()),
        &mut outcome,
    );
    if outcome.reply.decision == Some(Decision::Deny) {
        candidates.clear(); // a rule denied the call: no process starts (dialects::proposal)
    }
    if !candidates.is_empty() || !outcome.runs.is_empty() {
        let setting = Setting::new(request, &state, session.as_deref(), cwd);
        for candidate in candidates.iter().filter(|c| c.background.is_some()) {
            outcome.runs.push(start_in_background(
                candidate,
                &setting,
                &background,
                request,
            ));
        }
        run_in_order(&candidates, &setting, &background, request, &mut outcome);
        setting.finish(var);
        audit_runs(
            &state,
            event,
            session.as_deref(),
            &outcome.runs,
            &mut outcome.problems,
        );
    }
    if event.name == EventName::SessionEnd {
        background.end();
    }
    outcome
}

/// The plugins of every level this host leaves to amplihack, a project's only when trusted, and
/// the project's root when its plugins take part.
fn discover(
    request: &Request<'_>,
    state: &StateDir,
    outcome: &mut Outcome,
) -> (Vec<Plugin>, Option<PathBuf>) {
    let event = request.event;
    let mut plugins: Vec<Plugin> = Vec::new();
    let mut project_root: Option<PathBuf> = None;
    let chosen = levels(event.cwd.as_deref(), request.host, request.var);
    // Amplifier's bridge runs only Claude Code's hooks.json in its directory: the other dialects
    // there are amplihack's to run (dialects::is_foreign).
    let all = match request.host {
        Host::Amplifier => levels(event.cwd.as_deref(), Host::ClaudeCode, request.var),
        _ => chosen.clone(),
    };
    for (level, dir) in all {
        let bridge_runs_it = !chosen.contains(&(level, dir.clone()));
        let mut found = discovery::load_level(&dir, level);
        if bridge_runs_it && !found.iter().any(dialects::is_foreign) {
            continue;
        }
        if level == Level::Project {
            let project = crate::trust_scope::project_of(&dir);
            if !found.is_empty()
                && let Err(why) = crate::trust_scope::check(state, &project, &found)
            {
                notify_untrusted(
                    state,
                    event.session_id.as_deref(),
                    (&project, &found),
                    why,
                    outcome,
                );
                outcome.skipped.extend(
                    found
                        .iter()
                        .map(|p| format!("project:{}: not trusted", p.name)),
                );
                continue;
            }
            project_root = Some(project);
        }
        if bridge_runs_it {
            found.retain(dialects::is_foreign);
        }
        plugins.extend(found);
    }
    if plugins.is_empty() {
        return (plugins, project_root); // the common case: no file read for the disabled list
    }
    // AMCP: the project's hook file overrides the user's (dialects::amcp).
    let is_amcp = dialects::amcp::is_amcp;
    if plugins
        .iter()
        .any(|p| p.level == Level::Project && is_amcp(p))
    {
        plugins.retain(|p| p.level == Level::Project || !is_amcp(p));
    }
    let disabled = plugins::disabled(state);
    plugins.retain(|plugin| {
        let enabled = plugin.config.as_ref().map_or(true, |c| c.enabled);
        if !enabled || disabled.contains(&plugin.root) {
            outcome.skipped.push(format!(
                "{}:{}: disabled",
                plugin.level.as_str(),
                plugin.name
            ));
        }
        enabled && !disabled.contains(&plugin.root)
    });
    (plugins, project_root)
}

/// The handlers this event runs, in plugin order: matching group, enabled, its `if` holding for
/// the tool call, not amplihack itself, each distinct command once.
fn candidates<'p>(
    plugins: &'p [Plugin],
    event: &HookEvent,
    state: &StateDir,
    cwd: &Path,
    (module_asks, python): (bool, Option<&str>),
    outcome: &mut Outcome,
) -> Vec<Candidate<'p>> {
    let target = event.matcher_target();
    let tool = event.tool();
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for plugin in plugins {
        let config = match &plugin.config {
            Ok(config) => config,
            Err(error) => {
                outcome
                    .problems
                    .push(format!("skipped invalid hook plugin: {error}"));
                continue;
            }
        };
        let groups = config.groups.iter().filter(|g| {
            g.event == event.name.as_str()
                && matcher::matches(g.matcher.as_deref(), target.as_deref())
        });
        for handler in groups.flat_map(|g| &g.handlers) {
            if let Kind::Rule(rule) = &handler.kind {
                // In-process: no process starts (dialects::proposal's `type: matcher`).
                if handler.enabled && rule.holds(tool.map(|t| (t.name.as_str(), &t.input))) {
                    let reply = rule.reply();
                    outcome.runs.push(Run {
                        plugin: plugin.name.clone(),
                        level: plugin.level,
                        command: handler.command.clone(),
                        priority: handler.priority,
                        detached: false,
                        finished: None,
                        reply: reply.clone(),
                        warning: None,
                    });
                    outcome.reply.merge(reply);
                }
                continue;
            }
            let applies = handler.enabled
                && !runs_amplihack_hooks(&handler.command)
                && handler.condition.as_deref().is_none_or(|rule| {
                    matcher::condition_holds(
                        rule,
                        tool.map(|t| t.name.as_str()),
                        tool.map(|t| &t.input),
                    )
                });
            if !applies {
                continue;
            }
            // What Claude Code refuses to run it reports as the hook's failure: so does amplihack
            // where it asks the model itself (Claude Code reports its own copy).
            let model_backed = matches!(handler.kind, Kind::Prompt(_) | Kind::Agent(_));
            if let Some(why) = model_backed
                .then(|| {
                    crate::handlers::prompt::refused_on(
                        &event.name,
                        matches!(handler.kind, Kind::Agent(_)),
                    )
                })
                .flatten()
            {
                if module_asks {
                    outcome
                        .problems
                        .push(format!("hook from {} failed to run: {why}", plugin.name));
                }
                continue;
            }
            if let Kind::Prompt(prompt) = &handler.kind {
                // A model answers it: the host's own (Claude Code runs its copy of the handler;
                // amplihack's Amplifier module asks the session's provider).
                outcome.reply.model_questions.push(ModelQuestion {
                    prompt: prompt.with_arguments(&event.raw),
                    model: prompt.model.clone(),
                    timeout_secs: handler.timeout_secs,
                    ..ModelQuestion::default()
                });
                continue;
            }
            if let (Kind::Agent(agent), true) = (&handler.kind, module_asks) {
                // A subagent the module runs with the session's provider (Claude Code runs its
                // own copy of the handler).
                outcome.reply.model_questions.push(ModelQuestion {
                    prompt: agent.with_arguments(&event.raw),
                    model: agent.model.clone(),
                    timeout_secs: handler.timeout_secs,
                    agent: true,
                    ..ModelQuestion::default()
                });
                continue;
            }
            if let (Kind::Llm(llm), true) = (&handler.kind, module_asks) {
                // The session's provider answers it, through amplihack's module; elsewhere
                // `amplihack-hooks --ask-model` asks Claude Code (below, as a process).
                outcome.reply.model_questions.push(ModelQuestion {
                    prompt: llm.render(
                        tool.map(|t| t.name.as_str()),
                        &tool.map_or(Value::Null, |t| t.input.clone()),
                    ),
                    model: Some(llm.model.clone()),
                    timeout_secs: handler.timeout_secs,
                    max_tokens: Some(llm.max_tokens),
                    cache: llm.cache,
                    on_failure: handler.on_failure.as_str().into(),
                    agent: false,
                });
                continue;
            }
            let data = plugin_data_dir(state, plugin);
            let plugin_cwd = crate::trust_scope::working_dir(plugin).unwrap_or(cwd.to_path_buf());
            let context = Context {
                plugin_root: &plugin.root,
                plugin_data: &data,
                hooks_dir: &plugin.hooks_dir,
                project_dir: &plugin_cwd,
            };
            // A kind amplihack cannot run here (prompt, agent, mcp_tool; http under Claude Code,
            // which runs its own copy) is skipped; `hooks validate` and `hooks list` say so.
            let argv = match (&handler.kind, python) {
                (Kind::Http(http), Some(python)) => http.amplifier_program(python),
                (kind, _) => match kind.program(&context) {
                    Ok(argv) => argv,
                    Err(_) => continue,
                },
            };
            let (command, shown) = match &handler.kind {
                Kind::Command(shell) => (
                    shell.shown(&context),
                    shell.as_claude_code_shows(&plugin.root.to_string_lossy()),
                ),
                _ => (handler.command.clone(), handler.command.clone()),
            };
            if candidates.iter().any(|c| c.command == command) {
                continue; // identical commands run once
            }
            candidates.push(Candidate {
                plugin,
                command,
                shown,
                argv,
                // Seconds, as Claude Code reads them (thousands are common); any size is safe.
                timeout: Duration::try_from_secs_f64(handler.timeout_secs).unwrap_or(Duration::MAX),
                priority: handler.priority,
                background: (handler.is_async || handler.rewake.is_some())
                    .then(|| handler.rewake.clone()),
                protocol: handler.protocol,
                on_failure: handler.on_failure,
                cwd: plugin_cwd,
            });
        }
    }
    candidates
}

/// Where handlers run (and `CLAUDE_PROJECT_DIR` for them).
fn handlers_dir(request: &Request<'_>, project_root: Option<PathBuf>) -> PathBuf {
    let var = request.var;
    let candidates: Vec<Option<PathBuf>> = amplihack_env::PROJECT_ROOT
        .iter()
        .map(|name| var(name).map(PathBuf::from))
        .chain([project_root, request.event.cwd.as_ref().map(PathBuf::from)])
        .collect();
    execute::working_dir(&candidates)
}

/// `CLAUDE_PLUGIN_DATA`: a plugin's own directory that outlives its updates, under amplihack's
/// state (Claude Code's is `~/.claude/plugins/data/<id>/`). A project's plugins are told apart by
/// their project.
fn plugin_data_dir(state: &StateDir, plugin: &Plugin) -> PathBuf {
    let name = match plugin.level {
        Level::User => format!("user-{}", plugin.name),
        Level::Project => format!(
            "project-{}-{:016x}",
            plugin.name,
            fnv1a(plugin.hooks_dir.as_os_str().as_encoded_bytes())
        ),
    };
    state.dir("plugin-data").join(name)
}

/// FNV-1a, 64 bits: stable across builds (a std hasher need not be).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where and with what environment handlers run, and the session env file around them.
struct Setting {
    state: StateDir,
    env: Vec<(String, String)>,
    env_file: PathBuf,
    /// The env file before SessionStart handlers ran (their exports are forwarded after).
    env_before: Option<String>,
    deadline: Instant,
}

impl Setting {
    fn new(
        request: &Request<'_>,
        state: &StateDir,
        session: Option<&str>,
        cwd: PathBuf,
    ) -> Setting {
        let env_file = session::env_file(state, session);
        let mut env: Vec<(String, String)> =
            vec![(amplihack_env::AMPLIHACK_FORWARDED.into(), "1".into())];
        for key in amplihack_env::PROJECT_ROOT {
            env.push((key.into(), cwd.to_string_lossy().into_owned()));
        }
        if let Some(session) = session {
            env.push((
                amplihack_env::AMPLIFIER_SESSION_ID.into(),
                session.to_string(),
            ));
        }
        // Claude Code hands what SessionStart handlers export to the Bash tool (sourced in its
        // shell), not to later hooks: so does amplihack under it (and reads nothing here). Amplifier's
        // hook-shell bridge hands them to later hooks: amplihack does too, evaluated as a shell would.
        if request.host == Host::Amplifier
            && let Ok(text) = std::fs::read_to_string(&env_file)
            && !text.trim().is_empty()
        {
            env.extend(session_exports(&text, &env_file, &cwd));
        }
        let mut env_before = None;
        if request.event.name == EventName::SessionStart {
            // Private: what plugins export may be secret.
            let _ = files::open_append(&env_file);
            for key in [
                amplihack_env::CLAUDE_ENV_FILE,
                amplihack_env::AMPLIFIER_ENV_FILE,
            ] {
                env.push((key.into(), env_file.to_string_lossy().into_owned()));
            }
            env_before = Some(std::fs::read_to_string(&env_file).unwrap_or_default());
        }
        Setting {
            state: state.clone(),
            env,
            env_file,
            env_before,
            deadline: Instant::now() + request.budget,
        }
    }

    fn finish(&self, var: &dyn Fn(&str) -> Option<String>) {
        if let Some(before) = &self.env_before {
            forward_exports(&self.env_file, before, var);
        }
    }
}

/// Starts a background handler; it never delays the answer.
fn start_in_background(
    candidate: &Candidate<'_>,
    setting: &Setting,
    background: &Background<'_>,
    request: &Request<'_>,
) -> Run {
    let event = request.event;
    let mut env = handler_env(&setting.env, candidate, &setting.state);
    env.extend(dialects::env(candidate.protocol, event, &candidate.cwd));
    let stdin = dialects::input(candidate.protocol, event, request.raw);
    let spawn = Spawn {
        label: &candidate.command,
        argv: &candidate.argv,
        cwd: &candidate.cwd,
        env: &env,
        stdin: &stdin, // the host's bytes (in the handler's dialect), as every handler gets them
        timeout: candidate.timeout,
    };
    let rewake = candidate.background.as_ref().and_then(Option::as_ref);
    let warning = background
        .start(&spawn, &event.name, &candidate.source(), rewake)
        .err()
        .map(|e| {
            format!(
                "async hook from {} could not start: {e}",
                candidate.plugin.name
            )
        });
    candidate.run(true, None, Reply::default(), warning)
}

/// Runs the other handlers: priorities in sequence (lower first), one priority's handlers in
/// parallel. A deny ends the event; an `updatedInput` is what the next priority receives.
fn run_in_order(
    candidates: &[Candidate<'_>],
    setting: &Setting,
    background: &Background<'_>,
    request: &Request<'_>,
    outcome: &mut Outcome,
) {
    let event = request.event;
    let mut stdin: Vec<u8> = request.raw.to_vec();
    let mut priorities: Vec<i64> = candidates.iter().map(|c| c.priority).collect();
    priorities.sort_unstable();
    priorities.dedup();
    for priority in priorities {
        let batch: Vec<&Candidate<'_>> = candidates
            .iter()
            .filter(|c| c.priority == priority && c.background.is_none())
            .collect();
        let left = setting.deadline.saturating_duration_since(Instant::now());
        // (how long it ran, its reply), in plugin order.
        let mut answers: Vec<(Duration, Reply)> = Vec::new();
        for (candidate, ran) in run_batch(&batch, setting, event, &stdin, left) {
            let finished = match ran {
                Ran::Finished(finished) => finished,
                Ran::Declared(handoff) => {
                    let env = handler_env(&setting.env, candidate, &setting.state);
                    let spawn = Spawn {
                        label: &candidate.command,
                        argv: &candidate.argv,
                        cwd: &candidate.cwd,
                        env: &env,
                        stdin: &stdin,
                        timeout: candidate.timeout,
                    };
                    let warning = background
                        .adopt(handoff, &spawn, &event.name, &candidate.source())
                        .err()
                        .map(|e| {
                            format!(
                                "async hook from {} could not be followed: {e}",
                                candidate.plugin.name
                            )
                        });
                    outcome
                        .runs
                        .push(candidate.run(true, None, Reply::default(), warning));
                    continue;
                }
            };
            // Another dialect's answer in Claude Code's words; its failure policy (dialects).
            let (finished, unreadable) = dialects::output(candidate.protocol, event, finished);
            // The plugin's id is read only for a block, the one answer that names it.
            let plugin_id = (finished.exit == Some(2))
                .then(|| plugin_id(candidate.plugin))
                .flatten();
            let origin = answer::Origin {
                plugin: &candidate.plugin.name,
                command: (candidate.protocol == Protocol::Claude).then_some(&*candidate.shown),
                plugin_id: plugin_id.as_deref(),
            };
            let (mut reply, warning) = answer::interpret(&event.name, &origin, &finished);
            let failed =
                unreadable.map(|why| format!("hook from {}: {why}", candidate.plugin.name));
            // A Claude Code handler fails closed as Claude Code counts failure (answer.rs).
            let mut on_failure = candidate.on_failure;
            if candidate.protocol == Protocol::Claude && on_failure == OnFailure::Block {
                on_failure = OnFailure::Warn;
                if let Some(reason) = answer::failure_block(&origin, &finished) {
                    reply = Reply::deny(reason);
                }
            }
            let (reply, warning) = dialects::on_failure(
                on_failure,
                &candidate.plugin.name,
                reply,
                failed.or(warning),
            );
            if let Some(warning) = &warning {
                outcome.problems.push(warning.clone());
            }
            if finished.truncated {
                outcome.problems.push(format!(
                    "output of hook from {} was over {} bytes; the rest was dropped",
                    candidate.plugin.name,
                    execute::OUTPUT_CAP
                ));
            }
            answers.push((finished.duration, reply.clone()));
            outcome
                .runs
                .push(candidate.run(false, Some(finished), reply, warning));
        }
        let merged_here = merge_batch(&event.name, answers);
        let denied = merged_here.decision == Some(Decision::Deny);
        if let Some(input) = &merged_here.updated_input {
            stdin = with_tool_input(&event.raw, input);
        }
        outcome.reply.merge(merged_here);
        if denied {
            break; // a deny ends the event: later priorities do not run
        }
    }
}

/// The id Claude Code gives a plugin directory it loads with `--plugin-dir`: its manifest's
/// name (else the directory's), `@inline`. A level's own hooks file is no plugin: `None`.
fn plugin_id(plugin: &Plugin) -> Option<String> {
    if plugin.root == plugin.hooks_dir {
        return None;
    }
    let manifest = crate::discovery::read_small(&plugin.root.join(crate::discovery::MANIFEST)).ok();
    let name = manifest
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|m| m.get("name").and_then(Value::as_str).map(str::to_string))
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| plugin.name.clone());
    Some(format!("{name}@inline"))
}

/// One batch's answers merged, in plugin order, as Claude Code 2.1.328 merges parallel handlers
/// (observed with --plugin-dir): contexts and messages are all kept; when several block, what the
/// model (or the user) is told depends on the event. PreToolUse and the others: the reason of the
/// handler that finished last. UserPromptSubmit: that of the first to finish (it ends the prompt).
/// Stop: every reason, in the order they finished, each its own `Stop hook feedback:` (Claude
/// Code adds that label to the first; the others carry it in the text).
fn merge_batch(event: &EventName, mut answers: Vec<(Duration, Reply)>) -> Reply {
    let mut blockers: Vec<(Duration, Option<String>)> = answers
        .iter()
        .filter(|(_, reply)| reply.decision == Some(Decision::Deny))
        .map(|(took, reply)| (*took, reply.reason.clone()))
        .collect();
    blockers.sort_by_key(|(took, _)| *took); // stable: ties keep plugin order
    let reason = match event {
        EventName::Stop => Some(
            blockers
                .iter()
                .filter_map(|(_, reason)| reason.as_deref())
                .collect::<Vec<_>>()
                .join("\nStop hook feedback:\n"),
        )
        .filter(|joined| !joined.is_empty()),
        EventName::UserPromptSubmit => blockers.first().and_then(|(_, r)| r.clone()),
        _ => blockers.last().and_then(|(_, r)| r.clone()),
    };
    let mut merged = Reply::default();
    for (_, reply) in answers.drain(..) {
        merged.merge(reply);
    }
    if !blockers.is_empty() && merged.decision == Some(Decision::Deny) {
        merged.reason = reason;
    }
    merged
}

/// One priority's handlers, in parallel, each bounded by its timeout and the time left.
fn run_batch<'c, 'p>(
    batch: &[&'c Candidate<'p>],
    setting: &Setting,
    event: &HookEvent,
    stdin: &[u8],
    left: Duration,
) -> Vec<(&'c Candidate<'p>, Ran)> {
    let envs: Vec<Vec<(String, String)>> = batch
        .iter()
        .map(|candidate| {
            let mut env = handler_env(&setting.env, candidate, &setting.state);
            env.extend(dialects::env(candidate.protocol, event, &candidate.cwd));
            env
        })
        .collect();
    // Each handler's stdin in its dialect (the host's bytes for Claude Code's).
    let inputs: Vec<Vec<u8>> = batch
        .iter()
        .map(|candidate| match candidate.protocol {
            Protocol::Claude => Vec::new(),
            protocol => dialects::input(protocol, event, stdin),
        })
        .collect();
    let spawns: Vec<Spawn<'_>> = batch
        .iter()
        .zip(&envs)
        .zip(&inputs)
        .map(|((candidate, env), input)| Spawn {
            label: &candidate.command,
            argv: &candidate.argv,
            cwd: &candidate.cwd,
            env,
            stdin: match candidate.protocol {
                Protocol::Claude => stdin,
                _ => input,
            },
            timeout: candidate.timeout.min(left),
        })
        .collect();
    batch
        .iter()
        .copied()
        .zip(execute::run_all(&spawns, true))
        .collect()
}

fn handler_env(
    base: &[(String, String)],
    candidate: &Candidate<'_>,
    state: &StateDir,
) -> Vec<(String, String)> {
    let plugin = candidate.plugin;
    let mut env = base.to_vec();
    if plugin.level == Level::Project {
        // Later entries win: the project root trust resolved the plugin's paths against.
        for key in amplihack_env::PROJECT_ROOT {
            env.push((key.into(), candidate.cwd.to_string_lossy().into_owned()));
        }
        // Running a trusted Python plugin must not add `__pycache__` files, which trust covers.
        env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
    }
    let data = plugin_data_dir(state, plugin);
    // Created when a handler of the plugin runs, as Claude Code creates it; a failure leaves the
    // handler to find it missing.
    let _ = std::fs::create_dir_all(&data);
    env.push((
        amplihack_env::CLAUDE_PLUGIN_DATA.into(),
        data.to_string_lossy().into_owned(),
    ));
    env.push((
        amplihack_env::CLAUDE_PLUGIN_ROOT.into(),
        plugin.root.to_string_lossy().into_owned(),
    ));
    env.push((
        amplihack_env::AMPLIFIER_HOOKS_DIR.into(),
        plugin.hooks_dir.to_string_lossy().into_owned(),
    ));
    env
}

/// The host's event with `tool_input` replaced (keys and their order otherwise kept).
fn with_tool_input(raw: &serde_json::Map<String, Value>, input: &Value) -> Vec<u8> {
    let mut map = raw.clone();
    let key = if map.contains_key("toolInput") && !map.contains_key("tool_input") {
        "toolInput"
    } else {
        "tool_input"
    };
    map.insert(key.into(), input.clone());
    serde_json::to_vec(&Value::Object(map)).unwrap_or_default()
}

/// What SessionStart plugins exported also reaches the host's own env file (Claude Code sources it
/// before each Bash command), as it would had the plugin been registered with Claude Code.
fn forward_exports(env_file: &Path, before: &str, var: &dyn Fn(&str) -> Option<String>) {
    let after = std::fs::read_to_string(env_file).unwrap_or_default();
    let added = after.strip_prefix(before).unwrap_or(&after);
    let Some(host_file) = var(amplihack_env::CLAUDE_ENV_FILE).map(PathBuf::from) else {
        return;
    };
    if added.trim().is_empty() || host_file == env_file {
        return;
    }
    let mut text = added.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&host_file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
}

fn notify_untrusted(
    state: &StateDir,
    session: Option<&str>,
    (project, plugins): (&Path, &[Plugin]),
    why: crate::trust_scope::NotRun,
    outcome: &mut Outcome,
) {
    use crate::trust_scope::NotRun;
    let key = match &why {
        NotRun::Untrusted(trust::Untrusted::Never) => format!("untrusted:{}", project.display()),
        NotRun::Untrusted(trust::Untrusted::Changed(file)) => {
            format!("changed:{}:{file}", project.display())
        }
        NotRun::Refused(refusal) => format!("refused:{}:{refusal}", project.display()),
    };
    let first = session::update(state, session, |s| s.first_notice(&key)).unwrap_or(true);
    if !first {
        return;
    }
    // Where they are: `.amplifier/hooks`, `.amcp`, or both (an AMCP-only project has no
    // `.amplifier/hooks` to review).
    let mut places: Vec<String> = Vec::new();
    for plugin in plugins {
        let place = if dialects::amcp::is_amcp(plugin) {
            &plugin.root
        } else {
            &plugin.hooks_dir
        };
        let place = place.display().to_string();
        if !places.contains(&place) {
            places.push(place);
        }
    }
    let quoted = amplihack_protocol::command::shell_quote(&project.to_string_lossy());
    let message = match &why {
        NotRun::Refused(refusal) => format!(
            "amplihack: the {} hook plugin(s) in {} were skipped: trust cannot cover what they run: {refusal}",
            plugins.len(),
            places.join(" and "),
        ),
        NotRun::Untrusted(why) => {
            let what = match why {
                trust::Untrusted::Never => "are not trusted".to_string(),
                trust::Untrusted::Changed(file) => {
                    format!("changed since you trusted them ({file})")
                }
            };
            format!(
                "amplihack: {} hook plugin(s) in {} {what} and were skipped. Review them, then run: amplihack hooks trust --project {quoted}",
                plugins.len(),
                places.join(" and "),
            )
        }
    };
    outcome.problems.push(message.clone());
    outcome.reply.system_message = Some(message);
}

fn audit_runs(
    state: &StateDir,
    event: &HookEvent,
    session: Option<&str>,
    runs: &[Run],
    problems: &mut Vec<String>,
) {
    let records: Vec<Value> = runs
        .iter()
        .map(|run| {
            let finished = run.finished.as_ref();
            json!({
                "time": unix_time_millis(),
                "session": session,
                "event": event.name.as_str(),
                "plugin": format!("{}:{}", run.level.as_str(), run.plugin),
                "command": run.command,
                "priority": run.priority,
                "exit": finished.and_then(|f| f.exit),
                "duration_ms": finished.map(|f| f.duration.as_secs_f64() * 1000.0),
                "decision": run.reply.decision.map(|d| d.as_str()),
                "timed_out": finished.is_some_and(|f| f.timed_out),
                "output_cut": finished.is_some_and(|f| f.truncated),
                "async": run.detached,
            })
        })
        .collect();
    if let Err(e) = audit::append(state, &records) {
        problems.push(format!("audit log unavailable: {e}"));
    }
}

/// Seconds since the epoch, with milliseconds: `1763819420.123`.
fn unix_time_millis() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:03}", now.as_secs(), now.subsec_millis())
}

/// Caps the total context at [`CONTEXT_CAP`] characters: past it, the whole text goes to a file
/// under `<state>/context/` and the reply carries its start and the file's path instead.
pub fn cap_context(reply: &mut Reply, state: Option<&StateDir>, session: Option<&str>) {
    let texts = (reply.plain_context.iter())
        .chain(&reply.context)
        .chain(&reply.unlabelled_context);
    let total: usize = texts.clone().map(|c| c.chars().count()).sum::<usize>()
        + texts.count().saturating_sub(1) * 2;
    if total <= CONTEXT_CAP {
        return;
    }
    let full = reply.all_context().join("\n\n");
    reply.plain_context.clear();
    reply.unlabelled_context.clear();
    let saved = state.and_then(|state| {
        let stamp = amplihack_state::time::now_unix().as_nanos();
        let path = state
            .context_dir()
            .join(format!("{}-{stamp}.md", session_key(session)));
        files::replace(&path, full.as_bytes()).ok().map(|()| path)
    });
    let note = match &saved {
        Some(path) => format!(
            "\n\n[context cut at {CONTEXT_CAP} characters; all {total} are in {}]",
            path.display()
        ),
        None => format!("\n\n[context cut at {CONTEXT_CAP} characters of {total}]"),
    };
    let keep = CONTEXT_CAP.saturating_sub(note.chars().count());
    let head: String = full.chars().take(keep).collect();
    reply.context = vec![format!("{head}{note}")];
}
