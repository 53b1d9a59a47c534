//! One `tools/call`, end to end: the shaping behind [`crate::call`] (see its docs).

use std::borrow::Cow;

use crate::arguments::CallContext;
use crate::error_result::error_result;
use crate::failure::Failure;
use crate::foreign_validation::redact_input_values;
use crate::limit::{HeldInPart, Limit, Limited, Truncation};
use crate::log::LogRecord;
use crate::protocol_error::{ProtocolError, code};
use crate::result::{Content, ToolResult};
use crate::tool_catalog::ToolCatalog;
use crate::validation::{Problem, RMCP_DESERIALIZE_PREFIX};

/// What a tool call produced, as the adapter saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A result the tool (or its framework) built; it may be an `isError` result.
    Result(ToolResult),
    /// A failure: an error the tool returned, or a JSON-RPC error the server sent
    /// (decode it with [`Failure::from_protocol_error`]).
    Failure(Failure),
}

/// What to send for a tool call, and what to log.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    /// The response: a result, or a protocol error — for an unknown tool (E8), or one
    /// that passes as the server sent it (E9, E10; then [`unchanged`](Self::unchanged)).
    pub response: Result<ToolResult, ProtocolError>,
    /// Send what the tool or server answered as it came: nothing was converted, cut or
    /// made up. An adapter that holds the original (bytes, a typed value) sends it.
    pub unchanged: bool,
    /// The log record of a converted failure (G1, G2); `None` when nothing failed.
    pub log: Option<LogRecord>,
    /// What the limit cut, if anything (L12).
    pub truncation: Option<Truncation>,
}

/// The longest first text block [`recognize_failure`] reads: a framework's report of
/// a failure is never longer, and an adapter that streams a result need hold no more
/// of a text to know it is none (SPEC B3).
///
/// ```
/// use backstop_core::{ToolResult, call::{MAX_RECOGNIZED_BYTES, recognize_failure}};
/// let mut result = ToolResult::text(format!("failed to deserialize parameters: {}", "x".repeat(MAX_RECOGNIZED_BYTES)));
/// result.is_error = Some(true);
/// assert!(recognize_failure(&result).is_none());
/// ```
pub const MAX_RECOGNIZED_BYTES: usize = 1 << 20;

/// An argument-validation failure recognised in an `isError` result a framework built,
/// such as rmcp's `failed to deserialize parameters: …` — so that it gets the V2 text
/// without the rejected value (V3), every unrecognised name (V4) and the `_meta` keys.
///
/// ```
/// use backstop_core::{ToolResult, call::recognize_failure};
/// let mut result = ToolResult::text(
///     "failed to deserialize parameters: invalid type: string \"hunter2\", expected i64");
/// result.is_error = Some(true);
/// let failure = recognize_failure(&result).unwrap();
/// assert!(failure.is_validation());
/// assert!(recognize_failure(&ToolResult::text("fine")).is_none());
/// ```
pub fn recognize_failure(result: &ToolResult) -> Option<Failure> {
    recognize_failure_with(result, result.content.first().and_then(Content::as_text))
}

/// [`recognize_failure`] with the text of `result`'s first block given apart: `first`
/// is that text when the first block is a text block, else `None`.
fn recognize_failure_with(result: &ToolResult, first: Option<&str>) -> Option<Failure> {
    if !result.is_error() {
        return None;
    }
    let text = first?;
    if text.len() > MAX_RECOGNIZED_BYTES {
        return None;
    }
    let problems = match crate::foreign_validation::recognize(text) {
        Some(problems) => Some(problems),
        None => text.strip_prefix(RMCP_DESERIALIZE_PREFIX).map(|detail| {
            let problem = Problem::from_serde_message(detail.trim_start())
                .unwrap_or_else(Problem::invalid_arguments);
            vec![problem]
        }),
    };
    let failure = match problems {
        Some(problems) => Failure::validation(problems),
        // An SDK's own failure result (one block, as they build them): the TypeScript
        // SDK's `MCP error <code>: <message>`, classified by the code as the JSON-RPC
        // error it was (E3, E4); the Python SDK's `Error executing tool <name>: ` and
        // fastmcp's `Error calling tool '<name>': `, a fault of the tool (`-32603`).
        // Either way the message loses its wrapping (E2).
        None if result.content.len() == 1 => {
            let code = match crate::prefix::strip_prefixes(text).sdk_code {
                Some(code) => code,
                None if crate::prefix::is_wrapped(text) => code::INTERNAL_ERROR,
                None => return None,
            };
            Failure::from_protocol_error(&ProtocolError::new(code, text))
        }
        None => return None,
    };
    // The result's own `_meta` keys are kept (E7; E3–E5 win when rendered).
    let own_meta = result.meta.iter().flatten();
    Some(own_meta.fold(failure, |failure, (key, value)| {
        failure.with_meta(key.clone(), value.clone())
    }))
}

