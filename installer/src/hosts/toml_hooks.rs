//! Hosts whose hooks are `[[hooks]]` tables in a TOML file of their own: Mistral Vibe
//! (`hooks.toml`: `name`, `type`, `command`, `timeout`) and Kimi CLI (`config.toml`, also the
//! user's model and provider settings: `event`, `command`, `timeout`). The file is edited with
//! `toml_edit`, so the user's comments, order and formatting stay; amplihack's tables go after
//! the user's, and uninstall takes exactly them out again, byte for byte: a `hooks` key install
//! added goes with them, and Kimi's own empty `hooks = []` (which it writes into every new
//! config) comes back as it was.

use std::path::Path;

use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, value};

use super::{Host, Target};
use crate::error::CommandError;
use crate::finding::Finding;
use crate::registration;
use crate::safe_file::{self, EditOptions, EditReport};

/// The timeout (seconds) of a row the table registers without one: amplihack answers (or fails
/// open) within 50 s there, inside this; the hosts' own defaults are 60 (Vibe) and 30 (Kimi).
const UNSET_TIMEOUT_SECS: u64 = 60;

/// One `[[hooks]]` table amplihack writes: (the event as the host names it, the command, the
/// timeout in seconds, Vibe's `strict`: the tool is denied when the hook fails).
type Entry = (String, String, u64, bool);

/// The key naming the event: Vibe's `type`, Kimi's `event`.
fn event_key(host: Host) -> &'static str {
    if host == Host::Vibe { "type" } else { "event" }
}

/// amplihack's entries for `host`, running `binary`, in the table's order; under
/// `install --fail-closed` Vibe's `pre_tool` entry is `strict` and refuses with the fix
/// ([`registration::command_failing`]).
pub fn wanted(host: Host, binary: &Path, failure: registration::Failure) -> Vec<Entry> {
    registration::canonical(host)
        .iter()
        .map(|spec| {
            (
                spec.event.to_string(),
                registration::command_failing(binary, spec, host, failure),
                spec.timeout.unwrap_or(UNSET_TIMEOUT_SECS),
                registration::closes(spec, host, failure),
            )
        })
        .collect()
}

fn table_of(host: Host, (event, command, timeout, strict): &Entry) -> Table {
    let mut table = Table::new();
    if host == Host::Vibe {
        // Vibe wants a name, unique across its files: the subcommand says which row it is.
        let row = registration::recognise(command)
            .and_then(|o| o.subcommand)
            .unwrap_or_default();
        table.insert("name", value(format!("amplihack-{row}")));
    }
    table.insert(event_key(host), value(event.as_str()));
    table.insert("command", value(command.as_str()));
    table.insert("timeout", value(i64::try_from(*timeout).unwrap_or(60)));
    if *strict {
        table.insert("strict", value(true));
    }
    table
}

fn is_ours(table: &Table) -> bool {
    table
        .get("command")
        .and_then(Item::as_str)
        .is_some_and(|c| registration::recognise(c).is_some())
}

fn entry_of(host: Host, table: &Table) -> Option<Entry> {
    Some((
        table.get(event_key(host))?.as_str()?.to_string(),
        table.get("command")?.as_str()?.to_string(),
        u64::try_from(table.get("timeout")?.as_integer()?).ok()?,
        table.get("strict").and_then(Item::as_bool).unwrap_or(false),
    ))
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>().map_err(|e| {
        format!(
            "{} is not valid TOML ({}); fix it, then run the command again",
            path.display(),
            e.to_string().trim().replace('\n', " ")
        )
    })
}

fn shape_error(path: &Path, found: &str) -> String {
    format!(
        "{}: field `hooks` is {found}, not an array of [[hooks]] tables; write each hook as a [[hooks]] table, then run the command again",
        path.display()
    )
}

/// The start of the comment amplihack puts above its first table where it replaced Kimi's
/// empty `hooks = []`: where that line was, for uninstall to put it back.
const WAS_EMPTY: &str = "# amplihack: uninstall puts back `hooks = []` after ";

/// The comment saying where `hooks = []` was: after the key `after` (`^` at the top).
fn was_empty_note(after: &str) -> String {
    format!("{WAS_EMPTY}`{after}`\n")
}

