//! `amplihack log export --otlp` against a receiver that decodes what it gets with OpenTelemetry's
//! official protobuf definitions (`opentelemetry-proto`): every record arrives once, with its
//! attributes, across a rotation of the audit file and a receiver that is down, then back.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message;
use serde_json::json;

use crate::support::{TestEnv, command, one_group, stderr, stdout};

/// What the receiver got: each request's headers (lower-cased names) and decoded body.
type Got = Arc<Mutex<Vec<(Vec<(String, String)>, ExportLogsServiceRequest)>>>;

struct Receiver {
    port: u16,
    got: Got,
    stop: Arc<Mutex<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    fn start(port: u16, got: Got) -> Receiver {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(Mutex::new(false));
        let (got2, stop2) = (got.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if *stop2.lock().unwrap() {
                    break;
                }
                if let Ok(stream) = stream {
                    serve(stream, &got2);
                }
            }
        });
        Receiver {
            port,
            got,
            stop,
            thread: Some(thread),
        }
    }

    /// Down: the port refuses connections.
    fn stop(mut self) -> Got {
        *self.stop.lock().unwrap() = true;
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            thread.join().expect("receiver");
        }
        self.got.clone()
    }
}

/// One HTTP/1.1 request: POST with a Content-Length body; answered 200 with an empty
/// ExportLogsServiceResponse.
fn serve(stream: TcpStream, got: &Got) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut headers = Vec::new();
    let mut line = String::new();
    reader.read_line(&mut line).expect("request line");
    assert!(line.starts_with("POST /v1/logs "), "{line}");
    loop {
        line.clear();
        reader.read_line(&mut line).expect("header");
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((k, v)) = trimmed.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map(|(_, v)| v.parse().expect("length"))
        .expect("a Content-Length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("body");
    let request = ExportLogsServiceRequest::decode(&body[..]).expect("an OTLP logs request");
    got.lock().unwrap().push((headers, request));
    let mut stream = stream;
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
}

/// Every log record received: (its `amplihack.plugin`, the record).
fn records(got: &Got) -> Vec<(String, opentelemetry_proto::tonic::logs::v1::LogRecord)> {
    let mut out = Vec::new();
    for (_, request) in got.lock().unwrap().iter() {
        for resource in &request.resource_logs {
            for scope in &resource.scope_logs {
                for record in &scope.log_records {
                    out.push((
                        text_attr(&record.attributes, "amplihack.plugin").unwrap_or_default(),
                        record.clone(),
                    ));
                }
            }
        }
    }
    out
}

fn text_attr(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Any::StringValue(s) => Some(s.clone()),
            Any::IntValue(i) => Some(i.to_string()),
            Any::BoolValue(b) => Some(b.to_string()),
            Any::DoubleValue(d) => Some(d.to_string()),
            _ => None,
        }
    })
}

/// Appends synthetic audit lines `user:p<from>`..`user:p<to-1>`, as the hook binary writes them.
fn append(env: &TestEnv, from: usize, to: usize) {
    let path = env.home.join(".local/state/amplihack/audit.jsonl");
    let mut text = String::new();
    for i in from..to {
        text.push_str(&json!({"time": format!("1795633200.{i:03}"), "host": "claude", "session": "s", "event": "Stop",
            "plugin": format!("user:p{i}"), "exit": 0, "duration_ms": 1.5, "decision": null,
            "timed_out": false, "output_cut": false, "async": false}).to_string());
        text.push('\n');
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("audit");
    file.write_all(text.as_bytes()).expect("append");
}

/// The audit file rotated as the hook binary rotates it: renamed to `.1`.
fn rotate(env: &TestEnv) {
    let dir = env.home.join(".local/state/amplihack");
    std::fs::rename(dir.join("audit.jsonl"), dir.join("audit.jsonl.1")).expect("rotate");
}

fn export(env: &TestEnv, port: u16) -> std::process::Output {
    let mut command = env.amplihack(&["log", "export", "--otlp"]);
    command
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        )
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-team-token=s%20e%20c")
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "3000")
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=test,team=tools",
        );
    command.output().expect("amplihack log export")
}

