//! A plugin's `bin/` on the Bash tool's `PATH`, as Claude Code gives each plugin it loads
//! (2.1.332, `tests/plugin_bin_native_e2e.rs`): `<plugin>/bin` appended after the whole `PATH`,
//! one entry per plugin in load order, the plugin's path as given (not resolved), kept only when
//! `stat` (links followed) says it is a directory, and dropped when it holds a character Claude
//! Code refuses in a shell (`: " ' $ ` \`, a line break). Under amplihack the same entries go, at
//! SessionStart, to the host's env file (`CLAUDE_ENV_FILE`, sourced before each Bash command),
//! for the plugins amplihack runs: the user's, and a project's once trusted.

use super::*;

/// What Claude Code drops from `PATH` rather than write into a shell (`Dropping plugin bin path
/// with shell metacharacters`).
const REFUSED: [char; 8] = [':', '"', '\'', '$', '`', '\\', '\n', '\r'];

/// The `bin/` directory of `plugin` that goes on `PATH`, if any. A project plugin's must stay
/// inside the plugin once links are resolved: a repository does not point the model's shell at
/// a directory it does not hold.
pub(super) fn bin_dir(plugin: &Plugin) -> Option<PathBuf> {
    // A plugin directory only: not a level's own hooks file, not an AMCP file.
    if plugin.root.parent() != Some(plugin.hooks_dir.as_path()) || plugin.is_amcp() {
        return None;
    }
    let bin = plugin.root.join("bin");
    if bin.to_string_lossy().contains(REFUSED) {
        return None;
    }
    match std::fs::metadata(&bin) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return None,
        // Claude Code keeps an entry whose `stat` failed otherwise than "absent".
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return None;
        }
        Err(_) if plugin.level == Level::User => {}
        Err(_) => return None,
    }
    if plugin.level == Level::Project {
        let inside = match (bin.canonicalize(), plugin.root.canonicalize()) {
            (Ok(bin), Ok(root)) => bin.starts_with(root),
            _ => false,
        };
        if !inside {
            return None;
        }
    }
    Some(bin)
}

/// One env-file line appending `bin` to `PATH`, quoted for a shell.
pub(super) fn path_line(bin: &Path) -> String {
    format!(
        "export PATH=\"$PATH\":{}\n",
        amplihack_protocol::command::shell_quote(&bin.to_string_lossy())
    )
}

/// The lines for `plugins` (in their order) that `host_text`, the host's env file so far, does
/// not hold yet (a second SessionStart of the session adds nothing twice).
pub(super) fn path_lines(plugins: &[Plugin], host_text: &str) -> String {
    let mut lines = String::new();
    for bin in plugins.iter().filter_map(bin_dir) {
        let line = path_line(&bin);
        if !host_text.lines().any(|l| l == line.trim_end()) && !lines.contains(&line) {
            lines.push_str(&line);
        }
    }
    lines
}