/// V3's last line of defence: an `isError` result forwarded as it is loses
/// the `input_value=…`/`input_type=…` fragments of any pydantic text in it
/// ([`redact_input_values`]). A result that had some is logged as the failure it is
/// (G1, with the redacted message), which also tells the adapter it changed; one
/// without passes untouched.
fn redacted_error_result(
    mut result: ToolResult,
    call: &CallContext,
) -> (ToolResult, Option<LogRecord>) {
    if !result.is_error() {
        return (result, None);
    }
    let mut changed = false;
    for content in &mut result.content {
        if let Content::Text(block) = content
            && let Cow::Owned(redacted) = redact_input_values(&block.text)
        {
            block.text = redacted;
            changed = true;
        }
    }
    if !changed {
        return (result, None);
    }
    let message = result.content.iter().find_map(Content::as_text);
    let mut failure = Failure::unexpected(message.unwrap_or_default());
    if let Some(error_type) = result.meta.as_ref().and_then(|m| m.get("error_type"))
        && let Some(error_type) = error_type.as_str()
    {
        failure = failure.with_error_type(error_type);
    }
    let log = LogRecord::for_call(&failure, call);
    (result, Some(log))
}

/// V6, opt-in strict mode: a call that gives an argument the tool's schema does not
/// name is rejected before the tool runs. `None` when the call may go ahead (or when
/// the tool's parameters are not known).
///
/// ```
/// use backstop_core::call::{CallContext, check_arguments};
/// let call = CallContext::new("t").with_parameters(["count"]).with_arguments(["count", "cuont"]);
/// assert!(check_arguments(&call).unwrap().is_validation());
/// assert!(check_arguments(&CallContext::new("t").with_arguments(["x"])).is_none());
/// ```
pub fn check_arguments(call: &CallContext) -> Option<Failure> {
    let parameters = call.parameters.as_ref()?;
    let unknown: Vec<Problem> = call
        .arguments
        .iter()
        .filter(|name| !parameters.contains(name))
        .map(|name| Problem::unexpected_argument(name.clone()))
        .collect();
    (!unknown.is_empty()).then(|| Failure::validation(unknown))
}

/// Decide what to send for one `tools/call` (see the [module docs](crate::call)).
///
/// `catalog` is what `tools/list` said (empty: unknown, so no tool is unknown); `call`
/// names the tool, the argument names given and the client. Cancelled calls are not
/// outcomes: the adapter passes them through (E9).
///
/// ```
/// use backstop_core::{ToolCatalog, call::Outcome, shape_tool_call};
/// use backstop_core::{Failure, Limit};
///
/// let catalog = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [{"name": "capture_pane"}]}));
/// let call = catalog.context("capture_pane");
/// let outcome = Outcome::Failure(Failure::expected("Pane not found: %99"));
/// let shaped = shape_tool_call(&catalog, &call, outcome, &Limit::default());
/// let result = shaped.response.unwrap();
/// assert!(result.is_error());
/// assert_eq!(result.content[0].as_text(), Some("Pane not found: %99"));
/// assert!(shaped.log.is_some());
/// ```
pub fn shape_tool_call(
    catalog: &ToolCatalog,
    call: &CallContext,
    outcome: Outcome,
    limit: &Limit,
) -> Shaped {
    if let Outcome::Failure(failure) = &outcome
        && let Some(error) = passes_as_it_came(failure, catalog, &call.tool)
    {
        return Shaped::passed(error);
    }
    // E8: a call of a tool the catalog does not know that *failed*, however the server
    // said so. A success is the server's word that the tool exists after all.
    let failed = match &outcome {
        Outcome::Failure(_) => true,
        Outcome::Result(result) => result.is_error(),
    };
    if failed && let Err(error) = catalog.check(&call.tool) {
        return Shaped::unknown_tool(error);
    }
    let (result, log) = match outcome {
        Outcome::Failure(failure) => convert(&failure, call),
        Outcome::Result(result) => match recognize_failure(&result) {
            Some(failure) => convert(&failure, call),
            None => redacted_error_result(result, call),
        },
    };
    let limited = limit.apply_with_schema(&call.tool, result, catalog.output_schema(&call.tool));
    Shaped::limited(limited, log)
}

