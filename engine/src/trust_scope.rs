//! What trusting a project's plugins covers, and where their handlers run: one resolution that
//! `amplihack hooks trust` hashes and every hook call checks before it runs anything, so the two
//! cannot disagree.
//!
//! * **Where**: a project's handlers run in the project root (the directory holding `.amplifier`
//!   or `.amcp`), with `CLAUDE_PROJECT_DIR` and `AMPLIFIER_PROJECT_DIR` set to it, whichever
//!   directory the host started in ([`working_dir`]): their relative paths resolve where trust
//!   resolved them, never in a nested clone.
//! * **Every file under the project's `.amplifier/hooks/`** (each plugin, the level's own
//!   `hooks.json` and whatever it runs from there, `__pycache__` included; `.git` aside) **and
//!   `.amcp/`**, at most [`MAX_FILES_PER_PLUGIN`] files for each plugin directory.
//! * **Every file a handler's command names** inside the project, the command read as the shell
//!   splits it (the Bash guard's lexer: after `;` or `&&`, a redirection's target, inside `$(…)`,
//!   a here-document's body): relative to the project root or
//!   to a `cd DIR` before it (in a `sh -c '…'` script as well), or under `${CLAUDE_PLUGIN_ROOT}`, `${AMPLIFIER_HOOKS_DIR}`,
//!   `$CLAUDE_PROJECT_DIR`, `$AMPLIFIER_PROJECT_DIR` or `$AMCP_PROJECT_DIR` (`..` resolved); for a
//!   `.py` file also the Python files beside it (Python imports from the script's directory).
//! * **An AMCP `function = "pkg.mod.fn"`, or `python3 -m pkg.mod`**: the module's top-level
//!   package, whole (its `__init__.py`, its `__pycache__`), and the Python files of the directory
//!   it is imported from (the project root: it is first on `sys.path`).
//!
//! Refused ([`Refusal`], which names the file, the problem and the fix), so that nothing runs
//! unhashed: a link (file or directory) that resolves outside the project, a named file outside
//! it, a FIFO or device, a plugin over [`MAX_FILES_PER_PLUGIN`] files, nesting past [`MAX_DEPTH`],
//! a command of more than [`MAX_WORDS`] words, a hooks directory over
//! [`discovery::MAX_LEVEL_ENTRIES`] entries.
//!
//! A project's handlers also run with `PYTHONDONTWRITEBYTECODE=1`, so running a trusted Python plugin does not
//! add `__pycache__` files that would withdraw its trust.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use amplihack_protocol::shell::{self, SimpleCommand, Word};
use amplihack_state::{StateDir, trust};

use crate::dialects::amcp;
use crate::discovery::{self, Level, Plugin};

mod runners;

/// A plugin directory with more files than this is refused: each is checked on every call.
pub const MAX_FILES_PER_PLUGIN: usize = 5_000;
/// Directories nested deeper than this (a link loop, say) are refused.
pub const MAX_DEPTH: usize = 32;
/// A command of more words than this is refused: trust could not read all it names.
pub const MAX_WORDS: usize = 1_024;

/// Directories whose contents no handler runs.
const SKIPPED_DIRS: &[&str] = &[".git"];

/// Why a project's plugins cannot be trusted as they are, whatever was trusted before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub file: PathBuf,
    pub problem: String,
    pub fix: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; {}", self.file.display(), self.problem, self.fix)
    }
}

impl std::error::Error for Refusal {}

/// Why a project's plugins do not run.
#[derive(Debug, Clone, PartialEq)]
pub enum NotRun {
    /// What they run cannot be covered by trust (a link outside, a cap passed).
    Refused(Refusal),
    /// Covered, but not (or no longer) trusted.
    Untrusted(trust::Untrusted),
}

/// The project whose hooks directory is `hooks_dir` (`<project>/.amplifier/hooks`).
pub fn project_of(hooks_dir: &Path) -> PathBuf {
    hooks_dir
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Where a plugin's handlers run, and what `CLAUDE_PROJECT_DIR` says for them: a project's
/// plugins in their project's root (where trust resolved what they name); `None` for the user's,
/// which run where the host started.
pub fn working_dir(plugin: &Plugin) -> Option<PathBuf> {
    (plugin.level == Level::Project).then(|| project_of(&plugin.hooks_dir))
}

/// Checks the project's plugins against what was trusted: the files they run, resolved once.
/// `Ok` holds the plugins that stay held back: each runs a part trust cannot pin that the user
/// has not accepted by name (`amplihack hooks trust --accept NAME`).
pub fn check(state: &StateDir, project: &Path, plugins: &[Plugin]) -> Result<Vec<String>, NotRun> {
    let scope = scope(project, plugins).map_err(NotRun::Refused)?;
    let parsed: Vec<(PathBuf, String)> = plugins
        .iter()
        .flat_map(|p| p.parsed.iter().cloned())
        .collect();
    trust::check(state, project, &scope.files, &parsed).map_err(NotRun::Untrusted)?;
    Ok(scope.held_back(&trust::accepted(state, project)))
}

/// The files trust covers for `plugins` of `project`, sorted, each once; or why it cannot.
pub fn files_to_trust(project: &Path, plugins: &[Plugin]) -> Result<Vec<PathBuf>, Refusal> {
    scope(project, plugins).map(|scope| scope.files)
}

/// A part of a handler's command trust cannot pin: what it is, as written, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unpinned {
    pub part: String,
    pub why: String,
}

impl fmt::Display for Unpinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.part, self.why)
    }
}

/// One handler as trust reads it: the files its command names that trust pinned (beyond its
/// plugin's own directory, pinned whole) and the parts it cannot pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerScope {
    pub plugin: String,
    pub command: String,
    pub pinned: Vec<PathBuf>,
    pub unpinned: Vec<Unpinned>,
}

/// What trusting a project's plugins covers: every file, sorted, once; and each handler's part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub files: Vec<PathBuf>,
    pub handlers: Vec<HandlerScope>,
}

impl Scope {
    /// Per plugin with a part trust cannot pin, those parts (sorted, each once): what the user
    /// accepts by the plugin's name, and what must stay as accepted.
    pub fn unpinned_by_plugin(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for handler in &self.handlers {
            for part in &handler.unpinned {
                let text = part.to_string();
                match out.iter_mut().find(|(name, _)| *name == handler.plugin) {
                    Some((_, parts)) => parts.push(text),
                    None => out.push((handler.plugin.clone(), vec![text])),
                }
            }
        }
        for (_, parts) in &mut out {
            parts.sort();
            parts.dedup();
        }
        out
    }

    /// The plugins whose unpinnable parts the user has not accepted (all of them, by name), in
    /// `accepted` (plugin → the parts accepted then).
    pub fn held_back(
        &self,
        accepted: &std::collections::BTreeMap<String, Vec<String>>,
    ) -> Vec<String> {
        self.unpinned_by_plugin()
            .into_iter()
            .filter(|(name, parts)| {
                !accepted
                    .get(name)
                    .is_some_and(|ok| parts.iter().all(|p| ok.contains(p)))
            })
            .map(|(name, _)| name)
            .collect()
    }
}

