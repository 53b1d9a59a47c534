//! # backstop-core
//!
//! The sans-IO core of backstop: pure functions that make an MCP server's tool
//! failures readable by the model, and that keep the *end* of oversized tool output
//! under a hard byte cap. No async, no I/O, no MCP SDK: adapters (rmcp, raw JSON-RPC)
//! translate their types into these and back.
//!
//! Rules cited as `E1`, `L4`, … are those of the project's specification,
//! [`docs/rules.md`](https://github.com/backstop-mcp/backstop/blob/main/docs/rules.md).
//!
//! The front door, re-exported here:
//!
//! - [`SessionMachine`]: everything one connection knows, and every decision about its
//!   messages — what an adapter drives ([`machine`]);
//! - [`shape_tool_call`]: one `tools/call`, end to end, in one call ([`call`]);
//! - [`ToolCatalog`]: what `tools/list` said, and how far it can be trusted ([`catalog`]);
//! - [`Failure`], [`ToolResult`], [`Limit`]: a failure, a result, the cap.
//!
//! ```
//! use backstop_core::{CallContext, Failure, Limit, Outcome, ToolCatalog, shape_tool_call};
//! let catalog = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [{"name": "capture_pane"}]}));
//! let call = CallContext::new("capture_pane");
//! let outcome = Outcome::Failure(Failure::expected("Pane not found: %99"));
//! let shaped = shape_tool_call(&catalog, &call, outcome, &Limit::default());
//! assert!(shaped.response.unwrap().is_error());
//! ```
#![forbid(unsafe_code)]

mod arguments;
pub mod call;
pub mod catalog;
mod error_result;
mod failure;
pub mod foreign_error;
pub mod foreign_validation;
mod jsonrpc_error;
pub mod limit;
mod log;
pub mod machine;
mod message_family;
pub mod method;
pub mod param_headers;
mod prefix;
pub mod protocol_error;
pub mod request_error;
mod result;
mod session;
mod suggest;
#[cfg(feature = "testing")]
pub mod testing;
mod validation;
mod wire;

pub use arguments::ArgumentShapes;
pub use arguments::CallContext;
pub use call::{Outcome, Shaped, shape_tool_call};
pub use catalog::ToolCatalog;
pub use error_result::{error_result, unknown_tool};
pub use failure::{EXPECTED_TOOL_ERROR, Failure, Family, Level, TOOL_ERROR, VALIDATION_ERROR};
pub use limit::{
    Keep, Limit, LimitError, Limited, MetaKept, RESULT_TOO_LARGE, RESULT_TOO_LARGE_SUGGESTION,
    StructuredCut, Truncation,
};
pub use log::{ErrorCounts, LogRecord};
pub use machine::SessionMachine;
pub use protocol_error::ProtocolError;
pub use result::{Content, ModelError, TextContent, ToolResult};
pub use session::{ClientInfo, PROTOCOL_VERSION_META_KEY, Revision, Session};
pub use suggest::{MAX_SUGGESTION_DISTANCE, closest, edit_distance};
pub use validation::{Problem, ProblemKind, render_problems};

/// The README's examples, compiled and run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The crate's own README (the one crates.io shows), its examples run the same way.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
