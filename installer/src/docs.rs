//! Shell completions (bash, zsh, fish) and man pages for both binaries, generated from their
//! command lines: `amplihack`'s clap definition, and for `amplihack-hooks` (which parses its own
//! arguments, to start fast) a description built from the hook table, so neither can drift.
//!
//! `amplihack completions SHELL` prints them; `amplihack docs DIR` (hidden, for release
//! archives) writes them all; `amplihack install` puts them where shells and `man` look.

use std::io;
use std::path::{Path, PathBuf};

use amplihack_protocol::table::{HOOKS, HOOKS_BINARY};
use clap::{Arg, ArgAction, CommandFactory};
use clap_complete::Shell;

use crate::cli::Cli;

/// The two programs, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Binary {
    Amplihack,
    #[value(name = "amplihack-hooks")]
    Hooks,
}

impl Binary {
    pub const ALL: [Binary; 2] = [Binary::Amplihack, Binary::Hooks];

    pub fn name(self) -> &'static str {
        match self {
            Binary::Amplihack => "amplihack",
            Binary::Hooks => HOOKS_BINARY,
        }
    }

    /// Its command line as clap describes it.
    pub fn command(self) -> clap::Command {
        match self {
            Binary::Amplihack => Cli::command(),
            Binary::Hooks => hooks_command(),
        }
    }
}

/// `amplihack-hooks`' command line: its options and one subcommand per row of the hook table.
fn hooks_command() -> clap::Command {
    let mut command = clap::Command::new(HOOKS_BINARY)
        .version(amplihack_protocol::VERSION)
        .about("The hook binary every agent calls on every event (Claude Code, Amplifier, Codex, Copilot CLI, Qwen Code, Droid, Gemini CLI, opencode, Pi and Cline CLI)")
        .long_about(
            "Reads one JSON event on stdin, runs amplihack's built-ins and your plugins \
             (~/.amplifier/hooks/ and a trusted project's .amplifier/hooks/), and answers in the \
             calling host's dialect. Fail-open: exit 0 when it handled the event or failed itself \
             (one line on stderr and in the failure log); 1 for invalid input.",
        )
        .disable_help_subcommand(true)
        .arg(
            Arg::new("host")
                .long("host")
                .value_parser(["claude", "amplifier"])
                .help(
                    "The calling host (default: detected; Claude Code unless AMPLIFIER_* is set)",
                ),
        )
        .arg(
            Arg::new("table")
                .long("table")
                .action(ArgAction::SetTrue)
                .help("The hook table as JSON (subcommand, event, deadline, registered timeout)"),
        )
        .arg(
            Arg::new("standby")
                .long("standby")
                .action(ArgAction::SetTrue)
                .help(
                    "Started ahead of its event (amplihack's Amplifier module): waits for stdin, \
                     the deadline counting from the event's arrival; a stdin closed empty exits 0",
                ),
        );
    for hook in HOOKS {
        command = command.subcommand(clap::Command::new(hook.subcommand).about(hook.about));
    }
    command
}

/// The completion script of `binary` for `shell`.
pub fn completions(shell: Shell, binary: Binary) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut binary.command(), binary.name(), &mut out);
    out
}

/// Where each shell looks for a completion file of `binary`, relative to a directory of
/// completions by shell (`bash/amplihack`, `zsh/_amplihack`, `fish/amplihack.fish`).
pub fn completion_file(shell: Shell, binary: Binary) -> PathBuf {
    let name = binary.name();
    match shell {
        Shell::Zsh => PathBuf::from("zsh").join(format!("_{name}")),
        Shell::Fish => PathBuf::from("fish").join(format!("{name}.fish")),
        other => PathBuf::from(other.to_string()).join(name),
    }
}

pub const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

/// The man pages of `binary`: the program's own page and, for `amplihack`, one per command
/// (`amplihack-install.1`, `amplihack-hooks-list.1`), as `(file name, roff)`.
pub fn man_pages(binary: Binary) -> io::Result<Vec<(String, Vec<u8>)>> {
    fn walk(
        command: clap::Command,
        prefix: Option<&str>,
        pages: &mut Vec<(String, Vec<u8>)>,
        deep: bool,
    ) -> io::Result<()> {
        let name = match prefix {
            Some(prefix) => format!("{prefix}-{}", command.get_name()),
            None => command.get_name().to_string(),
        };
        let command = command.display_name(name.clone());
        for sub in command
            .get_subcommands()
            .filter(|s| deep && !s.is_hide_set())
        {
            walk(sub.clone(), Some(&name), pages, deep)?;
        }
        if prefix.is_some() && name == HOOKS_BINARY {
            // `amplihack hooks` would be `amplihack-hooks.1`, the hook binary's own page; its
            // commands have theirs (`amplihack-hooks-list.1`) and `amplihack.1` lists it.
            return Ok(());
        }
        let man = clap_mangen::Man::new(command);
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        pages.push((man.get_filename(), roff));
        Ok(())
    }
    let mut command = binary.command().disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    // The hook binary's subcommands are the table's rows, listed on its page; `amplihack`'s
    // commands each have their own.
    walk(command, None, &mut pages, binary == Binary::Amplihack)?;
    pages.sort();
    Ok(pages)
}

