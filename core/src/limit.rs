//! The response limit: tail-truncation of oversized tool results under a hard byte
//! cap (SPEC L1–L14).
//!
//! Over the cap, the text of the text blocks (joined by `\n\n`) is cut from the
//! *head*: the tail — the shell prompt, the last lines of output, the hint at the end
//! of an error — survives behind a header line `[... truncated N bytes ...]`.
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

mod escape;
mod joined;
mod payload;
mod schema;
mod serialization;
mod structured;

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};
use unicode_segmentation::{GraphemeCursor, GraphemeIncomplete};

use crate::result::{Content, ToolResult};
use crate::wire::Weights;
use joined::Joined;
use payload::PayloadTail;
pub use structured::{RESULT_TOO_LARGE, RESULT_TOO_LARGE_SUGGESTION, StructuredCut};

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

/// A response limit that cannot be configured.
///
/// ```
/// use backstop_core::{Limit, LimitError};
/// let err = Limit::new(10).unwrap_err();
/// assert_eq!(err, LimitError::CapTooSmall { cap: 10, min: Limit::min_bytes() });
/// assert!(err.to_string().contains(&Limit::min_bytes().to_string()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// The cap cannot hold even the smallest truncated result (SPEC L14).
    #[error(
        "a response cap of {cap} bytes cannot hold any truncated result; the minimum is {min} bytes"
    )]
    CapTooSmall {
        /// The cap asked for.
        cap: usize,
        /// The smallest cap that works.
        min: usize,
    },
}

/// A response limit: a cap in wire bytes, the tools it applies to, and whether cuts
/// are line-aligned.
///
/// ```
/// use backstop_core::Limit;
/// let limit = Limit::new(50_000).unwrap().only_tools(["capture_pane", "show_buffer"]);
/// assert!(limit.applies_to("capture_pane"));
/// assert!(!limit.applies_to("list_panes"));
/// assert_eq!(Limit::default().max_bytes(), 1_000_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    max_bytes: usize,
    tools: Option<BTreeSet<String>>,
    line_align: bool,
}

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
    /// What was cut; `None` when the result was returned unchanged.
    pub truncation: Option<Truncation>,
}

/// A report of one cut, also written to `_meta` under [`TRUNCATION_META_KEY`] unless
/// the cap could not hold it (SPEC L12).
///
/// ```
/// use backstop_core::{Limit, MetaKept, ToolResult};
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
/// use backstop_core::{Limit, MetaKept, ToolResult};
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

impl Default for Limit {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            tools: None,
            line_align: true,
        }
    }
}

impl Limit {
    /// A limit of `max_bytes` wire bytes for every tool, line-aligned.
    ///
    /// Refuses a cap too small to hold any truncated result, naming the minimum (L14).
    ///
    /// ```
    /// use backstop_core::Limit;
    /// assert!(Limit::new(Limit::min_bytes()).is_ok());
    /// assert!(Limit::new(Limit::min_bytes() - 1).is_err());
    /// ```
    pub fn new(max_bytes: usize) -> Result<Self, LimitError> {
        let min = Self::min_bytes();
        if max_bytes < min {
            return Err(LimitError::CapTooSmall {
                cap: max_bytes,
                min,
            });
        }
        Ok(Self {
            max_bytes,
            ..Self::default()
        })
    }

    /// The smallest cap that can hold every truncated result: the header line alone,
    /// with the largest possible count and `"isError":false`.
    ///
    /// ```
    /// assert!(backstop_core::Limit::min_bytes() < 200);
    /// ```
    pub fn min_bytes() -> usize {
        header_only(usize::MAX, Some(false)).wire_size()
    }

    /// Apply the limit only to the named tools (L1).
    ///
    /// ```
    /// let limit = backstop_core::Limit::default().only_tools(["capture_pane"]);
    /// assert!(!limit.applies_to("list_panes"));
    /// ```
    pub fn only_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Cut at line starts when one is near (`true`, the default), or at the longest
    /// grapheme boundary that fits (`false`) (L9).
    ///
    /// ```
    /// let limit = backstop_core::Limit::default().line_aligned(false);
    /// assert!(!limit.is_line_aligned());
    /// ```
    pub fn line_aligned(mut self, line_align: bool) -> Self {
        self.line_align = line_align;
        self
    }

