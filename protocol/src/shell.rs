//! Just enough of the POSIX shell grammar to see which commands a Bash tool call runs: quoting,
//! escapes, parameter and tilde expansion (with the `${VAR:-x}`, `${VAR:?}`, `${VAR%x}` forms),
//! field splitting of unquoted expansions, brace expansion, command and arithmetic substitution,
//! here-documents, separators and redirections, and the variables the line itself assigns.
//!
//! The guard must not be fooled by spelling (`rm -r -f "$HOME"`, `rm  -rf  ~/`, `'--no-verify'`)
//! and must not fire on a mere mention (`git commit -m "--no-verify"`, `echo rm -rf /`). It does
//! no I/O and runs nothing.
//!
//! It is the one shell lexer of the house: the Bash guard reads tool calls with it, and, in a
//! parse [as written](parse_as_written) that expands nothing, command recognition (which entries
//! are amplihack's), trust (which project files a plugin's command names) and the command
//! handler (whether a command is only words and can run without `sh`) read hook commands with it.
//!
//! It reads the command once, left to right: a substitution's body is parsed where it stands,
//! never copied out and parsed again, so the work is linear in the command's size. Nesting
//! (`$(`, `${`, backticks) recurses, and is bounded: deeper than [`MAX_NESTING`] the parse stops
//! and says so ([`Parsed::too_deep`]), so no input can overflow the stack.

use std::collections::HashMap;

/// How deep `$(…)`, `${…}` and backticks may nest before the parse gives up (and the guard,
/// which cannot see what runs below, refuses the command).
pub const MAX_NESTING: usize = 64;

/// Steps the `${VAR%pattern}` matcher may take over a whole parse; past it, such values are
/// unknown rather than slow.
const PATTERN_BUDGET: usize = 1_000_000;

/// Bytes brace expansion may produce over a whole parse (duplicates included, as the shell does).
/// More cannot be the arguments of a program anyway (Linux refuses an exec whose arguments
/// exceed a quarter of the stack limit, 2 MiB by default, 6 MiB at most), so past it the words
/// are unknown rather than slow: `rm -rf {~,a}{,}{,}…` with 20 groups cannot run.
const BRACE_BYTES: usize = 8 << 20;

/// One word after quote removal and expansion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub text: String,
    /// An unquoted `*`, `?` or `[` appeared: the shell would glob this word.
    pub glob: bool,
    /// Part of the word came from an expansion we cannot work out.
    pub opaque: bool,
    /// An unquoted `{` appeared: bash would brace-expand this word (only a parse [as
    /// written](parse_as_written) leaves one unexpanded).
    pub brace: bool,
}

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

/// A simple command: its words (assignments and redirections removed only later, by the guard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
}

/// Shell syntax a line used beyond words, quotes and expansions: what decides whether a command
/// can run without a shell (where none of it may appear) and what the guard may ignore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Syntax(u8);

impl Syntax {
    /// `;`, `&`, `|`, `(`, `)` or a newline between commands.
    pub const OPERATOR: Syntax = Syntax(1);
    /// `<`, `>`, `>>`, `2>&1`, `&>` or a here-document.
    pub const REDIRECTION: Syntax = Syntax(1 << 1);
    /// A `#` comment.
    pub const COMMENT: Syntax = Syntax(1 << 2);
    /// A backslash outside single quotes (an escape or a line continuation).
    pub const ESCAPE: Syntax = Syntax(1 << 3);
    /// A quote the line never closes.
    pub const UNTERMINATED: Syntax = Syntax(1 << 4);
    /// An unquoted `{`: bash's brace expansion, which `sh` (dash) does not do.
    pub const BRACE: Syntax = Syntax(1 << 5);
    /// `$'…'` or `$"…"`: bash's quoting, which `sh` (dash) reads otherwise.
    pub const DOLLAR_QUOTE: Syntax = Syntax(1 << 6);

    /// Whether the line used none of it.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the line used `other`.
    pub fn contains(self, other: Syntax) -> bool {
        self.0 & other.0 == other.0
    }

    fn insert(&mut self, other: Syntax) {
        self.0 |= other.0;
    }
}

impl std::ops::BitOr for Syntax {
    type Output = Syntax;

    fn bitor(self, other: Syntax) -> Syntax {
        Syntax(self.0 | other.0)
    }
}

/// Everything a command line runs: its simple commands in order, plus the commands of every
/// command substitution (`$(…)`, backticks, `$((…))`), at any depth, each body as its own list,
/// innermost first.
#[derive(Debug, Default)]
pub struct Parsed {
    pub commands: Vec<SimpleCommand>,
    pub substitutions: Vec<Vec<SimpleCommand>>,
    /// Shell variables the line assigns (`A=1`, `export A=1`, `${A:=1}`), as `NAME=value`.
    pub assignments: Vec<String>,
    /// Nesting went deeper than [`MAX_NESTING`]: the parse stopped there, and what it returns is
    /// incomplete.
    pub too_deep: bool,
    /// The syntax beyond words the line (its substitutions included) used.
    pub syntax: Syntax,
}

