//! `amplihack status`.

use std::path::Path;

use serde_json::json;

use super::checks::check_target;
use super::shared::{host_name, manifest_targets, read_manifest};
use super::{CommandError, Outcome, Target, VERSION};
use crate::deploy::{self, BINARIES};
use crate::registration::{self, Host};
use crate::scopes::{Locations, Scope};
use amplihack_settings::claude_paths;

/// `amplihack status`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct StatusArgs {
    /// Only this host's registrations (default: every host)
    #[arg(long, value_enum, default_value = "all")]
    pub host: crate::hosts::HostChoice,
    #[command(flatten)]
    pub bin: super::BinDirArg,
}

pub fn status(args: &StatusArgs, project: &Path) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(project)?;
    let manifest = read_manifest(&locations);
    let bin_dir = args.bin.resolve(&manifest, &locations.home);
    let mut text = format!(
        "amplihack {VERSION}\n  bin dir    {}{}\n",
        bin_dir.display(),
        if deploy::on_path(&bin_dir) {
            ""
        } else {
            " (not on PATH)"
        }
    );
    let mut binaries = Vec::new();
    for name in BINARIES {
        let path = bin_dir.join(name);
        let version = deploy::reported_version(&path);
        text.push_str(&format!(
            "  {name:<16} {}\n",
            version.as_deref().unwrap_or("not installed")
        ));
        binaries.push(json!({"name": name, "path": path, "version": version}));
    }
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let mut registrations = Vec::new();
    // The machine's managed settings, which root registers in (not this user's record).
    let managed = crate::managed::read(&claude_paths::managed_dir());
    let mut targets = manifest_targets(&manifest);
    let managed_target = Target {
        host: Host::ClaudeCode,
        scope: Scope::Managed,
        path: claude_paths::managed(&claude_paths::managed_dir()),
    };
    if managed.ours && !targets.contains(&managed_target) {
        targets.push(managed_target);
    }
    // Codex's and Copilot's managed files, checked by `managed_hosts`.
    let machine = super::managed_hosts::registered();
    targets.retain(|t| args.host.includes(t.host));
    for target in targets {
        let state = if check_target(&target, &hooks_binary, &locations.home)
            .iter()
            .any(|f| f.problem)
        {
            "needs repair (amplihack doctor)"
        } else {
            "ok"
        };
        let path = &target.path;
        text.push_str(&format!(
            "  {:<10} {:<8} {}  {state}\n",
            host_name(target.host),
            target.scope.as_str(),
            path.display()
        ));
        registrations.push(json!({"host": host_name(target.host), "scope": target.scope.as_str(), "path": path, "state": state}));
    }
    for target in machine.iter().filter(|t| args.host.includes(t.host)) {
        let state = if super::managed_hosts::check(target.host)
            .iter()
            .any(|f| f.problem)
        {
            "needs repair (amplihack doctor)"
        } else {
            "ok"
        };
        text.push_str(&format!(
            "  {:<10} {:<8} {}  {state}\n",
            host_name(target.host),
            target.scope.as_str(),
            target.path.display()
        ));
        registrations.push(json!({"host": host_name(target.host), "scope": target.scope.as_str(), "path": target.path, "state": state}));
    }
    if registrations.is_empty() {
        text.push_str("  no hooks registered: run `amplihack install`\n");
    }
    let failure = if manifest.fail_closed {
        registration::Failure::Closed
    } else {
        registration::Failure::Open
    };
    let registered_hosts = Host::ALL
        .into_iter()
        .filter(|h| registrations.iter().any(|r| r["host"] == host_name(*h)));
    let fail_lines = crate::fail_closed::lines(registered_hosts, failure);
    if manifest.fail_closed {
        text.push_str("  fail-closed (install --fail-closed; undo with --fail-open)\n");
    }
    for line in &fail_lines {
        text.push_str(&format!("    {line}\n"));
    }
    if !managed.plugin_events.is_empty() && args.host.claude() {
        text.push_str(&format!(
            "  managed plugin events: {} (`amplihack-hooks dispatch` each, for every user's plugins)\n",
            managed.plugin_events.join(", ")
        ));
    }
    if let Some(from) = managed
        .hooks_only_from
        .as_ref()
        .filter(|_| args.host.claude())
    {
        text.push_str(&format!(
            "  note: {} sets {}: Claude Code runs only managed hooks\n",
            from.display(),
            crate::managed::HOOKS_ONLY_KEY
        ));
    }
    let hosts = inventory(&locations, &registrations, args.host);
    Ok(Outcome {
        text,
        json: json!({"command": "status", "version": VERSION, "bin_dir": bin_dir, "binaries": binaries, "hosts": hosts, "registrations": registrations, "fail_closed": manifest.fail_closed, "fail_closed_hosts": fail_lines, "managed_hooks_only": managed.hooks_only_from, "managed_plugin_events": managed.plugin_events}),
        code: 0,
    })
}

/// What a fleet inventory collects, host by host (`--json` of status and doctor): whether the host
/// is installed for this user, each scope amplihack is registered in (`registrations`, as status
/// lists them: host, scope, path, state) and the last session the host called amplihack in.
pub(crate) fn inventory(
    locations: &Locations,
    registrations: &[serde_json::Value],
    choice: crate::hosts::HostChoice,
) -> serde_json::Value {
    let hosts: Vec<serde_json::Value> = Host::ALL
        .into_iter()
        .filter(|h| choice.includes(*h))
        .map(|host| {
            let name = host_name(host);
            let registered: Vec<&serde_json::Value> = registrations
                .iter()
                .filter(|r| r["host"] == name)
                .collect();
            json!({
                "host": name,
                "title": host.title(),
                "installed": crate::hosts::installed(host, locations),
                "registered": !registered.is_empty(),
                "scopes": registered.iter().map(|r| json!({"scope": r["scope"], "path": r["path"], "state": r["state"]})).collect::<Vec<_>>(),
                "last_call": last_call(locations, host),
            })
        })
        .collect();
    serde_json::Value::Array(hosts)
}

/// The newest session `host` called amplihack in (`amplihack_state::calls`: a file per session,
/// made at its start): its id and when (UTC). At most [`CALLS_READ`] entries are looked at.
fn last_call(locations: &Locations, host: Host) -> serde_json::Value {
    let dir = amplihack_state::calls::dir(&locations.state(), host.name());
    let newest = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .take(CALLS_READ)
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, entry.file_name().to_string_lossy().into_owned()))
        })
        .max();
    match newest {
        Some((modified, session)) => {
            let secs = modified
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            json!({"session": session, "at": amplihack_state::time::utc(secs)})
        }
        None => serde_json::Value::Null,
    }
}

/// The most session records `status` and `doctor` read per host for the last call.
const CALLS_READ: usize = 10_000;
