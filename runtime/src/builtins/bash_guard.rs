//! Built-in PreToolUse guard for the Bash tool. It denies two things, however they are quoted,
//! spaced, wrapped (`sudo`, `env`, `bash -c`, `$(…)`) or chained:
//!
//! * git commands that skip verification: `--no-verify` (or an unambiguous abbreviation, or
//!   `commit -n`) on `commit`, `push`, `merge`, `rebase`, `cherry-pick`, `am`, and
//!   `git -c core.hooksPath=…` on those same commands;
//! * recursive deletion (`rm -r`, `-R`, `--recursive`) of `/`, the home directory, the project
//!   root or any of its parents, including wiping their contents with `dir/*`.
//!
//! Paths are resolved lexically against the call's working directory, following `cd` within the
//! command line. A target that cannot be known (a command substitution, a relative path after a
//! `cd` into the unknown) is not guessed at: the guard denies what it can show, nothing else.

use amplihack_protocol::{EventName, Reply};

use super::shell::{self, Word};
use crate::pipeline::Call;

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

/// Nested shells (`bash -c "…"` inside `$(…)` inside …) deeper than this are not followed.
const MAX_DEPTH: usize = 8;

/// Returns the reason to deny `command`, or `None` to let it run.
pub fn check(command: &str, ctx: &GuardContext<'_>) -> Option<String> {
    let mut cwd = Some(normalize(&ctx.cwd));
    check_line(command, ctx, &mut cwd, 0)
}

fn check_line(
    src: &str,
    ctx: &GuardContext<'_>,
    cwd: &mut Option<String>,
    depth: usize,
) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let here = cwd.clone();
    let vars = |name: &str| {
        if name == "PWD" {
            here.clone()
        } else {
            (ctx.var)(name)
        }
    };
    let parsed = shell::parse(src, &vars);
    for body in &parsed.substitutions {
        if let Some(reason) = check_line(body, ctx, &mut cwd.clone(), depth + 1) {
            return Some(reason);
        }
    }
    parsed
        .commands
        .iter()
        .find_map(|command| check_command(&command.words, ctx, cwd, depth))
}