    /// The cap in wire bytes.
    ///
    /// ```
    /// assert_eq!(backstop_core::Limit::new(5000).unwrap().max_bytes(), 5000);
    /// ```
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Whether cuts are line-aligned.
    ///
    /// ```
    /// assert!(backstop_core::Limit::default().is_line_aligned());
    /// ```
    pub fn is_line_aligned(&self) -> bool {
        self.line_align
    }

    /// Whether the limit applies to results of `tool` (L1).
    ///
    /// ```
    /// assert!(backstop_core::Limit::default().applies_to("any_tool"));
    /// ```
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| tools.contains(tool))
    }

    /// Limit the result of a call of `tool`: unchanged when the limit does not apply to
    /// the tool, when the result is not complete (input-required, task), or when it is
    /// at or under the cap (L1, L2); else cut (L3–L12, and L15 b for
    /// `structuredContent`). A tool that advertises an `outputSchema` is limited with
    /// [`apply_with_schema`](Self::apply_with_schema).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult};
    /// let limit = Limit::new(200).unwrap().only_tools(["big"]);
    /// let output = ToolResult::text("x".repeat(1000));
    /// assert!(limit.apply("small", output.clone()).truncation.is_none());
    /// assert!(limit.apply("big", output).truncation.is_some());
    /// ```
    pub fn apply(&self, tool: &str, result: ToolResult) -> Limited {
        self.apply_with_schema(tool, result, None)
    }

    /// [`apply`](Self::apply) for a tool whose `tools/list` entry advertises
    /// `output_schema`: a cut keeps `structuredContent` valid against it (L15 a), or
    /// becomes a `ResultTooLarge` error result where no cut can (L15 c).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult};
    /// use serde_json::json;
    /// let schema = json!({"type": "object", "required": ["id", "log"], "properties": {
    ///     "id": {"type": "string", "pattern": "^[a-z]+$"}, "log": {"type": "string"}}});
    /// let value = json!({"id": "build", "log": "step\n".repeat(10_000)});
    /// let result = ToolResult {
    ///     content: vec![backstop_core::Content::text(value.to_string())],
    ///     structured_content: Some(value),
    ///     ..ToolResult::default()
    /// };
    /// let limited = Limit::new(2_000).unwrap().apply_with_schema("build", result, Some(&schema));
    /// let cut = limited.result.structured_content.as_ref().unwrap();
    /// assert_eq!(cut["id"], "build"); // a pattern forbids cutting it
    /// assert!(cut["log"].as_str().unwrap().ends_with("step\n"));
    /// // The text block is the serialization of the cut value.
    /// assert_eq!(limited.result.content[0].as_text().unwrap(), cut.to_string());
    /// assert!(serde_json::to_vec(&limited.result).unwrap().len() <= 2_000);
    /// ```
    pub fn apply_with_schema(
        &self,
        tool: &str,
        result: ToolResult,
        output_schema: Option<&Value>,
    ) -> Limited {
        if !self.applies_to(tool) {
            return Limited {
                result,
                truncation: None,
            };
        }
        match self.truncate_with_schema(&result, output_schema) {
            Some(limited) => limited,
            None => Limited {
                result,
                truncation: None,
            },
        }
    }

    /// Limit a result whatever tool it came from; see [`apply`](Self::apply).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult};
    /// let mut error = ToolResult::text("E".repeat(5000));
    /// error.is_error = Some(true);
    /// let limited = Limit::new(500).unwrap().apply_to_result(error);
    /// assert_eq!(limited.result.is_error, Some(true)); // L5
    /// ```
    pub fn apply_to_result(&self, result: ToolResult) -> Limited {
        match self.truncate(&result) {
            Some(limited) => limited,
            None => Limited {
                result,
                truncation: None,
            },
        }
    }

    /// The cut version of a result that needs one, or `None` when the result is to be
    /// sent as it is (not complete, or at or under the cap). Reads and copies about as
    /// many bytes as the cap, however large the result (L13).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult};
    /// let huge = ToolResult::text("y".repeat(10_000_000));
    /// let cut = Limit::default().truncate(&huge).unwrap();
    /// assert_eq!(cut.truncation.unwrap().original_bytes, 10_000_000);
    /// assert!(Limit::default().truncate(&ToolResult::text("ok")).is_none());
    /// ```
    pub fn truncate(&self, result: &ToolResult) -> Option<Limited> {
        self.truncate_with_schema(result, None)
    }

    /// [`truncate`](Self::truncate) for a tool that advertises `output_schema` (L15).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult};
    /// let mut result = ToolResult::default();
    /// result.structured_content = Some(serde_json::json!({"state": "x".repeat(5000)}));
    /// let schema = serde_json::json!({"properties": {"state": {"enum": ["x"]}}});
    /// let limited = Limit::new(1000).unwrap().truncate_with_schema(&result, Some(&schema)).unwrap();
    /// // No cut can satisfy the schema: an error result that says so (L15 c).
    /// assert!(limited.result.is_error());
    /// assert_eq!(limited.result.meta.unwrap()["error_type"], "ResultTooLarge");
    /// ```
    pub fn truncate_with_schema(
        &self,
        result: &ToolResult,
        output_schema: Option<&Value>,
    ) -> Option<Limited> {
        if !result.is_complete() || result.wire_size_upto(self.max_bytes).is_some() {
            return None;
        }
        if let Some(structured) = &result.structured_content {
            return Some(
                structured::StructuredCutter::new(self, result, structured, output_schema).cut(),
            );
        }
        let text_blocks = result.content.iter().filter_map(Content::as_text);
        let non_text = result
            .content
            .iter()
            .filter(|c| c.as_text().is_none())
            .count();
        let json_text;
        let (joined, elided) = if text_blocks.clone().next().is_some() {
            (Joined::new(text_blocks), 0)
        } else {
            // No text block: the result's own JSON (the members the cut replaces) is the
            // text. This one path reads the whole result once to write that JSON, and
            // holds only the end of it that a cut can keep.
            let payload = PayloadTail::of(result, self.max_bytes);
            json_text = payload.tail;
            (Joined::new([json_text.as_str()]), payload.elided)
        };
        let cutter = Cutter {
            limit: self,
            source: result,
            joined: &joined,
            elided,
            non_text,
        };
        Some(
            cutter
                .cut(MetaKept::All)
                .or_else(|| cutter.cut(MetaKept::ErrorKeys))
                .unwrap_or_else(|| cutter.header_only()),
        )
    }
}

