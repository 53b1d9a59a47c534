//! backstop's rules as checks: each takes an input and what backstop made of it, and
//! names the first rule the output breaks.
//!
//! The oracles here are written apart from the code they check: grapheme boundaries
//! come from `unicode-segmentation`'s iterator over the whole text, escape sequences
//! from a forward scan, sizes from `serde_json::to_vec`.

use std::fmt;

use serde_json::{Map, Value};
use unicode_segmentation::UnicodeSegmentation;

use crate::arguments::CallContext;
use crate::error_result::error_result;
use crate::failure::Failure;
use crate::limit::{
    ERROR_META_KEYS, Keep, LINE_ALIGN_MAX_BYTES, Limit, Limited, MetaKept, RESULT_TOO_LARGE,
    StructuredCut, TRUNCATION_META_KEY,
};
use crate::log::LogRecord;
use crate::result::{Content, ToolResult};

/// A rule an output breaks, and how.
///
/// ```
/// let v = backstop_core::testing::checks::Violation::new("L4", "1001 > 1000");
/// assert_eq!(v.to_string(), "L4: 1001 > 1000");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule, as SPEC numbers it (`L4`).
    pub rule: &'static str,
    /// What was seen.
    pub detail: String,
}

impl Violation {
    /// A violation of `rule`.
    pub fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        Self {
            rule,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

impl std::error::Error for Violation {}

fn ensure(ok: bool, rule: &'static str, detail: impl FnOnce() -> String) -> Result<(), Violation> {
    if ok {
        Ok(())
    } else {
        Err(Violation::new(rule, detail()))
    }
}

/// The wire size of a result, by serializing it.
fn wire_size(result: &ToolResult) -> usize {
    serde_json::to_vec(result).map_or(usize::MAX, |bytes| bytes.len())
}

/// What a reader counts of a text (L18), worked out here on its own: UTF-16 code units
/// as JavaScript counts them, and quarter tokens (an ASCII byte a quarter, any other
/// character a whole token).
fn reader_units(text: &str) -> (usize, usize) {
    let quarters = text.chars().map(|c| if c.is_ascii() { 1 } else { 4 }).sum();
    (text.encode_utf16().count(), quarters)
}

/// The reader's room under `limit`, in the units of [`reader_units`]: `usize::MAX`
/// where a unit is not limited.
fn reader_room(limit: &Limit) -> (usize, usize) {
    (
        limit.max_chars().unwrap_or(usize::MAX),
        limit.max_tokens().map_or(usize::MAX, |t| t * 4),
    )
}

/// Whether what the reader counts of `result`'s text blocks, joined, is within the
/// limit's reader's limits (L18).
fn reader_fits(limit: &Limit, result: &ToolResult) -> bool {
    let texts: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
    let (max_chars, max_quarters) = reader_room(limit);
    let fits = |text: &str| {
        let (chars, quarters) = reader_units(text);
        chars <= max_chars && quarters <= max_quarters
    };
    // A reader that may read `structuredContent` in place of the text: its JSON too.
    let structured = match &result.structured_content {
        Some(value) if limit.counts_structured_content() && !value.is_null() => {
            fits(&value.to_string())
        }
        _ => true,
    };
    structured && fits(&texts.join("\n\n"))
}

/// The text a cut is taken from (L3): text blocks joined by `\n\n`, or with none, the
/// JSON of the members the cut replaces (`content`, `structuredContent`).
///
/// ```
/// use backstop_core::{ToolResult, call::Content};
/// let result = ToolResult { content: vec![Content::text("a"), Content::text("b")], ..Default::default() };
/// assert_eq!(backstop_core::testing::checks::joined_text(&result), "a\n\nb");
/// ```
pub fn joined_text(result: &ToolResult) -> String {
    let texts: Vec<&str> = result.content.iter().filter_map(Content::as_text).collect();
    if !texts.is_empty() {
        return texts.join("\n\n");
    }
    let mut payload = Map::new();
    payload.insert(
        "content".into(),
        serde_json::to_value(&result.content).unwrap_or_default(),
    );
    if let Some(structured) = &result.structured_content {
        payload.insert("structuredContent".into(), structured.clone());
    }
    serde_json::to_string(&payload).unwrap_or_default()
}

fn header(n: usize) -> String {
    format!("[... truncated {n} bytes ...]")
}

/// The header line of a text cut that dropped `n` bytes of text and `blocks` other
/// blocks: when no text byte was dropped, it names the blocks (L17: never "truncated
/// 0 bytes" when something was dropped).
fn header_of(n: usize, blocks: usize) -> String {
    match (n, blocks) {
        (0, 1) => "[... truncated 1 non-text block ...]".into(),
        (0, 2..) => format!("[... truncated {blocks} non-text blocks ...]"),
        _ => header(n),
    }
}

/// The non-text blocks a cut reports it dropped.
fn dropped_blocks(limited: &Limited) -> usize {
    limited.truncation.as_ref().map_or(0, |t| t.dropped_blocks)
}

/// Spans `[start, end)` of the terminal escape sequences of `text`, by a forward scan.
///
/// ```
/// let spans = backstop_core::testing::checks::escape_spans("a\u{1b}[0mb");
/// assert_eq!(spans, [(1, 5)]);
/// ```
pub fn escape_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let in_range = |j: usize, limit: usize, lo: u8, hi: u8| j < limit && (lo..=hi).contains(&b[j]);
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != 0x1b {
            i += 1;
            continue;
        }
        let start = i;
        let limit = b.len().min(start + 4096);
        let mut j = start + 1;
        if j < limit {
            match b[j] {
                b'[' => {
                    j += 1;
                    while in_range(j, limit, 0x30, 0x3f) {
                        j += 1;
                    }
                    while in_range(j, limit, 0x20, 0x2f) {
                        j += 1;
                    }
                    if in_range(j, limit, 0x40, 0x7e) {
                        j += 1;
                    }
                }
                b']' | b'P' | b'X' | b'^' | b'_' => {
                    j += 1;
                    while j < limit {
                        match b[j] {
                            0x07 => {
                                j += 1;
                                break;
                            }
                            0x1b => {
                                if b.get(j + 1) == Some(&b'\\') {
                                    j += 2;
                                }
                                break;
                            }
                            c if c < 0x20 => break,
                            _ => j += 1,
                        }
                    }
                    while !text.is_char_boundary(j) {
                        j -= 1;
                    }
                }
                0x20..=0x2f => {
                    while in_range(j, limit, 0x20, 0x2f) {
                        j += 1;
                    }
                    if in_range(j, limit, 0x30, 0x7e) {
                        j += 1;
                    }
                }
                0x30..=0x7e => j += 1,
                _ => {}
            }
        }
        spans.push((start, j));
        i = j.max(start + 1);
    }
    spans
}

