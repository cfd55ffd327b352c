//! `amplihack hooks validate`: check hooks files (every dialect) without running them.

use std::path::PathBuf;

use amplihack_engine::discovery::{self};
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
        let parsed = discovery::read_small(file)
            .map_err(|e| format!("{}: cannot be read: {e}", file.display()))
            .and_then(|t| discovery::parse_file(file, &t).map_err(|e| e.to_string()));
        match parsed {
            Ok(config) => {
                text.push_str(&format!("ok: {}\n", file.display()));
                for note in &config.skipped {
                    text.push_str(&format!("  note: {note}\n"));
                }
                results.push(json!({"file": file, "valid": true, "notes": config.skipped}));
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
