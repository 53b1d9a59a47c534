//! Failures of tool calls become error results the model can read (SPEC E1–E8, V1–V6).
//!
//! [`error_result`] turns a [`Failure`] of a *known* tool into an `isError` result: the
//! message as written, the suggestion on its own line, `_meta` with `error_type`,
//! `expected` and `suggestion`. For argument-validation failures it renders the V2 text,
//! places a problem the validator reported at `__root__` where the tool's input schema
//! and the arguments' shapes say it lies ([`ArgumentShapes`](crate::arguments::ArgumentShapes), V2), completes the problem
//! list from what the call gave and what the tool takes (V4), and synthesizes the
//! suggestion naming every unrecognised argument (V4, V5).
//!
//! A tool that does not exist is not a failure of a known tool: [`unknown_tool`] makes
//! the protocol error E8 requires.
//!
//! Nothing here changes the arguments of a call: the call was rejected and is reported
//! as rejected, never retried with an argument dropped or renamed (V6).
//!
//! Cancellation (E9) is not a failure and has no representation here: the core has
//! nothing to convert. Adapters pass a cancelled call through as it was.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::arguments::{CallContext, locate_root_problems};
use crate::failure::{Failure, VALIDATION_ERROR};
use crate::protocol_error::{ProtocolError, code};
use crate::result::{Content, ToolResult};
use crate::suggest::closest;
use crate::validation::{Problem, ProblemKind, render_problems};

/// The scheduling flag some clients leak into batched tool calls (V5).
pub const WAIT_FOR_PREVIOUS: &str = "wait_for_previous";

/// What a failure says, before it is laid out as a result or a log record.
pub(crate) struct Explained {
    /// The message as written, or the V2 text of a validation failure.
    pub text: String,
    /// The suggestion: the synthesized one, then the failure's own.
    pub suggestion: Option<String>,
    /// E3 (V1 for validation failures).
    pub error_type: String,
    /// E4 (V1 for validation failures).
    pub expected: bool,
}

/// The single-segment location of a problem of `kind`, if it is one.
fn named<'a>(problem: &'a Problem, kind: &ProblemKind) -> Option<&'a str> {
    match problem.location.as_slice() {
        [name] if &problem.kind == kind => Some(name),
        _ => None,
    }
}

pub(crate) fn explain(failure: &Failure, call: &CallContext) -> Explained {
    if !failure.is_validation() {
        return Explained {
            text: failure.message().to_owned(),
            suggestion: failure.suggestion().map(str::to_owned),
            error_type: failure.error_type().to_owned(),
            expected: failure.is_expected(),
        };
    }

    // V2: a problem the validator reported at `__root__`, placed where the schema says.
    let own = locate_root_problems(failure.problems(), call);
    let unexpected_listed: HashSet<&str> = own
        .iter()
        .filter_map(|p| named(p, &ProblemKind::UnexpectedArgument))
        .collect();
    let missing_listed: HashSet<&str> = own
        .iter()
        .filter_map(|p| named(p, &ProblemKind::MissingArgument))
        .collect();
    let parameters: Option<HashSet<&str>> = call
        .parameters
        .as_ref()
        .map(|ps| ps.iter().map(String::as_str).collect());
    let given: HashSet<&str> = call.arguments.iter().map(String::as_str).collect();

    // V4: every unrecognised name, in the order given; then those only the problems name.
    let mut unrecognized: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for name in &call.arguments {
        let not_a_parameter = parameters
            .as_ref()
            .is_some_and(|ps| !ps.contains(name.as_str()));
        if (not_a_parameter || unexpected_listed.contains(name.as_str())) && seen.insert(name) {
            unrecognized.push(name);
        }
    }
    for name in own
        .iter()
        .filter_map(|p| named(p, &ProblemKind::UnexpectedArgument))
    {
        if seen.insert(name) {
            unrecognized.push(name);
        }
    }

    let mut problems = own.clone();
    // serde does not say which argument had the wrong type; where the schema did not
    // say either, with one argument given, it can only be that one.
    if let [only] = call.arguments.as_slice() {
        for problem in &mut problems {
            if problem.location.is_empty()
                && matches!(problem.kind, ProblemKind::InvalidType { .. })
            {
                problem.location = vec![only.clone()];
            }
        }
    }
    for &name in &unrecognized {
        if !unexpected_listed.contains(name) {
            problems.push(Problem::unexpected_argument(name));
        }
    }
    if let Some(required) = &call.required {
        let mut added = HashSet::new();
        for name in required {
            let name = name.as_str();
            if !given.contains(name) && !missing_listed.contains(name) && added.insert(name) {
                problems.push(Problem::missing_argument(name));
            }
        }
    }
    if problems.is_empty() {
        problems.push(Problem::invalid_arguments());
    }

    let synthesized = synthesize_suggestion(&unrecognized, call, &given);
    let suggestion = match (synthesized, failure.suggestion()) {
        (Some(synthesized), Some(own)) => Some(format!("{synthesized} {own}")),
        (synthesized, own) => synthesized.or_else(|| own.map(str::to_owned)),
    };
    Explained {
        text: render_problems(&call.tool, &problems),
        suggestion,
        error_type: VALIDATION_ERROR.to_owned(),
        expected: true,
    }
}

