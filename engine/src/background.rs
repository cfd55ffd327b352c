//! Handlers that answer later, run as Claude Code runs them.
//!
//! Three kinds: `"async": true` and `"asyncRewake": true` in `hooks.json`, and a handler whose
//! first line of stdout is `{"async": true}` (with an optional `asyncTimeout` in milliseconds).
//! Claude Code does not wait for them; when one ends, the `systemMessage` and
//! `hookSpecificOutput.additionalContext` of its JSON answer reach the model on the next turn, and
//! an `asyncRewake` handler that exits 2 wakes the model with its stderr.
//!
//! amplihack answers the host before such a handler ends, so a *collector* (this binary again,
//! started with [`COLLECT_FLAG`], detached, no async runtime) waits for it and writes its output
//! to `<state>/async/<session>/<id>.json`. The session's next event that carries context to the
//! model (SessionStart, UserPromptSubmit, PostToolUse) claims and delivers it, exactly once. At
//! SessionEnd, before its own handlers run, the session's handlers still running are cancelled
//! as Claude Code cancels its own when a session ends ([`CANCEL_GRACE`]), and what was never
//! delivered is removed: nothing outlives the session.

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use amplihack_platform::fs as platform_fs;
use amplihack_platform::{io, process};
use amplihack_protocol::{EventName, Reply};
use amplihack_state::{StateDir, files, session_key};
use serde_json::{Value, json};

use crate::answer;
use crate::execute::{self, Handoff, Pipes, Spawn};

/// The hidden argument that makes `amplihack-hooks` a collector: `--collect-async <spec>`.
pub const COLLECT_FLAG: &str = "--collect-async";

/// How long a handler that declared itself async may run when it gave no `asyncTimeout`: the
/// default timeout Claude Code gives command hooks.
const DECLARED_DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How a handler still running when its session ends is cancelled, as Claude Code 2.1.332 cancels
/// its own at the end of a session (before its SessionEnd handlers run): SIGTERM to the handler's
/// process group, then SIGKILL to whatever of the group is left after this grace.
pub const CANCEL_GRACE: Duration = Duration::from_millis(1500);

/// How long SessionEnd waits at most for the handlers it cancelled to end before its own
/// handlers run. Claude Code waits up to [`CANCEL_GRACE`]; the host gives amplihack's SessionEnd
/// little time, so a handler that ignores SIGTERM is left to its collector.
pub const CANCEL_WAIT: Duration = Duration::from_millis(200);

/// What is left of [`CANCEL_GRACE`] when amplihack's SessionEnd runs under Claude Code: Claude
/// Code runs its SessionEnd hooks only after waiting that grace for its own cancelled handlers
/// (observed with 2.1.332: 1.52 s after the cancel), so the moment its SIGKILL would have come
/// has passed; a handler gets this long for its SIGTERM trap, then SIGKILL.
pub const TRAP_WINDOW: Duration = Duration::from_millis(100);

/// The grace a collector gives its handler between SIGTERM and SIGKILL when the session ends
/// under `host`: [`CANCEL_GRACE`], less what the host already waited before SessionEnd.
pub fn cancel_grace(host: amplihack_protocol::Host) -> Duration {
    match host {
        amplihack_protocol::Host::ClaudeCode => TRAP_WINDOW,
        _ => CANCEL_GRACE,
    }
}

/// This collector's grace, from its spec ([`cancel_grace`]), in milliseconds.
static GRACE_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(CANCEL_GRACE.as_millis() as u64);

/// A collector asked to stop (the session ended): cancels its handler (its [`cancel_grace`]).
/// Async-signal-safe.
pub fn cancel_handler() {
    execute::cancel_all_groups(Duration::from_millis(GRACE_MS.load(Ordering::SeqCst)));
}

/// The events whose reply carries context to the model, where answers that arrived are handed
/// over.
pub fn delivers_on(event: &EventName) -> bool {
    matches!(
        event,
        EventName::SessionStart | EventName::UserPromptSubmit | EventName::PostToolUse
    )
}

pub use crate::model::Rewake;

/// One session's background handlers.
pub struct Background<'a> {
    pub state: &'a StateDir,
    pub session: Option<&'a str>,
    /// The host, whose SessionEnd sets how long a cancelled handler is given ([`cancel_grace`]).
    pub host: amplihack_protocol::Host,
}