/// The key `hooks = []` followed, from amplihack's note (`^`: it was the first).
fn was_empty_after(hooks: &ArrayOfTables) -> Option<String> {
    hooks.iter().find(|t| is_ours(t)).and_then(|t| {
        let prefix = t.decor().prefix()?.as_str()?;
        let rest = prefix.lines().find_map(|l| l.strip_prefix(WAS_EMPTY))?;
        Some(rest.trim().trim_matches('`').to_string())
    })
}

/// The `[[hooks]]` tables of `doc`, made so when there is none yet or only Kimi's empty
/// `hooks = []` (TOML puts tables after every plain key, so that line's place is noted for
/// uninstall: returned as the key before it).
fn hooks_of<'a>(
    doc: &'a mut DocumentMut,
    path: &Path,
) -> Result<(&'a mut ArrayOfTables, Option<String>), String> {
    let root = doc.as_table_mut();
    let mut was_empty = None;
    match root.get("hooks") {
        None => {
            root.insert("hooks", Item::ArrayOfTables(ArrayOfTables::new()));
        }
        Some(Item::Value(toml_edit::Value::Array(a))) if a.is_empty() => {
            let mut before = "^".to_string();
            for (key, item) in root.iter() {
                if key == "hooks" {
                    break;
                }
                if item.is_value() {
                    before = key.to_string();
                }
            }
            was_empty = Some(before);
            if let Some(item) = root.get_mut("hooks") {
                *item = Item::ArrayOfTables(ArrayOfTables::new());
            }
        }
        Some(Item::ArrayOfTables(_)) => {}
        Some(Item::Value(toml_edit::Value::Array(_))) => {
            return Err(shape_error(path, "an inline array"));
        }
        Some(other) => return Err(shape_error(path, other.type_name())),
    }
    root.get_mut("hooks")
        .and_then(Item::as_array_of_tables_mut)
        .map(|hooks| (hooks, was_empty))
        .ok_or_else(|| shape_error(path, "not an array"))
}

/// `text` with amplihack's entries for `host` (running `binary`) after the user's, replacing
/// any of amplihack's there were. Unchanged when they are already exactly these.
pub fn install_into(
    host: Host,
    path: &Path,
    text: Option<&str>,
    binary: &Path,
    failure: registration::Failure,
) -> Result<String, String> {
    let mut doc = parse(path, text.unwrap_or(""))?;
    let want = wanted(host, binary, failure);
    let (hooks, was_empty) = hooks_of(&mut doc, path)?;
    let was_empty = was_empty.or_else(|| was_empty_after(hooks));
    let present: Vec<Option<Entry>> = hooks
        .iter()
        .filter(|t| is_ours(t))
        .map(|t| entry_of(host, t))
        .collect();
    let ours_last = hooks.iter().skip_while(|t| !is_ours(t)).all(is_ours);
    if ours_last && present.iter().cloned().collect::<Option<Vec<_>>>() == Some(want.clone()) {
        return Ok(text.unwrap_or("").to_string());
    }
    hooks.retain(|t| !is_ours(t));
    for (at, entry) in want.iter().enumerate() {
        let mut table = table_of(host, entry);
        if let (0, Some(after)) = (at, &was_empty) {
            table
                .decor_mut()
                .set_prefix(format!("\n{}", was_empty_note(after)));
        }
        hooks.push(table);
    }
    Ok(doc.to_string())
}

/// `text` without amplihack's entries; `None` when nothing is left of the file (one install
/// created). `key_added`: install added the `hooks` key, which goes when emptied; otherwise an
/// emptied `hooks` is Kimi's `hooks = []` again.
pub fn uninstall_from(
    _host: Host,
    path: &Path,
    text: &str,
    key_added: bool,
    created: bool,
) -> Result<Option<String>, String> {
    let mut doc = parse(path, text)?;
    let root = doc.as_table_mut();
    let Some(Item::ArrayOfTables(hooks)) = root.get_mut("hooks") else {
        return Ok(Some(text.to_string()));
    };
    if !hooks.iter().any(is_ours) {
        return Ok(Some(text.to_string()));
    }
    let was_empty = was_empty_after(hooks);
    hooks.retain(|t| !is_ours(t));
    if hooks.is_empty() {
        root.remove("hooks");
        if let Some(after) = was_empty.filter(|_| !key_added && !created) {
            // Back where it was: after the key it followed, before the next plain key.
            let order: Vec<String> = root.iter().map(|(k, _)| k.to_string()).collect();
            let rank = |key: &str| -> (usize, usize) {
                if key == "hooks" {
                    let at = order.iter().position(|k| *k == after).map_or(0, |i| i + 1);
                    return (at, 0);
                }
                let at = order.iter().position(|k| k == key).unwrap_or(order.len());
                (at, 1)
            };
            root.insert("hooks", value(Array::new()));
            root.sort_values_by(|a, _, b, _| rank(a.get()).cmp(&rank(b.get())));
        }
    }
    let after = doc.to_string();
    Ok((!(created && after.trim().is_empty())).then_some(after))
}