/// What a command substitution prints, for the forms that print a path without side effects:
/// `pwd`, `echo`/`printf %s` of words, `realpath`/`readlink -f` of a path, `dirname`, `basename`,
/// nested in each other (`$(dirname $(pwd))`). Paths are resolved lexically against `$PWD`.
/// `None` for anything else.
fn evaluate(commands: &[SimpleCommand], pwd: &mut dyn FnMut() -> Option<String>) -> Option<String> {
    let [command] = commands else {
        return None;
    };
    if command.words.iter().any(|w| w.opaque || w.glob) {
        return None;
    }
    let first = command.words.first()?.text.as_str();
    if !matches!(
        first,
        "pwd" | "echo" | "printf" | "realpath" | "readlink" | "dirname" | "basename"
    ) {
        return None;
    }
    if first == "pwd" {
        return pwd();
    }
    let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
    let operands = |from: usize| -> Vec<&str> {
        words
            .get(from..)
            .unwrap_or_default()
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
        "echo" => {
            // Only leading `-n`, `-e`, `-E` are echo's options; `echo --no-verify` prints it.
            let options = words[1..]
                .iter()
                .take_while(|w| {
                    w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| "neE".contains(c))
                })
                .count();
            let text = words[1 + options..].join(" ");
            (!text.contains('\\')).then_some(text)
        }
        "printf" => {
            let (rest, dashes) = match words.get(1) {
                Some(&"--") => (&words[2..], true),
                _ => (&words[1..], false),
            };
            match rest {
                ["%s", values @ ..] => Some(values.concat()),
                // A format without directives or escapes prints itself.
                [format]
                    if !format.contains(['%', '\\']) && (dashes || !format.starts_with('-')) =>
                {
                    Some((*format).to_string())
                }
                _ => None,
            }
        }
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

/// `NAME=…` with a valid shell name.
pub fn is_assignment(text: &str) -> bool {
    split_assignment(text).is_some()
}

/// `NAME=value` → (`NAME`, `value`), for a valid shell name. Reads no further than the name.
pub fn split_assignment(text: &str) -> Option<(&str, &str)> {
    let eq = text
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
    (text.as_bytes()[eq] == b'=' && is_name(&text[..eq])).then(|| (&text[..eq], &text[eq + 1..]))
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Receives what a line runs while it is parsed, in the order the shell would run it: each
/// substitution's commands before the command they are part of, each command of the line, each
/// variable the line assigns. Nothing is kept: memory stays that of one command. Returning
/// `false` stops the parse.
pub trait Sink {
    /// `depth`: how deep the substitution's body is nested (counting the `depth` the parse
    /// started at), so a shell it runs can be parsed on from there.
    fn substitution(&mut self, commands: &[SimpleCommand], depth: usize) -> bool;
    fn command(&mut self, command: &SimpleCommand) -> bool;
    /// `NAME=value` as the line assigns it (`A=1`, `export A=1`, `${A:=1}`).
    fn assignment(&mut self, _assignment: &str) {}
    /// The target of a redirection (`< tools/input`, `> out.log`): a file the command reads or
    /// writes, not one of its words. Only in a parse [`as written`](parse_into_as_written).
    fn redirection(&mut self, _target: &Word) {}
    /// A here-document's body, as written: text a command reads (`sh <<EOF` runs it), handed
    /// after the command it feeds. Only in a parse [`as written`](parse_into_as_written).
    fn heredoc(&mut self, _body: &str) {}
}

/// Parses a whole line into [`Parsed`].
pub fn parse(src: &str, vars: &dyn Vars) -> Parsed {
    parse_inner(src, vars, None, 0, false)
}

/// Parses a line without expanding anything: `$VAR`, `${…}`, `$(…)`, backticks, `~` and braces
/// stay in the words as written (quotes and escapes are still removed, and a substitution's
/// commands are still read). For reading a command rather than running it: recognising a
/// program (`"$HOME/bin/amplihack-hooks" session-start`) and the files a hook names.
pub fn parse_as_written(src: &str) -> Parsed {
    parse_inner(src, &|_: &str| None, None, 0, true)
}

/// Parses a line, handing what it runs to `sink` as it goes; the returned [`Parsed`] then has
/// no commands, substitutions or assignments, only [`Parsed::too_deep`]. `depth`: how deeply
/// this line is already nested (a `bash -c` script inside `$(…)`): [`MAX_NESTING`] bounds the
/// total, so shells inside substitutions inside shells cannot stack up past it.
pub fn parse_into(src: &str, vars: &dyn Vars, sink: &mut dyn Sink, depth: usize) -> Parsed {
    parse_inner(src, vars, Some(sink), depth, false)
}

/// [`parse_into`] [`as written`](parse_as_written), with each redirection's target and each
/// here-document's body handed to the sink as well.
pub fn parse_into_as_written(src: &str, sink: &mut dyn Sink, depth: usize) -> Parsed {
    parse_inner(src, &|_: &str| None, Some(sink), depth, true)
}

fn parse_inner<'a>(
    src: &str,
    vars: &'a dyn Vars,
    sink: Option<&'a mut dyn Sink>,
    depth: usize,
    as_written: bool,
) -> Parsed {
    // ASCII (nearly every command) is read as it is; other text as characters, four bytes each.
    let decoded: Vec<char>;
    let chars = if src.is_ascii() {
        Text::Ascii(src.as_bytes())
    } else {
        decoded = src.chars().collect();
        Text::Chars(&decoded)
    };
    let mut state = State {
        sink,
        halt: false,
        vars,
        assigned: HashMap::new(),
        parsed: Parsed::default(),
        pattern_budget: PATTERN_BUDGET,
        spare: Vec::new(),
        spare_lists: Vec::new(),
        env: HashMap::new(),
        env_values: Vec::new(),
        env_last: (String::new(), usize::MAX),
        ifs: ifs_mask(DEFAULT_IFS),
        brace_budget: BRACE_BYTES,
        brace_lists: (Vec::new(), BraceScratch::default(), String::new()),
        expansion_budget: 4 * src.len() + (1 << 20),
        as_written,
        written_depth: 0,
    };
    let mut lexer = Lexer {
        chars,
        pos: 0,
        end: chars.len(),
        depth,
    };
    let commands = lexer.commands(&mut state, false, true);
    state.parsed.commands = commands;
    state.parsed
}

/// bash sets IFS itself at startup, whatever the environment says.
const DEFAULT_IFS: &str = " \t\n";

fn ifs_mask(ifs: &str) -> u128 {
    ifs.chars()
        .filter(char::is_ascii)
        .fold(0, |mask, c| mask | (1u128 << (c as u32)))
}

/// What a variable is, as far as the line can tell.
enum Value<'s> {
    Set(&'s str),
    Unset,
    /// Assigned by the line from something that cannot be worked out.
    Unknown,
}

struct State<'a> {
    sink: Option<&'a mut dyn Sink>,
    /// Stop reading: too deep, or the sink has seen enough.
    halt: bool,
    vars: &'a dyn Vars,
    /// Variables the line itself assigned so far; `None`: to an unknown value.
    assigned: HashMap<String, Option<String>>,
    parsed: Parsed,
    pattern_budget: usize,
    /// What brace expansion may still produce ([`BRACE_BYTES`]).
    brace_budget: usize,
    /// A word's brace marks, brace expansion's lists and the buffer a word is built in, lent
    /// to each [`Builder`] in turn.
    brace_lists: (Vec<usize>, BraceScratch, String),
    /// `$IFS` as a set of ASCII characters (bash's own default unless the line assigns it).
    ifs: u128,
    /// The environment's values, each asked for once: where in `env_values` a name's is (so
    /// that a name asked for again is hashed once).
    env: HashMap<String, usize>,
    env_values: Vec<Option<String>>,
    /// The name last found in `env` and its index: `$(pwd) $(pwd) …` or `~/a ~/b …` ask for
    /// one name over and over, and comparing it is cheaper than hashing it.
    env_last: (String, usize),
    /// Emptied word lists, reused by the next `commands` (one per substitution otherwise).
    spare: Vec<Vec<Word>>,
    /// Emptied command lists of substitutions the sink has seen, reused likewise.
    spare_lists: Vec<Vec<SimpleCommand>>,
    /// Characters expansions may still add: `X=<100 KB>; echo $X $X …` must not grow the work
    /// past linear. A value beyond it is unknown.
    expansion_budget: usize,
    /// Nothing is expanded: see [`parse_as_written`].
    as_written: bool,
    /// How many expansions kept as written the lexer is inside ([`Lexer::as_written`]).
    written_depth: usize,
}

impl State<'_> {
    /// A variable's value, counted against the expansion budget.
    fn lookup(&mut self, name: &str) -> Value<'_> {
        let value = match self.assigned.get(name) {
            Some(Some(value)) => Some(value.as_str()),
            Some(None) => return Value::Unknown,
            // bash sets IFS itself at startup, whatever the environment says.
            None if name == "IFS" => Some(DEFAULT_IFS),
            None => {
                let index = if self.env_last.1 != usize::MAX && self.env_last.0 == name {
                    self.env_last.1
                } else {
                    let index = match self.env.get(name) {
                        Some(&index) => index,
                        None => {
                            self.env_values.push(self.vars.get(name));
                            self.env.insert(name.to_string(), self.env_values.len() - 1);
                            self.env_values.len() - 1
                        }
                    };
                    self.env_last.0.clear();
                    self.env_last.0.push_str(name);
                    self.env_last.1 = index;
                    index
                };
                self.env_values[index].as_deref()
            }
        };
        match value {
            None => Value::Unset,
            Some(v) if v.len() > self.expansion_budget => Value::Unknown,
            Some(v) => {
                self.expansion_budget -= v.len();
                Value::Set(v)
            }
        }
    }

    /// Keeps a list the sink has seen, and its commands' word lists, for reuse.
    fn recycle(&mut self, mut commands: Vec<SimpleCommand>) {
        for command in commands.drain(..) {
            let mut words = command.words;
            words.clear();
            self.spare.push(words);
        }
        self.spare_lists.push(commands);
    }

    fn assign(&mut self, word: &Word) {
        if let Some((name, value)) = split_assignment(&word.text) {
            if name == "IFS" && !word.opaque {
                self.ifs = ifs_mask(value);
            }
            let value = (!word.opaque).then(|| value.to_string());
            match self.sink.as_mut() {
                Some(sink) => sink.assignment(&word.text),
                None => self.parsed.assignments.push(word.text.clone()),
            }
            match self.assigned.get_mut(name) {
                Some(slot) => *slot = value,
                None => {
                    self.assigned.insert(name.to_string(), value);
                }
            }
        }
    }
}

/// Words being built: an unquoted expansion can split into several.
#[derive(Default)]
struct Builder {
    done: Vec<Word>,
    current: Word,
    /// The current word had quotes, so it stays even when empty (`""`).
    quoted: bool,
    /// Byte offsets in `current.text` of unquoted `{`, `,` and `}` (brace expansion).
    braces: Vec<usize>,
    /// Inside `NAME=…` or `${…}`: no field splitting, no globbing, no brace expansion.
    no_split: bool,
    /// The ASCII characters unquoted expansions are split on (`$IFS`).
    ifs: u128,
    /// What brace expansion may still produce ([`BRACE_BYTES`]).
    brace_budget: usize,
    /// Brace expansion's working lists, kept from word to word.
    scratch: BraceScratch,
}

