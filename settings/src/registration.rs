//! What amplihack registers, and how its entries are told apart from the user's.
//!
//! The edits here work on a parsed settings value; [`crate::safe_file`] owns the bytes on disk
//! and [`crate::json_text`] keeps the user's formatting.

use std::path::Path;

use amplihack_protocol::{EventName, hosts, table};
use serde_json::{Map, Value, json};

/// One hook amplihack registers: a registered row of the hook table
/// ([`amplihack_protocol::table`]), the one place the table is defined, as one host spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    /// The event as the host names it (Gemini's `BeforeTool` for PreToolUse).
    pub event: &'static str,
    pub subcommand: &'static str,
    pub matcher: Option<&'static str>,
    /// In the host's unit (seconds; milliseconds for Qwen and Gemini); `None` leaves the host's
    /// default.
    pub timeout: Option<u64>,
    /// The seconds the registration was raised to for the plugins' declared timeouts, written
    /// into the command as `--timeout N` ([`table::TIMEOUT_FLAG`]) for the binary's deadline.
    pub raised: Option<u64>,
}

impl HookSpec {
    /// The subcommand and, when raised, its `--timeout N`.
    fn invocation(&self) -> String {
        match self.raised {
            Some(secs) => format!("{} {} {secs}", self.subcommand, table::TIMEOUT_FLAG),
            None => self.subcommand.to_string(),
        }
    }
}

/// Per row (subcommand), the seconds its registration is raised to for the plugins.
pub type Raised = Vec<(&'static str, u64)>;

/// The longest timeout (seconds) a plugin declares, per event (Claude Code's names).
pub type Declared = Vec<(EventName, f64)>;

/// The rows of `host` whose registration the plugins' `declared` timeouts raise, with the
/// seconds ([`table::timeout_for_plugins`]): each forwarding row whose event a plugin declares
/// more for than the row's deadline leaves, capped at the host's maximum for the event.
pub fn raised_for(host: Host, declared: &[(EventName, f64)]) -> Raised {
    let dialect = hosts::dialect(host);
    canonical(host)
        .into_iter()
        .filter_map(|spec| {
            let hook = table::find(spec.subcommand)?;
            let event = hook.event.as_ref()?;
            if !hook.forwards {
                return None;
            }
            let longest = declared
                .iter()
                .filter(|(e, _)| e == event)
                .map(|(_, secs)| *secs)
                .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))?;
            let base = hook
                .registered
                .and_then(|r| r.timeout_secs)
                .or(dialect.unset_timeout_secs());
            let secs =
                table::timeout_for_plugins(hook, base, longest, dialect.timeout_cap_secs(event))?;
            Some((hook.subcommand, secs))
        })
        .collect()
}

/// The seconds a registered command says it was raised to (`--timeout N`).
pub fn raised_in(command: &str) -> Option<u64> {
    let words = amplihack_protocol::command::program_words(command);
    let at = words.iter().position(|w| w == table::TIMEOUT_FLAG)?;
    words.get(at + 1)?.parse().ok()
}

/// The raised registrations amplihack's entries in `settings` carry, so that a repair or a
/// re-install keeps them (the plugins' sync is what changes them).
fn raised_now(settings: &Value) -> Raised {
    let mut raised = Raised::new();
    for (_, _, handler) in find_ours_with_commands(settings) {
        let (Some(ours), Some(secs)) = (recognise(&handler), raised_in(&handler)) else {
            continue;
        };
        if let Some(hook) = ours.subcommand.as_deref().and_then(table::find)
            && !raised.iter().any(|(s, _)| *s == hook.subcommand)
        {
            raised.push((hook.subcommand, secs));
        }
    }
    raised
}