impl Shaped {
    /// The E8 answer.
    pub(crate) fn unknown_tool(error: ProtocolError) -> Self {
        Self {
            response: Err(error),
            unchanged: false,
            log: None,
            truncation: None,
        }
    }

    /// A result: unchanged unless a failure was converted or the limit cut.
    fn result(result: ToolResult, log: Option<LogRecord>, truncation: Option<Truncation>) -> Self {
        Self {
            unchanged: log.is_none() && truncation.is_none(),
            response: Ok(result),
            log,
            truncation,
        }
    }

    /// A result as the limit left it: changed if a failure was converted, the limit
    /// cut, or E12 marked it.
    fn limited(limited: Limited, log: Option<LogRecord>) -> Self {
        let error_lead = limited.error_lead;
        let mut shaped = Self::result(limited.result, log, limited.truncation);
        shaped.unchanged &= !error_lead;
        shaped
    }

    /// A protocol error that passes as the server sent it (E9, E10).
    fn passed(error: ProtocolError) -> Self {
        Self {
            response: Err(error),
            unchanged: true,
            log: None,
            truncation: None,
        }
    }
}

/// A failure that is not the tool's to convert: a protocol error about the request
/// (E10) or a cancellation (E9), or the server's own "unknown tool" for a name the
/// catalog cannot yet judge (its listing is incomplete: E8 is the server's word then).
fn passes_as_it_came(
    failure: &Failure,
    catalog: &ToolCatalog,
    tool: &str,
) -> Option<ProtocolError> {
    let error = failure.as_protocol_error()?;
    let servers_unknown_tool = !catalog.is_complete()
        && !catalog.contains(tool)
        && error.message.to_ascii_lowercase().contains("unknown tool");
    (error.passes_on_tools_call() || servers_unknown_tool).then(|| error.clone())
}

/// [`shape_tool_call`] for a result an adapter holds in part (`held`, SPEC B3): the
/// same decision the whole result would get, or `None` where it cannot be made from
/// what is held (then the adapter reads the result whole). What is not held is only
/// ever in a text longer than [`MAX_RECOGNIZED_BYTES`] (so it is no recognised
/// failure) and over the cap (so a cut drops it); an error result whose strings held
/// in part may quote a rejected input (V3) is read whole, to be redacted.
///
/// In the returned [`Shaped`], `unchanged` means "send the result as it came": the
/// result in it is only what was held.
///
/// ```
/// use backstop_core::{ToolCatalog, call::shape_tool_call_in_part};
/// use backstop_core::limit::HeldInPart;
/// use backstop_core::{Limit, ToolResult, call::CallContext};
/// let tail = "y".repeat(HeldInPart::min_held_bytes(1_000));
/// let held = HeldInPart::default().with_text_head(0, 40_000_000);
/// let shaped = shape_tool_call_in_part(&ToolCatalog::new(), &CallContext::new("t"),
///     ToolResult::text(tail), &held, &Limit::new(1_000).unwrap()).unwrap();
/// let text = shaped.response.unwrap().content[0].as_text().unwrap().to_owned();
/// assert!(text.starts_with("[... truncated 400"));
/// assert_eq!(shaped.truncation.unwrap().original_bytes, 40_000_000 + HeldInPart::min_held_bytes(1_000));
/// ```
pub fn shape_tool_call_in_part(
    catalog: &ToolCatalog,
    call: &CallContext,
    result: ToolResult,
    held: &HeldInPart,
    limit: &Limit,
) -> Option<Shaped> {
    if held.is_whole() {
        return Some(shape_tool_call(
            catalog,
            call,
            Outcome::Result(result),
            limit,
        ));
    }
    if result.is_error()
        && let Err(error) = catalog.check(&call.tool)
    {
        return Some(Shaped::unknown_tool(error));
    }
    if let Some(failure) = recognize_failure(&result) {
        // The first block is held whole, and the failure is all that is sent.
        return Some(shape_tool_call(
            catalog,
            call,
            Outcome::Failure(failure),
            limit,
        ));
    }
    if result.is_error() && held.may_quote_inputs() {
        return None;
    }
    let (result, log) = redacted_error_result(result, call);
    let truncation = match limit.applies_to(&call.tool) {
        true => limit
            .for_tool(&call.tool)
            .truncate_in_part(&result, held, catalog.output_schema(&call.tool))
            .ok()?,
        // E12 marks what the limit leaves alone: the whole result is needed for it.
        false if limit.marks_errors() && result.is_error() => return None,
        false => None,
    };
    match truncation {
        Some(limited) => Some(Shaped::limited(limited, log)),
        // Sent as it came; unless it was redacted, which needs all of it.
        None if log.is_some() => None,
        None => Some(Shaped::result(result, log, None)),
    }
}

