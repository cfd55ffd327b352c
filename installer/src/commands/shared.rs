//! What the commands share: the registration files of each scope and host, writing them, the
//! install manifest, and keeping machine-specific files out of git.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use amplihack_settings::amplifier_yaml;
use amplihack_state::manifest::{self, Manifest, Registration};

use super::{CommandError, Target, VERSION};
use crate::hosts::HostChoice;
use crate::registration::{self, Host};
use crate::safe_file::{self, Action, EditOptions, EditReport, NewContent};
use crate::scopes::{Locations, Scope};

pub(crate) fn host_name(host: Host) -> &'static str {
    host.name()
}

pub(crate) fn targets(locations: &Locations, scope: Scope, hosts: HostChoice) -> Vec<Target> {
    hosts
        .hosts(locations)
        .into_iter()
        // The managed files of Codex and Copilot have forms of their own: `managed_hosts`.
        .filter(|host| !super::managed_hosts::handles(*host, scope))
        .filter_map(|host| {
            Some(Target {
                host,
                scope,
                path: crate::hosts::registration_file(host, locations, scope)?,
            })
        })
        .collect()
}

/// How an Amplifier target's bridge registration is named, under `<dir>/.amplifier/`.
const BRIDGE_FILE: &str = "hooks/amplihack/hooks.json";

/// The hook-shell bridge's registration that goes with an Amplifier settings file: the project's
/// `.amplifier/hooks/amplihack/hooks.json`, shared by the project and local scopes. None for the
/// user scope (the bridge reads no user-level directory) and for Claude Code.
pub(crate) fn bridge_of(target: &Target) -> Option<Target> {
    if target.host != Host::Amplifier || target.scope == Scope::User || is_bridge(target) {
        return None;
    }
    Some(Target {
        path: target.path.parent()?.join(BRIDGE_FILE),
        ..target.clone()
    })
}

/// The user-level bridge registration earlier versions wrote beside `~/.amplifier/settings.yaml`:
/// no host reads it, so install, doctor --fix and uninstall take it back.
pub(crate) fn legacy_bridge_of(target: &Target) -> Option<Target> {
    if target.host != Host::Amplifier || target.scope != Scope::User || is_bridge(target) {
        return None;
    }
    Some(Target {
        path: target.path.parent()?.join(BRIDGE_FILE),
        ..target.clone()
    })
}

/// Whether an Amplifier target is a bridge registration (JSON) rather than a settings file.
pub(crate) fn is_bridge(target: &Target) -> bool {
    target.host == Host::Amplifier && target.path.ends_with(BRIDGE_FILE)
}

/// Whether a registration file holds amplihack's entries: hooks in a JSON file, or the app
/// bundle (or the legacy module entry) in an Amplifier settings file.
pub(crate) fn holds_ours(target: &Target) -> bool {
    if let Some(bridge) = crate::hosts::bridge_file::of(target.host) {
        return bridge.holds_ours(target);
    }
    if crate::hosts::edits_toml_hooks(target.host) {
        return crate::hosts::toml_hooks::holds_ours(target);
    }
    if let Some(path) = amplifier_settings(target) {
        return safe_file::read_text(&path).ok().flatten().is_some_and(|t| {
            matches!(amplifier_yaml::find_app(&t), Ok(Some(_)))
                || matches!(amplifier_yaml::find(&t), Ok(Some(_)))
        });
    }
    target
        .read_json()
        .ok()
        .flatten()
        .is_some_and(|(_, v)| !registration::find_ours(&v).is_empty())
}

pub(crate) const AMPLIFIER_DESCRIPTION: &str = "amplihack hooks for Amplifier's hook-shell bridge. Written by `amplihack install`; re-run it (or `amplihack uninstall`) rather than editing.";

pub(crate) fn starting_value(host: Host) -> Value {
    match host {
        Host::Amplifier => json!({"description": AMPLIFIER_DESCRIPTION}),
        _ => json!({}),
    }
}

/// Writes (or repairs) the canonical registration in one file.
pub(crate) fn register(
    target: &Target,
    hooks_binary: &Path,
    options: &EditOptions,
) -> Result<EditReport, CommandError> {
    let failure = crate::scopes::Locations::from_env(&target.path)
        .map(|l| crate::fail_closed::recorded(&l.state()))
        .unwrap_or_default();
    register_known(target, hooks_binary, options, None, None, failure)
}