/// [`canonical`] with the rows `raised` names registered with those seconds (in the host's
/// unit) and `--timeout N` in their commands.
pub fn canonical_raised(host: Host, raised: &[(&'static str, u64)]) -> Vec<HookSpec> {
    let dialect = hosts::dialect(host);
    let mut specs = canonical(host);
    for spec in &mut specs {
        if let Some((_, secs)) = raised.iter().find(|(s, _)| *s == spec.subcommand) {
            spec.raised = Some(*secs);
            spec.timeout = Some(dialect.timeout(*secs));
        }
    }
    specs
}

/// The registered rows for `host`, in canonical order, for the events the host delivers
/// ([`amplihack_protocol::hosts::Dialect::delivers`]). UserPromptSubmit has two wrapper objects
/// (the reminder first), which the hosts run in parallel. Amplifier's bridge stops at the first
/// hook of an event that injects context, so there each event gets only its forwarding row,
/// which then runs the event's built-ins together
/// ([`amplihack_protocol::Hook::builtins_for`]). opencode has no hook settings (its bridge
/// plugin calls amplihack), nor Pi or Cline: none.
pub fn canonical(host: Host) -> Vec<HookSpec> {
    if hosts::bridged(host) {
        return Vec::new();
    }
    let dialect = hosts::dialect(host);
    table::registered_hooks()
        .filter(|(hook, _)| host != Host::Amplifier || hook.forwards)
        .filter_map(|(hook, registration)| {
            Some(HookSpec {
                event: dialect.event_label(hook.event.as_ref()?)?,
                subcommand: hook.subcommand,
                matcher: registration.matcher,
                timeout: timeout_in(dialect, hook.event.as_ref(), registration.timeout_secs),
                raised: None,
            })
        })
        .collect()
}

/// A registered timeout in the host's unit: `secs` (or, unset, the host's own safety net, see
/// [`hosts::Dialect::unset_timeout_secs`]), capped where the host caps the event.
fn timeout_in(
    dialect: &hosts::Dialect,
    event: Option<&EventName>,
    secs: Option<u64>,
) -> Option<u64> {
    secs.or(dialect.unset_timeout_secs()).map(|s| {
        let cap = event.and_then(|e| dialect.timeout_cap_secs(e));
        dialect.timeout(cap.map_or(s, |cap| s.min(cap)))
    })
}

/// The entry amplihack registers in `host` for an event only the user's plugins need (see
/// [`crate::plugin_events`]): `dispatch` (the `dispatch` row has no timeout of its own, so the
/// host's default, or its safety net), on the event as the host names it; `None` when the host
/// does not deliver it.
pub fn plugin_event_spec(host: Host, event: &EventName) -> Option<HookSpec> {
    if host == Host::Amplifier || hosts::bridged(host) {
        return None;
    }
    let dialect = hosts::dialect(host);
    let dispatch = table::find(crate::plugin_events::DISPATCH)?;
    Some(HookSpec {
        event: dialect.event_label(event)?,
        subcommand: dispatch.subcommand,
        matcher: None,
        timeout: timeout_in(
            dialect,
            Some(event),
            dispatch.registered.and_then(|r| r.timeout_secs),
        ),
        raised: None,
    })
}

pub use amplihack_protocol::Host;
pub use table::HOOKS_BINARY;

/// The command string for one hook: the absolute path (quoted only when it must be) and the
/// subcommand, with `--host` for every host but Claude Code. Claude Code's start with `exec`
/// ([`claude_command`]), as do the other hosts that run hooks with `sh -c`; Amplifier's bridge
/// runs them without `exec`. Where a failing hook denies the tool (Copilot), the command is
/// guarded: a missing binary exits 0 ([`with_binary_guard`]).
pub fn command_for(binary: &Path, spec: &HookSpec, host: Host) -> String {
    command_failing(binary, spec, host, Failure::Open)
}

/// Whether amplihack's PreToolUse entries let the tool run when `amplihack-hooks` cannot start
/// or crashes (`Open`, the default) or refuse it (`Closed`, `amplihack install --fail-closed`,
/// where the host has a switch for it: [`hosts::fail_closed_switch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Failure {
    #[default]
    Open,
    Closed,
}

/// The row whose entry fails closed when asked.
const FAIL_CLOSED_ROW: &str = "pre-tool-use";

/// Whether `spec`'s entry in `host` is written fail-closed under `failure`.
pub fn closes(spec: &HookSpec, host: Host, failure: Failure) -> bool {
    failure == Failure::Closed
        && spec.subcommand == FAIL_CLOSED_ROW
        && hosts::fail_closed_switch(host).is_some()
}

/// [`command_for`] under `failure`: a fail-closed PreToolUse entry starts with a guard that
/// refuses, naming the fix, when the binary is missing ([`with_refusing_guard`]).
pub fn command_failing(binary: &Path, spec: &HookSpec, host: Host, failure: Failure) -> String {
    let open = command_open(binary, spec, host);
    if !closes(spec, host, failure) {
        return open;
    }
    // Without `exec`: the shell stays to refuse when the binary fails.
    let unguarded = amplihack_protocol::command::without_binary_guard(&open);
    let unguarded = unguarded
        .strip_prefix("exec ")
        .unwrap_or(unguarded)
        .to_string();
    let path = binary.to_string_lossy();
    amplihack_protocol::command::with_refusing_guard(
        &shell_quote(&path),
        &path,
        &unguarded,
        amplihack_protocol::command::DenyForm::of(host),
    )
}

/// The fail-closed state amplihack's entries in `settings` have: `Closed` when its PreToolUse
/// entry carries the refusing guard (a re-install, a repair or the plugins' sync keeps it).
pub fn failure_now(settings: &Value) -> Failure {
    let closed = find_ours_with_commands(settings)
        .iter()
        .any(|(_, _, command)| {
            amplihack_protocol::command::has_refusing_guard(command)
                && recognise(command).and_then(|o| o.subcommand).as_deref() == Some(FAIL_CLOSED_ROW)
        });
    if closed {
        Failure::Closed
    } else {
        Failure::Open
    }
}

fn command_open(binary: &Path, spec: &HookSpec, host: Host) -> String {
    match host {
        Host::ClaudeCode => claude_command(binary, &spec.invocation()),
        Host::Amplifier => format!(
            "{} {} --host amplifier",
            shell_quote(&binary.to_string_lossy()),
            spec.invocation()
        ),
        other => {
            let command = format!(
                "{} --host {}",
                claude_command(binary, &spec.invocation()),
                other.name()
            );
            if hosts::fails_closed(other) {
                with_binary_guard(&shell_quote(&binary.to_string_lossy()), &command)
            } else {
                command
            }
        }
    }
}

/// A Claude Code entry's command: `exec "<binary>" <subcommand>`. Claude Code runs every hook
/// command with `sh -c`, and dash forks even for the last command of a `-c` string; `exec` makes
/// the shell become amplihack-hooks, one process less on every event (measured in the real Claude
/// Code: a Bash call with one plugin's 4+4 handlers 0.84-0.91x of native with it, 1.04x without).
pub fn claude_command(binary: &Path, subcommand: &str) -> String {
    format!(
        "exec {} {subcommand}",
        shell_quote(&binary.to_string_lossy())
    )
}

pub use amplihack_protocol::command::{leading_words, shell_quote, with_binary_guard};

/// An amplihack handler found in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OurHandler {
    /// The binary path as written (`None` for a legacy Python hook).
    pub binary: Option<String>,
    pub subcommand: Option<String>,
}

