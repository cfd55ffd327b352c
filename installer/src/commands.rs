//! `install`, `uninstall`, `doctor` and `status`. Each returns an [`Outcome`]: the text for a
//! person, the JSON for `--json`, and the exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::deploy::{self, BINARIES};
use amplihack_state::manifest::{self, Manifest, Registration};

use crate::registration::{self, Host};
use crate::safe_file::{self, Action, EditOptions, EditReport, NewContent};
use crate::scopes::{HostChoice, Locations, Scope};
use amplihack_settings::amplifier_yaml;

pub use amplihack_protocol::VERSION;

pub struct Outcome {
    pub text: String,
    pub json: Value,
    pub code: i32,
}

/// A refusal or failure: what went wrong, where, and the fix. Exit code 1.
#[derive(Debug)]
pub struct CommandError(pub String);

impl<E: std::fmt::Display> From<E> for CommandError {
    fn from(error: E) -> Self {
        CommandError(error.to_string())
    }
}

/// One file amplihack registers hooks in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub scope: Scope,
    pub path: PathBuf,
}

fn host_name(host: Host) -> &'static str {
    host.name()
}

fn targets(locations: &Locations, scope: Scope, hosts: HostChoice) -> Vec<Target> {
    let mut targets = Vec::new();
    if hosts.claude() {
        targets.push(Target {
            host: Host::ClaudeCode,
            scope,
            path: locations.claude_settings(scope),
        });
    }
    if hosts.amplifier() {
        targets.push(Target {
            host: Host::Amplifier,
            scope,
            path: locations.amplifier_registration(scope),
        });
    }
    targets
}

const AMPLIFIER_DESCRIPTION: &str = "amplihack hooks for Amplifier's hook-shell bridge. Written by `amplihack install`; re-run it (or `amplihack uninstall`) rather than editing.";

fn starting_value(host: Host) -> Value {
    match host {
        Host::ClaudeCode => json!({}),
        Host::Amplifier => json!({"description": AMPLIFIER_DESCRIPTION}),
    }
}

/// Writes (or repairs) the canonical registration in one file.
fn register(
    target: &Target,
    hooks_binary: &Path,
    options: &EditOptions,
) -> Result<EditReport, CommandError> {
    Ok(safe_file::edit_json(&target.path, options, |current| {
        let mut value = current
            .cloned()
            .unwrap_or_else(|| starting_value(target.host));
        registration::install(&mut value, hooks_binary, target.host)?;
        Ok(NewContent::Value(value))
    })?)
}

/// amplihack's commands in a settings file, sorted (empty when it holds none or cannot be read).
fn our_commands(path: &Path) -> Vec<String> {
    let mut commands: Vec<String> = safe_file::read_json(path)
        .ok()
        .flatten()
        .map(|(_, value)| {
            let mut found = Vec::new();
            for groups in value["hooks"]
                .as_object()
                .into_iter()
                .flat_map(|h| h.values())
            {
                for group in groups.as_array().into_iter().flatten() {
                    for handler in group["hooks"].as_array().into_iter().flatten() {
                        if let Some(command) = handler["command"].as_str()
                            && registration::recognise(command).is_some()
                        {
                            found.push(command.to_string());
                        }
                    }
                }
            }
            found
        })
        .unwrap_or_default();
    commands.sort();
    commands
}

/// Other Claude Code scopes of this project that hold amplihack's hooks with other commands
/// (a different binary): they would run every hook a second time.
fn diverging_scopes(locations: &Locations, installing: &[Target]) -> Vec<Target> {
    let Some(ours) = installing.iter().find(|t| t.host == Host::ClaudeCode) else {
        return Vec::new();
    };
    Scope::ALL
        .into_iter()
        .map(|scope| Target {
            host: Host::ClaudeCode,
            scope,
            path: locations.claude_settings(scope),
        })
        .filter(|t| t.path != ours.path)
        .filter(|t| {
            let theirs = our_commands(&t.path);
            !theirs.is_empty() && theirs != our_commands(&ours.path)
        })
        .collect()
}

/// Amplifier's settings file of the scope whose bridge registration is `target`:
/// `<dir>/.amplifier/hooks/amplihack/hooks.json` → `<dir>/.amplifier/settings.yaml` (or
/// `settings.local.yaml` for the local scope). There amplihack's native module is registered.
fn amplifier_settings(target: &Target) -> Option<PathBuf> {
    if target.host != Host::Amplifier {
        return None;
    }
    let amplifier_dir = target.path.ancestors().nth(3)?;
    Some(amplifier_dir.join(match target.scope {
        Scope::Local => "settings.local.yaml",
        Scope::User | Scope::Project => "settings.yaml",
    }))
}

