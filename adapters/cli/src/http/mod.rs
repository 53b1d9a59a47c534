//! Remote MCP servers over Streamable HTTP (SPEC A5): `backstop proxy --url` (a stdio
//! front, [`client`]) and `backstop gateway` (an HTTP front, [`gateway`]).
//!
//! Both run on a tokio runtime of their own; the stdio proxy ([`crate::proxy`]) stays
//! on plain threads. Each JSON-RPC message — a whole JSON body, or the data of one SSE
//! event ([`sse`]) — goes through a [`Shaping`], whose methods are the only places the
//! [`Shaper`] is called from: one per direction, the answers to a failed POST
//! ([`Shaping::fail_requests`], by the owed-ids rule: [`Shaping::settle`]), and the
//! shaper's own listing ([`listing`]).
//!
//! - [`shape`]: bodies and events shaped as they arrive, in bounded memory (B3).
//! - [`upstream`]: the HTTP client, and the errors that answer requests a failing
//!   server left unanswered.
//! - [`resumption`]: a server's stream that closes, resumed from its last event id
//!   or passed on for the client to resume (SEP-1699), never answered twice.
//! - [`headers`]: which headers pass (A5: everything end-to-end, untouched; hop-by-hop
//!   ones dropped).
//! - [`origin_guard`]: which `Host` and `Origin` values the gateway serves (its
//!   defence against DNS rebinding).
//! - [`listing`]: the shaper's own `tools/list` before a session's first `tools/call`
//!   (E8), for both modes.
//! - [`stateless_catalogs`]: the listings the gateway keeps for stateless requests,
//!   per credential (R5).
//! - [`message_headers`]: the 2026-07-28 headers that mirror a message's body
//!   (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) on the POSTs backstop makes.

pub mod body_channel;
pub mod client;
pub mod connections;
pub mod gateway;
mod gateway_body;
mod gateway_request;
mod gateway_sessions;
pub mod headers;
pub mod listing;
pub mod message_headers;
pub mod origin_guard;
pub mod resumption;
pub mod shape;
pub mod sse;
pub mod stateless_catalogs;
pub mod upstream;

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use backstop_core::ProtocolError;
use backstop_jsonrpc::Shaper;
pub use backstop_jsonrpc::message::{request_ids, response_ids};
use backstop_jsonrpc::owed::Verdict;

use crate::log::log_failure;
use upstream::UpstreamFailure;

/// The shaping options both remote modes share with the stdio proxy.
#[derive(Debug, Clone)]
pub struct Options {
    /// The shaper to start each session with (its limit; a fresh clone per session,
    /// which shares the clones' table of tasks: a task a stateless request created is
    /// known to the request that reads its state, L1, E11).
    pub shaper: Shaper,
    /// Log converted failures to stderr (G1, G2).
    pub log_failures: bool,
}

/// One session's shaper, and the calls into it: [`client_body`](Self::client_body)
/// for what the client sends, [`shape`](Self::shape) for what the server sends.
///
/// ```
/// use backstop::http::Shaping;
/// use backstop_jsonrpc::{Forward, Shaper};
/// let shaping = Shaping::new(Shaper::default(), false);
/// shaping.client_body(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#);
/// let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#;
/// let now = std::time::Instant::now();
/// let Forward::Rewritten(bytes) = shaping.shape(|shaper| shaper.server_message(now, error))
/// else { panic!() };
/// assert!(String::from_utf8(bytes).unwrap().contains(r#""isError":true"#));
/// ```
#[derive(Debug)]
pub struct Shaping {
    shaper: Mutex<Shaper>,
    log_failures: bool,
}

impl Shaping {
    /// A session shaped by `shaper`.
    pub fn new(shaper: Shaper, log_failures: bool) -> Self {
        Self {
            shaper: Mutex::new(shaper),
            log_failures,
        }
    }

    /// A message (or batch) from the client, seen before it is sent on unchanged.
    pub fn client_body(&self, body: &[u8]) {
        let _ = lock(&self.shaper).client_message(Instant::now(), body);
    }

    /// Run `shape` with the session's shaper — a [`shape::BodyShaper`] or
    /// [`shape::EventShaper`] pushed the server's next bytes — and log the failures it
    /// converted (G1, G2).
    pub fn shape<R>(&self, shape: impl FnOnce(&mut Shaper) -> R) -> R {
        let (out, records) = {
            let mut shaper = lock(&self.shaper);
            (shape(&mut shaper), shaper.take_log_records())
        };
        if self.log_failures {
            records.iter().for_each(log_failure);
        }
        out
    }
}

