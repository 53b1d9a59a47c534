//! Reading and writing JSON-RPC messages without touching what is not needed.
//!
//! A message is read as an [`Envelope`]: its `id`, `method`, `params`, `result` and
//! `error` members, each left as raw JSON text borrowed from the input
//! ([`RawValue`]), so that nothing is copied or built until the shaper knows it needs
//! it, and so that a message forwarded unchanged is the input's own bytes (A2).
//!
//! Only valid JSON is read (SPEC B4): serde_json skims the members it does not build
//! (`IgnoredAny`, and the inside of a [`RawValue`]) without checking their UTF-8 or
//! their `\u` escapes, so every reader here first checks the whole text with
//! [`strict_json_text`]. A line that fails is not a message to the shaper, and goes
//! on exactly as it came.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use backstop_core::ProtocolError;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A request id as the pending-request table keys it. JSON-RPC ids are numbers or
/// strings; `1` and `"1"` are different ids, and `null` is no id to track.
///
/// ```
/// use backstop_jsonrpc::message::RequestId;
/// let raw = serde_json::value::RawValue::from_string("\"a\\u0062\"".into()).unwrap();
/// assert_eq!(RequestId::from_raw(&raw), Some(RequestId::String("ab".into())));
/// assert_eq!(RequestId::from_value(&serde_json::json!(7)), Some(RequestId::Number("7".into())));
/// assert_eq!(RequestId::from_value(&serde_json::json!(null)), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A number id, in serde_json's canonical text.
    Number(String),
    /// A string id, unescaped.
    String(String),
}

impl From<RequestId> for backstop_core::machine::RequestId {
    /// The same id, as the core's session machine keys it.
    fn from(id: RequestId) -> Self {
        match id {
            RequestId::Number(n) => Self::Number(n),
            RequestId::String(s) => Self::String(s),
        }
    }
}

impl RequestId {
    /// The id a raw JSON `id` member holds, if it is a number or a string.
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// let raw = serde_json::value::RawValue::from_string("12".into()).unwrap();
    /// assert_eq!(RequestId::from_raw(&raw), Some(RequestId::Number("12".into())));
    /// ```
    pub fn from_raw(raw: &RawValue) -> Option<RequestId> {
        let text = raw.get();
        // The usual ids are read as they are written: up to 19 digits (JSON has no
        // leading zero, and such a number fits a u64, so its text is serde_json's
        // canonical one), and a string without escapes. Any other is read by serde.
        if (1..=19).contains(&text.len()) && text.bytes().all(|byte| byte.is_ascii_digit()) {
            return Some(RequestId::Number(text.to_owned()));
        }
        if let Some(inside) = text
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            && !inside.contains('\\')
        {
            return Some(RequestId::String(inside.to_owned()));
        }
        Self::from_value(&serde_json::from_str(text).ok()?)
    }

    /// The id a JSON value holds, if it is a number or a string.
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// assert_eq!(RequestId::from_value(&serde_json::json!("a")), Some(RequestId::String("a".into())));
    /// assert_eq!(RequestId::from_value(&serde_json::json!([1])), None);
    /// ```
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::Number(n) => Some(RequestId::Number(n.to_string())),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }
}

