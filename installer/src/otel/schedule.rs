//! `amplihack install --otel[=WHERE]`: sets `amplihack log export --otlp` to run, and says how.
//!
//! * `systemd`: a user timer, every 5 minutes (`$XDG_CONFIG_HOME/systemd/user/amplihack-otel-export.{service,timer}`),
//!   enabled with `systemctl --user` when this user's manager is running;
//! * `launchd`: a user agent, every 5 minutes (`~/Library/LaunchAgents/com.amplihack.otel-export.plist`),
//!   loaded with `launchctl bootstrap` on macOS;
//! * `session-end`: at each SessionEnd the hook binary starts the export as a detached child
//!   (`<state>/otel-session-end` names the `amplihack` it runs; the hook binary itself sends
//!   nothing).
//!
//! `auto` (the default): launchd on macOS, systemd where this user's manager runs, else
//! session-end. Each also saves the `OTEL_*` settings of the environment it runs in
//! ([`super::config::SAVED`]) for the export that runs without the user's shell.

use std::path::{Path, PathBuf};

use amplihack_state::StateDir;
use amplihack_state::files::{self, StateError};

/// How often a timer or an agent exports.
pub const EVERY_SECS: u64 = 300;
pub const UNIT: &str = "amplihack-otel-export";
pub const AGENT: &str = "com.amplihack.otel-export";
/// The marker the hook binary reads at SessionEnd: the `amplihack` to run.
pub const SESSION_END_MARKER: &str = amplihack_state::OTEL_SESSION_END_MARKER;

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Auto,
    Systemd,
    Launchd,
    SessionEnd,
}

