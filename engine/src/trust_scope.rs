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
pub fn check(state: &StateDir, project: &Path, plugins: &[Plugin]) -> Result<(), NotRun> {
    let files = files_to_trust(project, plugins).map_err(NotRun::Refused)?;
    trust::check(state, project, &files).map_err(NotRun::Untrusted)
}

/// The files trust covers for `plugins` of `project`, sorted, each once; or why it cannot.
pub fn files_to_trust(project: &Path, plugins: &[Plugin]) -> Result<Vec<PathBuf>, Refusal> {
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
                tree.named_files(plugin, &handler.command)?;
                if let Some(function) = amcp::function_of(&handler.command) {
                    tree.python_module(project, function)?;
                }
            }
        }
    }
    let mut files = tree.files;
    files.sort();
    files.dedup();
    Ok(files)
}

/// The project being resolved, and the files found so far.
struct Tree<'a> {
    root: &'a Path,
    /// The root with links resolved: what "inside the project" means for a link.
    real_root: PathBuf,
    files: Vec<PathBuf>,
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

/// `${VAR}` and `$VAR` (a whole name) replaced by `value`.
fn substitute(word: &str, var: &str, value: &str) -> String {
    let word = word.replace(&format!("${{{var}}}"), value);
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
}

impl Line<'_, '_> {
    /// `word` with the variables replaced, and whether any was.
    fn resolve(&self, word: &str) -> (String, bool) {
        let mut resolved = word.to_string();
        for (var, value) in &self.vars {
            resolved = substitute(&resolved, var, value);
        }
        let derived = resolved != word;
        (resolved, derived)
    }

    /// One simple command's words: its program (`cd DIR` moves the base), a file it names, the
    /// script of `-c`, the module of `-m`.
    fn simple(&mut self, words: &[Word]) -> Result<(), Refusal> {
        self.words += words.len();
        if self.words > MAX_WORDS {
            return Err(too_long(self.plugin));
        }
        let mut cd_next = false;
        let mut script_next = false;
        let mut module_next = false;
        for (i, word) in words.iter().map(|w| w.text.as_str()).enumerate() {
            if word.is_empty() {
                continue;
            }
            let (resolved, derived) = self.resolve(word);
            if script_next {
                // `sh -c 'cd tools && sh lint.sh'`: the script runs where this word would.
                self.tree
                    .command(self.plugin, word, self.base.clone(), self.depth + 1)?;
            } else if module_next {
                // `python3 -m tools.lint`: from the working directory, on `sys.path`.
                if let Base::Project(from) = &self.base {
                    self.tree.python_module(&from.clone(), &resolved)?;
                }
            } else if cd_next {
                self.base = self.tree.cd(&self.base, &resolved, derived);
                cd_next = false;
            } else if i == 0 && matches!(word, "cd" | "pushd") {
                cd_next = true;
            } else {
                self.tree.named_word(&self.base, &resolved, derived)?;
            }
            script_next = word == "-c";
            module_next = word == "-m";
        }
        Ok(())
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
        let (resolved, derived) = self.resolve(&target.text);
        let result = self.tree.named_word(&self.base, &resolved, derived);
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

    fn named_word(&mut self, base: &Base, word: &str, derived: bool) -> Result<(), Refusal> {
        if word.starts_with('-') || word.contains('$') || !word.contains(['/', '.']) {
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
            if path.extension().is_some_and(|e| e == "py")
                && let Some(dir) = path.parent()
            {
                self.python_dir(dir)?;
            }
            self.files.push(path);
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

    /// A module Python imports by name with `dir` first on `sys.path` (an AMCP function's, or
    /// `python3 -m pkg.mod` run in `dir`): its top-level package whole, and the modules of `dir`
    /// itself.
    fn python_module(&mut self, dir: &Path, dotted: &str) -> Result<(), Refusal> {
        if !dir.starts_with(self.root) {
            return Ok(());
        }
        self.python_dir(dir)?;
        let top = dotted.split('.').next().unwrap_or_default();
        if top.is_empty() || top.contains(['/', '$']) {
            return Ok(());
        }
        let package = dir.join(top);
        if package.is_dir() && self.inside(&package)?.is_some() {
            let mut budget = Budget {
                owner: &package,
                left: MAX_FILES_PER_PLUGIN,
            };
            self.walk(&package, &mut budget, 1)?;
        }
        Ok(())
    }
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

    #[test]
    fn a_project_plugin_runs_in_the_project_root() {
        let p = Project::new();
        p.hooks("lint", &["sh tools/lint.sh"]);
        let plugins = load_level(&p.root.join(".amplifier/hooks"), Level::Project);
        assert_eq!(working_dir(&plugins[0]), Some(p.root.clone()));
    }
}
