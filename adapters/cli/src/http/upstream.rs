//! The HTTP client both remote modes reach the MCP server with, and what its failures
//! say to the client (SPEC A5).
//!
//! One [`Upstream`] per process: a hyper client pool (HTTP/1.1, with TLS by rustls and
//! the webpki roots for `https://` URLs; at most [`MAX_IDLE_CONNECTIONS`] idle, each
//! closed after [`DEFAULT_IDLE_TIMEOUT`] unused), the server's URL, and a timeout for
//! the server's answer. Every failure becomes an [`UpstreamFailure`], which names the cause
//! and the server's [address](display_address) — never a credential: the URL's user
//! info and query are left out, and no header value is ever part of it.

use std::fmt;
use std::time::{Duration, Instant};

use backstop_core::ProtocolError;
use backstop_core::protocol::code;
use backstop_jsonrpc::owed::{Cause, End};
use bytes::Bytes;
use http::{Request, Response, StatusCode, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde_json::json;

/// How long the server may take to answer (its headers, a JSON body, or the next bytes
/// of the SSE stream of a POST) unless told otherwise.
///
/// ```
/// assert_eq!(backstop::http::upstream::DEFAULT_TIMEOUT.as_secs(), 300);
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How many idle connections to the server are kept for reuse, at most: a burst of
/// clients leaves no more open behind it. Connections in use are bounded by the
/// clients' own (the gateway's `--max-connections`).
///
/// ```
/// assert_eq!(backstop::http::upstream::MAX_IDLE_CONNECTIONS, 32);
/// ```
pub const MAX_IDLE_CONNECTIONS: usize = 32;

/// How long an idle connection to the server is kept for reuse unless told otherwise
/// (`--upstream-idle`).
///
/// ```
/// assert_eq!(backstop::http::upstream::DEFAULT_IDLE_TIMEOUT.as_secs(), 30);
/// ```
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's URL as it may be shown: scheme, host, port and path; no user info, no
/// query (either may hold a key).
///
/// ```
/// let uri: http::Uri = "https://user:pw@example.com:8443/mcp?key=s3cr3t".parse().unwrap();
/// assert_eq!(backstop::http::upstream::display_address(&uri), "https://example.com:8443/mcp");
/// ```
pub fn display_address(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("http");
    let host = uri.host().unwrap_or("");
    let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    format!("{scheme}://{host}{port}{}", uri.path())
}

/// `uri` without its user info (`user:password@`), which HTTP never sends (a request
/// names its path, and `Host` the host and port) and which would otherwise ride along
/// in the client pool's own diagnostics.
///
/// ```
/// let uri: http::Uri = "https://user:pw@example.com:8443/mcp?key=k".parse().unwrap();
/// assert_eq!(backstop::http::upstream::without_user_info(uri), "https://example.com:8443/mcp?key=k");
/// ```
pub fn without_user_info(uri: Uri) -> Uri {
    let Some(authority) = uri.authority() else {
        return uri;
    };
    let Some((_, host)) = authority.as_str().rsplit_once('@') else {
        return uri;
    };
    let mut parts = uri.clone().into_parts();
    match host.parse() {
        Ok(host) => {
            parts.authority = Some(host);
            Uri::from_parts(parts).unwrap_or(uri)
        }
        Err(_) => uri,
    }
}

/// Why the server gave no usable answer.
///
/// ```
/// use backstop::http::upstream::UpstreamFailure;
/// let failure = UpstreamFailure::Status(http::StatusCode::BAD_GATEWAY);
/// let error = failure.to_error("http://127.0.0.1:9000/mcp");
/// assert_eq!(error.message, "The MCP server at http://127.0.0.1:9000/mcp answered HTTP 502 Bad Gateway");
/// assert_eq!(error.data.unwrap()["status"], 502);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamFailure {
    /// No connection could be made (refused, no route, DNS, TLS).
    Connect(String),
    /// No answer within the timeout.
    Timeout(Duration),
    /// No answer within the timeout, whose first part backstop's own `tools/list` took
    /// (`listing`, of `after` in all: SPEC B5, E8).
    TimeoutAfterListing {
        /// The timeout: the request's whole wait.
        after: Duration,
        /// What the listing took of it.
        listing: Duration,
    },
    /// An answer still coming when the answer timeout was up (`--answer-timeout`).
    AnswerTimeout(Duration),
    /// An HTTP status that is not a success.
    Status(StatusCode),
    /// The connection broke before the answer was whole.
    Broken,
    /// A body that is not a JSON-RPC message.
    NotJson,
}

