//! What `amplihack doctor` says about the last day of the audit log: the hook runs that failed
//! or timed out, by plugin, and the command that shows them.

use amplihack_state::audit::Record;
use serde_json::{Value, json};

/// The window doctor looks at.
pub const WINDOW_SECS: f64 = 86_400.0;
/// The command that lists them.
pub const SEE_THEM: &str = "amplihack log --failed --since 1d";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trouble {
    pub failures: usize,
    pub timeouts: usize,
    /// (plugin, failed runs), most first.
    pub plugins: Vec<(String, usize)>,
}

/// The failed runs since `now - 1 day`; `None` when there are none.
pub fn trouble(records: &[Record], now: f64) -> Option<Trouble> {
    let failed: Vec<&Record> = records
        .iter()
        .filter(|r| r.failed() && r.unix_time().is_some_and(|t| t >= now - WINDOW_SECS))
        .collect();
    if failed.is_empty() {
        return None;
    }
    let mut plugins: Vec<(String, usize)> = Vec::new();
    for record in &failed {
        match plugins.iter_mut().find(|(p, _)| *p == record.plugin) {
            Some((_, n)) => *n += 1,
            None => plugins.push((record.plugin.clone(), 1)),
        }
    }
    plugins.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Some(Trouble {
        timeouts: failed.iter().filter(|r| r.timed_out).count(),
        failures: failed.len(),
        plugins,
    })
}

impl Trouble {
    /// One line for a person.
    pub fn note(&self) -> String {
        let timeouts = match self.timeouts {
            0 => String::new(),
            n => format!(" ({n} timed out)"),
        };
        let by: Vec<String> = self
            .plugins
            .iter()
            .take(5)
            .map(|(p, n)| format!("{p} {n}"))
            .collect();
        let more = if self.plugins.len() > 5 { ", …" } else { "" };
        format!(
            "in the last day {} hook run(s) failed{timeouts}: {}{more}; see them: {SEE_THEM}",
            self.failures,
            by.join(", ")
        )
    }

    pub fn json(&self) -> Value {
        json!({
            "failures": self.failures,
            "timeouts": self.timeouts,
            "plugins": self.plugins.iter().map(|(p, n)| json!({"plugin": p, "failures": n})).collect::<Vec<_>>(),
            "command": SEE_THEM,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ago: f64, plugin: &str, exit: Option<i32>, timed_out: bool) -> Record {
        Record {
            time: format!("{:.3}", 10_000_000.0 - ago),
            plugin: plugin.into(),
            exit,
            timed_out,
            duration_ms: Some(5.0),
            ..Record::default()
        }
    }

    #[test]
    fn counts_the_last_day_only() {
        let now = 10_000_000.0;
        let records = [
            run(2.0 * WINDOW_SECS, "user:old", Some(1), false),
            run(60.0, "user:fmt", Some(1), false),
            run(50.0, "user:fmt", Some(0), false),
            run(40.0, "user:slow", None, true),
            run(30.0, "user:fmt", Some(127), false),
            run(20.0, "user:gate", Some(2), false),
        ];
        let found = trouble(&records, now).expect("some");
        assert_eq!(
            found.note(),
            "in the last day 3 hook run(s) failed (1 timed out): user:fmt 2, user:slow 1; see them: amplihack log --failed --since 1d"
        );
        assert_eq!(trouble(&records[..1], now), None);
        assert_eq!(trouble(&[], now), None);
    }
}
