//! `amplihack install`.

use std::path::{Path, PathBuf};

use amplihack_settings::amplifier_yaml;
use amplihack_state::manifest;

use super::render::render_changes;
use super::shared::{
    AMPLIFIER_EXCLUDE, amplifier_settings, bridge_of, diverging_scopes, exclude_from_git,
    git_tracked, is_bridge, managed_plugin_events, read_manifest, record_registrations,
    register_amplifier, register_known, starting_value, targets,
};
use super::{ChangeArgs, CommandError, Outcome, managed_hosts};
use crate::deploy;
use crate::hosts::HostChoice;
use crate::install_method::InstallMethod;
use crate::registration::{self, Host};
use crate::safe_file::{self, Action, EditOptions};
use crate::scopes::{Locations, Scope};

/// `amplihack install`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct InstallArgs {
    /// Where to register: your user settings, or this project's (shared or local)
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Which hosts to register with
    #[arg(long, value_enum, default_value = "all")]
    pub host: HostChoice,
    /// Where the binaries go [env: AMPLIHACK_BIN_DIR] [default: ~/.local/bin]
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    #[command(flatten)]
    pub change: ChangeArgs,
    /// With --scope managed: the events beyond amplihack's own that get an
    /// `amplihack-hooks dispatch` entry for users' plugins (EVENT[,EVENT...], `all` for every
    /// event the installed Claude Code knows, `none`; with --host codex, the events Codex
    /// delivers); each costs a process per event on every user's machine. Without it, the
    /// managed file's present ones are kept
    #[arg(long, value_name = "EVENTS", value_delimiter = ',')]
    pub plugin_events: Option<Vec<String>>,
    /// Send the audit records to OpenTelemetry (`amplihack log export --otlp`) from a systemd
    /// user timer, a launchd agent, or at each session's end (auto: what this machine runs);
    /// the OTEL_* settings of this environment are kept for it
    #[arg(long, value_enum, value_name = "WHERE", num_args = 0..=1, default_missing_value = "auto")]
    pub otel: Option<crate::otel::schedule::Via>,
    /// With --scope managed --host codex: also set `allow_managed_hooks_only = true` in
    /// /etc/codex/requirements.toml, so Codex runs no user or project hook but the managed ones
    #[arg(long)]
    pub allow_managed_hooks_only: bool,
    /// With --scope managed: write what IT pushes instead (`mdm`: macOS configuration profiles
    /// for Claude Code and Codex, a Windows .reg for Claude Code, the Linux files) under --out;
    /// nothing on this machine changes
    #[arg(long, value_enum, requires = "out")]
    pub emit: Option<crate::mdm::Emit>,
    /// Where --emit writes
    #[arg(long, value_name = "DIR", requires = "emit")]
    pub out: Option<PathBuf>,
    /// Refuse a tool call when amplihack-hooks is missing or crashes, where the host has a
    /// switch for it (Claude Code: `"onFailure": "block"` on the PreToolUse entry; Copilot: a
    /// guard that denies with the fix); the other hosts say they stay fail-open. Recorded: later
    /// installs, `doctor --fix` and `update` keep it until --fail-open
    #[arg(long, conflicts_with = "fail_open")]
    pub fail_closed: bool,
    /// Undo a recorded --fail-closed: a missing or crashing amplihack-hooks lets the tool run
    #[arg(long)]
    pub fail_open: bool,
}

/// The whole of `amplihack install`: the binaries and amplihack's registrations, then the
/// registrations the user's plugins need in Claude Code.
pub fn install(args: &InstallArgs, project: &Path) -> Result<Outcome, CommandError> {
    if let (Some(crate::mdm::Emit::Mdm), Some(out)) = (args.emit, &args.out) {
        return emit_mdm(args, out);
    }
    let outcome = install_own(args, project)?;
    let outcome = match crate::user_hooks::Context::new(project) {
        Ok(ctx) if !args.change.dry_run => {
            crate::plugin_events::with_sync_for(outcome, &ctx, args.host.claude())
        }
        _ => outcome,
    };
    match args.otel {
        Some(via) => {
            crate::otel::schedule::with_schedule(outcome, via, project, args.change.dry_run)
        }
        None => Ok(outcome),
    }
}