/// Recognises amplihack's handlers wherever the binary lives: a program named `amplihack-hooks`
/// with one of its subcommands, or a legacy Python amplihack hook (`tools/amplihack/hooks/*.py`).
pub fn recognise(command: &str) -> Option<OurHandler> {
    let words = amplihack_protocol::command::program_words(command);
    if let Some(program) = words.first()
        && amplihack_protocol::command::is_hooks_program(program)
    {
        let subcommand = words[1..]
            .iter()
            .find(|w| !w.starts_with('-') && Host::from_flag(w).is_none());
        let known =
            subcommand.is_some_and(|s| table::find(s).is_some() || table::legacy(s).is_some());
        if known {
            return Some(OurHandler {
                binary: Some(program.clone()),
                subcommand: subcommand.cloned(),
            });
        }
    }
    let normalized = command.replace('\\', "/");
    if normalized.contains("tools/amplihack/hooks/") && normalized.contains(".py") {
        return Some(OurHandler {
            binary: None,
            subcommand: None,
        });
    }
    None
}

/// Why a settings value cannot be edited safely. Each names the field and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    RootNotObject { found: &'static str },
    HooksNotObject { found: &'static str },
    EventNotArray { event: String, found: &'static str },
}

impl ShapeError {
    pub fn message(&self) -> String {
        match self {
            ShapeError::RootNotObject { found } => {
                format!(
                    "the top level is {found}, not an object: a settings file must be a JSON object such as {{\"hooks\": {{}}}}"
                )
            }
            ShapeError::HooksNotObject { found } => {
                format!(
                    "field `hooks` is {found}, not an object: make it an object keyed by event name, e.g. \"hooks\": {{\"PreToolUse\": []}}"
                )
            }
            ShapeError::EventNotArray { event, found } => {
                format!(
                    "field `hooks.{event}` is {found}, not an array: make it an array of matcher groups, e.g. \"{event}\": []"
                )
            }
        }
    }
}

pub use amplihack_protocol::event::json_kind as kind_of;

fn hooks_object(
    settings: &mut Value,
    create: bool,
) -> Result<Option<&mut Map<String, Value>>, ShapeError> {
    let found = kind_of(settings);
    let root = settings
        .as_object_mut()
        .ok_or(ShapeError::RootNotObject { found })?;
    if !root.contains_key("hooks") {
        if !create {
            return Ok(None);
        }
        root.insert("hooks".into(), Value::Object(Map::new()));
    }
    match root.get_mut("hooks") {
        Some(Value::Object(hooks)) => Ok(Some(hooks)),
        Some(other) => Err(ShapeError::HooksNotObject {
            found: kind_of(other),
        }),
        None => Ok(None),
    }
}

fn handler_is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| recognise(c).is_some())
}

