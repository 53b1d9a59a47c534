//! Property tests of the response limit (SPEC L2–L12), under generators biased toward
//! what breaks naive limiters: runs of `\n`, quotes and backslashes, ANSI colour and
//! OSC hyperlink sequences, multi-byte scripts, emoji ZWJ sequences, flags, combining
//! marks, CRLF, large and nested `_meta`, many content blocks, non-text blocks.
//!
//! `PROPTEST_CASES` raises the number of cases (default 256).

use backstop_core::limit::{ERROR_META_KEYS, TRUNCATION_META_KEY};
use backstop_core::{Content, Limit, Limited, MetaKept, ToolResult};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use unicode_segmentation::UnicodeSegmentation;

/// Pieces of terminal output that naive limiters get wrong.
const FRAGMENTS: &[&str] = &[
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

fn terminal_text(max_fragments: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..max_fragments)
        .prop_map(|parts| parts.concat())
}

fn meta_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        terminal_text(8).prop_map(Value::from),
        (0usize..3000).prop_map(|n| Value::from("m".repeat(n))),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn meta() -> impl Strategy<Value = Option<Map<String, Value>>> {
    let keys = prop_oneof![
        Just("error_type".to_owned()),
        Just("expected".to_owned()),
        Just("suggestion".to_owned()),
        Just("pane".to_owned()),
        "[a-z/._]{1,12}",
    ];
    prop::option::of(
        prop::collection::btree_map(keys, meta_value(), 0..5)
            .prop_map(|m| m.into_iter().collect::<Map<_, _>>()),
    )
}

fn block() -> impl Strategy<Value = Content> {
    prop_oneof![
        6 => terminal_text(400).prop_map(Content::text),
        1 => (0usize..2000).prop_map(|n| Content::Other(json!({
            "type": "image", "mimeType": "image/png", "data": "QUFB".repeat(n / 4)
        }))),
        1 => terminal_text(20).prop_map(|t| Content::Other(json!({
            "type": "resource", "resource": {"uri": "file:///log", "text": t}
        }))),
    ]
}

fn tool_result() -> impl Strategy<Value = ToolResult> {
    (
        prop::collection::vec(block(), 0..6),
        prop::option::of(meta_value()),
        prop::option::of(any::<bool>()),
        meta(),
        prop::option::of(Just("complete".to_owned())),
        prop::option::of(terminal_text(30)),
    )
        .prop_map(
            |(content, structured, is_error, meta, result_type, vendor)| {
                let mut extra = Map::new();
                if let Some(v) = vendor {
                    extra.insert("vendor/extension".into(), Value::from(v));
                }
                ToolResult {
                    content,
                    structured_content: structured,
                    is_error,
                    meta,
                    result_type,
                    extra,
                }
            },
        )
}

fn cap() -> impl Strategy<Value = usize> {
    prop_oneof![
        (Limit::min_bytes()..Limit::min_bytes() + 120),
        (Limit::min_bytes()..3000),
        (3000usize..20_000),
    ]
}

/// A result and a cap: a cap drawn on its own, or one just under the result's size, so
/// that small cuts (one- and two-digit counts) are as common as large ones.
fn case() -> impl Strategy<Value = (ToolResult, usize)> {
    (tool_result(), cap(), any::<bool>(), 1usize..80).prop_map(|(result, cap, near, delta)| {
        if near {
            let cap = wire_size(&result)
                .saturating_sub(delta)
                .max(Limit::min_bytes());
            (result, cap)
        } else {
            (result, cap)
        }
    })
}

fn wire_size(result: &ToolResult) -> usize {
    serde_json::to_vec(result).unwrap().len()
}

/// The text the cut is taken from (L3): text blocks joined by `\n\n`, or with none,
/// the JSON of the members the cut replaces.
fn joined_text(result: &ToolResult) -> String {
    let texts: Vec<&str> = result.content.iter().filter_map(Content::as_text).collect();
    if texts.is_empty() {
        let mut payload = Map::new();
        payload.insert(
            "content".into(),
            serde_json::to_value(&result.content).unwrap(),
        );
        if let Some(s) = &result.structured_content {
            payload.insert("structuredContent".into(), s.clone());
        }
        serde_json::to_string(&payload).unwrap()
    } else {
        texts.join("\n\n")
    }
}

fn header(n: usize) -> String {
    format!("[... truncated {n} bytes ...]")
}

/// The one text of a limited result.
fn only_text(limited: &Limited) -> &str {
    assert_eq!(limited.result.content.len(), 1, "one text block");
    limited.result.content[0].as_text().expect("a text block")
}

