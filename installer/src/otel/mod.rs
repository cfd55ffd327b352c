//! `amplihack log export --otlp`: the audit log's records sent as OTLP logs (protobuf over
//! HTTP) to an OpenTelemetry Collector or any OTLP/HTTP receiver, each record once.
//!
//! * [`config`]: the standard `OTEL_*` variables (or the copy `install --otel` saved);
//! * [`cursor`]: how far the receiver has accepted, across rotations;
//! * [`records`]: one audit line as one log record;
//! * [`client`]: `opentelemetry-otlp`'s HTTP client trait on the installer's `ureq`;
//! * [`schedule`]: `amplihack install --otel`, which sets the export to run.
//!
//! The hook binary never sends anything: it writes the audit line; this command, run by a
//! timer, an agent or at session end, sends it.

pub mod client;
pub mod config;
pub mod cursor;
pub mod records;
pub mod schedule;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use amplihack_state::StateDir;
use amplihack_state::audit::Record;
use amplihack_state::files::{Lock, StateError};
use opentelemetry::InstrumentationScope;
use opentelemetry::logs::{Logger as _, LoggerProvider as _};
use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{LogBatch, LogExporter as _, SdkLogRecord, SdkLoggerProvider};

use config::{Config, ConfigError};
use cursor::Cursor;

/// What `amplihack log export` was asked.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ExportArgs {
    /// Send the records not sent yet as OTLP logs (http/protobuf) to
    /// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4318
    #[arg(long)]
    pub otlp: bool,
}

/// The most of the log sent in one request.
const BATCH_BYTES: u64 = 1024 * 1024;
/// The name of the lock two exports (a timer's and a session end's) take in turn.
const LOCK: &str = "otlp-export";

/// What one export did.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    pub records: usize,
    /// Lines that are not records (cut by a crash): passed over, counted.
    pub unreadable: usize,
    pub endpoint: String,
}

/// Why an export stopped. What was accepted before stays accepted (the cursor is past it).
#[derive(Debug)]
pub enum ExportError {
    Config(ConfigError),
    /// Another export holds the lock.
    Busy,
    State(StateError),
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The exporter could not be built (a header or endpoint it refused).
    Build(String),
    /// The receiver did not accept a batch: down, refused, or answered an error.
    Send {
        endpoint: String,
        problem: String,
        sent: usize,
    },
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::Config(e) => write!(f, "{e}"),
            ExportError::Busy => f.write_str(
                "another `amplihack log export` is running; this one left the records to it",
            ),
            ExportError::State(e) => write!(f, "{e}"),
            ExportError::Read { path, source } => {
                write!(f, "could not read {}: {source}", path.display())
            }
            ExportError::Build(problem) => write!(
                f,
                "the OTLP exporter refused its settings: {problem}; check the OTEL_EXPORTER_OTLP_* variables"
            ),
            ExportError::Send {
                endpoint,
                problem,
                sent,
            } => write!(
                f,
                "{endpoint} did not accept the records: {problem}; {sent} sent before that; the rest is sent by the next export (check that the Collector is up and the endpoint is its OTLP/HTTP address)"
            ),
        }
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExportError::Config(e) => Some(e),
            ExportError::State(e) => Some(e),
            ExportError::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<StateError> for ExportError {
    fn from(e: StateError) -> Self {
        ExportError::State(e)
    }
}

/// The environment, then the copy `install --otel` saved.
pub fn settings(state: &StateDir) -> impl Fn(&str) -> Option<String> {
    let saved = config::read_saved(state);
    move |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| saved.get(name).cloned())
    }
}