/// The cut positions L8 allows in `text`: grapheme-cluster boundaries outside escape
/// sequences, the end included.
///
/// ```
/// let cuts = backstop_core::testing::checks::allowed_cuts("e\u{301}x");
/// assert_eq!(cuts, [0, 3, 4]);
/// ```
pub fn allowed_cuts(text: &str) -> Vec<usize> {
    let spans = escape_spans(text);
    let mut cuts: Vec<usize> = text.grapheme_indices(true).map(|(i, _)| i).collect();
    cuts.push(text.len());
    cuts.retain(|&p| !spans.iter().any(|&(s, e)| s < p && p < e));
    cuts
}

/// Where the kept tail of a cut result starts in the joined text, checking the shape
/// of L3 on the way.
fn cut_position(limited: &Limited, joined: &str, keep: Keep) -> Result<usize, Violation> {
    let Some(truncation) = &limited.truncation else {
        return Err(Violation::new("L3", "no truncation report"));
    };
    let content = &limited.result.content;
    let text = match content.as_slice() {
        [block] => block.as_text(),
        _ => None,
    };
    let text = text.ok_or_else(|| Violation::new("L3", "a cut result is one text block"))?;
    let n = truncation.dropped_bytes;
    if truncation.meta == MetaKept::Nothing {
        ensure(
            text == header_of(joined.len(), truncation.dropped_blocks),
            "L6",
            || format!("the header alone: {text:?}"),
        )?;
        return Ok(joined.len());
    }
    if keep != Keep::Tail {
        return match kept_ends(limited, joined)? {
            Some((q, p)) => Ok(p - q),
            None => Err(Violation::new(
                "L16",
                format!("under {keep} the header line is not where it belongs: {text:?}"),
            )),
        };
    }
    let prefix = header_of(n, truncation.dropped_blocks) + "\n";
    let tail = text
        .strip_prefix(&prefix)
        .ok_or_else(|| Violation::new("L3", format!("header line first: {text:?}")))?;
    ensure(joined.ends_with(tail), "L3", || {
        "the kept text is a suffix of the joined text".into()
    })?;
    ensure(n == joined.len() - tail.len(), "L3", || {
        format!("N = {n} is not the bytes dropped")
    })?;
    Ok(n)
}

/// For a cut that kept a head (L16), where the kept head ends and the kept tail starts
/// in the joined text (`p` is its end when only the head was kept), checking the
/// shape of L16 on the way: the head, the header line after it (and the tail after
/// that), N the bytes between them. `None` when the text is not so laid out.
fn kept_ends(limited: &Limited, joined: &str) -> Result<Option<(usize, usize)>, Violation> {
    let text = limited
        .result
        .content
        .first()
        .and_then(|b| b.as_text())
        .unwrap_or_default();
    let n = limited.truncation.as_ref().map_or(0, |t| t.dropped_bytes);
    let line = header_of(n, dropped_blocks(limited));
    let Some(before_header) = text.strip_suffix(line.as_str()) else {
        // A head and tail cut: the header between the two parts.
        let marker = format!("\n{line}\n");
        for (at, _) in text.match_indices(&marker) {
            let (head, tail) = (&text[..at], &text[at + marker.len()..]);
            if joined.starts_with(head)
                && joined.ends_with(tail)
                && head.len() + n + tail.len() == joined.len()
            {
                return Ok(Some((head.len(), head.len() + n)));
            }
        }
        return Ok(None);
    };
    let head = before_header
        .strip_suffix('\n')
        .ok_or_else(|| Violation::new("L16", format!("the header line ends the text: {text:?}")))?;
    ensure(joined.starts_with(head), "L16", || {
        "the kept text is a prefix of the joined text".into()
    })?;
    ensure(head.len() + n == joined.len(), "L16", || {
        format!("N = {n} is not the bytes dropped")
    })?;
    Ok(Some((head.len(), joined.len())))
}

