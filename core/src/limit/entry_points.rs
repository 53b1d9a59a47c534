//! The entry points of the limit: what adapters call with a tool's result — whole
//! ([`Limit::apply`], [`Limit::truncate`] and their schema forms), held in part by a
//! streaming adapter ([`Limit::truncate_in_part`]), or with its texts held elsewhere
//! ([`Limit::truncate_texts`]). Each decides whether the result is cut (L1, L2) and
//! hands the cut to the text cutter or the structured cut (L15).

use std::convert::Infallible;

use serde_json::Value;

use super::error_lead::first_text;
use super::joined::Joined;
use super::reader::{ReaderCount, ReaderRoom};
use super::{Cutter, HeldInPart, Limit, Limited, MetaKept, PayloadTail, structured};
use crate::result::{Content, ToolResult};

impl Limit {
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
    ///     content: vec![backstop_core::call::Content::text(value.to_string())],
    ///     structured_content: Some(value),
    ///     ..ToolResult::default()
    /// };
    /// let limited = Limit::new(2_000).unwrap().apply_with_schema("build", result, Some(&schema));
    /// let cut = limited.result.structured_content.as_ref().unwrap();
    /// assert_eq!(cut["id"], "build"); // a pattern forbids cutting it
    /// assert!(cut["log"].as_str().unwrap().ends_with("step\n"));
    /// // A header block first (L17), then the serialization of the cut value.
    /// assert!(limited.result.content[0].as_text().unwrap().starts_with("[... truncated "));
    /// assert_eq!(limited.result.content[1].as_text().unwrap(), cut.to_string());
    /// assert!(serde_json::to_vec(&limited.result).unwrap().len() <= 2_000);
    /// ```
    pub fn apply_with_schema(
        &self,
        tool: &str,
        result: ToolResult,
        output_schema: Option<&Value>,
    ) -> Limited {
        let limited = match self.applies_to(tool) {
            true => self
                .for_tool(tool)
                .truncate_with_schema(&result, output_schema),
            // E12 holds for every tool; only the cut is for those the limit applies to.
            false => self
                .with_error_lead(
                    &result,
                    first_text(&result),
                    || result.clone(),
                    |_| Ok::<_, Infallible>(None),
                )
                .unwrap_or_else(|never| match never {}),
        };
        limited.unwrap_or(Limited {
            result,
            truncation: None,
            error_lead: false,
        })
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
                error_lead: false,
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
        self.with_error_lead(
            result,
            first_text(result),
            || result.clone(),
            |limit| Ok::<_, Infallible>(limit.cut_with_schema(result, output_schema)),
        )
        .unwrap_or_else(|never| match never {})
    }

