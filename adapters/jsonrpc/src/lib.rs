//! # backstop-jsonrpc
//!
//! backstop for any MCP server, in any language, at the level of raw JSON-RPC
//! messages (SPEC A2): the sans-IO shaper, with no I/O of its own. The `backstop`
//! binary (`backstop proxy`, `proxy --url`, `gateway`: SPEC A3, A5) drives it from
//! the `backstop` crate.
//!
//! - [`Shaper`]: feed it the client's and the server's messages as bytes (or
//!   [`serde_json::Value`]s); it remembers each pending request and the tool list, and
//!   rewrites the server's responses through [`backstop_core`]: failures of known
//!   tools become `isError` results (E1–E7), framework validation texts lose the
//!   rejected values (V1–V5), unknown tools become `-32602` (E8), resource-not-found
//!   codes follow the client's revision (R3), and big results keep their tail under a
//!   hard cap (L1–L14). Everything else is forwarded byte-identical.
//! - [`stream`]: a byte stream of messages shaped as it arrives, a long one in memory
//!   bounded by the cap (B3), what to hold and what to send told to a
//!   [`Sink`](stream::Sink) the transport owns.
//! - [`owed`]: which requests are still owed an answer when the stream that was to
//!   carry their answers ends, and the error each gets (B5).
//!
//! ```
//! use backstop_jsonrpc::{Forward, Shaper};
//! use backstop_core::Limit;
//! let now = std::time::Instant::now();
//!
//! let mut shaper = Shaper::new(Limit::new(300).unwrap());
//! shaper.client_message(now, br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"capture_pane"}}"#);
//! let output = format!("{}PROMPT $", "line of output\n".repeat(1000));
//! let response = serde_json::json!({"jsonrpc": "2.0", "id": 7,
//!     "result": {"content": [{"type": "text", "text": output}]}});
//! let Forward::Rewritten(bytes) = shaper.server_message(now, &serde_json::to_vec(&response).unwrap()) else {
//!     panic!("over the cap")
//! };
//! let sent: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
//! let text = sent["result"]["content"][0]["text"].as_str().unwrap();
//! assert!(text.starts_with("[... truncated ") && text.ends_with("\nPROMPT $"));
//! ```
#![forbid(unsafe_code)]

pub mod lenient;
pub mod listing;
pub mod message;
pub mod owed;
pub mod scan;
pub mod shaper;
pub mod stream;

pub use shaper::{Forward, Route, Shaper};

/// The README's examples, compiled and run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
