//! The shaper against the SPEC rules it applies (E1–E9, V1–V5, R3, L1–L3, A2, B1, B2,
//! B5),
//! message by message.

use std::time::{Duration, Instant};

use backstop_core::machine::LISTING_PATIENCE;
use backstop_core::{Limit, ProtocolError};
use backstop_jsonrpc::message::RequestId;
use backstop_jsonrpc::{Forward, Shaper};
use proptest::prelude::*;
use serde_json::{Value, json};

const TOOLS: &str = r#"{"jsonrpc":"2.0","id":"list","result":{"tools":[
    {"name":"takes_int","inputSchema":{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}},
    {"name":"capture_pane","inputSchema":{"type":"object","properties":{"pane":{"type":"string"}}}},
    {"name":"list_panes","inputSchema":{"type":"object","properties":{}}}]}}"#;

/// A shaper that has seen the handshake of `probe-client 9.9` at `revision` and the
/// tool list.
fn shaper_at(revision: &str, limit: Limit) -> Shaper {
    let mut shaper = Shaper::new(limit);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": revision, "capabilities": {},
        "clientInfo": {"name": "probe-client", "version": "9.9"}}});
    client(&mut shaper, &init);
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": revision,
        "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}});
    assert!(server(&mut shaper, &answer.to_string()).is_none());
    client(
        &mut shaper,
        &json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}),
    );
    let tools: String = TOOLS.split('\n').collect();
    assert!(
        server(&mut shaper, &tools).is_none(),
        "A2: tools/list passes"
    );
    shaper
}

fn shaper() -> Shaper {
    shaper_at("2025-06-18", Limit::default())
}

fn client(shaper: &mut Shaper, message: &Value) {
    let bytes = serde_json::to_vec(message).unwrap();
    assert_eq!(
        shaper.client_message(Instant::now(), &bytes),
        Forward::Unchanged
    );
}

fn call(shaper: &mut Shaper, id: Value, tool: &str, arguments: Value) {
    client(
        shaper,
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}),
    );
}

/// What the shaper sends for a server line: `None` when unchanged, else the new line.
fn server(shaper: &mut Shaper, line: &str) -> Option<String> {
    match shaper.server_message(Instant::now(), line.as_bytes()) {
        Forward::Unchanged => None,
        Forward::Rewritten(bytes) => Some(String::from_utf8(bytes).unwrap()),
    }
}

fn rewritten(shaper: &mut Shaper, line: &str) -> String {
    server(shaper, line).expect("the shaper rewrites this response")
}

// ---- E1–E7: failures of known tools --------------------------------------------

#[test]
fn e1_an_error_of_a_known_tool_becomes_an_error_result() {
    let mut shaper = shaper();
    call(
        &mut shaper,
        json!(1),
        "capture_pane",
        json!({"pane": "%99"}),
    );
    let line = rewritten(
        &mut shaper,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: Error calling tool 'capture_pane': Pane not found: %99"}}"#,
    );
    insta::assert_snapshot!(line);
    assert_eq!(shaper.take_log_records().len(), 1, "G1");
}

#[test]
fn e3_e5_read_error_type_expected_and_suggestion_from_data() {
    let mut shaper = shaper();
    call(&mut shaper, json!(2), "capture_pane", json!({}));
    let line = rewritten(
        &mut shaper,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Not found: Pane not found: %99","data":{"error_type":"PaneNotFound","expected":true,"suggestion":"Call list_panes to discover valid pane ids."}}}"#,
    );
    insta::assert_snapshot!(line);
}

#[test]
fn e1_a_pydantic_error_behind_stock_middleware_becomes_v2_without_the_value() {
    let mut shaper = shaper();
    call(
        &mut shaper,
        json!(3),
        "takes_int",
        json!({"count": "hunter2", "wait_for_previous": true}),
    );
    let message = "Internal error: 2 validation errors for call[takes_int]\ncount\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='hunter2', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing\nwait_for_previous\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=True, input_type=bool]";
    let response =
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": message}});
    let line = rewritten(&mut shaper, &response.to_string());
    assert!(!line.contains("hunter2"), "V3: {line}");
    insta::assert_snapshot!(line);
}

#[test]
fn e4_a_derived_failure_from_the_code_alone() {
    let mut shaper = shaper();
    call(&mut shaper, json!(4), "capture_pane", json!({}));
    let line = rewritten(
        &mut shaper,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: pane must look like %N"}}"#,
    );
    let value: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(value["result"]["isError"], true);
    assert_eq!(
        value["result"]["_meta"]["expected"], true,
        "-32602 → expected"
    );
    assert_eq!(
        value["result"]["content"][0]["text"],
        "pane must look like %N"
    );
}

// ---- E2, V1–V5: error results the server built ----------------------------------

#[test]
fn e2_an_error_result_a_server_built_passes_byte_identical() {
    let mut shaper = shaper();
    call(&mut shaper, json!(5), "capture_pane", json!({}));
    let line = r#"{"jsonrpc":"2.0", "id":5, "result":{"isError":true,"content":[{"type":"text","text":"Pane not found: %99"}],"_meta":{"error_type":"PaneNotFound","expected":true}}}"#;
    assert_eq!(server(&mut shaper, line), None);
}

#[test]
fn v1_a_recognised_validation_result_gets_v2_to_v5_and_keeps_its_meta() {
    let mut shaper = shaper();
    call(
        &mut shaper,
        json!(6),
        "takes_int",
        json!({"count": 1, "wait_for_previous": true, "bogus": 2}),
    );
    let text = "2 validation errors for call[takes_int]\nwait_for_previous\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=True, input_type=bool]\nbogus\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=2, input_type=int]";
    let response = json!({"jsonrpc": "2.0", "id": 6, "result": {"isError": true,
        "content": [{"type": "text", "text": text}], "_meta": {"trace": "t-1"}}});
    let line = rewritten(&mut shaper, &response.to_string());
    insta::assert_snapshot!(line);
}

#[test]
fn v1_a_zod_validation_result_of_the_typescript_sdk() {
    let mut shaper = shaper();
    call(
        &mut shaper,
        json!(7),
        "takes_int",
        json!({"count": "SECRET-VALUE"}),
    );
    let text = r#"MCP error -32602: Input validation error: Invalid arguments for tool takes_int: [
  {
    "code": "invalid_type",
    "expected": "number",
    "received": "string",
    "path": [
      "count"
    ],
    "message": "Expected number, received string"
  }
]"#;
    let response = json!({"jsonrpc": "2.0", "id": 7, "result": {"isError": true,
        "content": [{"type": "text", "text": text}]}});
    let line = rewritten(&mut shaper, &response.to_string());
    assert!(!line.contains("SECRET"));
    insta::assert_snapshot!(line);
}

