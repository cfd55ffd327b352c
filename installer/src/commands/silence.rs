//! `doctor`'s check of hosts that stopped calling amplihack: a session the host ran (its own
//! records, [`crate::hosts::sessions`]) after amplihack was registered for it, in which amplihack
//! was not called (amplihack's record, [`amplihack_state::calls`]), is a problem: the host's
//! hooks did not run. The finding names the newest such session and the host's likely causes,
//! each with its fix.

use std::time::{Duration, UNIX_EPOCH};

use amplihack_state::calls;
use amplihack_state::manifest::Manifest;

use crate::finding::Finding;
use crate::hosts::sessions::claude_project_name;
use crate::hosts::{Host, HostChoice};
use crate::scopes::{Locations, Scope};

pub(crate) fn check(
    locations: &Locations,
    manifest: &Manifest,
    choice: HostChoice,
) -> Vec<Finding> {
    let state = locations.state();
    let mut findings = Vec::new();
    for host in Host::ALL.into_iter().filter(|h| choice.includes(*h)) {
        let Some(sessions) = &crate::hosts::spec(host).sessions else {
            continue;
        };
        let registrations: Vec<_> = manifest
            .registrations
            .iter()
            .filter(|r| r.host == host.name())
            .collect();
        let Some(since) = registrations.iter().filter_map(|r| r.since).min() else {
            continue;
        };
        // `since` is whole seconds: a session last written in the second amplihack was
        // registered may have ended before it, so only what was written after that second counts.
        let since = UNIX_EPOCH + Duration::from_secs(since.saturating_add(1));
        // Registered for the user: every session; else the projects registered in.
        let everywhere = registrations
            .iter()
            .any(|r| r.scope == Scope::User.as_str());
        // `<project>/.claude/settings.json`; a bridge file is deeper.
        let depth = crate::hosts::bridge_file::of(host).map_or(2, |b| b.depth());
        let projects: Vec<String> = registrations
            .iter()
            .filter_map(|r| r.path.ancestors().nth(depth))
            .map(claude_project_name)
            .collect();
        let mut silent: Vec<_> = (sessions.list)(locations)
            .into_iter()
            .filter(|s| s.modified >= since)
            .filter(|s| everywhere || s.project.as_ref().is_some_and(|p| projects.contains(p)))
            .filter(|s| !calls::called(&state, host.name(), &s.id))
            .collect();
        silent.sort_by_key(|s| s.modified);
        let Some(newest) = silent.last() else {
            continue;
        };
        let title = host.title();
        let when = newest.modified.duration_since(UNIX_EPOCH).map_or_else(
            |_| "?".into(),
            |d| amplihack_state::time::utc(d.as_secs() as i64),
        );
        let more = match silent.len() {
            1 => String::new(),
            n => format!(" ({n} such sessions since amplihack was registered)"),
        };
        let causes: Vec<String> = sessions
            .causes
            .iter()
            .map(|(cause, fix)| format!("{cause}: {fix}"))
            .collect();
        findings.push(Finding::problem(
            format!(
                "{title} ran session {} ({when}, {}) after amplihack was registered for it, and did not call amplihack in it{more}: its hooks did not run",
                newest.id,
                newest.path.display()
            ),
            format!("the likely causes in {title}, each with its fix: {}", causes.join("; ")),
        ));
    }
    findings
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::SystemTime;

    use amplihack_state::manifest::Registration;

    use super::*;

    /// A Pi session record under `home`, last written at `modified`.
    fn pi_session(home: &Path, id: &str, modified: SystemTime) {
        let dir = home.join(".pi/agent/sessions/--p--");
        std::fs::create_dir_all(&dir).expect("session dir");
        let file = std::fs::File::create(dir.join(format!("2026-11-28T12-00-00-000Z_{id}.jsonl")))
            .expect("session file");
        file.set_modified(modified).expect("mtime");
    }

    /// A registration's time is whole seconds: a session last written within that second may
    /// have ended before install and is not counted; one written after it is.
    #[test]
    fn only_sessions_written_after_the_registration_second_count() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let home = scratch.path().join("home");
        let locations = Locations {
            home: home.clone(),
            claude_config_dir: home.join(".claude"),
            project: scratch.path().join("p"),
        };
        let since = 1_800_000_000;
        let at = |ms: u64| UNIX_EPOCH + Duration::from_millis(since * 1000 + ms);
        let manifest = Manifest {
            registrations: vec![Registration {
                host: Host::Pi.name().into(),
                scope: Scope::User.as_str().into(),
                path: home.join(".pi/agent/extensions/amplihack.js"),
                since: Some(since),
            }],
            ..Manifest::default()
        };
        let cases = [
            ("01a22233-0000-7000-8000-000000000001", 900, false),
            ("01a22233-0000-7000-8000-000000000002", 1_000, true),
            ("01a22233-0000-7000-8000-000000000003", 5_000, true),
        ];
        for (id, ms, reported) in cases {
            let _ = std::fs::remove_dir_all(home.join(".pi"));
            pi_session(&home, id, at(ms));
            let findings = check(&locations, &manifest, HostChoice::One(Host::Pi));
            assert_eq!(
                findings.iter().any(|f| f.message.contains(id)),
                reported,
                "a session written {ms} ms into the registration's second: {findings:?}"
            );
        }
    }
}
