//! Argument-validation problems (SPEC V1–V3).
//!
//! A [`Problem`] says *where* an argument set was rejected and *why*, by kind — never
//! with the rejected value: arguments carry keystrokes, commands and secrets (V3), so
//! there is no field a value could travel in.
//!
//! [`render_problems`] writes the V2 text; [`Problem::from_serde_message`] reads the
//! messages serde (through rmcp) produces for a rejected argument set and keeps only
//! the names and the wanted types — never the quoted value.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Why an argument was rejected.
///
/// ```
/// use backstop_core::call::ProblemKind;
/// assert_eq!(ProblemKind::MissingArgument.name(), "missing_argument");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// A required argument was not given.
    MissingArgument,
    /// An argument the tool does not take was given.
    UnexpectedArgument,
    /// An argument had the wrong type; `expected` names the type wanted (`integer`).
    InvalidType {
        /// The type wanted, in words.
        expected: String,
    },
    /// Any other problem: a kind name and a message, both free of input values.
    Other {
        /// The kind, shown as `[type=<kind>]`.
        kind: String,
        /// The message line.
        message: String,
    },
}

impl ProblemKind {
    /// The kind's name, as shown in `[type=<kind>]` (V2).
    pub fn name(&self) -> &str {
        match self {
            ProblemKind::MissingArgument => "missing_argument",
            ProblemKind::UnexpectedArgument => "unexpected_keyword_argument",
            ProblemKind::InvalidType { .. } => "invalid_type",
            ProblemKind::Other { kind, .. } => kind,
        }
    }

    /// The message line of this kind, free of input values (V2, V3).
    ///
    /// ```
    /// use backstop_core::call::ProblemKind;
    /// assert_eq!(ProblemKind::MissingArgument.message(), "Missing required argument");
    /// assert_eq!(ProblemKind::UnexpectedArgument.message(), "Unexpected keyword argument");
    /// let kind = ProblemKind::InvalidType { expected: "integer".into() };
    /// assert_eq!(kind.message(), "Input should be a valid integer");
    /// ```
    pub fn message(&self) -> Cow<'_, str> {
        match self {
            ProblemKind::MissingArgument => Cow::Borrowed("Missing required argument"),
            ProblemKind::UnexpectedArgument => Cow::Borrowed("Unexpected keyword argument"),
            ProblemKind::InvalidType { expected } => {
                Cow::Owned(format!("Input should be a valid {expected}"))
            }
            ProblemKind::Other { message, .. } => Cow::Borrowed(message),
        }
    }
}

/// One rejected part of an argument set.
///
/// ```
/// use backstop_core::call::Problem;
/// let problem = Problem::invalid_type(["target", "pane"], "string");
/// assert_eq!(problem.location_text(), "target.pane");
/// assert_eq!(Problem::root_other("invalid_arguments", "Arguments must be an object").location_text(), "__root__");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// The path to the rejected part, outermost first; empty for the whole argument set.
    pub location: Vec<String>,
    /// Why it was rejected.
    pub kind: ProblemKind,
}

impl Problem {
    /// A required argument `name` was not given.
    pub fn missing_argument(name: impl Into<String>) -> Self {
        Self {
            location: vec![name.into()],
            kind: ProblemKind::MissingArgument,
        }
    }

    /// An argument `name` the tool does not take was given.
    pub fn unexpected_argument(name: impl Into<String>) -> Self {
        Self {
            location: vec![name.into()],
            kind: ProblemKind::UnexpectedArgument,
        }
    }

