//! SPEC B5 through `backstop gateway` and `backstop proxy --url`: an upstream whose
//! connection closes in the middle of its answer — in an SSE event, or in a JSON body
//! (chunked, or shorter than its `Content-Length`) — with the request pending leaves
//! the client a well-formed stream: an event that was passing is ended, then one error
//! event for the id (the gateway), or the line is ended, then one error line (`proxy
//! --url`). Exactly one error for the id: for a short answer (shaped whole, nothing of
//! it sent), a long `resources/read` answer, id first, passing as it came, and a long
//! `tools/call` answer being cut unheld over the cap.
//!
//! The upstream is a small hyper server of this test's own: it answers the handshake and
//! `tools/list`, and answers request 1 as its tool's name (or its resource's URI) says:
//! `sse_short`, `sse_long`, `sse_cut` (an event), `json_length`, `json_chunked`,
//! `json_long` (a body); each stops after its text's start and closes the connection.

mod http_support;

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Channel, Full};
use http_support::{Http, TestBody, UrlProxy, start_upstream};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// The text of a long answer that came before the connection closed: past the 4 MiB
/// shaped whole.
const LONG_TEXT: usize = 6 << 20;

/// The text of a short one.
const SHORT_TEXT: usize = 500;

fn full(bytes: impl Into<Bytes>) -> TestBody {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// `head`, then `text` bytes of escaped scrollback, then the connection closes (the body
/// aborted).
fn cut_body(head: String, text: usize) -> TestBody {
    let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
    tokio::spawn(async move {
        let _ = sender.send_data(Bytes::from(head)).await;
        let unit = "log line \\u001b[0m ok\\n";
        let block = unit.repeat((64 << 10) / unit.len());
        let mut left = text;
        while left > 0 {
            let piece = block[..left.min(block.len())].to_owned();
            left -= piece.len();
            if sender.send_data(Bytes::from(piece)).await.is_err() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        sender.abort(std::io::Error::other("cut off"));
    });
    channel.boxed()
}

/// The start of the answer to request `id`: a `tools/call` result, or a
/// `resources/read` one, up to its text's first byte.
fn answer_head(id: &Value, resource: bool) -> String {
    match resource {
        false => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#)
        }
        true => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"log://a","text":""#
        ),
    }
}

/// The upstream's answer to one request.
async fn answer(request: Request<Incoming>) -> Result<Response<TestBody>, Infallible> {
    let (parts, body) = request.into_parts();
    if parts.method != http::Method::POST {
        return Ok(Response::builder().status(405).body(full("")).unwrap());
    }
    let body = body.collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = message["id"].clone();
    let json_body = |message: Value| {
        Response::builder()
            .header("content-type", "application/json")
            .header("mcp-session-id", "sess-cut")
            .body(full(message.to_string()))
            .unwrap()
    };
    let result = |result: Value| json_body(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    let name = match message["method"].as_str() {
        Some("initialize") => {
            return Ok(result(
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "serverInfo": {"name": "cut-off", "version": "1"}}),
            ));
        }
        Some("tools/list") => {
            let tools: Vec<Value> = ["sse_short", "sse_cut", "json_length", "json_chunked"]
                .iter()
                .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
                .collect();
            return Ok(result(json!({"tools": tools})));
        }
        Some("ping") => return Ok(result(json!({}))),
        Some("tools/call") => message["params"]["name"].as_str().unwrap_or(""),
        Some("resources/read") => message["params"]["uri"].as_str().unwrap_or(""),
        _ => {
            return Ok(Response::builder().status(202).body(full("")).unwrap());
        }
    };
    let resource = message["method"] == "resources/read";
    let head = answer_head(&id, resource);
    let sse = |body: TestBody| {
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(body)
            .unwrap()
    };
    let json = |body: TestBody| {
        Response::builder()
            .header("content-type", "application/json")
            .body(body)
            .unwrap()
    };
    Ok(match name {
        "sse_short" => sse(cut_body(
            format!("event: message\ndata: {head}"),
            SHORT_TEXT,
        )),
        "sse_long" | "sse_cut" => sse(cut_body(format!("event: message\ndata: {head}"), LONG_TEXT)),
        "json_length" => Response::builder()
            .header("content-type", "application/json")
            .header("content-length", "100000")
            .body(cut_body(head, SHORT_TEXT))
            .unwrap(),
        "json_chunked" => json(cut_body(head, SHORT_TEXT)),
        "json_long" => json(cut_body(head, LONG_TEXT)),
        _ => result(json!({"content": []})),
    })
}

