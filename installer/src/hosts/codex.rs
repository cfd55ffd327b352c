//! Codex: amplihack's entries in `hooks.json` beside Codex's `config.toml`, in `$CODEX_HOME`
//! (default `~/.codex`) for the user scope and `<project>/.codex/` for the project scope (which
//! Codex loads only for a trusted project), and the machine's `/etc/codex/requirements.toml` for
//! the managed scope ([`super::codex_requirements`]). No local scope.

use std::path::PathBuf;

use super::{Host, HostSpec, Registration};
use crate::scopes::{Locations, Scope};

/// Codex's home directory: `$CODEX_HOME`, else `~/.codex`.
pub fn home(locations: &Locations) -> PathBuf {
    std::env::var_os(amplihack_env::CODEX_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| locations.home.join(".codex"), PathBuf::from)
}

pub const SPEC: HostSpec = HostSpec {
    host: Host::Codex,
    files: &[
        (Scope::User, |l| home(l).join("hooks.json")),
        (Scope::Project, |l| l.project.join(".codex/hooks.json")),
        // The machine's requirements, for every user: `codex_requirements`.
        (Scope::Managed, |_| {
            PathBuf::from(super::codex_requirements::REQUIREMENTS)
        }),
    ],
    home,
    always_found: false,
    syntax: amplihack_settings::safe_file::Syntax::Json,
    registration: Registration::JsonHooks,
    stamps: &[],
    trust_note: None,
    shadowed: None,
    sessions: Some(super::sessions::Sessions {
        where_kept: "$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl",
        list: sessions,
        causes: &[
            (
                "hooks switched off in Codex's config (`[features] hooks = false`, or the older `codex_hooks = false`; also `-c features.hooks=false`)",
                "turn them on again in $CODEX_HOME/config.toml (or drop the `-c` override)",
            ),
            (
                "entries Codex does not trust (it skips untrusted or modified hooks without a word)",
                "put codex on PATH and run `amplihack doctor --fix`, or trust them in Codex's TUI (/hooks)",
            ),
            (
                "a project Codex does not trust (it loads a project's .codex/ only for a trusted one)",
                "trust the project in Codex, or use --scope user",
            ),
            (
                "a binary that moved or was removed",
                "amplihack doctor --fix",
            ),
        ],
    }),
};

/// Codex's session records: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, the id
/// (a UUID) the one its hooks are sent as `session_id`. They do not name the project.
fn sessions(locations: &Locations) -> Vec<super::sessions::HostSession> {
    super::sessions::jsonl_files(&home(locations).join("sessions"), 3)
        .into_iter()
        .filter_map(|(path, modified)| {
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            let id = stem.get(stem.len().checked_sub(36)?..)?.to_string();
            (stem.starts_with("rollout-") && id.matches('-').count() == 4).then_some(
                super::sessions::HostSession {
                    id,
                    path,
                    modified,
                    project: None,
                },
            )
        })
        .collect()
}

// Trust: Codex runs none of amplihack's entries until they are trusted, by hash, through Codex
// itself ([`codex_trust`]). After every write of them (install, install after a move, update's
// reregister, doctor --fix) the exact entries are trusted; doctor reports any Codex would skip;
// uninstall takes the trust back out of `config.toml`, leaving the user's bytes as they were.

use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::codex_trust::{self, AppServer, Listed};
use crate::error::CommandError;
use crate::finding::Finding;
use crate::registration;

/// What install and the other writers have to tell about trust, gathered while they write
/// (the writer returns only the file's report) and shown once by the command.
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn note(text: String) {
    if let Ok(mut notes) = NOTES.lock()
        && !notes.contains(&text)
    {
        notes.push(text);
    }
}

/// The trust notes gathered since the last call.
pub fn take_notes() -> Vec<String> {
    NOTES
        .lock()
        .map(|mut n| std::mem::take(&mut *n))
        .unwrap_or_default()
}

/// What a user without `codex` on PATH must do.
fn not_found(file: &Path) -> String {
    format!(
        "{}: Codex skips hooks nobody trusted, and `codex` is not on PATH (nor named by {}): amplihack's entries there do not run until trusted; put codex on PATH (or set {}) and run `amplihack doctor --fix`, or review them in Codex's TUI (/hooks)",
        file.display(),
        amplihack_env::AMPLIHACK_CODEX_BIN,
        amplihack_env::AMPLIHACK_CODEX_BIN,
    )
}

