//! SPEC B3 for SSE events of any size and any framing, through `backstop gateway` and
//! `backstop proxy --url` at a 1 MB cap: one JSON-RPC message as one event of one
//! `data:` line, written by the upstream in HTTP chunks of 1 MiB or of 16 KiB, its
//! text's lines 1 KiB long, `id` first or last (the TypeScript SDK writes it last).
//!
//! - cut: a `tools/call` answer comes out cut to the cap, its tail kept;
//! - uncut: a `resources/read` answer, which needs no change, streams through
//!   byte-identical (checked as it arrives: the test client holds none of it), to a
//!   client that stops reading for a while once it has begun (a slow client's pace
//!   holds the server back; backstop does not queue what it cannot send);
//! - after a comment line as big as an event: the answer after it comes (B2, B5);
//! - on a full disk: what is cut or streamed needs no temporary file.
//!
//! The peak resident memory of the backstop process (VmHWM, read from `/proc`, started
//! over for each case) stays within [`RSS_BOUND`] whatever the event's size: 2 GiB for
//! the cut with its id first (`B3_EVENT_MB` sets it: `B3_EVENT_MB=5120` for 5 GiB), a
//! quarter of that for the other cases. A bound on memory is a correctness property,
//! not a speed claim. These are the tests every change to the scan, the SSE reader or
//! a hold path runs.

mod http_support;
#[path = "support/mod.rs"]
mod support;

use std::convert::Infallible;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Channel, Full};
use http_support::{Spawned, TestBody, backstop, start_gateway, start_upstream};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// The cap backstop runs with.
const CAP: usize = 1_000_000;
/// The peak RSS allowed at that cap, whatever the event's size.
const RSS_BOUND: u64 = 64 << 20;
/// What the big text ends with.
const LAST: &str = "END OF SCROLLBACK $ ";
/// The text's lines: 1 KiB on the wire, each ending in an escaped line break.
const LINE: usize = 1 << 10;
/// How long the test's client stops reading once an uncut answer has begun to come:
/// a slow client, whose pace the server's answer must wait for rather than pile up in
/// backstop (B3).
const PAUSE: std::time::Duration = std::time::Duration::from_secs(2);
/// The upstream's buffer of text, written as one HTTP chunk or sliced into smaller.
const BUFFER: usize = 1 << 20;

/// The size of the biggest event, in MiB: 2 GiB unless `B3_EVENT_MB` says.
fn big_mib() -> usize {
    std::env::var("B3_EVENT_MB")
        .ok()
        .and_then(|mb| mb.parse().ok())
        .unwrap_or(2048)
}

/// How the upstream writes one big event.
#[derive(Debug, Clone, Copy)]
struct Framing {
    /// The text's size, in MiB.
    mib: usize,
    /// The HTTP chunks' size (at most [`BUFFER`]).
    chunk: usize,
    /// Whether the message's `id` comes after its `result`.
    id_last: bool,
    /// The size of an SSE comment line before the event, in MiB (none when 0).
    comment_mib: usize,
}

impl Framing {
    fn arguments(self) -> Value {
        json!({"mib": self.mib, "chunk": self.chunk, "id_last": self.id_last,
               "comment_mib": self.comment_mib})
    }

    fn from_arguments(arguments: &Value) -> Self {
        Self {
            mib: arguments["mib"].as_u64().unwrap() as usize,
            chunk: arguments["chunk"].as_u64().unwrap() as usize,
            id_last: arguments["id_last"].as_bool().unwrap(),
            comment_mib: arguments["comment_mib"].as_u64().unwrap() as usize,
        }
    }
}

/// 1 MiB of text: lines of [`LINE`] bytes as JSON string content.
fn text_buffer() -> Bytes {
    let mut line = "0123456789abcdef line of output ".repeat(LINE / 32);
    line.truncate(LINE - 2);
    line.push_str("\\n");
    Bytes::from(line.repeat(BUFFER / LINE))
}

/// The JSON text of one big message, in pieces: `head`, the text, `tail`, written as
/// HTTP chunks of `framing.chunk` bytes each (the last one shorter) whatever the
/// pieces' edges.
fn message_pieces(
    head: String,
    tail: String,
    framing: Framing,
) -> impl Iterator<Item = Bytes> + use<> {
    let buffer = text_buffer();
    let chunk = framing.chunk.clamp(1, BUFFER);
    let pieces = std::iter::once(Bytes::from(head))
        .chain(std::iter::repeat_n(buffer, framing.mib))
        .chain(std::iter::once(Bytes::from(tail)));
    Chunks {
        pieces,
        current: Bytes::new(),
        chunk,
    }
}

