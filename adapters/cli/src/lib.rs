//! # backstop
//!
//! The I/O of the `backstop` binary: the processes, pipes, files, sockets and HTTP
//! connections around the sans-IO shaper of [`backstop_jsonrpc`], which decides what
//! each message becomes.
//!
//! - [`proxy`]: `backstop proxy -- <server command…>`, a stdio MCP server run as a
//!   child, its messages shaped on the pipes between it and the client (SPEC A3).
//! - [`http`]: `backstop proxy --url` and `backstop gateway`, a Streamable HTTP server
//!   behind a stdio or an HTTP front (SPEC A5).
//! - [`held`]: where the bytes of a long message wait while the shaper cannot decide
//!   yet — memory, then an unnamed temporary file (SPEC B3).
//! - [`server_process`]: the proxy's server process — forwarded signals, killed after
//!   a grace period, and with the proxy if the proxy dies.
//! - [`framing`]: newline-delimited messages on a byte stream (MCP stdio).
//! - [`log`]: the stderr line of each converted failure, in every mode.
//!
//! ```
//! use backstop::framing::LineReader;
//! let mut reader = LineReader::new(&b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n"[..]);
//! assert_eq!(reader.next_line().unwrap(), Some(&br#"{"jsonrpc":"2.0","method":"ping"}"#[..]));
//! ```
// One audited exception, `server_process::kill_with_parent`: the child's
// parent-death signal can only be set between fork and exec, which std offers only
// through the unsafe `CommandExt::pre_exec`.
#![deny(unsafe_code)]

pub mod framing;
pub mod held;
pub mod http;
pub mod log;
pub mod proxy;
pub mod server_process;

/// The README's examples, compiled and run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