/// [`register`], with the file as [`safe_file::read_json`] gave it moments ago when the caller
/// has it (`install` reads every file before touching anything): not read and parsed again
/// to find that nothing changes.
pub(crate) fn register_known(
    target: &Target,
    hooks_binary: &Path,
    options: &EditOptions,
    known: Option<Option<(String, serde_json::Value)>>,
    plugin_events: Option<&[String]>,
    failure: registration::Failure,
) -> Result<EditReport, CommandError> {
    if let Some(bridge) = crate::hosts::bridge_file::of(target.host) {
        return bridge.register(target, hooks_binary, options);
    }
    if crate::hosts::edits_toml_hooks(target.host) {
        return crate::hosts::toml_hooks::register(target, hooks_binary, options, failure);
    }
    let change = |current: Option<&serde_json::Value>| {
        let mut value = current
            .cloned()
            .unwrap_or_else(|| starting_value(target.host));
        registration::install_failing(&mut value, hooks_binary, target.host, failure)?;
        if target.scope == Scope::Managed && target.host == Host::ClaudeCode {
            managed_plugin_events(&mut value, hooks_binary, plugin_events)?;
        }
        Ok(NewContent::Value(value))
    };
    let options = &target.edit_options(options);
    let report = match known {
        Some(current) => safe_file::edit_json_known(&target.path, options, current, change)?,
        None => safe_file::edit_json(&target.path, options, change)?,
    };
    if target.host == Host::Codex {
        // The file's rows, and the plugin events amplihack registered there before.
        let events = crate::scopes::Locations::from_env(&target.path)
            .map(|l| crate::plugin_events::recorded_events_in(&l.state(), &target.path))
            .unwrap_or_default();
        let written = crate::hosts::codex::Written::new(hooks_binary, &events);
        crate::hosts::codex::trust_after_write(
            &target.path,
            target.scope,
            options.dry_run,
            &written,
        );
    }
    Ok(report)
}

/// The managed file's `dispatch` entries for users' plugins: exactly `wanted` when given
/// (`install --plugin-events`), else the ones it has, each running `hooks_binary` (re-pointed
/// after a move). The file itself is the record: `uninstall` removes them with amplihack's others.
pub(crate) fn managed_plugin_events(
    value: &mut serde_json::Value,
    hooks_binary: &Path,
    wanted: Option<&[String]>,
) -> Result<(), registration::ShapeError> {
    let present = amplihack_settings::plugin_events::registered(value);
    let wanted = wanted.map_or_else(|| present.clone(), <[String]>::to_vec);
    amplihack_settings::plugin_events::sync(value, hooks_binary, &present, &wanted)?;
    Ok(())
}

/// amplihack's commands in a settings file, sorted (empty when it holds none or cannot be read).
pub(crate) fn our_commands(target: &Target) -> Vec<String> {
    let mut commands: Vec<String> = target
        .read_json()
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
pub(crate) fn diverging_scopes(locations: &Locations, installing: &[Target]) -> Vec<Target> {
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
            let theirs = our_commands(t);
            !theirs.is_empty() && theirs != our_commands(ours)
        })
        .collect()
}

/// An Amplifier target's settings file (`~/.amplifier/settings.yaml`,
/// `<project>/.amplifier/settings.yaml` or `settings.local.yaml`), where amplihack's app bundle
/// is listed; None for Claude Code and for bridge registrations.
pub(crate) fn amplifier_settings(target: &Target) -> Option<PathBuf> {
    (target.host == Host::Amplifier && !is_bridge(target)).then(|| target.path.clone())
}

/// Lists amplihack's app bundle under `bundle.app` in the scope's settings file (or repoints it),
/// removing the legacy `modules.hooks` entry the app never mounted.
pub(crate) fn register_module(
    target: &Target,
    bundle: &Path,
    options: &EditOptions,
) -> Result<Option<(Target, EditReport)>, CommandError> {
    let Some(path) = amplifier_settings(target) else {
        return Ok(None);
    };
    let uri = amplifier_yaml::uri_of(bundle);
    let report = safe_file::edit_text(&path, options, |current| {
        amplifier_yaml::install_app(current, &uri).map(Some)
    })?;
    let shown = Target {
        path,
        ..target.clone()
    };
    Ok(Some((shown, report)))
}

/// Removes exactly amplihack's entries (the app bundle, and a legacy module entry) from the
/// scope's settings file.
pub(crate) fn unregister_module(
    target: &Target,
    options: &EditOptions,
) -> Result<Option<(Target, EditReport)>, CommandError> {
    let Some(path) = amplifier_settings(target) else {
        return Ok(None);
    };
    let report = safe_file::edit_text(&path, options, |current| match current {
        None => Ok(None),
        Some(text) => amplifier_yaml::uninstall_app(text),
    })?;
    let shown = Target {
        path,
        ..target.clone()
    };
    Ok((report.action != Action::Unchanged).then_some((shown, report)))
}

pub(crate) const AMPLIFIER_EXCLUDE: &str = "/.amplifier/hooks/amplihack/";

