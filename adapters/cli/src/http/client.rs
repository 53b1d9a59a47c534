//! `backstop proxy --url` (SPEC A5): a stdio front for a Streamable HTTP MCP server.
//!
//! - Each line the client writes on stdin is shown to the shaper and POSTed as it
//!   came, with `Content-Type: application/json`, `Accept: application/json,
//!   text/event-stream`, the session's `Mcp-Session-Id` and `MCP-Protocol-Version`
//!   once the server has given them, and the `--header`s given — no other header.
//! - The answer is a JSON body or an SSE stream; each message (the body, or one event's
//!   data) is shaped and written to stdout as one line, as it arrives
//!   ([`super::shape`]): a long one is scanned and held (past 4 MiB in a temporary
//!   file) or streams through, in memory bounded by the cap (B3); while one streams
//!   through, no other line is written into it.
//! - Messages without requests (notifications, the client's answers to the server)
//!   and `initialize` are sent one at a time, in order, each awaited (so the session id
//!   is known before the next); other requests are sent as they come, concurrently
//!   (a long `tools/call` does not hold a `ping` or a cancellation).
//! - A `tools/call` that comes before the session's tool catalog is complete is
//!   preceded by the shaper's own `tools/list` (SPEC E8, [`super::listing`]): POSTed
//!   with the same headers, its pages read and followed before the call is sent, so
//!   that a misspelt tool gets `Did you mean …?` and a structured result is cut within
//!   its schema (L15) from the first call on. A listing that fails or times out is
//!   given up, and the call is sent all the same.
//! - Once the client has sent `notifications/initialized`, a GET stream is opened for
//!   the server's own messages; a server without one (`405`) is fine. A stream that
//!   ends, or cannot be reached, is opened again with `Last-Event-ID` after a backoff
//!   ([`reconnect_delay`](super::resumption::reconnect_delay): 0.5 s doubling to 8 s,
//!   reset by an event with a new id; a server's SSE `retry:` wins), and given up
//!   after 5 tries in a row without one.
//! - A POST's stream that closes before it answered, after an event with an id
//!   (SEP-1699: the server may close it and have the client poll), is resumed the same
//!   way — a GET with its `Last-Event-ID` — until its requests are answered
//!   ([`super::resumption`]); only one that cannot be resumed, or whose resumption
//!   fails, has its requests answered with an error.
//! - Failures answer each request of the POST with a JSON-RPC error naming the cause
//!   and the server's address ([`UpstreamFailure`]), and those requests are no longer
//!   pending in the shaper; the proxy keeps serving the rest. A request the server's
//!   answer ends without answering gets one too; which are owed one, and which, is
//!   [`backstop_jsonrpc::owed`]'s rule, the gateway's too.
//! - At the end of stdin, the requests in flight are awaited (each within the timeout),
//!   the session is ended with a DELETE, and the proxy exits 0.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::sync::Mutex;

use backstop_core::machine;
use backstop_jsonrpc::owed::{End, Owed, Verdict};
use backstop_jsonrpc::stream::{Ended, Sink};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, header};
use http_body_util::Full;
use tokio::sync::mpsc::{Sender, UnboundedReceiver, channel, unbounded_channel};
use tokio::task::JoinSet;

use super::headers::{
    PROTOCOL_VERSION, SESSION_ID, is_event_stream, is_json_content, set_post_headers,
};
use super::listing::list_first;
use super::message_headers::{mirror_arguments, mirror_message};
use super::resumption::Resumption;
use super::shape::{BodyShaper, EventShaper, Out, QueueSink, Queued};
use super::upstream::{RequestWait, Upstream, UpstreamFailure};
use super::{Options, Shaping, client_methods, is_answer, is_long_lived, lock, request_ids};
use crate::framing::LineReader;

