//! Property tests of the structured cut (SPEC L15): over a family of generated output
//! schemas with values valid for them, a cut result is under the cap, idempotent,
//! every cut string a suffix of the original at an allowed boundary, every cut array
//! its last items, every change reported — and the cut value still validates against
//! the schema, as a real JSON Schema validator (`jsonschema`) sees it.
//!
//! `PROPTEST_CASES` raises the number of cases (default 256).

use backstop_core::limit::Keep;
use backstop_core::testing::checks::check_structured_limit;
use backstop_core::testing::strategies::{keep, schema_and_value, terminal_text};
use backstop_core::{Limit, ToolResult, call::Content};
use proptest::prelude::*;
use serde_json::Value;

/// How the result carries its text beside `structuredContent`.
#[derive(Debug, Clone, Copy)]
enum Text {
    None,
    Compact,
    Pretty,
    Other,
}

fn result(value: &Value, text: Text, other: &str, is_error: Option<bool>) -> ToolResult {
    let content = match text {
        Text::None => vec![],
        Text::Compact => vec![Content::text(value.to_string())],
        Text::Pretty => vec![Content::text(serde_json::to_string_pretty(value).unwrap())],
        Text::Other => vec![Content::text(other)],
    };
    ToolResult {
        content,
        structured_content: Some(value.clone()),
        is_error,
        ..ToolResult::default()
    }
}

fn text_kind() -> impl Strategy<Value = Text> {
    prop_oneof![
        Just(Text::None),
        Just(Text::Compact),
        Just(Text::Pretty),
        Just(Text::Other)
    ]
}

fn check(
    schema: &Value,
    input: &ToolResult,
    cap: usize,
    line_align: bool,
    keep: Keep,
) -> Result<(), TestCaseError> {
    let limit = Limit::new(cap)
        .unwrap()
        .line_aligned(line_align)
        .with_keep(keep);
    check_under(schema, input, &limit)
}

/// L15 a under `limit`: the rules, and the cut value valid against `schema`.
fn check_under(schema: &Value, input: &ToolResult, limit: &Limit) -> Result<(), TestCaseError> {
    let limit = limit.clone();
    let limited = check_structured_limit(&limit, input, Some(schema))
        .map_err(|v| TestCaseError::fail(v.to_string()))?;
    if let Some(cut) = &limited.result.structured_content {
        let validator =
            jsonschema::validator_for(schema).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let errors: Vec<String> = validator.iter_errors(cut).map(|e| e.to_string()).collect();
        prop_assert!(
            errors.is_empty(),
            "L15: the cut value is invalid: {errors:?}\n{cut}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { max_shrink_iters: 4096, ..ProptestConfig::default() })]

    /// L15 a with the tool's schema, for caps from the minimum to past the result.
    #[test]
    fn cuts_keep_structured_content_valid(
        (schema, value) in schema_and_value(),
        text in text_kind(),
        other in terminal_text(200),
        is_error in prop::option::of(any::<bool>()),
        fraction in 0.0f64..1.1,
        line_align in any::<bool>(),
    ) {
        let validator = jsonschema::validator_for(&schema).unwrap();
        prop_assume!(validator.is_valid(&value), "the generator makes valid values");
        let input = result(&value, text, &other, is_error);
        let size = input.wire_size();
        let cap = ((size as f64 * fraction) as usize).max(Limit::min_bytes());
        check(&schema, &input, cap, line_align, Keep::Tail)?;
    }

    /// L15 a under every keep policy (L16): strings keep their head, or both ends
    /// around the header line; arrays their first items, or their first and last.
    #[test]
    fn cuts_keep_structured_content_valid_under_every_policy(
        (schema, value) in schema_and_value(),
        text in text_kind(),
        other in terminal_text(200),
        fraction in 0.0f64..1.1,
        line_align in any::<bool>(),
        keep in keep(),
    ) {
        let validator = jsonschema::validator_for(&schema).unwrap();
        prop_assume!(validator.is_valid(&value), "the generator makes valid values");
        let input = result(&value, text, &other, None);
        let cap = ((input.wire_size() as f64 * fraction) as usize).max(Limit::min_bytes());
        check(&schema, &input, cap, line_align, keep)?;
    }

    /// L15 a under a reader's limits too (L18): the structured cut fits the characters
    /// and tokens of what the reader reads, and the cut value stays valid.
    #[test]
    fn l18_cuts_keep_structured_content_valid_under_the_readers_limits(
        (schema, value) in schema_and_value(),
        text in text_kind(),
        keep in keep(),
        chars in prop::option::of(Limit::min_chars()..2_000),
        tokens in prop::option::of(Limit::min_tokens()..500),
    ) {
        let validator = jsonschema::validator_for(&schema).unwrap();
        prop_assume!(validator.is_valid(&value), "the generator makes valid values");
        let input = result(&value, text, "note", None);
        let limit = Limit::new(1_000_000).unwrap().with_keep(keep)
            .with_max_chars(chars).unwrap()
            .with_max_tokens(tokens).unwrap();
        check_under(&schema, &input, &limit)?;
    }

    /// L15 b: without a schema, every string and array may be cut.
    #[test]
    fn cuts_without_a_schema_follow_the_same_rules(
        (_schema, value) in schema_and_value(),
        text in text_kind(),
        fraction in 0.0f64..1.1,
        keep in keep(),
    ) {
        let input = result(&value, text, "note", None);
        let cap = ((input.wire_size() as f64 * fraction) as usize).max(Limit::min_bytes());
        let limit = Limit::new(cap).unwrap().with_keep(keep);
        check_structured_limit(&limit, &input, None).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
}
