//! `amplihack hooks list`: the plugins of both levels and what each does.

use amplihack_engine::discovery::{self, Level, Plugin};
use amplihack_protocol::event::EventName;
use amplihack_protocol::{Host, hosts};
use amplihack_state::plugins;
use serde_json::{Value, json};

use crate::commands::{CommandError, Outcome};

use super::{Context, outcome_of};

pub fn list(ctx: &Context) -> Result<Outcome, CommandError> {
    let disabled = plugins::disabled(&ctx.state());
    let trusted = ctx.project_trusted();
    let held = ctx.project_held_back();
    let accepted = amplihack_state::trust::accepted(&ctx.state(), &ctx.locations.project);
    let (version, registered, claude_registered) = crate::plugin_events::delivery(ctx);
    let hosts = crate::plugin_events::Hosts::of(ctx, claude_registered);
    // Events a session-start repair registered after that session had read its hooks.
    let next_session = amplihack_runtime::builtins::plugin_events::next_session(&ctx.state());
    let other_hosts = hosts.others.clone();
    let mut text = String::new();
    let mut items = Vec::new();
    for (level, dir) in ctx.levels() {
        text.push_str(&format!("{} level: {}\n", level.as_str(), dir.display()));
        let plugins = discovery::load_level(&dir, level);
        if level == Level::Project
            && !plugins.is_empty()
            && let Err(refusal) = ctx.project_files()
        {
            text.push_str(&format!(
                "  none of this level's plugins run: trust cannot cover them: {refusal}\n"
            ));
        }
        if plugins.is_empty() {
            text.push_str("  (no plugins)\n");
        }
        for plugin in plugins {
            let is_disabled =
                disabled.contains(&plugin.root) || plugin.config.as_ref().is_ok_and(|c| !c.enabled);
            // What does not reach the plugin: events no installed host delivers, and handler
            // kinds amplihack does not run.
            let undelivered =
                crate::plugin_events::undelivered_anywhere(&plugin, &hosts, version, &registered);
            let not_run = crate::plugin_events::not_run(&plugin, version, claude_registered);
            let state = match (&plugin.config, level, trusted, is_disabled) {
                (Err(_), ..) => "invalid",
                (_, _, _, true) => "disabled",
                (_, Level::Project, false, _) => "untrusted",
                (_, Level::Project, true, _) if held.contains(&plugin.name) => "unaccepted",
                _ if !undelivered.is_empty() || !not_run.is_empty() => "partial",
                _ => "active",
            };
            let events: Vec<String> = match &plugin.config {
                Ok(c) => c
                    .groups
                    .iter()
                    .map(|g| {
                        format!(
                            "{}{}",
                            g.event,
                            g.matcher
                                .as_ref()
                                .map(|m| format!("({m})"))
                                .unwrap_or_default()
                        )
                    })
                    .collect(),
                Err(e) => vec![e.to_string()],
            };
            text.push_str(&format!(
                "  {:<24} {:<9} {}\n",
                plugin.name,
                state,
                events.join(", ")
            ));
            // A project's handlers run confined (amplihack_engine::confinement): how.
            let confinement = match (&plugin.config, level) {
                (Ok(config), Level::Project) => {
                    Some(amplihack_engine::confinement::describe(&config.needs))
                }
                _ => None,
            };
            if let Some(says) = &confinement {
                text.push_str(&format!("    {says}\n"));
            }
            let accepted_parts = match level {
                Level::Project => accepted.get(&plugin.name).cloned().unwrap_or_default(),
                Level::User => Vec::new(),
            };
            if state == "unaccepted" {
                text.push_str(&format!(
                    "    runs parts trust cannot pin; see `amplihack hooks trust`, then `amplihack hooks trust --accept {}`\n",
                    plugin.name
                ));
            }
            for part in &accepted_parts {
                text.push_str(&format!("    accepted, not pinned: {part}\n"));
            }
            for (event, why) in &undelivered {
                text.push_str(&format!("    {event} never reaches it: {why}\n"));
            }
            for note in &not_run {
                text.push_str(&format!("    not run: {note}\n"));
            }
            let timeouts = crate::plugin_events::timeouts_beyond_hosts(&plugin, &hosts);
            for note in &timeouts {
                text.push_str(&format!("    {note}\n"));
            }
            let per_host = not_delivered_by(&plugin, &other_hosts);
            // An event no host delivers is said once, above.
            for (event, hosts) in per_host
                .iter()
                .filter(|(event, _)| !undelivered.iter().any(|(e, _)| e == event))
            {
                text.push_str(&format!(
                    "    {event}: not delivered by {}\n",
                    hosts.join(", ")
                ));
            }
            let from_next_session: Vec<String> =
                amplihack_runtime::builtins::plugin_events::events_of(&plugin)
                    .into_iter()
                    .filter(|e| next_session.contains(e))
                    .collect();
            for event in &from_next_session {
                text.push_str(&format!(
                    "    {event}: registered from the next session (registered as the current one started; Claude Code reads its hooks once, at start)\n"
                ));
            }
            let undelivered_json: Vec<Value> = undelivered
                .iter()
                .map(|(event, why)| json!({"event": event, "why": why}))
                .collect();
            items.push(json!({"name": plugin.name, "level": level.as_str(), "file": plugin.file, "state": state, "events": events, "undelivered": undelivered_json, "not_delivered_by": per_host.iter().map(|(event, hosts)| json!({"event": event, "hosts": hosts})).collect::<Vec<_>>(), "not_run": not_run, "from_next_session": from_next_session, "timeouts_beyond_hosts": timeouts, "confinement": confinement, "accepted_unpinned": accepted_parts}));
        }
    }
    Ok(outcome_of("list", text, json!({"plugins": items}), 0))
}

/// The hosts beyond Claude Code and Amplifier (whose delivery is judged above, from the
/// installed Claude Code and Amplifier) that amplihack is installed for, from the install record.
/// Per event of the plugin, the installed hosts that never deliver it (by their titles), for
/// the events some host leaves out.
fn not_delivered_by(plugin: &Plugin, hosts: &[Host]) -> Vec<(String, Vec<&'static str>)> {
    amplihack_runtime::builtins::plugin_events::events_of(plugin)
        .into_iter()
        .filter_map(|event| {
            let name = EventName::parse(&event);
            let missing: Vec<&'static str> = hosts
                .iter()
                .filter(|h| !hosts::dialect(**h).reaches_plugins(&name))
                .map(|h| h.title())
                .collect();
            (!missing.is_empty()).then_some((event, missing))
        })
        .collect()
}
