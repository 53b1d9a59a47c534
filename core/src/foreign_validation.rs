//! Argument-validation failures as other frameworks write them (SPEC V1–V3, issue 4 J1/J2).
//!
//! Servers that do not link this library still reject argument sets, and say so in
//! their framework's words — in an `isError` result's text or a JSON-RPC error's
//! message. [`recognize`] reads the formats of widespread frameworks and returns the
//! [`Problem`]s they describe, **without the rejected values** (V3):
//!
//! - **pydantic** (Python; fastmcp's tool-argument validation): a header
//!   `N validation error(s) for call[<tool>]` (or `… for <Tool>Arguments`), then per
//!   error a location line and an indented `  <message> [type=<kind>, input_value=…,
//!   input_type=…]` line, optionally followed by `    For further information visit …`.
//!   The `input_value` is dropped; a message that quotes any part of it, and the free
//!   text of `value_error`/`assertion_error` (a custom validator may say anything),
//!   are replaced by `Invalid value`.
//! - **zod** (the TypeScript SDK's `Invalid arguments for tool <tool>: [ …issues… ]`,
//!   zod 3 and 4): the JSON list of issues. Only `code`, `path`, `expected`, `keys`,
//!   `minimum`/`maximum` and the allowed `options`/`values` are read — never
//!   `received` or `message`, which may quote the input.
//!
//! serde's messages (rmcp) are read by [`Problem::from_serde_message`].
//!
//! Stock prefixes before the text are skipped: `Internal error: `, `Invalid params: `,
//! `Error calling tool '<name>': `, `MCP error <code>: `, `Input validation error: `.
//!
//! ```
//! use backstop_core::foreign_validation::recognize;
//! use backstop_core::Problem;
//!
//! let fastmcp = "1 validation error for call[takes_int]\ncount\n  Input should be a valid integer, \
//!     unable to parse string as an integer [type=int_parsing, input_value='hunter2', input_type=str]";
//! assert_eq!(recognize(fastmcp), Some(vec![Problem::invalid_type(["count"], "integer")]));
//!
//! let zod = r#"MCP error -32602: Invalid arguments for tool add: [{"code": "invalid_type",
//!     "expected": "number", "received": "string", "path": ["a"], "message": "Expected number"}]"#;
//! assert_eq!(recognize(zod), Some(vec![Problem::invalid_type(["a"], "number")]));
//!
//! assert_eq!(recognize("Pane not found: %99"), None);
//! ```

use serde_json::Value;

use crate::protocol_error::strip_prefixes;
use crate::validation::{Problem, ProblemKind};

/// The message of a problem whose own message cannot be shown without risking the
/// rejected value (V3).
///
/// ```
/// use backstop_core::foreign_validation::{REDACTED_MESSAGE, recognize};
/// let text = "1 validation error for call[t]\nx\n  Value error, x=hunter2 is odd \
///     [type=value_error, input_value='hunter2', input_type=str]";
/// assert_eq!(recognize(text).unwrap()[0].message(), REDACTED_MESSAGE);
/// ```
pub const REDACTED_MESSAGE: &str = "Invalid value";

/// The marker before the TypeScript SDK's list of zod issues.
const ZOD_MARKER: &str = "Invalid arguments for tool ";

/// The argument-validation problems a framework's failure text describes, or `None`
/// when the text is not one (see the [module docs](self)). No returned problem holds
/// an input value.
///
/// ```
/// let text = "Internal error: 1 validation error for call[t]\nx\n  Missing required argument \
///     [type=missing_argument, input_value={}, input_type=dict]";
/// let problems = backstop_core::foreign_validation::recognize(text).unwrap();
/// assert_eq!(problems, [backstop_core::Problem::missing_argument("x")]);
/// ```
pub fn recognize(text: &str) -> Option<Vec<Problem>> {
    let text = strip_wrappers(text);
    from_pydantic(text).or_else(|| from_zod(text))
}