/// Appends the plugins' `bin/` entries to the host's env file, when it gives one (before the
/// SessionStart handlers run, so that what they export comes after, as natively: Claude Code's
/// entries are in the shell before its env files are sourced).
pub(super) fn put_on_path(plugins: &[Plugin], request: &Request<'_>, own: &Path) {
    let Some(host_file) = host_env_file(request.var, own) else {
        return;
    };
    // Bounded: the file is the host's, written by every SessionStart handler.
    let before = amplihack_state::bounded::read_bounded(&host_file, MAX_ENV_FILE)
        .ok()
        .flatten()
        .map(|b| b.text())
        .unwrap_or_default();
    let lines = path_lines(plugins, &before);
    if !lines.is_empty() {
        append(&host_file, &lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(hooks_dir: &Path, name: &str, level: Level) -> Plugin {
        Plugin {
            name: name.into(),
            level,
            root: hooks_dir.join(name),
            hooks_dir: hooks_dir.to_path_buf(),
            file: hooks_dir.join(name).join("hooks/hooks.json"),
            config: Ok(crate::config::PluginConfig {
                description: None,
                enabled: true,
                groups: Vec::new(),
                skipped: Vec::new(),
                needs: Default::default(),
            }),
            parsed: Vec::new(),
        }
    }

    #[test]
    fn each_plugins_bin_directory_as_claude_code_puts_it_on_path() {
        let root = tempfile::tempdir().expect("tempdir");
        let hooks = root.path().join("hooks");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&outside).expect("mkdir");
        // (plugin, what its `bin` is)
        let made = [
            ("no-bin", "none"),
            ("bin-dir", "dir"),
            ("bin-file", "file"),
            ("bin-link", "link"),
            ("bin-dangling", "dangling"),
            ("bin-outside", "outside"),
            ("with space", "dir"),
            ("with'quote", "dir"),
            ("with$dollar", "dir"),
            ("with:colon", "dir"),
        ];
        for (name, kind) in made {
            let bin = hooks.join(name).join("bin");
            std::fs::create_dir_all(hooks.join(name)).expect("mkdir");
            match kind {
                "dir" => std::fs::create_dir_all(&bin).expect("mkdir"),
                "file" => std::fs::write(&bin, "x").expect("write"),
                "link" => {
                    std::fs::create_dir_all(bin.with_file_name("tools")).expect("mkdir");
                    std::os::unix::fs::symlink("tools", &bin).expect("link");
                }
                "dangling" => std::os::unix::fs::symlink("nowhere", &bin).expect("link"),
                "outside" => std::os::unix::fs::symlink(&outside, &bin).expect("link"),
                _ => {}
            }
        }
        let h = hooks.display();
        // (plugin, line as a user plugin, line as a trusted project plugin)
        let user_and_project = |name: &str| Some(format!("export PATH=\"$PATH\":{h}/{name}/bin\n"));
        let table: &[(&str, Option<String>, Option<String>)] = &[
            ("no-bin", None, None),
            (
                "bin-dir",
                user_and_project("bin-dir"),
                user_and_project("bin-dir"),
            ),
            ("bin-file", None, None),
            (
                "bin-link",
                user_and_project("bin-link"),
                user_and_project("bin-link"),
            ),
            ("bin-dangling", None, None),
            // A user's link goes where the user pointed it; a repository's stays in the plugin.
            ("bin-outside", user_and_project("bin-outside"), None),
            (
                "with space",
                Some(format!("export PATH=\"$PATH\":\"{h}/with space/bin\"\n")),
                Some(format!("export PATH=\"$PATH\":\"{h}/with space/bin\"\n")),
            ),
            // Claude Code drops these rather than write them into a shell.
            ("with'quote", None, None),
            ("with$dollar", None, None),
            ("with:colon", None, None),
        ];
        for (name, user, project) in table {
            for (level, expected) in [(Level::User, user), (Level::Project, project)] {
                let plugins = [plugin(&hooks, name, level)];
                let lines = path_lines(&plugins, "");
                assert_eq!(
                    (!lines.is_empty()).then_some(lines),
                    expected.clone(),
                    "{name} at {level:?}"
                );
            }
        }
    }

    #[test]
    fn in_plugin_order_once_and_only_what_the_file_lacks() {
        let root = tempfile::tempdir().expect("tempdir");
        let hooks = root.path().join("hooks");
        for name in ["zz", "aa"] {
            std::fs::create_dir_all(hooks.join(name).join("bin")).expect("mkdir");
        }
        let plugins = [
            plugin(&hooks, "zz", Level::User),
            plugin(&hooks, "aa", Level::User),
            plugin(&hooks, "zz", Level::User),
        ];
        let zz = path_line(&hooks.join("zz/bin"));
        let aa = path_line(&hooks.join("aa/bin"));
        assert_eq!(path_lines(&plugins, ""), format!("{zz}{aa}"));
        assert_eq!(path_lines(&plugins, &format!("export X=1\n{zz}")), aa);
        // The level's own hooks file is no plugin directory.
        let own = Plugin {
            root: hooks.clone(),
            ..plugin(&hooks, "hooks.json", Level::User)
        };
        std::fs::create_dir_all(hooks.join("bin")).expect("mkdir");
        assert_eq!(path_lines(&[own], ""), "");
    }

    #[test]
    fn the_line_sourced_by_a_shell_appends_the_directory() {
        let root = tempfile::tempdir().expect("tempdir");
        let bin = root.path().join("a \"b\" $c `d` \\e/bin");
        let file = root.path().join("env");
        std::fs::write(&file, path_line(&bin)).expect("write");
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", ". \"$1\"; printf %s \"$PATH\"", "sh"])
            .arg(&file)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("sh");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("/usr/bin:/bin:{}", bin.display())
        );
    }
}
