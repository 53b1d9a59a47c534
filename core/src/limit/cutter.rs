//! The text cut (SPEC L3–L12): the text of a result's text blocks, joined, loses its
//! head; the longest tail that fits stays behind the header line, cut at a grapheme
//! boundary outside escape sequences (L8), at a line start when one is near (L9).

use std::borrow::Cow;

use serde_json::{Map, Value};
use unicode_segmentation::{GraphemeCursor, GraphemeIncomplete};

use super::joined::Joined;
use super::reader::{ReaderCount, ReaderRoom};
use super::{
    ERROR_META_KEYS, Keep, LINE_ALIGN_MAX_BYTES, Limit, Limited, MetaKept, PRE_CONTEXT_BYTES,
    TRUNCATION_META_KEY, Truncation, escape,
};
use crate::result::{Content, ToolResult};
use crate::wire::Weights;

/// The header line of a cut (L3).
pub(crate) fn header(dropped: usize) -> String {
    format!("[... truncated {dropped} bytes ...]")
}

/// The header line of a text cut that dropped `dropped` bytes of the text and
/// `blocks` blocks other than text (L3, L17): the bytes, or — when the text lost
/// none — the blocks, so that a cut never reads "truncated 0 bytes".
pub(crate) fn header_of(dropped: usize, blocks: usize) -> String {
    match (dropped, blocks) {
        (0, 1) => "[... truncated 1 non-text block ...]".to_owned(),
        (0, 2..) => format!("[... truncated {blocks} non-text blocks ...]"),
        _ => header(dropped),
    }
}

/// A result that is the header line alone, keeping `isError` (L6).
pub(super) fn header_only(dropped: usize, is_error: Option<bool>) -> ToolResult {
    header_line_only(header(dropped), is_error)
}

/// A result that is `line` alone, keeping `isError` (L6).
fn header_line_only(line: String, is_error: Option<bool>) -> ToolResult {
    ToolResult {
        is_error,
        ..ToolResult::text(line)
    }
}

/// The text of a cut under `keep`, with the header line where L16 puts it: first
/// (tail), last (head), or between the two parts (head and tail).
pub(crate) fn with_header(keep: Keep, dropped: usize, head: &str, tail: &str) -> String {
    with_header_line(keep, &header(dropped), head, tail)
}

/// [`with_header`] with the header line `header`.
fn with_header_line(keep: Keep, header: &str, head: &str, tail: &str) -> String {
    let mut text = String::with_capacity(head.len() + header.len() + tail.len() + 2);
    text.push_str(head);
    if keep != Keep::Tail {
        text.push('\n');
    }
    text.push_str(header);
    if keep != Keep::Head {
        text.push('\n');
    }
    text.push_str(tail);
    text
}