/// The directory Codex is asked about: the project of a project-scope file
/// (`<project>/.codex/hooks.json`), else the file's own directory (the user layer loads anywhere).
fn cwd_of(file: &Path, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::Project => file.parent()?.parent().map(Path::to_path_buf),
        _ => file.parent().map(Path::to_path_buf),
    }
}

/// What Codex must be told for a project scope it does not load.
fn untrusted_project(project: &Path, config: &Path) -> String {
    format!(
        "Codex loads {}/.codex/ only for a trusted project, and it does not trust {} yet: amplihack's project hooks do not run there until you trust it (answer Codex's prompt in that directory, or add [projects.\"{}\"] trust_level = \"trusted\" to {}), then run `amplihack doctor --fix`",
        project.display(),
        project.display(),
        project.display(),
        config.display()
    )
}

/// amplihack's entries from `file` among what Codex lists, as far as a check can tell: commands
/// that run a program named amplihack-hooks. For reporting only; trust goes to [`Written`].
fn ours_in<'a>(listed: &'a [Listed], file: &Path) -> Vec<&'a Listed> {
    listed
        .iter()
        .filter(|h| h.source_path == file && registration::recognise(&h.command).is_some())
        .collect()
}

/// Exactly what amplihack writes into a Codex hooks file: per entry, its event (as Codex names
/// it) and its whole command, for the binary this install deployed. Trust goes only to an entry
/// equal to one of these in both, never to one that only names a program `amplihack-hooks` or
/// hides our command behind something else: a repository's own `.codex/hooks.json` is hostile.
pub struct Written {
    binary: std::path::PathBuf,
    specs: Vec<registration::HookSpec>,
}

impl Written {
    /// The table's rows for Codex, and a `dispatch` entry for each of `plugin_events`, running
    /// `binary`.
    pub fn new(binary: &Path, plugin_events: &[String]) -> Written {
        use amplihack_protocol::EventName;
        let specs = registration::canonical(Host::Codex).into_iter().chain(
            plugin_events.iter().filter_map(|event| {
                registration::plugin_event_spec(Host::Codex, &EventName::parse(event))
            }),
        );
        Written {
            binary: binary.to_path_buf(),
            specs: specs.collect(),
        }
    }

    /// Whether Codex's `hook` is one of these entries: the same command and the same event
    /// (Codex lists `preToolUse` for `PreToolUse`). A row raised for the plugins' timeouts
    /// carries amplihack's own `--timeout N`, which is compared as amplihack writes it.
    fn holds(&self, hook: &Listed) -> bool {
        let folded = |name: &str| name.replace('_', "").to_ascii_lowercase();
        let raised = registration::raised_in(&hook.command);
        self.specs.iter().any(|spec| {
            let spec = registration::HookSpec { raised, ..*spec };
            registration::command_for(&self.binary, &spec, Host::Codex) == hook.command
                && folded(spec.event) == folded(&hook.event_name)
        })
    }
}

/// After amplihack's entries were written to `file`: trusts exactly them through `codex
/// app-server`, and records the keys for uninstall. What the user must do is gathered for
/// [`take_notes`].
pub fn trust_after_write(file: &Path, scope: Scope, dry_run: bool, written: &Written) {
    if dry_run {
        return;
    }
    let Some(codex) = codex_trust::codex_binary() else {
        note(not_found(file));
        return;
    };
    let Some(cwd) = cwd_of(file, scope) else {
        return;
    };
    if let Err(e) = trust(&codex, file, scope, &cwd, written) {
        note(format!(
            "{}: could not trust amplihack's entries through Codex ({e}); Codex skips them until trusted: run `amplihack doctor --fix`",
            file.display()
        ));
    }
}

fn trust(
    codex: &Path,
    file: &Path,
    scope: Scope,
    cwd: &Path,
    written: &Written,
) -> Result<(), String> {
    let locations = Locations::from_env(cwd).map_err(|e| e.to_string())?;
    let config = home(&locations).join("config.toml");
    let mut server = AppServer::start(codex, cwd)?;
    let listed = server.hooks(cwd)?;
    let ours: Vec<&Listed> = listed
        .iter()
        .filter(|h| h.source_path == file && written.holds(h))
        .collect();
    // Anything else in the file that names amplihack-hooks is not amplihack's to trust.
    let lookalikes: Vec<String> = ours_in(&listed, file)
        .into_iter()
        .filter(|h| !written.holds(h))
        .map(|h| format!("{} `{}`", h.event_name, h.command))
        .collect();
    if !lookalikes.is_empty() {
        note(format!(
            "{}: not trusted, though they name amplihack-hooks: {} (amplihack trusts only the entries it wrote, exactly as it wrote them; review these in Codex's TUI, /hooks)",
            file.display(),
            lookalikes.join("; ")
        ));
    }
    if ours.is_empty() {
        note(match scope {
            Scope::Project => untrusted_project(cwd, &config),
            _ => format!(
                "{}: Codex lists none of amplihack's entries (are hooks off: `[features] hooks = false` in {}?)",
                file.display(),
                config.display()
            ),
        });
        return Ok(());
    }
    let record_path = record_file(&locations);
    remember_config(&record_path, &config, ours.iter().map(|h| h.key.clone()))
        .map_err(|e| e.to_string())?;
    let untrusted: Vec<&Listed> = ours.into_iter().filter(|h| !h.trusted()).collect();
    server.trust(&untrusted)
}

