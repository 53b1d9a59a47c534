//! Property tests of the response limit (SPEC L1–L12, L16 under every keep policy), with the generators and rule
//! checks of `backstop_core::testing`: terminal output biased toward what breaks naive
//! limiters (runs of `\n`, quotes and backslashes, ANSI colour and OSC hyperlink
//! sequences, multi-byte scripts, emoji ZWJ sequences, flags, combining marks, CRLF),
//! large and nested `_meta`, many content blocks, non-text blocks; caps drawn on their
//! own and just under each result's size.
//!
//! `PROPTEST_CASES` raises the number of cases (default 256).

use backstop_core::limit::Keep;
use backstop_core::testing::checks::check_limit;
use backstop_core::testing::strategies::{keep, result_and_cap};
use backstop_core::{Limit, ToolResult, limit::MetaKept};
use proptest::prelude::*;
use serde_json::{Value, json};

fn check(cap: usize, line_align: bool, result: &ToolResult) -> Result<(), TestCaseError> {
    check_keeping(Keep::Tail, cap, line_align, result)
}

fn check_keeping(
    keep: Keep,
    cap: usize,
    line_align: bool,
    result: &ToolResult,
) -> Result<(), TestCaseError> {
    check_reading(keep, cap, None, line_align, result)
}

/// The rules under `keep`, at `cap` wire bytes and the reader's limits `reader`
/// (characters, tokens: L18).
fn check_reading(
    keep: Keep,
    cap: usize,
    reader: Option<(Option<usize>, Option<usize>)>,
    line_align: bool,
    result: &ToolResult,
) -> Result<(), TestCaseError> {
    let mut limit = Limit::new(cap)
        .unwrap()
        .line_aligned(line_align)
        .with_keep(keep);
    if let Some((chars, tokens)) = reader {
        limit = limit
            .with_max_chars(chars)
            .unwrap()
            .with_max_tokens(tokens)
            .unwrap();
    }
    check_limit(&limit, result)
        .map(drop)
        .map_err(|v| TestCaseError::fail(v.to_string()))
}

/// A reader's limits (L18): characters, tokens, either or both, from the least that
/// holds a cut to more than most texts drawn.
fn reader_limits() -> impl Strategy<Value = (Option<usize>, Option<usize>)> {
    let chars = proptest::option::of(Limit::min_chars()..3_000);
    let tokens = proptest::option::of(Limit::min_tokens()..800);
    (chars, tokens)
}

proptest! {
    #![proptest_config(ProptestConfig { max_shrink_iters: 4096, ..ProptestConfig::default() })]

    /// L2–L12 with the default, line-aligned cuts (L9 checked against an unaligned run).
    #[test]
    fn rules_hold_line_aligned((result, cap) in result_and_cap()) {
        check(cap, true, &result)?;
    }

    /// L2–L12 with cuts at the longest grapheme boundary (L10: one more would not fit).
    #[test]
    fn rules_hold_unaligned((result, cap) in result_and_cap()) {
        check(cap, false, &result)?;
    }

    /// L2–L12 and L16 under the `head` policy: the head kept, the header line last.
    #[test]
    fn rules_hold_keeping_the_head((result, cap) in result_and_cap(), line_align in any::<bool>()) {
        check_keeping(Keep::Head, cap, line_align, &result)?;
    }

    /// L2–L12 and L16 under `head+tail`, any share: both ends, the header between.
    #[test]
    fn rules_hold_keeping_both_ends(
        (result, cap) in result_and_cap(),
        keep in keep(),
        line_align in any::<bool>(),
    ) {
        check_keeping(keep, cap, line_align, &result)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { max_shrink_iters: 4096, ..ProptestConfig::default() })]

    /// L2–L12 and L16 under a reader's limits too (L18): every limit hard at once, the
    /// cut the longest that fits all of them, under every keep policy, line-aligned or
    /// not; a result within all of them unchanged.
    #[test]
    fn l18_rules_hold_under_the_readers_limits(
        (result, cap) in result_and_cap(),
        reader in reader_limits(),
        keep in keep(),
        line_align in any::<bool>(),
    ) {
        check_reading(keep, cap, Some(reader), line_align, &result)?;
    }
}

/// L18 where characters, tokens and wire bytes disagree most: surrogate pairs, CJK,
/// escapes and ASCII, at every limit in a range, under each policy.
#[test]
fn l18_each_unit_binds_in_its_turn() {
    let texts = [
        "🙂🙂 emoji line\n".repeat(300),
        "漢字かな交じり文\n".repeat(300),
        "\"quoted\"\t\\ \u{1b}[1mbold\u{1b}[0m\n".repeat(200),
        "plain ascii output line\n".repeat(300),
    ];
    for text in texts {
        let result = ToolResult::text(text.clone());
        for n in (Limit::min_chars()..Limit::min_chars() + 600).step_by(7) {
            for keep in [
                Keep::Tail,
                Keep::Head,
                Keep::HeadAndTail {
                    head_per_mille: 300,
                },
            ] {
                for reader in [(Some(n), None), (None, Some(n / 3)), (Some(n), Some(n / 3))] {
                    let reader = (
                        reader.0,
                        reader.1.map(|t: usize| t.max(Limit::min_tokens())),
                    );
                    check_reading(keep, 1_000_000, Some(reader), true, &result)
                        .unwrap_or_else(|e| panic!("{keep}, {reader:?}: {e:?}"));
                }
            }
        }
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
    let limited = check_limit(&limit, &worst).unwrap();
    assert_eq!(limited.truncation.unwrap().meta, MetaKept::Nothing);
    assert_eq!(limited.result.is_error, Some(false));
}

/// L8 at every cap in a range, over texts made of nothing but multi-code-point
/// clusters and escape sequences, so every alignment of the cut is tried.
#[test]
fn cuts_never_split_a_cluster_or_sequence_at_any_cap() {
    let texts = [
        "👨\u{200d}👩\u{200d}👧\u{200d}👦".repeat(40),
        "🇯🇵🇫🇷🇩🇪".repeat(40),
        "e\u{301}\u{302}".repeat(200),
        "\u{1b}[38;5;196mr\u{1b}[0m".repeat(60),
        "\u{1b}[0m\u{301}\u{302}x".repeat(60),
        "\u{1b}]8;;https://example.com\u{1b}\\l".repeat(30),
    ];
    for text in texts {
        let result = ToolResult::text(text);
        for cap in Limit::min_bytes()..Limit::min_bytes() + 400 {
            for line_align in [false, true] {
                for keep in [
                    Keep::Tail,
                    Keep::Head,
                    Keep::HeadAndTail {
                        head_per_mille: 300,
                    },
                ] {
                    check_keeping(keep, cap, line_align, &result)
                        .unwrap_or_else(|e| panic!("{keep}, cap {cap}: {e:?}"));
                }
            }
        }
    }
}
