//! `amplihack lock [--message TEXT]`, `amplihack lock --status`, `amplihack unlock`: lock mode
//! from a terminal. The lock is amplihack's record in its state directory
//! ([`amplihack_runtime::builtins::lock_mode`]): only the user locks a project, never a file the
//! project carries.

use serde_json::json;

use amplihack_runtime::builtins::lock_mode::{self, LockInfo};
use amplihack_state::manifest;

use crate::commands::{CommandError, Outcome};
use crate::scopes::Locations;

fn describe(info: &LockInfo) -> String {
    format!(
        "lock mode is on in {} (since {}, {} min ago)\nthe agent is told ({}): {}\n",
        info.project.display(),
        info.locked_at,
        info.age.as_secs() / 60,
        info.source,
        info.reason.lines().next().unwrap_or_default()
    )
}

fn info_json(info: &LockInfo) -> serde_json::Value {
    json!({"locked": true, "project": info.project, "record": info.file, "locked_at": info.locked_at, "age_secs": info.age.as_secs(),
           "source": info.source, "reason": info.reason})
}

pub fn lock(locations: &Locations, message: Option<&str>) -> Result<Outcome, CommandError> {
    if message.is_some_and(|m| m.trim().is_empty()) {
        return Err(CommandError::refused(
            "--message is empty: give the text the agent should be told at each stop",
        ));
    }
    let info = lock_mode::lock(&locations.state(), &locations.project, message)?;
    let mut json = info_json(&info);
    let text = if amplifier_only(locations) {
        json["effective"] = json!(false);
        format!(
            "{}warning: amplihack is installed for Amplifier only, and lock mode does not work there: the Amplifier app processes no hook result at the end of a turn (prompt:complete, orchestrator:complete), so nothing a hook answers keeps the agent working. Lock mode takes effect in Claude Code (`amplihack install --host claude`); `amplihack unlock` removes it\n",
            describe(&info)
        )
    } else {
        json["effective"] = json!(true);
        format!(
            "{}the agent keeps working at each stop, at most {} times (AMPLIHACK_MAX_LOCK_ITERATIONS); `amplihack unlock` ends it\n",
            describe(&info),
            lock_mode::DEFAULT_MAX_ITERATIONS
        )
    };
    Ok(Outcome {
        text,
        json,
        code: 0,
    })
}

/// Whether the install manifest says amplihack was installed for Amplifier and not Claude Code.
fn amplifier_only(locations: &Locations) -> bool {
    let manifest = manifest::load(&locations.state()).unwrap_or_default();
    let has = |host: &str| manifest.hosts.iter().any(|h| h == host);
    has("amplifier") && !has("claude")
}

pub fn status(locations: &Locations) -> Result<Outcome, CommandError> {
    Ok(
        match lock_mode::status(&locations.state(), &locations.project)? {
            Some(info) => Outcome {
                text: describe(&info),
                json: info_json(&info),
                code: 0,
            },
            None => Outcome {
                text: format!("lock mode is off in {}\n", locations.project.display()),
                json: json!({"locked": false, "project": locations.project}),
                code: 0,
            },
        },
    )
}

pub fn unlock(locations: &Locations) -> Result<Outcome, CommandError> {
    let was = lock_mode::unlock(&locations.state(), &locations.project)?;
    Ok(Outcome {
        text: if was {
            format!("lock mode is now off in {}\n", locations.project.display())
        } else {
            format!("lock mode was not on in {}\n", locations.project.display())
        },
        json: json!({"locked": false, "was_locked": was}),
        code: 0,
    })
}
