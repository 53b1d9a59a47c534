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
//! The front door, re-exported here, and nowhere else:
//!
//! - [`SessionMachine`]: everything one connection knows, and every decision about its
//!   messages — what an adapter drives;
//! - [`shape_tool_call`]: one `tools/call`, end to end, in one call;
//! - [`ToolCatalog`]: what `tools/list` said, and how far it can be trusted;
//! - [`Failure`], [`ToolResult`], [`ProtocolError`], [`Limit`]: a failure, a result, a
//!   protocol error, the cap.
//!
//! Everything else lives in one of six modules, grouped by job, each item at one path
//! only (an item of the front door is not also public in its module):
//!
//! - [`machine`]: what the session machine takes and gives, and MCP's methods;
//! - [`limit`]: the cap and the cut;
//! - [`call`]: shaping one `tools/call` — the call, the failure's kinds, the result's
//!   parts, validation problems, foreign errors, the log record;
//! - [`catalog`]: the catalog's answers and bounds;
//! - [`protocol`]: JSON-RPC codes, the session's revision and client, parameter headers;
//! - `testing` (feature `testing`): checks and strategies for adapters' tests.
//!
//! ```
//! use backstop_core::call::{CallContext, Outcome};
//! use backstop_core::{Failure, Limit, ToolCatalog, shape_tool_call};
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
mod foreign_error;
mod foreign_validation;
mod jsonrpc_error;
pub mod limit;
mod log;
pub mod machine;
mod message_family;
mod method;
mod param_headers;
mod prefix;
pub mod protocol;
mod protocol_error;
mod request_error;
mod result;
mod session;
mod session_machine;
mod suggest;
#[cfg(feature = "testing")]
pub mod testing;
mod tool_call;
mod tool_catalog;
mod validation;
mod wire;

pub use failure::Failure;
pub use jsonrpc_error::ProtocolError;
pub use limit::settings::Limit;
pub use result::ToolResult;
pub use session_machine::SessionMachine;
pub use tool_call::shape_tool_call;
pub use tool_catalog::ToolCatalog;

/// The README's examples, compiled and run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The crate's own README (the one crates.io shows), its examples run the same way.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
