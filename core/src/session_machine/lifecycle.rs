//! The session's life: the handshake (`initialize`, `notifications/initialized`),
//! the requests the client sends and the notifications either side sends, backstop's
//! own listing (when it starts, its pages, its end: E8, R5), and the requests the
//! adapter answers itself when a transport fails (B5).

use std::time::Instant;

use serde_json::{Map, Value};

use super::own_listing::OwnRequest;
use super::pending::{PendingRequest, RequestId, RequestKind};
use super::{ClientRequest, META_KEY_PREFIX, SessionMachine, TOOLS_LIST_CHANGED};
use crate::session::{PROTOCOL_VERSION_META_KEY, Session};
use crate::tool_catalog::{ListingStep, ToolLookup};

/// Where the session's handshake is: the server takes requests once the client's
/// `initialize` has been answered and the client has sent `notifications/initialized`
/// (in whichever order they are seen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Lifecycle {
    /// The client sent `initialize` (none: a client of 2026-07-28 without a handshake,
    /// or a machine that joined late).
    pub(super) initialize: bool,
    /// The server answered it with a result.
    pub(super) answered: bool,
    /// The client sent `notifications/initialized` after its `initialize`.
    pub(super) initialized: bool,
    /// A `tools/call` wanted a listing before the handshake was done (the client did
    /// not wait for its `initialize` to be answered): one is due once it is.
    pub(super) listing_due: bool,
}

impl Lifecycle {
    /// The server answered the client's `initialize` with a result.
    pub(super) fn initialize_answered(&mut self) {
        self.answered = self.initialize;
    }
}

impl SessionMachine {
    /// A request of the client. It is remembered until answered. When `may_send` (the
    /// adapter can send requests of its own) and it is a `tools/call` of a tool the
    /// catalog cannot judge at `now` (incomplete, or stale by its `ttlMs`: R5), in a
    /// session the server takes requests in, the machine starts its own listing: send
    /// the returned request to the server first (E8).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId}};
    /// let mut machine = SessionMachine::default();
    /// let meta = serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    /// let mut call = ClientRequest::new(RequestId::Number("1".into()), "1", "tools/call").tool("echo");
    /// call.meta = meta.as_object().cloned();
    /// let own = machine.client_request(call, true, Instant::now()).unwrap();
    /// assert_eq!(own.to_json(), r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
    /// ```
    pub fn client_request(
        &mut self,
        request: ClientRequest,
        may_send: bool,
        now: Instant,
    ) -> Option<OwnRequest> {
        if request.method == "initialize" {
            self.lifecycle = Lifecycle {
                initialize: true,
                ..Lifecycle::default()
            };
            if let Some(params) = &request.initialize {
                self.handshake = Session::from_initialize(params);
            }
        }
        let kind = match (request.method.as_str(), request.tool) {
            ("initialize", _) => RequestKind::Initialize,
            ("tools/list", _) => RequestKind::ToolsList {
                first_page: !request.cursor,
            },
            ("tools/call", Some(tool)) => RequestKind::ToolsCall {
                tool,
                arguments: request.arguments,
                argument_shapes: request.argument_shapes,
            },
            // The result of a task a call created (2025-11-25): shaped as that call's
            // would have been (L1, E11).
            ("tasks/result", _) if let Some(tool) = self.task_tool(request.task_id.as_deref()) => {
                RequestKind::ToolsCall {
                    tool,
                    arguments: Vec::new(),
                    argument_shapes: None,
                }
            }
            // The state of such a task (2026-07-28): its outcome inside, shaped so.
            ("tasks/get", _) if let Some(tool) = self.task_tool(request.task_id.as_deref()) => {
                RequestKind::TaskState { tool }
            }
            (method, _) if method.starts_with("resources/") => RequestKind::Resource {
                method: method.to_owned(),
                uri: request.uri,
            },
            _ => RequestKind::Other,
        };
        let lists_first = match &kind {
            _ if request.method != "tools/call" => false,
            // In process the server's `list_changed` is not seen, and a listing costs
            // little: a name the catalog lacks is always listed for.
            RequestKind::ToolsCall { tool, .. } => match self.catalog.lookup(tool, now) {
                ToolLookup::Known => false,
                ToolLookup::Unknown => self.in_process,
                ToolLookup::ListFirst => true,
            },
            _ => false,
        };
        let session = match request.session {
            Some(session) => session,
            None => self.handshake.clone(),
        }
        .or_request_meta(request.meta.as_ref());
        self.answered_here.remove(&request.id);
        self.pending.insert(
            request.id,
            PendingRequest::new(request.id_json, kind, session),
        );
        if !(lists_first && may_send) {
            return None;
        }
        if self.in_process {
            self.listing.tools_changed(); // a failed listing is tried again
        }
        let listable = match self.lifecycle {
            _ if self.in_process || self.outside_session => {
                Some(stateless_meta(request.meta.as_ref()))
            }
            Lifecycle {
                initialize: false, ..
            } => stateless_meta(request.meta.as_ref()).map(Some),
            Lifecycle {
                answered: true,
                initialized: true,
                ..
            } => Some(None),
            _ => None,
        };
        let Some(meta) = listable else {
            // The handshake is under way: the listing waits for it (R5).
            self.lifecycle.listing_due = self.lifecycle.initialize;
            return None;
        };
        let start = !self.listing.in_flight() && !self.listing.failed();
        start.then(|| {
            self.hold.listing_started(now);
            self.listing.start(meta)
        })
    }

