//! The limiter on any result and any cap: SPEC L1–L12 hold (checked by
//! `backstop_core::testing::checks::check_limit`), or the cap is refused (L14).
//!
//! An input is either a JSON case `{"cap": N, "line_align": bool, "keep": "head",
//! "max_chars": N, "max_tokens": N, "result": {…}}` (the seed corpus holds the
//! reference's cases in this form; `keep` defaults to `tail`, the reader's limits to
//! none) or fuzzer bytes read with `arbitrary`, which pick the keep policy and the
//! reader's limits too (L16, L18: every rule holds under each).
#![no_main]

use arbitrary::Unstructured;
use backstop_core::limit::Keep;
use backstop_core::testing::{checks::check_limit, unstructured};
use backstop_core::{Limit, ToolResult, limit::LimitError};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// A case: the result, the cap, line alignment, the keep policy, and the reader's
/// limits (characters, tokens).
type Case = (ToolResult, usize, bool, Keep, Option<usize>, Option<usize>);

fn case(data: &[u8]) -> Option<Case> {
    if let Ok(case) = serde_json::from_slice::<Value>(data) {
        let cap = usize::try_from(case.get("cap")?.as_u64()?).ok()?;
        let line_align = case
            .get("line_align")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let keep = match case.get("keep").and_then(Value::as_str) {
            Some(keep) => keep.parse().ok()?,
            None => Keep::Tail,
        };
        let result = ToolResult::from_value(case.get("result")?.clone()).ok()?;
        let unit = |key| {
            case.get(key)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        let (chars, tokens) = (unit("max_chars"), unit("max_tokens"));
        return Some((result, cap, line_align, keep, chars, tokens));
    }
    let mut u = Unstructured::new(data);
    let result = unstructured::tool_result(&mut u).ok()?;
    let cap = u.int_in_range(0..=30_000usize).ok()?;
    let line_align = u.arbitrary().unwrap_or(true);
    let keep = match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => Keep::Tail,
        1 => Keep::Head,
        _ => Keep::HeadAndTail {
            head_per_mille: u.int_in_range(0..=1000).unwrap_or(500),
        },
    };
    // Read last, so that the older corpus keeps its meaning (none when it runs out).
    let mut unit = |most: usize| match u.ratio(1u8, 2).unwrap_or(false) {
        true => u.int_in_range(0..=most).ok(),
        false => None,
    };
    let chars = unit(6_000);
    let tokens = unit(2_000);
    Some((result, cap, line_align, keep, chars, tokens))
}

fuzz_target!(|data: &[u8]| {
    let Some((result, cap, line_align, keep, chars, tokens)) = case(data) else {
        return;
    };
    let limit = Limit::new(cap).and_then(|limit| {
        limit
            .with_max_chars(chars)?
            .with_max_tokens(tokens)
    });
    match limit {
        Err(LimitError::ReaderLimitTooSmall { limit, min, unit }) => {
            let expected = match unit {
                "characters" => Limit::min_chars(),
                _ => Limit::min_tokens(),
            };
            assert!(limit < min && min == expected, "L14: refused {limit} {unit}, min {min}");
        }
        Err(LimitError::CapTooSmall { min, .. }) => {
            assert!(
                cap < min && min == Limit::min_bytes(),
                "L14: refused {cap}, min {min}"
            );
        }
        Ok(limit) => {
            if let Err(violation) =
                check_limit(&limit.line_aligned(line_align).with_keep(keep), &result)
            {
                panic!("{violation}");
            }
        }
    }
});
