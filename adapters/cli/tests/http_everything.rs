//! SPEC A5 with the TypeScript SDK's reference server over Streamable HTTP
//! (`mcp-server-everything streamableHttp`, pinned in `tests/peers/`, port from `PORT`;
//! its event store gives every SSE event an `id:`), behind `backstop gateway` and
//! `backstop proxy --url`. Locally, without the npm peers (or node), skipped with a
//! message; with `CI=true` a failure.

mod http_support;

use http_support::{Fronted, Http, UrlProxy, call};
use serde_json::{Value, json};

const CAP: usize = 4000;

/// The tail of the long echo, which must survive the cut (L2).
const TAIL: &str = "the last line of a long echo: PROMPT $";

/// The requests after the handshake, by id.
fn calls() -> Vec<(u32, String)> {
    let long = format!("{}{TAIL}", "0123456789abcdef".repeat(300_000 / 16));
    vec![
        (
            1,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        ),
        (2, call(2, "get-sum", json!({"a": 1, "b": 2}))),
        (
            3,
            call(3, "get-sum", json!({"a": "hunter2-secret", "b": 2})),
        ),
        (4, call(4, "get-summ", json!({"a": 1, "b": 2}))),
        (
            5,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
                "name": "trigger-long-running-operation",
                "arguments": {"duration": 0.3, "steps": 3},
                "_meta": {"progressToken": "progress-5"}}})
            .to_string(),
        ),
        (6, call(6, "echo", json!({"message": long}))),
    ]
}

/// What every mode must make of the session (answers by request id, notifications
/// first, the response last).
fn check_shaped(answers: &[Vec<Value>]) {
    let response = |n: usize| answers[n].last().unwrap();
    assert_eq!(
        response(2)["result"]["content"][0]["text"],
        "The sum of 1 and 2 is 3."
    );
    assert_eq!(
        response(3)["result"]["content"][0]["text"],
        "1 validation error for get-sum\na\n  Input should be a valid number [type=invalid_type]"
    );
    assert!(!response(3).to_string().contains("hunter2"));
    // E8, with the hint from the client's own listing.
    assert_eq!(
        response(4)["error"],
        json!({"code": -32602, "message": "Unknown tool: get-summ",
               "data": {"suggestion": "Did you mean 'get-sum'?"}})
    );
    // Every progress notification of the long call passes, in order, before its answer
    // (A2: the server sends them on the call's own stream first). On failure, what came.
    let progress = answers[5]
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{:?}", &answers[5..]);
    let result = &response(6)["result"];
    assert!(serde_json::to_vec(result).unwrap().len() <= CAP, "L4");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with(TAIL),
        "{text:.200}"
    );
}

#[test]
fn a5_server_everything_behind_the_gateway() {
    let Some(bin) = http_support::everything_or_skip("a5_server_everything_behind_the_gateway")
    else {
        return;
    };
    let fronted = Fronted::everything(&bin, &["--max-bytes", &CAP.to_string()]);
    let (direct_url, url) = (fronted.direct.clone(), fronted.url.clone());
    let http = Http::new();
    let (direct_session, _) = http.initialize(&direct_url);
    let (session, init) = http.initialize(&url);
    // The server's own CORS headers pass as they came (none added, none taken).
    assert_eq!(
        init.header("access-control-allow-origin").as_deref(),
        Some("*")
    );
    let mut answers = vec![init.messages()];
    for (n, request) in calls() {
        let direct = http.post(&direct_url, Some(&direct_session), &request);
        let shaped = http.post(&url, Some(&session), &request);
        let (direct_events, events) = (direct.events(), shaped.events());
        assert_eq!(direct_events.len(), events.len(), "request {n}");
        for (direct, event) in direct_events.iter().zip(&events) {
            // Every event keeps its `id:` (the ids are the session's own, so they
            // differ between the two sessions) and its other lines.
            assert!(event.id().is_some(), "request {n}: {event:?}");
            let others = |raw: &[u8]| -> Vec<Vec<u8>> {
                raw.split(|&b| b == b'\n')
                    .filter(|line| !line.starts_with(b"data:") && !line.starts_with(b"id:"))
                    .map(<[u8]>::to_vec)
                    .collect()
            };
            assert_eq!(others(direct.raw()), others(event.raw()));
            if [1, 2, 5].contains(&n) {
                assert_eq!(direct.data(), event.data(), "request {n}: unchanged");
            }
        }
        answers.push(shaped.messages());
    }
    check_shaped(&answers);
    let deleted = http.delete(&url, &session);
    assert!(deleted.status.is_success(), "{deleted:?}");
}

#[test]
fn a5_server_everything_behind_proxy_url() {
    let Some(bin) = http_support::everything_or_skip("a5_server_everything_behind_proxy_url")
    else {
        return;
    };
    let (_server, url) = http_support::start_everything(&bin);
    let (mut proxy, init) = UrlProxy::initialized(&url, &["--max-bytes", &CAP.to_string()]);
    assert_eq!(
        init.last().unwrap()["result"]["serverInfo"]["name"],
        "mcp-servers/everything"
    );
    let mut answers = vec![init];
    answers.extend(proxy.answer_each(calls()));
    check_shaped(&answers);
    assert!(proxy.finish().success());
}

/// Open the server's `GET` stream of `session` at `url` on a connection of its own:
/// the response's status line, and the connection (dropping it leaves the stream).
fn open_get_stream(url: &str, session: &str) -> (String, std::net::TcpStream) {
    use std::io::{BufRead, BufReader, Write};
    let address = url.trim_start_matches("http://");
    let (host, path) = address.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n"
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(&stream).read_line(&mut status).unwrap();
    (status.trim_end().to_owned(), stream)
}

/// A5, B2: a client that drops the server's `GET` stream through the gateway leaves
/// it upstream too: it can open it again at once, as directly (the reference server
/// allows one such stream per session, and refused the second with `409` while the
/// gateway kept the first open upstream).
#[test]
fn a5_a_get_stream_the_client_drops_is_closed_upstream() {
    let Some(bin) =
        http_support::everything_or_skip("a5_a_get_stream_the_client_drops_is_closed_upstream")
    else {
        return;
    };
    let fronted = Fronted::everything(&bin, &[]);
    let http = Http::new();
    for url in [&fronted.direct, &fronted.url] {
        let (session, _) = http.initialize(url);
        let (status, stream) = open_get_stream(url, &session);
        assert!(status.ends_with(" 200 OK"), "{url}: {status}");
        drop(stream);
        // The drop takes a moment to reach the server through the gateway.
        let reopened = (0..50).find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let (status, _stream) = open_get_stream(url, &session);
            status.ends_with(" 200 OK").then_some(status)
        });
        assert!(
            reopened.is_some(),
            "{url}: the stream could not be opened again"
        );
    }
}
