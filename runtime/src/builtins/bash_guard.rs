//! Built-in PreToolUse guard for the Bash tool. It denies two things, however they are quoted,
//! spaced, wrapped (`sudo`, `env`, `exec -a`, `coproc`, `if`/`while`, `bash -o x -c`, `$(…)`,
//! `$((…))`) or chained:
//!
//! * git commands that skip verification: `--no-verify` (or an unambiguous abbreviation, or
//!   `commit -n`) on `commit`, `push`, `merge`, `rebase`, `cherry-pick`, `am`, and the hooks path
//!   redirected for those same commands (`-c core.hooksPath=…`, `--config-env`, `GIT_CONFIG_*`),
//!   also through an alias defined on the command line;
//! * recursive deletion (`rm -r`, `-R`, `--recursive`) of `/`, the home directory, the project
//!   root or any of its parents, including wiping their contents with `dir/*`.
//!
//! A third refusal protects the first two: a command nested deeper than the parser reads
//! ([`shell::MAX_NESTING`] substitutions, [`MAX_DEPTH`] shells) is denied, since what runs there
//! cannot be seen.
//!
//! Paths are resolved lexically against the call's working directory, following `cd` within the
//! command line. A target that cannot be known (a command substitution, a relative path after a
//! `cd` into the unknown) is not guessed at: the guard denies what it can show, nothing else.
//! The work is linear in the command's size: the line is parsed once, and what it runs is checked
//! as the parser finds it.

use amplihack_protocol::{EventName, Reply};

use crate::pipeline::Call;
use amplihack_protocol::shell::{self, Word, basename};

/// The built-in: a deny for a Bash call the guard refuses, else nothing.
pub fn run(call: &Call<'_>) -> Reply {
    let (event, ctx) = (call.event, call.ctx);
    if event.name != EventName::PreToolUse {
        return Reply::default();
    }
    let Some(command) = event.tool().and_then(|tool| tool.bash_command()) else {
        return Reply::default();
    };
    let cwd = ctx.working_dir(event);
    let guard = GuardContext {
        project_root: ctx.project_root(event).to_string_lossy().into_owned(),
        home: ctx.var("HOME"),
        cwd,
        var: &|name| ctx.var(name),
    };
    match check(command, &guard) {
        Some(reason) => Reply::deny(reason),
        None => Reply::default(),
    }
}

/// What the guard knows about where the command runs.
pub struct GuardContext<'a> {
    /// The working directory of the call (the payload's `cwd`).
    pub cwd: String,
    /// The project root (`CLAUDE_PROJECT_DIR`, else the working directory).
    pub project_root: String,
    pub home: Option<String>,
    /// The environment the command would expand variables from.
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

/// Subcommands on which skipping hooks is refused.
const VERIFYING_SUBCOMMANDS: &[&str] = &["commit", "push", "merge", "rebase", "cherry-pick", "am"];

/// Nested shells (`bash -c "…"`, `eval`) deeper than this are refused: the guard cannot see what
/// they run.
const MAX_DEPTH: usize = 16;

/// Shell names whose `-c SCRIPT` is checked as a command line.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "yash", "posh", "busybox",
];

/// What one check has seen and may still spend.
struct Walk {
    /// Characters that re-parsing (`bash -c`, `eval`) may still read: nested shells could
    /// otherwise read a large command many times over.
    budget: usize,
    /// `pushd`'s directory stack.
    dirs: Vec<Option<String>>,
    /// How deeply the command being checked is nested in substitutions, counted across shells:
    /// a `bash -c` script found inside `$(…)` is parsed on from that depth.
    nesting: usize,
    /// The command line assigns a `GIT_CONFIG_*` variable that sets `core.hooksPath`.
    hooks_path_env: bool,
    /// The project root and home directory, normalised once.
    root: String,
    home: Option<String>,
}

/// Returns the reason to deny `command`, or `None` to let it run.
pub fn check(command: &str, ctx: &GuardContext<'_>) -> Option<String> {
    let mut cwd = Some(normalize(&ctx.cwd));
    let mut walk = Walk {
        budget: 2 * command.len() + (64 << 10),
        hooks_path_env: false,
        nesting: 0,
        dirs: Vec::new(),
        root: normalize(&ctx.project_root),
        home: ctx.home.as_deref().map(normalize),
    };
    check_line(command, ctx, &mut cwd, 0, &mut walk)
}

fn too_deep() -> String {
    format!(
        "amplihack blocked this command: it nests substitutions or shells deeper than the Bash guard reads ({} levels of `$(`, `${{`, backticks; {MAX_DEPTH} of `bash -c`/`eval`), so what it runs cannot be checked. Write it flatter.",
        shell::MAX_NESTING
    )
}

fn check_line(
    src: &str,
    ctx: &GuardContext<'_>,
    cwd: &mut Option<String>,
    depth: usize,
    walk: &mut Walk,
) -> Option<String> {
    if depth > MAX_DEPTH || src.len() > walk.budget {
        return Some(too_deep());
    }
    walk.budget -= src.len();
    let here = cwd.clone();
    let vars = |name: &str| {
        if name == "PWD" {
            here.clone()
        } else {
            (ctx.var)(name)
        }
    };
    let nesting = walk.nesting;
    let mut checker = Checker {
        nesting,
        ctx,
        cwd,
        depth,
        walk,
        verdict: None,
    };
    let parsed = shell::parse_into(src, &vars, &mut checker, nesting);
    match checker.verdict {
        Some(reason) => Some(reason),
        None if parsed.too_deep => Some(too_deep()),
        None => None,
    }
}

/// Checks what a line runs as the parser finds it, in the shell's order, and stops the parse at
/// the first deny.
struct Checker<'c, 'g> {
    /// How deeply the line is nested in substitutions (of the lines that run it).
    nesting: usize,
    ctx: &'c GuardContext<'g>,
    cwd: &'c mut Option<String>,
    depth: usize,
    walk: &'c mut Walk,
    verdict: Option<String>,
}

