//! The failure log: every internal failure, panic, timeout and invalid input is one line on
//! stderr and one line here, so a fail-open hook is never silently broken.
//!
//! Location: `$AMPLIHACK_LOG_DIR`, else `$XDG_STATE_HOME/amplihack`, else
//! `~/.local/state/amplihack`; file `hooks.log`, rotated to `hooks.log.1` past 1 MiB.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

const ROTATE_AT: u64 = 1024 * 1024;

pub fn log_dir() -> Option<PathBuf> {
    std::env::var_os("AMPLIHACK_LOG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| amplihack_engine::forward::state_dir(&|name| std::env::var(name).ok()))
}

/// Appends one line; returns where it went.
pub fn append(line: &str) -> Result<PathBuf, String> {
    let dir = log_dir().ok_or("no HOME, XDG_STATE_HOME or AMPLIHACK_LOG_DIR")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join("hooks.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ROTATE_AT) {
        let _ = std::fs::rename(&path, dir.join("hooks.log.1"));
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // One write of one line: O_APPEND keeps concurrent hooks' lines whole.
    let record = format!("{} pid={} {line}\n", utc_timestamp(), std::process::id());
    file.write_all(record.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// `YYYY-MM-DDTHH:MM:SSZ` without a date-time dependency (civil-from-days, H. Hinnant).
pub fn utc_timestamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
