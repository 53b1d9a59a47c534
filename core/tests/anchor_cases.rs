//! The reference's failure cases (`data/anchor-wire.jsonl`, copied from the reference
//! wire capture; the limiter's cases live in `anchor_limits.rs`), run through our
//! conversion.
//!
//! Each test builds the failure the reference's probe tool raised, converts it, pins the
//! exact compact wire string in a snapshot, and checks it against the reference line:
//! equal where the reference is right, the fixed behaviour where ANCHOR.md lists a
//! defect (the `Error calling tool …:` prefix, E2; the unknown tool as a result, E8 /
//! defect 5; not-found outside tools as `-32603`, P1 / defects 4 and 6).

use backstop_core::{
    Failure, ProtocolError,
    call::{ArgumentShapes, CallContext, Family, Problem, error_result, unknown_tool},
    protocol::{ClientInfo, Revision, Session},
};
use insta::assert_snapshot;
use serde::Deserialize;
use serde_json::{Value, json};

/// The reference's response to the call with these params.
fn reference(params: Value) -> Value {
    include_str!("data/anchor-wire.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|line| line["call"]["params"] == params)
        .map(|line| serde_json::from_str(line["raw"].as_str().unwrap()).unwrap())
        .unwrap_or_else(|| panic!("no reference line for {params}"))
}

/// The reference's tool result for a call of `tool` with `arguments`.
fn reference_result(tool: &str, arguments: &Value) -> Value {
    reference(json!({"name": tool, "arguments": arguments}))["result"].clone()
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

/// The tools the reference's probe server had.
const PROBE_TOOLS: [&str; 11] = [
    "fail_expected_chained",
    "fail_expected_with_suggestion",
    "fail_unexpected",
    "takes_int",
    "limited_fail",
    "limited_ok",
    "plain",
    "newlines",
    "ansi",
    "emoji",
    "small",
];

const SUGGESTION: &str = "Call list_panes to discover valid pane ids.";

#[derive(Debug, thiserror::Error)]
#[error("pane %99 does not exist")]
struct PaneNotFound;

#[derive(Debug, thiserror::Error)]
#[error("boom")]
struct RuntimeError;

#[test]
fn fail_expected_chained() {
    // E3: the cause's type, one hop. The reference is right: byte-identical result.
    let failure = Failure::expected("Pane not found: %99").caused_by(&PaneNotFound);
    let result = error_result(&failure, &CallContext::new("fail_expected_chained"));
    let wire = serde_json::to_string(&result).unwrap();
    assert_snapshot!("fail_expected_chained", wire);
    let expected = reference_result("fail_expected_chained", &json!({}));
    assert_eq!(wire, serde_json::to_string(&expected).unwrap());
}

#[test]
fn fail_expected_with_suggestion() {
    // E2, E5: the suggestion on its own line and in _meta. The reference is right.
    let failure = Failure::expected("Pane not found: %99").with_suggestion(SUGGESTION);
    let result = error_result(&failure, &CallContext::new("fail_expected_with_suggestion"));
    let wire = serde_json::to_string(&result).unwrap();
    assert_snapshot!("fail_expected_with_suggestion", wire);
    let expected = reference_result("fail_expected_with_suggestion", &json!({}));
    assert_eq!(wire, serde_json::to_string(&expected).unwrap());
}

#[test]
fn fail_unexpected() {
    // E2 fixed: no `Error calling tool 'fail_unexpected': ` prefix. _meta as the reference.
    let failure = Failure::from_error(&RuntimeError);
    let result = error_result(&failure, &CallContext::new("fail_unexpected"));
    let wire = serde_json::to_string(&result).unwrap();
    assert_snapshot!("fail_unexpected", wire);

    let ours: Value = serde_json::from_str(&wire).unwrap();
    let theirs = reference_result("fail_unexpected", &json!({}));
    assert_eq!(ours["_meta"], theirs["_meta"]);
    assert_eq!(ours["isError"], theirs["isError"]);
    assert_eq!(
        text_of(&theirs),
        "Error calling tool 'fail_unexpected': boom"
    );
    assert_eq!(text_of(&ours), "boom");

    // The same failure arriving as the JSON-RPC error a framework wrapped it in.
    let wrapped = ProtocolError::new(
        -32603,
        "Internal error: Error calling tool 'fail_unexpected': boom",
    )
    .with_data(json!({"error_type": "RuntimeError"}));
    let decoded = error_result(
        &Failure::from_protocol_error(&wrapped),
        &CallContext::new("fail_unexpected"),
    );
    assert_eq!(serde_json::to_string(&decoded).unwrap(), wire);
}

/// `takes_int(count: int)`, as an rmcp tool's parameter struct.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TakesInt {
    count: i64,
}

/// What the reference's probe client was.
fn probe_client() -> ClientInfo {
    ClientInfo::new("probe-client", "9.9")
}

/// The call context of `takes_int` with these arguments.
fn takes_int_call(arguments: &Value, client: Option<ClientInfo>) -> CallContext {
    CallContext::new("takes_int")
        .with_arguments(arguments.as_object().unwrap().keys())
        .with_parameters(["count"])
        .with_required(["count"])
        .with_client(client)
}

/// The failure rmcp reports for these arguments: serde's message behind rmcp's prefix,
/// read back into a problem at `location` when serde does not say where.
fn takes_int_failure(arguments: &Value, location: &[&str]) -> Failure {
    let error = serde_json::from_value::<TakesInt>(arguments.clone()).unwrap_err();
    let message = format!("failed to deserialize parameters: {error}");
    let problem = Problem::from_serde_message_at(&message, location.iter().copied())
        .unwrap_or_else(|| panic!("not recognised: {message}"));
    Failure::validation(vec![problem])
}

/// Our takes_int result, checked against the reference: the same `_meta`, and the same
/// text apart from the tool rendering (SPEC V2 says `for <tool>`; the reference wrote
/// `for call[takes_int]`).
fn takes_int_case(arguments: Value, location: &[&str]) -> String {
    let call = takes_int_call(&arguments, Some(probe_client()));
    let result = error_result(&takes_int_failure(&arguments, location), &call);
    let wire = serde_json::to_string(&result).unwrap();
    let ours: Value = serde_json::from_str(&wire).unwrap();
    let theirs = reference_result("takes_int", &arguments);
    assert_eq!(ours["_meta"], theirs["_meta"], "same _meta keys and values");
    assert_eq!(ours["isError"], json!(true));
    assert!(ours.get("structuredContent").is_none());
    let their_text = text_of(&theirs);
    assert!(their_text.contains(" for call[takes_int]\n"));
    let their_lines: Vec<&str> = their_text.lines().collect();
    let our_lines: Vec<&str> = text_of(&ours).lines().collect();
    assert_eq!(our_lines.len(), their_lines.len());
    assert_eq!(
        our_lines[0],
        their_lines[0].replace("call[takes_int]", "takes_int")
    );
    // The problem locations are the reference's.
    for i in (1..our_lines.len()).step_by(2) {
        if !their_lines[i].starts_with("  ") && !their_lines[i].starts_with("Remove") {
            assert_eq!(our_lines[i], their_lines[i]);
        }
    }
    wire
}

#[test]
fn takes_int_given_a_string() {
    // V1, V2, V3: the rejected value is nowhere. Our kind is SPEC's `invalid_type`
    // (the reference's pydantic wrote `int_parsing`); the location is the argument's,
    // given by the adapter since serde's message does not name it.
    let arguments = json!({"count": "not-an-int"});
    let wire = takes_int_case(arguments.clone(), &["count"]);
    assert_snapshot!("takes_int_given_a_string", wire);
    assert!(!wire.contains("not-an-int"));
    let ours: Value = serde_json::from_str(&wire).unwrap();
    let theirs = reference_result("takes_int", &arguments);
    assert!(text_of(&ours).ends_with("\n  Input should be a valid integer [type=invalid_type]"));
    assert!(text_of(&theirs).contains("\n  Input should be a valid integer"));

    // Where serde does not say: with one argument given, it can only be that one …
    let located = error_result(
        &takes_int_failure(&arguments, &[]),
        &takes_int_call(&arguments, Some(probe_client())),
    );
    assert_eq!(
        located.content[0].as_text().unwrap(),
        "1 validation error for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]"
    );
    // … with more, and nothing known of their values, it is the whole argument set …
    let two = json!({"count": "not-an-int", "label": "x"});
    let at_root = error_result(
        &takes_int_failure(&arguments, &[]),
        &takes_int_call(&two, Some(probe_client())),
    );
    assert!(
        at_root.content[0].as_text().unwrap().starts_with(
            "2 validation errors for takes_int\n__root__\n  Input should be a valid integer [type=invalid_type]"
        )
    );
}

#[test]
fn takes_int_given_a_string_and_another_argument() {
    // V2: serde's message names no field, and two arguments were given (the rmcp
    // demo's first screen); the input schema and the arguments' shapes say it is
    // `count`. V3: neither value is anywhere.
    let arguments = json!({"count": "hunter2", "verbose": true});
    let schema = json!({"type": "object", "properties": {"count": {"type": "integer"}},
        "required": ["count"]});
    let shapes = ArgumentShapes::of(arguments.as_object().unwrap());
    let call = CallContext::new("takes_int")
        .with_input_schema(&schema)
        .with_arguments(shapes.names())
        .with_argument_shapes(shapes)
        .with_client(probe_client());
    let result = error_result(&takes_int_failure(&arguments, &[]), &call);
    let wire = serde_json::to_string(&result).unwrap();
    assert_snapshot!("takes_int_given_a_string_and_another_argument", wire);
    assert!(
        !wire.contains("hunter2") && !wire.contains("__root__"),
        "{wire}"
    );
    assert_eq!(
        result.content[0].as_text().unwrap(),
        "2 validation errors for takes_int\n\
         count\n  Input should be a valid integer [type=invalid_type]\n\
         verbose\n  Unexpected keyword argument [type=unexpected_keyword_argument]\n\
         Remove or correct the unrecognized argument(s): verbose."
    );
}

/// Our takes_int text is the reference's, apart from the tool rendering (SPEC V2 says
/// `for <tool>`; the reference wrote `for call[takes_int]`).
fn assert_same_text_as_the_reference(wire: &str, arguments: &Value) {
    let ours: Value = serde_json::from_str(wire).unwrap();
    let theirs = reference_result("takes_int", arguments);
    assert_eq!(
        text_of(&ours),
        text_of(&theirs).replace("call[takes_int]", "takes_int")
    );
}

#[test]
fn takes_int_with_wait_for_previous() {
    // V4, V5: the flag is named, and so is the client (R2). Same text as the reference
    // apart from the tool rendering.
    let arguments = json!({"count": 1, "wait_for_previous": true});
    let wire = takes_int_case(arguments.clone(), &[]);
    assert_snapshot!("takes_int_with_wait_for_previous", wire);
    assert_same_text_as_the_reference(&wire, &arguments);

    // 2026-07-28 has no handshake: the same client, from the request's _meta (R2).
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "probe-client", "version": "9.9"}
    });
    let session = Session::default().or_request_meta(meta.as_object());
    assert_eq!(session.revision(), Revision::V2026_07_28);
    let call = takes_int_call(&arguments, session.client);
    let stateless = error_result(&takes_int_failure(&arguments, &[]), &call);
    assert_eq!(serde_json::to_string(&stateless).unwrap(), wire);
}

