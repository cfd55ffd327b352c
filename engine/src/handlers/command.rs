//! Shell form: `{"type": "command", "command": "<shell string>"}`, run as `/bin/sh -c <command>`.
//!
//! Claude Code 2.1.328 on Linux runs it with `/bin/sh` whatever `shell` says (`"bash"` included:
//! observed, `$BASH_VERSION` is empty), and does not substitute placeholders in it: the shell
//! expands `$CLAUDE_PLUGIN_ROOT` and the others from the environment, so `'${CLAUDE_PLUGIN_ROOT}'`
//! stays literal and `${CLAUDE_PLUGIN_ROOT:-.}` works. amplihack exports them as well and leaves
//! the expansion to the shell too: no value is ever spliced into the text `sh` parses, so a
//! project directory named ``q`touch$IFS.X`q`` is only ever a value, and inside `"$(…)"`, backticks
//! and heredocs the value arrives exactly as under Claude Code. One difference is kept on purpose:
//! an unquoted placeholder at the command's top level becomes the quoted reference
//! `"${CLAUDE_PLUGIN_ROOT}"` ([`quote_references`]), so an unquoted path with a space survives
//! (where Claude Code breaks a plugin, it is not copied). A command that is only words runs
//! without a shell, the values in its argv ([`simple_words`]).

use std::cell::Cell;

use amplihack_protocol::command::is_plain;
use amplihack_protocol::shell;
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

impl Command {
    /// The command as it runs, placeholders substituted: what the audit log shows, and what two
    /// handlers must share to run once.
    pub fn shown(&self, context: &Context<'_>) -> String {
        let values = placeholders(context);
        let pairs: Vec<(&str, &str)> = values.iter().map(|(p, v)| (*p, v.as_str())).collect();
        substitute_quoted(&self.command, &pairs)
    }

    /// The command as Claude Code 2.1.328 names it to the model when it blocks (exit 2):
    /// `${CLAUDE_PLUGIN_ROOT}` and `$CLAUDE_PLUGIN_ROOT` (a whole word) replaced by the plugin's
    /// directory as they are, nothing quoted, nothing else substituted.
    pub fn as_claude_code_shows(&self, plugin_root: &str) -> String {
        let braced = self.command.replace("${CLAUDE_PLUGIN_ROOT}", plugin_root);
        let bare = "$CLAUDE_PLUGIN_ROOT";
        let mut out = String::with_capacity(braced.len());
        let mut rest = braced.as_str();
        while let Some(at) = rest.find(bare) {
            let after = &rest[at + bare.len()..];
            let word_goes_on = after
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            out.push_str(&rest[..at]);
            out.push_str(if word_goes_on { bare } else { plugin_root });
            rest = after;
        }
        out.push_str(rest);
        out
    }
}

impl HandlerKind for Command {
    fn type_name(&self) -> &'static str {
        "command"
    }

    /// A command always runs: as words, or through `sh -c`.
    fn never_runs(&self) -> Option<String> {
        None
    }

    fn label(&self) -> &str {
        &self.command
    }

    /// Its placeholders filled in as it runs, and as Claude Code shows it (the root filled in).
    fn names(&self, context: &Context<'_>, _written: &str) -> (String, String) {
        (
            self.shown(context),
            self.as_claude_code_shows(&context.plugin_root.to_string_lossy()),
        )
    }

    fn program(&self, context: &Context<'_>) -> Result<Vec<String>, String> {
        let values = placeholders(context);
        let pairs: Vec<(&str, &str)> = values.iter().map(|(p, v)| (*p, v.as_str())).collect();
        if let Some(words) = simple_words(&self.command, &pairs) {
            return Ok(words);
        }
        let names: Vec<&str> = pairs.iter().map(|(p, _)| *p).collect();
        Ok(vec![
            "/bin/sh".into(),
            "-c".into(),
            quote_references(&self.command, &names),
        ])
    }
}