impl shell::Sink for Checker<'_, '_> {
    fn substitution(&mut self, commands: &[shell::SimpleCommand], depth: usize) -> bool {
        if self.verdict.is_some() {
            return false;
        }
        self.walk.nesting = depth;
        // A substitution runs in a subshell: its `cd` does not move the line. Only `cd` (also
        // through `eval`) moves the directory; without it, no copy is needed.
        let moves = commands.iter().any(|c| {
            c.words
                .iter()
                .any(|w| matches!(w.text.as_str(), "cd" | "eval"))
        });
        let mut copy;
        let cwd = if moves {
            copy = self.cwd.clone();
            &mut copy
        } else {
            &mut *self.cwd
        };
        for command in commands {
            self.verdict = check_command(&command.words, self.ctx, cwd, self.depth, self.walk);
            if self.verdict.is_some() {
                return false;
            }
        }
        true
    }

    fn command(&mut self, command: &shell::SimpleCommand) -> bool {
        if self.verdict.is_some() {
            return false;
        }
        self.walk.nesting = self.nesting;
        self.verdict = check_command(&command.words, self.ctx, self.cwd, self.depth, self.walk);
        self.verdict.is_none()
    }

    fn assignment(&mut self, assignment: &str) {
        self.walk.hooks_path_env |= env_sets_hooks_path(assignment);
    }
}

fn check_command(
    words: &[Word],
    ctx: &GuardContext<'_>,
    cwd: &mut Option<String>,
    depth: usize,
    walk: &mut Walk,
) -> Option<String> {
    let (words, assignments) = strip_wrappers(words);
    let (first, args) = words.split_first()?;
    match basename(&first.text) {
        "cd" => {
            *cwd = change_dir(args, ctx, cwd.as_deref());
            None
        }
        // The directory stack, as far as the line shows it: `pushd DIR`, bare `pushd` (swap),
        // `popd`. `+N`/`-N` rotations are not followed: unknown from there on.
        "pushd" | "popd" if args.iter().any(|w| w.text.starts_with(['-', '+'])) => {
            *cwd = None;
            None
        }
        "pushd" if !args.is_empty() => {
            let to = change_dir(args, ctx, cwd.as_deref());
            walk.dirs.push(std::mem::replace(cwd, to));
            None
        }
        "pushd" => {
            if let Some(top) = walk.dirs.pop() {
                walk.dirs.push(std::mem::replace(cwd, top));
            }
            None
        }
        "popd" => {
            if let Some(top) = walk.dirs.pop() {
                *cwd = top;
            }
            None
        }
        shell if SHELLS.contains(&shell) => {
            let args = if shell == "busybox" {
                match args.split_first() {
                    Some((applet, rest)) if matches!(applet.text.as_str(), "sh" | "ash") => rest,
                    _ => return None,
                }
            } else {
                args
            };
            let script = shell_script_argument(args)?;
            let positional = script_positionals(args, script);
            let script = with_positionals(&script.text, positional);
            check_line(&script, ctx, &mut cwd.clone(), depth + 1, walk)
        }
        // `trap 'git commit --no-verify' EXIT`: its first argument runs later, as a script.
        "trap" => {
            let script = args.first().filter(|w| !w.text.starts_with('-'))?;
            check_line(&script.text, ctx, &mut cwd.clone(), depth + 1, walk)
        }
        "eval" => {
            let joined: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            check_line(&joined.join(" "), ctx, cwd, depth + 1, walk)
        }
        // `git …`, or a subcommand's own program (`/usr/lib/git-core/git-commit`): the same.
        program if program == "git" || dashed_git(program).is_some() => {
            let env =
                walk.hooks_path_env || assignments.iter().any(|w| env_sets_hooks_path(&w.text));
            let dashed;
            let args = match dashed_git(program) {
                Some(subcommand) => {
                    dashed = std::iter::once(Word {
                        text: subcommand.to_string(),
                        ..first.clone()
                    })
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>();
                    &dashed[..]
                }
                None => args,
            };
            match check_git(args, env) {
                Git::Deny(reason) => Some(reason),
                Git::Shell(script) => check_line(&script, ctx, &mut cwd.clone(), depth + 1, walk),
                Git::Allow => None,
            }
        }
        "rm" => check_rm(args, walk, cwd.as_deref()),
        _ => None,
    }
}

fn is_assignment(word: &Word) -> bool {
    shell::is_assignment(&word.text)
}

/// Drops what runs *another* command: leading assignments (returned: they are the command's
/// environment), keywords (`if`, `while`, `then`, `coproc`, ...) and wrappers such as
/// `sudo -u x`, `env -i A=1`, `nohup`, `time`, `timeout 5`, `xargs -0`, `command`, `exec -a x`.
fn strip_wrappers(mut words: &[Word]) -> (&[Word], Vec<&Word>) {
    let mut assignments = Vec::new();
    loop {
        let Some((first, rest)) = words.split_first() else {
            return (words, assignments);
        };
        if is_assignment(first) {
            assignments.push(first);
            words = rest;
            continue;
        }
        match basename(&first.text) {
            // `function NAME { …; }` (and `function NAME() { …; }`): the body is checked as
            // the commands it holds, since calling the function runs them.
            "function" => {
                words = match rest {
                    [_, brace, ..] if brace.text == "{" || brace.text == "()" => &rest[1..],
                    [_, ..] => &rest[1..],
                    [] => rest,
                };
                continue;
            }
            "coproc" => {
                // `coproc NAME { …; }`: the name belongs to the keyword.
                words = match rest {
                    [_, brace, ..] if brace.text == "{" => &rest[1..],
                    _ => rest,
                };
                continue;
            }
            // Keywords before a command; options and assignments after them are skipped as
            // after a wrapper without options of its own.
            "then" | "do" | "else" | "if" | "elif" | "while" | "until" | "!" | "{" | "}" => {
                words = skip_own_words(&NO_WRAPPER, rest, &mut assignments);
                continue;
            }
            _ => {}
        }
        let Some(wrapper) = shell::Wrapper::of(&first.text) else {
            return (words, assignments);
        };
        words = skip_own_words(wrapper, rest, &mut assignments);
    }
}

/// A keyword's words are skipped as a wrapper's without options.
const NO_WRAPPER: shell::Wrapper = shell::Wrapper {
    name: "",
    value_options: &[],
    operands: 0,
};

fn skip_own_words<'w>(
    wrapper: &shell::Wrapper,
    args: &'w [Word],
    assignments: &mut Vec<&'w Word>,
) -> &'w [Word] {
    let own = wrapper.own_words(args, |i| assignments.push(&args[i]));
    &args[own..]
}

