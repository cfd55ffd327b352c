//! One loopback fake of the three model APIs the other agent CLIs speak, enough for each of them
//! to run a headless turn offline (after [`super::fake_anthropic`]):
//!
//! - OpenAI **Responses**, streamed: `POST /v1/responses` (Codex);
//! - OpenAI **Chat Completions**, streamed or not: `POST /v1/chat/completions` (Copilot, Qwen,
//!   Droid, opencode);
//! - **Gemini**: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (and
//!   `:generateContent`, `:countTokens`).
//!
//! Main-loop requests (those offering tools) get the script's turns in order, then a final text;
//! requests without tools (titles, summaries, checks) get a short text. A [`Turn::shell`] is
//! turned into a call of whichever shell tool the request offers, with the arguments that CLI
//! requires, so one script serves every CLI. Every request is recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted assistant turn.
#[derive(Clone, Debug)]
pub enum Turn {
    Text(String),
    /// Run this command with the shell tool the request offers.
    Shell(String),
    /// Call this tool with these arguments, as they are.
    Tool {
        name: String,
        args: Value,
    },
}

impl Turn {
    pub fn text(text: &str) -> Turn {
        Turn::Text(text.to_string())
    }

    pub fn shell(command: &str) -> Turn {
        Turn::Shell(command.to_string())
    }

    pub fn tool(name: &str, args: Value) -> Turn {
        Turn::Tool {
            name: name.to_string(),
            args,
        }
    }
}

/// The wire protocol a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Responses,
    ChatCompletions,
    Gemini,
}

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The path with its query string.
    pub path: String,
    /// The body (JSON `null` when it was not JSON).
    pub body: Value,
    /// The model API it was for (`None`: not a model call, such as `GET /v1/models`).
    pub wire: Option<Wire>,
    /// Whether it offered tools (a main-loop request).
    pub main: bool,
}

/// A tool call the server asked for.
#[derive(Clone, Debug)]
pub struct ToolCall {
    pub name: String,
    pub args: Value,
}

/// The shell tools the CLIs offer, by name, in the order they are preferred.
const SHELL_TOOLS: [&str; 8] = [
    "Shell",
    "exec_command",
    "run_commands",
    "shell",
    "run_shell_command",
    "Execute",
    "bash",
    "Bash",
];

/// The final text once the script is used up.
pub const FINAL_TEXT: &str = "All done.";
/// The answer to a request without tools.
pub const SIDE_TEXT: &str = "Scripted title";

#[derive(Default)]
struct State {
    script: Vec<Turn>,
    next: usize,
    requests: Vec<Request>,
    calls: Vec<ToolCall>,
}

pub struct FakeModels {
    /// `http://127.0.0.1:<port>` (no path).
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeModels {
    /// Starts the server on an ephemeral loopback port.
    pub fn start(script: Vec<Turn>) -> FakeModels {
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
        FakeModels { url, state }
    }

    /// Starts over with `script`, forgetting every request and call: the next turn of a test
    /// that keeps one server (and so one URL in the CLI's settings) across several turns.
    pub fn reset(&self, script: Vec<Turn>) {
        let mut state = self.state.lock().expect("state");
        *state = State {
            script,
            ..State::default()
        };
    }

    /// The OpenAI-style base URL: `<url>/v1`.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Every request, in the order they arrived.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().expect("state").requests.clone()
    }