/// Words the shell runs as they are: dash's builtins and keywords, which exist only inside a shell.
const SHELL_ONLY: &[&str] = &[
    "!", ".", ":", "[", "{", "}", "alias", "bg", "break", "case", "cd", "command", "continue",
    "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fc",
    "fg", "fi", "for", "getopts", "hash", "if", "in", "jobs", "kill", "local", "printf", "pwd",
    "read", "readonly", "return", "set", "shift", "test", "then", "times", "trap", "true", "type",
    "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// Where a scan of `sh` text stands: outside quotes, inside single or inside double quotes. The
/// two rewriters below follow quoting to edit the text in place (a lexer, which removes quotes,
/// cannot give the text back); splitting words is the shared lexer's ([`simple_words`]).
#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Copies `c`, the first character of `rest`, to `out` (with the character it escapes, after a
/// backslash outside single quotes), follows the quoting it opens or closes, and returns what
/// comes after: the step [`quote_references`] and [`substitute_quoted`] share.
fn copy_one<'a>(quote: &mut Quote, c: char, rest: &'a str, out: &mut String) -> &'a str {
    match (*quote, c) {
        (Quote::None, '\'') => *quote = Quote::Single,
        (Quote::Single, '\'') => *quote = Quote::None,
        (Quote::None, '"') => *quote = Quote::Double,
        (Quote::Double, '"') => *quote = Quote::None,
        (Quote::None | Quote::Double, '\\') => {
            out.push(c);
            let rest = &rest[1..];
            return match rest.chars().next() {
                Some(next) => {
                    out.push(next);
                    &rest[next.len_utf8()..]
                }
                None => rest,
            };
        }
        _ => {}
    }
    out.push(c);
    &rest[c.len_utf8()..]
}

/// The value of the placeholder `rest` starts with, and the text after it.
fn placeholder_at<'r, 'v>(
    rest: &'r str,
    placeholders: &[(&str, &'v str)],
) -> Option<(&'v str, &'r str)> {
    placeholders.iter().find_map(|(placeholder, value)| {
        rest.strip_prefix(placeholder).map(|after| (*value, after))
    })
}

/// A command that is only words (`python3 "${CLAUDE_PLUGIN_ROOT}/hooks/check.py" --strict`): read
/// with the Bash guard's lexer ([`shell::parse`]), it is one simple command of plain words, quotes
/// and placeholders, and uses nothing else a shell does (no redirection, pipe, separator, other
/// variable, `~`, glob, brace, escape, comment, substitution, assignment, builtin). It runs as the
/// shell would run it, without the shell: one process less per handler. Anything else, or a
/// program file a shell would have to read itself (no `#!`, not a binary), `None`: `sh -c` runs
/// it.
pub fn simple_words(command: &str, placeholders: &[(&str, &str)]) -> Option<Vec<String>> {
    // The lexer reads a carriage return as a blank, as the guard must; `sh` keeps it in the word.
    if command.contains('\r') {
        return None;
    }
    // Placeholders are filled in as `sh` fills in their exported variables: quoted as
    // `sh -c` runs them ([`quote_references`]), so a value is one word.
    let names: Vec<&str> = placeholders.iter().map(|(p, _)| *p).collect();
    let quoted = quote_references(command, &names);
    let other_variable = Cell::new(false);
    let vars = |name: &str| {
        let value = placeholders
            .iter()
            .find(|(p, _)| p.strip_prefix("${").and_then(|p| p.strip_suffix('}')) == Some(name))
            .map(|(_, value)| value.to_string());
        other_variable.set(other_variable.get() || value.is_none());
        value
    };
    let parsed = shell::parse(&quoted, &vars);
    let [simple] = parsed.commands.as_slice() else {
        return None;
    };
    if other_variable.get()
        || !parsed.syntax.is_empty()
        || !parsed.substitutions.is_empty()
        || parsed.too_deep
        || simple.words.iter().any(|w| w.glob || w.opaque)
    {
        return None;
    }
    let words: Vec<String> = simple.words.iter().map(|w| w.text.clone()).collect();
    let program = words.first()?;
    if program.is_empty() || program.contains('=') || SHELL_ONLY.contains(&program.as_str()) {
        return None;
    }
    // A relative path is the handler's directory's, not ours: left to the shell.
    if program.contains('/')
        && (!program.starts_with('/') || !runs_without_a_shell(std::path::Path::new(program)))
    {
        return None;
    }
    Some(words)
}

/// Whether the kernel can run the file itself: it starts with `#!` or is an ELF binary. A file
/// that cannot be read is left to the shell, which reports it as Claude Code's would.
fn runs_without_a_shell(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head.starts_with(b"#!") || head == *b"\x7fELF")
}

/// The command `sh -c` runs: each placeholder (`${CLAUDE_PROJECT_DIR}`…, exported with its value)
/// left for the shell to expand, never replaced by its value. Unquoted at the top level it becomes
/// `"${CLAUDE_PROJECT_DIR}"`, so a value with a space or a glob character stays one word, as
/// amplihack has always run it; inside double quotes it is already one word; inside single quotes
/// or after a backslash it is literal, as the shell keeps it. From the first backtick, `$(` or `<<`
/// on (a command substitution or a heredoc, whose text this scan does not follow), the rest is left
/// exactly as written: Claude Code's own behaviour.
pub fn quote_references(command: &str, placeholders: &[&str]) -> String {
    let mut out = String::with_capacity(command.len() + 8);
    let mut quote = Quote::None;
    let mut rest = command;
    'scan: while let Some(c) = rest.chars().next() {
        if quote == Quote::None {
            for placeholder in placeholders {
                if let Some(after) = rest.strip_prefix(placeholder) {
                    out.push('"');
                    out.push_str(placeholder);
                    out.push('"');
                    rest = after;
                    continue 'scan;
                }
            }
        }
        let nested = quote != Quote::Single
            && (c == '`'
                || rest.starts_with("$(")
                || (quote == Quote::None && rest.starts_with("<<")));
        if nested {
            out.push_str(rest);
            break;
        }
        rest = copy_one(&mut quote, c, rest, &mut out);
    }
    out
}

