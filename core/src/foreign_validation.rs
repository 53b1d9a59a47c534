//! Argument-validation failures as other frameworks write them (SPEC V1–V3, issue 4 J1/J2).
//!
//! Servers that do not link this library still reject argument sets, and say so in
//! their framework's words — in an `isError` result's text or a JSON-RPC error's
//! message. [`recognize`] reads the formats of widespread frameworks and returns the
//! [`Problem`]s they describe, **without the rejected values** (V3):
//!
//! - **pydantic** (Python; fastmcp's tool-argument validation, and the official Python
//!   SDK's): a header `N validation error(s) for call[<tool>]` (or `… for
//!   <tool>Arguments`, the SDK's argument model), then per error a location line and an
//!   indented `  <message> [type=<kind>, input_value=…, input_type=…]` line, optionally
//!   followed by `    For further information visit …`. The `input_value` is dropped;
//!   a message that quotes any part of it, and the free text of
//!   `value_error`/`assertion_error` (a custom validator may say anything), are
//!   replaced by `Invalid value`.
//! - **zod** (the TypeScript SDK's `Invalid arguments for tool <tool>: <issues>`, zod 3
//!   and 4), in each form an SDK wrote: the JSON list of issues (older 1.x), of which
//!   only `code`, `path`, `expected`, `keys`, `minimum`/`maximum` and the allowed
//!   `options`/`values` are read — never `received` or `message`; SDK 1.x's
//!   `<message> at <path>` lines; SDK 2.x's `<path>: <message>, …` (standard schema).
//!   In the text forms, the messages of zod's default locale are mapped to kinds
//!   (`Required`, `… received undefined` → `missing_argument`; `Unrecognized key(s)`
//!   → one `unexpected_keyword_argument` per name, which V4 lists; `… expected <type>,
//!   received <type>` → `invalid_type`). The other messages of the default locale —
//!   too small/big, invalid option, format, multiple of, … — are kept as written,
//!   because their variable parts come from the schema (bounds, allowed values,
//!   patterns), not from the input; v3's `Invalid enum value` loses its `received
//!   '<input>'`. Any other message (a refinement's, a custom error map's) may echo the
//!   input: it keeps its location, gets the kind [`GENERIC_KIND`] and the message
//!   [`REDACTED_MESSAGE`] (V3). (A custom message written to look like a default one
//!   is beyond what a text can tell.)
//!
//! serde's messages (rmcp) are read by [`Problem::from_serde_message`].
//!
//! Stock prefixes before the text are skipped by [`strip_prefixes`]: `Internal error: `,
//! `Invalid params: `, `Error calling tool '<name>': `, `Error executing tool <name>: `,
//! `MCP error <code>: `, `Input validation error: `, ….
//!
//! For pydantic-looking texts that are none of these, [`redact_input_values`] is the
//! last line of defence: the core applies it to every `isError` text it forwards.
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
//! let sdk = "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: \
//!     Invalid input: expected number, received string at a";
//! assert_eq!(recognize(sdk), Some(vec![Problem::invalid_type(["a"], "number")]));
//!
//! assert_eq!(recognize("Pane not found: %99"), None);
//! ```

use std::borrow::Cow;

use serde_json::Value;

use crate::prefix::strip_prefixes;
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
    let text = strip_prefixes(text.trim_start()).rest;
    from_pydantic(text).or_else(|| from_zod(text))
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
/// use backstop_core::foreign_validation::{REDACTED_MESSAGE, from_pydantic_errors};
/// use backstop_core::Problem;
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

