//! Argument-validation failures as other frameworks write them (SPEC V1–V3).
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
//! Stock prefixes before the text are skipped by `strip_prefixes`: `Internal error: `,
//! `Invalid params: `, `Error calling tool '<name>': `, `Error executing tool <name>: `,
//! `MCP error <code>: `, `Input validation error: `, ….
//!
//! For pydantic-looking texts that are none of these, [`redact_input_values`] is the
//! last line of defence: the core applies it to every `isError` text it forwards.
//!
//! ```
//! use backstop_core::call::recognize;
//! use backstop_core::call::Problem;
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
//!
//! Files by job: `pydantic` and `zod` read each framework's texts; `redaction` strips
//! pydantic's `input_value=` fragments from texts no recogniser knows (V3).

mod pydantic;
mod redaction;
mod zod;

pub use pydantic::{from_pydantic, from_pydantic_errors};
pub use redaction::redact_input_values;
pub use zod::{GENERIC_KIND, from_zod};

use crate::prefix::strip_prefixes;
use crate::validation::Problem;

/// The message of a problem whose own message cannot be shown without risking the
/// rejected value (V3).
///
/// ```
/// use backstop_core::call::{REDACTED_MESSAGE, recognize};
/// let text = "1 validation error for call[t]\nx\n  Value error, x=hunter2 is odd \
///     [type=value_error, input_value='hunter2', input_type=str]";
/// assert_eq!(recognize(text).unwrap()[0].message(), REDACTED_MESSAGE);
/// ```
pub const REDACTED_MESSAGE: &str = "Invalid value";

/// The argument-validation problems a framework's failure text describes, or `None`
/// when the text is not one (see the [module docs](crate::call)). No returned problem holds
/// an input value.
///
/// ```
/// let text = "Internal error: 1 validation error for call[t]\nx\n  Missing required argument \
///     [type=missing_argument, input_value={}, input_type=dict]";
/// let problems = backstop_core::call::recognize(text).unwrap();
/// assert_eq!(problems, [backstop_core::call::Problem::missing_argument("x")]);
/// ```
pub fn recognize(text: &str) -> Option<Vec<Problem>> {
    let text = strip_prefixes(text.trim_start()).rest;
    from_pydantic(text).or_else(|| from_zod(text))
}

#[cfg(test)]
mod tests {
    use super::zod::dotted_path;
    use super::*;
    use crate::validation::ProblemKind;
    use crate::validation::render_problems;
    use proptest::prelude::*;

    const FASTMCP_MISSING: &str = "1 validation error for call[takes_int]\ncount\n  Missing required argument [type=missing_argument, input_value={}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument";

    #[test]
    fn v2_says_the_format_pydantic_named_not_a_string() {
        // A caller that sent a string is told what the string should be (V2), through
        // pydantic's structured errors and its text alike; the value never (V3).
        let cases = [
            (
                "url_parsing",
                "Input should be a valid URL, relative URL without a base",
                "URL",
            ),
            (
                "uuid_parsing",
                "Input should be a valid UUID, invalid character",
                "UUID",
            ),
            (
                "date_parsing",
                "Input should be a valid date in the format YYYY-MM-DD",
                "date",
            ),
            (
                "datetime_parsing",
                "Input should be a valid datetime",
                "datetime",
            ),
            (
                "time_parsing",
                "Input should be in a valid time format",
                "time",
            ),
            ("string_type", "Input should be a valid string", "string"),
        ];
        for (kind, msg, expected) in cases {
            let errors =
                [serde_json::json!({"loc": ["x"], "type": kind, "msg": msg, "input": "hunter2"})];
            let problems = from_pydantic_errors(&errors);
            assert_eq!(problems, [Problem::invalid_type(["x"], expected)], "{kind}");
            let text = format!(
                "1 validation error for call[t]\nx\n  {msg} [type={kind}, input_value='hunter2', input_type=str]"
            );
            let rendered = render_problems("t", &recognize(&text).unwrap());
            assert!(
                rendered.contains(&format!(
                    "Input should be a valid {expected} [type=invalid_type]"
                )),
                "{rendered}"
            );
            assert!(!rendered.contains("hunter2"));
        }
    }

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
