//! `amplihack memory list|show|add|forget`: the project's memory store
//! ([`amplihack_state::memory`]): session records amplihack writes, and notes you add (for one
//! agent with `--agent`, which `user-prompt-submit` injects when a prompt names that agent).

use serde_json::json;

use amplihack_state::memory::{Entry, Store};

use crate::commands::{CommandError, Outcome};
use crate::scopes::Locations;

/// The store, with every record amplihack-hooks left pending written first (a session still
/// running writes its record at its end: `amplihack_runtime::builtins::turn_records`).
fn store(locations: &Locations) -> Store {
    let state = locations.state();
    amplihack_runtime::builtins::turn_records::flush(&state);
    Store::for_project(&state, &locations.project)
}

fn line(entry: &Entry) -> String {
    let first = entry.text.lines().next().unwrap_or_default();
    let first: String = first.chars().take(100).collect();
    format!(
        "{:<14} {} {:<8} {:<12} {first}\n",
        entry.id,
        entry.time,
        entry.kind,
        entry.agent.as_deref().unwrap_or("-")
    )
}

pub fn list(
    locations: &Locations,
    agent: Option<&str>,
    kind: Option<&str>,
) -> Result<Outcome, CommandError> {
    let store = store(locations);
    let entries: Vec<Entry> = store
        .entries()?
        .into_iter()
        .filter(|e| agent.is_none_or(|a| e.agent.as_deref() == Some(a)))
        .filter(|e| kind.is_none_or(|k| e.kind == k))
        .collect();
    let mut text = format!(
        "memory of {} ({} entries, {})\n",
        locations.project.display(),
        entries.len(),
        store.path().display()
    );
    for entry in &entries {
        text.push_str(&line(entry));
    }
    Ok(Outcome {
        text,
        json: json!({"project": locations.project, "file": store.path(), "entries": entries}),
        code: 0,
    })
}

fn find(locations: &Locations, id: &str) -> Result<Entry, CommandError> {
    let matches: Vec<Entry> = store(locations)
        .entries()?
        .into_iter()
        .filter(|e| e.id.starts_with(id))
        .collect();
    match matches.len() {
        1 => matches.into_iter().next().ok_or_else(|| {
            CommandError::Internal("one memory entry matched, none was read".into())
        }),
        0 => Err(CommandError::refused(format!(
            "no memory entry `{id}` in this project (see `amplihack memory list`)"
        ))),
        n => Err(CommandError::refused(format!(
            "`{id}` matches {n} entries: give more of the id"
        ))),
    }
}

pub fn show(locations: &Locations, id: &str) -> Result<Outcome, CommandError> {
    let entry = find(locations, id)?;
    let text = format!(
        "id:      {}\ntime:    {}\nkind:    {}\nagent:   {}\nproject: {}\n{}\n{}\n",
        entry.id,
        entry.time,
        entry.kind,
        entry.agent.as_deref().unwrap_or("-"),
        entry.project,
        entry
            .session
            .as_deref()
            .map(|s| format!("session: {s}"))
            .unwrap_or_default(),
        entry.text
    );
    Ok(Outcome {
        text,
        json: json!(entry),
        code: 0,
    })
}

pub fn add(
    locations: &Locations,
    text: &str,
    agent: Option<&str>,
    kind: &str,
) -> Result<Outcome, CommandError> {
    if text.trim().is_empty() {
        return Err(CommandError::refused(
            "the memory text is empty: `amplihack memory add \"what to remember\"`",
        ));
    }
    let mut entry = Entry::new(&locations.project, kind, text.trim());
    entry.agent = agent.map(str::to_string);
    store(locations).add(&entry)?;
    Ok(Outcome {
        text: format!("remembered {}\n", entry.id),
        json: json!(entry),
        code: 0,
    })
}

pub fn forget(locations: &Locations, id: &str) -> Result<Outcome, CommandError> {
    let entry = find(locations, id)?;
    let gone = store(locations).forget(&entry.id)?;
    Ok(Outcome {
        text: format!("forgot {}\n", entry.id),
        json: json!({"forgotten": gone}),
        code: 0,
    })
}
