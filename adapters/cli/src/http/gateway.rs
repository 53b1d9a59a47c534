//! `backstop gateway` (SPEC A5): Streamable HTTP on both sides, every JSON-RPC
//! message shaped on its way back.
//!
//! - `POST`: the body (at most [`Gateway::max_body`] bytes, else `413`) is shown to the
//!   session's shaper and sent on as it came; the answer — a JSON body, or an SSE
//!   stream whose events are shaped one by one as they arrive — comes back with the
//!   server's status and headers (hop-by-hop ones dropped, [`super::headers`]). A long
//!   body or event is shaped as it arrives, in memory bounded by the cap
//!   ([`super::shape`], B3): a JSON body past 4 MiB is streamed once its head is sent.
//! - E8 from the first call: a `tools/call` in a session whose tool catalog is not
//!   complete yet is preceded by the shaper's own `tools/list`, sent with the client's
//!   end-to-end headers (its session, revision, `Authorization`) and read before the
//!   call goes on ([`super::listing`]); a listing that fails is given up and never
//!   fails the call. A stateless request's shaper, which lives for that request,
//!   starts from the listing kept for its credential, and lists only when there is
//!   none or it went stale (R5, [`super::stateless_catalogs`]).
//! - `GET` (the server's own stream) and `DELETE` pass the same way; a `DELETE` the
//!   server accepts ends the session's state. Other methods pass untouched.
//! - Sessions: a shaper per `Mcp-Session-Id`, made when the server's answer to an
//!   `initialize` names the id, or on first sight of an id this gateway did not see
//!   begin (another gateway behind the same balancer began it: any gateway in front of
//!   the same server can carry any session, it only lacks the tool list until the
//!   client lists again). At most [`Gateway::max_sessions`] are kept (the least
//!   recently used goes first) and each expires after [`Gateway::session_idle`]
//!   without a request. A request without a session id (2026-07-28, stateless) gets a
//!   shaper of its own for that one request: no state outlives it.
//! - Failures: an upstream that cannot be reached, breaks the connection, times out,
//!   answers `5xx` or with a body that is not JSON answers each request of the POST
//!   with a JSON-RPC error naming the cause and the server's address
//!   ([`super::upstream::UpstreamFailure`]): a `200` JSON body, or, once an SSE
//!   stream has begun, one more event per request it left unanswered. A failed POST's
//!   requests are no longer pending in the session's shaper. A `4xx` is the
//!   client's to act on (authentication, an expired session) and passes as it came.
//! - Security: a request whose `Host` or `Origin` the gateway does not serve is
//!   answered `403` before anything else and never reaches the server (DNS
//!   rebinding, [`origin_guard`]: loopback names only when listening on loopback,
//!   else [`Gateway::allowed`]); the client's `Host` goes on as `X-Forwarded-Host`.
//!   No CORS header is added, `Origin` and `Authorization` pass untouched, no header
//!   value is logged.
//! - Connections: at most [`Gateway::max_connections`] open at once; past it the
//!   oldest that has not sent a request head yet is closed for the new one, or, when
//!   all are serving, the new one is refused with `503` ([`super::connections`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use backstop_jsonrpc::stream::Sink;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::body_channel::{self, BodySender, ClientGone};
use super::connections::{Connections, DEFAULT_MAX_CONNECTIONS, REFUSAL};
use super::headers::{SESSION_ID, end_to_end, is_event_stream, to_upstream};
use super::listing::list_first;
use super::origin_guard::{self, Allowed};
use super::resumption::{Resumption, is_close};
use super::shape::{BodyShaper, EventShaper, Out, QueueSink, Queued};
use super::stateless_catalogs::StatelessCatalogs;
use super::upstream::{RequestWait, Upstream, UpstreamFailure, Wait};
use super::{Options, Shaping, is_answer, is_long_lived, lock, request_ids};

/// The body of every response the gateway sends.
type Body = BoxBody<Bytes, BodyError>;