/// What an adapter that reads a result as it streams did not hold of it: for the text
/// blocks whose head it let go, how many bytes of it (SPEC B3). A cut keeps at most the
/// cap of the text, so a suffix of [`HeldInPart::min_held_bytes`] decides it exactly as
/// the whole text would.
///
/// ```
/// use backstop_core::limit::HeldInPart;
/// let held = HeldInPart::default().with_text_head(0, 5_000_000);
/// assert_eq!(held.text_head(0), 5_000_000);
/// assert!(!held.is_whole());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldInPart {
    /// `(block index, bytes of its head not held)`, for text blocks held in part.
    text_heads: Vec<(usize, usize)>,
    /// A block other than text holds a string held in part (any cut drops such a block).
    other_blocks: bool,
    /// A string not held whole may hold pydantic's `input_value=` (V3): an error result
    /// with one must be read whole, its every fragment redacted.
    may_quote_inputs: bool,
    /// `(JSON pointer, bytes of its head not held)`, for strings of `structuredContent`
    /// held in part.
    structured_heads: Vec<(String, usize)>,
    /// `(block index, first byte)`: what a text held in part starts with.
    text_starts: Vec<(usize, u8)>,
}

impl HeldInPart {
    /// The least a text held in part must hold of its tail (in UTF-8 bytes) for a cap
    /// of `max_bytes`: the cap, the longest escape sequence before it, and the
    /// grapheme context before that (L8).
    ///
    /// ```
    /// let least = backstop_core::limit::HeldInPart::min_held_bytes(1_000_000);
    /// assert!(least > 1_000_000 && least < 1_100_000);
    /// ```
    pub fn min_held_bytes(max_bytes: usize) -> usize {
        max_bytes + escape::LOOKBACK + PRE_CONTEXT_BYTES + 8
    }

    /// Text block `block` is held without its first `bytes` bytes.
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(2, 10);
    /// assert_eq!(held.text_head(2), 10);
    /// assert_eq!(held.text_head(1), 0);
    /// ```
    pub fn with_text_head(mut self, block: usize, bytes: usize) -> Self {
        self.text_heads.retain(|&(b, _)| b != block);
        self.text_heads.push((block, bytes));
        self
    }