/// The text without the prefixes stock middleware and SDKs put before it.
fn strip_wrappers(text: &str) -> &str {
    let mut rest = text.trim_start();
    loop {
        let before = rest;
        rest = strip_prefixes(rest).0;
        rest = rest
            .strip_prefix("Input validation error: ")
            .unwrap_or(rest);
        if rest.len() == before.len() {
            return rest;
        }
    }
}

/// pydantic's `ValidationError` text, when its title says it is about a call's
/// arguments (`call[<tool>]`, `<Tool>Arguments`).
///
/// ```
/// use backstop_core::foreign_validation::from_pydantic;
/// let text = "2 validation errors for call[t]\na\n  Unexpected keyword argument \
///     [type=unexpected_keyword_argument, input_value=True, input_type=bool]\n    \
///     For further information visit https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument\n\
///     b\n  Input should be a valid string [type=string_type, input_value=1, input_type=int]";
/// let problems = from_pydantic(text).unwrap();
/// assert_eq!(problems[0], backstop_core::Problem::unexpected_argument("a"));
/// assert_eq!(problems[1], backstop_core::Problem::invalid_type(["b"], "string"));
/// assert_eq!(from_pydantic("1 validation error for User\nname\n  Field required [type=missing]"), None);
/// ```
pub fn from_pydantic(text: &str) -> Option<Vec<Problem>> {
    let mut lines = text.lines();
    let header = lines.next()?;
    let (count, title) = header.split_once(" validation error")?;
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let title = title
        .strip_prefix("s for ")
        .or_else(|| title.strip_prefix(" for "))?;
    let about_arguments = (title.starts_with("call[") && title.ends_with(']'))
        || (title.ends_with("Arguments") && !title.contains(char::is_whitespace));
    if !about_arguments {
        return None;
    }

    let mut problems = Vec::new();
    let mut location: Option<&str> = None;
    for line in lines {
        if line.starts_with("    ") || line.trim().is_empty() {
            continue; // "For further information visit …"
        }
        match line.strip_prefix("  ") {
            Some(detail) => {
                let at = location.take().map_or_else(Vec::new, split_location);
                problems.push(pydantic_problem(detail, at));
            }
            None => location = Some(line),
        }
    }
    if problems.is_empty() {
        problems.push(Problem::invalid_arguments());
    }
    Some(problems)
}

/// A dotted pydantic location as path segments.
fn split_location(location: &str) -> Vec<String> {
    location.split('.').map(str::to_owned).collect()
}

/// One `<message> [type=<kind>, input_value=<repr>, input_type=<type>]` line.
fn pydantic_problem(detail: &str, location: Vec<String>) -> Problem {
    let (message, bracket) = match detail.find(" [type=") {
        Some(at) => (&detail[..at], &detail[at + " [type=".len()..]),
        None => (detail, ""),
    };
    let kind_end = bracket.find([',', ']']).unwrap_or(bracket.len());
    let kind = &bracket[..kind_end];
    let value = bracket.find("input_value=").map(|at| {
        let repr = &bracket[at + "input_value=".len()..];
        let end = repr
            .rfind(", input_type=")
            .or_else(|| repr.rfind(']'))
            .unwrap_or(repr.len());
        &repr[..end]
    });
    let problem_kind = match kind {
        "missing_argument"
        | "missing"
        | "missing_keyword_only_argument"
        | "missing_positional_only_argument" => ProblemKind::MissingArgument,
        "unexpected_keyword_argument" | "extra_forbidden" | "unexpected_positional_argument" => {
            ProblemKind::UnexpectedArgument
        }
        _ => match pydantic_type(kind) {
            Some(expected) => ProblemKind::InvalidType {
                expected: expected.to_owned(),
            },
            None => {
                let kind = if kind.is_empty() {
                    "invalid_value"
                } else {
                    kind
                };
                let quotes = value.is_some_and(|v| quotes_value(message, v));
                let free_text = matches!(kind, "value_error" | "assertion_error");
                let message = if quotes || free_text || message.trim().is_empty() {
                    REDACTED_MESSAGE
                } else {
                    message
                };
                ProblemKind::Other {
                    kind: kind.to_owned(),
                    message: message.to_owned(),
                }
            }
        },
    };
    Problem {
        location,
        kind: problem_kind,
    }
}