#[test]
fn v1_a_serde_error_of_rmcp() {
    let mut shaper = shaper();
    call(
        &mut shaper,
        json!(8),
        "takes_int",
        json!({"count": "SECRET-VALUE"}),
    );
    let line = rewritten(
        &mut shaper,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"failed to deserialize parameters: invalid type: string \"SECRET-VALUE\", expected i64"}}"#,
    );
    assert!(!line.contains("SECRET"));
    assert!(line.contains(r#""error_type":"ValidationError""#), "{line}");
}

#[test]
fn v2_a_serde_type_error_is_placed_where_the_schema_says() {
    // serde names no field, and two arguments were given: the listed input schema and
    // the shapes of the request's arguments say it is `count`. No value is kept (V3).
    let mut shaper = shaper();
    let failed = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"failed to deserialize parameters: invalid type: string \"SECRET-VALUE\", expected i64"}}],"isError":true}}}}"#
        )
    };
    call(
        &mut shaper,
        json!(9),
        "takes_int",
        json!({"count": "SECRET-VALUE", "verbose": true}),
    );
    let line = rewritten(&mut shaper, &failed(9));
    assert!(!line.contains("SECRET"), "V3: {line}");
    assert!(
        line.contains(
            r#""2 validation errors for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]\nverbose\n"#
        ),
        "V2: {line}"
    );
    // Arguments whose values serde_json cannot read (a number past f64's range): the
    // names still count (V4), and the problem stays at the root.
    let call = br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"takes_int","arguments":{"count":"SECRET-VALUE","big":1e400}}}"#;
    assert_eq!(
        shaper.client_message(Instant::now(), call),
        Forward::Unchanged
    );
    let line = rewritten(&mut shaper, &failed(10));
    assert!(
        line.contains(r#"__root__\n  Input should be a valid integer"#)
            && line.contains(r#"big\n  Unexpected keyword argument"#),
        "{line}"
    );
}

// ---- E8: unknown tools ----------------------------------------------------------

#[test]
fn e8_an_unknown_tool_however_said() {
    let said = [
        r#"{"code":-32001,"message":"Not found: Unknown tool: 'take_int'"}"#,
        r#"{"code":-32602,"message":"Unknown tool: take_int"}"#,
    ];
    let mut lines = Vec::new();
    for (n, error) in said.iter().enumerate() {
        let mut shaper = shaper();
        call(&mut shaper, json!(n), "take_int", json!({}));
        lines.push(rewritten(
            &mut shaper,
            &format!(r#"{{"jsonrpc":"2.0","id":{n},"error":{error}}}"#),
        ));
    }
    let mut shaper = shaper();
    call(&mut shaper, json!(2), "take_int", json!({}));
    lines.push(rewritten(
        &mut shaper,
        r#"{"jsonrpc":"2.0","id":2,"result":{"isError":true,"content":[{"type":"text","text":"Unknown tool: 'take_int'"}]}}"#,
    ));
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(
            line,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{n},"error":{{"code":-32602,"message":"Unknown tool: take_int","data":{{"suggestion":"Did you mean 'takes_int'?"}}}}}}"#
            )
        );
    }
    insta::assert_snapshot!(lines[0]);
}

#[test]
fn e8_only_against_a_whole_current_listing_and_only_for_failures() {
    // A success from a tool the listing lacks passes.
    let mut shaper = shaper();
    call(&mut shaper, json!(1), "hidden", json!({}));
    let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
    assert_eq!(server(&mut shaper, ok), None);

    // A listing with more pages to come is not the whole list.
    let mut shaper = Shaper::default();
    client(
        &mut shaper,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let page = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}"#;
    assert_eq!(server(&mut shaper, page), None);
    call(&mut shaper, json!(2), "b", json!({}));
    let unknown = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: b"}}"#;
    assert_eq!(server(&mut shaper, unknown), None);

    // After list_changed, the old listing is not trusted to call a tool unknown.
    let mut shaper = shaper_at("2025-06-18", Limit::default());
    let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    assert_eq!(server(&mut shaper, changed), None);
    call(&mut shaper, json!(3), "new_tool", json!({}));
    let unknown =
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: new_tool"}}"#;
    assert_eq!(server(&mut shaper, unknown), None);
    // … but its known tools are still known.
    call(&mut shaper, json!(4), "capture_pane", json!({}));
    let failed = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"boom"}}"#;
    assert!(server(&mut shaper, failed).is_some());
}

// ---- R3: resource not found -----------------------------------------------------

#[test]
fn r3_resource_not_found_follows_the_clients_revision() {
    let new_style = r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Resource not found: 'probe://gone'","data":{"uri":"probe://gone"}}}"#;
    let old_style = r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"Resource not found: 'probe://gone'","data":{"uri":"probe://gone"}}}"#;
    let read = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "probe://gone"}});

    let mut shaper = shaper_at("2025-06-18", Limit::default());
    client(&mut shaper, &read);
    assert_eq!(server(&mut shaper, new_style).as_deref(), Some(old_style));
    client(&mut shaper, &read);
    assert_eq!(server(&mut shaper, old_style), None, "already right");

    // 2026-07-28: no handshake; the revision is in the request's _meta.
    let mut shaper = Shaper::default();
    let read_2026 = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {
        "uri": "probe://gone", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    client(&mut shaper, &read_2026);
    assert_eq!(server(&mut shaper, old_style).as_deref(), Some(new_style));

    // Rewritten without data.uri: the request's is added (P1).
    let mut shaper = Shaper::default();
    client(&mut shaper, &read_2026);
    let bare = r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"Resource not found"}}"#;
    assert_eq!(
        server(&mut shaper, bare).as_deref(),
        Some(
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"probe://gone"}}}"#
        )
    );

    // -32602 without data.uri is an invalid-params error, not a not-found.
    let mut shaper = shaper_at("2025-06-18", Limit::default());
    client(&mut shaper, &read);
    let invalid = r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"uri is required"}}"#;
    assert_eq!(server(&mut shaper, invalid), None);
}

// ---- L1–L3: the limit -----------------------------------------------------------

#[test]
fn l3_a_result_over_the_cap_keeps_its_tail() {
    let mut shaper = shaper_at("2025-06-18", Limit::new(400).unwrap());
    call(&mut shaper, json!("big"), "capture_pane", json!({}));
    let output: String = (1..=200).map(|n| format!("line {n}\n")).collect();
    let response = json!({"jsonrpc": "2.0", "id": "big", "result": {"content": [
        {"type": "text", "text": output + "PROMPT $"}], "structuredContent": {"x": 1}}});
    let line = rewritten(&mut shaper, &response.to_string());
    let value: Value = serde_json::from_str(&line).unwrap();
    assert!(
        serde_json::to_vec(&value["result"]).unwrap().len() <= 400,
        "L4"
    );
    insta::assert_snapshot!(line);
}

#[test]
fn l2_a_result_under_the_cap_is_byte_identical_however_written() {
    let mut shaper = shaper_at("2025-06-18", Limit::new(400).unwrap());
    call(&mut shaper, json!(1), "capture_pane", json!({}));
    // Whitespace, key order, escapes a re-serialization would change.
    let line = "{ \"result\" : {\"content\":[{\"text\":\"caf\\u00e9 \\/ ok\",\"type\":\"text\"}], \"isError\" : false},\r\n \"id\":1, \"jsonrpc\":\"2.0\" }";
    assert_eq!(server(&mut shaper, line), None);
}

#[test]
fn l1_only_for_the_configured_tools_and_complete_results() {
    let limit = Limit::new(300).unwrap().only_tools(["capture_pane"]);
    let mut shaper = shaper_at("2025-06-18", limit);
    let big = "x".repeat(1000);
    call(&mut shaper, json!(1), "list_panes", json!({}));
    let response =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": big}]}});
    assert_eq!(server(&mut shaper, &response.to_string()), None);
    call(&mut shaper, json!(2), "capture_pane", json!({}));
    let pending = json!({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "input_required",
        "content": [{"type": "text", "text": big}]}});
    assert_eq!(server(&mut shaper, &pending.to_string()), None, "L1");
}