/// The script of `bash -c SCRIPT` (also `-lc`, `-ec`, `-o pipefail -c`, `-c -e`, ...): with
/// `-c`, the first argument that is not an option.
fn shell_script_argument(args: &[Word]) -> Option<&Word> {
    let mut command_mode = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if matches!(text, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if text.starts_with("--") {
            i += 1; // --login, --norc, --posix, ...
            continue;
        }
        if let Some(flags) = text
            .strip_prefix('-')
            .or_else(|| text.strip_prefix('+'))
            .filter(|f| !f.is_empty())
        {
            command_mode |= text.starts_with('-') && flags.contains('c');
            // Each `o`/`O` in a cluster (`-eo pipefail`) takes the next word as its value.
            i += 1 + flags.chars().filter(|f| matches!(f, 'o' | 'O')).count();
            continue;
        }
        break;
    }
    if command_mode { args.get(i) } else { None }
}

/// The most text substituting a script's positional parameters may add.
const POSITIONAL_BUDGET: usize = 1 << 20;

/// The words after a `-c` script: `$0`, then `$1`, `$2`, ... of the script.
fn script_positionals<'a>(args: &'a [Word], script: &Word) -> &'a [Word] {
    let at = args
        .iter()
        .position(|w| std::ptr::eq(w, script))
        .map_or(args.len(), |i| i + 1);
    args.get(at + 1..).unwrap_or_default()
}

/// `script` with its positional parameters (`"$@"`, `$*`, `$1`…`$9`, `${1}`) replaced by the
/// words given after it, each quoted: `bash -c 'git commit "$@"' _ --no-verify` is checked as
/// what it runs. A script that reads none is returned as it is.
fn with_positionals(script: &str, positional: &[Word]) -> String {
    if positional.is_empty() || !script.contains('$') {
        return script.to_string();
    }
    let quoted: Vec<String> = positional
        .iter()
        .map(|w| amplihack_protocol::command::shell_quote(&w.text))
        .collect();
    let all = quoted.join(" ");
    // Bounded: `"$@"` a million times over a long word must not grow the work past linear.
    let uses = script.matches('$').count();
    if uses.saturating_mul(all.len()) > POSITIONAL_BUDGET {
        return script.to_string();
    }
    let mut out = script
        .replace("\"$@\"", &all)
        .replace("\"$*\"", &all)
        .replace("${@}", &all)
        .replace("$@", &all)
        .replace("$*", &all);
    for (n, word) in quoted.iter().enumerate().take(9).rev() {
        out = out
            .replace(&format!("\"${}\"", n + 1), word)
            .replace(&format!("${{{}}}", n + 1), word)
            .replace(&format!("${}", n + 1), word);
    }
    out
}

fn change_dir(args: &[Word], ctx: &GuardContext<'_>, cwd: Option<&str>) -> Option<String> {
    let target = args
        .iter()
        .find(|w| !w.text.starts_with('-') || w.text == "-");
    match target {
        None => ctx.home.clone(),
        Some(word) if word.opaque || word.glob || word.text == "-" => None,
        Some(word) => resolve(&word.text, cwd),
    }
}

fn resolve(path: &str, cwd: Option<&str>) -> Option<String> {
    let mut out = String::with_capacity(path.len() + cwd.map_or(0, str::len) + 1);
    if !path.starts_with('/') {
        push_normalized(&mut out, cwd?);
    }
    push_normalized(&mut out, path);
    if out.is_empty() {
        out.push('/');
    }
    Some(out)
}

/// Lexical normalisation: no file-system access, so it is quick and cannot be raced.
pub fn normalize(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 1);
    push_normalized(&mut out, path);
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Appends `path`'s components to the normalised absolute path `out` (`""` is `/`).
fn push_normalized(out: &mut String, path: &str) {
    // Split on the byte: `/` is ASCII, so each piece is whole characters.
    let mut rest = Some(path);
    while let Some(left) = rest {
        let component = match left.bytes().position(|b| b == b'/') {
            Some(slash) => {
                rest = Some(&left[slash + 1..]);
                &left[..slash]
            }
            None => {
                rest = None;
                left
            }
        };
        match component {
            "" | "." => {}
            ".." => {
                let parent = out.bytes().rposition(|b| b == b'/').unwrap_or(0);
                out.truncate(parent);
            }
            other => {
                out.push('/');
                out.push_str(other);
            }
        }
    }
}

/// What `git …` amounts to.
enum Git {
    Deny(String),
    /// A `!shell` alias defined on the command line: its script runs.
    Shell(String),
    Allow,
}

/// How many `-c alias.x=…` expansions are followed (git itself refuses loops).
const MAX_ALIASES: usize = 8;

/// The subcommand a dashed git program runs (`git-commit` → `commit`), for the verifying ones.
fn dashed_git(program: &str) -> Option<&str> {
    program
        .strip_prefix("git-")
        .filter(|sub| VERIFYING_SUBCOMMANDS.contains(sub))
}

/// git's global options that take the next word as their value.
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--attr-source",
    "--shallow-file",
    "--super-prefix",
];

/// `env_sets_hooks_path`: the command's environment sets `core.hooksPath` (`GIT_CONFIG_*`).
fn check_git(args: &[Word], env_sets_hooks_path: bool) -> Git {
    check_git_with(args, env_sets_hooks_path, Vec::new(), 0)
}

