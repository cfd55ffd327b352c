//! `amplihack uninstall`.

use std::path::{Path, PathBuf};

use serde_json::json;

use amplihack_state::manifest;

use super::render::render_changes;
use super::shared::{
    amplifier_settings, bridge_of, legacy_bridge_of, machine_registrations, manifest_targets,
    names_binaries, read_manifest, record_registrations, targets, unregister, unregister_module,
};
use super::{BinDirArg, ChangeArgs, CommandError, Outcome, Target, managed_hosts};
use crate::deploy::{self, BINARIES};
use crate::hosts::HostChoice;
use crate::registration::{self, Host};
use crate::safe_file::{self, Action, EditOptions};
use crate::scopes::{Locations, Scope};
use amplihack_settings::amplifier_yaml;

/// `amplihack uninstall`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct UninstallArgs {
    /// Only this scope (default: every scope, and every file a past install recorded)
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
    /// Which hosts to remove amplihack from
    #[arg(long, value_enum, default_value = "all")]
    pub host: HostChoice,
    #[command(flatten)]
    pub bin: BinDirArg,
    /// Leave the deployed binaries in place
    #[arg(long)]
    pub keep_binaries: bool,
    #[command(flatten)]
    pub change: ChangeArgs,
}

/// The whole of `amplihack uninstall`: the plugin handler groups amplihack copied for Claude
/// Code (prompt, agent, http, mcp_tool) are recorded in its state, not recognisable in the file,
/// so they go first; then amplihack's own entries and the binaries.
pub fn uninstall(args: &UninstallArgs, project: &Path) -> Result<Outcome, CommandError> {
    if let (Some(scope), Some(host)) = (args.scope, args.host.host())
        && let Some(refusal) = crate::hosts::spec(host).lacks(scope)
    {
        return Err(refusal.into());
    }
    let copied = if args.host.claude() && args.scope.is_none() {
        let locations = Locations::from_env(project)?;
        crate::plugin_events::remove_host_groups(&locations, args.change.dry_run)?
    } else {
        Vec::new()
    };
    let mut outcome = uninstall_own(args, project)?;
    if !args.change.dry_run {
        crate::plugin_events::forget_unregistered(&Locations::from_env(project)?)?;
    }
    for line in copied {
        outcome.text.push_str(&line);
        outcome.text.push('\n');
    }
    Ok(outcome)
}