    /// The listing a `tools/call` wanted while the session's handshake was under way
    /// (the client sent it before its `initialize` was answered, or before
    /// `notifications/initialized`), once the handshake is done: send it to the
    /// server now, and hold the call's answer for it as for any listing (E8, R5).
    /// `None` before, and after it was given once. A transport asks before and after
    /// each server message: the listing must reach the server after the client's
    /// `notifications/initialized`, and the call's answer waits for it.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId, Response}};
    /// let mut machine = SessionMachine::default();
    /// let init = RequestId::Number("0".into());
    /// let mut initialize = ClientRequest::new(init.clone(), "0", "initialize");
    /// initialize.initialize = Some(serde_json::json!({"protocolVersion": "2025-11-25"}));
    /// machine.client_request(initialize, true, Instant::now());
    /// machine.client_notification("notifications/initialized", None);
    /// let call = ClientRequest::new(RequestId::Number("1".into()), "1", "tools/call").tool("ech");
    /// assert!(machine.client_request(call, true, Instant::now()).is_none(), "not yet answered");
    /// assert!(machine.deferred_listing(Instant::now()).is_none());
    ///
    /// let answer = serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}});
    /// machine.server_response(&init, Response::Result(answer), Instant::now());
    /// let own = machine.deferred_listing(Instant::now()).expect("due now");
    /// assert_eq!(own.to_json(), r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#);
    /// assert!(machine.deferred_listing(Instant::now()).is_none(), "once");
    /// ```
    pub fn deferred_listing(&mut self, now: Instant) -> Option<OwnRequest> {
        let Lifecycle {
            answered: true,
            initialized: true,
            listing_due: true,
            ..
        } = self.lifecycle
        else {
            return None;
        };
        self.lifecycle.listing_due = false;
        let start = !self.listing.in_flight() && !self.listing.failed();
        start.then(|| {
            self.hold.listing_started(now);
            self.listing.start(None)
        })
    }

    /// A notification of the client: `notifications/cancelled` marks its request
    /// (`cancelled`: the `requestId`) so that the answer passes as it came (E9);
    /// `notifications/initialized` moves the handshake on.
    pub fn client_notification(&mut self, method: &str, cancelled: Option<&RequestId>) {
        match method {
            "notifications/cancelled" => {
                if let Some(request) = cancelled.and_then(|id| self.pending.get_mut(id)) {
                    request.cancelled = true;
                }
            }
            // Before an `initialize` it says nothing the next `initialize` keeps.
            "notifications/initialized" => self.lifecycle.initialized = true,
            _ => {}
        }
    }

    /// A notification (or request) of the server: `notifications/tools/list_changed`
    /// makes the catalog incomplete, and lets a listing of backstop's own start again.
    pub fn server_notification(&mut self, method: &str) {
        if method == TOOLS_LIST_CHANGED {
            self.catalog.tools_changed();
            self.listing.tools_changed();
        }
    }

