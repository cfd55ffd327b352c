//! Codex's managed scope: amplihack's hooks in the machine's `requirements.toml`
//! (`/etc/codex/requirements.toml`), whose `[hooks]` table Codex 0.169 and later load as managed
//! hooks: trusted by policy (no hash-trust step, no `codex app-server`), not switched off by a
//! user, kept across Codex updates. Codex loads them only when `hooks.managed_dir` names an
//! existing absolute directory (it skips them all, with a warning, otherwise): amplihack sets it
//! to the directory of its binaries when the organisation's file has none.
//!
//! The file is the organisation's: every edit goes through `toml_edit`, so its keys, comments and
//! order stay as they were, and what amplihack adds is recognisable to take out again:
//! - its groups under `[[hooks.<Event>]]`, whose commands run `amplihack-hooks`;
//! - `managed_dir` and `allow_managed_hooks_only`, when it added them, carry the trailing comment
//!   [`MARK`];
//! - the `[hooks]` table, when it added it, goes when nothing else is left in it.

use std::path::Path;

use serde_json::Value;
use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value as TomlValue};

use crate::registration;

/// Where Codex reads the machine's requirements on Linux and macOS.
pub const REQUIREMENTS: &str = "/etc/codex/requirements.toml";

/// The trailing comment on a key amplihack added (and takes out at uninstall).
pub const MARK: &str = "# amplihack";

/// The key that keeps every hook but the managed ones from running in Codex.
pub const HOOKS_ONLY_KEY: &str = "allow_managed_hooks_only";

/// Why an edit of the requirements file was refused: the fix is in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// What amplihack writes: its `hooks` object (events → Claude-format groups, as for a
/// `hooks.json`), the managed directory to name when the file has none, and whether to set
/// `allow_managed_hooks_only = true`.
pub struct Wanted<'a> {
    pub hooks: &'a serde_json::Map<String, Value>,
    pub managed_dir: &'a Path,
    pub hooks_only: bool,
}

fn parse(text: Option<&str>) -> Result<DocumentMut, Refused> {
    text.unwrap_or("").parse::<DocumentMut>().map_err(|e| {
        Refused(format!(
            "not TOML ({}); Codex refuses it too: fix it, then run the command again",
            e.to_string().lines().next().unwrap_or("parse error")
        ))
    })
}

fn marked(decor: &toml_edit::Decor) -> bool {
    decor
        .suffix()
        .and_then(|s| s.as_str())
        .is_some_and(|s| s.trim() == MARK)
}

fn mark(value: &mut TomlValue) {
    value.decor_mut().set_suffix(format!(" {MARK}"));
}

/// Whether a handler (an inline table or a table) runs amplihack-hooks.
fn handler_is_ours(command: Option<&str>) -> bool {
    command.is_some_and(|c| registration::recognise(c).is_some())
}

/// The commands of one `[[hooks.<Event>]]` group, whatever form its `hooks` array takes.
fn group_commands(group: &dyn toml_edit::TableLike) -> Vec<Option<String>> {
    let command =
        |t: &dyn toml_edit::TableLike| t.get("command").and_then(Item::as_str).map(str::to_string);
    match group.get("hooks") {
        Some(Item::ArrayOfTables(a)) => a.iter().map(|t| command(t)).collect(),
        Some(Item::Value(TomlValue::Array(a))) => a
            .iter()
            .map(|v| v.as_inline_table().and_then(|t| command(t)))
            .collect(),
        _ => Vec::new(),
    }
}

fn group_is_ours(group: &dyn toml_edit::TableLike) -> bool {
    let commands = group_commands(group);
    !commands.is_empty() && commands.iter().all(|c| handler_is_ours(c.as_deref()))
}

/// `text` without amplihack's entries and marked keys (`None`: nothing is left of a file that
/// held only them). The organisation's bytes are kept as they were.
pub fn remove(text: &str) -> Result<Option<String>, Refused> {
    let mut doc = parse(Some(text))?;
    strip(&mut doc);
    let out = doc.to_string();
    Ok((!out.trim().is_empty()).then_some(out))
}

fn strip(doc: &mut DocumentMut) {
    if doc
        .get(HOOKS_ONLY_KEY)
        .and_then(Item::as_value)
        .is_some_and(|v| marked(v.decor()))
    {
        doc.remove(HOOKS_ONLY_KEY);
    }
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return;
    };
    let events: Vec<String> = hooks.iter().map(|(k, _)| k.to_string()).collect();
    for event in events {
        let Some(item) = hooks.get_mut(&event) else {
            continue;
        };
        let emptied = match item {
            Item::ArrayOfTables(groups) => {
                let before = groups.len();
                groups.retain(|g| !group_is_ours(g));
                before > 0 && groups.is_empty()
            }
            Item::Value(TomlValue::Array(groups)) => {
                let before = groups.len();
                groups.retain(|g| !g.as_inline_table().is_some_and(|t| group_is_ours(t)));
                before > 0 && groups.is_empty()
            }
            _ => false,
        };
        if emptied {
            hooks.remove(&event);
        }
    }
    if hooks
        .get("managed_dir")
        .and_then(Item::as_value)
        .is_some_and(|v| marked(v.decor()))
    {
        hooks.remove("managed_dir");
    }
    if hooks.is_empty() {
        doc.remove("hooks");
    }
}