    /// The text of block `block`, held in part, starts with `byte` (a text that starts
    /// with `{` or `[` may be the serialization of `structuredContent`; one whose start
    /// is not known is taken to be one).
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(0, 9).with_text_start(0, b'P');
    /// assert!(!held.is_whole());
    /// ```
    pub fn with_text_start(mut self, block: usize, byte: u8) -> Self {
        self.text_starts.retain(|&(b, _)| b != block);
        self.text_starts.push((block, byte));
        self
    }

    /// The string at `pointer` (a JSON pointer into `structuredContent`) is held
    /// without its first `bytes` bytes.
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_structured_head("/result", 7);
    /// assert_eq!(held.structured_head("/result"), 7);
    /// assert_eq!(held.structured_head("/other"), 0);
    /// ```
    pub fn with_structured_head(mut self, pointer: impl Into<String>, bytes: usize) -> Self {
        let pointer = pointer.into();
        self.structured_heads.retain(|(p, _)| *p != pointer);
        self.structured_heads.push((pointer, bytes));
        self
    }

    /// The bytes of the head of the `structuredContent` string at `pointer` not held.
    pub fn structured_head(&self, pointer: &str) -> usize {
        self.structured_heads
            .iter()
            .find_map(|(p, bytes)| (p == pointer).then_some(*bytes))
            .unwrap_or(0)
    }

    /// Whether text block `block` (`text`: what is held of it) may be a serialization
    /// of a value whose JSON starts with `opener`.
    fn may_serialize(&self, block: usize, text: &str, opener: u8) -> bool {
        let start = match self.text_head(block) {
            0 => text.bytes().find(|b| !b.is_ascii_whitespace()),
            _ => self
                .text_starts
                .iter()
                .find_map(|&(b, byte)| (b == block).then_some(byte)),
        };
        start.is_none_or(|b| b == opener || b.is_ascii_whitespace())
    }

    /// A block other than text is held in part (its data or blob, say).
    ///
    /// ```
    /// assert!(!backstop_core::limit::HeldInPart::default().with_other_block().is_whole());
    /// ```
    pub fn with_other_block(mut self) -> Self {
        self.other_blocks = true;
        self
    }

    /// A string not held whole may hold `input_value=` or `input_type=` (V3).
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(0, 9).quoting_inputs();
    /// assert!(held.may_quote_inputs());
    /// ```
    pub fn quoting_inputs(mut self) -> Self {
        self.may_quote_inputs = true;
        self
    }

    /// The bytes of text block `block`'s head not held (0: held whole).
    pub fn text_head(&self, block: usize) -> usize {
        self.text_heads
            .iter()
            .find_map(|&(b, bytes)| (b == block).then_some(bytes))
            .unwrap_or(0)
    }

    /// Whether everything is held.
    pub fn is_whole(&self) -> bool {
        self.text_heads.iter().all(|&(_, bytes)| bytes == 0)
            && self.structured_heads.iter().all(|&(_, bytes)| bytes == 0)
            && !self.other_blocks
    }

    /// Whether a string not held whole may quote a rejected input (V3).
    pub fn may_quote_inputs(&self) -> bool {
        self.may_quote_inputs
    }
}

impl Limit {
    /// [`truncate`](Self::truncate) for a result held in part (`held`): the same cut
    /// the whole result would get, or `Err(())` where it cannot be decided from what
    /// is held — no text block, a text block that may be the serialization of
    /// `structuredContent`, or a string held in part with less than
    /// [`HeldInPart::min_held_bytes`] of its tail. `output_schema` as for
    /// [`truncate_with_schema`](Self::truncate_with_schema) (L15).
    /// A result held in part is over the cap (what is not held is more than it).
    ///
    /// ```
    /// use backstop_core::limit::HeldInPart;
    /// use backstop_core::{Limit, ToolResult};
    /// let limit = Limit::new(1_000).unwrap();
    /// let whole = ToolResult::text("line\n".repeat(100_000));
    /// let tail = "line\n".repeat(10_000);
    /// let held = HeldInPart::default().with_text_head(0, 500_000 - tail.len());
    /// let in_part = limit.truncate_in_part(&ToolResult::text(tail), &held, None).unwrap();
    /// assert_eq!(in_part, limit.truncate(&whole));
    /// ```
    #[allow(clippy::result_unit_err)]
    pub fn truncate_in_part(
        &self,
        result: &ToolResult,
        held: &HeldInPart,
        output_schema: Option<&Value>,
    ) -> Result<Option<Limited>, ()> {
        if held.is_whole() {
            return Ok(self.truncate_with_schema(result, output_schema));
        }
        if !result.is_complete() {
            return Ok(None);
        }
        if let Some(structured) = &result.structured_content {
            return self.structured_in_part(result, structured, held, output_schema);
        }
        let mut heads = Vec::new();
        let mut non_text = 0;
        for (index, content) in result.content.iter().enumerate() {
            match content.as_text() {
                Some(text) => heads.push((held.text_head(index), text)),
                None => non_text += 1,
            }
        }
        if heads.is_empty() {
            return Err(());
        }
        let joined = Joined::held_in_part(heads);
        if joined.len() - joined.held_from() < HeldInPart::min_held_bytes(self.max_bytes) {
            return Err(());
        }
        let cutter = Cutter {
            limit: self,
            source: result,
            joined: &joined,
            elided: 0,
            non_text,
        };
        Ok(Some(
            cutter
                .cut(MetaKept::All)
                .or_else(|| cutter.cut(MetaKept::ErrorKeys))
                .unwrap_or_else(|| cutter.header_only()),
        ))
    }
}