/// Sends what the receiver has not accepted yet, batch by batch, moving the cursor past each
/// batch it accepts.
pub fn export(state: &StateDir, var: &dyn Fn(&str) -> Option<String>) -> Result<Sent, ExportError> {
    let config = Config::resolve(var).map_err(ExportError::Config)?;
    let _lock = match Lock::acquire(&state.dir("locks"), LOCK, Duration::ZERO) {
        Err(StateError::Busy { .. }) => return Err(ExportError::Busy),
        other => other?,
    };
    let client = Arc::new(client::Ureq::new(config.timeout));
    let headers: HashMap<String, String> = config.headers.clone().into_iter().collect();
    let mut exporter = opentelemetry_otlp::LogExporter::builder()
        .with_http()
        .with_shared_http_client(client.clone())
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(config.endpoint.clone())
        .with_timeout(config.timeout)
        .with_headers(headers)
        // One try: a receiver that is down is tried again by the next export, from the cursor.
        .with_retry_policy(RetryPolicy::disabled())
        .build()
        .map_err(|e| ExportError::Build(e.to_string()))?;
    let resource = Resource::builder_empty()
        .with_attributes(
            config
                .resource
                .iter()
                .map(|(k, v)| opentelemetry::KeyValue::new(k.clone(), v.clone())),
        )
        .build();
    exporter.set_resource(&resource);
    let scope = InstrumentationScope::builder("amplihack")
        .with_version(amplihack_protocol::VERSION)
        .build();
    let provider = SdkLoggerProvider::builder().build();
    let logger = provider.logger_with_scope(scope.clone());
    let mut sent = Sent {
        records: 0,
        unreadable: 0,
        endpoint: config.endpoint.clone(),
    };
    for file in cursor::pending(state, cursor::load(state)?) {
        let mut offset = file.offset;
        loop {
            let (bytes, next) =
                cursor::read_lines(&file.path, offset, BATCH_BYTES).map_err(|source| {
                    ExportError::Read {
                        path: file.path.clone(),
                        source,
                    }
                })?;
            if bytes.is_empty() {
                break;
            }
            let (lines, unreadable) =
                amplihack_state::audit::parse(&String::from_utf8_lossy(&bytes));
            let batch: Vec<SdkLogRecord> = lines.iter().map(|line| one(&logger, line)).collect();
            if !batch.is_empty() {
                let refs: Vec<(&SdkLogRecord, &InstrumentationScope)> =
                    batch.iter().map(|r| (r, &scope)).collect();
                futures_executor::block_on(exporter.export(LogBatch::new(&refs))).map_err(|e| {
                    let cause = client.last_error.lock().ok().and_then(|mut l| l.take());
                    ExportError::Send {
                        endpoint: config.endpoint.clone(),
                        problem: cause.unwrap_or_else(|| e.to_string()),
                        sent: sent.records,
                    }
                })?;
            }
            sent.records += batch.len();
            sent.unreadable += unreadable;
            offset = next;
            cursor::save(
                state,
                &Cursor {
                    dev: file.dev,
                    ino: file.ino,
                    offset,
                },
            )?;
        }
    }
    Ok(sent)
}

fn one(logger: &opentelemetry_sdk::logs::SdkLogger, line: &Record) -> SdkLogRecord {
    let mut record = logger.create_log_record();
    records::fill(line, &mut record);
    record
}

/// `amplihack log export` from the command line.
pub fn main(args: &ExportArgs) -> Result<i32, crate::commands::CommandError> {
    use crate::commands::CommandError;
    if !args.otlp {
        return Err(CommandError::usage(
            "log export: name where to: --otlp (the one target today)",
        ));
    }
    let state = StateDir::from_env().ok_or_else(|| {
        CommandError::refused(
            "no state directory: neither XDG_STATE_HOME nor HOME is set; set HOME",
        )
    })?;
    let var = settings(&state);
    match export(&state, &var) {
        Ok(sent) => {
            let mut line = format!("sent {} record(s) to {}", sent.records, sent.endpoint);
            if sent.unreadable > 0 {
                line.push_str(&format!(
                    " ({} unreadable line(s) passed over)",
                    sent.unreadable
                ));
            }
            println!("{line}");
            Ok(0)
        }
        Err(ExportError::Busy) => {
            println!("{}", ExportError::Busy);
            Ok(0)
        }
        Err(ExportError::Config(e)) => Err(CommandError::usage(e.to_string())),
        Err(e @ ExportError::State(StateError::Io { .. })) => {
            Err(CommandError::Internal(e.to_string()))
        }
        Err(e) => Err(CommandError::refused(e.to_string())),
    }
}