/// [`shape_tool_call`] for a result whose text blocks' texts are held elsewhere,
/// borrowed (SPEC B2, L13): `texts[i]` is the text of the `i`-th text block of
/// `shell`, whose own text there is ignored (an adapter leaves it empty). The decision
/// is that of `shape_tool_call` on `Outcome::Result` of the shell with the texts put in
/// ([`ToolResult::with_texts`]); the texts are not copied, so an adapter that holds a
/// tool's 100 MB text pays for the kept tail only ([`Limit::truncate_texts`]).
///
/// The texts are put in only where the decision needs the whole result: an `isError`
/// result whose texts quote a rejected input (V3, redacted), or a result that
/// [`Limit::truncate_texts`] cuts whole (one with `structuredContent`, L15). A
/// recognised failure (V1–V5, [`recognize_failure`]) needs only its first text.
///
/// In the returned [`Shaped`], `unchanged` means "send the result as it came": the
/// result in it may be the shell.
///
/// ```
/// use backstop_core::{ToolCatalog, call::shape_tool_call_texts};
/// use backstop_core::{Limit, ToolResult, call::{CallContext, Content}};
/// let scrollback = "line of output\n".repeat(100_000) + "PROMPT $";
/// let shell = || ToolResult { content: vec![Content::text("")], ..ToolResult::default() };
/// let (catalog, call) = (ToolCatalog::new(), CallContext::new("capture_pane"));
/// let limit = Limit::new(1_000).unwrap();
/// let shaped = shape_tool_call_texts(&catalog, &call, shell(), &[&scrollback], &limit);
/// let text = shaped.response.unwrap().content[0].as_text().unwrap().to_owned();
/// assert!(text.starts_with("[... truncated ") && text.ends_with("PROMPT $"));
/// assert_eq!(shaped.truncation.unwrap().original_bytes, scrollback.len());
/// // Under the cap: nothing to do, the result goes as it came.
/// let shaped = shape_tool_call_texts(&catalog, &call, shell(), &["PROMPT $"], &limit);
/// assert!(shaped.unchanged);
/// ```
pub fn shape_tool_call_texts(
    catalog: &ToolCatalog,
    call: &CallContext,
    shell: ToolResult,
    texts: &[&str],
    limit: &Limit,
) -> Shaped {
    let whole = |shell: ToolResult| {
        let result = shell.with_texts(texts);
        shape_tool_call(catalog, call, Outcome::Result(result), limit)
    };
    if !crate::limit::texts_apart(&shell, texts) {
        return whole(shell);
    }
    if shell.is_error() {
        if let Err(error) = catalog.check(&call.tool) {
            return Shaped::unknown_tool(error);
        }
        let first = shell.content.first().and_then(Content::as_text);
        if let Some(failure) = recognize_failure_with(&shell, first.and(texts.first().copied())) {
            return shape_tool_call(catalog, call, Outcome::Failure(failure), limit);
        }
        if texts
            .iter()
            .any(|text| matches!(redact_input_values(text), Cow::Owned(_)))
        {
            return whole(shell);
        }
    }
    let limited = match limit.applies_to(&call.tool) {
        true => limit.for_tool(&call.tool).truncate_texts(
            &shell,
            texts,
            catalog.output_schema(&call.tool),
        ),
        // E12 marks what the limit leaves alone (a short text: put in whole).
        false if limit.marks_errors() && shell.is_error() => return whole(shell),
        false => None,
    };
    match limited {
        Some(limited) => Shaped::limited(limited, None),
        None => Shaped::result(shell, None, None),
    }
}

