//! `amplihack hooks validate`: check hooks files (every dialect) without running them.

use std::path::PathBuf;

use amplihack_engine::dialects::unknown_keys;
use amplihack_engine::discovery::{self};
use amplihack_engine::matcher;
use serde_json::json;

use crate::commands::{CommandError, Outcome};

use super::{Context, outcome_of};

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
        let read = discovery::read_small(file)
            .map_err(|e| format!("{}: cannot be read: {e}", file.display()));
        let parsed = read
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|t| discovery::parse_file(file, t).map_err(|e| e.to_string()));
        match parsed {
            Ok(config) => {
                let mut warnings = unknown_fields(file, read.as_deref().unwrap_or_default());
                warnings.extend(
                    config
                        .groups
                        .iter()
                        .filter_map(|g| g.matcher.as_deref().and_then(matcher::problem)),
                );
                text.push_str(&format!("ok: {}\n", file.display()));
                for warning in &warnings {
                    text.push_str(&format!("  warning: {}: {warning}\n", file.display()));
                }
                for note in &config.skipped {
                    text.push_str(&format!("  note: {note}\n"));
                }
                results.push(json!({"file": file, "valid": true, "notes": config.skipped, "warnings": warnings}));
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

/// The fields no reader of the file's dialect knows (a typo's text is lost silently otherwise),
/// one line each: where, what, and the likely name.
fn unknown_fields(file: &std::path::Path, text: &str) -> Vec<String> {
    match discovery::dialect_of(file) {
        Some(dialect) => unknown_keys::unknown_keys(file, text, dialect)
            .iter()
            .map(ToString::to_string)
            .collect(),
        None => Vec::new(),
    }
}
