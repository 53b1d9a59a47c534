//! The tool result model: the `result` member of a `tools/call` response.
//!
//! Member names are the MCP wire names. Members and content blocks this library does
//! not know are kept exactly as they came (SPEC L7), so an adapter can take any
//! server's result apart and put it back together.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::wire::{Meter, OverLimit};

/// A `tools/call` result.
///
/// Serializes with its members in the order `serde_json` sorts object keys, so that
/// the output is the same whether it went through [`Value`] or not.
///
/// ```
/// use backstop_core::ToolResult;
/// let result = ToolResult::text("PROMPT $").with_meta("pane", "%1".into());
/// let json = serde_json::to_string(&result).unwrap();
/// assert_eq!(json, r#"{"_meta":{"pane":"%1"},"content":[{"text":"PROMPT $","type":"text"}]}"#);
/// assert_eq!(serde_json::from_str::<ToolResult>(&json).unwrap(), result);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResult {
    /// `content`: the content blocks. A result that had no `content` member has none.
    pub content: Vec<Content>,
    /// `structuredContent`: output matching the tool's output schema, if any.
    pub structured_content: Option<Value>,
    /// `isError`: `Some(true)` for an error result. `None` when the member is absent.
    pub is_error: Option<bool>,
    /// `_meta`: metadata attached to the result.
    pub meta: Option<Map<String, Value>>,
    /// `resultType`: `"complete"`, `"input_required"`, … (MCP 2026-07-28).
    pub result_type: Option<String>,
    /// Every other member, kept as it came.
    pub extra: Map<String, Value>,
}

/// One content block of a result.
///
/// ```
/// use backstop_core::call::Content;
/// let block: Content = serde_json::from_str(r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#).unwrap();
/// assert!(block.as_text().is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A `{"type":"text","text":…}` block.
    Text(TextContent),
    /// Any other block (image, audio, resource link, embedded resource, or one this
    /// library does not know), kept as it came.
    Other(Value),
}

/// A text content block.
///
/// ```
/// use backstop_core::call::TextContent;
/// let block = TextContent::new("hello");
/// assert_eq!(block.text, "hello");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Members other than `type` and `text` (`annotations`, `_meta`, …).
    pub extra: Map<String, Value>,
}

/// A result that cannot be read as a `tools/call` result.
///
/// ```
/// use backstop_core::{ToolResult, call::ModelError};
/// let err = ToolResult::from_value(serde_json::json!({"content": "text"})).unwrap_err();
/// assert_eq!(err, ModelError::WrongType { member: "content", expected: "an array" });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The result is not a JSON object.
    #[error("a tools/call result must be a JSON object")]
    NotAnObject,
    /// A member this library knows has the wrong JSON type.
    #[error("the `{member}` member of a tools/call result must be {expected}")]
    WrongType {
        /// The member's wire name.
        member: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

const CONTENT: &str = "content";
const STRUCTURED: &str = "structuredContent";
const IS_ERROR: &str = "isError";
const META: &str = "_meta";
const RESULT_TYPE: &str = "resultType";

impl TextContent {
    /// A text block with no other members.
    ///
    /// ```
    /// assert!(backstop_core::call::TextContent::new("x").extra.is_empty());
    /// ```
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            extra: Map::new(),
        }
    }
}