/// `--emit mdm --out DIR`: the forms for the machines, naming the binaries where `--bin-dir`
/// (default /usr/local/bin) puts them there.
fn emit_mdm(args: &InstallArgs, out: &Path) -> Result<Outcome, CommandError> {
    if args.scope != Scope::Managed {
        return Err(CommandError::Usage(
            "--emit mdm is for --scope managed; nothing was changed".into(),
        ));
    }
    let bin_dir = args
        .bin_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::managed::MANAGED_BIN_DIR));
    let binary = bin_dir.join(registration::HOOKS_BINARY);
    let written = crate::mdm::emit(out, &binary)?;
    let mut text = String::new();
    for path in &written {
        text.push_str(&format!("  wrote      {}\n", path.display()));
    }
    text.push_str(&format!(
        "each names {}: push the binaries amplihack and amplihack-hooks there with the same deployment\n",
        binary.display()
    ));
    Ok(Outcome {
        text,
        json: serde_json::json!({"command": "install", "emit": "mdm", "binary": binary, "written": written}),
        code: 0,
    })
}

fn install_own(args: &InstallArgs, project: &Path) -> Result<Outcome, CommandError> {
    let dry_run = args.change.dry_run;
    let locations = Locations::from_env(project)?;
    let managed = args.scope == Scope::Managed;
    // A scope the host lacks: refused before anything is touched (not a silent no-op).
    if let Some(host) = args.host.host()
        && let Some(refusal) = crate::hosts::spec(host).lacks(args.scope)
    {
        return Err(refusal.into());
    }
    let host = args.host;
    let managed_bin = (managed && std::env::var_os(amplihack_env::AMPLIHACK_BIN_DIR).is_none())
        .then(|| PathBuf::from(crate::managed::MANAGED_BIN_DIR));
    // Installed by a package manager (npm, pip, uv tool, pipx, cargo): the hosts run its native
    // binaries where it keeps them, unless another bin directory is asked for.
    let method = InstallMethod::current();
    let package_bin = (args.bin_dir.is_none()
        && managed_bin.is_none()
        && std::env::var_os(amplihack_env::AMPLIHACK_BIN_DIR).is_none_or(|d| d.is_empty())
        && method.registers_in_place())
    .then(|| deploy::source_dir().ok())
    .flatten();
    let bin_dir = deploy::bin_dir(
        args.bin_dir
            .as_deref()
            .or(managed_bin.as_deref())
            .or(package_bin.as_deref()),
        &locations.home,
    );
    // `--plugin-events`, checked against the installed Claude Code before anything is touched.
    let mut event_notes = Vec::new();
    if args.allow_managed_hooks_only && !(managed && host.host() == Some(Host::Codex)) {
        return Err(CommandError::Usage(
            "--allow-managed-hooks-only is for --scope managed --host codex (Claude Code's `allowManagedHooksOnly` is the organisation's to set in managed-settings.json); nothing was changed".into(),
        ));
    }
    // Codex and Copilot's managed files: written by `managed_hosts`, after the binaries.
    let machine_hosts: Vec<Host> = if managed {
        host.hosts(&locations)
            .into_iter()
            .filter(|h| managed_hosts::handles(*h, Scope::Managed))
            .collect()
    } else {
        Vec::new()
    };
    let codex_events = match &args.plugin_events {
        Some(requested) if managed && host.host() == Some(Host::Codex) => {
            let (events, notes) = managed_hosts::codex_plugin_events(requested)?;
            event_notes.extend(notes);
            Some(events)
        }
        _ => None,
    };
    let plugin_events = match &args.plugin_events {
        Some(_) if !managed => {
            return Err(crate::managed::PluginEventsError::NotManaged.into());
        }
        Some(_) if host.host() == Some(Host::Codex) => None,
        Some(requested) => {
            let version = crate::plugin_events::claude_version();
            let (events, notes) = crate::managed::plugin_events(requested, version)?;
            event_notes = notes;
            Some(events)
        }
        None => None,
    };
    let targets = targets(&locations, args.scope, host);
    // A project's host folder committed as a link (`.gemini -> ../elsewhere`) would take the
    // write outside the project: refused before anything is touched, for every host.
    for target in targets
        .iter()
        .cloned()
        .chain(targets.iter().filter_map(bridge_of))
    {
        if let Some((link, to)) = target.linked_out_of(&locations.project) {
            return Err(CommandError::refused(format!(
                "{} is a symbolic link (to {}), so installing {} at {} scope would write {} outside the project; replace the link with a directory of its own (or remove it), then run install again; nothing was changed",
                link.display(),
                to.display(),
                target.host.title(),
                target.scope.as_str(),
                target.path.display()
            )));
        }
    }
    // `--host all`: the hosts found that lack the scope are said, not silently skipped.
    let without_scope: Vec<&str> = host
        .hosts(&locations)
        .into_iter()
        .filter(|h| !crate::hosts::spec(*h).has(args.scope))
        .map(Host::title)
        .collect();
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let failure = crate::fail_closed::chosen(args.fail_closed, args.fail_open, &locations.state());

    // Refuse before touching anything: every file must parse and have a shape we can edit.
    let json_files = targets
        .iter()
        .filter(|t| crate::hosts::edits_json_hooks(t.host))
        .cloned()
        .chain(targets.iter().filter_map(bridge_of));
    // The user's files that have no `hooks` key yet: uninstall takes the one added out again.
    let mut hooks_key_added = Vec::new();
    // The user's empty event keys (`"Stop": []`): uninstall leaves them.
    let mut empty_events = Vec::new();
    // What was read, for the registration to reuse (Claude Code files).
    let mut read: Vec<(PathBuf, Option<(String, serde_json::Value)>)> = Vec::new();
    for target in json_files {
        let current = target.read_json()?;
        if let Some((_, serde_json::Value::Object(root))) = &current
            && !root.contains_key("hooks")
            && crate::hosts::edits_json_hooks(target.host)
        {
            hooks_key_added.push(target.path.clone());
        }
        if let Some((_, value)) = &current
            && crate::hosts::edits_json_hooks(target.host)
        {
            for event in registration::empty_events(value) {
                empty_events.push(manifest::EmptyEvent {
                    path: target.path.clone(),
                    event,
                });
            }
        }
        let mut probe = current
            .as_ref()
            .map_or_else(|| starting_value(target.host), |(_, v)| v.clone());
        registration::install_failing(&mut probe, &hooks_binary, target.host, failure)
            .and_then(|()| {
                if target.scope == Scope::Managed && target.host == Host::ClaudeCode {
                    managed_plugin_events(&mut probe, &hooks_binary, plugin_events.as_deref())
                } else {
                    Ok(())
                }
            })
            .map_err(|e| {
                CommandError::refused(format!(
                    "{}: {}; nothing was changed",
                    target.path.display(),
                    e.message()
                ))
            })?;
        if crate::hosts::edits_json_hooks(target.host) {
            read.push((target.path.clone(), current));
        }
    }

    for target in &targets {
        if let Some(bridge) = crate::hosts::bridge_file::of(target.host) {
            bridge.probe(target)?;
        }
    }
    for target in targets
        .iter()
        .filter(|t| crate::hosts::edits_toml_hooks(t.host))
    {
        crate::hosts::toml_hooks::probe(target)?;
        if !safe_file::read_text(&target.path)?
            .is_some_and(|t| crate::hosts::toml_hooks::has_hooks_key(&t))
        {
            hooks_key_added.push(target.path.clone());
        }
    }
    for target in &targets {
        if let Some(path) = amplifier_settings(target)
            && let Some(text) = safe_file::read_text(&path)?
        {
            amplifier_yaml::install_app(
                Some(&text),
                "file:///probe/amplihack/amplifier-bundle.yaml",
            )
            .map_err(|e| {
                CommandError::refused(format!("{}: {e}; nothing was changed", path.display()))
            })?;
        }
    }

    // The hosts' own directories this install is about to create: uninstall may take those.
    let created_dirs: Vec<PathBuf> = targets
        .iter()
        .map(|t| crate::hosts::home_dir(t.host, &locations))
        .filter(|dir| !dir.exists())
        .collect();
    let deployment = deploy::deploy(&bin_dir, dry_run)?;
    // The man pages and completions describe the binaries: written again when they changed,
    // or when one is missing.
    let recorded = read_manifest(&locations).docs;
    let docs_current = !recorded.is_empty()
        && recorded.iter().all(|p| p.exists())
        && deployment
            .copies
            .iter()
            .all(|(_, action)| *action != deploy::CopyAction::Copied);
    let docs = if dry_run || docs_current {
        Vec::new()
    } else {
        let data_home = deploy::data_home(&locations.home);
        crate::docs::user_files(&bin_dir, &data_home)
            .and_then(|files| crate::docs::install_files(&files))
            .map_err(|e| {
                CommandError::io(
                    "write the man pages and shell completions under",
                    data_home,
                    e,
                )
            })?
    };
    let bundle = if targets.iter().any(|t| t.host == Host::Amplifier) {
        let module = deploy::deploy_module(&locations.home, dry_run)?;
        Some(deploy::deploy_bundle(
            &locations.home,
            &module,
            &hooks_binary,
            dry_run,
        )?)
    } else {
        None
    };
    let options = EditOptions {
        dry_run,
        ..EditOptions::default()
    };
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    for machine_host in &machine_hosts {
        let request = managed_hosts::Request {
            binary: &hooks_binary,
            plugin_events: codex_events.as_deref(),
            hooks_only: args.allow_managed_hooks_only,
            dry_run,
            failure,
        };
        reports.push(managed_hosts::install(*machine_host, &request)?);
        if !dry_run {
            warnings.push(format!(
                "managed scope: every user's {} on this machine now runs {}, trusted by policy; users cannot turn these hooks off",
                machine_host.title(),
                hooks_binary.display()
            ));
        }
    }
    let created = read_manifest(&locations).created;
    for target in &targets {
        let written = match &bundle {
            Some(bundle) if target.host == Host::Amplifier => {
                register_amplifier(target, bundle, &hooks_binary, &options, &created)?
            }
            _ => {
                let known = read
                    .iter()
                    .position(|(path, _)| *path == target.path)
                    .map(|at| read.swap_remove(at).1);
                let report = register_known(
                    target,
                    &hooks_binary,
                    &options,
                    known,
                    plugin_events.as_deref(),
                    failure,
                )?;
                vec![(target.clone(), report)]
            }
        };
        for (file, report) in written {
            if let Some((problem, fix)) = crate::hosts::shadowed(file.host, &file.path) {
                warnings.push(format!("{problem}; {fix}"));
            }
            if report.action != Action::Unchanged && git_tracked(&file.path) {
                warnings.push(format!(
                    "{} is tracked by git and now holds this machine's paths ({}); teammates' machines differ: prefer --scope local, or keep the change out of commits",
                    file.path.display(),
                    bundle.as_deref().filter(|_| amplifier_settings(&file).is_some()).unwrap_or(&hooks_binary).display()
                ));
            }
            if is_bridge(&file)
                && !dry_run
                && let Some(note) = exclude_from_git(&locations.project, AMPLIFIER_EXCLUDE)
            {
                warnings.push(note);
            }
            if !dry_run
                && let Some((project, pattern)) = crate::hosts::bridge_file::of(file.host)
                    .and_then(|bridge| bridge.git_exclusion(&file))
                && let Some(note) = exclude_from_git(&project, &pattern)
            {
                warnings.push(note);
            }
            if !dry_run
                && report.action == Action::Created
                && let Some((project, pattern)) = crate::hosts::vibe::git_exclusion(&file)
                && let Some(note) = exclude_from_git(&project, pattern)
            {
                warnings.push(note);
            }
            reports.push((file, report));
        }
    }
    if !without_scope.is_empty() {
        let registered: Vec<&str> = targets
            .iter()
            .map(|t| t.host)
            .chain(machine_hosts.iter().copied())
            .map(Host::title)
            .collect();
        warnings.push(format!(
            "{} {} no {} scope: amplihack is registered for {} only",
            without_scope.join(", "),
            if without_scope.len() == 1 {
                "has"
            } else {
                "have"
            },
            args.scope.as_str(),
            registered.join(", ")
        ));
    }
    if managed && !dry_run && targets.iter().any(|t| t.host == Host::ClaudeCode) {
        warnings.push(format!(
            "managed scope: every user's Claude Code on this machine now runs {}; users cannot remove or turn off these hooks in their own settings",
            hooks_binary.display()
        ));
    }
    warnings.extend(event_notes);
    warnings.extend(crate::hosts::codex::take_notes());
    if managed
        && let Some(path) = targets
            .iter()
            .find(|t| t.host == Host::ClaudeCode)
            .map(|t| &t.path)
    {
        let events = safe_file::read_json(path)
            .ok()
            .flatten()
            .map(|(_, v)| amplihack_settings::plugin_events::registered(&v))
            .unwrap_or_default();
        let events = plugin_events.clone().filter(|_| dry_run).unwrap_or(events);
        if !events.is_empty() {
            warnings.push(format!(
                "managed scope: users' plugins also get {} (an `amplihack-hooks dispatch` entry each: one more process per event, on every user's machine, whether or not a plugin handles it)",
                events.join(", ")
            ));
        }
    }
    if matches!(args.scope, Scope::Project | Scope::Local)
        && !locations.project.join(".git").exists()
    {
        warnings.push(format!(
            "no git work tree at or above the current directory: the project is {} (pass --project DIR to choose another)",
            locations.project.display()
        ));
    }
    warnings.extend(targets.iter().filter_map(|t| {
        crate::hosts::trust_note(t.host, t.scope, &t.path, &locations.home)
            .map(|(message, fix)| format!("{message}: {fix}"))
    }));
    // Another scope of this project registering other commands would run every hook twice:
    // give it the same commands (Claude Code runs identical commands from several files once).
    if !dry_run {
        for other in diverging_scopes(&locations, &targets) {
            let report = register_known(&other, &hooks_binary, &options, None, None, failure)?;
            warnings.push(format!(
                "{} also registered amplihack with other commands (hooks would run twice); it now runs the same {} {}",
                other.path.display(),
                hooks_binary.display(),
                report.action.as_str()
            ));
            reports.push((other, report));
        }
    }
    warnings.extend(crate::fail_closed::lines(
        targets
            .iter()
            .map(|t| t.host)
            .chain(machine_hosts.iter().copied()),
        failure,
    ));
    if package_bin.is_some() {
        warnings.push(format!(
            "the binaries stay where {} installed them ({}) and the hosts run them from there; update with `{}`",
            method.manager().unwrap_or("the package manager"),
            bin_dir.display(),
            method.update_command().unwrap_or_default()
        ));
    } else if !deployment.on_path {
        warnings.push(format!(
            "{0} is not on your PATH; the hooks still work (they use the absolute path), but to run `amplihack` add `export PATH=\"{0}:$PATH\"` to your shell profile",
            bin_dir.display()
        ));
    }
    if !dry_run {
        record_registrations(&locations, &bin_dir, &targets, true)?;
        manifest::update(&locations.state(), |m| {
            for target in &targets {
                let host = target.host.name().to_string();
                if !m.hosts.contains(&host) {
                    m.hosts.push(host);
                }
            }
            m.fail_closed = failure == registration::Failure::Closed;
            for dir in created_dirs.iter().filter(|d| d.is_dir()) {
                if !m.created_dirs.contains(dir) {
                    m.created_dirs.push(dir.clone());
                }
            }
            // Directories made by an earlier install are kept in the record, not re-found.
            for path in docs {
                if !m.docs.contains(&path) {
                    m.docs.push(path);
                }
            }
        })?;
        let created: Vec<PathBuf> = reports
            .iter()
            .filter(|(_, r)| r.action == Action::Created)
            .map(|(t, _)| t.path.clone())
            .collect();
        if !created.is_empty() || !hooks_key_added.is_empty() || !empty_events.is_empty() {
            manifest::update(&locations.state(), |m| {
                for path in created {
                    if !m.created.contains(&path) {
                        m.created.push(path);
                    }
                }
                for path in hooks_key_added {
                    if !m.hooks_key_added.contains(&path) {
                        m.hooks_key_added.push(path);
                    }
                }
                for empty in empty_events {
                    if !m.empty_events.contains(&empty) {
                        m.empty_events.push(empty);
                    }
                }
            })?;
        }
    }
    Ok(render_changes(
        "install",
        dry_run,
        args.change.detail(),
        Some(&deployment),
        &reports,
        &warnings,
    ))
}
