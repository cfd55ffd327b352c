//! Where and how `amplihack log export --otlp` sends: the standard OpenTelemetry variables
//! (`OTEL_EXPORTER_OTLP_*`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`), read from the
//! environment, else from the copy `amplihack install --otel` kept ([`SAVED`]) for the timer or
//! agent that runs the export without the user's shell.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use amplihack_env as env;
use amplihack_state::StateDir;

/// The variables the export reads, in the order they are saved.
pub const VARIABLES: &[&str] = &[
    env::OTEL_EXPORTER_OTLP_LOGS_ENDPOINT,
    env::OTEL_EXPORTER_OTLP_ENDPOINT,
    env::OTEL_EXPORTER_OTLP_LOGS_HEADERS,
    env::OTEL_EXPORTER_OTLP_HEADERS,
    env::OTEL_EXPORTER_OTLP_LOGS_TIMEOUT,
    env::OTEL_EXPORTER_OTLP_TIMEOUT,
    env::OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
    env::OTEL_EXPORTER_OTLP_PROTOCOL,
    env::OTEL_RESOURCE_ATTRIBUTES,
    env::OTEL_SERVICE_NAME,
];

/// The saved copy: `<state>/otel.env`, `NAME=value` lines, private (it may hold a token).
pub const SAVED: &str = "otel.env";

/// The endpoint when none is set: a Collector on this machine (the specification's default).
const DEFAULT_BASE: &str = "http://localhost:4318";
/// The logs path appended to `OTEL_EXPORTER_OTLP_ENDPOINT` (not to the logs endpoint).
const LOGS_PATH: &str = "/v1/logs";
/// The specification's default timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the export sends with.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub endpoint: String,
    pub headers: BTreeMap<String, String>,
    pub timeout: Duration,
    /// The resource's attributes: `service.name` (default `amplihack`) and
    /// `OTEL_RESOURCE_ATTRIBUTES`'.
    pub resource: BTreeMap<String, String>,
}

/// A setting the export cannot use: names the variable and the fix.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub variable: &'static str,
    pub problem: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.variable, self.problem)
    }
}

impl std::error::Error for ConfigError {}

pub fn saved_path(state: &StateDir) -> PathBuf {
    state.file(SAVED)
}

/// The saved copy's settings (absent or unreadable: none). Lines other than `NAME=value` of a
/// known variable are ignored.
pub fn read_saved(state: &StateDir) -> BTreeMap<String, String> {
    let text =
        amplihack_state::bounded::read_text(&saved_path(state), 64 * 1024).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(name, _)| VARIABLES.contains(name))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

/// The text of the saved copy for what `var` sets.
pub fn saved_text(var: &dyn Fn(&str) -> Option<String>) -> String {
    let mut text = String::from(
        "# amplihack log export --otlp: the OpenTelemetry settings of `amplihack install --otel`\n",
    );
    for name in VARIABLES {
        if let Some(value) = var(name).filter(|v| !v.contains('\n')) {
            text.push_str(&format!("{name}={value}\n"));
        }
    }
    text
}