impl Background<'_> {
    fn dir(&self) -> PathBuf {
        self.state.dir("async").join(session_key(self.session))
    }

    /// Starts an `async` / `asyncRewake` handler under a collector; returns at once.
    pub fn start(
        &self,
        spawn: &Spawn<'_>,
        event: &EventName,
        plugin: &str,
        rewake: Option<&Rewake>,
    ) -> Result<(), String> {
        let mut input = tempfile::tempfile().map_err(|e| format!("temporary stdin: {e}"))?;
        std::io::Write::write_all(&mut input, spawn.stdin)
            .and_then(|()| std::io::Seek::rewind(&mut input))
            .map_err(|e| format!("temporary stdin: {e}"))?;
        let mut spec = self.spec(event, plugin, spawn.label, spawn.timeout, rewake, None)?;
        spec["argv"] = json!(spawn.argv);
        if let Some(rules) = spawn.confine {
            spec["confine"] = crate::confinement::to_json(rules);
        }
        let mut command = self.collector(&spec, spawn.cwd, spawn.env)?;
        command.stdin(Stdio::from(input)).process_group(0);
        command.spawn().map(drop).map_err(|e| e.to_string())
    }

    /// Hands a handler that declared itself async to a collector (in a group of its own: the
    /// handler may already have ended), which stops the handler's group at its timeout or when
    /// the collector itself is stopped.
    pub fn adopt(
        &self,
        handoff: Handoff,
        spawn: &Spawn<'_>,
        event: &EventName,
        plugin: &str,
    ) -> Result<(), String> {
        let timeout = handoff.timeout.unwrap_or(DECLARED_DEFAULT_TIMEOUT);
        let mut spec = self.spec(
            event,
            plugin,
            spawn.label,
            timeout,
            None,
            Some((&handoff.stdout_so_far, &handoff.stderr_so_far)),
        )?;
        spec["group"] = json!(handoff.group);
        // A confined handler's temporary directory outlives us: the collector removes it.
        if let Some(tmp) = handoff.private_tmp {
            spec["private_tmp"] = json!(tmp.keep());
        }
        let mut command = self.collector(&spec, spawn.cwd, spawn.env)?;
        let stderr = handoff.stderr.as_raw_fd();
        command.stdin(Stdio::from(handoff.stdout)).process_group(0);
        // The handler's stderr becomes the collector's descriptor 3.
        process::pass_descriptor(&mut command, stderr, 3);
        let started = command.spawn().map(drop).map_err(|e| e.to_string());
        drop(handoff.stderr);
        started
    }

    fn spec(
        &self,
        event: &EventName,
        plugin: &str,
        command: &str,
        timeout: Duration,
        rewake: Option<&Rewake>,
        adopted: Option<(&[u8], &[u8])>,
    ) -> Result<Value, String> {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let dir = self.dir();
        files::private_dir(&dir).map_err(|e| e.to_string())?;
        let id = format!(
            "{:020}-{}-{}",
            amplihack_state::time::now_unix().as_nanos(),
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        Ok(json!({
            "dir": dir,
            "id": id,
            "event": event.as_str(),
            "plugin": plugin,
            "command": command,
            "timeout_ms": timeout.as_millis() as u64,
            "cancel_grace_ms": cancel_grace(self.host).as_millis() as u64,
            "rewake": rewake.map(|r| json!({"message": r.message})),
            "stdout_so_far": adopted.map(|(out, _)| text(out)),
            "stderr_so_far": adopted.map(|(_, err)| text(err)),
        }))
    }

    fn collector(
        &self,
        spec: &Value,
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<Command, String> {
        let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
        let mut command = Command::new(exe);
        command
            .arg(COLLECT_FLAG)
            .arg(spec.to_string())
            .current_dir(cwd)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (key, value) in env {
            command.env(key, value);
        }
        Ok(command)
    }

    /// Claims every answer that has arrived for this session (exactly once, even with calls
    /// racing) and returns what the model is to read, in the order the handlers started.
    pub fn deliver(&self) -> Reply {
        let mut reply = Reply::default();
        let Ok(entries) = std::fs::read_dir(self.dir()) else {
            return reply;
        };
        let mut arrived: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        arrived.sort();
        for path in arrived {
            let claimed = path.with_extension(format!("claimed-{}", std::process::id()));
            if std::fs::rename(&path, &claimed).is_err() {
                continue; // another call took it
            }
            let text = std::fs::read_to_string(&claimed).unwrap_or_default();
            let _ = std::fs::remove_file(&claimed);
            if let Ok(result) = serde_json::from_str::<Value>(&text) {
                reply.merge(answer_of(&result));
            }
        }
        reply
    }

    /// SessionEnd, before its handlers run: asks each of the session's collectors still running
    /// to cancel its handler ([`CANCEL_GRACE`]: the collector does it), and waits at most `wait`
    /// for them to end, so that the SessionEnd handlers find what a cancelled handler does on
    /// SIGTERM done, as natively. Returns whether the session has background handlers at all (a
    /// failed read of a directory that does not exist is all the common case costs), and a line
    /// for each collector that could not be asked.
    pub fn cancel(&self, wait: Duration, problems: &mut Vec<String>) -> bool {
        let Ok(entries) = std::fs::read_dir(self.dir()) else {
            return false;
        };
        let mut asked = Vec::new();
        for path in entries.flatten().map(|e| e.path()) {
            if path.extension().is_none_or(|x| x != "pid") {
                continue;
            }
            let stopped = match live_collector(&path) {
                Ok(None) => Ok(()),
                // A collector proven alive by the lock it holds on its pid file.
                Ok(Some((pid, file))) => process::ask_to_stop(pid).map(|()| asked.push(file)),
                Err(e) => Err(e),
            };
            if let Err(e) = stopped {
                problems.push(format!(
                    "a background handler of this session could not be cancelled and may still \
                     finish ({}): {e}",
                    path.display()
                ));
            }
        }
        // A collector holds the lock on its pid file until it exits.
        let until = Instant::now() + wait;
        while asked.iter().any(platform_fs::locked_elsewhere) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// SessionEnd, after its handlers ran: cancels what is still running (a SessionEnd handler
    /// may have started one) and removes what was never delivered.
    pub fn end(&self, problems: &mut Vec<String>) {
        self.cancel(Duration::ZERO, problems);
        match std::fs::remove_dir_all(self.dir()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => problems.push(format!(
                "background answers never delivered could not be removed ({}): {e}",
                self.dir().display()
            )),
            _ => {}
        }
    }
}

/// The pid in a collector's pid file and the file open, if that collector still holds its lock
/// (so the pid is not a stale one the system may have reused). A collector that ended meanwhile
/// is `None`.
fn live_collector(pid_file: &Path) -> std::io::Result<Option<(u32, std::fs::File)>> {
    let file = match std::fs::File::open(pid_file) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !platform_fs::locked_elsewhere(&file) {
        return Ok(None);
    }
    let text = std::fs::read_to_string(pid_file)?;
    match text.trim().parse() {
        Ok(pid) => Ok(Some((pid, file))),
        // Locked, and its pid not written yet: the collector is just starting.
        Err(_) if text.is_empty() => Err(std::io::Error::other("it is just starting")),
        Err(_) => Err(std::io::Error::other(format!("pid file holds {text:?}"))),
    }
}

/// What one finished background handler gives the model.
fn answer_of(result: &Value) -> Reply {
    let text = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or_default();
    if result.get("timed_out") == Some(&Value::Bool(true)) {
        return Reply::default(); // stopped at its timeout: Claude Code drops it too
    }
    let event = EventName::parse(text("event"));
    if let Some(rewake) = result.get("rewake").filter(|r| r.is_object()) {
        if result.get("exit").and_then(Value::as_i64) != Some(2) {
            return Reply::default();
        }
        let message = rewake
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "{event} hook blocking error from command \"{}\":",
                    text("command")
                )
            });
        let body = Some(text("stderr").trim())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| text("stdout").trim());
        return Reply {
            unlabelled_context: vec![format!("{message} {body}")],
            ..Reply::default()
        };
    }
    let Some(answer) = answer::async_answer(&event, text("stdout")) else {
        return Reply::default();
    };
    // Claude Code hands both texts to the model as they are: the message first.
    let mut reply = Reply::default();
    reply.unlabelled_context.extend(answer.system_message);
    reply.unlabelled_context.extend(answer.context);
    reply
}