impl Content {
    /// A text block.
    ///
    /// ```
    /// let block = backstop_core::call::Content::text("ok");
    /// assert_eq!(block.as_text(), Some("ok"));
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent::new(text))
    }

    /// The text of a text block, `None` for any other block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(block) => Some(&block.text),
            Content::Other(_) => None,
        }
    }

    /// Read a block from JSON: `{"type":"text"}` with a string `text` is a text block,
    /// anything else is kept as [`Content::Other`].
    ///
    /// ```
    /// use backstop_core::call::Content;
    /// let block = Content::from_value(serde_json::json!({"type": "text", "text": "hi"}));
    /// assert_eq!(block.as_text(), Some("hi"));
    /// ```
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Object(mut map)
                if map.get("type").and_then(Value::as_str) == Some("text")
                    && map.get("text").is_some_and(Value::is_string) =>
            {
                map.remove("type");
                let Some(Value::String(text)) = map.remove("text") else {
                    unreachable!("checked above")
                };
                Content::Text(TextContent { text, extra: map })
            }
            other => Content::Other(other),
        }
    }

    /// The block as JSON.
    ///
    /// ```
    /// let value = backstop_core::call::Content::text("hi").into_value();
    /// assert_eq!(value, serde_json::json!({"type": "text", "text": "hi"}));
    /// ```
    pub fn into_value(self) -> Value {
        match self {
            Content::Text(TextContent { text, mut extra }) => {
                extra.insert("type".into(), Value::from("text"));
                extra.insert("text".into(), Value::String(text));
                Value::Object(extra)
            }
            Content::Other(value) => value,
        }
    }

    pub(crate) fn measure(&self, meter: &mut Meter) -> Result<(), OverLimit> {
        match self {
            Content::Text(block) => {
                // {"text":…,"type":"text",…extra}
                meter.add(2 + 1 + block.extra.len())?;
                meter.add(7)?; // "text":
                meter.str(&block.text)?;
                meter.add(6 + 1 + 6)?;
                block.extra.iter().try_for_each(|(k, v)| meter.member(k, v))
            }
            Content::Other(value) => meter.value(value),
        }
    }
}