/// [`check_git`] with the `-c alias.…` seen so far and how many aliases were expanded: an alias
/// may itself start with global options (`alias.ci='-c core.hooksPath=x commit'`).
fn check_git_with(
    args: &[Word],
    env_sets_hooks_path: bool,
    mut aliases: Vec<(String, String)>,
    expanded: usize,
) -> Git {
    let mut hooks_path_override = env_sets_hooks_path;
    let mut i = 0;
    // Global options come before the subcommand; some take a value.
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if GIT_VALUE_OPTIONS.contains(&text) {
            if let Some(value) = args.get(i + 1) {
                if text == "-c" {
                    hooks_path_override |= sets_hooks_path(&value.text);
                    aliases.extend(alias(&value.text));
                } else if text == "--config-env" {
                    hooks_path_override |= sets_hooks_path(&value.text);
                }
            }
            i += 2;
        } else if let Some(value) = text
            .strip_prefix("-c")
            .filter(|v| !v.is_empty() && !text.starts_with("--"))
        {
            hooks_path_override |= sets_hooks_path(value);
            aliases.extend(alias(value));
            i += 1;
        } else if let Some(value) = text.strip_prefix("--config-env=") {
            // `--config-env=core.hooksPath=VAR`: the hooks path comes from `$VAR`.
            hooks_path_override |= sets_hooks_path(value);
            i += 1;
        } else if text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let Some(subcommand) = args.get(i) else {
        return Git::Allow;
    };
    // A subcommand the line computes (`git $c --no-verify`, `printf -v c commit`): whichever
    // it is, skipping verification for one of the verifying subcommands is denied.
    if subcommand.opaque
        && VERIFYING_SUBCOMMANDS
            .iter()
            .any(|s| skips_verification(s, &args[i + 1..]))
    {
        return Git::Deny(
            "amplihack blocked `git <computed subcommand> --no-verify`: skipping the repository's verification hooks is not allowed. Run the git command without --no-verify and fix what the hooks report.".into(),
        );
    }
    let mut subcommand = subcommand.text.clone();
    let mut rest = std::borrow::Cow::Borrowed(&args[i + 1..]);
    // `git -c alias.ci='commit --no-verify' ci`: the alias is what runs (alias names are
    // case-insensitive, as git's config keys). Aliases from the repository's or the user's config
    // files are not read.
    for round in expanded..MAX_ALIASES {
        let Some((_, value)) = aliases
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&subcommand))
        else {
            break;
        };
        if let Some(script) = value.strip_prefix('!') {
            let mut line = script.to_string();
            for word in rest.iter() {
                line.push(' ');
                line.push_str(&word.text);
            }
            return Git::Shell(line);
        }
        let words: Vec<Word> = shell::parse(value, &|_: &str| None)
            .commands
            .into_iter()
            .next()
            .map(|c| c.words)
            .unwrap_or_default();
        let Some((first, more)) = words.split_first() else {
            break;
        };
        if first.text.starts_with('-') {
            // Global options in the alias: read them as git does, before its subcommand.
            let expanded_args: Vec<Word> = words.iter().chain(rest.iter()).cloned().collect();
            return check_git_with(&expanded_args, hooks_path_override, aliases, round + 1);
        }
        subcommand = first.text.clone();
        rest = more.iter().chain(rest.iter()).cloned().collect();
    }
    if !VERIFYING_SUBCOMMANDS.contains(&subcommand.as_str()) {
        return Git::Allow;
    }
    if hooks_path_override {
        return Git::Deny(format!(
            "amplihack blocked `git -c core.hooksPath=… {subcommand}`: redirecting the hooks path (with `-c`, `--config-env` or `GIT_CONFIG_*`) skips the repository's verification hooks. Run `git {subcommand}` without it and fix what the hooks report."
        ));
    }
    if skips_verification(&subcommand, &rest) {
        return Git::Deny(format!(
            "amplihack blocked `git {subcommand} --no-verify`: skipping the repository's verification hooks is not allowed. Run `git {subcommand}` without --no-verify and fix what the hooks report."
        ));
    }
    Git::Allow
}

/// `alias.NAME=VALUE` → (NAME, VALUE). git's config keys are case-insensitive, alias names too.
fn alias(config: &str) -> Option<(String, String)> {
    let (key, value) = config.split_once('=')?;
    let (section, name) = key.split_once('.')?;
    section
        .eq_ignore_ascii_case("alias")
        .then(|| (name.to_string(), value.to_string()))
}

/// An environment assignment that sets `core.hooksPath` for git: `GIT_CONFIG_KEY_<n>=core.hooksPath`
/// or `GIT_CONFIG_PARAMETERS` naming it.
fn env_sets_hooks_path(assignment: &str) -> bool {
    let Some((name, value)) = assignment.split_once('=') else {
        return false;
    };
    const KEY: &[u8] = b"core.hookspath";
    let key_n = name
        .strip_prefix("GIT_CONFIG_KEY_")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    (key_n && value.trim().as_bytes().eq_ignore_ascii_case(KEY))
        || (name == "GIT_CONFIG_PARAMETERS"
            && value
                .as_bytes()
                .windows(KEY.len())
                .any(|w| w.eq_ignore_ascii_case(KEY)))
}

fn sets_hooks_path(config: &str) -> bool {
    config
        .split_once('=')
        .map_or(config, |(key, _)| key)
        .eq_ignore_ascii_case("core.hooksPath")
}

/// Options of the verifying subcommands whose value is the next word: that word is data (a
/// commit message may well say "--no-verify") and must not be read as an option.
fn takes_value(subcommand: &str, option: &str) -> bool {
    let long: &[&str] = match subcommand {
        "commit" => &[
            "--message",
            "--file",
            "--reuse-message",
            "--reedit-message",
            "--fixup",
            "--squash",
            "--author",
            "--date",
            "--template",
            "--cleanup",
            "--trailer",
            "--pathspec-from-file",
        ],
        "push" => &["--push-option", "--repo", "--receive-pack", "--exec"],
        "merge" => &[
            "--message",
            "--file",
            "--strategy",
            "--strategy-option",
            "--into-name",
        ],
        "rebase" => &["--onto", "--strategy", "--strategy-option", "--exec"],
        "cherry-pick" => &["--mainline", "--strategy", "--strategy-option"],
        "am" => &[
            "--directory",
            "--exclude",
            "--include",
            "--patch-format",
            "--resolvemsg",
        ],
        _ => &[],
    };
    long.contains(&option)
}

/// Short options that take a value (attached, or the next word) per subcommand.
fn short_value_options(subcommand: &str) -> &'static str {
    match subcommand {
        "commit" => "mFCct",
        "push" => "o",
        "merge" => "mFsX",
        "rebase" => "sXx",
        "cherry-pick" => "msX",
        "am" => "p",
        _ => "",
    }
}

