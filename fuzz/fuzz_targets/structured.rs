//! The structured cut (SPEC L15) on any output schema and any result: the rules of
//! `backstop_core::testing::checks::check_structured_limit` hold, and a value that was
//! valid for the schema is still valid after the cut, as the `jsonschema` validator
//! sees it (or the result is L15 c's `isError` result).
//!
//! An input is either a JSON case `{"cap": N, "schema": {…}|null, "keep": "head",
//! "result": {…}}` — any schema, so the fuzzer mutates real ones from the seeds; `keep`
//! defaults to `tail` — or fuzzer bytes read with `arbitrary` into a generated schema,
//! a value valid for it and a keep policy (L16: the rules hold under each).
#![no_main]

use arbitrary::Unstructured;
use backstop_core::limit::Keep;
use backstop_core::testing::{checks::check_structured_limit, unstructured};
use backstop_core::{Limit, ToolResult, call::Content};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn case(data: &[u8]) -> Option<(Option<Value>, ToolResult, usize, Keep)> {
    if let Ok(case) = serde_json::from_slice::<Value>(data) {
        let cap = usize::try_from(case.get("cap")?.as_u64()?).ok()?;
        let schema = case.get("schema").filter(|s| !s.is_null()).cloned();
        let result = ToolResult::from_value(case.get("result")?.clone()).ok()?;
        result.structured_content.as_ref()?;
        let keep = match case.get("keep").and_then(Value::as_str) {
            Some(keep) => keep.parse().ok()?,
            None => Keep::Tail,
        };
        return Some((schema, result, cap, keep));
    }
    let mut u = Unstructured::new(data);
    let (schema, value) = unstructured::schema_and_value(&mut u).ok()?;
    let content = match u.int_in_range(0..=3u8).ok()? {
        0 => vec![],
        1 => vec![Content::text(value.to_string())],
        2 => vec![Content::text(serde_json::to_string_pretty(&value).ok()?)],
        _ => vec![Content::text(
            unstructured::terminal_text(&mut u, 200).ok()?,
        )],
    };
    let result = ToolResult {
        content,
        structured_content: Some(value),
        is_error: u.arbitrary::<Option<bool>>().ok()?,
        ..ToolResult::default()
    };
    let cap = u.int_in_range(0..=20_000usize).ok()?;
    let keep = match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => Keep::Tail,
        1 => Keep::Head,
        _ => Keep::HeadAndTail {
            head_per_mille: u.int_in_range(0..=1000).unwrap_or(500),
        },
    };
    Some((Some(schema), result, cap, keep))
}

fuzz_target!(|data: &[u8]| {
    let Some((schema, result, cap, keep)) = case(data) else {
        return;
    };
    let Ok(limit) = Limit::new(cap).map(|limit| limit.with_keep(keep)) else {
        return;
    };
    let limited = match check_structured_limit(&limit, &result, schema.as_ref()) {
        Ok(limited) => limited,
        Err(violation) => panic!("{violation}"),
    };
    let (Some(schema), Some(before), Some(after)) = (
        &schema,
        &result.structured_content,
        &limited.result.structured_content,
    ) else {
        return;
    };
    // A schema the validator cannot compile, or a value it already rejects, says
    // nothing about the cut.
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return;
    };
    if validator.is_valid(before) {
        let errors: Vec<String> = validator
            .iter_errors(after)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "L15: the cut value is invalid: {errors:?}\n{after}"
        );
    }
});
