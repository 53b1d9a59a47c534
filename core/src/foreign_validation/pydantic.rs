//! pydantic's `ValidationError`, as text and as its list of errors (SPEC V1–V3): the
//! problems it describes, without the rejected values.

use serde_json::Value;

use super::REDACTED_MESSAGE;
use super::redaction::exact_cuts;
use crate::validation::{Problem, ProblemKind};

/// pydantic's `ValidationError` text, when its title says it is about a call's
/// arguments (`call[<tool>]`, `<Tool>Arguments`).
///
/// ```
/// use backstop_core::call::from_pydantic;
/// let text = "2 validation errors for call[t]\na\n  Unexpected keyword argument \
///     [type=unexpected_keyword_argument, input_value=True, input_type=bool]\n    \
///     For further information visit https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument\n\
///     b\n  Input should be a valid string [type=string_type, input_value=1, input_type=int]";
/// let problems = from_pydantic(text).unwrap();
/// assert_eq!(problems[0], backstop_core::call::Problem::unexpected_argument("a"));
/// assert_eq!(problems[1], backstop_core::call::Problem::invalid_type(["b"], "string"));
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
    if exact_cuts(text).is_none() {
        // Not laid out as pydantic writes it (a value with a line break in it): the
        // lines cannot be told from a value's, so none is read (V3).
        return Some(vec![Problem::invalid_arguments()]);
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
    pydantic_kind_problem(kind, message, value, location)
}

/// The problems of pydantic's structured errors (`ValidationError.errors()`), each an
/// object with `loc` (a list of names and indexes), `type`, `msg` and — optionally —
/// `input`: the rejected value *as text* (its `repr`, or the string itself), which is
/// read only to tell whether `msg` quotes it and is never kept (V3). The kinds and
/// redactions are those of [`from_pydantic`]; an entry that is not an object is one
/// [`Problem::invalid_arguments`], and no entries at all are one too.
///
/// This is how a binding that sees the exception itself (the Python package) reads a
/// rejected argument set without going through pydantic's text.
///
/// ```
/// use backstop_core::call::{REDACTED_MESSAGE, from_pydantic_errors};
/// use backstop_core::call::Problem;
/// use serde_json::json;
/// let errors = json!([
///     {"loc": ["count"], "type": "int_parsing", "msg": "Input should be a valid integer", "input": "'hunter2'"},
///     {"loc": ["wait_for_previous"], "type": "unexpected_keyword_argument", "msg": "Unexpected keyword argument"},
///     {"loc": ["items", 2], "type": "too_long", "msg": "List should have at most 2 items after validation, not 3"},
///     {"loc": ["name"], "type": "value_error", "msg": "Value error, hunter2 is taken", "input": "hunter2"},
/// ]);
/// let problems = from_pydantic_errors(errors.as_array().unwrap());
/// assert_eq!(problems[0], Problem::invalid_type(["count"], "integer"));
/// assert_eq!(problems[1], Problem::unexpected_argument("wait_for_previous"));
/// assert_eq!(problems[2].location_text(), "items.2");
/// assert_eq!(problems[3].message(), REDACTED_MESSAGE);
/// assert_eq!(from_pydantic_errors(&[]), [Problem::invalid_arguments()]);
/// ```
pub fn from_pydantic_errors(errors: &[Value]) -> Vec<Problem> {
    let mut problems: Vec<Problem> = errors
        .iter()
        .map(|error| {
            let Some(error) = error.as_object() else {
                return Problem::invalid_arguments();
            };
            let location = error
                .get("loc")
                .and_then(Value::as_array)
                .map(|loc| {
                    loc.iter()
                        .map(|segment| match segment {
                            Value::String(name) => name.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let text = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or("");
            let input = error.get("input").and_then(Value::as_str);
            pydantic_kind_problem(text("type"), text("msg"), input, location)
        })
        .collect();
    if problems.is_empty() {
        problems.push(Problem::invalid_arguments());
    }
    problems
}

/// The problem of one pydantic error of `kind` with `message`, where `value` is the
/// rejected value's text, if known (read only to redact the message, V3).
fn pydantic_kind_problem(
    kind: &str,
    message: &str,
    value: Option<&str>,
    location: Vec<String>,
) -> Problem {
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

/// What a pydantic `<type>_type` / `<type>_parsing` kind wants, as precisely as pydantic
/// said it (V2): the JSON Schema type, or the string format it names (a URL, a UUID, a
/// date) — never "a valid string" for a string the caller did send.
fn pydantic_type(kind: &str) -> Option<&'static str> {
    let base = kind
        .strip_suffix("_type")
        .or_else(|| kind.strip_suffix("_parsing"))
        .or_else(|| kind.strip_suffix("_from_float"))?;
    Some(match base {
        "int" => "integer",
        "float" | "decimal" => "number",
        "bool" => "boolean",
        "string" | "str" | "bytes" => "string",
        "url" => "URL",
        "uuid" => "UUID",
        "date" => "date",
        "datetime" => "datetime",
        "time" => "time",
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