impl Limit {
    /// [`truncate_in_part`](Self::truncate_in_part) for a result with
    /// `structuredContent` (L15): decided as the whole would be where no text block can
    /// be the value's serialization (a text held in part that starts with `{`, or any
    /// block that may, is read whole), and every string held in part keeps more than a
    /// cut can.
    fn structured_in_part(
        &self,
        result: &ToolResult,
        structured: &Value,
        held: &HeldInPart,
        output_schema: Option<&Value>,
    ) -> Result<Option<Limited>, ()> {
        let opener = match structured {
            Value::Object(_) => b'{',
            Value::Array(_) => b'[',
            _ => return Err(()),
        };
        let mut texts = 0;
        for (index, content) in result.content.iter().enumerate() {
            if let Some(text) = content.as_text() {
                texts += 1;
                if held.may_serialize(index, text, opener) {
                    return Err(());
                }
                if held.text_head(index) > 0
                    && text.len() < HeldInPart::min_held_bytes(self.max_bytes)
                {
                    return Err(());
                }
            }
        }
        let least = HeldInPart::min_held_bytes(self.max_bytes);
        if texts == 0
            || held.other_blocks
            || held.structured_heads.iter().any(|(pointer, bytes)| {
                *bytes > 0
                    && structured
                        .pointer(pointer)
                        .and_then(Value::as_str)
                        .is_none_or(|text| text.len() < least)
            })
        {
            return Err(());
        }
        Ok(Some(
            structured::StructuredCutter::new(self, result, structured, output_schema)
                .held_in_part(held)
                .cut(),
        ))
    }
}

impl Limit {
    /// [`truncate`](Self::truncate) for a result whose text blocks' texts are held
    /// elsewhere, borrowed: `texts[i]` is the text of the `i`-th text block of
    /// `result`, whose own text there is ignored (a binding leaves it empty). The
    /// decision and the cut are those of `truncate` on the result with the texts put
    /// in; the texts are not copied, so a binding can hand over a 100 MB string it
    /// holds at the cost of the kept tail (L13). A result with `structuredContent`, or
    /// one without text blocks, is put together and cut by
    /// [`truncate_with_schema`](Self::truncate_with_schema)
    /// with `output_schema`. `None`: send the result as it is.
    ///
    /// ```
    /// use backstop_core::{Content, Limit, ToolResult};
    /// let scrollback = "line of output\n".repeat(100_000) + "PROMPT $";
    /// let shell = ToolResult { content: vec![Content::text("")], ..ToolResult::default() };
    /// let limit = Limit::new(1_000).unwrap();
    /// let cut = limit.truncate_texts(&shell, &[&scrollback], None).unwrap();
    /// let whole = limit.truncate(&ToolResult::text(scrollback.clone())).unwrap();
    /// assert_eq!(cut, whole);
    /// assert!(limit.truncate_texts(&shell, &["small"], None).is_none());
    /// ```
    pub fn truncate_texts(
        &self,
        result: &ToolResult,
        texts: &[&str],
        output_schema: Option<&Value>,
    ) -> Option<Limited> {
        if !texts_apart(result, texts) {
            let whole = result.clone().with_texts(texts);
            return self.truncate_with_schema(&whole, output_schema);
        }
        let blocks = texts.len();
        if !result.is_complete() {
            return None;
        }
        // The size with the given texts in place of the held ones, counted up to the cap.
        let held: usize = result
            .content
            .iter()
            .filter_map(Content::as_text)
            .map(crate::wire::string_size)
            .sum();
        let size = result
            .wire_size_upto(self.max_bytes.saturating_add(held))
            .and_then(|with_held| {
                let mut meter = crate::wire::Meter::new(self.max_bytes);
                meter.add(with_held - held).ok()?;
                texts.iter().try_for_each(|t| meter.str(t)).ok()?;
                Some(meter.used())
            });
        if size.is_some() {
            return None;
        }
        let joined = Joined::new(texts.iter().copied());
        let cutter = Cutter {
            limit: self,
            source: result,
            joined: &joined,
            elided: 0,
            non_text: result.content.len() - blocks,
        };
        Some(
            cutter
                .cut(MetaKept::All)
                .or_else(|| cutter.cut(MetaKept::ErrorKeys))
                .unwrap_or_else(|| cutter.header_only()),
        )
    }
}

