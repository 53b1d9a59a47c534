//! The shaper: sees every message both ways, remembers what each pending request was,
//! and rewrites the server's responses per SPEC A2 — by asking the core.
//!
//! - **E1–E8, V1–V5, L1–L17** a `tools/call` response is handed to
//!   [`backstop_core::shape_tool_call`]: a JSON-RPC error becomes
//!   `Outcome::Failure(Failure::from_protocol_error(..))`, a result
//!   `Outcome::Result(..)`; the core converts, recognises validation failures, makes
//!   E8 for an unknown tool and applies the limit.
//! - **R3, P1** a resource-not-found error (`-32002`, or `-32602` with `data.uri`) gets
//!   the code of the request's revision.
//! - **A2** everything else — and every response the core leaves as it was — is
//!   forwarded as the input's own bytes: [`Forward::Unchanged`].
//!
//! What is known of the session comes from `initialize` (the client's request and the
//! server's negotiated `protocolVersion`) or from each request's `_meta` (R2, R3).
//! The tool catalog comes from `tools/list` results; it is *complete* only once a
//! listing without `nextCursor` has been seen, and `notifications/tools/list_changed`
//! makes it unknown again. A tool is only ever called unknown (E8) against a complete
//! catalog.
//!
//! A transport that can send messages of the shaper's own uses
//! [`route_client_message`](Shaper::route_client_message) and
//! [`route_server_message`](Shaper::route_server_message) instead: then a `tools/call`
//! that comes before a complete catalog makes the shaper list the tools itself
//! ([`crate::listing`]), once the session is initialized (or, for a client without a
//! handshake, with the request's 2026-07-28 `_meta`), so that E8 holds from the first
//! call. `notifications/tools/list_changed` makes the next call list again.

use std::collections::VecDeque;
use std::time::Instant;

use backstop_core::call::{ArgumentShapes, ErrorCounts, LogRecord};
use backstop_core::machine::{
    self, Answer, ClientRequest, Disposition, OwnRequest, PendingRequests, Response, ServerHead,
    TASK_STATUS,
};
use backstop_core::protocol::Session;
use backstop_core::{Limit, ProtocolError, SessionMachine, ToolCatalog, ToolResult};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::message::{
    Envelope, RequestId, ResultMembers, batch_elements, error_response, notification,
    result_response, value_from_raw,
};
use crate::scan::{Scan, Scanned};

mod cut_unheld;

pub use cut_unheld::unheld_answer_error;

/// The most log records kept until [`Shaper::take_log_records`] takes them; older
/// ones are dropped first (their counts stay in [`Shaper::error_counts`]).
///
/// ```
/// assert!(backstop_jsonrpc::shaper::MAX_LOG_RECORDS >= 1);
/// ```
pub use backstop_core::machine::MAX_LOG_RECORDS;

/// What to send on for one message.
///
/// ```
/// use backstop_jsonrpc::{Forward, Shaper};
/// let now = std::time::Instant::now();
/// let mut shaper = Shaper::default();
/// let line = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
/// let forward = shaper.server_message(now, line);
/// assert_eq!(forward, Forward::Unchanged);
/// assert_eq!(forward.bytes(line), line);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forward {
    /// Send the message exactly as it came (A2).
    Unchanged,
    /// Send these bytes instead.
    Rewritten(Vec<u8>),
}

impl Forward {
    /// The bytes to send for `original`.
    ///
    /// ```
    /// use backstop_jsonrpc::Forward;
    /// assert_eq!(Forward::Rewritten(b"new".to_vec()).bytes(b"old"), b"new");
    /// ```
    pub fn bytes<'a>(&'a self, original: &'a [u8]) -> &'a [u8] {
        match self {
            Forward::Unchanged => original,
            Forward::Rewritten(bytes) => bytes,
        }
    }

    /// Whether the message is sent as it came.
    ///
    /// ```
    /// assert!(backstop_jsonrpc::Forward::Unchanged.is_unchanged());
    /// ```
    pub fn is_unchanged(&self) -> bool {
        matches!(self, Forward::Unchanged)
    }
}

/// What to send after one message, when the shaper may send messages of its own
/// ([`Shaper::route_client_message`], [`Shaper::route_server_message`]). In order:
/// `to_server`, then `to_client`, then the message itself (`forward`), each to its side.
///
/// ```
/// use backstop_jsonrpc::{Forward, Route};
/// let route = Route::forward(Forward::Unchanged);
/// assert_eq!(route.forward, Some(Forward::Unchanged));
/// assert!(route.to_server.is_empty() && route.to_client.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Route {
    /// Requests of the shaper's own for the server (its `tools/list`), to send first.
    pub to_server: Vec<Vec<u8>>,
    /// Server messages the shaper held and now releases, in the order they came, for
    /// the client.
    pub to_client: Vec<Vec<u8>>,
    /// The message itself, to send on the way it was going; `None` when the shaper
    /// keeps it: the answer to its own listing (read, never forwarded), or a server
    /// message held until that listing is done (it comes back in a later
    /// [`to_client`](Self::to_client)).
    pub forward: Option<Forward>,
    /// The raw JSON ids of the requests the message answers, when the shaper read
    /// them as it decided ([`Shaper::server_route`]); `None` when it did not read the
    /// message (then [`response_ids`](crate::message::response_ids) tells, by the
    /// same rule).
    pub answered: Option<Vec<String>>,
}

