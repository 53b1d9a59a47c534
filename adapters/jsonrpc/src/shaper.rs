//! The shaper: sees every message both ways, remembers what each pending request was,
//! and rewrites the server's responses per SPEC A2 — by asking the core.
//!
//! - **E1–E8, V1–V5, L1–L17** a `tools/call` response is handed to
//!   [`backstop_core::call::shape_tool_call`]: a JSON-RPC error becomes
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

use backstop_core::call::{Outcome, Shaped, ToolCatalog, shape_tool_call, shape_tool_call_in_part};
use backstop_core::protocol_error::code;
use backstop_core::request_error::shape_request_error;
use backstop_core::session::PROTOCOL_VERSION_META_KEY;
use backstop_core::{
    CallContext, ErrorCounts, Failure, Limit, LogRecord, ProtocolError, Session, ToolResult,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::listing::OwnListing;
use crate::message::{
    Envelope, RequestId, ResultMembers, batch_elements, error_response, result_response,
};
use crate::pending::{PendingRequest, PendingRequests, RequestKind};
use crate::scan::Scanned;

/// The most log records kept until [`Shaper::take_log_records`] takes them; older
/// ones are dropped first (their counts stay in [`Shaper::error_counts`]).
///
/// ```
/// assert!(backstop_jsonrpc::shaper::MAX_LOG_RECORDS >= 1);
/// ```
pub const MAX_LOG_RECORDS: usize = 1024;

/// What to send on for one message.
///
/// ```
/// use backstop_jsonrpc::{Forward, Shaper};
/// let mut shaper = Shaper::default();
/// let line = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
/// let forward = shaper.server_message(line);
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
    /// Server messages the shaper queued and now releases, in the order they came, for
    /// the client.
    pub to_client: Vec<Vec<u8>>,
    /// The message itself, to send on the way it was going; `None` when the shaper
    /// keeps it: the answer to its own listing (read, never forwarded), or a server
    /// message queued until that listing is done (it comes back in a later
    /// [`to_client`](Self::to_client)).
    pub forward: Option<Forward>,
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

/// Where the session's handshake is: the server takes requests once the client's
/// `initialize` has been answered and the client has sent `notifications/initialized`
/// (in whichever order the shaper sees the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Lifecycle {
    /// The client sent `initialize` (none: a client of 2026-07-28 without a
    /// handshake, or a shaper that joined late).
    initialize: bool,
    /// The server answered it with a result.
    answered: bool,
    /// The client sent `notifications/initialized` after its `initialize`.
    initialized: bool,
}

/// The code some servers answer a cancelled request with (from LSP); such an answer
/// passes untouched (E9).
///
/// ```
/// let mut shaper = backstop_jsonrpc::Shaper::default();
/// shaper.client_message(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#);
/// let answer = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}"#;
/// assert!(shaper.server_message(answer).is_unchanged());
/// ```
pub const REQUEST_CANCELLED: i64 = -32800;

/// How much of the server's tool list has been seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CatalogState {
    /// No listing yet, or the list changed since.
    Unknown,
    /// Some pages of a listing.
    Partial,
    /// A whole listing.
    Complete,
}

