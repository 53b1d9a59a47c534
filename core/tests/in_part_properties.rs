//! SPEC L13 and B3 under every keep policy (L16): a result held in part — each long
//! string without a middle, a head or a tail, as a streaming adapter holds it — is cut
//! by [`Limit::truncate_in_part`] exactly as [`Limit::truncate`] cuts the whole, when
//! what is held is what the policy needs ([`HeldInPart::min_held_head_bytes`],
//! [`HeldInPart::min_held_tail_bytes`]); with less, it asks for the whole or still
//! gives the same cut, never another.

use backstop_core::limit::{HeldInPart, Keep};
use backstop_core::testing::strategies::{content_block, keep, terminal_text};
use backstop_core::{Limit, ToolResult, call::Content};
use proptest::prelude::*;
use serde_json::json;

/// The smallest character boundary of `text` at or after `at`.
fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at.min(text.len())
}

/// How a long string is held: `(hold a head, extra head bytes, hold a tail, extra tail
/// bytes)`; a head or tail not held is held short (a few bytes) or not at all.
type Holding = (bool, usize, bool, usize);

fn holding() -> impl Strategy<Value = Holding> {
    (
        prop::bool::weighted(0.8),
        0usize..3000,
        prop::bool::weighted(0.8),
        0usize..3000,
    )
}

/// `text` held as `holding` says under `limit`: `(the gap's start, its length, the held
/// text)`, and whether it holds what the policy needs. `None`: too short for a gap.
fn hold(limit: &Limit, text: &str, holding: Holding) -> Option<(usize, usize, String, bool)> {
    let (head_needed, tail_needed) = (
        HeldInPart::min_held_head_bytes(limit.max_bytes(), limit.keep()),
        HeldInPart::min_held_tail_bytes(limit.max_bytes(), limit.keep()),
    );
    let (with_head, head_extra, with_tail, tail_extra) = holding;
    let head = match with_head {
        true => head_needed + head_extra,
        false => head_extra % 64,
    };
    let tail = match with_tail {
        true => tail_needed + tail_extra,
        false => tail_extra % 64,
    };
    let at = ceil_boundary(text, head);
    let tail_start = text.len().checked_sub(tail)?;
    let tail_start = ceil_boundary(text, tail_start);
    if tail_start <= at {
        return None;
    }
    let held = format!("{}{}", &text[..at], &text[tail_start..]);
    let enough = at >= head_needed && text.len() - tail_start >= tail_needed;
    Some((at, tail_start - at, held, enough))
}

/// A long text: terminal output repeated to tens of kilobytes, then a last line.
fn long_text() -> impl Strategy<Value = String> {
    (terminal_text(60), 30_000usize..90_000).prop_map(|(unit, len)| {
        let unit = if unit.is_empty() {
            "x\n".to_owned()
        } else {
            unit
        };
        let mut text = unit.repeat(len / unit.len() + 1);
        text.push_str("\nPROMPT $");
        text
    })
}

fn small_cap() -> impl Strategy<Value = usize> {
    let min = Limit::min_bytes();
    prop_oneof![min..min + 200, min..4000, 4000usize..12_000]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Text blocks, some long and held in part, among other blocks.
    #[test]
    fn l13_a_result_held_in_part_is_cut_as_the_whole_under_every_policy(
        blocks in prop::collection::vec(
            prop_oneof![2 => long_text().prop_map(Some), 1 => content_block().prop_map(|_| None)],
            1..4,
        ),
        others in prop::collection::vec(content_block(), 3),
        holdings in prop::collection::vec(holding(), 4),
        cap in small_cap(),
        keep in keep(),
        line_aligned in any::<bool>(),
        is_error in prop::option::of(any::<bool>()),
    ) {
        let limit = Limit::new(cap).unwrap().with_keep(keep).line_aligned(line_aligned);
        let content: Vec<Content> = blocks
            .iter()
            .zip(&others)
            .map(|(block, other)| block.clone().map_or_else(|| other.clone(), Content::text))
            .collect();
        let whole = ToolResult { content: content.clone(), is_error, ..ToolResult::default() };
        let mut held = HeldInPart::default();
        let mut in_part = whole.clone();
        let mut enough = true;
        for (index, block) in content.iter().enumerate() {
            let (Some(text), true) = (block.as_text(), blocks[index].is_some()) else {
                continue;
            };
            if let Some((at, len, text, holds)) = hold(&limit, text, holdings[index]) {
                held = held.with_text_gap(index, at, len).with_text_start(index, b'x');
                in_part.content[index] = Content::text(text);
                enough &= holds;
            }
        }
        prop_assume!(!held.is_whole());
        let expected = limit.truncate(&whole);
        prop_assert!(expected.is_some(), "a result with a gap is over the cap");
        match limit.truncate_in_part(&in_part, &held, None) {
            Ok(cut) => prop_assert_eq!(cut, expected, "{} at {}", keep, cap),
            Err(()) => prop_assert!(!enough, "{} at {}: held what the policy needs, yet Err", keep, cap),
        }
    }

    /// A long string of `structuredContent` held in part, beside a text block that is
    /// not its serialization (L15).
    #[test]
    fn l13_a_structured_string_held_in_part_is_cut_as_the_whole_under_every_policy(
        log in long_text(),
        holding in holding(),
        cap in small_cap(),
        keep in keep(),
        line_aligned in any::<bool>(),
    ) {
        let limit = Limit::new(cap).unwrap().with_keep(keep).line_aligned(line_aligned);
        let result = |log: &str| ToolResult {
            content: vec![Content::text("build finished")],
            structured_content: Some(json!({"status": "ok", "log": log})),
            ..ToolResult::default()
        };
        let Some((at, len, held_text, enough)) = hold(&limit, &log, holding) else {
            return Ok(());
        };
        let held = HeldInPart::default().with_structured_gap("/log", at, len);
        let expected = limit.truncate(&result(&log));
        match limit.truncate_in_part(&result(&held_text), &held, None) {
            Ok(cut) => prop_assert_eq!(cut, expected, "{} at {}", keep, cap),
            Err(()) => prop_assert!(!enough, "{} at {}: held what the policy needs, yet Err", keep, cap),
        }
    }
}

/// What a tail-only hold cannot decide, a head-and-tail hold does: the same cut as the
/// whole, under each policy.
#[test]
fn l16_a_held_head_and_tail_decide_every_policy() {
    let text: String = (0..200_000)
        .rev()
        .map(|n| format!("commit {n}\n"))
        .collect();
    for keep in [
        Keep::Tail,
        Keep::Head,
        Keep::HeadAndTail {
            head_per_mille: 200,
        },
    ] {
        let limit = Limit::new(5_000).unwrap().with_keep(keep);
        let ends = limit.held_ends(None);
        let (at, tail_start) = (ends.head, text.len() - ends.tail);
        let held = HeldInPart::default().with_text_gap(0, at, tail_start - at);
        let in_part = ToolResult::text(format!("{}{}", &text[..at], &text[tail_start..]));
        assert_eq!(
            limit.truncate_in_part(&in_part, &held, None),
            Ok(limit.truncate(&ToolResult::text(text.clone()))),
            "{keep}"
        );
    }
}