/// Whether [`Limit::truncate_texts`] decides on `result` with `texts` held apart: it
/// has no `structuredContent` (whose cut reads the text blocks whole, L15), and
/// `texts` are the texts of its text blocks, at least one. Otherwise the texts are
/// put in ([`ToolResult::with_texts`]) and the whole result decided on.
pub(crate) fn texts_apart(result: &ToolResult, texts: &[&str]) -> bool {
    let blocks = result
        .content
        .iter()
        .filter(|c| c.as_text().is_some())
        .count();
    result.structured_content.is_none() && blocks > 0 && blocks == texts.len()
}

/// The header line of a cut (L3).
fn header(dropped: usize) -> String {
    format!("[... truncated {dropped} bytes ...]")
}

/// A result that is the header line alone, keeping `isError` (L6).
fn header_only(dropped: usize, is_error: Option<bool>) -> ToolResult {
    ToolResult {
        is_error,
        ..ToolResult::text(header(dropped))
    }
}

/// The number of decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// One cut in the making: the result, its joined text, and the limit.
struct Cutter<'a> {
    limit: &'a Limit,
    source: &'a ToolResult,
    /// The end of the text to cut; `elided` bytes before it were not kept.
    joined: &'a Joined<'a>,
    elided: usize,
    non_text: usize,
}

impl<'a> Cutter<'a> {
    fn report(&self, dropped: usize, meta: MetaKept) -> Truncation {
        Truncation {
            dropped_bytes: dropped,
            original_bytes: self.elided + self.joined.len(),
            dropped_blocks: self.non_text,
            meta,
            structured: Vec::new(),
        }
    }

    /// The `_meta` a cut result would carry: see [`kept_meta`].
    fn kept_meta(&self, kept: MetaKept) -> Option<Map<String, Value>> {
        kept_meta(self.source.meta.as_ref(), kept, self.limit.max_bytes)
    }

    /// The longest cut that fits with this much `_meta` kept, if any fits at all.
    fn cut(&self, kept: MetaKept) -> Option<Limited> {
        let cap = self.limit.max_bytes;
        let mut meta = self.kept_meta(kept)?;
        for (k, v) in &self.source.extra {
            let mut meter = crate::wire::Meter::new(cap);
            meter.member(k, v).ok()?;
        }
        // The result with an empty tail and a one-digit count: everything but the tail
        // and the count's extra digits.
        let report = |dropped| serde_json::to_value(self.report(dropped, kept)).ok();
        meta.insert(TRUNCATION_META_KEY.into(), report(0)?);
        let mut result = ToolResult {
            content: vec![Content::text(header(0) + "\n")],
            structured_content: None,
            is_error: self.source.is_error,
            meta: Some(meta),
            result_type: self.source.result_type.clone(),
            extra: self.source.extra.clone(),
        };
        let skeleton = result.wire_size_upto(cap)?;
        // size(p) = skeleton + 2 × (digits(p) − 1) + escaped length of the tail from p:
        // the count appears twice, in the header and in the report.
        let elided = self.elided;
        let size =
            |p: usize, escaped_tail: usize| skeleton + 2 * (digits(elided + p) - 1) + escaped_tail;
        let cut = self.find_cut(cap - skeleton, |p, e| size(p, e) <= cap)?;
        let start = elided + cut.start;

        let header = header(start);
        let tail = cut.tail();
        let mut text = String::with_capacity(header.len() + 1 + tail.len());
        text.push_str(&header);
        text.push('\n');
        text.push_str(tail);
        result.content = vec![Content::text(text)];
        if let Some(meta) = result.meta.as_mut() {
            meta.insert(TRUNCATION_META_KEY.into(), report(start)?);
        }
        debug_assert!(
            result.wire_size_upto(cap).is_some(),
            "L4: the cut result fits"
        );
        Some(Limited {
            result,
            truncation: Some(self.report(start, kept)),
        })
    }

