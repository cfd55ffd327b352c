//! The checks `doctor` and `status` make of one registration file.

use std::path::Path;

use amplihack_settings::amplifier_yaml;

use super::shared::{amplifier_settings, bridge_of, host_name, legacy_bridge_of};
use crate::deploy;
pub use crate::finding::Finding;
use crate::hosts::Target;
use crate::registration;
use crate::safe_file;

/// What is wrong with one registration file, judged against a fresh install into it (`home`
/// locates the deployed Amplifier module and bundle).
pub(crate) fn check_target(target: &Target, hooks_binary: &Path, home: &Path) -> Vec<Finding> {
    if let Some(bridge) = crate::hosts::bridge_file::of(target.host) {
        return bridge.check(target, hooks_binary);
    }
    if crate::hosts::edits_toml_hooks(target.host) {
        let mut findings = crate::hosts::toml_hooks::check(target, hooks_binary);
        findings.extend(
            crate::hosts::trust_note(target.host, target.scope, &target.path, home)
                .map(|(message, fix)| Finding::note(message, fix)),
        );
        return findings;
    }
    let Some(path) = amplifier_settings(target) else {
        let mut findings = check_registration(target, hooks_binary);
        if target.host == crate::registration::Host::Codex {
            findings.extend(crate::hosts::codex::check(&target.path, target.scope));
        }
        findings.extend(
            crate::hosts::trust_note(target.host, target.scope, &target.path, home)
                .map(|(message, fix)| Finding::note(message, fix)),
        );
        return findings;
    };
    let mut findings = check_module(target, &path, hooks_binary, home);
    if let Some(bridge) = bridge_of(target) {
        findings.extend(check_registration(&bridge, hooks_binary));
    }
    if let Some(legacy) = legacy_bridge_of(target) {
        findings.extend(check_unread(&legacy));
    }
    findings
}

/// A user-level bridge registration an earlier version wrote: no host reads it.
fn check_unread(target: &Target) -> Vec<Finding> {
    let ours = target
        .read_json()
        .ok()
        .flatten()
        .is_some_and(|(_, v)| !registration::find_ours(&v).is_empty());
    if ours {
        vec![Finding::problem(
            format!(
                "{}: written by an earlier amplihack; no host reads it (the hook-shell bridge reads only a project's .amplifier/hooks/)",
                target.path.display()
            ),
            "amplihack doctor --fix (removes it)".into(),
        )]
    } else {
        Vec::new()
    }
}

/// amplihack's app bundle in the scope's settings.yaml, the bundle file and the module it names.
fn check_module(target: &Target, path: &Path, hooks_binary: &Path, home: &Path) -> Vec<Finding> {
    let fix = format!(
        "amplihack install --scope {} --host amplifier (or amplihack doctor --fix)",
        target.scope.as_str()
    );
    let text = safe_file::read_text(path)
        .ok()
        .flatten()
        .unwrap_or_default();
    let bundle = deploy::bundle_file(home);
    let uri = amplifier_yaml::uri_of(&bundle);
    let mut findings = Vec::new();
    match amplifier_yaml::find_app(&text) {
        Err(e) => {
            return vec![Finding::problem(
                format!("{}: {e}", path.display()),
                "fix the YAML, then run `amplihack doctor` again".into(),
            )];
        }
        Ok(None) => findings.push(Finding::problem(
            format!(
                "{}: amplihack's app bundle is not listed under bundle.app (the Amplifier app does not load amplihack)",
                path.display()
            ),
            fix.clone(),
        )),
        Ok(Some(found)) if found != uri => findings.push(Finding::problem(
            format!("{}: bundle.app lists {found}, not {uri}", path.display()),
            fix.clone(),
        )),
        Ok(Some(_)) => {}
    }
    if let Ok(Some(_)) = amplifier_yaml::find(&text) {
        findings.push(Finding::problem(
            format!(
                "{}: a modules.hooks entry for hooks-amplihack, which the Amplifier app never mounts",
                path.display()
            ),
            fix.clone(),
        ));
    }
    let module = deploy::module_dir(home);
    let expected = deploy::bundle_text(&module, hooks_binary);
    if std::fs::read_to_string(&bundle).ok().as_deref() != Some(expected.as_str()) {
        findings.push(Finding::problem(
            format!(
                "{}: missing or not naming {} and {}",
                bundle.display(),
                module.display(),
                hooks_binary.display()
            ),
            fix.clone(),
        ));
    }
    if !module.join("pyproject.toml").is_file() {
        findings.push(Finding::problem(
            format!("{}: the Amplifier module is missing", module.display()),
            fix,
        ));
    }
    if findings.is_empty() {
        findings.push(Finding::ok(format!(
            "{}: amplihack's app bundle {} listed under bundle.app",
            path.display(),
            bundle.display()
        )));
    }
    findings
}

pub(crate) fn check_registration(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
    let mut findings: Vec<Finding> = crate::hosts::shadowed(target.host, &target.path)
        .map(|(problem, fix)| Finding::problem(problem, fix))
        .into_iter()
        .collect();
    findings.extend(check_registration_file(target, hooks_binary));
    findings
}

fn check_registration_file(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
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
    let value = match target.read_json() {
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
    let recorded = crate::scopes::Locations::from_env(&target.path)
        .map(|l| crate::fail_closed::recorded(&l.state()))
        .unwrap_or_default();
    let closes = recorded == registration::Failure::Closed
        && amplihack_protocol::hosts::fail_closed_switch(target.host).is_some();
    if let Err(e) =
        registration::install_failing(&mut expected, hooks_binary, target.host, recorded)
    {
        return vec![Finding::problem(
            format!("{}: {}", target.path.display(), e.message()),
            "fix the field as described".into(),
        )];
    }
    if expected == value {
        return vec![Finding::ok(format!(
            "{place}: {} hooks, canonical{}",
            registration::canonical(target.host).len(),
            if closes { ", fail-closed" } else { "" }
        ))];
    }
    let ours = registration::find_ours(&value);
    let mut findings = Vec::new();
    let now = registration::failure_now(&value);
    if closes && now == registration::Failure::Open {
        findings.push(Finding::problem(
            format!("{place}: PreToolUse is fail-open, but `install --fail-closed` is recorded"),
            "amplihack doctor --fix (or `amplihack install --fail-open` to keep it fail-open)"
                .into(),
        ));
    } else if !closes
        && now == registration::Failure::Closed
        && crate::hosts::edits_json_hooks(target.host)
    {
        findings.push(Finding::problem(
            format!("{place}: PreToolUse is fail-closed, but fail-open is recorded"),
            "amplihack doctor --fix (or `amplihack install --fail-closed` to keep it fail-closed)"
                .into(),
        ));
    }
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
