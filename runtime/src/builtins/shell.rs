//! Just enough of the POSIX shell grammar to see which commands a Bash tool call runs: quoting,
//! escapes, variable and tilde expansion, command substitution, separators and redirections.
//!
//! The guard must not be fooled by spelling (`rm -r -f "$HOME"`, `rm  -rf  ~/`, `'--no-verify'`)
//! and must not fire on a mere mention (`git commit -m "--no-verify"`, `echo rm -rf /`). It does
//! no I/O and runs nothing.

/// One word after quote removal and expansion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub text: String,
    /// An unquoted `*`, `?` or `[` appeared: the shell would glob this word.
    pub glob: bool,
    /// Part of the word came from a command substitution we cannot evaluate.
    pub opaque: bool,
}

/// A simple command: its words (assignments and redirections already removed), and the
/// separator that ended it, so `cd` can be followed through `&&` and `;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
}

/// Everything a command line runs: its simple commands in order, plus the bodies of command
/// substitutions (`$(…)`, backticks), which run too and are checked on their own.
#[derive(Debug, Default)]
pub struct Parsed {
    pub commands: Vec<SimpleCommand>,
    pub substitutions: Vec<String>,
}

/// What a command substitution prints, for the forms that print a path without side effects:
/// `pwd`, `echo`/`printf %s` of words, `realpath`/`readlink -f` of a path, `dirname`, `basename`,
/// nested in each other (`$(dirname $(pwd))`). Paths are resolved lexically against `$PWD`.
/// `None` for anything else.
pub fn evaluate(body: &str, vars: &dyn Vars) -> Option<String> {
    let parsed = parse(body, vars);
    let [command] = parsed.commands.as_slice() else {
        return None;
    };
    if command.words.iter().any(|w| w.opaque || w.glob) {
        return None;
    }
    let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
    let pwd = || vars.get("PWD");
    let operands = |from: usize| -> Vec<&str> {
        words[from..]
            .iter()
            .copied()
            .filter(|w| !w.starts_with('-') || *w == "-")
            .collect()
    };
    let single = |from: usize| -> Option<String> {
        match operands(from).as_slice() {
            [one] => Some((*one).to_string()),
            _ => None,
        }
    };
    match *words.first()? {
        "pwd" => pwd(),
        "echo" => Some(operands(1).join(" ")),
        "printf" if words.get(1) == Some(&"%s") => Some(words[2..].concat()),
        "realpath" | "readlink" => {
            if words[0] == "readlink" && !words.iter().any(|w| matches!(*w, "-f" | "-e" | "-m")) {
                return None;
            }
            Some(resolve(&pwd()?, &single(1)?))
        }
        "dirname" => {
            let path = single(1)?;
            let trimmed = path.trim_end_matches('/');
            Some(match trimmed.rfind('/') {
                Some(0) => "/".into(),
                Some(i) => trimmed[..i].to_string(),
                None if path.starts_with('/') => "/".into(),
                None => ".".into(),
            })
        }
        "basename" => {
            let path = single(1)?;
            let trimmed = path.trim_end_matches('/');
            Some(if trimmed.is_empty() && path.starts_with('/') {
                "/".into()
            } else {
                trimmed.rsplit('/').next().unwrap_or_default().to_string()
            })
        }
        _ => None,
    }
}