/// The lists [`expand_flat`] works in, reused so that a word costs no allocation but its own.
#[derive(Default)]
struct BraceScratch {
    /// Alternatives as byte ranges.
    alternatives: Vec<(usize, usize)>,
    /// Groups as (open, close, first alternative, end).
    groups: Vec<(usize, usize, usize, usize)>,
    /// The alternative picked in each group.
    choice: Vec<usize>,
}

impl Builder {
    fn push(&mut self, c: char) {
        self.current.text.push(c);
    }

    fn push_expansion(&mut self, value: &str, quoted: bool) {
        if quoted || self.no_split {
            self.current.text.push_str(value);
            self.quoted |= quoted;
            return;
        }
        // `$IFS` holds ASCII characters only, so the value is split on bytes, and each field is
        // appended whole (a byte below 0x80 is never part of a longer character).
        let ifs = self.ifs;
        let mut rest = value;
        loop {
            // One pass: where the field ends, and whether it globs.
            let mut glob = false;
            let stop = rest
                .bytes()
                .position(|c| {
                    glob |= matches!(c, b'*' | b'?' | b'[');
                    c < 128 && ifs & (1u128 << c) != 0
                })
                .unwrap_or(rest.len());
            self.current.glob |= glob;
            self.current.text.push_str(&rest[..stop]);
            if stop == rest.len() {
                break;
            }
            self.split();
            rest = &rest[stop + 1..];
        }
    }

    /// Ends the current word. It is built in a buffer kept from word to word, and copied out
    /// at its size: no word grows by reallocation, none keeps spare capacity.
    fn split(&mut self) {
        let word = &self.current;
        if !word.text.is_empty() || self.quoted || word.opaque {
            if self.braces.is_empty() {
                self.done.push(word.clone());
            } else {
                expand_braces(
                    word,
                    &self.braces,
                    &mut self.brace_budget,
                    &mut self.scratch,
                    &mut self.done,
                );
            }
        }
        self.current.text.clear();
        self.current.glob = false;
        self.current.opaque = false;
        self.current.brace = false;
        self.braces.clear();
        self.quoted = false;
    }

    /// A builder for a word in `mode`, with the state's brace budget and lists.
    fn new(state: &mut State<'_>, mode: Mode) -> Self {
        let (mut braces, scratch, mut text) = std::mem::take(&mut state.brace_lists);
        braces.clear();
        text.clear();
        Builder {
            no_split: mode == Mode::Brace,
            ifs: state.ifs,
            brace_budget: state.brace_budget,
            braces,
            scratch,
            current: Word {
                text,
                ..Word::default()
            },
            ..Builder::default()
        }
    }

    /// The words, the budget and the lists handed back to the state.
    fn finish(&mut self, state: &mut State<'_>) -> Vec<Word> {
        self.split();
        state.brace_budget = self.brace_budget;
        state.brace_lists = (
            std::mem::take(&mut self.braces),
            std::mem::take(&mut self.scratch),
            std::mem::take(&mut self.current.text),
        );
        std::mem::take(&mut self.done)
    }
}

/// `a{b,c}d` → `abd acd`, for the braces marked as unquoted. Words that would take more than
/// `budget` bytes are returned as one unknown word.
fn expand_braces(
    word: &Word,
    marks: &[usize],
    budget: &mut usize,
    scratch: &mut BraceScratch,
    out: &mut Vec<Word>,
) {
    if expand_flat(word, marks, budget, scratch, out) {
        return;
    }
    let mut work = vec![(word.text.clone(), marks.to_vec())];
    let first = out.len();
    while let Some((text, marks)) = work.pop() {
        // Every word made, final or not, is paid for: nesting cannot multiply the work unpaid.
        match budget.checked_sub(text.len() + 1) {
            Some(left) => *budget = left,
            None => {
                out.truncate(first);
                out.push(Word {
                    opaque: true,
                    ..word.clone()
                });
                return;
            }
        }
        match brace_group(&text, &marks) {
            Some((open, commas, close)) => {
                let mut bounds = vec![marks[open]];
                bounds.extend(commas.iter().map(|&i| marks[i]));
                bounds.push(marks[close]);
                let (start, stop) = (marks[open], marks[close]);
                for pair in bounds.windows(2).rev() {
                    let (from, to) = (pair[0] + 1, pair[1]);
                    let alt = &text[from..to];
                    let mut next = String::with_capacity(text.len());
                    next.push_str(&text[..start]);
                    next.push_str(alt);
                    next.push_str(&text[stop + 1..]);
                    let mut next_marks: Vec<usize> =
                        marks.iter().copied().filter(|&m| m < start).collect();
                    next_marks.extend(
                        marks
                            .iter()
                            .copied()
                            .filter(|&m| m >= from && m < to)
                            .map(|m| m - from + start),
                    );
                    next_marks.extend(
                        marks
                            .iter()
                            .copied()
                            .filter(|&m| m > stop)
                            .map(|m| m - (stop + 1) + start + alt.len()),
                    );
                    work.push((next, next_marks));
                }
            }
            None => {
                let glob = word.glob && text.contains(['*', '?', '[']);
                out.push(Word {
                    text,
                    glob,
                    opaque: word.opaque,
                    brace: false,
                });
            }
        }
    }
}

/// The common case, groups side by side and none nested (`~/{a,b}/{c,d}`): the words built
/// directly into `out`. `false` for nested groups, and nothing done.
fn expand_flat(
    word: &Word,
    marks: &[usize],
    budget: &mut usize,
    scratch: &mut BraceScratch,
    out: &mut Vec<Word>,
) -> bool {
    let text = word.text.as_str();
    let bytes = text.as_bytes();
    let BraceScratch {
        alternatives,
        groups,
        choice,
    } = scratch;
    alternatives.clear();
    groups.clear();
    let mut open: Option<(usize, usize)> = None; // (byte of `{`, its first alternative)
    let mut last = 0;
    for &m in marks {
        match (bytes.get(m), open) {
            (Some(b'{'), Some(_)) => return false,
            (Some(b'{'), None) => {
                open = Some((m, alternatives.len()));
                last = m + 1;
            }
            (Some(b','), Some(_)) => {
                alternatives.push((last, m));
                last = m + 1;
            }
            (Some(b'}'), Some((at, first))) => {
                if alternatives.len() > first {
                    alternatives.push((last, m));
                    groups.push((at, m, first, alternatives.len()));
                }
                open = None;
            }
            _ => {}
        }
    }
    if let Some((_, first)) = open {
        alternatives.truncate(first); // an unclosed `{`: its commas are plain text
    }
    // How many words, and how many bytes, before making any.
    let mut total = 1usize;
    for &(_, _, first, end) in groups.iter() {
        total = total.saturating_mul(end - first);
    }
    let mut bytes = total.saturating_mul(
        text.len() + 1
            - groups
                .iter()
                .map(|&(open, close, _, _)| close + 1 - open)
                .sum::<usize>(),
    );
    for &(_, _, first, end) in groups.iter() {
        let each = total / (end - first);
        let lengths: usize = alternatives[first..end].iter().map(|&(a, b)| b - a).sum();
        bytes = bytes.saturating_add(each.saturating_mul(lengths));
    }
    match budget.checked_sub(bytes) {
        Some(left) => *budget = left,
        None => {
            out.push(Word {
                opaque: true,
                ..word.clone()
            });
            return true;
        }
    }
    choice.clear();
    choice.resize(groups.len(), 0);
    out.reserve(total);
    for _ in 0..total {
        let mut next = String::with_capacity(text.len());
        let mut at = 0;
        for (&(open, close, first, _), &pick) in groups.iter().zip(choice.iter()) {
            let (from, to) = alternatives[first + pick];
            next.push_str(&text[at..open]);
            next.push_str(&text[from..to]);
            at = close + 1;
        }
        next.push_str(&text[at..]);
        let glob = word.glob && next.contains(['*', '?', '[']);
        out.push(Word {
            text: next,
            glob,
            opaque: word.opaque,
            brace: false,
        });
        // The next combination, last group fastest.
        for (index, &(_, _, first, end)) in groups.iter().enumerate().rev() {
            choice[index] += 1;
            if choice[index] < end - first {
                break;
            }
            choice[index] = 0;
        }
    }
    true
}

