//! The text cut (SPEC L3–L12): the text of a result's text blocks, joined, loses its
//! head; the longest tail that fits stays behind the header line, cut at a grapheme
//! boundary outside escape sequences (L8), at a line start when one is near (L9).

use std::borrow::Cow;

use serde_json::{Map, Value};
use unicode_segmentation::{GraphemeCursor, GraphemeIncomplete};

use super::joined::Joined;
use super::{
    ERROR_META_KEYS, LINE_ALIGN_MAX_BYTES, Limit, Limited, MetaKept, PRE_CONTEXT_BYTES,
    TRUNCATION_META_KEY, Truncation, escape,
};
use crate::result::{Content, ToolResult};
use crate::wire::Weights;

/// The header line of a cut (L3).
pub(crate) fn header(dropped: usize) -> String {
    format!("[... truncated {dropped} bytes ...]")
}

/// A result that is the header line alone, keeping `isError` (L6).
pub(super) fn header_only(dropped: usize, is_error: Option<bool>) -> ToolResult {
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
pub(crate) struct Cutter<'a> {
    pub(super) limit: &'a Limit,
    pub(super) source: &'a ToolResult,
    /// The end of the text to cut; `elided` bytes before it were not kept.
    pub(super) joined: &'a Joined<'a>,
    pub(super) elided: usize,
    pub(super) non_text: usize,
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
    pub(super) fn cut(&self, kept: MetaKept) -> Option<Limited> {
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
    pub(super) fn header_only(&self) -> Limited {
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
pub(crate) fn kept_meta(
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
pub(crate) fn find_cut<'a>(
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
pub(crate) struct Cut<'a> {
    pub(super) start: usize,
    window_start: usize,
    window: Cow<'a, str>,
}

impl Cut<'_> {
    pub(super) fn tail(&self) -> &str {
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