    /// The argument at `location` should have been of type `expected`.
    pub fn invalid_type<I, S>(location: I, expected: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            location: location.into_iter().map(Into::into).collect(),
            kind: ProblemKind::InvalidType {
                expected: expected.into(),
            },
        }
    }

    /// A problem of the whole argument set, of a kind of its own.
    pub fn root_other(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            location: Vec::new(),
            kind: ProblemKind::Other {
                kind: kind.into(),
                message: message.into(),
            },
        }
    }

    /// The location as a dotted path, `__root__` for the whole argument set (V2).
    pub fn location_text(&self) -> String {
        if self.location.is_empty() {
            "__root__".to_owned()
        } else {
            self.location.join(".")
        }
    }

    /// The problem rendered when a validation failure lists none: the whole argument
    /// set, kind `invalid_arguments`, message `Invalid arguments`.
    ///
    /// ```
    /// let problem = backstop_core::call::Problem::invalid_arguments();
    /// assert_eq!(problem.location_text(), "__root__");
    /// assert_eq!(problem.kind.name(), "invalid_arguments");
    /// ```
    pub fn invalid_arguments() -> Self {
        Self::root_other(INVALID_ARGUMENTS_KIND, "Invalid arguments")
    }

    /// This problem, placed at `location` instead (empty: the whole argument set).
    ///
    /// ```
    /// use backstop_core::call::Problem;
    /// let problem = Problem::invalid_arguments().at(["target"]);
    /// assert_eq!(problem.location_text(), "target");
    /// ```
    pub fn at<I, S>(mut self, location: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.location = location.into_iter().map(Into::into).collect();
        self
    }

    /// The message line of this problem (see [`ProblemKind::message`]).
    ///
    /// ```
    /// let problem = backstop_core::call::Problem::missing_argument("count");
    /// assert_eq!(problem.message(), "Missing required argument");
    /// ```
    pub fn message(&self) -> Cow<'_, str> {
        self.kind.message()
    }

    /// The problem a serde deserialization message describes, as rmcp surfaces it —
    /// without the rejected value (V3). Messages that do not name the argument (invalid
    /// type, value or length; unknown variant) are placed at `__root__`: a call whose
    /// input schema and [`ArgumentShapes`](crate::call::ArgumentShapes) are known places it
    /// when the failure is converted; use
    /// [`from_serde_message_at`](Self::from_serde_message_at) when the location is
    /// known some other way.
    ///
    /// Recognised, with or without rmcp's `failed to deserialize parameters: ` prefix and
    /// serde_json's ` at line N column M` suffix:
    ///
    /// | serde says | problem |
    /// | --- | --- |
    /// | ``missing field `x` `` | `missing_argument` at `x` |
    /// | ``unknown field `x`, expected …`` | `unexpected_keyword_argument` at `x` |
    /// | ``duplicate field `x` `` | `duplicate_argument` at `x` |
    /// | `invalid type: <value>, expected i64` | `invalid_type`, expected `integer` (see `type_in_words`) |
    /// | `invalid value: <value>, expected …` | `invalid_value`: `Invalid value, expected …` |
    /// | `invalid length N, expected …` | `invalid_length`: `Invalid length, expected …` |
    /// | ``unknown variant `v`, expected …`` | `unknown_variant`: `Input should be …` |
    /// | `data did not match any variant of untagged enum E` | `invalid_value` |
    ///
    /// The value (`<value>`, `v`, and the length `N`) is dropped, whatever it holds.
    /// Any other message — a custom error of a hand-written `Deserialize` may quote
    /// anything — gives `None`; the caller should then use
    /// [`Problem::invalid_arguments`] rather than the message.
    ///
    /// ```
    /// use backstop_core::call::{Problem, ProblemKind};
    /// let msg = r#"failed to deserialize parameters: invalid type: string "rm -rf /", expected i64"#;
    /// let problem = Problem::from_serde_message(msg).unwrap();
    /// assert_eq!(problem.location_text(), "__root__");
    /// assert_eq!(problem.kind, ProblemKind::InvalidType { expected: "integer".into() });
    ///
    /// let missing = Problem::from_serde_message("missing field `count` at line 1 column 2");
    /// assert_eq!(missing, Some(Problem::missing_argument("count")));
    /// assert_eq!(Problem::from_serde_message("pane %99 is gone"), None);
    /// ```
    pub fn from_serde_message(message: &str) -> Option<Problem> {
        Self::from_serde_message_at(message, std::iter::empty::<String>())
    }

    /// [`from_serde_message`](Self::from_serde_message), with the location to use for
    /// messages that do not name the argument themselves (a caller that knows which
    /// argument failed, from a path-tracking deserializer, passes it here; the schema's
    /// word is the core's, from [`ArgumentShapes`](crate::call::ArgumentShapes)). Messages
    /// that name a field (missing, unknown, duplicate) keep that name as their location.
    ///
    /// ```
    /// use backstop_core::call::Problem;
    /// let msg = r#"invalid type: string "not-an-int", expected i64"#;
    /// let problem = Problem::from_serde_message_at(msg, ["count"]).unwrap();
    /// assert_eq!(problem, Problem::invalid_type(["count"], "integer"));
    /// let missing = Problem::from_serde_message_at("missing field `count`", ["elsewhere"]);
    /// assert_eq!(missing, Some(Problem::missing_argument("count")));
    /// ```
    pub fn from_serde_message_at<I, S>(message: &str, location: I) -> Option<Problem>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let message = message.trim();
        let message = message
            .strip_prefix(RMCP_DESERIALIZE_PREFIX)
            .map_or(message, str::trim_start);
        let message = strip_position(message);
        let at = |kind: ProblemKind| {
            Problem {
                location: Vec::new(),
                kind,
            }
            .at(location)
        };
        let other = |kind: &str, message: String| ProblemKind::Other {
            kind: kind.into(),
            message,
        };

        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'))
        {
            return Some(Problem::missing_argument(field));
        }
        if let Some(rest) = message.strip_prefix("unknown field `") {
            let (field, _) = rest
                .rsplit_once("`, expected ")
                .or_else(|| rest.rsplit_once("`, there are no fields"))?;
            return Some(Problem::unexpected_argument(field));
        }
        if let Some(field) = message
            .strip_prefix("duplicate field `")
            .and_then(|r| r.strip_suffix('`'))
        {
            let kind = other("duplicate_argument", "Duplicate argument".into());
            return Some(Problem {
                location: vec![field.into()],
                kind,
            });
        }
        if let Some(rest) = message.strip_prefix("invalid type: ") {
            let (_value, expected) = rest.rsplit_once(", expected ")?;
            return Some(at(ProblemKind::InvalidType {
                expected: type_in_words(expected),
            }));
        }
        if let Some(rest) = message.strip_prefix("invalid value: ") {
            let (_value, expected) = rest.rsplit_once(", expected ")?;
            return Some(at(other(
                "invalid_value",
                format!("Invalid value, expected {expected}"),
            )));
        }
        if let Some(rest) = message.strip_prefix("invalid length ") {
            let (_length, expected) = rest.split_once(", expected ")?;
            return Some(at(other(
                "invalid_length",
                format!("Invalid length, expected {expected}"),
            )));
        }
        if let Some(rest) = message.strip_prefix("unknown variant `") {
            let text = if let Some((_value, expected)) = rest.rsplit_once("`, expected ") {
                format!("Input should be {expected}")
            } else if rest.ends_with("`, there are no variants") {
                "Unknown variant; there are no variants".to_owned()
            } else {
                return None;
            };
            return Some(at(other("unknown_variant", text)));
        }
        if let Some(name) = message.strip_prefix("data did not match any variant of untagged enum ")
        {
            let text = format!("Input did not match any variant of {name}");
            return Some(at(other("invalid_value", text)));
        }
        None
    }

    /// This problem as JSON: `{"location": [...], "type": <kind>}`, plus `expected` for
    /// an invalid type and `message` for any other kind. This is the form in which
    /// problems travel inside an encoded failure (see `ProtocolError::encode_failure`).
    ///
    /// ```
    /// use backstop_core::call::Problem;
    /// let problem = Problem::invalid_type(["count"], "integer");
    /// let value = problem.to_value();
    /// assert_eq!(value, serde_json::json!({"location": ["count"], "type": "invalid_type", "expected": "integer"}));
    /// assert_eq!(Problem::from_value(&value), Some(problem));
    /// ```
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        let location = self.location.iter().cloned().map(Value::String).collect();
        map.insert("location".into(), Value::Array(location));
        map.insert("type".into(), Value::from(self.kind.name()));
        match &self.kind {
            ProblemKind::MissingArgument | ProblemKind::UnexpectedArgument => {}
            ProblemKind::InvalidType { expected } => {
                map.insert("expected".into(), Value::from(expected.as_str()));
            }
            ProblemKind::Other { message, .. } => {
                map.insert("message".into(), Value::from(message.as_str()));
            }
        }
        Value::Object(map)
    }

    /// Read a problem written by [`to_value`](Self::to_value); `None` if it is not one.
    ///
    /// ```
    /// use backstop_core::call::Problem;
    /// let value = serde_json::json!({"location": ["count"], "type": "missing_argument"});
    /// assert_eq!(Problem::from_value(&value), Some(Problem::missing_argument("count")));
    /// assert_eq!(Problem::from_value(&serde_json::json!("count")), None);
    /// ```
    pub fn from_value(value: &Value) -> Option<Problem> {
        let location = value
            .get("location")?
            .as_array()?
            .iter()
            .map(|segment| segment.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?;
        let kind = value.get("type")?.as_str()?;
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let kind = match (kind, text("message"), text("expected")) {
            (kind, Some(message), _) => ProblemKind::Other {
                kind: kind.into(),
                message,
            },
            ("missing_argument", None, _) => ProblemKind::MissingArgument,
            ("unexpected_keyword_argument", None, _) => ProblemKind::UnexpectedArgument,
            ("invalid_type", None, Some(expected)) => ProblemKind::InvalidType { expected },
            _ => return None,
        };
        Some(Problem { location, kind })
    }
}