impl ToolResult {
    /// A successful result with one text block.
    ///
    /// ```
    /// let result = backstop_core::ToolResult::text("done");
    /// assert_eq!(result.content[0].as_text(), Some("done"));
    /// assert_eq!(result.is_error, None);
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            ..Self::default()
        }
    }

    /// Set one `_meta` key.
    ///
    /// ```
    /// let result = backstop_core::ToolResult::text("x").with_meta("k", 1.into());
    /// assert_eq!(result.meta.unwrap()["k"], 1);
    /// ```
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }

    /// `true` when `isError` is `true`.
    ///
    /// ```
    /// let mut result = backstop_core::ToolResult::text("x");
    /// assert!(!result.is_error());
    /// result.is_error = Some(true);
    /// assert!(result.is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// `true` for a complete result: no `resultType`, or `resultType: "complete"`, and not
    /// a task handle. Input-required and task results are not complete (SPEC L1).
    ///
    /// ```
    /// use backstop_core::ToolResult;
    /// assert!(ToolResult::text("x").is_complete());
    /// let mut pending = ToolResult::default();
    /// pending.result_type = Some("input_required".into());
    /// assert!(!pending.is_complete());
    /// ```
    pub fn is_complete(&self) -> bool {
        let complete_type = self.result_type.as_deref().is_none_or(|t| t == "complete");
        let task_handle = self.content.is_empty() && self.extra.contains_key("task");
        complete_type && !task_handle
    }

    /// Read a result from JSON, moving its strings rather than copying them.
    ///
    /// A missing `content` reads as no blocks. Known members of the wrong JSON type are
    /// refused with a [`ModelError`] naming the member.
    ///
    /// ```
    /// use backstop_core::ToolResult;
    /// let result = ToolResult::from_value(serde_json::json!({
    ///     "content": [{"type": "text", "text": "hi"}], "isError": true, "custom": [1]
    /// })).unwrap();
    /// assert!(result.is_error());
    /// assert_eq!(result.extra["custom"], serde_json::json!([1]));
    /// ```
    pub fn from_value(value: Value) -> Result<Self, ModelError> {
        let Value::Object(mut map) = value else {
            return Err(ModelError::NotAnObject);
        };
        let wrong = |member, expected| ModelError::WrongType { member, expected };
        let content = match map.remove(CONTENT) {
            None => Vec::new(),
            Some(Value::Array(blocks)) => blocks.into_iter().map(Content::from_value).collect(),
            Some(_) => return Err(wrong(CONTENT, "an array")),
        };
        let is_error = match map.remove(IS_ERROR) {
            None => None,
            Some(Value::Bool(b)) => Some(b),
            Some(_) => return Err(wrong(IS_ERROR, "a boolean")),
        };
        let meta = match map.remove(META) {
            None => None,
            Some(Value::Object(meta)) => Some(meta),
            Some(_) => return Err(wrong(META, "an object")),
        };
        let result_type = match map.remove(RESULT_TYPE) {
            None => None,
            Some(Value::String(t)) => Some(t),
            Some(_) => return Err(wrong(RESULT_TYPE, "a string")),
        };
        let structured_content = map.remove(STRUCTURED);
        Ok(Self {
            content,
            structured_content,
            is_error,
            meta,
            result_type,
            extra: map,
        })
    }

    /// The result as JSON.
    ///
    /// ```
    /// let value = backstop_core::ToolResult::text("hi").into_value();
    /// assert_eq!(value, serde_json::json!({"content": [{"type": "text", "text": "hi"}]}));
    /// ```
    pub fn into_value(self) -> Value {
        let mut map = self.extra;
        map.insert(
            CONTENT.into(),
            Value::Array(self.content.into_iter().map(Content::into_value).collect()),
        );
        if let Some(v) = self.structured_content {
            map.insert(STRUCTURED.into(), v);
        }
        if let Some(v) = self.is_error {
            map.insert(IS_ERROR.into(), Value::Bool(v));
        }
        if let Some(v) = self.meta {
            map.insert(META.into(), Value::Object(v));
        }
        if let Some(v) = self.result_type {
            map.insert(RESULT_TYPE.into(), Value::String(v));
        }
        Value::Object(map)
    }

    /// This result with the texts of its text blocks replaced by `texts`, in order:
    /// `texts[i]` becomes the text of the `i`-th text block. Puts back together a
    /// result an adapter handed over as a shell (text blocks left empty) and the texts
    /// it holds elsewhere, as [`Limit::truncate_texts`](crate::Limit::truncate_texts)
    /// and [`shape_tool_call_texts`](crate::call::shape_tool_call_texts) take them.
    /// Text blocks beyond `texts` keep their own text; texts beyond the blocks are
    /// ignored.
    ///
    /// ```
    /// use backstop_core::{ToolResult, call::Content};
    /// let shell = ToolResult { content: vec![Content::text(""), Content::text("")], ..ToolResult::default() };
    /// let whole = shell.with_texts(&["first", "second"]);
    /// assert_eq!(whole.content[1].as_text(), Some("second"));
    /// ```
    pub fn with_texts(mut self, texts: &[&str]) -> Self {
        let mut given = texts.iter();
        for block in &mut self.content {
            if let Content::Text(block) = block
                && let Some(text) = given.next()
            {
                (*text).clone_into(&mut block.text);
            }
        }
        self
    }

    /// The wire size of this result (SPEC "Words"), or `None` if it is over `limit`.
    ///
    /// Counting stops as soon as the count passes `limit`, so the cost is bounded by
    /// `limit`, not by the size of the result (SPEC L13).
    ///
    /// ```
    /// use backstop_core::ToolResult;
    /// let result = ToolResult::text("a\nb");
    /// let exact = serde_json::to_vec(&result).unwrap().len();
    /// assert_eq!(result.wire_size_upto(usize::MAX), Some(exact));
    /// assert_eq!(result.wire_size_upto(exact - 1), None);
    /// ```
    pub fn wire_size_upto(&self, limit: usize) -> Option<usize> {
        let mut meter = Meter::new(limit);
        self.measure(&mut meter).ok().map(|()| meter.used())
    }

    /// The exact wire size of this result. Reads all of it; prefer
    /// [`wire_size_upto`](Self::wire_size_upto) when a limit is known.
    ///
    /// ```
    /// let result = backstop_core::ToolResult::text("é");
    /// assert_eq!(result.wire_size(), serde_json::to_vec(&result).unwrap().len());
    /// ```
    pub fn wire_size(&self) -> usize {
        let mut meter = Meter::unlimited();
        let _ = self.measure(&mut meter);
        meter.used()
    }

    pub(crate) fn measure(&self, meter: &mut Meter) -> Result<(), OverLimit> {
        let members = 1
            + usize::from(self.structured_content.is_some())
            + usize::from(self.is_error.is_some())
            + usize::from(self.meta.is_some())
            + usize::from(self.result_type.is_some())
            + self.extra.len();
        meter.add(2 + members - 1)?;
        // "content":[…]
        meter.add(CONTENT.len() + 3 + 2 + self.content.len().saturating_sub(1))?;
        self.content
            .iter()
            .try_for_each(|block| block.measure(meter))?;
        if let Some(is_error) = self.is_error {
            meter.add(IS_ERROR.len() + 3 + if is_error { 4 } else { 5 })?;
        }
        if let Some(meta) = &self.meta {
            meter.add(META.len() + 3)?;
            meter.object(meta)?;
        }
        if let Some(result_type) = &self.result_type {
            meter.add(RESULT_TYPE.len() + 3)?;
            meter.str(result_type)?;
        }
        self.extra
            .iter()
            .try_for_each(|(k, v)| meter.member(k, v))?;
        if let Some(structured) = &self.structured_content {
            meter.add(STRUCTURED.len() + 3)?;
            meter.value(structured)?;
        }
        Ok(())
    }
}

