//! Codex's hook trust, through Codex's own interface: `codex app-server` (JSON-RPC, one JSON
//! object a line over stdio). Codex skips every hook nobody trusted, without a word in `codex
//! exec`; the trust is `[hooks.state."<key>"] trusted_hash` in `$CODEX_HOME/config.toml`, keyed
//! `<hooks.json path>:<event>:<group>:<handler>`, and the hash is Codex's own (command, matcher
//! and timeout): never computed here. `hooks/list` tells each hook's key, current hash and trust
//! status; `config/batchWrite` writes the trust.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one request may take (Codex starts in well under a second).
const REQUEST_LIMIT: Duration = Duration::from_secs(30);

/// One hook as `hooks/list` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    /// `preToolUse`, ...
    pub event_name: String,
    pub command: String,
    pub source_path: PathBuf,
    pub current_hash: String,
    /// `trusted`, `untrusted`, `modified`, ... (Codex's words).
    pub trust_status: String,
}

impl Listed {
    pub fn trusted(&self) -> bool {
        self.trust_status == "trusted"
    }
}

/// The `codex` to ask: `$AMPLIHACK_CODEX_BIN`, else `codex` on `PATH`.
pub fn codex_binary() -> Option<PathBuf> {
    if let Some(bin) =
        std::env::var_os(amplihack_env::AMPLIHACK_CODEX_BIN).filter(|v| !v.is_empty())
    {
        return Some(PathBuf::from(bin));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("codex"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A running `codex app-server`, initialised.
pub struct AppServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl AppServer {
    /// Starts `<codex> app-server` in `cwd` and does the `initialize` / `initialized` handshake.
    pub fn start(codex: &Path, cwd: &Path) -> Result<AppServer, String> {
        let mut child = Command::new(codex)
            .arg("app-server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{} app-server`: {e}", codex.display()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or("codex app-server: no stdout pipe")?;
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = AppServer {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({"clientInfo": {"name": "amplihack", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        server.send(&json!({"method": "initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or("codex app-server: stdin closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("codex app-server: cannot write: {e}"))
    }

    /// One request; its `result`, or the error Codex answered.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + REQUEST_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).map_err(|_| {
                format!(
                    "codex app-server: no answer to {method} within {}s",
                    REQUEST_LIMIT.as_secs()
                )
            })?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") != Some(&json!(id)) || message.get("method").is_some() {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!("codex app-server: {method} failed: {error}"));
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    /// `hooks/list` for `cwd`: every hook Codex would run there, with its trust status.
    pub fn hooks(&mut self, cwd: &Path) -> Result<Vec<Listed>, String> {
        let result = self.request("hooks/list", json!({"cwds": [cwd]}))?;
        let mut found = Vec::new();
        for entry in result
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for hook in entry
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let text = |k: &str| hook.get(k).and_then(Value::as_str).map(str::to_string);
                if let (Some(key), Some(current_hash)) = (text("key"), text("currentHash")) {
                    found.push(Listed {
                        key,
                        event_name: text("eventName").unwrap_or_default(),
                        command: text("command").unwrap_or_default(),
                        source_path: PathBuf::from(text("sourcePath").unwrap_or_default()),
                        current_hash,
                        trust_status: text("trustStatus").unwrap_or_default(),
                    });
                }
            }
        }
        Ok(found)
    }

    /// Trusts `hooks` at their current hashes: `config/batchWrite` of
    /// `hooks.state."<key>".trusted_hash`.
    pub fn trust(&mut self, hooks: &[&Listed]) -> Result<(), String> {
        if hooks.is_empty() {
            return Ok(());
        }
        let edits: Vec<Value> = hooks
            .iter()
            .map(|h| {
                json!({
                    "keyPath": format!("hooks.state.\"{}\"", h.key),
                    "mergeStrategy": "upsert",
                    "value": {"trusted_hash": h.current_hash}
                })
            })
            .collect();
        self.request("config/batchWrite", json!({"edits": edits}))
            .map(|_| ())
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        // Closing stdin ends the server; it is killed if it lingers.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
