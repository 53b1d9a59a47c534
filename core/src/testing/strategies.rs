//! Proptest strategies of hostile tool results and caps.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::FRAGMENTS;
use crate::limit::Limit;
use crate::result::{Content, ToolResult};

/// Terminal output of up to `max_fragments` pieces of [`FRAGMENTS`].
///
/// ```
/// use proptest::strategy::{Strategy, ValueTree};
/// let mut runner = proptest::test_runner::TestRunner::default();
/// let text = backstop_core::testing::strategies::terminal_text(50)
///     .new_tree(&mut runner).unwrap().current();
/// assert!(text.len() <= 50 * 30);
/// ```
pub fn terminal_text(max_fragments: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..max_fragments)
        .prop_map(|parts| parts.concat())
}

/// A `_meta` value: scalars, terminal text, long strings, nested arrays and objects.
pub fn meta_value() -> impl Strategy<Value = Value> {
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

/// A result's `_meta`: absent, or keys that include the error keys (E3–E5).
pub fn meta() -> impl Strategy<Value = Option<Map<String, Value>>> {
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

/// A content block: mostly text, sometimes an image or an embedded resource.
pub fn content_block() -> impl Strategy<Value = Content> {
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

/// A complete tool result: several blocks, maybe `structuredContent`, `isError`,
/// `_meta`, `resultType` and an unknown member.
pub fn tool_result() -> impl Strategy<Value = ToolResult> {
    (
        prop::collection::vec(content_block(), 0..6),
        prop::option::of(meta_value()),
        prop::option::of(any::<bool>()),
        meta(),
        prop::option::of(Just("complete".to_owned())),
        prop::option::of(terminal_text(30)),
    )
        .prop_map(
            |(content, structured_content, is_error, meta, result_type, vendor)| {
                let mut extra = Map::new();
                if let Some(v) = vendor {
                    extra.insert("vendor/extension".into(), Value::from(v));
                }
                ToolResult {
                    content,
                    structured_content,
                    is_error,
                    meta,
                    result_type,
                    extra,
                }
            },
        )
}

/// A cap: near the minimum, small, or a few kilobytes.
pub fn cap() -> impl Strategy<Value = usize> {
    let min = Limit::min_bytes();
    prop_oneof![min..min + 120, min..3000, 3000usize..20_000]
}

/// A result and a cap: a cap drawn on its own, or one just under the result's size, so
/// that small cuts (one- and two-digit counts) are as common as large ones.
pub fn result_and_cap() -> impl Strategy<Value = (ToolResult, usize)> {
    (tool_result(), cap(), any::<bool>(), 1usize..80).prop_map(|(result, cap, near, delta)| {
        if near {
            let size = result.wire_size();
            (result, size.saturating_sub(delta).max(Limit::min_bytes()))
        } else {
            (result, cap)
        }
    })
}
