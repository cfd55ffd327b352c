//! `amplihack hooks …`: managing the user's own hook plugins in `.amplifier/hooks/`.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use amplihack_engine::config;
use amplihack_engine::discovery::{self, Level, Plugin};
use amplihack_protocol::{EventName, HookEvent, Host, table};
use amplihack_runtime::context::Context as RuntimeContext;
use amplihack_runtime::pipeline;
use amplihack_state::{StateDir, plugins, trust};
use serde_json::{Value, json};

use crate::commands::{CommandError, Outcome};
use crate::registration;
use crate::safe_file::{self, EditOptions, NewContent};
use crate::scopes::Locations;

pub struct Context {
    pub locations: Locations,
}

impl Context {
    /// The project is found as the hook engine finds it: the nearest directory holding
    /// `.amplifier/hooks` at or above `start` (below the home directory), else the git work tree,
    /// so `amplihack hooks trust` trusts exactly the plugins the hooks would run, nested projects
    /// and parent directories included.
    pub fn new(start: &Path) -> Result<Context, CommandError> {
        let mut locations = Locations::from_env(start)?;
        let start = if start.is_absolute() {
            start.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(start)
        };
        if let Some(project) = discovery::project_with_hooks(&start, Some(&locations.home)) {
            locations.project = project;
        }
        Ok(Context { locations })
    }

    pub(crate) fn user_dir(&self) -> PathBuf {
        self.locations.home.join(".amplifier/hooks")
    }

    pub(crate) fn project_dir(&self) -> PathBuf {
        self.locations.project.join(".amplifier/hooks")
    }

    pub(crate) fn levels(&self) -> Vec<(Level, PathBuf)> {
        let mut levels = vec![(Level::User, self.user_dir())];
        if !discovery::same_dir(&self.project_dir(), &self.user_dir()) {
            levels.push((Level::Project, self.project_dir()));
        }
        levels
    }

    pub(crate) fn plugins(&self) -> Vec<Plugin> {
        self.levels()
            .iter()
            .flat_map(|(level, dir)| discovery::load_level(dir, *level))
            .collect()
    }

    pub(crate) fn state(&self) -> StateDir {
        self.locations.state()
    }

    /// Every file the project's plugins run: what trusting them covers.
    pub(crate) fn project_files(&self) -> Vec<PathBuf> {
        let plugins = discovery::load_level(&self.project_dir(), Level::Project);
        amplihack_engine::trust_scope::files_to_trust(&self.locations.project, &plugins)
    }

    pub(crate) fn project_trusted(&self) -> bool {
        trust::is_trusted(
            &self.state(),
            &self.locations.project,
            &self.project_files(),
        )
    }
}

fn outcome_of(command: &str, text: String, json: Value, code: i32) -> Outcome {
    let mut json = json;
    json["command"] = json!(format!("hooks {command}"));
    Outcome { text, json, code }
}

pub fn list(ctx: &Context) -> Result<Outcome, CommandError> {
    let disabled = plugins::disabled(&ctx.state());
    let trusted = ctx.project_trusted();
    let (version, registered, claude_registered) = crate::plugin_events::delivery(ctx);
    let mut text = String::new();
    let mut items = Vec::new();
    for (level, dir) in ctx.levels() {
        text.push_str(&format!("{} level: {}\n", level.as_str(), dir.display()));
        let plugins = discovery::load_level(&dir, level);
        if plugins.is_empty() {
            text.push_str("  (no plugins)\n");
        }
        for plugin in plugins {
            let is_disabled =
                disabled.contains(&plugin.root) || plugin.config.as_ref().is_ok_and(|c| !c.enabled);
            // What does not reach the plugin: events no host delivers (under Claude Code, when
            // amplihack is registered there), and handler kinds amplihack does not run.
            let undelivered = if claude_registered {
                crate::plugin_events::undelivered(&plugin, version, &registered)
            } else {
                Vec::new()
            };
            let not_run: Vec<String> = plugin
                .config
                .as_ref()
                .map(|c| c.skipped.clone())
                .unwrap_or_default();
            let state = match (&plugin.config, level, trusted, is_disabled) {
                (Err(_), ..) => "invalid",
                (_, _, _, true) => "disabled",
                (_, Level::Project, false, _) => "untrusted",
                _ if !undelivered.is_empty() || !not_run.is_empty() => "partial",
                _ => "active",
            };
            let events: Vec<String> = match &plugin.config {
                Ok(c) => c
                    .groups
                    .iter()
                    .map(|g| {
                        format!(
                            "{}{}",
                            g.event,
                            g.matcher
                                .as_ref()
                                .map(|m| format!("({m})"))
                                .unwrap_or_default()
                        )
                    })
                    .collect(),
                Err(e) => vec![e.to_string()],
            };
            text.push_str(&format!(
                "  {:<24} {:<9} {}\n",
                plugin.name,
                state,
                events.join(", ")
            ));
            for (event, why) in &undelivered {
                text.push_str(&format!("    {event} never reaches it: {why}\n"));
            }
            for note in &not_run {
                text.push_str(&format!("    not run: {note}\n"));
            }
            let undelivered_json: Vec<Value> = undelivered
                .iter()
                .map(|(event, why)| json!({"event": event, "why": why}))
                .collect();
            items.push(json!({"name": plugin.name, "level": level.as_str(), "file": plugin.file, "state": state, "events": events, "undelivered": undelivered_json, "not_run": not_run}));
        }
    }
    Ok(outcome_of("list", text, json!({"plugins": items}), 0))
}