/// L8–L10 and L16 for a cut that kept a head (`head`, or `head+tail`): the kept ends
/// are where the rules put them, worked out here from the joined text alone — the
/// escaped length of each end from `serde_json`, the allowed positions from
/// [`allowed_cuts`], the room from the cut result's own skeleton.
fn check_kept_ends(limit: &Limit, limited: &Limited, joined: &str) -> Result<(), Violation> {
    let keep = limit.keep();
    let cap = limit.max_bytes();
    let Some((q, p)) = kept_ends(limited, joined)? else {
        return Err(Violation::new(
            "L16",
            format!("under {keep} the header line is not where it belongs"),
        ));
    };
    let len = joined.len();
    if keep == Keep::Head {
        ensure(p == len, "L16", || {
            "under head nothing of the tail is kept".into()
        })?;
    }
    // prefix[i]: the escaped length of joined[..i], at character boundaries.
    let mut prefix = vec![0; len + 1];
    for (i, c) in joined.char_indices() {
        let escaped = serde_json::to_string(&c.to_string()).map_or(0, |s| s.len() - 2);
        prefix[i + c.len_utf8()] = prefix[i] + escaped;
    }
    let escaped = |from: usize, to: usize| prefix[to] - prefix[from];
    // The count appears twice; when it is 0, the header names the blocks instead.
    let blocks = dropped_blocks(limited);
    let counted = |n: usize| match n {
        0 => header_of(0, blocks).len() - header(0).len(),
        _ => 2 * (n.to_string().len() - 1),
    };
    // The cut result with both ends empty and N = 0 (the header as for bytes).
    let mut skeleton = limited.result.clone();
    let empty = match keep {
        Keep::Head => "\n".to_owned() + &header(0),
        _ => format!("\n{}\n", header(0)),
    };
    skeleton.content = vec![Content::text(empty)];
    if let Some(report) = skeleton
        .meta
        .as_mut()
        .and_then(|m| m.get_mut(TRUNCATION_META_KEY))
    {
        report["dropped_bytes"] = Value::from(0);
    }
    let skeleton = wire_size(&skeleton);
    let size = |q: usize, p: usize| skeleton + counted(p - q) + escaped(0, q) + escaped(p, len);
    ensure(size(q, p) == wire_size(&limited.result), "L4", || {
        "the size of the cut result is not what its parts add up to".into()
    })?;
    let room = cap.saturating_sub(skeleton);
    let head_room = match keep {
        Keep::HeadAndTail { head_per_mille } => room * usize::from(head_per_mille) / 1000,
        _ => room,
    };
    // L18: what the reader counts of each end, and of the header line's extra digits.
    let mut reader_prefix = vec![(0, 0); len + 1];
    for (i, c) in joined.char_indices() {
        let (chars, quarters) = reader_units(&c.to_string());
        let (before_chars, before_quarters) = reader_prefix[i];
        reader_prefix[i + c.len_utf8()] = (before_chars + chars, before_quarters + quarters);
    }
    let reader = |from: usize, to: usize| {
        let (a, b) = (reader_prefix[from], reader_prefix[to]);
        (b.0 - a.0, b.1 - a.1)
    };
    let extra = |n: usize| header_of(n, blocks).len() - header(0).len();
    let (max_chars, max_quarters) = reader_room(limit);
    let lines = if keep == Keep::Head { 1 } else { 2 };
    let fixed = header(0).len() + lines;
    let within = |(chars, quarters): (usize, usize), (max_c, max_q): (usize, usize)| {
        chars <= max_c && quarters <= max_q
    };
    let plus = |(a, b): (usize, usize), n: usize| (a + n, b + n);
    let add = |(a, b): (usize, usize), (c, d): (usize, usize)| (a + c, b + d);
    let head_reader_room = match keep {
        Keep::HeadAndTail { head_per_mille } => {
            let share = |max: usize| match max {
                usize::MAX => usize::MAX,
                max => max.saturating_sub(fixed) * usize::from(head_per_mille) / 1000,
            };
            (share(max_chars), share(max_quarters))
        }
        _ => (max_chars, max_quarters),
    };
    let head_reader_fits = |i: usize| match keep {
        Keep::HeadAndTail { .. } => within(plus(reader(0, i), extra(len - i)), head_reader_room),
        _ => within(plus(reader(0, i), fixed + extra(len - i)), head_reader_room),
    };
    let reader_fits = |q: usize, p: usize| {
        within(
            plus(add(reader(0, q), reader(p, len)), fixed + extra(p - q)),
            (max_chars, max_quarters),
        )
    };
    let allowed = allowed_cuts(joined);
    ensure(allowed.binary_search(&q).is_ok(), "L8", || {
        format!("the head ends at {q} of {joined:?}")
    })?;
    ensure(allowed.binary_search(&p).is_ok(), "L8", || {
        format!("the tail starts at {p} of {joined:?}")
    })?;
    let is_line_start = |i: usize| i > 0 && joined.as_bytes()[i - 1] == b'\n';
    // The head: the longest that fits its room (L10), moved back to a line start near
    // its end (L9).
    let head_fits = |i: usize| escaped(0, i) + counted(len - i) <= head_room && head_reader_fits(i);
    let grapheme_head = allowed
        .iter()
        .rev()
        .copied()
        .find(|&i| head_fits(i))
        .unwrap_or(0);
    let mut head_end = grapheme_head;
    if limit.is_line_aligned() && grapheme_head > 0 && grapheme_head < len {
        let lowest = grapheme_head - (grapheme_head / 4).min(LINE_ALIGN_MAX_BYTES);
        if let Some(i) = (lowest.max(1)..=grapheme_head)
            .rev()
            .find(|&i| is_line_start(i) && head_fits(i))
        {
            head_end = i;
        }
    }
    ensure(
        q == head_end,
        if head_end == grapheme_head {
            "L10"
        } else {
            "L9"
        },
        || {
            format!(
                "the head ends at {q}, the rules put its end at {head_end} (unaligned {grapheme_head})"
            )
        },
    )?;
    if keep == Keep::Head {
        return Ok(());
    }
    // The tail: the longest that fits what the head left (L10), moved on to a line
    // start near its start (L9).
    let grapheme_tail = allowed
        .iter()
        .copied()
        .find(|&i| i >= q && size(q, i) <= cap && reader_fits(q, i))
        .unwrap_or(len);
    let mut tail_start = grapheme_tail;
    if limit.is_line_aligned() && grapheme_tail > q {
        let reach = ((len - grapheme_tail) / 4).min(LINE_ALIGN_MAX_BYTES);
        if let Some(i) = (grapheme_tail..=(grapheme_tail + reach).min(len))
            .find(|&i| is_line_start(i) && size(q, i) <= cap && reader_fits(q, i))
        {
            tail_start = i;
        }
    }
    ensure(
        p == tail_start,
        if tail_start == grapheme_tail {
            "L10"
        } else {
            "L9"
        },
        || {
            format!(
                "the tail starts at {p}, the rules put it at {tail_start} (unaligned {grapheme_tail})"
            )
        },
    )
}