    /// Whether backstop's own listing has a page in flight.
    pub fn listing_in_flight(&self) -> bool {
        self.listing.in_flight()
    }

    /// How many pages of its own listing the machine has asked for.
    #[cfg(test)]
    pub(crate) fn listing_requests_sent(&self) -> u64 {
        self.listing.requests_sent()
    }

    /// Whether `id` answers backstop's own listing (read here, never forwarded).
    pub fn answers_own_listing(&self, id: &RequestId) -> bool {
        self.listing.answers(id)
    }

    /// The answer to a page of backstop's own listing (`result`: its result, `None` for
    /// an error): the next page's request, or `None` when the listing is over (done,
    /// failed, or past the page limit).
    pub fn own_listing_answer(
        &mut self,
        result: Option<&Value>,
        now: Instant,
    ) -> Option<OwnRequest> {
        let first = self.listing.first_page();
        let step = match result {
            Some(result) => self.catalog.learn_page(result, first, now),
            None => ListingStep::Stop,
        };
        match step {
            ListingStep::Next(cursor) => {
                self.hold.page_sent(now);
                Some(self.listing.next_page(cursor))
            }
            ListingStep::Complete => {
                self.listing.finish();
                self.hold.stop();
                None
            }
            ListingStep::Stop => {
                self.end_listing();
                None
            }
        }
    }

    /// End backstop's own listing: its answer can no longer come (the transport that
    /// carried it failed). No new listing starts until the tool list changes.
    pub fn abandon_listing(&mut self) {
        self.end_listing();
    }

    /// The server is gone: every pending request, oldest first, to answer with an
    /// error. Nothing stays pending, and the own listing ends. Each is answered here
    /// ([`answer_here`](Self::answer_here)).
    pub fn drain_pending(&mut self) -> Vec<PendingRequest> {
        self.end_listing();
        let drained = self.pending.drain();
        for request in &drained {
            let id = serde_json::from_str::<Value>(&request.id_json).ok();
            if let Some(id) = id.as_ref().and_then(RequestId::from_value) {
                self.answered_here.insert(id);
            }
        }
        drained
    }

    /// Forget request `id`: its answer passed unread, or was lost (B1, B2, B4).
    pub fn forget(&mut self, id: &RequestId) -> Option<PendingRequest> {
        self.pending.remove(id)
    }

    /// The adapter answers request `id` itself: the transport that carried it failed
    /// or timed out (B1, B2). It is no longer pending, and an answer the server sends
    /// for it later is dropped ([`Disposition::Drop`](super::Disposition::Drop), B5).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, Disposition, RequestId, ServerHead}};
    /// let mut machine = SessionMachine::default();
    /// let id = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(id.clone(), "1", "tools/call").tool("t"), false, Instant::now());
    /// machine.answer_here(&id);
    /// let late = ServerHead { id: Some(&id), result: true, ended: true, ..ServerHead::default() };
    /// assert!(machine.pending().is_empty());
    /// assert_eq!(machine.server_head(late), Disposition::Drop);
    /// // The client sends the id again: its new answer is the server's to give.
    /// machine.client_request(ClientRequest::new(id.clone(), "1", "ping"), false, Instant::now());
    /// assert_eq!(machine.server_head(late), Disposition::Pass);
    /// ```
    pub fn answer_here(&mut self, id: &RequestId) -> Option<PendingRequest> {
        self.answered_here.insert(id.clone());
        self.pending.remove(id)
    }

    /// backstop's own listing failed or was given up: no new one until the tool list
    /// changes, and nothing more is held for it.
    fn end_listing(&mut self) {
        self.listing.fail();
        self.hold.stop();
    }
}

/// The members of a request's `_meta` that a client without a handshake sends in every
/// request (`io.modelcontextprotocol/…`: its revision, identity, capabilities), for
/// backstop's own requests; `None` unless the revision is among them (then the client
/// is one of 2026-07-28, R2, R3).
fn stateless_meta(meta: Option<&Map<String, Value>>) -> Option<Map<String, Value>> {
    let meta = meta?;
    meta.contains_key(PROTOCOL_VERSION_META_KEY).then(|| {
        meta.iter()
            .filter(|(key, _)| key.starts_with(META_KEY_PREFIX))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    })
}