/// doctor's Codex check of one registration file: Codex trusts each of amplihack's entries as
/// they are now (untrusted or modified entries are skipped without a word), and a project scope
/// is one Codex loads.
pub fn check(file: &Path, scope: Scope) -> Vec<Finding> {
    let holds_ours = crate::safe_file::read_json(file)
        .ok()
        .flatten()
        .is_some_and(|(_, v)| !registration::find_ours(&v).is_empty());
    if !holds_ours {
        return Vec::new();
    }
    let Some(codex) = codex_trust::codex_binary() else {
        return vec![Finding::note(
            format!(
                "{}: cannot ask Codex whether it trusts amplihack's entries: `codex` is not on PATH",
                file.display()
            ),
            not_found(file),
        )];
    };
    let Some(cwd) = cwd_of(file, scope) else {
        return Vec::new();
    };
    let listed = AppServer::start(&codex, &cwd).and_then(|mut s| s.hooks(&cwd));
    let listed = match listed {
        Ok(listed) => listed,
        Err(e) => {
            return vec![Finding::problem(
                format!(
                    "{}: cannot ask Codex about its hook trust: {e}",
                    file.display()
                ),
                "check that `codex app-server` runs, then run `amplihack doctor` again".into(),
            )];
        }
    };
    let ours = ours_in(&listed, file);
    if ours.is_empty() {
        let config = Locations::from_env(&cwd)
            .map(|l| home(&l).join("config.toml"))
            .unwrap_or_else(|_| PathBuf::from("~/.codex/config.toml"));
        return vec![match scope {
            Scope::Project => Finding::problem(
                format!(
                    "{}: Codex does not load this project's .codex/ (the project is not trusted)",
                    file.display()
                ),
                untrusted_project(&cwd, &config),
            ),
            _ => Finding::problem(
                format!(
                    "{}: Codex lists none of amplihack's entries",
                    file.display()
                ),
                format!(
                    "check that hooks are on in {} (no `[features] hooks = false`)",
                    config.display()
                ),
            ),
        }];
    }
    let skipped: Vec<String> = ours
        .iter()
        .filter(|h| !h.trusted())
        .map(|h| format!("{} ({})", h.event_name, h.trust_status))
        .collect();
    if skipped.is_empty() {
        vec![Finding::ok(format!(
            "{}: Codex trusts all {} of amplihack's entries",
            file.display(),
            ours.len()
        ))]
    } else {
        vec![Finding::problem(
            format!(
                "{}: Codex skips amplihack's entries it does not trust as they are: {}",
                file.display(),
                skipped.join(", ")
            ),
            "amplihack doctor --fix (trusts exactly amplihack's entries through `codex app-server`)"
                .into(),
        )]
    }
}

// The record of what trusting changed in Codex's config.toml, so uninstall gives it back.

/// `codex-trust.json` in amplihack's state directory.
fn record_file(locations: &Locations) -> PathBuf {
    locations.state().file("codex-trust.json")
}

#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq)]
struct Record {
    configs: Vec<ConfigRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct ConfigRecord {
    /// `$CODEX_HOME/config.toml`.
    config: PathBuf,
    /// It did not exist before amplihack first trusted anything there.
    created: bool,
    /// It had a `hooks` table, and a `hooks.state` table, before.
    had_hooks: bool,
    had_state: bool,
    /// The trust keys of amplihack's entries.
    keys: Vec<String>,
}

fn load_record(path: &Path) -> Record {
    amplihack_state::files::read_json(path)
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn save_record(path: &Path, record: &Record) -> Result<(), CommandError> {
    if record.configs.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(CommandError::io("remove", path, e))
            }
            _ => Ok(()),
        };
    }
    Ok(amplihack_state::files::write_json(path, record)?)
}

