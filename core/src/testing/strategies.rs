//! Proptest strategies of hostile tool results and caps.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::FRAGMENTS;
use crate::limit::{Keep, Limit};
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

/// A keep policy (SPEC L16): each of `tail`, `head` and `head+tail`, the head's share
/// anywhere from none to all of the room.
///
/// ```
/// use proptest::strategy::{Strategy, ValueTree};
/// let mut runner = proptest::test_runner::TestRunner::default();
/// let keep = backstop_core::testing::strategies::keep().new_tree(&mut runner).unwrap().current();
/// assert!(keep.to_string().starts_with("head") || keep.to_string() == "tail");
/// ```
pub fn keep() -> impl Strategy<Value = Keep> {
    prop_oneof![
        Just(Keep::Tail),
        Just(Keep::Head),
        (0u16..=1000).prop_map(|head_per_mille| Keep::HeadAndTail { head_per_mille }),
        Just(Keep::HeadAndTail {
            head_per_mille: 500
        }),
    ]
}

/// A JSON Schema of the kinds tools advertise as `outputSchema`, with a value valid
/// for it: objects with `properties`, `required` and `additionalProperties`, arrays
/// with `items` and `minItems`, strings plain, with `minLength`/`maxLength`, a
/// `pattern`, `enum` or `const`, `anyOf` with `null`, `oneOf` of distinct types, and
/// `$ref`s into `$defs`. Strings are hostile terminal text, some long.
///
/// ```
/// use proptest::strategy::{Strategy, ValueTree};
/// let mut runner = proptest::test_runner::TestRunner::default();
/// let (schema, value) = backstop_core::testing::strategies::schema_and_value()
///     .new_tree(&mut runner).unwrap().current();
/// assert_eq!(schema["type"], "object");
/// assert!(value.is_object());
/// ```
pub fn schema_and_value() -> impl Strategy<Value = (Value, Value)> {
    let long_text = prop_oneof![
        3 => terminal_text(60),
        1 => (terminal_text(4), 1usize..400).prop_map(|(t, n)| t.repeat(n)),
    ];
    let leaf = prop_oneof![
        4 => long_text.clone().prop_map(|t| (json!({"type": "string"}), Value::from(t))),
        1 => (long_text.clone(), 0usize..20).prop_map(|(t, n)| {
            let t = if t.chars().count() < n { "m".repeat(n) + &t } else { t };
            (json!({"type": "string", "minLength": n, "description": "kept long"}), Value::from(t))
        }),
        1 => terminal_text(6).prop_map(|t| {
            let max = t.chars().count() + 3;
            (json!({"type": "string", "maxLength": max}), Value::from(t))
        }),
        1 => "[a-z]{0,300}".prop_map(|t| (json!({"type": "string", "pattern": "^id-[a-z]*$"}), Value::from(format!("id-{t}")))),
        1 => "[a-z]{1,300}".prop_map(|t| (json!({"enum": [t.clone(), "other"]}), Value::from(t))),
        1 => "[a-z]{1,300}".prop_map(|t| (json!({"const": t.clone()}), Value::from(t))),
        1 => any::<i64>().prop_map(|n| (json!({"type": "integer", "minimum": i64::MIN}), Value::from(n))),
        1 => any::<bool>().prop_map(|b| (json!({"type": "boolean"}), Value::from(b))),
        1 => Just((json!({"type": "null"}), Value::Null)),
    ];
    let node = leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            // An object: some members required, maybe closed.
            (
                prop::collection::btree_map("[a-z]{1,6}", (inner.clone(), any::<bool>()), 0..5),
                any::<bool>()
            )
                .prop_map(|(members, closed)| {
                    let mut properties = Map::new();
                    let mut value = Map::new();
                    let mut required = Vec::new();
                    for (key, ((schema, v), is_required)) in members {
                        if is_required {
                            required.push(Value::from(key.clone()));
                        }
                        properties.insert(key.clone(), schema);
                        value.insert(key, v);
                    }
                    let mut schema =
                        json!({"type": "object", "properties": properties, "required": required});
                    if closed {
                        schema["additionalProperties"] = Value::Bool(false);
                    }
                    (schema, Value::Object(value))
                }),
            // An array of one item schema (the first generated), maybe with minItems.
            (
                prop::collection::vec(inner.clone(), 1..6),
                1usize..200,
                0usize..3
            )
                .prop_map(|(items, repeat, min)| {
                    let schema_of_items = items[0].0.clone();
                    let values: Vec<Value> = items
                        .iter()
                        .filter(|(s, _)| *s == schema_of_items)
                        .map(|(_, v)| v.clone())
                        .cycle()
                        .take(repeat.min(40))
                        .collect();
                    let min = min.min(values.len());
                    (
                        json!({"type": "array", "items": schema_of_items, "minItems": min}),
                        Value::Array(values),
                    )
                }),
            // Optional: anyOf with null.
            (inner.clone(), any::<bool>()).prop_map(|((schema, v), null)| {
                (
                    json!({"anyOf": [schema, {"type": "null"}]}),
                    if null { Value::Null } else { v },
                )
            }),
            // oneOf of a string and an integer.
            (long_text.clone(), any::<bool>()).prop_map(|(t, number)| {
                let schema = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
                (
                    schema,
                    if number {
                        Value::from(7)
                    } else {
                        Value::from(t)
                    },
                )
            }),
            // oneOf where a short string would match both branches.
            long_text.clone().prop_map(|t| {
                let schema =
                    json!({"oneOf": [{"type": "string", "maxLength": 5}, {"type": "string"}]});
                (schema, Value::from(format!("longer than five: {t}")))
            }),
            // Through a $ref into $defs.
            inner.prop_map(|(schema, v)| {
                (
                    json!({"$defs": {"Inner": schema}, "$ref": "#/$defs/Inner"}),
                    v,
                )
            }),
        ]
    });
    // An output schema is an object schema at the top.
    prop::collection::btree_map("[a-z]{1,6}", node, 1..5).prop_map(|members| {
        let mut properties = Map::new();
        let mut value = Map::new();
        for (key, (schema, v)) in members {
            properties.insert(key.clone(), schema);
            value.insert(key, v);
        }
        let required: Vec<Value> = properties.keys().cloned().map(Value::from).collect();
        let mut schema = json!({"type": "object", "properties": properties, "required": required});
        let mut defs = Map::new();
        hoist_defs(&mut schema, &mut defs);
        if !defs.is_empty() {
            schema["$defs"] = Value::Object(defs);
        }
        (schema, Value::Object(value))
    })
}

/// Move each nested `{"$defs": {"Inner": S}, "$ref": "#/$defs/Inner"}` to the root's
/// `$defs` under a name of its own, where `#/$defs/…` resolves.
fn hoist_defs(schema: &mut Value, defs: &mut Map<String, Value>) {
    match schema {
        Value::Object(map) => {
            for value in map.values_mut() {
                hoist_defs(value, defs);
            }
            if let Some(Value::Object(mut local)) = map.remove("$defs")
                && let Some(inner) = local.remove("Inner")
            {
                let name = format!("D{}", defs.len());
                map.insert("$ref".into(), Value::from(format!("#/$defs/{name}")));
                defs.insert(name, inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| hoist_defs(v, defs)),
        _ => {}
    }
}