/// What trust covers for `plugins` of `project` ([`Scope`]), or why it cannot.
pub fn scope(project: &Path, plugins: &[Plugin]) -> Result<Scope, Refusal> {
    if let Some(overfull) = plugins.iter().find(|p| p.name == discovery::OVERFULL) {
        return Err(match &overfull.config {
            Err(e) => Refusal {
                file: e.file.clone(),
                problem: e.problem.clone(),
                fix: e.fix.clone(),
            },
            Ok(_) => Refusal {
                file: overfull.file.clone(),
                problem: "holds too many entries".into(),
                fix: "remove what is not a plugin".into(),
            },
        });
    }
    let mut tree = Tree::new(project);
    let mut walked: Vec<PathBuf> = Vec::new();
    for plugin in plugins {
        tree.files.push(plugin.file.clone());
        let dirs = if plugin.is_amcp() {
            vec![plugin.root.clone()]
        } else {
            vec![plugin.hooks_dir.clone()]
        };
        for dir in dirs {
            if !walked.contains(&dir) {
                tree.walk_top(&dir)?;
                walked.push(dir);
            }
        }
        if let Ok(config) = &plugin.config {
            for handler in config.groups.iter().flat_map(|g| &g.handlers) {
                let before = tree.files.len();
                tree.handlers.push(HandlerScope {
                    plugin: plugin.name.clone(),
                    command: handler.command.clone(),
                    pinned: Vec::new(),
                    unpinned: Vec::new(),
                });
                tree.named_files(plugin, &handler.command)?;
                if let Some(function) = amcp::function_of(&handler.command) {
                    tree.python_module(&[project.to_path_buf()], function)?;
                }
                let mut pinned = tree.files[before..].to_vec();
                pinned.sort();
                pinned.dedup();
                if let Some(last) = tree.handlers.last_mut() {
                    last.pinned = pinned;
                    last.unpinned.sort();
                    last.unpinned.dedup();
                }
            }
        }
    }
    let mut files = tree.files;
    files.sort();
    files.dedup();
    Ok(Scope {
        files,
        handlers: tree.handlers,
    })
}

/// The project being resolved, and the files found so far.
struct Tree<'a> {
    root: &'a Path,
    /// The root with links resolved: what "inside the project" means for a link.
    real_root: PathBuf,
    files: Vec<PathBuf>,
    /// Each handler read so far: what it pinned and what it cannot.
    handlers: Vec<HandlerScope>,
    /// The npm script being read: its programs come from this `node_modules/.bin` first.
    node_bin: Option<PathBuf>,
    /// Python modules already resolved (`dir`, top-level name), and the files read for imports.
    python_seen: Vec<(PathBuf, String)>,
    python_read: usize,
}

/// Files left for one plugin directory.
struct Budget<'a> {
    owner: &'a Path,
    left: usize,
}

/// Where a relative word is resolved from.
#[derive(Clone)]
enum Base {
    /// A directory derived from the project (its root, a plugin's, a `cd` inside them).
    Project(PathBuf),
    /// A directory the command names outright (`cd /usr/lib`): the system's, not the project's.
    Foreign,
    /// A `cd` trust cannot follow (`cd "$TMPDIR"`).
    Unknown,
}