/// The collector: `amplihack-hooks --collect-async <spec>`. Waits for one background handler
/// (started here, or adopted: stdin its stdout, descriptor 3 its stderr), then writes its output
/// for the session's next event. Returns the exit code.
pub fn collect(spec: &str) -> i32 {
    let Ok(spec) = serde_json::from_str::<Value>(spec) else {
        return 2;
    };
    // A confined handler stays confined: rules that cannot be read run nothing.
    let confine = match spec.get("confine") {
        None => None,
        Some(rules) => match crate::confinement::from_json(rules) {
            Some(rules) => Some(rules),
            None => return 1,
        },
    };
    let text = |key: &str| spec.get(key).and_then(Value::as_str).unwrap_or_default();
    let dir = PathBuf::from(text("dir"));
    let id = text("id");
    let timeout =
        Duration::from_millis(spec.get("timeout_ms").and_then(Value::as_u64).unwrap_or(0));
    if let Some(grace) = spec.get("cancel_grace_ms").and_then(Value::as_u64) {
        GRACE_MS.store(grace, Ordering::SeqCst);
    }
    let pid_file = dir.join(format!("{id}.pid"));
    let Ok(pid_lock) = files::open_append(&pid_file) else {
        return 1;
    };
    // Held until we exit.
    platform_fs::hold_lock(&pid_lock);
    let _ = std::fs::write(&pid_file, std::process::id().to_string());

    let adopted_group = spec
        .get("group")
        .and_then(Value::as_i64)
        .and_then(|g| i32::try_from(g).ok())
        .filter(|g| *g > 0)
        .map(i32::unsigned_abs);
    let finished = if let Some(group) = adopted_group {
        let finished = adopted_output(&spec, group, timeout);
        if let Some(tmp) = spec.get("private_tmp").and_then(Value::as_str) {
            let _ = std::fs::remove_dir_all(tmp);
        }
        finished
    } else {
        let mut event = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut event);
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let argv: Vec<String> = match spec.get("argv").and_then(Value::as_array) {
            Some(argv) => argv
                .iter()
                .map(|a| a.as_str().unwrap_or_default().to_string())
                .collect(),
            None => vec!["/bin/sh".into(), "-c".into(), text("command").into()],
        };
        execute::run(
            &Spawn {
                label: text("command"),
                argv: &argv,
                cwd: &cwd,
                env: &[],
                stdin: &event,
                timeout,
                confine: confine.as_ref(),
            },
            false,
        )
        .finished()
    };
    let result = json!({
        "event": text("event"),
        "plugin": text("plugin"),
        "command": text("command"),
        "rewake": spec.get("rewake"),
        "exit": finished.exit,
        "timed_out": finished.timed_out,
        "stdout": finished.stdout,
        "stderr": finished.stderr,
    });
    // Written whole, then renamed into place: a reader never sees half an answer. One stopped at
    // its timeout has nothing to say (Claude Code drops it too).
    if !finished.timed_out {
        let _ = files::replace(
            &dir.join(format!("{id}.json")),
            result.to_string().as_bytes(),
        );
    }
    let _ = std::fs::remove_file(&pid_file);
    if let (true, Some(group)) = (finished.timed_out, adopted_group) {
        // The adopted handler's own group, past its timeout.
        process::kill_group(group);
    }
    0
}