/// The leftmost `{…,…}` among the marks: indexes (into `marks`) of its `{`, its top-level commas
/// and its `}`. One pass with a stack, so a word of many unclosed `{` stays linear.
fn brace_group(text: &str, marks: &[usize]) -> Option<(usize, Vec<usize>, usize)> {
    let bytes = text.as_bytes();
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    for (index, &at) in marks.iter().enumerate() {
        match bytes.get(at) {
            Some(b'{') => stack.push((index, false)),
            Some(b',') => {
                if let Some(top) = stack.last_mut() {
                    top.1 = true;
                }
            }
            Some(b'}') => {
                if let Some((open, comma)) = stack.pop()
                    && comma
                    && best.is_none_or(|(o, _)| open < o)
                {
                    best = Some((open, index));
                }
            }
            _ => {}
        }
    }
    let (open, close) = best?;
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (index, &at) in marks.iter().enumerate().take(close).skip(open + 1) {
        match bytes.get(at) {
            Some(b'{') => depth += 1,
            Some(b'}') => depth = depth.saturating_sub(1),
            Some(b',') if depth == 0 => commas.push(index),
            _ => {}
        }
    }
    Some((open, commas, close))
}

/// Where a word ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// An ordinary word: blanks and operators end it.
    Plain,
    /// The argument inside `${NAME:-…}`: only an unquoted `}` ends it.
    Brace,
}

/// The text a [`Lexer`] reads, one character at an index.
#[derive(Clone, Copy)]
enum Text<'a> {
    /// ASCII only: each byte is a character.
    Ascii(&'a [u8]),
    Chars(&'a [char]),
}

impl Text<'_> {
    fn len(&self) -> usize {
        match self {
            Text::Ascii(bytes) => bytes.len(),
            Text::Chars(chars) => chars.len(),
        }
    }

    fn get(&self, index: usize) -> Option<char> {
        match self {
            Text::Ascii(bytes) => bytes.get(index).map(|&b| char::from(b)),
            Text::Chars(chars) => chars.get(index).copied(),
        }
    }

    /// The character at `index`, which must be in the text.
    fn at(&self, index: usize) -> char {
        match self {
            Text::Ascii(bytes) => char::from(bytes[index]),
            Text::Chars(chars) => chars[index],
        }
    }

    /// The characters from `start` up to `stop`.
    fn range(&self, start: usize, stop: usize) -> impl Iterator<Item = char> + '_ {
        (start..stop).map(|index| self.at(index))
    }
}