/// Removes every amplihack handler but those `keep` names. A wrapper emptied by that goes; so does
/// an event key whose array we emptied when `drop_emptied_events`. The user's wrappers, and the
/// user's handlers in a wrapper shared with ours, stay in their order. Returns whether anything
/// was removed.
fn strip_ours(
    hooks: &mut Map<String, Value>,
    drop_emptied_events: impl Fn(&str) -> bool,
    keep: impl Fn(&str, &Value) -> bool,
) -> bool {
    let mut removed_any = false;
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        let before = groups.len();
        let mut removed_here = false;
        groups.retain_mut(|group| {
            let Some(Value::Array(handlers)) = group.get_mut("hooks") else {
                return true;
            };
            let count = handlers.len();
            handlers.retain(|h| !handler_is_ours(h) || keep(event, h));
            if handlers.len() == count {
                return true;
            }
            removed_here = true;
            !handlers.is_empty()
        });
        removed_any |= removed_here;
        if removed_here && groups.is_empty() && before > 0 && drop_emptied_events(event) {
            emptied.push(event.clone());
        }
    }
    for event in emptied {
        hooks.remove(&event);
    }
    removed_any
}

fn wrapper(spec: &HookSpec, command: String, on_failure_block: bool) -> Value {
    let mut handler = Map::new();
    handler.insert("type".into(), json!("command"));
    handler.insert("command".into(), json!(command));
    if let Some(timeout) = spec.timeout {
        handler.insert("timeout".into(), json!(timeout));
    }
    if on_failure_block {
        handler.insert("onFailure".into(), json!("block"));
    }
    let mut group = Map::new();
    if let Some(matcher) = spec.matcher {
        group.insert("matcher".into(), json!(matcher));
    }
    group.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
    Value::Object(group)
}

/// Registers the canonical table: our wrappers first on each event, in canonical order, then the
/// user's, as they were. Where the host keys its hook trust by position (Codex), ours stay where
/// they were, or go after the user's, so that the user's entries keep their keys and their trust.
/// An event key that exists keeps its place; a new one is appended.
/// The entries keep the fail-closed state they have ([`failure_now`]).
pub fn install(settings: &mut Value, binary: &Path, host: Host) -> Result<(), ShapeError> {
    let raised = raised_now(settings);
    let failure = failure_now(settings);
    install_with(settings, binary, host, &raised, failure)
}

/// [`install`], fail-open or fail-closed as `failure` says.
pub fn install_failing(
    settings: &mut Value,
    binary: &Path,
    host: Host,
    failure: Failure,
) -> Result<(), ShapeError> {
    let raised = raised_now(settings);
    install_with(settings, binary, host, &raised, failure)
}