pub fn validate(ctx: &Context, files: &[PathBuf]) -> Result<Outcome, CommandError> {
    let targets: Vec<PathBuf> = if files.is_empty() {
        ctx.plugins().into_iter().map(|p| p.file).collect()
    } else {
        files.to_vec()
    };
    let mut text = String::new();
    let mut results = Vec::new();
    let mut invalid = 0;
    for file in &targets {
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| format!("{}: cannot be read: {e}", file.display()))
            .and_then(|t| discovery::parse_file(file, &t).map_err(|e| e.to_string()));
        match parsed {
            Ok(config) => {
                text.push_str(&format!("ok: {}\n", file.display()));
                for note in &config.skipped {
                    text.push_str(&format!("  note: {note}\n"));
                }
                results.push(json!({"file": file, "valid": true, "notes": config.skipped}));
            }
            Err(error) => {
                invalid += 1;
                text.push_str(&format!("invalid: {error}\n"));
                results.push(json!({"file": file, "valid": false, "error": error}));
            }
        }
    }
    if targets.is_empty() {
        text.push_str("no hook plugins found\n");
    }
    Ok(outcome_of(
        "validate",
        text,
        json!({"files": results, "invalid": invalid}),
        i32::from(invalid > 0),
    ))
}

pub struct TestArgs {
    pub event: String,
    pub tool: Option<String>,
    pub input: Option<String>,
    pub payload: Option<PathBuf>,
    pub host: Host,
}