/// The V4/V5 suggestion for these unrecognised names, if there are any.
fn synthesize_suggestion(
    unrecognized: &[&str],
    call: &CallContext,
    given: &HashSet<&str>,
) -> Option<String> {
    if unrecognized.is_empty() {
        return None;
    }
    let mut text = format!(
        "Remove or correct the unrecognized argument(s): {}.",
        unrecognized.join(", ")
    );
    let candidates: Vec<&str> = call
        .parameters
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|p| !given.contains(p))
        .collect();
    for &name in unrecognized {
        if let Some(real) = closest(name, &candidates) {
            let _ = write!(text, " Did you mean '{real}' for '{name}'?");
        }
    }
    if unrecognized.contains(&WAIT_FOR_PREVIOUS) {
        let who = match &call.client {
            Some(client) => format!("your client ({client})"),
            None => "some clients (e.g. Gemini CLI)".to_owned(),
        };
        let _ = write!(
            text,
            " {WAIT_FOR_PREVIOUS} is a scheduling flag {who} can leak into batched tool calls; \
             retry the call without it."
        );
    }
    Some(text)
}

/// The error result of a failed call of a known tool (E1–E7, V1–V6).
///
/// - `isError: true` (E1), one text block: the message exactly as written — for a
///   validation failure its V2 text — then, if there is a suggestion, `\n` and the
///   suggestion (E2). No `structuredContent` (E6).
/// - `_meta`: the failure's own keys (E7), then `error_type` (E3), `expected` (E4),
///   and `suggestion` exactly when there is one (E5) — an own `suggestion` key is
///   removed when there is none. E3–E5 win on a clash.
/// - A validation failure is expected, with `error_type` `ValidationError`, whatever
///   its builder said (V1). A problem at `__root__` is placed at the properties the
///   [input schema](CallContext::input_schema) and the
///   [argument shapes](CallContext::argument_shapes) say (V2), one problem each, or
///   at the `required` names not given for a missing argument. With the tool's
///   parameters known, every argument name
///   given that is not one of them is listed as an unexpected argument (serde stops at
///   the first), and with the required names known, every absent one as missing (V4).
///   The synthesized suggestion names every unrecognised argument, with
///   `Did you mean '<real>' for '<given>'?` for a name within edit distance 2 of a
///   parameter not given, and the `wait_for_previous` note naming the client (V5). It
///   comes before the failure's own suggestion, separated by a space.
/// - A failure that is a protocol error ([`Failure::protocol`]) is converted from what
///   it says ([`Failure::from_protocol_error`]).
///
/// ```
/// use backstop_core::{Failure, call::{CallContext, Problem, error_result}, protocol::ClientInfo};
/// let failure = Failure::validation(vec![Problem::unexpected_argument("wait_for_previous")]);
/// let call = CallContext::new("takes_int")
///     .with_arguments(["count", "wait_for_previous", "countz"])
///     .with_parameters(["count", "counts"])
///     .with_client(ClientInfo::new("probe-client", "9.9"));
/// let result = error_result(&failure, &call);
/// assert!(result.is_error());
/// let text = result.content[0].as_text().unwrap();
/// assert!(text.starts_with("2 validation errors for takes_int\nwait_for_previous\n"));
/// let meta = result.meta.unwrap();
/// assert_eq!(meta["error_type"], "ValidationError");
/// assert_eq!(meta["suggestion"], "Remove or correct the unrecognized argument(s): wait_for_previous, countz. \
///     Did you mean 'counts' for 'countz'? wait_for_previous is a scheduling flag your client \
///     (probe-client 9.9) can leak into batched tool calls; retry the call without it.");
///
/// let plain = error_result(&Failure::unexpected("boom"), &CallContext::new("run"));
/// assert_eq!(serde_json::to_string(&plain).unwrap(),
///     r#"{"_meta":{"error_type":"ToolError","expected":false},"content":[{"text":"boom","type":"text"}],"isError":true}"#);
/// ```
pub fn error_result(failure: &Failure, call: &CallContext) -> ToolResult {
    let Explained {
        mut text,
        suggestion,
        error_type,
        expected,
    } = explain(failure, call);
    let mut meta: Map<String, Value> = failure.meta().clone();
    meta.remove("suggestion");
    meta.insert("error_type".into(), Value::String(error_type));
    meta.insert("expected".into(), Value::Bool(expected));
    if let Some(suggestion) = suggestion {
        text.push('\n');
        text.push_str(&suggestion);
        meta.insert("suggestion".into(), Value::String(suggestion));
    }
    let mut result = ToolResult {
        content: vec![Content::text(text)],
        structured_content: None,
        is_error: Some(true),
        meta: Some(meta),
        result_type: None,
        extra: Map::new(),
    };
    // R4: a result of 2026-07-28 says what it is; earlier revisions have no member.
    call.add_wire_fields(&mut result);
    result
}

