//! `{"type": "http", "url": "...", "headers": {...}, "allowedEnvVars": [...]}`: the event is POSTed
//! to the URL and the answer read as a command's (Claude Code 2.1.63): a 2xx body is its stdout,
//! any other status a non-blocking error. `amplihack-hooks` links no HTTP client:
//!
//! * under Claude Code the handler is registered as Claude Code's own hook entry, as written
//!   ([`HandlerKind::host_entry`]), and Claude Code POSTs it;
//! * under Amplifier the POST is made by a small helper run with the Python the app runs on
//!   (`$AMPLIHACK_PYTHON`, set by amplihack's module; else `python3`), only when such a handler
//!   matches ([`Http::amplifier_program`]). Header values interpolate `$VAR`/`${VAR}` only for the
//!   variables `allowedEnvVars` lists; any other reference becomes empty, as in Claude Code.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, Plan, Planning, required_string};

/// The interpreter flags every helper amplihack runs in a project directory starts with: `-I`
/// (isolated: neither the working directory nor `PYTHON*` variables reach `sys.path`, so a repo's
/// `json.py` is not imported) and `-B` (no bytecode written into the project).
pub const ISOLATED: [&str; 2] = ["-I", "-B"];

/// argv: url, headers (JSON object), allowed variables (JSON array); the event on stdin.
const HELPER: &str = r#"import json, os, re, sys, urllib.error, urllib.request
url, headers, allowed = sys.argv[1], json.loads(sys.argv[2]), set(json.loads(sys.argv[3]))
def fill(value):
    def one(m):
        name = m.group(1) or m.group(2)
        return os.environ.get(name, '') if name in allowed else ''
    return re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)', one, str(value))
sent = {'Content-Type': 'application/json'}
sent.update({k: fill(v) for k, v in headers.items()})
request = urllib.request.Request(url, data=sys.stdin.buffer.read(), method='POST', headers=sent)
try:
    with urllib.request.urlopen(request) as response:
        sys.stdout.write(response.read().decode('utf-8', 'replace'))
except urllib.error.HTTPError as e:
    sys.exit('http hook: %s answered %d' % (url, e.code))
except Exception as e:
    sys.exit('http hook: %s: %s' % (url, e))
"#;

#[derive(Debug, Clone, PartialEq)]
pub struct Http {
    pub url: String,
    pub headers: Map<String, Value>,
    pub allowed_env_vars: Vec<String>,
    /// The handler as written, for Claude Code to run.
    pub raw: Map<String, Value>,
}

impl Http {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<Http, FieldError> {
        let headers = match handler.get("headers") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(headers)) => {
                if let Some((name, _)) = headers.iter().find(|(_, v)| !v.is_string()) {
                    return Err((
                        format!("{at}.headers.{name}"),
                        "is not a string".into(),
                        "give each header's value as a string".into(),
                    ));
                }
                headers.clone()
            }
            Some(_) => {
                return Err((
                    format!("{at}.headers"),
                    "is not an object".into(),
                    "write {\"Name\": \"value\"}".into(),
                ));
            }
        };
        let allowed_env_vars = match handler.get("allowedEnvVars") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    (
                        format!("{at}.allowedEnvVars"),
                        "holds something that is not a string".into(),
                        "list variable names: [\"API_TOKEN\"]".into(),
                    )
                })?,
            Some(_) => {
                return Err((
                    format!("{at}.allowedEnvVars"),
                    "is not an array".into(),
                    "list variable names: [\"API_TOKEN\"]".into(),
                ));
            }
        };
        Ok(Http {
            url: required_string(handler, at, "url", "the URL to POST the event to")?,
            headers,
            allowed_env_vars,
            raw: handler.clone(),
        })
    }

    /// What runs the POST under Amplifier: `python -I -B -c HELPER url headers allowed`.
    pub fn amplifier_program(&self, python: &str) -> Vec<String> {
        vec![
            python.to_string(),
            ISOLATED[0].into(),
            ISOLATED[1].into(),
            "-c".into(),
            HELPER.into(),
            self.url.clone(),
            Value::Object(self.headers.clone()).to_string(),
            Value::from(self.allowed_env_vars.clone()).to_string(),
        ]
    }
}

impl HandlerKind for Http {
    /// amplihack's own program runs it (not the plugin's code): not confined.
    fn runs_plugin_code(&self) -> bool {
        false
    }

    fn type_name(&self) -> &'static str {
        "http"
    }

    fn label(&self) -> &str {
        &self.url
    }

    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        Err("an `http` handler is a POST: Claude Code runs it (registered as its own hook entry); under Amplifier amplihack's module runs it with the app's Python".into())
    }

    fn host_entry(&self) -> Option<(&Map<String, Value>, super::Version)> {
        Some((&self.raw, (2, 1, 63)))
    }

    /// Under Amplifier the POST is made with the app's Python; under Claude Code, which runs its
    /// own copy, nothing runs here.
    fn when_applies(&self, planning: &Planning<'_>) -> Plan {
        Plan::Process(planning.python.map(|python| self.amplifier_program(python)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helper_runs_isolated_without_bytecode() {
        let handler = serde_json::json!({"type": "http", "url": "http://127.0.0.1:9/hook"});
        let http = Http::parse(handler.as_object().into_iter().next().unwrap(), "h").unwrap();
        let program = http.amplifier_program("python3");
        assert_eq!(program[..4], ["python3", "-I", "-B", "-c"]);
    }
}