pub fn test(ctx: &Context, args: &TestArgs) -> Result<Outcome, CommandError> {
    let name = EventName::parse(&args.event);
    if !name.is_known() {
        return Err(CommandError(format!(
            "unknown event `{}`: use a Claude Code event name such as PreToolUse, UserPromptSubmit or SessionStart",
            args.event
        )));
    }
    let payload: Value = match &args.payload {
        Some(file) => {
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            serde_json::from_str(&text)
                .map_err(|e| format!("{}: not valid JSON: {e}", file.display()))?
        }
        None => sample_event(&name, ctx, args)?,
    };
    let raw = serde_json::to_vec(&payload).unwrap_or_default();
    let mut event = HookEvent::parse(&raw, Some(name.clone()))
        .map_err(|e| format!("the sample event is invalid: {e}"))?;
    let host = args.host;
    let overrides = HashMap::from([
        (
            "CLAUDE_PROJECT_DIR".to_string(),
            ctx.locations.project.to_string_lossy().into_owned(),
        ),
        (
            "HOME".to_string(),
            ctx.locations.home.to_string_lossy().into_owned(),
        ),
    ]);
    let runtime_ctx = RuntimeContext::with_overrides(host, overrides, &ctx.locations.project);
    if event.session_id.is_none() && host == Host::Amplifier {
        event.session_id = runtime_ctx.var("AMPLIFIER_SESSION_ID");
    }
    // The event's registered built-ins and its plugins, exactly as the binary runs them.
    let hook = table::find("dispatch").ok_or("the hook table has no `dispatch` row")?;
    let outcome = pipeline::run(&pipeline::Call {
        hook,
        event: &event,
        raw: &raw,
        ctx: &runtime_ctx,
        deadline: Instant::now() + Duration::from_secs(60),
    });
    let builtins: Vec<&str> = hook
        .builtins_for(&event.name, host)
        .iter()
        .map(|b| b.name())
        .collect();
    let result = outcome.forwarded.unwrap_or_default();
    let mut text = format!(
        "event {}: {} handler(s) ran\n",
        event.name,
        result.runs.len()
    );
    let mut runs = Vec::new();
    for run in &result.runs {
        let f = run.finished.as_ref();
        let exit = if run.detached {
            "started (async)".to_string()
        } else if f.is_none() {
            "evaluated in-process (no process)".to_string() // a rule (dialects::proposal)
        } else {
            f.and_then(|f| f.exit)
                .map_or("killed".into(), |c| format!("exit {c}"))
        };
        text.push_str(&format!(
            "  {}:{} [priority {}] {}\n    {exit} in {:.0} ms; decision: {}\n",
            run.level.as_str(),
            run.plugin,
            run.priority,
            run.command,
            f.map_or(0.0, |f| f.duration.as_secs_f64() * 1000.0),
            run.reply.decision.map_or("none", |d| d.as_str()),
        ));
        for (label, stream) in [
            ("stdout", f.map(|f| f.stdout.trim())),
            ("stderr", f.map(|f| f.stderr.trim())),
        ] {
            if let Some(s) = stream.filter(|s| !s.is_empty()) {
                text.push_str(&format!(
                    "    {label}: {}\n",
                    s.lines().next().unwrap_or_default()
                ));
            }
        }
        runs.push(json!({"plugin": format!("{}:{}", run.level.as_str(), run.plugin), "command": run.command, "priority": run.priority,
            "exit": f.and_then(|f| f.exit), "timed_out": f.is_some_and(|f| f.timed_out), "async": run.detached,
            "stdout": f.map(|f| f.stdout.clone()), "stderr": f.map(|f| f.stderr.clone()), "decision": run.reply.decision.map(|d| d.as_str())}));
    }
    for skipped in &result.skipped {
        text.push_str(&format!("  skipped {skipped}\n"));
    }
    for problem in &outcome.problems {
        text.push_str(&format!("  problem: {problem}\n"));
    }
    let rendered = pipeline::render(host, &event, &outcome.reply).stdout;
    text.push_str(&format!(
        "built-ins: {}\nreply to {}: {}\n",
        if builtins.is_empty() {
            "none".to_string()
        } else {
            builtins.join(", ")
        },
        match host {
            Host::ClaudeCode => "Claude Code",
            Host::Amplifier => "Amplifier",
        },
        rendered.as_deref().unwrap_or("(nothing)")
    ));
    let reply = rendered
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .unwrap_or(Value::Null);
    Ok(outcome_of(
        "test",
        text,
        json!({"event": event.name.as_str(), "host": host.name(), "payload": payload, "builtins": builtins, "runs": runs, "skipped": result.skipped, "problems": outcome.problems,
               "reply": reply}),
        0,
    ))
}

fn sample_event(name: &EventName, ctx: &Context, args: &TestArgs) -> Result<Value, CommandError> {
    let mut event = json!({"hook_event_name": name.as_str(), "session_id": "amplihack-hooks-test", "cwd": ctx.locations.project});
    let tool_input: Value = match &args.input {
        Some(text) => {
            serde_json::from_str(text).map_err(|e| format!("--input is not valid JSON: {e}"))?
        }
        None => json!({"command": "true"}),
    };
    match name {
        EventName::PreToolUse
        | EventName::PermissionRequest
        | EventName::PostToolUse
        | EventName::PostToolUseFailure => {
            event["tool_name"] = json!(args.tool.clone().unwrap_or_else(|| "Bash".into()));
            event["tool_input"] = tool_input;
            if *name == EventName::PostToolUse {
                event["tool_response"] = json!({});
            }
            if *name == EventName::PostToolUseFailure {
                event["error"] = json!("Exit code 1");
            }
        }
        EventName::UserPromptSubmit => event["prompt"] = json!("amplihack hooks test"),
        EventName::SessionStart => event["source"] = json!("startup"),
        EventName::SessionEnd => event["reason"] = json!("other"),
        EventName::Stop | EventName::SubagentStop => event["stop_hook_active"] = json!(false),
        EventName::PreCompact | EventName::PostCompact => event["trigger"] = json!("manual"),
        EventName::Notification => {
            event["message"] = json!("amplihack hooks test");
            event["notification_type"] = json!("idle_prompt");
        }
        _ => {}
    }
    Ok(event)
}