/// The members of a JSON-RPC message the shaper looks at, borrowed from the input.
///
/// A request has `method` and `id`, a notification `method` only, a response `id`
/// and `result` or `error`. Anything that does not read as an object with members of
/// these types is not a message the shaper understands, and is forwarded as it came.
///
/// ```
/// use backstop_jsonrpc::message::Envelope;
/// let line = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
/// let envelope = Envelope::parse(line).unwrap();
/// assert!(envelope.is_response());
/// assert_eq!(envelope.result.unwrap().content.unwrap()[0][1].1.get(), r#""hi""#);
/// assert!(Envelope::parse(b"not json").is_none());
/// ```
#[derive(Debug, Deserialize)]
pub struct Envelope<'a> {
    /// `id`, as raw JSON; `None` when absent or `null`.
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    /// `method`.
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    /// `params`, as raw JSON.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    /// `result`, its members as raw JSON (read in the same pass as the envelope).
    #[serde(borrow, default)]
    pub result: Option<ResultMembers<'a>>,
    /// `error`, as raw JSON.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// Read one message (not a batch); `None` when it is not a JSON object with
    /// members of the right types.
    ///
    /// ```
    /// let envelope = backstop_jsonrpc::message::Envelope::parse(br#"{"method":"ping","id":1}"#).unwrap();
    /// assert_eq!(envelope.method.as_deref(), Some("ping"));
    /// assert!(backstop_jsonrpc::message::Envelope::parse(br#"{"id":{}}"#).is_some());
    /// assert!(backstop_jsonrpc::message::Envelope::parse(br#"{"method":5}"#).is_none());
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Option<Envelope<'a>> {
        serde_json::from_str(strict_json_text(bytes)?).ok()
    }

    /// [`parse`](Self::parse) for bytes whose strings were already checked strictly
    /// (valid UTF-8, surrogate escapes in pairs: [`Scanned::envelope`]), which are
    /// not looked at again.
    ///
    /// [`Scanned::envelope`]: crate::scan::Scanned::envelope
    pub(crate) fn parse_checked(bytes: &'a [u8]) -> Option<Envelope<'a>> {
        serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok()
    }

    /// Whether this is a response: an `id`, no `method`, and `result` or `error`.
    ///
    /// ```
    /// use backstop_jsonrpc::message::Envelope;
    /// assert!(Envelope::parse(br#"{"id":1,"error":{}}"#).unwrap().is_response());
    /// assert!(!Envelope::parse(br#"{"id":1,"method":"ping"}"#).unwrap().is_response());
    /// ```
    pub fn is_response(&self) -> bool {
        self.method.is_none() && self.id.is_some() && (self.result.is_some() ^ self.error.is_some())
    }

    /// The request id, when there is a number or string one.
    ///
    /// ```
    /// use backstop_jsonrpc::message::{Envelope, RequestId};
    /// let envelope = Envelope::parse(br#"{"id":"x","result":{}}"#).unwrap();
    /// assert_eq!(envelope.request_id(), Some(RequestId::String("x".into())));
    /// ```
    pub fn request_id(&self) -> Option<RequestId> {
        self.id.and_then(RequestId::from_raw)
    }

    /// The `params` members the shaper reads; all empty when there are none or they do
    /// not read.
    ///
    /// ```
    /// use backstop_jsonrpc::message::Envelope;
    /// let line = br#"{"id":1,"method":"tools/call","params":{"name":"t","arguments":{"b":1,"a":[2]}}}"#;
    /// let params = Envelope::parse(line).unwrap().params();
    /// assert_eq!(params.name.as_deref(), Some("t"));
    /// assert_eq!(params.arguments.unwrap().get(), r#"{"b":1,"a":[2]}"#);
    /// ```
    pub fn params(&self) -> Params<'a> {
        self.params
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default()
    }
}

/// The members of a `result`, each as raw JSON, in order; `members` is `None` when the
/// result is not an object.
///
/// ```
/// let result: backstop_jsonrpc::message::ResultMembers =
///     serde_json::from_str(r#"{"tools":[],"nextCursor":null}"#).unwrap();
/// let members = result.members.as_ref().unwrap();
/// assert_eq!((members[1].0.as_str(), members[1].1.get()), ("nextCursor", "null"));
/// assert_eq!(result.to_value(), Some(serde_json::json!({"tools": [], "nextCursor": null})));
/// let odd: backstop_jsonrpc::message::ResultMembers = serde_json::from_str("5").unwrap();
/// assert!(odd.members.is_none() && odd.to_value().is_none());
/// ```
#[derive(Debug)]
pub struct ResultMembers<'a> {
    /// The members, or `None` for a result that is not an object. A `content` member
    /// is not among them: it is read into [`content`](Self::content) in the same pass.
    pub members: Option<Vec<(String, &'a RawValue)>>,
    /// `content`, when present: its blocks, each block's members as raw JSON. (A
    /// `content` that is not an array of objects is not a result this library reads,
    /// and the message it is in is forwarded as it came.)
    pub content: Option<Vec<Vec<(String, &'a RawValue)>>>,
}

impl ResultMembers<'_> {
    /// The result as a JSON value, its big strings decoded without a scratch copy (see
    /// [`value_from_raw`]); `None` when it is not an object or does not read.
    pub fn to_value(&self) -> Option<Value> {
        let mut map = Map::new();
        for (key, member) in self.members.as_ref()? {
            map.insert(key.clone(), value_at_depth(member, 1)?);
        }
        if let Some(blocks) = &self.content {
            let mut content = Vec::with_capacity(blocks.len());
            for block in blocks {
                let mut members = Map::new();
                for (key, member) in block {
                    members.insert(key.clone(), value_at_depth(member, 3)?);
                }
                content.push(Value::Object(members));
            }
            map.insert("content".into(), Value::Array(content));
        }
        Some(Value::Object(map))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ResultMembers<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = ResultMembers<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                let mut content = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "content" {
                        content = Some(map.next_value::<Vec<RawMembers<'de>>>()?);
                    } else {
                        members.push((key, map.next_value::<&'de RawValue>()?));
                    }
                }
                Ok(ResultMembers {
                    members: Some(members),
                    content: content.map(|blocks| blocks.into_iter().map(|b| b.0).collect()),
                })
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ResultMembers {
                    members: None,
                    content: None,
                })
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ResultMembers {
                    members: None,
                    content: None,
                })
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ResultMembers {
                    members: None,
                    content: None,
                })
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ResultMembers {
                    members: None,
                    content: None,
                })
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ResultMembers {
                    members: None,
                    content: None,
                })
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ResultMembers {
                    members: None,
                    content: None,
                })
            }
        }
        deserializer.deserialize_any(Members(std::marker::PhantomData))
    }
}

