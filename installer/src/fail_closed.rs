//! `amplihack install --fail-closed` and `--fail-open`: whether amplihack's PreToolUse entries
//! refuse the tool when `amplihack-hooks` is missing or crashes, through each host's own switch
//! ([`amplihack_protocol::hosts::fail_closed_switch`]). The choice is recorded in the install
//! manifest (`fail_closed`), so `install` without either flag, `doctor --fix` and `update` keep it.

use amplihack_protocol::hosts;
use amplihack_settings::registration::Failure;
use amplihack_state::{StateDir, manifest};

use crate::registration::Host;

/// The recorded choice (fail-open when nothing is recorded or the manifest cannot be read).
pub fn recorded(state: &StateDir) -> Failure {
    match manifest::load(state) {
        Ok(m) if m.fail_closed => Failure::Closed,
        _ => Failure::Open,
    }
}

/// What `install` registers: `--fail-closed` or `--fail-open` when given, else the recorded
/// choice.
pub fn chosen(fail_closed: bool, fail_open: bool, state: &StateDir) -> Failure {
    if fail_closed {
        Failure::Closed
    } else if fail_open {
        Failure::Open
    } else {
        recorded(state)
    }
}

/// The line `install`, `status` and `doctor` print for `host` when the choice is fail-closed.
pub fn line(host: Host) -> String {
    match hosts::fail_closed_switch(host) {
        Some(switch) => format!("{}: fail-closed: {}", host.title(), switch.describe()),
        None => format!(
            "{}: fail-closed not available: {} has no switch to refuse a tool when a hook fails, so its amplihack entries stay fail-open",
            host.title(),
            host.title()
        ),
    }
}

/// The per-host lines for `hosts` under `failure` (none when fail-open).
pub fn lines(hosts: impl IntoIterator<Item = Host>, failure: Failure) -> Vec<String> {
    if failure == Failure::Open {
        return Vec::new();
    }
    let mut seen: Vec<Host> = Vec::new();
    hosts
        .into_iter()
        .filter(|h| {
            let new = !seen.contains(h);
            seen.push(*h);
            new
        })
        .map(line)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_says_what_fail_closed_means_there() {
        for host in Host::ALL {
            let line = line(host);
            let available = !line.contains("not available");
            assert_eq!(
                available,
                matches!(host, Host::ClaudeCode | Host::Copilot | Host::Vibe),
                "{line}"
            );
            assert!(line.starts_with(host.title()), "{line}");
        }
        assert!(lines(Host::ALL, Failure::Open).is_empty());
        assert_eq!(
            lines([Host::Codex, Host::Codex], Failure::Closed),
            [line(Host::Codex)]
        );
    }
}
