//! A one-purpose HTTP server for `http` hook handlers: answers the n-th request with the n-th
//! (status, body) given (the last one again after that), and keeps each request's head and body.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

pub struct HttpStub {
    pub url: String,
    received: Arc<Mutex<Vec<String>>>,
}

impl HttpStub {
    pub fn start(answers: Vec<(&'static str, &'static str)>) -> HttpStub {
        let server = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = server.local_addr().expect("addr").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = received.clone();
        std::thread::spawn(move || {
            for (i, stream) in server.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                let request = read_request(&stream);
                seen.lock().expect("seen").push(request);
                let (status, body) = answers[i.min(answers.len() - 1)];
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        HttpStub {
            url: format!("http://127.0.0.1:{port}/hook"),
            received,
        }
    }

    /// Each request so far: its head, a blank line, its body.
    pub fn received(&self) -> Vec<String> {
        self.received.lock().expect("received").clone()
    }
}

fn read_request(stream: &std::net::TcpStream) -> String {
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    format!("{head}\n{}", String::from_utf8_lossy(&body))
}
