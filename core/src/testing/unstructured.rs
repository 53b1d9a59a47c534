//! The generators of [`strategies`](super::strategies), built from fuzzer bytes with
//! `arbitrary`'s [`Unstructured`].

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Value, json};

use super::FRAGMENTS;
use crate::result::{Content, ToolResult};

/// Terminal output of up to `max_fragments` pieces of [`FRAGMENTS`], or now and then
/// arbitrary text.
///
/// ```
/// let mut u = arbitrary::Unstructured::new(&[3, 1, 4, 1, 5, 9, 2, 6]);
/// let text = backstop_core::testing::unstructured::terminal_text(&mut u, 10).unwrap();
/// assert!(text.len() <= 10 * 30);
/// ```
pub fn terminal_text(u: &mut Unstructured<'_>, max_fragments: usize) -> Result<String> {
    if u.ratio(1, 16)? {
        let text: String = u.arbitrary()?;
        return Ok(text.chars().take(max_fragments).collect());
    }
    let count = u.int_in_range(0..=max_fragments)?;
    let mut text = String::new();
    for _ in 0..count {
        text.push_str(u.choose(FRAGMENTS)?);
    }
    Ok(text)
}

/// A `_meta` value, nested up to `depth` levels.
///
/// ```
/// let mut u = arbitrary::Unstructured::new(&[7; 16]);
/// let value = backstop_core::testing::unstructured::meta_value(&mut u, 2).unwrap();
/// assert!(serde_json::to_string(&value).is_ok());
/// ```
pub fn meta_value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let choice = u.int_in_range(0..=if depth == 0 { 4 } else { 6 })?;
    Ok(match choice {
        0 => Value::Null,
        1 => Value::from(u.arbitrary::<bool>()?),
        2 => Value::from(u.arbitrary::<i64>()?),
        3 => Value::from(terminal_text(u, 8)?),
        4 => Value::from("m".repeat(u.int_in_range(0..=3000)?)),
        5 => {
            let n = u.int_in_range(0..=3)?;
            Value::Array(
                (0..n)
                    .map(|_| meta_value(u, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => Value::Object(meta_map(u, depth - 1)?),
    })
}

fn meta_map(u: &mut Unstructured<'_>, depth: usize) -> Result<Map<String, Value>> {
    let keys = ["error_type", "expected", "suggestion", "pane", "a/b", "x"];
    let n = u.int_in_range(0..=4)?;
    let mut map = Map::new();
    for _ in 0..n {
        map.insert((*u.choose(&keys)?).to_owned(), meta_value(u, depth)?);
    }
    Ok(map)
}

/// A complete tool result with text and non-text blocks, maybe `structuredContent`,
/// `isError`, `_meta`, `resultType` and an unknown member.
///
/// ```
/// let mut u = arbitrary::Unstructured::new(b"some fuzzer bytes to read from");
/// let result = backstop_core::testing::unstructured::tool_result(&mut u).unwrap();
/// assert!(result.is_complete());
/// ```
pub fn tool_result(u: &mut Unstructured<'_>) -> Result<ToolResult> {
    let blocks = u.int_in_range(0..=5)?;
    let mut content = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        content.push(match u.int_in_range(0..=7)? {
            0 => Content::Other(json!({"type": "image", "mimeType": "image/png",
                "data": "QUFB".repeat(u.int_in_range(0..=500)?)})),
            1 => Content::Other(json!({"type": "resource",
                "resource": {"uri": "file:///log", "text": terminal_text(u, 20)?}})),
            _ => Content::text(terminal_text(u, 400)?),
        });
    }
    let structured_content = if u.ratio(1, 4)? {
        Some(meta_value(u, 2)?)
    } else {
        None
    };
    let is_error = if u.arbitrary()? {
        Some(u.arbitrary()?)
    } else {
        None
    };
    let meta = if u.arbitrary()? {
        Some(meta_map(u, 2)?)
    } else {
        None
    };
    let result_type = if u.arbitrary()? {
        Some("complete".to_owned())
    } else {
        None
    };
    let mut extra = Map::new();
    if u.ratio(1, 4)? {
        extra.insert(
            "vendor/extension".into(),
            Value::from(terminal_text(u, 30)?),
        );
    }
    Ok(ToolResult {
        content,
        structured_content,
        is_error,
        meta,
        result_type,
        extra,
    })
}

/// An output schema and a value valid for it, as
/// [`strategies::schema_and_value`](super::strategies::schema_and_value) makes them.
///
/// ```
/// let mut u = arbitrary::Unstructured::new(b"fuzzer bytes for a schema and a value");
/// let (schema, value) = backstop_core::testing::unstructured::schema_and_value(&mut u).unwrap();
/// assert_eq!(schema["type"], "object");
/// assert!(value.is_object());
/// ```
pub fn schema_and_value(u: &mut Unstructured<'_>) -> Result<(Value, Value)> {
    let mut defs = Map::new();
    let (mut schema, value) = object_node(u, 3, &mut defs, true)?;
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    Ok((schema, value))
}

fn long_text(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 4)? {
        let piece = terminal_text(u, 4)?;
        Ok(piece.repeat(u.int_in_range(1..=400)?))
    } else {
        terminal_text(u, 60)
    }
}

fn lower(u: &mut Unstructured<'_>, max: usize) -> Result<String> {
    let n = u.int_in_range(1..=max)?;
    (0..n)
        .map(|_| Ok(char::from(b'a' + u.int_in_range(0..=25u8)?)))
        .collect()
}

fn object_node(
    u: &mut Unstructured<'_>,
    depth: usize,
    defs: &mut Map<String, Value>,
    all_required: bool,
) -> Result<(Value, Value)> {
    let mut properties = Map::new();
    let mut value = Map::new();
    let mut required = Vec::new();
    for _ in 0..u.int_in_range(usize::from(all_required)..=4)? {
        let key = lower(u, 6)?;
        let (schema, v) = node(u, depth.saturating_sub(1), defs)?;
        if all_required || u.arbitrary()? {
            required.push(Value::from(key.clone()));
        }
        properties.insert(key.clone(), schema);
        value.insert(key, v);
    }
    required.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    required.dedup();
    let mut schema = json!({"type": "object", "properties": properties, "required": required});
    if !all_required && u.arbitrary()? {
        schema["additionalProperties"] = Value::Bool(false);
    }
    Ok((schema, Value::Object(value)))
}

fn node(
    u: &mut Unstructured<'_>,
    depth: usize,
    defs: &mut Map<String, Value>,
) -> Result<(Value, Value)> {
    let kinds = if depth == 0 { 9 } else { 14 };
    Ok(match u.int_in_range(0..=kinds)? {
        0..=2 => (json!({"type": "string"}), Value::from(long_text(u)?)),
        3 => {
            let n = u.int_in_range(0..=20usize)?;
            let text = "m".repeat(n) + &long_text(u)?;
            (json!({"type": "string", "minLength": n}), Value::from(text))
        }
        4 => {
            let text = format!("id-{}", lower(u, 300)?);
            (
                json!({"type": "string", "pattern": "^id-[a-z]*$"}),
                Value::from(text),
            )
        }
        5 => {
            let text = lower(u, 300)?;
            (json!({"enum": [text.clone(), "other"]}), Value::from(text))
        }
        6 => {
            let text = lower(u, 300)?;
            (json!({"const": text.clone()}), Value::from(text))
        }
        7 => (
            json!({"type": "integer"}),
            Value::from(u.arbitrary::<i64>()?),
        ),
        8 => (
            json!({"type": "boolean"}),
            Value::from(u.arbitrary::<bool>()?),
        ),
        9 => (json!({"type": "null"}), Value::Null),
        10 => object_node(u, depth, defs, false)?,
        11 => {
            let (item_schema, item) = node(u, depth - 1, defs)?;
            let count = u.int_in_range(1..=40usize)?;
            let min = u.int_in_range(0..=2usize)?.min(count);
            (
                json!({"type": "array", "items": item_schema, "minItems": min}),
                Value::Array(vec![item; count]),
            )
        }
        12 => {
            let (schema, v) = node(u, depth - 1, defs)?;
            let v = if u.arbitrary()? { Value::Null } else { v };
            (json!({"anyOf": [schema, {"type": "null"}]}), v)
        }
        13 => (
            json!({"oneOf": [{"type": "string", "maxLength": 5}, {"type": "string"}]}),
            Value::from(format!("longer than five: {}", long_text(u)?)),
        ),
        _ => {
            let (schema, v) = node(u, depth - 1, defs)?;
            let name = format!("D{}", defs.len());
            defs.insert(name.clone(), schema);
            (json!({"$ref": format!("#/$defs/{name}")}), v)
        }
    })
}
