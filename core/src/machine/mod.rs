//! The session machine: everything backstop knows of one client–server connection (or
//! one stateless stream of requests), and every decision it makes about the messages
//! on it (SPEC A0). quinn-proto's `Connection` is the model: no I/O, no async, no
//! clock — the adapter parses, feeds each message in with the time, and sends what the
//! machine says.
//!
//! What it knows: the revision and client identity (from `initialize`, or per request
//! from `_meta` on 2026-07-28: R2, R3), the tool [`catalog`](crate::catalog) (pages,
//! completeness, caching hints), the [pending requests](PendingRequests) (what each was,
//! which tool, whether it was cancelled), and backstop's own listing (E8 before a first
//! call). What it decides, for each answer of the server: pass it unchanged, or send
//! this result or error instead ([`Answer`]); for each request of the client: whether to
//! send a request of its own first ([`OwnRequest`]).
//!
//! ```
//! use std::time::Instant;
//! use backstop_core::machine::{Answer, ClientRequest, RequestId, Response, SessionMachine};
//! use serde_json::json;
//!
//! let mut machine = SessionMachine::default();
//! let now = Instant::now();
//! let list = RequestId::Number("1".into());
//! machine.client_request(ClientRequest::new(list.clone(), "1", "tools/list"), false, Instant::now());
//! let tools = json!({"tools": [{"name": "capture_pane"}]});
//! assert_eq!(machine.server_response(&list, Response::Result(tools), now), Answer::Unchanged);
//!
//! let call = RequestId::Number("2".into());
//! machine.client_request(ClientRequest::new(call.clone(), "2", "tools/call").tool("capture_pane"), false, Instant::now());
//! let failed = backstop_core::ProtocolError::new(-32603, "Internal error: Pane not found: %99");
//! let Answer::Result { id_json, result, .. } = machine.server_response(&call, Response::Error(failed), now) else {
//!     panic!("a failure of a known tool becomes a result (E1)")
//! };
//! assert_eq!((id_json.as_str(), result.is_error()), ("2", true));
//! assert_eq!(result.content[0].as_text(), Some("Pane not found: %99"));
//! assert_eq!(machine.error_counts().get("InternalError:tools/call"), 1);
//! ```

mod answered_here;
mod own_listing;
mod pending;
mod tasks;

use std::collections::VecDeque;
use std::time::Instant;

use serde_json::{Map, Value};

pub use answered_here::{ANSWERED_HERE_KEPT, AnsweredHere};
pub use own_listing::{OWN_LISTING_ID_PREFIX, OwnRequest};
pub use pending::{DEFAULT_MAX_PENDING, PendingRequest, PendingRequests, RequestId, RequestKind};
pub use tasks::{MAX_TASKS, TaskTable};

use crate::arguments::ArgumentShapes;
use crate::call::{
    Outcome, Shaped, check_arguments, shape_tool_call, shape_tool_call_in_part,
    shape_tool_call_texts,
};
use crate::catalog::{ListingStep, ToolCatalog, ToolLookup};
use crate::error_result::CallContext;
use crate::failure::Failure;
use crate::limit::{HeldInPart, Limit, Truncation};
use crate::log::{ErrorCounts, LogRecord};
use crate::protocol_error::ProtocolError;
use crate::request_error::shape_request_error;
use crate::result::ToolResult;
use crate::session::{PROTOCOL_VERSION_META_KEY, Session};
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

/// A request of the client, as the adapter read it: its id, its method, and the parts
/// of its params the machine reads.
///
/// ```
/// use backstop_core::machine::{ClientRequest, RequestId};
/// let request = ClientRequest::new(RequestId::Number("3".into()), "3", "tools/call")
///     .tool("run").arguments(["cmd"]);
/// assert_eq!(request.tool.as_deref(), Some("run"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRequest {
    /// The id.
    pub id: RequestId,
    /// The id as the client wrote it (JSON text), to answer with.
    pub id_json: String,
    /// The method.
    pub method: String,
    /// `params.name` (a `tools/call`'s tool).
    pub tool: Option<String>,
    /// The names in `params.arguments`.
    pub arguments: Vec<String>,
    /// The shapes of `params.arguments`' values (never the values, V3), for a problem a
    /// validator reports at `__root__` to be placed where the tool's input schema says
    /// (V2).
    pub argument_shapes: Option<ArgumentShapes>,
    /// Whether `params.cursor` is present (a further page of a listing).
    pub cursor: bool,
    /// `params.uri` (a `resources/*` request's).
    pub uri: Option<String>,
    /// `params.taskId` (a `tasks/*` request's).
    pub task_id: Option<String>,
    /// `params._meta`.
    pub meta: Option<Map<String, Value>>,
    /// An `initialize` request's whole params (`protocolVersion`, `clientInfo`).
    pub initialize: Option<Value>,
    /// What the handshake of the session this request came in said (read with
    /// [`Session::from_initialize`]), for an adapter whose one machine serves many
    /// sessions, or that joined after the handshake (in process): the request's
    /// revision and client come from it rather than from the machine's own (R2, R3).
    pub session: Option<Session>,
}

impl ClientRequest {
    /// A request with no params read yet.
    pub fn new(id: RequestId, id_json: impl Into<String>, method: impl Into<String>) -> Self {
        Self {
            id,
            id_json: id_json.into(),
            method: method.into(),
            tool: None,
            arguments: Vec::new(),
            argument_shapes: None,
            cursor: false,
            uri: None,
            task_id: None,
            meta: None,
            initialize: None,
            session: None,
        }
    }

    /// With `params.name`.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// With the names of `params.arguments`.
    pub fn arguments(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.arguments = names.into_iter().map(Into::into).collect();
        self
    }

    /// With `params.arguments` as their shapes: the names, and what locates a problem
    /// at `__root__` (see [`ArgumentShapes`]).
    ///
    /// ```
    /// use backstop_core::ArgumentShapes;
    /// use backstop_core::machine::{ClientRequest, RequestId};
    /// let arguments = serde_json::json!({"count": "hunter2", "verbose": true});
    /// let request = ClientRequest::new(RequestId::Number("3".into()), "3", "tools/call")
    ///     .tool("takes_int").argument_shapes(ArgumentShapes::of(arguments.as_object().unwrap()));
    /// assert_eq!(request.arguments, ["count", "verbose"]);
    /// ```
    pub fn argument_shapes(mut self, shapes: ArgumentShapes) -> Self {
        self.arguments = shapes.names().map(str::to_owned).collect();
        self.argument_shapes = Some(shapes);
        self
    }

    /// With `params._meta`.
    pub fn meta(mut self, meta: Option<Map<String, Value>>) -> Self {
        self.meta = meta;
        self
    }

    /// With what the handshake of the session it came in said (see
    /// [`session`](Self::session)).
    pub fn in_session(mut self, session: Option<Session>) -> Self {
        self.session = session;
        self
    }
}

/// A server's answer to a request, as the adapter read it.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// `result`.
    Result(Value),
    /// `error`.
    Error(ProtocolError),
    /// In process: the tool raised, and this is what the adapter read of the exception.
    Failure(Failure),
    /// Not read: [`SessionMachine::answer_matters`] said nothing depends on it, or it
    /// could not be read (it passes as it came).
    Unread,
}

/// What to send for a server's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The answer as it came.
    Unchanged,
    /// This result instead, under the request's id.
    Result {
        /// The request's id as the client wrote it.
        id_json: String,
        /// The result.
        result: ToolResult,
        /// The report of the cut, when the limit cut it (L4).
        truncation: Option<Truncation>,
    },
    /// This task state instead, under the request's id (2026-07-28): the task's
    /// outcome shaped as its call's would have been — `result` cut (L1), or a failure
    /// made a `completed` task with the call's `isError` result (E11).
    TaskState {
        /// The request's id as the client wrote it.
        id_json: String,
        /// The task state, the answer's `result`.
        task: Value,
        /// The report of the cut, when the limit cut the task's result (L4).
        truncation: Option<Truncation>,
    },
    /// This error instead, under the request's id.
    Error {
        /// The request's id as the client wrote it.
        id_json: String,
        /// The error.
        error: ProtocolError,
    },
}

/// Where the session's handshake is: the server takes requests once the client's
/// `initialize` has been answered and the client has sent `notifications/initialized`
/// (in whichever order they are seen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Lifecycle {
    /// The client sent `initialize` (none: a client of 2026-07-28 without a handshake,
    /// or a machine that joined late).
    initialize: bool,
    /// The server answered it with a result.
    answered: bool,
    /// The client sent `notifications/initialized` after its `initialize`.
    initialized: bool,
    /// A `tools/call` wanted a listing before the handshake was done (the client did
    /// not wait for its `initialize` to be answered): one is due once it is.
    listing_due: bool,
}

