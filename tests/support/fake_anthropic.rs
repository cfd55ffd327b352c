//! A loopback fake of the Anthropic Messages API, enough for the real Claude Code to run a
//! headless turn: `POST /v1/messages` answered with a scripted server-sent-event stream, token
//! counting, and `{}` for anything else. It records every main-loop request body, which holds
//! what the hooks' output looked like when it reached the model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted assistant turn.
#[derive(Clone, Debug)]
pub enum Turn {
    Text(String),
    ToolUse { name: String, input: Value },
}

impl Turn {
    pub fn text(text: &str) -> Turn {
        Turn::Text(text.to_string())
    }

    pub fn bash(command: &str) -> Turn {
        Turn::ToolUse {
            name: "Bash".into(),
            input: json!({"command": command, "description": "scripted"}),
        }
    }
}

#[derive(Default)]
struct State {
    /// (marker, answer): any request whose body holds the marker gets the answer.
    canned: Vec<(String, String)>,
    canned_requests: Vec<Value>,
    script: Vec<Turn>,
    next: usize,
    main_requests: Vec<Value>,
    /// When each main-loop answer was fully sent (seconds since the Unix epoch).
    main_answered: Vec<f64>,
    side_requests: usize,
}

pub struct FakeAnthropic {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeAnthropic {
    /// Starts the server on an ephemeral loopback port. Main-loop requests (those offering tools)
    /// get the script's turns in order, then "done".
    pub fn start(script: Vec<Turn>) -> FakeAnthropic {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(Mutex::new(State {
            script,
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let _ = serve(stream, &shared);
                });
            }
        });
        FakeAnthropic { url, state }
    }

    /// Like [`FakeAnthropic::start`], and any request (main loop or not) whose body contains a
    /// marker is answered with that marker's text instead (a headless `claude -p` child, say).
    /// Several answers under one marker are given in turn; `tool_use {"name", "input"}` asks for
    /// a tool.
    pub fn start_with(script: Vec<Turn>, canned: Vec<(&str, &str)>) -> FakeAnthropic {
        let fake = FakeAnthropic::start(script);
        fake.state.lock().expect("state").canned = canned
            .into_iter()
            .map(|(m, a)| (m.to_string(), a.to_string()))
            .collect();
        fake
    }

    /// Bodies of the requests answered from the canned answers.
    pub fn canned_requests(&self) -> Vec<Value> {
        self.state.lock().expect("state").canned_requests.clone()
    }

    /// Bodies of the main-loop requests, in order.
    pub fn main_requests(&self) -> Vec<Value> {
        self.state.lock().expect("state").main_requests.clone()
    }

    /// When each main-loop answer was fully sent, in seconds since the Unix epoch (the clock
    /// `date +%s.%N` reads): timings of what the host did next.
    pub fn main_answered(&self) -> Vec<f64> {
        self.state.lock().expect("state").main_answered.clone()
    }

    /// Every main-loop request body as one string, for "did this text reach the model" checks.
    pub fn everything_the_model_saw(&self) -> String {
        self.main_requests()
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn serve(stream: TcpStream, state: &Arc<Mutex<State>>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut content_length = 0usize;
        let mut chunked = false;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                content_length = v.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let body = if chunked {
            read_chunked(&mut reader)?
        } else {
            read_exact(&mut reader, content_length)?
        };
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("/")
            .to_string();
        let main_before = state.lock().expect("state").main_requests.len();
        let (content_type, payload) = respond(&request_line, &path, &body, state);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: keep-alive\r\nrequest-id: req_fake\r\n\r\n",
            payload.len()
        );
        writer.write_all(head.as_bytes())?;
        writer.write_all(payload.as_bytes())?;
        writer.flush()?;
        let mut state = state.lock().expect("state");
        if state.main_requests.len() > main_before {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            state.main_answered.push(now);
        }
    }
}

