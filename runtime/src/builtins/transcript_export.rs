//! PreCompact: keep the transcript as it was before the compaction. Each compaction gets its own
//! copy, `.claude/runtime/logs/<session>/transcript-<UTC time>-<trigger>.jsonl` (0600: it holds
//! the conversation), never overwritten, and one metadata line in
//! `.claude/runtime/logs/<session>/compaction_metadata.jsonl` (time, trigger, sizes). The copy's
//! path goes into the session record, so the session start after the compaction names it. No
//! reply: nothing the host could misread.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use amplihack_protocol::{Payload, Reply};
use amplihack_state::{files, session, session_key, time};
use serde_json::json;

use super::{BuiltinError, Result};
use crate::pipeline::Call;

pub const LOGS_DIR: &str = ".claude/runtime/logs";

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    let Payload::Compact { trigger } = &event.payload else {
        return Ok(Reply::default());
    };
    let Some(source) = event.transcript_path.as_deref().map(Path::new) else {
        return Ok(Reply::default());
    };
    let trigger = trigger.as_deref().unwrap_or("unknown");
    let root = ctx.project_root(event);
    amplihack_state::project::runtime_dir(&root)?;
    let dir = root
        .join(LOGS_DIR)
        .join(session_key(event.session_id.as_deref()));
    files::private_dir(&dir)?;
    let stamp = time::utc_now_millis().replace([':', '.'], "-");
    let safe_trigger: String = trigger
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(20)
        .collect();
    let copy = dir.join(format!("transcript-{stamp}-{safe_trigger}.jsonl"));
    let mut from = std::fs::File::open(source).map_err(|e| BuiltinError::Io {
        path: source.to_path_buf(),
        action: "read the transcript",
        source: e,
    })?;
    let mut temp = tempfile::Builder::new()
        .prefix(".transcript-")
        .permissions(Permissions::from_mode(0o600))
        .tempfile_in(&dir)
        .map_err(|e| BuiltinError::Io {
            path: dir.clone(),
            action: "create a temporary file in",
            source: e,
        })?;
    let io = |e| BuiltinError::Io {
        path: copy.clone(),
        action: "write",
        source: e,
    };
    let bytes = std::io::copy(&mut from, &mut temp).map_err(io)?;
    temp.as_file()
        .set_permissions(Permissions::from_mode(0o600))
        .map_err(io)?;
    temp.persist_noclobber(&copy).map_err(|e| io(e.error))?;
    let lines = std::fs::read(&copy)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0);
    files::append_line(
        &dir.join("compaction_metadata.jsonl"),
        &json!({
            "time": time::utc_now_millis(),
            "session_id": event.session_id,
            "trigger": trigger,
            "transcript_path": source,
            "copy": copy,
            "bytes": bytes,
            "lines": lines,
        })
        .to_string(),
    )?;
    if let Some(state) = ctx.state() {
        session::update(&state, event.session_id.as_deref(), |s| {
            s.transcript_exports
                .push(copy.to_string_lossy().into_owned());
        })?;
    }
    Ok(Reply::default())
}