fn uninstall_own(args: &UninstallArgs, project: &Path) -> Result<Outcome, CommandError> {
    let dry_run = args.change.dry_run;
    let locations = Locations::from_env(project)?;
    let manifest = read_manifest(&locations);
    let mut all: Vec<Target> = Vec::new();
    let scopes: Vec<Scope> = args.scope.map_or_else(|| Scope::ALL.to_vec(), |s| vec![s]);
    for scope in &scopes {
        for target in targets(&locations, *scope, args.host) {
            if !all.iter().any(|t| t.path == target.path) {
                all.push(target);
            }
        }
        // `all`: a host not found installed still loses the entries a file of it holds.
        if args.host == HostChoice::All {
            for host in Host::ALL {
                if managed_hosts::handles(host, *scope) {
                    continue;
                }
                if let Some(path) = crate::hosts::registration_file(host, &locations, *scope)
                    && path.exists()
                    && !all.iter().any(|t| t.path == path)
                {
                    all.push(Target {
                        host,
                        scope: *scope,
                        path,
                    });
                }
            }
        }
    }
    if args.scope.is_none() {
        // Every file a past install recorded, in whichever project it was.
        for target in manifest_targets(&manifest) {
            let wanted = args.host.includes(target.host);
            if wanted && !all.iter().any(|t| t.path == target.path) {
                all.push(target);
            }
        }
    }
    // The JSON files to take amplihack's entries out of: Claude Code's settings, the project's
    // bridge registration (shared by the project and local scopes: kept while the other of the
    // two still lists amplihack), and the user-level bridge file earlier versions wrote.
    let mut json_files: Vec<Target> = Vec::new();
    for target in &all {
        let files = match target.host {
            Host::Amplifier => bridge_of(target)
                .filter(|_| !sibling_keeps_bridge(target, &all))
                .into_iter()
                .chain(legacy_bridge_of(target))
                .collect(),
            host if crate::hosts::edits_json_hooks(host) => vec![target.clone()],
            _ => Vec::new(),
        };
        for file in files {
            if !json_files.iter().any(|t| t.path == file.path) {
                json_files.push(file);
            }
        }
    }
    for target in &all {
        if let Some(path) = amplifier_settings(target)
            && let Ok(Some(text)) = safe_file::read_text(&path)
        {
            amplifier_yaml::uninstall_app(&text).map_err(|e| {
                CommandError::refused(format!("{}: {e}; nothing was changed", path.display()))
            })?;
        }
    }
    for target in all
        .iter()
        .filter(|t| crate::hosts::edits_toml_hooks(t.host))
    {
        crate::hosts::toml_hooks::probe_uninstall(target)?;
    }
    for target in &json_files {
        if let Some((_, mut value)) = target.read_json()? {
            registration::uninstall(&mut value).map_err(|e| {
                CommandError::refused(format!(
                    "{}: {}; nothing was changed",
                    target.path.display(),
                    e.message()
                ))
            })?;
        }
        if target.host == Host::Codex {
            crate::hosts::codex::can_forget_trust(&locations)?;
        }
    }
    let options = EditOptions {
        dry_run,
        ..EditOptions::default()
    };
    let mut reports = Vec::new();
    for target in &json_files {
        let created_by_us = manifest.created.contains(&target.path);
        // amplihack's own plugin file is not the user's: no backup of it (it is deleted).
        let own_options = EditOptions {
            backup: target.host != Host::Amplifier && !created_by_us,
            ..options
        };
        let hooks_key_added = manifest.hooks_key_added.contains(&target.path);
        let user_empty: Vec<String> = manifest
            .empty_events
            .iter()
            .filter(|e| e.path == target.path)
            .map(|e| e.event.clone())
            .collect();
        let report = unregister(
            target,
            &own_options,
            created_by_us,
            hooks_key_added,
            &user_empty,
        )?;
        if target.host == Host::Codex {
            crate::hosts::codex::forget_trust(&target.path, &locations, dry_run)?;
        }
        if report.action != Action::Unchanged || report.before_text.is_some() {
            reports.push((target.clone(), report));
        }
    }
    // Codex's and Copilot's managed files: `managed_hosts`.
    let mut machine: Vec<Target> = Vec::new();
    if args.scope == Some(Scope::Managed) {
        for host in [Host::Codex, Host::Copilot]
            .into_iter()
            .filter(|h| args.host.includes(*h))
        {
            if let Some((target, report)) = managed_hosts::uninstall(host, dry_run)? {
                machine.push(target.clone());
                if report.action != Action::Unchanged {
                    reports.push((target, report));
                }
            }
        }
    }
    for target in all
        .iter()
        .filter(|t| crate::hosts::edits_toml_hooks(t.host))
    {
        let report = crate::hosts::toml_hooks::unregister(
            target,
            &options,
            manifest.hooks_key_added.contains(&target.path),
            manifest.created.contains(&target.path),
        )?;
        if let (Action::Deleted, false) = (report.action, dry_run) {
            if let Some((project, pattern)) = crate::hosts::vibe::git_exclusion(target) {
                super::shared::unexclude_from_git(&project, pattern);
            }
            crate::hosts::toml_hooks::remove_leftovers(target);
        }
        if report.action != Action::Unchanged {
            reports.push((target.clone(), report));
        }
    }
    for (target, bridge) in all
        .iter()
        .filter_map(|t| crate::hosts::bridge_file::of(t.host).map(|b| (t, b)))
    {
        let report = bridge.unregister(target, &options)?;
        if let (Action::Deleted, false, Some((project, pattern))) =
            (report.action, dry_run, bridge.git_exclusion(target))
        {
            super::shared::unexclude_from_git(&project, &pattern);
        }
        if report.action != Action::Unchanged {
            reports.push((target.clone(), report));
        }
    }
    for target in all.iter().filter(|t| t.host == Host::Amplifier) {
        let module_options = EditOptions {
            backup: !manifest.created.contains(&target.path),
            ..options
        };
        if let Some(module) = unregister_module(target, &module_options)? {
            reports.push(module);
        }
    }
    // What still uses amplihack once these are gone: it keeps running there, and keeps the
    // binaries (and Amplifier's bundle) it names.
    let remaining: Vec<Target> = machine_registrations(&locations, &manifest)
        .into_iter()
        .filter(|r| {
            !all.iter().any(|t| t.path == r.path)
                && !json_files.iter().any(|t| t.path == r.path)
                && !machine.iter().any(|t| t.path == r.path)
        })
        .collect();
    let bin_dir = args.bin.resolve(&manifest, &locations.home);
    let binaries_needed = remaining.iter().any(|r| names_binaries(r, &bin_dir));
    let amplifier_needed = remaining.iter().any(|r| r.host == Host::Amplifier);
    let mut removed = Vec::new();
    if !args.keep_binaries && args.host.amplifier() && !amplifier_needed {
        let module = deploy::module_dir(&locations.home);
        if module.is_dir() {
            if !dry_run {
                std::fs::remove_dir_all(&module)
                    .map_err(|e| CommandError::io("remove", &module, e))?;
            }
            removed.push(module);
        }
        let bundle = deploy::bundle_file(&locations.home);
        if bundle.is_file() {
            if !dry_run {
                std::fs::remove_file(&bundle)
                    .map_err(|e| CommandError::io("remove", &bundle, e))?;
            }
            removed.push(bundle);
        }
    }
    let remove_binaries = !args.keep_binaries && !binaries_needed;
    if remove_binaries {
        // The man pages and completions go with the binaries they describe.
        if !dry_run {
            crate::docs::remove_files(&manifest.docs);
            manifest::update(&locations.state(), |m| m.docs.clear())?;
        }
    }
    // A package manager's binaries are its to remove (`npm uninstall`, `pip uninstall`, ...).
    let owner = crate::install_method::InstallMethod::detect(
        &bin_dir
            .join("amplihack")
            .canonicalize()
            .unwrap_or_else(|_| bin_dir.join("amplihack")),
    );
    // The OpenTelemetry export's timer, agent or session-end marker runs these binaries.
    if remove_binaries
        && let Some(places) = crate::otel::schedule::Places::from_env(&locations.home)
    {
        removed.extend(crate::otel::schedule::remove(&places, dry_run));
    }
    if remove_binaries && owner.manager().is_none() {
        for name in BINARIES {
            let path = bin_dir.join(name);
            if path.is_file() {
                if !dry_run {
                    std::fs::remove_file(&path)
                        .map_err(|e| CommandError::io("remove", &path, e))?;
                }
                removed.push(path);
            }
        }
    }
    if !dry_run {
        record_registrations(&locations, &bin_dir, &all, false)?;
        manifest::update(&locations.state(), |m| {
            m.created.retain(|p| {
                !all.iter().any(|t| t.path == *p) && !json_files.iter().any(|t| t.path == *p)
            });
            m.hooks_key_added
                .retain(|p| !json_files.iter().any(|t| t.path == *p));
            m.empty_events
                .retain(|e| !json_files.iter().any(|t| t.path == e.path));
            let registered: Vec<String> = m.registrations.iter().map(|r| r.host.clone()).collect();
            m.hosts.retain(|h| registered.contains(h));
        })?;
        // Lock sidecars beside the files we edited, and directories this left empty.
        for (target, _) in &reports {
            if let Some(bridge) = crate::hosts::bridge_file::of(target.host) {
                bridge.remove_leftovers(target);
            } else {
                remove_sidecars(target, &locations, &manifest.created_dirs);
            }
        }
        if !manifest.created_dirs.is_empty() {
            manifest::update(&locations.state(), |m| {
                m.created_dirs.retain(|d| d.exists())
            })?;
        }
    }
    if !dry_run {
        remove_empty_state(&locations);
    }
    let mut outcome = render_changes(
        "uninstall",
        dry_run,
        args.change.detail(),
        None,
        &reports,
        &[],
    );
    for path in &removed {
        outcome.text.push_str(&format!(
            "  binary     {}  {}\n",
            path.display(),
            if dry_run {
                "would be removed"
            } else {
                "removed"
            }
        ));
    }
    if !remaining.is_empty() {
        outcome
            .text
            .push_str("still registered (amplihack keeps running there):\n");
        for target in &remaining {
            outcome.text.push_str(&format!(
                "  {:<10} {:<8} {}\n",
                target.host.name(),
                target.scope.as_str(),
                target.path.display()
            ));
        }
    }
    let binaries_kept = !args.keep_binaries && binaries_needed;
    if binaries_kept {
        outcome.text.push_str(&format!(
            "  binaries   {}  kept: the registrations above run them (they go with the last registration)\n",
            bin_dir.display()
        ));
    }
    if remove_binaries && let (Some(manager), Some(_)) = (owner.manager(), owner.update_command()) {
        outcome.text.push_str(&format!(
            "  binaries   {}  left to {manager}, which installed them (remove them with {manager})\n",
            bin_dir.display()
        ));
    }
    outcome.json["binaries_removed"] = json!(removed);
    outcome.json["binaries_kept"] = json!(binaries_kept);
    outcome.json["still_registered"] = json!(
        remaining
            .iter()
            .map(|t| json!({"host": t.host.name(), "scope": t.scope.as_str(), "path": t.path}))
            .collect::<Vec<_>>()
    );
    Ok(outcome)
}