// ---- A2, E9, B1, B2 ------------------------------------------------------------

#[test]
fn a2_batches_are_shaped_element_by_element() {
    let mut shaper = shaper();
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "capture_pane"}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capture_pane"}},
        {"jsonrpc": "2.0", "method": "notifications/progress"}
    ]);
    assert!(
        shaper
            .client_message(Instant::now(), &serde_json::to_vec(&batch).unwrap())
            .is_unchanged()
    );
    assert_eq!(shaper.pending().len(), 2);
    let answers = r#"[ {"jsonrpc":"2.0","id":1,"result":{"content":[]}} , {"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"boom"}} ]"#;
    let line = rewritten(&mut shaper, answers);
    assert!(
        line.starts_with(r#"[{"jsonrpc":"2.0","id":1,"result":{"content":[]}},{"jsonrpc":"2.0","id":"a","result":"#),
        "the unchanged element keeps its bytes: {line}"
    );
    insta::assert_snapshot!(line);

    let mut fresh = Shaper::default();
    let untouched = r#"[{"jsonrpc":"2.0","method":"notifications/message"} , 3]"#;
    assert_eq!(server(&mut fresh, untouched), None);
}

#[test]
fn a2_ids_are_numbers_or_strings_and_never_confused() {
    let mut shaper = shaper();
    call(&mut shaper, json!("1"), "capture_pane", json!({}));
    let failure = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#;
    assert_eq!(server(&mut shaper, failure), None, "1 is not \"1\"");
    let failure = r#"{"jsonrpc":"2.0","id":"\u0031","error":{"code":-32603,"message":"boom"}}"#;
    let line = rewritten(&mut shaper, failure);
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":"\u0031","result""#),
        "{line}"
    );
}

#[test]
fn a2_what_is_not_a_response_to_a_pending_request_passes() {
    let mut shaper = shaper();
    for line in [
        r#"{"jsonrpc":"2.0","id":77,"method":"sampling/createMessage","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#,
        r#"{"jsonrpc":"2.0","id":404,"error":{"code":-32603,"message":"nobody asked"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        "",
        "not json",
        "[]",
        "42",
        r#"{"id":1,"result":{},"error":{}}"#,
    ] {
        assert_eq!(server(&mut shaper, line), None, "{line}");
    }
    // The client's answer to the server's request is not a request.
    let answer = br#"{"jsonrpc":"2.0","id":77,"result":{"content":{}}}"#;
    assert!(shaper.client_message(Instant::now(), answer).is_unchanged());
    assert_eq!(shaper.pending().len(), 0);
}

#[test]
fn e9_a_cancelled_calls_response_passes_untouched() {
    let mut shaper = shaper();
    call(&mut shaper, json!(5), "capture_pane", json!({}));
    client(
        &mut shaper,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
    );
    let failure = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"cancelled"}}"#;
    assert_eq!(server(&mut shaper, failure), None);
    // A server that says so itself.
    call(&mut shaper, json!(6), "capture_pane", json!({}));
    let said = r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32800,"message":"Request cancelled"}}"#;
    assert_eq!(server(&mut shaper, said), None);
}

#[test]
fn b2_the_pending_table_is_bounded_oldest_evicted() {
    let mut shaper = shaper().with_max_pending(3);
    for id in 1..=5 {
        call(&mut shaper, json!(id), "capture_pane", json!({}));
    }
    assert_eq!(shaper.pending().len(), 3);
    let failure =
        |id| format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"boom"}}}}"#);
    assert_eq!(server(&mut shaper, &failure(1)), None, "evicted: passes");
    assert!(server(&mut shaper, &failure(5)).is_some());
}

#[test]
fn pending_requests_are_answered_when_the_server_is_gone() {
    let mut shaper = shaper();
    call(&mut shaper, json!("x"), "capture_pane", json!({}));
    call(&mut shaper, json!(2), "capture_pane", json!({}));
    let lines = shaper.answer_pending(Instant::now(), &ProtocolError::new(-32603, "gone"));
    let lines: Vec<String> = lines
        .into_iter()
        .map(|l| String::from_utf8(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"gone"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"gone"}}"#,
        ]
    );
}

/// B5, at most one answer: the server's answer to a request the shaper answered itself
/// (its transport failed or timed out) is dropped — alone, in a batch (left out of it),
/// with nothing else pending — until the client sends that id again.
#[test]
fn b5_a_late_answer_to_a_request_answered_here_is_dropped() {
    let mut shaper = shaper();
    call(&mut shaper, json!(1), "capture_pane", json!({}));
    call(&mut shaper, json!("two"), "capture_pane", json!({}));
    let timeout = ProtocolError::new(-32603, "timed out");
    assert_eq!(shaper.answer_requests(&["1".into()], &timeout).len(), 1);
    let late = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"late"}}]}}}}"#
        )
    };
    assert_eq!(
        shaper
            .server_route(Instant::now(), late("1").as_bytes())
            .forward,
        None
    );
    let batch = format!("[{},{}]", late("1"), late(r#""two""#));
    let route = shaper.server_route(Instant::now(), batch.as_bytes());
    assert_eq!(
        route.forward,
        Some(Forward::Rewritten(
            format!("[{}]", late(r#""two""#)).into_bytes()
        )),
        "the batch without the late answer"
    );
    assert!(shaper.pending().is_empty());
    // Nothing pending: still read, and dropped; a batch of only such answers too.
    assert_eq!(
        shaper
            .server_route(Instant::now(), late("1").as_bytes())
            .forward,
        None
    );
    let batch = format!("[{}]", late("1"));
    assert_eq!(
        shaper
            .server_route(Instant::now(), batch.as_bytes())
            .forward,
        None
    );
    // The id 1 as a string is another request's; a notification passes.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    for passes in [late(r#""1""#), note.to_owned()] {
        assert_eq!(
            shaper
                .server_route(Instant::now(), passes.as_bytes())
                .forward,
            Some(Forward::Unchanged)
        );
    }
    // The client sends id 1 again: its answer is the server's to give.
    call(&mut shaper, json!(1), "capture_pane", json!({}));
    assert_eq!(
        shaper
            .server_route(Instant::now(), late("1").as_bytes())
            .forward,
        Some(Forward::Unchanged)
    );
    // Answered here when the server is gone, too.
    call(&mut shaper, json!(3), "capture_pane", json!({}));
    assert_eq!(shaper.answer_pending(Instant::now(), &timeout).len(), 1);
    assert_eq!(
        shaper
            .server_route(Instant::now(), late("3").as_bytes())
            .forward,
        None
    );
}

#[test]
fn the_value_api_agrees_with_the_bytes_api() {
    let mut shaper = shaper();
    shaper.client_value(
        Instant::now(),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "capture_pane"}}),
    );
    let sent = shaper.server_value(
        Instant::now(),
        json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": -32603, "message": "Internal error: boom"}}),
    );
    assert_eq!(sent["result"]["content"][0]["text"], "boom");
    let untouched = json!({"jsonrpc": "2.0", "id": 2, "result": {}});
    assert_eq!(
        shaper.server_value(Instant::now(), untouched.clone()),
        untouched
    );
}