/// Takes back the lines `exclude_from_git` added.
pub(crate) fn unexclude_from_git(project: &Path, pattern: &str) {
    let exclude = project.join(".git/info/exclude");
    let Ok(text) = std::fs::read_to_string(&exclude) else {
        return;
    };
    let ours = format!("# amplihack: machine-specific hook registration\n{pattern}\n");
    if text.contains(&ours) {
        let _ = std::fs::write(&exclude, text.replacen(&ours, "", 1));
    }
}

/// Whether git tracks `path` (quietly false when git or a repository is missing).
pub(crate) fn git_tracked(path: &Path) -> bool {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    dir.is_dir()
        && maybe_in_git(dir)
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

/// Whether `dir` can be in a git work tree: a `.git` at or above it, or git told where by
/// `GIT_DIR`/`GIT_WORK_TREE`. Without either no `git` process is started (most settings files,
/// `~/.claude/settings.json` among them, are in no repository).
fn maybe_in_git(dir: &Path) -> bool {
    std::env::var_os("GIT_DIR").is_some()
        || std::env::var_os("GIT_WORK_TREE").is_some()
        || dir.ancestors().any(|d| d.join(".git").exists())
}

/// Adds `pattern` to the repository's `info/exclude`, so this machine's absolute paths are not
/// committed for a whole team. Returns a note when it could not.
pub(crate) fn exclude_from_git(project: &Path, pattern: &str) -> Option<String> {
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

pub(crate) fn read_manifest(locations: &Locations) -> Manifest {
    manifest::load(&locations.state()).unwrap_or_default()
}

/// Every registration on this machine that holds amplihack's entries: each host's file of each
/// scope (this project's, the user's, the machine's managed one) and every file a past install
/// recorded, in whichever project. Whether or not the host is installed.
pub(crate) fn machine_registrations(locations: &Locations, manifest: &Manifest) -> Vec<Target> {
    let mut all: Vec<Target> = Vec::new();
    for host in Host::ALL {
        for scope in crate::hosts::spec(host).scopes() {
            if super::managed_hosts::handles(host, scope) {
                continue;
            }
            if let Some(path) = crate::hosts::registration_file(host, locations, scope) {
                all.push(Target { host, scope, path });
            }
        }
    }
    for target in manifest_targets(manifest) {
        if !all.iter().any(|t| t.path == target.path) {
            all.push(target);
        }
    }
    all.retain(|t| holds_ours(t) || project_by_bridge(t));
    all.extend(super::managed_hosts::registered());
    all
}

/// Whether an Amplifier project scope counts as registered by the bridge registration alone
/// (its settings file lists nothing): the bridge, shared with the local scope, holds amplihack's
/// entries and the local settings file does not list amplihack (when it does, the bridge is the
/// local scope's).
pub(crate) fn project_by_bridge(target: &Target) -> bool {
    let local = Target {
        scope: Scope::Local,
        path: target.path.with_file_name("settings.local.yaml"),
        ..target.clone()
    };
    target.scope == Scope::Project
        && bridge_of(target).is_some_and(|b| holds_ours(&b))
        && !holds_ours(&local)
}

/// Whether a registration runs the binaries in `bin_dir`: its file names the hook binary there
/// (Amplifier's names amplihack's bundle, which names the binary amplihack deployed).
pub(crate) fn names_binaries(target: &Target, bin_dir: &Path) -> bool {
    if target.host == Host::Amplifier {
        return true;
    }
    let binary = bin_dir.join(registration::HOOKS_BINARY);
    let binary = binary.to_string_lossy();
    safe_file::read_text(&target.path)
        .ok()
        .flatten()
        .is_some_and(|text| text.contains(binary.as_ref()))
}

pub(crate) fn manifest_targets(manifest: &Manifest) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    for r in &manifest.registrations {
        let (Some(host), Some(scope)) = (Host::from_flag(&r.host), Scope::from_name(&r.scope))
        else {
            continue;
        };
        let target = Target {
            host,
            scope,
            path: recorded_path(r),
        };
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    targets
}

/// A recorded registration's file. Earlier versions recorded Amplifier's bridge registration
/// (`<dir>/.amplifier/hooks/amplihack/hooks.json`); the registration is now the scope's
/// settings file beside it (`<dir>/.amplifier/settings.yaml`, or `settings.local.yaml`).
fn recorded_path(r: &Registration) -> PathBuf {
    let amplifier_dir = r.path.ancestors().nth(3);
    match amplifier_dir {
        Some(dir) if r.host == Host::Amplifier.name() && r.path.ends_with(BRIDGE_FILE) => {
            dir.join(if r.scope == Scope::Local.as_str() {
                "settings.local.yaml"
            } else {
                "settings.yaml"
            })
        }
        _ => r.path.clone(),
    }
}

pub(crate) fn record_registrations(
    locations: &Locations,
    bin_dir: &Path,
    targets: &[Target],
    add: bool,
) -> Result<(), CommandError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    manifest::update(&locations.state(), |manifest| {
        // A registration written again keeps when it was first made.
        let since = |t: &Target| {
            manifest
                .registrations
                .iter()
                .find(|r| t.path == recorded_path(r) && t.host.name() == r.host)
                .and_then(|r| r.since)
                .unwrap_or(now)
        };
        let since: Vec<u64> = targets.iter().map(since).collect();
        manifest.registrations.retain(|r| {
            !targets
                .iter()
                .any(|t| t.path == recorded_path(r) && t.host.name() == r.host)
        });
        if add {
            manifest
                .registrations
                .extend(targets.iter().zip(since).map(|(t, since)| Registration {
                    host: t.host.name().into(),
                    scope: t.scope.as_str().into(),
                    path: t.path.clone(),
                    since: Some(since),
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

/// The project directory a project- or local-scope registration file belongs to.
pub(crate) fn project_of(target: &Target) -> Option<PathBuf> {
    let levels = match (target.scope, is_bridge(target)) {
        (Scope::User | Scope::Managed, _) => return None,
        _ if let Some(bridge) = crate::hosts::bridge_file::of(target.host) => bridge.depth(), // <project>/.opencode/plugin/amplihack.js
        (_, true) => 4,  // <project>/.amplifier/hooks/amplihack/hooks.json
        (_, false) => 2, // <project>/.claude/settings.json, <project>/.amplifier/settings.yaml
    };
    target.path.ancestors().nth(levels).map(Path::to_path_buf)
}

/// Takes amplihack's entries out of one registration file; deletes the file when nothing of
/// the user's is left in it (amplihack's own bridge plugin file, or a settings file install
/// created), and then amplihack's plugin directory and git exclusion. `hooks_key_added`: install
/// added the file's `hooks` key, which goes again when left empty (the user's bytes back);
/// `user_empty`: the event keys that were the user's and empty before install, which stay.
pub(crate) fn unregister(
    target: &Target,
    options: &EditOptions,
    created_by_us: bool,
    hooks_key_added: bool,
    user_empty: &[String],
) -> Result<EditReport, CommandError> {
    let report = safe_file::edit_json(&target.path, &target.edit_options(options), |current| {
        let Some(current) = current else {
            return Ok(NewContent::Delete);
        };
        let mut value = current.clone();
        registration::uninstall_keeping(&mut value, user_empty)?;
        // A file install created: its `hooks` key was ours too.
        if (hooks_key_added || created_by_us)
            && let Value::Object(root) = &mut value
            && root
                .get("hooks")
                .and_then(Value::as_object)
                .is_some_and(serde_json::Map::is_empty)
        {
            root.remove("hooks");
        }
        // Our own plugin file, or a settings file install created, holds nothing of the
        // user's once our hooks are gone (what the host stamps into any file it loads aside).
        let stamps = crate::hosts::stamps(target.host);
        let only_ours = (target.host == Host::Amplifier || created_by_us)
            && value.as_object().is_some_and(|m| {
                m.iter().all(|(k, v)| {
                    k == "description"
                        || stamps.contains(&k.as_str())
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
        (report.action, options.dry_run, target.path.parent())
    {
        remove_plugin_dir(dir);
        if target.host == Host::Amplifier
            && let Some(project) = project_of(target)
        {
            unexclude_from_git(&project, AMPLIFIER_EXCLUDE);
        }
    }
    Ok(report)
}

/// Removes amplihack's own Amplifier plugin directory once its `hooks.json` is gone: our lock
/// file and backups in it, then the directory, which `remove_dir` leaves alone if the user put
/// anything else there.
pub(crate) fn remove_plugin_dir(dir: &Path) {
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

/// Writes everything an Amplifier target needs: the app bundle in its settings file, the
/// project's bridge registration (project and local scope), and takes back the user-level bridge
/// file earlier versions wrote. The reports of the files it wrote, the settings file first.
pub(crate) fn register_amplifier(
    target: &Target,
    bundle: &Path,
    hooks_binary: &Path,
    options: &EditOptions,
    created: &[PathBuf],
) -> Result<Vec<(Target, EditReport)>, CommandError> {
    let mut reports = Vec::new();
    if let Some(report) = register_module(target, bundle, options)? {
        reports.push(report);
    }
    if let Some(bridge) = bridge_of(target) {
        let report = register(&bridge, hooks_binary, options)?;
        reports.push((bridge, report));
    }
    if let Some(legacy) = legacy_bridge_of(target).filter(|l| l.path.exists()) {
        let report = unregister(&legacy, options, created.contains(&legacy.path), false, &[])?;
        if report.action != Action::Unchanged {
            reports.push((legacy, report));
        }
    }
    Ok(reports)
}