struct Lexer<'a> {
    chars: Text<'a>,
    pos: usize,
    end: usize,
    depth: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        if self.pos < self.end {
            self.chars.get(self.pos)
        } else {
            None
        }
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        if self.pos + offset < self.end {
            self.chars.get(self.pos + offset)
        } else {
            None
        }
    }

    /// One level deeper; `false` (and the parse stopped) past [`MAX_NESTING`].
    fn enter(&mut self, state: &mut State<'_>) -> bool {
        if self.depth >= MAX_NESTING {
            state.parsed.too_deep = true;
            state.halt = true;
            self.pos = self.end;
            return false;
        }
        self.depth += 1;
        true
    }

    /// Commands up to the end of the input, or (`in_substitution`) up to the `)` that closes
    /// the `$(` just read.
    /// `top`: the line's own commands (for the sink), not a substitution's.
    fn commands(
        &mut self,
        state: &mut State<'_>,
        in_substitution: bool,
        top: bool,
    ) -> Vec<SimpleCommand> {
        let mut out = state.spare_lists.pop().unwrap_or_default();
        let mut words: Vec<Word> = state.spare.pop().unwrap_or_default();
        let mut skip_next_word = false; // the target of a redirection is not an argument
        let mut parens = 0usize;
        let mut heredocs: Vec<(String, bool, bool)> = Vec::new();
        // The words of the word being read, reused: one allocation per command, not per word.
        let mut scratch: Vec<Word> = state.spare.pop().unwrap_or_default();
        loop {
            if state.halt {
                return out;
            }
            // Blanks between words.
            while matches!(self.peek(), Some(' ' | '\t' | '\r'))
                || (self.peek() == Some('\\') && self.peek_at(1) == Some('\n'))
            {
                if self.peek() == Some('\\') {
                    state.parsed.syntax.insert(Syntax::ESCAPE);
                    self.pos += 2;
                } else {
                    self.pos += 1;
                }
            }
            let Some(c) = self.peek() else { break };
            match c {
                '#' => {
                    state.parsed.syntax.insert(Syntax::COMMENT);
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    state.parsed.syntax.insert(Syntax::OPERATOR);
                    finish(&mut words, &mut out, state, top);
                    skip_next_word = false;
                    for (delimiter, expand, strip_tabs) in std::mem::take(&mut heredocs) {
                        self.heredoc(state, &delimiter, expand, strip_tabs);
                    }
                }
                ';' | '&' | '|' | '(' | ')' => {
                    self.pos += 1;
                    // `>&`, `&>` and `|&` are handled as separators or redirections alike.
                    if c == '&' && self.peek() == Some('>') {
                        self.pos += 1;
                        skip_next_word = true;
                        state.parsed.syntax.insert(Syntax::REDIRECTION);
                        continue;
                    }
                    state.parsed.syntax.insert(Syntax::OPERATOR);
                    finish(&mut words, &mut out, state, top);
                    skip_next_word = false;
                    if c == '(' {
                        parens += 1;
                    } else if c == ')' {
                        if parens == 0 && in_substitution {
                            scratch.clear();
                            state.spare.push(scratch);
                            state.spare.push(words);
                            return out;
                        }
                        parens = parens.saturating_sub(1);
                    }
                }
                '<' if self.peek_at(1) == Some('<') && self.peek_at(2) != Some('<') => {
                    self.pos += 2;
                    state.parsed.syntax.insert(Syntax::REDIRECTION);
                    let strip_tabs = self.peek() == Some('-');
                    if strip_tabs {
                        self.pos += 1;
                    }
                    while matches!(self.peek(), Some(' ' | '\t')) {
                        self.pos += 1;
                    }
                    let start = self.pos;
                    let delimiter: String = self
                        .word(state, Mode::Plain)
                        .into_iter()
                        .map(|w| w.text)
                        .collect();
                    let expand = !self
                        .chars
                        .range(start, self.pos.min(self.chars.len()))
                        .any(|c| matches!(c, '\'' | '"' | '\\'));
                    heredocs.push((delimiter, expand, strip_tabs));
                }
                '<' | '>' => {
                    state.parsed.syntax.insert(Syntax::REDIRECTION);
                    while matches!(self.peek(), Some('<' | '>' | '&' | '|')) {
                        self.pos += 1;
                    }
                    // `2>&1`: the descriptor after `&` is the target, read as the next word
                    // and dropped.
                    skip_next_word = true;
                }
                _ => {
                    let start = self.pos;
                    let mut builder = Builder::new(state, Mode::Plain);
                    builder.done = std::mem::take(&mut scratch);
                    self.word_into(state, &mut builder, Mode::Plain);
                    scratch = builder.finish(state);
                    // `2>file`: a number right before a redirection is a descriptor, not a word.
                    if matches!(self.peek(), Some('<' | '>'))
                        && self.pos > start
                        && self
                            .chars
                            .range(start, self.pos)
                            .all(|c| c.is_ascii_digit())
                    {
                        scratch.clear();
                        continue;
                    }
                    if skip_next_word {
                        skip_next_word = false;
                        if state.as_written
                            && let Some(sink) = state.sink.as_mut()
                        {
                            scratch.iter().for_each(|target| sink.redirection(target));
                        }
                        scratch.clear();
                    } else {
                        words.append(&mut scratch);
                    }
                }
            }
        }
        finish(&mut words, &mut out, state, top);
        scratch.clear();
        state.spare.push(scratch);
        words.clear();
        state.spare.push(words);
        out
    }

    /// A here-document's body, up to its delimiter line; when the delimiter was unquoted its
    /// substitutions run, so they are read (the text itself is data).
    fn heredoc(&mut self, state: &mut State<'_>, delimiter: &str, expand: bool, strip_tabs: bool) {
        let mut body = (state.as_written && state.sink.is_some()).then(String::new);
        self.heredoc_lines(state, delimiter, expand, strip_tabs, body.as_mut());
        if let (Some(body), Some(sink)) = (body, state.sink.as_mut()) {
            sink.heredoc(&body);
        }
    }

    /// The lines of [`Self::heredoc`], each copied to `body` when given.
    fn heredoc_lines(
        &mut self,
        state: &mut State<'_>,
        delimiter: &str,
        expand: bool,
        strip_tabs: bool,
        mut body: Option<&mut String>,
    ) {
        while self.pos < self.end {
            let start = self.pos;
            let mut stop = start;
            while stop < self.end && self.chars.at(stop) != '\n' {
                stop += 1;
            }
            let mut first = start;
            if strip_tabs {
                while first < stop && self.chars.at(first) == '\t' {
                    first += 1;
                }
            }
            let is_delimiter = stop - first == delimiter.chars().count()
                && self.chars.range(first, stop).eq(delimiter.chars());
            if is_delimiter {
                self.pos = (stop + 1).min(self.end);
                return;
            }
            if let Some(body) = body.as_mut() {
                body.extend(self.chars.range(first, stop));
                body.push('\n');
            }
            if expand {
                let mut line = Lexer {
                    chars: self.chars,
                    pos: start,
                    end: stop,
                    depth: self.depth,
                };
                let mut sink = Builder::default();
                while let Some(c) = line.peek() {
                    if state.halt {
                        return;
                    }
                    match c {
                        '\\' => line.pos += 2,
                        '$' => line.dollar(state, &mut sink, true),
                        '`' => line.backtick(state, &mut sink, true),
                        _ => line.pos += 1,
                    }
                }
            }
            self.pos = (stop + 1).min(self.end);
        }
    }

    fn word(&mut self, state: &mut State<'_>, mode: Mode) -> Vec<Word> {
        let mut builder = Builder::new(state, mode);
        self.word_into(state, &mut builder, mode);
        builder.finish(state)
    }

    fn word_into(&mut self, state: &mut State<'_>, b: &mut Builder, mode: Mode) {
        let start = self.pos;
        let plain = mode == Mode::Plain;
        while let Some(c) = self.peek() {
            if state.halt {
                return;
            }
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' if plain => {
                    break;
                }
                '}' if !plain => break,
                '\\' => {
                    self.pos += 1;
                    b.quoted = true;
                    state.parsed.syntax.insert(Syntax::ESCAPE);
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            b.push(next);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    b.quoted = true;
                    let mut closed = false;
                    while let Some(q) = self.peek() {
                        self.pos += 1;
                        if q == '\'' {
                            closed = true;
                            break;
                        }
                        b.push(q);
                    }
                    if !closed {
                        state.parsed.syntax.insert(Syntax::UNTERMINATED);
                    }
                }
                '"' => {
                    self.pos += 1;
                    b.quoted = true;
                    self.double_quoted(state, b);
                }
                '$' if state.as_written => self.as_written(state, b, false, Self::dollar),
                '`' if state.as_written => self.as_written(state, b, false, Self::backtick),
                '$' => self.dollar(state, b, false),
                '`' => self.backtick(state, b, false),
                // After an unquoted `{` or `,` too: brace expansion comes first (`{/tmp,~}`).
                '~' if plain
                    && !state.as_written
                    && (self.pos == start
                        || (!b.no_split
                            && b.braces
                                .last()
                                .is_some_and(|&m| m + 1 == b.current.text.len())
                            && b.current.text.ends_with(['{', ',']))) =>
                {
                    self.tilde(state, b)
                }
                '=' if plain
                    && !b.no_split
                    && b.done.is_empty()
                    && !b.quoted
                    && is_name(&b.current.text) =>
                {
                    // `NAME=value`: an assignment's value is neither split nor globbed, and
                    // a `~` right after the `=` is expanded.
                    b.no_split = true;
                    b.braces.clear();
                    b.push('=');
                    self.pos += 1;
                    if self.peek() == Some('~') && !state.as_written {
                        self.tilde(state, b);
                    }
                }
                '{' | ',' | '}' if plain && !b.no_split => {
                    if c == '{' {
                        state.parsed.syntax.insert(Syntax::BRACE);
                        b.current.brace = true;
                    }
                    if !state.as_written {
                        b.braces.push(b.current.text.len());
                    }
                    b.push(c);
                    self.pos += 1;
                }
                '*' | '?' | '[' => {
                    if !b.no_split || !plain {
                        b.current.glob = true;
                    }
                    b.push(c);
                    self.pos += 1;
                }
                _ => {
                    b.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `~`, `~/…`: the home directory; `~+`: the working directory; `~-`: the previous one.
    fn tilde(&mut self, state: &mut State<'_>, b: &mut Builder) {
        self.pos += 1;
        let in_braces = !b.no_split && !b.braces.is_empty();
        let ends = |c: Option<char>| {
            matches!(
                c,
                None | Some('/' | ' ' | '\t' | '\n' | ';' | '&' | '|' | ')' | '<' | '>' | ':')
            ) || (in_braces && matches!(c, Some(',' | '}')))
        };
        let name = match self.peek() {
            Some('+') if ends(self.peek_at(1)) => Some("PWD"),
            Some('-') if ends(self.peek_at(1)) => Some("OLDPWD"),
            next if ends(next) => None,
            _ => {
                b.push('~');
                return;
            }
        };
        match name {
            Some(name) => {
                self.pos += 1;
                match state.lookup(name) {
                    Value::Set(value) => b.push_expansion(value, true),
                    _ => b.current.opaque = true,
                }
            }
            None => {
                if let Value::Set(home) = state.lookup("HOME") {
                    b.push_expansion(home, true);
                } else {
                    b.quoted = true;
                }
            }
        }
    }

    fn double_quoted(&mut self, state: &mut State<'_>, b: &mut Builder) {
        while let Some(c) = self.peek() {
            if state.halt {
                return;
            }
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    state.parsed.syntax.insert(Syntax::ESCAPE);
                    match self.peek() {
                        Some(next @ ('"' | '\\' | '$' | '`')) => {
                            b.push(next);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => b.push('\\'),
                    }
                }
                '$' if state.as_written => self.as_written(state, b, true, Self::dollar),
                '`' if state.as_written => self.as_written(state, b, true, Self::backtick),
                '$' => self.dollar(state, b, true),
                '`' => self.backtick(state, b, true),
                _ => {
                    b.push(c);
                    self.pos += 1;
                }
            }
        }
        state.parsed.syntax.insert(Syntax::UNTERMINATED);
    }

    /// An expansion (`read`: [`Self::dollar`] or [`Self::backtick`]) read to its end, its
    /// commands found as always, but its text kept as written: a parse [`as written`](parse_as_written).
    ///
    /// Only the outermost expansion's text is copied: inside it, a nested expansion in the words
    /// of a substitution's commands stands as `$…` (still a `$`: unknown to whoever reads the
    /// word), so the text is copied once, not once per level of nesting.
    fn as_written(
        &mut self,
        state: &mut State<'_>,
        b: &mut Builder,
        quoted: bool,
        read: fn(&mut Self, &mut State<'_>, &mut Builder, bool),
    ) {
        let start = self.pos;
        let mut discarded = Builder::default();
        if state.written_depth > 0 {
            read(self, state, &mut discarded, quoted);
            b.current.text.push_str("$…");
            return;
        }
        state.written_depth += 1;
        read(self, state, &mut discarded, quoted);
        state.written_depth -= 1;
        b.current
            .text
            .extend(self.chars.range(start, self.pos.min(self.end)));
    }

    fn dollar(&mut self, state: &mut State<'_>, b: &mut Builder, quoted: bool) {
        self.pos += 1; // the `$`
        match self.peek() {
            Some('(') => {
                // `$((…))` is arithmetic: its value is a number we do not compute, but the
                // substitutions inside it run. Read as `$( (…) )`, the same commands are found.
                let arithmetic = self.peek_at(1) == Some('(');
                self.pos += 1;
                if !self.enter(state) {
                    return;
                }
                let commands = self.commands(state, true, false);
                self.depth -= 1;
                self.substituted(state, b, commands, quoted, arithmetic);
            }
            Some('{') => {
                self.pos += 1;
                if !self.enter(state) {
                    return;
                }
                self.parameter(state, b, quoted);
                self.depth -= 1;
            }
            Some('\'') if !quoted => {
                // ANSI-C quoting, every escape bash decodes: `$'\x2d\x2dno-verify'` is
                // `--no-verify` to the program that runs.
                self.pos += 1;
                state.parsed.syntax.insert(Syntax::DOLLAR_QUOTE);
                b.quoted = true;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '\'' => break,
                        '\\' => {
                            if let Some(decoded) = self.ansi_c_escape() {
                                b.push(decoded);
                            }
                        }
                        other => b.push(other),
                    }
                }
            }
            Some('"') if !quoted => {
                // `$"…"`: a translatable string, otherwise double-quoted.
                self.pos += 1;
                state.parsed.syntax.insert(Syntax::DOLLAR_QUOTE);
                b.quoted = true;
                self.double_quoted(state, b);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let name = self.name();
                match state.lookup(&name) {
                    Value::Set(value) => b.push_expansion(value, quoted),
                    Value::Unset => {}
                    Value::Unknown => b.current.opaque = true,
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                // Positional and special parameters: unknown here.
                self.pos += 1;
                b.current.opaque = true;
            }
            _ => b.push('$'),
        }
    }

    /// The character an ANSI-C escape after its backslash stands for (bash's `$'…'`): `\n` and the
    /// other letters, `\NNN` octal, `\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\cX`; `None` for a lone
    /// backslash at the end.
    fn ansi_c_escape(&mut self) -> Option<char> {
        let escaped = self.peek()?;
        self.pos += 1;
        let number = |this: &mut Self, radix: u32, most: usize| -> Option<char> {
            let mut value: u32 = 0;
            let mut read = 0;
            while read < most
                && let Some(digit) = this.peek().and_then(|c| c.to_digit(radix))
            {
                value = value.saturating_mul(radix).saturating_add(digit);
                this.pos += 1;
                read += 1;
            }
            (read > 0).then(|| char::from_u32(value).unwrap_or('\u{fffd}'))
        };
        Some(match escaped {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '0'..='7' => {
                self.pos -= 1;
                number(self, 8, 3)?
            }
            'x' => number(self, 16, 2).unwrap_or('x'),
            'u' => number(self, 16, 4).unwrap_or('u'),
            'U' => number(self, 16, 8).unwrap_or('U'),
            'c' => {
                let control = self.peek()?;
                self.pos += 1;
                char::from_u32(u32::from(control) & 0x1f).unwrap_or(control)
            }
            other => other,
        })
    }

    /// The letters, digits and underscores from here: a parameter's name (`$NAME`, `${NAME…}`).
    fn name(&mut self) -> String {
        let mut name = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            name.push(c);
            self.pos += 1;
        }
        name
    }

    /// After a substitution's commands were read: its value if it can be worked out, and its
    /// commands for the guard.
    fn substituted(
        &mut self,
        state: &mut State<'_>,
        b: &mut Builder,
        commands: Vec<SimpleCommand>,
        quoted: bool,
        arithmetic: bool,
    ) {
        let as_written = state.as_written;
        let mut pwd = || match state.lookup("PWD") {
            Value::Set(value) => Some(value.to_string()),
            _ => None,
        };
        // As written, the value is not wanted: the text stands for itself.
        let value = if arithmetic || as_written {
            None
        } else {
            evaluate(&commands, &mut pwd)
        };
        match value {
            Some(value) => b.push_expansion(&value, quoted),
            None => b.current.opaque = true,
        }
        if state.halt {
            return;
        }
        match state.sink.as_mut() {
            Some(sink) => {
                if !sink.substitution(&commands, self.depth + 1) {
                    state.halt = true;
                    self.pos = self.end;
                }
                state.recycle(commands);
            }
            None => state.parsed.substitutions.push(commands),
        }
    }

    /// `${…}` after the `{`: `${NAME}`, `${NAME:-word}`, `${NAME:=word}`, `${NAME:+word}`,
    /// `${NAME:?word}` (with or without the colon) and `${NAME#pat}`, `##`, `%`, `%%`. Anything
    /// else is unknown.
    fn parameter(&mut self, state: &mut State<'_>, b: &mut Builder, quoted: bool) {
        let name = self.name();
        let mut operator = String::new();
        if self.peek() == Some(':') {
            operator.push(':');
            self.pos += 1;
        }
        if let Some(c) = self.peek().filter(|c| "-=?+#%/^,@".contains(*c)) {
            operator.push(c);
            self.pos += 1;
            if matches!(c, '#' | '%' | '/' | '^' | ',') && self.peek() == Some(c) {
                operator.push(c);
                self.pos += 1;
            }
        }
        let mut argument = Builder {
            no_split: true,
            ..Builder::default()
        };
        self.word_into(state, &mut argument, Mode::Brace);
        if self.peek() == Some('}') {
            self.pos += 1;
        }
        let argument = argument.current;
        if !is_name(&name) {
            // `${#…}`, `${!…}`, `${1}`, `${@}`: unknown here.
            b.current.opaque = true;
            return;
        }
        // `None`: unknown; `Some(None)`: unset.
        let value: Option<Option<String>> = match state.lookup(&name) {
            Value::Set(v) => Some(Some(v.to_string())),
            Value::Unset => Some(None),
            Value::Unknown => None,
        };
        let colon = operator.starts_with(':');
        let is_set = match &value {
            Some(Some(v)) => !colon || !v.is_empty(),
            _ => false,
        };
        let result: Option<String> = match (operator.trim_start_matches(':'), &value) {
            // `${x:1}`, `${x:0:3}`: a substring, at literal offsets.
            ("", Some(Some(v))) if colon && !argument.opaque => substring(v, &argument.text),
            ("", _) if !argument.text.is_empty() || colon => None,
            (_, None) => None,
            ("", Some(Some(v))) => Some(v.clone()),
            ("", _) => Some(String::new()),
            ("-" | "=", Some(Some(v))) if is_set => Some(v.clone()),
            ("-" | "=", _) => {
                let text = (!argument.opaque).then(|| argument.text.clone());
                if operator.ends_with('=') {
                    state.assign(&Word {
                        text: format!("{name}={}", argument.text),
                        ..argument.clone()
                    });
                }
                text
            }
            ("+", _) if is_set => (!argument.opaque).then(|| argument.text.clone()),
            ("+", _) => Some(String::new()),
            // Unset, the shell stops with an error: nothing runs.
            ("?", Some(Some(v))) if is_set => Some(v.clone()),
            ("#" | "##" | "%" | "%%", Some(Some(v))) if !argument.opaque => strip(
                v,
                &argument.text,
                argument.glob,
                &operator,
                &mut state.pattern_budget,
            ),
            // Case: `${x,,}`, `${x^^}`, `${x,}`, `${x^}` (every character, or the first).
            (op @ ("," | ",," | "^" | "^^"), Some(Some(v)))
                if argument.text.is_empty() && !argument.opaque =>
            {
                let upper = op.starts_with('^');
                let change = |c: char| -> String {
                    if upper {
                        c.to_uppercase().collect()
                    } else {
                        c.to_lowercase().collect()
                    }
                };
                Some(if op.len() == 2 {
                    v.chars().map(change).collect()
                } else {
                    let mut chars = v.chars();
                    chars
                        .next()
                        .map(|first| change(first) + chars.as_str())
                        .unwrap_or_default()
                })
            }
            // `${x/a/b}`, `${x//a/b}`: a literal pattern replaced (a glob stays unknown).
            (op @ ("/" | "//"), Some(Some(v))) if !argument.opaque && !argument.glob => {
                let (pattern, with) = argument
                    .text
                    .split_once('/')
                    .unwrap_or((&argument.text, ""));
                Some(match (pattern, op) {
                    ("", _) => v.clone(),
                    (_, "//") => v.replace(pattern, with),
                    _ => v.replacen(pattern, with, 1),
                })
            }
            _ => None,
        };
        match result {
            Some(value) => b.push_expansion(&value, quoted),
            None => b.current.opaque = true,
        }
    }

    fn backtick(&mut self, state: &mut State<'_>, b: &mut Builder, quoted: bool) {
        self.pos += 1;
        let mut body: Vec<char> = Vec::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => match self.peek() {
                    Some(next @ ('$' | '`' | '\\')) => {
                        body.push(next);
                        self.pos += 1;
                    }
                    Some('"') if quoted => {
                        body.push('"');
                        self.pos += 1;
                    }
                    _ => body.push('\\'),
                },
                other => body.push(other),
            }
        }
        if !self.enter(state) {
            return;
        }
        let mut inner = Lexer {
            chars: Text::Chars(&body),
            pos: 0,
            end: body.len(),
            depth: self.depth,
        };
        let commands = inner.commands(state, false, false);
        self.depth -= 1;
        if state.halt {
            self.pos = self.end;
            return;
        }
        self.substituted(state, b, commands, quoted, false);
    }
}