// ---- properties ----------------------------------------------------------------

/// A client request and the server's non-error answer under the cap, each written with
/// arbitrary spacing.
fn exchange() -> impl Strategy<Value = (Value, String)> {
    let id = prop_oneof![
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z0-9\"\\\\é-]{0,6}".prop_map(|s| json!(s)),
    ];
    let method = prop::sample::select(vec![
        "tools/call",
        "tools/list",
        "resources/read",
        "ping",
        "initialize",
    ]);
    let tool = prop::sample::select(vec!["takes_int", "capture_pane", "nope"]);
    let text = "\\PC{0,40}";
    let space = prop::sample::select(vec!["", " ", "\t", "\r", "  \n"]);
    (id, method, tool, text, space).prop_map(|(id, method, tool, text, space)| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"name": tool, "arguments": {"count": 1}, "uri": "u"}});
        let result = match method {
            "tools/list" => json!({"tools": [{"name": tool}]}),
            "initialize" => json!({"protocolVersion": "2025-06-18"}),
            _ => json!({"content": [{"type": "text", "text": text}], "isError": false}),
        };
        let body = serde_json::to_string(&result).unwrap();
        let line = format!(
            "{{{space}\"id\"{space}:{space}{id}{space},\"result\":{space}{body}{space},\"jsonrpc\":\"2.0\"}}"
        );
        (request, line)
    })
}

proptest! {
    /// The transparency property: for any sequence of messages none of whose results
    /// is over the cap or an error, the output is the input, byte for byte.
    #[test]
    fn transparency(exchanges in prop::collection::vec(exchange(), 0..20), answer_in_reverse in any::<bool>()) {
        let mut shaper = Shaper::default();
        for (request, _) in &exchanges {
            shaper.client_value(Instant::now(), request);
        }
        let mut lines: Vec<&String> = exchanges.iter().map(|(_, line)| line).collect();
        if answer_in_reverse {
            lines.reverse();
        }
        for line in lines {
            prop_assert_eq!(shaper.server_message(Instant::now(), line.as_bytes()), Forward::Unchanged, "{}", line);
        }
    }

    /// The same, with the requests and the answers sent as batches.
    #[test]
    fn transparency_of_batches(exchanges in prop::collection::vec(exchange(), 1..12), space in "[ \t]{0,2}") {
        let mut shaper = Shaper::default();
        let requests: Vec<&Value> = exchanges.iter().map(|(request, _)| request).collect();
        prop_assert!(shaper.client_message(Instant::now(), &serde_json::to_vec(&requests).unwrap()).is_unchanged());
        let answers: Vec<&str> = exchanges.iter().map(|(_, line)| line.as_str()).collect();
        let batch = format!("[{space}{}{space}]", answers.join(&format!("{space},{space}")));
        prop_assert_eq!(shaper.server_message(Instant::now(), batch.as_bytes()), Forward::Unchanged, "{}", batch);
    }

    /// B1: any bytes, either way, never panic.
    #[test]
    fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200), text in "\\PC{0,200}") {
        let mut shaper = shaper();
        call(&mut shaper, json!(1), "capture_pane", json!({}));
        let _ = shaper.client_message(Instant::now(), &bytes);
        let _ = shaper.server_message(Instant::now(), &bytes);
        let _ = shaper.server_message(Instant::now(), text.as_bytes());
        let wrapped = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32603,"message":{}}}}}"#,
            serde_json::to_string(&text).unwrap());
        let _ = shaper.server_message(Instant::now(), wrapped.as_bytes());
    }

    /// L2, L4 for any text: a result is byte-identical under the cap and at most the cap over it.
    #[test]
    fn limited_results_fit_the_cap(text in "(\\PC|\n|\u{1b}){0,600}", cap in 200usize..600) {
        let mut shaper = Shaper::new(Limit::new(cap).unwrap());
        call(&mut shaper, json!(1), "t", json!({}));
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}});
        let line = response.to_string();
        let wire = serde_json::to_vec(&response["result"]).unwrap().len();
        match shaper.server_message(Instant::now(), line.as_bytes()) {
            Forward::Unchanged => prop_assert!(wire <= cap),
            Forward::Rewritten(bytes) => {
                prop_assert!(wire > cap);
                let value: Value = serde_json::from_slice(&bytes).unwrap();
                prop_assert!(serde_json::to_vec(&value["result"]).unwrap().len() <= cap);
            }
        }
    }
}