/// For display only (the audit log, and which handlers are the same): each placeholder replaced
/// by its value escaped for the `sh` quoting context it appears in. What runs is
/// [`quote_references`]'s text, which holds no value. So
/// `${CLAUDE_PLUGIN_ROOT}/x.sh` and `"${CLAUDE_PLUGIN_ROOT}/x.sh"` both survive a path with spaces
/// or quotes. Inside single quotes nothing is replaced (the shell keeps the text literal there, as
/// under Claude Code), and `\${...}` stays escaped.
pub fn substitute_quoted(command: &str, placeholders: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(command.len());
    let mut quote = Quote::None;
    let mut rest = command;
    while let Some(c) = rest.chars().next() {
        if quote != Quote::Single
            && let Some((value, after)) = placeholder_at(rest, placeholders)
        {
            for v in value.chars() {
                let special = match quote {
                    Quote::Double => matches!(v, '"' | '\\' | '$' | '`'),
                    _ => !is_plain(v),
                };
                if special {
                    out.push('\\');
                }
                out.push(v);
            }
            rest = after;
            continue;
        }
        rest = copy_one(&mut quote, c, rest, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Command, quote_references, simple_words, substitute_quoted};

    /// Only commands that are words run without the shell, and then exactly as the shell would
    /// run them.
    #[test]
    fn only_plain_words_skip_the_shell() {
        let root = "/plug in";
        let pairs = [("${CLAUDE_PLUGIN_ROOT}", root)];
        let cases: &[(&str, Option<&[&str]>)] = &[
            ("python3 x.py", Some(&["python3", "x.py"])),
            (
                "node \"${CLAUDE_PLUGIN_ROOT}/a.js\" --mode=strict 'two words'",
                Some(&["node", "/plug in/a.js", "--mode=strict", "two words"]),
            ),
            (
                "python3 ${CLAUDE_PLUGIN_ROOT}/x.py",
                Some(&["python3", "/plug in/x.py"]),
            ),
            ("uv run '$HOME'", Some(&["uv", "run", "$HOME"])),
            ("cat > /dev/null", None),
            ("a | b", None),
            ("a; b", None),
            ("a && b", None),
            ("echo hi", None),
            ("true", None),
            ("FOO=1 node a.js", None),
            ("node $HOME/a.js", None),
            ("node \"$HOME/a.js\"", None),
            ("node ~/a.js", None),
            ("node *.js", None),
            ("node a.js # note", None),
            ("node 'open", None),
            ("node \\x", None),
            ("/no/such/program arg", None),
            ("./hooks/check.sh arg", None),
            ("", None),
        ];
        for (command, expected) in cases {
            let got = simple_words(command, &pairs);
            let expected = expected.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(got, expected, "{command}");
        }
        // A program file: with `#!` it runs itself; without, only a shell can read it.
        let dir = tempfile::tempdir().expect("tempdir");
        let with = dir.path().join("with");
        let without = dir.path().join("without");
        std::fs::write(&with, "#!/bin/sh\ntrue\n").expect("write");
        std::fs::write(&without, "true\n").expect("write");
        assert!(simple_words(&format!("{} a", with.display()), &[]).is_some());
        assert!(simple_words(&format!("{} a", without.display()), &[]).is_none());
    }

    /// Whatever runs without the shell gets exactly the words `sh` would have passed: each
    /// command is run both ways, through a program that prints its arguments.
    #[test]
    fn words_run_without_a_shell_are_the_words_sh_passes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let args = dir.path().join("args");
        std::fs::write(&args, "#!/bin/sh\nprintf '%s\\0' \"$@\"\n").expect("write");
        std::fs::set_permissions(&args, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let root = "/plug in/it's \"x\"/$y";
        let tails = [
            "a 'b c' \"d e\" --f=g",
            "\"${CLAUDE_PLUGIN_ROOT}/h.py\" ${CLAUDE_PLUGIN_ROOT}/i '${CLAUDE_PLUGIN_ROOT}'",
            "a$ '!x' } x,y \"#\" a#b é",
            "'' \"\" a''b \"c\"'d'",
            "--x=${CLAUDE_PLUGIN_ROOT} \"pre${CLAUDE_PLUGIN_ROOT}post\"",
        ];
        for tail in tails {
            let command = format!("{} {tail}", args.display());
            let words = simple_words(&command, &[("${CLAUDE_PLUGIN_ROOT}", root)])
                .unwrap_or_else(|| panic!("runs without a shell: {command}"));
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(quote_references(&command, &["${CLAUDE_PLUGIN_ROOT}"]))
                .env(amplihack_env::CLAUDE_PLUGIN_ROOT, root)
                .output()
                .expect("sh");
            let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .split_terminator('\0')
                .map(str::to_string)
                .collect();
            assert_eq!(words[1..], printed[..], "{command}");
        }
    }

    /// Run by `sh` with `CLAUDE_PLUGIN_ROOT` exported too: every quoting form prints the path, and
    /// the single-quoted one reaches an inner shell literally and is expanded there.
    #[test]
    fn claude_code_shows_the_root_filled_in_and_nothing_else() {
        let cases = [
            (
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/check\" pre",
                "\"/p r/hooks/check\" pre",
            ),
            (
                "$CLAUDE_PLUGIN_ROOT/run.sh $CLAUDE_PLUGIN_ROOTS",
                "/p r/run.sh $CLAUDE_PLUGIN_ROOTS",
            ),
            (
                "python3 ${CLAUDE_PLUGIN_DATA}/x.py",
                "python3 ${CLAUDE_PLUGIN_DATA}/x.py",
            ),
            ("'${CLAUDE_PLUGIN_ROOT}' $CLAUDE_PLUGIN_ROOT", "'/p r' /p r"),
        ];
        for (command, want) in cases {
            let shown = Command {
                command: command.into(),
            }
            .as_claude_code_shows("/p r");
            assert_eq!(shown, want, "{command}");
        }
    }

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
                .env(amplihack_env::CLAUDE_PLUGIN_ROOT, path)
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

    /// Finding 15: what `sh -c` runs holds no value, only references the shell expands from the
    /// environment. Over every quoting context and hostile directory names: nothing a name holds
    /// ever runs; at the top level and in double quotes, inside `"$(…)"` and in heredocs, the value
    /// arrives exactly (no stray backslash, spaces kept); elsewhere the output is what plain `sh`
    /// gives with the variable exported (Claude Code's own behaviour).
    #[test]
    fn project_directory_names_never_run_in_any_quoting_context() {
        // (command, the value arrives exactly)
        let contexts: &[(&str, bool)] = &[
            ("printf '%s\\n' ${CLAUDE_PROJECT_DIR}", true),
            ("printf '%s\\n' ${CLAUDE_PROJECT_DIR}/x", true),
            ("printf '%s\\n' \"${CLAUDE_PROJECT_DIR}\"", true),
            (
                "printf '%s\\n' \"$(printf '%s' \"${CLAUDE_PROJECT_DIR}\")\"",
                true,
            ),
            (
                "printf '%s\\n' \"$(printf '%s' ${CLAUDE_PROJECT_DIR})\"",
                false,
            ),
            (
                "printf '%s\\n' \"`printf '%s' \"${CLAUDE_PROJECT_DIR}\"`\"",
                true,
            ),
            ("echo G:`echo ${CLAUDE_PROJECT_DIR}`", false),
            ("echo G:$(echo ${CLAUDE_PROJECT_DIR})", false),
            ("cat <<EOF\n${CLAUDE_PROJECT_DIR}\nEOF", true),
            ("cat <<'EOF'\n${CLAUDE_PROJECT_DIR}\nEOF", false),
            ("printf '%s\\n' '${CLAUDE_PROJECT_DIR}'", false),
            ("printf '%s\\n' \\${CLAUDE_PROJECT_DIR}", false),
            ("x=${CLAUDE_PROJECT_DIR}; printf '%s\\n' \"$x\"", true),
            ("printf '%s\\n' \"${CLAUDE_PROJECT_DIR:-.}\"", true),
            ("sh -c 'printf \"%s\\n\" \"${CLAUDE_PROJECT_DIR}\"'", true),
            (
                "case ${CLAUDE_PROJECT_DIR} in *) printf '%s\\n' \"${CLAUDE_PROJECT_DIR}\";; esac",
                true,
            ),
        ];
        let names = [
            "q`touch$IFS.INJECTED`q",
            "q$(touch .INJECTED)q",
            "My Project",
            "two  spaces\ttab",
            "it's \"quoted\" \\ back",
            "glob *",
        ];
        for name in names {
            let dir = tempfile::tempdir().expect("tempdir");
            let project = dir.path().join(name);
            std::fs::create_dir(&project).expect("project dir");
            let value = project.to_string_lossy().into_owned();
            for (command, exact) in contexts {
                let run = |text: &str| {
                    let out = std::process::Command::new("/bin/sh")
                        .arg("-c")
                        .arg(text)
                        .env(amplihack_env::CLAUDE_PROJECT_DIR, &value)
                        .current_dir(dir.path())
                        .output()
                        .expect("sh");
                    String::from_utf8_lossy(&out.stdout).into_owned()
                };
                let ours = quote_references(command, &["${CLAUDE_PROJECT_DIR}"]);
                assert!(
                    !ours.contains(name),
                    "{command}: a value in the text: {ours}"
                );
                let got = run(&ours);
                assert!(
                    !dir.path().join(".INJECTED").exists() && !project.join(".INJECTED").exists(),
                    "{name:?} {command}: injected"
                );
                let native = run(command);
                if *exact {
                    let first = got.lines().next().unwrap_or_default();
                    let want = if command.contains("/x") {
                        format!("{value}/x")
                    } else {
                        value.clone()
                    };
                    assert_eq!(first, want, "{name:?} {command} → {ours}");
                } else {
                    assert_eq!(got, native, "{name:?} {command} → {ours}: as Claude Code");
                }
            }
        }
    }
}