    /// Bodies of the main-loop requests (those offering tools), in order.
    pub fn main_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.main)
            .map(|r| r.body)
            .collect()
    }

    /// Bodies of the model requests without tools (titles, summaries, checks).
    pub fn side_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.wire.is_some() && !r.main)
            .map(|r| r.body)
            .collect()
    }

    /// The tool calls the server asked for, in order (a [`Turn::Shell`] as the tool it became).
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.state.lock().expect("state").calls.clone()
    }

    /// The last main-loop request: what the model finally saw.
    pub fn last_main_request(&self) -> Option<Value> {
        self.main_requests().pop()
    }

    /// How many times `text` occurs in the strings of the last main-loop request (0 without one).
    pub fn count_in_last(&self, text: &str) -> usize {
        self.last_main_request()
            .map_or(0, |body| count_in_strings(&body, text))
    }

    /// The tool results the CLI sent back to the model (each result's text), from every
    /// main-loop request, in order (a result the CLI resends each turn appears once per request).
    pub fn tool_results(&self) -> Vec<String> {
        self.main_requests().iter().flat_map(tool_results).collect()
    }

    /// Whether a tool result holding `text` reached the model.
    pub fn tool_result_contains(&self, text: &str) -> bool {
        self.tool_results().iter().any(|r| r.contains(text))
    }

    /// Every main-loop request body as one string, for "did this text reach the model" checks.
    pub fn everything_the_model_saw(&self) -> String {
        self.main_requests()
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A summary of every request for a failure message: method, path, main or not.
    pub fn describe(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                format!(
                    "{} {} {}",
                    r.method,
                    r.path,
                    if r.main { "(main)" } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Occurrences of `needle` in every string of `value` (keys and values), so JSON escaping does
/// not matter.
pub fn count_in_strings(value: &Value, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    match value {
        Value::String(s) => s.matches(needle).count(),
        Value::Array(items) => items.iter().map(|v| count_in_strings(v, needle)).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.matches(needle).count() + count_in_strings(v, needle))
            .sum(),
        _ => 0,
    }
}

/// All the text in a value: its strings, joined by newlines.
fn all_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(all_text).collect::<Vec<_>>().join("\n"),
        Value::Object(map) => map.values().map(all_text).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The tool results in one request body, whatever its wire.
fn tool_results(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    // Responses: input items of type function_call_output (or custom_tool_call_output).
    for item in body["input"].as_array().into_iter().flatten() {
        let kind = item["type"].as_str().unwrap_or_default();
        if kind.ends_with("_call_output") {
            found.push(all_text(&item["output"]));
        }
    }
    // Chat Completions: messages with role "tool".
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            found.push(all_text(&message["content"]));
        }
    }
    // Gemini: functionResponse parts.
    for content in body["contents"].as_array().into_iter().flatten() {
        for part in content["parts"].as_array().into_iter().flatten() {
            if let Some(response) = part.get("functionResponse") {
                found.push(all_text(&response["response"]));
            }
        }
    }
    found
}