/// The TypeScript SDK's `Invalid arguments for tool <tool>: <issues>`, or a bare list
/// of zod issues as JSON. The issues come in one of three forms:
///
/// - a JSON list of zod issues (SDK 1.x before 1.2x);
/// - SDK 1.x today (`getParseErrorMessage`): one `<message> at <path>` line per issue
///   (`<message>` alone at the root), joined by `\n`, the path dotted with `[n]` for
///   array indexes;
/// - SDK 2.x (standard schema): `<path>: <message>` per issue (`<message>` alone at the
///   root), joined by `, `, the path dotted.
///
/// The text forms are read only when the marker starts the (prefix-stripped) text.
///
/// ```
/// use backstop_core::foreign_validation::from_zod;
/// use backstop_core::Problem;
/// let json = r#"Invalid arguments for tool t: [{"code": "unrecognized_keys", "keys": ["x", "y"],
///     "path": [], "message": "Unrecognized keys: \"x\", \"y\""}]"#;
/// assert_eq!(from_zod(json).unwrap(), [Problem::unexpected_argument("x"), Problem::unexpected_argument("y")]);
///
/// let v1 = "Invalid arguments for tool get-sum: Invalid input: expected number, received string at a\n\
///           Invalid input: expected number, received undefined at b";
/// assert_eq!(from_zod(v1).unwrap(), [Problem::invalid_type(["a"], "number"), Problem::missing_argument("b")]);
///
/// let v2 = "Invalid arguments for tool get-sum: a: Invalid input: expected number, received string, \
///           Unrecognized key: \"c\"";
/// assert_eq!(from_zod(v2).unwrap(), [Problem::invalid_type(["a"], "number"), Problem::unexpected_argument("c")]);
/// assert_eq!(from_zod("[1, 2]"), None);
/// ```
pub fn from_zod(text: &str) -> Option<Vec<Problem>> {
    let Some(at) = text.find(ZOD_MARKER) else {
        let text = text.trim_start();
        return if text.starts_with('[') {
            zod_json(text)
        } else {
            None
        };
    };
    let (_tool, body) = text[at + ZOD_MARKER.len()..].split_once(": ")?;
    if body.trim_start().starts_with('[')
        && let Some(problems) = zod_json(body.trim_start())
    {
        return Some(problems);
    }
    if at != 0 || body.trim().is_empty() {
        return None;
    }
    let issues = if body.contains('\n') || located_line(body).1.is_some() {
        body.lines()
            .filter(|line| !line.trim().is_empty())
            .map(located_line)
            .collect()
    } else {
        standard_schema_issues(body)
    };
    let mut problems = Vec::new();
    for (message, path) in issues {
        zod_message_problems(message, path.unwrap_or_default(), &mut problems);
    }
    (!problems.is_empty()).then_some(problems)
}

/// A list of zod issues as JSON.
fn zod_json(json: &str) -> Option<Vec<Problem>> {
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

/// One SDK 1.x line: `<message> at <path>`, or `<message>` at the root.
fn located_line(line: &str) -> (&str, Option<Vec<String>>) {
    match line.rsplit_once(" at ") {
        Some((message, path)) => match dotted_path(path) {
            Some(path) => (message, Some(path)),
            None => (line, None),
        },
        None => (line, None),
    }
}

/// SDK 2.x: `<path>: <message>` or `<message>` per issue, joined by `, ` — which zod's
/// own messages contain too, so a piece starts a new issue only when it starts with a
/// path and `: `, or with the start of a message of zod's default locale.
fn standard_schema_issues(body: &str) -> Vec<(&str, Option<Vec<String>>)> {
    let mut issues: Vec<(usize, usize, Option<Vec<String>>)> = Vec::new();
    let mut start = 0;
    loop {
        let end = body[start..].find(", ").map_or(body.len(), |at| start + at);
        let piece = &body[start..end];
        let located = piece
            .split_once(": ")
            .and_then(|(path, _)| dotted_path(path).map(|p| (p, path.len() + 2)));
        match (located, issues.last_mut()) {
            (Some((path, skip)), _) => issues.push((start + skip, end, Some(path))),
            (None, Some(last)) if !starts_like_zod(piece) => last.1 = end,
            (None, _) => issues.push((start, end, None)),
        }
        if end == body.len() {
            break;
        }
        start = end + 2;
    }
    issues
        .into_iter()
        .map(|(from, to, path)| (&body[from..to], path))
        .collect()
}

/// Whether a piece of a 2.x text starts like a message of zod's default locale (v3 or
/// v4), so that a root issue after another is told from the rest of its message.
fn starts_like_zod(piece: &str) -> bool {
    const STARTS: [&str; 11] = [
        "Invalid",
        "Too big",
        "Too small",
        "Unrecognized key",
        "Required",
        "Expected ",
        "String must",
        "Number must",
        "Array must",
        "BigInt must",
        "Date must",
    ];
    STARTS.iter().any(|start| piece.starts_with(start))
}

/// A zod path as the SDKs write it — `a.b[0].c` (1.x) or `a.b.0.c` (2.x) — as segments;
/// `None` when it cannot be one (empty, or with whitespace, quotes, `:` or `,`).
fn dotted_path(path: &str) -> Option<Vec<String>> {
    let bad = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ':' | ',');
    if path.is_empty() || path.contains(bad) {
        return None;
    }
    let mut segments = Vec::new();
    for part in path.split('.') {
        let (name, indexes) = part.split_once('[').unwrap_or((part, ""));
        if name.is_empty() && segments.is_empty() {
            return None;
        }
        if !name.is_empty() {
            segments.push(name.to_owned());
        }
        if !indexes.is_empty() {
            if !indexes.ends_with(']') {
                return None;
            }
            for index in format!("[{indexes}").split_terminator(']') {
                let index = index.strip_prefix('[')?;
                if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                segments.push(index.to_owned());
            }
        }
    }
    Some(segments)
}