/// [`install`] with the rows `raised` names raised for the plugins' declared timeouts (and
/// every other row as the table registers it).
pub fn install_raised(
    settings: &mut Value,
    binary: &Path,
    host: Host,
    raised: &[(&'static str, u64)],
) -> Result<(), ShapeError> {
    let failure = failure_now(settings);
    install_with(settings, binary, host, raised, failure)
}

/// [`install_raised`] under `failure`.
pub fn install_with(
    settings: &mut Value,
    binary: &Path,
    host: Host,
    raised: &[(&'static str, u64)],
    failure: Failure,
) -> Result<(), ShapeError> {
    let hooks =
        hooks_object(settings, true)?.ok_or(ShapeError::HooksNotObject { found: "missing" })?;
    let canonical = canonical_raised(host, raised);
    for spec in &canonical {
        if let Some(value) = hooks.get(spec.event).filter(|v| !v.is_array()) {
            return Err(ShapeError::EventNotArray {
                event: spec.event.into(),
                found: kind_of(value),
            });
        }
    }
    // Events we no longer register (legacy SessionEnd, ...) go when only ours were in them. The
    // entries for events only the user's plugins need are [`crate::plugin_events`]' to keep.
    let plugin_event = |event: &str, handler: &Value| {
        crate::plugin_events::is_plugin_event_entry_in(host, event, handler)
    };
    let by_position = hosts::dialect(host).trust_by_position();
    // Where our first wrapper is on each event (its position survives the strip below: every
    // wrapper before it is the user's).
    let ours_at: Vec<(String, usize)> = hooks
        .iter()
        .filter_map(|(event, groups)| {
            let at = groups.as_array()?.iter().position(|group| {
                group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .is_some_and(|handlers| handlers.iter().any(handler_is_ours))
            })?;
            Some((event.clone(), at))
        })
        .collect();
    strip_ours(
        hooks,
        |event| !canonical.iter().any(|s| s.event == event),
        plugin_event,
    );
    let mut events: Vec<&str> = canonical.iter().map(|s| s.event).collect();
    events.dedup();
    for event in events {
        let ours: Vec<Value> = canonical
            .iter()
            .filter(|s| s.event == event)
            .map(|s| {
                let block = closes(s, host, failure)
                    && hosts::fail_closed_switch(host)
                        == Some(hosts::FailClosedSwitch::OnFailureBlock);
                wrapper(s, command_failing(binary, s, host, failure), block)
            })
            .collect();
        match hooks.get_mut(event) {
            Some(Value::Array(groups)) if by_position => {
                let at = ours_at
                    .iter()
                    .find(|(e, _)| e == event)
                    .map_or(groups.len(), |(_, at)| (*at).min(groups.len()));
                groups.splice(at..at, ours);
            }
            Some(Value::Array(groups)) => {
                groups.splice(0..0, ours);
            }
            _ => {
                hooks.insert(event.to_string(), Value::Array(ours));
            }
        }
    }
    Ok(())
}

/// Removes exactly amplihack's entries and the wrappers and event keys that became empty because
/// of that. (`hooks` itself stays: whether it was there before is the installer's record.)
/// Returns whether anything changed.
pub fn uninstall(settings: &mut Value) -> Result<bool, ShapeError> {
    uninstall_keeping(settings, &[])
}

/// [`uninstall`], but the event keys in `user_empty` stay even when emptied: they held an empty
/// array before install added to them (the user's `"Stop": []`, see [`empty_events`]).
pub fn uninstall_keeping(settings: &mut Value, user_empty: &[String]) -> Result<bool, ShapeError> {
    let Some(hooks) = hooks_object(settings, false)? else {
        return Ok(false);
    };
    Ok(strip_ours(
        hooks,
        |event| !user_empty.iter().any(|e| e == event),
        |_, _| false,
    ))
}

/// The event keys of a settings value that hold an empty array: the user's own, which an
/// install then uninstall must give back (record them before install adds to them).
pub fn empty_events(settings: &Value) -> Vec<String> {
    settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.as_array().is_some_and(Vec::is_empty))
        .map(|(k, _)| k.clone())
        .collect()
}

/// Every amplihack handler's command in a settings value, with its event and matcher.
fn find_ours_with_commands(settings: &Value) -> Vec<(String, Option<String>, String)> {
    let mut found = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in hooks {
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            for handler in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(command) = handler.get("command").and_then(Value::as_str)
                    && recognise(command).is_some()
                {
                    found.push((event.clone(), matcher.clone(), command.to_string()));
                }
            }
        }
    }
    found
}

/// Every amplihack handler in a settings value, with its event and matcher, in file order.
pub fn find_ours(settings: &Value) -> Vec<(String, Option<String>, OurHandler)> {
    let mut found = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in hooks {
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            for handler in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(ours) = handler
                    .get("command")
                    .and_then(Value::as_str)
                    .and_then(recognise)
                {
                    found.push((event.clone(), matcher.clone(), ours));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn quoting_only_when_needed_and_reversible() {
        for path in [
            "/home/u/.local/bin/amplihack-hooks",
            "/home/a user/bin/amplihack-hooks",
            "/x/$weird`\"\\/amplihack-hooks",
            "/o'brien/amplihack-hooks",
        ] {
            let command = command_for(
                &PathBuf::from(path),
                &canonical(Host::ClaudeCode)[0],
                Host::ClaudeCode,
            );
            assert_eq!(
                leading_words(&command, 3),
                ["exec", path, "session-start"],
                "{command}"
            );
            if !path.contains(' ') && !path.contains('$') && !path.contains('\'') {
                assert!(!command.starts_with("exec \""), "{command}");
            }
            let ours = recognise(&command).expect("ours");
            assert_eq!(ours.binary.as_deref(), Some(path), "{command}");
        }
    }

    /// Copilot denies the tool when a hook fails: its commands exit 0, printing nothing, when the
    /// binary is gone, and are still recognised as amplihack's.
    #[test]
    fn copilot_commands_survive_a_missing_binary() {
        let dir = std::env::temp_dir().join(format!("amplihack-guard-{}", std::process::id()));
        for path in [
            dir.join("gone/amplihack-hooks"),
            dir.join("a b/amplihack-hooks"),
        ] {
            for spec in canonical(Host::Copilot) {
                let command = command_for(&path, &spec, Host::Copilot);
                let ours = recognise(&command).expect("ours");
                assert_eq!(ours.binary.as_deref(), path.to_str(), "{command}");
                assert_eq!(ours.subcommand.as_deref(), Some(spec.subcommand));
                let run = std::process::Command::new("sh")
                    .args(["-c", &command])
                    .stdin(std::process::Stdio::null())
                    .output()
                    .expect("sh");
                assert_eq!(run.status.code(), Some(0), "{command}");
                assert!(run.stdout.is_empty() && run.stderr.is_empty(), "{command}");
            }
        }
        let codex = command_for(
            Path::new("/p/amplihack-hooks"),
            &canonical(Host::Codex)[0],
            Host::Codex,
        );
        assert!(
            codex.starts_with("exec "),
            "only where hooks fail closed: {codex}"
        );
    }

    /// A fail-closed PreToolUse command, run by `sh` as the hosts run it, with the binary
    /// missing, crashing, failing, allowing and denying: the first three refuse with a reason
    /// naming the fix, the others pass the binary's own answer through.
    #[test]
    fn fail_closed_commands_refuse_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let binary = dir.path().join("it's here/amplihack-hooks");
        std::fs::create_dir_all(binary.parent().expect("parent")).expect("mkdir");
        let allow = r#"{"continue":true}"#;
        let deny = r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}"#;
        let path = binary.to_string_lossy().into_owned();
        let missing = amplihack_protocol::command::missing_binary_reason(&path);
        let failed = amplihack_protocol::command::failed_binary_reason(&path);
        // (the binary's script, None: no binary; the reason refused with, None: its own answer)
        let cases: &[(Option<&str>, Option<&str>, &str)] = &[
            (None, Some(&missing), ""),
            (Some("kill -SEGV $$"), Some(&failed), ""),
            (Some("exit 3"), Some(&failed), ""),
            (Some(&format!("echo '{allow}'")), None, allow),
            (Some(&format!("echo '{deny}'")), None, deny),
        ];
        for host in [Host::ClaudeCode, Host::Copilot] {
            let spec = canonical(host)
                .into_iter()
                .find(|s| s.subcommand == FAIL_CLOSED_ROW)
                .expect("pre-tool-use row");
            let command = command_failing(&binary, &spec, host, Failure::Closed);
            assert_eq!(
                recognise(&command).and_then(|o| o.subcommand).as_deref(),
                Some(FAIL_CLOSED_ROW),
                "{command}"
            );
            for (script, reason, own) in cases {
                let _ = std::fs::remove_file(&binary);
                if let Some(script) = script {
                    std::fs::write(&binary, format!("#!/bin/sh\ncat >/dev/null\n{script}\n"))
                        .expect("write");
                    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755))
                        .expect("chmod");
                }
                let run = std::process::Command::new("sh")
                    .args(["-c", &command])
                    .stdin(std::process::Stdio::null())
                    .output()
                    .expect("sh");
                let out = String::from_utf8_lossy(&run.stdout);
                assert_eq!(run.status.code(), Some(0), "{host:?} {script:?}: {command}");
                match reason {
                    Some(reason) => {
                        let reply: Value = serde_json::from_str(&out).expect("a JSON deny");
                        let specific = &reply["hookSpecificOutput"];
                        assert_eq!(specific["permissionDecision"], "deny", "{out}");
                        assert_eq!(specific["permissionDecisionReason"], *reason, "{out}");
                    }
                    None => assert_eq!(out.trim(), *own, "{host:?} {script:?}"),
                }
            }
        }
    }

    /// Fail-closed is the PreToolUse entry's alone, in the hosts with a switch; a re-install or
    /// a repair keeps it, `Open` undoes it, and uninstall takes the entries out as ever.
    #[test]
    fn fail_closed_round_trips() {
        let binary = PathBuf::from("/home/a user/bin/amplihack-hooks");
        for host in Host::ALL {
            let mut settings = json!({});
            install_failing(&mut settings, &binary, host, Failure::Closed).expect("installable");
            let has_switch = hosts::fail_closed_switch(host).is_some();
            let closed = failure_now(&settings) == Failure::Closed;
            assert_eq!(
                closed,
                has_switch && !canonical(host).is_empty(),
                "{host:?}"
            );
            for (event, _, command) in find_ours_with_commands(&settings) {
                let guarded = amplihack_protocol::command::has_refusing_guard(&command);
                assert_eq!(
                    guarded,
                    has_switch
                        && recognise(&command).and_then(|o| o.subcommand).as_deref()
                            == Some(FAIL_CLOSED_ROW),
                    "{host:?} {event}: {command}"
                );
            }
            let blocks = settings["hooks"]
                .as_object()
                .into_iter()
                .flatten()
                .flat_map(|(event, groups)| {
                    groups
                        .as_array()
                        .into_iter()
                        .flatten()
                        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
                        .filter(|h| h["onFailure"] == "block")
                        .map(move |_| event.clone())
                })
                .collect::<Vec<_>>();
            let want: Vec<String> = match host {
                Host::ClaudeCode => vec!["PreToolUse".into()],
                _ => Vec::new(),
            };
            assert_eq!(blocks, want, "{host:?}");
            let once = settings.clone();
            install(&mut settings, &binary, host).expect("installable");
            assert_eq!(settings, once, "{host:?}: a re-install keeps fail-closed");
            install_failing(&mut settings, &binary, host, Failure::Open).expect("installable");
            let mut open = json!({});
            install(&mut open, &binary, host).expect("installable");
            assert_eq!(settings, open, "{host:?}: Open undoes it");
            install_failing(&mut settings, &binary, host, Failure::Closed).expect("installable");
            uninstall(&mut settings).expect("uninstallable");
            assert_eq!(
                settings["hooks"].as_object().map_or(0, |h| h.len()),
                0,
                "{host:?}: {settings:#}"
            );
        }
    }

    /// A raised row's command says its seconds to the binary, stays amplihack's (same
    /// subcommand) in every host, and survives a re-install or a repair.
    #[test]
    fn raised_rows_round_trip_in_every_host() {
        let binary = PathBuf::from("/home/a user/bin/amplihack-hooks");
        let declared = vec![
            (EventName::SessionStart, 30.0),
            (EventName::SessionEnd, 2.0),
        ];
        for host in Host::ALL {
            let raised = raised_for(host, &declared);
            for spec in canonical_raised(host, &raised) {
                let command = command_for(&binary, &spec, host);
                let ours = recognise(&command).expect("ours");
                assert_eq!(
                    ours.subcommand.as_deref(),
                    Some(spec.subcommand),
                    "{command}"
                );
                assert_eq!(raised_in(&command), spec.raised, "{command}");
            }
            // A bridged host registers nothing; Vibe has no SessionStart to raise.
            if hosts::bridged(host) || !hosts::dialect(host).delivers(&EventName::SessionStart) {
                continue;
            }
            let start = raised.iter().find(|(s, _)| *s == "session-start");
            assert_eq!(start.map(|(_, secs)| *secs), Some(33), "{host:?}");
            let end = raised
                .iter()
                .find(|(s, _)| *s == "session-end")
                .map(|r| r.1);
            let want_end = match host {
                Host::Codex => 3,
                _ => 5,
            };
            if hosts::dialect(host).delivers(&EventName::SessionEnd) {
                assert_eq!(end, Some(want_end), "{host:?}");
            }
            let mut settings = json!({});
            install_raised(&mut settings, &binary, host, &raised).expect("installable");
            let once = settings.clone();
            install(&mut settings, &binary, host).expect("installable");
            assert_eq!(
                settings, once,
                "{host:?}: a re-install keeps the raised rows"
            );
            install_raised(&mut settings, &binary, host, &[]).expect("installable");
            let mut plain = json!({});
            install(&mut plain, &binary, host).expect("installable");
            assert_eq!(settings, plain, "{host:?}: lowered again");
        }
    }

    #[test]
    fn recognition_table() {
        let ours = [
            "/home/u/.local/bin/amplihack-hooks pre-tool-use",
            "exec \"/home/a user/.local/bin/amplihack-hooks\" session-start",
            "\"/home/a user/.local/bin/amplihack-hooks\" session-start",
            "'/opt/x/amplihack-hooks' stop",
            "amplihack-hooks user-prompt-submit",
            "/old/target/debug/amplihack-hooks session-stop-event",
            "/p/amplihack-hooks pre-tool-use --host amplifier",
            "/p/amplihack-hooks --host amplifier pre-tool-use",
            "AMPLIHACK_LOG_DIR=/tmp/x /p/amplihack-hooks stop",
            "nice -n 10 /p/amplihack-hooks post-tool-use",
            "env -u FOO BAR=1 \"/a b/amplihack-hooks\" pre-tool-use",
            "timeout -k 5 30 /p/amplihack-hooks stop",
            "exec /usr/bin/env /p/amplihack-hooks session-start",
            "[ -x /p/amplihack-hooks ] || exit 0; exec /p/amplihack-hooks stop --host copilot",
            "[ -x \"/a b/amplihack-hooks\" ] || exit 0; exec \"/a b/amplihack-hooks\" pre-tool-use --host copilot",
            "python3 ~/.claude/tools/amplihack/hooks/pre_tool_use.py",
            "$CLAUDE_PROJECT_DIR/.claude/tools/amplihack/hooks/session_start.py",
        ];
        for command in ours {
            assert!(recognise(command).is_some(), "should be ours: {command}");
        }
        let theirs = [
            "/usr/bin/amplihack-hooks-fork pre-tool-use",
            "/x/amplihack-hooks frobnicate",
            "echo amplihack-hooks pre-tool-use",
            "nice my-linter amplihack-hooks stop",
            "my-linter --fix",
            "python3 tools/other/hooks/x.py",
            "[ -x /p/amplihack-hooks ] || exit 0; exec /p/my-linter stop",
        ];
        for command in theirs {
            assert!(
                recognise(command).is_none(),
                "should be the user's: {command}"
            );
        }
    }
}