/// A `--header 'Name: value'` argument, read. Its error says what is wrong and never
/// repeats the text (at most a header name), and the value is marked sensitive.
///
/// ```
/// let (name, value) = backstop::http::client::parse_header("Authorization: Bearer t").unwrap();
/// assert_eq!(name, "authorization");
/// assert_eq!(value, "Bearer t");
/// assert_eq!(format!("{value:?}"), "Sensitive");
/// let error = backstop::http::client::parse_header("Authorization Bearer tok-123").unwrap_err();
/// assert!(error.contains("`Name: value`") && !error.contains("tok-123"));
/// ```
pub fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    // No part of the text is ever repeated but a header name: the rest may be a
    // credential (`Authorization Bearer …` with its colon missing, a bare token).
    let (name, value) = text.split_once(':').ok_or_else(|| {
        "expected `Name: value`, and this has no `:` (its text is not shown: it may hold a \
         credential)"
            .to_owned()
    })?;
    let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
        "expected `Name: value`, and what comes before the first `:` is not a header name \
         (its text is not shown: it may hold a credential)"
            .to_owned()
    })?;
    let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
        let shown = if name.as_str().len() <= 40 {
            name.as_str()
        } else {
            "…"
        };
        format!(
            "the value of header `{shown}` has characters a header value cannot (it is not shown)"
        )
    })?;
    // Debug output of the value (clap's, the session's) reads `Sensitive`.
    value.set_sensitive(true);
    Ok((name, value))
}

/// The session with the server: what the proxy learnt of it, and where answers go.
struct Session {
    upstream: Upstream,
    extra: HeaderMap,
    shaping: Shaping,
    id: Mutex<Option<HeaderValue>>,
    protocol: Mutex<Option<HeaderValue>>,
    /// The raw ids of `initialize` requests not answered yet.
    initializing: Mutex<Vec<String>>,
    /// Bytes for stdout, written as they come (no line break added), at most
    /// [`STDOUT_WAITING`] pieces waiting for a slow reader (B3).
    out: Sender<Vec<u8>>,
    /// Held by whoever writes to stdout, for as long as a message it writes is not
    /// whole: a long message streams through, and no other line may cut into it.
    writing: tokio::sync::Mutex<()>,
}

impl Session {
    /// A session with `upstream`, nothing known of it yet; its answers go to `out`.
    fn new(upstream: Upstream, extra: HeaderMap, options: Options, out: Sender<Vec<u8>>) -> Self {
        Self {
            upstream,
            extra,
            shaping: Shaping::new(options.shaper, options.log_failures),
            id: Mutex::new(None),
            protocol: Mutex::new(None),
            initializing: Mutex::new(Vec::new()),
            out,
            writing: tokio::sync::Mutex::new(()),
        }
    }