/// The members of one JSON object, each as raw JSON, in order.
struct RawMembers<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for RawMembers<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = RawMembers<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(RawMembers(members))
            }
        }
        deserializer.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// A batch's elements as raw JSON, or `None` when `bytes` is not a JSON array.
///
/// ```
/// let elements = backstop_jsonrpc::message::batch_elements(br#" [{"id":1}, 2 ]"#).unwrap();
/// assert_eq!(elements.iter().map(|e| e.get()).collect::<Vec<_>>(), [r#"{"id":1}"#, "2"]);
/// assert!(backstop_jsonrpc::message::batch_elements(b"{}").is_none());
/// ```
pub fn batch_elements(bytes: &[u8]) -> Option<Vec<&RawValue>> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'[' {
        return None;
    }
    serde_json::from_str(strict_json_text(bytes)?).ok()
}

/// `bytes` as text, if serde_json's strict parser could read it as far as characters
/// go: valid UTF-8 throughout, and every `\u` escape of a UTF-16 surrogate one half of
/// a pair (high then low). The syntax is left to the parser that reads the text next;
/// this checks what that parser skims in the members it skips (SPEC B4).
///
/// ```
/// use backstop_jsonrpc::message::strict_json_text;
/// assert_eq!(strict_json_text(br#"{"a":"\ud83d\ude00 \\ud800"}"#), Some(r#"{"a":"\ud83d\ude00 \\ud800"}"#));
/// assert_eq!(strict_json_text(b"{\"a\":\"\xff\"}"), None); // not UTF-8
/// assert_eq!(strict_json_text(b"{\"a\":\"\xc0\xaf\"}"), None); // an overlong encoding
/// assert_eq!(strict_json_text(br#"{"a":"\ud800"}"#), None); // a lone high surrogate
/// assert_eq!(strict_json_text(br#"{"a":"\udc00\ud800"}"#), None); // the pair reversed
/// ```
pub fn strict_json_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    surrogates_paired(bytes).then_some(text)
}

/// Finds `\u`, where a unit escape may begin: built once, not for every message.
pub(crate) static UNIT_ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(br"\u"));

