//! Stage 3, the environment: what every handler is given ([`Setting`]: the recursion marker, the
//! project root's variables, the session, the env file) and what a SessionStart handler exports
//! for the session (`CLAUDE_ENV_FILE`/`AMPLIFIER_ENV_FILE`).

use super::*;

/// What a session env file sets, as a shell sourcing it would: `export PATH="/x:${PATH}"` gives
/// `/x:` and the real PATH, not the text `${PATH}`. A file with nothing a shell would expand is read
/// as it stands; otherwise `/bin/sh` sources it once (`set -a`: plain `K=V` lines count too) and
/// the variables that differ from ours are kept. A file the shell cannot evaluate in time gives
/// nothing rather than literal text that would break every later handler.
pub fn session_exports(text: &str, file: &Path, cwd: &Path) -> Vec<(String, String)> {
    if !text.contains(['$', '`', '\\', '(']) {
        return parse_env_file(text);
    }
    let argv = [
        "/bin/sh".to_string(),
        "-c".to_string(),
        "set -a; . \"$1\" >/dev/null 2>&1 </dev/null; exec env -0".to_string(),
        "sh".to_string(),
        file.to_string_lossy().into_owned(),
    ];
    let finished = execute::run(
        &Spawn {
            label: "source the session env file",
            argv: &argv,
            cwd,
            env: &[],
            stdin: b"",
            timeout: Duration::from_secs(2),
            confine: None,
        },
        false,
    )
    .finished();
    if finished.exit != Some(0) {
        return Vec::new();
    }
    finished
        .stdout
        .split('\0')
        .filter_map(|entry| entry.split_once('='))
        .filter(|(key, value)| {
            !matches!(*key, "PWD" | "OLDPWD" | "SHLVL" | "_")
                && std::env::var_os(key).is_none_or(|ours| ours != *value)
        })
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// `export K=V` and `K=V` lines, quotes stripped, no evaluation (as the bridge reads them).
pub fn parse_env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
            let (key, value) = line.split_once('=')?;
            let valid = !key.is_empty()
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !key.starts_with(|c: char| c.is_ascii_digit());
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            valid.then(|| (key.to_string(), value.to_string()))
        })
        .collect()
}

/// Where and with what environment handlers run, and the session env file around them.
pub(super) struct Setting {
    pub(super) state: StateDir,
    pub(super) env: Vec<(String, String)>,
    pub(super) env_file: PathBuf,
    /// The env file before SessionStart handlers ran (their exports are forwarded after).
    pub(super) env_before: Option<String>,
    pub(super) deadline: Instant,
}

impl Setting {
    pub(super) fn new(
        request: &Request<'_>,
        state: &StateDir,
        session: Option<&str>,
        cwd: PathBuf,
    ) -> Setting {
        let env_file = session::env_file(state, session);
        let mut env: Vec<(String, String)> =
            vec![(amplihack_env::AMPLIHACK_FORWARDED.into(), "1".into())];
        for key in amplihack_env::PROJECT_ROOT {
            env.push((key.into(), cwd.to_string_lossy().into_owned()));
        }
        if let Some(session) = session {
            env.push((
                amplihack_env::AMPLIFIER_SESSION_ID.into(),
                session.to_string(),
            ));
        }
        // Claude Code hands what SessionStart handlers export to the Bash tool (sourced in its
        // shell), not to later hooks: so does amplihack under it (and reads nothing here). Amplifier's
        // hook-shell bridge hands them to later hooks: amplihack does too, evaluated as a shell would.
        if request.host == Host::Amplifier
            && let Ok(text) = std::fs::read_to_string(&env_file)
            && !text.trim().is_empty()
        {
            env.extend(session_exports(&text, &env_file, &cwd));
        }
        let mut env_before = None;
        if request.event.name == EventName::SessionStart {
            // Private: what plugins export may be secret.
            let _ = files::open_append(&env_file);
            for key in [
                amplihack_env::CLAUDE_ENV_FILE,
                amplihack_env::AMPLIFIER_ENV_FILE,
            ] {
                env.push((key.into(), env_file.to_string_lossy().into_owned()));
            }
            env_before = Some(std::fs::read_to_string(&env_file).unwrap_or_default());
        }
        Setting {
            state: state.clone(),
            env,
            env_file,
            env_before,
            deadline: Instant::now() + request.budget,
        }
    }

    pub(super) fn finish(&self, var: &dyn Fn(&str) -> Option<String>) {
        if let Some(before) = &self.env_before {
            forward_exports(&self.env_file, before, var);
        }
    }
}