/// Bytes from `pieces` in chunks of `chunk` bytes.
struct Chunks<I> {
    pieces: I,
    current: Bytes,
    chunk: usize,
}

impl<I: Iterator<Item = Bytes>> Iterator for Chunks<I> {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.current.len() >= self.chunk {
            return Some(self.current.split_to(self.chunk));
        }
        let mut out = bytes::BytesMut::from(&self.current[..]);
        self.current = Bytes::new();
        while out.len() < self.chunk {
            let Some(mut piece) = self.pieces.next() else {
                break;
            };
            let n = (self.chunk - out.len()).min(piece.len());
            out.extend_from_slice(&piece.split_to(n));
            self.current = piece;
        }
        (!out.is_empty()).then(|| out.freeze())
    }
}

/// The head and tail of the JSON text of an answer to `id` whose `result` is `result`
/// with its big text between them (`"…": "` + text + `"…`).
fn answer_ends(
    id: &Value,
    result_head: &str,
    result_tail: &str,
    id_last: bool,
) -> (String, String) {
    if id_last {
        (
            format!(r#"{{"jsonrpc":"2.0","result":{result_head}"#),
            format!(r#"{LAST}{result_tail},"id":{id}}}"#),
        )
    } else {
        (
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result_head}"#),
            format!(r#"{LAST}{result_tail}}}"#),
        )
    }
}

/// The SSE stream of one big event carrying the answer to `id` (a `tools/call`'s
/// result, or a `resources/read`'s), then nothing.
fn event_stream(
    id: &Value,
    tool_call: bool,
    framing: Framing,
) -> impl Iterator<Item = Bytes> + use<> {
    let (result_head, result_tail) = if tool_call {
        (r#"{"content":[{"type":"text","text":""#, r#""}]}"#)
    } else {
        (
            r#"{"contents":[{"uri":"log://big","mimeType":"text/plain","text":""#,
            r#""}]}"#,
        )
    };
    let (head, tail) = answer_ends(id, result_head, result_tail, framing.id_last);
    message_pieces(
        format!("id: e-1\nevent: message\ndata: {head}"),
        format!("{tail}\n\n"),
        framing,
    )
}

/// What the upstream writes before the event: a comment line of
/// `framing.comment_mib` MiB (none when 0), which backstop drops as it comes (B2).
fn comment_first(framing: Framing) -> impl Iterator<Item = Bytes> + use<> {
    let comment = Bytes::from(vec![b'c'; BUFFER]);
    let mib = framing.comment_mib;
    (mib > 0)
        .then(|| {
            std::iter::once(Bytes::from_static(b": "))
                .chain(std::iter::repeat_n(comment, mib))
                .chain(std::iter::once(Bytes::from_static(b"\n")))
        })
        .into_iter()
        .flatten()
}

fn full(bytes: impl Into<Bytes>) -> TestBody {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// Stream `pieces` as an SSE response body.
fn streamed(pieces: impl Iterator<Item = Bytes> + Send + 'static) -> Response<TestBody> {
    let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
    tokio::spawn(async move {
        for piece in pieces {
            if sender.send_data(piece).await.is_err() {
                return;
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(channel.boxed())
        .unwrap()
}

/// The upstream: `initialize`, a tool `big` and a resource read, each answered with
/// the big event its arguments (or, for the resource, its URI's query) describe.
async fn serve(request: Request<Incoming>) -> Result<Response<TestBody>, Infallible> {
    let body = request.into_body().collect().await.unwrap().to_bytes();
    Ok(answer(serde_json::from_slice(&body).unwrap_or_default()))
}

/// Whether [`serve_listing_held`] was asked for the tools.
static LISTING_ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Lets the `tools/list` of [`serve_listing_held`] be answered.
static LISTING_HELD: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// [`serve`], its `tools/list` answered only once the test lets it
/// ([`LISTING_HELD`]): the gateway's own listing stays in flight until then.
async fn serve_listing_held(request: Request<Incoming>) -> Result<Response<TestBody>, Infallible> {
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    if message["method"] == "tools/list" {
        LISTING_ASKED.store(true, std::sync::atomic::Ordering::SeqCst);
        LISTING_HELD.notified().await;
    }
    Ok(answer(message))
}

/// The upstream's answer to `message`.
fn answer(message: Value) -> Response<TestBody> {
    let id = message["id"].clone();
    let json = |value: Value| {
        Response::builder()
            .header("content-type", "application/json")
            .header("mcp-session-id", "big-1")
            .body(full(value.to_string()))
            .unwrap()
    };
    match message["method"].as_str() {
        Some("initialize") => json(json!({"jsonrpc": "2.0", "id": id,
            "result": {"protocolVersion": "2025-11-25",
                       "capabilities": {"tools": {}, "resources": {}},
                       "serverInfo": {"name": "big", "version": "1"}}})),
        _ if id.is_null() => Response::builder().status(202).body(full("")).unwrap(),
        Some("tools/call") => {
            let framing = Framing::from_arguments(&message["params"]["arguments"]);
            streamed(comment_first(framing).chain(event_stream(&id, true, framing)))
        }
        Some("resources/read") => {
            let framing = Framing::from_arguments(&message["params"]["_meta"]["framing"]);
            streamed(comment_first(framing).chain(event_stream(&id, false, framing)))
        }
        Some("tools/list") => json(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
            {"name": "big", "inputSchema": {"type": "object"}}]}})),
        _ => json(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
    }
}

/// The request for the big answer: a `tools/call` (cut) or a `resources/read` (uncut).
fn request(id: u32, tool_call: bool, framing: Framing) -> String {
    if tool_call {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "big", "arguments": framing.arguments()}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
               "params": {"uri": "log://big", "_meta": {"framing": framing.arguments()}}})
    }
    .to_string()
}

/// Checks a stream as it arrives against the bytes expected, holding none of it.
struct Expected<I: Iterator<Item = Bytes>> {
    pieces: I,
    current: Bytes,
    matched: u64,
}

impl<I: Iterator<Item = Bytes>> Expected<I> {
    fn new(pieces: I) -> Self {
        Self {
            pieces,
            current: Bytes::new(),
            matched: 0,
        }
    }

    /// The next bytes that came: they must be the next bytes expected.
    fn came(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            while self.current.is_empty() {
                self.current = self
                    .pieces
                    .next()
                    .unwrap_or_else(|| panic!("more came than expected, at {}", self.matched));
            }
            let n = bytes.len().min(self.current.len());
            assert!(
                bytes[..n] == self.current[..n],
                "B3: byte-identical, but it differs within {n} bytes of byte {}",
                self.matched
            );
            self.current = self.current.slice(n..);
            bytes = &bytes[n..];
            self.matched += n as u64;
        }
    }

    /// The end: everything expected came.
    fn end(mut self) -> u64 {
        assert!(
            self.current.is_empty() && self.pieces.all(|piece| piece.is_empty()),
            "the stream ended early, after {} bytes",
            self.matched
        );
        self.matched
    }
}

/// An answer cut to the cap, its tail kept.
fn assert_cut(response: &Value, wire_bytes: usize, framing: Framing) {
    assert!(wire_bytes <= CAP + 1024, "{wire_bytes} bytes on the wire");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "), "{}", &text[..80]);
    assert!(text.ends_with(LAST), "the tail kept");
    let report = &response["result"]["_meta"]["backstop/truncation"];
    let original = (framing.mib * BUFFER) as u64;
    assert!(
        report["original_bytes"].as_u64() > Some(original / 2),
        "L12: {report}"
    );
}

/// The process's peak RSS in one case, printed and checked against the bound; the next
/// case measures its own.
fn assert_bounded(what: &str, pid: u32) {
    let peak = support::peak_rss(pid);
    println!(
        "{what}: peak RSS {:.1} MiB",
        peak as f64 / f64::from(1 << 20)
    );
    assert!(
        peak < RSS_BOUND,
        "B3: {what}: peak RSS {peak} bytes, over {RSS_BOUND}"
    );
    support::reset_peak_rss(pid);
}

/// The framings each mode is run with: the biggest event for the cut with its id first
/// in 1 MiB chunks (the case that was held whole, several times over); a quarter of
/// it for id last, for 16 KiB chunks and for the uncut answers; and a comment line of
/// that quarter before an 8 MiB answer, cut and uncut (B5: the answer after it comes).
fn cases() -> Vec<(bool, Framing)> {
    let big = big_mib();
    let quarter = (big / 4).max(1);
    let framing = |mib, chunk, id_last| Framing {
        mib,
        chunk,
        id_last,
        comment_mib: 0,
    };
    vec![
        (true, framing(big, BUFFER, false)),
        (true, framing(quarter, BUFFER, true)),
        (true, framing(quarter, 16 << 10, false)),
        (false, framing(quarter, BUFFER, false)),
        (false, framing(quarter, 16 << 10, true)),
        (
            true,
            Framing {
                comment_mib: quarter,
                ..framing(8, BUFFER, false)
            },
        ),
        (
            false,
            Framing {
                comment_mib: quarter,
                ..framing(8, 16 << 10, false)
            },
        ),
    ]
}

/// POST `body` to the gateway as a client of `session`; the response's status and
/// its body, checked against `expected` as it arrives (when given) or collected.
fn post_streamed(
    url: &str,
    session: Option<&str>,
    body: String,
    expected: Option<Box<dyn Iterator<Item = Bytes> + Send>>,
) -> Vec<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<Full<Bytes>>();
        let request = Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        let request = match session {
            Some(session) => request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25"),
            None => request.header("mcp-protocol-version", "2026-07-28"),
        };
        let request = request.body(Full::new(Bytes::from(body))).unwrap();
        let response = client.request(request).await.expect("an answer");
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        let mut expected = expected.map(Expected::new);
        let mut collected = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.expect("the body whole").into_data() else {
                continue;
            };
            match expected.as_mut() {
                Some(expected) => {
                    if expected.matched == 0 {
                        tokio::time::sleep(PAUSE).await;
                    }
                    expected.came(&data);
                }
                None => {
                    collected.extend_from_slice(&data);
                    assert!(collected.len() < 4 * CAP, "B3: the cut answer is small");
                }
            }
        }
        if let Some(expected) = expected {
            expected.end();
        }
        collected
    })
}