fn refuse(file: &Path, problem: impl Into<String>, fix: impl Into<String>) -> Refusal {
    Refusal {
        file: file.to_path_buf(),
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// `..` and `.` resolved without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `${VAR}`, `$VAR` (a whole name) and `${VAR:-default}` (`-`, `:=`, `=`: the variable is set,
/// so its value) replaced by `value`.
fn substitute(word: &str, var: &str, value: &str) -> String {
    let word = word.replace(&format!("${{{var}}}"), value);
    let word = with_defaults(&word, var, value);
    let bare = format!("${var}");
    let mut out = String::with_capacity(word.len());
    let mut rest = word.as_str();
    while let Some(at) = rest.find(&bare) {
        let after = &rest[at + bare.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&bare);
        } else {
            out.push_str(value);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `${VAR:-…}`, `${VAR-…}`, `${VAR:=…}`, `${VAR=…}` of a variable that is set: its value.
fn with_defaults(word: &str, var: &str, value: &str) -> String {
    let open = format!("${{{var}");
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(at) = rest.find(&open) {
        let after = &rest[at + open.len()..];
        let op = [":-", ":=", "-", "="]
            .into_iter()
            .find(|op| after.starts_with(op));
        // The matching `}`, past nested `${…}`.
        let end = op.and_then(|_| {
            let mut depth = 0usize;
            for (i, c) in after.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => return Some(i),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            None
        });
        out.push_str(&rest[..at]);
        match end {
            Some(end) if !value.is_empty() => {
                out.push_str(value);
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&open);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A command trust cannot read all of.
fn too_long(plugin: &Plugin) -> Refusal {
    refuse(
        &plugin.file,
        format!(
            "has a command of more than {MAX_WORDS} words, or nested more than 4 deep (`sh -c`, here-documents) or {} deep (`$(…)`)",
            shell::MAX_NESTING
        ),
        "move it into a script in the plugin's directory",
    )
}

/// One command line being read for [`Tree::command`]: where its relative words resolve from
/// (a `cd` in it moves that for the commands after it) and the first refusal, which stops it.
struct Line<'t, 'a> {
    tree: &'t mut Tree<'a>,
    plugin: &'t Plugin,
    /// The variables a word may name a project path by, with their values.
    vars: Vec<(&'static str, String)>,
    base: Base,
    depth: usize,
    /// Words read so far, against [`MAX_WORDS`].
    words: usize,
    failed: Option<Refusal>,
    /// Directories `PYTHONPATH=…` put on Python's path, for the commands after it.
    pythonpath: Vec<PathBuf>,
}

impl Line<'_, '_> {
    /// `word` with the variables trust follows replaced (`${VAR:-default}` too, and `$PWD` as
    /// the directory the command runs in), and whether any was.
    fn resolve(&self, word: &str) -> (String, bool) {
        let mut resolved = word.to_string();
        let pwd = match &self.base {
            Base::Project(dir) => Some(dir.to_string_lossy().into_owned()),
            _ => None,
        };
        for (var, value) in self
            .vars
            .iter()
            .map(|(v, value)| (*v, value.as_str()))
            .chain(pwd.as_deref().map(|dir| ("PWD", dir)))
        {
            resolved = substitute(&resolved, var, value);
        }
        let derived = resolved != word;
        (resolved, derived)
    }

    /// `result`'s refusal kept, and whether to read on.
    fn keep(&mut self, result: Result<(), Refusal>) -> bool {
        match result {
            Ok(()) => self.failed.is_none(),
            Err(refusal) => {
                self.failed.get_or_insert(refusal);
                false
            }
        }
    }

    /// A part of this command trust cannot pin, recorded on the handler being read.
    fn note(&mut self, part: &str, why: impl Into<String>) {
        self.tree.note(part, why);
    }

    /// One simple command's words.
    fn simple(&mut self, words: &[Word]) -> Result<(), Refusal> {
        self.words += words.len();
        if self.words > MAX_WORDS {
            return Err(too_long(self.plugin));
        }
        self.run(words)
    }

    /// A command as the shell runs it: assignments before it, then its program, read by what
    /// the program is (a wrapper, a shell, Python, a runner; `cd` moves the base).
    fn run(&mut self, words: &[Word]) -> Result<(), Refusal> {
        let mut at = 0;
        while let Some(word) = words.get(at).filter(|w| shell::is_assignment(&w.text)) {
            self.assign(&word.text)?;
            at += 1;
        }
        let Some(program) = words.get(at) else {
            return Ok(());
        };
        let args = &words[at + 1..];
        if program.text.is_empty() {
            return self.words_named(args);
        }
        // A program named by a path (`./x`, `${CLAUDE_PLUGIN_ROOT}/run.sh`) is a file it runs.
        if program.text.contains(['/', '$']) {
            self.word(program, true)?;
        }
        let name = shell::basename(&program.text).to_string();
        if let Some(node_bin) = &self.tree.node_bin
            && !program.text.contains('/')
            && node_bin.join(&name).exists()
        {
            let part = program.text.clone();
            self.note(
                &part,
                "a program of node_modules/.bin (an npm script runs it from there), whose package trust does not pin",
            );
        }
        match name.as_str() {
            "cd" | "pushd" => {
                self.cd(args);
                Ok(())
            }
            "env" => self.env(args),
            "export" | "declare" | "typeset" | "readonly" | "local" => {
                for word in args.iter().filter(|w| shell::is_assignment(&w.text)) {
                    self.assign(&word.text)?;
                }
                Ok(())
            }
            "." | "source" => self.words_with_file(args),
            name if SHELLS.contains(&name) => self.shell(args),
            name if is_python(name) => self.python(args),
            name if runners::RUNNERS.iter().any(|(n, _)| *n == name) => self.runner(name, args),
            name => match shell::Wrapper::of(name) {
                Some(wrapper) => {
                    let mut assigned = Vec::new();
                    let own = wrapper.own_words(args, |i| assigned.push(i));
                    for i in assigned {
                        self.assign(&args[i].text)?;
                    }
                    self.run(&args[own..])
                }
                None => self.words_named(args),
            },
        }
    }

    /// Each word as a file it may name.
    fn words_named(&mut self, words: &[Word]) -> Result<(), Refusal> {
        for word in words {
            self.word(word, false)?;
        }
        Ok(())
    }

    /// The first word a file (`source FILE`, `sh FILE`), the rest as words.
    fn words_with_file(&mut self, words: &[Word]) -> Result<(), Refusal> {
        if let Some((file, rest)) = words.split_first() {
            self.word(file, true)?;
            self.words_named(rest)?;
        }
        Ok(())
    }

    /// One word: the file it names pinned; or, when it is built at run time (a variable trust
    /// does not follow, a substitution, a pattern, braces, a glob trust cannot expand), noted.
    /// `file`: the word is a file the program reads (a script), whatever it looks like.
    fn word(&mut self, word: &Word, file: bool) -> Result<(), Refusal> {
        let text = word.text.as_str();
        if text.is_empty() || (text.starts_with('-') && !file) {
            return Ok(());
        }
        let (resolved, derived) = self.resolve(text);
        let pathish = file || resolved.contains('/');
        if let Some(why) = unresolved(&resolved) {
            if pathish {
                self.note(text, why);
            }
            return Ok(());
        }
        if word.brace && is_brace(&resolved) {
            if pathish || resolved.contains(['.', '/']) {
                self.note(
                    text,
                    "brace expansion: the files it names are made at run time",
                );
            }
            return Ok(());
        }
        if word.glob && resolved.contains(['*', '?', '[']) {
            return self.glob(text, &resolved);
        }
        if let Base::Unknown = self.base
            && !Path::new(&resolved).is_absolute()
            && (file || resolved.contains(['/', '.']))
        {
            self.note(
                text,
                "relative to a directory trust cannot follow (a `cd` to a variable)",
            );
            return Ok(());
        }
        self.tree.named_word(&self.base, &resolved, derived, file)
    }

    /// A glob in the last part of a path inside the project: every file it matches now is
    /// pinned, and a file that matches later is a file added (trust withdrawn). Elsewhere, noted.
    fn glob(&mut self, text: &str, resolved: &str) -> Result<(), Refusal> {
        let path = Path::new(resolved);
        let (dir, pattern) = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => (dir, name.to_string_lossy().into_owned()),
            _ => (Path::new(""), resolved.to_string()),
        };
        let dir = match (&self.base, dir.is_absolute()) {
            (_, true) => normalize(dir),
            (Base::Project(from), false) => normalize(&from.join(dir)),
            _ => {
                self.note(text, "a glob in a directory trust cannot follow");
                return Ok(());
            }
        };
        if dir.to_string_lossy().contains(['*', '?', '['])
            || pattern.contains('[')
            || !dir.starts_with(self.tree.root)
        {
            if dir.starts_with(self.tree.root) || !Path::new(resolved).is_absolute() {
                self.note(
                    text,
                    "a glob trust cannot expand (only `*` and `?` in a file name)",
                );
            }
            return Ok(());
        }
        let mut names: Vec<String> = read_dir(&dir)?
            .iter()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| fnmatch(&pattern, name))
            .collect();
        names.sort();
        for name in names {
            let file = dir.join(name).to_string_lossy().into_owned();
            self.tree.named_word(&self.base, &file, true, true)?;
        }
        Ok(())
    }

    /// `NAME=value`: `BASH_ENV` and `ENV` name a file the shell reads first, `PYTHONPATH`
    /// directories Python imports from; the loaders' variables (`NODE_OPTIONS`, `LD_PRELOAD`, …)
    /// are noted; any other value is a word that may name a file.
    fn assign(&mut self, assignment: &str) -> Result<(), Refusal> {
        let Some((name, value)) = shell::split_assignment(assignment) else {
            return Ok(());
        };
        let word = Word {
            text: value.to_string(),
            glob: false,
            opaque: false,
            brace: false,
        };
        match name {
            "BASH_ENV" | "ENV" | "PYTHONSTARTUP" => self.word(&word, true),
            "PYTHONPATH" => {
                for part in value.split(':').filter(|p| !p.is_empty()) {
                    let (resolved, _) = self.resolve(part);
                    match (&self.base, unresolved(&resolved)) {
                        (_, Some(why)) => self.note(assignment, why),
                        (_, None) if Path::new(&resolved).is_absolute() => {
                            self.pythonpath.push(normalize(Path::new(&resolved)));
                        }
                        (Base::Project(from), None) => {
                            let dir = normalize(&from.join(&resolved));
                            self.pythonpath.push(dir);
                        }
                        (_, None) => self.note(
                            assignment,
                            "relative to a directory trust cannot follow (a `cd` to a variable)",
                        ),
                    }
                }
                Ok(())
            }
            name if LOADER_VARS.contains(&name) => {
                self.note(
                    assignment,
                    "a variable that makes a program load more code, which trust does not follow",
                );
                Ok(())
            }
            _ => self.word(&word, false),
        }
    }

    /// `cd [-L|-P|-e|-@] [--] DIR`.
    fn cd(&mut self, args: &[Word]) {
        let mut at = 0;
        while let Some(word) = args.get(at) {
            match word.text.as_str() {
                "--" => {
                    at += 1;
                    break;
                }
                "-" => break,
                option if option.starts_with('-') && option.len() > 1 => at += 1,
                _ => break,
            }
        }
        let Some(dir) = args.get(at) else {
            // `cd` alone: HOME.
            self.base = Base::Foreign;
            return;
        };
        let (resolved, derived) = self.resolve(&dir.text);
        if unresolved(&resolved).is_some() || (dir.brace && is_brace(&resolved)) || dir.glob {
            self.base = Base::Unknown;
            return;
        }
        self.base = self.tree.cd(&self.base, &resolved, derived);
    }

    /// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=value]… [COMMAND…]`.
    fn env(&mut self, args: &[Word]) -> Result<(), Refusal> {
        let saved = self.base.clone();
        let mut at = 0;
        let mut result = Ok(());
        while let Some(word) = args.get(at) {
            let text = word.text.as_str();
            let value = |attached: &str| {
                if attached.is_empty() {
                    args.get(at + 1).map(|w| (w.text.clone(), 2))
                } else {
                    Some((attached.trim_start_matches('=').to_string(), 1))
                }
            };
            if let Some(rest) = text
                .strip_prefix("--chdir")
                .or_else(|| text.strip_prefix("-C"))
            {
                let Some((dir, used)) = value(rest) else {
                    break;
                };
                let dir = Word {
                    text: dir,
                    ..Word::default()
                };
                self.cd(std::slice::from_ref(&dir));
                at += used;
            } else if let Some(rest) = text
                .strip_prefix("--split-string")
                .or_else(|| text.strip_prefix("-S"))
            {
                // `env -S 'sh -c x'`: the string is split into the command (and its words).
                let Some((string, used)) = value(rest) else {
                    break;
                };
                let mut line = string;
                for word in &args[(at + used).min(args.len())..] {
                    line.push(' ');
                    line.push_str(&amplihack_protocol::command::shell_quote(&word.text));
                }
                result = self
                    .tree
                    .command(self.plugin, &line, self.base.clone(), self.depth + 1);
                self.base = saved;
                return result;
            } else if text == "-u" || text == "--unset" {
                at += 2;
            } else if text == "--" {
                at += 1;
                break;
            } else if text.starts_with('-') && text.len() > 1 {
                at += 1;
            } else if shell::is_assignment(text) {
                self.assign(text)?;
                at += 1;
            } else {
                break;
            }
        }
        if result.is_ok() {
            result = self.run(&args[at.min(args.len())..]);
        }
        self.base = saved;
        result
    }

    /// `sh [options] -c SCRIPT [NAME ARGS…]` (`-c` alone or in a cluster: `-ec`, `-xc`) reads
    /// SCRIPT as a command line; `sh [options] FILE [ARGS…]` runs FILE (looked up where the
    /// command runs, a slash or not).
    fn shell(&mut self, args: &[Word]) -> Result<(), Refusal> {
        let mut at = 0;
        let mut script = false;
        while let Some(word) = args.get(at) {
            let text = word.text.as_str();
            if text == "--" || text == "-" {
                at += 1;
                break;
            } else if text == "--rcfile" || text == "--init-file" {
                if let Some(file) = args.get(at + 1) {
                    self.word(file, true)?;
                }
                at += 2;
            } else if text.starts_with("--") {
                at += 1;
            } else if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
                script |= text.starts_with('-') && text.contains('c');
                // `-o pipefail`, `-euo pipefail`: `o` takes the next word.
                at += if text.contains('o') { 2 } else { 1 };
            } else {
                break;
            }
        }
        let rest = &args[at.min(args.len())..];
        match (script, rest.split_first()) {
            (true, Some((text, after))) => {
                if let Some(why) =
                    unresolved(&text.text).filter(|_| text.text.trim_start().starts_with('$'))
                {
                    let part = text.text.clone();
                    self.note(&part, why);
                }
                self.tree
                    .command(self.plugin, &text.text, self.base.clone(), self.depth + 1)?;
                self.words_named(after)
            }
            (false, Some(_)) => self.words_with_file(rest),
            _ => Ok(()),
        }
    }

    /// `python3 [options] (-c CODE | -m MODULE | FILE) [ARGS…]`: the script (or the code's
    /// imports, or the module) resolved as Python would, with the script's directory (or the
    /// working directory) first on `sys.path`, then `PYTHONPATH` (unless `-I` or `-E`).
    fn python(&mut self, args: &[Word]) -> Result<(), Refusal> {
        let mut at = 0;
        let mut isolated = false;
        let mut code: Option<String> = None;
        let mut module: Option<String> = None;
        while let Some(word) = args.get(at) {
            let text = word.text.as_str();
            if text == "--" {
                at += 1;
                break;
            }
            if !text.starts_with('-') || text == "-" {
                break;
            }
            if text.starts_with("--") {
                at += if text == "--check-hash-based-pycs" {
                    2
                } else {
                    1
                };
                continue;
            }
            let cluster = &text[1..];
            isolated |= cluster.contains(['I', 'E']);
            let attached = |flag: char| {
                cluster.find(flag).map(|i| {
                    let rest = &cluster[i + 1..];
                    if rest.is_empty() {
                        args.get(at + 1).map(|w| w.text.clone())
                    } else {
                        Some(rest.to_string())
                    }
                })
            };
            let first = cluster.find(['c', 'm', 'W', 'X']);
            match first.map(|i| cluster.as_bytes()[i]) {
                Some(b'c') => {
                    code = attached('c').flatten();
                    at += if cluster.ends_with('c') { 2 } else { 1 };
                    break;
                }
                Some(b'm') => {
                    module = attached('m').flatten();
                    at += if cluster.ends_with('m') { 2 } else { 1 };
                    break;
                }
                Some(_) if cluster.ends_with(['W', 'X']) => at += 2,
                _ => at += 1,
            }
        }
        let mut path: Vec<PathBuf> = Vec::new();
        let start = match &self.base {
            Base::Project(dir) => Some(dir.clone()),
            _ => None,
        };
        let extra = if isolated {
            Vec::new()
        } else {
            self.pythonpath.clone()
        };
        let rest = &args[at.min(args.len())..];
        if let Some(code) = code {
            path.extend(start);
            path.extend(extra);
            self.tree.python_source(&path, &code)?;
            return self.words_named(rest);
        }
        if let Some(module) = module {
            if start.is_none() && !matches!(self.base, Base::Foreign) {
                self.note(
                    &module,
                    "a module imported in a directory trust cannot follow",
                );
            }
            path.extend(start);
            path.extend(extra);
            self.tree.python_module(&path, &module)?;
            return self.words_named(rest);
        }
        let Some((script, after)) = rest.split_first() else {
            return Ok(());
        };
        let before = self.tree.files.len();
        self.word(script, true)?;
        let pinned: Vec<PathBuf> = self.tree.files[before..].to_vec();
        if let Some(file) = pinned.iter().find(|f| {
            let (resolved, _) = self.resolve(&script.text);
            f.ends_with(Path::new(&resolved).file_name().unwrap_or_default())
        }) && let Some(dir) = file.parent()
        {
            path.push(dir.to_path_buf());
            path.extend(extra);
            let file = file.clone();
            self.tree.python_file(&path, &file)?;
        }
        self.words_named(after)
    }
}

/// The shells whose `-c` takes a script and whose first operand is a script file.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"];

/// Variables that make a program load code trust does not follow.
const LOADER_VARS: &[&str] = &[
    "NODE_OPTIONS",
    "NODE_PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "GIT_CONFIG_GLOBAL",
    "GIT_EXEC_PATH",
    "ZDOTDIR",
    "PROMPT_COMMAND",
    "MAKEFILES",
    "MAKEFLAGS",
    "npm_config_userconfig",
    "NPM_CONFIG_USERCONFIG",
];

fn is_python(name: &str) -> bool {
    name == "python"
        || name == "python3"
        || name
            .strip_prefix("python3.")
            .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

/// Why a word is still built at run time once the variables trust follows are replaced: a
/// variable it does not follow, a substitution, a parameter pattern. Special parameters (`$?`,
/// `$#`, `$1`, `"$@"`) are not paths.
fn unresolved(word: &str) -> Option<&'static str> {
    if word.contains('`') {
        return Some("a path built at run time (a command substitution)");
    }
    let bytes = word.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'$' {
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'(') => return Some("a path built at run time (a command substitution)"),
            Some(b'{') => {
                let inner = &word[i + 2..];
                let name_len = inner
                    .bytes()
                    .position(|c| !(c.is_ascii_alphanumeric() || c == b'_'))
                    .unwrap_or(inner.len());
                return Some(match inner.as_bytes().get(name_len) {
                    Some(b'}') if !inner[..name_len].bytes().all(|c| c.is_ascii_digit()) => {
                        "a variable trust does not follow"
                    }
                    Some(b'}') => continue,
                    _ => "a path built at run time (a parameter expansion trust does not work out)",
                });
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                return Some("a variable trust does not follow");
            }
            _ => {}
        }
    }
    None
}

/// An unquoted-looking brace expansion: `{a,b}` or `{1..3}` (not `${…}`).
fn is_brace(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'{'
            && (i == 0 || bytes[i - 1] != b'$')
            && word[i + 1..].find('}').is_some_and(|end| {
                let inner = &word[i + 1..i + 1 + end];
                inner.contains(',') || inner.contains("..")
            })
    })
}

/// A shell pattern of `*` and `?` against a file name (a leading dot matched only literally).
fn fnmatch(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl shell::Sink for Line<'_, '_> {
    fn substitution(&mut self, commands: &[SimpleCommand], _depth: usize) -> bool {
        commands.iter().all(|command| {
            let result = self.simple(&command.words);
            self.keep(result)
        })
    }

    fn command(&mut self, command: &SimpleCommand) -> bool {
        let result = self.simple(&command.words);
        self.keep(result)
    }

    fn redirection(&mut self, target: &Word) {
        let result = self.word(target, false);
        self.keep(result);
    }

    fn heredoc(&mut self, body: &str) {
        // `sh <<EOF`: the body may be a script; what it names is covered as a command's would be.
        let result = self
            .tree
            .command(self.plugin, body, self.base.clone(), self.depth + 1);
        self.keep(result);
    }
}

impl<'a> Tree<'a> {
    fn new(root: &'a Path) -> Tree<'a> {
        Tree {
            root,
            real_root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
            files: Vec::new(),
            handlers: Vec::new(),
            node_bin: None,
            python_seen: Vec::new(),
            python_read: 0,
        }
    }

    /// `path` with links resolved, refused when that leaves the project.
    fn inside(&self, path: &Path) -> Result<Option<PathBuf>, Refusal> {
        match path.canonicalize() {
            Ok(real) if real.starts_with(&self.real_root) => Ok(Some(real)),
            Ok(real) => Err(refuse(
                path,
                format!("resolves to {}, outside the project", real.display()),
                "replace the link with the files it points to, or remove it",
            )),
            // Dangling: nothing there runs (once it points somewhere, it is checked then).
            Err(_) => Ok(None),
        }
    }

    /// A level's directory (or `.amcp/`): each subdirectory with its own budget, its loose files
    /// with another. amplihack's own registration file is not a plugin's.
    fn walk_top(&mut self, dir: &Path) -> Result<(), Refusal> {
        if self.inside(dir)?.is_none() {
            return Ok(());
        }
        let own = dir.join(discovery::AMPLIHACK_DIR).join("hooks.json");
        let own = discovery::is_amplihack_registration(&own).then_some(own);
        let mut budget = Budget {
            owner: dir,
            left: MAX_FILES_PER_PLUGIN,
        };
        let mut entries = read_dir(dir)?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            if is_dir(&entry) {
                if SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()) {
                    continue;
                }
                let before = self.files.len();
                let mut own_budget = Budget {
                    owner: &path,
                    left: MAX_FILES_PER_PLUGIN,
                };
                self.walk(&path, &mut own_budget, 1)?;
                if let Some(own) = &own {
                    let kept = self.files.split_off(before);
                    self.files.extend(kept.into_iter().filter(|f| f != own));
                }
            } else {
                self.entry(&entry, &mut budget, 0)?;
            }
        }
        Ok(())
    }

    fn walk(&mut self, dir: &Path, budget: &mut Budget<'_>, depth: usize) -> Result<(), Refusal> {
        if depth > MAX_DEPTH {
            return Err(refuse(
                dir,
                format!("is nested more than {MAX_DEPTH} directories deep (a link loop?)"),
                "flatten the plugin, or remove the link",
            ));
        }
        let mut entries = read_dir(dir)?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            self.entry(&entry, budget, depth)?;
        }
        Ok(())
    }

    fn entry(
        &mut self,
        entry: &std::fs::DirEntry,
        budget: &mut Budget<'_>,
        depth: usize,
    ) -> Result<(), Refusal> {
        let path = entry.path();
        let Ok(mut kind) = entry.file_type() else {
            return Ok(());
        };
        if kind.is_symlink() {
            if self.inside(&path)?.is_none() {
                return Ok(());
            }
            match std::fs::metadata(&path) {
                Ok(meta) => kind = meta.file_type(),
                Err(_) => return Ok(()),
            }
        }
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()) {
                self.walk(&path, budget, depth + 1)?;
            }
        } else if kind.is_file() {
            if budget.left == 0 {
                return Err(refuse(
                    budget.owner,
                    format!(
                        "holds more than {MAX_FILES_PER_PLUGIN} files, and trust covers at most {MAX_FILES_PER_PLUGIN} a plugin"
                    ),
                    "keep only what the plugin runs there (install dependencies such as node_modules outside .amplifier/hooks)",
                ));
            }
            budget.left -= 1;
            self.files.push(path);
        } else {
            return Err(refuse(
                &path,
                "is not a regular file (a FIFO, a device or a socket)",
                "remove it from the plugin",
            ));
        }
        Ok(())
    }

    /// The files inside the project that `command` names, resolved as the shell running it in
    /// the project root would.
    fn named_files(&mut self, plugin: &Plugin, command: &str) -> Result<(), Refusal> {
        let base = Base::Project(self.root.to_path_buf());
        self.command(plugin, command, base, 0)
    }

    /// One command line, from `base`, read with the Bash guard's lexer as the shell splits it
    /// ([`shell::parse_into_as_written`]): each simple command's words in the order the shell
    /// runs them, a substitution's, a redirection's target, and a here-document's body or a
    /// `sh -c '…'` script read as a command line of its own.
    fn command(
        &mut self,
        plugin: &Plugin,
        command: &str,
        base: Base,
        depth: usize,
    ) -> Result<(), Refusal> {
        if depth > 4 {
            return Err(too_long(plugin));
        }
        let root_text = self.root.to_string_lossy().into_owned();
        let mut line = Line {
            vars: [
                (
                    amplihack_env::CLAUDE_PLUGIN_ROOT,
                    plugin.root.to_string_lossy().into_owned(),
                ),
                (
                    amplihack_env::AMPLIFIER_HOOKS_DIR,
                    plugin.hooks_dir.to_string_lossy().into_owned(),
                ),
            ]
            .into_iter()
            .chain(
                amplihack_env::PROJECT_ROOT
                    .into_iter()
                    .chain([amplihack_env::AMCP_PROJECT_DIR])
                    .map(|name| (name, root_text.clone())),
            )
            .collect(),
            tree: self,
            plugin,
            base,
            depth,
            words: 0,
            failed: None,
            pythonpath: Vec::new(),
        };
        let parsed = shell::parse_into_as_written(command, &mut line, 0);
        if let Some(refusal) = line.failed {
            return Err(refusal);
        }
        if parsed.too_deep {
            return Err(too_long(plugin));
        }
        Ok(())
    }

    fn cd(&self, base: &Base, dir: &str, derived: bool) -> Base {
        if dir.contains('$') || dir.starts_with('~') || dir == "-" {
            return Base::Unknown;
        }
        let dir = Path::new(dir);
        if dir.is_absolute() {
            return if derived || dir.starts_with(self.root) {
                Base::Project(normalize(dir))
            } else {
                Base::Foreign
            };
        }
        match base {
            Base::Project(from) => Base::Project(normalize(&from.join(dir))),
            other => other.clone(),
        }
    }

    /// A part of the handler being read that trust cannot pin.
    fn note(&mut self, part: &str, why: impl Into<String>) {
        if let Some(handler) = self.handlers.last_mut() {
            handler.unpinned.push(Unpinned {
                part: part.to_string(),
                why: why.into(),
            });
        }
    }

    /// The file `word` names, pinned when it is inside the project. `file`: the word is a file
    /// the program reads, so it is looked up even without a slash or a dot (`sh lint`).
    fn named_word(
        &mut self,
        base: &Base,
        word: &str,
        derived: bool,
        file: bool,
    ) -> Result<(), Refusal> {
        if word.contains('$') || (!file && (word.starts_with('-') || !word.contains(['/', '.']))) {
            return Ok(());
        }
        let literal = Path::new(word);
        let path = if literal.is_absolute() {
            normalize(literal)
        } else {
            match base {
                Base::Project(from) => normalize(&from.join(literal)),
                Base::Foreign | Base::Unknown => return Ok(()),
            }
        };
        // From the project but outside it: `../x.sh`, `${CLAUDE_PLUGIN_ROOT}/../../../x.sh`.
        let from_project = derived || !literal.is_absolute();
        if !path.starts_with(self.root) {
            if from_project && path.is_file() {
                return Err(refuse(
                    &path,
                    format!("is named by a hook command (`{word}`) but is outside the project"),
                    "keep the files hooks run inside the project, or name them by an absolute path",
                ));
            }
            return Ok(());
        }
        if path.is_file() && self.inside(&path)?.is_some() {
            self.files.push(path.clone());
            if path.extension().is_some_and(|e| e == "py")
                && let Some(dir) = path.parent()
            {
                self.python_file(&[dir.to_path_buf()], &path)?;
            }
        }
        Ok(())
    }

    /// The Python a directory on `sys.path` offers: its modules and their compiled copies (not its
    /// subpackages, which a plugin's own directory walk covers).
    fn python_dir(&mut self, dir: &Path) -> Result<(), Refusal> {
        let python = |p: &Path| {
            p.extension()
                .is_some_and(|e| e == "py" || e == "pyc" || e == "so" || e == "pth")
        };
        let mut budget = Budget {
            owner: dir,
            left: MAX_FILES_PER_PLUGIN,
        };
        for entry in read_dir(dir)? {
            let path = entry.path();
            if is_dir(&entry) {
                if entry.file_name() == "__pycache__" {
                    self.walk(&path, &mut budget, 1)?;
                }
            } else if python(&path) {
                self.entry(&entry, &mut budget, 0)?;
            }
        }
        Ok(())
    }

    /// A module Python imports by name with `path` as `sys.path` (an AMCP function's, or
    /// `python3 -m pkg.mod` run in a directory, `PYTHONPATH` after it): the modules of each
    /// directory, the module's top-level package whole, and what they import from there.
    fn python_module(&mut self, path: &[PathBuf], dotted: &str) -> Result<(), Refusal> {
        let root = self.root;
        for dir in path.iter().filter(|d| d.starts_with(root)) {
            self.python_dir(dir)?;
        }
        let top = dotted.split('.').next().unwrap_or_default();
        if top.is_empty() || top.contains(['/', '$']) {
            return Ok(());
        }
        self.python_import(path, top)
    }

    /// A Python file run with `path` as `sys.path`: the modules of each directory and what it
    /// imports from them, transitively.
    fn python_file(&mut self, path: &[PathBuf], file: &Path) -> Result<(), Refusal> {
        let root = self.root;
        for dir in path.iter().filter(|d| d.starts_with(root)) {
            self.python_dir(dir)?;
        }
        let source = read_python(file);
        self.python_source(path, &source)
    }

    /// The project modules `source` imports (`import a.b`, `from a import b`), each resolved
    /// along `path` as Python would: the first directory holding it wins.
    fn python_source(&mut self, path: &[PathBuf], source: &str) -> Result<(), Refusal> {
        let root = self.root;
        for dir in path.iter().filter(|d| d.starts_with(root)) {
            self.python_dir(dir)?;
        }
        for name in imported(source) {
            self.python_import(path, &name)?;
        }
        if source.contains("import_module(") || source.contains("__import__(") {
            let part = source
                .lines()
                .find(|l| l.contains("import_module(") || l.contains("__import__("))
                .unwrap_or_default()
                .trim()
                .to_string();
            self.note(&part, "a module imported by a name made at run time");
        }
        Ok(())
    }

    /// One top-level module `name` along `path`: a package pinned whole, a module file; then
    /// what they import.
    fn python_import(&mut self, path: &[PathBuf], name: &str) -> Result<(), Refusal> {
        self.python_read += 1;
        if self.python_read > MAX_FILES_PER_PLUGIN {
            return Err(refuse(
                self.root,
                format!("has hooks importing more than {MAX_FILES_PER_PLUGIN} Python modules"),
                "keep what hooks import small, or import it from outside the project",
            ));
        }
        for dir in path {
            let key = (dir.clone(), name.to_string());
            if self.python_seen.contains(&key) {
                return Ok(());
            }
            let package = dir.join(name);
            let module = dir.join(format!("{name}.py"));
            if package.is_dir() {
                self.python_seen.push(key);
                if !package.starts_with(self.root) || self.inside(&package)?.is_none() {
                    return Ok(());
                }
                let before = self.files.len();
                let mut budget = Budget {
                    owner: &package,
                    left: MAX_FILES_PER_PLUGIN,
                };
                self.walk(&package, &mut budget, 1)?;
                let sources: Vec<PathBuf> = self.files[before..]
                    .iter()
                    .filter(|f| f.extension().is_some_and(|e| e == "py"))
                    .cloned()
                    .collect();
                for file in sources {
                    let source = read_python(&file);
                    for name in imported(&source) {
                        self.python_import(path, &name)?;
                    }
                }
                return Ok(());
            }
            if module.is_file() {
                self.python_seen.push(key);
                if !module.starts_with(self.root) || self.inside(&module)?.is_none() {
                    return Ok(());
                }
                self.files.push(module.clone());
                let source = read_python(&module);
                for name in imported(&source) {
                    self.python_import(path, &name)?;
                }
                return Ok(());
            }
        }
        Ok(())
    }
}

