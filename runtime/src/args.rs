//! `amplihack-hooks`' own arguments: a subcommand from the hook table, `--host`, `--standby`, and
//! the informational flags (`--help`, `--version`, `--table`). No parsing framework: this runs on
//! every tool call.

use std::ffi::OsString;

use amplihack_protocol::table::{self, HOOKS};
use amplihack_protocol::{Hook, Host, VERSION};

pub(crate) struct Invocation {
    pub subcommand: &'static Hook,
    pub host: Option<Host>,
    /// `--standby`: started ahead of its event (by amplihack's Amplifier module).
    pub standby: bool,
    /// `--timeout N`: the seconds the host was told for this registration, raised for a
    /// plugin's declared timeout; the deadline follows ([`Hook::deadline_under`]).
    pub registered_secs: Option<u64>,
}

pub(crate) enum Command {
    Run(Invocation),
    /// A predecessor's subcommand that did nothing (`precommit-prefs`): drain stdin, answer
    /// nothing, exit 0.
    Retired,
    Help,
    Version,
    Table,
}

pub fn usage() -> String {
    let mut text = format!(
        "amplihack-hooks {VERSION}: the hook binary that every agent calls on every event (Claude Code, Amplifier, Codex, Copilot CLI, Qwen Code, Droid, Gemini CLI, opencode, Pi and Cline CLI).\n\n\
         Usage: amplihack-hooks [--host claude|amplifier] <SUBCOMMAND> < event.json\n\n\
         Reads one JSON event on stdin and answers in the calling host's dialect.\n\
         Exit 0: handled (or amplihack failed and let the event through); 1: invalid input.\n\n\
         Subcommands:\n"
    );
    for hook in HOOKS {
        text.push_str(&format!("  {:<34} {}\n", hook.subcommand, hook.about));
    }
    text.push_str(
        "\nOptions:\n  --host claude|amplifier   the calling host (default: detected; Claude Code unless AMPLIFIER_* is set)\n  -h, --help                this text\n  -V, --version             the version\n  --table                   the hook table as JSON (subcommand, event, deadline, registered timeout)\n  --timeout N               the seconds the host allows this registration (written by the installer when a plugin declares more); the deadline follows\n  --standby                 started ahead of the event: wait for it; the deadline counts from its arrival, and a stdin closed empty exits 0 quietly\n",
    );
    text
}

/// The host `--host` names, read leniently (for the exit code of arguments that did not parse).
pub(crate) fn named_host(args: &[OsString]) -> Option<Host> {
    let args: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
    args.iter().enumerate().find_map(|(i, arg)| {
        let value = match arg.strip_prefix("--host=") {
            Some(value) => value,
            None if arg == "--host" => args.get(i + 1)?,
            None => return None,
        };
        Host::from_flag(value)
    })
}

/// `--host`'s value; one it does not know names every supported host.
fn host_flag(value: &str) -> Result<Host, String> {
    Host::from_flag(value).ok_or_else(|| {
        format!(
            "unknown --host `{value}`: amplihack supports {}",
            Host::flag_values()
        )
    })
}

pub(crate) fn parse_args(args: &[OsString]) -> Result<Command, String> {
    let mut host = None;
    let mut subcommand = None;
    let mut standby = false;
    let mut registered_secs = None;
    let mut iter = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = iter.next() {
        match arg.as_ref() {
            "-h" | "--help" | "help" => return Ok(Command::Help),
            "--standby" => standby = true,
            "-V" | "--version" => return Ok(Command::Version),
            "--table" => return Ok(Command::Table),
            "--host" => {
                let value = iter
                    .next()
                    .ok_or_else(|| format!("--host needs a value: {}", Host::flag_values()))?;
                host = Some(host_flag(&value)?);
            }
            table::TIMEOUT_FLAG => {
                let value = iter.next().unwrap_or_default();
                registered_secs = Some(value.parse::<u64>().map_err(|_| {
                    format!("{} needs whole seconds, not `{value}`", table::TIMEOUT_FLAG)
                })?);
            }
            other if other.starts_with("--host=") => {
                host = Some(host_flag(&other["--host=".len()..])?);
            }
            other if subcommand.is_none() && !other.starts_with('-') => {
                subcommand = Some(match (table::find(other), table::legacy(other)) {
                    (Some(hook), _) | (None, Some(Some(hook))) => hook,
                    (None, Some(None)) => return Ok(Command::Retired),
                    (None, None) => {
                        let hint = Hook::suggest(other)
                            .map(|s| format!("; did you mean `{s}`?"))
                            .unwrap_or_default();
                        return Err(format!(
                            "unknown subcommand `{other}`{hint} (run `amplihack-hooks --help` for the list)"
                        ));
                    }
                });
            }
            other => {
                return Err(format!(
                    "unexpected argument `{other}` (run `amplihack-hooks --help`)"
                ));
            }
        }
    }
    let subcommand =
        subcommand.ok_or("missing subcommand (run `amplihack-hooks --help` for the list)")?;
    Ok(Command::Run(Invocation {
        subcommand,
        host,
        standby,
        registered_secs,
    }))
}