/// The same cut result with its tail starting at `p` instead.
fn with_cut_at(limited: &Limited, joined: &str, p: usize) -> ToolResult {
    let mut result = limited.result.clone();
    let line = header_of(p, dropped_blocks(limited));
    result.content = vec![Content::text(line + "\n" + &joined[p..])];
    if let Some(report) = result
        .meta
        .as_mut()
        .and_then(|m| m.get_mut(TRUNCATION_META_KEY))
    {
        report["dropped_bytes"] = Value::from(p);
    }
    result
}

/// Limit `input` with `limit` and check SPEC L2–L12 on what comes out; returns the
/// limited result.
///
/// Checks the hard cap (L4), `isError` (L5), unchanged under the cap (L2), the shape
/// and count of the cut (L3), `_meta` (L6, L12), other members (L7), the cut position
/// (L8), line alignment against an unaligned run (L9), maximality (L10) and
/// idempotence (L11). Inputs that are not complete results are only checked to pass
/// untouched (L1).
///
/// ```
/// use backstop_core::{Limit, ToolResult, testing::checks::check_limit};
/// let limit = Limit::new(300).unwrap();
/// assert!(check_limit(&limit, &ToolResult::text("line\n".repeat(500))).is_ok());
/// ```
pub fn check_limit(limit: &Limit, input: &ToolResult) -> Result<Limited, Violation> {
    if input.structured_content.is_some() {
        return check_structured_limit(limit, input, None);
    }
    let cap = limit.max_bytes();
    let limited = limit.apply_to_result(input.clone());
    if !input.is_complete() {
        ensure(
            &limited.result == input && limited.truncation.is_none(),
            "L1",
            || "a result that is not complete passes untouched".into(),
        )?;
        return Ok(limited);
    }
    let size = wire_size(&limited.result);
    ensure(size <= cap, "L4", || format!("{size} bytes > cap {cap}"))?;
    ensure(reader_fits(limit, &limited.result), "L18", || {
        "the cut result is over a reader's limit".into()
    })?;
    let fits = |result: &ToolResult| wire_size(result) <= cap && reader_fits(limit, result);
    ensure(limited.result.is_error == input.is_error, "L5", || {
        format!(
            "isError {:?} became {:?}",
            input.is_error, limited.result.is_error
        )
    })?;
    if fits(input) {
        return ensure(
            &limited.result == input && limited.truncation.is_none(),
            "L2",
            || "a result within every limit is returned unchanged".into(),
        )
        .map(|()| limited);
    }
    let Some(truncation) = limited.truncation.clone() else {
        return Err(Violation::new("L4", "a result over the cap was not cut"));
    };
    let joined = joined_text(input);
    let p = cut_position(&limited, &joined, limit.keep())?;
    check_members(input, &limited, &joined, p)?;

    let twice = limit.apply_to_result(limited.result.clone());
    ensure(
        twice.result == limited.result && twice.truncation.is_none(),
        "L11",
        || "limiting a limited result changed it".into(),
    )?;
    if truncation.meta == MetaKept::Nothing {
        return Ok(limited);
    }
    if limit.keep() != Keep::Tail {
        check_kept_ends(limit, &limited, &joined).map(|()| limited.clone())?;
        return Ok(limited);
    }

    let allowed = allowed_cuts(&joined);
    ensure(allowed.binary_search(&p).is_ok(), "L8", || {
        format!("cut at {p} of {joined:?}")
    })?;
    let unaligned = if limit.is_line_aligned() {
        let free = limit
            .clone()
            .line_aligned(false)
            .apply_to_result(input.clone());
        if free.truncation.as_ref().map(|t| t.meta) != Some(truncation.meta) {
            return Ok(limited);
        }
        free
    } else {
        limited.clone()
    };
    let g = cut_position(&unaligned, &joined, Keep::Tail)?;
    if let Some(&longer) = allowed.iter().rev().find(|&&q| q < g) {
        let alternative = with_cut_at(&unaligned, &joined, longer);
        ensure(!fits(&alternative), "L10", || {
            format!("a cut at {longer} fits too")
        })?;
    }
    if limit.is_line_aligned() {
        let reach = ((joined.len() - g) / 4).min(LINE_ALIGN_MAX_BYTES);
        let is_line_start = |q: usize| q == 0 || joined.as_bytes()[q - 1] == b'\n';
        let expected = (g..=(g + reach).min(joined.len()))
            .filter(|&q| g == 0 || is_line_start(q))
            .find(|&q| fits(&with_cut_at(&limited, &joined, q)))
            .unwrap_or(g);
        ensure(p == expected, "L9", || {
            format!("cut at {p}, the first fitting line start is {expected}")
        })?;
    }
    Ok(limited)
}