/// The JSON Schema type a pydantic `<type>_type` / `<type>_parsing` kind wants.
fn pydantic_type(kind: &str) -> Option<&'static str> {
    let base = kind
        .strip_suffix("_type")
        .or_else(|| kind.strip_suffix("_parsing"))
        .or_else(|| kind.strip_suffix("_from_float"))?;
    Some(match base {
        "int" => "integer",
        "float" | "decimal" => "number",
        "bool" => "boolean",
        "string" | "str" | "bytes" | "date" | "datetime" | "time" | "uuid" | "url" => "string",
        "list" | "tuple" | "set" | "frozen_set" | "iterable" => "array",
        "dict" | "model" | "model_attributes" | "dataclass" | "typed_dict" => "object",
        "none" => "null",
        _ => return None,
    })
}

/// Whether `message` contains any part of a pydantic input repr (`'abc'`, or a long
/// one shortened as `'abc...xyz'`).
fn quotes_value(message: &str, repr: &str) -> bool {
    repr.split("...")
        .map(|part| part.trim_matches(|c: char| c == '\'' || c == '"' || c.is_whitespace()))
        .filter(|part| !part.is_empty())
        .any(|part| message.contains(part))
}

/// The TypeScript SDK's `Invalid arguments for tool <tool>: <zod issues as JSON>`, or
/// a bare list of zod issues.
///
/// ```
/// use backstop_core::foreign_validation::from_zod;
/// let text = r#"Invalid arguments for tool t: [{"code": "unrecognized_keys", "keys": ["x", "y"],
///     "path": [], "message": "Unrecognized keys: \"x\", \"y\""}]"#;
/// let problems = from_zod(text).unwrap();
/// assert_eq!(problems, [backstop_core::Problem::unexpected_argument("x"),
///                       backstop_core::Problem::unexpected_argument("y")]);
/// assert_eq!(from_zod("[1, 2]"), None);
/// ```
pub fn from_zod(text: &str) -> Option<Vec<Problem>> {
    let json = match text.find(ZOD_MARKER) {
        Some(at) => {
            let rest = &text[at + ZOD_MARKER.len()..];
            &rest[rest.find(": [")? + 2..]
        }
        None if text.trim_start().starts_with('[') => text.trim_start(),
        None => return None,
    };
    let issues = serde_json::Deserializer::from_str(json)
        .into_iter::<Vec<Value>>()
        .next()?
        .ok()?;
    if issues.is_empty() {
        return None;
    }
    let mut problems = Vec::new();
    for issue in &issues {
        let code = issue.get("code")?.as_str()?;
        let path = zod_path(issue.get("path")?)?;
        zod_problems(issue, code, path, &mut problems);
    }
    Some(problems)
}

