//! `amplihack doctor [--fix]`.

use amplihack_protocol::claude_version;
use std::path::{Path, PathBuf};

use serde_json::json;

use amplihack_state::manifest::{self, Manifest};

use super::checks::{Finding, check_target};
use super::shared::{
    amplifier_settings, holds_ours, legacy_bridge_of, manifest_targets, our_commands,
    project_by_bridge, project_of, read_manifest, record_registrations, register,
    register_amplifier, targets,
};
use super::{CommandError, Outcome, Target, VERSION};
use crate::deploy::{self, BINARIES};
use crate::hosts::HostChoice;
use crate::registration::{self, Host};
use crate::safe_file::{self, Action, EditOptions};
use crate::scopes::{Locations, Scope};
use amplihack_settings::amplifier_yaml;

/// `amplihack doctor`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct DoctorArgs {
    /// Repair what can be repaired
    #[arg(long)]
    pub fix: bool,
    /// Only this host's registrations (default: every host found on this machine)
    #[arg(long, value_enum, default_value = "all")]
    pub host: HostChoice,
    #[command(flatten)]
    pub yes: super::YesArg,
    #[command(flatten)]
    pub bin: super::BinDirArg,
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

/// Said once, where a repository's handlers are confined less than the manual says, or not at
/// all (no Landlock: they run as the user's own plugins do, fail-open): nothing when the kernel
/// confines everything.
fn confinement_note() -> Option<Finding> {
    confinement_note_for(amplihack_platform::confine::support())
}

fn confinement_note_for(support: amplihack_platform::confine::Support) -> Option<Finding> {
    use amplihack_platform::confine::Support;
    let advice =
        "a Linux kernel with Landlock ABI 6 or later (see the manual's trust page)".to_string();
    match support {
        Support::Full { .. } => None,
        Support::Partial { abi, missing } => Some(Finding::note(
            format!(
                "Landlock ABI {abi}: a project's hook handlers run confined, but not for: {}",
                missing.join("; ")
            ),
            advice,
        )),
        Support::Absent { why } => Some(Finding::note(
            format!("a project's hook handlers run unconfined (as your own plugins do): {why}"),
            advice,
        )),
    }
}

/// Said once, where a confined handler's pinned files cannot be shown as the verified copies of
/// the trusted bytes (no mount namespace of its own: `platform::exact`): the handler then reads
/// them by path, as the user's own plugins do. Nothing where there is no confinement at all
/// ([`confinement_note`] says that) or where the copies are shown.
fn exact_note() -> Option<Finding> {
    use amplihack_platform::confine;
    if matches!(confine::support(), confine::Support::Absent { .. }) {
        return None;
    }
    exact_note_for(amplihack_platform::exact::support())
}

fn exact_note_for(support: amplihack_platform::exact::Support) -> Option<Finding> {
    match support {
        amplihack_platform::exact::Support::Available => None,
        amplihack_platform::exact::Support::Absent { why } => Some(Finding::note(
            format!(
                "a project's hook handlers read the files trust pinned by path, not as the trusted bytes (a file changed while a handler starts may run unchecked): {why}"
            ),
            "allow unprivileged user namespaces (see the manual's trust page)".to_string(),
        )),
    }
}