/// Where the kept tail starts in the joined text, checking the L3 shape on the way.
fn cut_position(limited: &Limited, joined: &str) -> usize {
    let text = only_text(limited);
    let truncation = limited.truncation.as_ref().unwrap();
    let n = truncation.dropped_bytes;
    if truncation.meta == MetaKept::Nothing {
        assert_eq!(text, header(joined.len()));
        return joined.len();
    }
    let prefix = header(n) + "\n";
    assert!(text.starts_with(&prefix), "header line first: {text:?}");
    let tail = &text[prefix.len()..];
    assert!(
        joined.ends_with(tail),
        "the kept text is a suffix of the joined text"
    );
    assert_eq!(n, joined.len() - tail.len(), "N is the bytes dropped");
    n
}

/// Start positions of terminal escape sequences and their ends, by a forward scan of
/// the grammar (an oracle written apart from the limiter's backward look-up).
fn escape_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
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
                    while j < limit && (0x30..=0x3f).contains(&b[j]) {
                        j += 1;
                    }
                    while j < limit && (0x20..=0x2f).contains(&b[j]) {
                        j += 1;
                    }
                    if j < limit && (0x40..=0x7e).contains(&b[j]) {
                        j += 1;
                    }
                }
                b']' | b'P' | b'X' | b'^' | b'_' => {
                    j += 1;
                    loop {
                        if j >= limit || (b[j] < 0x20 && b[j] != 0x07 && b[j] != 0x1b) {
                            break;
                        }
                        if b[j] == 0x07 {
                            j += 1;
                            break;
                        }
                        if b[j] == 0x1b {
                            if b.get(j + 1) == Some(&b'\\') {
                                j += 2;
                            }
                            break;
                        }
                        j += 1;
                    }
                }
                0x20..=0x2f => {
                    while j < limit && (0x20..=0x2f).contains(&b[j]) {
                        j += 1;
                    }
                    if j < limit && (0x30..=0x7e).contains(&b[j]) {
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

/// Cut positions L8 allows: grapheme boundaries outside escape sequences.
fn allowed_cuts(text: &str) -> Vec<usize> {
    let spans = escape_spans(text);
    let mut cuts: Vec<usize> = text.grapheme_indices(true).map(|(i, _)| i).collect();
    cuts.push(text.len());
    cuts.retain(|&p| !spans.iter().any(|&(s, e)| s < p && p < e));
    cuts
}

/// The same limited result with the tail starting at `p` instead.
fn with_cut_at(limited: &Limited, joined: &str, p: usize) -> ToolResult {
    let mut result = limited.result.clone();
    result.content = vec![Content::text(header(p) + "\n" + &joined[p..])];
    if let Some(report) = result
        .meta
        .as_mut()
        .and_then(|m| m.get_mut(TRUNCATION_META_KEY))
    {
        report["dropped_bytes"] = Value::from(p);
    }
    result
}

proptest! {
    #![proptest_config(ProptestConfig { max_shrink_iters: 2048, ..ProptestConfig::default() })]

    /// L4: the returned result's wire size is at most the cap, for every input.
    /// L5: `isError` is exactly as it was. L2: at or under the cap, unchanged.
    #[test]
    fn hard_cap_and_is_error((result, cap) in case(), align in any::<bool>()) {
        let limit = Limit::new(cap).unwrap().line_aligned(align);
        let before = wire_size(&result);
        let limited = limit.apply_to_result(result.clone());
        prop_assert!(wire_size(&limited.result) <= cap, "L4: {} > {cap}", wire_size(&limited.result));
        prop_assert_eq!(limited.result.is_error, result.is_error, "L5");
        if before <= cap {
            prop_assert!(limited.truncation.is_none(), "L2");
            prop_assert_eq!(&limited.result, &result, "L2");
        } else {
            prop_assert!(limited.truncation.is_some(), "over the cap is cut");
        }
    }

    /// L3 shape, L6 `_meta`, L7 members, L12 report.
    #[test]
    fn shape_meta_and_members((result, cap) in case()) {
        let limited = Limit::new(cap).unwrap().apply_to_result(result.clone());
        let Some(truncation) = limited.truncation.clone() else { return Ok(()) };
        let joined = joined_text(&result);
        let n = cut_position(&limited, &joined);
        prop_assert_eq!(truncation.original_bytes, joined.len());
        prop_assert_eq!(
            truncation.dropped_blocks,
            result.content.iter().filter(|c| c.as_text().is_none()).count()
        );
        prop_assert!(limited.result.structured_content.is_none(), "L7: dropped when cutting");
        let out_meta = limited.result.meta.clone().unwrap_or_default();
        let mut in_meta = result.meta.clone().unwrap_or_default();
        in_meta.remove(TRUNCATION_META_KEY);
        match truncation.meta {
            MetaKept::Nothing => {
                prop_assert!(limited.result.meta.is_none());
                prop_assert!(limited.result.extra.is_empty());
            }
            kept => {
                let report = &out_meta[TRUNCATION_META_KEY];
                prop_assert_eq!(report["dropped_bytes"].as_u64(), Some(n as u64), "L12");
                prop_assert_eq!(report["original_bytes"].as_u64(), Some(joined.len() as u64));
                prop_assert_eq!(&limited.result.result_type, &result.result_type, "L7");
                prop_assert_eq!(&limited.result.extra, &result.extra, "L7");
                let mut rest = out_meta.clone();
                rest.remove(TRUNCATION_META_KEY);
                if kept == MetaKept::All {
                    prop_assert_eq!(rest, in_meta, "L6: all of _meta kept");
                } else {
                    prop_assert!(in_meta.keys().any(|k| !ERROR_META_KEYS.contains(&k.as_str())));
                    let expected: Map<_, _> = in_meta.into_iter()
                        .filter(|(k, _)| ERROR_META_KEYS.contains(&k.as_str())).collect();
                    prop_assert_eq!(rest, expected, "L6: the E3–E5 keys survive");
                }
            }
        }
    }

    /// L8: the cut lands on a grapheme boundary outside escape sequences.
    /// L10: one more grapheme would not fit (unaligned cuts).
    #[test]
    fn cut_is_allowed_and_maximal((result, cap) in case()) {
        let limit = Limit::new(cap).unwrap().line_aligned(false);
        let limited = limit.apply_to_result(result.clone());
        let Some(truncation) = &limited.truncation else { return Ok(()) };
        if truncation.meta == MetaKept::Nothing { return Ok(()) }
        let joined = joined_text(&result);
        let p = cut_position(&limited, &joined);
        let allowed = allowed_cuts(&joined);
        prop_assert!(allowed.contains(&p), "L8: cut at {p} in {joined:?}");
        if let Some(&longer) = allowed.iter().rev().find(|&&q| q < p) {
            let alternative = with_cut_at(&limited, &joined, longer);
            prop_assert!(wire_size(&alternative) > cap, "L10: a cut at {longer} fits too");
        }
    }

    /// L9: with line alignment, the tail starts at the first line start that fits near
    /// the start of the maximal window, or at the maximal grapheme cut if none does.
    #[test]
    fn line_aligned_cut((result, cap) in case()) {
        let joined = joined_text(&result);
        let aligned = Limit::new(cap).unwrap().apply_to_result(result.clone());
        let unaligned = Limit::new(cap).unwrap().line_aligned(false).apply_to_result(result);
        let (Some(ta), Some(tu)) = (&aligned.truncation, &unaligned.truncation) else {
            return Ok(())
        };
        if ta.meta == MetaKept::Nothing || tu.meta != ta.meta { return Ok(()) }
        let g = cut_position(&unaligned, &joined);
        let p = cut_position(&aligned, &joined);
        let reach = ((joined.len() - g) / 4).min(backstop_core::limit::LINE_ALIGN_MAX_BYTES);
        let is_line_start = |q: usize| q == 0 || joined.as_bytes()[q - 1] == b'\n';
        let first_fitting_line = (g..=(g + reach).min(joined.len()))
            .filter(|&q| g == 0 || is_line_start(q))
            .find(|&q| wire_size(&with_cut_at(&aligned, &joined, q)) <= cap);
        prop_assert_eq!(p, first_fitting_line.unwrap_or(g));
    }

    /// L11: limiting a limited result changes nothing.
    #[test]
    fn idempotent((result, cap) in case(), align in any::<bool>()) {
        let limit = Limit::new(cap).unwrap().line_aligned(align);
        let once = limit.apply_to_result(result);
        let twice = limit.apply_to_result(once.result.clone());
        prop_assert!(twice.truncation.is_none());
        prop_assert_eq!(twice.result, once.result);
    }
}

#[test]
fn results_that_are_not_complete_pass_untouched() {
    let limit = Limit::new(Limit::min_bytes()).unwrap();
    let mut input_required = ToolResult::text("x".repeat(10_000));
    input_required.result_type = Some("input_required".into());
    assert_eq!(
        limit.apply_to_result(input_required.clone()).result,
        input_required
    );
    let task = ToolResult::from_value(json!({"task": {"taskId": "t1", "status": "working"},
        "padding": "p".repeat(10_000)}))
    .unwrap();
    assert_eq!(limit.apply_to_result(task.clone()).result, task);
}

#[test]
fn a_cap_below_the_minimum_is_refused_and_the_minimum_always_fits() {
    let min = Limit::min_bytes();
    assert!(Limit::new(min - 1).is_err(), "L14");
    let limit = Limit::new(min).unwrap();
    let mut worst =
        ToolResult::text("\u{1b}".repeat(100_000)).with_meta("k", "v".repeat(500).into());
    worst.is_error = Some(false);
    worst
        .extra
        .insert("vendor".into(), Value::from("z".repeat(500)));
    let limited = limit.apply_to_result(worst);
    assert!(wire_size(&limited.result) <= min);
    assert_eq!(limited.truncation.unwrap().meta, MetaKept::Nothing);
    assert_eq!(limited.result.is_error, Some(false));
}
