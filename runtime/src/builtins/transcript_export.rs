//! PreCompact: keep the transcript as it was before the compaction. Each compaction gets its own
//! copy, `.claude/runtime/logs/<session>/transcript-<UTC time>-<trigger>.jsonl` (0600: it holds
//! the conversation), never overwritten, and one metadata line in
//! `.claude/runtime/logs/<session>/compaction_metadata.jsonl` (time, trigger, sizes). The copy's
//! path goes into the session record, so the session start after the compaction names it. No
//! reply: nothing the host could misread.
//!
//! The transcript is copied only when it is a regular file, and at most [`COPY_MAX`] bytes of it
//! (a longer copy ends with a [`CUT_MARKER`] line and the call is reported); the copy is written
//! without following a link under `.claude/runtime/` ([`amplihack_state::safe_open`]).

use std::io::{Read, Write};
use std::path::Path;

use amplihack_protocol::{Payload, Reply};
use amplihack_state::{bounded, project, session, session_key, time};
use serde_json::json;

use super::{BuiltinError, Result};
use crate::pipeline::Call;

pub const LOGS_DIR: &str = ".claude/runtime/logs";
/// The most of a transcript copied (a host could name `/dev/zero`); past it the copy ends with
/// a [`CUT_MARKER`] line.
pub const COPY_MAX: u64 = 256 * 1024 * 1024;
/// The `type` of the JSON line that ends a copy cut at [`COPY_MAX`].
pub const CUT_MARKER: &str = "amplihack-transcript-cut";

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    let Payload::Compact { trigger } = &event.payload else {
        return Ok(Reply::default());
    };
    let Some(source) = event.transcript_path.as_deref().map(Path::new) else {
        return Ok(Reply::default());
    };
    let trigger = trigger.as_deref().unwrap_or("unknown");
    // A regular file only: a FIFO or a device is refused before anything is created.
    let Some(mut from) = bounded::open_if_regular(source)? else {
        return Err(BuiltinError::Other(format!(
            "cannot read the transcript {}: it does not exist",
            source.display()
        )));
    };
    let root = ctx.project_root(event);
    let dir = project::writable(
        &root,
        &Path::new(LOGS_DIR).join(session_key(event.session_id.as_deref())),
    )?;
    let stamp = time::utc_now_millis().replace([':', '.'], "-");
    let safe_trigger: String = trigger
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(20)
        .collect();
    let name = format!("transcript-{stamp}-{safe_trigger}.jsonl");
    let copy = dir.path().join(&name);
    let mut to = dir.create_new(&name)?.ok_or_else(|| {
        BuiltinError::Other(format!(
            "{} exists already; not overwritten",
            copy.display()
        ))
    })?;
    let copied = copy_capped(&mut from, &mut to, COPY_MAX, source).and_then(|c| {
        to.sync_all()?;
        Ok(c)
    });
    let copied = match copied {
        Ok(copied) => copied,
        Err(source) => {
            let _ = dir.remove(&name);
            return Err(BuiltinError::Io {
                path: copy,
                action: "write",
                source,
            });
        }
    };
    dir.append_line(
        "compaction_metadata.jsonl",
        &json!({
            "time": time::utc_now_millis(),
            "session_id": event.session_id,
            "trigger": trigger,
            "transcript_path": source,
            "copy": copy,
            "bytes": copied.bytes,
            "lines": copied.lines,
            "truncated": copied.truncated,
        })
        .to_string(),
    )?;
    if let Some(state) = ctx.state() {
        session::update(&state, event.session_id.as_deref(), |s| {
            s.transcript_exports
                .push(copy.to_string_lossy().into_owned());
        })?;
    }
    if copied.truncated {
        return Err(BuiltinError::Other(format!(
            "the transcript {} is larger than {} MiB: its copy {} holds the first {} MiB and ends with a \"{CUT_MARKER}\" line",
            source.display(),
            COPY_MAX / (1024 * 1024),
            copy.display(),
            COPY_MAX / (1024 * 1024),
        )));
    }
    Ok(Reply::default())
}

/// What was copied.
#[derive(Debug, PartialEq)]
pub struct Copied {
    pub bytes: u64,
    pub lines: u64,
    pub truncated: bool,
}

/// Copies at most `max` bytes; past them, a JSON line saying so (`{"type": CUT_MARKER, …}`).
pub fn copy_capped(
    from: &mut impl Read,
    to: &mut impl Write,
    max: u64,
    source: &Path,
) -> std::io::Result<Copied> {
    let mut buf = vec![0u8; 64 * 1024];
    let (mut bytes, mut lines) = (0u64, 0u64);
    let mut limited = from.take(max);
    loop {
        let n = match limited.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        bytes += n as u64;
        lines += buf[..n].iter().filter(|&&c| c == b'\n').count() as u64;
    }
    let mut probe = [0u8; 1];
    let truncated = bytes == max && from.read(&mut probe)? > 0;
    if truncated {
        let marker = json!({"type": CUT_MARKER, "message": format!(
            "amplihack copied only the first {max} bytes of {}; the rest was left out",
            source.display()
        )});
        to.write_all(format!("\n{marker}\n").as_bytes())?;
        lines += 2;
    }
    Ok(Copied {
        bytes,
        lines,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_past_the_cap_ends_with_a_clear_line() {
        let source = Path::new("/t.jsonl");
        let mut out = Vec::new();
        let whole = copy_capped(&mut &b"{}\n{}\n"[..], &mut out, 6, source).expect("copy");
        assert_eq!(
            whole,
            Copied {
                bytes: 6,
                lines: 2,
                truncated: false
            }
        );
        let mut out = Vec::new();
        let cut = copy_capped(&mut std::io::repeat(b'x'), &mut out, 10, source).expect("copy");
        assert!(cut.truncated);
        let text = String::from_utf8(out).expect("utf8");
        let last: serde_json::Value =
            serde_json::from_str(text.lines().last().expect("line")).expect("json");
        assert_eq!(last["type"], CUT_MARKER);
        assert!(text.starts_with("xxxxxxxxxx\n"), "{text}");
    }
}
