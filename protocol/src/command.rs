//! Hook command strings, both ways: enough `sh` word splitting to see the program and its
//! subcommand (recognising amplihack's own `amplihack-hooks` calls, which the forwarder never runs
//! and the installer owns), and quoting a path so `sh` reads it back unchanged.

use crate::table::HOOKS_BINARY;

/// The first `count` words of a command, with `sh` quoting removed.
pub fn leading_words(command: &str, count: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = command.trim_start().chars().peekable();
    while words.len() < count {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '\'' => word.extend(chars.by_ref().take_while(|&q| q != '\'')),
                '"' => {
                    while let Some(q) = chars.next() {
                        match q {
                            '"' => break,
                            '\\' => word.extend(chars.next()),
                            other => word.push(other),
                        }
                    }
                }
                '\\' => word.extend(chars.next()),
                other => word.push(other),
            }
        }
        words.push(word);
    }
    words
}

/// The words of a command from its program on: environment assignments (`FOO=1`) and the
/// wrappers people put around a hook (`env`, `nice`, `timeout`, `nohup`, `exec`, `command`,
/// `time`, with their options) are skipped, so an entry the user edited around our command is
/// still seen for what it runs.
pub fn program_words(command: &str) -> Vec<String> {
    let words = leading_words(command, 24);
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        let base = word.rsplit('/').next().unwrap_or(word);
        let assignment = word.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if assignment {
            i += 1;
            continue;
        }
        match base {
            "env" | "nohup" | "exec" | "command" | "time" => {
                i += 1;
                // env's and time's own options, e.g. `env -u VAR`, `env -i`.
                while i < words.len() && words[i].starts_with('-') {
                    let takes_value =
                        matches!(words[i].as_str(), "-u" | "--unset" | "-C" | "--chdir");
                    i += if takes_value { 2 } else { 1 };
                }
            }
            "nice" => {
                i += 1;
                if words.get(i).is_some_and(|w| w == "-n") {
                    i += 2;
                } else if words.get(i).is_some_and(|w| w.starts_with('-')) {
                    i += 1;
                }
            }
            "timeout" => {
                i += 1;
                while words.get(i).is_some_and(|w| w.starts_with('-')) {
                    let takes_value =
                        matches!(words[i].as_str(), "-s" | "--signal" | "-k" | "--kill-after");
                    i += if takes_value { 2 } else { 1 };
                }
                i += 1; // the duration
            }
            _ => break,
        }
    }
    words.into_iter().skip(i).collect()
}

/// Whether a program word (a path or a bare name) is `amplihack-hooks`, wherever it lives.
pub fn is_hooks_program(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name == HOOKS_BINARY || name == "amplihack-hooks.exe"
}

/// The program of a command is `amplihack-hooks`, wherever it lives and however it is wrapped.
pub fn runs_amplihack_hooks(command: &str) -> bool {
    program_words(command)
        .first()
        .is_some_and(|program| is_hooks_program(program))
}

/// Bare when every character is safe in `sh`, else double-quoted with `"`, `\`, `$` and `` ` ``
/// escaped (a home directory with a space or a `$` must still work).
pub fn shell_quote(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        return text.to_string();
    }
    let mut quoted = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}