proptest! {
    /// A raw id is the id serde_json reads, whether it takes the short way (plain
    /// digits, a string without escapes) or not: `1` and `1.0`, `"a"` and `"\u0061"`.
    #[test]
    fn a_raw_id_reads_as_serde_json_reads_it(
        id in prop_oneof![
            any::<u64>().prop_map(|n| n.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
            "\\PC{0,12}".prop_map(|text| serde_json::to_string(&text).unwrap()),
            "[a-z ]{0,12}".prop_map(|text| json!(text).to_string().replace('a', "\\u0061")),
            Just("null".to_owned()), Just("true".to_owned()), Just("[1]".to_owned()),
        ]
    ) {
        let raw = serde_json::value::RawValue::from_string(id.clone()).unwrap();
        let value: Value = serde_json::from_str(&id).unwrap();
        prop_assert_eq!(RequestId::from_raw(&raw), RequestId::from_value(&value), "{}", id);
    }

    /// The shaper's own string decoding reads exactly what serde_json reads.
    #[test]
    fn own_decoding_agrees_with_serde_json(text in "(\\PC|\n|\t|\u{1b}|\"|\\\\|/){0,80}") {
        let value = json!({"content": [{"type": "text", "text": text}], "structuredContent": {"t": text}});
        let raw = serde_json::value::RawValue::from_string(value.to_string()).unwrap();
        prop_assert_eq!(backstop_jsonrpc::message::value_from_raw(&raw), Some(value));
        let literal = serde_json::to_string(&text).unwrap();
        let ascii = literal.chars().map(|c| if c.is_ascii() { c.to_string() } else {
            c.encode_utf16(&mut [0; 2]).iter().map(|u| format!("\\u{u:04x}")).collect()
        }).collect::<String>();
        let raw = serde_json::value::RawValue::from_string(format!(r#"{{"content":[{{"text":{ascii}}}]}}"#)).unwrap();
        let decoded = backstop_jsonrpc::message::value_from_raw(&raw).unwrap();
        prop_assert_eq!(&decoded["content"][0]["text"], &json!(text));
    }
}

#[test]
fn b1_a_result_that_is_not_one_passes_as_it_came() {
    let mut shaper = shaper_at("2025-06-18", Limit::new(300).unwrap());
    let big = "x".repeat(1000);
    for (id, result) in [
        (1, json!({"content": big})),
        (2, json!({"content": [big]})),
        (3, json!({"content": [], "isError": "yes"})),
        (4, json!(big)),
    ] {
        call(&mut shaper, json!(id), "capture_pane", json!({}));
        let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        assert_eq!(server(&mut shaper, &line), None, "{line:.80}");
    }
}

// ---- B4 ------------------------------------------------------------------------

/// Ways a string literal's bytes can fail to be JSON that a lenient reader skims over:
/// bytes that are not UTF-8 (a stray continuation byte, an overlong encoding, a
/// surrogate encoded as UTF-8 — CESU-8 —, a sequence cut short, a code point above
/// U+10FFFF) and `\u` escapes of UTF-16 surrogates that are not a high–low pair.
const NOT_JSON_IN_A_STRING: &[&[u8]] = &[
    b"\xff",
    b"\x80",
    b"\xc0\xaf",
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",
    b"\xe2\x82",
    b"\xf4\x90\x80\x80",
    br"\ud800",
    br"\udfff",
    br"\udc00\ud800",
    br"\ud83d\u0041",
    br"\ud83dx",
];

/// A tools/call response over a 300-byte cap with `@` marking the places a string's
/// bytes may be spoiled: the envelope's `jsonrpc`, a member the shaper skips, a result
/// member it keeps, the text it cuts, and a content block's member.
const OVER_THE_CAP: &str = r#"{"jsonrpc":"2.0@","id":1,"trace":"t@","result":{"_meta":{"k":"@"},"content":[{"type":"text","text":"@TEXT","annotations":{"a":"@"}}]}}"#;

fn over_the_cap_spoiled(place: usize, bad: &[u8]) -> Vec<u8> {
    let template =
        OVER_THE_CAP.replace("TEXT", &"line of output\n".repeat(60).replace('\n', "\\n"));
    let mut line = Vec::new();
    for (n, part) in template.split('@').enumerate() {
        if n > 0 && n == place {
            line.extend_from_slice(bad);
        }
        line.extend_from_slice(part.as_bytes());
    }
    line
}

#[test]
fn b4_a_line_that_is_not_json_is_never_rewritten() {
    let places = OVER_THE_CAP.matches('@').count();
    // Unspoiled, the response is over the cap and gets cut: the shaper would rewrite it.
    let mut shaper = shaper_at("2025-06-18", Limit::new(300).unwrap());
    call(&mut shaper, json!(1), "capture_pane", json!({}));
    assert!(
        server(
            &mut shaper,
            std::str::from_utf8(&over_the_cap_spoiled(0, b"")).unwrap()
        )
        .is_some()
    );
    for bad in NOT_JSON_IN_A_STRING {
        for place in 1..=places {
            let line = over_the_cap_spoiled(place, bad);
            assert!(
                serde_json::from_slice::<Value>(&line).is_err(),
                "not JSON: {}",
                String::from_utf8_lossy(&line)
            );
            let mut shaper = shaper_at("2025-06-18", Limit::new(300).unwrap());
            call(&mut shaper, json!(1), "capture_pane", json!({}));
            assert_eq!(
                shaper.server_message(Instant::now(), &line),
                Forward::Unchanged,
                "B4: {bad:?} at place {place} is forwarded as it came"
            );
        }
    }
}

/// Members a server message may have, in any order and any number: ids of every kind
/// (two `id`s included), a `method`, a `result`, an `error`, and a string that is not
/// JSON.
const MEMBERS: &[&[u8]] = &[
    br#""id":1"#,
    br#""id":"a""#,
    br#""id":null"#,
    br#""id":{}"#,
    br#""id":1.0"#,
    br#""method":"x""#,
    br#""method":null"#,
    br#""result":{"content":[{"type":"text","text":"hi"}]}"#,
    br#""result":{"content":"no"}"#,
    br#""result":5"#,
    br#""error":{"code":-32603,"message":"boom"}"#,
    br#""x":"\ud800""#,
    b"\"x\":\"\xff\"",
    br#""jsonrpc":"2.0""#,
];

fn server_message_from(members: &[usize]) -> Vec<u8> {
    let mut message = b"{".to_vec();
    for (n, &member) in members.iter().enumerate() {
        if n > 0 {
            message.push(b',');
        }
        message.extend_from_slice(MEMBERS[member]);
    }
    message.push(b'}');
    message
}

proptest! {
    /// A0, B4: the requests a message answers, as the shaper reads them while it
    /// decides ([`Route::answered`]), are the ones `response_ids` reads — one rule,
    /// strict JSON or not, alone or in a batch, whatever the shaper had pending.
    #[test]
    fn the_route_answers_what_response_ids_reads(
        messages in prop::collection::vec(prop::collection::vec(0..MEMBERS.len(), 0..5), 1..4),
        batch in any::<bool>(),
        pending in any::<bool>(),
    ) {
        let elements: Vec<Vec<u8>> = messages.iter().map(|m| server_message_from(m)).collect();
        let bytes = if batch || elements.len() > 1 {
            [b"[".to_vec(), elements.join(&b","[..]), b"]".to_vec()].concat()
        } else {
            elements[0].clone()
        };
        let mut shaper = shaper();
        if pending {
            call(&mut shaper, json!(1), "t", json!({}));
            call(&mut shaper, json!("a"), "t", json!({}));
        }
        let route = shaper.server_route(Instant::now(), &bytes);
        let expected = backstop_jsonrpc::message::response_ids(&bytes);
        if pending {
            prop_assert!(route.answered.is_some(), "read: {}", String::from_utf8_lossy(&bytes));
        }
        prop_assert_eq!(route.answered.unwrap_or_else(|| expected.clone()), expected);
    }
}

#[test]
fn a0_a_batch_rewritten_or_dropped_still_says_what_it_answers() {
    // Rewritten: the error for a pending call becomes its isError result (E1).
    let mut rewriting = shaper();
    call(&mut rewriting, json!(1), "t", json!({}));
    let batch = br#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}},{"jsonrpc":"2.0","method":"n"}]"#;
    let route = rewriting.server_route(Instant::now(), batch);
    assert!(matches!(route.forward, Some(Forward::Rewritten(_))));
    assert_eq!(route.answered, Some(vec!["1".to_owned()]));
    // Dropped: each element answers a request backstop answered itself (B5).
    let mut dropping = shaper();
    call(&mut dropping, json!(2), "t", json!({}));
    call(&mut dropping, json!("b"), "t", json!({}));
    let error = ProtocolError::new(-32603, "The MCP server did not answer in time");
    dropping.answer_requests(&["2".to_owned(), r#""b""#.to_owned()], &error);
    let late = br#"[{"jsonrpc":"2.0","id":2,"result":{"content":[]}},{"jsonrpc":"2.0","id":"b","result":{"content":[]}}]"#;
    let route = dropping.server_route(Instant::now(), late);
    assert_eq!(route.forward, None);
    assert_eq!(
        route.answered,
        Some(vec!["2".to_owned(), r#""b""#.to_owned()])
    );
}

#[test]
fn b4_an_error_or_a_batch_element_that_is_not_json_is_never_rewritten() {
    for bad in NOT_JSON_IN_A_STRING {
        let splice = |template: &str| -> Vec<u8> {
            let (head, tail) = template.split_once('@').unwrap();
            [head.as_bytes(), bad, tail.as_bytes()].concat()
        };
        // An error the shaper would convert (E1), with a member it skips spoiled.
        let mut first = shaper();
        call(&mut first, json!(1), "capture_pane", json!({}));
        let error =
            splice(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom","x":"@"}}"#);
        assert_eq!(
            first.server_message(Instant::now(), &error),
            Forward::Unchanged,
            "B4: {bad:?}"
        );
        // A batch whose first element the shaper would convert, the second spoiled.
        let mut second = shaper();
        call(&mut second, json!(1), "capture_pane", json!({}));
        let batch = splice(
            r#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}},{"jsonrpc":"2.0","method":"m","params":{"p":"@"}}]"#,
        );
        assert_eq!(
            second.server_message(Instant::now(), &batch),
            Forward::Unchanged,
            "B4: {bad:?}"
        );
    }
}

proptest! {
    /// B4 for any place: spoil an over-the-cap response or a convertible error anywhere
    /// with bytes that are not JSON in a string; whatever is not JSON to serde_json's
    /// strict parser is forwarded as it came.
    #[test]
    fn b4_only_json_is_rewritten(
        at in any::<prop::sample::Index>(),
        bad in prop::sample::select(NOT_JSON_IN_A_STRING),
        error in any::<bool>(),
    ) {
        let valid = if error {
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: boom","data":{"d":"x"}},"x":"y"}"#.to_vec()
        } else {
            over_the_cap_spoiled(0, b"")
        };
        let at = at.index(valid.len() + 1);
        let line = [&valid[..at], bad, &valid[at..]].concat();
        let mut shaper = shaper_at("2025-06-18", Limit::new(300).unwrap());
        call(&mut shaper, json!(1), "capture_pane", json!({}));
        let forward = shaper.server_message(Instant::now(), &line);
        if serde_json::from_slice::<Value>(&line).is_err() {
            prop_assert_eq!(forward, Forward::Unchanged, "{}", String::from_utf8_lossy(&line));
        }
    }
}

// ---- E8 from the first call: the shaper's own listing -----------------------------

const OWN_LIST_1: &str = "backstop/tools/list#1";

/// Route a client message; the message itself always goes on unchanged.
fn route_client(shaper: &mut Shaper, message: &Value) -> Vec<Value> {
    let route = shaper.route_client_message(Instant::now(), &serde_json::to_vec(message).unwrap());
    assert_eq!(
        route.forward,
        Some(Forward::Unchanged),
        "client messages pass"
    );
    assert!(route.to_client.is_empty());
    route
        .to_server
        .iter()
        .map(|bytes| serde_json::from_slice(bytes).unwrap())
        .collect()
}

/// A shaper through the handshake of `probe-client 9.9` on the route API, no listing.
fn routed_session() -> Shaper {
    routed_session_of(Shaper::default())
}

/// [`routed_session`] of `shaper`.
fn routed_session_of(mut shaper: Shaper) -> Shaper {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe-client", "version": "9.9"}}});
    assert!(route_client(&mut shaper, &init).is_empty());
    let answer =
        br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
    assert_eq!(
        shaper.route_server_message(Instant::now(), answer).forward,
        Some(Forward::Unchanged)
    );
    // The server takes requests only after `notifications/initialized`.
    assert!(route_client(&mut shaper, &call_message(json!(99), "takes_int")).is_empty());
    shaper.route_server_message(
        Instant::now(),
        br#"{"jsonrpc":"2.0","id":99,"result":{"content":[]}}"#,
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(route_client(&mut shaper, &initialized).is_empty());
    shaper
}

fn call_message(id: Value, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

fn page(id: &str, tools: &[&str], next: Option<&str>) -> String {
    let tools: Vec<Value> = tools.iter().map(|name| json!({"name": name})).collect();
    let mut result = json!({"tools": tools});
    if let Some(cursor) = next {
        result["nextCursor"] = json!(cursor);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

const UNKNOWN_TAKE_INT: &str =
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: take_int"}}"#;

/// A client that calls before its handshake is done gets E8 all the same: the listing
/// goes once the handshake is done — never before the client's
/// `notifications/initialized` — and the call's answer waits for it (R5).
#[test]
fn r5_e8_a_call_during_the_handshake_is_answered_with_the_listing_s_catalog() {
    let mut shaper = Shaper::default();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe-client", "version": "9.9"}}});
    assert!(route_client(&mut shaper, &init).is_empty());
    assert!(route_client(&mut shaper, &call_message(json!(1), "take_int")).is_empty());
    let answer =
        br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    let route = shaper.route_server_message(Instant::now(), answer);
    assert_eq!(route.forward, Some(Forward::Unchanged));
    assert!(route.to_server.is_empty(), "not initialized yet");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(
        route_client(&mut shaper, &initialized).is_empty(),
        "sent now, the listing would overtake the notification"
    );
    // The next server message — the call's answer — sends the listing and waits for it.
    let held = shaper.route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes());
    assert_eq!(held.forward, None, "held");
    let sent: Vec<Value> = held
        .to_server
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap())
        .collect();
    assert_eq!(
        sent,
        [json!({"jsonrpc": "2.0", "id": OWN_LIST_1, "method": "tools/list"})]
    );
    let last = shaper.route_server_message(
        Instant::now(),
        page(OWN_LIST_1, &["takes_int"], None).as_bytes(),
    );
    assert_eq!(last.forward, None, "the listing is the shaper's own");
    assert_eq!(
        last.to_client,
        [br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: take_int","data":{"suggestion":"Did you mean 'takes_int'?"}}}"#.to_vec()]
    );
    // Given once: the next message passes.
    let ping = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
    assert_eq!(
        shaper.route_server_message(Instant::now(), ping),
        backstop_jsonrpc::Route::forward(Forward::Unchanged)
    );
}

#[test]
fn e8_a_call_before_any_listing_makes_the_shaper_list_the_tools_page_by_page() {
    let mut shaper = routed_session();
    let sent = route_client(&mut shaper, &call_message(json!(1), "take_int"));
    assert_eq!(
        sent,
        [json!({"jsonrpc": "2.0", "id": OWN_LIST_1, "method": "tools/list"})],
        "its own request, under an id of its own"
    );
    assert_eq!(shaper.pending().len(), 1, "the listing is not the client's");
    // The server answers the call before the listing: queued.
    let held = shaper.route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes());
    assert_eq!(held, backstop_jsonrpc::Route::default());
    // The first page asks for the next one; neither is forwarded.
    let first = shaper.route_server_message(
        Instant::now(),
        page(OWN_LIST_1, &["capture_pane"], Some("p2")).as_bytes(),
    );
    assert_eq!(first.forward, None);
    assert!(first.to_client.is_empty());
    let next: Vec<Value> = first
        .to_server
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap())
        .collect();
    assert_eq!(
        next,
        [
            json!({"jsonrpc": "2.0", "id": "backstop/tools/list#2", "method": "tools/list", "params": {"cursor": "p2"}})
        ]
    );
    let last = shaper.route_server_message(
        Instant::now(),
        page("backstop/tools/list#2", &["takes_int"], None).as_bytes(),
    );
    assert_eq!(last.forward, None);
    assert!(last.to_server.is_empty());
    let released: Vec<String> = last
        .to_client
        .into_iter()
        .map(|b| String::from_utf8(b).unwrap())
        .collect();
    assert_eq!(
        released,
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: take_int","data":{"suggestion":"Did you mean 'takes_int'?"}}}"#
        ],
        "E8 against the whole listing"
    );
    assert!(shaper.catalog().contains("takes_int") && shaper.catalog().contains("capture_pane"));
    // The catalog is complete: the next call lists nothing.
    assert!(route_client(&mut shaper, &call_message(json!(2), "takes_int")).is_empty());
    assert!(shaper.pending().len() == 1);
}

/// B5 with E8: an answer to a request answered here that comes while the shaper's own
/// listing is in flight is held with what came before it, then dropped when the held
/// messages go; the rest go in their order.
#[test]
fn b5_a_late_answer_held_for_the_listing_is_dropped_when_released() {
    let mut shaper = routed_session();
    let listing = route_client(&mut shaper, &call_message(json!(1), "take_int"));
    assert_eq!(listing.len(), 1, "the listing goes first");
    route_client(&mut shaper, &call_message(json!(7), "takes_int"));
    let timeout = ProtocolError::new(-32603, "timed out");
    assert_eq!(shaper.answer_requests(&["7".into()], &timeout).len(), 1);
    let late = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
    for line in [UNKNOWN_TAKE_INT.as_bytes(), late] {
        assert_eq!(
            shaper.route_server_message(Instant::now(), line).forward,
            None,
            "held"
        );
    }
    let done = shaper.route_server_message(
        Instant::now(),
        page(OWN_LIST_1, &["takes_int"], None).as_bytes(),
    );
    assert_eq!(
        done.to_client.len(),
        1,
        "the call's answer, not the late one"
    );
    let answer: Value = serde_json::from_slice(&done.to_client[0]).unwrap();
    assert_eq!(answer["id"], 1);
}

/// B3, B1 while the shaper's own listing is in flight: a long answer being cut is not
/// held for it, nor read whole at its end (it was, three times over, through the
/// gateway) — what waits for the listing goes first, as it came, then the cut; the
/// listing's answer is still the shaper's own.
#[test]
fn b3_a_long_answer_during_the_own_listing_is_cut_unheld_after_what_waits() {
    use backstop_jsonrpc::stream::{MemorySink, ServerStream};
    let mut shaper = routed_session_of(Shaper::new(Limit::new(1_000).unwrap()));
    assert_eq!(
        route_client(&mut shaper, &call_message(json!(1), "take_int")).len(),
        1
    );
    assert!(route_client(&mut shaper, &call_message(json!(2), "logs")).is_empty());
    let waiting = shaper.route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes());
    assert_eq!(waiting.forward, None, "held for the listing");
    let text = "line of output\\n".repeat(200_000);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"content":[{{"type":"text","text":"{text}$ "}}]}}}}"#
    );
    let mut stream = ServerStream::new(64 << 10).unheld_from(0);
    let mut sink = MemorySink::default();
    for chunk in line.as_bytes().chunks(50_000) {
        stream.push(&mut shaper, Instant::now(), chunk, &mut sink);
        assert!(sink.held.len() < 200_000, "B3: held {}", sink.held.len());
    }
    stream.push(&mut shaper, Instant::now(), b"\n", &mut sink);
    assert_eq!(sink.read_whole, 0, "B3: never read whole");
    let sent = String::from_utf8(sink.sent).unwrap();
    let lines: Vec<&str> = sent.lines().collect();
    assert_eq!(lines.len(), 2, "{sent:.300}");
    assert_eq!(
        lines[0], UNKNOWN_TAKE_INT,
        "B1: what waited first, as it came"
    );
    let cut: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(cut["id"], 2);
    assert!(lines[1].len() < 1_100, "L2: the result within the cap");
    assert!(
        cut["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("$ ")
    );
    // The listing's answer, long too (a description of 100 kB), is still the shaper's
    // own: read whole, never sent.
    let description = "d".repeat(100_000);
    let listing = json!({"jsonrpc": "2.0", "id": OWN_LIST_1, "result": {"tools": [
        {"name": "takes_int", "description": description, "inputSchema": {"type": "object"}}]}});
    let mut sink = MemorySink::default();
    stream.push(
        &mut shaper,
        Instant::now(),
        listing.to_string().as_bytes(),
        &mut sink,
    );
    stream.push(&mut shaper, Instant::now(), b"\n", &mut sink);
    assert!(
        sink.sent.is_empty(),
        "the listing's answer is the shaper's own"
    );
    assert_eq!(sink.read_whole, 1, "read whole: the catalog is in it");
}

#[test]
fn e8_own_listing_keeps_the_order_of_everything_the_server_sends_meanwhile() {
    let mut shaper = routed_session();
    route_client(&mut shaper, &call_message(json!(1), "take_int"));
    route_client(
        &mut shaper,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    );
    // Before anything needs the catalog, nothing is held.
    let progress =
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;
    assert_eq!(
        shaper
            .route_server_message(Instant::now(), progress)
            .forward,
        Some(Forward::Unchanged)
    );
    // The call's answer is held, and so is all that comes after it.
    let after: [&[u8]; 3] = [
        UNKNOWN_TAKE_INT.as_bytes(),
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
        br#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    ];
    for line in after {
        assert_eq!(
            shaper.route_server_message(Instant::now(), line).forward,
            None
        );
    }
    let done = shaper.route_server_message(
        Instant::now(),
        page(OWN_LIST_1, &["takes_int"], None).as_bytes(),
    );
    assert_eq!(done.to_client.len(), 3);
    assert!(String::from_utf8_lossy(&done.to_client[0]).contains("Did you mean 'takes_int'?"));
    assert_eq!(done.to_client[1], after[1], "B1: unchanged, in order");
    assert_eq!(done.to_client[2], after[2]);
}

#[test]
fn e8_a_failed_listing_releases_the_queued_answer_as_the_server_gave_it() {
    let mut shaper = routed_session();
    route_client(&mut shaper, &call_message(json!(1), "take_int"));
    assert_eq!(
        shaper
            .route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes())
            .forward,
        None
    );
    let error = format!(
        r#"{{"jsonrpc":"2.0","id":"{OWN_LIST_1}","error":{{"code":-32601,"message":"Method not found"}}}}"#
    );
    let released = shaper.route_server_message(Instant::now(), error.as_bytes());
    assert_eq!(
        released.forward, None,
        "the listing's answer is the shaper's own"
    );
    assert_eq!(
        released.to_client,
        [UNKNOWN_TAKE_INT.as_bytes()],
        "without a catalog: as it came"
    );
    // A server that cannot list is not asked again on every call …
    assert!(route_client(&mut shaper, &call_message(json!(2), "take_int")).is_empty());
    // … until its tool list changes.
    let changed = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    assert_eq!(
        shaper.route_server_message(Instant::now(), changed).forward,
        Some(Forward::Unchanged)
    );
    let sent = route_client(&mut shaper, &call_message(json!(3), "take_int"));
    assert_eq!(sent[0]["id"], "backstop/tools/list#2");
}

#[test]
fn e8_the_listing_refreshes_after_list_changed() {
    let mut shaper = routed_session();
    route_client(&mut shaper, &call_message(json!(1), "a"));
    shaper.route_server_message(Instant::now(), page(OWN_LIST_1, &["a"], None).as_bytes());
    assert_eq!(
        shaper
            .route_server_message(
                Instant::now(),
                br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#
            )
            .forward,
        Some(Forward::Unchanged)
    );
    let changed = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    assert_eq!(
        shaper.route_server_message(Instant::now(), changed).forward,
        Some(Forward::Unchanged)
    );
    let sent = route_client(&mut shaper, &call_message(json!(2), "bb"));
    assert_eq!(
        sent,
        [json!({"jsonrpc": "2.0", "id": "backstop/tools/list#2", "method": "tools/list"})]
    );
    assert_eq!(
        shaper
            .route_server_message(
                Instant::now(),
                br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: bb"}}"#
            )
            .forward,
        None
    );
    let done = shaper.route_server_message(
        Instant::now(),
        page("backstop/tools/list#2", &["b"], None).as_bytes(),
    );
    let e8: Value = serde_json::from_slice(&done.to_client[0]).unwrap();
    assert_eq!(
        e8["error"]["data"]["suggestion"], "Did you mean 'b'?",
        "the new listing"
    );
}

#[test]
fn e8_a_client_without_a_handshake_gets_its_2026_meta_on_the_listing() {
    let mut shaper = Shaper::default();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "2"},
        "progressToken": 7});
    let call = json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call",
        "params": {"name": "take_int", "arguments": {}, "_meta": meta}});
    let sent = route_client(&mut shaper, &call);
    assert_eq!(
        sent,
        [
            json!({"jsonrpc": "2.0", "id": OWN_LIST_1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "2"}}}})
        ],
        "R2/R3: the revision and identity, not the call's progress token"
    );
    // A client with neither a handshake nor the 2026 _meta: the server may not be
    // ready for requests, so the shaper sends none.
    let mut late = Shaper::default();
    assert!(route_client(&mut late, &call_message(json!(1), "take_int")).is_empty());
}

