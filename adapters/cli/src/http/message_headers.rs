//! The headers of MCP 2026-07-28's Streamable HTTP that mirror a message's body
//! (SEP-2243; SPEC A5), set on every POST backstop itself makes — `proxy --url`'s
//! client messages and, in both remote modes, the shaper's own `tools/list`:
//!
//! - `Mcp-Method`: the message's `method` (requests and notifications);
//! - `Mcp-Name`: what the method is about — `params.name` of `tools/call` and
//!   `prompts/get`, `params.uri` of `resources/read`, `params.taskId` of `tasks/*`;
//! - `MCP-Protocol-Version`: the revision the request's `_meta` names
//!   (`io.modelcontextprotocol/protocolVersion`), which a 2026-07-28 server requires
//!   to agree with the body (else HTTP 400 with `-32020`).
//!
//! And on a `tools/call` of `proxy --url`, `Mcp-Param-{Name}` for each argument the
//! tool's input schema marks with `x-mcp-header` ([`mirror_arguments`];
//! [`backstop_core::protocol`] says which).
//!
//! Each is set from the body being sent, never copied from another message: the
//! shaper's own listing, made for a `tools/call`, says `Mcp-Method: tools/list` and
//! has no `Mcp-Name`. A value that is not printable ASCII, has whitespace at either
//! end, or looks like the encoding itself, goes as `=?base64?<standard base64 of its
//! UTF-8>?=`, as the revision says. A batch or an answer mirrors nothing.
//!
//! ```
//! use http::HeaderMap;
//! let mut headers = HeaderMap::new();
//! let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
//! backstop::http::message_headers::mirror_message(&mut headers, call);
//! assert_eq!(headers["mcp-method"], "tools/call");
//! assert_eq!(headers["mcp-name"], "grep");
//! assert_eq!(headers["mcp-protocol-version"], "2026-07-28");
//! ```

use backstop_core::machine::{self, NamedBy};
use backstop_core::protocol::PROTOCOL_VERSION_META_KEY;
use backstop_core::protocol::{HEADER_PREFIX, declares_headers, param_headers};
use backstop_jsonrpc::message::Envelope;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::headers::PROTOCOL_VERSION;

/// The method header.
pub const METHOD: &str = "mcp-method";
/// The header naming what the method is about.
pub const NAME: &str = "mcp-name";

/// Set `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` on `headers` from `body`,
/// one message read with the shaper's own envelope reader (see the [module
/// docs](self)); a header the body gives nothing for is removed, so none is left from
/// another message. The revision is copied as the body writes it, understood or not:
/// the server compares the two texts.
pub fn mirror_message(headers: &mut HeaderMap, body: &[u8]) {
    headers.remove(METHOD);
    headers.remove(NAME);
    let params: Vec<_> = headers
        .keys()
        .filter(|name| is_param_header(name.as_str()))
        .cloned()
        .collect();
    for name in params {
        headers.remove(name);
    }
    let Some(envelope) = Envelope::parse(body) else {
        return;
    };
    let Some(method) = envelope.method.as_deref() else {
        return;
    };
    let params = envelope.params();
    let named = match machine::named_by(method) {
        Some(NamedBy::Name) => params.name.as_deref(),
        Some(NamedBy::Uri) => params.uri.as_deref(),
        Some(NamedBy::TaskId) => params.task_id.as_deref(),
        None => None,
    };
    headers.insert(METHOD, encoded(method));
    if let Some(name) = named {
        headers.insert(NAME, encoded(name));
    }
    let revision = params
        .meta
        .as_ref()
        .and_then(|meta| meta.get(PROTOCOL_VERSION_META_KEY))
        .and_then(Value::as_str)
        .and_then(|version| HeaderValue::from_str(version).ok());
    if let Some(revision) = revision {
        headers.insert(PROTOCOL_VERSION, revision);
    }
}

/// Set `Mcp-Param-{Name}` on `headers` for the arguments of `body`, a `tools/call` of a
/// tool whose input schema is `input_schema`, that the schema marks (SEP-2243; see
/// [`backstop_core::protocol`]). The body is read only when the schema marks one.
///
/// ```
/// use http::HeaderMap;
/// let schema = serde_json::json!({"properties": {"region": {"x-mcp-header": "Region"}}});
/// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"region":"us"}}}"#;
/// let mut headers = HeaderMap::new();
/// backstop::http::message_headers::mirror_arguments(&mut headers, call, Some(&schema));
/// assert_eq!(headers["mcp-param-region"], "us");
/// ```
pub fn mirror_arguments(headers: &mut HeaderMap, body: &[u8], input_schema: Option<&Value>) {
    let Some(schema) = input_schema.filter(|schema| declares_headers(schema)) else {
        return;
    };
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    if !message
        .get("method")
        .and_then(Value::as_str)
        .is_some_and(machine::is_tool_call)
    {
        return;
    }
    let Some(arguments) = message
        .get("params")
        .and_then(|params| params.get("arguments"))
        .and_then(Value::as_object)
    else {
        return;
    };
    for (name, value) in param_headers(schema, arguments) {
        if let Ok(name) = HeaderName::try_from(format!("{HEADER_PREFIX}{name}")) {
            headers.insert(name, encoded(&value));
        }
    }
}

