//! The report of what `install` and `uninstall` changed (or would change).

use serde_json::{Value, json};

use super::shared::host_name;
use super::{Detail, Outcome, Target, VERSION};
use crate::deploy;
use crate::safe_file::{Action, EditReport};

pub(crate) fn render_changes(
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

pub(crate) fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