    /// The header line alone, with `isError` (L6's last resort; always fits a valid cap).
    fn header_only(&self) -> Limited {
        let dropped = self.elided + self.joined.len();
        Limited {
            result: header_only(dropped, self.source.is_error),
            truncation: Some(self.report(dropped, MetaKept::Nothing)),
        }
    }

    /// Where the kept tail starts: see [`find_cut`].
    fn find_cut(&self, budget: usize, fits: impl Fn(usize, usize) -> bool) -> Option<Cut<'a>> {
        find_cut(
            self.joined,
            self.limit.line_align,
            Weights::LITERAL,
            budget,
            fits,
        )
    }
}

/// The `_meta` a cut result would carry with `kept` of the source's `meta`, without
/// the truncation report, or `None` if it alone is over `cap` (L6).
fn kept_meta(
    meta: Option<&Map<String, Value>>,
    kept: MetaKept,
    cap: usize,
) -> Option<Map<String, Value>> {
    // Measure before copying: a `_meta` over the cap is never copied.
    let fits = |v: &Value| crate::wire::value_size_upto(v, cap).is_some();
    let mut out = match kept {
        MetaKept::All => match meta {
            Some(meta) => {
                crate::wire::Meter::new(cap).object(meta).ok()?;
                meta.clone()
            }
            None => Map::new(),
        },
        MetaKept::ErrorKeys => {
            let meta = meta?;
            if meta.keys().all(|k| ERROR_META_KEYS.contains(&k.as_str())) {
                return None; // Nothing to drop: the same as MetaKept::All.
            }
            let mut kept = Map::new();
            for key in ERROR_META_KEYS {
                if let Some(value) = meta.get(key) {
                    if !fits(value) {
                        return None;
                    }
                    kept.insert(key.to_owned(), value.clone());
                }
            }
            kept
        }
        MetaKept::Nothing => return None,
    };
    out.remove(TRUNCATION_META_KEY);
    Some(out)
}

/// Where the kept tail of `joined` starts: the smallest allowed cut position `p` with
/// `fits(p, cost of the tail from p)`, costs counted with `weights` (L8–L10).
///
/// `budget` bounds the cost of any tail that can fit, so no allowed `p` lies before
/// the point where the budget runs out when walking back.
fn find_cut<'a>(
    joined: &'a Joined<'a>,
    line_align: bool,
    weights: Weights,
    budget: usize,
    fits: impl Fn(usize, usize) -> bool,
) -> Option<Cut<'a>> {
    let end = joined.len();
    let (lowest, escaped) = joined.tail_within(budget, weights);
    // The window the cut can land in, with enough before it to see escape sequences.
    let window_start = joined.floor_char_boundary(lowest.saturating_sub(escape::LOOKBACK));
    let window = joined.tail_from(window_start);
    let context_start = joined.floor_char_boundary(window_start.saturating_sub(PRE_CONTEXT_BYTES));
    let mut boundaries = Boundaries::new(joined, &window, window_start, context_start);

    // Walk forward over allowed positions, keeping the escaped tail length current.
    let mut tail = Tail {
        weights,
        window: &window,
        window_start,
        pos: lowest,
        escaped,
    };
    let mut pos = lowest;
    let grapheme_cut = loop {
        pos = boundaries.allowed_at_or_after(pos);
        tail.advance_to(pos);
        if fits(pos, tail.escaped) {
            break pos;
        }
        if pos == end {
            return None;
        }
        pos = boundaries.next_grapheme(pos);
    };
    if !line_align || grapheme_cut == 0 {
        return Some(Cut {
            start: grapheme_cut,
            window_start,
            window,
        });
    }
    // L9: the next line start, if it is near the start of the kept window.
    let reach = ((end - grapheme_cut) / 4).min(LINE_ALIGN_MAX_BYTES);
    // Line breaks from the byte just before the grapheme cut, `reach` bytes on: in
    // the window, as `reach` is at most a quarter of the tail.
    let first = grapheme_cut - 1 - window_start;
    let near = &window.as_bytes()[first..=first + reach];
    for (i, &byte) in near.iter().enumerate() {
        if byte == b'\n' {
            let line_start = window_start + first + i + 1;
            tail.advance_to(line_start);
            if fits(line_start, tail.escaped) {
                return Some(Cut {
                    start: line_start,
                    window_start,
                    window,
                });
            }
        }
    }
    Some(Cut {
        start: grapheme_cut,
        window_start,
        window,
    })
}