impl Route {
    /// Only the message itself.
    ///
    /// ```
    /// let route = backstop_jsonrpc::Route::forward(backstop_jsonrpc::Forward::Rewritten(b"x".to_vec()));
    /// assert!(route.to_server.is_empty());
    /// ```
    pub fn forward(forward: Forward) -> Self {
        Self {
            forward: Some(forward),
            ..Self::default()
        }
    }
}

/// What to do with a long message a [`crate::scan::Scan`] read
/// ([`Shaper::long_server_message`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LongDecision {
    /// Send what this says; [`Forward::Unchanged`] is the message as it came.
    Route(Route),
    /// What was held of it is not enough to decide: read it whole.
    NeedsWhole,
}

/// The code some servers answer a cancelled request with (from LSP); such an answer
/// passes untouched (E9).
///
/// ```
/// let now = std::time::Instant::now();
/// let mut shaper = backstop_jsonrpc::Shaper::default();
/// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#);
/// let answer = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}"#;
/// assert!(shaper.server_message(now, answer).is_unchanged());
/// ```
pub use backstop_core::protocol::code::REQUEST_CANCELLED;

/// The sans-IO shaper of one client–server connection (SPEC A2).
///
/// Feed it every message the client sends ([`client_message`](Self::client_message))
/// and every message the server sends ([`server_message`](Self::server_message)), one
/// JSON-RPC message or batch each, in the order they travel; send on what it returns.
///
/// ```
/// use backstop_jsonrpc::{Forward, Shaper};
/// let now = std::time::Instant::now();
///
/// let mut shaper = Shaper::default();
/// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
/// let list = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"capture_pane"}]}}"#;
/// assert_eq!(shaper.server_message(now, list), Forward::Unchanged);
///
/// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"capture_pane"}}"#);
/// let failed = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error: Pane not found: %99"}}"#;
/// let Forward::Rewritten(bytes) = shaper.server_message(now, failed) else { panic!() };
/// let response: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
/// assert_eq!(response["result"]["isError"], true);
/// assert_eq!(response["result"]["content"][0]["text"], "Pane not found: %99");
/// ```
#[derive(Debug, Clone)]
pub struct Shaper {
    machine: SessionMachine,
}

/// Finds the last segment of the core's `notifications/tools/list_changed`
/// ([`Shaper::cannot_change`]; a JSON string may write its `/` as `\/`): built once,
/// not for every message.
static LIST_CHANGED: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| {
        let name = machine::TOOLS_LIST_CHANGED;
        memchr::memmem::Finder::new(name.rsplit('/').next().unwrap_or(name))
    });

impl Default for Shaper {
    fn default() -> Self {
        Self::new(Limit::default())
    }
}

impl Shaper {
    /// A shaper applying `limit` to `tools/call` results (L1), with the default bound
    /// on pending requests.
    ///
    /// ```
    /// let shaper = backstop_jsonrpc::Shaper::new(backstop_core::Limit::new(50_000).unwrap());
    /// assert_eq!(shaper.limit().max_bytes(), 50_000);
    /// ```
    pub fn new(limit: Limit) -> Self {
        Self {
            machine: SessionMachine::new(limit),
        }
    }

    /// This shaper with at most `max` pending requests remembered (B2; the oldest is
    /// evicted, and its response forwarded unshaped).
    ///
    /// ```
    /// let shaper = backstop_jsonrpc::Shaper::default().with_max_pending(16);
    /// assert_eq!(shaper.pending().max(), 16);
    /// ```
    pub fn with_max_pending(mut self, max: usize) -> Self {
        self.machine = self.machine.with_max_pending(max);
        self
    }

