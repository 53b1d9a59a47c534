//! The session machine behind [`crate::machine`] (see its docs).

mod answered_here;
mod early;
mod event;
mod lifecycle;
mod listing_hold;
mod own_listing;
mod pending;
mod shaping;
mod tasks;

use std::collections::VecDeque;

use serde_json::Value;

pub use answered_here::{ANSWERED_HERE_KEPT, AnsweredHere};
pub use event::{Answer, ClientRequest, Disposition, Response, ServerHead};
pub use listing_hold::{LISTING_PATIENCE, MAX_HELD_BYTES, MAX_HELD_MESSAGES};
pub use own_listing::{OWN_LISTING_ID_PREFIX, OwnRequest};
pub use pending::{DEFAULT_MAX_PENDING, PendingRequest, PendingRequests, RequestId, RequestKind};
pub use tasks::{MAX_TASKS, TaskTable};

use crate::limit::Limit;
use crate::log::{ErrorCounts, LogRecord};
use crate::session::Session;
use crate::tool_catalog::ToolCatalog;
use lifecycle::Lifecycle;
use listing_hold::ListingHold;
use own_listing::OwnListing;

/// The most log records kept until [`SessionMachine::take_log_records`] takes them;
/// older ones are dropped first (their counts stay in
/// [`SessionMachine::error_counts`]).
pub const MAX_LOG_RECORDS: usize = 1024;

/// The method that says the server's tool list changed.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The method of a task's state, sent by the server as it changes (2026-07-28 tasks
/// extension): see [`SessionMachine::server_task_status`].
pub const TASK_STATUS: &str = "notifications/tasks";

/// The namespace of the MCP specification's own `_meta` keys.
const META_KEY_PREFIX: &str = "io.modelcontextprotocol/";

/// The sans-IO session machine of one connection (see the [module docs](crate::machine)).
#[derive(Debug, Clone)]
pub struct SessionMachine {
    limit: Limit,
    handshake: Session,
    lifecycle: Lifecycle,
    catalog: ToolCatalog,
    pending: PendingRequests,
    answered_here: AnsweredHere,
    listing: OwnListing,
    hold: ListingHold,
    tasks: TaskTable,
    log: VecDeque<LogRecord>,
    counts: ErrorCounts,
    in_process: bool,
    outside_session: bool,
    strict: bool,
    server_stamp: Option<Value>,
}

impl Default for SessionMachine {
    fn default() -> Self {
        Self::new(Limit::default())
    }
}

impl SessionMachine {
    /// A machine applying `limit` to `tools/call` results (L1), with the default bound
    /// on pending requests.
    ///
    /// ```
    /// let machine = backstop_core::SessionMachine::new(backstop_core::Limit::new(50_000).unwrap());
    /// assert_eq!(machine.limit().max_bytes(), 50_000);
    /// ```
    pub fn new(limit: Limit) -> Self {
        Self {
            limit,
            handshake: Session::default(),
            lifecycle: Lifecycle::default(),
            catalog: ToolCatalog::new(),
            pending: PendingRequests::default(),
            answered_here: AnsweredHere::default(),
            listing: OwnListing::default(),
            hold: ListingHold::default(),
            tasks: TaskTable::default(),
            log: VecDeque::new(),
            counts: ErrorCounts::new(),
            in_process: false,
            outside_session: false,
            strict: false,
            server_stamp: None,
        }
    }

    /// This machine for an adapter that runs the server's handlers itself (rmcp,
    /// Python): its own listing needs no handshake, is tried again on the next call
    /// after a failure, and is made for every name the catalog lacks (the server's
    /// `list_changed` does not pass through such an adapter, and a listing in process
    /// costs little); the results it hands in are
    /// counted with what the wire adds to them after it (`resultType`, the [server
    /// stamp](Self::set_server_stamp): L4, R4); and [`before_running`](Self::before_running)
    /// answers what need not run.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId}};
    /// let mut machine = SessionMachine::default().in_process();
    /// let call = ClientRequest::new(RequestId::Number("1".into()), "1", "tools/call").tool("echo");
    /// let own = machine.client_request(call, true, Instant::now()).expect("list first (E8, R5)");
    /// assert_eq!((own.method, own.cursor()), ("tools/list", None));
    /// ```
    pub fn in_process(mut self) -> Self {
        self.in_process = true;
        self
    }