/// The tool names a request offers, whatever its wire.
fn offered_tools(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        // Responses: {"type":"function","name":...}; Chat: {"type":"function","function":{"name"}};
        // Gemini: {"functionDeclarations":[{"name"}]}.
        if let Some(name) = tool["name"].as_str() {
            names.push(name.to_string());
        }
        if let Some(name) = tool["function"]["name"].as_str() {
            names.push(name.to_string());
        }
        for declaration in tool["functionDeclarations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(name) = declaration["name"].as_str() {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The call a shell turn becomes for a request offering `tools`.
fn shell_call(command: &str, tools: &[String]) -> ToolCall {
    let name = SHELL_TOOLS
        .iter()
        .find(|n| tools.iter().any(|t| t == *n))
        .copied()
        .unwrap_or("bash");
    let args = match name {
        "exec_command" => json!({"cmd": command}),
        "shell" => json!({"command": ["bash", "-lc", command]}),
        "run_shell_command" => json!({"command": command}),
        "run_commands" => json!({"commands": [command]}),
        "Execute" => json!({
            "command": command,
            "summary": "scripted",
            "riskLevel": "low",
            "riskLevelReason": "scripted test command"
        }),
        _ => json!({"command": command, "description": "scripted"}),
    };
    ToolCall {
        name: name.to_string(),
        args,
    }
}

/// Drops the arguments a Chat Completions tool with a closed schema (`additionalProperties:
/// false`: Mistral Vibe's `bash` takes only `command` and `timeout_seconds`) does not declare.
fn closed_schema(request: &Value, call: &mut ToolCall) {
    let Some(parameters) = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|t| {
            (t["function"]["name"].as_str() == Some(call.name.as_str()))
                .then(|| &t["function"]["parameters"])
        })
    else {
        return;
    };
    if parameters["additionalProperties"] != Value::Bool(false) {
        return;
    }
    if let (Some(args), Some(declared)) = (
        call.args.as_object_mut(),
        parameters["properties"].as_object(),
    ) {
        args.retain(|key, _| declared.contains_key(key));
    }
}

fn serve(stream: TcpStream, state: &Arc<Mutex<State>>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut content_length = 0usize;
        let mut chunked = false;
        let mut gzip = false;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 {
                return Ok(());
            }
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
            if lower.starts_with("content-encoding:") && !lower.contains("identity") {
                gzip = true;
            }
        }
        let body = if chunked {
            read_chunked(&mut reader)?
        } else {
            let mut body = vec![0; content_length];
            reader.read_exact(&mut body)?;
            body
        };
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("GET").to_string();
        let path = parts.next().unwrap_or("/").to_string();
        let (status, content_type, payload) = if gzip {
            (
                "415 Unsupported Media Type",
                "application/json",
                json!({"error": {"message": "the fake model server takes uncompressed bodies"}})
                    .to_string(),
            )
        } else {
            respond(&method, &path, &body, state)
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: keep-alive\r\ncache-control: no-cache\r\nx-request-id: req_fake\r\n\r\n",
            payload.len()
        );
        writer.write_all(head.as_bytes())?;
        writer.write_all(payload.as_bytes())?;
        writer.flush()?;
    }
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = size.trim().split(';').next().unwrap_or("0");
        let size = usize::from_str_radix(size, 16).unwrap_or(0);
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn wire_of(method: &str, path: &str) -> Option<Wire> {
    if method != "POST" {
        return None;
    }
    let route = path.split('?').next().unwrap_or(path);
    if route.ends_with("/responses") {
        Some(Wire::Responses)
    } else if route.ends_with("/chat/completions") {
        Some(Wire::ChatCompletions)
    } else if route.contains("/models/")
        && (route.ends_with(":streamGenerateContent") || route.ends_with(":generateContent"))
    {
        Some(Wire::Gemini)
    } else {
        None
    }
}

fn respond(
    method: &str,
    path: &str,
    body: &[u8],
    state: &Arc<Mutex<State>>,
) -> (&'static str, &'static str, String) {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let wire = wire_of(method, path);
    let tools = offered_tools(&request);
    let main = wire.is_some() && !tools.is_empty();
    let turn = {
        let mut state = state.lock().expect("state");
        state.requests.push(Request {
            method: method.to_string(),
            path: path.to_string(),
            body: request.clone(),
            wire,
            main,
        });
        if main {
            let turn = state
                .script
                .get(state.next)
                .cloned()
                .unwrap_or_else(|| Turn::text(FINAL_TEXT));
            state.next += 1;
            let call = match &turn {
                Turn::Text(_) => None,
                Turn::Shell(command) => {
                    let mut call = shell_call(command, &tools);
                    closed_schema(&request, &mut call);
                    Some(call)
                }
                Turn::Tool { name, args } => Some(ToolCall {
                    name: name.clone(),
                    args: args.clone(),
                }),
            };
            if let Some(call) = &call {
                state.calls.push(call.clone());
            }
            Reply::from(call, &turn)
        } else {
            Reply::Text(side_text(&request))
        }
    };
    let route = path.split('?').next().unwrap_or(path);
    let model = request["model"]
        .as_str()
        .unwrap_or("fake-model")
        .to_string();
    match wire {
        Some(Wire::Responses) => ("200 OK", "text/event-stream", responses_sse(&turn, &model)),
        Some(Wire::ChatCompletions) => {
            if request["stream"].as_bool() == Some(true) {
                ("200 OK", "text/event-stream", chat_sse(&turn, &model))
            } else {
                ("200 OK", "application/json", chat_json(&turn, &model).to_string())
            }
        }
        Some(Wire::Gemini) => {
            if route.ends_with(":streamGenerateContent") {
                let chunk = gemini_json(&turn);
                ("200 OK", "text/event-stream", format!("data: {chunk}\r\n\r\n"))
            } else {
                ("200 OK", "application/json", gemini_json(&turn).to_string())
            }
        }
        None if method == "POST" && route.ends_with(":countTokens") => (
            "200 OK",
            "application/json",
            json!({"totalTokens": 10}).to_string(),
        ),
        None if method == "GET" && route.ends_with("/models") => (
            "200 OK",
            "application/json",
            json!({
                "object": "list",
                "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}],
                "models": [{"name": "models/fake-model", "supportedGenerationMethods": ["generateContent"]}]
            })
            .to_string(),
        ),
        None => (
            "404 Not Found",
            "application/json",
            json!({"error": {"message": format!("no such route in the fake: {method} {path}"), "code": 404}})
                .to_string(),
        ),
    }
}