/// Registers (or repoints) the native module in the scope's `settings.yaml`.
fn register_module(
    target: &Target,
    hooks_binary: &Path,
    source: &Path,
    options: &EditOptions,
) -> Result<Option<(Target, EditReport)>, CommandError> {
    let Some(path) = amplifier_settings(target) else {
        return Ok(None);
    };
    let entry = amplifier_yaml::ModuleEntry {
        source: source.to_string_lossy().into_owned(),
        binary: hooks_binary.to_string_lossy().into_owned(),
    };
    let report = safe_file::edit_text(&path, options, |current| {
        amplifier_yaml::install(current, &entry).map(Some)
    })?;
    let shown = Target {
        path,
        ..target.clone()
    };
    Ok(Some((shown, report)))
}

/// Removes exactly the native module's entry from the scope's `settings.yaml`.
fn unregister_module(
    target: &Target,
    options: &EditOptions,
) -> Result<Option<(Target, EditReport)>, CommandError> {
    let Some(path) = amplifier_settings(target) else {
        return Ok(None);
    };
    let report = safe_file::edit_text(&path, options, |current| match current {
        None => Ok(None),
        Some(text) => amplifier_yaml::uninstall(text),
    })?;
    let shown = Target {
        path,
        ..target.clone()
    };
    Ok((report.action != Action::Unchanged).then_some((shown, report)))
}

pub struct InstallArgs {
    pub scope: Scope,
    pub host: HostChoice,
    pub bin_dir: Option<PathBuf>,
    pub dry_run: bool,
    pub detail: Detail,
    pub project: PathBuf,
}

pub fn install(args: &InstallArgs) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(&args.project)?;
    let bin_dir = deploy::bin_dir(args.bin_dir.as_deref(), &locations.home);
    let targets = targets(&locations, args.scope, args.host);
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);

    // Refuse before touching anything: every file must parse and have a shape we can edit.
    for target in &targets {
        let current = safe_file::read_json(&target.path)?;
        let mut probe = current.map_or_else(|| starting_value(target.host), |(_, v)| v);
        registration::install(&mut probe, &hooks_binary, target.host).map_err(|e| {
            format!(
                "{}: {}; nothing was changed",
                target.path.display(),
                e.message()
            )
        })?;
    }

    for target in &targets {
        if let Some(path) = amplifier_settings(target)
            && let Some(text) = std::fs::read_to_string(&path).ok()
        {
            amplifier_yaml::find(&text)
                .map_err(|e| format!("{}: {e}; nothing was changed", path.display()))?;
        }
    }

    let deployment = deploy::deploy(&bin_dir, args.dry_run)?;
    let module_source = if args.host.amplifier() {
        Some(deploy::deploy_module(&locations.home, args.dry_run)?)
    } else {
        None
    };
    let options = EditOptions {
        dry_run: args.dry_run,
        ..EditOptions::default()
    };
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    for target in &targets {
        let report = register(target, &hooks_binary, &options)?;
        if report.action != Action::Unchanged && git_tracked(&target.path) {
            warnings.push(format!(
                "{} is tracked by git and now holds this machine's absolute path {}; teammates' machines differ: prefer --scope local, or keep the change out of commits",
                target.path.display(),
                hooks_binary.display()
            ));
        }
        if let Some(source) = &module_source
            && let Some(module) = register_module(target, &hooks_binary, source, &options)?
        {
            reports.push(module);
        }
        let in_project =
            target.host == Host::Amplifier && target.scope != Scope::User && !args.dry_run;
        if let Some(note) = in_project
            .then(|| exclude_from_git(&locations.project, AMPLIFIER_EXCLUDE))
            .flatten()
        {
            warnings.push(note);
        }
        reports.push((target.clone(), report));
    }
    if args.scope != Scope::User && !locations.project.join(".git").exists() {
        warnings.push(format!(
            "no git work tree at or above the current directory: the project is {} (pass --project DIR to choose another)",
            locations.project.display()
        ));
    }
    if args.scope == Scope::User && args.host.amplifier() {
        warnings.push(format!(
            "Amplifier: amplihack runs through its module, registered in {}; {} is for the hook-shell bridge, which reads only a project's .amplifier/hooks/ (`amplihack install --scope project --host amplifier` registers it there)",
            locations.home.join(".amplifier/settings.yaml").display(),
            locations.amplifier_registration(Scope::User).display()
        ));
    }
    // Another scope of this project registering other commands would run every hook twice:
    // give it the same commands (Claude Code runs identical commands from several files once).
    if !args.dry_run {
        for other in diverging_scopes(&locations, &targets) {
            let report = register(&other, &hooks_binary, &options)?;
            warnings.push(format!(
                "{} also registered amplihack with other commands (hooks would run twice); it now runs the same {} {}",
                other.path.display(),
                hooks_binary.display(),
                report.action.as_str()
            ));
            reports.push((other, report));
        }
    }
    if !deployment.on_path {
        warnings.push(format!(
            "{0} is not on your PATH; the hooks still work (they use the absolute path), but to run `amplihack` add `export PATH=\"{0}:$PATH\"` to your shell profile",
            bin_dir.display()
        ));
    }
    if !args.dry_run {
        record_registrations(&locations, &bin_dir, &targets, true)?;
        let created: Vec<PathBuf> = reports
            .iter()
            .filter(|(_, r)| r.action == Action::Created)
            .map(|(t, _)| t.path.clone())
            .collect();
        if !created.is_empty() {
            manifest::update(&locations.state(), |m| {
                for path in created {
                    if !m.created.contains(&path) {
                        m.created.push(path);
                    }
                }
            })?;
        }
    }
    Ok(render_changes(
        "install",
        args.dry_run,
        args.detail,
        Some(&deployment),
        &reports,
        &warnings,
    ))
}