/// `per_mille` thousandths of `room`, rounded down.
pub(crate) fn share_of(room: usize, per_mille: u16) -> usize {
    let share = room as u128 * u128::from(per_mille.min(1000)) / 1000;
    usize::try_from(share).unwrap_or(room)
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
        // The result with empty kept parts and a one-digit count: everything but the
        // kept text and the count's extra digits.
        let keep = self.limit.keep;
        let report = |dropped| serde_json::to_value(self.report(dropped, kept)).ok();
        meta.insert(TRUNCATION_META_KEY.into(), report(0)?);
        let mut result = ToolResult {
            content: vec![Content::text(with_header(keep, 0, "", ""))],
            structured_content: None,
            is_error: self.source.is_error,
            meta: Some(meta),
            result_type: self.source.result_type.clone(),
            extra: self.source.extra.clone(),
        };
        let skeleton = result.wire_size_upto(cap)?;
        let room = cap - skeleton;
        // size = skeleton + 2 × (digits(N) − 1) + escaped length of the kept text: the
        // count appears twice, in the header and in the report; when no text byte is
        // dropped, the header names the blocks that are instead (L17).
        let blocks_line = header_of(0, self.non_text).len() - header(0).len();
        let counted = |dropped: usize| match dropped {
            0 => blocks_line,
            _ => 2 * (digits(dropped) - 1),
        };
        let line = |dropped: usize| header_of(dropped, self.non_text);
        let len = self.joined.len();
        // L18: what the reader counts of the text, the header line's extra digits
        // (beyond the shortest line's) counted where the line goes.
        let reader = Reader::new(self.limit.reader_room(), self.joined);
        let extra = |dropped: usize| ReaderCount::ascii(line(dropped).len() - header(0).len());
        let (dropped, text) = match keep {
            Keep::Tail => {
                let elided = self.elided;
                let fixed = ReaderCount::ascii(header(0).len() + 1);
                let (from, mut tail) = reader.tail(fixed, room)?;
                let cut = self.find_cut(0, from, room, |p, e| {
                    skeleton + counted(elided + p) + e <= cap
                        && reader.fits(tail.from(p).plus(fixed).plus(extra(elided + p)))
                })?;
                let dropped = elided + cut.start;
                (
                    dropped,
                    with_header_line(keep, &line(dropped), "", cut.tail()),
                )
            }
            Keep::Head => {
                debug_assert_eq!(self.elided, 0, "a head is cut from the whole text");
                let fixed = ReaderCount::ascii(header(0).len() + 1);
                let (upto, mut head) = reader.head(fixed, room)?;
                let head = self.find_head_cut(upto, room, |q, e| {
                    skeleton + counted(len - q) + e <= cap
                        && reader.fits(head.to(q).plus(fixed).plus(extra(len - q)))
                })?;
                let dropped = len - head.end;
                (
                    dropped,
                    with_header_line(keep, &line(dropped), head.text(), ""),
                )
            }
            Keep::HeadAndTail { head_per_mille } => {
                debug_assert_eq!(self.elided, 0, "a head is cut from the whole text");
                // The head's share of the room holds it and the count's extra digits,
                // so that an empty tail always fits beside it.
                let head_room = share_of(room, head_per_mille);
                let fixed = ReaderCount::ascii(header(0).len() + 2);
                let head_reader = reader.shared(fixed, head_per_mille)?;
                let (upto, mut counted_head) =
                    head_reader.head(ReaderCount::default(), head_room)?;
                let head = self.find_head_cut(upto, head_room, |q, e| {
                    counted(len - q) + e <= head_room
                        && head_reader.fits(counted_head.to(q).plus(extra(len - q)))
                })?;
                let (q, head_cost) = (head.end, head.cost);
                let fixed = fixed.plus(counted_head.to(q));
                let (from, mut tail) = reader.tail(fixed, room - head_cost)?;
                let tail = self.find_cut(q, from, room - head_cost, |p, e| {
                    skeleton + counted(p - q) + head_cost + e <= cap
                        && reader.fits(tail.from(p).plus(fixed).plus(extra(p - q)))
                })?;
                let dropped = tail.start - q;
                (
                    dropped,
                    with_header_line(keep, &line(dropped), head.text(), tail.tail()),
                )
            }
        };
        result.content = vec![Content::text(text)];
        if let Some(meta) = result.meta.as_mut() {
            meta.insert(TRUNCATION_META_KEY.into(), report(dropped)?);
        }
        debug_assert!(
            result.wire_size_upto(cap).is_some(),
            "L4: the cut result fits"
        );
        Some(Limited {
            result,
            truncation: Some(self.report(dropped, kept)),
            error_lead: false,
        })
    }

    /// The header line alone, with `isError` (L6's last resort; always fits a valid cap).
    pub(super) fn header_only(&self) -> Limited {
        let dropped = self.elided + self.joined.len();
        Limited {
            result: header_line_only(header_of(dropped, self.non_text), self.source.is_error),
            truncation: Some(self.report(dropped, MetaKept::Nothing)),
            error_lead: false,
        }
    }

    /// Where the kept tail starts, at or after `floor` and `from`: see
    /// [`find_cut_within`].
    fn find_cut(
        &self,
        floor: usize,
        from: usize,
        budget: usize,
        fits: impl FnMut(usize, usize) -> bool,
    ) -> Option<Cut<'a>> {
        find_cut_within(
            self.joined,
            floor,
            from.max(floor),
            self.limit.line_align,
            Weights::LITERAL,
            budget,
            fits,
        )
    }

    /// Where the kept head ends, at or before `upto`: see [`find_head_cut_within`].
    fn find_head_cut(
        &self,
        upto: usize,
        budget: usize,
        fits: impl FnMut(usize, usize) -> bool,
    ) -> Option<HeadCut<'a>> {
        find_head_cut_within(
            self.joined,
            upto,
            self.limit.line_align,
            Weights::LITERAL,
            budget,
            fits,
        )
    }
}

/// The reader's limits over one joined text (L18): where they let a kept part start
/// or end, and whether a count fits them. Without any, nothing is counted.
#[derive(Clone, Copy)]
struct Reader<'j, 'a> {
    room: ReaderRoom,
    joined: &'j Joined<'a>,
}

impl<'j, 'a> Reader<'j, 'a> {
    fn new(room: ReaderRoom, joined: &'j Joined<'a>) -> Self {
        Self { room, joined }
    }

    fn fits(&self, count: ReaderCount) -> bool {
        self.room.is_unlimited() || count.within(self.room)
    }