/// The kind of [`Problem::invalid_arguments`].
pub const INVALID_ARGUMENTS_KIND: &str = "invalid_arguments";

/// The prefix rmcp puts before serde's message when a tool's arguments do not
/// deserialize.
pub const RMCP_DESERIALIZE_PREFIX: &str = "failed to deserialize parameters:";

/// Drop serde_json's ` at line N column M` from the end of a message.
fn strip_position(message: &str) -> &str {
    let Some((head, tail)) = message.rsplit_once(" at line ") else {
        return message;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match tail.split_once(" column ") {
        Some((line, column)) if digits(line) && digits(column) => head,
        _ => message,
    }
}

/// A type as serde's `expected …` names it (a Rust type or a visitor's description),
/// in the words of a JSON Schema type.
///
/// | serde says | words |
/// | --- | --- |
/// | `i8` … `i128`, `u8` … `u128`, `isize`, `usize`, `a nonzero u32`, `an integer` | `integer` |
/// | `f32`, `f64`, `a number`, `a float` | `number` |
/// | `a boolean`, `bool` | `boolean` |
/// | `a string`, `a borrowed string`, `String`, `str`, `a character`, `char`, `path string` | `string` |
/// | `a sequence`, `an array`, `a tuple of size N`, `an array of length N`, `tuple struct X` | `array` |
/// | `a map`, `struct X`, `an object` | `object` |
/// | `unit`, `unit struct X`, `null` | `null` |
///
/// Anything else is returned as given, without a leading `a ` or `an `.
pub fn type_in_words(expected: &str) -> String {
    let text = expected.trim();
    let text = text
        .strip_prefix("a ")
        .or_else(|| text.strip_prefix("an "))
        .unwrap_or(text);
    let text = text.strip_prefix("nonzero ").unwrap_or(text);
    let word = match text {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" | "integer" | "int" => "integer",
        "f32" | "f64" | "float" | "number" | "floating point" => "number",
        "bool" | "boolean" => "boolean",
        "string" | "String" | "str" | "borrowed string" | "character" | "char" | "path string"
        | "borrowed path" | "os string" | "string key" => "string",
        "sequence" | "array" | "empty array" | "list" | "vec" => "array",
        "map" | "object" | "dict" => "object",
        "unit" | "null" => "null",
        _ if text.starts_with("integer ") => "integer",
        _ if text.starts_with("tuple of size ")
            || text.starts_with("array of length ")
            || text.starts_with("tuple struct ") =>
        {
            "array"
        }
        _ if text.starts_with("struct ") => "object",
        _ if text.starts_with("unit struct ") => "null",
        _ => text,
    };
    word.to_owned()
}

/// The V2 text of a rejected argument set: `N validation error(s) for <tool>`, then per
/// problem its location and an indented `  <message> [type=<kind>]` line, joined with
/// `\n`. No problems at all renders the one [`Problem::invalid_arguments`].
///
/// ```
/// use backstop_core::call::{Problem, render_problems};
/// let text = render_problems("takes_int", &[Problem::missing_argument("count")]);
/// assert_eq!(text, "1 validation error for takes_int\ncount\n  Missing required argument [type=missing_argument]");
/// let two = render_problems("t", &[Problem::unexpected_argument("a"), Problem::unexpected_argument("b")]);
/// assert!(two.starts_with("2 validation errors for t\na\n"));
/// ```
pub fn render_problems(tool: &str, problems: &[Problem]) -> String {
    let fallback;
    let problems = if problems.is_empty() {
        fallback = [Problem::invalid_arguments()];
        &fallback[..]
    } else {
        problems
    };
    let noun = if problems.len() == 1 {
        "error"
    } else {
        "errors"
    };
    let mut text = format!("{} validation {noun} for {tool}", problems.len());
    for problem in problems {
        text.push('\n');
        text.push_str(&problem.location_text());
        text.push_str("\n  ");
        text.push_str(&problem.message());
        text.push_str(" [type=");
        text.push_str(problem.kind.name());
        text.push(']');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    const PREFIX: &str = "failed to deserialize parameters: ";

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        count: i64,
        #[serde(default)]
        ratio: Option<f64>,
        #[serde(default)]
        flag: Option<bool>,
        #[serde(default)]
        names: Option<Vec<String>>,
        #[serde(default)]
        small: Option<u8>,
        #[serde(default)]
        mode: Option<Mode>,
        #[serde(default)]
        pair: Option<(u8, u8)>,
        #[serde(default)]
        target: Option<Target>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Target {
        pane: String,
    }

    /// The message serde_json gives for these arguments, as rmcp wraps it.
    fn rmcp_message(arguments: serde_json::Value) -> String {
        let err = serde_json::from_value::<Args>(arguments).unwrap_err();
        format!("{PREFIX}{err}")
    }

    fn parsed(arguments: serde_json::Value) -> Problem {
        let message = rmcp_message(arguments);
        Problem::from_serde_message(&message).unwrap_or_else(|| panic!("not recognised: {message}"))
    }

    #[test]
    fn renders_v2_exactly() {
        let problems = [
            Problem::invalid_type(["count"], "integer"),
            Problem::unexpected_argument("bogus"),
            Problem::root_other("custom", "Something else"),
        ];
        assert_eq!(
            render_problems("takes_int", &problems),
            "3 validation errors for takes_int\n\
             count\n  Input should be a valid integer [type=invalid_type]\n\
             bogus\n  Unexpected keyword argument [type=unexpected_keyword_argument]\n\
             __root__\n  Something else [type=custom]"
        );
    }

    #[test]
    fn renders_a_root_problem_when_there_is_none() {
        assert_eq!(
            render_problems("t", &[]),
            "1 validation error for t\n__root__\n  Invalid arguments [type=invalid_arguments]"
        );
    }

    #[test]
    fn reads_real_serde_json_messages_without_values() {
        use serde_json::json;
        let cases = [
            (
                json!({"count": "not-an-int"}),
                Problem::invalid_type(Vec::<String>::new(), "integer"),
            ),
            (
                json!({"count": 1, "ratio": "x1"}),
                Problem::invalid_type(Vec::<String>::new(), "number"),
            ),
            (
                json!({"count": 1, "flag": "yes"}),
                Problem::invalid_type(Vec::<String>::new(), "boolean"),
            ),
            (
                json!({"count": 1, "names": "abc"}),
                Problem::invalid_type(Vec::<String>::new(), "array"),
            ),
            (
                json!({"count": 1, "names": [5]}),
                Problem::invalid_type(Vec::<String>::new(), "string"),
            ),
            (
                json!({"count": 1, "target": "p"}),
                Problem::invalid_type(Vec::<String>::new(), "object"),
            ),
            (
                json!({"count": 1, "target": {}}),
                Problem::missing_argument("pane"),
            ),
            (json!({}), Problem::missing_argument("count")),
            (
                json!({"count": 1, "bogus": 2}),
                Problem::unexpected_argument("bogus"),
            ),
        ];
        for (arguments, expected) in cases {
            assert_eq!(parsed(arguments), expected);
        }
        let small = parsed(json!({"count": 1, "small": 3000}));
        assert_eq!(small.kind.name(), "invalid_value");
        assert_eq!(small.message(), "Invalid value, expected u8");
        let pair = parsed(json!({"count": 1, "pair": [1]}));
        assert_eq!(pair.kind.name(), "invalid_length");
        assert_eq!(pair.message(), "Invalid length, expected a tuple of size 2");
        let mode = parsed(json!({"count": 1, "mode": "turbo"}));
        assert_eq!(mode.kind.name(), "unknown_variant");
        assert_eq!(mode.message(), "Input should be `fast` or `slow`");
        for problem in [small, pair, mode] {
            assert!(!format!("{problem:?}").contains("3000"));
            assert!(!format!("{problem:?}").contains("turbo"));
        }
    }

    #[test]
    fn reads_messages_with_a_position() {
        let err = serde_json::from_str::<Args>(r#"{"count": "s3cr3t"}"#).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(" at line 1 column "), "{message}");
        let problem = Problem::from_serde_message_at(&message, ["count"]).unwrap();
        assert_eq!(problem, Problem::invalid_type(["count"], "integer"));
        assert_eq!(strip_position("x at line 3"), "x at line 3");
        assert_eq!(
            strip_position("x at line a column 2"),
            "x at line a column 2"
        );
        assert_eq!(strip_position("x at line 12 column 2"), "x");
    }

    #[test]
    fn a_value_that_looks_like_the_syntax_does_not_leak() {
        // The value itself holds ", expected " and backticks: the last separator is serde's.
        let message = rmcp_message(serde_json::json!({"count": "LEAK, expected `LEAK`"}));
        let problem = Problem::from_serde_message(&message).unwrap();
        assert_eq!(
            problem.kind,
            ProblemKind::InvalidType {
                expected: "integer".into()
            }
        );
        let message = r#"unknown variant `LEAK`, expected LEAK`, expected `a` or `b`"#;
        let problem = Problem::from_serde_message(message).unwrap();
        assert_eq!(problem.message(), "Input should be `a` or `b`");
    }

    #[test]
    fn unknown_field_lists_and_no_fields() {
        let problem =
            Problem::from_serde_message("unknown field `x`, expected one of `a`, `b`, `c`");
        assert_eq!(problem, Some(Problem::unexpected_argument("x")));
        let problem = Problem::from_serde_message("unknown field `x`, there are no fields");
        assert_eq!(problem, Some(Problem::unexpected_argument("x")));
        let problem = Problem::from_serde_message("duplicate field `x`").unwrap();
        assert_eq!(
            (problem.location_text(), problem.kind.name()),
            ("x".into(), "duplicate_argument")
        );
    }

    #[test]
    fn unrecognised_messages_give_none() {
        for message in [
            "",
            "failed to deserialize parameters: ",
            "invalid type: string \"x\"",
            "unknown variant `x`",
            "missing field count",
            "Pane not found: %99",
            "key must be a string",
        ] {
            assert_eq!(Problem::from_serde_message(message), None, "{message}");
        }
    }

    #[test]
    fn words_for_types() {
        for (serde, word) in [
            ("u32", "integer"),
            ("a nonzero u64", "integer"),
            ("integer with support for saturating semantics", "integer"),
            ("f32", "number"),
            ("a boolean", "boolean"),
            ("a string", "string"),
            ("a character", "string"),
            ("a borrowed string", "string"),
            ("a sequence", "array"),
            ("an array of length 3", "array"),
            ("tuple struct Pair", "array"),
            ("a map", "object"),
            ("struct Args", "object"),
            ("unit", "null"),
            ("enum Mode", "enum Mode"),
        ] {
            assert_eq!(type_in_words(serde), word, "{serde}");
        }
    }

    #[test]
    fn problems_round_trip_through_json() {
        let problems = [
            Problem::missing_argument("a"),
            Problem::unexpected_argument("b"),
            Problem::invalid_type(["c", "d"], "integer"),
            Problem::invalid_arguments(),
            Problem::root_other("missing_argument", "a look-alike of another kind"),
        ];
        for problem in problems {
            assert_eq!(Problem::from_value(&problem.to_value()), Some(problem));
        }
        assert_eq!(
            Problem::from_value(&serde_json::json!({"location": [], "type": "invalid_type"})),
            None
        );
        assert_eq!(
            Problem::from_value(&serde_json::json!({"location": [1], "type": "missing_argument"})),
            None
        );
    }
}

/// The examples of this module's items (private: not run as doc tests).
#[cfg(test)]
mod examples {
    #[test]
    fn example_type_in_words_1() {
        use crate::validation::type_in_words;
        assert_eq!(type_in_words("i64"), "integer");
        assert_eq!(type_in_words("a sequence"), "array");
        assert_eq!(type_in_words("struct TargetArgs"), "object");
        assert_eq!(type_in_words("a valid pane id"), "valid pane id");
    }
}