pub(super) fn handler_env(
    base: &[(String, String)],
    candidate: &Candidate<'_>,
    state: &StateDir,
) -> Vec<(String, String)> {
    let plugin = candidate.plugin;
    let mut env = base.to_vec();
    if plugin.level == Level::Project {
        // Later entries win: the project root trust resolved the plugin's paths against.
        for key in amplihack_env::PROJECT_ROOT {
            env.push((key.into(), candidate.cwd.to_string_lossy().into_owned()));
        }
        // Running a trusted Python plugin must not add `__pycache__` files, which trust covers.
        env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
    }
    let data = plugin_data_dir(state, plugin);
    // Created when a handler of the plugin runs, as Claude Code creates it; a failure leaves the
    // handler to find it missing.
    let _ = std::fs::create_dir_all(&data);
    env.push((
        amplihack_env::CLAUDE_PLUGIN_DATA.into(),
        data.to_string_lossy().into_owned(),
    ));
    env.push((
        amplihack_env::CLAUDE_PLUGIN_ROOT.into(),
        plugin.root.to_string_lossy().into_owned(),
    ));
    env.push((
        amplihack_env::AMPLIFIER_HOOKS_DIR.into(),
        plugin.hooks_dir.to_string_lossy().into_owned(),
    ));
    env
}

/// The host's event with `tool_input` replaced (keys and their order otherwise kept).
pub(super) fn with_tool_input(raw: &serde_json::Map<String, Value>, input: &Value) -> Vec<u8> {
    let mut map = raw.clone();
    let key = if map.contains_key("toolInput") && !map.contains_key("tool_input") {
        "toolInput"
    } else {
        "tool_input"
    };
    map.insert(key.into(), input.clone());
    serde_json::to_vec(&Value::Object(map)).unwrap_or_default()
}

/// The most of the host's env file read before appending to it (it is the host's, and every
/// SessionStart handler writes to it).
pub(super) const MAX_ENV_FILE: u64 = 1 << 20;

/// The host's own env file (Claude Code sources it before each Bash command), when it gives one
/// other than amplihack's own.
pub(super) fn host_env_file(var: &dyn Fn(&str) -> Option<String>, own: &Path) -> Option<PathBuf> {
    var(amplihack_env::CLAUDE_ENV_FILE)
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .filter(|f| f != own)
}

/// Appends `text` to the host's env file (a failure leaves the Bash tool's shell as it was).
pub(super) fn append(host_file: &Path, text: &str) {
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(host_file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
}

/// What SessionStart plugins exported also reaches the host's own env file (Claude Code sources it
/// before each Bash command), as it would had the plugin been registered with Claude Code.
pub(super) fn forward_exports(env_file: &Path, before: &str, var: &dyn Fn(&str) -> Option<String>) {
    let after = std::fs::read_to_string(env_file).unwrap_or_default();
    let added = after.strip_prefix(before).unwrap_or(&after);
    let Some(host_file) = host_env_file(var, env_file) else {
        return;
    };
    if added.trim().is_empty() {
        return;
    }
    let mut text = added.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    append(&host_file, &text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_file_lines_as_the_bridge_reads_them() {
        let text = "export A=1\nB=\"two words\"\nexport C='x'\n# comment\n9X=no\nbad-key=no\n  export D = spaced\n";
        let pairs = parse_env_file(text);
        assert_eq!(
            pairs,
            vec![
                ("A".to_string(), "1".to_string()),
                ("B".to_string(), "two words".to_string()),
                ("C".to_string(), "x".to_string()),
            ]
        );
    }

    #[test]
    fn a_file_that_expands_is_sourced_by_a_shell_and_one_that_does_not_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("env");
        let plain = "export AMPLIHACK_TEST_PLAIN=/x\n";
        std::fs::write(&file, plain).expect("write");
        assert_eq!(
            session_exports(plain, &file, dir.path()),
            vec![("AMPLIHACK_TEST_PLAIN".to_string(), "/x".to_string())]
        );
        let expanding = "export AMPLIHACK_TEST_EXPANDED=\"/y:${HOME}\"\n";
        std::fs::write(&file, expanding).expect("write");
        let home = std::env::var("HOME").unwrap_or_default();
        assert!(
            session_exports(expanding, &file, dir.path())
                .contains(&("AMPLIHACK_TEST_EXPANDED".to_string(), format!("/y:{home}")))
        );
    }
}