/// Writes every completion file and man page of both binaries under `dir`
/// (`completions/<shell>/...`, `man/man1/*.1`); returns what it wrote.
pub fn write_all(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for binary in Binary::ALL {
        for shell in SHELLS {
            let path = dir.join("completions").join(completion_file(shell, binary));
            write(&path, &completions(shell, binary))?;
            written.push(path);
        }
        for (name, roff) in man_pages(binary)? {
            let path = dir.join("man/man1").join(name);
            write(&path, &roff)?;
            written.push(path);
        }
    }
    Ok(written)
}

fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, bytes)
}

/// Where `amplihack install` puts the man pages and completions of both binaries, so that
/// `man amplihack` and tab completion work without setup:
/// * man pages in `<bin dir>/../share/man/man1` (`man` derives that from a bin dir on PATH)
///   when that `share/` exists, else `$XDG_DATA_HOME/man/man1`;
/// * bash: `$XDG_DATA_HOME/bash-completion/completions/` (bash-completion loads it on demand);
/// * fish: `$XDG_DATA_HOME/fish/vendor_completions.d/` (fish reads it at start);
/// * zsh: `$XDG_DATA_HOME/zsh/site-functions/` (add it to `fpath` before `compinit`).
pub fn user_files(bin_dir: &Path, data_home: &Path) -> io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut files = Vec::new();
    // Beside the binaries when their prefix has a share/ (`~/.local`, `/usr/local`), never a
    // share/ made up beside an odd bin directory (`~/bin`).
    let man = bin_dir
        .parent()
        .map(|prefix| prefix.join("share"))
        .filter(|share| share.is_dir())
        .unwrap_or_else(|| data_home.to_path_buf())
        .join("man/man1");
    for binary in Binary::ALL {
        for (name, roff) in man_pages(binary)? {
            files.push((man.join(name), roff));
        }
        for shell in SHELLS {
            let dir = match shell {
                Shell::Bash => data_home.join("bash-completion/completions"),
                Shell::Fish => data_home.join("fish/vendor_completions.d"),
                _ => data_home.join("zsh/site-functions"),
            };
            let name = completion_file(shell, binary);
            let name = name.file_name().unwrap_or(name.as_os_str());
            files.push((dir.join(name), completions(shell, binary)));
        }
    }
    Ok(files)
}

/// Writes `files` (0644), creating missing directories (0755); returns every file written and
/// every directory created, for `uninstall` to take back.
pub fn install_files(files: &[(PathBuf, Vec<u8>)]) -> io::Result<Vec<PathBuf>> {
    use std::os::unix::fs::PermissionsExt;
    let mut made = Vec::new();
    for (path, bytes) in files {
        let Some(parent) = path.parent() else {
            continue;
        };
        let missing: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|d| !d.exists())
            .map(Path::to_path_buf)
            .collect();
        for dir in missing.into_iter().rev() {
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
                    made.push(dir);
                }
                // Another install running at the same moment made it first: not ours to take back.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
                Err(e) => return Err(e),
            }
        }
        if std::fs::read(path).ok().as_deref() != Some(bytes.as_slice()) {
            write_replacing(path, bytes)?;
        }
        made.push(path.clone());
    }
    Ok(made)
}

/// Writes `bytes` to a temporary file beside `path` (0644) and renames it over `path`, so a
/// reader, or an install running at the same moment, never sees half a file.
fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Removes what [`install_files`] made: the files, then the directories it created, when empty.
pub fn remove_files(made: &[PathBuf]) {
    for path in made.iter().filter(|p| p.is_file()) {
        let _ = std::fs::remove_file(path);
    }
    let mut dirs: Vec<&PathBuf> = made.iter().filter(|p| p.is_dir()).collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in dirs {
        let _ = std::fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shell gets a script that names each subcommand of each binary.
    #[test]
    fn completions_name_every_subcommand_of_both_binaries() {
        for binary in Binary::ALL {
            let subcommands: Vec<String> = binary
                .command()
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| s.get_name().to_string())
                .collect();
            assert!(subcommands.len() > 5, "{binary:?}: {subcommands:?}");
            for shell in SHELLS {
                let script = String::from_utf8(completions(shell, binary)).expect("utf-8");
                for sub in &subcommands {
                    assert!(
                        script.contains(sub.as_str()),
                        "{shell} {binary:?}: no `{sub}`"
                    );
                }
            }
        }
        assert!(
            String::from_utf8(completions(Shell::Bash, Binary::Hooks))
                .expect("utf-8")
                .contains("pre-tool-use")
        );
    }

    /// Each binary has its page, and `amplihack` one per command, each a roff document.
    #[test]
    fn man_pages_cover_both_binaries_and_each_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        let written = write_all(dir.path()).expect("write");
        let man = dir.path().join("man/man1");
        for page in [
            "amplihack.1",
            "amplihack-hooks.1",
            "amplihack-install.1",
            "amplihack-uninstall.1",
            "amplihack-doctor.1",
            "amplihack-hooks-list.1",
        ] {
            let text = std::fs::read_to_string(man.join(page)).unwrap_or_default();
            assert!(
                text.starts_with(".ie \\n(.g .ds Aq") || text.contains(".TH"),
                "{page}"
            );
        }
        let hooks_page = std::fs::read_to_string(man.join("amplihack-hooks.1")).expect("page");
        assert!(hooks_page.contains("pre\\-tool\\-use"), "{hooks_page}");
        assert!(
            written
                .iter()
                .any(|p| p.ends_with("completions/zsh/_amplihack-hooks"))
        );
        assert!(
            written
                .iter()
                .any(|p| p.ends_with("completions/fish/amplihack.fish"))
        );
    }
}
