//! The JSON-RPC error object (`{"code", "message", "data"}`) and the codes SPEC P1/R3
//! use: plain data, at the bottom of the crate's imports, so that a [`Failure`] can
//! carry one (P2) without this module knowing failures.
//!
//! [`Failure`]: crate::Failure

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Well-known JSON-RPC error codes, and the ones SPEC P1/R3 use.
///
/// ```
/// use backstop_core::protocol::code;
/// assert_eq!(code::INVALID_PARAMS, -32602);
/// assert_eq!(code::RESOURCE_NOT_FOUND, -32002);
/// ```
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters; also an unknown tool (E8) and, from 2026-07-28, a
    /// resource not found (R3).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error: a fault of the server (P1, "anything else").
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Server error: permission denied and timeout (P1).
    pub const SERVER_ERROR: i64 = -32000;
    /// Not found, outside `resources/*` (P1).
    pub const NOT_FOUND: i64 = -32001;
    /// Resource not found, up to revision 2025-11-25 (R3).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// The request was cancelled (from LSP; some servers answer a cancelled call with
    /// it): not a failure to convert (E9).
    pub const REQUEST_CANCELLED: i64 = -32800;
    /// 2026-07-28: an `Mcp-*` header does not match the body (E10).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request needs a client capability it did not declare (E10).
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the request's protocol revision is not supported (E10).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object: `{"code": …, "message": …, "data": …}`, `data` left out
/// when there is none.
///
/// ```
/// use backstop_core::ProtocolError;
/// let error = ProtocolError::new(-32602, "Unknown tool: x");
/// assert_eq!(serde_json::to_string(&error).unwrap(), r#"{"code":-32602,"message":"Unknown tool: x"}"#);
/// let back: ProtocolError = serde_json::from_str(r#"{"code":-32002,"message":"m","data":{"uri":"u"}}"#).unwrap();
/// assert_eq!(back.data.unwrap()["uri"], "u");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct ProtocolError {
    /// `code`.
    pub code: i64,
    /// `message`.
    pub message: String,
    /// `data`, when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ProtocolError {
    /// Whether this error, answering a `tools/call`, passes to the client unchanged,
    /// with its `data`: it is about the request rather than the tool's run — parse and
    /// invalid-request errors, method not found, the negotiation errors of 2026-07-28
    /// (E10) — or the call was cancelled (E9).
    ///
    /// ```
    /// use backstop_core::ProtocolError;
    /// assert!(ProtocolError::new(-32022, "Unsupported protocol version").passes_on_tools_call());
    /// assert!(ProtocolError::new(-32800, "Request cancelled").passes_on_tools_call());
    /// assert!(!ProtocolError::new(-32603, "Internal error: boom").passes_on_tools_call());
    /// ```
    pub fn passes_on_tools_call(&self) -> bool {
        matches!(
            self.code,
            code::PARSE_ERROR
                | code::INVALID_REQUEST
                | code::METHOD_NOT_FOUND
                | code::HEADER_MISMATCH
                | code::MISSING_CLIENT_CAPABILITY
                | code::UNSUPPORTED_PROTOCOL_VERSION
                | code::REQUEST_CANCELLED
        )
    }

    /// An error without `data`.
    ///
    /// ```
    /// let error = backstop_core::ProtocolError::new(-32603, "boom");
    /// assert_eq!(error.to_string(), "boom (JSON-RPC error -32603)");
    /// ```
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// This error with `data`.
    ///
    /// ```
    /// let error = backstop_core::ProtocolError::new(-32002, "m").with_data(serde_json::json!({"uri": "u"}));
    /// assert!(error.data.is_some());
    /// ```
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}