/// L6, L7 and L12 on a cut result.
fn check_members(
    input: &ToolResult,
    limited: &Limited,
    joined: &str,
    p: usize,
) -> Result<(), Violation> {
    let Some(truncation) = &limited.truncation else {
        return Ok(());
    };
    let result = &limited.result;
    ensure(truncation.original_bytes == joined.len(), "L12", || {
        "original_bytes".into()
    })?;
    let non_text = input
        .content
        .iter()
        .filter(|c| c.as_text().is_none())
        .count();
    ensure(truncation.dropped_blocks == non_text, "L12", || {
        "dropped_blocks".into()
    })?;
    let mut in_meta = input.meta.clone().unwrap_or_default();
    in_meta.remove(TRUNCATION_META_KEY);
    if truncation.meta == MetaKept::Nothing {
        return ensure(
            result.meta.is_none() && result.extra.is_empty(),
            "L6",
            || "the header alone carries nothing else".into(),
        );
    }
    let out_meta = result.meta.clone().unwrap_or_default();
    let report = out_meta.get(TRUNCATION_META_KEY);
    ensure(
        report.and_then(|r| r["dropped_bytes"].as_u64()) == Some(p as u64)
            && report.and_then(|r| r["original_bytes"].as_u64()) == Some(joined.len() as u64),
        "L12",
        || format!("the report in _meta: {report:?}"),
    )?;
    ensure(
        result.result_type == input.result_type && result.extra == input.extra,
        "L7",
        || "resultType and unknown members are kept".into(),
    )?;
    let mut rest = out_meta;
    rest.remove(TRUNCATION_META_KEY);
    if truncation.meta == MetaKept::All {
        return ensure(rest == in_meta, "L6", || "all of _meta is kept".into());
    }
    let dropped_some = in_meta
        .keys()
        .any(|k| !ERROR_META_KEYS.contains(&k.as_str()));
    let error_keys: Map<_, _> = in_meta
        .into_iter()
        .filter(|(k, _)| ERROR_META_KEYS.contains(&k.as_str()))
        .collect();
    ensure(dropped_some && rest == error_keys, "L6", || {
        "only the E3–E5 keys survive".into()
    })
}

