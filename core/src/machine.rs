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
//! use backstop_core::SessionMachine;
//! use backstop_core::machine::{Answer, ClientRequest, RequestId, Response};
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
//!
//! The machine itself, [`SessionMachine`](crate::SessionMachine), is at the crate root;
//! what it takes and gives is here, and so is what a transport must know of MCP's
//! methods, asked by method name ([`begins_handshake`], [`named_by`], …).

pub use crate::method::{
    INITIALIZE, INITIALIZED, LONG_LIVED, NamedBy, TOOLS_CALL, asks_long_lived_answer,
    begins_handshake, ends_handshake, is_tool_call, named_by,
};
pub use crate::session_machine::{
    ANSWERED_HERE_KEPT, Answer, AnsweredHere, ClientRequest, DEFAULT_MAX_PENDING, Disposition,
    LISTING_PATIENCE, MAX_HELD_BYTES, MAX_HELD_MESSAGES, MAX_LOG_RECORDS, MAX_TASKS,
    OWN_LISTING_ID_PREFIX, OwnRequest, PendingRequest, PendingRequests, RequestId, RequestKind,
    Response, ServerHead, TASK_STATUS, TOOLS_LIST_CHANGED, TaskTable,
};