/// Why a response body failed: the upstream's broke, or the gateway aborted one it had
/// begun (B5); either way the client's connection closes without the body's end.
type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// A default for [`Gateway::max_body`]: 4 MiB.
pub const DEFAULT_MAX_BODY: usize = 4 << 20;
/// A default for [`Gateway::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// A default for [`Gateway::session_idle`]: 30 minutes.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// One session's state and when it was last used.
#[derive(Debug)]
struct Entry {
    shaping: Arc<Shaping>,
    used: Instant,
}

/// A gateway in front of one upstream server.
#[derive(Debug)]
pub struct Gateway {
    upstream: Upstream,
    options: Options,
    /// The largest request body taken; larger ones are answered `413`.
    pub max_body: usize,
    /// The most sessions kept at once.
    pub max_sessions: usize,
    /// The most connections open at once ([`connections`](super::connections): past
    /// it, the oldest that has not sent a request yet is closed, or the new one is
    /// refused with `503`).
    pub max_connections: usize,
    /// How long a session's state is kept without a request.
    pub session_idle: Duration,
    /// The `Host` and `Origin` values served beside the defaults
    /// ([`origin_guard`]; none by default).
    pub allowed: Allowed,
    sessions: Mutex<HashMap<String, Entry>>,
    /// The listings stateless requests start from (R5).
    catalogs: StatelessCatalogs,
}

impl Gateway {
    /// A gateway to `upstream` with the default bounds.
    ///
    /// ```
    /// use backstop::http::{Options, gateway::Gateway, upstream::Upstream};
    /// let upstream = Upstream::new("http://127.0.0.1:9/mcp".parse().unwrap(), std::time::Duration::from_secs(5)).unwrap();
    /// let gateway = Gateway::new(upstream, Options { shaper: Default::default(), log_failures: false });
    /// assert_eq!(gateway.sessions(), 0);
    /// ```
    pub fn new(upstream: Upstream, options: Options) -> Self {
        Self {
            upstream,
            options,
            max_body: DEFAULT_MAX_BODY,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            session_idle: DEFAULT_SESSION_IDLE,
            allowed: Allowed::default(),
            sessions: Mutex::new(HashMap::new()),
            catalogs: StatelessCatalogs::default(),
        }
    }

    /// How many sessions' state is kept now.
    pub fn sessions(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// A new session's shaping.
    fn fresh(&self) -> Arc<Shaping> {
        Arc::new(Shaping::new(
            self.options.shaper.clone(),
            self.options.log_failures,
        ))
    }

    /// The state of session `id` and whether it is kept; made anew when it is not (a
    /// session begun elsewhere, expired, or an id nobody issued), to be kept only once
    /// the upstream has served a request of it: an invented id makes no state, and a
    /// flood of them evicts no real session's.
    fn session(&self, id: &str) -> (Arc<Shaping>, bool) {
        let mut sessions = lock(&self.sessions);
        match sessions.get_mut(id) {
            Some(entry) => {
                entry.used = Instant::now();
                (Arc::clone(&entry.shaping), true)
            }
            None => (self.fresh(), false),
        }
    }

    /// Keep `shaping` as session `id`'s, within the bounds.
    fn keep(
        &self,
        sessions: &mut HashMap<String, Entry>,
        id: &str,
        shaping: Arc<Shaping>,
        now: Instant,
    ) {
        if sessions.len() >= self.max_sessions {
            sessions.retain(|_, entry| now.duration_since(entry.used) < self.session_idle);
        }
        while sessions.len() >= self.max_sessions.max(1) {
            let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            sessions.remove(&oldest);
            tracing::debug!(
                max = self.max_sessions,
                "the least recently used session's state dropped to make room"
            );
        }
        if sessions
            .insert(id.to_owned(), Entry { shaping, used: now })
            .is_none()
        {
            tracing::debug!(sessions = sessions.len(), "a session's state kept");
        }
    }

    /// Forget the sessions idle for longer than [`Self::session_idle`].
    fn expire(&self) {
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        let before = sessions.len();
        sessions.retain(|_, entry| now.duration_since(entry.used) < self.session_idle);
        if sessions.len() < before {
            tracing::debug!(
                expired = before - sessions.len(),
                kept = sessions.len(),
                "idle sessions' state dropped"
            );
        }
    }
}

/// Serve `gateway` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, gateway: Arc<Gateway>) -> io::Result<()> {
    // Whether the listening address is a loopback one sets the `Host`/`Origin` rules.
    let listen = listener.local_addr()?.ip();
    let sweeper = Arc::clone(&gateway);
    tokio::spawn(async move {
        let every = (sweeper.session_idle / 4).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            sweeper.expire();
        }
    });
    let connections = Arc::new(Connections::new(gateway.max_connections));
    loop {
        let (mut stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors, a connection reset before it was taken: keep serving.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Some(admission) = connections.admit() else {
            tracing::warn!(
                max = gateway.max_connections,
                "a client connection refused with 503: every connection is serving"
            );
            tokio::spawn(async move {
                let _ = stream.write_all(REFUSAL).await;
                let _ = stream.shutdown().await;
            });
            continue;
        };
        let gateway = Arc::clone(&gateway);
        tokio::spawn(async move {
            let admission = Arc::new(admission);
            let serving = Arc::clone(&admission);
            let service = service_fn(move |request| {
                let serving = serving.serve();
                let gateway = Arc::clone(&gateway);
                async move {
                    let response = handle(&gateway, listen, request).await;
                    Ok::<_, Infallible>(response.map(|body| serving.body(body)))
                }
            });
            // A client that never finishes its headers does not hold a connection
            // forever, nor past a newer connection's need of its place.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(30))
                .serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = admission.evicted() => {}
            }
            // Its place was taken while it was not serving: closed at once — unless a
            // request reached the service since, which is answered first. (The service
            // runs inside `connection`, not polled meanwhile: this read is the last.)
            if admission.is_serving() {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        });
    }
}