#[test]
fn takes_int_with_two_unknown_names() {
    // V4: serde stopped at the first unknown field; both are listed.
    let arguments = json!({"count": 1, "bogus_flag": true, "other": 2});
    let failure = takes_int_failure(&arguments, &[]);
    assert_eq!(
        failure.problems(),
        [Problem::unexpected_argument("bogus_flag")]
    );
    let wire = takes_int_case(arguments.clone(), &[]);
    assert_snapshot!("takes_int_with_two_unknown_names", wire);
    assert_same_text_as_the_reference(&wire, &arguments);
}

#[test]
fn takes_int_with_nothing() {
    let arguments = json!({});
    let wire = takes_int_case(arguments.clone(), &[]);
    assert_snapshot!("takes_int_with_nothing", wire);
    assert_same_text_as_the_reference(&wire, &arguments);
}

#[test]
fn unknown_tool_is_a_protocol_error() {
    // E8, the fix of defect 5: the reference made it an isError result.
    let theirs = reference(json!({"name": "no_such_tool", "arguments": {}}));
    assert_eq!(theirs["result"]["isError"], json!(true));
    assert!(theirs.get("error").is_none());

    let error = unknown_tool("no_such_tool", &PROBE_TOOLS);
    let wire = serde_json::to_string(&error).unwrap();
    assert_snapshot!("unknown_tool", wire);
    assert_eq!(
        wire,
        r#"{"code":-32602,"message":"Unknown tool: no_such_tool"}"#
    );

    // A name within edit distance 2 of a probe tool gets a suggestion.
    let close = serde_json::to_string(&unknown_tool("take_int", &PROBE_TOOLS)).unwrap();
    assert_snapshot!("unknown_tool_close_to_a_known_one", close);
}