fn convert(failure: &Failure, call: &CallContext) -> (ToolResult, Option<LogRecord>) {
    // V3's last line of defence, for a message that quotes pydantic text.
    let redacted = match redact_input_values(failure.message()) {
        Cow::Owned(message) => Some(failure.clone().with_message(message)),
        Cow::Borrowed(_) => None,
    };
    let failure = redacted.as_ref().unwrap_or(failure);
    (
        error_result(failure, call),
        Some(LogRecord::for_call(failure, call)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> ToolCatalog {
        ToolCatalog::from_tools_list(&json!({"tools": [
            {"name": "takes_int", "inputSchema": {"type": "object",
             "properties": {"count": {"type": "integer"}}, "required": ["count"]}},
            {"name": "scrollback", "inputSchema": {"type": "object", "properties": {}}}
        ]}))
    }

    #[test]
    fn e2_a_server_built_result_loses_the_python_sdk_wrapper_only_when_it_has_one() {
        let error_result = |text: &str| {
            let mut result = ToolResult::text(text);
            result.is_error = Some(true);
            result
        };
        let failure = recognize_failure(&error_result(
            "Error executing tool get_time: Invalid timezone",
        ))
        .expect("E2: the wrapper goes");
        assert_eq!(failure.message(), "Invalid timezone");
        assert!(recognize_failure(&error_result("Invalid timezone")).is_none());
    }

    #[test]
    fn unknown_tools_that_fail_are_protocol_errors() {
        let call = catalog().context("take_int");
        let mut said_unknown = ToolResult::text("Unknown tool: take_int");
        said_unknown.is_error = Some(true);
        for outcome in [
            Outcome::Result(said_unknown),
            Outcome::Failure(Failure::unexpected("Unknown tool")),
        ] {
            let shaped = shape_tool_call(&catalog(), &call, outcome, &Limit::default());
            let error = shaped.response.unwrap_err();
            assert_eq!(
                (error.code, error.message.as_str()),
                (-32602, "Unknown tool: take_int")
            );
        }
        // A success says the tool exists after all (a listing can be stale).
        let ok = ToolResult::text("ok");
        let shaped = shape_tool_call(
            &catalog(),
            &call,
            Outcome::Result(ok.clone()),
            &Limit::default(),
        );
        assert_eq!(shaped.response.unwrap(), ok);
    }

    #[test]
    fn a_framework_validation_result_is_rebuilt_without_the_value() {
        let call = catalog()
            .context("takes_int")
            .with_arguments(["count", "bogus"]);
        let mut result = ToolResult::text(
            "failed to deserialize parameters: invalid type: string \"s3cr3t\", expected i64",
        );
        result.is_error = Some(true);
        let shaped = shape_tool_call(
            &catalog(),
            &call,
            Outcome::Result(result),
            &Limit::default(),
        );
        let wire = serde_json::to_string(&shaped.response.unwrap()).unwrap();
        assert!(!wire.contains("s3cr3t"), "V3: {wire}");
        assert!(
            wire.contains("bogus") && wire.contains("ValidationError"),
            "V4: {wire}"
        );
        assert!(shaped.log.unwrap().expected);
    }

    #[test]
    fn converted_errors_are_limited_too() {
        let limit = Limit::new(300).unwrap();
        let call = catalog().context("scrollback");
        let failure = Failure::expected("x".repeat(10_000)).with_suggestion("Try a smaller range.");
        let shaped = shape_tool_call(&catalog(), &call, Outcome::Failure(failure), &limit);
        let result = shaped.response.unwrap();
        assert!(
            serde_json::to_vec(&result).unwrap().len() <= 300,
            "O2: the limit is outside"
        );
        assert!(result.is_error(), "L5");
        assert!(
            result.content[0]
                .as_text()
                .unwrap()
                .ends_with("\nTry a smaller range.")
        );
        assert!(shaped.truncation.is_some());
    }

    #[test]
    fn successes_under_the_cap_pass_unchanged() {
        let result = ToolResult::text("PROMPT $").with_meta("k", json!(1));
        let call = catalog().context("scrollback");
        let shaped = shape_tool_call(
            &catalog(),
            &call,
            Outcome::Result(result.clone()),
            &Limit::default(),
        );
        assert_eq!(shaped.response.unwrap(), result);
        assert!(shaped.log.is_none() && shaped.truncation.is_none());
    }

    #[test]
    fn strict_mode_names_every_unknown_argument() {
        let call = catalog()
            .context("takes_int")
            .with_arguments(["count", "a", "b"]);
        let failure = check_arguments(&call).unwrap();
        assert_eq!(failure.problems().len(), 2);
        assert!(
            check_arguments(&catalog().context("takes_int").with_arguments(["count"])).is_none()
        );
    }
}