/// The request of id 1 that misbehaves as `name` says.
fn request(name: &str) -> String {
    match name {
        "sse_long" | "json_long" => json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                           "params": {"uri": name}}),
        _ => json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": name, "arguments": {}}}),
    }
    .to_string()
}

/// A reply read off the socket as it came: its head, and its body de-chunked, and
/// whether the body ended as HTTP says a body ends (its last chunk, or all of its
/// `Content-Length`), rather than by the connection closing under it.
struct RawReply {
    head: String,
    body: Vec<u8>,
    ended: bool,
}

/// POST `body` to the gateway at `url` in `session`, over a connection of its own that
/// the gateway closes after (`Connection: close`), read to its end.
fn raw_post(url: &str, session: &str, body: &str) -> RawReply {
    let address = url.trim_start_matches("http://");
    let (host, path) = address.split_once('/').unwrap();
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = memchr::memmem::find(&raw, b"\r\n\r\n").expect("a head") + 4;
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let rest = &raw[split..];
    let lower = head.to_ascii_lowercase();
    if lower.contains("transfer-encoding: chunked") {
        let (body, ended) = dechunk(rest);
        return RawReply { head, body, ended };
    }
    let length: Option<usize> = lower
        .lines()
        .find_map(|line| line.strip_prefix("content-length: "))
        .map(|n| n.trim().parse().unwrap());
    RawReply {
        ended: length.is_none_or(|length| rest.len() == length),
        body: rest.to_vec(),
        head,
    }
}