/// Where the schedule's files go.
pub struct Places {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` (default `~/.config`).
    pub config_home: PathBuf,
    /// `$XDG_RUNTIME_DIR`, where a running systemd user manager has its socket.
    pub runtime_dir: Option<PathBuf>,
    pub state: StateDir,
}

impl Places {
    pub fn from_env(home: &Path) -> Option<Places> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Some(Places {
            home: home.to_path_buf(),
            config_home: var(amplihack_env::XDG_CONFIG_HOME)
                .unwrap_or_else(|| home.join(".config")),
            runtime_dir: var(amplihack_env::XDG_RUNTIME_DIR),
            state: StateDir::from_env()?,
        })
    }

    pub fn unit_dir(&self) -> PathBuf {
        self.config_home.join("systemd/user")
    }

    pub fn agent_file(&self) -> PathBuf {
        self.home
            .join("Library/LaunchAgents")
            .join(format!("{AGENT}.plist"))
    }

    /// This user's systemd manager is running (its private socket exists).
    fn systemd_running(&self) -> bool {
        self.runtime_dir
            .as_ref()
            .is_some_and(|d| d.join("systemd/private").exists())
    }
}

/// What was set up, for the install's report.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled {
    pub via: Via,
    pub files: Vec<PathBuf>,
    /// One line: how it runs, and what the user still has to do, if anything.
    pub said: String,
}

/// Picks where, writes the files (and starts the timer or agent where that can be done).
pub fn set_up(
    via: Via,
    amplihack: &Path,
    places: &Places,
    var: &dyn Fn(&str) -> Option<String>,
    dry_run: bool,
) -> Result<Scheduled, StateError> {
    let via = match via {
        Via::Auto if cfg!(target_os = "macos") => Via::Launchd,
        Via::Auto if places.systemd_running() => Via::Systemd,
        Via::Auto => Via::SessionEnd,
        chosen => chosen,
    };
    let saved = super::config::saved_path(&places.state);
    let mut files = vec![saved.clone()];
    let mut written: Vec<(PathBuf, String, u32)> =
        vec![(saved, super::config::saved_text(var), 0o600)];
    let program = amplihack.display().to_string();
    let said = match via {
        Via::Systemd => {
            let (service, timer) = (
                places.unit_dir().join(format!("{UNIT}.service")),
                places.unit_dir().join(format!("{UNIT}.timer")),
            );
            written.push((service.clone(), service_text(&program), 0o644));
            written.push((timer.clone(), timer_text(), 0o644));
            files.extend([service, timer.clone()]);
            let started = !dry_run && places.systemd_running() && enable_timer();
            if started {
                format!(
                    "a systemd user timer, every {} minutes ({}), enabled",
                    EVERY_SECS / 60,
                    timer.display()
                )
            } else {
                format!(
                    "a systemd user timer, every {} minutes ({}); start it with `systemctl --user daemon-reload && systemctl --user enable --now {UNIT}.timer`",
                    EVERY_SECS / 60,
                    timer.display()
                )
            }
        }
        Via::Launchd => {
            let agent = places.agent_file();
            let log = places.state.file("otel-export.log");
            written.push((agent.clone(), agent_text(&program, &log), 0o600));
            files.push(agent.clone());
            let loaded = !dry_run && cfg!(target_os = "macos") && bootstrap(&agent);
            if loaded {
                format!(
                    "a launchd agent, every {} minutes ({}), loaded",
                    EVERY_SECS / 60,
                    agent.display()
                )
            } else {
                format!(
                    "a launchd agent, every {} minutes ({}); load it with `launchctl bootstrap gui/$(id -u) {}`",
                    EVERY_SECS / 60,
                    agent.display(),
                    agent.display()
                )
            }
        }
        Via::SessionEnd | Via::Auto => {
            let marker = places.state.file(SESSION_END_MARKER);
            written.push((marker.clone(), format!("{program}\n"), 0o600));
            files.push(marker);
            format!(
                "at the end of each session, in a detached `{program} log export --otlp` (no systemd user manager or launchd here)"
            )
        }
    };
    if !dry_run {
        for (path, text, mode) in &written {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(files::io_error(parent, "create directory"))?;
            }
            files::replace_with_mode(path, text.as_bytes(), *mode)?;
        }
        // One way at a time: the other ways' timer, agent or marker go.
        stop(places, Some(via));
        for path in present(places, Some(via)) {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(Scheduled { via, files, said })
}

/// `install`'s outcome with the schedule set up and said (a line of text, `otel` in JSON).
pub fn with_schedule(
    mut outcome: crate::commands::Outcome,
    via: Via,
    project: &Path,
    dry_run: bool,
) -> Result<crate::commands::Outcome, crate::commands::CommandError> {
    let locations = crate::scopes::Locations::from_env(project)?;
    let places = Places::from_env(&locations.home).ok_or_else(|| {
        crate::commands::CommandError::refused(
            "no state directory: neither XDG_STATE_HOME nor HOME is set; set HOME",
        )
    })?;
    // The amplihack install deployed (recorded in its manifest), else this one.
    let amplihack = amplihack_state::manifest::load(&places.state)
        .ok()
        .and_then(|m| m.bin_dir)
        .map(|dir| dir.join("amplihack"))
        .filter(|p| p.is_file())
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("amplihack"));
    let var = |name: &str| std::env::var(name).ok();
    let scheduled = set_up(via, &amplihack, &places, &var, dry_run)?;
    let verb = if dry_run { "would send" } else { "sends" };
    outcome.text.push_str(&format!(
        "OpenTelemetry: {verb} the audit records from {}\n",
        scheduled.said
    ));
    if let serde_json::Value::Object(map) = &mut outcome.json {
        map.insert(
            "otel".into(),
            serde_json::json!({
                "via": match scheduled.via {
                    Via::Systemd => "systemd",
                    Via::Launchd => "launchd",
                    Via::SessionEnd | Via::Auto => "session-end",
                },
                "files": scheduled.files,
                "said": scheduled.said,
            }),
        );
    }
    Ok(outcome)
}

/// `uninstall` (with the binaries): the timer is stopped and its units, the agent, the
/// session-end marker and the saved settings go; returns what was (or would be) removed. A file
/// at one of these paths that amplihack did not write (no header of ours) is left.
pub fn remove(places: &Places, dry_run: bool) -> Vec<PathBuf> {
    let mut gone = present(places, None);
    let saved = super::config::saved_path(&places.state);
    if saved.is_file() && ours(&saved, "amplihack log export --otlp") {
        gone.push(saved);
    }
    if !dry_run {
        stop(places, None);
        for path in &gone {
            let _ = std::fs::remove_file(path);
        }
    }
    gone
}

fn ours(path: &Path, mark: &str) -> bool {
    amplihack_state::bounded::read_text(path, 64 * 1024).is_ok_and(|t| t.contains(mark))
}

/// The files of each way but `keep` that are there and amplihack's.
fn present(places: &Places, keep: Option<Via>) -> Vec<PathBuf> {
    [
        (
            Via::Systemd,
            places.unit_dir().join(format!("{UNIT}.service")),
            HEADER,
        ),
        (
            Via::Systemd,
            places.unit_dir().join(format!("{UNIT}.timer")),
            HEADER,
        ),
        (Via::Launchd, places.agent_file(), HEADER),
        (Via::SessionEnd, places.state.file(SESSION_END_MARKER), ""),
    ]
    .into_iter()
    .filter(|(via, path, mark)| Some(*via) != keep && path.is_file() && ours(path, mark))
    .map(|(_, path, _)| path)
    .collect()
}

/// Stops the timer and the agent (unless `keep` is their way), where they run.
fn stop(places: &Places, keep: Option<Via>) {
    let quiet = |command: &mut std::process::Command| {
        let _ = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    };
    let timer = places.unit_dir().join(format!("{UNIT}.timer"));
    if keep != Some(Via::Systemd) && ours(&timer, HEADER) && places.systemd_running() {
        quiet(std::process::Command::new("systemctl").args([
            "--user",
            "disable",
            "--now",
            &format!("{UNIT}.timer"),
        ]));
    }
    let agent = places.agent_file();
    if keep != Some(Via::Launchd) && ours(&agent, HEADER) && cfg!(target_os = "macos") {
        let uid = amplihack_platform::fs::real_uid();
        quiet(
            std::process::Command::new("launchctl")
                .arg("bootout")
                .arg(format!("gui/{uid}"))
                .arg(&agent),
        );
    }
}

/// The first words of every file `install --otel` writes outside the state directory.
const HEADER: &str = "Written by `amplihack install --otel`";

fn service_text(program: &str) -> String {
    format!(
        "# Written by `amplihack install --otel`: sends amplihack's audit records to OpenTelemetry.\n\
         [Unit]\n\
         Description=amplihack: send the audit records as OTLP logs\n\n\
         [Service]\n\
         Type=oneshot\n\
         ExecStart=\"{}\" log export --otlp\n",
        program.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

fn timer_text() -> String {
    format!(
        "# Written by `amplihack install --otel`.\n\
         [Unit]\n\
         Description=amplihack: send the audit records as OTLP logs every {} minutes\n\n\
         [Timer]\n\
         OnBootSec=2min\n\
         OnUnitActiveSec={}s\n\
         Persistent=true\n\n\
         [Install]\n\
         WantedBy=timers.target\n",
        EVERY_SECS / 60,
        EVERY_SECS
    )
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn agent_text(program: &str, log: &Path) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `amplihack install --otel`: sends amplihack's audit records to OpenTelemetry. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{AGENT}</string>
  <key>ProgramArguments</key>
  <array>
    <string>{}</string>
    <string>log</string>
    <string>export</string>
    <string>--otlp</string>
  </array>
  <key>StartInterval</key>
  <integer>{EVERY_SECS}</integer>
  <key>RunAtLoad</key>
  <true/>
  <key>StandardOutPath</key>
  <string>{}</string>
  <key>StandardErrorPath</key>
  <string>{}</string>
</dict>
</plist>
"#,
        xml(program),
        xml(&log.display().to_string()),
        xml(&log.display().to_string())
    )
}

/// `systemctl --user daemon-reload` then `enable --now` the timer; whether both worked.
fn enable_timer() -> bool {
    let run = |args: &[&str]| {
        std::process::Command::new("systemctl")
            .arg("--user")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    run(&["daemon-reload"]) && run(&["enable", "--now", &format!("{UNIT}.timer")])
}

/// `launchctl bootstrap gui/<uid> <agent>`; whether it worked.
fn bootstrap(agent: &Path) -> bool {
    let uid = amplihack_platform::fs::real_uid();
    std::process::Command::new("launchctl")
        .arg("bootstrap")
        .arg(format!("gui/{uid}"))
        .arg(agent)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(dir: &Path, runtime: Option<PathBuf>) -> Places {
        Places {
            home: dir.join("home"),
            config_home: dir.join("config"),
            runtime_dir: runtime,
            state: StateDir::at(dir.join("state")),
        }
    }

    #[test]
    fn auto_picks_what_this_machine_runs() {
        let dir = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        let bin = Path::new("/opt/bin/amplihack");
        let plain = set_up(Via::Auto, bin, &places(dir.path(), None), &none, true).unwrap();
        if cfg!(target_os = "macos") {
            assert_eq!(plain.via, Via::Launchd);
        } else {
            assert_eq!(plain.via, Via::SessionEnd);
            // A running user manager (its socket): the timer.
            let runtime = dir.path().join("run");
            std::fs::create_dir_all(runtime.join("systemd")).unwrap();
            std::fs::write(runtime.join("systemd/private"), "").unwrap();
            let with = set_up(
                Via::Auto,
                bin,
                &places(dir.path(), Some(runtime)),
                &none,
                true,
            )
            .unwrap();
            assert_eq!(with.via, Via::Systemd);
        }
    }

    #[test]
    fn the_unit_quotes_the_program() {
        let text = service_text("/home/a b/.local/bin/amplihack");
        assert!(
            text.contains("ExecStart=\"/home/a b/.local/bin/amplihack\" log export --otlp\n"),
            "{text}"
        );
        let agent = agent_text("/a&b/amplihack", Path::new("/s/otel-export.log"));
        assert!(
            agent.contains("<string>/a&amp;b/amplihack</string>"),
            "{agent}"
        );
    }
}