/// The sans-IO session machine of one connection (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct SessionMachine {
    limit: Limit,
    handshake: Session,
    lifecycle: Lifecycle,
    catalog: ToolCatalog,
    pending: PendingRequests,
    answered_here: AnsweredHere,
    listing: OwnListing,
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
    /// let machine = backstop_core::machine::SessionMachine::new(backstop_core::Limit::new(50_000).unwrap());
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
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
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
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
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
    /// [`CallContext::with_server_stamp`]); `None` for none.
    pub fn set_server_stamp(&mut self, stamp: Option<Value>) {
        self.server_stamp = stamp.filter(Value::is_object);
    }

    /// This machine sharing `tasks` (another machine's [`tasks`](Self::tasks)): the
    /// machines of an in-process server's sessions, or of its stateless requests, know
    /// the tasks any of them saw created, as the server's own task store does (L1, E11).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, Response, SessionMachine};
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

    /// A request of the client. It is remembered until answered. When `may_send` (the
    /// adapter can send requests of its own) and it is a `tools/call` of a tool the
    /// catalog cannot judge at `now` (incomplete, or stale by its `ttlMs`: R5), in a
    /// session the server takes requests in, the machine starts its own listing: send
    /// the returned request to the server first (E8).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
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
        start.then(|| self.listing.start(meta))
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
    /// use backstop_core::machine::{ClientRequest, RequestId, Response, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// let init = RequestId::Number("0".into());
    /// let mut initialize = ClientRequest::new(init.clone(), "0", "initialize");
    /// initialize.initialize = Some(serde_json::json!({"protocolVersion": "2025-11-25"}));
    /// machine.client_request(initialize, true, Instant::now());
    /// machine.client_notification("notifications/initialized", None);
    /// let call = ClientRequest::new(RequestId::Number("1".into()), "1", "tools/call").tool("ech");
    /// assert!(machine.client_request(call, true, Instant::now()).is_none(), "not yet answered");
    /// assert!(machine.deferred_listing().is_none());
    ///
    /// let answer = serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}});
    /// machine.server_response(&init, Response::Result(answer), Instant::now());
    /// let own = machine.deferred_listing().expect("due now");
    /// assert_eq!(own.to_json(), r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#);
    /// assert!(machine.deferred_listing().is_none(), "once");
    /// ```
    pub fn deferred_listing(&mut self) -> Option<OwnRequest> {
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
        start.then(|| self.listing.start(None))
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

    /// Whether the answer to request `id` must be read and handed to
    /// [`server_response`](Self::server_response) (`result`: whether it is a result):
    /// false when nothing depends on it, so it passes unread.
    pub fn answer_matters(&self, id: &RequestId, result: bool) -> bool {
        self.pending
            .get(id)
            .is_some_and(|request| request.answer_matters(result))
    }

    /// The server's answer to request `id`: what to send for it. The request is no
    /// longer pending.
    pub fn server_response(&mut self, id: &RequestId, response: Response, now: Instant) -> Answer {
        let Some(request) = self.pending.remove(id) else {
            return Answer::Unchanged;
        };
        if request.cancelled {
            return Answer::Unchanged; // E9
        }
        match (request.kind, response) {
            (RequestKind::Initialize, Response::Result(result)) => {
                self.lifecycle.answered = self.lifecycle.initialize;
                let negotiated = Session::from_initialize(&result).revision;
                self.handshake.revision = negotiated.or(self.handshake.revision);
                Answer::Unchanged
            }
            (RequestKind::ToolsList { first_page }, Response::Result(result)) => {
                self.catalog.learn_page(&result, first_page, now);
                Answer::Unchanged
            }
            (RequestKind::ToolsCall { tool, .. }, Response::Result(value))
                if self.tasks.learn_handle(&value, &tool) =>
            {
                Answer::Unchanged // a task's handle: its result comes later (L1)
            }
            (
                RequestKind::ToolsCall {
                    tool,
                    arguments,
                    argument_shapes,
                },
                response,
            ) => {
                let outcome = match response {
                    Response::Result(value) => match ToolResult::from_value(value) {
                        Ok(result) => Outcome::Result(result),
                        Err(_) => return Answer::Unchanged,
                    },
                    Response::Error(error) => {
                        Outcome::Failure(Failure::from_protocol_error(&error))
                    }
                    Response::Failure(failure) => Outcome::Failure(failure),
                    Response::Unread => return Answer::Unchanged,
                };
                let call = PendingCall {
                    tool,
                    arguments,
                    argument_shapes,
                    session: request.session,
                };
                let shaped = self.shape_call(call, outcome);
                self.answer(request.id_json, shaped)
            }
            (RequestKind::TaskState { tool }, Response::Result(task)) => {
                let call = PendingCall {
                    tool,
                    arguments: Vec::new(),
                    argument_shapes: None,
                    session: request.session,
                };
                match self.shape_task_state(task, call) {
                    Some((task, truncation)) => Answer::TaskState {
                        id_json: request.id_json,
                        task,
                        truncation,
                    },
                    None => Answer::Unchanged,
                }
            }
            (RequestKind::Resource { method, uri }, Response::Error(error)) => {
                let shaped = shape_request_error(&error, &method, &request.session, uri.as_deref());
                if let Some(record) = shaped.log {
                    self.record(record);
                }
                match shaped.error == error {
                    true => Answer::Unchanged,
                    false => Answer::Error {
                        id_json: request.id_json,
                        error: shaped.error,
                    },
                }
            }
            _ => Answer::Unchanged,
        }
    }

    /// A `notifications/tasks` of the server (2026-07-28), `params` being the task's
    /// state: for a task a `tools/call` of this session created, the state with its
    /// outcome shaped as the call's would have been (L1, E11), and the report of the
    /// cut; `None` when it passes as it came.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, Response, SessionMachine};
    /// use serde_json::json;
    /// let mut machine = SessionMachine::default();
    /// let call = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(call.clone(), "1", "tools/call").tool("capture_pane"), false, Instant::now());
    /// let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    /// machine.server_response(&call, Response::Result(handle), Instant::now());
    ///
    /// let failed = json!({"taskId": "t-1", "status": "failed",
    ///     "error": {"code": -32603, "message": "Internal error: Pane not found: %5"}});
    /// let (task, _) = machine.server_task_status(failed).expect("E11");
    /// assert_eq!(task["status"], "completed");
    /// assert_eq!(task["result"]["isError"], true);
    /// assert_eq!(task["result"]["content"][0]["text"], "Pane not found: %5");
    /// assert!(machine.server_task_status(json!({"taskId": "t-1", "status": "working"})).is_none());
    /// ```
    pub fn server_task_status(&mut self, params: Value) -> Option<(Value, Option<Truncation>)> {
        let call = self.task_status_call(&params)?;
        self.shape_task_state(params, call)
    }

    /// The call whose task a `notifications/tasks` (`params`) is of, if this session
    /// knows it.
    fn task_status_call(&self, params: &Value) -> Option<PendingCall> {
        let task_id = params.get("taskId").and_then(Value::as_str);
        let tool = self.task_tool(task_id)?;
        let meta = params.get("_meta").and_then(Value::as_object);
        Some(PendingCall {
            tool,
            arguments: Vec::new(),
            argument_shapes: None,
            session: self.handshake.clone().or_request_meta(meta),
        })
    }

    /// [`server_response`](Self::server_response) for a `tools/call` result the adapter
    /// holds in part (`held`, B3): `None` when the decision needs the whole result
    /// (then the request stays pending, and the adapter reads it whole).
    pub fn server_result_in_part(
        &mut self,
        id: &RequestId,
        result: ToolResult,
        held: &HeldInPart,
    ) -> Option<Answer> {
        let request = self.pending.get(id)?;
        let call = PendingCall::of(request)?;
        if request.cancelled {
            self.pending.remove(id);
            return Some(Answer::Unchanged);
        }
        let in_process = self.in_process;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            let result = with_wire_fields(in_process, context, result);
            shape_tool_call_in_part(catalog, context, result, held, limit)
        })?;
        let request = self.pending.remove(id)?;
        Some(self.answer(request.id_json, shaped))
    }

    /// [`server_response`](Self::server_response) for the answer to a `tasks/get`
    /// (2026-07-28) whose task state (`state`, the answer's `result`) the adapter holds
    /// with the strings of its outcome held in part (`held`, B3): `None` when the
    /// decision needs the whole state (then the request stays pending, and the adapter
    /// reads it whole).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::limit::HeldInPart;
    /// use backstop_core::machine::{Answer, ClientRequest, RequestId, Response, SessionMachine};
    /// use backstop_core::Limit;
    /// use serde_json::json;
    /// let mut machine = SessionMachine::new(Limit::new(1_000).unwrap());
    /// let call = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(call.clone(), "1", "tools/call").tool("logs"), false, Instant::now());
    /// let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    /// machine.server_response(&call, Response::Result(handle), Instant::now());
    /// let get = RequestId::Number("2".into());
    /// let mut request = ClientRequest::new(get.clone(), "2", "tasks/get");
    /// request.task_id = Some("t-1".into());
    /// machine.client_request(request, false, Instant::now());
    ///
    /// // A text 9 MB longer than the tail the adapter holds of it.
    /// let tail = "line\n".repeat(HeldInPart::min_held_bytes(1_000) / 5 + 1);
    /// let state = json!({"taskId": "t-1", "status": "completed",
    ///     "result": {"content": [{"type": "text", "text": tail}]}});
    /// let held = HeldInPart::default().with_text_head(0, 9_000_000);
    /// let Some(Answer::TaskState { task, truncation, .. }) = machine.server_task_state_in_part(&get, state, &held)
    /// else { panic!("cut from what is held (L1, B3)") };
    /// assert!(task["result"]["content"][0]["text"].as_str().unwrap().ends_with("line\n"));
    /// assert_eq!(truncation.unwrap().original_bytes, 9_000_000 + tail.len());
    /// ```
    pub fn server_task_state_in_part(
        &mut self,
        id: &RequestId,
        state: Value,
        held: &HeldInPart,
    ) -> Option<Answer> {
        let request = self.pending.get(id)?;
        let RequestKind::TaskState { tool } = &request.kind else {
            return None;
        };
        if request.cancelled {
            self.pending.remove(id);
            return Some(Answer::Unchanged);
        }
        let call = PendingCall {
            tool: tool.clone(),
            arguments: Vec::new(),
            argument_shapes: None,
            session: request.session.clone(),
        };
        let shaped = self.shape_task_state_in_part(state, call, held)?;
        let request = self.pending.remove(id)?;
        Some(match shaped {
            Some((task, truncation)) => Answer::TaskState {
                id_json: request.id_json,
                task,
                truncation,
            },
            None => Answer::Unchanged,
        })
    }

    /// [`server_task_status`](Self::server_task_status) for a `notifications/tasks`
    /// whose outcome the adapter holds in part (`held`, B3): `None` when the decision
    /// needs the whole notification, `Some(None)` when it passes as it came.
    pub fn server_task_status_in_part(
        &mut self,
        params: Value,
        held: &HeldInPart,
    ) -> Option<Option<(Value, Option<Truncation>)>> {
        let call = self.task_status_call(&params)?;
        self.shape_task_state_in_part(params, call, held)
    }

    /// [`server_response`](Self::server_response) for a `tools/call` result an
    /// in-process adapter holds with its plain texts apart (`shell`: the result with
    /// those texts empty; `texts`: them, borrowed where the adapter holds them, so that
    /// a text far over the cap is never copied whole: B2, L13).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{Answer, ClientRequest, RequestId, SessionMachine};
    /// use backstop_core::{Limit, ToolResult};
    /// let mut machine = SessionMachine::new(Limit::new(1_000).unwrap()).in_process();
    /// let id = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(id.clone(), "1", "tools/call").tool("logs"), false, Instant::now());
    /// let scrollback = "line\n".repeat(100_000);
    /// let Answer::Result { result, truncation, .. } =
    ///     machine.server_result_texts(&id, ToolResult::text(""), &[&scrollback])
    /// else { panic!("cut (L1)") };
    /// assert!(result.content[0].as_text().unwrap().ends_with("line\n"));
    /// assert_eq!(truncation.unwrap().original_bytes, scrollback.len());
    /// ```
    pub fn server_result_texts(
        &mut self,
        id: &RequestId,
        shell: ToolResult,
        texts: &[&str],
    ) -> Answer {
        let Some(request) = self.pending.remove(id) else {
            return Answer::Unchanged;
        };
        let Some(call) = PendingCall::of(&request).filter(|_| !request.cancelled) else {
            return Answer::Unchanged; // not a call, or cancelled (E9)
        };
        let in_process = self.in_process;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            let shell = with_wire_fields(in_process, context, shell);
            shape_tool_call_texts(catalog, context, shell, texts, limit)
        });
        self.answer(request.id_json, shaped)
    }

    /// In process, before the adapter runs the pending `tools/call` `id`: the answer
    /// that makes running it needless, or `None` to run it. E8 when the catalog is
    /// complete and fresh and lacks the tool (R5: else list first, see
    /// [`client_request`](Self::client_request)); V6 in [strict](Self::with_strict)
    /// mode. An answered call is no longer pending.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{Answer, ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default().in_process();
    /// let now = Instant::now();
    /// let id = RequestId::Number("1".into());
    /// let own = machine.client_request(ClientRequest::new(id.clone(), "1", "tools/call").tool("ehco"), true, now);
    /// assert!(own.is_some());
    /// let page = serde_json::json!({"tools": [{"name": "echo"}]});
    /// assert_eq!(machine.own_listing_answer(Some(&page), now), None, "one page: complete");
    /// let Some(Answer::Error { error, .. }) = machine.before_running(&id, now) else { panic!("E8") };
    /// assert_eq!((error.code, error.message.as_str()), (-32602, "Unknown tool: ehco"));
    /// ```
    pub fn before_running(&mut self, id: &RequestId, now: Instant) -> Option<Answer> {
        let request = self.pending.get(id)?;
        let RequestKind::ToolsCall { tool, .. } = &request.kind else {
            return None;
        };
        // The common case, a known tool without strict mode, copies nothing.
        let unknown = self.catalog.lookup(tool, now) == ToolLookup::Unknown;
        if !unknown && !self.strict {
            return None;
        }
        let call = PendingCall::of(request)?;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            if let Err(error) = catalog.check(&context.tool) {
                return Some(Shaped::unknown_tool(error));
            }
            let failure = check_arguments(context)?;
            Some(shape_tool_call(
                catalog,
                context,
                Outcome::Failure(failure),
                limit,
            ))
        })?;
        let request = self.pending.remove(id)?;
        Some(self.answer(request.id_json, shaped))
    }

    /// Whether a server message whose top-level `id` or `method` is known can be sent
    /// on before the rest of it is read: nothing about it can need a change (B3).
    /// `result`: it is a result, not an error. A response that passes so is no longer
    /// pending; a `list_changed` notification is taken in.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// let (read, call) = (RequestId::Number("1".into()), RequestId::Number("2".into()));
    /// let mut request = ClientRequest::new(read.clone(), "1", "resources/read");
    /// request.uri = Some("a".into());
    /// machine.client_request(request, false, Instant::now());
    /// machine.client_request(ClientRequest::new(call.clone(), "2", "tools/call").tool("t"), false, Instant::now());
    /// assert!(machine.passes_early(None, Some("notifications/message"), false));
    /// assert!(!machine.passes_early(Some(&call), None, true), "a tools/call result may be cut");
    /// assert!(!machine.passes_early(Some(&read), None, false), "a resources/read error may be mapped (R3)");
    /// assert!(machine.passes_early(Some(&read), None, true), "its result needs nothing");
    /// assert!(!machine.passes_early(None, None, true), "a result, its id not known yet");
    /// ```
    pub fn passes_early(
        &mut self,
        id: Option<&RequestId>,
        method: Option<&str>,
        result: bool,
    ) -> bool {
        if self.listing.in_flight() {
            return false; // its order is the listing's to keep
        }
        if let Some(method) = method {
            self.server_notification(method);
            // A task's state may carry its call's outcome (L1, E11).
            return method != TASK_STATUS || self.tasks.is_empty();
        }
        let Some(id) = id else {
            // A result whose id comes later: it needs nothing if no pending request's
            // result could, and it cannot be one to drop (B5).
            return result
                && !self.may_drop_answers()
                && !self.pending.iter().any(|r| r.answer_matters(true));
        };
        let passes = self.answer_passes(id, result);
        if passes {
            self.pending.remove(id);
        }
        passes
    }

    /// Whether an answer to `id` (a result, or an error) may be sent as it came: it
    /// needs no change and is not one to drop (B5). Unlike
    /// [`passes_early`](Self::passes_early), it leaves the request pending: for an
    /// adapter that sends a message it could not read as a response, whose reading
    /// says later which request it answers.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// let read = RequestId::Number("4".into());
    /// machine.client_request(ClientRequest::new(read.clone(), "4", "resources/read"), false, Instant::now());
    /// assert!(machine.answer_passes(&read, true));
    /// assert_eq!(machine.pending().len(), 1, "still pending");
    /// machine.answer_here(&read);
    /// assert!(!machine.answer_passes(&read, true), "answered here: dropped");
    /// ```
    pub fn answer_passes(&self, id: &RequestId, result: bool) -> bool {
        !self.answer_matters(id, result) && !self.drops_answer(id)
    }

    /// Whether the answer to `id`, a result of which `bytes` have come, is one an
    /// adapter cuts without holding it (SPEC B3, B4): the result of a pending
    /// `tools/call` the limit applies to, not cancelled, already over the cap —
    /// whether or not a listing of backstop's own is in flight: an answer is never held
    /// whole for it (B3), and is cut with what is known of its tool when it ends. The
    /// adapter then holds only what a cut keeps; if the answer turns out not to be
    /// JSON, or one the kept parts cannot decide, it is answered with an error for its
    /// id, never sent as it came.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// use backstop_core::Limit;
    /// let mut machine = SessionMachine::new(Limit::new(1_000).unwrap().only_tools(["logs"]));
    /// let (logs, other) = (RequestId::Number("1".into()), RequestId::Number("2".into()));
    /// machine.client_request(ClientRequest::new(logs.clone(), "1", "tools/call").tool("logs"), false, Instant::now());
    /// machine.client_request(ClientRequest::new(other.clone(), "2", "tools/call").tool("other"), false, Instant::now());
    /// assert!(machine.cuts_unheld(&logs, 1_001));
    /// assert!(!machine.cuts_unheld(&logs, 1_000), "not over the cap yet");
    /// assert!(!machine.cuts_unheld(&other, 5_000), "a tool the limit leaves alone");
    /// machine.client_notification("notifications/cancelled", Some(&logs));
    /// assert!(!machine.cuts_unheld(&logs, 5_000), "passed as it came (E9)");
    /// ```
    pub fn cuts_unheld(&self, id: &RequestId, bytes: u64) -> bool {
        let Some(request) = self.pending.get(id) else {
            return false;
        };
        let RequestKind::ToolsCall { tool, .. } = &request.kind else {
            return false;
        };
        !request.cancelled && self.limit.applies_to(tool) && bytes > self.limit.max_bytes() as u64
    }

    /// Whether `id` is a pending `tools/call`: its answer is shaped with the catalog (an
    /// adapter holds it while backstop's own listing is in flight).
    pub fn is_pending_tool_call(&self, id: &RequestId) -> bool {
        self.pending
            .get(id)
            .is_some_and(|request| matches!(request.kind, RequestKind::ToolsCall { .. }))
    }

    /// The tool a pending `tools/call` calls (or whose task a pending `tasks/get` asks
    /// after), if `id` is one: a streaming adapter holds of its result what the tool's
    /// keep policy can keep
    /// ([`Limit::held_ends`], L16).
    pub fn pending_tool(&self, id: &RequestId) -> Option<&str> {
        match &self.pending.get(id)?.kind {
            RequestKind::ToolsCall { tool, .. } | RequestKind::TaskState { tool } => Some(tool),
            _ => None,
        }
    }

    /// The tool task `task_id` runs, if a `tools/call` of this session created it.
    fn task_tool(&self, task_id: Option<&str>) -> Option<String> {
        self.tasks.tool_of(task_id?)
    }

    /// The tasks `tools/call` requests created, and the tool each runs.
    pub fn tasks(&self) -> &TaskTable {
        &self.tasks
    }

    /// Whether backstop's own listing has a page in flight.
    pub fn listing_in_flight(&self) -> bool {
        self.listing.in_flight()
    }

    /// A number that changes with each page of backstop's own listing: an adapter with
    /// a clock stops holding server messages for it when the same number stays too
    /// long (B1); the listing stays in flight, and its answer is still read.
    pub fn listing_requests_sent(&self) -> u64 {
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
            ListingStep::Next(cursor) => Some(self.listing.next_page(cursor)),
            ListingStep::Complete => {
                self.listing.finish();
                None
            }
            ListingStep::Stop => {
                self.listing.fail();
                None
            }
        }
    }

    /// End backstop's own listing: its answer can no longer come (the transport that
    /// carried it failed). No new listing starts until the tool list changes.
    pub fn abandon_listing(&mut self) {
        self.listing.fail();
    }

    /// The server is gone: every pending request, oldest first, to answer with an
    /// error. Nothing stays pending, and the own listing ends. Each is answered here
    /// ([`answer_here`](Self::answer_here)).
    pub fn drain_pending(&mut self) -> Vec<PendingRequest> {
        self.listing.fail();
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
    /// for it later is dropped ([`drops_answer`](Self::drops_answer), B5).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// let id = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(id.clone(), "1", "tools/call").tool("t"), false, Instant::now());
    /// machine.answer_here(&id);
    /// assert!(machine.pending().is_empty() && machine.drops_answer(&id));
    /// // The client sends the id again: its new answer is the server's to give.
    /// machine.client_request(ClientRequest::new(id.clone(), "1", "ping"), false, Instant::now());
    /// assert!(!machine.drops_answer(&id));
    /// ```
    pub fn answer_here(&mut self, id: &RequestId) -> Option<PendingRequest> {
        self.answered_here.insert(id.clone());
        self.pending.remove(id)
    }

    /// Whether an answer of the server for request `id` is dropped: backstop answered
    /// that request itself, and a second answer must never reach the client (B5).
    pub fn drops_answer(&self, id: &RequestId) -> bool {
        self.answered_here.contains(id) && self.pending.get(id).is_none()
    }

    /// Whether any answer of the server could be dropped ([`drops_answer`](Self::drops_answer)).
    pub fn may_drop_answers(&self) -> bool {
        !self.answered_here.is_empty()
    }

    /// Whether a server message must be read to know what to send for it: a request
    /// is pending (its answer may be shaped), a listing of backstop's own is in flight
    /// (its answers are read), a task is known (its state, in a `notifications/tasks`,
    /// carries its call's outcome, L1, E11), or an answer may be dropped (B5). When
    /// none holds, only `notifications/tools/list_changed` changes what the machine
    /// knows, and every other message passes unread.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// assert!(!machine.reads_server_messages());
    /// machine.client_request(ClientRequest::new(RequestId::Number("1".into()), "1", "ping"), false, Instant::now());
    /// assert!(machine.reads_server_messages());
    /// ```
    pub fn reads_server_messages(&self) -> bool {
        !self.pending.is_empty()
            || self.listing.in_flight()
            || !self.tasks.is_empty()
            || self.may_drop_answers()
    }

    /// Run `decide` with the catalog and call context of a pending call: the catalog
    /// only where it knows the tool (or is complete), so that nothing is decided from a
    /// catalog that cannot judge the name.
    fn with_call_context<T>(
        &self,
        call: PendingCall,
        decide: impl FnOnce(&ToolCatalog, &CallContext, &Limit) -> T,
    ) -> T {
        let empty = ToolCatalog::new();
        let known = self.catalog.contains(&call.tool) || self.catalog.is_complete();
        let catalog = if known { &self.catalog } else { &empty };
        // R3: an unknown revision gets the newest behaviour. In process the SDK writes
        // the result for it, so what it adds there is counted (L4); behind a proxy the
        // wire is what was read.
        let revision = match self.in_process {
            true => Some(call.session.revision()),
            false => call.session.revision,
        };
        // L2, L18, E12: the limits of the client that reads the result.
        let limit = self.limit.for_client(call.session.client.as_ref());
        let context = catalog
            .context(&call.tool)
            .with_arguments(call.arguments)
            .with_argument_shapes(call.argument_shapes)
            .with_client(call.session.client)
            .with_revision(revision)
            .with_server_stamp(self.server_stamp.clone());
        decide(catalog, &context, &limit)
    }

    /// The answer to `call`, decided for `outcome` (E, V, L).
    fn shape_call(&self, call: PendingCall, outcome: Outcome) -> Shaped {
        let in_process = self.in_process;
        self.with_call_context(call, |catalog, context, limit| {
            let outcome = match outcome {
                Outcome::Result(result) => {
                    Outcome::Result(with_wire_fields(in_process, context, result))
                }
                failure => failure,
            };
            shape_tool_call(catalog, context, outcome, limit)
        })
    }

    /// A task state (2026-07-28) whose outcome is shaped as `call`'s would have been:
    /// a `completed` task's `result` as the call's result (L1), a `failed` task's
    /// `error` as the call's failure, the task then `completed` with that result (E11).
    /// `None` when there is no outcome yet, or it passes as it came (unchanged, or an
    /// error that passes: E8, E10).
    fn shape_task_state(
        &mut self,
        mut task: Value,
        call: PendingCall,
    ) -> Option<(Value, Option<Truncation>)> {
        let state = task.as_object_mut()?;
        let outcome = match state.get("status").and_then(Value::as_str)? {
            "completed" => Outcome::Result(ToolResult::from_value(state.remove("result")?).ok()?),
            "failed" => {
                let error = serde_json::from_value(state.remove("error")?).ok()?;
                Outcome::Failure(Failure::from_protocol_error(&error))
            }
            _ => return None,
        };
        let shaped = self.shape_call(call, outcome);
        self.with_shaped_outcome(task, shaped)
    }

    /// [`shape_task_state`](Self::shape_task_state) for a `completed` state whose
    /// result the adapter holds in part (`held`, B3): `None` when the decision needs
    /// the whole state, `Some(None)` when it passes as it came.
    fn shape_task_state_in_part(
        &mut self,
        mut task: Value,
        call: PendingCall,
        held: &HeldInPart,
    ) -> Option<Option<(Value, Option<Truncation>)>> {
        let state = task.as_object_mut()?;
        if state.get("status").and_then(Value::as_str) != Some("completed") {
            return None;
        }
        let result = ToolResult::from_value(state.remove("result")?).ok()?;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            shape_tool_call_in_part(catalog, context, result, held, limit)
        })?;
        Some(self.with_shaped_outcome(task, shaped))
    }

    /// `task` (its outcome taken out) with the shaped outcome as its `result`, the
    /// task `completed`; `None` when the outcome passes as it came.
    fn with_shaped_outcome(
        &mut self,
        mut task: Value,
        shaped: Shaped,
    ) -> Option<(Value, Option<Truncation>)> {
        if let Some(record) = shaped.log {
            self.record(record);
        }
        let result = match (shaped.unchanged, shaped.response) {
            (false, Ok(result)) => serde_json::to_value(result).ok()?,
            _ => return None,
        };
        let state = task.as_object_mut()?;
        state.insert("status".into(), "completed".into());
        state.insert("result".into(), result);
        Some((task, shaped.truncation))
    }

    fn answer(&mut self, id_json: String, shaped: Shaped) -> Answer {
        if let Some(record) = shaped.log {
            self.record(record);
        }
        match (shaped.unchanged, shaped.response) {
            (true, _) => Answer::Unchanged,
            (false, Ok(result)) => Answer::Result {
                id_json,
                result,
                truncation: shaped.truncation,
            },
            (false, Err(error)) => Answer::Error { id_json, error },
        }
    }

    fn record(&mut self, record: LogRecord) {
        self.counts.record(&record);
        if self.log.len() >= MAX_LOG_RECORDS {
            self.log.pop_front();
        }
        self.log.push_back(record);
    }
}