impl Shaping {
    /// Answer the requests `ids` (raw JSON) of a POST that failed with `error`: one
    /// error response each, for the client; none of them is pending any more (B1, B2).
    ///
    /// ```
    /// use backstop::http::Shaping;
    /// use backstop_jsonrpc::Shaper;
    /// let shaping = Shaping::new(Shaper::default(), false);
    /// shaping.client_body(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#);
    /// let error = backstop_core::ProtocolError::new(-32603, "The MCP server at http://h/mcp answered HTTP 500");
    /// let answers = shaping.fail_requests(&["1".to_owned()], &error);
    /// assert_eq!(answers[0], br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"The MCP server at http://h/mcp answered HTTP 500"}}"#);
    /// assert_eq!(shaping.pending(), 0);
    /// ```
    pub fn fail_requests(&self, ids: &[String], error: &ProtocolError) -> Vec<Vec<u8>> {
        if !ids.is_empty() {
            // The message names the cause and the server's shown address: no header,
            // credential or query.
            tracing::warn!(
                requests = ids.len(),
                "answered with an error: {}",
                error.message
            );
        }
        lock(&self.shaper).answer_requests(ids, error)
    }

    /// The answers `verdict` owes the client: for [`Verdict::Answer`], one error each
    /// for its cause, naming the server's `address` ([`Self::fail_requests`]); none for
    /// any other verdict.
    ///
    /// ```
    /// use backstop::http::Shaping;
    /// use backstop_jsonrpc::owed::{Cause, Verdict};
    /// let shaping = Shaping::new(backstop_jsonrpc::Shaper::default(), false);
    /// let verdict = Verdict::Answer { ids: vec!["4".into()], cause: Cause::ClosedEarly };
    /// let answers = shaping.settle(verdict, "http://h/mcp");
    /// assert!(String::from_utf8_lossy(&answers[0]).contains("closed the connection before answering"));
    /// assert!(shaping.settle(Verdict::Resume, "http://h/mcp").is_empty());
    /// ```
    pub fn settle(&self, verdict: Verdict<UpstreamFailure>, address: &str) -> Vec<Vec<u8>> {
        match verdict {
            Verdict::Answer { ids, cause } => {
                self.fail_requests(&ids, &UpstreamFailure::of(cause).to_error(address))
            }
            Verdict::Settled | Verdict::Resume => Vec::new(),
        }
    }

    /// How many requests of the session are not answered yet.
    pub fn pending(&self) -> usize {
        lock(&self.shaper).pending().len()
    }
}

/// Whether a body reads as JSON at all (a JSON-RPC message or batch, or not): UTF-8
/// throughout, bad UTF-8 in a string included.
fn is_json(body: &[u8]) -> bool {
    backstop_jsonrpc::message::strict_json_text(body)
        .is_some_and(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok())
}

/// Whether a body is a server's answer to pass on as it came: JSON, or a response
/// that is not strict JSON but whose `id` reads leniently (invalid UTF-8 or a lone
/// surrogate in a string — B4: forwarded, never replaced). A body that is neither (an
/// HTML page, say) is no JSON-RPC answer, and its requests are answered with an error.
fn is_answer(body: &[u8]) -> bool {
    is_json(body) || backstop_jsonrpc::lenient::response_id(body).is_some()
}

/// The methods of the requests and notifications in a client message or batch.
///
/// ```
/// let body = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"result":{}}]"#;
/// assert_eq!(backstop::http::client_methods(body), ["ping"]);
/// ```
pub fn client_methods(body: &[u8]) -> Vec<String> {
    let one = |element: &[u8]| {
        backstop_jsonrpc::message::Envelope::parse(element)
            .and_then(|envelope| envelope.method.map(String::from))
    };
    match backstop_jsonrpc::message::batch_elements(body) {
        Some(elements) => elements
            .iter()
            .filter_map(|element| one(element.get().as_bytes()))
            .collect(),
        None => one(body).into_iter().collect(),
    }
}

/// Whether a client message asks for a long-lived answer, as the core decides
/// ([`backstop_core::machine::asks_long_lived_answer`]: `subscriptions/listen`,
/// `tasks/result`). The upstream's timeout bounds the wait for its answer's first
/// bytes, never the quiet between its events (A5).
///
/// ```
/// assert!(backstop::http::is_long_lived(br#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}"#));
/// assert!(!backstop::http::is_long_lived(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#));
/// ```
pub fn is_long_lived(body: &[u8]) -> bool {
    client_methods(body)
        .iter()
        .any(|method| backstop_core::machine::asks_long_lived_answer(method))
}

/// The shaper, even if a task panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
