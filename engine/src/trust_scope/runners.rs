//! The runners that read project files a command does not name: `make` (the Makefile and what it
//! includes), `npm`/`pnpm`/`yarn`/`bun run` (package.json, the lockfile, the script's own
//! command), `just` (the justfile), and those whose inputs trust cannot pin (`npx`, `cargo run`,
//! `go run`, `task`, …), which are noted for the user to accept.

use std::path::{Path, PathBuf};

use amplihack_protocol::shell::Word;

use super::{Base, Line, Refusal, read_python, unresolved};

/// How a runner is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Runner {
    Make,
    Node,
    NodeExec,
    Just,
    /// Runs project sources or tasks trust does not follow: the files pinned, the run noted.
    Opaque(&'static [&'static str], &'static str),
}

/// Each runner by program name.
pub(super) const RUNNERS: &[(&str, Runner)] = &[
    ("make", Runner::Make),
    ("gmake", Runner::Make),
    ("npm", Runner::Node),
    ("pnpm", Runner::Node),
    ("yarn", Runner::Node),
    ("bun", Runner::Node),
    ("npx", Runner::NodeExec),
    ("pnpx", Runner::NodeExec),
    ("bunx", Runner::NodeExec),
    ("just", Runner::Just),
    (
        "task",
        Runner::Opaque(
            &[
                "Taskfile.yml",
                "Taskfile.yaml",
                "taskfile.yml",
                "taskfile.yaml",
            ],
            "task runs what its Taskfile's tasks run, which trust does not follow",
        ),
    ),
    (
        "cargo",
        Runner::Opaque(
            &["Cargo.toml", "Cargo.lock", "build.rs"],
            "cargo builds and runs the project's sources, which trust does not pin",
        ),
    ),
    (
        "go",
        Runner::Opaque(
            &["go.mod", "go.sum"],
            "go builds and runs the project's sources, which trust does not pin",
        ),
    ),
    (
        "deno",
        Runner::Opaque(
            &["deno.json", "deno.jsonc", "deno.lock"],
            "deno runs modules and tasks trust does not follow",
        ),
    ),
    (
        "uv",
        Runner::Opaque(
            &["pyproject.toml", "uv.lock"],
            "uv runs the project's environment and scripts, which trust does not pin",
        ),
    ),
    (
        "poetry",
        Runner::Opaque(
            &["pyproject.toml", "poetry.lock"],
            "poetry runs the project's environment and scripts, which trust does not pin",
        ),
    ),
    (
        "pipenv",
        Runner::Opaque(
            &["Pipfile", "Pipfile.lock"],
            "pipenv runs the project's environment, which trust does not pin",
        ),
    ),
    (
        "tox",
        Runner::Opaque(
            &["tox.ini", "pyproject.toml"],
            "tox runs what its configuration says, which trust does not follow",
        ),
    ),
    (
        "nox",
        Runner::Opaque(
            &["noxfile.py"],
            "nox runs what its noxfile says, which trust does not follow",
        ),
    ),
    (
        "rake",
        Runner::Opaque(
            &["Rakefile"],
            "rake runs what its Rakefile says, which trust does not follow",
        ),
    ),
    (
        "gradle",
        Runner::Opaque(
            &["build.gradle", "build.gradle.kts", "settings.gradle"],
            "gradle builds and runs the project, which trust does not pin",
        ),
    ),
    (
        "mvn",
        Runner::Opaque(
            &["pom.xml"],
            "maven builds and runs the project, which trust does not pin",
        ),
    ),
    (
        "bundle",
        Runner::Opaque(
            &["Gemfile", "Gemfile.lock"],
            "bundler runs the project's gems, which trust does not pin",
        ),
    ),
];

/// The makefiles GNU make looks for, in its order.
const MAKEFILES: &[&str] = &["GNUmakefile", "makefile", "Makefile"];
const JUSTFILES: &[&str] = &["justfile", "Justfile", ".justfile", "JUSTFILE"];
/// package.json and what npm, pnpm, yarn and bun read beside it.
const NODE_FILES: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    "bun.lock",
    "bun.lockb",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
];
/// npm's own commands: not scripts of package.json.
const NODE_BUILTINS: &[&str] = &[
    "install",
    "i",
    "ci",
    "add",
    "remove",
    "uninstall",
    "update",
    "up",
    "ls",
    "list",
    "outdated",
    "audit",
    "why",
    "info",
    "view",
    "config",
    "version",
    "help",
    "init",
    "link",
    "publish",
    "pack",
    "login",
    "logout",
    "whoami",
    "cache",
    "prune",
    "dedupe",
    "doctor",
];
/// Nesting of makefile includes trust follows.
const MAX_INCLUDES: usize = 8;