/// A zod issue's `path` as segments (strings and array indexes).
fn zod_path(path: &Value) -> Option<Vec<String>> {
    path.as_array()?
        .iter()
        .map(|segment| match segment {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect()
}

/// The problems of one zod issue, read from the fields that never hold the input.
fn zod_problems(issue: &Value, code: &str, path: Vec<String>, out: &mut Vec<Problem>) {
    let text = |key: &str| issue.get(key).and_then(Value::as_str);
    let other = |message: String| ProblemKind::Other {
        kind: code.to_owned(),
        message,
    };
    let kind = match code {
        "invalid_type" => {
            // zod 3 names the received *type*; zod 4 says it in the message only.
            let missing = text("received") == Some("undefined")
                || text("message").is_some_and(|m| m.ends_with("received undefined"));
            if missing {
                ProblemKind::MissingArgument
            } else {
                ProblemKind::InvalidType {
                    expected: zod_type(text("expected").unwrap_or("value")),
                }
            }
        }
        "unrecognized_keys" => {
            let keys = issue.get("keys").and_then(Value::as_array);
            for key in keys.into_iter().flatten().filter_map(Value::as_str) {
                let mut location = path.clone();
                location.push(key.to_owned());
                out.push(Problem {
                    location,
                    kind: ProblemKind::UnexpectedArgument,
                });
            }
            return;
        }
        "too_small" | "too_big" => {
            let (bound, word) = if code == "too_small" {
                ("minimum", "at least")
            } else {
                ("maximum", "at most")
            };
            match issue.get(bound).filter(|b| b.is_number()) {
                Some(limit) => other(format!("Input should be {word} {limit}")),
                None => other(REDACTED_MESSAGE.to_owned()),
            }
        }
        "invalid_enum_value" | "invalid_value" | "invalid_literal" => {
            let allowed = issue
                .get("options")
                .or_else(|| issue.get("values"))
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                });
            match allowed {
                Some(allowed) => other(format!("Input should be one of: {allowed}")),
                None => other(REDACTED_MESSAGE.to_owned()),
            }
        }
        "invalid_string" | "invalid_format" => {
            let format = text("format").or_else(|| text("validation"));
            match format {
                Some(format) => other(format!("Input should be a valid {format}")),
                None => other("Input has an invalid format".to_owned()),
            }
        }
        "invalid_union" => other("Input did not match any allowed type".to_owned()),
        _ => other(REDACTED_MESSAGE.to_owned()),
    };
    out.push(Problem {
        location: path,
        kind,
    });
}