    /// These limits less `fixed`, and `per_mille` of what is left (a head's share).
    fn shared(&self, fixed: ReaderCount, per_mille: u16) -> Option<Self> {
        match self.room.is_unlimited() {
            true => Some(*self),
            false => Some(Self {
                room: self.room.minus(fixed)?.share(per_mille),
                joined: self.joined,
            }),
        }
    }

    /// The lowest start of a tail that, with `fixed` beside it, can fit (no lower than
    /// `max_bytes` before the end), and the count of the tail from a moving start.
    /// `None`: not even an empty tail fits.
    fn tail(&self, fixed: ReaderCount, max_bytes: usize) -> Option<(usize, Span<'j, 'a>)> {
        let len = self.joined.len();
        if self.room.is_unlimited() {
            return Some((0, Span::off(self.joined, len)));
        }
        let (from, count) = self
            .joined
            .tail_within_reader(self.room.minus(fixed)?, max_bytes);
        Some((from, Span::new(self.joined, from, len, count)))
    }

    /// The highest end of a head that, with `fixed` beside it, can fit (no more than
    /// `max_bytes` from the start), and the count of the head to a moving end.
    fn head(&self, fixed: ReaderCount, max_bytes: usize) -> Option<(usize, Span<'j, 'a>)> {
        let len = self.joined.len();
        if self.room.is_unlimited() {
            return Some((len, Span::off(self.joined, 0)));
        }
        let (upto, count) = self
            .joined
            .head_within_reader(self.room.minus(fixed)?, max_bytes);
        Some((upto, Span::new(self.joined, 0, upto, count)))
    }
}

/// What a reader counts of a range of the joined text whose one end moves, counted
/// by the bytes it moves over (L13: the walk reads each byte once or twice).
struct Span<'j, 'a> {
    joined: &'j Joined<'a>,
    start: usize,
    end: usize,
    count: ReaderCount,
    on: bool,
}

impl<'j, 'a> Span<'j, 'a> {
    fn new(joined: &'j Joined<'a>, start: usize, end: usize, count: ReaderCount) -> Self {
        Self {
            joined,
            start,
            end,
            count,
            on: true,
        }
    }

    /// A span that counts nothing (no reader limit).
    fn off(joined: &'j Joined<'a>, at: usize) -> Self {
        Self {
            on: false,
            ..Self::new(joined, at, at, ReaderCount::default())
        }
    }

    /// The count of the range from `start` to its end.
    fn from(&mut self, start: usize) -> ReaderCount {
        if self.on && start != self.start {
            self.count = match start > self.start {
                true => self
                    .count
                    .minus(self.joined.reader_count(self.start, start)),
                false => self.count.plus(self.joined.reader_count(start, self.start)),
            };
            self.start = start;
        }
        self.count
    }

    /// The count of the range from its start to `end`.
    fn to(&mut self, end: usize) -> ReaderCount {
        if self.on && end != self.end {
            self.count = match end < self.end {
                true => self.count.minus(self.joined.reader_count(end, self.end)),
                false => self.count.plus(self.joined.reader_count(self.end, end)),
            };
            self.end = end;
        }
        self.count
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
    find_cut_from(joined, 0, line_align, weights, budget, fits)
}

/// [`find_cut`] with the tail starting at or after `floor` (where a kept head ends,
/// L16): the bytes before the window are neither read nor copied (L13).
pub(crate) fn find_cut_from<'a>(
    joined: &'a Joined<'a>,
    floor: usize,
    line_align: bool,
    weights: Weights,
    budget: usize,
    fits: impl FnMut(usize, usize) -> bool,
) -> Option<Cut<'a>> {
    find_cut_within(joined, floor, floor, line_align, weights, budget, fits)
}

/// [`find_cut_from`] where no tail starting before `from` can fit (a reader's limit
/// leaves less room than the budget, L18): the walk starts there, and reads the text
/// from there only when its cost is within the budget.
fn find_cut_within<'a>(
    joined: &'a Joined<'a>,
    floor: usize,
    from: usize,
    line_align: bool,
    weights: Weights,
    budget: usize,
    mut fits: impl FnMut(usize, usize) -> bool,
) -> Option<Cut<'a>> {
    let end = joined.len();
    let (lowest, escaped) = match from > floor {
        true => match joined.cost_from(from, weights, budget) {
            Some(cost) => (from, cost),
            None => joined.tail_within(budget, weights),
        },
        false => joined.tail_within(budget, weights),
    };
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
    let mut pos = lowest.max(floor);
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
    if !line_align || grapheme_cut == floor {
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

/// Where a kept head ends, with the window of the joined text that holds it.
pub(crate) struct HeadCut<'a> {
    pub(super) end: usize,
    /// The cost of the head under the weights it was cut with.
    pub(super) cost: usize,
    window: Cow<'a, str>,
}

