//! The failure log: every internal failure, panic, timeout and invalid input is one line on
//! stderr and one line here, so a fail-open hook is never silently broken.
//!
//! Location: `$AMPLIHACK_LOG_DIR`, else amplihack's state directory
//! (`$XDG_STATE_HOME/amplihack`, else `~/.local/state/amplihack`); file `hooks.log` (0600),
//! rotated to `hooks.log.1` past 1 MiB.
//!
//! Never written through a link someone else planted: `hooks.log` itself is opened with
//! `O_NOFOLLOW` and must be a regular file, and a log directory that is a symbolic link is
//! followed only when the link is this user's own (one in a shared directory, or a repository's,
//! is refused).

use std::path::PathBuf;

use amplihack_state::{StateDir, files, time};

const ROTATE_AT: u64 = 1024 * 1024;

pub fn log_dir() -> Option<PathBuf> {
    std::env::var_os(amplihack_env::AMPLIHACK_LOG_DIR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| StateDir::from_env().map(|s| s.log_dir()))
}

/// Appends one line; returns where it went.
pub fn append(line: &str) -> Result<PathBuf, String> {
    let dir = log_dir().ok_or("no HOME, XDG_STATE_HOME or AMPLIHACK_LOG_DIR")?;
    if let Ok(meta) = std::fs::symlink_metadata(&dir)
        && meta.file_type().is_symlink()
        && std::os::unix::fs::MetadataExt::uid(&meta) != current_uid()
    {
        return Err(format!(
            "{} is a symbolic link another user owns; not written through",
            dir.display()
        ));
    }
    let path = dir.join("hooks.log");
    files::rotate(&path, ROTATE_AT);
    let record = format!("{} pid={} {line}", time::utc_now(), std::process::id());
    files::append_line(&path, &record).map_err(|e| e.to_string())?;
    Ok(path)
}

fn current_uid() -> u32 {
    amplihack_platform::fs::real_uid()
}