/// Ends a simple command; a command that only assigns (`D=~`, `export D=~`) records the values
/// for the words after it.
fn finish(words: &mut Vec<Word>, out: &mut Vec<SimpleCommand>, state: &mut State<'_>, top: bool) {
    if words.is_empty() {
        return;
    }
    let words = std::mem::replace(words, state.spare.pop().unwrap_or_default());
    let body = words
        .iter()
        .position(|w| !matches!(w.text.as_str(), "then" | "do" | "else" | "{" | "!"))
        .map_or(&words[..0], |start| &words[start..]);
    match body.first().map(|w| w.text.as_str()) {
        Some(_) if body.iter().all(|w| is_assignment(&w.text)) => {
            body.iter().for_each(|w| state.assign(w));
        }
        Some("export" | "declare" | "typeset" | "local" | "readonly") => {
            body[1..]
                .iter()
                .filter(|w| is_assignment(&w.text))
                .for_each(|w| state.assign(w));
        }
        Some("for" | "select") => {
            if let Some(name) = body.get(1).filter(|w| is_name(&w.text)) {
                state.assigned.insert(name.text.clone(), None);
            }
        }
        Some("read" | "mapfile" | "readarray") => {
            for name in body[1..].iter().filter(|w| is_name(&w.text)) {
                state.assigned.insert(name.text.clone(), None);
            }
        }
        // `printf -v NAME …`: NAME gets a value computed at run time.
        Some("printf") => {
            let named = body.windows(2).find(|pair| pair[0].text == "-v");
            if let Some(name) = named.map(|pair| &pair[1]).filter(|w| is_name(&w.text)) {
                state.assigned.insert(name.text.clone(), None);
            }
        }
        _ => {}
    }
    let command = SimpleCommand { words };
    if state.halt {
        return;
    }
    match state.sink.as_mut() {
        Some(sink) if top => {
            if !sink.command(&command) {
                state.halt = true;
            }
            let mut words = command.words;
            words.clear();
            state.spare.push(words);
        }
        _ => out.push(command),
    }
}

