//! A scripted model endpoint on loopback for driving real agent clients headless (SPEC
//! L18, E12): the client sends its model requests here, a script answers each, and
//! every request is kept, so that a test reads what the model would have read — the
//! tool result the client passed on.
//!
//! HTTP/1.1 with keep-alive, bodies by `Content-Length` or chunked; each answer is one
//! body with its `Content-Length` (an SSE stream written whole is still a stream).

// Each test that uses this module uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

/// One request the client sent.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// The body read as JSON (`Null` when it is not).
    pub body: Value,
}

/// What the script answers: a content type and a body.
pub struct ModelAnswer {
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl ModelAnswer {
    /// A JSON body.
    pub fn json(value: &Value) -> Self {
        Self {
            content_type: "application/json",
            body: value.to_string().into_bytes(),
        }
    }

    /// An SSE stream of `events`, each `(event name, data)`; a `None` name writes no
    /// `event:` line.
    pub fn sse<'a>(events: impl IntoIterator<Item = (Option<&'a str>, Value)>) -> Self {
        let mut body = Vec::new();
        for (name, data) in events {
            if let Some(name) = name {
                body.extend_from_slice(format!("event: {name}\n").as_bytes());
            }
            body.extend_from_slice(format!("data: {data}\n\n").as_bytes());
        }
        Self {
            content_type: "text/event-stream",
            body,
        }
    }
}

/// The endpoint: its port, and the requests it has had.
pub struct ModelEndpoint {
    pub port: u16,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

type Script = dyn Fn(&ModelRequest, &[ModelRequest]) -> ModelAnswer + Send + Sync;

impl ModelEndpoint {
    /// Listen on a port the kernel picks; `script` answers each request, given it and
    /// the requests before it.
    pub fn start(
        script: impl Fn(&ModelRequest, &[ModelRequest]) -> ModelAnswer + Send + Sync + 'static,
    ) -> ModelEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let kept = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (script, kept) = (Arc::clone(&script), Arc::clone(&kept));
                thread::spawn(move || serve(stream, &*script, &kept));
            }
        });
        ModelEndpoint { port, requests }
    }

    /// Every request so far, in the order they came.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, script: &Script, kept: &Mutex<Vec<ModelRequest>>) {
    let mut writer = stream.try_clone().expect("a second handle");
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let answer = {
            let mut kept = kept.lock().unwrap();
            let answer = script(&request, &kept);
            kept.push(request);
            answer
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n",
            answer.content_type,
            answer.body.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(&answer.body).is_err() {
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<ModelRequest> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok().filter(|&n| n > 0)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(ModelRequest { method, path, body })
}