impl UpstreamFailure {
    /// The JSON-RPC error that answers each request the failure left unanswered:
    /// `-32603`, a message naming the cause and `address`, and `data.upstream` (with
    /// `data.status` for an HTTP status).
    pub fn to_error(&self, address: &str) -> ProtocolError {
        let mut data = json!({"upstream": address});
        let how = match self {
            Self::Connect(cause) => format!("could not be reached: {cause}"),
            Self::Timeout(after) => format!("did not answer within {} s", after.as_secs_f64()),
            Self::TimeoutAfterListing { after, listing } => format!(
                "did not answer within {} s, backstop's own tools/list before this request \
                 included (it took {:.1} s)",
                after.as_secs_f64(),
                listing.as_secs_f64()
            ),
            Self::AnswerTimeout(after) => {
                format!("did not finish its answer within {} s", after.as_secs_f64())
            }
            Self::Status(status) => {
                data["status"] = json!(status.as_u16());
                format!("answered HTTP {status}")
            }
            Self::Broken => "closed the connection before answering this request".to_owned(),
            Self::NotJson => "answered with a body that is not JSON-RPC".to_owned(),
        };
        ProtocolError::new(
            code::INTERNAL_ERROR,
            format!("The MCP server at {address} {how}"),
        )
        .with_data(data)
    }
}

impl UpstreamFailure {
    /// How an answer that stopped with `stopped` (`None`: at its end) ended, for the
    /// owed-ids rule ([`Owed::end`](backstop_jsonrpc::owed::Owed::end)): [`Broken`](Self::Broken) is the server's close
    /// (broken off), any other failure backstop's own.
    ///
    /// ```
    /// use backstop::http::upstream::UpstreamFailure;
    /// use backstop_jsonrpc::owed::End;
    /// assert_eq!(UpstreamFailure::end(None), End::Ended);
    /// assert_eq!(UpstreamFailure::end(Some(UpstreamFailure::Broken)), End::BrokenOff);
    /// assert_eq!(UpstreamFailure::end(Some(UpstreamFailure::NotJson)), End::Failed(UpstreamFailure::NotJson));
    /// ```
    pub fn end(stopped: Option<Self>) -> End<Self> {
        match stopped {
            None => End::Ended,
            Some(Self::Broken) => End::BrokenOff,
            Some(failure) => End::Failed(failure),
        }
    }

    /// The failure that answers a request still owed for `cause`: a server that closed
    /// the answer before answering it is [`Broken`](Self::Broken).
    ///
    /// ```
    /// use backstop::http::upstream::UpstreamFailure;
    /// use backstop_jsonrpc::owed::Cause;
    /// assert_eq!(UpstreamFailure::of(Cause::ClosedEarly), UpstreamFailure::Broken);
    /// assert_eq!(UpstreamFailure::of(Cause::Failure(UpstreamFailure::NotJson)), UpstreamFailure::NotJson);
    /// ```
    pub fn of(cause: Cause<Self>) -> Self {
        match cause {
            Cause::Failure(failure) => failure,
            Cause::ClosedEarly => Self::Broken,
        }
    }
}

impl fmt::Display for UpstreamFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_error("the upstream").message)
    }
}

/// The cause of a failed connection, in words that hold no URL or header.
fn connect_cause(error: &hyper_util::client::legacy::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    while let Some(inner) = source {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
                std::io::ErrorKind::ConnectionReset => "connection reset".to_owned(),
                kind => kind.to_string(),
            };
        }
        source = inner.source();
    }
    if error.is_connect() {
        "connection failed".to_owned()
    } else {
        "the connection broke".to_owned()
    }
}

/// The MCP server behind backstop, and the client that reaches it.
#[derive(Clone)]
pub struct Upstream {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: Uri,
    address: String,
    timeout: Duration,
    answer_timeout: Option<Duration>,
}