    /// The limit in force.
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::Shaper::default().limit().max_bytes(), 1_000_000);
    /// ```
    pub fn limit(&self) -> &Limit {
        self.machine.limit()
    }

    /// The tools the server listed.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    /// shaper.server_message(now, br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"ping"}]}}"#);
    /// assert!(shaper.catalog().contains("ping"));
    /// ```
    pub fn catalog(&self) -> &ToolCatalog {
        self.machine.catalog()
    }

    /// Start from a listing made for an earlier request (R5; see
    /// [`SessionMachine::set_catalog`]).
    pub fn set_catalog(&mut self, catalog: ToolCatalog) {
        self.machine.set_catalog(catalog);
    }

    /// Shape a request outside any session (see
    /// [`SessionMachine::set_outside_session`]).
    pub fn set_outside_session(&mut self) {
        self.machine.set_outside_session();
    }

    /// The requests not answered yet.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    /// assert_eq!(shaper.pending().len(), 1);
    /// ```
    pub fn pending(&self) -> &PendingRequests {
        self.machine.pending()
    }

    /// Whether the request `id` (raw JSON, as the client wrote it) is pending: the
    /// client sent it and no answer has been passed on or made for it yet.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    /// assert!(shaper.is_pending(b"1"));
    /// assert!(!shaper.is_pending(br#""1""#), "1 and \"1\" are different ids");
    /// ```
    pub fn is_pending(&self, id: &[u8]) -> bool {
        request_id(id).is_some_and(|id| self.machine.pending().get(&id).is_some())
    }

    /// What the handshake said of the session.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"}}}"#);
    /// assert_eq!(shaper.session().client.as_ref().unwrap().name, "c");
    /// ```
    pub fn session(&self) -> &Session {
        self.machine.session()
    }

    /// Counts of converted failures per `<error_type>:<method>` (G3).
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run"}}"#);
    /// shaper.server_message(now, br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#);
    /// assert_eq!(shaper.error_counts().get("InternalError:tools/call"), 1);
    /// ```
    pub fn error_counts(&self) -> &ErrorCounts {
        self.machine.error_counts()
    }

    /// Take the log records of the failures converted since the last call (G1, G2).
    ///
    /// ```
    /// assert!(backstop_jsonrpc::Shaper::default().take_log_records().is_empty());
    /// ```
    pub fn take_log_records(&mut self) -> Vec<LogRecord> {
        self.machine.take_log_records()
    }

    /// A message from the client (one line: a message or a batch). Requests are
    /// remembered until answered; the message itself is always sent on unchanged.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// let forward = shaper.client_message(now, br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
    /// assert!(forward.is_unchanged());
    /// assert_eq!(shaper.pending().len(), 1);
    /// ```
    pub fn client_message(&mut self, now: Instant, bytes: &[u8]) -> Forward {
        self.client_elements(now, bytes, false);
        Forward::Unchanged
    }

    /// [`client_message`](Self::client_message) for a transport that can send the
    /// shaper's own messages: a `tools/call` that comes before a complete catalog, in
    /// a session the server takes requests in, makes the shaper list the tools
    /// ([`crate::listing`]). The client's message is always forwarded unchanged, after
    /// `to_server`.
    ///
    /// ```
    /// use backstop_jsonrpc::{Forward, Shaper};
    /// let now = std::time::Instant::now();
    /// let mut shaper = Shaper::default();
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// let route = shaper.route_client_message(now, call);
    /// assert_eq!(route.forward, Some(Forward::Unchanged));
    /// assert_eq!(route.to_server, [br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#]);
    ///
    /// // The server answers the call first: held until the listing is done.
    /// let unknown = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ech"}}"#;
    /// assert_eq!(shaper.route_server_message(now, unknown).forward, None);
    /// let list = br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","result":{"tools":[{"name":"echo"}]}}"#;
    /// let route = shaper.route_server_message(now, list);
    /// assert_eq!(route.forward, None, "the listing is the shaper's own");
    /// assert_eq!(route.to_client, [br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ech","data":{"suggestion":"Did you mean 'echo'?"}}}"#]);
    /// ```
    pub fn route_client_message(&mut self, now: Instant, bytes: &[u8]) -> Route {
        let mut route = Route::forward(Forward::Unchanged);
        if let Some(own) = self.client_elements(now, bytes, true) {
            route.to_server.push(own.to_json().into_bytes());
        }
        route
    }

    /// [`server_message`](Self::server_message) for a transport that can send the
    /// shaper's own messages (see [`route_client_message`](Self::route_client_message)):
    /// the answers to the shaper's listing are read here and not forwarded; while it
    /// is in flight, a `tools/call` response and everything after it are held, and
    /// released — shaped with the listing's catalog, in the order they came — when
    /// the listing is done, fails, or passes a bound of [`crate::listing`].
    ///
    /// ```
    /// use backstop_jsonrpc::{Forward, Shaper};
    /// let now = std::time::Instant::now();
    /// let mut shaper = Shaper::default();
    /// let line = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
    /// assert_eq!(shaper.route_server_message(now, line).forward, Some(Forward::Unchanged));
    /// ```
    pub fn route_server_message(&mut self, now: Instant, bytes: &[u8]) -> Route {
        // A listing a call wanted during the handshake goes when the handshake is done:
        // before this message when the client's `notifications/initialized` ended it
        // (sent then, it would reach the server before that notification; this message
        // may be the call's answer, held for it), after it when it answers `initialize`.
        let before = self.deferred_listing(now);
        let mut route = self.route_server_element(now, bytes);
        let after = self.deferred_listing(now);
        route.to_server.extend(before.into_iter().chain(after));
        route
    }

    /// The listing a call wanted during the handshake, if it is due now (held for as
    /// any listing is).
    fn deferred_listing(&mut self, now: Instant) -> Option<Vec<u8>> {
        let own = self.machine.deferred_listing(now)?;
        Some(own.to_json().into_bytes())
    }

    /// [`route_server_message`](Self::route_server_message) without the deferred
    /// listing.
    fn route_server_element(&mut self, now: Instant, bytes: &[u8]) -> Route {
        if !self.machine.listing_in_flight() && !self.machine.holds_server_messages() {
            return self.server_route(now, bytes);
        }
        if let Some(envelope) = Envelope::parse(bytes)
            && envelope.is_response()
            && let Some(id) = envelope.request_id()
            && self.machine.answers_own_listing(&id.into())
        {
            return self.listing_answer(now, envelope.result, envelope.error.is_some());
        }
        if !self.machine.holds_server_messages() && !self.awaits_catalog(bytes) {
            return self.server_route(now, bytes);
        }
        if self.machine.hold_server_message(bytes.to_vec()).is_ok() {
            return Route::default();
        }
        // A bound was passed: what is held goes first, then this message.
        let mut route = self.release_queued(now);
        route.forward = self.server_route(now, bytes).forward;
        route
    }

    /// When the shaper next needs [`handle_timeout`](Self::handle_timeout): the end of
    /// the patience for its own listing while server messages are held for it
    /// ([`LISTING_PATIENCE`](backstop_core::machine::LISTING_PATIENCE)); `None` when
    /// nothing waits. A transport with a clock sleeps until then.
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::Shaper::default().poll_timeout(), None);
    /// ```
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.machine.poll_timeout()
    }

    /// The time is `now`: past [`poll_timeout`](Self::poll_timeout), the shaper stops
    /// waiting for its own listing (a server that never answers must not hold the
    /// client's answers forever, B1) and returns the held messages, decided without its
    /// catalog, oldest first, for the client; `None` when nothing was given up. No new
    /// listing starts until the tool list changes; the listing's answer, if it still
    /// comes, is read and not forwarded.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert_eq!(backstop_jsonrpc::Shaper::default().handle_timeout(Instant::now()), None);
    /// ```
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Vec<Vec<u8>>> {
        self.machine.handle_timeout(now);
        let released = self.machine.take_released_messages();
        (!released.is_empty()).then(|| self.shape_released(now, released))
    }

    /// The answer to a page of the shaper's own listing: learn it, ask for the next
    /// page, or end the listing and release what it held.
    fn listing_answer(
        &mut self,
        now: Instant,
        result: Option<ResultMembers>,
        failed: bool,
    ) -> Route {
        let value = match failed {
            true => None,
            false => result.as_ref().and_then(ResultMembers::to_value),
        };
        match self.machine.own_listing_answer(value.as_ref(), now) {
            Some(next) => Route {
                to_server: vec![next.to_json().into_bytes()],
                ..Route::default()
            },
            None => self.release_queued(now),
        }
    }

    /// Whether a server message answers a pending `tools/call`, whose shaping needs
    /// the catalog.
    fn awaits_catalog(&self, bytes: &[u8]) -> bool {
        let answers_a_call = |element: &[u8]| {
            Envelope::parse(element)
                .filter(Envelope::is_response)
                .and_then(|envelope| envelope.request_id())
                .is_some_and(|id| self.machine.is_pending_tool_call(&id.into()))
        };
        match batch_elements(bytes) {
            Some(elements) => elements.iter().any(|e| answers_a_call(e.get().as_bytes())),
            None => answers_a_call(bytes),
        }
    }

    /// Release the held messages, oldest first, each shaped as it would have been had
    /// it come now (with what the listing learnt, or without a catalog).
    fn release_queued(&mut self, now: Instant) -> Route {
        let held = self.machine.take_held_messages();
        Route {
            to_client: self.shape_released(now, held),
            ..Route::default()
        }
    }

    /// The messages held for the listing, each shaped as it would have been had it
    /// come now.
    fn shape_released(&mut self, now: Instant, held: VecDeque<Vec<u8>>) -> Vec<Vec<u8>> {
        held.into_iter()
            .filter_map(|message| match self.server_route(now, &message).forward? {
                Forward::Unchanged => Some(message),
                Forward::Rewritten(bytes) => Some(bytes),
            })
            .collect()
    }

    /// Hand the requests and notifications of a client message to the machine; the
    /// request of its own it wants sent first, if any (only when `may_send`).
    fn client_elements(
        &mut self,
        now: Instant,
        bytes: &[u8],
        may_send: bool,
    ) -> Option<OwnRequest> {
        match batch_elements(bytes) {
            Some(elements) => elements
                .into_iter()
                .filter_map(|element| self.client_element(now, element.get().as_bytes(), may_send))
                .reduce(|first, _| first),
            None => self.client_element(now, bytes, may_send),
        }
    }

    /// A message from the server (one line: a message or a batch): what to send to
    /// the client. Batches are shaped element by element; a batch none of whose
    /// elements changes is sent as it came.
    ///
    /// A transport sends what [`server_route`](Self::server_route) says instead,
    /// which can also drop a message: here a message it drops reads as
    /// [`Forward::Unchanged`].
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// assert!(shaper.server_message(now, b"garbage \xff").is_unchanged());
    /// ```
    pub fn server_message(&mut self, now: Instant, bytes: &[u8]) -> Forward {
        self.server_route(now, bytes)
            .forward
            .unwrap_or(Forward::Unchanged)
    }

    /// What to send for a message from the server, as [`server_message`](Self::server_message)
    /// decides it, but with `forward: None` for a message to drop: the server's answer
    /// to a request backstop answered itself ([`answer_requests`](Self::answer_requests),
    /// [`answer_pending`](Self::answer_pending)) — a request gets at most one answer,
    /// ever (SPEC B5). In a batch, such an answer is left out of it.
    ///
    /// ```
    /// use backstop_jsonrpc::{Forward, Shaper};
    /// let now = std::time::Instant::now();
    /// let mut shaper = Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#);
    /// let error = backstop_core::ProtocolError::new(-32603, "The MCP server did not answer in time");
    /// shaper.answer_requests(&["1".to_owned()], &error);
    /// let late = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
    /// assert_eq!(shaper.server_route(now, late).forward, None, "answered already");
    /// let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    /// assert_eq!(shaper.server_route(now, note).forward, Some(Forward::Unchanged));
    /// ```
    pub fn server_route(&mut self, now: Instant, bytes: &[u8]) -> Route {
        if self.cannot_change(bytes) {
            return Route::forward(Forward::Unchanged);
        }
        let Some(elements) = batch_elements(bytes) else {
            let (forward, answered) = self.server_element(now, bytes);
            return Route {
                forward,
                answered: Some(answered.into_iter().collect()),
                ..Route::default()
            };
        };
        let mut answered = Vec::new();
        let shaped: Vec<(&RawValue, Option<Forward>)> = elements
            .into_iter()
            .map(|element| {
                let (forward, id) = self.server_element(now, element.get().as_bytes());
                answered.extend(id);
                (element, forward)
            })
            .collect();
        let answered = Some(answered);
        if shaped
            .iter()
            .all(|(_, forward)| forward == &Some(Forward::Unchanged))
        {
            return Route {
                answered,
                ..Route::forward(Forward::Unchanged)
            };
        }
        let kept: Vec<(&RawValue, Forward)> = shaped
            .into_iter()
            .filter_map(|(element, forward)| Some((element, forward?)))
            .collect();
        if kept.is_empty() {
            return Route {
                answered,
                ..Route::default()
            };
        }
        let mut out = Vec::with_capacity(bytes.len());
        out.push(b'[');
        for (n, (element, forward)) in kept.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(forward.bytes(element.get().as_bytes()));
        }
        out.push(b']');
        Route {
            answered,
            ..Route::forward(Forward::Rewritten(out))
        }
    }

    /// Whether a server message can be sent on without being read at all: the core
    /// reads none ([`SessionMachine::reads_server_messages`](backstop_core::SessionMachine::reads_server_messages)),
    /// none is held for a listing, and it cannot be `notifications/tools/list_changed`
    /// (the one message that changes what the shaper knows). A `\u` escape could spell
    /// that name, so a message with one is read.
    fn cannot_change(&self, bytes: &[u8]) -> bool {
        !self.machine.reads_server_messages()
            && LIST_CHANGED.find(bytes).is_none()
            && crate::message::UNIT_ESCAPE.find(bytes).is_none()
    }

    /// [`client_message`](Self::client_message) for a message already parsed.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_value(now, &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    /// assert_eq!(shaper.pending().len(), 1);
    /// ```
    pub fn client_value(&mut self, now: Instant, message: &Value) {
        if let Ok(bytes) = serde_json::to_vec(message) {
            self.client_message(now, &bytes);
        }
    }

    /// [`server_message`](Self::server_message) for a message already parsed: the
    /// message to send, `message` itself when unchanged. (It is serialized once to be
    /// read; prefer the bytes API on a transport that has them.)
    ///
    /// ```
    /// use serde_json::json;
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_value(now, &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
    ///     "params": {"uri": "probe://gone", "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}}));
    /// let sent = shaper.server_value(now, json!({"jsonrpc": "2.0", "id": 1,
    ///     "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "probe://gone"}}}));
    /// assert_eq!(sent["error"]["code"], -32002); // R3: the client's revision says so
    /// ```
    ///
    /// As with [`server_message`](Self::server_message), a message
    /// [`server_route`](Self::server_route) would drop (B5) comes back as it was.
    pub fn server_value(&mut self, now: Instant, message: Value) -> Value {
        let Ok(bytes) = serde_json::to_vec(&message) else {
            return message;
        };
        match self.server_message(now, &bytes) {
            Forward::Unchanged => message,
            Forward::Rewritten(rewritten) => serde_json::from_slice(&rewritten).unwrap_or(message),
        }
    }

    /// Answer every pending request with `error` (the server is gone), oldest first:
    /// one response line each, to send to the client. Messages held for the shaper's
    /// own listing come first, decided without its catalog (the listing cannot end).
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    /// let error = backstop_core::ProtocolError::new(-32603, "The MCP server exited");
    /// let lines = shaper.answer_pending(now, &error);
    /// assert_eq!(lines, [br#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"The MCP server exited"}}"#.to_vec()]);
    /// assert!(shaper.pending().is_empty());
    /// ```
    pub fn answer_pending(&mut self, now: Instant, error: &ProtocolError) -> Vec<Vec<u8>> {
        self.machine.abandon_listing();
        let mut lines = self.release_queued(now).to_client;
        lines.extend(
            self.machine
                .drain_pending()
                .into_iter()
                .map(|request| error_response(&request.id_json, error)),
        );
        lines
    }

    /// The request `id` (raw JSON) was answered by a message forwarded as it came: one
    /// that is not strict JSON (B4), or not a clean response, that answers it by the
    /// rule of [`crate::lenient`]. It is no longer pending, so that no second answer
    /// is ever made up for it.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}}"#);
    /// shaper.answered_unread(b"4");
    /// assert!(shaper.pending().is_empty());
    /// ```
    pub fn answered_unread(&mut self, id: &[u8]) {
        if let Some(id) = request_id(id) {
            self.machine.forget(&id);
        }
    }

    /// Answer the requests `ids` (raw JSON, as the client wrote them) with `error`: the
    /// transport that carried them failed, and no answer will come. One error response
    /// each, in the order given, whether or not the request is still pending; each is
    /// no longer pending (B1, B2: a failed request leaves nothing behind), and an
    /// answer the server sends for it after all is dropped (B5, [`server_route`](Self::server_route)).
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t"}}"#);
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    /// let error = backstop_core::ProtocolError::new(-32603, "The MCP server answered HTTP 502");
    /// let lines = shaper.answer_requests(&[r#""a""#.to_owned()], &error);
    /// assert_eq!(lines, [br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"The MCP server answered HTTP 502"}}"#.to_vec()]);
    /// assert_eq!(shaper.pending().len(), 1, "the ping is still pending");
    /// ```
    pub fn answer_requests(&mut self, ids: &[String], error: &ProtocolError) -> Vec<Vec<u8>> {
        ids.iter()
            .map(|id_json| {
                if let Some(id) = request_id(id_json.as_bytes()) {
                    self.machine.answer_here(&id);
                }
                error_response(id_json, error)
            })
            .collect()
    }

    /// End the shaper's own listing for a transport on which its answer can no longer
    /// come (the request that carried it failed, or timed out and was dropped): the
    /// held messages, decided without its catalog, oldest first, for the client. Unlike
    /// [`handle_timeout`](Self::handle_timeout), nothing is left in flight, so
    /// messages are no longer read whole for the listing's sake (B3), and a change of
    /// the tool list lets a new listing start.
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// assert_eq!(shaper.route_client_message(now, call).to_server.len(), 1);
    /// assert!(shaper.abandon_listing(now).is_empty());
    /// // No new listing until the tool list changes.
    /// let again = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// assert!(shaper.route_client_message(now, again).to_server.is_empty());
    /// shaper.server_message(now, br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    /// let third = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// assert_eq!(shaper.route_client_message(now, third).to_server.len(), 1);
    /// ```
    pub fn abandon_listing(&mut self, now: Instant) -> Vec<Vec<u8>> {
        self.machine.abandon_listing();
        self.release_queued(now).to_client
    }

    /// What to do with a server message read as it comes, from what `scan` has read of
    /// its top level ([`SessionMachine::server_head`]): `past_hold_at`, the byte from
    /// which holding it on would pass the stream's bound, once it has come that far.
    /// A response that passes is no longer pending.
    ///
    /// ```
    /// use backstop_core::{Limit, limit::Keep, machine::Disposition};
    /// use backstop_jsonrpc::{Shaper, scan::Scan};
    /// let now = std::time::Instant::now();
    /// let limit = Limit::new(1_000).unwrap().keep_for("git_log", Keep::Head);
    /// let mut shaper = Shaper::new(limit.clone());
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"git_log"}}"#);
    /// let mut scan = Scan::new(1 << 20);
    /// scan.push(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"#);
    /// assert_eq!(shaper.server_head(&scan, None), Disposition::Read(limit.held_ends(Some("git_log"))));
    /// assert_eq!(shaper.server_head(&scan, Some(2_000)), Disposition::CutUnheld(limit.held_ends(Some("git_log"))));
    /// let mut note = Scan::new(1 << 20);
    /// note.push(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"#);
    /// assert_eq!(shaper.server_head(&note, None), Disposition::Pass);
    /// ```
    /// A message that stopped being JSON has no head to read but its `id` and how long
    /// it is: it is asked about only as an answer that may be cut unheld (B4).
    pub fn server_head(&mut self, scan: &Scan, past_hold_at: Option<u64>) -> Disposition {
        let id = scan.top_id().and_then(request_id);
        if scan.is_invalid() {
            return self.machine.server_head(ServerHead {
                id: id.as_ref(),
                past_hold_at,
                ..ServerHead::default()
            });
        }
        let method = scan
            .top_method()
            .map(|raw| serde_json::from_slice::<String>(raw).unwrap_or_default());
        self.machine.server_head(ServerHead {
            id: id.as_ref(),
            method: method.as_deref(),
            result: scan.top_result(),
            error: scan.top_error(),
            ended: false,
            past_hold_at,
        })
    }

    /// The decision for a long server message from what a [`crate::scan::Scan`] held
    /// of it: a `tools/call` result with text blocks held in part is decided by the
    /// core as the whole would be ([`shape_tool_call_in_part`](backstop_core::call::shape_tool_call_in_part)); a message that was
    /// held whole is shaped as [`route_server_message`](Self::route_server_message)
    /// would; one that cannot need a change is sent as it came; anything else is
    /// [`LongDecision::NeedsWhole`]. One held in part is never read whole because
    /// backstop's own listing is in flight (B3): it is decided with what is known, and
    /// the messages that wait for the listing go before it.
    ///
    /// ```
    /// use backstop_jsonrpc::{Forward, Shaper, shaper::LongDecision, scan::Scan};
    /// let now = std::time::Instant::now();
    /// let mut shaper = Shaper::default();
    /// let mut scan = Scan::new(1_000_000);
    /// scan.push(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#);
    /// let decision = shaper.long_server_message(now, &scan.finish());
    /// assert_eq!(decision, LongDecision::Route(backstop_jsonrpc::Route::forward(Forward::Unchanged)));
    /// ```
    pub fn long_server_message(&mut self, now: Instant, scanned: &Scanned) -> LongDecision {
        if scanned.invalid {
            // Not JSON: forwarded as it came; the stream, which read it leniently, says
            // which request it answers (B4).
            let unchanged = Route::forward(Forward::Unchanged);
            return LongDecision::Route(self.after_waiting(now, unchanged));
        }
        let listing = self.machine.listing_in_flight() || self.machine.holds_server_messages();
        if !scanned.dropped && scanned.holes.is_empty() {
            // Held whole (its structure alone, within the scan's bound): the skeleton
            // is the message, read as its frame reads a whole one while the listing
            // may hold it.
            return match listing {
                true => LongDecision::NeedsWhole,
                false => LongDecision::Route(self.route_server_message(now, &scanned.skeleton)),
            };
        }
        if scanned.batch {
            return LongDecision::NeedsWhole;
        }
        // Held in part: never read whole for backstop's listing (B3), but decided with
        // what is known now, after what waits for the listing.
        match self.long_decision(scanned) {
            LongDecision::Route(route) => LongDecision::Route(self.after_waiting(now, route)),
            needs_whole => needs_whole,
        }
    }

    /// `route` after the server messages waiting for backstop's listing, which go
    /// first, in the order they came, decided with what is known (B1, B3).
    pub(crate) fn after_waiting(&mut self, now: Instant, mut route: Route) -> Route {
        let mut released = self.release_queued(now);
        released.to_client.append(&mut route.to_client);
        route.to_client = released.to_client;
        route
    }

    /// [`long_server_message`](Self::long_server_message) for a single message held
    /// in part.
    fn long_decision(&mut self, scanned: &Scanned) -> LongDecision {
        let unchanged = LongDecision::Route(Route::forward(Forward::Unchanged));
        if let Some(raw) = scanned.method.as_deref() {
            let method = serde_json::from_slice::<String>(raw).unwrap_or_default();
            // Its order is the listing's to keep while one is in flight: read whole, it
            // is held with the rest (not `ended` on this path).
            let head = ServerHead {
                method: Some(&method),
                ..ServerHead::default()
            };
            return match self.machine.server_head(head) {
                Disposition::Pass => unchanged,
                _ if method == TASK_STATUS => self.long_task_status(scanned),
                _ => LongDecision::NeedsWhole,
            };
        }
        let Some(envelope) = scanned.envelope().filter(Envelope::is_response) else {
            // Not a response we can read: only its id can say it needs nothing; which
            // request it answers, if any, the stream's lenient reader says (B4, A0).
            let Some(id) = scanned.id.as_deref().and_then(request_id) else {
                return LongDecision::NeedsWhole;
            };
            let head = ServerHead {
                id: Some(&id),
                ended: true,
                ..ServerHead::default()
            };
            return match self.machine.server_head(head) {
                Disposition::Pass => unchanged,
                _ => LongDecision::NeedsWhole,
            };
        };
        let Some(id) = envelope.request_id().map(machine::RequestId::from) else {
            return unchanged;
        };
        match self.machine.server_head(answer_at_end(&id, &envelope)) {
            Disposition::Drop => return LongDecision::Route(Route::default()), // B5
            Disposition::Pass => return unchanged,
            Disposition::Read(_) | Disposition::CutUnheld(_) => {}
        }
        let (Some(result), false) = (envelope.result, scanned.dropped) else {
            return LongDecision::NeedsWhole;
        };
        let id_json = envelope.id.map_or("null", RawValue::get);
        if !self.machine.is_pending_tool_call(&id) {
            // A task's state (2026-07-28 `tasks/get`), its outcome held in part.
            let answer = result.to_value().and_then(|state| {
                let held = scanned.held_in_task_state(&outcome_of(&state)?)?;
                self.machine.server_task_state_in_part(&id, state, &held)
            });
            return match answer {
                Some(answer) => LongDecision::Route(Route::forward(forward(answer, id_json))),
                None => LongDecision::NeedsWhole,
            };
        }
        let Some(result) = result
            .to_value()
            .and_then(|v| ToolResult::from_value(v).ok())
        else {
            self.machine.forget(&id);
            return unchanged;
        };
        let answer = scanned
            .held_in_part(&result)
            .and_then(|held| self.machine.server_result_in_part(&id, result, &held));
        match answer {
            Some(answer) => LongDecision::Route(Route::forward(forward(answer, id_json))),
            None => LongDecision::NeedsWhole,
        }
    }

    /// [`long_server_message`](Self::long_server_message) for a `notifications/tasks`
    /// of a task this session knows: its outcome shaped from what is held of it.
    fn long_task_status(&mut self, scanned: &Scanned) -> LongDecision {
        let params = match (scanned.dropped || scanned.overflowed, scanned.batch) {
            (false, false) => scanned
                .envelope()
                .and_then(|envelope| envelope.params)
                .and_then(value_from_raw),
            _ => None,
        };
        let shaped = params.and_then(|params| {
            let held = scanned.held_in_task_state(&outcome_of(&params)?)?;
            self.machine.server_task_status_in_part(params, &held)
        });
        match shaped {
            Some(Some((task, _))) => LongDecision::Route(Route::forward(Forward::Rewritten(
                notification(TASK_STATUS, &task),
            ))),
            Some(None) => LongDecision::Route(Route::forward(Forward::Unchanged)),
            None => LongDecision::NeedsWhole,
        }
    }

    /// Record one client message; for a `tools/call`, its `params._meta`.
    fn client_element(&mut self, now: Instant, bytes: &[u8], may_send: bool) -> Option<OwnRequest> {
        let envelope = Envelope::parse(bytes)?;
        // `None`: a response to a server's request, or not a message.
        let method = envelope.method.as_deref()?;
        let params = envelope.params();
        let (Some(id), Some(id_raw)) = (envelope.request_id(), envelope.id) else {
            // A notification.
            let cancelled = params.request_id.and_then(RequestId::from_raw);
            self.machine
                .client_notification(method, cancelled.map(Into::into).as_ref());
            return None;
        };
        let mut request = ClientRequest::new(id.into(), id_raw.get(), method);
        request.tool = params.name.map(std::borrow::Cow::into_owned);
        if let Some(arguments) = params.arguments {
            request = request.argument_shapes(ArgumentShapes::from_json(arguments.get()));
        }
        request.cursor = params.cursor.is_some();
        request.uri = params.uri.map(std::borrow::Cow::into_owned);
        request.task_id = params.task_id.map(std::borrow::Cow::into_owned);
        request.meta = params.meta;
        if method == backstop_core::machine::INITIALIZE {
            request.initialize = envelope
                .params
                .and_then(|raw| serde_json::from_str(raw.get()).ok());
        }
        self.machine.client_request(request, may_send, now)
    }

    /// What to send for one message (not a batch), `None` to drop it (B5); and the raw
    /// id of the request it answers, by the rule of [`crate::message::response_ids`].
    fn server_element(&mut self, now: Instant, bytes: &[u8]) -> (Option<Forward>, Option<String>) {
        let Some(envelope) = Envelope::parse(bytes) else {
            // Not strict JSON: forwarded as it came, it answers its request (B4).
            let answered = crate::lenient::response_id(bytes);
            if let Some(id) = &answered {
                self.answered_unread(id.as_bytes());
            }
            return (Some(Forward::Unchanged), answered);
        };
        if let Some(method) = envelope.method.as_deref() {
            self.machine.server_notification(method);
            if method == TASK_STATUS && envelope.id.is_none() {
                let answered = crate::lenient::response_id(bytes);
                return (Some(self.task_status(envelope.params)), answered);
            }
        }
        if !envelope.is_response() {
            // Sent as it came, it may still answer a request (an `id` with a `result`
            // or `error`, and a `method` only after them): by the rule every path
            // keeps (B4, A0: `crate::lenient`).
            let answered = crate::lenient::response_id(bytes);
            if envelope.id.is_some()
                && let Some(id) = &answered
            {
                self.answered_unread(id.as_bytes());
            }
            return (Some(Forward::Unchanged), answered);
        }
        let answered = envelope.id.map(|id| id.get().to_owned());
        let Some(id) = envelope.request_id().map(machine::RequestId::from) else {
            return (Some(Forward::Unchanged), answered);
        };
        match self.machine.server_head(answer_at_end(&id, &envelope)) {
            Disposition::Drop => return (None, answered), // B5: answered already
            Disposition::Pass => return (Some(Forward::Unchanged), answered),
            Disposition::Read(_) | Disposition::CutUnheld(_) => {}
        }
        let response = match (&envelope.result, envelope.error) {
            (Some(result), _) => result.to_value().map(Response::Result),
            (None, Some(error)) => serde_json::from_str::<ProtocolError>(error.get())
                .ok()
                .map(Response::Error),
            (None, None) => None,
        };
        let answer = self
            .machine
            .server_response(&id, response.unwrap_or(Response::Unread), now);
        let forward = forward(answer, envelope.id.map_or("null", RawValue::get));
        (Some(forward), answered)
    }
}