/// Whether `text` holds a `hooks` key at all (install records a file without one, so that
/// uninstall takes the key out again).
pub fn has_hooks_key(text: &str) -> bool {
    text.parse::<DocumentMut>()
        .is_ok_and(|d| d.as_table().contains_key("hooks"))
}

/// Writes (or repairs) amplihack's entries in the target's file.
pub fn register(
    target: &Target,
    hooks_binary: &Path,
    options: &EditOptions,
    failure: registration::Failure,
) -> Result<EditReport, CommandError> {
    Ok(safe_file::edit_text(&target.path, options, |current| {
        install_into(target.host, &target.path, current, hooks_binary, failure).map(Some)
    })?)
}

/// Checks, before anything is written, that [`register`] will not refuse the file.
pub fn probe(target: &Target) -> Result<(), CommandError> {
    let text = safe_file::read_text(&target.path)?;
    install_into(
        target.host,
        &target.path,
        text.as_deref(),
        Path::new("/probe/amplihack-hooks"),
        registration::Failure::Open,
    )
    .map(|_| ())
    .map_err(|e| CommandError::Refused(format!("{e}; nothing was changed")))
}

/// Takes amplihack's entries out of the target's file (deleting a file install created that
/// holds nothing else).
pub fn unregister(
    target: &Target,
    options: &EditOptions,
    key_added: bool,
    created: bool,
) -> Result<EditReport, CommandError> {
    let own = EditOptions {
        backup: options.backup && !created,
        ..*options
    };
    Ok(safe_file::edit_text(
        &target.path,
        &own,
        |current| match current {
            None => Ok(None),
            Some(text) => uninstall_from(target.host, &target.path, text, key_added, created),
        },
    )?)
}

