//! The checks `doctor` and `status` make of one registration file.

use std::path::Path;

use amplihack_settings::amplifier_yaml;

use super::Target;
use super::shared::{amplifier_settings, host_name};
use crate::registration;
use crate::safe_file;

#[derive(Debug, Clone)]
pub struct Finding {
    pub problem: bool,
    pub message: String,
    pub fix: Option<String>,
}

impl Finding {
    pub(crate) fn ok(message: String) -> Finding {
        Finding {
            problem: false,
            message,
            fix: None,
        }
    }

    pub(crate) fn problem(message: String, fix: String) -> Finding {
        Finding {
            problem: true,
            message,
            fix: Some(fix),
        }
    }
}

/// What is wrong with one registration file, judged against a fresh install into it.
pub(crate) fn check_target(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
    let mut findings = check_registration(target, hooks_binary);
    if let Some(path) = amplifier_settings(target) {
        findings.push(check_module(target, &path, hooks_binary));
    }
    findings
}

/// The native module's entry in the scope's settings.yaml.
pub(crate) fn check_module(target: &Target, path: &Path, hooks_binary: &Path) -> Finding {
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

pub(crate) fn check_registration(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
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
