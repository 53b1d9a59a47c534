//! The limiter on any result and any cap: SPEC L1–L12 hold (checked by
//! `backstop_core::testing::checks::check_limit`), or the cap is refused (L14).
//!
//! An input is either a JSON case `{"cap": N, "line_align": bool, "keep": "head",
//! "result": {…}}` (the seed corpus holds the reference's cases in this form; `keep`
//! defaults to `tail`) or fuzzer bytes read with `arbitrary`, which pick the keep
//! policy too (L16: every rule holds under each).
#![no_main]

use arbitrary::Unstructured;
use backstop_core::limit::Keep;
use backstop_core::testing::{checks::check_limit, unstructured};
use backstop_core::{Limit, LimitError, ToolResult};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn case(data: &[u8]) -> Option<(ToolResult, usize, bool, Keep)> {
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
        return Some((result, cap, line_align, keep));
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
    Some((result, cap, line_align, keep))
}

fuzz_target!(|data: &[u8]| {
    let Some((result, cap, line_align, keep)) = case(data) else {
        return;
    };
    match Limit::new(cap) {
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