/// The sans-IO shaper of one client–server connection (SPEC A2).
///
/// Feed it every message the client sends ([`client_message`](Self::client_message))
/// and every message the server sends ([`server_message`](Self::server_message)), one
/// JSON-RPC message or batch each, in the order they travel; send on what it returns.
///
/// ```
/// use backstop_jsonrpc::{Forward, Shaper};
///
/// let mut shaper = Shaper::default();
/// shaper.client_message(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
/// let list = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"capture_pane"}]}}"#;
/// assert_eq!(shaper.server_message(list), Forward::Unchanged);
///
/// shaper.client_message(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"capture_pane"}}"#);
/// let failed = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error: Pane not found: %99"}}"#;
/// let Forward::Rewritten(bytes) = shaper.server_message(failed) else { panic!() };
/// let response: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
/// assert_eq!(response["result"]["isError"], true);
/// assert_eq!(response["result"]["content"][0]["text"], "Pane not found: %99");
/// ```
#[derive(Debug, Clone)]
pub struct Shaper {
    limit: Limit,
    catalog: ToolCatalog,
    catalog_state: CatalogState,
    handshake: Session,
    pending: PendingRequests,
    lifecycle: Lifecycle,
    listing: OwnListing,
    log: Vec<LogRecord>,
    counts: ErrorCounts,
}

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
            limit,
            catalog: ToolCatalog::new(),
            catalog_state: CatalogState::Unknown,
            handshake: Session::default(),
            pending: PendingRequests::default(),
            lifecycle: Lifecycle::default(),
            listing: OwnListing::default(),
            log: Vec::new(),
            counts: ErrorCounts::new(),
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
        self.pending = PendingRequests::new(max);
        self
    }

    /// The limit in force.
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::Shaper::default().limit().max_bytes(), 1_000_000);
    /// ```
    pub fn limit(&self) -> &Limit {
        &self.limit
    }

    /// The tools the server listed.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    /// shaper.server_message(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"ping"}]}}"#);
    /// assert!(shaper.catalog().contains("ping"));
    /// ```
    pub fn catalog(&self) -> &ToolCatalog {
        &self.catalog
    }

    /// The requests not answered yet.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    /// assert_eq!(shaper.pending().len(), 1);
    /// ```
    pub fn pending(&self) -> &PendingRequests {
        &self.pending
    }

    /// What the handshake said of the session.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"}}}"#);
    /// assert_eq!(shaper.session().client.as_ref().unwrap().name, "c");
    /// ```
    pub fn session(&self) -> &Session {
        &self.handshake
    }

    /// Counts of converted failures per `<error_type>:<method>` (G3).
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run"}}"#);
    /// shaper.server_message(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#);
    /// assert_eq!(shaper.error_counts().get("InternalError:tools/call"), 1);
    /// ```
    pub fn error_counts(&self) -> &ErrorCounts {
        &self.counts
    }

    /// Take the log records of the failures converted since the last call (G1, G2).
    ///
    /// ```
    /// assert!(backstop_jsonrpc::Shaper::default().take_log_records().is_empty());
    /// ```
    pub fn take_log_records(&mut self) -> Vec<LogRecord> {
        std::mem::take(&mut self.log)
    }

    /// A message from the client (one line: a message or a batch). Requests are
    /// remembered until answered; the message itself is always sent on unchanged.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// let forward = shaper.client_message(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
    /// assert!(forward.is_unchanged());
    /// assert_eq!(shaper.pending().len(), 1);
    /// ```
    pub fn client_message(&mut self, bytes: &[u8]) -> Forward {
        self.client_elements(bytes);
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
    /// let mut shaper = Shaper::default();
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// let route = shaper.route_client_message(call);
    /// assert_eq!(route.forward, Some(Forward::Unchanged));
    /// assert_eq!(route.to_server, [br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#]);
    ///
    /// // The server answers the call first: queued until the listing is done.
    /// let unknown = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ech"}}"#;
    /// assert_eq!(shaper.route_server_message(unknown).forward, None);
    /// let list = br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","result":{"tools":[{"name":"echo"}]}}"#;
    /// let route = shaper.route_server_message(list);
    /// assert_eq!(route.forward, None, "the listing is the shaper's own");
    /// assert_eq!(route.to_client, [br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ech","data":{"suggestion":"Did you mean 'echo'?"}}}"#]);
    /// ```
    pub fn route_client_message(&mut self, bytes: &[u8]) -> Route {
        let mut route = Route::forward(Forward::Unchanged);
        let Some(meta) = self.client_elements(bytes) else {
            return route;
        };
        let listable = match self.lifecycle {
            Lifecycle {
                initialize: false, ..
            } => stateless_meta(meta.as_ref()).map(Some),
            Lifecycle {
                answered: true,
                initialized: true,
                ..
            } => Some(None),
            _ => None,
        };
        if let Some(meta) = listable
            && !self.catalog_complete()
            && !self.listing.in_flight()
            && !self.listing.failed()
        {
            route.to_server.push(self.listing.start(meta));
        }
        route
    }

    /// [`server_message`](Self::server_message) for a transport that can send the
    /// shaper's own messages (see [`route_client_message`](Self::route_client_message)):
    /// the answers to the shaper's listing are read here and not forwarded; while it
    /// is in flight, a `tools/call` response and everything after it are queued, and
    /// released — shaped with the listing's catalog, in the order they came — when
    /// the listing is done, fails, or passes a bound of [`crate::listing`].
    ///
    /// ```
    /// use backstop_jsonrpc::{Forward, Shaper};
    /// let mut shaper = Shaper::default();
    /// let line = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
    /// assert_eq!(shaper.route_server_message(line).forward, Some(Forward::Unchanged));
    /// ```
    pub fn route_server_message(&mut self, bytes: &[u8]) -> Route {
        if !self.listing.in_flight() && !self.listing.has_queued() {
            return Route::forward(self.server_message(bytes));
        }
        if let Some(envelope) = Envelope::parse(bytes)
            && envelope.is_response()
            && self.listing.answers_raw(envelope.id)
        {
            return self.listing_answer(envelope.result, envelope.error.is_some());
        }
        if !self.listing.has_queued() && !self.awaits_catalog(bytes) {
            return Route::forward(self.server_message(bytes));
        }
        if self.listing.queue(bytes.to_vec()) {
            return Route::default();
        }
        // A bound was passed: what is queued goes first, then this message.
        let mut route = self.release_queued();
        route.forward = Some(self.server_message(bytes));
        route
    }

    /// Which request of the shaper's own listing server messages are queued for (a
    /// number that changes with each page); `None` when nothing is queued. A transport
    /// with a clock calls [`give_up_listing`](Self::give_up_listing) when the same
    /// number stays too long: a server that never answers must not keep the client's
    /// answers forever (B1).
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::Shaper::default().queued_for_listing(), None);
    /// ```
    pub fn queued_for_listing(&self) -> Option<u64> {
        self.listing.queueing_for()
    }

    /// Stop waiting for the shaper's own listing: the queued messages, decided without
    /// its catalog, oldest first, for the client. No new listing starts until the
    /// tool list changes; the listing's answer, if it still comes, is read and not
    /// forwarded.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// assert!(shaper.give_up_listing().is_empty());
    /// ```
    pub fn give_up_listing(&mut self) -> Vec<Vec<u8>> {
        self.listing.give_up();
        self.release_queued().to_client
    }

    /// The answer to a page of the shaper's own listing: learn it, ask for the next
    /// page, or end the listing and release what it queued.
    fn listing_answer(&mut self, result: Option<ResultMembers>, failed: bool) -> Route {
        let first_page = self.listing.first_page();
        let next = match result.as_ref().and_then(ResultMembers::to_value) {
            Some(value) if !failed && value.get("tools").is_some_and(Value::is_array) => {
                let cursor = value.get("nextCursor").filter(|c| !c.is_null()).cloned();
                self.learn_tools_value(&value, first_page);
                match cursor {
                    Some(cursor) => self.listing.next_page(&cursor),
                    None => {
                        self.listing.finish();
                        return self.release_queued();
                    }
                }
            }
            _ => None,
        };
        match next {
            Some(request) => Route {
                to_server: vec![request],
                ..Route::default()
            },
            None => {
                self.listing.fail();
                self.release_queued()
            }
        }
    }

    /// Whether a server message answers a pending `tools/call`, whose shaping needs
    /// the catalog.
    fn awaits_catalog(&self, bytes: &[u8]) -> bool {
        let answers_a_call = |element: &[u8]| {
            Envelope::parse(element)
                .filter(Envelope::is_response)
                .and_then(|envelope| envelope.request_id())
                .and_then(|id| self.pending.get(&id))
                .is_some_and(|request| matches!(request.kind, RequestKind::ToolsCall { .. }))
        };
        match batch_elements(bytes) {
            Some(elements) => elements.iter().any(|e| answers_a_call(e.get().as_bytes())),
            None => answers_a_call(bytes),
        }
    }

    /// Release the queued messages, oldest first, each shaped as it would have been had
    /// it come now (with what the listing learnt, or without a catalog).
    fn release_queued(&mut self) -> Route {
        let queued = self.listing.take_queued();
        let to_client = queued
            .into_iter()
            .map(|message| match self.server_message(&message) {
                Forward::Unchanged => message,
                Forward::Rewritten(bytes) => bytes,
            })
            .collect();
        Route {
            to_client,
            ..Route::default()
        }
    }

    /// Record the requests of a client message; for a `tools/call` among them, the
    /// first one's `params._meta` (`Some(None)` when it has none).
    fn client_elements(&mut self, bytes: &[u8]) -> Option<Option<Map<String, Value>>> {
        match batch_elements(bytes) {
            Some(elements) => elements
                .into_iter()
                .filter_map(|element| self.client_element(element.get().as_bytes()))
                .reduce(|first, _| first),
            None => self.client_element(bytes),
        }
    }

    /// A message from the server (one line: a message or a batch): what to send to
    /// the client. Batches are shaped element by element; a batch none of whose
    /// elements changes is sent as it came.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// assert!(shaper.server_message(b"garbage \xff").is_unchanged());
    /// ```
    pub fn server_message(&mut self, bytes: &[u8]) -> Forward {
        if self.cannot_change(bytes) {
            return Forward::Unchanged;
        }
        let Some(elements) = batch_elements(bytes) else {
            return self.server_element(bytes);
        };
        let shaped: Vec<(&RawValue, Forward)> = elements
            .into_iter()
            .map(|element| (element, self.server_element(element.get().as_bytes())))
            .collect();
        if shaped.iter().all(|(_, forward)| forward.is_unchanged()) {
            return Forward::Unchanged;
        }
        let mut out = Vec::with_capacity(bytes.len());
        out.push(b'[');
        for (n, (element, forward)) in shaped.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(forward.bytes(element.get().as_bytes()));
        }
        out.push(b']');
        Forward::Rewritten(out)
    }

    /// Whether a server message can be sent on without being read at all: nothing is
    /// pending (so it answers nothing this shaper would change), no listing of its own
    /// is under way, and it cannot be `notifications/tools/list_changed` (the one
    /// message that changes what the shaper knows). A `\u` escape could spell that
    /// name, so a message with one is read.
    fn cannot_change(&self, bytes: &[u8]) -> bool {
        self.pending.is_empty()
            && !self.listing.in_flight()
            && !self.listing.has_queued()
            && memchr::memmem::find(bytes, b"list_changed").is_none()
            && memchr::memmem::find(bytes, b"\\u").is_none()
    }

    /// [`client_message`](Self::client_message) for a message already parsed.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_value(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    /// assert_eq!(shaper.pending().len(), 1);
    /// ```
    pub fn client_value(&mut self, message: &Value) {
        if let Ok(bytes) = serde_json::to_vec(message) {
            self.client_message(&bytes);
        }
    }

    /// [`server_message`](Self::server_message) for a message already parsed: the
    /// message to send, `message` itself when unchanged. (It is serialized once to be
    /// read; prefer the bytes API on a transport that has them.)
    ///
    /// ```
    /// use serde_json::json;
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_value(&json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
    ///     "params": {"uri": "probe://gone", "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}}));
    /// let sent = shaper.server_value(json!({"jsonrpc": "2.0", "id": 1,
    ///     "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "probe://gone"}}}));
    /// assert_eq!(sent["error"]["code"], -32002); // R3: the client's revision says so
    /// ```
    pub fn server_value(&mut self, message: Value) -> Value {
        let Ok(bytes) = serde_json::to_vec(&message) else {
            return message;
        };
        match self.server_message(&bytes) {
            Forward::Unchanged => message,
            Forward::Rewritten(rewritten) => serde_json::from_slice(&rewritten).unwrap_or(message),
        }
    }

    /// Answer every pending request with `error` (the server is gone), oldest first:
    /// one response line each, to send to the client. Messages queued for the shaper's
    /// own listing come first, decided without its catalog (the listing cannot end).
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    /// let error = backstop_core::ProtocolError::new(-32603, "The MCP server exited");
    /// let lines = shaper.answer_pending(&error);
    /// assert_eq!(lines, [br#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"The MCP server exited"}}"#.to_vec()]);
    /// assert!(shaper.pending().is_empty());
    /// ```
    pub fn answer_pending(&mut self, error: &ProtocolError) -> Vec<Vec<u8>> {
        self.listing.fail();
        let mut lines = self.release_queued().to_client;
        lines.extend(
            self.pending
                .drain()
                .into_iter()
                .map(|request| error_response(&request.id_json, error)),
        );
        lines
    }

    /// Answer the requests `ids` (raw JSON, as the client wrote them) with `error`: the
    /// transport that carried them failed, and no answer will come. One error response
    /// each, in the order given, whether or not the request is still pending; each is
    /// no longer pending (B1, B2: a failed request leaves nothing behind).
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t"}}"#);
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    /// let error = backstop_core::ProtocolError::new(-32603, "The MCP server answered HTTP 502");
    /// let lines = shaper.answer_requests(&[r#""a""#.to_owned()], &error);
    /// assert_eq!(lines, [br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"The MCP server answered HTTP 502"}}"#.to_vec()]);
    /// assert_eq!(shaper.pending().len(), 1, "the ping is still pending");
    /// ```
    pub fn answer_requests(&mut self, ids: &[String], error: &ProtocolError) -> Vec<Vec<u8>> {
        ids.iter()
            .map(|id_json| {
                let id = serde_json::from_str::<&RawValue>(id_json)
                    .ok()
                    .and_then(RequestId::from_raw);
                if let Some(id) = id {
                    self.pending.remove(&id);
                }
                error_response(id_json, error)
            })
            .collect()
    }

    /// End the shaper's own listing for a transport on which its answer can no longer
    /// come (the request that carried it failed, or timed out and was dropped): the
    /// queued messages, decided without its catalog, oldest first, for the client. Unlike
    /// [`give_up_listing`](Self::give_up_listing), nothing is left in flight, so
    /// messages are no longer read whole for the listing's sake (B3), and a change of
    /// the tool list lets a new listing start.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// assert_eq!(shaper.route_client_message(call).to_server.len(), 1);
    /// assert!(shaper.abandon_listing().is_empty());
    /// // No new listing until the tool list changes.
    /// let again = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// assert!(shaper.route_client_message(again).to_server.is_empty());
    /// shaper.server_message(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    /// let third = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// assert_eq!(shaper.route_client_message(third).to_server.len(), 1);
    /// ```
    pub fn abandon_listing(&mut self) -> Vec<Vec<u8>> {
        self.listing.fail();
        self.release_queued().to_client
    }

    /// Whether a long server message whose top-level `id` or `method` (raw JSON) is
    /// known can be sent on before its end: it cannot need a change (SPEC B3). A
    /// response that passes so is no longer pending.
    ///
    /// ```
    /// let mut shaper = backstop_jsonrpc::Shaper::default();
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a"}}"#);
    /// shaper.client_message(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#);
    /// assert!(shaper.passes_early(None, Some(br#""notifications/message""#), false));
    /// assert!(!shaper.passes_early(Some(b"2"), None, true), "a tools/call result may be cut");
    /// assert!(!shaper.passes_early(Some(b"1"), None, false), "a resources/read error may be mapped (R3)");
    /// assert!(shaper.passes_early(Some(b"1"), None, true), "its result needs nothing");
    /// assert!(shaper.passes_early(Some(b"9"), None, false), "no such request");
    /// assert!(!shaper.passes_early(None, None, true), "a result, its id not known yet");
    /// ```
    pub fn passes_early(&mut self, id: Option<&[u8]>, method: Option<&[u8]>, result: bool) -> bool {
        if self.listing.in_flight() || self.listing.has_queued() {
            return false; // its order is the listing's to keep
        }
        if let Some(method) = method {
            if serde_json::from_slice::<&str>(method).ok()
                == Some("notifications/tools/list_changed")
            {
                self.catalog_state = CatalogState::Unknown;
                self.listing.tools_changed();
            }
            return true;
        }
        if id.is_none() && result {
            // A result whose id comes later: it needs nothing if no pending request's
            // result could (L1: a tools/call's; a listing's or a handshake's is read).
            return !self.pending.iter().any(|request| {
                !request.cancelled
                    && matches!(
                        request.kind,
                        RequestKind::ToolsCall { .. }
                            | RequestKind::ToolsList { .. }
                            | RequestKind::Initialize
                    )
            });
        }
        let Some(id) = id
            .and_then(|raw| serde_json::from_slice::<&RawValue>(raw).ok())
            .and_then(RequestId::from_raw)
        else {
            return false;
        };
        let passes = match self.pending.get(&id) {
            None => return true,
            Some(request) => match request.kind {
                RequestKind::Other => true,
                // A result (not an error) of a resource request needs nothing (R3).
                RequestKind::Resource { .. } => result,
                _ => request.cancelled,
            },
        };
        if passes {
            self.pending.remove(&id);
        }
        passes
    }

    /// The decision for a long server message from what a [`crate::scan::Scan`] held
    /// of it: a `tools/call` result with text blocks held in part is decided by the
    /// core as the whole would be ([`shape_tool_call_in_part`]); a message that was
    /// held whole is shaped as [`route_server_message`](Self::route_server_message)
    /// would; one that cannot need a change is sent as it came; anything else is
    /// [`LongDecision::NeedsWhole`].
    ///
    /// ```
    /// use backstop_jsonrpc::{Forward, Shaper, shaper::LongDecision, scan::Scan};
    /// let mut shaper = Shaper::default();
    /// let mut scan = Scan::new(1_000_000);
    /// scan.push(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#);
    /// let decision = shaper.long_server_message(&scan.finish());
    /// assert_eq!(decision, LongDecision::Route(backstop_jsonrpc::Route::forward(Forward::Unchanged)));
    /// ```
    pub fn long_server_message(&mut self, scanned: &Scanned) -> LongDecision {
        let unchanged = LongDecision::Route(Route::forward(Forward::Unchanged));
        if scanned.invalid {
            return unchanged;
        }
        if !scanned.dropped && scanned.holes.is_empty() {
            // Held whole: the skeleton is the message.
            return LongDecision::Route(self.route_server_message(&scanned.skeleton));
        }
        if scanned.batch || self.listing.in_flight() || self.listing.has_queued() {
            return LongDecision::NeedsWhole;
        }
        if scanned.method.is_some() {
            return match self.passes_early(None, scanned.method.as_deref(), false) {
                true => unchanged,
                false => LongDecision::NeedsWhole,
            };
        }
        let envelope = match scanned.overflowed {
            true => None,
            false => Envelope::parse(&scanned.skeleton),
        };
        let Some(envelope) = envelope.filter(Envelope::is_response) else {
            // Not a response we can read: only its id can say it needs nothing.
            return match self.passes_early(scanned.id.as_deref(), None, false) {
                true => unchanged,
                false => LongDecision::NeedsWhole,
            };
        };
        let Some(id) = envelope.request_id() else {
            return unchanged;
        };
        let Some(request) = self.pending.get(&id).cloned() else {
            return unchanged;
        };
        let shapes = match (&request.kind, &envelope.result, envelope.error) {
            _ if request.cancelled => false,
            (RequestKind::ToolsCall { .. }, Some(_), None) if !scanned.dropped => true,
            (RequestKind::Other, _, _) => false,
            (RequestKind::Resource { .. }, Some(_), None) => false,
            _ => return LongDecision::NeedsWhole,
        };
        let (true, RequestKind::ToolsCall { tool, arguments }, Some(result)) =
            (shapes, request.kind, envelope.result)
        else {
            self.pending.remove(&id);
            return unchanged;
        };
        let Some(result) = result
            .to_value()
            .and_then(|v| ToolResult::from_value(v).ok())
        else {
            self.pending.remove(&id);
            return unchanged;
        };
        let held = scanned.held_in_part(&result);
        let call = ToolCall {
            tool,
            arguments,
            session: request.session,
        };
        let (known, context) = self.call_context(call, result.is_error());
        let empty = ToolCatalog::new();
        let catalog = if known { &self.catalog } else { &empty };
        let Some(shaped) = shape_tool_call_in_part(catalog, &context, result, &held, &self.limit)
        else {
            return LongDecision::NeedsWhole;
        };
        self.pending.remove(&id);
        let id_json = envelope.id.map_or("null", RawValue::get);
        LongDecision::Route(Route::forward(self.forward_shaped(id_json, shaped)))
    }

    /// Record one client message; for a `tools/call`, its `params._meta`.
    fn client_element(&mut self, bytes: &[u8]) -> Option<Option<Map<String, Value>>> {
        let envelope = Envelope::parse(bytes)?;
        // `None`: a response to a server's request, or not a message.
        let method = envelope.method.as_deref()?;
        let params = envelope.params();
        if method == "notifications/cancelled" {
            let cancelled = params
                .request_id
                .and_then(crate::message::RequestId::from_raw);
            if let Some(request) = cancelled.and_then(|id| self.pending.get_mut(&id)) {
                request.cancelled = true;
            }
            return None;
        }
        if method == "notifications/initialized" && self.lifecycle.initialize {
            self.lifecycle.initialized = true;
        }
        // A notification has no id.
        let (Some(id), Some(id_raw)) = (envelope.request_id(), envelope.id) else {
            return None;
        };
        if method == "initialize" {
            self.lifecycle = Lifecycle {
                initialize: true,
                ..Lifecycle::default()
            };
            if let Some(raw) = envelope.params
                && let Ok(value) = serde_json::from_str::<Value>(raw.get())
            {
                self.handshake = Session::from_initialize(&value);
            }
        }
        let kind = match method {
            "initialize" => RequestKind::Initialize,
            "tools/list" => RequestKind::ToolsList {
                first_page: params.cursor.is_none(),
            },
            "tools/call" => match &params.name {
                Some(tool) => RequestKind::ToolsCall {
                    tool: tool.clone().into_owned(),
                    arguments: params.arguments.0,
                },
                None => RequestKind::Other,
            },
            m if m.starts_with("resources/") => RequestKind::Resource {
                method: m.to_owned(),
                uri: params.uri.as_deref().map(str::to_owned),
            },
            _ => RequestKind::Other,
        };
        let session = self.handshake.clone().or_request_meta(params.meta.as_ref());
        let call = matches!(kind, RequestKind::ToolsCall { .. }).then_some(params.meta);
        self.pending.insert(
            id,
            PendingRequest::new(id_raw.get().to_owned(), kind, session),
        );
        call
    }

    fn server_element(&mut self, bytes: &[u8]) -> Forward {
        let Some(envelope) = Envelope::parse(bytes) else {
            return Forward::Unchanged;
        };
        if envelope.method.as_deref() == Some("notifications/tools/list_changed") {
            self.catalog_state = CatalogState::Unknown;
            self.listing.tools_changed();
        }
        if !envelope.is_response() {
            return Forward::Unchanged;
        }
        let Some(request) = envelope
            .request_id()
            .and_then(|id| self.pending.remove(&id))
        else {
            return Forward::Unchanged;
        };
        if request.cancelled {
            return Forward::Unchanged; // E9
        }
        let id_json = envelope.id.map_or("null", RawValue::get);
        match (request.kind, envelope.result, envelope.error) {
            (RequestKind::Initialize, Some(result), _) => {
                self.lifecycle.answered = self.lifecycle.initialize;
                if let Some(value) = result.to_value() {
                    let negotiated = Session::from_initialize(&value).revision;
                    self.handshake.revision = negotiated.or(self.handshake.revision);
                }
                Forward::Unchanged
            }
            (RequestKind::ToolsList { first_page }, Some(result), _) => {
                self.learn_tools(&result, first_page);
                Forward::Unchanged
            }
            (RequestKind::ToolsCall { tool, arguments }, result, error) => {
                let call = ToolCall {
                    tool,
                    arguments,
                    session: request.session,
                };
                self.tool_call_response(id_json, call, result, error)
            }
            (RequestKind::Resource { method, uri }, None, Some(error)) => {
                self.resource_error(id_json, &request.session, &method, uri.as_deref(), error)
            }
            _ => Forward::Unchanged,
        }
    }

    fn learn_tools(&mut self, result: &ResultMembers, first_page: bool) {
        if let Some(value) = result.to_value() {
            self.learn_tools_value(&value, first_page);
        }
    }

    fn learn_tools_value(&mut self, value: &Value, first_page: bool) {
        if first_page {
            self.catalog = ToolCatalog::from_tools_list(value);
        } else {
            self.catalog.extend_from_tools_list(value);
        }
        let last_page = value.get("nextCursor").is_none_or(Value::is_null);
        let whole = first_page || self.catalog_state != CatalogState::Unknown;
        self.catalog_state = match (last_page, whole) {
            (true, true) => CatalogState::Complete,
            _ => CatalogState::Partial,
        };
    }

    fn tool_call_response(
        &mut self,
        id_json: &str,
        call: ToolCall,
        result: Option<ResultMembers>,
        error: Option<&RawValue>,
    ) -> Forward {
        let known = self.catalog.contains(&call.tool);
        let outcome = match (result, error) {
            (Some(result), None) => {
                let Some(value) = result.to_value() else {
                    return Forward::Unchanged;
                };
                match ToolResult::from_value(value) {
                    Ok(result) => Outcome::Result(result),
                    Err(_) => return Forward::Unchanged,
                }
            }
            (None, Some(error)) => {
                let Ok(error) = serde_json::from_str::<ProtocolError>(error.get()) else {
                    return Forward::Unchanged;
                };
                if error.code == REQUEST_CANCELLED {
                    return Forward::Unchanged; // E9, said by the server
                }
                if !known && !self.catalog_complete() && is_about_the_request(&error) {
                    return Forward::Unchanged;
                }
                Outcome::Failure(Failure::from_protocol_error(&error))
            }
            _ => return Forward::Unchanged,
        };
        let failed = match &outcome {
            Outcome::Failure(_) => true,
            Outcome::Result(result) => result.is_error(),
        };
        let (known, context) = self.call_context(call, failed);
        let empty = ToolCatalog::new();
        let catalog = if known { &self.catalog } else { &empty };
        let shaped = shape_tool_call(catalog, &context, outcome, &self.limit);
        self.forward_shaped(id_json, shaped)
    }

    /// The call's context, and whether the catalog is to be consulted for it: a tool
    /// is unknown (E8) only to a complete listing, and only when the call failed — a
    /// success from a tool the listing lacks is passed on, not replaced.
    fn call_context(&self, call: ToolCall, failed: bool) -> (bool, CallContext) {
        let known = self.catalog.contains(&call.tool) || (self.catalog_complete() && failed);
        let empty = ToolCatalog::new();
        let catalog = if known { &self.catalog } else { &empty };
        let context = catalog
            .context(&call.tool)
            .with_arguments(call.arguments)
            .with_client(call.session.client);
        (known, context)
    }

    /// What to send for a shaped call, its failure logged.
    fn forward_shaped(&mut self, id_json: &str, shaped: Shaped) -> Forward {
        let converted = shaped.log.is_some();
        if let Some(record) = shaped.log {
            self.record(record);
        }
        match shaped.response {
            Err(unknown_tool) => Forward::Rewritten(error_response(id_json, &unknown_tool)),
            Ok(result) if converted || shaped.truncation.is_some() => {
                Forward::Rewritten(result_response(id_json, &result))
            }
            Ok(_) => Forward::Unchanged,
        }
    }

    fn catalog_complete(&self) -> bool {
        self.catalog_state == CatalogState::Complete
    }

    /// The error answering a `resources/*` request, as the core maps it: a failure by
    /// family (P1), a server's own resource-not-found with the code of the request's
    /// revision and the request's uri (R3, P1), anything else unchanged (P2).
    fn resource_error(
        &mut self,
        id_json: &str,
        session: &Session,
        method: &str,
        uri: Option<&str>,
        error: &RawValue,
    ) -> Forward {
        let Ok(error) = serde_json::from_str::<ProtocolError>(error.get()) else {
            return Forward::Unchanged;
        };
        let shaped = shape_request_error(&error, method, session, uri);
        if let Some(record) = shaped.log {
            self.record(record);
        }
        if shaped.error == error {
            Forward::Unchanged
        } else {
            Forward::Rewritten(error_response(id_json, &shaped.error))
        }
    }

    fn record(&mut self, record: LogRecord) {
        self.counts.record(&record);
        if self.log.len() >= MAX_LOG_RECORDS {
            self.log.remove(0);
        }
        self.log.push(record);
    }
}