pub struct UninstallArgs {
    pub scope: Option<Scope>,
    pub host: HostChoice,
    pub bin_dir: Option<PathBuf>,
    pub keep_binaries: bool,
    pub dry_run: bool,
    pub detail: Detail,
    pub project: PathBuf,
}

pub fn uninstall(args: &UninstallArgs) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(&args.project)?;
    let manifest = read_manifest(&locations);
    let mut all: Vec<Target> = Vec::new();
    let scopes: Vec<Scope> = args.scope.map_or_else(|| Scope::ALL.to_vec(), |s| vec![s]);
    for scope in &scopes {
        for target in targets(&locations, *scope, args.host) {
            // Project and local scope share the project's Amplifier registration.
            if !all.iter().any(|t| t.path == target.path) {
                all.push(target);
            }
        }
    }
    if args.scope.is_none() {
        // Every file a past install recorded, in whichever project it was.
        for target in manifest_targets(&manifest) {
            let wanted = match target.host {
                Host::ClaudeCode => args.host.claude(),
                Host::Amplifier => args.host.amplifier(),
            };
            if wanted && !all.iter().any(|t| t.path == target.path) {
                all.push(target);
            }
        }
    }
    for target in &all {
        if let Some((_, mut value)) = safe_file::read_json(&target.path)? {
            registration::uninstall(&mut value).map_err(|e| {
                format!(
                    "{}: {}; nothing was changed",
                    target.path.display(),
                    e.message()
                )
            })?;
        }
    }
    let options = EditOptions {
        dry_run: args.dry_run,
        ..EditOptions::default()
    };
    let mut reports = Vec::new();
    for target in &all {
        let created_by_us = manifest.created.contains(&target.path);
        // amplihack's own plugin file is not the user's: no backup of it (it is deleted).
        let own_options = EditOptions {
            backup: target.host != Host::Amplifier && !created_by_us,
            ..options
        };
        let report = safe_file::edit_json(&target.path, &own_options, |current| {
            let Some(current) = current else {
                return Ok(NewContent::Delete);
            };
            let mut value = current.clone();
            registration::uninstall(&mut value)?;
            // Our own plugin file, or a settings file install created, holds nothing of the
            // user's once our hooks are gone.
            let only_ours = (target.host == Host::Amplifier || created_by_us)
                && value.as_object().is_some_and(|m| {
                    m.iter().all(|(k, v)| {
                        k == "description"
                            || (k == "hooks" && v.as_object().is_some_and(|h| h.is_empty()))
                    })
                });
            Ok(if only_ours {
                NewContent::Delete
            } else {
                NewContent::Value(value)
            })
        })?;
        if let (Action::Deleted, false, Some(dir)) =
            (report.action, args.dry_run, target.path.parent())
        {
            remove_plugin_dir(dir);
            if target.host == Host::Amplifier
                && let Some(project) = project_of(target)
            {
                unexclude_from_git(&project, AMPLIFIER_EXCLUDE);
            }
        }
        if report.action != Action::Unchanged || report.before_text.is_some() {
            reports.push((target.clone(), report));
        }
        let module_created =
            amplifier_settings(target).is_some_and(|p| manifest.created.contains(&p));
        let module_options = EditOptions {
            backup: !module_created,
            ..options
        };
        if let Some(module) = unregister_module(target, &module_options)? {
            reports.push(module);
        }
    }
    let bin_dir = args
        .bin_dir
        .clone()
        .or_else(|| manifest.bin_dir.clone())
        .unwrap_or_else(|| deploy::bin_dir(None, &locations.home));
    let mut removed = Vec::new();
    if !args.keep_binaries && args.host.amplifier() {
        let module = deploy::module_dir(&locations.home);
        if module.is_dir() {
            if !args.dry_run {
                std::fs::remove_dir_all(&module)
                    .map_err(|e| format!("{}: cannot remove: {e}", module.display()))?;
            }
            removed.push(module);
        }
    }
    if !args.keep_binaries {
        for name in BINARIES {
            let path = bin_dir.join(name);
            if path.is_file() {
                if !args.dry_run {
                    std::fs::remove_file(&path)
                        .map_err(|e| format!("{}: cannot remove: {e}", path.display()))?;
                }
                removed.push(path);
            }
        }
    }
    if !args.dry_run {
        record_registrations(&locations, &bin_dir, &all, false)?;
        manifest::update(&locations.state(), |m| {
            m.created.retain(|p| {
                !all.iter()
                    .any(|t| t.path == *p || amplifier_settings(t).as_ref() == Some(p))
            });
        })?;
        // Lock sidecars beside the files we edited, and directories this left empty.
        for (target, _) in &reports {
            remove_sidecars(&target.path, &locations);
        }
    }
    if !args.dry_run {
        remove_empty_state(&locations);
    }
    let mut outcome = render_changes("uninstall", args.dry_run, args.detail, None, &reports, &[]);
    for path in &removed {
        outcome.text.push_str(&format!(
            "  binary     {}  {}\n",
            path.display(),
            if args.dry_run {
                "would be removed"
            } else {
                "removed"
            }
        ));
    }
    outcome.json["binaries_removed"] = json!(removed);
    Ok(outcome)
}