/// Bind `listen` and serve `gateway` on a runtime of its own; returns only on error.
pub fn run(listen: SocketAddr, gateway: Gateway, quiet: bool) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(listen).await?;
        if !quiet {
            eprintln!(
                "backstop gateway: listening on http://{}, upstream {}",
                listener.local_addr()?,
                gateway.upstream.address()
            );
        }
        serve(listener, Arc::new(gateway)).await
    })
}

/// A whole body.
fn full(bytes: impl Into<Bytes>) -> Body {
    boxed(Full::new(bytes.into()))
}

/// A body that cannot fail, as the gateway's.
fn boxed(
    body: impl hyper::body::Body<Data = Bytes, Error = Infallible> + Send + Sync + 'static,
) -> Body {
    body.map_err(|never: Infallible| match never {}).boxed()
}

/// A body that may fail (the upstream's, passed on; one the gateway writes, which it
/// may abort), as the gateway's.
fn fallible<E: Into<BodyError> + 'static>(
    body: impl hyper::body::Body<Data = Bytes, Error = E> + Send + Sync + 'static,
) -> Body {
    body.map_err(Into::into).boxed()
}

/// A response with `status` and a plain-text body.
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// JSON-RPC messages as one JSON text: one object, or a batch of several.
fn one_json_text(messages: Vec<Vec<u8>>) -> Vec<u8> {
    if messages.len() == 1 {
        messages.into_iter().next().unwrap_or_default()
    } else {
        let mut body = b"[".to_vec();
        body.extend(messages.join(&b","[..]));
        body.push(b']');
        body
    }
}