/// How long a client's request may wait for the server to answer, counted from its
/// arrival (SPEC B5): the timeout in all, backstop's own `tools/list` before it
/// included — the listing within the first half, the request within what is left.
///
/// ```
/// use std::time::Duration;
/// let upstream = backstop::http::upstream::Upstream::new(
///     "http://127.0.0.1:9/mcp".parse().unwrap(), Duration::from_secs(4)).unwrap();
/// let wait = upstream.request_wait();
/// assert_eq!(wait.listing_deadline() + Duration::from_secs(2), wait.deadline());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RequestWait {
    arrived: Instant,
    timeout: Duration,
    listing: Option<Duration>,
}

impl RequestWait {
    /// When backstop's own listing must be done: half the timeout in, so that the
    /// request keeps the rest (a listing that fails never fails the request, E8).
    pub fn listing_deadline(&self) -> Instant {
        self.arrived + self.timeout / 2
    }

    /// When the request's answer must have begun.
    pub fn deadline(&self) -> Instant {
        self.arrived + self.timeout
    }

    /// Backstop's own listing is over (done or given up): its time is counted.
    pub fn listed(&mut self) {
        self.listing = Some(self.arrived.elapsed());
    }

    /// The failure of a request whose deadline passed.
    fn timed_out(&self) -> UpstreamFailure {
        match self.listing {
            Some(listing) => UpstreamFailure::TimeoutAfterListing {
                after: self.timeout,
                listing,
            },
            None => UpstreamFailure::Timeout(self.timeout),
        }
    }
}