/// Whether every `\uD800`–`\uDBFF` escape is followed by a `\uDC00`–`\uDFFF` one and
/// no low surrogate stands alone. Outside strings valid JSON has no backslash, so a
/// `\u` is an escape exactly when an even number of backslashes comes before it (an
/// odd one ends in `\\`, an escaped backslash). The scan jumps from `\u` to `\u`
/// (`memchr::memmem`), so text full of other escapes costs no more than any other.
fn surrogates_paired(bytes: &[u8]) -> bool {
    let mut read_up_to = 0;
    for at in UNIT_ESCAPE.find_iter(bytes) {
        if at < read_up_to {
            continue; // the low half of a pair already read
        }
        let backslashes = bytes[..at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 1 {
            continue;
        }
        let Some(unit) = escaped_unit(&bytes[at..]) else {
            return true; // not a \u escape: the parser rejects it
        };
        match unit {
            0xD800..=0xDBFF => match escaped_unit(&bytes[at + 6..]) {
                Some(0xDC00..=0xDFFF) => read_up_to = at + 12,
                _ => return false,
            },
            0xDC00..=0xDFFF => return false,
            _ => {}
        }
    }
    true
}

/// The UTF-16 unit of a `\uXXXX` escape at the start of `bytes`.
fn escaped_unit(bytes: &[u8]) -> Option<u32> {
    let digits = bytes.strip_prefix(b"\\u")?.get(..4)?;
    hex4(std::str::from_utf8(digits).ok()?)
}

/// The `params` members the shaper reads. Unknown members are skipped without being
/// built; the arguments are left as raw JSON, which the core reads into their names
/// and shapes, never keeping a value (`backstop_core::call::ArgumentShapes`, V3).
#[derive(Debug, Default, Deserialize)]
pub struct Params<'a> {
    /// `name` (tools/call).
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// `arguments` (tools/call), as raw JSON.
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// `uri` (resources/*).
    #[serde(borrow, default)]
    pub uri: Option<Cow<'a, str>>,
    /// `cursor` (tools/list): present on every page but the first.
    #[serde(default)]
    pub cursor: Option<IgnoredAny>,
    /// `taskId` (tasks/*).
    #[serde(rename = "taskId", borrow, default)]
    pub task_id: Option<Cow<'a, str>>,
    /// `requestId` (notifications/cancelled).
    #[serde(rename = "requestId", borrow, default)]
    pub request_id: Option<&'a RawValue>,
    /// `_meta`.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Map<String, Value>>,
}

/// A response with `result`, the id written as the request's raw JSON.
///
/// ```
/// let line = backstop_jsonrpc::message::result_response("\"a\"", &serde_json::json!({"content": []}));
/// assert_eq!(line, br#"{"jsonrpc":"2.0","id":"a","result":{"content":[]}}"#);
/// ```
pub fn result_response(id_json: &str, result: &impl Serialize) -> Vec<u8> {
    response(id_json, "result", result)
}

/// A response with `error`, the id written as the request's raw JSON.
///
/// ```
/// let error = backstop_core::ProtocolError::new(-32602, "Unknown tool: x");
/// let line = backstop_jsonrpc::message::error_response("7", &error);
/// assert_eq!(line, br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool: x"}}"#);
/// ```
pub fn error_response(id_json: &str, error: &ProtocolError) -> Vec<u8> {
    response(id_json, "error", error)
}

/// A notification of `method` with `params`.
///
/// ```
/// let line = backstop_jsonrpc::message::notification("notifications/tasks", &serde_json::json!({"taskId": "t"}));
/// assert_eq!(line, br#"{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t"}}"#);
/// ```
pub fn notification(method: &str, params: &impl Serialize) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    // Serializing a string or a Value into memory cannot fail.
    serde_json::to_writer(&mut out, method).expect("serializing to memory");
    out.extend_from_slice(br#","params":"#);
    serde_json::to_writer(&mut out, params).expect("serializing to memory");
    out.push(b'}');
    out
}

fn response(id_json: &str, member: &str, body: &impl Serialize) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id_json.as_bytes());
    out.extend_from_slice(b",\"");
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":");
    // Serializing a ToolResult, a ProtocolError or a Value into memory cannot fail.
    serde_json::to_writer(&mut out, body).expect("serializing to memory");
    out.push(b'}');
    out
}

/// How deep [`value_from_raw`] reads with its own string decoding before it leaves the
/// rest to `serde_json`: a result's members, content blocks and their members.
const OWN_DECODING_DEPTH: usize = 3;

/// A JSON value read from raw text, with the strings near the top — a result's
/// `content[].text`, `structuredContent`'s members — decoded straight into their own
/// `String`, so that a huge string costs one copy of itself and no scratch buffer
/// (SPEC B2: a large message costs at most a small multiple of its size). Deeper
/// parts are read by `serde_json`. `None` when the text is not valid JSON.
///
/// ```
/// use backstop_jsonrpc::message::value_from_raw;
/// let raw = serde_json::value::RawValue::from_string(
///     r#"{"content":[{"type":"text","text":"a\nb \u00e9 \ud83d\ude00"}],"n":[1,{"x":null}]}"#.into()).unwrap();
/// let value = value_from_raw(&raw).unwrap();
/// assert_eq!(value, serde_json::from_str::<serde_json::Value>(raw.get()).unwrap());
/// ```
pub fn value_from_raw(raw: &RawValue) -> Option<Value> {
    value_at_depth(raw, 0)
}