/// Removes the lock sidecar amplihack's edits leave beside the target's file, then the
/// directories that left empty (a project's `.claude/`, `.amplifier/hooks/`, `.amplifier/`
/// amplihack created; `~/.copilot/hooks/`), never the home or project directory itself, nor a
/// host's own directory in the home (`~/.copilot`, `~/.gemini`: the host's, even when empty)
/// unless install created it (`created_dirs`).
fn remove_sidecars(target: &Target, locations: &Locations, created_dirs: &[PathBuf]) {
    let path = &target.path;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let sidecar = dir.join(format!(".{}.amplihack.lock", name.to_string_lossy()));
    let _ = std::fs::remove_file(sidecar);
    let host_home = crate::hosts::home_dir(target.host, locations);
    for empty in dir
        .ancestors()
        .take_while(|d| {
            *d != locations.home
                && *d != locations.project
                && (*d != host_home || created_dirs.iter().any(|c| c == d))
        })
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

/// Whether the other of a project's two Amplifier scopes (project, local), not being uninstalled,
/// still lists amplihack: the bridge registration they share stays then.
fn sibling_keeps_bridge(target: &Target, uninstalling: &[Target]) -> bool {
    let other = match target.scope {
        Scope::Project => "settings.local.yaml",
        Scope::Local => "settings.yaml",
        Scope::User | Scope::Managed => return false,
    };
    let sibling = target.path.with_file_name(other);
    !uninstalling.iter().any(|t| t.path == sibling)
        && safe_file::read_text(&sibling)
            .ok()
            .flatten()
            .is_some_and(|t| matches!(amplifier_yaml::find_app(&t), Ok(Some(_))))
}