/// The hook table as JSON, for tools that run the binary (the Amplifier module reads deadlines).
pub(crate) fn table_json() -> String {
    let rows: Vec<serde_json::Value> = HOOKS
        .iter()
        .map(|h| {
            serde_json::json!({
                "subcommand": h.subcommand,
                "event": h.event_name(),
                "deadline_ms": h.deadline.as_millis() as u64,
                "timeout_secs": h.registered.and_then(|r| r.timeout_secs),
                "matcher": h.registered.and_then(|r| r.matcher),
                "builtins": h.builtins.iter().map(|b| b.name()).collect::<Vec<_>>(),
                "forwards": h.forwards,
            })
        })
        .collect();
    format!("{}\n", serde_json::Value::Array(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        parse_args(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn the_named_host_even_when_the_arguments_are_wrong() {
        let named =
            |args: &[&str]| named_host(&args.iter().map(OsString::from).collect::<Vec<_>>());
        assert_eq!(
            named(&["frobnicate", "--host", "copilot"]),
            Some(Host::Copilot)
        );
        assert_eq!(
            named(&["--host=copilot", "stop", "extra"]),
            Some(Host::Copilot)
        );
        assert_eq!(named(&["stop"]), None);
        assert_eq!(named(&["stop", "--host"]), None);
    }

    #[test]
    fn a_subcommand_with_its_host_and_standby() {
        let Ok(Command::Run(run)) = parse(&["--host=amplifier", "--standby", "pre-tool-use"])
        else {
            panic!("a run");
        };
        assert_eq!(run.subcommand.subcommand, "pre-tool-use");
        assert_eq!(run.host, Some(Host::Amplifier));
        assert!(run.standby);
        let Ok(Command::Run(run)) = parse(&["--host", "claude", "stop"]) else {
            panic!("a run");
        };
        assert_eq!(run.host, Some(Host::ClaudeCode));
        assert!(!run.standby);
    }

    #[test]
    fn mistakes_say_what_to_do() {
        let err = |args: &[&str]| parse(args).err().unwrap_or_default();
        assert!(err(&[]).contains("missing subcommand"));
        assert!(err(&["--host"]).contains("claude, amplifier, codex"));
        assert_eq!(
            err(&["--host", "cursor", "pre-tool-use"]),
            "unknown --host `cursor`: amplihack supports claude, amplifier, codex, copilot, qwen, droid, gemini, opencode, vibe, kimi, pi, cline"
        );
        assert!(err(&["--host=vim", "stop"]).contains("unknown --host `vim`"));
        assert!(err(&["no-such-row"]).contains("unknown subcommand `no-such-row`"));
        assert!(err(&["stop", "extra"]).contains("unexpected argument `extra`"));
        assert!(matches!(parse(&["-V"]), Ok(Command::Version)));
        assert!(matches!(parse(&["--table"]), Ok(Command::Table)));
        assert!(matches!(parse(&["help"]), Ok(Command::Help)));
    }

    #[test]
    fn the_table_is_one_json_row_per_subcommand() {
        let rows: serde_json::Value = serde_json::from_str(&table_json()).expect("json");
        assert_eq!(rows.as_array().map(Vec::len), Some(HOOKS.len()));
    }
}