/// The protocol error for a `tools/call` of a tool that does not exist (E8): `-32602`,
/// `Unknown tool: <name>`, and `data.suggestion` `Did you mean '<tool>'?` when a known
/// tool's name is within edit distance 2 (the closest, the first on a tie); no `data`
/// otherwise.
///
/// ```
/// use backstop_core::call::unknown_tool;
/// let error = unknown_tool("list_pane", &["list_panes", "send_keys"]);
/// assert_eq!(serde_json::to_string(&error).unwrap(),
///     r#"{"code":-32602,"message":"Unknown tool: list_pane","data":{"suggestion":"Did you mean 'list_panes'?"}}"#);
/// assert_eq!(unknown_tool("rm", &["list_panes"]).data, None);
/// ```
pub fn unknown_tool<'a, I, T>(name: &str, known_tools: I) -> ProtocolError
where
    I: IntoIterator<Item = &'a T>,
    T: AsRef<str> + ?Sized + 'a,
{
    let error = ProtocolError::new(code::INVALID_PARAMS, format!("Unknown tool: {name}"));
    match closest(name, known_tools) {
        Some(tool) => {
            let mut data = Map::new();
            data.insert(
                "suggestion".into(),
                Value::String(format!("Did you mean '{tool}'?")),
            );
            error.with_data(Value::Object(data))
        }
        None => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::Level;
    use crate::session::ClientInfo;
    use serde_json::json;

    fn takes_int() -> CallContext {
        CallContext::new("takes_int")
            .with_parameters(["count"])
            .with_required(["count"])
    }

    fn text(result: &ToolResult) -> &str {
        assert_eq!(result.content.len(), 1);
        result.content[0].as_text().unwrap()
    }

    #[test]
    fn plain_failures_keep_their_message_and_suggestion() {
        let failure = Failure::expected("Pane not found: %99")
            .with_suggestion("Call list_panes to discover valid pane ids.");
        let result = error_result(&failure, &CallContext::new("t"));
        assert_eq!(
            text(&result),
            "Pane not found: %99\nCall list_panes to discover valid pane ids."
        );
        assert_eq!(
            result.meta,
            Some(
                json!({"error_type": "ExpectedToolError", "expected": true,
                       "suggestion": "Call list_panes to discover valid pane ids."})
                .as_object()
                .unwrap()
                .clone()
            )
        );
        assert_eq!(result.structured_content, None);
    }

    #[test]
    fn own_meta_is_kept_and_loses_clashes() {
        let failure = Failure::unexpected("x")
            .with_meta("pane", json!("%1"))
            .with_meta("error_type", json!("Stale"))
            .with_meta("expected", json!("maybe"))
            .with_meta("suggestion", json!("stale"));
        let meta = error_result(&failure, &CallContext::new("t")).meta.unwrap();
        assert_eq!(
            Value::Object(meta),
            json!({"pane": "%1", "error_type": "ToolError", "expected": false})
        );
        let meta = error_result(&failure.with_suggestion("fresh"), &CallContext::new("t"))
            .meta
            .unwrap();
        assert_eq!(meta["suggestion"], "fresh");
    }

    #[test]
    fn validation_lists_every_unrecognised_and_missing_name() {
        // serde stopped at the first unknown field; the call gave two, and no count.
        let failure = Failure::validation(vec![Problem::unexpected_argument("bogus_flag")]);
        let call = takes_int().with_arguments(["bogus_flag", "other"]);
        let result = error_result(&failure, &call);
        assert_eq!(
            text(&result),
            "3 validation errors for takes_int\n\
             bogus_flag\n  Unexpected keyword argument [type=unexpected_keyword_argument]\n\
             other\n  Unexpected keyword argument [type=unexpected_keyword_argument]\n\
             count\n  Missing required argument [type=missing_argument]\n\
             Remove or correct the unrecognized argument(s): bogus_flag, other."
        );
    }

    #[test]
    fn did_you_mean_only_against_parameters_not_given() {
        let call = CallContext::new("t")
            .with_parameters(["count", "cont"])
            .with_arguments(["count", "coutn"]);
        let failure = Failure::validation(Vec::new());
        let meta = error_result(&failure, &call).meta.unwrap();
        assert_eq!(
            meta["suggestion"],
            "Remove or correct the unrecognized argument(s): coutn. Did you mean 'cont' for 'coutn'?"
        );
    }

    #[test]
    fn wait_for_previous_names_the_client_or_not() {
        let failure = Failure::validation(Vec::new());
        let call = takes_int().with_arguments(["count", "wait_for_previous"]);
        let unknown = error_result(&failure, &call).meta.unwrap();
        assert_eq!(
            unknown["suggestion"],
            "Remove or correct the unrecognized argument(s): wait_for_previous. wait_for_previous is a \
             scheduling flag some clients (e.g. Gemini CLI) can leak into batched tool calls; retry \
             the call without it."
        );
        let named = error_result(
            &failure,
            &call.with_client(ClientInfo::new("gemini-cli", "")),
        )
        .meta
        .unwrap();
        assert!(
            named["suggestion"]
                .as_str()
                .unwrap()
                .contains("your client (gemini-cli) can leak")
        );
    }

    #[test]
    fn synthesized_suggestion_comes_before_the_own_one() {
        let failure = Failure::validation(vec![Problem::unexpected_argument("x")])
            .with_suggestion("See the docs.");
        let result = error_result(&failure, &CallContext::new("t"));
        assert_eq!(
            result.meta.unwrap()["suggestion"],
            "Remove or correct the unrecognized argument(s): x. See the docs."
        );
        let own_only = Failure::validation(vec![Problem::missing_argument("x")])
            .with_suggestion("See the docs.");
        let result = error_result(&own_only, &CallContext::new("t"));
        assert!(text(&result).ends_with("[type=missing_argument]\nSee the docs."));
    }

    #[test]
    fn validation_without_problems_renders_the_root() {
        let result = error_result(&Failure::validation(Vec::new()), &CallContext::new("t"));
        assert_eq!(
            text(&result),
            "1 validation error for t\n__root__\n  Invalid arguments [type=invalid_arguments]"
        );
        assert!(!result.meta.unwrap().contains_key("suggestion"));
    }

    #[test]
    fn v1_wins_over_the_builder() {
        let failure = Failure::validation(Vec::new())
            .with_expected(false)
            .with_error_type("Other");
        let meta = error_result(&failure, &CallContext::new("t")).meta.unwrap();
        assert_eq!(
            (&meta["error_type"], &meta["expected"]),
            (&json!("ValidationError"), &json!(true))
        );
    }

    #[test]
    fn duplicates_are_listed_once() {
        let failure = Failure::validation(vec![
            Problem::unexpected_argument("a"),
            Problem::missing_argument("count"),
        ]);
        let call = takes_int()
            .with_arguments(["a", "a", "b", "b"])
            .with_required(["count", "count"]);
        let result = error_result(&failure, &call);
        assert!(text(&result).starts_with("3 validation errors for takes_int\na\n"));
        assert!(text(&result).ends_with("unrecognized argument(s): a, b."));
    }

    #[test]
    fn unknown_parameters_add_nothing_but_listed_names() {
        let failure = Failure::validation(vec![Problem::unexpected_argument("zzz")]);
        let call = CallContext::new("t").with_arguments(["count", "zzz", "yyy"]);
        let result = error_result(&failure, &call);
        assert!(text(&result).starts_with("1 validation error for t\n"));
        assert!(text(&result).ends_with("\nRemove or correct the unrecognized argument(s): zzz."));
    }

    #[test]
    fn protocol_failures_convert_from_what_they_say() {
        let error = ProtocolError::new(-32603, "Internal error: Error calling tool 'x': boom")
            .with_data(json!({"error_type": "RuntimeError", "level": "error"}));
        let result = error_result(&Failure::protocol(error), &CallContext::new("x"));
        assert_eq!(text(&result), "boom");
        assert_eq!(result.meta.unwrap()["error_type"], "RuntimeError");
        let _ = Level::Error;
    }

    #[test]
    fn input_schema_rules() {
        let closed = json!({"properties": {"a": {}, "b": {}}, "additionalProperties": false});
        assert_eq!(
            CallContext::new("t")
                .with_input_schema(&closed)
                .parameters
                .unwrap(),
            ["a", "b"]
        );
        for open in [
            json!({"properties": {"a": {}}, "additionalProperties": true}),
            json!({"properties": {"a": {}}, "additionalProperties": {"type": "string"}}),
            json!({"properties": {"a": {}}, "allOf": []}),
            json!({"type": "object"}),
        ] {
            assert_eq!(
                CallContext::new("t").with_input_schema(&open).parameters,
                None,
                "{open}"
            );
        }
        let none = json!({"type": "object", "properties": {}});
        assert_eq!(
            CallContext::new("t").with_input_schema(&none).parameters,
            Some(vec![])
        );
        assert_eq!(
            CallContext::new("t").with_input_schema(&none).required,
            None
        );
    }

    #[test]
    fn unknown_tool_suggests_the_closest() {
        let tools = ["takes_int", "takes_ints", "small"];
        let error = unknown_tool("take_int", &tools);
        assert_eq!(error.code, -32602);
        assert_eq!(error.message, "Unknown tool: take_int");
        assert_eq!(
            error.data,
            Some(json!({"suggestion": "Did you mean 'takes_int'?"}))
        );
        assert_eq!(unknown_tool("no_such_tool", &tools).data, None);
        let owned: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
        assert!(unknown_tool("smal", &owned).data.is_some());
    }
}