/// A member of a result or text block on its way out, in sorted key order.
enum Member<'a> {
    Content(&'a [Content]),
    Structured(&'a Value),
    IsError(bool),
    Meta(&'a Map<String, Value>),
    Str(&'a str),
    Value(&'a Value),
}

impl Serialize for Member<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Content(blocks) => blocks.serialize(serializer),
            Member::Structured(value) | Member::Value(value) => value.serialize(serializer),
            Member::IsError(b) => b.serialize(serializer),
            Member::Meta(map) => map.serialize(serializer),
            Member::Str(s) => s.serialize(serializer),
        }
    }
}

fn serialize_sorted<S: Serializer>(
    serializer: S,
    mut members: Vec<(&str, Member<'_>)>,
) -> Result<S::Ok, S::Error> {
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut map = serializer.serialize_map(Some(members.len()))?;
    for (key, value) in &members {
        map.serialize_entry(key, value)?;
    }
    map.end()
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut members = Vec::with_capacity(5 + self.extra.len());
        members.push((CONTENT, Member::Content(&self.content)));
        if let Some(v) = &self.structured_content {
            members.push((STRUCTURED, Member::Structured(v)));
        }
        if let Some(v) = self.is_error {
            members.push((IS_ERROR, Member::IsError(v)));
        }
        if let Some(v) = &self.meta {
            members.push((META, Member::Meta(v)));
        }
        if let Some(v) = &self.result_type {
            members.push((RESULT_TYPE, Member::Str(v)));
        }
        members.extend(
            self.extra
                .iter()
                .map(|(k, v)| (k.as_str(), Member::Value(v))),
        );
        serialize_sorted(serializer, members)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(block) => {
                let mut members = Vec::with_capacity(2 + block.extra.len());
                members.push(("text", Member::Str(&block.text)));
                members.push(("type", Member::Str("text")));
                members.extend(
                    block
                        .extra
                        .iter()
                        .map(|(k, v)| (k.as_str(), Member::Value(v))),
                );
                serialize_sorted(serializer, members)
            }
            Content::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ToolResult::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Content::from_value)
    }
}

impl TryFrom<Value> for ToolResult {
    type Error = ModelError;
    fn try_from(value: Value) -> Result<Self, ModelError> {
        ToolResult::from_value(value)
    }
}

impl From<ToolResult> for Value {
    fn from(result: ToolResult) -> Value {
        result.into_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_unknown_members_and_blocks() {
        let value = json!({
            "content": [
                {"type": "text", "text": "a", "annotations": {"priority": 1}},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
                {"type": "text", "text": 5}
            ],
            "structuredContent": {"k": [1, 2]},
            "isError": false,
            "_meta": {"x": null},
            "resultType": "complete",
            "vendor/extension": {"deep": [true]}
        });
        let result = ToolResult::from_value(value.clone()).unwrap();
        assert!(matches!(result.content[2], Content::Other(_)));
        assert_eq!(result.clone().into_value(), value);
        assert_eq!(serde_json::to_value(&result).unwrap(), value);
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
        assert_eq!(
            result.wire_size(),
            serde_json::to_vec(&result).unwrap().len()
        );
    }

    #[test]
    fn refuses_known_members_of_the_wrong_type() {
        for (member, bad) in [
            ("isError", json!("yes")),
            ("_meta", json!([])),
            ("resultType", json!(1)),
        ] {
            let err = ToolResult::from_value(json!({ "content": [], member: bad })).unwrap_err();
            assert!(matches!(err, ModelError::WrongType { member: m, .. } if m == member));
        }
        assert_eq!(
            ToolResult::from_value(json!([1])),
            Err(ModelError::NotAnObject)
        );
    }
}
