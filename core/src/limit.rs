//! The response limit: truncation of oversized tool results under a hard byte cap
//! (SPEC L1–L17).
//!
//! Over the cap, the text of the text blocks (joined by `\n\n`) is cut from the
//! *head* by default: the tail — the shell prompt, the last lines of output, the hint
//! at the end of an error — survives behind a header line `[... truncated N bytes ...]`.
//! A tool may keep its head instead, or both ends ([`Keep`], L16): the header line then
//! ends the text, or stands between the two parts.
//!
//! - The cap is hard (L4): escapes, `_meta`, the header and the truncation report are
//!   all counted, exactly as `serde_json` would write them.
//! - The tail is the longest that fits (L10), cut at a grapheme-cluster boundary,
//!   never inside a terminal escape sequence (L8), and at a line start when one lies
//!   near the start of the kept window (L9).
//! - `isError`, `_meta`, `resultType` and unknown members survive (L5–L7).
//! - Cost is bounded by the cap (L13): the dropped head is neither read nor copied.
//!
//! ```
//! use backstop_core::{Limit, ToolResult};
//!
//! let scrollback: String = (1..=100_000).map(|n| format!("line {n} of output\n")).collect();
//! let limit = Limit::new(1_000).unwrap();
//! let limited = limit.apply("capture_pane", ToolResult::text(scrollback + "PROMPT $"));
//!
//! let text = limited.result.content[0].as_text().unwrap();
//! assert!(text.starts_with("[... truncated "));
//! assert!(text.ends_with("line 100000 of output\nPROMPT $"));
//! assert!(serde_json::to_vec(&limited.result).unwrap().len() <= 1_000);
//! assert!(limited.truncation.is_some());
//! ```

//! Files by job:
//!
//! - `settings`: [`Limit`], the cap, what it applies to and which end each tool keeps
//!   ([`Keep`]), and [`LimitError`] (L2, L14, L16);
//! - `entry_points`: the calls adapters make — `apply*`, `truncate*`, the paths for
//!   a result held in part and for texts held elsewhere (L1, L2, L13);
//! - `held_in_part`: [`HeldInPart`], what a streaming adapter did not hold;
//! - `cutter`: the text cut itself (L3–L12, L16);
//! - `joined`, `escape`, `payload`: the joined text, escape sequences, a result's own
//!   JSON as text;
//! - `structured`, `schema`, `serialization`: the structured cut (L15).

mod client_profile;
mod cutter;
mod entry_points;
mod error_lead;
mod escape;
mod held_in_part;
mod joined;
mod payload;
mod reader;
mod schema;
mod serialization;
pub(crate) mod settings;
mod structured;

use serde::Serialize;

pub use client_profile::ClientProfile;
pub(crate) use cutter::{
    Cutter, find_cut, find_cut_from, find_head_cut, header_of, kept_meta, share_of, with_header,
};
pub(crate) use entry_points::texts_apart;
pub use held_in_part::{HeldEnds, HeldInPart, may_start_serialization};
use payload::PayloadTail;
pub use reader::ReaderCount;
pub(crate) use settings::Limit;
pub use settings::{ERROR_LEAD, Keep, KeepError, LimitError};
pub use structured::{RESULT_TOO_LARGE, RESULT_TOO_LARGE_SUGGESTION, StructuredCut};

use crate::result::ToolResult;

/// The default cap: 1,000,000 bytes of wire size (SPEC L2).
pub const DEFAULT_MAX_BYTES: usize = 1_000_000;

/// The `_meta` key under which a cut is reported (SPEC L12).
pub const TRUNCATION_META_KEY: &str = "backstop/truncation";

/// The `_meta` keys of an error result that survive when the rest of `_meta` cannot
/// (SPEC L6: the E3–E5 keys).
pub const ERROR_META_KEYS: [&str; 3] = ["error_type", "expected", "suggestion"];

/// How far before the window the cut can land in the grapheme-cluster rules look
/// (L8): a cluster is judged with at most this much text before the window. It bounds
/// what a cut reads (L13) and what a streaming adapter must hold of a text.
pub const PRE_CONTEXT_BYTES: usize = 16 * 1024;

/// A line break this close to the start of the kept window moves the cut to the next
/// line (SPEC L9): within the first quarter of the window, and at most this many bytes.
pub const LINE_ALIGN_MAX_BYTES: usize = 4096;

/// What limiting did to a result.
///
/// ```
/// use backstop_core::{Limit, ToolResult};
/// let limited = Limit::default().apply("t", ToolResult::text("small"));
/// assert_eq!(limited.result, ToolResult::text("small"));
/// assert!(limited.truncation.is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Limited {
    /// The result to send: the input when nothing was cut.
    pub result: ToolResult,
    /// What was cut; `None` when nothing was.
    pub truncation: Option<Truncation>,
    /// E12 put `Error: ` before its text (the result changed though nothing was cut).
    pub error_lead: bool,
}

/// A report of one cut, also written to `_meta` under [`TRUNCATION_META_KEY`] unless
/// the cap could not hold it (SPEC L12).
///
/// ```
/// use backstop_core::{Limit, ToolResult, limit::MetaKept};
/// let cut = Limit::new(300).unwrap().apply_to_result(ToolResult::text("z".repeat(1000)));
/// let report = cut.truncation.unwrap();
/// assert_eq!(report.original_bytes, 1000);
/// assert_eq!(report.meta, MetaKept::All);
/// assert_eq!(cut.result.meta.unwrap()["backstop/truncation"]["dropped_bytes"], report.dropped_bytes);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Truncation {
    /// Bytes of the joined text dropped from its head: the `N` of the header (L3).
    pub dropped_bytes: usize,
    /// Bytes of the joined text before the cut.
    pub original_bytes: usize,
    /// Content blocks other than text that were dropped.
    pub dropped_blocks: usize,
    /// How much of the result's `_meta` could be kept.
    #[serde(skip)]
    pub meta: MetaKept,
    /// The cuts inside `structuredContent` (L15), each with its JSON pointer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub structured: Vec<StructuredCut>,
}

/// How much of a truncated result's `_meta` survived (SPEC L6).
///
/// ```
/// use backstop_core::{Limit, ToolResult, limit::MetaKept};
/// let big_meta = ToolResult::text("t".repeat(500)).with_meta("trace", "x".repeat(5000).into());
/// let cut = Limit::new(400).unwrap().apply_to_result(big_meta);
/// assert_eq!(cut.truncation.unwrap().meta, MetaKept::ErrorKeys);
/// assert!(!cut.result.meta.unwrap().contains_key("trace"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MetaKept {
    /// All of it, with the truncation report.
    #[default]
    All,
    /// Only the E3–E5 keys ([`ERROR_META_KEYS`]), with the truncation report.
    ErrorKeys,
    /// None: the result is the header line alone, with `isError` kept.
    Nothing,
}