fn value_at_depth(raw: &RawValue, depth: usize) -> Option<Value> {
    let text = raw.get();
    if depth > OWN_DECODING_DEPTH {
        return serde_json::from_str(text).ok();
    }
    match text.as_bytes().first()? {
        b'"' => unescape_json_string(text).map(Value::String),
        b'{' => {
            let members: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
            let mut map = Map::new();
            for (key, member) in members {
                map.insert(key, value_at_depth(member, depth + 1)?);
            }
            Some(Value::Object(map))
        }
        b'[' => {
            let elements: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            elements
                .into_iter()
                .map(|element| value_at_depth(element, depth + 1))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        _ => serde_json::from_str(text).ok(),
    }
}

/// Decode a JSON string literal (quotes included) that `serde_json` has already
/// validated (a [`RawValue`]'s text) into a `String` of exactly its length; `None` on
/// an escape it cannot decode (a lone surrogate).
fn unescape_json_string(literal: &str) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at + 1..at + 2)?;
        rest = &rest[at + 2..];
        let decoded = match escape {
            "\"" => '"',
            "\\" => '\\',
            "/" => '/',
            "b" => '\u{8}',
            "f" => '\u{c}',
            "n" => '\n',
            "r" => '\r',
            "t" => '\t',
            "u" => {
                let high = hex4(rest)?;
                rest = &rest[4..];
                if (0xD800..0xDC00).contains(&high) {
                    let low = hex4(rest.strip_prefix("\\u")?)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    rest = &rest[6..];
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?
                } else {
                    char::from_u32(high)?
                }
            }
            _ => return None,
        };
        out.push(decoded);
    }
    out.push_str(rest);
    Some(out)
}

fn hex4(text: &str) -> Option<u32> {
    let digits = text.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}
/// The raw JSON ids of the requests in a client message or batch (responses and
/// notifications have none).
///
/// ```
/// let ids = backstop_jsonrpc::message::request_ids(br#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{}}]"#);
/// assert_eq!(ids, [r#""a""#]);
/// ```
pub fn request_ids(body: &[u8]) -> Vec<String> {
    ids_in(body, |message| {
        let envelope = Envelope::parse(message).filter(|envelope| envelope.method.is_some())?;
        envelope.id.map(|id| id.get().to_owned())
    })
}

/// The raw JSON ids of the requests a server message or batch answers, by the one
/// rule every path keeps ([`crate::lenient`]: a message that is not strict JSON
/// included, B4).
///
/// ```
/// let ids = backstop_jsonrpc::message::response_ids(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
/// assert_eq!(ids, ["7"]);
/// let lone = backstop_jsonrpc::message::response_ids(br#"{"jsonrpc":"2.0","id":8,"result":"\ud83d"}"#);
/// assert_eq!(lone, ["8"], "not strict JSON (B4)");
/// let batch = br#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
/// assert_eq!(backstop_jsonrpc::message::response_ids(batch), ["1"], "a server's request answers nothing");
/// let escaped = br#"{"jsonrpc":"2.0","id":3,"res\u0075lt":{}}"#;
/// assert_eq!(backstop_jsonrpc::message::response_ids(escaped), ["3"], "a key serde_json decodes");
/// ```
pub fn response_ids(body: &[u8]) -> Vec<String> {
    ids_in(body, |message| {
        strict_response_id(message).or_else(|| crate::lenient::response_id(message))
    })
}

/// The raw JSON id of `message` when serde_json reads it as a response.
pub(crate) fn strict_response_id(message: &[u8]) -> Option<String> {
    let envelope = Envelope::parse(message).filter(Envelope::is_response)?;
    envelope.id.map(|id| id.get().to_owned())
}

/// What `id_of` gives for each message of a message or batch.
fn ids_in(body: &[u8], id_of: impl Fn(&[u8]) -> Option<String>) -> Vec<String> {
    match batch_elements(body) {
        Some(elements) => elements
            .iter()
            .filter_map(|element| id_of(element.get().as_bytes()))
            .collect(),
        None => id_of(body).into_iter().collect(),
    }
}