/// `${value#pattern}` and friends. `None` when the pattern cannot be matched here (a bracket
/// expression) or the matcher's budget is spent.
fn strip(
    value: &str,
    pattern: &str,
    wildcards: bool,
    operator: &str,
    budget: &mut usize,
) -> Option<String> {
    if wildcards && pattern.contains('[') {
        return None;
    }
    let text: Vec<char> = value.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    let n = text.len();
    let prefix = operator.starts_with('#');
    let longest = operator.len() == 2;
    let cuts: Box<dyn Iterator<Item = usize>> = match (prefix, longest) {
        (true, false) | (false, true) => Box::new(0..=n),
        _ => Box::new((0..=n).rev()),
    };
    for cut in cuts {
        let part = if prefix { &text[..cut] } else { &text[cut..] };
        if matches(part, &pattern, wildcards, budget)? {
            let rest = if prefix { &text[cut..] } else { &text[..cut] };
            return Some(rest.iter().collect());
        }
    }
    Some(value.to_string())
}

/// Glob match with `*` and `?`, iterative (with the usual single back-track point), counting its
/// steps against `budget`.
fn matches(text: &[char], pattern: &[char], wildcards: bool, budget: &mut usize) -> Option<bool> {
    if !wildcards {
        return Some(text == pattern);
    }
    let (mut t, mut p) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        *budget = budget.checked_sub(1)?;
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return Some(false),
            },
        }
    }
    Some(pattern[p.min(pattern.len())..].iter().all(|&c| c == '*'))
}

/// A program that runs the command after it: `sudo -u x make`, `env -i A=1 make`, `timeout 5 make`.
#[derive(Debug)]
pub struct Wrapper {
    pub name: &'static str,
    /// Its options that take the next word as their value (`-u` in `sudo -u x`).
    pub value_options: &'static [&'static str],
    /// Operands between its options and the command (`timeout`'s duration).
    pub operands: usize,
}

/// The one table of command wrappers, for the Bash guard (what really runs) and for command
/// recognition (which program a hook entry runs, however the user wrapped it).
pub const WRAPPERS: &[Wrapper] = &[
    wrapper("sudo", SUDO_VALUE_OPTIONS),
    wrapper("doas", SUDO_VALUE_OPTIONS),
    wrapper(
        "env",
        &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
    ),
    wrapper("nice", &["-n", "--adjustment"]),
    wrapper("xargs", &["-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E"]),
    Wrapper {
        operands: 1,
        ..wrapper("timeout", &["-s", "-k", "--signal", "--kill-after"])
    },
    wrapper("exec", &["-a"]),
    wrapper(
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
    ),
    wrapper(
        "ionice",
        &[
            "-c",
            "-n",
            "-p",
            "-P",
            "-u",
            "--class",
            "--classdata",
            "--pid",
            "--pgid",
            "--uid",
        ],
    ),
    wrapper("command", &[]),
    wrapper("builtin", &[]),
    wrapper("nohup", &[]),
    wrapper("time", &["-o", "-f", "--output", "--format"]),
    wrapper("setsid", &[]),
];

/// sudo's (and doas's) options that take the next word, short and long.
const SUDO_VALUE_OPTIONS: &[&str] = &[
    "-u",
    "-g",
    "-C",
    "-h",
    "-p",
    "-r",
    "-t",
    "-U",
    "-D",
    "-R",
    "-T",
    "--user",
    "--group",
    "--close-from",
    "--host",
    "--prompt",
    "--role",
    "--type",
    "--other-user",
    "--chdir",
    "--chroot",
    "--command-timeout",
];

/// `${x:OFFSET}` or `${x:OFFSET:LENGTH}` of `value`, for literal integers (a negative offset
/// counts from the end, a negative length stops that far from it); `None` for anything else.
fn substring(value: &str, spec: &str) -> Option<String> {
    let (offset, length) = match spec.split_once(':') {
        Some((offset, length)) => (offset, Some(length)),
        None => (spec, None),
    };
    let chars: Vec<char> = value.chars().collect();
    let len = i64::try_from(chars.len()).ok()?;
    let number = |text: &str| text.trim().parse::<i64>().ok();
    let offset = if offset.trim().is_empty() {
        0
    } else {
        number(offset)?
    };
    let start = if offset < 0 {
        (len + offset).max(0)
    } else {
        offset.min(len)
    };
    let end = match length.map(number) {
        None => len,
        Some(None) => return None,
        Some(Some(l)) if l < 0 => (len + l).max(start),
        Some(Some(l)) => start.saturating_add(l).min(len),
    };
    let (start, end) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    Some(chars.get(start..end)?.iter().collect())
}