/// amplihack's entries in the requirements `text`: each event (as Codex names it) and command.
pub fn ours(text: &str) -> Vec<(String, String)> {
    let Ok(doc) = parse(Some(text)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let Some(hooks) = doc.get("hooks").and_then(Item::as_table_like) else {
        return found;
    };
    for (event, item) in hooks.iter() {
        let groups: Vec<&dyn toml_edit::TableLike> = match item {
            Item::ArrayOfTables(a) => a.iter().map(|t| t as &dyn toml_edit::TableLike).collect(),
            Item::Value(TomlValue::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_inline_table().map(|t| t as &dyn toml_edit::TableLike))
                .collect(),
            _ => Vec::new(),
        };
        for group in groups {
            for command in group_commands(group).into_iter().flatten() {
                if handler_is_ours(Some(&command)) {
                    found.push((event.to_string(), command));
                }
            }
        }
    }
    found
}

/// What the requirements say about hooks, for doctor and status.
#[derive(Debug, Default, PartialEq)]
pub struct Said {
    pub managed_dir: Option<String>,
    pub hooks_only: Option<bool>,
}

pub fn said(text: &str) -> Said {
    let Ok(doc) = parse(Some(text)) else {
        return Said::default();
    };
    Said {
        managed_dir: doc
            .get("hooks")
            .and_then(|h| h.get("managed_dir"))
            .and_then(Item::as_str)
            .map(str::to_string),
        hooks_only: doc.get(HOOKS_ONLY_KEY).and_then(Item::as_bool),
    }
}

/// `text` (`None`: no file yet) with amplihack's entries as `wanted` says, any earlier ones of
/// amplihack's replaced: the organisation's keys, comments and order kept.
pub fn install(text: Option<&str>, wanted: &Wanted<'_>) -> Result<String, Refused> {
    let mut doc = parse(text)?;
    match doc.get(HOOKS_ONLY_KEY) {
        Some(item) if item.as_bool().is_none() => {
            return Err(Refused(format!(
                "`{HOOKS_ONLY_KEY}` is not true or false; fix it first"
            )));
        }
        Some(item)
            if wanted.hooks_only
                && item.as_bool() == Some(false)
                && !item.as_value().is_some_and(|v| marked(v.decor())) =>
        {
            return Err(Refused(format!(
                "the organisation's requirements set `{HOOKS_ONLY_KEY} = false`; amplihack does not overrule them: change it yourself, or leave out --allow-managed-hooks-only"
            )));
        }
        _ => {}
    }
    if let Some(hooks) = doc.get("hooks")
        && !hooks.is_table_like()
    {
        return Err(Refused(
            "`hooks` is not a table; fix it first (Codex reads `[hooks]` as a table)".into(),
        ));
    }
    strip(&mut doc);
    if wanted.hooks_only && doc.get(HOOKS_ONLY_KEY).is_none() {
        let mut value = TomlValue::from(true);
        mark(&mut value);
        // A top-level key goes before every table: amplihack's goes first.
        doc.insert(HOOKS_ONLY_KEY, Item::Value(value));
    }
    if doc.get("hooks").is_none() {
        let mut table = Table::new();
        table.decor_mut().set_prefix(if !doc.to_string().trim().is_empty() {
            "\n# amplihack's managed hooks (`amplihack uninstall --scope managed --host codex` takes them out)\n"
        } else {
            "# amplihack's managed hooks (`amplihack uninstall --scope managed --host codex` takes them out)\n"
        });
        doc.insert("hooks", Item::Table(table));
    }
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return Err(Refused("`hooks` is not a table".into()));
    };
    if hooks.get("managed_dir").is_none() {
        let mut value = TomlValue::from(wanted.managed_dir.to_string_lossy().as_ref());
        mark(&mut value);
        hooks.insert("managed_dir", Item::Value(value));
    }
    for (event, groups) in wanted.hooks {
        let groups = groups.as_array().cloned().unwrap_or_default();
        let tables: Vec<Table> = groups.iter().filter_map(group_table).collect();
        match hooks.get_mut(event) {
            None => {
                let mut array = ArrayOfTables::new();
                for table in tables {
                    array.push(table);
                }
                hooks.insert(event, Item::ArrayOfTables(array));
            }
            Some(Item::ArrayOfTables(array)) => {
                for table in tables {
                    array.push(table);
                }
            }
            Some(Item::Value(TomlValue::Array(array))) => {
                for table in tables {
                    array.push(TomlValue::InlineTable(table.into_inline_table()));
                }
            }
            Some(_) => {
                return Err(Refused(format!(
                    "`hooks.{event}` is not an array of groups; fix it first"
                )));
            }
        }
    }
    Ok(doc.to_string())
}

