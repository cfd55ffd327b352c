//! Built-in SessionStart context: the project's `.claude/context/PROJECT.md`, size-capped.

use std::io::{ErrorKind, Read};
use std::path::Path;

use amplihack_protocol::{HookEvent, Reply};

use crate::context::Context;

/// Characters of PROJECT.md injected at most. Claude Code cuts any one context at 10,000
/// characters (and saves the rest to a file); 8,000 leaves room for the other hooks' contexts.
pub const MAX_CHARS: usize = 8_000;

/// Bytes read at most: four bytes a character is the UTF-8 worst case.
const MAX_READ: u64 = (MAX_CHARS as u64) * 4 + 4;

pub const RELATIVE_PATH: &str = ".claude/context/PROJECT.md";

pub fn reply(event: &HookEvent, ctx: &Context) -> Result<Reply, String> {
    let Some(project) = ctx.project_dir(event) else {
        return Ok(Reply::default());
    };
    let path = Path::new(&project).join(RELATIVE_PATH);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {
            return Ok(Reply::default());
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let total_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    file.take(MAX_READ)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return Ok(Reply::default());
    }
    let mut body: String = text.chars().take(MAX_CHARS).collect();
    if body.len() < text.len() || total_bytes > MAX_READ {
        body.push_str(&format!(
            "\n\n[PROJECT.md truncated to its first {MAX_CHARS} characters; the whole file is {}]",
            path.display()
        ));
    }
    Ok(Reply::context(format!(
        "Project context (from {RELATIVE_PATH}):\n\n{body}"
    )))
}
