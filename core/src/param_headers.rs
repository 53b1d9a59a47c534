//! Which arguments of a `tools/call` an HTTP client of MCP 2026-07-28 mirrors into
//! `Mcp-Param-{Name}` headers (SEP-2243; SPEC A5): a tool marks a top-level property of
//! its `inputSchema` with `"x-mcp-header": "<Name>"`, and a call that gives that
//! argument a primitive value (string, integer, number, boolean) carries it in the
//! header too, so that intermediaries route on it without reading the body. A null or
//! missing argument has no header. The names must be RFC 9110 tokens, unique without
//! regard to case: a schema that breaks that declares nothing (the server rejects
//! such a tool; a client is not to guess).
//!
//! How a value is written into a header (plain, or `=?base64?…?=`) is the transport's.
//!
//! ```
//! use backstop_core::protocol::param_headers;
//! let schema = serde_json::json!({"type": "object", "properties": {
//!     "region": {"type": "string", "x-mcp-header": "Region"},
//!     "query": {"type": "string"}}});
//! let arguments = serde_json::json!({"region": "eu-west-1", "query": "select 1"});
//! assert_eq!(
//!     param_headers(&schema, arguments.as_object().unwrap()),
//!     vec![("Region".to_owned(), "eu-west-1".to_owned())]
//! );
//! ```

use std::collections::HashSet;

use serde_json::{Map, Value};

/// The schema keyword that marks a parameter mirrored into a header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// The prefix of every header a parameter is mirrored into.
pub const HEADER_PREFIX: &str = "Mcp-Param-";

/// The `(Name, value)` of each `Mcp-Param-{Name}` header a call with `arguments` of a
/// tool whose input schema is `input_schema` carries (see the [module docs](crate::protocol)), in
/// the schema's property order.
pub fn param_headers(
    input_schema: &Value,
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    let declared = declared_headers(input_schema);
    declared
        .into_iter()
        .filter_map(|(name, property)| {
            Some((name.to_owned(), header_text(arguments.get(property)?)?))
        })
        .collect()
}

/// Whether the tool declares any parameter header (the body need not be read when not).
pub fn declares_headers(input_schema: &Value) -> bool {
    !declared_headers(input_schema).is_empty()
}

/// `(Name, property)` of each declaration; none when one is invalid or a name repeats.
fn declared_headers(input_schema: &Value) -> Vec<(&str, &str)> {
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut declared = Vec::new();
    let mut seen = HashSet::new();
    for (property, schema) in properties {
        let Some(name) = schema.get(X_MCP_HEADER) else {
            continue;
        };
        match name.as_str() {
            Some(name) if is_token(name) && seen.insert(name.to_ascii_lowercase()) => {
                declared.push((name, property.as_str()));
            }
            _ => return Vec::new(),
        }
    }
    declared
}

/// The text of a primitive argument; none for null, arrays and objects.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(_) | Value::Number(_) => Some(value.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// An RFC 9110 token: one or more of the characters a header name may have.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(schema: Value, arguments: Value) -> Vec<(String, String)> {
        param_headers(&schema, arguments.as_object().unwrap())
    }

    #[test]
    fn a5_each_primitive_argument_is_mirrored_and_the_rest_are_not() {
        let schema = json!({"type": "object", "properties": {
            "a": {"x-mcp-header": "A"}, "b": {"x-mcp-header": "B"},
            "c": {"x-mcp-header": "C"}, "d": {"x-mcp-header": "D"},
            "e": {"x-mcp-header": "E"}, "f": {"x-mcp-header": "F"},
            "g": {"x-mcp-header": "G"}, "plain": {}}});
        let arguments = json!({"a": "text", "b": 7, "c": 1.5, "d": true,
            "e": null, "f": [1], "plain": "not declared"});
        assert_eq!(
            headers(schema.clone(), arguments),
            [("A", "text"), ("B", "7"), ("C", "1.5"), ("D", "true")]
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
        assert!(declares_headers(&schema));
        assert!(!declares_headers(&json!({"properties": {"plain": {}}})));
        assert!(!declares_headers(&json!(null)));
    }

    #[test]
    fn a5_an_invalid_or_repeated_name_declares_nothing() {
        for bad in [
            json!("Two Words"),
            json!(""),
            json!(7),
            json!("Ümlaut"),
            json!("a:b"),
        ] {
            let schema = json!({"properties": {
                "ok": {"x-mcp-header": "Ok"}, "bad": {"x-mcp-header": bad}}});
            assert_eq!(headers(schema, json!({"ok": "1", "bad": "2"})), [], "{bad}");
        }
        let repeated = json!({"properties": {
            "a": {"x-mcp-header": "Region"}, "b": {"x-mcp-header": "region"}}});
        assert!(!declares_headers(&repeated));
        let tokens = json!({"properties": {"a": {"x-mcp-header": "X-Tenant_ID.v2~!"}}});
        assert_eq!(headers(tokens, json!({"a": "t"})).len(), 1);
    }
}