/// Where a cut starts, with the copied window of the joined text that holds its tail.
struct Cut<'a> {
    start: usize,
    window_start: usize,
    window: Cow<'a, str>,
}

impl Cut<'_> {
    fn tail(&self) -> &str {
        &self.window[self.start - self.window_start..]
    }
}

/// The escaped length of the joined text from a moving position to its end.
struct Tail<'a> {
    weights: Weights,
    window: &'a str,
    window_start: usize,
    pos: usize,
    escaped: usize,
}

impl Tail<'_> {
    fn advance_to(&mut self, pos: usize) {
        debug_assert!(pos >= self.pos);
        let from = self.pos - self.window_start;
        let to = pos - self.window_start;
        self.escaped -= self.weights.of_bytes(&self.window.as_bytes()[from..to]);
        self.pos = pos;
    }
}

/// Allowed cut positions: grapheme-cluster boundaries outside escape sequences (L8).
///
/// The grapheme cursor sees the text from `base` on ([`PRE_CONTEXT_BYTES`] before the
/// window) as if it started there: its positions are offsets from `base`.
struct Boundaries<'a> {
    joined: &'a Joined<'a>,
    window: &'a str,
    window_start: usize,
    base: usize,
    cursor: GraphemeCursor,
}

impl<'a> Boundaries<'a> {
    fn new(joined: &'a Joined<'a>, window: &'a str, window_start: usize, base: usize) -> Self {
        let cursor = GraphemeCursor::new(window_start - base, joined.len() - base, true);
        Self {
            joined,
            window,
            window_start,
            base,
            cursor,
        }
    }

    /// The smallest allowed position at or after `pos` (the end is always allowed).
    fn allowed_at_or_after(&mut self, mut pos: usize) -> usize {
        let end = self.joined.len();
        // Every step lands at or before the end.
        while pos != end {
            if !self.is_grapheme_boundary(pos) {
                pos = self.next_grapheme(pos);
            } else if let Some(seq_end) =
                escape::enclosing_end(self.window, pos - self.window_start)
            {
                pos = self.window_start + seq_end;
            } else {
                break;
            }
        }
        pos.min(end)
    }

    fn is_grapheme_boundary(&mut self, pos: usize) -> bool {
        self.cursor.set_cursor(pos - self.base);
        loop {
            match self
                .cursor
                .is_boundary(self.window, self.window_start - self.base)
            {
                Ok(answer) => return answer,
                Err(GraphemeIncomplete::PreContext(at)) => self.provide_context(at),
                // Cannot happen for a window that runs to the end of the text, and every
                // position asked about is a character boundary.
                Err(_) => return true,
            }
        }
    }

    /// Hand the cursor the text just before `at` (an offset from `base`), from outside
    /// the window if need be, but none before `base`.
    fn provide_context(&mut self, at: usize) {
        let (chunk, start) = self.joined.chunk_ending_at(self.base + at);
        let skip = self.base.saturating_sub(start);
        let chunk = chunk.get(skip..).unwrap_or_default();
        self.cursor
            .provide_context(chunk, start.max(self.base) - self.base);
    }

    /// The next grapheme-cluster boundary after `pos` (the end if none).
    fn next_grapheme(&mut self, pos: usize) -> usize {
        let end = self.joined.len();
        self.cursor.set_cursor(pos - self.base);
        loop {
            match self
                .cursor
                .next_boundary(self.window, self.window_start - self.base)
            {
                Ok(next) => return next.map_or(end, |next| self.base + next),
                Err(GraphemeIncomplete::PreContext(at)) => self.provide_context(at),
                // Cannot happen for a window that runs to the end of the text; the end
                // is always allowed.
                Err(_) => return end,
            }
        }
    }
}
