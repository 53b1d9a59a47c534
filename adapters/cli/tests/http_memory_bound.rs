//! SPEC B3 over Streamable HTTP, end to end: through `backstop gateway` and
//! `backstop proxy --url` at a 1 MB cap, a 100 MB `tools/call` result — as one SSE
//! event, and as a JSON body — comes out cut to the cap with its tail, its event's other
//! lines as they came; a 100 MB event that needs no change comes out byte-identical;
//! a 100 MB SSE comment line is dropped, never held;
//! and the peak resident memory of the backstop process (VmHWM from `/proc`, read while
//! it runs) stays within [`RSS_BOUND`]: a bound on memory is a correctness property
//! here, not a speed claim. `B3_MESSAGE_MB=1000` runs it on 1 GB messages.
//!
//! The upstream is a small hyper server of this test's own that writes each big
//! message from one repeated block, as it is asked for.

mod http_support;
#[path = "support/mod.rs"]
mod support;

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Channel, Full};
use http_support::{Http, TestBody, UrlProxy, call, start_gateway, start_upstream};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// The cap backstop runs with.
const CAP: usize = 1_000_000;
/// The peak RSS allowed at that cap, whatever the message's size (as for stdio).
const RSS_BOUND: u64 = 64 << 20;
/// The big message's text: this many repeats of [`BLOCK`], about 100 MB — or
/// `B3_MESSAGE_MB` megabytes (`B3_MESSAGE_MB=1000` measures a 1 GB message; the bound
/// is the same).
fn repeats() -> usize {
    let megabytes = std::env::var("B3_MESSAGE_MB")
        .ok()
        .and_then(|mb| mb.parse::<usize>().ok())
        .unwrap_or(100);
    megabytes * 1_000_000 / BLOCK.len()
}
/// One block of the big text, as JSON string content (`\n` escaped).
const BLOCK: &str = "0123456789abcdef line of output \\u001b[1mbold\\u001b[0m\\n";
/// What the big text ends with.
const LAST: &str = "END OF SCROLLBACK $ ";

type Body = TestBody;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// The pieces of a big message: `head`, the text's blocks (64 at a time), `tail`.
fn big_pieces(head: String, tail: String) -> impl Iterator<Item = Bytes> {
    let blocks = Bytes::from(BLOCK.repeat(64));
    std::iter::once(Bytes::from(head))
        .chain(std::iter::repeat_n(blocks, repeats() / 64))
        .chain(std::iter::once(Bytes::from(tail)))
}

/// A big `tools/call` result for request `id`: the JSON text's head and tail around
/// the blocks.
fn big_result(id: &Value) -> (String, String) {
    (
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#),
        format!(r#"{LAST}"}}]}}}}"#),
    )
}

/// A big notification: a progress message nobody needs changed.
fn big_notification() -> (String, String) {
    (
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#
            .to_owned(),
        format!(r#"{LAST}"}}}}"#),
    )
}

/// The SSE stream of the big notification event, then a small answer to `id`.
fn notification_stream(id: &Value) -> impl Iterator<Item = Bytes> + use<> {
    let (head, tail) = big_notification();
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
    big_pieces(
        format!("id: n-1\nevent: message\ndata: {head}"),
        format!("{tail}\n\n"),
    )
    .chain(std::iter::once(Bytes::from(format!(
        "id: n-2\ndata: {answer}\n\n"
    ))))
}

/// Stream `pieces` as a response body of `content_type`.
fn streamed(
    content_type: &str,
    pieces: impl Iterator<Item = Bytes> + Send + 'static,
) -> Response<Body> {
    let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
    tokio::spawn(async move {
        for piece in pieces {
            if sender.send_data(piece).await.is_err() {
                return;
            }
        }
    });
    Response::builder()
        .header("content-type", content_type)
        .body(channel.boxed())
        .unwrap()
}

/// The upstream's answer to one request, by the called tool's name.
async fn serve(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = message["id"].clone();
    if message["method"] == "initialize" {
        let answer = json!({"jsonrpc": "2.0", "id": id,
            "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "big", "version": "1"}}});
        return Ok(Response::builder()
            .header("content-type", "application/json")
            .header("mcp-session-id", "big-1")
            .body(full(answer.to_string()))
            .unwrap());
    }
    if id.is_null() {
        return Ok(Response::builder().status(202).body(full("")).unwrap());
    }
    Ok(match message["params"]["name"].as_str() {
        Some("big_sse") => {
            let (head, tail) = big_result(&id);
            let pieces = big_pieces(
                format!(": the whole scrollback\r\nid: r-1\r\nevent: message\r\ndata: {head}"),
                format!("{tail}\r\nretry: 500\r\n\r\n"),
            );
            streamed("text/event-stream", pieces)
        }
        Some("big_json") => {
            let (head, tail) = big_result(&id);
            streamed("application/json", big_pieces(head, tail))
        }
        Some("big_note") => streamed("text/event-stream", notification_stream(&id)),
        Some("big_comment") => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
            let pieces = big_pieces(": ".to_owned(), "\n".to_owned()).chain(std::iter::once(
                Bytes::from(format!("id: c-1\ndata: {answer}\n\n")),
            ));
            streamed("text/event-stream", pieces)
        }
        _ => Response::builder()
            .header("content-type", "application/json")
            .body(full(
                json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}}).to_string(),
            ))
            .unwrap(),
    })
}

