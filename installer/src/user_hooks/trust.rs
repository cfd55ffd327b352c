//! `amplihack hooks trust|untrust`: trust a project's plugins (every file they run).

use std::path::PathBuf;

use amplihack_engine::discovery::{self};
use amplihack_state::trust as trust_store;
use serde_json::json;

use crate::commands::{CommandError, Outcome};

use super::{Context, outcome_of};

fn record_trust(
    ctx: &Context,
    fingerprint: Option<trust_store::Fingerprint>,
) -> Result<(), CommandError> {
    trust_store::set(&ctx.state(), &ctx.locations.project, fingerprint)?;
    Ok(())
}

pub fn trust(ctx: &Context, trusted: bool) -> Result<Outcome, CommandError> {
    let files = ctx.project_files();
    if trusted && files.is_empty() {
        return Err(CommandError(format!(
            "{} has no hook plugins to trust",
            ctx.project_dir().display()
        )));
    }
    record_trust(ctx, trusted.then(|| trust_store::fingerprint(&files)))?;
    let mut text = String::new();
    for file in &files {
        text.push_str(&format!(
            "{}: {}\n",
            if trusted { "trusted" } else { "untrusted" },
            file.display()
        ));
    }
    if trusted {
        text.push_str("These files' hooks now run in this project; any change to them needs `amplihack hooks trust` again.\n");
    }
    Ok(outcome_of(
        if trusted { "trust" } else { "untrust" },
        text,
        json!({"project": ctx.locations.project, "files": files, "trusted": trusted}),
        0,
    ))
}

pub(super) fn level_dir(ctx: &Context, project: bool) -> PathBuf {
    if project {
        ctx.project_dir()
    } else {
        ctx.user_dir()
    }
}

/// After writing into the project level: keep the project trusted when it was trusted before
/// (the user asked for exactly this change); otherwise say how to trust it.
pub(super) fn retrust_after(
    ctx: &Context,
    was_trusted: bool,
    project: bool,
    text: &mut String,
) -> Result<(), CommandError> {
    if !project {
        return Ok(());
    }
    if was_trusted || discovery::plugin_files(&ctx.project_dir()).len() == 1 {
        record_trust(ctx, Some(trust_store::fingerprint(&ctx.project_files())))?;
        text.push_str("the project's hooks stay trusted\n");
    } else {
        text.push_str("project plugins run after `amplihack hooks trust`\n");
    }
    Ok(())
}