impl Line<'_, '_> {
    /// `make`, `npm run`, `just`, … in the directory the command runs in.
    pub(super) fn runner(&mut self, name: &str, args: &[Word]) -> Result<(), Refusal> {
        let Some(&(_, kind)) = RUNNERS.iter().find(|(n, _)| *n == name) else {
            return self.words_named(args);
        };
        let shown = std::iter::once(name.to_string())
            .chain(args.iter().map(|w| w.text.clone()))
            .collect::<Vec<_>>()
            .join(" ");
        let Base::Project(dir) = self.base.clone() else {
            if !matches!(self.base, Base::Foreign) {
                self.note(
                    &shown,
                    "a runner in a directory trust cannot follow (a `cd` to a variable)",
                );
            }
            return Ok(());
        };
        match kind {
            Runner::Make => self.make(&dir, &shown, args),
            Runner::Just => self.just(&dir, &shown, args),
            Runner::Node => self.node(&dir, &shown, args),
            Runner::NodeExec => {
                self.pin_present(&dir, NODE_FILES)?;
                self.note(
                    &shown,
                    "runs a package's program (from node_modules/.bin, or the registry), whose files trust does not pin",
                );
                Ok(())
            }
            Runner::Opaque(files, why) => {
                self.pin_present(&dir, files)?;
                self.note(&shown, why);
                self.words_named(args)
            }
        }
    }

    /// Pins each of `names` present in `dir`.
    fn pin_present(&mut self, dir: &Path, names: &[&str]) -> Result<(), Refusal> {
        for name in names {
            let file = dir.join(name);
            if file.is_file() {
                let text = file.to_string_lossy().into_owned();
                self.tree
                    .named_word(&self.base.clone(), &text, true, true)?;
            }
        }
        Ok(())
    }

    /// `make [-f FILE]… [TARGET]…`: the makefile (or those named), what they include, and
    /// the files their recipes name; `-C DIR`, `-I DIR`, a variable include, a recipe built of
    /// variables are noted.
    fn make(&mut self, dir: &Path, shown: &str, args: &[Word]) -> Result<(), Refusal> {
        let mut named: Vec<String> = Vec::new();
        let mut at = 0;
        while let Some(word) = args.get(at) {
            let text = word.text.as_str();
            let value = |attached: &str| {
                if attached.is_empty() {
                    args.get(at + 1).map(|w| (w.text.clone(), 2))
                } else {
                    Some((attached.trim_start_matches('=').to_string(), 1))
                }
            };
            if let Some(rest) = ["--file", "--makefile", "-f"]
                .iter()
                .find_map(|p| text.strip_prefix(p))
            {
                let Some((file, used)) = value(rest) else {
                    break;
                };
                named.push(file);
                at += used;
            } else if ["-C", "--directory", "-I", "--include-dir"]
                .iter()
                .any(|p| text.starts_with(p))
            {
                self.note(shown, "make in another directory or with another include path, which trust does not follow");
                at += if ["-C", "-I", "--directory", "--include-dir"].contains(&text) {
                    2
                } else {
                    1
                };
            } else {
                at += 1;
            }
        }
        let files: Vec<PathBuf> = if named.is_empty() {
            MAKEFILES
                .iter()
                .map(|n| dir.join(n))
                .find(|f| f.is_file())
                .into_iter()
                .collect()
        } else {
            let mut out = Vec::new();
            for name in named {
                let (resolved, _) = self.resolve(&name);
                if unresolved(&resolved).is_some() {
                    self.note(
                        &name,
                        "a makefile named by a variable trust does not follow",
                    );
                } else {
                    out.push(dir.join(resolved));
                }
            }
            out
        };
        for file in files {
            self.makefile(dir, &file, 0)?;
        }
        Ok(())
    }

    /// One makefile: pinned, its includes followed, its recipes read as commands.
    fn makefile(&mut self, dir: &Path, file: &Path, depth: usize) -> Result<(), Refusal> {
        let text = file.to_string_lossy().into_owned();
        let before = self.tree.files.len();
        self.tree
            .named_word(&Base::Project(dir.to_path_buf()), &text, true, true)?;
        if self.tree.files.len() == before || depth > MAX_INCLUDES {
            return Ok(());
        }
        let source = read_python(file);
        for line in logical_lines(&source) {
            let trimmed = line.trim_start();
            let include = ["include ", "-include ", "sinclude "]
                .iter()
                .find_map(|p| trimmed.strip_prefix(p).filter(|_| !line.starts_with('\t')));
            if let Some(names) = include {
                for name in names.split_whitespace() {
                    if name.contains(['$', '*', '?', '[']) {
                        self.note(
                            &format!("include {name}"),
                            "a makefile included by a variable or a glob, which trust does not follow",
                        );
                    } else {
                        self.makefile(dir, &dir.join(name), depth + 1)?;
                    }
                }
            } else if let Some(recipe) = line.strip_prefix('\t') {
                let recipe = recipe.trim_start_matches(['@', '-', '+', ' ']);
                self.recipe(dir, recipe)?;
            } else if trimmed.contains("$(shell") || trimmed.contains("!=") {
                self.note(
                    trimmed,
                    "a makefile line that runs a command when make reads it",
                );
            }
        }
        Ok(())
    }