fn check_command(
    words: &[Word],
    ctx: &GuardContext<'_>,
    cwd: &mut Option<String>,
    depth: usize,
) -> Option<String> {
    let words = strip_wrappers(words);
    let (first, args) = words.split_first()?;
    match basename(&first.text) {
        "cd" => {
            *cwd = change_dir(args, ctx, cwd.as_deref());
            None
        }
        "bash" | "sh" | "zsh" | "dash" | "ksh" => {
            let script = shell_script_argument(args)?;
            check_line(&script.text, ctx, &mut cwd.clone(), depth + 1)
        }
        "eval" => {
            let joined: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            check_line(&joined.join(" "), ctx, cwd, depth + 1)
        }
        "git" => check_git(args),
        "rm" => check_rm(args, ctx, cwd.as_deref()),
        _ => None,
    }
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn is_assignment(word: &Word) -> bool {
    match word.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Drops what runs *another* command: leading assignments and wrappers such as `sudo -u x`,
/// `env -i A=1`, `nohup`, `time`, `timeout 5`, `xargs -0`, `command`, `exec`.
fn strip_wrappers(mut words: &[Word]) -> &[Word] {
    loop {
        let Some((first, rest)) = words.split_first() else {
            return words;
        };
        if is_assignment(first) {
            words = rest;
            continue;
        }
        // (wrapper, options that take a separate value)
        let value_options: &[&str] = match basename(&first.text) {
            "sudo" | "doas" => &["-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D"],
            "env" => &["-u", "-C", "-S", "--unset", "--chdir"],
            "nice" => &["-n", "--adjustment"],
            "xargs" => &["-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "command" | "builtin" | "exec" | "nohup" | "time" | "stdbuf" | "then" | "do"
            | "else" | "!" | "{" | "}" => &[],
            _ => return words,
        };
        let is_timeout = basename(&first.text) == "timeout";
        words = rest;
        while let Some((option, after)) = words.split_first() {
            if option.text.starts_with('-') && option.text.len() > 1 {
                words = if value_options.contains(&option.text.as_str()) {
                    after.get(1..).unwrap_or(&[])
                } else {
                    after
                };
            } else if is_assignment(option) {
                words = after;
            } else {
                break;
            }
        }
        if is_timeout {
            // The duration comes before the command.
            words = words.get(1..).unwrap_or(&[]);
        }
    }
}

/// The script of `bash -c SCRIPT` (also `-lc`, `-ec`, ...).
fn shell_script_argument(args: &[Word]) -> Option<&Word> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.text.as_str();
        if text.starts_with('-') && !text.starts_with("--") && text.contains('c') {
            return iter.next();
        }
        if !text.starts_with('-') {
            return None; // a script file, not -c
        }
    }
    None
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
    if path.starts_with('/') {
        Some(normalize(path))
    } else {
        cwd.map(|dir| normalize(&format!("{dir}/{path}")))
    }
}

/// Lexical normalisation: no file-system access, so it is quick and cannot be raced.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

fn check_git(args: &[Word]) -> Option<String> {
    let mut hooks_path_override = false;
    let mut i = 0;
    // Global options come before the subcommand; some take a value.
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if matches!(
            text,
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
        ) {
            if text == "-c" && args.get(i + 1).is_some_and(|v| sets_hooks_path(&v.text)) {
                hooks_path_override = true;
            }
            i += 2;
        } else if let Some(value) = text
            .strip_prefix("-c")
            .filter(|v| !v.is_empty() && !text.starts_with("--"))
        {
            hooks_path_override |= sets_hooks_path(value);
            i += 1;
        } else if text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let subcommand = args.get(i)?.text.as_str();
    if !VERIFYING_SUBCOMMANDS.contains(&subcommand) {
        return None;
    }
    if hooks_path_override {
        return Some(format!(
            "amplihack blocked `git -c core.hooksPath=… {subcommand}`: redirecting the hooks path skips the repository's verification hooks. Run `git {subcommand}` without it and fix what the hooks report."
        ));
    }
    if skips_verification(subcommand, &args[i + 1..]) {
        return Some(format!(
            "amplihack blocked `git {subcommand} --no-verify`: skipping the repository's verification hooks is not allowed. Run `git {subcommand}` without --no-verify and fix what the hooks report."
        ));
    }
    None
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
                if subcommand == "commit" && flag == 'n' {
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

fn check_rm(args: &[Word], ctx: &GuardContext<'_>, cwd: Option<&str>) -> Option<String> {
    let mut recursive = false;
    let mut options_done = false;
    let mut targets = Vec::new();
    for arg in args {
        let text = arg.text.as_str();
        if !options_done && text == "--" {
            options_done = true;
        } else if !options_done && text.starts_with("--") {
            // GNU getopt accepts any unambiguous prefix: `--r` is already `--recursive`.
            recursive |= text.len() >= 3 && "--recursive".starts_with(text);
        } else if !options_done && text.starts_with('-') && text.len() > 1 {
            recursive |= text.contains(['r', 'R']);
        } else {
            targets.push(arg);
        }
    }
    if !recursive {
        return None;
    }
    targets.into_iter().find_map(|target| {
        let what = protected_target(target, ctx, cwd)?;
        Some(format!(
            "amplihack blocked `rm` of `{}`: it would recursively delete {what}. Delete the specific paths inside it that you mean instead.",
            target.text
        ))
    })
}

/// Describes the protected directory a target would delete (or wipe with `dir/*`), if any.
fn protected_target(word: &Word, ctx: &GuardContext<'_>, cwd: Option<&str>) -> Option<String> {
    if word.opaque || word.text.is_empty() {
        return None;
    }
    let path = if word.glob {
        // Only a component that matches everything (`*`, `.*`) wipes its directory; `*.log` does not.
        let (dir, last) = word
            .text
            .rsplit_once('/')
            .unwrap_or(("", word.text.as_str()));
        let rest = last.trim_start_matches('.').replace('*', "");
        if !rest.is_empty() || dir.contains(['*', '?', '[']) {
            return None;
        }
        if dir.is_empty() && word.text.starts_with('/') {
            "/".to_string()
        } else if dir.is_empty() {
            ".".to_string()
        } else {
            dir.to_string()
        }
    } else {
        word.text.clone()
    };
    let target = resolve(&path, cwd)?;
    let root = normalize(&ctx.project_root);
    if target == "/" {
        Some("the root directory `/`".into())
    } else if ctx.home.as_deref().map(normalize).as_deref() == Some(target.as_str()) {
        Some(format!("your home directory `{target}`"))
    } else if target == root {
        Some(format!("the project root `{target}`"))
    } else if root.starts_with(&format!("{target}/")) {
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
        ] {
            let reason = verdict(command).unwrap_or_else(|| panic!("should deny: {command}"));
            assert!(reason.contains("amplihack blocked"), "{command}: {reason}");
        }
    }

    #[test]
    fn mentions_and_other_commands_are_allowed() {
        for command in [
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
}