impl Config {
    /// From `var` (the environment, then the saved copy).
    pub fn resolve(var: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let set = |name: &str| {
            var(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        for name in [
            env::OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
            env::OTEL_EXPORTER_OTLP_PROTOCOL,
        ] {
            if let Some(protocol) = set(name) {
                if protocol != "http/protobuf" {
                    return Err(ConfigError {
                        variable: if name == env::OTEL_EXPORTER_OTLP_PROTOCOL {
                            env::OTEL_EXPORTER_OTLP_PROTOCOL
                        } else {
                            env::OTEL_EXPORTER_OTLP_LOGS_PROTOCOL
                        },
                        problem: format!(
                            "`{protocol}` is not sent: amplihack sends OTLP as http/protobuf; set it to http/protobuf (or unset it) and point the endpoint at the Collector's OTLP/HTTP port (4318)"
                        ),
                    });
                }
                break;
            }
        }
        let endpoint = match (
            set(env::OTEL_EXPORTER_OTLP_LOGS_ENDPOINT),
            set(env::OTEL_EXPORTER_OTLP_ENDPOINT),
        ) {
            (Some(logs), _) => checked_url(env::OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, logs)?,
            (None, Some(base)) => checked_url(
                env::OTEL_EXPORTER_OTLP_ENDPOINT,
                format!("{}{LOGS_PATH}", base.trim_end_matches('/')),
            )?,
            (None, None) => format!("{DEFAULT_BASE}{LOGS_PATH}"),
        };
        let mut headers = BTreeMap::new();
        // The general headers, then the logs' own over them.
        for name in [
            env::OTEL_EXPORTER_OTLP_HEADERS,
            env::OTEL_EXPORTER_OTLP_LOGS_HEADERS,
        ] {
            if let Some(text) = set(name) {
                for (key, value) in pairs(&text) {
                    headers.insert(key, value);
                }
            }
        }
        let timeout = match (
            set(env::OTEL_EXPORTER_OTLP_LOGS_TIMEOUT),
            set(env::OTEL_EXPORTER_OTLP_TIMEOUT),
        ) {
            (Some(ms), _) => millis(env::OTEL_EXPORTER_OTLP_LOGS_TIMEOUT, &ms)?,
            (None, Some(ms)) => millis(env::OTEL_EXPORTER_OTLP_TIMEOUT, &ms)?,
            (None, None) => DEFAULT_TIMEOUT,
        };
        let mut resource = BTreeMap::from([("service.name".to_string(), "amplihack".to_string())]);
        if let Some(text) = set(env::OTEL_RESOURCE_ATTRIBUTES) {
            resource.extend(pairs(&text));
        }
        if let Some(name) = set(env::OTEL_SERVICE_NAME) {
            resource.insert("service.name".into(), name);
        }
        resource.insert(
            "service.version".into(),
            amplihack_protocol::VERSION.to_string(),
        );
        Ok(Config {
            endpoint,
            headers,
            timeout,
            resource,
        })
    }
}

fn checked_url(variable: &'static str, url: String) -> Result<String, ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(ConfigError {
            variable,
            problem: format!(
                "`{url}` is not an http:// or https:// URL; set it to the Collector's OTLP/HTTP address, e.g. http://localhost:4318"
            ),
        })
    }
}

fn millis(variable: &'static str, text: &str) -> Result<Duration, ConfigError> {
    text.parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| ConfigError {
            variable,
            problem: format!("`{text}` is not a number of milliseconds; set it to one, e.g. 10000"),
        })
}

/// `key=value,key2=value2` as the specification writes headers and resource attributes: keys
/// and values trimmed, values percent-decoded; a pair without `=` is skipped.
pub fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), percent_decoded(v.trim())))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::resolve(&|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn endpoints_as_the_specification_resolves_them() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[], "http://localhost:4318/v1/logs"),
            (
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example:4318/")],
                "https://otel.example:4318/v1/logs",
            ),
            (
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                    ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://b/custom"),
                ],
                "http://b/custom",
            ),
        ];
        for (vars, want) in cases {
            assert_eq!(of(vars).unwrap().endpoint, *want, "{vars:?}");
        }
    }

    #[test]
    fn headers_timeout_and_resource() {
        let config = of(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x=1"),
            ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "x=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod,team=tools",
            ),
        ])
        .unwrap();
        assert_eq!(
            config.headers.get("api-key").map(String::as_str),
            Some("a b")
        );
        assert_eq!(config.headers.get("x").map(String::as_str), Some("2"));
        assert_eq!(config.timeout, Duration::from_millis(2500));
        assert_eq!(
            config.resource.get("service.name").map(String::as_str),
            Some("amplihack")
        );
        assert_eq!(
            config.resource.get("team").map(String::as_str),
            Some("tools")
        );
        let named = of(&[
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=a"),
            ("OTEL_SERVICE_NAME", "b"),
        ])
        .unwrap();
        assert_eq!(
            named.resource.get("service.name").map(String::as_str),
            Some("b")
        );
    }

    #[test]
    fn what_cannot_be_used_is_named_with_the_fix() {
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case<'_>] = &[
            (
                &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "http/protobuf",
            ),
            (
                &[("OTEL_EXPORTER_OTLP_TIMEOUT", "10s")],
                "OTEL_EXPORTER_OTLP_TIMEOUT",
                "milliseconds",
            ),
            (
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")],
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://",
            ),
        ];
        for (vars, variable, fix) in cases {
            let error = of(vars).unwrap_err();
            assert_eq!(error.variable, *variable);
            assert!(error.to_string().contains(fix), "{error}");
        }
        assert!(of(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]).is_ok());
    }

    #[test]
    fn the_saved_copy_keeps_only_the_variables_set() {
        let text = saved_text(&|name| {
            (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://c:4318".to_string())
        });
        assert!(
            text.contains("\nOTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 2);
    }
}