#[test]
fn every_record_arrives_once_across_a_rotation_and_a_receiver_that_was_down() {
    let env = TestEnv::new();
    // One line the hook binary writes itself, from a real call with a trace.
    env.plugin(
        &env.user_hooks_dir(),
        "real",
        &one_group("PreToolUse", None, vec![command("exit 0")]),
    );
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "sess-1", "cwd": env.project,
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1", "agent_id": "agent-7"});
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let span = "00f067aa0ba902b7";
    env.run_hooks(
        &["pre-tool-use"],
        &event,
        &[("TRACEPARENT", &format!("00-{trace}-{span}-01"))],
    );
    append(&env, 0, 3);
    let got: Got = Arc::default();
    let receiver = Receiver::start(0, got.clone());
    let port = receiver.port;

    let out = export(&env, port);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("sent 4 record(s)"),
        "{}",
        stdout(&out)
    );

    // Attributes intact: the resource, the scope, the record's fields and its trace.
    let (headers, request) = got.lock().unwrap()[0].clone();
    assert!(
        headers.contains(&("x-team-token".into(), "s e c".into())),
        "{headers:?}"
    );
    assert!(
        headers.contains(&("content-type".into(), "application/x-protobuf".into())),
        "{headers:?}"
    );
    let resource = request.resource_logs[0]
        .resource
        .clone()
        .expect("a resource");
    assert_eq!(
        text_attr(&resource.attributes, "service.name").as_deref(),
        Some("amplihack")
    );
    assert_eq!(
        text_attr(&resource.attributes, "team").as_deref(),
        Some("tools")
    );
    assert_eq!(
        text_attr(&resource.attributes, "deployment.environment").as_deref(),
        Some("test")
    );
    let scope = request.resource_logs[0].scope_logs[0]
        .scope
        .clone()
        .expect("a scope");
    assert_eq!(scope.name, "amplihack");
    let all = records(&got);
    let (_, real) = all
        .iter()
        .find(|(p, _)| p == "user:real")
        .expect("the hook binary's line");
    let attr = |key: &str| text_attr(&real.attributes, key);
    assert_eq!(attr("gen_ai.tool.name").as_deref(), Some("Bash"));
    assert_eq!(attr("gen_ai.tool.call.id").as_deref(), Some("toolu_1"));
    assert_eq!(attr("gen_ai.agent.id").as_deref(), Some("agent-7"));
    assert_eq!(attr("session.id").as_deref(), Some("sess-1"));
    assert_eq!(attr("amplihack.event").as_deref(), Some("PreToolUse"));
    assert_eq!(attr("amplihack.host").as_deref(), Some("claude"));
    assert_eq!(attr("process.exit.code").as_deref(), Some("0"));
    assert_eq!(
        attr("amplihack.cwd"),
        Some(env.project.display().to_string())
    );
    assert_eq!(hex(&real.trace_id), trace);
    assert_eq!(hex(&real.span_id), span);
    assert_eq!(real.severity_text, "INFO");
    assert_eq!(real.event_name, "amplihack.hook");
    let synthetic = all
        .iter()
        .find(|(p, _)| p == "user:p1")
        .expect("p1")
        .1
        .clone();
    assert_eq!(synthetic.time_unix_nano, 1_795_633_200_001_000_000);
    assert!(synthetic.trace_id.is_empty());

    // Nothing new: nothing sent.
    let out = export(&env, port);
    assert!(
        stdout(&out).contains("sent 0 record(s)"),
        "{}",
        stdout(&out)
    );

    // Lines on both sides of a rotation.
    append(&env, 3, 5);
    rotate(&env);
    append(&env, 5, 7);
    let out = export(&env, port);
    assert!(
        stdout(&out).contains("sent 4 record(s)"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    // The receiver goes down: the export fails, says so, and sends nothing twice later.
    let got = receiver.stop();
    append(&env, 7, 9);
    let out = export(&env, port);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(&format!("http://127.0.0.1:{port}/v1/logs did not accept")),
        "{}",
        stderr(&out)
    );
    rotate(&env);
    append(&env, 9, 10);
    // Back on the same port.
    let receiver = Receiver::start(port, got.clone());
    let out = export(&env, port);
    assert!(
        stdout(&out).contains("sent 3 record(s)"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    receiver.stop();

    let mut plugins: Vec<String> = records(&got).into_iter().map(|(p, _)| p).collect();
    plugins.sort();
    let mut want: Vec<String> = (0..10)
        .map(|i| format!("user:p{i}"))
        .chain(["user:real".to_string()])
        .collect();
    want.sort();
    assert_eq!(plugins, want, "every record once");
    // The cursor is private.
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(env.home.join(".local/state/amplihack/otlp-cursor.json"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_setting_it_cannot_use_is_named_with_the_fix() {
    let env = TestEnv::new();
    let out = env
        .amplihack(&["log", "export", "--otlp"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("OTEL_EXPORTER_OTLP_PROTOCOL: `grpc` is not sent"),
        "{}",
        stderr(&out)
    );
    let out = env.amplihack(&["log", "export"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--otlp"), "{}", stderr(&out));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `install --otel=systemd|launchd`: the unit files or the agent, in the test's own HOME and
/// XDG directories (no systemd is asked: no user manager's socket here), naming the deployed
/// `amplihack`; the OTEL settings kept privately for the export the timer runs.
#[test]
fn install_otel_writes_the_timer_or_the_agent_and_says_which() {
    let env = TestEnv::new();
    let config = env.root().join("xdg config");
    let run = |via: &str| {
        let mut command = env.amplihack(&["install", "--otel", via]);
        command
            .env("XDG_CONFIG_HOME", &config)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example:4318")
            .env("OTEL_EXPORTER_OTLP_HEADERS", "api-key=k");
        command.output().expect("install")
    };
    let amplihack = env.bin_dir().join("amplihack");
    let out = run("systemd");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let units = config.join("systemd/user");
    assert!(
        stdout(&out).contains(&format!(
            "OpenTelemetry: sends the audit records from a systemd user timer, every 5 minutes ({}); start it with `systemctl --user daemon-reload && systemctl --user enable --now amplihack-otel-export.timer`",
            units.join("amplihack-otel-export.timer").display()
        )),
        "{}",
        stdout(&out)
    );
    let service =
        std::fs::read_to_string(units.join("amplihack-otel-export.service")).expect("service");
    assert!(
        service.contains(&format!(
            "ExecStart=\"{}\" log export --otlp\n",
            amplihack.display()
        )),
        "{service}"
    );
    assert!(service.contains("Type=oneshot"), "{service}");
    let timer = std::fs::read_to_string(units.join("amplihack-otel-export.timer")).expect("timer");
    for line in [
        "OnUnitActiveSec=300s",
        "Persistent=true",
        "WantedBy=timers.target",
    ] {
        assert!(timer.lines().any(|l| l == line), "{line}: {timer}");
    }
    let saved = env.home.join(".local/state/amplihack/otel.env");
    let text = std::fs::read_to_string(&saved).expect("otel.env");
    assert!(
        text.contains("OTEL_EXPORTER_OTLP_ENDPOINT=https://otel.example:4318\n"),
        "{text}"
    );
    assert!(
        text.contains("OTEL_EXPORTER_OTLP_HEADERS=api-key=k\n"),
        "{text}"
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&saved).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);

    let out = run("launchd");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("from a launchd agent, every 5 minutes"),
        "{}",
        stdout(&out)
    );
    let agent = std::fs::read_to_string(
        env.home
            .join("Library/LaunchAgents/com.amplihack.otel-export.plist"),
    )
    .expect("agent");
    assert!(
        agent.contains(&format!(
            "<array>\n    <string>{}</string>\n    <string>log</string>\n    <string>export</string>\n    <string>--otlp</string>\n  </array>",
            amplihack.display()
        )),
        "{agent}"
    );
    assert!(
        agent.contains("<key>StartInterval</key>\n  <integer>300</integer>"),
        "{agent}"
    );

    // One way at a time: the timer's units went when the agent came.
    assert!(!units.join("amplihack-otel-export.timer").exists());

    // `uninstall` takes them away with the binaries they run.
    let out = env
        .amplihack(&["uninstall"])
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .expect("uninstall");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    for gone in [
        units.join("amplihack-otel-export.service"),
        units.join("amplihack-otel-export.timer"),
        env.home
            .join("Library/LaunchAgents/com.amplihack.otel-export.plist"),
        saved,
    ] {
        assert!(!gone.exists(), "{}", gone.display());
    }
}

/// `install --otel` where neither a systemd user manager nor launchd runs: at each session's end
/// the hook binary starts the export, detached, and the records reach the receiver.
#[test]
fn install_otel_at_session_end_sends_from_a_detached_child() {
    let env = TestEnv::new();
    let got: Got = Arc::default();
    let receiver = Receiver::start(0, got.clone());
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let out = env
        .amplihack(&["install", "--otel"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .output()
        .expect("install");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    if cfg!(target_os = "macos") {
        return; // auto is launchd there
    }
    assert!(
        stdout(&out).contains(&format!(
            "OpenTelemetry: sends the audit records from at the end of each session, in a detached `{} log export --otlp`",
            env.bin_dir().join("amplihack").display()
        )),
        "{}",
        stdout(&out)
    );
    append(&env, 0, 3);
    // The host's SessionEnd, without the OTEL settings in its environment: the saved ones count.
    let (out, _) = env.run_hooks(
        &["session-end"],
        &json!({"hook_event_name": "SessionEnd", "session_id": "s", "reason": "exit"}),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while records(&got).len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut plugins: Vec<String> = records(&got).into_iter().map(|(p, _)| p).collect();
    plugins.sort();
    assert_eq!(plugins, ["user:p0", "user:p1", "user:p2"]);
    receiver.stop();
}
