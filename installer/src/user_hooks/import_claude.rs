//! `amplihack hooks import-claude`: move your own hooks out of Claude Code's settings.

use std::path::Path;

use amplihack_engine::config;
use serde_json::{Value, json};

use crate::commands::{CommandError, Outcome};
use crate::registration;
use crate::safe_file::{self, EditOptions, NewContent};

use super::install::{InstallArgs, install};
use super::trust::{before, level_dir, retrust_after};
use super::{Context, outcome_of};

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
                level: if project {
                    super::HooksLevel::Project
                } else {
                    super::HooksLevel::User
                },
                force: false,
                yes: Default::default(),
            },
        );
    }
    let (_, settings) = safe_file::read_json(&from)?.ok_or_else(|| {
        CommandError::refused(format!("{}: no such settings file", from.display()))
    })?;
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
    let before = before(ctx);
    config::parse(&target, &plugin.to_string())
        .map_err(|e| CommandError::refused(format!("the imported hooks are not valid: {e}")))?;
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
    let installed = target.parent().unwrap_or(&target).to_path_buf();
    retrust_after(ctx, &before, (project, &installed), &mut text)?;
    Ok(outcome_of(
        "import-claude",
        text,
        json!({"imported": count, "from": from, "to": target}),
        0,
    ))
}