/// The `.git/info/exclude` pattern for the project's Amplifier bridge registration.
const AMPLIFIER_EXCLUDE: &str = "/.amplifier/hooks/amplihack/";

/// Removes the lock sidecar amplihack's edits leave beside `path`, then the directories that
/// left empty (a `.claude/`, `.amplifier/hooks/`, `.amplifier/` amplihack created), never
/// the home or project directory itself.
fn remove_sidecars(path: &Path, locations: &Locations) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let sidecar = dir.join(format!(".{}.amplihack.lock", name.to_string_lossy()));
    let _ = std::fs::remove_file(sidecar);
    for empty in dir
        .ancestors()
        .take_while(|d| *d != locations.home && *d != locations.project)
        .take(3)
    {
        match std::fs::remove_dir(empty) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => break,
        }
    }
}

/// Once nothing is installed: the install lock, then the directories install made that are now
/// empty (the state directory when it holds nothing else, the module's share directory), up to
/// the home directory. Session records, memory, trust and logs are the user's and stay.
fn remove_empty_state(locations: &Locations) {
    let state = locations.state();
    if manifest::path(&state).exists() {
        return;
    }
    let _ = std::fs::remove_file(state.dir("locks").join("install.lock"));
    for start in [state.dir("locks"), deploy::module_dir(&locations.home)] {
        for dir in start.ancestors().take_while(|d| *d != locations.home) {
            match std::fs::remove_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => break,
            }
        }
    }
}

/// Takes back the lines `exclude_from_git` added.
fn unexclude_from_git(project: &Path, pattern: &str) {
    let exclude = project.join(".git/info/exclude");
    let Ok(text) = std::fs::read_to_string(&exclude) else {
        return;
    };
    let ours = format!("# amplihack: machine-specific hook registration\n{pattern}\n");
    if text.contains(&ours) {
        let _ = std::fs::write(&exclude, text.replacen(&ours, "", 1));
    }
}

