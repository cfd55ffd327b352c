//! Shell form: `{"type": "command", "command": "<shell string>"}`, run as `/bin/sh -c <command>`.
//!
//! Claude Code 2.1.328 on Linux runs it with `/bin/sh` whatever `shell` says (`"bash"` included:
//! observed, `$BASH_VERSION` is empty), and does not substitute placeholders in it: the shell
//! expands `$CLAUDE_PLUGIN_ROOT` and the others from the environment, so `'${CLAUDE_PLUGIN_ROOT}'`
//! stays literal and `${CLAUDE_PLUGIN_ROOT:-.}` works. amplihack exports them as well and, outside
//! single quotes, substitutes them escaped for their quoting context: the same result, except that
//! an unquoted path with a space survives (where Claude Code breaks a plugin, it is not copied).

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, optional_string, placeholders, required_string};

#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub command: String,
}

impl Command {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Command, FieldError> {
        let command = required_string(handler, at, "command", "the shell command to run")?;
        match optional_string(handler, at, "shell")?.as_deref() {
            None | Some("bash" | "sh" | "powershell") => {}
            Some(other) => {
                return Err((
                    format!("{at}.shell"),
                    format!("`{other}` is not a shell Claude Code knows"),
                    "use \"bash\" or \"powershell\", or leave it out".into(),
                ));
            }
        }
        Ok(Command { command })
    }
}

impl HandlerKind for Command {
    fn type_name(&self) -> &'static str {
        "command"
    }

    fn label(&self) -> &str {
        &self.command
    }

    fn program(&self, context: &Context<'_>) -> Result<Vec<String>, String> {
        let values = placeholders(context);
        let pairs: Vec<(&str, &str)> = values.iter().map(|(p, v)| (*p, v.as_str())).collect();
        Ok(vec![
            "/bin/sh".into(),
            "-c".into(),
            substitute_quoted(&self.command, &pairs),
        ])
    }
}

/// Replaces each placeholder with its value escaped for the `sh` quoting context it appears in, so
/// `${CLAUDE_PLUGIN_ROOT}/x.sh` and `"${CLAUDE_PLUGIN_ROOT}/x.sh"` both survive a path with spaces
/// or quotes. Inside single quotes nothing is replaced (the shell keeps the text literal there, as
/// under Claude Code), and `\${...}` stays escaped.
pub fn substitute_quoted(command: &str, placeholders: &[(&str, &str)]) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut out = String::with_capacity(command.len());
    let mut quote = Quote::None;
    let mut rest = command;
    'scan: while let Some(c) = rest.chars().next() {
        if quote != Quote::Single {
            for (placeholder, value) in placeholders {
                if let Some(after) = rest.strip_prefix(placeholder) {
                    for v in value.chars() {
                        let special = match quote {
                            Quote::Double => matches!(v, '"' | '\\' | '$' | '`'),
                            _ => !(v.is_ascii_alphanumeric() || "/._-+,:@%=".contains(v)),
                        };
                        if special {
                            out.push('\\');
                        }
                        out.push(v);
                    }
                    rest = after;
                    continue 'scan;
                }
            }
        }
        match (quote, c) {
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::Single, '\'') => quote = Quote::None,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Double, '"') => quote = Quote::None,
            (Quote::None | Quote::Double, '\\') => {
                // An escaped character is copied as is, with its backslash.
                out.push(c);
                rest = &rest[1..];
                if let Some(next) = rest.chars().next() {
                    out.push(next);
                    rest = &rest[next.len_utf8()..];
                }
                continue;
            }
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::substitute_quoted;

    /// Run by `sh` with `CLAUDE_PLUGIN_ROOT` exported too: every quoting form prints the path, and
    /// the single-quoted one reaches an inner shell literally and is expanded there.
    #[test]
    fn placeholders_survive_every_quoting_context() {
        let path = "/home/a user/it's \"here\"/$x";
        for command in [
            "printf '%s\\n' ${CLAUDE_PLUGIN_ROOT}/run.py",
            "printf '%s\\n' \"${CLAUDE_PLUGIN_ROOT}/run.py\"",
            "sh -c 'printf \"%s\\n\" \"${CLAUDE_PLUGIN_ROOT}/run.py\"'",
            "printf '%s\\n' \"${CLAUDE_PLUGIN_ROOT:-.}/run.py\"",
        ] {
            let substituted = substitute_quoted(command, &[("${CLAUDE_PLUGIN_ROOT}", path)]);
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(&substituted)
                .env("CLAUDE_PLUGIN_ROOT", path)
                .output()
                .expect("sh");
            let printed = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                printed.trim_end(),
                format!("{path}/run.py"),
                "{command} → {substituted}"
            );
        }
        // Literal where the shell keeps it literal.
        for command in [
            "echo '${CLAUDE_PLUGIN_ROOT}'",
            "echo \\${CLAUDE_PLUGIN_ROOT}",
        ] {
            assert_eq!(
                substitute_quoted(command, &[("${CLAUDE_PLUGIN_ROOT}", path)]),
                command
            );
        }
    }
}
