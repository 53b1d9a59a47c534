//! What the driver hands the machine and what the machine answers: a client's
//! request as read ([`ClientRequest`]), the head of a server's message as read
//! ([`ServerHead`]) and what to do with the message ([`Disposition`]), a server's
//! answer as read ([`Response`]), and what to send for it ([`Answer`]).

use serde_json::{Map, Value};

use super::own_listing::OwnRequest;
use super::pending::RequestId;
use crate::arguments::ArgumentShapes;
use crate::failure::Failure;
use crate::foreign_error::ForeignError;
use crate::limit::{HeldEnds, Truncation};
use crate::protocol_error::ProtocolError;
use crate::result::ToolResult;
use crate::session::Session;

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
    /// use backstop_core::call::ArgumentShapes;
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
    /// In process: the tool raised, and these are the exception's facts, for the
    /// machine to classify ([`classify`](crate::call::classify)). The
    /// server's own word that the tool called is unknown (fastmcp's `NotFoundError`,
    /// [`says_unknown_tool`](crate::call::says_unknown_tool)) means its tools
    /// changed since they were listed: the machine lists them again first
    /// ([`Answer::ListFirst`]), once per call (E8, R5).
    Raised(ForeignError),
    /// Not read: it could not be read (it passes as it came). (A message nothing
    /// depends on is not handed in at all:
    /// [`server_head`](super::SessionMachine::server_head) says it passes.)
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
    /// Nothing yet: send this request of the machine's own first (in process: list
    /// the tools, handing each page to
    /// [`own_listing_answer`](super::SessionMachine::own_listing_answer)), then ask
    /// [`before_running`](super::SessionMachine::before_running) again and, if it
    /// says nothing, hand the same response in again. The request stays pending.
    ListFirst(OwnRequest),
    /// This error instead, under the request's id.
    Error {
        /// The request's id as the client wrote it.
        id_json: String,
        /// The error.
        error: ProtocolError,
    },
}

/// What a driver has read of a server message's top level: its `id` and `method`
/// once read whole, whether its `result` or `error` member began — all of it for a
/// message here whole, what has come so far for one read as it comes. What to do with
/// the message is [`SessionMachine::server_head`](super::SessionMachine::server_head)'s
/// answer.
///
/// ```
/// use backstop_core::machine::{RequestId, ServerHead};
/// let id = RequestId::Number("7".into());
/// let head = ServerHead { id: Some(&id), result: true, ..ServerHead::default() };
/// assert!(!head.ended && head.method.is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerHead<'a> {
    /// Its top-level `id`, when it is one a request can have (a number or a string).
    pub id: Option<&'a RequestId>,
    /// Its top-level `method`.
    pub method: Option<&'a str>,
    /// Its `result` member began: it is a result.
    pub result: bool,
    /// Its `error` member began: it is an error.
    pub error: bool,
    /// All of the message has come (it is here whole, or was scanned to its end):
    /// nothing of it waits for the machine's own listing on this path (the driver's
    /// routing holds, or releases first, what does), and it is never cut unheld.
    pub ended: bool,
    /// Read as it comes: holding it on would pass the driver's bound from this byte on,
    /// and it has come that far (B3). An answer that needs only its ends is then cut
    /// without being held ([`Disposition::CutUnheld`]).
    pub past_hold_at: Option<u64>,
}

/// What to do with a server message, from its head
/// ([`SessionMachine::server_head`](super::SessionMachine::server_head)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Send it on as it came, unread from here. A response that passes so is no longer
    /// pending; for a head that is not a response's (neither `result` nor `error`),
    /// which request it answers, if any, is the driver's lenient reading to say (B4).
    Pass,
    /// Send nothing: it answers a request backstop answered itself (B5).
    Drop,
    /// Read it: hold these ends of each long string (L16), ask again as more of its
    /// head is known, and at its end hand in what it is
    /// ([`server_response`](super::SessionMachine::server_response) or the `_in_part`
    /// inputs).
    Read(HeldEnds),
    /// Cut it as it comes without holding it, holding only these ends of each long
    /// string, and hand in what was held at its end (B3, B4): the result of a pending
    /// `tools/call` the limit applies to, already over the cap.
    CutUnheld(HeldEnds),
}