/// Removes amplihack's own Amplifier plugin directory once its `hooks.json` is gone: our lock
/// file and backups in it, then the directory, which `remove_dir` leaves alone if the user put
/// anything else there.
fn remove_plugin_dir(dir: &Path) {
    let ours = |name: &str| {
        name == ".hooks.json.amplihack.lock"
            || name.starts_with(&format!("hooks.json{}", safe_file::BACKUP_MARKER))
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if ours(&entry.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Whether a dry run shows each file's full JSON Patch and diff (`--verbose`) or one summary
/// line per file (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    #[default]
    Summary,
    Full,
}

fn render_changes(
    command: &str,
    dry_run: bool,
    detail: Detail,
    deployment: Option<&deploy::Deployment>,
    reports: &[(Target, EditReport)],
    warnings: &[String],
) -> Outcome {
    let mut text = format!(
        "amplihack {VERSION}: {command}{}\n",
        if dry_run {
            " (dry run: nothing was changed)"
        } else {
            ""
        }
    );
    let mut files = Vec::new();
    if let Some(deployment) = deployment {
        let copies: Vec<String> = deployment
            .copies
            .iter()
            .map(|(n, a)| format!("{n}: {}", a.as_str()))
            .collect();
        text.push_str(&format!(
            "  binaries   {}  {}\n",
            deployment.dir.display(),
            copies.join(", ")
        ));
    }
    for (target, report) in reports {
        let action = if dry_run && report.action != Action::Unchanged {
            format!("would be {}", report.action.as_str())
        } else {
            report.action.as_str().to_string()
        };
        let backup = report
            .backup
            .as_ref()
            .map(|b| format!(" (backup: {})", b.display()))
            .unwrap_or_default();
        let link = if report.target != report.path {
            format!(" (symlink to {})", report.target.display())
        } else {
            String::new()
        };
        text.push_str(&format!(
            "  {:<10} {:<8} {}{link}  {action}{backup}\n",
            host_name(target.host),
            target.scope.as_str(),
            target.path.display()
        ));
        let mut entry = json!({
            "host": host_name(target.host),
            "scope": target.scope.as_str(),
            "path": target.path,
            "target": report.target,
            "action": report.action.as_str(),
            "backup": report.backup,
        });
        if dry_run && report.action != Action::Unchanged {
            let patch = json_patch::diff(&report.before, &report.after);
            let patch_text = serde_json::to_string_pretty(&patch).unwrap_or_default();
            let before = report.before_text.clone().unwrap_or_default();
            let after = report.after_text.clone().unwrap_or_default();
            let diff = similar::TextDiff::from_lines(&before, &after)
                .unified_diff()
                .context_radius(3)
                .header(
                    &format!("a{}", target.path.display()),
                    &format!("b{}", target.path.display()),
                )
                .to_string();
            if detail == Detail::Full {
                text.push_str(&format!(
                    "    JSON Patch (RFC 6902):\n{}\n    diff:\n{diff}",
                    indent(&patch_text, "      ")
                ));
            } else {
                let added = diff
                    .lines()
                    .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                    .count();
                let removed = diff
                    .lines()
                    .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                    .count();
                text.push_str(&format!(
                    "    {added} line(s) added, {removed} removed (--verbose shows the JSON Patch and the diff)\n"
                ));
            }
            entry["patch"] = serde_json::to_value(&patch).unwrap_or(Value::Null);
            entry["diff"] = json!(diff);
        }
        files.push(entry);
    }
    for warning in warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    let json = json!({
        "command": command,
        "version": VERSION,
        "dry_run": dry_run,
        "binaries": deployment.map(|d| json!({
            "dir": d.dir,
            "on_path": d.on_path,
            "copies": d.copies.iter().map(|(n, a)| json!({"name": n, "action": a.as_str()})).collect::<Vec<_>>(),
        })),
        "files": files,
        "warnings": warnings,
    });
    Outcome {
        text,
        json,
        code: 0,
    }
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether git tracks `path` (quietly false when git or a repository is missing).
fn git_tracked(path: &Path) -> bool {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    dir.is_dir()
        && Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["ls-files", "--error-unmatch", "--"])
            .arg(name)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// Adds `pattern` to the repository's `info/exclude`, so this machine's absolute paths are not
/// committed for a whole team. Returns a note when it could not.
fn exclude_from_git(project: &Path, pattern: &str) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(project)
        .args(["rev-parse", "--git-path", "info/exclude"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None; // not a git repository: nothing to keep out of
    }
    let relative = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let exclude = if Path::new(&relative).is_absolute() {
        PathBuf::from(relative)
    } else {
        project.join(relative)
    };
    let existing = std::fs::read_to_string(&exclude).unwrap_or_default();
    if existing.lines().any(|l| l.trim() == pattern) {
        return None;
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "# amplihack: machine-specific hook registration\n{pattern}\n"
    ));
    let written = exclude
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&exclude, text));
    written.err().map(|e| {
        format!(
            "could not add {pattern} to {}: {e}; keep it out of commits by hand",
            exclude.display()
        )
    })
}

// The install manifest: which files amplihack registered, so `uninstall` and `doctor` find them
// even in other projects.

fn read_manifest(locations: &Locations) -> Manifest {
    manifest::load(&locations.state()).unwrap_or_default()
}

fn manifest_targets(manifest: &Manifest) -> Vec<Target> {
    manifest
        .registrations
        .iter()
        .filter_map(|r| {
            Some(Target {
                host: Host::from_flag(&r.host)?,
                scope: Scope::from_name(&r.scope)?,
                path: r.path.clone(),
            })
        })
        .collect()
}

fn record_registrations(
    locations: &Locations,
    bin_dir: &Path,
    targets: &[Target],
    add: bool,
) -> Result<(), CommandError> {
    manifest::update(&locations.state(), |manifest| {
        manifest.registrations.retain(|r| {
            !targets
                .iter()
                .any(|t| t.path == r.path && t.host.name() == r.host)
        });
        if add {
            manifest
                .registrations
                .extend(targets.iter().map(|t| Registration {
                    host: t.host.name().into(),
                    scope: t.scope.as_str().into(),
                    path: t.path.clone(),
                }));
            manifest.bin_dir = Some(bin_dir.to_path_buf());
            manifest.version = Some(VERSION.to_string());
        }
        if manifest.registrations.is_empty() {
            manifest.bin_dir = None;
            manifest.version = None;
        }
    })?;
    Ok(())
}

// doctor and status

#[derive(Debug, Clone)]
pub struct Finding {
    pub problem: bool,
    pub message: String,
    pub fix: Option<String>,
}

impl Finding {
    fn ok(message: String) -> Finding {
        Finding {
            problem: false,
            message,
            fix: None,
        }
    }

    fn problem(message: String, fix: String) -> Finding {
        Finding {
            problem: true,
            message,
            fix: Some(fix),
        }
    }
}

/// What is wrong with one registration file, judged against a fresh install into it.
fn check_target(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
    let mut findings = check_registration(target, hooks_binary);
    if let Some(path) = amplifier_settings(target) {
        findings.push(check_module(target, &path, hooks_binary));
    }
    findings
}