#[test]
fn e8_when_the_server_dies_mid_listing_the_queued_answer_goes_first() {
    let mut shaper = routed_session();
    route_client(&mut shaper, &call_message(json!(1), "take_int"));
    route_client(&mut shaper, &call_message(json!(2), "capture_pane"));
    assert_eq!(
        shaper
            .route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes())
            .forward,
        None
    );
    let lines = shaper.answer_pending(Instant::now(), &ProtocolError::new(-32603, "gone"));
    let lines: Vec<String> = lines
        .into_iter()
        .map(|l| String::from_utf8(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            UNKNOWN_TAKE_INT,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"gone"}}"#,
        ],
        "the queued answer as it came, then the pending request; never the listing"
    );
}

/// B1: a server that leaves backstop's listing unanswered holds the client's answers
/// for [`LISTING_PATIENCE`] and no longer: then they go on as the server gave them, and
/// the listing's late answer is still the shaper's own.
#[test]
fn b1_holding_for_the_listing_ends_when_its_patience_does() {
    let mut shaper = routed_session();
    let sent = Instant::now();
    route_client(&mut shaper, &call_message(json!(1), "take_int"));
    let route = shaper.route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes());
    assert_eq!(route.forward, None, "held for the listing");
    let due = shaper.poll_timeout().expect("a message waits");
    assert!(due >= sent + LISTING_PATIENCE && due <= Instant::now() + LISTING_PATIENCE);
    assert_eq!(
        shaper.handle_timeout(due - Duration::from_millis(1)),
        None,
        "not yet"
    );
    assert_eq!(
        shaper.handle_timeout(due),
        Some(vec![UNKNOWN_TAKE_INT.as_bytes().to_vec()])
    );
    assert_eq!(shaper.poll_timeout(), None);
    let note = br#"{"jsonrpc":"2.0","method":"notifications/message"}"#;
    assert_eq!(
        shaper.route_server_message(Instant::now(), note).forward,
        Some(Forward::Unchanged)
    );
    let late = shaper.route_server_message(
        Instant::now(),
        page(OWN_LIST_1, &["takes_int"], None).as_bytes(),
    );
    assert_eq!(late, backstop_jsonrpc::Route::default());
}