const fn wrapper(name: &'static str, value_options: &'static [&'static str]) -> Wrapper {
    Wrapper {
        name,
        value_options,
        operands: 0,
    }
}

/// The last component of a program's path: `/usr/bin/env` → `env`.
pub fn basename(program: &str) -> &str {
    match program.bytes().rposition(|b| b == b'/') {
        Some(slash) => &program[slash + 1..],
        None => program,
    }
}

impl Wrapper {
    /// Whether `option` takes the next word as its value: one of the value options, or a
    /// cluster of short options ending in one (`env -iu X`: `-u`'s value is `X`; in `-uX` it is
    /// attached).
    fn takes_next_word(&self, option: &str) -> bool {
        if self.value_options.contains(&option) {
            return true;
        }
        let Some(cluster) = option.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
            return false;
        };
        for (at, flag) in cluster.char_indices() {
            if self.value_options.contains(&format!("-{flag}").as_str()) {
                return at + flag.len_utf8() == cluster.len();
            }
        }
        false
    }

    /// The wrapper `program` is (by its base name), if it is one.
    pub fn of(program: &str) -> Option<&'static Wrapper> {
        let name = basename(program);
        WRAPPERS.iter().find(|w| w.name == name)
    }

    /// How many of `args` (the words after the wrapper's name) are its own: options (with their
    /// values), assignments among them (`env -i A=1`, each index handed to `assignment`), then
    /// its operands. The wrapped command starts at the index returned (`args.len()` at most).
    pub fn own_words<S: AsRef<str>>(&self, args: &[S], mut assignment: impl FnMut(usize)) -> usize {
        let mut i = 0;
        while let Some(option) = args.get(i).map(AsRef::as_ref) {
            if option.starts_with('-') && option.len() > 1 {
                i += if self.takes_next_word(option) { 2 } else { 1 };
            } else if is_assignment(option) {
                assignment(i);
                i += 1;
            } else {
                break;
            }
        }
        (i + self.operands).min(args.len())
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
    fn parameter_operators_and_ansi_c_escapes_are_worked_out() {
        let cases: &[(&str, &str)] = &[
            ("echo ${HOME:0}", "/home/u"),
            ("echo ${HOME:1:4}", "home"),
            ("echo ${HOME: -1}", "u"),
            ("echo ${HOME:6:-0}", ""),
            ("echo ${HOME/home/x}", "/x/u"),
            ("echo ${HOME//o/0}", "/h0me/u"),
            ("echo ${HOME^^}", "/HOME/U"),
            ("echo ${HOME^}", "/home/u"),
            ("X=ab; echo ${X^}", "Ab"),
            ("X=AB; echo ${X,,}", "ab"),
            ("echo $'\\x2d\\055\\u002d\\e[0m\\cA'", "---\u{1b}[0m\u{1}"),
        ];
        for (src, want) in cases {
            let last = words(src).pop().unwrap_or_default();
            assert_eq!(
                last.get(1).map(String::as_str).unwrap_or(""),
                *want,
                "{src}"
            );
        }
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
            // Brace expansion, field splitting, parameter forms, assignments.
            ("rm ~/{*,.*}", &[&["rm", "/home/u/*", "/home/u/.*"]]),
            ("echo {a,b}{c,d}", &[&["echo", "ac", "ad", "bc", "bd"]]),
            ("echo {a,{b,c}}x", &[&["echo", "ax", "bx", "cx"]]),
            (
                "echo {a} {} '{a,b}' x,y",
                &[&["echo", "{a}", "{}", "{a,b}", "x,y"]],
            ),
            ("echo {/tmp,~}", &[&["echo", "/tmp", "/home/u"]]),
            ("git${IFS}commit", &[&["git", "commit"]]),
            ("echo \"${IFS}\"", &[&["echo", " \t\n"]]),
            (
                "echo ${HOME%/u} ${HOME#/} ${HOME%%/*} ${HOME##*/}",
                &[&["echo", "/home", "home/u", "u"]],
            ),
            (
                "echo ${UNSET:-a b} \"${UNSET:-a b}\"",
                &[&["echo", "a", "b", "a b"]],
            ),
            (
                "D=~/x; echo $D ~+",
                &[&["D=/home/u/x"], &["echo", "/home/u/x", "/home/u/p"]],
            ),
            (
                "X='a  b'; echo $X \"$X\" $EMPTY ''",
                &[&["X=a  b"], &["echo", "a", "b", "a  b", ""]],
            ),
            ("cat <<EOF\nrm -rf /\nEOF\nls", &[&["cat"], &["ls"]]),
            ("echo $(( 1 + 2 ))", &[&["echo", ""]]),
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
        let bodies: Vec<Vec<Vec<String>>> = parsed
            .substitutions
            .iter()
            .map(|commands| {
                commands
                    .iter()
                    .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
                    .collect()
            })
            .collect();
        assert_eq!(
            bodies,
            [
                vec![vec!["git", "commit", "--no-verify"]],
                vec![vec!["rm", "-rf", "/"]]
            ]
        );
        assert!(parsed.commands[0].words[1].opaque);
    }

    #[test]
    fn globs_are_flagged_only_when_unquoted() {
        let parsed = parse("rm -rf ~/* '*'", &vars);
        let words = &parsed.commands[0].words;
        assert!(words[2].glob);
        assert!(!words[3].glob);
    }

    /// As written: quotes and escapes removed, nothing expanded, the words of every simple
    /// command split where the shell splits them.
    #[test]
    fn as_written_keeps_expansions_as_they_are_written() {
        let cases: &[(&str, &[&[&str]])] = &[
            (
                "exec \"$HOME/bin/amplihack-hooks\" stop",
                &[&["exec", "$HOME/bin/amplihack-hooks", "stop"]],
            ),
            ("~/x ${A:-b c} {a,b}", &[&["~/x", "${A:-b c}", "{a,b}"]]),
            (
                "echo $(cd x && pwd)/y `id`",
                &[&["echo", "$(cd x && pwd)/y", "`id`"]],
            ),
            ("\"/x/\\$weird\\`\" a'b c'", &[&["/x/$weird`", "ab c"]]),
            (
                "true&&cd tools;sh a.sh|sh b.sh",
                &[
                    &["true"],
                    &["cd", "tools"],
                    &["sh", "a.sh"],
                    &["sh", "b.sh"],
                ],
            ),
            ("sh <tools/x.sh 2>&1 >out", &[&["sh"]]),
        ];
        // A substitution's commands, with a nested expansion inside them standing as `$…`.
        let parsed = parse_as_written("echo $(sh $(pwd)/a.sh \"$X\" tools/b.sh)");
        let words = |list: &[SimpleCommand]| -> Vec<String> {
            list[0].words.iter().map(|w| w.text.clone()).collect()
        };
        // Innermost first.
        assert_eq!(words(&parsed.substitutions[0]), ["pwd"]);
        assert_eq!(
            words(&parsed.substitutions[1]),
            ["sh", "$…/a.sh", "$…", "tools/b.sh"]
        );
        for (src, expected) in cases {
            let got: Vec<Vec<String>> = parse_as_written(src)
                .commands
                .into_iter()
                .map(|c| c.words.into_iter().map(|w| w.text).collect())
                .collect();
            assert_eq!(got, *expected, "{src}");
        }
    }

    /// What the line used besides words, for deciding whether it needs a shell.
    #[test]
    fn syntax_beyond_words_is_reported() {
        let none = Syntax::default();
        let cases: &[(&str, Syntax)] = &[
            ("node 'a b' \"c\" --x=1", none),
            ("a; b", Syntax::OPERATOR),
            ("a &", Syntax::OPERATOR),
            ("a\nb", Syntax::OPERATOR),
            ("cat > /dev/null", Syntax::REDIRECTION),
            ("cat <<EOF\nx\nEOF", Syntax::REDIRECTION | Syntax::OPERATOR),
            ("node a.js # note", Syntax::COMMENT),
            ("node \\x", Syntax::ESCAPE),
            ("node \"a\\\"b\"", Syntax::ESCAPE),
            ("node 'open", Syntax::UNTERMINATED),
            ("node \"open", Syntax::UNTERMINATED),
            ("node {a,b}.js", Syntax::BRACE),
            ("node \"{a,b}\" x,y}", none),
            ("node $'a\\n' $\"b\"", Syntax::DOLLAR_QUOTE),
        ];
        for (src, expected) in cases {
            assert_eq!(parse(src, &vars).syntax, *expected, "{src}");
            assert_eq!(parse_as_written(src).syntax, *expected, "{src}");
        }
    }

    /// A parse as written hands redirection targets and here-document bodies to the sink.
    #[test]
    fn redirections_and_heredocs_reach_the_sink() {
        #[derive(Default)]
        struct Seen(Vec<String>);
        impl Sink for Seen {
            fn substitution(&mut self, _: &[SimpleCommand], _: usize) -> bool {
                true
            }
            fn command(&mut self, command: &SimpleCommand) -> bool {
                let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
                self.0.push(format!("command {}", words.join(" ")));
                true
            }
            fn redirection(&mut self, target: &Word) {
                self.0.push(format!("redirection {}", target.text));
            }
            fn heredoc(&mut self, body: &str) {
                self.0.push(format!("heredoc {body:?}"));
            }
        }
        let mut seen = Seen::default();
        parse_into_as_written(
            "sh <tools/x.sh >\"$OUT\"; bash <<'EOF'\n./t.sh a\nEOF\n",
            &mut seen,
            0,
        );
        assert_eq!(
            seen.0,
            [
                "redirection tools/x.sh",
                "redirection $OUT",
                "command sh",
                "command bash",
                "heredoc \"./t.sh a\\n\"",
            ]
        );
        // An expanding parse hands neither.
        let mut seen = Seen::default();
        parse_into("sh <x <<EOF\ny\nEOF\n", &vars, &mut seen, 0);
        assert_eq!(seen.0, ["command sh"]);
    }
}