/// The native module's entry in the scope's settings.yaml.
fn check_module(target: &Target, path: &Path, hooks_binary: &Path) -> Finding {
    let fix = format!(
        "amplihack install --scope {} --host amplifier",
        target.scope.as_str()
    );
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) => {
            return Finding::problem(
                format!(
                    "{}: the native Amplifier module is not registered",
                    path.display()
                ),
                fix,
            );
        }
    };
    match amplifier_yaml::find(&text) {
        Err(e) => Finding::problem(
            format!("{}: {e}", path.display()),
            "fix the YAML, then run `amplihack doctor` again".into(),
        ),
        Ok(None) => Finding::problem(
            format!(
                "{}: the native Amplifier module is not registered",
                path.display()
            ),
            fix,
        ),
        Ok(Some(entry)) if Path::new(&entry.binary) != hooks_binary => Finding::problem(
            format!(
                "{}: the Amplifier module runs {}, not the deployed {}",
                path.display(),
                entry.binary,
                hooks_binary.display()
            ),
            fix,
        ),
        Ok(Some(entry)) if !Path::new(&entry.source).is_dir() => Finding::problem(
            format!(
                "{}: the Amplifier module's source {} is missing",
                path.display(),
                entry.source
            ),
            fix,
        ),
        Ok(Some(_)) => Finding::ok(format!(
            "{}: Amplifier module hooks-amplihack registered",
            path.display()
        )),
    }
}

fn check_registration(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
    let fix = format!(
        "amplihack install --scope {} --host {}",
        target.scope.as_str(),
        host_name(target.host)
    );
    let place = format!(
        "{} ({} {} scope)",
        target.path.display(),
        host_name(target.host),
        target.scope.as_str()
    );
    let value = match safe_file::read_json(&target.path) {
        Err(e) => {
            return vec![Finding::problem(
                e.to_string(),
                "fix the file as described, then run `amplihack doctor` again".into(),
            )];
        }
        Ok(None) => return vec![Finding::problem(format!("{place}: missing"), fix)],
        Ok(Some((_, value))) => value,
    };
    let mut expected = value.clone();
    if let Err(e) = registration::install(&mut expected, hooks_binary, target.host) {
        return vec![Finding::problem(
            format!("{}: {}", target.path.display(), e.message()),
            "fix the field as described".into(),
        )];
    }
    if expected == value {
        return vec![Finding::ok(format!(
            "{place}: {} hooks, canonical",
            registration::canonical(target.host).len()
        ))];
    }
    let ours = registration::find_ours(&value);
    let mut findings = Vec::new();
    let wanted = hooks_binary.to_string_lossy();
    for (event, _, handler) in &ours {
        match &handler.binary {
            None => findings.push(Finding::problem(
                format!("{place}: legacy Python amplihack hook on {event}"),
                fix.clone(),
            )),
            Some(binary) if binary != &*wanted => findings.push(Finding::problem(
                format!(
                    "{place}: {event} hook points at {binary}, not the deployed {wanted}{}",
                    if Path::new(binary).exists() {
                        ""
                    } else {
                        " (which does not exist)"
                    }
                ),
                fix.clone(),
            )),
            Some(_) => {}
        }
    }
    for spec in registration::canonical(target.host) {
        let count = ours
            .iter()
            .filter(|(e, _, h)| e == spec.event && h.subcommand.as_deref() == Some(spec.subcommand))
            .count();
        if count == 0 {
            findings.push(Finding::problem(
                format!(
                    "{place}: {} → {} is not registered",
                    spec.event, spec.subcommand
                ),
                fix.clone(),
            ));
        } else if count > 1 {
            findings.push(Finding::problem(
                format!(
                    "{place}: {} → {} is registered {count} times (it runs {count} times)",
                    spec.event, spec.subcommand
                ),
                fix.clone(),
            ));
        }
    }
    if findings.is_empty() {
        findings.push(Finding::problem(
            format!("{place}: entries are not in canonical order or shape"),
            fix,
        ));
    }
    findings
}

pub struct DoctorArgs {
    pub fix: bool,
    pub bin_dir: Option<PathBuf>,
    pub project: PathBuf,
}

struct Diagnosis {
    findings: Vec<Finding>,
    /// Registration files `--fix` can rewrite.
    repairable: Vec<Target>,
    /// The deployed binaries are missing, not executable or of another version.
    binaries_bad: bool,
    /// Recorded registrations whose project directory is gone: `--fix` forgets them rather than
    /// recreating a deleted project.
    vanished: Vec<Target>,
}

/// The project directory a project- or local-scope registration file belongs to.
fn project_of(target: &Target) -> Option<PathBuf> {
    let levels = match (target.scope, target.host) {
        (Scope::User, _) => return None,
        (_, Host::ClaudeCode) => 2, // <project>/.claude/settings.json
        (_, Host::Amplifier) => 4,  // <project>/.amplifier/hooks/amplihack/hooks.json
    };
    target.path.ancestors().nth(levels).map(Path::to_path_buf)
}