#[test]
fn e8_holding_is_bounded() {
    let mut shaper = routed_session();
    route_client(&mut shaper, &call_message(json!(1), "take_int"));
    assert_eq!(
        shaper
            .route_server_message(Instant::now(), UNKNOWN_TAKE_INT.as_bytes())
            .forward,
        None
    );
    let note = br#"{"jsonrpc":"2.0","method":"notifications/message"}"#;
    for _ in 1..backstop_core::machine::MAX_HELD_MESSAGES {
        assert_eq!(
            shaper.route_server_message(Instant::now(), note).forward,
            None
        );
    }
    // One more: the bound is passed; everything goes, in order, undecided.
    let route = shaper.route_server_message(Instant::now(), note);
    assert_eq!(
        route.to_client.len(),
        backstop_core::machine::MAX_HELD_MESSAGES
    );
    assert_eq!(route.to_client[0], UNKNOWN_TAKE_INT.as_bytes());
    assert_eq!(route.forward, Some(Forward::Unchanged));
    // The listing's late answer is still the shaper's own.
    let late = shaper.route_server_message(
        Instant::now(),
        page(OWN_LIST_1, &["takes_int"], None).as_bytes(),
    );
    assert_eq!(late, backstop_jsonrpc::Route::default());
    assert!(shaper.catalog().contains("takes_int"));
}