fn read_exact(reader: &mut impl Read, len: usize) -> std::io::Result<Vec<u8>> {
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(body)
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn respond(
    request_line: &str,
    path: &str,
    body: &[u8],
    state: &Arc<Mutex<State>>,
) -> (&'static str, String) {
    if !request_line.starts_with("POST") {
        return ("application/json", "{}".into());
    }
    if path.contains("count_tokens") {
        return ("application/json", json!({"input_tokens": 42}).to_string());
    }
    if !path.starts_with("/v1/messages") {
        return ("application/json", "{}".into());
    }
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let offers_tools = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let turn = {
        let mut state = state.lock().expect("state");
        let text = request.to_string();
        // Several answers under one marker are given in turn (the last one again after that).
        let marker = state
            .canned
            .iter()
            .map(|(marker, _)| marker.clone())
            .find(|marker| text.contains(marker.as_str()));
        let canned = marker.map(|marker| {
            let answers: Vec<&String> = state
                .canned
                .iter()
                .filter(|(m, _)| *m == marker)
                .map(|(_, answer)| answer)
                .collect();
            let asked_before = state
                .canned_requests
                .iter()
                .filter(|r| r.to_string().contains(marker.as_str()))
                .count();
            answers[asked_before.min(answers.len() - 1)].clone()
        });
        if let Some(answer) = canned {
            state.canned_requests.push(request.clone());
            canned_turn(&answer)
        } else if offers_tools {
            state.main_requests.push(request.clone());
            let turn = state
                .script
                .get(state.next)
                .cloned()
                .unwrap_or_else(|| Turn::text("done"));
            state.next += 1;
            turn
        } else {
            state.side_requests += 1;
            Turn::text("Scripted title")
        }
    };
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-fake")
        .to_string();
    if request.get("stream").and_then(Value::as_bool) == Some(true) {
        ("text/event-stream", sse(&turn, &model))
    } else {
        ("application/json", message_json(&turn, &model).to_string())
    }
}

/// A canned answer: `tool_use {"name": ..., "input": ...}` asks for a tool, anything else is text.
fn canned_turn(answer: &str) -> Turn {
    let call = answer
        .strip_prefix("tool_use ")
        .and_then(|json| serde_json::from_str::<Value>(json).ok());
    match call {
        Some(call) => Turn::ToolUse {
            name: call["name"].as_str().unwrap_or_default().to_string(),
            input: call["input"].clone(),
        },
        None => Turn::text(answer),
    }
}

fn content_and_stop(turn: &Turn) -> (Value, &'static str) {
    match turn {
        Turn::Text(text) => (json!({"type":"text","text":text}), "end_turn"),
        Turn::ToolUse { name, input } => (
            json!({"type":"tool_use","id":tool_id(),"name":name,"input":input}),
            "tool_use",
        ),
    }
}

fn tool_id() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("toolu_fake_{:04}", NEXT.fetch_add(1, Ordering::SeqCst))
}

fn message_json(turn: &Turn, model: &str) -> Value {
    let (content, stop) = content_and_stop(turn);
    json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
        "content": [content], "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    })
}

fn sse(turn: &Turn, model: &str) -> String {
    let (content, stop) = content_and_stop(turn);
    let mut events = vec![json!({
        "type": "message_start",
        "message": {"id":"msg_fake","type":"message","role":"assistant","model":model,"content":[],
                    "stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}
    })];
    match turn {
        Turn::Text(text) => {
            events.push(json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}));
            events.push(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}));
        }
        Turn::ToolUse { name, input } => {
            let id = content["id"].clone();
            events.push(json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}));
            events.push(json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":input.to_string()}}));
        }
    }
    events.push(json!({"type":"content_block_stop","index":0}));
    events.push(json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},"usage":{"output_tokens":5}}));
    events.push(json!({"type":"message_stop"}));
    events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {}\n\n",
                e["type"].as_str().unwrap_or("message"),
                e
            )
        })
        .collect()
}