/// Whether `name` (lowercase, as `http` keeps it) is an `Mcp-Param-*` header.
fn is_param_header(name: &str) -> bool {
    name.len() > HEADER_PREFIX.len()
        && name.as_bytes()[..HEADER_PREFIX.len()].eq_ignore_ascii_case(HEADER_PREFIX.as_bytes())
}

/// A header value for `text`: as it is when it is printable ASCII without whitespace
/// at its ends and does not look encoded, else `=?base64?…?=`.
fn encoded(text: &str) -> HeaderValue {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && text.trim() == text
        && !(text.starts_with("=?base64?") && text.ends_with("?="));
    let value = if plain {
        HeaderValue::from_str(text).ok()
    } else {
        HeaderValue::from_str(&format!("=?base64?{}?=", STANDARD.encode(text))).ok()
    };
    value.unwrap_or_else(|| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mirrored(body: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(METHOD, HeaderValue::from_static("tools/call"));
        headers.insert(NAME, HeaderValue::from_static("stale"));
        mirror_message(&mut headers, body.as_bytes());
        headers
    }

    #[test]
    fn a5_each_method_names_what_it_is_about() {
        let cases = [
            (
                r#"{"method":"tools/call","params":{"name":"t"}}"#,
                Some("t"),
            ),
            (
                r#"{"method":"prompts/get","params":{"name":"p"}}"#,
                Some("p"),
            ),
            (
                r#"{"method":"resources/read","params":{"uri":"file:///a"}}"#,
                Some("file:///a"),
            ),
            (
                r#"{"method":"tasks/get","params":{"taskId":"k1"}}"#,
                Some("k1"),
            ),
            (r#"{"method":"tools/list","params":{"name":"x"}}"#, None),
            (r#"{"method":"tools/call","params":{"name":7}}"#, None),
        ];
        for (body, name) in cases {
            let headers = mirrored(body);
            let method: Value = serde_json::from_str(body).unwrap();
            assert_eq!(
                headers[METHOD],
                method["method"].as_str().unwrap(),
                "{body}"
            );
            assert_eq!(
                headers.get(NAME).map(|v| v.to_str().unwrap()),
                name,
                "{body}"
            );
        }
    }

    #[test]
    fn a5_an_answer_or_a_batch_mirrors_nothing_and_keeps_no_stale_header() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"[{"method":"ping"}]"#,
            "{",
        ] {
            let headers = mirrored(body);
            assert!(
                headers.get(METHOD).is_none() && headers.get(NAME).is_none(),
                "{body}"
            );
        }
    }

    #[test]
    fn a5_a_call_s_param_headers_never_ride_on_another_message() {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-param-region", HeaderValue::from_static("eu"));
        headers.insert("mcp-parameter", HeaderValue::from_static("kept"));
        mirror_message(&mut headers, br#"{"method":"tools/list"}"#);
        assert!(headers.get("mcp-param-region").is_none());
        assert_eq!(headers["mcp-parameter"], "kept", "not in the namespace");
        let schema = serde_json::json!({"properties": {"region": {"x-mcp-header": "Region"}}});
        let listing = br#"{"method":"tools/list","params":{"arguments":{"region":"eu"}}}"#;
        mirror_arguments(&mut headers, listing, Some(&schema));
        assert!(headers.get("mcp-param-region").is_none(), "a call's only");
        let call =
            r#"{"method":"tools/call","params":{"name":"q","arguments":{"region":"Zürich"}}}"#;
        mirror_arguments(&mut headers, call.as_bytes(), Some(&schema));
        assert_eq!(headers["mcp-param-region"], "=?base64?WsO8cmljaA==?=");
    }

    #[test]
    fn a5_the_revision_comes_from_the_request_s_meta() {
        let mut headers = HeaderMap::new();
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static("2025-11-25"));
        mirror_message(&mut headers, br#"{"method":"ping"}"#);
        assert_eq!(
            headers[PROTOCOL_VERSION], "2025-11-25",
            "kept when the body names none"
        );
        let body = br#"{"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        mirror_message(&mut headers, body);
        assert_eq!(headers[PROTOCOL_VERSION], "2026-07-28");
    }

    #[test]
    fn a5_values_a_header_cannot_carry_are_base64() {
        let cases = [
            ("plain-name_1", "plain-name_1"),
            ("日本", "=?base64?5pel5pys?="),
            (" padded", "=?base64?IHBhZGRlZA==?="),
            ("a\r\nInjected: 1", "=?base64?YQ0KSW5qZWN0ZWQ6IDE=?="),
            ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
        ];
        for (name, header) in cases {
            assert_eq!(encoded(name), header, "{name:?}");
        }
    }
}