proptest! {
    /// B4's check says yes exactly when serde_json's strict parser does, on the JSON
    /// its lenient skimming accepts: strings made of escapes, surrogate halves in every
    /// order, backslash runs of both parities and bytes that are not UTF-8.
    #[test]
    fn b4_the_check_agrees_with_serde_json(pieces in prop::collection::vec(prop::sample::select(vec![
        r"\u", r"\\", r"\\u", "d83d", "de00", "D800", "dfff", "0041", r"\n", "u", "x", "é", "\u{1F600}",
    ]), 0..12), bad in prop::sample::select(vec![&b""[..], b"\xff", b"\xed\xa0\x80"])) {
        let body = pieces.concat();
        let line = [br#"{"a":""#, body.as_bytes(), bad, br#"","b":1}"#].concat();
        if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
            let strict = serde_json::from_slice::<Value>(&line).is_ok();
            prop_assert_eq!(backstop_jsonrpc::message::strict_json_text(&line).is_some(), strict, "{}", String::from_utf8_lossy(&line));
        }
    }
}

/// A server message that cannot need a change is sent on unread (B3) — except
/// `notifications/tools/list_changed`, which changes what the shaper knows even with
/// nothing pending, however its name is spelt (A2, E8).
#[test]
fn list_changed_counts_with_nothing_pending() {
    let unknown =
        br#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#;
    let call =
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "nope"}});
    let mut listed = shaper();
    client(&mut listed, &call);
    assert!(
        !listed
            .server_message(Instant::now(), unknown)
            .is_unchanged(),
        "E8 against the whole listing"
    );
    for changed in [
        &br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#[..],
        br#"{"jsonrpc":"2.0","method":"notifications/tools/list\u005fchanged"}"#,
    ] {
        let mut shaper = shaper();
        assert!(shaper.pending().is_empty());
        assert!(
            shaper
                .server_message(Instant::now(), changed)
                .is_unchanged()
        );
        client(&mut shaper, &call);
        assert!(
            shaper
                .server_message(Instant::now(), unknown)
                .is_unchanged(),
            "{}: the listing is no longer trusted",
            String::from_utf8_lossy(changed)
        );
    }
}
