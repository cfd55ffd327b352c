//! Stage 5, the audit: one record per handler run (`amplihack_state::audit`).

use super::*;

/// The id Claude Code gives a plugin directory it loads with `--plugin-dir`: its manifest's
/// name (else the directory's), `@inline`. A level's own hooks file is no plugin: `None`.
pub(super) fn plugin_id(plugin: &Plugin) -> Option<String> {
    if plugin.root == plugin.hooks_dir {
        return None;
    }
    let manifest = crate::discovery::read_small(&plugin.root.join(crate::discovery::MANIFEST)).ok();
    let name = manifest
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|m| m.get("name").and_then(Value::as_str).map(str::to_string))
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| plugin.name.clone());
    Some(format!("{name}@inline"))
}

pub(super) fn audit_runs(
    state: &StateDir,
    event: &HookEvent,
    session: Option<&str>,
    runs: &[Run],
    problems: &mut Vec<String>,
) {
    let records: Vec<Value> = runs
        .iter()
        .map(|run| {
            let finished = run.finished.as_ref();
            json!({
                "time": unix_time_millis(),
                "session": session,
                "event": event.name.as_str(),
                "plugin": format!("{}:{}", run.level.as_str(), run.plugin),
                "command": run.command,
                "priority": run.priority,
                "exit": finished.and_then(|f| f.exit),
                "duration_ms": finished.map(|f| f.duration.as_secs_f64() * 1000.0),
                "decision": run.reply.decision.map(|d| d.as_str()),
                "timed_out": finished.is_some_and(|f| f.timed_out),
                "output_cut": finished.is_some_and(|f| f.truncated),
                "async": run.detached,
            })
        })
        .collect();
    if let Err(e) = audit::append(state, &records) {
        problems.push(format!("audit log unavailable: {e}"));
    }
}

/// Seconds since the epoch, with milliseconds: `1763819420.123`.
pub(super) fn unix_time_millis() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:03}", now.as_secs(), now.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_is_seconds_and_milliseconds() {
        let stamp = unix_time_millis();
        let (secs, millis) = stamp.split_once('.').expect("a dot");
        assert!(
            secs.parse::<u64>().is_ok_and(|s| s > 1_600_000_000),
            "{stamp}"
        );
        assert_eq!(millis.len(), 3, "{stamp}");
        assert!(millis.chars().all(|c| c.is_ascii_digit()), "{stamp}");
    }
}
