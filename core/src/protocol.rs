//! The protocol's own words: JSON-RPC error codes ([`code`]) and what travels with a
//! [`ProtocolError`](crate::ProtocolError) ([`ENCODED_FAILURE_KEY`],
//! [`RESOURCE_NOT_FOUND_PREFIX`]: SPEC P1, P2, R3), what is known of the session — its
//! revision and client ([`Session`], [`Revision`], [`ClientInfo`],
//! [`PROTOCOL_VERSION_META_KEY`]: R2, R3) — and which arguments of a `tools/call` an
//! HTTP client mirrors into `Mcp-Param-{Name}` headers ([`param_headers`], SEP-2243,
//! A5).
//!
//! ```
//! use backstop_core::protocol::{Revision, code, param_headers};
//! let schema = serde_json::json!({"type": "object", "properties": {
//!     "region": {"type": "string", "x-mcp-header": "Region"}}});
//! let arguments = serde_json::json!({"region": "eu-west-1"});
//! assert_eq!(param_headers(&schema, arguments.as_object().unwrap()).len(), 1);
//! assert_ne!(Revision::V2026_07_28, Revision::V2025_11_25);
//! assert_eq!(code::INVALID_PARAMS, -32602);
//! ```

pub use crate::jsonrpc_error::code;
pub use crate::param_headers::{HEADER_PREFIX, X_MCP_HEADER, declares_headers, param_headers};
pub use crate::protocol_error::{ENCODED_FAILURE_KEY, RESOURCE_NOT_FOUND_PREFIX};
pub use crate::session::{ClientInfo, PROTOCOL_VERSION_META_KEY, Revision, Session};
