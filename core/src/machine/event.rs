//! What the driver hands the machine and what the machine answers: a client's
//! request as read ([`ClientRequest`]), a server's answer as read ([`Response`]), and
//! what to send for it ([`Answer`]).

use serde_json::{Map, Value};

use super::pending::RequestId;
use crate::arguments::ArgumentShapes;
use crate::failure::Failure;
use crate::limit::Truncation;
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
    /// Not read: [`SessionMachine::answer_matters`](super::SessionMachine::answer_matters) said nothing depends on it, or it
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