/// `path` made absolute against `base` and normalised lexically (`.`, `..`, doubled slashes).
pub fn resolve(base: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{base}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Variable lookup for expansion. `None` expands to nothing, as for an unset variable.
pub trait Vars {
    fn get(&self, name: &str) -> Option<String>;
}

impl<F: Fn(&str) -> Option<String>> Vars for F {
    fn get(&self, name: &str) -> Option<String> {
        self(name)
    }
}

pub fn parse(src: &str, vars: &dyn Vars) -> Parsed {
    let mut lexer = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        vars,
        parsed: Parsed::default(),
    };
    lexer.run();
    lexer.parsed
}

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    vars: &'a dyn Vars,
    parsed: Parsed,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn run(&mut self) {
        let mut words: Vec<Word> = Vec::new();
        let mut skip_next_word = false; // the target of a redirection is not an argument
        loop {
            // Blanks between words.
            while matches!(self.peek(), Some(' ' | '\t' | '\r'))
                || (self.peek() == Some('\\') && self.peek_at(1) == Some('\n'))
            {
                self.pos += if self.peek() == Some('\\') { 2 } else { 1 };
            }
            let Some(c) = self.peek() else { break };
            match c {
                '#' => {
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.pos += 1;
                    }
                }
                ';' | '&' | '|' | '\n' | '(' | ')' => {
                    self.pos += 1;
                    // `>&`, `&>` and `|&` are handled as separators or redirections alike.
                    if c == '&' && self.peek() == Some('>') {
                        self.pos += 1;
                        skip_next_word = true;
                        continue;
                    }
                    self.finish(&mut words);
                    skip_next_word = false;
                }
                '<' | '>' => {
                    self.redirection();
                    skip_next_word = true;
                }
                _ => {
                    let word = self.word();
                    // `2>file`: a number right before a redirection is a descriptor, not a word.
                    if matches!(self.peek(), Some('<' | '>'))
                        && !word.text.is_empty()
                        && word.text.chars().all(|c| c.is_ascii_digit())
                    {
                        continue;
                    }
                    if skip_next_word {
                        skip_next_word = false;
                    } else {
                        words.push(word);
                    }
                }
            }
        }
        self.finish(&mut words);
    }

    fn redirection(&mut self) {
        while matches!(self.peek(), Some('<' | '>' | '&' | '|')) {
            self.pos += 1;
        }
        // `2>&1`: the descriptor after `&` is the target, read as the next word and dropped.
    }

    fn finish(&mut self, words: &mut Vec<Word>) {
        if !words.is_empty() {
            self.parsed.commands.push(SimpleCommand {
                words: std::mem::take(words),
            });
        }
    }

    fn word(&mut self) -> Word {
        let mut word = Word::default();
        let start = self.pos;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            word.text.push(next);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(q) = self.peek() {
                        self.pos += 1;
                        if q == '\'' {
                            break;
                        }
                        word.text.push(q);
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word, false),
                '`' => self.backtick(&mut word),
                '~' if self.pos == start => {
                    self.pos += 1;
                    if matches!(
                        self.peek(),
                        None | Some('/' | ' ' | '\t' | '\n' | ';' | '&' | '|' | ')')
                    ) {
                        word.text
                            .push_str(&self.vars.get("HOME").unwrap_or_default());
                    } else {
                        word.text.push('~');
                    }
                }
                '*' | '?' | '[' => {
                    word.glob = true;
                    word.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        word
    }

    fn double_quoted(&mut self, word: &mut Word) {
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some(next @ ('"' | '\\' | '$' | '`')) => {
                            word.text.push(next);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => word.text.push('\\'),
                    }
                }
                '$' => self.dollar(word, true),
                '`' => self.backtick(word),
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn dollar(&mut self, word: &mut Word, quoted: bool) {
        self.pos += 1; // the `$`
        match self.peek() {
            Some('(') => {
                if self.peek_at(1) == Some('(') {
                    // Arithmetic: a number we do not compute.
                    self.balanced('(', ')');
                    word.opaque = true;
                } else {
                    let body = self.balanced('(', ')');
                    self.substitution(word, body);
                }
            }
            Some('{') => {
                let body = self.balanced('{', '}');
                // `${VAR}`, `${VAR:-x}`: the name is what comes before any operator.
                let name: String = body
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.len() == body.len() {
                    word.text
                        .push_str(&self.vars.get(&name).unwrap_or_default());
                } else {
                    word.opaque = true;
                }
            }
            Some('\'') if !quoted => {
                // ANSI-C quoting: common escapes only.
                self.pos += 1;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '\'' => break,
                        '\\' => {
                            let escaped = self.peek().unwrap_or('\\');
                            self.pos += 1;
                            word.text.push(match escaped {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                        other => word.text.push(other),
                    }
                }
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.pos += 1;
                }
                word.text
                    .push_str(&self.vars.get(&name).unwrap_or_default());
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                // Positional and special parameters: unknown here.
                self.pos += 1;
                word.opaque = true;
            }
            _ => word.text.push('$'),
        }
    }

    fn backtick(&mut self, word: &mut Word) {
        self.pos += 1;
        let mut body = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(next) = self.peek() {
                        body.push(next);
                        self.pos += 1;
                    }
                }
                other => body.push(other),
            }
        }
        self.substitution(word, body);
    }

    fn substitution(&mut self, word: &mut Word, body: String) {
        // The simple, side-effect-free forms common in deletion commands are worked out; the
        // rest stays unknown (and is never guessed at).
        // A value with blanks would be split into several words by the shell; that is not
        // modelled, so such a value stays unknown.
        match evaluate(&body, self.vars).filter(|v| !v.contains(char::is_whitespace)) {
            Some(value) => word.text.push_str(&value),
            None => word.opaque = true,
        }
        self.parsed.substitutions.push(body);
    }

    /// Reads from an opening delimiter to its balanced close, skipping quoted text; returns the
    /// text between them.
    fn balanced(&mut self, open: char, close: char) -> String {
        let mut depth = 0usize;
        let mut body = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            self.pos += 1;
            if let Some(q) = quote {
                if c == q {
                    quote = None;
                }
                body.push(c);
                continue;
            }
            if c == open {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            } else if c == '\'' || c == '"' {
                quote = Some(c);
            }
            body.push(c);
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "PWD" => Some("/home/u/p".into()),
            _ => None,
        }
    }

    fn words(src: &str) -> Vec<Vec<String>> {
        parse(src, &vars)
            .commands
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn quoting_expansion_and_separators() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("rm -rf ~", &[&["rm", "-rf", "/home/u"]]),
            ("rm  -rf   ~/", &[&["rm", "-rf", "/home/u/"]]),
            ("rm -rf \"$HOME\"", &[&["rm", "-rf", "/home/u"]]),
            ("rm -rf '$HOME'", &[&["rm", "-rf", "$HOME"]]),
            ("rm -rf ${HOME}/x", &[&["rm", "-rf", "/home/u/x"]]),
            ("r\"m\" -r\\f /", &[&["rm", "-rf", "/"]]),
            (
                "a && b; c | d || e & f",
                &[&["a"], &["b"], &["c"], &["d"], &["e"], &["f"]],
            ),
            ("echo hi > out.txt 2>&1; ls", &[&["echo", "hi"], &["ls"]]),
            ("echo '~' \"~\" ~x", &[&["echo", "~", "~", "~x"]]),
            (
                "git commit -m \"fix: a; b\" # trailing comment",
                &[&["git", "commit", "-m", "fix: a; b"]],
            ),
            ("rm -rf $(pwd)", &[&["rm", "-rf", "/home/u/p"]]),
            ("line1 \\\n  continued", &[&["line1", "continued"]]),
            ("echo $UNSET/x", &[&["echo", "/x"]]),
            ("(cd / && ls)", &[&["cd", "/"], &["ls"]]),
        ];
        for (src, want) in cases {
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|c| c.iter().map(|w| w.to_string()).collect())
                .collect();
            assert_eq!(words(src), want, "{src}");
        }
    }

    #[test]
    fn substitutions_are_collected_and_marked_opaque() {
        let parsed = parse("echo $(git commit --no-verify) `rm -rf /`", &vars);
        assert_eq!(parsed.substitutions, ["git commit --no-verify", "rm -rf /"]);
        assert!(parsed.commands[0].words[1].opaque);
    }

    #[test]
    fn globs_are_flagged_only_when_unquoted() {
        let parsed = parse("rm -rf ~/* '*'", &vars);
        let words = &parsed.commands[0].words;
        assert!(words[2].glob);
        assert!(!words[3].glob);
    }
}
