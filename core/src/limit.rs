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
    let mut boundaries = Boundaries::new(joined, &window, window_start);

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
struct Boundaries<'a> {
    joined: &'a Joined<'a>,
    window: &'a str,
    window_start: usize,
    cursor: GraphemeCursor,
}

impl<'a> Boundaries<'a> {
    fn new(joined: &'a Joined<'a>, window: &'a str, window_start: usize) -> Self {
        let cursor = GraphemeCursor::new(window_start, joined.len(), true);
        Self {
            joined,
            window,
            window_start,
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
        self.cursor.set_cursor(pos);
        loop {
            match self.cursor.is_boundary(self.window, self.window_start) {
                Ok(answer) => return answer,
                Err(GraphemeIncomplete::PreContext(at)) => self.provide_context(at),
                // Cannot happen for a window that runs to the end of the text, and every
                // position asked about is a character boundary.
                Err(_) => return true,
            }
        }
    }

    /// Hand the cursor the text just before `at`, from outside the window if need be.
    fn provide_context(&mut self, at: usize) {
        let (chunk, start) = self.joined.chunk_ending_at(at);
        self.cursor.provide_context(chunk, start);
    }

    /// The next grapheme-cluster boundary after `pos` (the end if none).
    fn next_grapheme(&mut self, pos: usize) -> usize {
        let end = self.joined.len();
        self.cursor.set_cursor(pos);
        loop {
            match self.cursor.next_boundary(self.window, self.window_start) {
                Ok(next) => return next.unwrap_or(end),
                Err(GraphemeIncomplete::PreContext(at)) => self.provide_context(at),
                // Cannot happen for a window that runs to the end of the text; the end
                // is always allowed.
                Err(_) => return end,
            }
        }
    }
}