/// The formats zod names in `Invalid <format>` (v4's words, and v3's `validation`s).
const ZOD_FORMATS: [&str; 45] = [
    "email address",
    "URL",
    "emoji",
    "UUID",
    "UUIDv4",
    "UUIDv6",
    "nanoid",
    "GUID",
    "cuid",
    "cuid2",
    "ULID",
    "XID",
    "KSUID",
    "ISO datetime",
    "ISO date",
    "ISO time",
    "ISO duration",
    "IPv4 address",
    "IPv6 address",
    "MAC address",
    "IPv4 range",
    "IPv6 range",
    "base64-encoded string",
    "base64url-encoded string",
    "JSON string",
    "E.164 number",
    "currency code",
    "credit card number",
    "IBAN",
    "JWT",
    "email",
    "url",
    "uuid",
    "regex",
    "ulid",
    "datetime",
    "date",
    "time",
    "duration",
    "ip",
    "cidr",
    "base64",
    "base64url",
    "jwt",
    "xid",
];

/// Messages of zod's default locale (v3 and v4) whose variable parts come from the
/// schema (bounds, allowed values, formats, patterns) — never from the input — kept
/// as written, with the kind they say.
const KEPT_MESSAGES: [(&str, &str); 26] = [
    ("Invalid option: expected one of ", "invalid_value"),
    ("Invalid input: expected ", "invalid_value"),
    ("Invalid literal value, expected ", "invalid_value"),
    ("Too big: expected ", "too_big"),
    ("Too small: expected ", "too_small"),
    ("Invalid string: must ", "invalid_format"),
    ("Invalid input: must ", "invalid_format"),
    ("Invalid number: must be a multiple of ", "not_multiple_of"),
    ("Number must be a multiple of ", "not_multiple_of"),
    ("Number must be finite", "not_finite"),
    ("Invalid key in ", "invalid_key"),
    ("Invalid value in ", "invalid_element"),
    ("Invalid discriminator value. Expected ", "invalid_union"),
    ("String must contain ", "invalid_size"),
    ("Array must contain ", "invalid_size"),
    ("Number must be ", "invalid_size"),
    ("BigInt must be ", "invalid_size"),
    ("Date must be ", "invalid_size"),
    ("arguments contain more than the maximum of ", "too_big"),
    ("Invalid input", "invalid_value"),
    (
        "Invalid input: more than one option matched",
        "invalid_union",
    ),
    ("Invalid", "invalid_format"),
    ("Invalid date", "invalid_date"),
    ("Invalid function arguments", "invalid_arguments"),
    ("Invalid function return type", "invalid_return_type"),
    (
        "Intersection results could not be merged",
        "invalid_intersection_types",
    ),
];

