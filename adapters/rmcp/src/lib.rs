//! # backstop-rmcp
//!
//! [backstop](backstop_core) for [rmcp]: wrap any `rmcp::ServerHandler` in
//! [`Backstop`] and
//!
//! - a failing tool call becomes an `isError` result the model can read — the message
//!   as written, `_meta.error_type`, `_meta.expected`, a suggestion — instead of a
//!   JSON-RPC error it never sees (SPEC E1–E9);
//! - a rejected argument set is reported with every problem and no rejected value
//!   (V1–V6);
//! - a result over the byte cap keeps its *tail* — the prompt, the last lines — under a
//!   hard cap (L1–L14);
//! - errors of every other method are mapped by family, with the resource-not-found
//!   code of the session's revision (P1, P2, R3).
//!
//! All decisions are backstop-core's; this crate translates rmcp's types to the
//! core's and back, and emits `tracing` events (target [`TRACING_TARGET`]).
//!
//! ```no_run
//! use backstop_rmcp::Backstop;
//! use rmcp::ServiceExt;
//! # #[derive(Clone)] struct MyServer;
//! # impl rmcp::ServerHandler for MyServer {}
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Backstop::new(MyServer);
//! server.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(()) }
//! ```
//!
//! Tools report failures with [`ToolError`], which travels through the handler's own
//! layers as an `Err` (O1) until [`Backstop`] turns it into the result.
#![forbid(unsafe_code)]

mod convert;
mod delegate;
mod report;
mod session;
mod task_state;
mod tool_call;
mod tool_error;
mod wrapper;

pub use report::{FailureCounts, TRACING_TARGET};
pub use tool_error::ToolError;
pub use wrapper::{Backstop, BackstopExt};

/// The README's examples, compiled as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