/// Records, before Codex first writes trust into `config`, what was there; and the keys.
fn remember_config(
    record_path: &Path,
    config: &Path,
    keys: impl Iterator<Item = String>,
) -> Result<(), CommandError> {
    let mut record = load_record(record_path);
    let at = match record.configs.iter().position(|c| c.config == config) {
        Some(at) => at,
        None => {
            let text = crate::safe_file::read_text(config)?;
            let doc = text
                .as_deref()
                .map(str::parse::<toml_edit::DocumentMut>)
                .transpose()
                .map_err(|e| {
                    CommandError::refused(format!("{}: not TOML: {e}", config.display()))
                })?;
            let hooks = doc.as_ref().and_then(|d| d.get("hooks"));
            record.configs.push(ConfigRecord {
                config: config.to_path_buf(),
                created: text.is_none(),
                had_hooks: hooks.is_some(),
                had_state: hooks.and_then(|h| h.get("state")).is_some(),
                keys: Vec::new(),
            });
            record.configs.len() - 1
        }
    };
    let entry = &mut record.configs[at];
    for key in keys {
        if !entry.keys.contains(&key) {
            entry.keys.push(key);
        }
    }
    save_record(record_path, &record)
}

/// Refuses (before uninstall touches anything) when a `config.toml` amplihack's trust is recorded
/// in cannot be edited: not TOML any more.
pub fn can_forget_trust(locations: &Locations) -> Result<(), CommandError> {
    for entry in load_record(&record_file(locations)).configs {
        if let Some(text) = crate::safe_file::read_text(&entry.config)? {
            text.parse::<toml_edit::DocumentMut>().map_err(|e| {
                CommandError::refused(format!(
                    "{}: not TOML ({e}); fix it so amplihack can take its hook trust out, or take amplihack's [hooks.state] entries out by hand; nothing was changed",
                    entry.config.display()
                ))
            })?;
        }
    }
    Ok(())
}

/// After amplihack's entries left `file`: takes their trust out of Codex's `config.toml`, and
/// the tables (or the file) trusting added when nothing else is in them: the user's bytes back.
/// Returns the config file when it changed.
pub fn forget_trust(
    file: &Path,
    locations: &Locations,
    dry_run: bool,
) -> Result<Option<PathBuf>, CommandError> {
    let record_path = record_file(locations);
    let mut record = load_record(&record_path);
    let prefix = format!("{}:", file.display());
    let mut changed = None;
    for entry in &mut record.configs {
        let gone: Vec<String> = entry
            .keys
            .iter()
            .filter(|k| k.starts_with(&prefix))
            .cloned()
            .collect();
        if gone.is_empty() {
            continue;
        }
        entry.keys.retain(|k| !gone.contains(k));
        let last = entry.keys.is_empty();
        let options = crate::safe_file::EditOptions {
            dry_run,
            ..crate::safe_file::EditOptions::default()
        };
        let report = crate::safe_file::edit_text(&entry.config, &options, |current| {
            let Some(text) = current else {
                return Ok(None);
            };
            untrust_text(text, &gone, last.then_some(&*entry)).map_err(|e| {
                format!("not TOML: {e}; take amplihack's [hooks.state] entries out by hand")
            })
        })?;
        if report.action != crate::safe_file::Action::Unchanged {
            changed = Some(entry.config.clone());
        }
    }
    if !dry_run {
        record.configs.retain(|c| !c.keys.is_empty());
        save_record(&record_path, &record)?;
    }
    Ok(changed)
}

