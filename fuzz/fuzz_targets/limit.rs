//! The limiter on any result and any cap: SPEC L1–L12 hold (checked by
//! `backstop_core::testing::checks::check_limit`), or the cap is refused (L14).
//!
//! An input is either a JSON case `{"cap": N, "line_align": bool, "result": {…}}` (the
//! seed corpus holds the reference's cases in this form) or fuzzer bytes read with
//! `arbitrary`.
#![no_main]

use arbitrary::Unstructured;
use backstop_core::testing::{checks::check_limit, unstructured};
use backstop_core::{Limit, LimitError, ToolResult};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn case(data: &[u8]) -> Option<(ToolResult, usize, bool)> {
    if let Ok(case) = serde_json::from_slice::<Value>(data) {
        let cap = usize::try_from(case.get("cap")?.as_u64()?).ok()?;
        let line_align = case
            .get("line_align")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let result = ToolResult::from_value(case.get("result")?.clone()).ok()?;
        return Some((result, cap, line_align));
    }
    let mut u = Unstructured::new(data);
    let result = unstructured::tool_result(&mut u).ok()?;
    let cap = u.int_in_range(0..=30_000usize).ok()?;
    Some((result, cap, u.arbitrary().unwrap_or(true)))
}

fuzz_target!(|data: &[u8]| {
    let Some((result, cap, line_align)) = case(data) else {
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
            if let Err(violation) = check_limit(&limit.line_aligned(line_align), &result) {
                panic!("{violation}");
            }
        }
    }
});