/// The one event of a cut answer to `id` through the gateway, checked.
fn assert_cut_event(bytes: &[u8], id: u32, framing: Framing) {
    let mut parser = backstop::http::sse::SseParser::default();
    let events = parser.feed(bytes);
    assert_eq!(events.len(), 1, "one event for {framing:?}");
    assert!(
        events[0]
            .raw()
            .starts_with(b"id: e-1\nevent: message\ndata: {"),
        "B2: the event's lines as they came"
    );
    let response: Value = serde_json::from_slice(&events[0].data().unwrap()).unwrap();
    assert_eq!(response["id"], id);
    assert_cut(&response, bytes.len(), framing);
}

/// Every case in a session (2025-11-25 and before), then the big cut outside any
/// (a 2026-07-28 request, which makes the gateway list the tools first: E8, R5).
#[test]
fn b3_sse_events_of_any_size_and_framing_through_the_gateway_in_bounded_memory() {
    let (_runtime, upstream) = start_upstream(serve);
    let (gateway, url) = start_gateway(&upstream, &["--max-bytes", &CAP.to_string()]);
    let http = http_support::Http::new();
    let (session, _) = http.initialize(&url);
    for (id, (tool_call, framing)) in (2..).zip(cases()) {
        let body = request(id, tool_call, framing);
        if tool_call {
            let bytes = post_streamed(&url, Some(&session), body, None);
            assert_cut_event(&bytes, id, framing);
        } else {
            let stream = event_stream(&json!(id), false, framing);
            post_streamed(&url, Some(&session), body, Some(Box::new(stream)));
        }
        let case = if tool_call { "cut" } else { "uncut" };
        assert_bounded(
            &format!("backstop gateway, {framing:?} ({case})"),
            gateway.0.id(),
        );
    }
    let (id, framing) = (100, cases()[2].1);
    let call = http_support::stateless_call(id, "big", framing.arguments(), "2026-07-28");
    let bytes = post_streamed(&url, None, call, None);
    assert_cut_event(&bytes, id, framing);
    assert_bounded(
        &format!("backstop gateway, outside a session, {framing:?} (cut)"),
        gateway.0.id(),
    );
}