/// How long an answer's next bytes may be awaited ([`Upstream::wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// As long as the server is quiet: a long-lived stream (the server's `GET`
    /// stream, `subscriptions/listen`, `tasks/result`).
    Patient,
    /// The timeout between bytes, and — with an answer timeout — the whole answer
    /// done by `deadline`.
    Timed {
        /// When the whole answer must be done.
        deadline: Option<Instant>,
    },
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// A client for `url` (`http://` or `https://`), answers awaited for `timeout`.
    ///
    /// ```
    /// let upstream = backstop::http::upstream::Upstream::new(
    ///     "http://127.0.0.1:9/mcp".parse().unwrap(), std::time::Duration::from_secs(5)).unwrap();
    /// assert_eq!(upstream.address(), "http://127.0.0.1:9/mcp");
    /// ```
    pub fn new(url: Uri, timeout: Duration) -> Result<Self, String> {
        Self::with_idle_timeout(url, timeout, DEFAULT_IDLE_TIMEOUT)
    }

    /// The same, an idle connection to the server kept for reuse `idle_timeout` at
    /// most (and at most [`MAX_IDLE_CONNECTIONS`] of them).
    ///
    /// ```
    /// use std::time::Duration;
    /// let upstream = backstop::http::upstream::Upstream::with_idle_timeout(
    ///     "http://127.0.0.1:9/mcp".parse().unwrap(), Duration::from_secs(5), Duration::from_secs(1)).unwrap();
    /// assert_eq!(upstream.timeout(), Duration::from_secs(5));
    /// ```
    pub fn with_idle_timeout(
        url: Uri,
        timeout: Duration,
        idle_timeout: Duration,
    ) -> Result<Self, String> {
        match url.scheme_str() {
            Some("http" | "https") if url.host().is_some() => {}
            _ => return Err("the URL must be http:// or https:// with a host".to_owned()),
        }
        let provider = rustls::crypto::ring::default_provider();
        let tls = rustls::ClientConfig::builder_with_provider(provider.into())
            .with_safe_default_protocol_versions()
            .map_err(|error| error.to_string())?
            .with_root_certificates(rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            })
            .with_no_client_auth();
        // Small messages go out at once (no Nagle delay on a kept-alive connection).
        let mut tcp = HttpConnector::new();
        tcp.set_nodelay(true);
        tcp.enforce_http(false);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(MAX_IDLE_CONNECTIONS)
            .pool_idle_timeout(idle_timeout)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Self {
            client,
            address: display_address(&url),
            url: without_user_info(url),
            timeout,
            answer_timeout: None,
        })
    }

    /// The server's address as it may be shown ([`display_address`]).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The server's URL, without user info ([`without_user_info`]).
    pub fn url(&self) -> &Uri {
        &self.url
    }

    /// The timeout for answers.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Send `request`; its response head, within the timeout. The response's status is
    /// not judged here.
    pub async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, UpstreamFailure> {
        match tokio::time::timeout(self.timeout, self.client.request(request)).await {
            Err(_) => Err(UpstreamFailure::Timeout(self.timeout)),
            Ok(Err(error)) => Err(UpstreamFailure::Connect(connect_cause(&error))),
            Ok(Ok(response)) => Ok(response),
        }
    }

    /// The wait of a client's request that arrives now ([`RequestWait`]).
    pub fn request_wait(&self) -> RequestWait {
        RequestWait {
            arrived: Instant::now(),
            timeout: self.timeout,
            listing: None,
        }
    }

    /// Send a client's `request`; its response head, within what `wait` has left.
    pub async fn send_within(
        &self,
        request: Request<Full<Bytes>>,
        wait: &RequestWait,
    ) -> Result<Response<Incoming>, UpstreamFailure> {
        let deadline = wait.deadline().into();
        match tokio::time::timeout_at(deadline, self.client.request(request)).await {
            Err(_) => Err(wait.timed_out()),
            Ok(Err(error)) => Err(UpstreamFailure::Connect(connect_cause(&error))),
            Ok(Ok(response)) => Ok(response),
        }
    }

    /// This upstream, a whole answer given at most `answer_timeout` (`None`: no bound
    /// but the timeout between its bytes). A server that trickles an answer a byte at
    /// a time never passes the timeout between bytes; this bounds it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use backstop::http::upstream::{Upstream, Wait};
    /// let upstream = Upstream::new("http://127.0.0.1:9/mcp".parse().unwrap(), Duration::from_secs(5)).unwrap();
    /// assert_eq!(upstream.wait(false), Wait::Timed { deadline: None });
    /// let bounded = upstream.with_answer_timeout(Some(Duration::from_secs(60)));
    /// assert!(matches!(bounded.wait(false), Wait::Timed { deadline: Some(_) }));
    /// assert_eq!(bounded.wait(true), Wait::Patient, "a long-lived stream has no end to wait for");
    /// ```
    pub fn with_answer_timeout(mut self, answer_timeout: Option<Duration>) -> Self {
        self.answer_timeout = answer_timeout;
        self
    }

    /// How an answer that begins now is awaited: `patient` for a long-lived stream.
    pub fn wait(&self, patient: bool) -> Wait {
        match patient {
            true => Wait::Patient,
            false => Wait::Timed {
                deadline: self.answer_timeout.map(|bound| Instant::now() + bound),
            },
        }
    }

    /// The next data of `body`, awaited as `wait` says (`None` at its end).
    pub async fn next_data(
        &self,
        body: &mut Incoming,
        wait: Wait,
    ) -> Result<Option<Bytes>, UpstreamFailure> {
        use http_body_util::BodyExt;
        loop {
            let frame = match wait {
                Wait::Patient => body.frame().await,
                Wait::Timed { deadline } => {
                    let gap = Instant::now() + self.timeout;
                    let (until, failure) = match deadline.filter(|end| *end < gap) {
                        Some(end) => (
                            end,
                            UpstreamFailure::AnswerTimeout(self.answer_timeout.unwrap_or_default()),
                        ),
                        None => (gap, UpstreamFailure::Timeout(self.timeout)),
                    };
                    tokio::time::timeout_at(until.into(), body.frame())
                        .await
                        .map_err(|_| failure)?
                }
            };
            match frame {
                None => return Ok(None),
                Some(Err(_)) => return Err(UpstreamFailure::Broken),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    /// The whole of `body` (a JSON answer), within the timeout.
    pub async fn whole(&self, body: &mut Incoming) -> Result<Vec<u8>, UpstreamFailure> {
        let mut out = Vec::new();
        let wait = self.wait(false);
        while let Some(data) = self.next_data(body, wait).await? {
            out.extend_from_slice(&data);
        }
        Ok(out)
    }
}