/// A response cut to the cap: an error-free result whose one text keeps the tail.
fn assert_cut(response: &Value, wire_bytes: usize) {
    assert!(wire_bytes <= CAP + 1024, "{wire_bytes} bytes on the wire");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "), "{}", &text[..80]);
    assert!(text.ends_with(LAST), "the tail kept");
    let report = &response["result"]["_meta"]["backstop/truncation"];
    let original = BLOCK.len() * (repeats() / 64) * 64 + LAST.len();
    assert!(
        report["original_bytes"].as_u64() > Some(original as u64 / 2),
        "L12: {report}"
    );
}

/// The process's peak RSS, printed and checked against the bound.
fn assert_bounded(what: &str, pid: u32) {
    let peak = support::peak_rss(pid);
    println!(
        "{what}: peak RSS {:.1} MiB",
        peak as f64 / f64::from(1 << 20)
    );
    assert!(
        peak < RSS_BOUND,
        "{what}: peak RSS {peak} bytes, over {RSS_BOUND}"
    );
}

#[test]
fn b3_a_100_mb_result_event_and_body_through_the_gateway_in_bounded_memory() {
    let (_runtime, upstream) = start_upstream(serve);
    let cap = CAP.to_string();
    let (gateway, url) = start_gateway(&upstream, &["--max-bytes", &cap]);
    let http = Http::new();
    let (session, _) = http.initialize(&url);
    let written_before = support::bytes_written(gateway.0.id());

    let reply = http.post(&url, Some(&session), &call(2, "big_sse", json!({})));
    let events = reply.events();
    assert_eq!(events.len(), 1, "one event");
    let raw = events[0].raw();
    assert!(raw.starts_with(b": the whole scrollback\r\nid: r-1\r\nevent: message\r\ndata: {"));
    assert!(
        raw.ends_with(b"}\r\nretry: 500\r\n\r\n"),
        "A5: only the data line changes"
    );
    assert_cut(&reply.response(), raw.len());

    let reply = http.post(&url, Some(&session), &call(3, "big_json", json!({})));
    assert_cut(&reply.response(), reply.body.len());
    // B3, B4: an answer being cut, its id first, is held nowhere — not in a file.
    let written = support::bytes_written(gateway.0.id()) - written_before;
    assert!(
        written < 8 * CAP as u64,
        "two cuts of at most {CAP} bytes cost {written} bytes of writes"
    );

    let reply = http.post(&url, Some(&session), &call(4, "big_note", json!({})));
    let sent: Vec<u8> = notification_stream(&json!(4))
        .flat_map(|b| b.to_vec())
        .collect();
    assert!(
        reply.body == sent,
        "B2: a 100 MB event that needs no change passes byte-identical"
    );

    // B2: a 100 MB comment line is dropped as it comes, never held; its event passes.
    let reply = http.post(&url, Some(&session), &call(5, "big_comment", json!({})));
    let answer = json!({"jsonrpc": "2.0", "id": 5, "result": {"content": []}});
    assert!(
        reply.body == format!("id: c-1\ndata: {answer}\n\n").as_bytes(),
        "{:.200}",
        String::from_utf8_lossy(&reply.body)
    );

    assert_bounded("backstop gateway", gateway.0.id());
}

#[test]
fn b3_a_100_mb_result_event_through_proxy_url_in_bounded_memory() {
    let (_runtime, upstream) = start_upstream(serve);
    let mut proxy = UrlProxy::start(&upstream, &["--max-bytes", &CAP.to_string()]);
    proxy.send(http_support::INITIALIZE);
    proxy.until_response(0);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for (id, tool) in [(2, "big_sse"), (3, "big_json")] {
        proxy.send(&call(id, tool, json!({})));
        let line = proxy.line();
        let response: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(response["id"], id);
        assert_cut(&response, line.len());
    }
    proxy.send(&call(4, "big_note", json!({})));
    let note = proxy.line();
    let (head, tail) = big_notification();
    assert_eq!(
        note.len(),
        head.len() + BLOCK.len() * (repeats() / 64) * 64 + tail.len()
    );
    assert!(
        note.starts_with(&head) && note.ends_with(&tail),
        "passed as it came"
    );
    let answer: Value = serde_json::from_str(&proxy.line()).unwrap();
    assert_eq!(answer["id"], 4);
    assert_bounded("backstop proxy --url", proxy.pid());
    assert!(proxy.finish().success());
}
