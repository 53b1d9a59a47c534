//! The limiter's rarely taken paths, each reached on purpose and checked with the rule
//! oracles of `backstop_core::testing::checks` (L2–L12; grapheme boundaries from
//! `unicode-segmentation`'s iterator over the whole text).
//!
//! - The copied window of the joined text starts at most `escape::LOOKBACK` (4 KiB)
//!   before the cut. When the cut lies inside a grapheme context longer than that — a
//!   run of regional indicators, an emoji ZWJ sequence or a Devanagari conjunct with a
//!   long run of marks — the grapheme cursor asks for the text before the window
//!   (`GraphemeIncomplete::PreContext`), which comes from outside it (L8, L10).
//! - Several text blocks cut where the `\n\n` joins and multi-byte characters meet
//!   the 4 KiB reading chunks (L3, L4, L10).
//! - An error result whose `_meta` is too large keeps its E3–E5 keys (L6).

use backstop_core::testing::checks::check_limit;
use backstop_core::{Limit, ToolResult, call::Content, limit::MetaKept};
use unicode_segmentation::UnicodeSegmentation;

/// Check L2–L12 on `result` at each cap of `caps`, line-aligned and not; the kept
/// tails (the text after the header line).
fn check_caps(result: &ToolResult, caps: std::ops::Range<usize>) -> Vec<String> {
    let mut tails = Vec::new();
    for cap in caps {
        for line_align in [false, true] {
            let limit = Limit::new(cap).unwrap().line_aligned(line_align);
            let limited = check_limit(&limit, result)
                .unwrap_or_else(|v| panic!("cap {cap}, line_align {line_align}: {v}"));
            let text = limited.result.content[0].as_text().unwrap();
            let tail = text.split_once('\n').map_or("", |(_, tail)| tail);
            tails.push(tail.to_owned());
        }
    }
    tails
}

/// The length of the longest grapheme cluster of `text`.
fn longest_cluster(text: &str) -> usize {
    text.graphemes(true).map(str::len).max().unwrap_or(0)
}

/// Kills `Boundaries::provide_context` replaced by `()` (the cursor asks for the same
/// context forever: a cargo-mutants timeout). Without the context from before the
/// window, the pairing of the flags is unknown and a flag can be split in two.
#[test]
fn a_cut_deep_inside_a_run_of_flags_keeps_whole_flags() {
    // 3,001 regional indicators after one letter: whole flags pair up from the start
    // of the run, 12 KB before the cut, so the window alone cannot tell the pairing.
    let run: String = std::iter::repeat_n(['\u{1F1EB}', '\u{1F1F7}'], 1500)
        .flatten()
        .chain(['\u{1F1EA}'])
        .collect();
    let text = format!("x{run}");
    let result = ToolResult::text(text.clone());
    for tail in check_caps(&result, 1_200..1_212) {
        assert!(!tail.is_empty());
        // An even number of indicators before the cut: the kept ones start a flag.
        let dropped = text.len() - tail.len() - 1;
        assert_eq!(dropped % 8, 0, "cut after {dropped} bytes of flags");
    }
}

/// The same through the emoji rule (GB11): without the context from before the
/// window, the sequence would be split between its ZWJ and its last emoji.
#[test]
fn a_cut_deep_inside_an_emoji_zwj_sequence_drops_the_whole_sequence() {
    // 👍, 3,000 combining marks (6 KB), ZWJ, 👍: one grapheme cluster.
    let cluster = format!("👍{}\u{200D}👍", "\u{301}".repeat(3000));
    assert_eq!(longest_cluster(&cluster), cluster.len());
    let result = ToolResult::text(format!("start\n{cluster}and the tail"));
    for tail in check_caps(&result, 600..606) {
        assert_eq!(tail, "and the tail");
    }
}

/// The same through the Indic conjunct rule (GB9c): a consonant, a long run of
/// viramas, a consonant. Kills `provide_context` replaced by `()` (a timeout).
#[test]
fn a_cut_deep_inside_a_devanagari_conjunct_drops_the_whole_conjunct() {
    let cluster = format!("क{}ष", "\u{94D}".repeat(2500));
    assert_eq!(longest_cluster(&cluster), cluster.len());
    let result = ToolResult::text(format!("start\n{cluster}and the tail"));
    for tail in check_caps(&result, 600..606) {
        assert_eq!(tail, "and the tail");
    }
}