/// A chunked body's bytes, and whether its last chunk came.
fn dechunk(mut raw: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = memchr::memmem::find(raw, b"\r\n") else {
            return (body, false);
        };
        let size = std::str::from_utf8(&raw[..line_end]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        raw = &raw[line_end + 2..];
        if size == 0 {
            return (body, raw.starts_with(b"\r\n"));
        }
        if raw.len() < size + 2 {
            body.extend_from_slice(&raw[..raw.len().min(size)]);
            return (body, false);
        }
        body.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// The events of a whole SSE stream (every one ended by its blank line), each one's
/// data joined.
fn events(body: &[u8]) -> Vec<Vec<u8>> {
    assert!(
        body.ends_with(b"\n\n"),
        "B5: the stream's last event is ended"
    );
    body[..body.len() - 2].split(|&byte| byte == b'\n').fold(
        vec![Vec::new()],
        |mut events, line| {
            if line.is_empty() {
                events.push(Vec::new());
            } else if let Some(data) = line.strip_prefix(b"data: ") {
                let event = events.last_mut().unwrap();
                if !event.is_empty() {
                    event.push(b'\n');
                }
                event.extend_from_slice(data);
            }
            events
        },
    )
}

/// Of `messages` (each a message's bytes), those that answer id 1 as JSON; `partial`
/// of them may be the start of one that passed as it came (not JSON).
fn answers_to_1(messages: &[Vec<u8>], partial: usize) -> Vec<Value> {
    let mut not_json = 0;
    let answers = messages
        .iter()
        .filter_map(|message| match serde_json::from_slice::<Value>(message) {
            Ok(message) => Some(message),
            Err(_) => {
                not_json += 1;
                None
            }
        })
        .filter(|message| message["id"] == 1)
        .collect();
    assert_eq!(not_json, partial, "messages that are not JSON");
    answers
}

/// The one answer is the error of an upstream that closed the connection.
fn assert_one_error(answers: &[Value], case: &str) {
    assert_eq!(
        answers.len(),
        1,
        "{case}: B5, exactly one answer for id 1: {answers:?}"
    );
    let error = &answers[0]["error"];
    assert_eq!(error["code"], -32603, "{case}: {error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains("closed the connection")),
        "{case}: says what happened: {error}"
    );
}

/// What passed of a long answer before the connection closed: its start, as it came.
fn assert_partial(partial: &[u8], case: &str) {
    let head = answer_head(&json!(1), true);
    assert!(partial.starts_with(head.as_bytes()), "{case}: as it came");
    assert_eq!(
        partial.len(),
        head.len() + LONG_TEXT,
        "{case}: all that came"
    );
}

#[test]
fn b5_the_gateway_ends_a_cut_off_event_and_answers_its_request_once() {
    let (_runtime, upstream) = start_upstream(answer);
    let options = ["--max-bytes", "2000", "--timeout", "10"];
    let (_gateway, url) = http_support::start_gateway(&upstream, &options);
    let (session, _) = Http::new().initialize(&url);
    // Short (shaped whole), long passing as it came (resources/read, id first), long
    // being cut unheld (tools/call over the cap).
    for (name, partial) in [("sse_short", 0), ("sse_long", 1), ("sse_cut", 0)] {
        let reply = raw_post(&url, &session, &request(name));
        assert!(
            reply.head.starts_with("HTTP/1.1 200"),
            "{name}: {}",
            reply.head
        );
        assert!(reply.ended, "{name}: the body ends as HTTP says");
        let events = events(&reply.body);
        let answers = answers_to_1(&events, partial);
        if partial == 1 {
            assert_partial(&events[0], name);
        }
        assert_one_error(&answers, name);
    }
}

#[test]
fn b5_the_gateway_answers_a_request_whose_json_body_was_cut_off_once() {
    let (_runtime, upstream) = start_upstream(answer);
    let options = ["--max-bytes", "2000", "--timeout", "10"];
    let (_gateway, url) = http_support::start_gateway(&upstream, &options);
    let (session, _) = Http::new().initialize(&url);
    // Short, shorter than its Content-Length or without its last chunk: nothing of it
    // was sent, the body is the request's error.
    for name in ["json_length", "json_chunked"] {
        let reply = raw_post(&url, &session, &request(name));
        assert!(reply.ended, "{name}: the body ends as HTTP says");
        let answers = answers_to_1(&[reply.body], 0);
        assert_one_error(&answers, name);
    }
    // Long, passing as it came: what passed cannot be followed by an error in the same
    // JSON body; the body is not ended as a whole one, so that the client's HTTP stack
    // sees it was cut off — the one error its request gets.
    let reply = raw_post(&url, &session, &request("json_long"));
    assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
    assert!(
        !reply.ended,
        "B5: a body cut off is not passed as a whole one"
    );
    assert_partial(&reply.body, "json_long");
}

#[test]
fn b5_proxy_url_ends_a_cut_off_line_and_answers_its_request_once() {
    let (_runtime, upstream) = start_upstream(answer);
    let options = ["--max-bytes", "2000", "--timeout", "10"];
    let (mut proxy, _) = UrlProxy::initialized(&upstream, &options);
    let cases = [
        ("sse_short", 0),
        ("sse_long", 1),
        ("sse_cut", 0),
        ("json_length", 0),
        ("json_chunked", 0),
        ("json_long", 1),
    ];
    for (n, (name, partial)) in cases.into_iter().enumerate() {
        proxy.send(&request(name));
        // Every line ends (UrlProxy::line checks it), up to the answer to id 1.
        let mut lines = Vec::new();
        loop {
            let line = proxy.line().into_bytes();
            let done = serde_json::from_slice::<Value>(&line).is_ok_and(|m| m["id"] == 1);
            lines.push(line);
            if done {
                break;
            }
        }
        let answers = answers_to_1(&lines, partial);
        if partial == 1 {
            assert_partial(&lines[0], name);
        }
        assert_one_error(&answers, name);
        // Nothing more for id 1: the next request's answer comes next.
        let id = 100 + n;
        proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string());
        let next: Value = serde_json::from_str(&proxy.line()).unwrap();
        assert_eq!(next["id"], id, "{name}: no second answer for id 1");
    }
    assert!(proxy.finish().success());
}
