//! A loopback server shaped like GitHub releases: `/download/v<version>/<asset>` serves
//! `<root>/v<version>/<asset>`, and `/latest/download/<asset>` answers `302 Found` with the
//! newest version's URL, as GitHub does. Which version is "latest" can be changed while it runs.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;

pub struct Releases {
    /// The base URL (`AMPLIHACK_RELEASES_URL`).
    pub url: String,
    latest: Arc<Mutex<String>>,
}

impl Releases {
    pub fn serve(root: &Path, latest: &str) -> Releases {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}/releases", listener.local_addr().expect("addr"));
        let latest = Arc::new(Mutex::new(latest.to_string()));
        let (root, shared) = (root.to_path_buf(), Arc::clone(&latest));
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, shared) = (root.clone(), Arc::clone(&shared));
                thread::spawn(move || {
                    let _ = answer(stream, &root, &shared);
                });
            }
        });
        Releases { url, latest }
    }

    pub fn set_latest(&self, version: &str) {
        *self.latest.lock().expect("latest") = version.to_string();
    }
}

fn answer(stream: TcpStream, root: &Path, latest: &Mutex<String>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request)? == 0 {
            return Ok(());
        }
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
                break;
            }
        }
        let mut parts = request.split_whitespace();
        let method = parts.next().unwrap_or("GET").to_string();
        let path = parts.next().unwrap_or("/").to_string();
        let (status, headers, body) = route(&path, root, latest);
        let mut head = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n",
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        writer.write_all(head.as_bytes())?;
        if method != "HEAD" {
            writer.write_all(&body)?;
        }
        writer.flush()?;
    }
}

fn route(
    path: &str,
    root: &Path,
    latest: &Mutex<String>,
) -> (String, Vec<(String, String)>, Vec<u8>) {
    let not_found = || {
        (
            "404 Not Found".to_string(),
            Vec::new(),
            b"Not Found".to_vec(),
        )
    };
    if let Some(asset) = path.strip_prefix("/releases/latest/download/") {
        let version = latest.lock().map(|v| v.clone()).unwrap_or_default();
        let location = format!("/releases/download/v{version}/{asset}");
        return (
            "302 Found".into(),
            vec![("location".into(), location)],
            Vec::new(),
        );
    }
    let Some(rest) = path.strip_prefix("/releases/download/") else {
        return not_found();
    };
    let file: PathBuf = root.join(rest);
    if rest.contains("..") || !file.is_file() {
        return not_found();
    }
    match std::fs::read(&file) {
        Ok(bytes) => (
            "200 OK".into(),
            vec![("content-type".into(), "application/octet-stream".into())],
            bytes,
        ),
        Err(_) => not_found(),
    }
}