/// Reads an adopted handler's pipes to their end or its timeout (then its group is killed).
fn adopted_output(spec: &Value, group: u32, timeout: Duration) -> execute::Finished {
    let started = Instant::now();
    // A stop signal to the collector (SessionEnd) takes the handler's group with it.
    execute::track_group(group);
    // Descriptors 0 and 3 were set up for us by the process that adopted the handler.
    let stdout = io::duplicate_stdin();
    let stderr = io::take_inherited(3);
    let mut pipes = Pipes::new(stdout, stderr);
    let so_far = |key: &str| {
        spec.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .as_bytes()
            .to_vec()
    };
    pipes.out.kept = so_far("stdout_so_far");
    pipes.err.kept = so_far("stderr_so_far");
    let deadline = started
        .checked_add(timeout)
        .unwrap_or(started + Duration::from_secs(365 * 24 * 3600));
    let ended = pipes.read_until(deadline, None, false);
    pipes.finished(None, ended == execute::Ended::TimedOut, started)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under Claude Code the host's own grace has passed when SessionEnd runs; elsewhere the
    /// collector gives the whole of it.
    #[test]
    fn the_grace_left_at_session_end_depends_on_whether_the_host_waited() {
        for host in amplihack_protocol::Host::ALL {
            let expected = if host == amplihack_protocol::Host::ClaudeCode {
                TRAP_WINDOW
            } else {
                CANCEL_GRACE
            };
            assert_eq!(cancel_grace(host), expected, "{host:?}");
        }
    }
}