/// One Claude-format group (`{matcher?, hooks: [{type, command, timeout?}]}`) as a TOML table:
/// `matcher = "…"` and `hooks = [{ type = "command", command = "…", timeout = N }]`.
fn group_table(group: &Value) -> Option<Table> {
    let mut table = Table::new();
    if let Some(matcher) = group.get("matcher").and_then(Value::as_str) {
        table.insert("matcher", toml_edit::value(matcher));
    }
    let mut handlers = Array::new();
    for handler in group.get("hooks")?.as_array()? {
        let mut inline = InlineTable::new();
        for (key, value) in handler.as_object()? {
            let value: TomlValue = match value {
                Value::String(s) => s.as_str().into(),
                Value::Bool(b) => (*b).into(),
                Value::Number(n) => n.as_i64()?.into(),
                _ => continue,
            };
            inline.insert(key, value);
        }
        handlers.push(TomlValue::InlineTable(inline));
    }
    table.insert("hooks", toml_edit::value(handlers));
    Some(table)
}

/// The requirements' `hooks` events as JSON (for the plugin events amplihack registered there).
pub fn hooks_json(text: &str) -> Value {
    let Ok(doc) = parse(Some(text)) else {
        return Value::Null;
    };
    let mut hooks = serde_json::Map::new();
    if let Some(table) = doc.get("hooks").and_then(Item::as_table_like) {
        for (key, item) in table.iter() {
            hooks.insert(key.to_string(), item_json(item));
        }
    }
    serde_json::json!({ "hooks": hooks })
}

fn item_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), item_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| {
                    Value::Object(
                        t.iter()
                            .map(|(k, v)| (k.to_string(), item_json(v)))
                            .collect(),
                    )
                })
                .collect(),
        ),
        Item::None => Value::Null,
    }
}

fn value_json(value: &TomlValue) -> Value {
    match value {
        TomlValue::String(s) => Value::String(s.value().clone()),
        TomlValue::Integer(i) => Value::from(*i.value()),
        TomlValue::Float(f) => {
            serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number)
        }
        TomlValue::Boolean(b) => Value::Bool(*b.value()),
        TomlValue::Datetime(d) => Value::String(d.value().to_string()),
        TomlValue::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        TomlValue::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours_hooks() -> serde_json::Map<String, Value> {
        let value = serde_json::json!({
            "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "exec /usr/local/bin/amplihack-hooks pre-tool-use --host codex", "timeout": 30}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "exec /usr/local/bin/amplihack-hooks stop --host codex", "timeout": 120}]}]
        });
        value.as_object().cloned().expect("object")
    }

    /// Install then uninstall gives the organisation's bytes back, whatever its file held.
    #[test]
    fn uninstall_gives_the_organisations_bytes_back() {
        let hooks = ours_hooks();
        let cases: &[(&str, &str, bool)] = &[
            ("no file", "", true),
            (
                "keys and comments, no hooks",
                "# Acme's Codex policy\nallowed_approval_policies = [\"never\", \"on-request\"]  # keep\n\n[mcp_servers.docs]\nidentity = { command = \"docs\" }\n",
                true,
            ),
            (
                "the organisation's own managed hooks",
                "allow_managed_hooks_only = true\n\n[hooks]\nmanaged_dir = \"/opt/acme/hooks\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"/opt/acme/hooks/guard.sh\" }]\n",
                true,
            ),
            (
                "inline groups",
                "[hooks]\nmanaged_dir = \"/opt/acme\"\nStop = [{ hooks = [{ type = \"command\", command = \"/opt/acme/stop.sh\" }] }]\n",
                false,
            ),
        ];
        for (name, before, hooks_only) in cases {
            let wanted = Wanted {
                hooks: &hooks,
                managed_dir: Path::new("/usr/local/bin"),
                hooks_only: *hooks_only,
            };
            let text = (!before.is_empty()).then_some(*before);
            let installed = install(text, &wanted).expect(name);
            assert_eq!(ours(&installed).len(), 2, "{name}: {installed}");
            let said = said(&installed);
            assert!(said.managed_dir.is_some(), "{name}");
            if *hooks_only {
                assert_eq!(said.hooks_only, Some(true), "{name}: {installed}");
            }
            // Installed again (a move, say): the same, once.
            let again = install(Some(&installed), &wanted).expect(name);
            assert_eq!(again, installed, "{name}");
            let removed = remove(&installed).expect(name);
            assert_eq!(removed.as_deref().unwrap_or(""), *before, "{name}");
        }
    }

    #[test]
    fn the_organisations_no_is_not_overruled() {
        let hooks = ours_hooks();
        let wanted = Wanted {
            hooks: &hooks,
            managed_dir: Path::new("/usr/local/bin"),
            hooks_only: true,
        };
        let refused = install(Some("allow_managed_hooks_only = false\n"), &wanted);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.0.contains("does not overrule")),
            "{refused:?}"
        );
        assert!(install(Some("hooks = 3\n"), &wanted).is_err());
        assert!(install(Some("[hooks\n"), &wanted).is_err());
    }
}