/// What a pending `tools/call` was.
struct PendingCall {
    tool: String,
    arguments: Vec<String>,
    argument_shapes: Option<ArgumentShapes>,
    session: Session,
}

impl PendingCall {
    /// What `request` was, when it is a `tools/call`.
    fn of(request: &PendingRequest) -> Option<Self> {
        let RequestKind::ToolsCall {
            tool,
            arguments,
            argument_shapes,
        } = &request.kind
        else {
            return None;
        };
        Some(Self {
            tool: tool.clone(),
            arguments: arguments.clone(),
            argument_shapes: argument_shapes.clone(),
            session: request.session.clone(),
        })
    }
}

/// `result` as the wire will carry it (L4, R4): with what an in-process server's SDK
/// adds after the adapter (behind a proxy, what was read is what the wire carries).
fn with_wire_fields(in_process: bool, context: &CallContext, mut result: ToolResult) -> ToolResult {
    if in_process {
        context.add_wire_fields(&mut result);
    }
    result
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Revision;
    use serde_json::json;

    fn id(n: u32) -> RequestId {
        RequestId::Number(n.to_string())
    }

    fn call(n: u32, tool: &str) -> ClientRequest {
        ClientRequest::new(id(n), n.to_string(), "tools/call").tool(tool)
    }

    fn listed(tools: &[&str]) -> SessionMachine {
        let mut machine = SessionMachine::default();
        machine.client_request(
            ClientRequest::new(id(0), "0", "tools/list"),
            false,
            Instant::now(),
        );
        let tools: Vec<Value> = tools.iter().map(|t| json!({"name": t})).collect();
        let answer = machine.server_response(
            &id(0),
            Response::Result(json!({"tools": tools})),
            Instant::now(),
        );
        assert_eq!(answer, Answer::Unchanged);
        machine
    }

    fn respond(machine: &mut SessionMachine, n: u32, response: Response) -> Answer {
        machine.server_response(&id(n), response, Instant::now())
    }

    fn err(code: i64, message: &str) -> Response {
        Response::Error(ProtocolError::new(code, message))
    }

    #[test]
    fn e8_from_a_complete_listing_only() {
        let mut machine = listed(&["list_panes"]);
        machine.client_request(call(1, "list_pane"), false, Instant::now());
        let answer = respond(&mut machine, 1, err(-32602, "Unknown tool: list_pane"));
        let Answer::Error { id_json, error } = answer else {
            panic!("E8: {answer:?}")
        };
        assert_eq!((id_json.as_str(), error.code), ("1", -32602));
        assert_eq!(
            error.data.unwrap()["suggestion"],
            "Did you mean 'list_panes'?"
        );

        // The tool list changed: the server's own word passes as it came.
        machine.server_notification(TOOLS_LIST_CHANGED);
        machine.client_request(call(2, "list_pane"), false, Instant::now());
        assert_eq!(
            respond(&mut machine, 2, err(-32602, "Unknown tool: list_pane")),
            Answer::Unchanged
        );
        // A success is the server's word that the tool exists after all.
        machine.client_request(call(3, "brand_new"), false, Instant::now());
        let ok = json!({"content": [{"type": "text", "text": "ok"}]});
        assert_eq!(
            respond(&mut machine, 3, Response::Result(ok)),
            Answer::Unchanged
        );
    }

    #[test]
    fn r5_a_machine_given_a_listing_decides_e8_without_listing_again() {
        let listed = listed(&["list_panes"]);
        let mut machine = SessionMachine::default();
        machine.set_catalog(listed.catalog().clone());
        let own = machine.client_request(call(1, "list_pane"), true, Instant::now());
        assert!(
            own.is_none(),
            "no listing of its own: the one given is complete"
        );
        let Answer::Error { error, .. } =
            respond(&mut machine, 1, err(-32602, "Unknown tool: list_pane"))
        else {
            panic!("E8")
        };
        assert_eq!(
            error.data.unwrap()["suggestion"],
            "Did you mean 'list_panes'?"
        );
    }

    /// A `tasks/result` request for task `task_id`.
    fn task_result(n: u32, task_id: &str) -> ClientRequest {
        let mut request = ClientRequest::new(id(n), n.to_string(), "tasks/result");
        request.task_id = Some(task_id.to_owned());
        request
    }

    #[test]
    fn l1_e11_a_task_s_result_is_shaped_as_its_call_s() {
        let mut machine = SessionMachine::new(Limit::new(400).unwrap());
        machine.client_request(call(1, "research"), false, Instant::now());
        let handle = json!({"task": {"taskId": "t-1", "status": "working"}});
        assert_eq!(
            respond(&mut machine, 1, Response::Result(handle)),
            Answer::Unchanged,
            "the handle passes as it came"
        );
        assert_eq!(machine.tasks().tool_of("t-1").as_deref(), Some("research"));

        // L1: the result, when it comes, is cut as the call's would be.
        machine.client_request(task_result(2, "t-1"), false, Instant::now());
        let report = json!({"content": [{"type": "text", "text": "line\n".repeat(500)}]});
        let Answer::Result {
            result, truncation, ..
        } = respond(&mut machine, 2, Response::Result(report))
        else {
            panic!("cut")
        };
        assert!(truncation.is_some() && result.wire_size() <= 400);

        // E11: a failed task is a failure of the call that created it.
        machine.client_request(task_result(3, "t-1"), false, Instant::now());
        let Answer::Result { result, .. } =
            respond(&mut machine, 3, err(-32603, "Internal error: boom"))
        else {
            panic!("E11")
        };
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.content[0].as_text(), Some("boom"));

        // A task this session did not create: its result passes as it came.
        machine.client_request(task_result(4, "t-9"), false, Instant::now());
        assert!(!machine.answer_matters(&id(4), true));
    }

    /// A `tasks/get` request for task `task_id` (2026-07-28).
    fn task_get(n: u32, task_id: &str) -> ClientRequest {
        let mut request = ClientRequest::new(id(n), n.to_string(), "tasks/get");
        request.task_id = Some(task_id.to_owned());
        request
    }

    /// A task state of the 2026-07-28 tasks extension, with `outcome`'s members.
    fn task_state(task_id: &str, status: &str, outcome: Value) -> Value {
        let mut state = json!({"taskId": task_id, "status": status, "ttlMs": 900000,
            "createdAt": "2026-12-02T19:42:40Z", "resultType": "complete"});
        state
            .as_object_mut()
            .unwrap()
            .extend(outcome.as_object().unwrap().clone());
        state
    }

    #[test]
    fn l1_e11_a_2026_task_s_state_is_shaped_as_its_call_s() {
        let mut machine = SessionMachine::new(Limit::new(400).unwrap());
        machine.client_request(call(1, "research"), false, Instant::now());
        let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
        assert_eq!(
            respond(&mut machine, 1, Response::Result(handle)),
            Answer::Unchanged
        );
        assert_eq!(machine.tasks().tool_of("t-1").as_deref(), Some("research"));

        // Working: nothing to shape, and nothing read twice.
        machine.client_request(task_get(2, "t-1"), false, Instant::now());
        assert!(
            !machine.answer_matters(&id(2), false),
            "an error about tasks/get passes"
        );
        let working = task_state("t-1", "working", json!({}));
        assert_eq!(
            respond(&mut machine, 2, Response::Result(working)),
            Answer::Unchanged
        );

        // L1: the result inside is cut as the call's would be; the rest stays.
        machine.client_request(task_get(3, "t-1"), false, Instant::now());
        let report =
            json!({"result": {"content": [{"type": "text", "text": "line\n".repeat(500)}]}});
        let Answer::TaskState {
            id_json,
            task,
            truncation,
        } = respond(
            &mut machine,
            3,
            Response::Result(task_state("t-1", "completed", report)),
        )
        else {
            panic!("cut")
        };
        assert_eq!(id_json, "3");
        assert!(truncation.is_some());
        let result = ToolResult::from_value(task["result"].clone()).unwrap();
        assert!(result.wire_size() <= 400, "{}", result.wire_size());
        assert_eq!(
            (task["status"].as_str(), task["ttlMs"].as_u64()),
            (Some("completed"), Some(900000))
        );
        assert_eq!(task["taskId"], "t-1");

        // Under the cap: as it came.
        machine.client_request(task_get(4, "t-1"), false, Instant::now());
        let small = json!({"result": {"content": [{"type": "text", "text": "done"}]}});
        let small = task_state("t-1", "completed", small);
        assert_eq!(
            respond(&mut machine, 4, Response::Result(small)),
            Answer::Unchanged
        );

        // E11: failed becomes completed, the error the call's isError result.
        machine.client_request(task_get(5, "t-1"), false, Instant::now());
        let error =
            json!({"error": {"code": -32603, "message": "Internal error: Pane not found: %5"}});
        let Answer::TaskState { task, .. } = respond(
            &mut machine,
            5,
            Response::Result(task_state("t-1", "failed", error)),
        ) else {
            panic!("E11")
        };
        assert_eq!(task["status"], "completed");
        assert!(task.get("error").is_none());
        let result = ToolResult::from_value(task["result"].clone()).unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.content[0].as_text(), Some("Pane not found: %5"));
        assert_eq!(
            machine.error_counts().get("InternalError:tools/call"),
            1,
            "G3"
        );

        // E10: an error about the request stays the task's error.
        machine.client_request(task_get(6, "t-1"), false, Instant::now());
        let negotiation = json!({"error": {"code": -32021, "message": "missing capability"}});
        let negotiation = task_state("t-1", "failed", negotiation);
        assert_eq!(
            respond(&mut machine, 6, Response::Result(negotiation)),
            Answer::Unchanged
        );

        // A task this session did not create passes as it came.
        machine.client_request(task_get(7, "t-9"), false, Instant::now());
        assert!(!machine.answer_matters(&id(7), true));
    }

    #[test]
    fn r5_a_request_outside_any_session_lists_without_a_handshake() {
        let now = Instant::now();
        let mut machine = SessionMachine::default();
        assert!(
            machine.client_request(call(1, "t"), true, now).is_none(),
            "no handshake seen"
        );
        let mut outside = SessionMachine::default();
        outside.set_outside_session();
        let own = outside
            .client_request(call(2, "t"), true, now)
            .expect("E8, R5");
        assert_eq!(
            (own.method, own.params.is_empty()),
            ("tools/list", true),
            "a 2025 request: no _meta"
        );
        let mut newer = SessionMachine::default();
        newer.set_outside_session();
        let meta =
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 1});
        let own = newer
            .client_request(call(3, "t").meta(meta.as_object().cloned()), true, now)
            .expect("E8, R5");
        assert_eq!(
            own.params["_meta"],
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
        );
    }

    #[test]
    fn r5_a_call_during_the_handshake_lists_once_the_handshake_is_done() {
        let now = Instant::now();
        let initialize = || {
            let mut request = ClientRequest::new(id(0), "0", "initialize");
            request.initialize = Some(json!({"protocolVersion": "2025-11-25"}));
            request
        };
        let answered = || Response::Result(json!({"protocolVersion": "2025-11-25"}));
        let mut machine = SessionMachine::default();
        machine.client_request(initialize(), true, now);
        assert!(machine.client_request(call(1, "t"), true, now).is_none());
        respond(&mut machine, 0, answered());
        assert!(machine.deferred_listing().is_none(), "not initialized yet");
        machine.client_notification("notifications/initialized", None);
        let own = machine.deferred_listing().expect("due");
        assert_eq!(own.method, "tools/list");
        assert!(machine.listing_in_flight());
        assert!(machine.deferred_listing().is_none(), "given once");

        // A call that may not send (a transport without own requests) makes none due.
        let mut quiet = SessionMachine::default();
        quiet.client_request(initialize(), true, now);
        quiet.client_request(call(1, "t"), false, now);
        respond(&mut quiet, 0, answered());
        quiet.client_notification("notifications/initialized", None);
        assert!(quiet.deferred_listing().is_none());

        // A call the catalog judges (it knows the tool) makes none due either.
        let mut known = listed(&["t"]);
        known.client_request(initialize(), true, now);
        known.client_request(call(1, "t"), true, now);
        respond(&mut known, 0, answered());
        known.client_notification("notifications/initialized", None);
        assert!(known.deferred_listing().is_none());

        // A new `initialize` forgets the listing the last handshake owed.
        let mut again = SessionMachine::default();
        again.client_request(initialize(), true, now);
        again.client_request(call(1, "t"), true, now);
        again.client_request(initialize(), true, now);
        respond(&mut again, 0, answered());
        again.client_notification("notifications/initialized", None);
        assert!(again.deferred_listing().is_none());
    }

    #[test]
    fn r5_a_due_listing_waits_for_one_in_flight() {
        let now = Instant::now();
        let mut machine = SessionMachine::default();
        let mut initialize = ClientRequest::new(id(0), "0", "initialize");
        initialize.initialize = Some(json!({"protocolVersion": "2025-11-25"}));
        machine.client_request(initialize, true, now);
        machine.client_request(call(1, "t"), true, now);
        respond(
            &mut machine,
            0,
            Response::Result(json!({"protocolVersion": "2025-11-25"})),
        );
        machine.client_notification("notifications/initialized", None);
        // Another call lists before the due listing is sent: one listing, not two.
        assert!(machine.client_request(call(2, "u"), true, now).is_some());
        assert!(machine.deferred_listing().is_none(), "one in flight");
        assert_eq!(machine.listing_requests_sent(), 1);
    }

    #[test]
    fn l16_the_tool_of_a_pending_call_or_task_state_is_known() {
        let now = Instant::now();
        let mut machine = SessionMachine::default();
        machine.client_request(call(1, "research"), false, now);
        assert_eq!(machine.pending_tool(&id(1)), Some("research"));
        let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
        respond(&mut machine, 1, Response::Result(handle));
        machine.client_request(task_get(2, "t-1"), false, now);
        assert_eq!(
            machine.pending_tool(&id(2)),
            Some("research"),
            "a tasks/get's task"
        );
        machine.client_request(task_get(3, "t-9"), false, now);
        assert_eq!(machine.pending_tool(&id(3)), None, "a task no call created");
        machine.client_request(ClientRequest::new(id(4), "4", "ping"), false, now);
        assert_eq!(machine.pending_tool(&id(4)), None);

        // A machine given this one's tasks knows them too.
        let other = SessionMachine::default().with_tasks(machine.tasks().clone());
        assert_eq!(other.tasks().tool_of("t-1").as_deref(), Some("research"));
        assert!(SessionMachine::default().tasks().tool_of("t-1").is_none());
    }

    #[test]
    fn e8_only_a_tools_call_starts_a_listing_not_a_task_s_result() {
        // A session ready for backstop's listing, whose catalog is incomplete.
        let now = Instant::now();
        let mut machine = SessionMachine::default();
        machine.client_request(ClientRequest::new(id(0), "0", "initialize"), true, now);
        respond(
            &mut machine,
            0,
            Response::Result(json!({"protocolVersion": "2025-11-25"})),
        );
        machine.client_notification("notifications/initialized", None);
        machine.client_request(call(1, "research"), false, now);
        let handle = json!({"task": {"taskId": "t-1", "status": "working"}});
        respond(&mut machine, 1, Response::Result(handle));
        assert!(
            machine
                .client_request(task_result(2, "t-1"), true, now)
                .is_none(),
            "tasks/result is shaped as a call, but lists nothing"
        );
        assert!(
            machine
                .client_request(call(3, "research"), true, now)
                .is_some(),
            "a call lists"
        );
    }

    #[test]
    fn b3_l1_a_task_s_outcome_held_in_part_is_shaped_as_the_whole_would_be() {
        let now = Instant::now();
        let mut machine = SessionMachine::new(Limit::new(1_000).unwrap());
        machine.client_request(call(1, "research"), false, now);
        let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
        respond(&mut machine, 1, Response::Result(handle));
        let tail = "line\n".repeat(HeldInPart::min_held_bytes(1_000) / 5 + 1);
        let outcome = json!({"result": {"content": [{"type": "text", "text": tail}]}});
        let held = HeldInPart::default().with_text_head(0, 9_000_000);

        // tasks/get: only a pending one of a known task; cut from what is held.
        assert_eq!(
            machine.server_task_state_in_part(
                &id(2),
                task_state("t-1", "completed", outcome.clone()),
                &held
            ),
            None,
            "nothing pending"
        );
        machine.client_request(call(3, "research"), false, now);
        assert_eq!(
            machine.server_task_state_in_part(
                &id(3),
                task_state("t-1", "completed", outcome.clone()),
                &held
            ),
            None,
            "a call, not a task's state"
        );
        machine.client_request(task_get(4, "t-1"), false, now);
        let failed = task_state(
            "t-1",
            "failed",
            json!({"error": {"code": -32603, "message": "x"}}),
        );
        assert_eq!(
            machine.server_task_state_in_part(&id(4), failed, &held),
            None,
            "no outcome held in part: read whole"
        );
        assert!(machine.pending().get(&id(4)).is_some(), "still pending");
        let Some(Answer::TaskState {
            task,
            truncation,
            id_json,
        }) = machine.server_task_state_in_part(
            &id(4),
            task_state("t-1", "completed", outcome.clone()),
            &held,
        )
        else {
            panic!("L1 from what is held");
        };
        assert_eq!(id_json, "4");
        assert_eq!(task["status"], "completed");
        assert_eq!(task["ttlMs"], 900000, "the rest of the state kept");
        assert_eq!(truncation.unwrap().original_bytes, 9_000_000 + tail.len());
        assert!(machine.pending().get(&id(4)).is_none(), "answered");

        // Cancelled: passes as it came (E9).
        machine.client_request(task_get(5, "t-1"), false, now);
        machine.client_notification("notifications/cancelled", Some(&id(5)));
        assert_eq!(
            machine.server_task_state_in_part(
                &id(5),
                task_state("t-1", "completed", outcome.clone()),
                &held
            ),
            Some(Answer::Unchanged)
        );

        // notifications/tasks: the same, for a known task only.
        let (task, truncation) = machine
            .server_task_status_in_part(task_state("t-1", "completed", outcome.clone()), &held)
            .expect("decided")
            .expect("cut");
        assert_eq!(task["taskId"], "t-1");
        assert!(truncation.is_some());
        assert_eq!(
            machine.server_task_status_in_part(task_state("t-9", "completed", outcome), &held),
            None,
            "a task of no call of this session"
        );
    }

    #[test]
    fn l1_e11_a_task_s_state_notified_is_shaped_as_its_call_s() {
        let mut machine = SessionMachine::new(Limit::new(400).unwrap());
        assert!(
            machine.passes_early(None, Some(TASK_STATUS), false),
            "no task yet"
        );
        machine.client_request(call(1, "research"), false, Instant::now());
        let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
        respond(&mut machine, 1, Response::Result(handle));
        assert!(
            !machine.passes_early(None, Some(TASK_STATUS), false),
            "read it whole"
        );
        assert!(machine.passes_early(None, Some("notifications/progress"), false));

        let report =
            json!({"result": {"content": [{"type": "text", "text": "line\n".repeat(500)}]}});
        let (task, truncation) = machine
            .server_task_status(task_state("t-1", "completed", report))
            .expect("L1");
        assert!(truncation.is_some());
        assert!(
            ToolResult::from_value(task["result"].clone())
                .unwrap()
                .wire_size()
                <= 400
        );
        let other =
            json!({"result": {"content": [{"type": "text", "text": "line\n".repeat(500)}]}});
        assert!(
            machine
                .server_task_status(task_state("t-2", "completed", other))
                .is_none()
        );
        assert!(machine.server_task_status(json!("not a task")).is_none());
    }

    #[test]
    fn errors_about_the_request_and_cancellations_pass() {
        let mut machine = listed(&["run"]);
        for (n, code) in [
            (1, -32700),
            (2, -32600),
            (3, -32601),
            (4, -32020),
            (5, -32021),
            (6, -32022),
            (7, -32800),
        ] {
            machine.client_request(call(n, "run"), false, Instant::now());
            assert_eq!(
                respond(&mut machine, n, err(code, "about the request")),
                Answer::Unchanged,
                "E9/E10: {code}"
            );
        }
        machine.client_request(call(8, "run"), false, Instant::now());
        machine.client_notification("notifications/cancelled", Some(&id(8)));
        assert!(!machine.answer_matters(&id(8), false));
        assert_eq!(
            respond(&mut machine, 8, err(-32603, "boom")),
            Answer::Unchanged,
            "E9"
        );
        assert!(machine.pending().is_empty());
        assert_eq!(machine.error_counts().total(), 0);
    }

    #[test]
    fn a_failure_is_converted_logged_and_counted() {
        let mut machine = listed(&["run"]);
        machine.client_request(call(1, "run").arguments(["cmd"]), false, Instant::now());
        let answer = respond(&mut machine, 1, err(-32603, "Internal error: boom"));
        let Answer::Result { result, .. } = answer else {
            panic!("{answer:?}")
        };
        assert!(result.is_error());
        assert_eq!(result.content[0].as_text(), Some("boom"));
        let records = machine.take_log_records();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].tool.as_deref(), Some("run"));
        assert!(machine.take_log_records().is_empty());
        assert_eq!(machine.error_counts().get("InternalError:tools/call"), 1);
    }

    #[test]
    fn r4_a_converted_failure_carries_result_type_on_2026_07_28_only() {
        let mut machine = listed(&["run"]);
        let stateless = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        let mut request = call(1, "run");
        request.meta = stateless.as_object().cloned();
        machine.client_request(request, false, Instant::now());
        let Answer::Result { result, .. } = respond(&mut machine, 1, err(-32603, "boom")) else {
            panic!("E1")
        };
        assert_eq!(result.result_type.as_deref(), Some("complete"), "R4");
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["resultType"], "complete");

        let mut init = ClientRequest::new(id(2), "2", "initialize");
        init.initialize = Some(json!({"protocolVersion": "2025-11-25"}));
        machine.client_request(init, false, Instant::now());
        machine.client_request(call(3, "run"), false, Instant::now());
        let Answer::Result { result, .. } = respond(&mut machine, 3, err(-32603, "boom")) else {
            panic!("E1")
        };
        assert_eq!(result.result_type, None, "no such member before 2026-07-28");
    }

    #[test]
    fn results_over_the_cap_are_cut_and_others_pass() {
        let mut machine = SessionMachine::new(Limit::new(300).unwrap());
        machine.client_request(call(1, "scrollback"), false, Instant::now());
        let big = json!({"content": [{"type": "text", "text": "line\n".repeat(1000)}]});
        let Answer::Result { result, .. } = respond(&mut machine, 1, Response::Result(big)) else {
            panic!("L3")
        };
        assert!(serde_json::to_vec(&result).unwrap().len() <= 300);
        machine.client_request(call(2, "scrollback"), false, Instant::now());
        let small = json!({"content": [{"type": "text", "text": "PROMPT $"}]});
        assert_eq!(
            respond(&mut machine, 2, Response::Result(small)),
            Answer::Unchanged
        );
        machine.client_request(call(3, "scrollback"), false, Instant::now());
        assert_eq!(
            respond(&mut machine, 3, Response::Result(json!("not a result"))),
            Answer::Unchanged
        );
        machine.client_request(call(4, "scrollback"), false, Instant::now());
        assert_eq!(
            respond(&mut machine, 4, Response::Unread),
            Answer::Unchanged
        );
    }

    #[test]
    fn resource_errors_follow_the_revision_of_the_handshake() {
        let mut machine = SessionMachine::default();
        let mut init = ClientRequest::new(id(0), "0", "initialize");
        init.initialize = Some(
            json!({"protocolVersion": "2025-06-18", "clientInfo": {"name": "c", "version": "1"}}),
        );
        machine.client_request(init, false, Instant::now());
        respond(
            &mut machine,
            0,
            Response::Result(json!({"protocolVersion": "2025-11-25"})),
        );
        assert_eq!(
            machine.session().revision,
            Some(Revision::V2025_11_25),
            "the server's word"
        );
        assert_eq!(machine.session().client.as_ref().unwrap().name, "c");
        let mut read = ClientRequest::new(id(1), "1", "resources/read");
        read.uri = Some("sessions://gone".into());
        machine.client_request(read, false, Instant::now());
        let gone = Response::Error(
            ProtocolError::new(-32602, "Resource not found")
                .with_data(json!({"uri": "sessions://gone"})),
        );
        let Answer::Error { error, .. } = respond(&mut machine, 1, gone) else {
            panic!("R3")
        };
        assert_eq!(error.code, -32002);
        // Its result, or another method's error, passes.
        let mut read = ClientRequest::new(id(2), "2", "resources/read");
        read.uri = Some("a".into());
        machine.client_request(read, false, Instant::now());
        assert_eq!(
            respond(&mut machine, 2, Response::Result(json!({"contents": []}))),
            Answer::Unchanged
        );
        machine.client_request(
            ClientRequest::new(id(3), "3", "prompts/get"),
            false,
            Instant::now(),
        );
        assert_eq!(
            respond(&mut machine, 3, err(-32603, "boom")),
            Answer::Unchanged
        );
        // An answer nobody asked for passes.
        assert_eq!(
            respond(&mut machine, 99, err(-32603, "boom")),
            Answer::Unchanged
        );
    }

    #[test]
    fn the_own_listing_waits_for_the_handshake_and_follows_every_page() {
        let now = Instant::now();
        let mut machine = SessionMachine::default();
        let init = ClientRequest::new(id(0), "0", "initialize");
        assert!(machine.client_request(init, true, Instant::now()).is_none());
        assert!(
            machine
                .client_request(call(1, "t"), true, Instant::now())
                .is_none(),
            "not answered yet"
        );
        respond(
            &mut machine,
            0,
            Response::Result(json!({"protocolVersion": "2025-11-25"})),
        );
        assert!(
            machine
                .client_request(call(2, "t"), true, Instant::now())
                .is_none(),
            "not initialized yet"
        );
        machine.client_notification("notifications/initialized", None);
        assert!(
            machine
                .client_request(call(3, "t"), false, Instant::now())
                .is_none(),
            "may not send"
        );
        let first = machine
            .client_request(call(4, "t"), true, Instant::now())
            .expect("lists");
        assert_eq!(
            first.to_json(),
            r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#
        );
        assert!(machine.listing_in_flight() && machine.answers_own_listing(&first.id));
        assert!(
            machine
                .client_request(call(5, "t"), true, Instant::now())
                .is_none(),
            "one at a time"
        );
        assert!(machine.is_pending_tool_call(&id(4)) && !machine.is_pending_tool_call(&id(0)));
        assert!(
            !machine.passes_early(Some(&id(9)), None, true),
            "the listing keeps the order"
        );

        let page = json!({"tools": [{"name": "a"}], "nextCursor": "c2"});
        let second = machine
            .own_listing_answer(Some(&page), now)
            .expect("page 2");
        assert_eq!(second.params["cursor"], "c2");
        assert_eq!(machine.listing_requests_sent(), 2);
        assert!(!machine.answers_own_listing(&first.id) && machine.answers_own_listing(&second.id));
        assert!(
            machine
                .own_listing_answer(Some(&json!({"tools": [{"name": "t"}]})), now)
                .is_none()
        );
        assert!(!machine.listing_in_flight() && machine.catalog().is_complete());
        assert!(machine.catalog().contains("a") && machine.catalog().contains("t"));
        assert!(
            machine
                .client_request(call(6, "t"), true, Instant::now())
                .is_none(),
            "complete: no listing"
        );
    }

    #[test]
    fn a_failed_own_listing_is_not_retried_until_the_list_changes() {
        let mut machine = SessionMachine::default();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "other": 1});
        let stateless = |n| {
            let mut request = call(n, "t");
            request.meta = meta.as_object().cloned();
            request
        };
        let own = machine
            .client_request(stateless(1), true, Instant::now())
            .expect("a stateless client lists");
        assert_eq!(
            own.params["_meta"],
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
        );
        assert!(machine.own_listing_answer(None, Instant::now()).is_none());
        assert!(
            machine
                .client_request(stateless(2), true, Instant::now())
                .is_none(),
            "failed: not again"
        );
        machine.server_notification(TOOLS_LIST_CHANGED);
        let again = machine
            .client_request(stateless(3), true, Instant::now())
            .expect("the list changed");
        assert!(machine.listing_in_flight() && machine.answers_own_listing(&again.id));
        machine.abandon_listing();
        assert!(!machine.listing_in_flight());
        assert!(
            machine
                .client_request(call(4, "t"), true, Instant::now())
                .is_none(),
            "no meta, no handshake"
        );
    }

    #[test]
    fn passes_early_takes_in_list_changed_and_forgets_what_passed() {
        let mut machine = listed(&["t"]);
        machine.client_request(
            ClientRequest::new(id(1), "1", "ping"),
            false,
            Instant::now(),
        );
        assert!(machine.passes_early(Some(&id(1)), None, true));
        assert!(machine.pending().is_empty(), "passed: no longer pending");
        assert!(
            machine.passes_early(None, None, true),
            "nothing pending needs a result"
        );
        machine.client_request(call(2, "t"), false, Instant::now());
        assert!(!machine.passes_early(None, None, true));
        assert!(!machine.passes_early(None, None, false) || machine.pending().len() == 1);
        assert!(machine.passes_early(None, Some(TOOLS_LIST_CHANGED), false));
        assert!(
            !machine.catalog().is_complete(),
            "list_changed was taken in"
        );
        assert_eq!(machine.pending().len(), 1);
    }

    /// B5: an answer to a request answered here is dropped, never passes early, and
    /// makes a result whose id is not known yet wait for it; other ids are not
    /// touched, and an id sent again is the server's to answer.
    #[test]
    fn b5_an_answer_to_a_request_answered_here_is_dropped_never_passed_early() {
        let mut machine = listed(&["t"]);
        let read = ClientRequest::new(id(2), "2", "resources/read");
        machine.client_request(read, false, Instant::now());
        assert!(!machine.may_drop_answers());
        assert!(
            machine.passes_early(None, None, true),
            "a read's result needs nothing"
        );
        machine.client_request(call(1, "t"), false, Instant::now());
        machine.client_request(
            ClientRequest::new(id(2), "2", "resources/read"),
            false,
            Instant::now(),
        );
        assert!(machine.answer_here(&id(1)).is_some());
        assert!(machine.may_drop_answers() && machine.drops_answer(&id(1)));
        assert!(!machine.drops_answer(&id(2)), "pending");
        assert!(!machine.drops_answer(&id(3)), "never sent");
        assert!(!machine.passes_early(Some(&id(1)), None, true));
        assert!(!machine.passes_early(None, None, true), "its id may be 1");
        assert!(machine.passes_early(Some(&id(2)), None, true));
        machine.client_request(
            ClientRequest::new(id(1), "1", "ping"),
            false,
            Instant::now(),
        );
        assert!(!machine.drops_answer(&id(1)) && !machine.may_drop_answers());
        // The server gone: each pending request is answered here.
        machine.client_request(call(5, "t"), false, Instant::now());
        assert_eq!(machine.drain_pending().len(), 2);
        assert!(machine.drops_answer(&id(1)) && machine.drops_answer(&id(5)));
    }

    /// B3, L1, B5: what makes the machine read server messages: a pending request, its
    /// own listing in flight, a task known, an answer to drop — each on its own.
    #[test]
    fn what_makes_server_messages_read() {
        let mut machine = SessionMachine::default();
        assert!(!machine.reads_server_messages());
        // Its own listing, the call that wanted it forgotten (no answer to drop).
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        let mut stateless = call(1, "t");
        stateless.meta = meta.as_object().cloned();
        assert!(
            machine
                .client_request(stateless, true, Instant::now())
                .is_some()
        );
        machine.forget(&id(1));
        assert!(machine.pending().is_empty() && machine.listing_in_flight());
        assert!(machine.reads_server_messages(), "a listing in flight");
        machine.abandon_listing();
        assert!(!machine.reads_server_messages());
        // A task known.
        machine.client_request(call(2, "research"), false, Instant::now());
        let handle = json!({"resultType": "task", "taskId": "t-2", "status": "working"});
        respond(&mut machine, 2, Response::Result(handle));
        assert!(machine.pending().is_empty() && !machine.tasks().is_empty());
        assert!(machine.reads_server_messages(), "a task known");
        // An answer to drop.
        let mut fresh = SessionMachine::default();
        fresh.client_request(call(3, "t"), false, Instant::now());
        fresh.answer_here(&id(3));
        assert!(fresh.pending().is_empty() && fresh.reads_server_messages());
    }

    #[test]
    fn which_answers_matter_and_the_limit_in_force() {
        let mut machine = SessionMachine::new(Limit::new(300).unwrap());
        assert_eq!(machine.limit().max_bytes(), 300);
        machine.client_request(call(1, "t"), false, Instant::now());
        assert!(machine.answer_matters(&id(1), true) && machine.answer_matters(&id(1), false));
        assert!(machine.is_pending_tool_call(&id(1)));
        machine.client_request(
            ClientRequest::new(id(2), "2", "prompts/get"),
            false,
            Instant::now(),
        );
        assert!(
            !machine.answer_matters(&id(2), false),
            "P2: not a resource request"
        );
        assert!(!machine.is_pending_tool_call(&id(2)));
        let mut read = ClientRequest::new(id(3), "3", "resources/read");
        read.uri = Some("a".into());
        machine.client_request(read, false, Instant::now());
        assert!(machine.answer_matters(&id(3), false) && !machine.answer_matters(&id(3), true));
        assert!(!machine.answer_matters(&id(9), true), "not pending");
    }

    #[test]
    fn a_result_held_in_part_is_cut_from_what_is_held() {
        let cap = 1_000;
        let mut machine = SessionMachine::new(Limit::new(cap).unwrap());
        machine.client_request(call(1, "scrollback"), false, Instant::now());
        let tail = "y".repeat(HeldInPart::min_held_bytes(cap));
        let held = HeldInPart::default().with_text_head(0, 40_000_000);
        let answer = machine.server_result_in_part(&id(1), ToolResult::text(tail), &held);
        let Some(Answer::Result { result, .. }) = answer else {
            panic!("L3 from the held tail: {answer:?}")
        };
        let text = result.content[0].as_text().unwrap();
        assert!(
            text.starts_with("[... truncated 400") && text.ends_with('y'),
            "{text:.60}"
        );
        assert!(machine.pending().is_empty(), "answered");
        // Not a pending tools/call: nothing to decide from a part.
        machine.client_request(
            ClientRequest::new(id(2), "2", "ping"),
            false,
            Instant::now(),
        );
        assert_eq!(
            machine.server_result_in_part(&id(2), ToolResult::text("x"), &held),
            None
        );
        assert_eq!(machine.pending().len(), 1);
        // A cancelled call's answer passes as it came.
        machine.client_request(call(3, "scrollback"), false, Instant::now());
        machine.client_notification("notifications/cancelled", Some(&id(3)));
        assert_eq!(
            machine.server_result_in_part(&id(3), ToolResult::text("x"), &held),
            Some(Answer::Unchanged)
        );
    }

    #[test]
    fn the_log_keeps_the_newest_records() {
        let mut machine = listed(&["run"]);
        let total = MAX_LOG_RECORDS as u32 + 5;
        for n in 1..=total {
            machine.client_request(call(n, "run"), false, Instant::now());
            respond(&mut machine, n, err(-32603, &format!("boom {n}")));
        }
        let records = machine.take_log_records();
        assert_eq!(records.len(), MAX_LOG_RECORDS);
        assert_eq!(records.last().unwrap().message, format!("boom {total}"));
        assert_eq!(records[0].message, "boom 6");
        assert_eq!(
            machine.error_counts().get("InternalError:tools/call"),
            u64::from(total)
        );
    }

    #[test]
    fn drain_and_forget_leave_nothing_pending() {
        let mut machine = SessionMachine::default().with_max_pending(2);
        assert_eq!(machine.pending().max(), 2);
        for n in 1..=3 {
            machine.client_request(
                ClientRequest::new(id(n), n.to_string(), "ping"),
                false,
                Instant::now(),
            );
        }
        assert_eq!(machine.pending().evicted(), 1);
        assert_eq!(machine.forget(&id(2)).unwrap().id_json, "2");
        let drained: Vec<String> = machine
            .drain_pending()
            .into_iter()
            .map(|r| r.id_json)
            .collect();
        assert_eq!(drained, ["3"]);
        assert!(machine.pending().is_empty());
    }

    /// What an in-process adapter does before running a call: list while the catalog
    /// says so (page by page), then ask `before_running`.
    fn run_listing(
        machine: &mut SessionMachine,
        own: Option<OwnRequest>,
        pages: &[Value],
        now: Instant,
    ) -> usize {
        let mut own = own;
        let mut asked = 0;
        while let Some(request) = own {
            let page = pages.get(asked);
            asked += 1;
            assert_eq!(
                request.cursor().is_none(),
                asked == 1,
                "the first page has no cursor"
            );
            own = machine.own_listing_answer(page, now);
        }
        asked
    }

    #[test]
    fn in_process_lists_without_a_handshake_and_answers_e8_before_running() {
        let now = Instant::now();
        let mut machine = SessionMachine::default().in_process();
        let own = machine.client_request(call(1, "ehco"), true, now);
        let pages = [
            json!({"tools": [{"name": "echo"}], "nextCursor": "2"}),
            json!({"tools": [{"name": "sleep"}]}),
        ];
        assert_eq!(run_listing(&mut machine, own, &pages, now), 2);
        let Some(Answer::Error { id_json, error }) = machine.before_running(&id(1), now) else {
            panic!("E8 from a complete, fresh catalog")
        };
        assert_eq!((id_json.as_str(), error.code), ("1", -32602));
        assert_eq!(error.data.unwrap()["suggestion"], "Did you mean 'echo'?");
        assert!(machine.pending().is_empty(), "answered: no longer pending");
        // A known tool runs; no listing again while the catalog is fresh.
        assert!(
            machine
                .client_request(call(2, "sleep"), true, now)
                .is_none()
        );
        assert_eq!(machine.before_running(&id(2), now), None);
    }

    #[test]
    fn in_process_a_failed_listing_is_tried_again_and_never_calls_a_tool_unknown() {
        let now = Instant::now();
        let mut machine = SessionMachine::default().in_process();
        let own = machine.client_request(call(1, "echo"), true, now);
        assert_eq!(
            run_listing(&mut machine, own, &[], now),
            1,
            "the page failed"
        );
        assert_eq!(
            machine.before_running(&id(1), now),
            None,
            "no E8 from nothing"
        );
        let own = machine.client_request(call(2, "echo"), true, now);
        assert!(own.is_some(), "in process, the next call lists again");
        // Behind a proxy, a failed listing waits for list_changed instead.
        let mut proxy = listed(&[]);
        proxy.catalog.invalidate();
        proxy.lifecycle = Lifecycle {
            initialize: true,
            answered: true,
            initialized: true,
            listing_due: false,
        };
        let own = proxy.client_request(call(1, "echo"), true, now);
        assert_eq!(run_listing(&mut proxy, own, &[], now), 1);
        assert!(proxy.client_request(call(2, "echo"), true, now).is_none());
    }

    #[test]
    fn a_stale_catalog_is_listed_again_before_e8() {
        // R5: an entry older than its ttlMs is listed again before it decides anything.
        let now = Instant::now();
        let mut machine = SessionMachine::default().in_process();
        let own = machine.client_request(call(1, "old"), true, now);
        let page = json!({"tools": [{"name": "old"}], "ttlMs": 1000});
        run_listing(&mut machine, own, &[page], now);
        assert_eq!(machine.before_running(&id(1), now), None);
        let later = now + std::time::Duration::from_secs(2);
        let own = machine.client_request(call(2, "new"), true, later);
        assert!(own.is_some(), "stale: list before deciding");
        let page = json!({"tools": [{"name": "old"}, {"name": "new"}], "ttlMs": 1000});
        run_listing(&mut machine, own, &[page], later);
        assert_eq!(
            machine.before_running(&id(2), later),
            None,
            "the new tool runs"
        );
        assert!(
            machine
                .client_request(call(3, "new"), true, later)
                .is_none(),
            "fresh again"
        );
    }

    #[test]
    fn strict_mode_rejects_unnamed_arguments_before_running() {
        let now = Instant::now();
        let mut machine = SessionMachine::default().in_process().with_strict(true);
        assert!(machine.is_strict());
        let own = machine.client_request(call(1, "run").arguments(["cmd", "cwdd"]), true, now);
        let page = json!({"tools": [{"name": "run", "inputSchema": {"type": "object",
            "properties": {"cmd": {}, "cwd": {}}, "additionalProperties": false}}]});
        run_listing(&mut machine, own, &[page], now);
        let Some(Answer::Result { result, .. }) = machine.before_running(&id(1), now) else {
            panic!("V6: rejected before it runs")
        };
        assert!(result.is_error());
        assert!(result.content[0].as_text().unwrap().contains("cwdd"));
        assert_eq!(machine.error_counts().get("ValidationError:tools/call"), 1);
        machine.client_request(call(2, "run").arguments(["cmd"]), true, now);
        assert_eq!(
            machine.before_running(&id(2), now),
            None,
            "named arguments run"
        );
        let mut lax = listed(&["run"]).in_process();
        lax.client_request(call(3, "run").arguments(["x"]), true, now);
        assert_eq!(lax.before_running(&id(3), now), None, "off by default");
        assert!(!lax.is_strict());
    }

    #[test]
    fn a_request_in_another_session_is_shaped_for_that_session() {
        // One machine, many sessions (in process): the revision comes with the request.
        let now = Instant::now();
        let mut machine = listed(&["t"]).in_process();
        let newer =
            json!({"protocolVersion": "2026-07-28", "clientInfo": {"name": "c", "version": "1"}});
        machine.client_request(
            call(1, "t").in_session(Some(Session::from_initialize(&newer))),
            false,
            now,
        );
        machine.client_request(
            call(2, "t").in_session(Some(Session::from_initialize(
                &json!({"protocolVersion": "2025-11-25"}),
            ))),
            false,
            now,
        );
        let failed = || Response::Failure(Failure::expected("no"));
        let Answer::Result { result, .. } = machine.server_response(&id(1), failed(), now) else {
            panic!("converted")
        };
        assert_eq!(result.result_type.as_deref(), Some("complete"), "R4");
        let Answer::Result { result, .. } = machine.server_response(&id(2), failed(), now) else {
            panic!("converted")
        };
        assert_eq!(result.result_type, None);
    }

    #[test]
    fn in_process_results_are_measured_with_what_the_wire_adds() {
        // L4: the SDK stamps its identity and resultType after the adapter; the cap
        // counts them, and a converted result carries them (R4).
        let now = Instant::now();
        let stamp = json!({"name": "server-with-a-long-name", "version": "1.0.0"});
        let limit = Limit::new(1_000).unwrap();
        let newer = json!({"protocolVersion": "2026-07-28"});
        let mut machine = SessionMachine::new(limit.clone()).in_process();
        machine.set_server_stamp(Some(stamp.clone()));
        let fits_bare = "x".repeat(1_000 - ToolResult::text("").wire_size() - 2);
        assert!(ToolResult::text(fits_bare.clone()).wire_size() <= 1_000);
        machine.client_request(
            call(1, "t").in_session(Some(Session::from_initialize(&newer))),
            false,
            now,
        );
        let Answer::Result {
            result, truncation, ..
        } = machine.server_result_texts(&id(1), ToolResult::text(""), &[&fits_bare])
        else {
            panic!("what the wire adds takes it over the cap")
        };
        assert!(result.wire_size() <= 1_000);
        assert!(truncation.is_some());
        assert_eq!(
            result.meta.unwrap()[crate::session::SERVER_INFO_META_KEY],
            stamp
        );
        // On 2025-11-25 nothing is added: it fits.
        let older = json!({"protocolVersion": "2025-11-25"});
        machine.client_request(
            call(2, "t").in_session(Some(Session::from_initialize(&older))),
            false,
            now,
        );
        assert_eq!(
            machine.server_result_texts(&id(2), ToolResult::text(""), &[&fits_bare]),
            Answer::Unchanged
        );
        // A request of no known revision gets the newest behaviour (R3): counted.
        machine.client_request(call(4, "t"), false, now);
        let answer = machine.server_result_texts(&id(4), ToolResult::text(""), &[&fits_bare]);
        let Answer::Result { result, .. } = answer else {
            panic!("unknown revision: the newest, whose resultType takes it over the cap")
        };
        assert_eq!(result.result_type.as_deref(), Some("complete"));
        assert!(result.wire_size() <= 1_000);
        // Behind a proxy the wire is what was read: nothing is added.
        let mut proxy = SessionMachine::new(limit);
        proxy.set_server_stamp(Some(stamp));
        proxy.client_request(
            call(3, "t").in_session(Some(Session::from_initialize(&newer))),
            false,
            now,
        );
        let value = ToolResult::text(fits_bare).into_value();
        assert_eq!(
            proxy.server_response(&id(3), Response::Result(value), now),
            Answer::Unchanged
        );
    }
}