fn diagnose(
    locations: &Locations,
    manifest: &Manifest,
    bin_dir: &Path,
    choice: HostChoice,
) -> Diagnosis {
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
    findings.extend(confinement_note());
    findings.extend(exact_note());

    // Every recorded registration, plus any scope of this project that holds our entries.
    let mut checked: Vec<Target> = manifest_targets(manifest);
    for scope in Scope::EVERY {
        for target in targets(locations, scope, choice) {
            // An Amplifier scope counts when its settings file, its bridge registration or the
            // user-level bridge file of earlier versions holds amplihack's entries.
            // (The bridge registration, shared by the project and local scopes, counts for the
            // project scope unless the local one lists amplihack.)
            let has_ours = holds_ours(&target)
                || project_by_bridge(&target)
                || legacy_bridge_of(&target).is_some_and(|b| holds_ours(&b));
            if has_ours && !checked.iter().any(|t| t.path == target.path) {
                checked.push(target);
            }
        }
    }
    checked.retain(|t| choice.includes(t.host));
    // Host by host: what was installed (the manifest's hosts), or both when nothing was; the one
    // host named by --host.
    let installed: Vec<Host> = Host::ALL
        .into_iter()
        .filter(|h| manifest.hosts.iter().any(|n| n == h.name()))
        .collect();
    let wanted = match choice.host() {
        Some(host) => vec![host],
        None if installed.is_empty() && checked.is_empty() => {
            vec![Host::ClaudeCode, Host::Amplifier]
        }
        None => installed,
    };
    if wanted.contains(&Host::ClaudeCode) && !checked.iter().any(|t| t.host == Host::ClaudeCode) {
        findings.push(Finding::problem(
            "Claude Code: amplihack is not registered in any scope".into(),
            "amplihack install --host claude".into(),
        ));
    }
    if wanted.contains(&Host::Amplifier) && !checked.iter().any(|t| t.host == Host::Amplifier) {
        findings.push(Finding::problem(
            "Amplifier: amplihack is not registered (no bundle.app entry in any settings.yaml)"
                .into(),
            "amplihack install --host amplifier".into(),
        ));
    }
    // Codex's and Copilot's managed files, which the machine's administrator wrote.
    let machine: Vec<Target> = super::managed_hosts::registered()
        .into_iter()
        .filter(|t| choice.includes(t.host))
        .collect();
    for host in [Host::Codex, Host::Copilot]
        .into_iter()
        .filter(|h| choice.includes(*h))
    {
        findings.extend(super::managed_hosts::check(host));
    }
    let with_machine: Vec<Target> = checked.iter().chain(&machine).cloned().collect();
    for host in wanted
        .iter()
        .filter(|h| !matches!(h, Host::ClaudeCode | Host::Amplifier))
    {
        if !with_machine.iter().any(|t| t.host == *host) {
            findings.push(Finding::problem(
                format!("{}: amplihack is not registered in any scope", host.title()),
                format!("amplihack install --host {}", host.name()),
            ));
        }
    }
    if choice.host().is_none() {
        findings.extend(every_host(locations, &with_machine, &wanted));
    }
    findings.extend(super::silence::check(locations, manifest, choice));
    if choice.amplifier() {
        findings.extend(hidden_app_bundle(locations));
    }
    if wanted.contains(&Host::ClaudeCode)
        && let Some(version) = crate::plugin_events::claude_version()
    {
        findings.extend(untested_claude_code(version));
    }
    if choice.claude() {
        findings.extend(managed_policy(
            &crate::managed::read(&amplihack_settings::claude_paths::managed_dir()),
            &checked,
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
        let found = check_target(target, &hooks_binary, &locations.home);
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
                && (matches!(t.scope, Scope::User | Scope::Managed)
                    || t.path.starts_with(&locations.project))
        })
        .filter(|t| {
            t.read_json()
                .ok()
                .flatten()
                .is_some_and(|(_, v)| !registration::find_ours(&v).is_empty())
        })
        .collect();
    let differ = claude_scopes
        .iter()
        .map(|t| our_commands(t))
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

/// The whole of `amplihack doctor`: the binaries and registrations, then per plugin the events
/// no host will deliver and why, then the hook runs that failed lately.
pub fn doctor(args: &DoctorArgs, project: &Path) -> Result<Outcome, CommandError> {
    let mut outcome = doctor_own(args, project)?;
    if let Ok(ctx) = crate::user_hooks::Context::new(project) {
        let notes = crate::plugin_events::doctor_notes(&ctx, args.fix);
        for note in &notes {
            outcome.text.push_str(&format!("note: {note}\n"));
        }
        outcome.json["plugin_notes"] = serde_json::json!(notes);
    }
    if let Some(trouble) = crate::log::doctor_note() {
        outcome
            .text
            .push_str(&format!("note: {}\n", trouble.note()));
        outcome.json["recent_failures"] = trouble.json();
    }
    crate::log::parked_note(&mut outcome);
    Ok(outcome)
}

fn doctor_own(args: &DoctorArgs, project: &Path) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(project)?;
    let manifest = read_manifest(&locations);
    let bin_dir = args.bin.resolve(&manifest, &locations.home);
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let mut diagnosis = diagnose(&locations, &manifest, &bin_dir, args.host);

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
            let options = EditOptions::default();
            let written = if target.host == Host::Amplifier {
                let module = deploy::deploy_module(&locations.home, false)?;
                let bundle = deploy::deploy_bundle(&locations.home, &module, &hooks_binary, false)?;
                register_amplifier(target, &bundle, &hooks_binary, &options, &manifest.created)?
            } else {
                vec![(target.clone(), register(target, &hooks_binary, &options)?)]
            };
            repaired.extend(
                written
                    .into_iter()
                    .filter(|(_, r)| r.action != Action::Unchanged)
                    .map(|(file, _)| file.path),
            );
        }
        if !diagnosis.vanished.is_empty() {
            record_registrations(&locations, &bin_dir, &diagnosis.vanished, false)?;
            repaired.push(manifest::path(&locations.state()));
        }
        // Judge the result, not the attempt.
        let manifest = read_manifest(&locations);
        diagnosis = diagnose(&locations, &manifest, &bin_dir, args.host);
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
            (Some(advice), false) => {
                text.push_str(&format!("note: {}\n  {advice}\n", finding.message))
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
        "hosts": super::status::inventory(&locations, &status_registrations(args, project), args.host),
    });
    Ok(Outcome {
        text,
        json,
        code: i32::from(problems > 0),
    })
}