    /// [`truncate_with_schema`](Self::truncate_with_schema) without E12.
    fn cut_with_schema(
        &self,
        result: &ToolResult,
        output_schema: Option<&Value>,
    ) -> Option<Limited> {
        if !result.is_complete()
            || (result.wire_size_upto(self.max_bytes).is_some() && self.reader_fits(result))
        {
            return None;
        }
        if let Some(structured) = &result.structured_content {
            return Some(self.cut_structured(result, structured, output_schema, None));
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
            let payload = PayloadTail::for_keep(result, self.max_bytes, self.keep);
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

impl Limit {
    /// [`truncate`](Self::truncate) for a result held in part (`held`): the same cut
    /// the whole result would get, or `Err(())` where it cannot be decided from what
    /// is held — no text block, a text block that may be the serialization of
    /// `structuredContent`, or a string held in part with less of an end than the
    /// limit's keep policy reads ([`HeldInPart::min_held_tail_bytes`],
    /// [`HeldInPart::min_held_head_bytes`]; L16). `output_schema` as for
    /// [`truncate_with_schema`](Self::truncate_with_schema) (L15).
    /// A result held in part is over the cap (what is not held is more than it).
    ///
    /// ```
    /// use backstop_core::limit::{HeldInPart, Keep};
    /// use backstop_core::{Limit, ToolResult};
    /// let limit = Limit::new(1_000).unwrap();
    /// let whole = ToolResult::text("line\n".repeat(100_000));
    /// let tail = "line\n".repeat(10_000);
    /// let held = HeldInPart::default().with_text_head(0, 500_000 - tail.len());
    /// let in_part = limit.truncate_in_part(&ToolResult::text(tail.clone()), &held, None).unwrap();
    /// assert_eq!(in_part, limit.truncate(&whole));
    ///
    /// // Under head+tail, a head and a tail held, the middle not (L13, L16).
    /// let limit = limit.with_keep(Keep::HeadAndTail { head_per_mille: 500 });
    /// let held = HeldInPart::default().with_text_gap(0, tail.len(), 500_000 - 2 * tail.len());
    /// let both = ToolResult::text(tail.repeat(2));
    /// assert_eq!(limit.truncate_in_part(&both, &held, None).unwrap(), limit.truncate(&whole));
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
        // What is held is over the cap: a cut, never the result as it came (E12's lead
        // is put before the cut's text; a result that is not cut is read whole).
        self.with_error_lead(
            result,
            first_text(result),
            || result.clone(),
            |limit| {
                limit
                    .cut_in_part(result, held, output_schema)
                    .and_then(|cut| match (cut, limit.reserved.chars) {
                        (None, 1..) => Err(()),
                        (cut, _) => Ok(cut),
                    })
            },
        )
    }

    /// [`truncate_in_part`](Self::truncate_in_part) without E12.
    fn cut_in_part(
        &self,
        result: &ToolResult,
        held: &HeldInPart,
        output_schema: Option<&Value>,
    ) -> Result<Option<Limited>, ()> {
        if !result.is_complete() {
            return Ok(None);
        }
        if let Some(structured) = &result.structured_content {
            return self.structured_in_part(result, structured, held, output_schema);
        }
        let mut texts = Vec::new();
        let mut non_text = 0;
        for (index, content) in result.content.iter().enumerate() {
            match content.as_text() {
                Some(text) => texts.push((held.gap_of(index), text)),
                None => non_text += 1,
            }
        }
        if texts.is_empty() {
            return Err(());
        }
        let joined = Joined::held_in_part(texts);
        if !self.holds_enough(&joined) {
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
    /// Whether the parts of `joined` that are held are all a cut under this limit's
    /// policy can read (L13, L16): the tail a cut of the tail reads, the head a cut of
    /// the head reads, or both.
    fn holds_enough(&self, joined: &Joined<'_>) -> bool {
        let len = joined.len();
        len - joined.held_from()
            >= HeldInPart::min_held_tail_bytes(self.max_bytes, self.keep).min(len)
            && joined.held_to()
                >= HeldInPart::min_held_head_bytes(self.max_bytes, self.keep).min(len)
    }

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
                let joined = Joined::held_in_part([(held.gap_of(index), text)]);
                if !self.holds_enough(&joined) {
                    return Err(());
                }
            }
        }
        if texts == 0
            || held.other_blocks
            || held.structured_gaps.iter().any(|(pointer, gap)| {
                gap.len > 0
                    && structured
                        .pointer(pointer)
                        .and_then(Value::as_str)
                        .is_none_or(|text| {
                            !self.holds_enough(&Joined::held_in_part([(*gap, text)]))
                        })
            })
        {
            return Err(());
        }
        Ok(Some(self.cut_structured(
            result,
            structured,
            output_schema,
            Some(held),
        )))
    }

    /// The structured cut (L15), fitted to the reader's limits too (L18): the cut
    /// counts wire bytes, so where what it keeps is over a reader's limit, it is made
    /// again under the largest cap at which it is not.
    fn cut_structured(
        &self,
        result: &ToolResult,
        structured: &Value,
        output_schema: Option<&Value>,
        held: Option<&HeldInPart>,
    ) -> Limited {
        let cut_under = |limit: &Limit| {
            let cutter =
                structured::StructuredCutter::new(limit, result, structured, output_schema);
            match held {
                Some(held) => cutter.held_in_part(held).cut(),
                None => cutter.cut(),
            }
        };
        let limited = cut_under(self);
        if self.reader_fits(&limited.result) {
            return limited;
        }
        let under = |cap: usize| {
            let mut smaller = self.clone();
            smaller.max_bytes = cap;
            cut_under(&smaller)
        };
        // The cut's size follows the cap: scale the cap by how far over (or under) the
        // reader's room the last cut was, a few times, keeping the largest that fits (to
        // within half a percent of the room)
        // (L13: each cut reads about its cap); the cut at the smallest cap otherwise.
        let mut best: Option<(usize, Limited)> = None;
        let (mut cap, mut cut) = (self.max_bytes, limited);
        for _ in 0..8 {
            let excess = self.reader_excess(&cut.result);
            let fits = self.reader_fits(&cut.result);
            if fits && best.as_ref().is_none_or(|(at, _)| *at < cap) {
                best = Some((cap, cut));
                if excess > 0.995 {
                    break;
                }
            }
            let next = ((cap as f64 / excess.max(0.01)) * 0.998) as usize;
            let next = next.clamp(Self::min_bytes(), self.max_bytes);
            let tried = best.as_ref().is_some_and(|(at, _)| next <= *at);
            if next == cap || tried {
                break;
            }
            cap = next;
            cut = under(cap);
        }
        if let Some((_, cut)) = best {
            return cut;
        }
        // None fitted (a reader's unit far from the bytes it counts): by halves.
        let (mut low, mut high) = (Self::min_bytes(), cap);
        let mut best = None;
        while low < high {
            let mid = low + (high - low) / 2;
            let cut = under(mid);
            if self.reader_fits(&cut.result) {
                best = Some(cut);
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        best.unwrap_or_else(|| under(Self::min_bytes()))
    }

    /// How many times over its reader's room `result` is (what the reader counts of it
    /// against the room, in the unit it is most over; 1.0 or less when it fits).
    fn reader_excess(&self, result: &ToolResult) -> f64 {
        let room = self.reader_room();
        let mut used = ReaderCount::default();
        for text in result.content.iter().filter_map(Content::as_text) {
            used = used.plus(ReaderCount::of(text));
        }
        if self.reads_structured
            && let Some(structured) = &result.structured_content
        {
            let json = ReaderCount::of(&structured.to_string());
            used.chars = used.chars.max(json.chars);
            used.quarter_tokens = used.quarter_tokens.max(json.quarter_tokens);
        }
        let over = |used: usize, room: usize| used as f64 / room.max(1) as f64;
        over(used.chars, room.chars).max(over(used.quarter_tokens, room.quarter_tokens))
    }

    /// Whether what the reader counts of what it reads of `result` — its text blocks,
    /// joined as a cut joins them (L3), and the compact JSON of its
    /// `structuredContent` for a reader that may read that instead — is within its
    /// limits (L18). Reads no more than the limits hold.
    pub(super) fn reader_fits(&self, result: &ToolResult) -> bool {
        let room = self.reader_room();
        if room.is_unlimited() {
            return true;
        }
        if self.reads_structured
            && let Some(structured) = result.structured_content.as_ref().filter(|v| !v.is_null())
        {
            let mut counter = ReaderCounter {
                room,
                used: ReaderCount::default(),
            };
            if serde_json::to_writer(&mut counter, structured).is_err() {
                return false;
            }
        }
        let mut used = ReaderCount::default();
        for (i, text) in result
            .content
            .iter()
            .filter_map(Content::as_text)
            .enumerate()
        {
            if i > 0 {
                used = used.plus(ReaderCount::ascii(super::joined::SEPARATOR.len()));
            }
            for chunk in text.as_bytes().chunks(4096) {
                used = used.plus(ReaderCount::of_bytes(chunk));
                if !used.within(room) {
                    return false;
                }
            }
        }
        used.within(room)
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
    /// use backstop_core::{Limit, ToolResult, call::Content};
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
        let first = texts.first().copied();
        self.with_error_lead(
            result,
            first,
            || result.clone().with_texts(texts),
            |limit| Ok::<_, Infallible>(limit.cut_texts(result, texts, output_schema)),
        )
        .unwrap_or_else(|never| match never {})
    }

    /// [`truncate_texts`](Self::truncate_texts) without E12, for texts held apart.
    fn cut_texts(
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
        if size.is_some() && self.texts_fit_reader(texts) {
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

/// Counts what a reader counts of the JSON written to it, failing once it is over
/// `room`.
struct ReaderCounter {
    room: ReaderRoom,
    used: ReaderCount,
}

impl std::io::Write for ReaderCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.used = self.used.plus(ReaderCount::of_bytes(bytes));
        match self.used.within(self.room) {
            true => Ok(bytes.len()),
            false => Err(std::io::ErrorKind::WriteZero.into()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Limit {
    /// [`reader_fits`](Self::reader_fits) for texts held apart.
    fn texts_fit_reader(&self, texts: &[&str]) -> bool {
        let blocks = texts.iter().map(|text| Content::text(*text)).collect();
        // Short texts only reach here: a text over the cap was cut already.
        self.reader_fits(&ToolResult {
            content: blocks,
            ..ToolResult::default()
        })
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