/// `text` without `hooks.state."<key>"` for `keys`; with `tidy` (the last of amplihack's keys
/// went) also without the `hooks.state` and `hooks` tables trusting added, when empty, and
/// `None` (no file) when amplihack created the file and nothing is left in it.
fn untrust_text(
    text: &str,
    keys: &[String],
    tidy: Option<&ConfigRecord>,
) -> Result<Option<String>, toml_edit::TomlError> {
    let mut doc: toml_edit::DocumentMut = text.parse()?;
    if let Some(state) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("state"))
        .and_then(toml_edit::Item::as_table_like_mut)
    {
        for key in keys {
            state.remove(key);
        }
    }
    if let Some(record) = tidy {
        let empty = |item: Option<&toml_edit::Item>| {
            item.and_then(toml_edit::Item::as_table_like)
                .is_some_and(|t| t.is_empty())
        };
        if !record.had_state
            && let Some(hooks) = doc
                .get_mut("hooks")
                .and_then(toml_edit::Item::as_table_like_mut)
            && empty(hooks.get("state"))
        {
            hooks.remove("state");
        }
        if !record.had_hooks && empty(doc.get("hooks")) {
            doc.remove("hooks");
        }
        if record.created && doc.iter().next().is_none() && doc.to_string().trim().is_empty() {
            return Ok(None);
        }
    }
    Ok(Some(doc.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use amplihack_protocol::{Host, table};

    /// Every Codex row has a timeout (Codex's own default is 600 s), within what Codex accepts
    /// without a warning, and above the deadline amplihack answers by.
    #[test]
    fn every_codex_row_is_timed_within_codex_limits_and_above_its_deadline() {
        let canonical = registration::canonical(Host::Codex);
        assert!(!canonical.is_empty());
        for spec in canonical {
            let hook = table::find(spec.subcommand).expect("a table row");
            let timeout = spec.timeout.expect("a timeout on every Codex row");
            assert!(
                hook.deadline < std::time::Duration::from_secs(timeout),
                "{spec:?}"
            );
            if spec.event == "SessionEnd" {
                assert!(timeout <= 3, "Codex clamps SessionEnd to 3 s: {spec:?}");
            }
        }
    }

    /// Codex keys trust by position: amplihack's entries go after the user's, whose keys (and
    /// so their trust) stay as they were.
    #[test]
    fn ours_go_after_the_users_entries_and_keep_their_place() {
        let mut settings = serde_json::json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}
        ]}});
        registration::install(
            &mut settings,
            Path::new("/bin/amplihack-hooks"),
            Host::Codex,
        )
        .expect("install");
        let groups = settings["hooks"]["PreToolUse"].as_array().expect("groups");
        assert_eq!(groups[0]["hooks"][0]["command"], "mine.sh");
        assert_eq!(groups.len(), 2);
        // One the user added after ours keeps its place when ours are written again (a move).
        settings["hooks"]["PreToolUse"]
            .as_array_mut()
            .expect("groups")
            .push(serde_json::json!({"hooks": [{"type": "command", "command": "later.sh"}]}));
        registration::install(
            &mut settings,
            Path::new("/moved/amplihack-hooks"),
            Host::Codex,
        )
        .expect("install");
        let commands: Vec<&str> = settings["hooks"]["PreToolUse"]
            .as_array()
            .expect("groups")
            .iter()
            .filter_map(|g| g["hooks"][0]["command"].as_str())
            .collect();
        assert_eq!(commands.len(), 3, "{commands:?}");
        assert_eq!(commands[0], "mine.sh");
        assert!(
            commands[1].starts_with("exec /moved/amplihack-hooks"),
            "{commands:?}"
        );
        assert_eq!(commands[2], "later.sh");
    }

    fn record(created: bool, had_hooks: bool, had_state: bool) -> ConfigRecord {
        ConfigRecord {
            config: PathBuf::from("/c/config.toml"),
            created,
            had_hooks,
            had_state,
            keys: Vec::new(),
        }
    }

    /// What trusting wrote comes out again, and the user's bytes stay.
    #[test]
    fn untrusting_gives_the_users_bytes_back() {
        let ours = "[hooks.state.\"/h.json:stop:1:0\"]\ntrusted_hash = \"sha256:1\"\n";
        let theirs = "[hooks.state.\"/h.json:stop:0:0\"]\ntrusted_hash = \"sha256:0\"\n";
        let users = "# mine\nmodel = \"o3\"  # keep\n\n[tui]\nx = 1\n";
        let keys = vec!["/h.json:stop:1:0".to_string()];
        let cases: &[(&str, String, Option<ConfigRecord>, Option<String>)] = &[
            (
                "a file of the user's",
                format!("{users}\n{ours}"),
                Some(record(false, false, false)),
                Some(users.to_string()),
            ),
            (
                "a file trusting created",
                ours.to_string(),
                Some(record(true, false, false)),
                None,
            ),
            (
                "the user's own trust stays",
                format!("{users}\n{theirs}\n{ours}"),
                Some(record(false, true, true)),
                Some(format!("{users}\n{theirs}")),
            ),
            (
                "more of ours left: no tidying",
                format!("{users}\n{ours}"),
                None,
                Some(users.to_string()),
            ),
        ];
        for (name, before, tidy, after) in cases {
            let got = untrust_text(before, &keys, tidy.as_ref()).expect("toml");
            assert_eq!(&got, after, "{name}");
        }
    }
}