    /// A recipe line: read as a command in `dir`; one built of make's variables (`$(X)`, `$@`)
    /// is noted.
    fn recipe(&mut self, dir: &Path, recipe: &str) -> Result<(), Refusal> {
        if recipe.trim().is_empty() || recipe.trim_start().starts_with('#') {
            return Ok(());
        }
        if recipe.contains('$') || recipe.contains("{{") {
            self.note(
                recipe.trim(),
                "a recipe built of the runner's variables, which trust does not work out",
            );
            return Ok(());
        }
        self.tree.command(
            self.plugin,
            recipe,
            Base::Project(dir.to_path_buf()),
            self.depth + 1,
        )
    }

    /// `just [-f FILE] [RECIPE]…`: the justfile pinned, its recipes read as make's are.
    fn just(&mut self, dir: &Path, shown: &str, args: &[Word]) -> Result<(), Refusal> {
        let mut file = JUSTFILES.iter().map(|n| dir.join(n)).find(|f| f.is_file());
        let mut at = 0;
        while let Some(word) = args.get(at) {
            match word.text.as_str() {
                "-f" | "--justfile" => {
                    file = args.get(at + 1).map(|w| dir.join(&w.text));
                    at += 2;
                }
                "-d" | "--working-directory" => {
                    self.note(
                        shown,
                        "just in another directory, which trust does not follow",
                    );
                    at += 2;
                }
                _ => at += 1,
            }
        }
        let Some(file) = file else { return Ok(()) };
        let text = file.to_string_lossy().into_owned();
        let before = self.tree.files.len();
        self.tree
            .named_word(&Base::Project(dir.to_path_buf()), &text, true, true)?;
        if self.tree.files.len() == before {
            return Ok(());
        }
        let source = read_python(&file);
        for line in source.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("import ")
                || trimmed.starts_with("mod ")
                || trimmed.starts_with("set dotenv")
            {
                self.note(
                    trimmed,
                    "a justfile line that reads another file, which trust does not follow",
                );
            } else if line.starts_with([' ', '\t']) {
                self.recipe(dir, trimmed.trim_start_matches(['@', '-']))?;
            }
        }
        Ok(())
    }

    /// `npm run SCRIPT`, `npm test`, `yarn SCRIPT`, …: package.json and the lockfile pinned, the
    /// script (with its `pre` and `post` scripts) read as a command whose programs come from
    /// `node_modules/.bin` first; `npm exec`, `pnpm dlx` noted.
    fn node(&mut self, dir: &Path, shown: &str, args: &[Word]) -> Result<(), Refusal> {
        self.pin_present(dir, NODE_FILES)?;
        let mut words = args
            .iter()
            .map(|w| w.text.as_str())
            .filter(|w| !w.starts_with('-'));
        let Some(sub) = words.next() else {
            return Ok(());
        };
        let script = match sub {
            "run" | "run-script" | "rr" => match words.next() {
                Some(script) => script,
                None => return Ok(()),
            },
            "test" | "t" | "start" | "stop" | "restart" => sub,
            "exec" | "x" | "dlx" => {
                self.note(
                    shown,
                    "runs a package's program (from node_modules/.bin, or the registry), whose files trust does not pin",
                );
                return Ok(());
            }
            sub if NODE_BUILTINS.contains(&sub) => {
                self.note(
                    shown,
                    "a package manager command that runs install scripts trust does not pin",
                );
                return Ok(());
            }
            other => other,
        };
        let scripts = package_scripts(&dir.join("package.json"));
        let saved = self.tree.node_bin.replace(dir.join("node_modules/.bin"));
        let mut result = Ok(());
        for name in [
            format!("pre{script}"),
            script.to_string(),
            format!("post{script}"),
        ] {
            if let Some((_, command)) = scripts.iter().find(|(n, _)| *n == name) {
                result = self.tree.command(
                    self.plugin,
                    command,
                    Base::Project(dir.to_path_buf()),
                    self.depth + 1,
                );
                if result.is_err() {
                    break;
                }
            }
        }
        self.tree.node_bin = saved;
        result
    }
}

/// package.json's `scripts`, by name.
fn package_scripts(file: &Path) -> Vec<(String, String)> {
    let text = read_python(file);
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    value
        .get("scripts")
        .and_then(serde_json::Value::as_object)
        .map(|scripts| {
            scripts
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// A makefile's lines with backslash continuations joined (a recipe keeps its leading tab).
fn logical_lines(source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in source.lines() {
        let joined = match pending.take() {
            Some(mut p) => {
                p.push(' ');
                p.push_str(line.trim_start());
                p
            }
            None => line.to_string(),
        };
        if let Some(stripped) = joined.strip_suffix('\\') {
            pending = Some(stripped.to_string());
        } else {
            out.push(joined);
        }
    }
    out.extend(pending);
    out
}