/// After amplihack's own file went: the lock sidecar beside it, and a project's directory
/// (`.vibe/`) when that left it empty. A host's home directory stays (it is the host's).
pub fn remove_leftovers(target: &Target) {
    let (Some(dir), Some(name)) = (target.path.parent(), target.path.file_name()) else {
        return;
    };
    let _ = std::fs::remove_file(dir.join(format!(".{}.amplihack.lock", name.to_string_lossy())));
    if target.scope == crate::scopes::Scope::Project {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Checks that an uninstall can read the file.
pub fn probe_uninstall(target: &Target) -> Result<(), CommandError> {
    if let Some(text) = safe_file::read_text(&target.path)? {
        uninstall_from(target.host, &target.path, &text, false, false)
            .map_err(|e| CommandError::Refused(format!("{e}; nothing was changed")))?;
    }
    Ok(())
}

/// Whether the target's file holds amplihack's entries.
pub fn holds_ours(target: &Target) -> bool {
    safe_file::read_text(&target.path)
        .ok()
        .flatten()
        .and_then(|t| t.parse::<DocumentMut>().ok())
        .is_some_and(|d| {
            d.get("hooks")
                .and_then(Item::as_array_of_tables)
                .is_some_and(|h| h.iter().any(is_ours))
        })
}

/// doctor's and status's check: the file holds exactly this install's entries.
pub fn check(target: &Target, hooks_binary: &Path) -> Vec<Finding> {
    let fix = format!(
        "amplihack install --scope {} --host {} (or amplihack doctor --fix)",
        target.scope.as_str(),
        target.host.name()
    );
    let place = format!(
        "{} ({} {} scope)",
        target.path.display(),
        target.host.name(),
        target.scope.as_str()
    );
    let text = match safe_file::read_text(&target.path) {
        Err(e) => {
            return vec![Finding::problem(
                e.to_string(),
                "fix the file as described, then run `amplihack doctor` again".into(),
            )];
        }
        Ok(None) => return vec![Finding::problem(format!("{place}: missing"), fix)],
        Ok(Some(text)) => text,
    };
    let doc = match parse(&target.path, &text) {
        Ok(doc) => doc,
        Err(e) => return vec![Finding::problem(e, "fix the file as described".into())],
    };
    let present: Vec<Option<Entry>> = doc
        .get("hooks")
        .and_then(Item::as_array_of_tables)
        .map(|h| {
            h.iter()
                .filter(|t| is_ours(t))
                .map(|t| entry_of(target.host, t))
                .collect()
        })
        .unwrap_or_default();
    let recorded = crate::scopes::Locations::from_env(&target.path)
        .map(|l| crate::fail_closed::recorded(&l.state()))
        .unwrap_or_default();
    let want = wanted(target.host, hooks_binary, recorded);
    if present.iter().cloned().collect::<Option<Vec<_>>>() == Some(want.clone()) {
        let closed = want.iter().any(|(_, _, _, strict)| *strict);
        return vec![Finding::ok(format!(
            "{place}: {} hooks, canonical{}",
            want.len(),
            if closed { ", fail-closed" } else { "" }
        ))];
    }
    let strict_now = present.iter().flatten().any(|(_, _, _, strict)| *strict);
    let strict_wanted = want.iter().any(|(_, _, _, strict)| *strict);
    if strict_wanted != strict_now && present.len() == want.len() {
        let (is, recorded) = if strict_wanted {
            ("fail-open", "--fail-closed")
        } else {
            ("fail-closed", "fail-open")
        };
        return vec![Finding::problem(
            format!("{place}: pre_tool is {is}, but `install {recorded}` is recorded"),
            "amplihack doctor --fix (or `amplihack install --fail-open` or `--fail-closed` to choose again)".into(),
        )];
    }
    let binary = hooks_binary.to_string_lossy();
    let other = present
        .iter()
        .flatten()
        .find(|(_, command, _, _)| !command.contains(binary.as_ref()));
    let message = match other {
        Some((_, command, _, _)) => format!("{place}: runs `{command}`, not the deployed {binary}"),
        None if present.is_empty() => format!("{place}: no amplihack entry"),
        None => format!(
            "{place}: amplihack's entries differ from this version's ({} of {})",
            present.len(),
            want.len()
        ),
    };
    vec![Finding::problem(message, fix)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/amplihack/bin/amplihack-hooks";

    fn round_trip(host: Host, before: Option<&str>, key_added: bool, created: bool) -> String {
        let path = Path::new("/x/file.toml");
        let installed = install_into(
            host,
            path,
            before,
            Path::new(BIN),
            registration::Failure::Open,
        )
        .expect("installs");
        let again = install_into(
            host,
            path,
            Some(&installed),
            Path::new(BIN),
            registration::Failure::Open,
        )
        .expect("again");
        assert_eq!(installed, again, "a second install changes nothing");
        assert!(holds_ours_text(&installed));
        uninstall_from(host, path, &installed, key_added, created)
            .expect("uninstalls")
            .unwrap_or_default()
    }

    fn holds_ours_text(text: &str) -> bool {
        text.parse::<DocumentMut>().is_ok_and(|d| {
            d.get("hooks")
                .and_then(Item::as_array_of_tables)
                .is_some_and(|h| h.iter().any(is_ours))
        })
    }

    #[test]
    fn uninstall_gives_the_users_bytes_back() {
        let vibe_user = "# my hooks\n\n[[hooks]]\nname = \"log\"   # mine\ntype = \"pre_tool\"\ncommand = \"logger x\"\n\n# trailing comment\n";
        let kimi_default = "default_model = \"\"\ndefault_thinking = false\nhooks = []\nmerge_all_available_skills = false\n\n[models]\n\n[providers]\n\n[loop_control]\nmax_steps_per_turn = 500\n";
        let kimi_user_hook =
            "hooks = []\n# comment\n[[hooks]]\nevent = \"Stop\"\ncommand = \"true\"\n";
        let cases: &[(Host, &str, bool)] = &[
            (Host::Vibe, vibe_user, false),
            (Host::Vibe, "# only a comment\n", true),
            (Host::Kimi, kimi_default, false),
            (Host::Kimi, "default_model = \"x\"\n[models]\n", true),
        ];
        for (host, before, key_added) in cases {
            assert_eq!(
                &round_trip(*host, Some(before), *key_added, false),
                before,
                "{host:?}"
            );
        }
        assert!(
            parse(Path::new("/x"), kimi_user_hook).is_err(),
            "a key defined twice is not TOML"
        );
        assert_eq!(round_trip(Host::Vibe, None, true, true), "");
        assert_eq!(round_trip(Host::Kimi, None, true, true), "");
    }

    #[test]
    fn entries_name_the_hosts_events() {
        let text = install_into(
            Host::Vibe,
            Path::new("/x"),
            None,
            Path::new(BIN),
            registration::Failure::Open,
        )
        .expect("installs");
        assert!(text.contains("type = \"pre_tool\""), "{text}");
        assert!(text.contains("type = \"post_tool\""), "{text}");
        assert!(text.contains("type = \"post_agent\""), "{text}");
        assert!(text.contains("name = \"amplihack-pre-tool-use\""), "{text}");
        assert!(text.contains("--host vibe"), "{text}");
        let text = install_into(
            Host::Kimi,
            Path::new("/x"),
            None,
            Path::new(BIN),
            registration::Failure::Open,
        )
        .expect("installs");
        assert!(text.contains("event = \"PreToolUse\""), "{text}");
        assert!(text.contains("event = \"SessionStart\""), "{text}");
        assert!(text.contains("--host kimi"), "{text}");
    }

    /// `install --fail-closed`: Vibe's pre_tool entry alone is `strict` and refuses in Vibe's
    /// form; a re-install fail-open takes it back to the plain entry; Kimi has no switch.
    #[test]
    fn fail_closed_makes_vibes_pre_tool_strict() {
        use registration::Failure;
        let path = Path::new("/x/hooks.toml");
        let closed = install_into(Host::Vibe, path, None, Path::new(BIN), Failure::Closed)
            .expect("installs");
        let doc: DocumentMut = closed.parse().expect("toml");
        let hooks = doc["hooks"].as_array_of_tables().expect("hooks");
        for table in hooks.iter() {
            let pre = table["type"].as_str() == Some("pre_tool");
            assert_eq!(
                table.get("strict").and_then(Item::as_bool),
                pre.then_some(true),
                "{closed}"
            );
            let command = table["command"].as_str().unwrap_or_default();
            assert_eq!(
                amplihack_protocol::command::has_refusing_guard(command),
                pre,
                "{command}"
            );
            if pre {
                assert!(
                    command.contains(r#"{"decision":"deny","reason":"#),
                    "{command}"
                );
            }
        }
        let again = install_into(
            Host::Vibe,
            path,
            Some(&closed),
            Path::new(BIN),
            Failure::Closed,
        )
        .expect("again");
        assert_eq!(again, closed, "idempotent");
        let open = install_into(
            Host::Vibe,
            path,
            Some(&closed),
            Path::new(BIN),
            Failure::Open,
        )
        .expect("fail-open");
        assert_eq!(
            open,
            install_into(Host::Vibe, path, None, Path::new(BIN), Failure::Open).expect("plain")
        );
        assert!(!open.contains("strict"), "{open}");
        let kimi =
            install_into(Host::Kimi, path, None, Path::new(BIN), Failure::Closed).expect("kimi");
        assert!(
            !kimi.contains("strict") && !kimi.contains("decision"),
            "{kimi}"
        );
    }

    #[test]
    fn a_hooks_field_of_another_shape_is_refused() {
        let e = install_into(
            Host::Kimi,
            Path::new("/c.toml"),
            Some("hooks = [{event = \"Stop\", command = \"x\"}]\n"),
            Path::new(BIN),
            registration::Failure::Open,
        )
        .expect_err("refused");
        assert!(e.contains("field `hooks` is an inline array"), "{e}");
        let e = install_into(
            Host::Vibe,
            Path::new("/h.toml"),
            Some("hooks = 3\n"),
            Path::new(BIN),
            registration::Failure::Open,
        )
        .expect_err("refused");
        assert!(e.contains("/h.toml: field `hooks`"), "{e}");
    }
}