fn diagnose(locations: &Locations, manifest: &Manifest, bin_dir: &Path) -> Diagnosis {
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let mut findings = Vec::new();
    let mut binaries_bad = false;
    for name in BINARIES {
        let path = bin_dir.join(name);
        let reinstall = "amplihack doctor --fix (or ./install.sh)".to_string();
        let problem = if !path.exists() {
            Some((format!("{}: missing", path.display()), reinstall))
        } else if !deploy::is_executable(&path) {
            Some((format!("{}: not executable", path.display()), reinstall))
        } else {
            match deploy::reported_version(&path) {
                Some(v) if v == VERSION => {
                    findings.push(Finding::ok(format!("{}: version {v}", path.display())));
                    None
                }
                Some(v) => Some((
                    format!("{}: version {v}, expected {VERSION}", path.display()),
                    reinstall,
                )),
                None => Some((
                    format!("{}: does not run (`--version` failed)", path.display()),
                    reinstall,
                )),
            }
        };
        if let Some((message, fix)) = problem {
            binaries_bad = true;
            findings.push(Finding::problem(message, fix));
        }
    }

    // Every recorded registration, plus any scope of this project that holds our entries.
    let mut checked: Vec<Target> = manifest_targets(manifest);
    for scope in Scope::ALL {
        for target in targets(locations, scope, HostChoice::All) {
            let has_ours = safe_file::read_json(&target.path)
                .ok()
                .flatten()
                .is_some_and(|(_, v)| !registration::find_ours(&v).is_empty());
            if has_ours && !checked.iter().any(|t| t.path == target.path) {
                checked.push(target);
            }
        }
    }
    if !checked.iter().any(|t| t.host == Host::ClaudeCode) {
        findings.push(Finding::problem(
            "Claude Code: amplihack is not registered in any scope".into(),
            "amplihack install".into(),
        ));
    }
    if !checked.iter().any(|t| t.host == Host::Amplifier) {
        findings.push(Finding::problem(
            "Amplifier: amplihack is not registered (no .amplifier/hooks/amplihack/hooks.json)"
                .into(),
            "amplihack install --host amplifier".into(),
        ));
    }
    let mut repairable = Vec::new();
    let mut vanished = Vec::new();
    for target in &checked {
        if let Some(project) = project_of(target).filter(|p| !p.is_dir()) {
            findings.push(Finding::problem(
                format!(
                    "{}: recorded, but its project {} no longer exists",
                    target.path.display(),
                    project.display()
                ),
                "amplihack doctor --fix (forgets the record)".into(),
            ));
            vanished.push(target.clone());
            continue;
        }
        let found = check_target(target, &hooks_binary);
        if found.iter().any(|f| f.problem) {
            repairable.push(target.clone());
        }
        findings.extend(found);
    }
    // Claude Code reads every settings file and runs identical commands once (observed with
    // 2.1.328); two scopes of this project run the hooks twice only when their commands differ.
    let claude_scopes: Vec<&Target> = checked
        .iter()
        .filter(|t| {
            t.host == Host::ClaudeCode
                && (t.scope == Scope::User || t.path.starts_with(&locations.project))
        })
        .filter(|t| {
            safe_file::read_json(&t.path)
                .ok()
                .flatten()
                .is_some_and(|(_, v)| !registration::find_ours(&v).is_empty())
        })
        .collect();
    let differ = claude_scopes
        .iter()
        .map(|t| our_commands(&t.path))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    if differ {
        let names: Vec<&str> = claude_scopes.iter().map(|t| t.scope.as_str()).collect();
        findings.push(Finding::problem(
            format!("Claude Code: amplihack is registered in the {} scopes; in this project every hook runs {} times", names.join(" and "), names.len()),
            format!("amplihack uninstall --scope {} --keep-binaries (keep one scope)", names[names.len() - 1]),
        ));
    }
    Diagnosis {
        findings,
        repairable,
        binaries_bad,
        vanished,
    }
}