impl Shaper {
    /// A `notifications/tasks` of the server: its task's state with the outcome of the
    /// call that created it shaped as that call's answer would be (L1, E11).
    fn task_status(&mut self, params: Option<&RawValue>) -> Forward {
        let Some(params) = params.and_then(value_from_raw) else {
            return Forward::Unchanged;
        };
        match self.machine.server_task_status(params) {
            Some((task, _)) => Forward::Rewritten(notification(TASK_STATUS, &task)),
            None => Forward::Unchanged,
        }
    }
}

/// The head of a response to `id` all of which has come.
fn answer_at_end<'a>(id: &'a machine::RequestId, envelope: &Envelope) -> ServerHead<'a> {
    ServerHead {
        id: Some(id),
        result: envelope.result.is_some(),
        error: envelope.error.is_some(),
        ended: true,
        past_hold_at: None,
        method: None,
    }
}

/// The outcome a task's state carries (its `result`), as held.
fn outcome_of(state: &Value) -> Option<ToolResult> {
    ToolResult::from_value(state.get("result")?.clone()).ok()
}

/// The request id the raw JSON `raw` is, if it is one (a number or a string).
fn request_id(raw: &[u8]) -> Option<machine::RequestId> {
    let raw = serde_json::from_slice::<&RawValue>(raw).ok()?;
    RequestId::from_raw(raw).map(machine::RequestId::from)
}

/// The bytes to send for the machine's answer, under the id as the server wrote it
/// (`id_json`: its bytes are kept, escapes and all).
fn forward(answer: Answer, id_json: &str) -> Forward {
    match answer {
        // `ListFirst` answers only a failure raised in process, never one read here.
        Answer::Unchanged | Answer::ListFirst(_) => Forward::Unchanged,
        Answer::Result { result, .. } => Forward::Rewritten(result_response(id_json, &result)),
        Answer::TaskState { task, .. } => Forward::Rewritten(result_response(id_json, &task)),
        Answer::Error { error, .. } => Forward::Rewritten(error_response(id_json, &error)),
    }
}