/// A `200` JSON body of JSON-RPC messages ([`one_json_text`]).
fn json_messages(messages: Vec<Vec<u8>>) -> Response<Body> {
    let mut response = Response::new(full(one_json_text(messages)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The answer for a POST the upstream failed: its requests' errors, or `502` when it
/// had none to answer. The requests are no longer pending in the session's shaper.
fn failed(
    gateway: &Gateway,
    shaping: &Shaping,
    ids: &[String],
    failure: &UpstreamFailure,
) -> Response<Body> {
    if ids.is_empty() {
        return plain(StatusCode::BAD_GATEWAY, "the MCP server did not answer\n");
    }
    let error = failure.to_error(gateway.upstream.address());
    json_messages(shaping.fail_requests(ids, &error))
}

/// Show a client's POST body to the session's shaper before it is sent on; when the
/// shaper asks to list the tools first (E8), do so ([`list_first`]) with the
/// client's own end-to-end headers (its session, revision and credentials). What the
/// listing leaves for the client is dropped: a response here answers the client's
/// request, and those messages concern none of the client's requests.
///
/// A request without a session (2026-07-28, stateless) has a shaper of its own for
/// that one request, which starts from the listing kept for its credential (R5,
/// [`super::stateless_catalogs`]), and lists as the server took the request — without
/// a handshake (a 2025 client of a stateless server sends its `initialize` and its
/// call in separate requests); a listing it makes is kept for the next. The listing
/// takes its time from the request's `wait` (B5).
async fn see_client_body(
    gateway: &Gateway,
    shaping: &Shaping,
    headers: &http::HeaderMap,
    in_session: bool,
    body: &[u8],
    wait: &mut RequestWait,
) {
    let credential = headers.get(header::AUTHORIZATION);
    if !in_session {
        shaping.set_outside_session();
    }
    if !in_session && let Some(catalog) = gateway.catalogs.for_request(credential, Instant::now()) {
        shaping.set_catalog(catalog);
    }
    let listing = shaping.client_route(body);
    if !listing.is_empty() {
        let headers = to_upstream(headers);
        let _ = list_first(&gateway.upstream, shaping, listing, &headers, wait).await;
        if !in_session && let Some(catalog) = shaping.complete_catalog() {
            gateway.catalogs.keep(credential, catalog);
        }
    }
}

/// The `403` of a request whose `refused` header the gateway does not serve
/// ([`origin_guard`]): a JSON-RPC error, and the request goes no further.
fn forbidden(refused: origin_guard::Refused, headers: &http::HeaderMap) -> Response<Body> {
    // The header's name only: its value is the client's (an attacker's) text.
    tracing::warn!("a request refused with 403: its {refused} header is not served");
    let value = headers
        .get(match refused {
            origin_guard::Refused::Host => header::HOST,
            origin_guard::Refused::Origin => header::ORIGIN,
        })
        .map(HeaderValue::as_bytes);
    let mut response = Response::new(full(origin_guard::refusal_body(refused, value)));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One request from a client, to a gateway listening on `listen`.
async fn handle(gateway: &Gateway, listen: IpAddr, request: Request<Incoming>) -> Response<Body> {
    let mut wait = gateway.upstream.request_wait();
    let (parts, body) = request.into_parts();
    if let Err(refused) = origin_guard::check_headers(listen, &gateway.allowed, &parts.headers) {
        return forbidden(refused, &parts.headers);
    }
    let too_long = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|length| length > gateway.max_body as u64);
    if too_long {
        return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n");
    }
    let body = match Limited::new(body, gateway.max_body).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n");
        }
        Err(_) => return plain(StatusCode::BAD_REQUEST, "the request body broke off\n"),
    };
    let session_id = parts
        .headers
        .get(SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let (shaping, kept) = match &session_id {
        Some(id) => gateway.session(id),
        None => (gateway.fresh(), false),
    };
    if parts.method == Method::POST {
        see_client_body(
            gateway,
            &shaping,
            &parts.headers,
            session_id.is_some(),
            &body,
            &mut wait,
        )
        .await;
    }

    let sent = Sent {
        post: parts.method == Method::POST,
        body: body.clone(),
    };
    let mut upstream_request = Request::new(Full::new(body));
    *upstream_request.method_mut() = parts.method.clone();
    *upstream_request.uri_mut() = gateway.upstream.url().clone();
    *upstream_request.headers_mut() = to_upstream(&parts.headers);
    let response = match gateway.upstream.send_within(upstream_request, &wait).await {
        Ok(response) => response,
        Err(failure) => return failed(gateway, &shaping, &sent.ids(), &failure),
    };
    let (mut head, mut body) = response.into_parts();
    let status = head.status;
    head.headers = end_to_end(&head.headers);

    if parts.method == Method::DELETE
        && status.is_success()
        && let Some(id) = &session_id
    {
        lock(&gateway.sessions).remove(id);
    }
    if status.is_server_error() {
        let ids = sent.ids();
        if !ids.is_empty() {
            return failed(gateway, &shaping, &ids, &UpstreamFailure::Status(status));
        }
    }
    if !status.is_success() || !matches!(parts.method, Method::POST | Method::GET) {
        return Response::from_parts(head, fallible(body));
    }
    // The upstream issued this id, or served a request of one it knows.
    let served = match &session_id {
        None => head.headers.get(SESSION_ID).and_then(|v| v.to_str().ok()),
        Some(id) => (!kept).then_some(id.as_str()),
    };
    if let Some(id) = served {
        let mut sessions = lock(&gateway.sessions);
        gateway.keep(&mut sessions, id, Arc::clone(&shaping), Instant::now());
    }
    if is_event_stream(&head.headers) {
        let patient = parts.method == Method::GET || is_long_lived(&sent.body);
        let ids = sent.ids();
        let (sender, channel) = body_channel::channel();
        let upstream = gateway.upstream.clone();
        tokio::spawn(async move {
            // Returns when the client is gone too: the upstream stream is dropped,
            // closed, with it.
            let _ = stream_events(&upstream, &shaping, &mut body, ids, patient, sender).await;
        });
        return Response::from_parts(head, fallible(channel));
    }
    if parts.method == Method::GET || status == StatusCode::ACCEPTED {
        return Response::from_parts(head, fallible(body));
    }
    json_body(gateway, &shaping, head, body, &sent).await
}

/// What the client sent: a POST's requests' ids are read only when the answer needs
/// them (an error for each, an SSE stream, a long body), not for every short answer.
struct Sent {
    post: bool,
    body: Bytes,
}

impl Sent {
    /// The raw JSON ids of the requests sent (none but in a POST).
    fn ids(&self) -> Vec<String> {
        if self.post {
            request_ids(&self.body)
        } else {
            Vec::new()
        }
    }
}

/// The answer for a JSON body: shaped whole when it is short (and then, when it is
/// not JSON or breaks off, the requests' errors instead); streamed as it is shaped
/// when it is long (B3), once its status and headers have gone.
async fn json_body(
    gateway: &Gateway,
    shaping: &Arc<Shaping>,
    head: http::response::Parts,
    mut body: Incoming,
    sent: &Sent,
) -> Response<Body> {
    let mut shaped = BodyShaper::new(Out::Http);
    let mut sink = QueueSink::default();
    let wait = gateway.upstream.wait(false);
    loop {
        match gateway.upstream.next_data(&mut body, wait).await {
            Err(failure) => return failed(gateway, shaping, &sent.ids(), &failure),
            Ok(Some(data)) => {
                shaping.shape(|shaper| shaped.push(shaper, &data, &mut sink));
                if shaped.whole().is_none() {
                    break;
                }
            }
            Ok(None) => {
                let empty = shaped.whole().is_none_or(<[u8]>::is_empty);
                if empty && sent.ids().is_empty() {
                    return Response::from_parts(head, full(Bytes::new()));
                }
                let ended = shaping.shape(|shaper| shaped.end(shaper, &mut sink));
                // A body that answers a request is an answer (B4, read as the shaper
                // decided); any other must be JSON. What was queued for one that is
                // neither is dropped.
                let answer =
                    !ended.answered.is_empty() || ended.whole.as_deref().is_some_and(is_answer);
                if !answer {
                    return failed(gateway, shaping, &sent.ids(), &UpstreamFailure::NotJson);
                }
                return Response::from_parts(head, full(sink.take_bytes()));
            }
        }
    }
    let (sender, channel) = body_channel::channel();
    let upstream = gateway.upstream.clone();
    let shaping = Arc::clone(shaping);
    let ids = sent.ids();
    tokio::spawn(async move {
        let _ = stream_body(&upstream, &shaping, body, wait, (shaped, sink), ids, sender).await;
    });
    Response::from_parts(head, fallible(channel))
}

/// The rest of a long JSON body, shaped into `sender` as it arrives. When the server
/// breaks off before anything was sent, the requests' errors are the body instead;
/// after a part of it was sent (passing as it came), the body is aborted: no error can
/// follow it in one JSON body, and it must not end as a whole one would (B5).
async fn stream_body(
    upstream: &Upstream,
    shaping: &Shaping,
    mut body: Incoming,
    wait: Wait,
    (mut shaped, mut sink): (BodyShaper, QueueSink),
    ids: Vec<String>,
    mut sender: BodySender,
) -> Result<(), ClientGone> {
    loop {
        send_queued(&mut sink, &mut sender).await?;
        match upstream.next_data(&mut body, wait).await {
            Ok(Some(data)) => shaping.shape(|shaper| shaped.push(shaper, &data, &mut sink)),
            Ok(None) => break,
            Err(failure) => {
                // The requests are answered here or not at all: none stays pending.
                let error = failure.to_error(upstream.address());
                let answers = shaping.fail_requests(&ids, &error);
                if sink.sent_some() {
                    return sender.abort().await;
                }
                if !ids.is_empty() {
                    sender
                        .send_data(Bytes::from(one_json_text(answers)))
                        .await?;
                }
                return Ok(());
            }
        }
    }
    shaping.shape(|shaper| shaped.end(shaper, &mut sink));
    send_queued(&mut sink, &mut sender).await
}

/// Send what `sink` queued, held bytes read back a piece at a time.
async fn send_queued(sink: &mut QueueSink, sender: &mut BodySender) -> Result<(), ClientGone> {
    let queued: Vec<Queued> = sink.drain().collect();
    for queued in queued {
        match queued {
            Queued::Bytes(bytes) => sender.send_data(Bytes::from(bytes)).await?,
            Queued::Held(held) => {
                for piece in held.pieces() {
                    sender.send_data(Bytes::from(piece)).await?;
                }
            }
        }
    }
    Ok(())
}

/// Shape an SSE stream as it arrives into `sender`; when it breaks off, times out or
/// ends, each request of `ids` it did not answer gets an error event — unless the
/// server closed a stream the client may resume (an event of it had an id,
/// SEP-1699): that close is passed on as it came, and the answers come on the
/// client's GET with `Last-Event-ID`, shaped there ([`super::resumption`], B5).
async fn stream_events(
    upstream: &Upstream,
    shaping: &Shaping,
    body: &mut Incoming,
    mut ids: Vec<String>,
    patient: bool,
    mut sender: BodySender,
) -> Result<(), ClientGone> {
    let mut events = EventShaper::new(Out::Http);
    let mut sink = QueueSink::default();
    let wait = upstream.wait(patient);
    let mut stream = Resumption::default();
    let ended = loop {
        let next = tokio::select! {
            next = upstream.next_data(body, wait) => next,
            () = sender.closed() => return Err(ClientGone),
        };
        let data = match next {
            Ok(Some(data)) => data,
            Ok(None) => break None,
            Err(failure) => break Some(failure),
        };
        for event in shaping.shape(|shaper| events.push(shaper, &data, &mut sink)) {
            stream.saw(event.id.as_deref(), event.retry.as_deref());
            let answered = event
                .message
                .map(|message| message.answered)
                .unwrap_or_default();
            ids.retain(|id| !answered.contains(id));
        }
        send_queued(&mut sink, &mut sender).await?;
    };
    // An event cut off by the end of the stream is sent on as it came, unless error
    // events follow: a client would join them to it (and drops it at the end anyway).
    // One already on its way is ended first.
    let passed_on = stream.is_resumable() && is_close(ended.as_ref());
    let keep_cut_off = ids.is_empty() || passed_on;
    if shaping.shape(|shaper| events.finish(shaper, keep_cut_off, &mut sink)) {
        sink.send(b"\n\n");
    }
    send_queued(&mut sink, &mut sender).await?;
    if passed_on && !ids.is_empty() {
        tracing::debug!(
            requests = ids.len(),
            "the server closed a resumable stream before answering: passed on for the \
             client to resume (SEP-1699)"
        );
    }
    if !ids.is_empty() && !passed_on {
        let failure = ended.unwrap_or(UpstreamFailure::Broken);
        let error = failure.to_error(upstream.address());
        for answer in shaping.fail_requests(&ids, &error) {
            let mut event = b"event: message\ndata: ".to_vec();
            event.extend_from_slice(&answer);
            event.extend_from_slice(b"\n\n");
            sender.send_data(Bytes::from(event)).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway() -> Gateway {
        gateway_to("http://127.0.0.1:9/mcp")
    }

    fn gateway_to(url: &str) -> Gateway {
        let upstream = Upstream::new(url.parse().unwrap(), Duration::from_secs(1)).unwrap();
        let options = Options {
            shaper: backstop_jsonrpc::Shaper::default(),
            log_failures: false,
        };
        Gateway::new(upstream, options)
    }

    /// Keep fresh state for session `id`, as for one the upstream issued.
    fn issued(gateway: &Gateway, id: &str) -> Arc<Shaping> {
        let shaping = gateway.fresh();
        gateway.keep(
            &mut lock(&gateway.sessions),
            id,
            Arc::clone(&shaping),
            Instant::now(),
        );
        shaping
    }

    #[test]
    fn a5_sessions_are_bounded_the_least_recently_used_going_first() {
        let mut gateway = gateway();
        gateway.max_sessions = 2;
        let a = issued(&gateway, "a");
        let _b = issued(&gateway, "b");
        // "a" used again: "b" is now the least recently used.
        let (again, kept) = gateway.session("a");
        assert!(kept && Arc::ptr_eq(&a, &again));
        let _c = issued(&gateway, "c");
        assert_eq!(gateway.sessions(), 2);
        {
            let sessions = lock(&gateway.sessions);
            assert!(sessions.contains_key("a") && sessions.contains_key("c"));
        }
        // An id nobody issued gets state of its own, not kept (issue 20).
        let (_, kept) = gateway.session("invented");
        assert!(!kept);
        assert_eq!(gateway.sessions(), 2);
    }

    #[test]
    fn b1_a_post_the_upstream_refused_leaves_nothing_pending_in_its_session() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // The upstream: a port nobody listens on; session "s1" one it issued earlier.
        let gateway = Arc::new(gateway_to(&format!("http://127.0.0.1:{}/mcp", free_port())));
        let s1 = gateway.fresh();
        gateway.keep(
            &mut lock(&gateway.sessions),
            "s1",
            Arc::clone(&s1),
            Instant::now(),
        );
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            tokio::spawn(serve(listener, Arc::clone(&gateway)));
            let client = Upstream::new(url.parse().unwrap(), Duration::from_secs(5)).unwrap();
            let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t"}}"#;
            let mut request = Request::new(Full::new(Bytes::from_static(call.as_bytes())));
            *request.method_mut() = Method::POST;
            *request.uri_mut() = client.url().clone();
            request
                .headers_mut()
                .insert(SESSION_ID, HeaderValue::from_static("s1"));
            request.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            let (head, mut body) = client.send(request).await.unwrap().into_parts();
            assert_eq!(head.status, StatusCode::OK);
            let answer: serde_json::Value =
                serde_json::from_slice(&client.whole(&mut body).await.unwrap()).unwrap();
            assert_eq!(answer["id"], "c");
            assert!(
                answer.to_string().contains("could not be reached"),
                "{answer}"
            );
        });
        let (session, kept) = gateway.session("s1");
        assert!(kept && Arc::ptr_eq(&session, &s1));
        assert_eq!(s1.pending(), 0, "A5/B1: the failed request is not pending");
    }

    /// A port nobody listens on.
    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port()
    }

    #[test]
    fn a5_idle_sessions_expire() {
        let mut gateway = gateway();
        gateway.session_idle = Duration::from_millis(300);
        let _a = issued(&gateway, "a");
        gateway.expire();
        assert_eq!(gateway.sessions(), 1, "not idle long enough yet");
        std::thread::sleep(Duration::from_millis(350));
        let _b = issued(&gateway, "b");
        gateway.expire();
        let sessions = lock(&gateway.sessions);
        assert_eq!(sessions.keys().collect::<Vec<_>>(), ["b"]);
    }
}