/// Marks plugins named `name` disabled (or enabled again) in `<state>/plugins.json`; the plugin's
/// own files are not touched, so a project's trust is not disturbed.
pub fn set_enabled(ctx: &Context, name: &str, enabled: bool) -> Result<Outcome, CommandError> {
    let roots: Vec<PathBuf> = ctx
        .plugins()
        .into_iter()
        .filter(|p| p.name == name)
        .map(|p| p.root)
        .collect();
    if roots.is_empty() {
        return Err(CommandError(format!(
            "no hook plugin named `{name}` (see `amplihack hooks list`)"
        )));
    }
    let refs: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
    plugins::set_disabled(&ctx.state(), &refs, !enabled)?;
    let verb = if enabled { "enabled" } else { "disabled" };
    let text = roots
        .iter()
        .map(|r| format!("{verb}: {}\n", r.display()))
        .collect();
    Ok(outcome_of(
        if enabled { "enable" } else { "disable" },
        text,
        json!({"plugins": roots, "enabled": enabled}),
        0,
    ))
}

fn record_trust(
    ctx: &Context,
    fingerprint: Option<trust::Fingerprint>,
) -> Result<(), CommandError> {
    trust::set(&ctx.state(), &ctx.locations.project, fingerprint)?;
    Ok(())
}

pub fn trust(ctx: &Context, trusted: bool) -> Result<Outcome, CommandError> {
    let files = ctx.project_files();
    if trusted && files.is_empty() {
        return Err(CommandError(format!(
            "{} has no hook plugins to trust",
            ctx.project_dir().display()
        )));
    }
    record_trust(ctx, trusted.then(|| trust::fingerprint(&files)))?;
    let mut text = String::new();
    for file in &files {
        text.push_str(&format!(
            "{}: {}\n",
            if trusted { "trusted" } else { "untrusted" },
            file.display()
        ));
    }
    if trusted {
        text.push_str("These files' hooks now run in this project; any change to them needs `amplihack hooks trust` again.\n");
    }
    Ok(outcome_of(
        if trusted { "trust" } else { "untrust" },
        text,
        json!({"project": ctx.locations.project, "files": files, "trusted": trusted}),
        0,
    ))
}

fn level_dir(ctx: &Context, project: bool) -> PathBuf {
    if project {
        ctx.project_dir()
    } else {
        ctx.user_dir()
    }
}

/// After writing into the project level: keep the project trusted when it was trusted before
/// (the user asked for exactly this change); otherwise say how to trust it.
fn retrust_after(
    ctx: &Context,
    was_trusted: bool,
    project: bool,
    text: &mut String,
) -> Result<(), CommandError> {
    if !project {
        return Ok(());
    }
    if was_trusted || discovery::plugin_files(&ctx.project_dir()).len() == 1 {
        record_trust(ctx, Some(trust::fingerprint(&ctx.project_files())))?;
        text.push_str("the project's hooks stay trusted\n");
    } else {
        text.push_str("project plugins run after `amplihack hooks trust`\n");
    }
    Ok(())
}