/// Build the error result of `failure` and check E1–E7 on it, and V3 against
/// `secrets` (argument values that must appear nowhere: not in the result, not in the
/// log record). Returns the error result.
///
/// ```
/// use backstop_core::{Failure, call::CallContext, testing::checks::check_error_result};
/// let failure = Failure::expected("Pane not found: %99").with_suggestion("List panes.");
/// let result = check_error_result(&failure, &CallContext::new("capture_pane"), &[]).unwrap();
/// assert!(result.is_error());
/// ```
pub fn check_error_result(
    failure: &Failure,
    call: &CallContext,
    secrets: &[&str],
) -> Result<ToolResult, Violation> {
    let result = error_result(failure, call);
    ensure(result.is_error(), "E1", || "isError is true".into())?;
    let text = match result.content.as_slice() {
        [block] => block.as_text().unwrap_or_default(),
        _ => return Err(Violation::new("E2", "one text block")),
    };
    let meta = result.meta.clone().unwrap_or_default();
    let suggestion = meta.get("suggestion").and_then(Value::as_str);
    if !failure.is_validation() {
        let expected = match failure.suggestion() {
            Some(s) => format!("{}\n{s}", failure.message()),
            None => failure.message().to_owned(),
        };
        ensure(text == expected, "E2", || {
            format!("{text:?} is not the message as written")
        })?;
        ensure(
            meta.get("error_type") == Some(&Value::from(failure.error_type())),
            "E3",
            || "error_type".into(),
        )?;
        ensure(
            meta.get("expected") == Some(&Value::from(failure.is_expected())),
            "E4",
            || "expected".into(),
        )?;
        ensure(suggestion == failure.suggestion(), "E5", || {
            "suggestion mirrors the failure's".into()
        })?;
        for (key, value) in failure.meta() {
            if !ERROR_META_KEYS.contains(&key.as_str()) {
                ensure(meta.get(key) == Some(value), "E7", || {
                    format!("own key {key} kept")
                })?;
            }
        }
    } else {
        ensure(
            meta.get("error_type") == Some(&Value::from("ValidationError")),
            "V1",
            || "error_type is ValidationError".into(),
        )?;
        ensure(
            meta.get("expected") == Some(&Value::Bool(true)),
            "V1",
            || "expected".into(),
        )?;
    }
    match suggestion {
        Some(s) => ensure(text.ends_with(&format!("\n{s}")), "E2", || {
            "the suggestion ends the text".into()
        })?,
        None => ensure(!meta.contains_key("suggestion"), "E5", || {
            "no suggestion key".into()
        })?,
    }
    ensure(result.structured_content.is_none(), "E6", || {
        "no structuredContent".into()
    })?;
    let wire = serde_json::to_string(&result).unwrap_or_default();
    let log = format!("{:?}", LogRecord::for_call(failure, call));
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        ensure(
            !wire.contains(secret) && !log.contains(secret),
            "V3",
            || format!("the value {secret:?} leaked"),
        )?;
    }
    Ok(result)
}

/// Limit `input`, a result with `structuredContent`, for a tool that advertises
/// `schema` (`None`: none), and check SPEC L15 and the rules it shares with L2–L12 on
/// what comes out; returns the limited result.
///
/// Checks the cap (L4), unchanged under it (L2), idempotence (L11), and either
/// L15 a/b — `structuredContent` kept (L7) with each string a suffix of the original
/// and each array its last items, every change reported with its pointer (L12),
/// `isError` (L5) and `_meta` (L6) kept, a serialization text block that is the
/// serialization of the cut value — or L15 c: an `isError` `ResultTooLarge` result.
/// Whether the cut value validates against `schema` is for a JSON Schema validator
/// in the caller's tests.
///
/// ```
/// use backstop_core::{Limit, ToolResult, testing::checks::check_structured_limit};
/// let mut result = ToolResult::default();
/// result.structured_content = Some(serde_json::json!({"log": "line\n".repeat(500)}));
/// let limited = check_structured_limit(&Limit::new(300).unwrap(), &result, None).unwrap();
/// assert!(limited.result.structured_content.is_some());
/// ```
pub fn check_structured_limit(
    limit: &Limit,
    input: &ToolResult,
    schema: Option<&Value>,
) -> Result<Limited, Violation> {
    let cap = limit.max_bytes();
    let limited = limit.apply_with_schema("tool", input.clone(), schema);
    let result = &limited.result;
    let size = wire_size(result);
    ensure(size <= cap, "L4", || format!("{size} bytes > cap {cap}"))?;
    ensure(reader_fits(limit, result), "L18", || {
        "the cut result is over a reader's limit".into()
    })?;
    if (wire_size(input) <= cap && reader_fits(limit, input)) || !input.is_complete() {
        return ensure(
            result == input && limited.truncation.is_none(),
            "L2",
            || "a result within every limit (or not complete) is returned unchanged".into(),
        )
        .map(|()| limited);
    }
    let twice = limit.apply_with_schema("tool", result.clone(), schema);
    ensure(
        &twice.result == result && twice.truncation.is_none(),
        "L11",
        || "limiting a limited result changed it".into(),
    )?;
    let truncation = limited
        .truncation
        .clone()
        .ok_or_else(|| Violation::new("L4", "a result over the cap was not cut"))?;
    let meta = result.meta.clone().unwrap_or_default();
    let too_large = meta.get("error_type").and_then(Value::as_str) == Some(RESULT_TOO_LARGE)
        && input.meta.as_ref().and_then(|m| m.get("error_type")) != meta.get("error_type");
    if too_large || truncation.meta == MetaKept::Nothing {
        return ensure(
            result.is_error() && result.structured_content.is_none(),
            "L15",
            || "(c) a result that cannot be cut to its schema is an isError result".into(),
        )
        .map(|()| limited);
    }
    ensure(result.is_error == input.is_error, "L5", || {
        format!("isError {:?} became {:?}", input.is_error, result.is_error)
    })?;
    let (Some(before), Some(after)) = (&input.structured_content, &result.structured_content)
    else {
        return Err(Violation::new("L7", "structuredContent dropped by a cut"));
    };
    let mut changes = Vec::new();
    cut_of(
        before,
        after,
        &mut String::new(),
        &mut changes,
        limit.keep(),
    )?;
    let mut reported = truncation.structured.clone();
    reported.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    changes.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    ensure(reported == changes, "L15", || {
        format!("reported cuts {reported:?}, actual changes {changes:?}")
    })?;
    let in_meta = meta.get(TRUNCATION_META_KEY).cloned();
    let report_cuts = in_meta.as_ref().and_then(|r| r.get("structured")).cloned();
    let expected =
        (!changes.is_empty()).then(|| serde_json::to_value(&changes).unwrap_or_default());
    let mut report_cuts = report_cuts.map(|v| {
        let mut v: Vec<Value> = v.as_array().cloned().unwrap_or_default();
        v.sort_by(|a, b| a["pointer"].as_str().cmp(&b["pointer"].as_str()));
        Value::Array(v)
    });
    if expected.is_none()
        && report_cuts
            .as_ref()
            .is_some_and(|v| v.as_array().is_some_and(Vec::is_empty))
    {
        report_cuts = None;
    }
    ensure(report_cuts == expected, "L12", || {
        format!("_meta report {in_meta:?}")
    })?;
    let mut rest = meta;
    rest.remove(TRUNCATION_META_KEY);
    let mut in_rest = input.meta.clone().unwrap_or_default();
    in_rest.remove(TRUNCATION_META_KEY);
    if truncation.meta == MetaKept::All {
        ensure(rest == in_rest, "L6", || "all of _meta is kept".into())?;
    } else {
        in_rest.retain(|k, _| ERROR_META_KEYS.contains(&k.as_str()));
        ensure(rest == in_rest, "L6", || {
            "only the E3–E5 keys survive".into()
        })?;
    }
    ensure(
        result.result_type == input.result_type && result.extra == input.extra,
        "L7",
        || "resultType and unknown members are kept".into(),
    )?;
    let serialized = |r: &ToolResult, v: &Value| {
        r.content
            .iter()
            .filter_map(Content::as_text)
            .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|parsed| &parsed == v))
    };
    if serialized(input, before) {
        ensure(serialized(result, after), "L15", || {
            "the serialization text block is the serialization of the cut value".into()
        })?;
    }
    check_visible(input, &limited, before, after)?;
    Ok(limited)
}

