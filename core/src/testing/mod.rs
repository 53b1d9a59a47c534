//! Generators of hostile tool output and failures, and checkers of backstop's rules,
//! for property-testing and fuzzing — backstop's own tests use them, and so can the
//! tests of any MCP server (feature `testing`).
//!
//! - [`strategies`]: proptest strategies: terminal output that breaks naive limiters
//!   (runs of `\n`, quotes and backslashes, ANSI and OSC sequences, multi-byte scripts,
//!   emoji ZWJ sequences, flags, combining marks, CRLF), results with large and nested
//!   `_meta` and non-text blocks, caps, and failures.
//! - [`unstructured`]: the same inputs built from fuzzer bytes with `arbitrary`.
//! - [`checks`]: the limiter's rules (SPEC L2–L12) and the error result's (E1–E7, V3),
//!   as functions that say which rule an output breaks.
//!
//! ```
//! use backstop_core::testing::{checks, strategies};
//! use backstop_core::Limit;
//! use proptest::prelude::*;
//!
//! proptest!(ProptestConfig::with_cases(16), |((result, cap) in strategies::result_and_cap())| {
//!     let limit = Limit::new(cap).unwrap();
//!     checks::check_limit(&limit, &result).map_err(|v| TestCaseError::fail(v.to_string()))?;
//! });
//! ```
//!
//! In your own server's tests: whatever a tool prints, what the client gets keeps the
//! prompt and stays under the cap.
//!
//! ```
//! use backstop_core::testing::{checks::check_limit, strategies::terminal_text};
//! use backstop_core::{Limit, ToolResult};
//! use proptest::prelude::*;
//!
//! // The tool under test.
//! fn capture_pane(scrollback: &str) -> ToolResult {
//!     ToolResult::text(format!("{scrollback}\nPROMPT $"))
//! }
//!
//! let limit = Limit::new(2_000).unwrap();
//! proptest!(ProptestConfig::with_cases(32), |(scrollback in terminal_text(2_000))| {
//!     let sent = check_limit(&limit, &capture_pane(&scrollback))
//!         .map_err(|v| TestCaseError::fail(v.to_string()))?;
//!     prop_assert!(sent.result.content[0].as_text().unwrap().ends_with("\nPROMPT $"));
//! });
//! ```

pub mod checks;
pub mod strategies;
pub mod unstructured;

/// Pieces of terminal output that naive limiters get wrong: the alphabet every
/// generator here draws text from.
pub const FRAGMENTS: &[&str] = &[
    "line 12 of output",
    "PROMPT $ ",
    "\n",
    "\n\n\n",
    "\r\n",
    "\r",
    "\"",
    "\\",
    "\t",
    "\u{0}",
    "\u{1b}[31m",
    "\u{1b}[38;5;196m",
    "\u{1b}[0m",
    "\u{1b}]8;;https://example.com/a\u{1b}\\",
    "\u{1b}]0;window title\u{7}",
    "\u{1b}(B",
    "\u{1b}",
    "é",
    "e\u{301}\u{302}",
    "\u{301}",
    "日本語",
    "Ελληνικά",
    "👨\u{200d}👩\u{200d}👧\u{200d}👦",
    "🇯🇵",
    "🇯",
    "\u{200d}",
    "👍🏽",
    "a",
    "  ",
];