/// A cut whose window starts exactly where a block starts: the context before the
/// window is the `\n\n` join.
#[test]
fn context_before_the_window_can_be_the_join_of_two_blocks() {
    let flags: String = std::iter::repeat_n('\u{1F1EB}', 2000).collect();
    let result = ToolResult {
        content: vec![Content::text("head"), Content::text(flags)],
        ..ToolResult::default()
    };
    check_caps(&result, 1_000..1_040);
}

/// Blocks of multi-byte characters, escapes and empty blocks, cut at caps where the
/// budget runs out inside a 4 KiB reading chunk, at a join, or in the middle of a
/// UTF-8 sequence. Kills `!=` replaced by `==` in `Boundaries::allowed_at_or_after`
/// (a cut inside an escape sequence).
#[test]
fn cuts_across_block_joins_and_multi_byte_characters() {
    let blocks = [
        "é".repeat(3000),
        String::new(),
        "😀".repeat(1500),
        "\u{1b}[0m\"q\"\\".repeat(700),
        "€".repeat(1365) + "é",
    ];
    let result = ToolResult {
        content: blocks.iter().map(Content::text).collect(),
        ..ToolResult::default()
    };
    for cap in [4_001, 9_333, 14_662, 21_005] {
        check_caps(&result, cap..cap + 2);
    }
}

/// Kills: `delete !` in `Cutter::kept_meta`'s `!fits` check (error keys that fit
/// would be dropped, leaving the header alone).
#[test]
fn an_error_with_oversized_meta_keeps_its_error_keys_that_fit() {
    let mut error = ToolResult::text("E".repeat(5000))
        .with_meta("error_type", "not_found".into())
        .with_meta("suggestion", "Call list_panes first.".into())
        .with_meta("trace", "t".repeat(5000).into());
    error.is_error = Some(true);
    let limited = check_limit(&Limit::new(1_000).unwrap(), &error).unwrap();
    assert_eq!(limited.truncation.unwrap().meta, MetaKept::ErrorKeys);
    let meta = limited.result.meta.unwrap();
    assert_eq!(meta["error_type"], "not_found");
    assert_eq!(meta["suggestion"], "Call list_panes first.");
    assert!(!meta.contains_key("trace"));
    assert_eq!(limited.result.is_error, Some(true));
}

/// An error key that alone is over the cap: nothing of `_meta` can stay, the header
/// alone is sent, `isError` kept (L6's last resort). Kills `header_only` replaced by
/// `Default::default()` and its `is_error` field deleted.
#[test]
fn an_error_key_over_the_cap_leaves_the_header_alone() {
    let mut error = ToolResult::text("E".repeat(5000))
        .with_meta("suggestion", "s".repeat(5000).into())
        .with_meta("trace", "t".into());
    error.is_error = Some(true);
    let limited = check_limit(&Limit::new(1_000).unwrap(), &error).unwrap();
    assert_eq!(limited.truncation.unwrap().meta, MetaKept::Nothing);
    assert!(limited.result.meta.is_none());
    assert_eq!(limited.result.is_error, Some(true));
}

/// Line-aligned cuts (L9) in a long text: the window starts far into the text, the
/// next line start is near or out of reach, lines end in `\n` or `\r\n`. Kills
/// `Limit::is_line_aligned` replaced by `true` or `false`, and `||` replaced by `&&`
/// in `Cutter::find_cut` (an unaligned cut aligned anyway).
#[test]
fn line_aligned_cuts_deep_in_a_long_text() {
    let text: String = (0..1500)
        .map(|n| {
            let end = if n % 5 == 0 { "\r\n" } else { "\n" };
            format!("line {n} {}{end}", "x".repeat(n % 37))
        })
        .collect();
    let result = ToolResult::text(text);
    for cap in [2_000, 2_007, 9_001, 9_013] {
        check_caps(&result, cap..cap + 2);
    }
    // One line longer than the reach of L9: the cut stays at a grapheme boundary.
    let long_line = ToolResult::text(format!("{}\nend", "y".repeat(40_000)));
    for tail in check_caps(&long_line, 9_000..9_002) {
        assert!(tail.starts_with('y') && tail.ends_with("\nend"));
    }
}

/// The text fits whole once a large non-text block is dropped: the cut keeps all of
/// it (a cut at 0, where L9 has no line to look for).
#[test]
fn a_result_whose_text_fits_once_its_image_is_dropped() {
    let result = ToolResult {
        content: vec![
            Content::text("first line\nsecond line"),
            Content::Other(serde_json::json!({
                "type": "image", "mimeType": "image/png", "data": "A".repeat(10_000)
            })),
        ],
        ..ToolResult::default()
    };
    for tail in check_caps(&result, 400..402) {
        assert_eq!(tail, "first line\nsecond line");
    }
}