/// Copies the plugin at `root` into `to`. Symbolic links are kept as links when they point
/// inside the plugin and left out (listed in the returned names) when they point outside it or
/// nowhere: a plugin never pulls in files from elsewhere. `.git` is not copied.
fn copy_plugin(
    root: &Path,
    from: &Path,
    to: &Path,
    skipped: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (path, target) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            let inside = path.canonicalize().is_ok_and(|real| real.starts_with(root));
            if inside {
                std::os::unix::fs::symlink(fs_err::read_link(&path)?, &target)?;
            } else {
                skipped.push(path);
            }
        } else if kind.is_dir() {
            copy_plugin(root, &path, &target, skipped)?;
        } else if kind.is_file() {
            fs_err::copy(&path, &target)?;
            // Never group- or world-writable, whatever the source's mode.
            let mode = fs_err::metadata(&target)?.permissions().mode() & !0o022;
            fs_err::set_permissions(&target, std::fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

fn private(dir: &Path) -> std::io::Result<()> {
    amplihack_state::files::private_dir(dir).map_err(std::io::Error::other)
}

/// A plugin name is one ordinary directory name.
fn valid_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name != discovery::AMPLIHACK_DIR
        && !name.starts_with('-')
        && !name.contains(['/', '\\', '\0'])
}

pub struct InstallArgs {
    pub source: String,
    pub name: Option<String>,
    pub project: bool,
    pub force: bool,
}

/// Copies a plugin (a directory, or a git repository cloned shallowly) into a hooks level, after
/// validating it.
pub fn install(ctx: &Context, args: &InstallArgs) -> Result<Outcome, CommandError> {
    let clone_dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let local = Path::new(&args.source);
    let source = if local.is_dir() {
        local.to_path_buf()
    } else {
        let target = clone_dir.path().join("plugin");
        // `--` so a source that begins with `-` can never be read as an option of git's.
        let status = Command::new("git")
            .args([
                "clone",
                "--quiet",
                "--depth",
                "1",
                "--no-recurse-submodules",
                "--",
            ])
            .arg(&args.source)
            .arg(&target)
            .status();
        if !status.is_ok_and(|s| s.success()) {
            return Err(CommandError(format!(
                "`{}` is neither a directory nor a git repository that `git clone` could fetch",
                args.source
            )));
        }
        target
    };
    let root = source
        .canonicalize()
        .map_err(|e| format!("{}: {e}", source.display()))?;
    let hooks_file = [root.join("hooks.json"), root.join("hooks/hooks.json")]
        .into_iter()
        .find(|f| f.is_file())
        .ok_or_else(|| {
            CommandError(format!(
                "{} has no hooks.json (or hooks/hooks.json, the Claude Code plugin layout)",
                args.source
            ))
        })?;
    if !hooks_file
        .canonicalize()
        .is_ok_and(|real| real.starts_with(&root))
    {
        return Err(CommandError(format!(
            "{} is a link to a file outside the plugin; refusing to install it",
            hooks_file.display()
        )));
    }
    let text = std::fs::read_to_string(&hooks_file)
        .map_err(|e| format!("{}: {e}", hooks_file.display()))?;
    config::parse(&hooks_file, &text).map_err(|e| e.to_string())?;
    let name = match &args.name {
        Some(name) => name.clone(),
        None => {
            let base = args
                .source
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default();
            base.trim_end_matches(".git").to_string()
        }
    };
    if !valid_plugin_name(&name) {
        return Err(CommandError(format!(
            "`{name}` cannot be a plugin name (one directory name: not `.`, `..`, `amplihack`, nor with `/`); pass --name NAME"
        )));
    }
    let was_trusted = ctx.project_trusted();
    let level = level_dir(ctx, args.project);
    let target = level.join(&name);
    // Neither may contain the other: a copy into itself never ends, and --force would delete the
    // source before copying it.
    let level_real = level.canonicalize().unwrap_or_else(|_| level.clone());
    let target_real = level_real.join(&name);
    if target_real.starts_with(&root) || root.starts_with(&target_real) {
        return Err(CommandError(format!(
            "{} and the destination {} contain one another; copy the plugin somewhere else first",
            root.display(),
            target.display()
        )));
    }
    if target.symlink_metadata().is_ok() && !args.force {
        return Err(CommandError(format!(
            "{} already exists; pass --force to replace it",
            target.display()
        )));
    }
    // Copied next to its destination, then renamed into place: never half a plugin.
    private(&level).map_err(|e| e.to_string())?;
    let staging = tempfile::Builder::new()
        .prefix(".amplihack-install-")
        .tempdir_in(&level)
        .map_err(|e| format!("{}: {e}", level.display()))?;
    let mut skipped = Vec::new();
    copy_plugin(&root, &root, &staging.path().join("plugin"), &mut skipped)
        .map_err(|e| e.to_string())?;
    if target.symlink_metadata().is_ok() {
        let old = staging.path().join("old");
        fs_err::rename(&target, &old).map_err(|e| e.to_string())?;
    }
    fs_err::rename(staging.path().join("plugin"), &target).map_err(|e| e.to_string())?;
    let mut text = format!("installed {name} into {}\n", target.display());
    for link in &skipped {
        text.push_str(&format!(
            "left out {}: a link to outside the plugin\n",
            link.display()
        ));
    }
    retrust_after(ctx, was_trusted, args.project, &mut text)?;
    Ok(outcome_of(
        "install",
        text,
        json!({"name": name, "path": target, "links_left_out": skipped}),
        0,
    ))
}

/// Moves the user's own hooks (everything but amplihack's) from a Claude Code settings file into
/// a plugin, `<level>/claude-import/hooks.json`, or copies a Claude Code plugin's hooks.
pub fn import_claude(
    ctx: &Context,
    from: Option<&Path>,
    project: bool,
) -> Result<Outcome, CommandError> {
    let from = from
        .map(Path::to_path_buf)
        .unwrap_or_else(|| ctx.locations.claude_settings(crate::scopes::Scope::User));
    if from.is_dir() {
        return install(
            ctx,
            &InstallArgs {
                source: from.to_string_lossy().into_owned(),
                name: None,
                project,
                force: false,
            },
        );
    }
    let (_, settings) = safe_file::read_json(&from)?
        .ok_or_else(|| CommandError(format!("{}: no such settings file", from.display())))?;
    let mut imported = serde_json::Map::new();
    for (event, groups) in settings["hooks"].as_object().into_iter().flatten() {
        let mut kept_groups = Vec::new();
        for group in groups.as_array().into_iter().flatten() {
            let handlers: Vec<Value> = group["hooks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|h| {
                    h["command"]
                        .as_str()
                        .is_none_or(|c| registration::recognise(c).is_none())
                })
                .cloned()
                .collect();
            if !handlers.is_empty() {
                let mut group = group.clone();
                group["hooks"] = Value::Array(handlers);
                kept_groups.push(group);
            }
        }
        if !kept_groups.is_empty() {
            imported.insert(event.clone(), Value::Array(kept_groups));
        }
    }
    if imported.is_empty() {
        return Ok(outcome_of(
            "import-claude",
            format!("{}: no hooks of yours to import\n", from.display()),
            json!({"imported": 0}),
            0,
        ));
    }
    let plugin = json!({"description": format!("Imported from {} by amplihack hooks import-claude", from.display()), "hooks": imported});
    let target = level_dir(ctx, project).join("claude-import/hooks.json");
    let was_trusted = ctx.project_trusted();
    config::parse(&target, &plugin.to_string())
        .map_err(|e| format!("the imported hooks are not valid: {e}"))?;
    safe_file::edit_json(&target, &EditOptions::default(), |current| {
        let mut value = current
            .cloned()
            .filter(|v| v["hooks"].is_object())
            .unwrap_or_else(|| json!({"hooks": {}}));
        value["description"] = plugin["description"].clone();
        for (event, groups) in plugin["hooks"].as_object().into_iter().flatten() {
            let list = value["hooks"][event]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut merged = list;
            merged.extend(groups.as_array().cloned().unwrap_or_default());
            value["hooks"][event] = Value::Array(merged);
        }
        Ok(NewContent::Value(value))
    })?;
    // Then remove them from the settings file: only amplihack's entries stay there.
    safe_file::edit_json(&from, &EditOptions::default(), |current| {
        let mut value = current.cloned().unwrap_or_else(|| json!({}));
        if let Some(hooks) = value.get_mut("hooks").and_then(Value::as_object_mut) {
            for groups in hooks.values_mut() {
                if let Some(list) = groups.as_array_mut() {
                    list.retain_mut(|group| {
                        if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut)
                        {
                            handlers.retain(|h| {
                                h["command"]
                                    .as_str()
                                    .is_some_and(|c| registration::recognise(c).is_some())
                            });
                            !handlers.is_empty()
                        } else {
                            false
                        }
                    });
                }
            }
            hooks.retain(|_, groups| groups.as_array().is_some_and(|l| !l.is_empty()));
        }
        Ok(NewContent::Value(value))
    })?;
    let count: usize = imported
        .values()
        .map(|g| g.as_array().map_or(0, Vec::len))
        .sum();
    let mut text = format!(
        "moved {count} matcher group(s) from {} into {}\n",
        from.display(),
        target.display()
    );
    retrust_after(ctx, was_trusted, project, &mut text)?;
    Ok(outcome_of(
        "import-claude",
        text,
        json!({"imported": count, "from": from, "to": target}),
        0,
    ))
}