/// At most this much of a Python file is read for its imports.
const PYTHON_READ_CAP: u64 = 1 << 20;

fn read_python(file: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(f) = std::fs::File::open(file) {
        let _ = f.take(PYTHON_READ_CAP).read_to_string(&mut text);
    }
    text
}

/// The top-level names `source` imports absolutely (`import a.b, c as d`, `from a.b import x`;
/// not `from . import x`, which stays inside a package pinned whole).
fn imported(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let top = |module: &str| {
        module
            .trim()
            .split(['.', ' '])
            .next()
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .map(str::to_string)
    };
    for line in source.lines() {
        for statement in line.split(';') {
            let statement = statement.trim();
            if let Some(rest) = statement.strip_prefix("import ") {
                names.extend(rest.split(',').filter_map(top));
            } else if let Some(rest) = statement.strip_prefix("from ")
                && !rest.starts_with('.')
                && let Some(module) = rest.split(" import").next()
            {
                names.extend(top(module));
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

fn is_dir(entry: &std::fs::DirEntry) -> bool {
    match entry.file_type() {
        Ok(t) if t.is_symlink() => entry.path().is_dir(),
        Ok(t) => t.is_dir(),
        Err(_) => false,
    }
}

/// A directory's entries; one that cannot be read is refused (what it holds may run).
fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>, Refusal> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries.flatten().collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(refuse(
            dir,
            format!("cannot be read: {e}"),
            "make it readable, or remove it",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::load_level;

    struct Project {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    impl Project {
        fn new() -> Project {
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path().join("project");
            std::fs::create_dir_all(&root).expect("mkdir");
            Project { _dir: dir, root }
        }
        fn write(&self, path: &str, text: &str) {
            let path = self.root.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        fn link(&self, target: &str, at: &str) {
            let at = self.root.join(at);
            std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
            std::os::unix::fs::symlink(target, at).expect("symlink");
        }
        fn hooks(&self, name: &str, commands: &[&str]) {
            let handlers: Vec<serde_json::Value> = commands
                .iter()
                .map(|c| serde_json::json!({"type": "command", "command": c}))
                .collect();
            let file = if name.is_empty() {
                ".amplifier/hooks/hooks.json".to_string()
            } else {
                format!(".amplifier/hooks/{name}/hooks.json")
            };
            self.write(
                &file,
                &serde_json::json!({"hooks": {"PreToolUse": [{"hooks": handlers}]}}).to_string(),
            );
        }
        fn files(&self) -> Result<Vec<String>, Refusal> {
            let plugins = load_level(&self.root.join(".amplifier/hooks"), Level::Project);
            files_to_trust(&self.root, &plugins).map(|files| {
                files
                    .iter()
                    .map(|p| {
                        p.strip_prefix(&self.root)
                            .expect("inside")
                            .display()
                            .to_string()
                    })
                    .collect()
            })
        }
        fn refused(&self) -> Refusal {
            match self.files() {
                Err(refusal) => refusal,
                Ok(files) => panic!("trusted {files:?}"),
            }
        }
    }

    #[test]
    fn trust_covers_plugin_directories_and_the_project_files_commands_name() {
        let p = Project::new();
        p.hooks(
            "lint",
            &[
                "python3 scripts/check.py --strict",
                "\"$CLAUDE_PROJECT_DIR\"/tools/lint.sh",
                "${CLAUDE_PLUGIN_ROOT}/run.sh",
                "echo not-a-file ../missing.sh",
            ],
        );
        p.write(".amplifier/hooks/lint/run.sh", "echo");
        p.write(".amplifier/hooks/lint/lib/helper.py", "x = 1");
        p.write(".amplifier/hooks/lint/.git/HEAD", "ref");
        p.write(".amplifier/hooks/lint/__pycache__/helper.pyc", "bytecode");
        p.write(".amplifier/hooks/hooks.json", r#"{"hooks": {}}"#);
        p.write("scripts/check.py", "print()");
        p.write("tools/lint.sh", "true");
        p.write("unrelated.txt", "not run by any plugin");
        assert_eq!(
            p.files().expect("trusted"),
            [
                ".amplifier/hooks/hooks.json",
                ".amplifier/hooks/lint/__pycache__/helper.pyc",
                ".amplifier/hooks/lint/hooks.json",
                ".amplifier/hooks/lint/lib/helper.py",
                ".amplifier/hooks/lint/run.sh",
                "scripts/check.py",
                "tools/lint.sh",
            ]
        );
    }

    /// Finding 8, each gap of what trust covered.
    #[test]
    fn the_level_file_links_variables_cd_and_packages_are_covered() {
        let p = Project::new();
        // The level's own hooks.json running a script beside it.
        p.hooks("", &["sh \"${CLAUDE_PLUGIN_ROOT}/scripts/check.sh\""]);
        p.write(".amplifier/hooks/scripts/check.sh", "true");
        // A link to a directory inside the project is followed.
        p.hooks("linked", &["sh \"${CLAUDE_PLUGIN_ROOT}/lib/run.sh\""]);
        p.link("../../../tools/lintlib", ".amplifier/hooks/linked/lib");
        p.write("tools/lintlib/run.sh", "true");
        // `..` from the plugin's root, and `cd dir && sh x.sh`.
        p.hooks(
            "up",
            &[
                "sh \"${CLAUDE_PLUGIN_ROOT}/../../../tools/other/run.sh\"",
                "cd tools/cdlib && sh run.sh",
                "bash -c 'cd tools/quoted && sh run.sh'",
            ],
        );
        p.write("tools/quoted/run.sh", "true");
        p.write("tools/other/run.sh", "true");
        p.write("tools/cdlib/run.sh", "true");
        p.write("run.sh", "not what `cd tools/cdlib && sh run.sh` runs");
        let files = p.files().expect("trusted");
        for want in [
            ".amplifier/hooks/scripts/check.sh",
            ".amplifier/hooks/linked/lib/run.sh",
            "tools/other/run.sh",
            "tools/cdlib/run.sh",
            "tools/quoted/run.sh",
        ] {
            assert!(files.contains(&want.to_string()), "{want}: {files:?}");
        }
        assert!(!files.contains(&"run.sh".to_string()), "{files:?}");
    }

    /// Commands are split where the shell splits them (the Bash guard's lexer), so a file named
    /// right after `;` or `&&`, by a redirection, in a substitution or a here-document a shell
    /// reads is covered: each of these ran unhashed when words were split at blanks only.
    #[test]
    fn files_named_wherever_the_shell_reads_them_are_covered() {
        let cases: &[(&str, &str)] = &[
            ("sh tools/a.sh;sh tools/b.sh", "tools/a.sh"),
            ("sh tools/a.sh;sh tools/b.sh", "tools/b.sh"),
            ("true&&cd tools/x&&sh run.sh", "tools/x/run.sh"),
            ("sh<tools/in.sh", "tools/in.sh"),
            (
                "sh 2>/dev/null <\"${CLAUDE_PROJECT_DIR}/tools/in.sh\"",
                "tools/in.sh",
            ),
            ("x=$(sh tools/sub.sh) true", "tools/sub.sh"),
            ("echo `sh tools/tick.sh`", "tools/tick.sh"),
            ("bash <<'EOF'\ncd tools && sh here.sh\nEOF", "tools/here.sh"),
            ("sh -c \"sh tools/c.sh|cat\"", "tools/c.sh"),
        ];
        for (command, named) in cases {
            let p = Project::new();
            p.hooks("lint", &[command]);
            p.write(named, "true");
            let files = p.files().expect("trusted");
            assert!(files.contains(&named.to_string()), "{command}: {files:?}");
        }
    }

    #[test]
    fn an_amcp_function_covers_its_package_and_the_roots_modules() {
        let p = Project::new();
        p.write(
            ".amcp/hooks.toml",
            "[[hooks.PreToolUse.handlers]]\ntype = \"python\"\nfunction = \"hookpkg.checks.pre\"\n",
        );
        p.write("hookpkg/__init__.py", "");
        p.write("hookpkg/checks.py", "def pre(e): pass");
        p.write("hookpkg/__pycache__/checks.cpython-311.pyc", "x");
        p.write("json.py", "shadowing the standard library");
        p.hooks("mod", &["python3 -m tools.lint --fix"]);
        p.write("tools/__init__.py", "");
        p.write("tools/lint.py", "");
        p.write("src/unrelated.py", "");
        let files = p.files().expect("trusted");
        for want in [
            ".amcp/hooks.toml",
            "hookpkg/__init__.py",
            "hookpkg/checks.py",
            "hookpkg/__pycache__/checks.cpython-311.pyc",
            "json.py",
            "tools/__init__.py",
            "tools/lint.py",
        ] {
            assert!(files.contains(&want.to_string()), "{want}: {files:?}");
        }
        assert!(!files.contains(&"src/unrelated.py".to_string()));
    }

    #[test]
    fn what_would_run_unhashed_is_refused_with_the_file_and_the_fix() {
        // A link out of the project.
        let p = Project::new();
        p.hooks("lint", &["true"]);
        std::fs::create_dir_all(p.root.parent().expect("parent").join("elsewhere")).expect("mkdir");
        p.link("../../../../elsewhere", ".amplifier/hooks/lint/lib");
        let refusal = p.refused();
        assert!(refusal.problem.contains("outside the project"), "{refusal}");
        assert!(refusal.file.ends_with("lint/lib"), "{refusal}");

        // `${CLAUDE_PLUGIN_ROOT}/..` out of the project, and `../x.sh`.
        for command in [
            "sh \"${CLAUDE_PLUGIN_ROOT}/../../../../outside.sh\"",
            "sh ../outside.sh",
            "cd .. && sh outside.sh",
        ] {
            let p = Project::new();
            p.hooks("up", &[command]);
            std::fs::write(p.root.parent().expect("parent").join("outside.sh"), "x")
                .expect("write");
            let refusal = p.refused();
            assert!(refusal.file.ends_with("outside.sh"), "{command}: {refusal}");
            assert!(refusal.problem.contains("outside the project"), "{refusal}");
        }

        // Past the per-plugin cap: refused, not cut short.
        let p = Project::new();
        p.hooks("aaa-node", &["true"]);
        for i in 0..=MAX_FILES_PER_PLUGIN {
            p.write(
                &format!(".amplifier/hooks/aaa-node/node_modules/{i}.js"),
                "",
            );
        }
        p.hooks("zzz", &["sh \"${CLAUDE_PLUGIN_ROOT}/run.sh\""]);
        let refusal = p.refused();
        assert!(refusal.file.ends_with("aaa-node"), "{refusal}");
        assert!(refusal.problem.contains("5000"), "{refusal}");

        // A FIFO in a plugin.
        let p = Project::new();
        p.hooks("lint", &["true"]);
        let fifo = p.root.join(".amplifier/hooks/lint/pipe");
        amplihack_platform::fs::make_fifo(&fifo).expect("fifo");
        assert!(p.refused().problem.contains("not a regular file"));
    }

    /// Issue 35 finding 2: each form a trusted handler ran unhashed is now either pinned (an edit
    /// to the file afterwards withdraws trust) or shown as a part trust cannot pin, and its
    /// plugin held back until the user accepts it by name.
    #[test]
    fn every_form_is_pinned_or_shown_and_held_back_until_accepted() {
        enum Want {
            /// Pinned: these files are covered; the first is edited and trust is withdrawn.
            Pinned(&'static [&'static str]),
            /// Shown: a part containing this text cannot be pinned.
            Shown(&'static str),
        }
        use Want::{Pinned, Shown};
        let files: &[(&str, &str)] = &[
            ("Makefile", "include rules.mk\nlint:\n\t@sh tools/lint.sh\n"),
            ("rules.mk", "X = 1\n"),
            (
                "package.json",
                r#"{"scripts": {"lint": "sh tools/lint.sh"}}"#,
            ),
            ("package-lock.json", "{}"),
            ("justfile", "lint:\n    sh tools/lint.sh\n"),
            ("tools/lint.sh", "true"),
            ("tools/a.sh", "true"),
            ("tools/b.sh", "true"),
            ("lint", "true"),
            ("tools/main.py", "import lintpkg\nfrom helpers import x\n"),
            ("tools/lintpkg/__init__.py", "from . import core\n"),
            ("tools/lintpkg/core.py", "x = 1\n"),
            ("tools/helpers.py", "x = 1\n"),
            ("lint.py", "import rootdep\n"),
            ("rootdep/__init__.py", ""),
            ("tools/lint.py", "print()\n"),
            ("tools/env.sh", "true"),
        ];
        let cases: &[(&str, Want)] = &[
            (
                "make -s lint",
                Pinned(&["Makefile", "rules.mk", "tools/lint.sh"]),
            ),
            (
                "npm run lint",
                Pinned(&["package.json", "package-lock.json", "tools/lint.sh"]),
            ),
            ("npx --no-install tool", Shown("npx --no-install tool")),
            ("just lint", Pinned(&["justfile", "tools/lint.sh"])),
            (
                "sh tools/*.sh",
                Pinned(&["tools/a.sh", "tools/b.sh", "tools/lint.sh"]),
            ),
            ("sh lint", Pinned(&["lint"])),
            (
                "python3 tools/main.py",
                Pinned(&["tools/lintpkg/core.py", "tools/main.py", "tools/helpers.py"]),
            ),
            (
                "python3 -c 'import lint'",
                Pinned(&["lint.py", "rootdep/__init__.py"]),
            ),
            (
                "PYTHONPATH=tools python3 -m lint",
                Pinned(&["tools/lint.py"]),
            ),
            (
                "sh \"${CLAUDE_PROJECT_DIR:-.}/tools/lint.sh\"",
                Pinned(&["tools/lint.sh"]),
            ),
            ("sh \"$PWD/tools/lint.sh\"", Pinned(&["tools/lint.sh"])),
            (
                "sh \"${CLAUDE_PLUGIN_ROOT%/*/*/*}/tools/lint.sh\"",
                Shown("CLAUDE_PLUGIN_ROOT%"),
            ),
            ("bash -ec 'sh tools/lint.sh'", Pinned(&["tools/lint.sh"])),
            ("sh -xc 'sh tools/lint.sh'", Pinned(&["tools/lint.sh"])),
            ("cd -P tools && sh lint.sh", Pinned(&["tools/lint.sh"])),
            ("cd -- tools && sh lint.sh", Pinned(&["tools/lint.sh"])),
            ("env -C tools sh lint.sh", Pinned(&["tools/lint.sh"])),
            ("env -S 'sh tools/lint.sh'", Pinned(&["tools/lint.sh"])),
            (
                "BASH_ENV=tools/env.sh bash -c true",
                Pinned(&["tools/env.sh"]),
            ),
            ("sh tools/{a,b}.sh", Shown("tools/{a,b}.sh")),
            ("sh \"$LINTER/run.sh\"", Shown("$LINTER/run.sh")),
            ("cd \"$TMPDIR\" && sh run.sh", Shown("run.sh")),
            ("cargo run --bin lint", Shown("cargo run --bin lint")),
            (
                "NODE_OPTIONS=--require=./x.js node -e 1",
                Shown("NODE_OPTIONS"),
            ),
            (
                "sh \"$(git rev-parse --show-toplevel)/x.sh\"",
                Shown("rev-parse"),
            ),
        ];
        for (command, want) in cases {
            let dir = tempfile::tempdir().expect("tempdir");
            let state = StateDir::at(dir.path().join("state"));
            let p = Project::new();
            for (path, text) in files {
                p.write(path, text);
            }
            p.hooks("h", &[command]);
            let plugins = || load_level(&p.root.join(".amplifier/hooks"), Level::Project);
            let found = scope(&p.root, &plugins()).expect("covered");
            let handler = &found.handlers[0];
            trust::set(&state, &p.root, Some(trust::fingerprint(&found.files))).expect("trust");
            match want {
                Pinned(pinned) => {
                    assert!(
                        handler.unpinned.is_empty(),
                        "{command}: {:?}",
                        handler.unpinned
                    );
                    for file in *pinned {
                        assert!(
                            found.files.contains(&p.root.join(file)),
                            "{command}: {file} not pinned: {:?}",
                            handler.pinned
                        );
                        assert!(
                            handler.pinned.contains(&p.root.join(file)),
                            "{command}: {file} not listed"
                        );
                    }
                    assert_eq!(
                        check(&state, &p.root, &plugins()),
                        Ok(Vec::new()),
                        "{command}"
                    );
                    p.write(pinned[0], "echo edited");
                    assert!(
                        matches!(
                            check(&state, &p.root, &plugins()),
                            Err(NotRun::Untrusted(trust::Untrusted::Changed(_)))
                        ),
                        "{command}: an edit to {} went unseen",
                        pinned[0]
                    );
                }
                Shown(part) => {
                    assert!(
                        handler.unpinned.iter().any(|u| u.part.contains(part)),
                        "{command}: {:?}",
                        handler.unpinned
                    );
                    // Trusted, but held back until accepted by name, for exactly those parts.
                    assert_eq!(
                        check(&state, &p.root, &plugins()),
                        Ok(vec!["h".to_string()]),
                        "{command}"
                    );
                    let accepted = found.unpinned_by_plugin().into_iter().collect();
                    trust::set_accepted(&state, &p.root, accepted).expect("accept");
                    assert_eq!(
                        check(&state, &p.root, &plugins()),
                        Ok(Vec::new()),
                        "{command}"
                    );
                }
            }
        }
    }

    /// Braces the shell does not expand (quoted, as in the JSON a plugin echoes; or `${…}`) are
    /// text, not a part trust cannot pin: such a plugin runs once trusted, with no `--accept`.
    #[test]
    fn quoted_braces_are_not_brace_expansion() {
        for command in [
            r#"echo '{"hookSpecificOutput": {"additionalContext": "run make lint, then commit."}}'"#,
            r#"printf "%s\n" "{a,b}.sh""#,
            r#"echo "${HOME}""#,
        ] {
            let p = Project::new();
            p.hooks("h", &[command]);
            let plugins = load_level(&p.root.join(".amplifier/hooks"), Level::Project);
            let found = scope(&p.root, &plugins).expect("covered");
            assert!(
                found.handlers[0]
                    .unpinned
                    .iter()
                    .all(|u| !u.why.contains("brace")),
                "{command}: {:?}",
                found.handlers[0].unpinned
            );
        }
    }

    #[test]
    fn a_project_plugin_runs_in_the_project_root() {
        let p = Project::new();
        p.hooks("lint", &["sh tools/lint.sh"]);
        let plugins = load_level(&p.root.join(".amplifier/hooks"), Level::Project);
        assert_eq!(working_dir(&plugins[0]), Some(p.root.clone()));
    }

    /// The hooks file amplihack parsed must be the trusted one, not only the file trust hashes a
    /// moment later: one rewritten with another command and put back between the two is caught
    /// (issue 35, finding 12).
    #[test]
    fn a_hooks_file_parsed_with_other_bytes_than_it_now_holds_is_changed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = StateDir::at(dir.path().join("state"));
        let p = Project::new();
        p.hooks("h", &["sh tools/check.sh"]);
        p.write("tools/check.sh", "echo ok");
        let hooks = p.root.join(".amplifier/hooks");
        let trusted = load_level(&hooks, Level::Project);
        let files = files_to_trust(&p.root, &trusted).expect("covered");
        trust::set(&state, &p.root, Some(trust::fingerprint(&files))).expect("trust");
        assert_eq!(check(&state, &p.root, &trusted), Ok(Vec::new()));
        let file = hooks.join("h/hooks.json");
        let original = std::fs::read(&file).expect("read");
        p.hooks("h", &["sh tools/evil.sh"]);
        let parsed = load_level(&hooks, Level::Project);
        std::fs::write(&file, &original).expect("put back");
        assert_eq!(
            check(&state, &p.root, &parsed),
            Err(NotRun::Untrusted(trust::Untrusted::Changed(
                file.to_string_lossy().into_owned()
            )))
        );
    }
}