impl HeadCut<'_> {
    pub(super) fn text(&self) -> &str {
        &self.window[..self.end]
    }
}

/// Where the kept head of `joined` ends (L16): the largest allowed cut position `q`
/// with `fits(q, cost of the head to q)`, costs counted with `weights` (L8, L10), moved
/// back to a line start when one lies near the end of the head (L9, the mirror of
/// [`find_cut`]'s rule).
///
/// `budget` bounds the cost of any head that can fit: the text is read from its start
/// to where the budget runs out, and an escape sequence's length past that (L13).
pub(crate) fn find_head_cut<'a>(
    joined: &'a Joined<'a>,
    line_align: bool,
    weights: Weights,
    budget: usize,
    fits: impl FnMut(usize, usize) -> bool,
) -> Option<HeadCut<'a>> {
    find_head_cut_within(joined, joined.len(), line_align, weights, budget, fits)
}

/// [`find_head_cut`] where no head ending after `upto` can fit (a reader's limit, L18):
/// the walk starts there, and reads the text only up to it when its cost is within
/// the budget.
fn find_head_cut_within<'a>(
    joined: &'a Joined<'a>,
    upto: usize,
    line_align: bool,
    weights: Weights,
    budget: usize,
    mut fits: impl FnMut(usize, usize) -> bool,
) -> Option<HeadCut<'a>> {
    let len = joined.len();
    let (highest, mut cost) = match upto < len {
        true => match joined.cost_to(upto, weights, budget) {
            Some(cost) => (upto, cost),
            None => joined.head_within(budget, weights),
        },
        false => joined.head_within(budget, weights),
    };
    // Enough after the highest position to see the end of a sequence around it.
    let window_end = joined.floor_char_boundary(highest.saturating_add(escape::LOOKBACK + 8));
    let window = joined.head_to(window_end.max(highest));
    let bytes = window.as_bytes();
    let mut boundaries = HeadBoundaries {
        window: &window,
        cursor: GraphemeCursor::new(0, window.len(), true),
    };
    let mut pos = highest;
    let grapheme_cut = loop {
        let allowed = boundaries.allowed_at_or_before(pos);
        cost -= weights.of_bytes(&bytes[allowed..pos]);
        pos = allowed;
        if fits(pos, cost) {
            break pos;
        }
        if pos == 0 {
            return None;
        }
        let previous = boundaries.previous_grapheme(pos);
        cost -= weights.of_bytes(&bytes[previous..pos]);
        pos = previous;
    };
    let mut end = grapheme_cut;
    if line_align && grapheme_cut != len && grapheme_cut > 0 {
        // L9: the last line start, if it is near the end of the kept head.
        let lowest = grapheme_cut - (grapheme_cut / 4).min(LINE_ALIGN_MAX_BYTES);
        let mut line_cost = cost;
        let mut q = grapheme_cut;
        loop {
            if bytes[q - 1] == b'\n' && fits(q, line_cost) {
                end = q;
                cost = line_cost;
                break;
            }
            if q <= lowest.max(1) {
                break;
            }
            q -= 1;
            line_cost -= weights.of_byte(bytes[q]);
        }
    }
    let window = match window {
        Cow::Borrowed(text) => Cow::Borrowed(&text[..end]),
        Cow::Owned(mut text) => {
            text.truncate(end);
            Cow::Owned(text)
        }
    };
    Some(HeadCut { end, cost, window })
}

/// Allowed cut positions for a head (L8): grapheme-cluster boundaries outside escape
/// sequences, in a window that starts at the start of the text.
struct HeadBoundaries<'w> {
    window: &'w str,
    cursor: GraphemeCursor,
}

impl HeadBoundaries<'_> {
    /// The largest allowed position at or before `pos` (the start is always allowed).
    fn allowed_at_or_before(&mut self, mut pos: usize) -> usize {
        while pos != 0 {
            if !self.is_grapheme_boundary(pos) {
                pos = self.previous_grapheme(pos);
            } else if let Some(start) = escape::enclosing_start(self.window, pos) {
                pos = start;
            } else {
                break;
            }
        }
        pos
    }

    fn is_grapheme_boundary(&mut self, pos: usize) -> bool {
        self.cursor.set_cursor(pos);
        // The window starts at the start of the text: no context is ever missing.
        self.cursor.is_boundary(self.window, 0).unwrap_or(true)
    }

    /// The grapheme-cluster boundary before `pos` (0 if none).
    fn previous_grapheme(&mut self, pos: usize) -> usize {
        self.cursor.set_cursor(pos);
        self.cursor
            .prev_boundary(self.window, 0)
            .ok()
            .flatten()
            .unwrap_or(0)
    }
}