/// The text for a request without tools. A Gemini request asking for JSON (its next-speaker
/// check, its model router) gets JSON that ends the turn.
fn side_text(request: &Value) -> String {
    let json_wanted = request["generationConfig"]["responseMimeType"] == "application/json"
        || request["generationConfig"]["responseJsonSchema"].is_object()
        || request["response_format"]["type"]
            .as_str()
            .is_some_and(|t| t.starts_with("json"));
    if json_wanted {
        json!({
            "reasoning": "scripted",
            "next_speaker": "user",
            "model_choice": "flash",
            "title": SIDE_TEXT
        })
        .to_string()
    } else {
        SIDE_TEXT.to_string()
    }
}

/// What one answer says: text, or a call.
enum Reply {
    Text(String),
    Call(ToolCall),
}

impl Reply {
    fn from(call: Option<ToolCall>, turn: &Turn) -> Reply {
        match (call, turn) {
            (Some(call), _) => Reply::Call(call),
            (None, Turn::Text(text)) => Reply::Text(text.clone()),
            (None, _) => Reply::Text(FINAL_TEXT.to_string()),
        }
    }
}

fn next_id(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("{prefix}_fake_{:04}", NEXT.fetch_add(1, Ordering::SeqCst))
}

fn sse_events(events: &[Value]) -> String {
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

fn responses_sse(reply: &Reply, model: &str) -> String {
    let id = next_id("resp");
    let item = match reply {
        Reply::Text(text) => json!({
            "type": "message", "id": next_id("msg"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]
        }),
        Reply::Call(call) => json!({
            "type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
            "status": "completed", "name": call.name, "arguments": call.args.to_string()
        }),
    };
    let mut events = vec![
        json!({"type": "response.created", "sequence_number": 0,
               "response": {"id": id, "object": "response", "model": model, "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ];
    if let Reply::Text(text) = reply {
        events.push(
            json!({"type": "response.output_text.delta", "output_index": 0,
                           "content_index": 0, "item_id": item["id"], "delta": text}),
        );
    }
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    events.push(json!({
        "type": "response.completed",
        "response": {
            "id": id, "object": "response", "model": model, "status": "completed", "output": [item],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}
        }
    }));
    sse_events(&events)
}

fn chat_message(reply: &Reply) -> (Value, &'static str) {
    match reply {
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Reply::Call(call) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "index": 0, "id": next_id("call"), "type": "function",
                "function": {"name": call.name, "arguments": call.args.to_string()}
            }]}),
            "tool_calls",
        ),
    }
}

fn chat_usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

fn chat_json(reply: &Reply, model: &str) -> Value {
    let (message, finish) = chat_message(reply);
    json!({
        "id": next_id("chatcmpl"), "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": chat_usage()
    })
}

fn chat_sse(reply: &Reply, model: &str) -> String {
    let id = next_id("chatcmpl");
    let (message, finish) = chat_message(reply);
    let chunk = |choices: Value, usage: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": model, "choices": choices, "usage": usage})
    };
    let chunks = [
        chunk(
            json!([{"index": 0, "delta": message, "finish_reason": null}]),
            Value::Null,
        ),
        chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
            Value::Null,
        ),
        chunk(json!([]), chat_usage()),
    ];
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

fn gemini_json(reply: &Reply) -> Value {
    let part = match reply {
        Reply::Text(text) => json!({"text": text}),
        Reply::Call(call) => json!({"functionCall": {"name": call.name, "args": call.args}}),
    };
    json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "fake-model"
    })
}