/// L17 on a structured cut: where the input's text blocks hold only the serialization
/// of its value, a block with the header line comes first; the report's numbers are
/// those of the text blocks (other text and serialization joined), not zero when the
/// text lost bytes.
fn check_visible(
    input: &ToolResult,
    limited: &Limited,
    before: &Value,
    after: &Value,
) -> Result<(), Violation> {
    let Some(truncation) = &limited.truncation else {
        return Ok(());
    };
    let texts: Vec<&str> = input.content.iter().filter_map(Content::as_text).collect();
    let is_serialization =
        |t: &str| serde_json::from_str::<Value>(t).is_ok_and(|parsed| &parsed == before);
    let only_serialization = texts.len() == 1 && is_serialization(texts[0]);
    let out: Vec<&str> = limited
        .result
        .content
        .iter()
        .filter_map(Content::as_text)
        .collect();
    if only_serialization {
        let n = truncation.dropped_bytes;
        ensure(
            out.len() == 2
                && out[0] == header_of(n, truncation.dropped_blocks)
                && *out[1] == *after.to_string(),
            "L17",
            || format!("the header block first, then the serialization: {out:?}"),
        )?;
        ensure(
            n == texts[0].len().saturating_sub(out[1].len()),
            "L17",
            || format!("dropped_bytes {n} is not what the serialization lost"),
        )?;
        ensure(truncation.original_bytes == texts[0].len(), "L17", || {
            "original_bytes are the serialization's".into()
        })?;
        ensure(
            before == after || n > 0 || texts[0].len() <= out[1].len(),
            "L17",
            || "a cut value, yet 0 bytes dropped".into(),
        )?;
    } else if texts.iter().all(|t| !is_serialization(t)) {
        ensure(
            truncation.original_bytes == texts.join("\n\n").len(),
            "L12",
            || "original_bytes are the joined text's".into(),
        )?;
    }
    Ok(())
}

/// The report of a string that lost `dropped` of its `original` bytes.
fn string_cut(pointer: String, dropped: usize, original: usize) -> StructuredCut {
    StructuredCut {
        pointer,
        dropped_bytes: Some(dropped),
        dropped_items: None,
        original_bytes: Some(original),
        original_items: None,
    }
}

/// The report of an array that lost `dropped` of its `original` items.
fn items_cut(pointer: String, dropped: usize, original: usize) -> StructuredCut {
    StructuredCut {
        pointer,
        dropped_bytes: None,
        dropped_items: Some(dropped),
        original_bytes: None,
        original_items: Some(original),
    }
}