/// The members of a request's `_meta` that a client without a handshake sends in
/// every request (`io.modelcontextprotocol/…`: its revision, identity, capabilities),
/// for the shaper's own requests; `None` unless the revision is among them (then the
/// client is one of 2026-07-28, R2/R3).
fn stateless_meta(meta: Option<&Map<String, Value>>) -> Option<Map<String, Value>> {
    let meta = meta?;
    meta.contains_key(PROTOCOL_VERSION_META_KEY).then(|| {
        meta.iter()
            .filter(|(key, _)| key.starts_with(META_KEY_PREFIX))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    })
}

/// The namespace of the MCP specification's own `_meta` keys.
const META_KEY_PREFIX: &str = "io.modelcontextprotocol/";

/// What a pending `tools/call` was.
struct ToolCall {
    tool: String,
    arguments: Vec<String>,
    session: Session,
}

/// Whether a `tools/call` error is about the request rather than the tool's run: a
/// JSON-RPC-level code, or the server saying the tool does not exist. Without a
/// complete catalog such an error is not a failure of a known tool, and passes.
fn is_about_the_request(error: &ProtocolError) -> bool {
    let request_level = matches!(
        error.code,
        code::PARSE_ERROR | code::INVALID_REQUEST | code::METHOD_NOT_FOUND
    );
    request_level || error.message.to_ascii_lowercase().contains("unknown tool")
}