fn skips_verification(subcommand: &str, args: &[Word]) -> bool {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            // git accepts unambiguous abbreviations; `no-veri` is the shortest that is not also
            // `no-verbose`.
            if name.len() >= "no-veri".len() && "no-verify".starts_with(name) {
                return true;
            }
            if !long.contains('=') && takes_value(subcommand, text) {
                iter.next();
            }
        } else if let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (index, flag) in cluster.char_indices() {
                // `-n` is `--no-verify` for commit and am (push's `-n` is a dry run).
                if matches!(subcommand, "commit" | "am") && flag == 'n' {
                    return true;
                }
                if short_value_options(subcommand).contains(flag) {
                    if index + flag.len_utf8() == cluster.len() {
                        iter.next(); // the value is the next word
                    }
                    break; // the rest of the cluster is the value
                }
            }
        }
    }
    false
}

fn check_rm(args: &[Word], walk: &Walk, cwd: Option<&str>) -> Option<String> {
    let recursive = rm_arguments(args).any(|(option, operand)| {
        let text = option.text.as_str();
        !operand
            && if text.starts_with("--") {
                // GNU getopt accepts any unambiguous prefix: `--r` is already `--recursive`.
                text.len() >= 3 && "--recursive".starts_with(text)
            } else {
                text.contains(['r', 'R'])
            }
    });
    if !recursive {
        return None;
    }
    let mut buf = String::new();
    rm_arguments(args)
        .filter(|&(_, operand)| operand)
        .find_map(|(target, _)| {
            let what = protected_target(target, walk, cwd, &mut buf)?;
            Some(format!(
                "amplihack blocked `rm` of `{}`: it would recursively delete {what}. Delete the specific paths inside it that you mean instead.",
                target.text
            ))
        })
}

/// `rm`'s arguments but the `--` that ends its options, each with whether it is an operand (a
/// target) rather than an option. Read twice, not collected: an `rm` may have 100,000 targets.
fn rm_arguments(args: &[Word]) -> impl Iterator<Item = (&Word, bool)> {
    let mut options_done = false;
    args.iter().filter_map(move |arg| {
        let text = arg.text.as_str();
        if !options_done && text == "--" {
            options_done = true;
            return None;
        }
        Some((
            arg,
            options_done || !text.starts_with('-') || text.len() == 1,
        ))
    })
}