/// Check that `after` is a cut of `before` (strings keep a tail, arrays their last
/// items, everything else as it was), collecting each change as the cut it is.
fn cut_of(
    before: &Value,
    after: &Value,
    pointer: &mut String,
    changes: &mut Vec<StructuredCut>,
    keep: Keep,
) -> Result<(), Violation> {
    let at = pointer.clone();
    match (before, after, keep) {
        // Under head and tail, a string the header line would lengthen keeps its head
        // alone, so a `maxLength` that held still holds (L15 a).
        (Value::String(b), Value::String(a), Keep::Head)
        | (Value::String(b), Value::String(a), Keep::HeadAndTail { .. })
            if keep == Keep::Head || (b.starts_with(a.as_str()) && a != b) =>
        {
            ensure(b.starts_with(a.as_str()), "L16", || {
                format!("{at}: the cut string is not a prefix of the original")
            })?;
            ensure(
                allowed_cuts(b).binary_search(&a.len()).is_ok(),
                "L8",
                || format!("{at}: head cut at {}", a.len()),
            )?;
            if a.len() < b.len() {
                changes.push(string_cut(at, b.len() - a.len(), b.len()));
            }
            Ok(())
        }
        (Value::String(b), Value::String(a), Keep::HeadAndTail { .. }) if a != b => {
            // The head, the header line on its own line, the tail (L16).
            let found = (1..=20).find_map(|digits| {
                let n = b.len().checked_sub(a.len().checked_sub(28 + digits)?)?;
                let marker = format!("\n{}\n", header(n));
                (marker.len() == 28 + digits).then_some(())?;
                a.match_indices(&marker).find_map(|(q, _)| {
                    let p = q + n;
                    (b.get(..q) == Some(&a[..q]) && b.get(p..) == Some(&a[q + marker.len()..]))
                        .then_some((q, p))
                })
            });
            let (q, p) = found.ok_or_else(|| {
                Violation::new(
                    "L16",
                    format!("{at}: not the original's head and tail around the header line"),
                )
            })?;
            let allowed = allowed_cuts(b);
            ensure(
                allowed.binary_search(&q).is_ok() && allowed.binary_search(&p).is_ok(),
                "L8",
                || format!("{at}: cut between {q} and {p}"),
            )?;
            changes.push(string_cut(at, p - q, b.len()));
            Ok(())
        }
        (Value::Array(b), Value::Array(a), Keep::Head | Keep::HeadAndTail { .. }) => {
            ensure(a.len() <= b.len(), "L15", || format!("{at}: an array grew"))?;
            let dropped = b.len() - a.len();
            // The first `h` items kept, and the last `a.len() - h` (none under head).
            let mut heads: Vec<usize> = match keep {
                Keep::Head => vec![a.len()],
                _ => (0..=a.len()).rev().collect(),
            };
            // The ways the items may line up, those with the most items kept whole
            // first (a cut item can also pass for a prefix of another); the first that
            // explains the cut is taken, so nested arrays are not tried every way.
            let whole = |h: usize| {
                (0..a.len())
                    .filter(|&i| a[i] == b[if i < h { i } else { i + dropped }])
                    .count()
            };
            heads.sort_by_key(|&h| std::cmp::Reverse(whole(h)));
            let mut last_error = None;
            let mut best = None;
            for h in heads {
                let mut found = Vec::new();
                let mut pairs = (0..h).map(|i| (i, i)).collect::<Vec<_>>();
                pairs.extend((h..a.len()).map(|i| (i, i + dropped)));
                let tried = pairs.into_iter().try_for_each(|(i, j)| {
                    let len = pointer.len();
                    pointer.push_str(&format!("/{j}"));
                    let r = cut_of(&b[j], &a[i], pointer, &mut found, keep);
                    pointer.truncate(len);
                    r
                });
                match tried {
                    Ok(()) => {
                        best = Some(found);
                        break;
                    }
                    Err(e) => last_error = Some(e),
                }
            }
            let Some(found) = best else {
                return Err(
                    last_error.unwrap_or_else(|| Violation::new("L16", format!("{at}: not a cut")))
                );
            };
            changes.extend(found);
            if dropped > 0 {
                changes.push(items_cut(at, dropped, b.len()));
            }
            Ok(())
        }
        (Value::String(b), Value::String(a), _) => {
            ensure(b.ends_with(a.as_str()), "L15", || {
                format!("{at}: the cut string is not a suffix of the original")
            })?;
            let dropped = b.len() - a.len();
            ensure(
                allowed_cuts(b).binary_search(&dropped).is_ok(),
                "L8",
                || format!("{at}: cut at {dropped}"),
            )?;
            if dropped > 0 {
                changes.push(string_cut(at, dropped, b.len()));
            }
            Ok(())
        }
        (Value::Array(b), Value::Array(a), _) => {
            ensure(a.len() <= b.len(), "L15", || format!("{at}: an array grew"))?;
            let dropped = b.len() - a.len();
            for (i, (b, a)) in b[dropped..].iter().zip(a).enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{}", dropped + i));
                cut_of(b, a, pointer, changes, keep)?;
                pointer.truncate(len);
            }
            if dropped > 0 {
                changes.push(items_cut(at, dropped, b.len()));
            }
            Ok(())
        }
        (Value::Object(b), Value::Object(a), _) => {
            ensure(
                b.len() == a.len() && b.keys().all(|k| a.contains_key(k)),
                "L15",
                || format!("{at}: members added or removed"),
            )?;
            for (key, b) in b {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                cut_of(b, &a[key], pointer, changes, keep)?;
                pointer.truncate(len);
            }
            Ok(())
        }
        (b, a, _) => ensure(b == a, "L15", || format!("{at}: {b} became {a}")),
    }
}
