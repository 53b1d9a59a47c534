//! zod's issues as the TypeScript SDK writes them (SPEC V1–V3): the JSON list, the
//! `<message> at <path>` lines and the standard-schema `<path>: <message>` form; the
//! messages of zod's default locale mapped to kinds, any other redacted.

use serde_json::Value;

use super::REDACTED_MESSAGE;
use crate::validation::{Problem, ProblemKind};

/// The marker before the TypeScript SDK's list of zod issues.
const ZOD_MARKER: &str = "Invalid arguments for tool ";

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
/// use backstop_core::call::from_zod;
/// use backstop_core::call::Problem;
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
pub(super) fn dotted_path(path: &str) -> Option<Vec<String>> {
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