/// The problems one zod message (of a text form) says, at `path` (V3: a message not
/// of zod's default locale may quote the input, and is not kept).
fn zod_message_problems(message: &str, path: Vec<String>, out: &mut Vec<Problem>) {
    let message = message.trim();
    let kind = if message == "Required" {
        ProblemKind::MissingArgument
    } else if let Some(kind) = zod_type_message(message) {
        kind
    } else if let Some(keys) = unrecognized_keys(message) {
        push_unexpected(out, &path, keys);
        return;
    } else if let Some(kept) = kept_zod_message(message) {
        kept
    } else {
        ProblemKind::Other {
            kind: GENERIC_KIND.to_owned(),
            message: REDACTED_MESSAGE.to_owned(),
        }
    };
    out.push(Problem {
        location: path,
        kind,
    });
}

/// The kind of a problem whose message could not be classified (V3: its message is
/// [`REDACTED_MESSAGE`], its location kept).
pub const GENERIC_KIND: &str = "invalid_value";

/// zod's type mismatch: v4 `Invalid input: expected <type>, received <type>`, v3
/// `Expected <type>, received <type>`; `received undefined` is a missing argument.
fn zod_type_message(message: &str) -> Option<ProblemKind> {
    let rest = message
        .strip_prefix("Invalid input: expected ")
        .or_else(|| message.strip_prefix("Expected "))?;
    let (expected, received) = rest.split_once(", received ")?;
    let word = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !word(expected) || !word(received) {
        return None;
    }
    Some(if received == "undefined" {
        ProblemKind::MissingArgument
    } else {
        ProblemKind::InvalidType {
            expected: zod_type(expected),
        }
    })
}

/// The names of v4's `Unrecognized key(s): "a", "b"` and v3's `Unrecognized key(s) in
/// object: 'a', 'b'`.
fn unrecognized_keys(message: &str) -> Option<Vec<&str>> {
    let (list, quote) = if let Some(list) = message.strip_prefix("Unrecognized key(s) in object: ")
    {
        (list, '\'')
    } else {
        let list = message
            .strip_prefix("Unrecognized keys: ")
            .or_else(|| message.strip_prefix("Unrecognized key: "))?;
        (list, '"')
    };
    let inner = list.strip_prefix(quote)?.strip_suffix(quote)?;
    let separator = format!("{quote}, {quote}");
    Some(inner.split(separator.as_str()).collect())
}

/// A message of zod's default locale kept as written (see [`KEPT_MESSAGES`]); v3's
/// `Invalid enum value. Expected 'a' | 'b', received '<input>'` loses its `received`.
fn kept_zod_message(message: &str) -> Option<ProblemKind> {
    let kept = |kind: &str, message: &str| ProblemKind::Other {
        kind: kind.to_owned(),
        message: message.to_owned(),
    };
    if let Some(rest) = message.strip_prefix("Invalid enum value. Expected ") {
        let allowed = rest.split_once(", received '").map_or(rest, |(a, _)| a);
        return Some(kept(
            "invalid_value",
            &format!("Invalid enum value. Expected {allowed}"),
        ));
    }
    if let Some(format) = message.strip_prefix("Invalid ")
        && ZOD_FORMATS.contains(&format)
    {
        return Some(kept("invalid_format", message));
    }
    if message.starts_with("Invalid input: expected ") && message.contains(", received ") {
        return None; // a type mismatch zod_type_message could not read
    }
    KEPT_MESSAGES.iter().find_map(|&(start, kind)| {
        // An entry ending in a space is a start; any other, a whole message.
        let matches = if start.ends_with(' ') {
            message.len() > start.len() && message.starts_with(start)
        } else {
            message == start
        };
        matches.then(|| kept(size_kind(kind, message), message))
    })
}