pub fn doctor(args: &DoctorArgs) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(&args.project)?;
    let manifest = read_manifest(&locations);
    let bin_dir = args
        .bin_dir
        .clone()
        .or_else(|| manifest.bin_dir.clone())
        .unwrap_or_else(|| deploy::bin_dir(None, &locations.home));
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let mut diagnosis = diagnose(&locations, &manifest, &bin_dir);

    let mut repaired = Vec::new();
    if args.fix {
        if diagnosis.binaries_bad || !diagnosis.repairable.is_empty() {
            let deployment = deploy::deploy(&bin_dir, false)?;
            repaired.extend(
                deployment
                    .copies
                    .iter()
                    .filter(|(_, a)| *a == deploy::CopyAction::Copied)
                    .map(|(n, _)| bin_dir.join(n)),
            );
        }
        for target in &diagnosis.repairable {
            let report = register(target, &hooks_binary, &EditOptions::default())?;
            if report.action != Action::Unchanged {
                repaired.push(target.path.clone());
            }
        }
        if !diagnosis.vanished.is_empty() {
            record_registrations(&locations, &bin_dir, &diagnosis.vanished, false)?;
            repaired.push(manifest::path(&locations.state()));
        }
        // Judge the result, not the attempt.
        let manifest = read_manifest(&locations);
        diagnosis = diagnose(&locations, &manifest, &bin_dir);
    }

    let findings = &diagnosis.findings;
    let problems = findings.iter().filter(|f| f.problem).count();
    let mut text = String::new();
    for path in &repaired {
        text.push_str(&format!("repaired: {}\n", path.display()));
    }
    for finding in findings {
        match (&finding.fix, finding.problem) {
            (Some(fix), true) => {
                text.push_str(&format!("problem: {}\n  fix: {fix}\n", finding.message))
            }
            _ => text.push_str(&format!("ok: {}\n", finding.message)),
        }
    }
    text.push_str(&match (problems, args.fix) {
        (0, _) => "amplihack doctor: no problems found\n".to_string(),
        (n, false) => format!("amplihack doctor: {n} problem(s); `amplihack doctor --fix` repairs what it can\n"),
        (n, true) => format!("amplihack doctor: {n} problem(s) left that --fix cannot repair; follow the fixes above\n"),
    });
    let json = json!({
        "command": "doctor",
        "version": VERSION,
        "problems": problems,
        "findings": findings.iter().map(|f| json!({"problem": f.problem, "message": f.message, "fix": f.fix})).collect::<Vec<_>>(),
        "repaired": repaired,
    });
    Ok(Outcome {
        text,
        json,
        code: i32::from(problems > 0),
    })
}

pub fn status(project: &Path, bin_dir: Option<&Path>) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(project)?;
    let manifest = read_manifest(&locations);
    let bin_dir = bin_dir
        .map(Path::to_path_buf)
        .or_else(|| manifest.bin_dir.clone())
        .unwrap_or_else(|| deploy::bin_dir(None, &locations.home));
    let mut text = format!(
        "amplihack {VERSION}\n  bin dir    {}{}\n",
        bin_dir.display(),
        if deploy::on_path(&bin_dir) {
            ""
        } else {
            " (not on PATH)"
        }
    );
    let mut binaries = Vec::new();
    for name in BINARIES {
        let path = bin_dir.join(name);
        let version = deploy::reported_version(&path);
        text.push_str(&format!(
            "  {name:<16} {}\n",
            version.as_deref().unwrap_or("not installed")
        ));
        binaries.push(json!({"name": name, "path": path, "version": version}));
    }
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let mut registrations = Vec::new();
    for target in manifest_targets(&manifest) {
        let state = if check_target(&target, &hooks_binary)
            .iter()
            .any(|f| f.problem)
        {
            "needs repair (amplihack doctor)"
        } else {
            "ok"
        };
        text.push_str(&format!(
            "  {:<10} {:<8} {}  {state}\n",
            host_name(target.host),
            target.scope.as_str(),
            target.path.display()
        ));
        registrations.push(json!({"host": host_name(target.host), "scope": target.scope.as_str(), "path": target.path, "state": state}));
    }
    if registrations.is_empty() {
        text.push_str("  no hooks registered: run `amplihack install`\n");
    }
    Ok(Outcome {
        text,
        json: json!({"command": "status", "version": VERSION, "bin_dir": bin_dir, "binaries": binaries, "registrations": registrations}),
        code: 0,
    })
}

/// Rewrites every registration the install manifest records (whose file or project still exists)
/// for the binaries in `bin_dir`, and records this version as deployed. `amplihack update` runs
/// it with the new binary, so the new version's table is what gets written.
pub fn reregister(project: &Path, bin_dir: &Path) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(project)?;
    let manifest = read_manifest(&locations);
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let targets: Vec<Target> = manifest_targets(&manifest)
        .into_iter()
        .filter(|t| t.path.exists() || project_of(t).is_some_and(|p| p.is_dir()))
        .collect();
    let mut text = String::new();
    for target in &targets {
        let report = register(target, &hooks_binary, &EditOptions::default())?;
        text.push_str(&format!(
            "{}: {}\n",
            report.action.as_str(),
            target.path.display()
        ));
        if let Some(path) = amplifier_settings(target).filter(|p| p.exists()) {
            let source = deploy::deploy_module(&locations.home, false)?;
            if let Some((_, report)) =
                register_module(target, &hooks_binary, &source, &EditOptions::default())?
            {
                text.push_str(&format!("{}: {}\n", report.action.as_str(), path.display()));
            }
        }
    }
    record_registrations(&locations, bin_dir, &targets, true)?;
    Ok(Outcome {
        text,
        json: json!({"command": "reregister", "version": VERSION, "registrations": targets.iter().map(|t| &t.path).collect::<Vec<_>>()}),
        code: 0,
    })
}