/// SPEC B3 while the gateway's own listing is in flight (E8, R5): a first call makes
/// the gateway list the tools, and the upstream holds that listing; a second call, sent
/// at once meanwhile, gets its big answer cut — not read whole for the listing (three
/// times its size, before) — and the first call is answered once the listing is.
#[test]
fn b3_an_answer_that_ends_while_the_gateway_lists_the_tools_is_not_held_whole() {
    let (_runtime, upstream) = start_upstream(serve_listing_held);
    let (gateway, url) = start_gateway(&upstream, &["--max-bytes", &CAP.to_string()]);
    let http = http_support::Http::new();
    let (session, _) = http.initialize(&url);
    let framing = |mib| Framing {
        mib,
        chunk: BUFFER,
        id_last: false,
        comment_mib: 0,
    };
    let first = {
        let (url, session) = (url.clone(), session.clone());
        std::thread::spawn(move || {
            post_streamed(&url, Some(&session), request(2, true, framing(0)), None)
        })
    };
    // The first call's listing is under way (the upstream holds it) before the second.
    while !LISTING_ASKED.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let big = framing((big_mib() / 4).max(1));
    let bytes = post_streamed(&url, Some(&session), request(3, true, big), None);
    assert_cut_event(&bytes, 3, big);
    assert_bounded(
        &format!("backstop gateway, its listing in flight, {big:?} (cut)"),
        gateway.0.id(),
    );
    LISTING_HELD.notify_one();
    let first = first.join().unwrap();
    let answer: Value = serde_json::from_slice(
        &backstop::http::sse::SseParser::default().feed(&first)[0]
            .data()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(answer["id"], 2, "the first call answered after the listing");
}

/// SPEC B3, B5 on a full disk (the gateway's files limited to 32 MiB): an answer being
/// cut needs no file and comes out cut, id first or last (the scan holds the ends its
/// cut keeps), and one that needs no change streams through as it came, id last too
/// (it is known to need none before its id) — each in bounded memory.
#[test]
fn b3_b5_sse_events_on_a_full_disk_are_cut_or_streamed_in_bounded_memory() {
    let (_runtime, upstream) = start_upstream(serve);
    let (gateway, url) = http_support::start_gateway_on_full_disk(
        &upstream,
        &["--max-bytes", &CAP.to_string()],
        32 << 10,
    );
    let http = http_support::Http::new();
    let (session, _) = http.initialize(&url);
    let quarter = (big_mib() / 4).max(1);
    let framing = |id_last| Framing {
        mib: quarter,
        chunk: BUFFER,
        id_last,
        comment_mib: 0,
    };
    for (id, (tool_call, framing)) in (2..).zip([
        (true, framing(false)),
        (true, framing(true)),
        (false, framing(true)),
    ]) {
        let body = request(id, tool_call, framing);
        if tool_call {
            let bytes = post_streamed(&url, Some(&session), body, None);
            assert_cut_event(&bytes, id, framing);
        } else {
            let stream = event_stream(&json!(id), false, framing);
            post_streamed(&url, Some(&session), body, Some(Box::new(stream)));
        }
        let case = if tool_call { "cut" } else { "uncut" };
        assert_bounded(
            &format!("backstop gateway, full disk, {framing:?} ({case})"),
            gateway.0.id(),
        );
    }
}

#[test]
fn b3_sse_events_of_any_size_and_framing_through_proxy_url_in_bounded_memory() {
    let (_runtime, upstream) = start_upstream(serve);
    let mut child = Command::new(backstop())
        .args([
            "proxy",
            "--quiet",
            "--url",
            &upstream,
            "--max-bytes",
            &CAP.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("backstop starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    let proxy = Spawned(child);
    let mut send = |line: &str| {
        use std::io::Write;
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    };
    send(http_support::INITIALIZE);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":0"#), "{line}");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for (id, (tool_call, framing)) in (2..).zip(cases()) {
        send(&request(id, tool_call, framing));
        if tool_call {
            let mut line = Vec::new();
            (&mut stdout)
                .take(4 * CAP as u64)
                .read_until(b'\n', &mut line)
                .unwrap();
            assert!(
                line.ends_with(b"\n"),
                "B3: the cut answer is one small line"
            );
            let response: Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(response["id"], id);
            assert_cut(&response, line.len() - 1, framing);
        } else {
            // The event's data is the line, as it came.
            let (head, tail) = answer_ends(
                &json!(id),
                r#"{"contents":[{"uri":"log://big","mimeType":"text/plain","text":""#,
                r#""}]}"#,
                framing.id_last,
            );
            let mut expected = Expected::new(message_pieces(head, format!("{tail}\n"), framing));
            stdout.fill_buf().unwrap();
            std::thread::sleep(PAUSE);
            loop {
                let buffer = stdout.fill_buf().unwrap();
                assert!(!buffer.is_empty(), "the line ended early");
                let end = memchr_newline(buffer);
                let n = end.map_or(buffer.len(), |at| at + 1);
                expected.came(&buffer[..n]);
                stdout.consume(n);
                if end.is_some() {
                    break;
                }
            }
            expected.end();
        }
        let case = if tool_call { "cut" } else { "uncut" };
        assert_bounded(
            &format!("backstop proxy --url, {framing:?} ({case})"),
            proxy.0.id(),
        );
    }
}

/// Where the first line break in `bytes` is.
fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