/// v3's size messages (`String must contain at least 3 character(s)`) as `too_small`
/// or `too_big`, by their words.
fn size_kind<'a>(kind: &'a str, message: &str) -> &'a str {
    if kind != "invalid_size" {
        return kind;
    }
    let has = |words: &[&str]| words.iter().any(|w| message.contains(w));
    if has(&["at least", "more than", " over ", "greater"]) {
        "too_small"
    } else if has(&["at most", "less than", " under ", "smaller"]) {
        "too_big"
    } else {
        kind
    }
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
            push_unexpected(
                out,
                &path,
                keys.into_iter().flatten().filter_map(Value::as_str),
            );
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

/// The key before a rejected value in pydantic's `[type=…, input_value=…, input_type=…]`.
const INPUT_VALUE: &str = "input_value=";
/// The key before the rejected value's type name.
const INPUT_TYPE: &str = "input_type=";

/// The last line of defence for V3 (issue 12): `text` without the `input_value=…` and
/// `input_type=…` fragments of pydantic's `[type=…, input_value=…, input_type=…]`
/// brackets — for texts that look like pydantic's but were not recognised (a new
/// prefix, a new layout, a model that is not a tool's arguments). A text with neither
/// fragment is returned as it is (borrowed), so that it can pass byte-identical.
///
/// pydantic writes a value as its `repr`, which has no raw line break, so that where
/// every line holds at most one bracket, each value is cut exactly: from `input_value=`
/// to the type name before its `]`. Where the text is not laid out so (a value with a
/// line break, or with `input_value=` / `input_type=` in it), everything from the first
/// `input_value=` to the last `input_type=…` goes — the lines between included: a
/// value's end cannot be told from the text there, and V3 comes first. A message that
/// quotes the value in its own words is beyond this; the recognisers ([`recognize`])
/// redact those in the texts they know.
///
/// ```
/// use backstop_core::foreign_validation::redact_input_values;
/// let text = "Error: 1 validation error for Order\ncount\n  Input should be a valid integer \
///     [type=int_parsing, input_value='hunter2', input_type=str]";
/// assert_eq!(redact_input_values(text),
///     "Error: 1 validation error for Order\ncount\n  Input should be a valid integer [type=int_parsing]");
/// assert!(matches!(redact_input_values("Pane not found"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn redact_input_values(text: &str) -> Cow<'_, str> {
    if !text.contains(INPUT_VALUE) && !text.contains(INPUT_TYPE) {
        return Cow::Borrowed(text);
    }
    let cuts = exact_cuts(text).unwrap_or_else(|| vec![greedy_cut(text)]);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (from, to) in cuts {
        out.push_str(&text[at..from]);
        at = to;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The byte range of each value fragment, when every line holds at most one bracket's
/// `input_value=…, input_type=<name>` (in that order) and no stray key: the layout
/// pydantic writes, where a value cannot run past its own line.
fn exact_cuts(text: &str) -> Option<Vec<(usize, usize)>> {
    let mut cuts = Vec::new();
    let mut start = 0;
    for line in text.split('\n') {
        let values = line.matches(INPUT_VALUE).count();
        let types = line.matches(INPUT_TYPE).count();
        match (values, types) {
            (0, 0) => {}
            (1, 1) => {
                let value = line.find(INPUT_VALUE)?;
                let typ = line.find(INPUT_TYPE)?;
                if typ < value || !line[..typ].ends_with(", ") {
                    return None;
                }
                let end = type_name_end(line, typ)?;
                cuts.push((start + fragment_start(line, value), start + end));
            }
            _ => return None,
        }
        start += line.len() + 1;
    }
    Some(cuts)
}

/// Everything from the first `input_value=` (or `input_type=`) to the end of the last
/// `input_type=<name>`, or to the end of the text when no type name follows.
fn greedy_cut(text: &str) -> (usize, usize) {
    let first = [text.find(INPUT_VALUE), text.find(INPUT_TYPE)]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(0);
    let end = text
        .rfind(INPUT_TYPE)
        .filter(|&typ| typ >= first)
        .map_or(text.len(), |typ| {
            type_name_end(text, typ).unwrap_or(text.len())
        });
    (fragment_start(text, first), end)
}

/// Where a fragment starting at `key` begins, its `, ` separator included.
fn fragment_start(text: &str, key: usize) -> usize {
    if text[..key].ends_with(", ") {
        key - 2
    } else {
        key
    }
}

/// The end of the type name after `input_type=` at `at`: a Python name (letters,
/// digits, `_`, `.`), followed by `]` or the end of the text.
fn type_name_end(text: &str, at: usize) -> Option<usize> {
    let name = &text[at + INPUT_TYPE.len()..];
    let len = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(name.len());
    let end = at + INPUT_TYPE.len() + len;
    (text[end..].is_empty() || text[end..].starts_with(']')).then_some(end)
}

/// One `UnexpectedArgument` problem per unrecognised key, located under `path`.
fn push_unexpected<'k>(
    out: &mut Vec<Problem>,
    path: &[String],
    keys: impl IntoIterator<Item = &'k str>,
) {
    for key in keys {
        let mut location = path.to_vec();
        location.push(key.to_owned());
        out.push(Problem {
            location,
            kind: ProblemKind::UnexpectedArgument,
        });
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
        // Not JSON after the marker: a message of the text forms, one it cannot
        // classify — a generic problem at the root, its words not kept (V3).
        assert_eq!(
            recognize("Invalid arguments for tool add: not json"),
            Some(vec![Problem::root_other(GENERIC_KIND, REDACTED_MESSAGE)])
        );
        assert_eq!(recognize("Invalid arguments for tool add: "), None);
        assert_eq!(
            recognize("Something: Invalid arguments for tool add: x at a"),
            None
        );
        assert_eq!(recognize(r#"[{"code": 1, "path": []}]"#), None);
    }

    /// What the TypeScript SDK 1.32.2 (server-everything 2026.8.31) and the official
    /// Python SDK (`mcp` 2.3.0) answered, captured from the real servers.
    const EVERYTHING_STRING_FOR_NUMBER: &str = "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received string at a";
    const EVERYTHING_MISSING: &str = "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received undefined at b";
    const MCP_SDK_INT_PARSING: &str = "Error executing tool takes_int: 1 validation error for takes_intArguments\ncount\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='hunter2-secret', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing";
    const MCP_SDK_MISSING: &str = "Error executing tool takes_int: 1 validation error for takes_intArguments\ncount\n  Field required [type=missing, input_value={}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/missing";

    #[test]
    fn reads_the_real_servers_texts() {
        assert_eq!(
            recognize(EVERYTHING_STRING_FOR_NUMBER),
            Some(vec![Problem::invalid_type(["a"], "number")])
        );
        assert_eq!(
            recognize(EVERYTHING_MISSING),
            Some(vec![Problem::missing_argument("b")])
        );
        let problems = recognize(MCP_SDK_INT_PARSING).unwrap();
        assert_eq!(problems, [Problem::invalid_type(["count"], "integer")]);
        assert!(!render_problems("takes_int", &problems).contains("hunter2"));
        assert_eq!(
            recognize(MCP_SDK_MISSING),
            Some(vec![Problem::missing_argument("count")])
        );
    }

    /// zod 4's default locale (the SDK's `<message> at <path>` lines), message by
    /// message: the kind it maps to and what of the message is kept.
    #[test]
    fn classifies_zod_4_messages() {
        let kept = |kind: &str, message: &str| ProblemKind::Other {
            kind: kind.into(),
            message: message.into(),
        };
        let generic = kept(GENERIC_KIND, REDACTED_MESSAGE);
        let cases: Vec<(&str, ProblemKind)> = vec![
            (
                "Invalid input: expected string, received number",
                ProblemKind::InvalidType {
                    expected: "string".into(),
                },
            ),
            (
                "Invalid input: expected int, received string",
                ProblemKind::InvalidType {
                    expected: "integer".into(),
                },
            ),
            (
                "Invalid input: expected object, received undefined",
                ProblemKind::MissingArgument,
            ),
            (
                r#"Invalid option: expected one of "red"|"green""#,
                kept(
                    "invalid_value",
                    r#"Invalid option: expected one of "red"|"green""#,
                ),
            ),
            (
                r#"Invalid input: expected "on""#,
                kept("invalid_value", r#"Invalid input: expected "on""#),
            ),
            (
                "Too small: expected string to have >=3 characters",
                kept(
                    "too_small",
                    "Too small: expected string to have >=3 characters",
                ),
            ),
            (
                "Too big: expected number to be <=10",
                kept("too_big", "Too big: expected number to be <=10"),
            ),
            (
                "Invalid email address",
                kept("invalid_format", "Invalid email address"),
            ),
            (
                r#"Invalid string: must start with "ab""#,
                kept("invalid_format", r#"Invalid string: must start with "ab""#),
            ),
            (
                "Invalid number: must be a multiple of 5",
                kept("not_multiple_of", "Invalid number: must be a multiple of 5"),
            ),
            ("Invalid input", kept("invalid_value", "Invalid input")),
            (
                "Invalid key in record",
                kept("invalid_key", "Invalid key in record"),
            ),
            // Custom messages (refinements, error maps) may say anything: not kept (V3).
            ("hunter2 is not allowed", generic.clone()),
            (
                "Invalid input: expected number, received 'hunter2'",
                generic.clone(),
            ),
            ("Invalid hunter2", generic.clone()),
            ("Too small", generic.clone()),
        ];
        for (message, kind) in cases {
            let text = format!("Invalid arguments for tool t: {message} at items[0].name");
            let problems = from_zod(&text).unwrap();
            assert_eq!(problems.len(), 1, "{message}");
            assert_eq!(problems[0].location, ["items", "0", "name"], "{message}");
            assert_eq!(problems[0].kind, kind, "{message}");
        }
    }

    #[test]
    fn unrecognized_keys_are_unexpected_arguments_for_v4() {
        let text = "MCP error -32602: Input validation error: Invalid arguments for tool t: \
                    Invalid input: expected number, received undefined at count\n\
                    Unrecognized keys: \"cuont\", \"wait_for_previous\"";
        let problems = recognize(text).unwrap();
        assert_eq!(
            problems,
            [
                Problem::missing_argument("count"),
                Problem::unexpected_argument("cuont"),
                Problem::unexpected_argument("wait_for_previous"),
            ]
        );
        let one = "Invalid arguments for tool t: Unrecognized key: \"x\" at options";
        assert_eq!(
            from_zod(one).unwrap(),
            [Problem::unexpected_argument("x").at(["options", "x"])]
        );
    }

    #[test]
    fn reads_zod_3_messages_without_the_received_value() {
        let text = "Invalid arguments for tool t: Required at a\n\
                    Expected number, received string at b\n\
                    Invalid enum value. Expected 'red' | 'green', received 'hunter2' at colour\n\
                    Unrecognized key(s) in object: 'x', 'y'\n\
                    String must contain at least 3 character(s) at name";
        let problems = from_zod(text).unwrap();
        assert_eq!(problems[0], Problem::missing_argument("a"));
        assert_eq!(problems[1], Problem::invalid_type(["b"], "number"));
        assert_eq!(
            problems[2].message(),
            "Invalid enum value. Expected 'red' | 'green'"
        );
        assert_eq!(problems[3], Problem::unexpected_argument("x"));
        assert_eq!(problems[4], Problem::unexpected_argument("y"));
        assert_eq!(problems[5].kind.name(), "too_small");
        assert!(!render_problems("t", &problems).contains("hunter2"));
    }

    /// SDK 2.x: `<path>: <message>` joined by `, ` — which zod's messages hold too.
    #[test]
    fn reads_the_standard_schema_form() {
        let text = "Input validation error: Invalid arguments for tool get-sum: \
                    a: Invalid input: expected number, received string, \
                    b: Invalid input: expected number, received undefined, \
                    Unrecognized keys: \"c\", \"d\", \
                    colour: Invalid option: expected one of \"red\"|\"green\", \
                    items.0.name: Too small: expected string to have >=3 characters";
        let problems = recognize(text).unwrap();
        assert_eq!(
            problems[..4],
            [
                Problem::invalid_type(["a"], "number"),
                Problem::missing_argument("b"),
                Problem::unexpected_argument("c"),
                Problem::unexpected_argument("d"),
            ]
        );
        assert_eq!(problems[4].location, ["colour"]);
        assert_eq!(
            problems[4].message(),
            "Invalid option: expected one of \"red\"|\"green\""
        );
        assert_eq!(problems[5].location, ["items", "0", "name"]);
        assert_eq!(problems.len(), 6);
    }

    #[test]
    fn paths_as_the_sdks_write_them() {
        assert_eq!(
            dotted_path("a.b[0][1].c").unwrap(),
            ["a", "b", "0", "1", "c"]
        );
        assert_eq!(dotted_path("a.0.c").unwrap(), ["a", "0", "c"]);
        for bad in ["", "a b", "[0]", "a[x]", "a[]", "a[0", "'a'", "a:b"] {
            assert_eq!(dotted_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn redacts_values_of_unrecognised_pydantic_texts() {
        let two = "Order failed: 2 validation errors for Order\nqty\n  Input should be a valid integer [type=int_parsing, input_value='S1', input_type=str]\nnote\n  Input should be a valid string [type=string_type, input_value=['S2', 3], input_type=list]";
        assert_eq!(
            redact_input_values(two),
            "Order failed: 2 validation errors for Order\nqty\n  Input should be a valid integer [type=int_parsing]\nnote\n  Input should be a valid string [type=string_type]"
        );
        // A value with a line break (or a key) in it: all from the first value on to
        // the last type name goes.
        let broken =
            "x\n  m [type=t, input_value='a\nS1, input_type=str]\nb', input_type=str]\ntail";
        assert_eq!(redact_input_values(broken), "x\n  m [type=t]\ntail");
        // No type name after a value: to the end.
        assert_eq!(
            redact_input_values("m [type=t, input_value='S1"),
            "m [type=t"
        );
        assert_eq!(
            redact_input_values("m [type=t, input_type=str]"),
            "m [type=t]"
        );
        // A recognised title with such a layout is read as one unreadable problem.
        let title =
            "1 validation error for call[t]\nx\n  m [type=t, input_value='a\nS1', input_type=str]";
        assert_eq!(recognize(title), Some(vec![Problem::invalid_arguments()]));
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

        /// V3 for the text forms: a message the recogniser does not know never
        /// survives, whatever it says and wherever it stands.
        #[test]
        fn no_custom_zod_message_survives(
            body in "[A-Za-z0-9 _\\-\\[\\],.:='\"{}|<>]{0,40}",
            path in "[a-z]{1,8}(\\.[a-z]{1,8}|\\[[0-9]\\]){0,2}",
            standard in any::<bool>(),
        ) {
            let message = format!("S3CR3T{body}");
            let issue = if standard {
                format!("{}: {message}", path.replace('[', ".").replace(']', ""))
            } else {
                format!("{message} at {path}")
            };
            let text = format!("MCP error -32602: Input validation error: Invalid arguments for tool t: Required at a{}{issue}",
                if standard { ", " } else { "\n" });
            let problems = recognize(&text).unwrap();
            let rendered = render_problems("t", &problems);
            prop_assert!(!rendered.contains("S3CR3T"), "{}", rendered);
        }

        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = redact_input_values(&text);
            let _ = recognize(&format!("Invalid arguments for tool t: {text}"));
            let _ = recognize(&text);
            let _ = recognize(&format!("1 validation error for call[t]\n{text}"));
            let _ = recognize(&format!("Invalid arguments for tool t: [{text}"));
        }
    }
}