    /// A request to the server with the session's headers, then the given ones.
    fn request(&self, method: Method, body: Bytes) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.upstream.url().clone();
        *request.headers_mut() = self.headers();
        request
    }

    /// The session's headers, then the given ones.
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(id) = lock(&self.id).clone() {
            headers.insert(SESSION_ID, id);
        }
        if let Some(version) = lock(&self.protocol).clone() {
            headers.insert(PROTOCOL_VERSION, version);
        }
        for (name, value) in &self.extra {
            headers.append(name.clone(), value.clone());
        }
        headers
    }

    /// Write the errors `verdict` owes to the client ([`Shaping::settle`]); their
    /// requests are no longer pending.
    async fn settle(&self, verdict: Verdict<UpstreamFailure>) {
        let answers = self.shaping.settle(verdict, self.upstream.address());
        if !answers.is_empty() {
            self.write_lines(answers).await;
        }
    }

    /// Write whole messages to the client, one line each.
    async fn write_lines(&self, messages: Vec<Vec<u8>>) {
        let _writing = self.writing.lock().await;
        for mut line in messages {
            // Data of several lines: JSON allows a space wherever it has a line break
            // outside a string (and has none inside one), and stdout takes one line.
            for byte in &mut line {
                if *byte == b'\n' || *byte == b'\r' {
                    *byte = b' ';
                }
            }
            line.push(b'\n');
            let _ = self.out.send(line).await;
        }
    }

    /// Send a client message: first the shaper's own listing when it asked for one
    /// (E8, [`list_first`]), then the message.
    async fn send(&self, body: Bytes, ids: Vec<String>, listing: Vec<Vec<u8>>) {
        let mut wait = self.upstream.request_wait();
        if !listing.is_empty() {
            let headers = self.headers();
            let for_client =
                list_first(&self.upstream, &self.shaping, listing, &headers, &mut wait).await;
            self.write_lines(for_client).await;
        }
        self.post(body, ids, &wait).await;
    }

    /// Send what `sink` queued to stdout, held bytes read back a piece at a time.
    async fn send_queued(&self, sink: &mut QueueSink) {
        let queued: Vec<Queued> = sink.drain().collect();
        for queued in queued {
            match queued {
                Queued::Bytes(bytes) => {
                    let _ = self.out.send(bytes).await;
                }
                Queued::Held(held) => {
                    for piece in held.pieces() {
                        let _ = self.out.send(piece).await;
                    }
                }
            }
        }
    }

    /// A message from the server ended: its answers are no longer `owed`, and an
    /// answer to `initialize` gives the revision.
    fn ended(&self, ended: &Ended, owed: &mut Owed<UpstreamFailure>) {
        owed.answered(&ended.answered);
        if let Some(message) = &ended.whole {
            self.learn_protocol(message, &ended.answered);
        }
    }

    /// The revision the server's answer to `initialize` names, kept for the
    /// `MCP-Protocol-Version` header.
    fn learn_protocol(&self, message: &[u8], answered: &[String]) {
        let mut initializing = lock(&self.initializing);
        if !answered.iter().any(|id| initializing.contains(id)) {
            return;
        }
        initializing.retain(|id| !answered.contains(id));
        let value: serde_json::Value = serde_json::from_slice(message).unwrap_or_default();
        if let Some(version) = value["result"]["protocolVersion"].as_str()
            && let Ok(version) = HeaderValue::from_str(version)
        {
            *lock(&self.protocol) = Some(version);
        }
    }

    /// POST one client message and write what answers it: the server's answers, and
    /// one error for each request they leave unanswered ([`Owed`]).
    async fn post(&self, body: Bytes, ids: Vec<String>, wait: &RequestWait) {
        let mut owed = Owed::new(ids);
        let sent = body.clone();
        let mut request = self.request(Method::POST, body);
        set_post_headers(request.headers_mut());
        mirror_message(request.headers_mut(), &sent);
        let schema = self.shaping.called_tool_schema(&sent);
        mirror_arguments(request.headers_mut(), &sent, schema.as_ref());
        let response = match self.upstream.send_within(request, wait).await {
            Ok(response) => response,
            Err(failure) => {
                let end = UpstreamFailure::end(Some(failure));
                return self.settle(owed.end(end, false)).await;
            }
        };
        let (head, mut body) = response.into_parts();
        if !head.status.is_success() {
            // A server's own JSON-RPC answer on an error status (2026-07-28 answers a
            // header mismatch `-32020` with HTTP 400) is its word: it passes, shaped
            // as any answer; only requests it leaves unanswered get the status.
            owed = owed.with_error_status(UpstreamFailure::Status(head.status));
            let end = if is_json_content(&head.headers) {
                self.json_body(&mut body, &mut owed).await
            } else {
                End::Ended
            };
            return self.settle(owed.end(end, false)).await;
        }
        if let Some(id) = head.headers.get(SESSION_ID) {
            let mut known = lock(&self.id);
            if known.is_none() {
                *known = Some(id.clone());
            }
        }
        // A `202`: the answers, if any, come on another stream.
        if head.status == StatusCode::ACCEPTED || owed.is_empty() && !is_event_stream(&head.headers)
        {
            return;
        }
        if is_event_stream(&head.headers) {
            let patient = is_long_lived(&sent);
            let mut stream = Resumption::default();
            let end = self
                .events(&mut body, &mut owed, patient, &mut stream, false)
                .await;
            let mut verdict = owed.end(end, stream.is_resumable());
            if verdict == Verdict::Resume {
                let end = self.resume(&mut owed, patient, &mut stream).await;
                verdict = owed.end(end, false);
            }
            return self.settle(verdict).await;
        }
        let end = self.json_body(&mut body, &mut owed).await;
        self.settle(owed.end(end, false)).await;
    }

    /// Read a JSON body, shaped as it arrives into one line for stdout, its answers
    /// no longer `owed`; how it ended (a short body that is not JSON is a failure).
    async fn json_body(
        &self,
        body: &mut hyper::body::Incoming,
        owed: &mut Owed<UpstreamFailure>,
    ) -> End<UpstreamFailure> {
        let mut shaped = BodyShaper::new(Out::Lines);
        let mut sink = QueueSink::default();
        let mut writing = None;
        let wait = self.upstream.wait(false);
        loop {
            match self.upstream.next_data(body, wait).await {
                Ok(Some(data)) => {
                    self.shaping
                        .shape(|shaper| shaped.push(shaper, &data, &mut sink));
                    if !sink.is_empty() {
                        if writing.is_none() {
                            writing = Some(self.writing.lock().await);
                        }
                        self.send_queued(&mut sink).await;
                    }
                }
                Ok(None) => break,
                Err(failure) => {
                    if sink.sent_some() {
                        let _ = self.out.send(b"\n".to_vec()).await;
                    }
                    return UpstreamFailure::end(Some(failure));
                }
            }
        }
        if shaped.whole().is_some_and(|whole| !is_answer(whole)) {
            return End::Failed(UpstreamFailure::NotJson);
        }
        let ended = self.shaping.shape(|shaper| shaped.end(shaper, &mut sink));
        self.ended(&ended, owed);
        if writing.is_none() {
            writing = Some(self.writing.lock().await);
        }
        self.send_queued(&mut sink).await;
        drop(writing);
        End::Ended
    }

    /// Read an SSE stream, each event's data a server message shaped as it arrives
    /// into one line for stdout, its answers no longer `owed`; how it ended. `stream`
    /// learns its event ids and `retry:`, for resuming it. A stream resumed for the
    /// requests `owed` (`until_answered`) is read until they are answered: the server
    /// may keep it open.
    async fn events(
        &self,
        body: &mut hyper::body::Incoming,
        owed: &mut Owed<UpstreamFailure>,
        patient: bool,
        stream: &mut Resumption,
        until_answered: bool,
    ) -> End<UpstreamFailure> {
        let mut events = EventShaper::new(Out::Lines);
        let mut sink = QueueSink::default();
        let mut writing = None;
        let wait = self.upstream.wait(patient);
        let failure = loop {
            let data = match self.upstream.next_data(body, wait).await {
                Ok(Some(data)) => data,
                Ok(None) => break None,
                Err(failure) => break Some(failure),
            };
            let ended = self
                .shaping
                .shape(|shaper| events.push(shaper, &data, &mut sink));
            for event in ended {
                stream.saw(event.id.as_deref(), event.retry.as_deref());
                if let Some(message) = &event.message {
                    self.ended(message, owed);
                }
            }
            if !sink.is_empty() {
                if writing.is_none() {
                    writing = Some(self.writing.lock().await);
                }
                self.send_queued(&mut sink).await;
            }
            // Stdout is another's again once no message of this stream is half written.
            if !sink.sent_some() {
                writing = None;
                if until_answered && owed.is_empty() {
                    break None;
                }
            }
        };
        if self
            .shaping
            .shape(|shaper| events.finish(shaper, false, &mut sink))
        {
            sink.send(b"\n");
        }
        if !sink.is_empty() {
            if writing.is_none() {
                writing = Some(self.writing.lock().await);
            }
            self.send_queued(&mut sink).await;
        }
        drop(writing);
        UpstreamFailure::end(failure)
    }

    /// A GET for the server's stream: its own (no `last_event_id`), or one resumed
    /// from `last_event_id`.
    fn get_stream(&self, last_event_id: Option<&HeaderValue>) -> Request<Full<Bytes>> {
        let mut request = self.request(Method::GET, Bytes::new());
        let headers = request.headers_mut();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        if let Some(id) = last_event_id {
            headers.insert("last-event-id", id.clone());
        }
        request
    }

    /// Resume a POST's stream that closed before it answered the requests `owed`
    /// (SEP-1699, B5): a GET with its `Last-Event-ID`, after the wait the server asked
    /// for, again for as long as each try brings a new event
    /// ([`Resumption::next_try`]), each read until they are answered. How the last try
    /// ended, for what is left: the server refused the resumption, or it was given up.
    async fn resume(
        &self,
        owed: &mut Owed<UpstreamFailure>,
        patient: bool,
        stream: &mut Resumption,
    ) -> End<UpstreamFailure> {
        let mut began = None;
        let mut failure = End::BrokenOff;
        while !owed.is_empty() {
            let Some(wait) = stream.next_try(began.as_ref()) else {
                tracing::warn!("the server's stream could not be resumed: given up");
                return failure;
            };
            tracing::info!(
                after_ms = wait.as_millis() as u64,
                requests = owed.ids().len(),
                "resuming the server's stream, closed before it answered (SEP-1699)"
            );
            tokio::time::sleep(wait).await;
            began = stream.last_event_id().cloned();
            let response = match self.upstream.send(self.get_stream(began.as_ref())).await {
                Ok(response) => response,
                Err(refused) => {
                    failure = UpstreamFailure::end(Some(refused));
                    continue;
                }
            };
            let (head, mut body) = response.into_parts();
            if !head.status.is_success() || !is_event_stream(&head.headers) {
                tracing::warn!(
                    status = head.status.as_u16(),
                    "the server refused to resume its stream"
                );
                return End::Failed(UpstreamFailure::Status(head.status));
            }
            let ended = self.events(&mut body, owed, patient, stream, true).await;
            if !ended.is_close() {
                return ended;
            }
        }
        End::Ended
    }

    /// The server's own stream, for as long as it offers one: reopened with
    /// `Last-Event-ID` when it ends or cannot be reached, after
    /// [`Resumption::next_try`]'s wait; given up after [`MAX_TRIES`](super::resumption::MAX_TRIES) tries in a row
    /// that brought no new event id, or when the server answers that it has no such
    /// stream.
    async fn listen(self: Arc<Self>) {
        let mut stream = Resumption::default();
        loop {
            let began = stream.last_event_id().cloned();
            // A connection that fails is tried again, as a stream that ended is.
            if let Ok(response) = self.upstream.send(self.get_stream(began.as_ref())).await {
                let (head, mut body) = response.into_parts();
                if !head.status.is_success() || !is_event_stream(&head.headers) {
                    tracing::debug!(
                        status = head.status.as_u16(),
                        "the server has no stream of its own"
                    );
                    return; // 405: the server has no stream of its own
                }
                let _ = self
                    .events(&mut body, &mut Owed::default(), true, &mut stream, false)
                    .await;
            }
            let Some(wait) = stream.next_try(began.as_ref()) else {
                tracing::info!("the server's own stream ended for good: no new events");
                return;
            };
            tracing::debug!(
                after_ms = wait.as_millis() as u64,
                "reopening the server's own stream"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// End the session: DELETE, when the server gave a session id.
    async fn end(&self) {
        if lock(&self.id).is_none() {
            return;
        }
        let request = self.request(Method::DELETE, Bytes::new());
        let _ = self.upstream.send(request).await;
    }
}

/// The lines of stdin, read on a thread of their own.
fn read_stdin() -> UnboundedReceiver<Vec<u8>> {
    let (sender, receiver) = unbounded_channel();
    std::thread::spawn(move || {
        let mut reader = LineReader::new(io::stdin().lock());
        while let Ok(Some(line)) = reader.next_line() {
            if sender.send(line.to_vec()).is_err() {
                return;
            }
        }
    });
    receiver
}

/// How many pieces for stdout may wait for the client to read (each at most a read
/// of the server's plus 256 KiB): a client that reads slowly, or not at all, slows
/// the reading of the server's answer instead of making the proxy hold it (B3).
const STDOUT_WAITING: usize = 8;

/// Bytes for stdout, written on a thread of their own as they come, flushed whenever
/// none wait.
fn write_stdout() -> (Sender<Vec<u8>>, std::thread::JoinHandle<()>) {
    let (sender, mut receiver) = channel::<Vec<u8>>(STDOUT_WAITING);
    let writer = std::thread::spawn(move || {
        let mut out = BufWriter::with_capacity(64 << 10, io::stdout().lock());
        while let Some(bytes) = receiver.blocking_recv() {
            let mut sent = out.write_all(&bytes);
            while let Ok(bytes) = receiver.try_recv() {
                sent = sent.and_then(|()| out.write_all(&bytes));
            }
            if sent.and_then(|()| out.flush()).is_err() {
                return; // the client went away
            }
        }
    });
    (sender, writer)
}

/// Run the proxy on this process's stdin and stdout until stdin ends; the exit code.
///
/// ```no_run
/// use backstop::http::{Options, client, upstream::Upstream};
/// let upstream = Upstream::new("https://example.com/mcp".parse().unwrap(), std::time::Duration::from_secs(60)).unwrap();
/// let options = Options { shaper: Default::default(), log_failures: true };
/// std::process::exit(client::run(upstream, http::HeaderMap::new(), options).unwrap());
/// ```
pub fn run(upstream: Upstream, extra: HeaderMap, options: Options) -> io::Result<i32> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (out, writer) = write_stdout();
    runtime.block_on(async move {
        let session = Arc::new(Session::new(upstream, extra, options, out));
        let mut lines = read_stdin();
        let mut in_flight = JoinSet::new();
        let mut listening = None;
        while let Some(line) = lines.recv().await {
            let listing = session.shaping.client_route(&line);
            let ids = request_ids(&line);
            let methods = client_methods(&line);
            let initialize = methods.iter().any(|m| machine::begins_handshake(m));
            let initialized = methods.iter().any(|m| machine::ends_handshake(m));
            if initialize {
                lock(&session.initializing).extend(ids.iter().cloned());
            }
            if ids.is_empty() || initialize {
                session.send(Bytes::from(line), ids, listing).await;
            } else {
                let session = Arc::clone(&session);
                in_flight.spawn(async move { session.send(Bytes::from(line), ids, listing).await });
            }
            while in_flight.try_join_next().is_some() {}
            if listening.is_none() && initialized {
                listening = Some(tokio::spawn(Arc::clone(&session).listen()));
            }
        }
        while in_flight.join_next().await.is_some() {}
        if let Some(listening) = listening {
            listening.abort();
        }
        session.end().await;
    });
    runtime.shutdown_background();
    let _ = writer.join();
    Ok(0)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// An address nobody listens on.
    fn refused() -> Upstream {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
        Upstream::new(url, Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn b1_a_failed_post_answers_its_request_and_leaves_nothing_pending() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (out, mut written) = channel(STDOUT_WAITING);
        let options = Options {
            shaper: backstop_jsonrpc::Shaper::default(),
            log_failures: false,
        };
        let session = Session::new(refused(), HeaderMap::new(), options, out);
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}"#;
        assert!(
            session.shaping.client_route(call).is_empty(),
            "no session yet"
        );
        assert_eq!(session.shaping.pending(), 1);
        runtime.block_on(session.send(Bytes::from_static(call), request_ids(call), Vec::new()));
        let answer: serde_json::Value =
            serde_json::from_slice(&written.try_recv().unwrap()).unwrap();
        assert_eq!(answer["id"], 7);
        assert!(
            answer.to_string().contains("could not be reached"),
            "{answer}"
        );
        assert_eq!(
            session.shaping.pending(),
            0,
            "A5/B1: the failed request is not pending"
        );
    }
}
