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

/// The program of a command is `amplihack-hooks`, wherever it lives.
pub fn runs_amplihack_hooks(command: &str) -> bool {
    leading_words(command, 1).first().is_some_and(|program| {
        let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
        name == HOOKS_BINARY || name == "amplihack-hooks.exe"
    })
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