/// The registrations as `status --json` lists them, for doctor's inventory.
fn status_registrations(args: &DoctorArgs, project: &Path) -> Vec<serde_json::Value> {
    let status_args = super::StatusArgs {
        host: args.host,
        bin: args.bin.clone(),
    };
    super::status(&status_args, project)
        .map(|o| {
            o.json["registrations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

/// The whole machine, host by host: installed and registered; installed and not registered
/// (with the command that registers it; hosts install registered before are reported as
/// problems already); registered, but the host is gone.
fn every_host(locations: &Locations, checked: &[Target], wanted: &[Host]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for host in Host::ALL {
        let home = crate::hosts::home_dir(host, locations);
        let mut scopes: Vec<&str> = Vec::new();
        for target in checked.iter().filter(|t| t.host == host) {
            if !scopes.contains(&target.scope.as_str()) {
                scopes.push(target.scope.as_str());
            }
        }
        let title = host.title();
        match (crate::hosts::installed(host, locations), scopes.is_empty()) {
            (true, false) => findings.push(Finding::ok(format!(
                "{title}: installed ({}), amplihack registered ({})",
                home.display(),
                scopes.join(", ")
            ))),
            (true, true) if !wanted.contains(&host) => findings.push(Finding::note(
                format!(
                    "{title} is installed ({}) and amplihack is not registered for it",
                    home.display()
                ),
                format!("to guard it too: amplihack install --host {}", host.name()),
            )),
            (false, false) => findings.push(Finding::note(
                format!(
                    "{title}: amplihack is registered ({}) but {title} is not installed here ({} is missing)",
                    scopes.join(", "),
                    home.display()
                ),
                format!(
                    "amplihack uninstall --host {} if {title} is gone for good",
                    host.name()
                ),
            )),
            _ => {}
        }
    }
    findings
}

/// The app reads the user, project and local settings files and replaces lists rather than
/// joining them: when a more specific file of this project has its own `bundle.app` list without
/// amplihack's bundle, amplihack's entry in a less specific file is not loaded here.
fn hidden_app_bundle(locations: &Locations) -> Option<Finding> {
    let files: Vec<(Scope, PathBuf)> = Scope::ALL
        .into_iter()
        .filter_map(|scope| {
            targets(locations, scope, HostChoice::One(Host::Amplifier))
                .first()
                .and_then(amplifier_settings)
                .map(|path| (scope, path))
        })
        .collect();
    let lists: Vec<(Scope, &PathBuf, Vec<String>)> = files
        .iter()
        .filter_map(|(scope, path)| {
            let text = safe_file::read_text(path).ok().flatten()?;
            Some((*scope, path, amplifier_yaml::app_list(&text)?))
        })
        .collect();
    let ours_somewhere = lists
        .iter()
        .any(|(_, _, list)| list.iter().any(|u| amplifier_yaml::is_our_uri(u)));
    let (scope, path, effective) = lists.last()?;
    if !ours_somewhere || effective.iter().any(|u| amplifier_yaml::is_our_uri(u)) {
        return None;
    }
    Some(Finding::problem(
        format!(
            "{}: its bundle.app list replaces the other settings files' lists (the Amplifier app does not join them), and amplihack's bundle is not in it: amplihack is not loaded in {}",
            path.display(),
            locations.project.display()
        ),
        format!(
            "amplihack install --host amplifier --scope {}",
            scope.as_str()
        ),
    ))
}

/// What the machine's managed settings mean for amplihack: with `allowManagedHooksOnly`, Claude
/// Code runs none of amplihack's entries outside the managed scope; a managed file Claude Code
/// cannot read stops every session (2.1.259 and later).
fn managed_policy(managed: &crate::managed::Managed, checked: &[Target]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (path, why) in &managed.unreadable {
        findings.push(Finding::problem(
            format!(
                "{}: Claude Code's managed settings cannot be read ({why}); Claude Code 2.1.259 and later refuses to start",
                path.display()
            ),
            "ask your administrator to correct the file".into(),
        ));
    }
    if managed.ours {
        let events = if managed.plugin_events.is_empty() {
            String::new()
        } else {
            format!(
                "; it also dispatches {} to users' plugins",
                managed.plugin_events.join(", ")
            )
        };
        findings.push(Finding::ok(format!(
            "Claude Code: amplihack is registered in the managed settings (every user of this machine runs it){events}"
        )));
    }
    let elsewhere: Vec<String> = checked
        .iter()
        .filter(|t| t.host == Host::ClaudeCode && t.scope != Scope::Managed)
        .map(|t| t.path.display().to_string())
        .collect();
    if let (Some(from), false, false) =
        (&managed.hooks_only_from, managed.ours, elsewhere.is_empty())
    {
        findings.push(Finding::problem(
            format!(
                "Claude Code: {} sets {}: true, so Claude Code runs only the managed settings' hooks, and amplihack's entries in {} never run",
                from.display(),
                crate::managed::HOOKS_ONLY_KEY,
                elsewhere.join(", ")
            ),
            "an administrator registers amplihack for every user: `sudo amplihack install --scope managed` (manual: docs/src/admin/managed.md)".into(),
        ));
    }
    findings
}

/// The installed Claude Code against the newest amplihack was tested with: past it, parity (every
/// event and reply handled as natively) is unproven.
fn untested_claude_code(installed: claude_version::Version) -> Option<Finding> {
    let newest = amplihack_protocol::event::NEWEST_TESTED_CLAUDE_CODE;
    let name = claude_version::display;
    (installed > newest).then(|| {
        Finding::note(
            format!(
                "Claude Code {} is newer than the newest version amplihack was tested with ({}): events or reply forms it added may not be handled as natively",
                name(installed),
                name(newest)
            ),
            "an amplihack release tested with it, when there is one, closes the gap (`amplihack update`)".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Said once, as a note (fail-open: no exit 1), only where confinement is short of full.
    #[test]
    fn a_kernel_without_landlock_is_said_once() {
        use amplihack_platform::confine::Support;
        assert!(confinement_note_for(Support::Full { abi: 7 }).is_none());
        let absent = confinement_note_for(Support::Absent {
            why: "this kernel has no Landlock".into(),
        })
        .expect("noted");
        assert!(!absent.problem);
        assert!(
            absent.message.contains("run unconfined") && absent.message.contains("no Landlock"),
            "{}",
            absent.message
        );
        let partial = confinement_note_for(Support::Partial {
            abi: 3,
            missing: vec!["network: TCP connect and bind (Landlock ABI 4)"],
        })
        .expect("noted");
        assert!(partial.message.contains("ABI 3") && partial.message.contains("network"));
    }

    /// Said once, as a note, only where the mounts cannot be made.
    #[test]
    fn a_system_without_mount_namespaces_is_said_once() {
        use amplihack_platform::exact::Support;
        assert!(exact_note_for(Support::Available).is_none());
        let absent = exact_note_for(Support::Absent {
            why: "user namespaces are switched off".into(),
        })
        .expect("noted");
        assert!(!absent.problem);
        assert!(
            absent.message.contains("by path") && absent.message.contains("switched off"),
            "{}",
            absent.message
        );
    }

    #[test]
    fn a_claude_code_newer_than_the_newest_tested_is_noted() {
        let newest = amplihack_protocol::event::NEWEST_TESTED_CLAUDE_CODE;
        assert!(untested_claude_code(newest).is_none());
        assert!(untested_claude_code((2, 0, 30)).is_none());
        let newer = untested_claude_code((newest.0, newest.1, newest.2 + 1)).expect("noted");
        assert!(!newer.problem);
        assert!(
            newer
                .message
                .contains("newer than the newest version amplihack was tested with")
        );
    }
}