/// The session of each revision the resource cases run under, as an adapter would
/// learn it: the handshake (2025-11-25) or the request's _meta (2026-07-28).
fn sessions() -> [(&'static str, Revision); 2] {
    let handshake = Session::from_initialize(&json!({
        "protocolVersion": "2025-11-25",
        "clientInfo": {"name": "probe-client", "version": "9.9"}
    }));
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let stateless = Session::default().or_request_meta(meta.as_object());
    [
        ("2025_11_25", handshake.revision()),
        ("2026_07_28", stateless.revision()),
    ]
}

/// Our error for a resources/read of `uri` failing with `failure`, per revision; checked
/// against the reference's -32603 (defect 4: the family, not the class, decides).
fn resource_case(uri: &str, failure: &Failure, name: &str) {
    let theirs = reference(json!({"uri": uri}));
    assert_eq!(
        theirs["error"]["code"],
        json!(-32603),
        "the reference's defect 4"
    );
    let their_message = theirs["error"]["message"].as_str().unwrap();
    for (revision_name, revision) in sessions() {
        let error = ProtocolError::from_failure(failure, "resources/read", revision, Some(uri));
        let wire = serde_json::to_string(&error).unwrap();
        assert_snapshot!(format!("{name}_{revision_name}"), wire);
        assert_eq!(error.code, revision.resource_not_found_code());
        assert_eq!(
            error.message,
            format!("Resource not found: {}", failure.message())
        );
        assert!(!error.message.contains("Internal error"));
        assert_eq!(error.data.as_ref().unwrap()["uri"], uri);
        // The reference's message held the same text behind its prefixes.
        assert!(their_message.ends_with(failure.message()));
    }
}

#[test]
fn resource_not_found() {
    let failure = Failure::expected("Session not found: missing")
        .with_error_type("SessionNotFound")
        .with_family(Family::NotFound);
    resource_case("probe://sessions/missing", &failure, "resource_not_found");
}

#[test]
fn resource_path_screening_is_not_found() {
    // A denial that hides existence is of the not-found family (P1).
    let failure = Failure::expected("Path not allowed: forbidden")
        .with_error_type("PathNotAllowed")
        .with_family(Family::NotFound);
    resource_case(
        "probe://sessions/forbidden",
        &failure,
        "resource_path_screening",
    );
}

#[test]
fn resource_unknown_uri() {
    // The one case the reference got right under 2025-11-25: -32002 and its message.
    let uri = "probe://nothing/here";
    let theirs = reference(json!({"uri": uri}));
    let failure =
        Failure::expected("Unknown resource: 'probe://nothing/here'").with_family(Family::NotFound);
    for (revision_name, revision) in sessions() {
        let error = ProtocolError::from_failure(&failure, "resources/read", revision, Some(uri));
        let wire = serde_json::to_string(&error).unwrap();
        assert_snapshot!(format!("resource_unknown_uri_{revision_name}"), wire);
        assert_eq!(error.message, theirs["error"]["message"]);
        assert_eq!(error.code, revision.resource_not_found_code());
    }
    let (_, old) = sessions()[0];
    let error = ProtocolError::from_failure(&failure, "resources/read", old, Some(uri));
    assert_eq!(error.code, theirs["error"]["code"]);

    // P2: the reference's error, already a protocol error, passes unchanged; and a
    // message that already says `Resource not found: ` does not get it twice.
    let their_error: ProtocolError = serde_json::from_value(theirs["error"].clone()).unwrap();
    for (_, revision) in sessions() {
        let passed = ProtocolError::from_failure(
            &Failure::protocol(their_error.clone()),
            "resources/read",
            revision,
            Some(uri),
        );
        assert_eq!(serde_json::to_value(&passed).unwrap(), theirs["error"]);
        let prefixed = Failure::expected(their_error.message.clone()).with_family(Family::NotFound);
        let error = ProtocolError::from_failure(&prefixed, "resources/read", revision, Some(uri));
        assert_eq!(error.message, their_error.message);
    }
}