    /// This machine for a request outside any session (a gateway's request without
    /// `Mcp-Session-Id`): the server took it without a handshake of its own, so it
    /// takes backstop's listing so too, with the request's revision in `_meta` when it
    /// has one (2026-07-28) and none when it has none (a 2025 client of a stateless
    /// server). E8 and L15 need the listing (R5).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId}};
    /// let call = || ClientRequest::new(RequestId::Number("1".into()), "1", "tools/call").tool("echo");
    /// assert!(SessionMachine::default().client_request(call(), true, Instant::now()).is_none(), "no handshake seen");
    /// let mut machine = SessionMachine::default();
    /// machine.set_outside_session();
    /// let own = machine.client_request(call(), true, Instant::now()).expect("E8, R5");
    /// assert_eq!(own.to_json(), r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#);
    /// ```
    pub fn set_outside_session(&mut self) {
        self.outside_session = true;
    }

    /// Strict mode (V6, off by default): [`before_running`](Self::before_running)
    /// rejects a call that gives an argument the tool's input schema does not name.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether strict mode (V6) is on.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The identity an in-process server's SDK stamps on results of 2026-07-28 (see
    /// [`CallContext::with_server_stamp`](crate::arguments::CallContext::with_server_stamp)); `None` for none.
    pub fn set_server_stamp(&mut self, stamp: Option<Value>) {
        self.server_stamp = stamp.filter(Value::is_object);
    }

    /// This machine sharing `tasks` (another machine's [`tasks`](Self::tasks)): the
    /// machines of an in-process server's sessions, or of its stateless requests, know
    /// the tasks any of them saw created, as the server's own task store does (L1, E11).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId, Response}};
    /// let mut first = SessionMachine::default();
    /// let call = RequestId::Number("1".into());
    /// first.client_request(ClientRequest::new(call.clone(), "1", "tools/call").tool("research"), false, Instant::now());
    /// let handle = serde_json::json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    /// first.server_response(&call, Response::Result(handle), Instant::now());
    /// let second = SessionMachine::default().with_tasks(first.tasks().clone());
    /// assert_eq!(second.tasks().tool_of("t-1").as_deref(), Some("research"));
    /// ```
    pub fn with_tasks(mut self, tasks: TaskTable) -> Self {
        self.tasks = tasks;
        self
    }

    /// This machine with at most `max` pending requests remembered (B2).
    pub fn with_max_pending(mut self, max: usize) -> Self {
        self.pending = PendingRequests::new(max);
        self
    }

    /// The limit in force.
    pub fn limit(&self) -> &Limit {
        &self.limit
    }

    /// The tools the server listed.
    pub fn catalog(&self) -> &ToolCatalog {
        &self.catalog
    }

    /// Start from a listing made for an earlier request (R5: a stateless request that
    /// may use it, [`ToolCatalog::may_serve`]); it is listed again as any other when
    /// it goes stale.
    pub fn set_catalog(&mut self, catalog: ToolCatalog) {
        self.catalog = catalog;
    }

    /// The requests not answered yet.
    pub fn pending(&self) -> &PendingRequests {
        &self.pending
    }

    /// What the handshake said of the session.
    pub fn session(&self) -> &Session {
        &self.handshake
    }

    /// Counts of converted failures per `<error_type>:<method>` (G3).
    pub fn error_counts(&self) -> &ErrorCounts {
        &self.counts
    }

    /// Take the log records of the failures converted since the last call (G1, G2).
    pub fn take_log_records(&mut self) -> Vec<LogRecord> {
        self.log.drain(..).collect()
    }

    /// The tool task `task_id` runs, if a `tools/call` of this session created it.
    fn task_tool(&self, task_id: Option<&str>) -> Option<String> {
        self.tasks.tool_of(task_id?)
    }

    /// The tasks `tools/call` requests created, and the tool each runs.
    pub fn tasks(&self) -> &TaskTable {
        &self.tasks
    }
}

#[cfg(test)]
mod tests;