/// A zod type name in the words of a JSON Schema type.
fn zod_type(expected: &str) -> String {
    match expected {
        "bigint" | "int" => "integer".to_owned(),
        "record" | "map" => "object".to_owned(),
        "tuple" | "set" => "array".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render_problems;
    use proptest::prelude::*;

    const FASTMCP_MISSING: &str = "1 validation error for call[takes_int]\ncount\n  Missing required argument [type=missing_argument, input_value={}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument";

    #[test]
    fn reads_fastmcp_texts_with_and_without_middleware_prefixes() {
        for prefix in [
            "",
            "Internal error: ",
            "Error calling tool 'takes_int': ",
            "Invalid params: Input validation error: ",
        ] {
            let text = format!("{prefix}{FASTMCP_MISSING}");
            assert_eq!(
                recognize(&text),
                Some(vec![Problem::missing_argument("count")]),
                "{prefix}"
            );
        }
    }

    #[test]
    fn nested_locations_and_root_problems() {
        let text = "2 validation errors for call[t]\nitems.0.name\n  String should have at most 3 characters [type=string_too_long, input_value='abcdef', input_type=str]\n  Model-level problem [type=model_custom]";
        let problems = from_pydantic(text).unwrap();
        assert_eq!(problems[0].location, ["items", "0", "name"]);
        assert_eq!(
            problems[0].message(),
            "String should have at most 3 characters"
        );
        assert_eq!(problems[1].location_text(), "__root__");
        assert_eq!(
            from_pydantic("1 validation error for call[t]").unwrap(),
            [Problem::invalid_arguments()]
        );
    }

    #[test]
    fn messages_that_quote_the_value_are_redacted() {
        let text = "2 validation errors for call[t]\nmode\n  Input should be 'a' or 'b', not 'zebra' [type=enum, input_value='zebra', input_type=str]\nx\n  Value error, x must be even [type=value_error, input_value=3, input_type=int]";
        let problems = from_pydantic(text).unwrap();
        assert_eq!(problems[0].message(), REDACTED_MESSAGE);
        assert_eq!(problems[1].message(), REDACTED_MESSAGE);
        assert_eq!(problems[1].kind.name(), "value_error");
    }

    #[test]
    fn titles_not_about_arguments_are_not_recognised() {
        for text in [
            "1 validation error for User\nname\n  Field required [type=missing]",
            "x validation error for call[t]\na\n  Field required [type=missing]",
            "validation error for call[t]",
        ] {
            assert_eq!(recognize(text), None, "{text}");
        }
    }

    #[test]
    fn reads_zod_3_and_4_issues() {
        let v3 = r#"MCP error -32602: Invalid arguments for tool add: [
  {
    "code": "invalid_type",
    "expected": "number",
    "received": "undefined",
    "path": ["b"],
    "message": "Required"
  },
  {
    "received": "purple",
    "code": "invalid_enum_value",
    "options": ["red", "green"],
    "path": ["colour"],
    "message": "Invalid enum value. Expected 'red' | 'green', received 'purple'"
  },
  {"code": "too_small", "minimum": 1, "type": "number", "inclusive": true, "exact": false,
   "message": "Number must be greater than or equal to 1", "path": ["items", 0]}
]"#;
        let problems = recognize(v3).unwrap();
        assert_eq!(problems[0], Problem::missing_argument("b"));
        assert_eq!(
            problems[1].message(),
            r#"Input should be one of: "red", "green""#
        );
        assert_eq!(problems[2].location, ["items", "0"]);
        assert_eq!(problems[2].message(), "Input should be at least 1");
        let rendered = render_problems("add", &problems);
        assert!(!rendered.contains("purple"), "{rendered}");

        let v4 = r#"Input validation error: Invalid arguments for tool add: [{"expected": "number", "code": "invalid_type", "path": ["a"], "message": "Invalid input: expected number, received undefined"}]"#;
        assert_eq!(recognize(v4), Some(vec![Problem::missing_argument("a")]));
        assert_eq!(recognize("Invalid arguments for tool add: not json"), None);
        assert_eq!(recognize(r#"[{"code": 1, "path": []}]"#), None);
    }

    fn pydantic_text(value: &str, message_quotes: bool, kind: &str) -> String {
        let message = if message_quotes {
            format!("Input should not be {value}")
        } else {
            "Input should be a valid integer".to_owned()
        };
        format!(
            "1 validation error for call[t]\narg\n  {message} [type={kind}, input_value='{value}', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/{kind}"
        )
    }

    proptest! {
        #[test]
        fn no_generated_value_survives(
            body in "[A-Za-z0-9 _\\-\\[\\],.='\"{}]{0,40}",
            quotes in any::<bool>(),
            kind in prop::sample::select(vec![
                "int_parsing", "value_error", "enum", "string_too_long", "custom_kind",
                "missing_argument", "unexpected_keyword_argument",
            ]),
        ) {
            let value = format!("S3CR3T{body}");
            let text = pydantic_text(&value, quotes, kind);
            let problems = recognize(&text).unwrap();
            let rendered = render_problems("t", &problems);
            let values: Vec<String> = problems.iter().map(|p| p.to_value().to_string()).collect();
            prop_assert!(!rendered.contains("S3CR3T"), "{}", rendered);
            prop_assert!(!values.concat().contains("S3CR3T"));

            let zod = serde_json::json!([{
                "code": kind, "received": value, "message": format!("bad {value}"),
                "expected": "number", "path": ["arg"], "options": ["a"],
            }]);
            let text = format!("Invalid arguments for tool t: {zod}");
            let problems = recognize(&text).unwrap();
            let rendered = render_problems("t", &problems);
            prop_assert!(!rendered.contains("S3CR3T"), "{}", rendered);
        }

        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = recognize(&text);
            let _ = recognize(&format!("1 validation error for call[t]\n{text}"));
            let _ = recognize(&format!("Invalid arguments for tool t: [{text}"));
        }
    }
}
