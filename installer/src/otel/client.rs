//! The export's HTTP client: OpenTelemetry's `HttpClient` on the installer's own `ureq` (rustls,
//! blocking, `HTTPS_PROXY`/`NO_PROXY` honoured), so the export adds no second HTTP stack and no
//! async runtime: the exporter's future is driven to its end on this thread.

use std::sync::Mutex;
use std::time::Duration;

use opentelemetry_http::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// The most of a receiver's answer read (an OTLP answer is a few bytes).
const ANSWER_CAP: u64 = 1024 * 1024;

#[derive(Debug)]
pub struct Ureq {
    agent: ureq::Agent,
    /// The last transport failure, in ureq's words (the exporter reports only "network error").
    pub last_error: Mutex<Option<String>>,
}

impl Ureq {
    pub fn new(timeout: Duration) -> Ureq {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .proxy(ureq::Proxy::try_from_env())
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(format!("amplihack/{}", amplihack_protocol::VERSION))
            .build()
            .into();
        Ureq {
            agent,
            last_error: Mutex::new(None),
        }
    }

    fn note(&self, error: &str) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = Some(error.to_string());
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for Ureq {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, body.to_vec());
        let response = self.agent.run(request).map_err(|e| {
            self.note(&e.to_string());
            Box::new(e) as HttpError
        })?;
        let (parts, mut body) = response.into_parts();
        let bytes = body
            .with_config()
            .limit(ANSWER_CAP)
            .read_to_vec()
            .map_err(|e| {
                self.note(&e.to_string());
                Box::new(e) as HttpError
            })?;
        Ok(Response::from_parts(parts, Bytes::from(bytes)))
    }
}