/// Describes the protected directory a target would delete (or wipe with `dir/*`), if any.
fn protected_target(
    word: &Word,
    walk: &Walk,
    cwd: Option<&str>,
    buf: &mut String,
) -> Option<String> {
    if word.opaque || word.text.is_empty() {
        return None;
    }
    let path = if word.glob {
        // Only a component that matches everything (`*`, `.*`) wipes its directory; `*.log` does not.
        let (dir, last) = word
            .text
            .rsplit_once('/')
            .unwrap_or(("", word.text.as_str()));
        let wipes = last.trim_start_matches('.').chars().all(|c| c == '*');
        if !wipes || dir.contains(['*', '?', '[']) {
            return None;
        }
        if dir.is_empty() && word.text.starts_with('/') {
            "/"
        } else if dir.is_empty() {
            "."
        } else {
            dir
        }
    } else {
        word.text.as_str()
    };
    // `resolve`, into a buffer kept from target to target.
    buf.clear();
    if !path.starts_with('/') {
        push_normalized(buf, cwd?);
    }
    push_normalized(buf, path);
    if buf.is_empty() {
        buf.push('/');
    }
    let target = buf.as_str();
    let root = &walk.root;
    if target == "/" {
        Some("the root directory `/`".into())
    } else if walk.home.as_deref() == Some(target) {
        Some(format!("your home directory `{target}`"))
    } else if target == root {
        Some(format!("the project root `{target}`"))
    } else if root.len() > target.len()
        && root.starts_with(target)
        && root.as_bytes().get(target.len()) == Some(&b'/')
    {
        Some(format!("`{target}`, a parent of the project root `{root}`"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(command: &str) -> Option<String> {
        let var = |name: &str| match name {
            "HOME" => Some("/home/u".to_string()),
            "CLAUDE_PROJECT_DIR" => Some("/home/u/work/proj".to_string()),
            _ => None,
        };
        let ctx = GuardContext {
            cwd: "/home/u/work/proj".into(),
            project_root: "/home/u/work/proj".into(),
            home: Some("/home/u".into()),
            var: &var,
        };
        check(command, &ctx)
    }

    #[test]
    fn skipping_verification_is_denied_however_spelled() {
        for command in [
            "git commit --no-verify -m wip",
            "git commit -m wip --no-verify",
            "git commit -n -m wip",
            "git commit -anm wip",
            "git commit --no-veri -m x",
            "git   commit   '--no-verify'",
            "git -C /tmp/x commit --no-verify",
            "git --no-pager commit --no-verify",
            "git -c user.name=x commit --no-verify",
            "git push --no-verify origin main",
            "git push origin main --no-verify",
            "git merge --no-verify feature",
            "git rebase --no-verify main",
            "git cherry-pick --no-verify abc123",
            "git am --no-verify < patch",
            "cd sub && git commit --no-verify",
            "FOO=1 git commit --no-verify",
            "sudo -u bob git push --no-verify",
            "env -i PATH=/bin git commit --no-verify",
            "bash -c 'git commit --no-verify -m x'",
            "sh -lc \"git push --no-verify\"",
            "echo $(git commit --no-verify)",
            "/usr/bin/git commit --no-verify",
            "git -c core.hooksPath=/dev/null commit -m x",
            "git -c core.hookspath=/dev/null push",
            "true; git commit --no-verify",
            "git add . && git commit --no-verify -m 'x'",
            // Hostile-repos round 2: global options with a value before the subcommand.
            "git --attr-source HEAD commit --no-verify -m x",
            "git --shallow-file x commit --no-verify -m x",
            "git --super-prefix a/ commit --no-verify -m x",
            // Aliases: names are case-insensitive; an alias may start with global options.
            "git -c alias.CI='commit --no-verify' ci -m x",
            "git -c alias.ci='-c core.hooksPath=/dev/null commit' ci -m x",
            "git -c alias.ci='-c alias.x=commit x --no-verify' ci -m x",
            // Other paths to git: a subcommand's own program, `am -n`.
            "/usr/lib/git-core/git-commit --no-verify -m x",
            "git-push --no-verify",
            "git am -n < patch",
            "git am -3n < patch",
            // Wrapper options the table did not know.
            "env -iu X git commit --no-verify -m x",
            "ionice --class 2 git commit --no-verify -m x",
            "stdbuf --output L git commit --no-verify -m x",
            "/usr/bin/time -o F git commit --no-verify -m x",
            "sudo --user U git commit --no-verify -m x",
            // bash's ANSI-C quoting: hex, octal and unicode escapes.
            "git commit $'\\x2d\\x2dno-verify' -m x",
            "git commit $'\\055\\055no-verify' -m x",
            "git commit $'\\u002d\\u002dno-verify' -m x",
            "git commit $'--no-\\x76erify' -m x",
            // A subcommand the line computes; a script that runs later.
            "printf -v c %s commit; git $c --no-verify -m x",
            "git $(echo commit) --no-verify -m x",
            "trap 'git commit --no-verify -m x' EXIT",
            "function f { git commit --no-verify -m x; }; f",
            "bash -c 'git commit \"$@\"' _ --no-verify -m x",
            "sh -c 'git \"$1\" \"$2\"' sh commit --no-verify",
        ] {
            let reason = verdict(command).unwrap_or_else(|| panic!("should deny: {command}"));
            assert!(reason.contains("amplihack blocked"), "{command}: {reason}");
        }
    }

    #[test]
    fn mentions_and_other_commands_are_allowed() {
        for command in [
            "git push -n origin main",
            "git --exec-path",
            "git -c alias.ci=commit CI -m x",
            "git commit -m \"--no-verify\"",
            "git commit -m '--no-verify is bad'",
            "git commit -F --no-verify",
            "git commit --message --no-verify",
            "echo git commit --no-verify",
            "git log --no-verify",
            "git status",
            "git push -n origin main",
            "git cherry-pick -n abc",
            "git commit -m 'x' -- --no-verify",
            "grep -r no-verify .",
            "git commit --no-verbose -m x",
        ] {
            assert_eq!(verdict(command), None, "should allow: {command}");
        }
    }

    #[test]
    fn recursive_deletion_of_protected_paths_is_denied() {
        for command in [
            "rm -rf /",
            "rm -rf /*",
            "rm -r -f /",
            "rm -fr ~",
            "rm -rf ~/",
            "rm  -rf   ~/*",
            "rm -rf \"$HOME\"",
            "rm -rf ${HOME}/",
            "rm -R $HOME",
            // Parameter operators that give the same path back.
            "rm -rf ${HOME:0}",
            "rm -rf ${HOME:0:99}",
            "rm -rf ${HOME/x/x}",
            "rm -rf ${HOME//u/u}",
            "rm -rf ${HOME,,}",
            "rm -rf $'\\x2f'",
            "rm --recursive --force /home/u",
            "rm --rec /home/u",
            "rm -rf .",
            "rm -rf ./",
            "rm -rf *",
            "rm -rf ../proj",
            "rm -rf ..",
            "rm -rf ../..",
            "rm -rf /home",
            "rm -rf /home/u/work",
            "rm -rf /home/u/work/proj/sub/../..",
            "rm -rf $CLAUDE_PROJECT_DIR",
            "rm -rf \"$(pwd)\"",
            "sudo rm -rf /",
            "/bin/rm -rf /",
            "cd / && rm -rf *",
            "cd .. && rm -rf proj",
            "cd && rm -rf .",
            "bash -c 'rm -rf ~'",
            "rm -rf build / tmp",
            "rm -rf -- /",
            "rm -rf $UNSET_DIR/",
            "x=$(rm -rf ~)",
            // Command substitutions that resolve to a protected directory.
            "rm -rf $(pwd)",
            "rm -rf \"$(pwd -P)/\"",
            "rm -rf $(realpath .)",
            "rm -rf \"$(realpath ..)\"",
            "rm -rf $(readlink -f ~)",
            "rm -rf $(dirname $(pwd))",
            "rm -rf \"$(dirname \"$(realpath .)\")\"",
            "rm -rf `echo /`",
            "rm -rf $(echo $HOME)",
            "rm -rf $(printf %s /home/u)",
            "rm -rf \"$(dirname ~)/u\"",
            "cd $(dirname $(pwd)) && rm -rf *",
        ] {
            let reason = verdict(command).unwrap_or_else(|| panic!("should deny: {command}"));
            assert!(
                reason.contains("would recursively delete"),
                "{command}: {reason}"
            );
        }
    }

    #[test]
    fn ordinary_deletions_are_allowed() {
        for command in [
            "rm -rf build",
            "rm -rf ./target/debug",
            "rm -rf /tmp/x",
            "rm -rf *.log",
            "rm -rf ~/.cache/thing",
            "rm /home/u/file",
            "rm -f /",
            "rmdir /tmp/x",
            "echo rm -rf /",
            "rm -rf '~'",
            "cd $(mktemp -d) && rm -rf *",
            "rm -rf \"$(mktemp -d)\"",
            "rm -rf node_modules/*",
            "ls ~/ && rm -rf target",
            // Substitutions that resolve somewhere harmless, or cannot be known.
            "rm -rf \"$(pwd)/build\"",
            "rm -rf $(basename $(pwd))",
            "rm -rf $(realpath ./target)",
            "rm -rf \"$(git rev-parse --show-toplevel)/target\"",
            "rm -rf $(cat dirs.txt)",
            "rm -rf $(echo build dist)",
            "rm -rf `echo /tmp/scratch`",
        ] {
            assert_eq!(verdict(command), None, "should allow: {command}");
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Expect {
        /// Denied as a git command that skips verification (`--no-verify`, hooks path).
        Git,
        /// Denied as a recursive deletion of a protected directory.
        Rm,
        /// Denied because the guard cannot read that deep.
        TooDeep,
        Allow,
    }
    use Expect::{Allow, Git, Rm, TooDeep};

    /// One row per spelling: hostile-repos finding 9's bypasses (all were allowed before, all
    /// went through a real `git`/`rm`), the spellings that were already denied, and the
    /// commands that must stay allowed.
    const TABLE: &[(&str, Expect)] = &[
        // Finding 9: compound commands.
        ("if git commit --no-verify -m x; then echo ok; fi", Git),
        ("while git commit --no-verify -m x; do :; done", Git),
        ("until git commit --no-verify -m x; do :; done", Git),
        (
            "if false; then :; elif git commit --no-verify -m x; then :; fi",
            Git,
        ),
        ("if true; then git commit --no-verify -m x; else :; fi", Git),
        // Finding 9: an arithmetic body's command substitution runs.
        (": $(( $(git commit --no-verify -m x >&2; echo 0) ))", Git),
        ("echo $(( 1 + `git commit --no-verify -m x` ))", Git),
        ("(( $(git commit --no-verify -m x) ))", Git),
        // Finding 9: shell options that take a value before `-c`.
        ("bash -o pipefail -c 'git commit --no-verify -m x'", Git),
        ("bash -o errexit -c 'git commit --no-verify -m x'", Git),
        ("bash -eo pipefail -c 'git commit --no-verify -m x'", Git),
        ("bash -O extglob -c 'git commit --no-verify -m x'", Git),
        ("bash +o history -c 'git commit --no-verify -m x'", Git),
        (
            "bash --rcfile /dev/null -c 'git commit --no-verify -m x'",
            Git,
        ),
        ("bash -c -e 'git commit --no-verify -m x'", Git),
        ("sh -c -- 'git commit --no-verify -m x'", Git),
        // Finding 9: coproc.
        ("coproc git commit --no-verify -m x; wait", Git),
        ("coproc C { git commit --no-verify -m x; }; wait", Git),
        // Finding 9: the hooks path set by other means than `-c`.
        (
            "HP=/dev/null git --config-env=core.hooksPath=HP commit -m x",
            Git,
        ),
        (
            "HP=/dev/null git --config-env core.hooksPath=HP commit -m x",
            Git,
        ),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -m x",
            Git,
        ),
        (
            "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hookspath GIT_CONFIG_VALUE_0=/dev/null git push",
            Git,
        ),
        (
            "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null; git commit -m x",
            Git,
        ),
        (
            "GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/dev/null'\" git commit -m x",
            Git,
        ),
        // Finding 9: aliases defined on the command line, field splitting, variables.
        ("git -c alias.ci='commit --no-verify' ci -m x", Git),
        ("git -c alias.ci=commit ci -n -m x", Git),
        ("git -c alias.p='!git push --no-verify' p", Git),
        ("git${IFS}commit${IFS}--no-verify -m x", Git),
        ("git$IFS'commit'$IFS--no-verify", Git),
        ("NV=--no-verify; git commit $NV -m x", Git),
        ("IFS=,; git${IFS}commit${IFS}--no-verify", Git),
        ("IFS=,; C=commit,--no-verify; git $C", Git),
        ("MSG='wip --no-verify'; git commit -m $MSG", Git),
        ("stdbuf -o L git commit --no-verify", Git),
        ("ionice -c 3 rm -rf ~", Rm),
        ("NV='commit --no-verify'; git $NV -m x", Git),
        ("git $EMPTY commit --no-verify -m x", Git),
        ("git commit ${NV:---no-verify} -m x", Git),
        ("git commit $(echo --no-verify) -m x", Git),
        ("git commit `printf -- --no-verify` -m x", Git),
        ("git commit -m \"$(echo --no-verify)\"", Allow),
        // Finding 9: recursive deletion.
        ("if rm -rf ~; then :; fi", Rm),
        ("while rm -rf /; do :; done", Rm),
        ("until rm -rf /; do :; done", Rm),
        ("rm -rf ${HOME:?}", Rm),
        ("rm -rf \"${HOME:?}\"", Rm),
        ("rm -rf \"${HOME:?HOME is unset}/\"", Rm),
        ("rm -rf \"${HOME%/}\"", Rm),
        ("rm -rf \"${PWD%/*}\"", Rm),
        ("rm -rf ${CLAUDE_PROJECT_DIR%%/proj}", Rm),
        ("rm -rf ${UNSET:-/}", Rm),
        ("rm -rf ${HOME:+$HOME}", Rm),
        ("rm -rf ~/{*,.*}", Rm),
        ("rm -rf {/tmp/x,~}", Rm),
        // Duplicates and many words do not hide a target (only what cannot be run at all does).
        ("rm -rf {~,a}{,}{,}{,}{,}{,}{,}{,}", Rm),
        (
            "rm -rf {a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,~}/{a,b,c,}",
            Rm,
        ),
        ("rm -rf {a,b,c}{a,b,c,~}", Allow),
        ("rm -rf {~,{a,b}}{,}{,}{,}{,}{,}{,}{,}", Rm),
        ("rm -rf ~+", Rm),
        ("rm -rf ~+/", Rm),
        ("D=~; rm -rf $D", Rm),
        ("D=~/; rm -rf \"$D\"", Rm),
        ("export D=$HOME; rm -rf $D", Rm),
        ("bash -o errexit -c 'rm -rf ~'", Rm),
        ("coproc rm -rf ~", Rm),
        ("exec -a x rm -rf ~", Rm),
        // Substitutions in here-documents, `${…}` arguments and here-strings run too.
        ("cat <<EOF\n$(git commit --no-verify -m x)\nEOF", Git),
        ("cat <<-EOF\n\t`rm -rf ~`\n\tEOF", Rm),
        ("echo ${X:-$(git commit --no-verify -m x)}", Git),
        ("cat <<< \"$(rm -rf /)\"", Rm),
        // Found by the fuzz run: an outer substitution must not clear an inner one's deny.
        (
            "echo $(true && : $(( $(git commit --no-verify -m x) )))",
            Git,
        ),
        // Checked in the shell's order: `cd` moves what follows, substitutions included.
        ("cd / && echo $(rm -rf *)", Rm),
        ("pushd / && rm -rf *", Rm),
        ("pushd /tmp/x && rm -rf *", Allow),
        ("pushd /tmp/x && popd && rm -rf *", Rm),
        ("pushd /tmp/x && pushd / && popd && rm -rf *", Allow),
        ("pushd / && pushd /tmp/x && pushd && rm -rf *", Rm),
        (
            "git commit -m x; export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath",
            Allow,
        ),
        // Deeper than the guard reads: refused, never overflowed.
        (
            "echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(git commit --no-verify)))))))))",
            Git,
        ),
        // Already denied before (from finding 9's 52): keep them.
        ("$'git' commit $'--no-verify'", Git),
        ("\\git commit --no-verify", Git),
        ("command git commit --no-verify", Git),
        ("{ git commit --no-verify; }", Git),
        ("! git commit --no-verify", Git),
        ("f() { git commit --no-verify; }; f", Git),
        ("case x in x) git commit --no-verify;; esac", Git),
        ("bash -lic 'git commit --no-verify'", Git),
        ("bash --login -c 'git commit --no-verify'", Git),
        ("env -u X git commit --no-verify", Git),
        ("env --chdir /tmp git commit --no-verify", Git),
        ("git -c core.hookspath=/dev/null commit", Git),
        ("git commit -qn -m x", Git),
        ("git commit -nm x", Git),
        ("git commit --no-verif -m x", Git),
        ("git commit --no-verify=true -m x", Git),
        ("git commit -F- --no-verify", Git),
        ("rm -rf -- ~/", Rm),
        ("rm -rf .[!.]* *", Rm),
        ("rm -rf ~///", Rm),
        ("rm -rf /root/..", Rm),
        // Allowed: git itself refuses these as ambiguous.
        ("git commit --no-v -m x", Allow),
        ("git commit --no-ve -m x", Allow),
        // Allowed: mentions, messages and ordinary commands.
        ("git commit -m \"fix --no-verify docs\"", Allow),
        ("git commit -m --no-verify", Allow),
        ("git commit -am 'mention -n and --no-verify'", Allow),
        ("git -c alias.ci=commit ci -m x", Allow),
        ("git -c user.name=x commit -m x", Allow),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=x git commit -m x",
            Allow,
        ),
        ("cat <<'EOF'\n$(git commit --no-verify)\nEOF", Allow),
        (
            "cat <<EOF > notes.md\ngit commit --no-verify is refused\nrm -rf ~\nEOF",
            Allow,
        ),
        ("echo $(( 1 + 2 ))", Allow),
        ("bash -o pipefail -c 'git commit -m x | tee log'", Allow),
        ("coproc git status", Allow),
        ("exec -a x rm -rf build", Allow),
        ("rm -rf ~/{build,dist}", Allow),
        ("rm -rf \"${HOME}/.cache/x\"", Allow),
        ("rm -rf \"${TMPDIR:-/tmp}/scratch\"", Allow),
        ("rm -rf ${UNSET:?}/", Allow),
        ("D=build; rm -rf $D", Allow),
        ("MSG='wip --no-verify'; git commit -m \"$MSG\"", Allow),
        ("IFS=,; echo a,b; rm -rf build,~/x", Allow),
        ("for d in a b; do rm -rf $d; done", Allow),
        ("for HOME in /tmp/x; do rm -rf $HOME; done", Allow),
        ("echo '{*,.*}' ~/x", Allow),
        ("rm -rf ~user", Allow),
        ("ls ${HOME%/*}", Allow),
        ("git push origin main", Allow),
        // Everyday commands, as agents write them.
        (
            "git commit -m \"$(cat <<'EOF'\nfix: x --no-verify\n\nrm -rf ~ mentioned\nEOF\n)\"",
            Allow,
        ),
        (
            "gh pr create --title x --body \"$(cat <<'EOF'\n## Summary\n- \"quoted\" (paren) `tick`\nEOF\n)\"",
            Allow,
        ),
        (
            "git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\" && git push --no-verify",
            Git,
        ),
        ("find . -name '*.pyc' -delete", Allow),
        ("rm -rf node_modules && npm install", Allow),
        ("for f in $(ls); do echo $f; done", Allow),
        ("echo ${PATH//:/\\n}", Allow),
        ("awk '{print $1}' file | sort | uniq -c", Allow),
        ("[ -d build ] && rm -rf build || true", Allow),
        ("rm -rf ./*.log ~/.cache/pip", Allow),
        ("docker run --rm -v ~/x:/x img", Allow),
        ("git stash && git pull --rebase && git stash pop", Allow),
        ("git rebase -i HEAD~3", Allow),
        ("git commit --amend --no-edit", Allow),
        ("git merge --no-ff feature", Allow),
        ("git push -u origin feature", Allow),
        ("cd ~/work/proj && git status", Allow),
        ("rm -rf {build,dist,*.egg-info}", Allow),
        (
            "mkdir -p src/{a,b,c,d}/{x,y,z}/{1,2,3,4,5,6} && rm -rf src/{a,b}",
            Allow,
        ),
        // 2^30 arguments: more than any exec takes, so it cannot run; not expanded.
        (
            "rm -rf {~,a}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}",
            Allow,
        ),
        ("python3 -c 'import os; print(os.getcwd())'", Allow),
        ("echo $((RANDOM % 10)) $(( $(wc -l < f) + 1 ))", Allow),
        ("while read -r line; do echo \"$line\"; done < file", Allow),
        ("case \"$1\" in -h|--help) echo usage;; esac", Allow),
        ("cargo test -p amplihack-runtime 2>&1 | tail -40", Allow),
    ];

    #[test]
    fn every_spelling_gets_its_decision() {
        let mut wrong = Vec::new();
        for &(command, expect) in TABLE {
            let got = match verdict(command) {
                None => Allow,
                Some(r) if r.contains("deeper than the Bash guard reads") => TooDeep,
                Some(r) if r.contains("would recursively delete") => Rm,
                Some(r) if r.contains("git") => Git,
                Some(r) => panic!("{command}: unexpected reason {r}"),
            };
            if got != expect {
                wrong.push(format!("{command:?}: expected {expect:?}, got {got:?}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} wrong:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn nesting_beyond_the_bound_is_refused_not_overflowed() {
        for depth in [shell::MAX_NESTING + 1, 10_000, 100_000] {
            let command = format!("echo {}x{}", "$(echo ".repeat(depth), ")".repeat(depth));
            let reason = verdict(&command).unwrap_or_else(|| panic!("depth {depth} allowed"));
            assert!(
                reason.contains("deeper than the Bash guard reads"),
                "{reason}"
            );
            let backticks = format!("echo {}", "`echo \\".repeat(depth.min(30)));
            let _ = verdict(&backticks);
        }
        let shallow = format!(
            "echo {}x{}",
            "$(echo ".repeat(shell::MAX_NESTING - 1),
            ")".repeat(shell::MAX_NESTING - 1)
        );
        assert_eq!(verdict(&shallow), None);
        let nested_shells = format!("{}git status", "eval ".repeat(MAX_DEPTH + 2));
        assert!(verdict(&nested_shells).is_some_and(|r| r.contains("deeper")));
    }
}
