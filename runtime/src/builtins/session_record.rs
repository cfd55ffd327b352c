//! Stop: the session's record in the project's memory store ([`amplihack_state::memory`]), one
//! `session` entry per session, rewritten at each stop (Stop fires at the end of every turn):
//! the first prompt, the tools used, the files changed, the agents involved and the reflection's
//! findings. Tools and files come from the metrics file `post-tool-use` writes; nothing extra is
//! paid per tool call. The hook only records that the record is due; a detached writer writes it
//! after the host has its answer, at the session's end under a host that ends sessions
//! ([`super::turn_records`]).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use amplihack_protocol::{EventName, Reply};
use amplihack_state::memory::{Entry, Store};
use amplihack_state::{StateDir, project, session, session_key};
use serde_json::Value;

use super::{BuiltinError, Result, metrics, reflection};
use crate::pipeline::Call;

/// Bytes at the end of the metrics file read for a record (a long session's last calls).
const METRICS_TAIL: u64 = 2 * 1024 * 1024;

pub fn entry_id(session: Option<&str>) -> String {
    format!("session-{}", session_key(session))
}

pub fn run(call: &Call<'_>) -> Result<Reply> {
    let (event, ctx) = (call.event, call.ctx);
    if event.name != EventName::Stop || ctx.var(reflection::CHILD_MARKER).is_some() {
        return Ok(Reply::default());
    }
    let state = ctx.state().ok_or(BuiltinError::NoStateDir)?;
    let root = ctx.project_root(event);
    // Written after the host has its answer, at the session's end where the host ends sessions
    // (turn_records).
    let writer = super::turn_records::Writer::at_stop(ctx.host);
    super::turn_records::defer(&state, &root, event.session_id.as_deref(), None, writer)?;
    Ok(Reply::default())
}

/// Writes (or rewrites) the record; `ended` finishes it.
pub fn write(
    state: &StateDir,
    root: &Path,
    session_id: Option<&str>,
    ended: Option<&str>,
) -> Result<()> {
    let record = session::load(state, session_id);
    let (tools, files, agents) = activity(root, session_id);
    let mut lines = Vec::new();
    if let Some(prompt) = &record.first_prompt {
        lines.push(format!("First prompt: {prompt}"));
    }
    if !tools.is_empty() {
        let used: Vec<String> = tools.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
        lines.push(format!("Tools used: {}", used.join(", ")));
    }
    if !files.is_empty() {
        lines.push(format!("Files changed: {}", files.join(", ")));
    }
    let mut all_agents = record.agents.clone();
    for agent in agents {
        if !all_agents.contains(&agent) {
            all_agents.push(agent);
        }
    }
    if !all_agents.is_empty() {
        lines.push(format!("Agents: {}", all_agents.join(", ")));
    }
    if let Some(findings) = &record.reflection {
        lines.push(format!("Reflection: {findings}"));
    }
    if let Some(reason) = ended {
        lines.push(format!("Ended: {reason}"));
    }
    if lines.is_empty() || (lines.len() == 1 && ended.is_some()) {
        return Ok(()); // nothing happened worth remembering
    }
    let id = entry_id(session_id);
    let text = lines.join("\n");
    Store::for_project(state, root).upsert(&id, |old| {
        let mut entry = old.unwrap_or_else(|| Entry::new(root, "session", ""));
        entry.id = id.clone();
        entry.text = text;
        entry.session = session_id.map(str::to_string);
        entry
    })?;
    Ok(())
}

/// Tool counts, changed files and subagents of one session, from the metrics file's tail (a
/// regular file reached without following a link; anything else reads as no activity).
fn activity(
    root: &Path,
    session_id: Option<&str>,
) -> (BTreeMap<String, usize>, Vec<String>, Vec<String>) {
    let mut tools = BTreeMap::new();
    let (mut files, mut agents) = (Vec::new(), Vec::new());
    let Ok(Some(mut file)) = project::readable(root, Path::new(metrics::DIR))
        .and_then(|dir| dir.map(|d| d.open_read(metrics::NAME)).transpose())
        .map(Option::flatten)
    else {
        return (tools, files, agents);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(METRICS_TAIL)));
    let mut text = String::new();
    let _ = file.take(METRICS_TAIL).read_to_string(&mut text);
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if record["session_id"].as_str() != session_id {
            continue;
        }
        if let Some(tool) = record["tool_name"].as_str() {
            *tools.entry(tool.to_string()).or_insert(0) += 1;
        }
        if let Some(path) = record["file"].as_str()
            && !files.iter().any(|f| f == path)
        {
            files.push(path.to_string());
        }
        if let Some(agent) = record["agent"].as_str()
            && !agents.iter().any(|a| a == agent)
        {
            agents.push(agent.to_string());
        }
    }
    (tools, files, agents)
}
