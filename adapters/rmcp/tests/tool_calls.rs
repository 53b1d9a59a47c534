//! `tools/call` through the wrapper, one rule at a time, as the client receives it
//! over a real rmcp session (in-process duplex). Snapshots hold the client's JSON.

mod support;

use backstop_core::Limit;
use backstop_rmcp::Backstop;
use serde_json::{Value, json};
use support::scrollback_tools::ScrollbackTools;
use support::{call, connect, connect_2026, wire_size};

fn wrapped() -> Backstop<ScrollbackTools> {
    Backstop::new(ScrollbackTools::new())
}

fn text(received: &Value) -> &str {
    received["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {received}"))
}

#[tokio::test]
async fn e1_e4_an_expected_failure_is_an_error_result() {
    let client = connect(wrapped()).await;
    let received = call(&client, "fail", json!({"kind": "expected"})).await;
    insta::assert_json_snapshot!(received);
    assert_eq!(received["result"]["isError"], true, "E1");
    assert_eq!(text(&received), "Pane not found: %99", "E2: as written");
    assert_eq!(
        received["result"]["_meta"]["error_type"], "PaneNotFound",
        "E3"
    );
    assert_eq!(received["result"]["_meta"]["expected"], true, "E4");
}

#[tokio::test]
async fn e2_e5_the_suggestion_follows_the_message() {
    let client = connect(wrapped()).await;
    let received = call(&client, "fail", json!({"kind": "suggestion"})).await;
    insta::assert_json_snapshot!(received);
    assert_eq!(
        text(&received),
        "Pane not found: %99\nCall list_panes to discover valid pane ids."
    );
    assert_eq!(
        received["result"]["_meta"]["suggestion"],
        "Call list_panes to discover valid pane ids."
    );
}

#[tokio::test]
async fn e4_an_unexpected_failure_is_not_expected_and_has_no_suggestion() {
    let client = connect(wrapped()).await;
    let received = call(&client, "fail", json!({"kind": "unexpected"})).await;
    insta::assert_json_snapshot!(received);
    assert_eq!(text(&received), "boom");
    assert_eq!(received["result"]["_meta"]["expected"], false);
    assert!(
        received["result"]["_meta"].get("suggestion").is_none(),
        "E5"
    );
    assert!(received["result"].get("structuredContent").is_none(), "E6");
}

#[tokio::test]
async fn e8_an_unknown_tool_is_a_protocol_error_with_did_you_mean() {
    let client = connect(wrapped()).await;
    let received = call(&client, "take_int", json!({"count": 1})).await;
    insta::assert_json_snapshot!(received);
    assert_eq!(received["error"]["code"], -32602);
    assert_eq!(received["error"]["message"], "Unknown tool: take_int");
    let far = call(&client, "no_such_tool", json!({})).await;
    assert_eq!(far["error"]["message"], "Unknown tool: no_such_tool");
    assert!(far["error"].get("data").is_none());
}

#[tokio::test]
async fn v1_v3_a_bad_argument_is_a_validation_error_without_its_value() {
    let client = connect(wrapped()).await;
    let received = call(&client, "takes_int", json!({"count": "hunter2"})).await;
    insta::assert_json_snapshot!(received);
    let wire = received.to_string();
    assert!(!wire.contains("hunter2"), "V3: {wire}");
    assert_eq!(received["result"]["isError"], true);
    assert_eq!(
        received["result"]["_meta"]["error_type"], "ValidationError",
        "V1"
    );
    assert_eq!(received["result"]["_meta"]["expected"], true, "V1");
    assert!(
        text(&received).starts_with("1 validation error for takes_int\n"),
        "V2"
    );
}

#[tokio::test]
async fn v2_a_wrong_type_is_placed_where_the_schema_says() {
    // serde names no field ("invalid type: string …, expected i64"), and with two
    // arguments given either could be it; the tool's input schema says `count` is the
    // integer (the demo's first screen). The value never appears (V3).
    let client = connect(wrapped()).await;
    let received = call(
        &client,
        "takes_int",
        json!({"count": "hunter2", "verbose": true}),
    )
    .await;
    insta::assert_json_snapshot!(received);
    assert!(
        text(&received).starts_with(
            "2 validation errors for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]\n"
        ),
        "{received}"
    );
    assert!(!text(&received).contains("__root__"), "{received}");
    assert!(!received.to_string().contains("hunter2"), "V3: {received}");
}

#[tokio::test]
async fn v2_a_missing_argument_is_named() {
    let client = connect(wrapped()).await;
    let received = call(&client, "takes_int", json!({})).await;
    insta::assert_json_snapshot!(received);
    assert!(text(&received).contains("count\n  "), "{received}");
    assert!(
        text(&received).contains("[type=missing_argument]"),
        "{received}"
    );
}

#[tokio::test]
async fn v4_every_unrecognised_argument_is_listed_with_did_you_mean() {
    // Strict mode off: serde stops at its first complaint; backstop lists every name
    // the schema does not have, and the close one gets a did-you-mean.
    let client = connect(wrapped()).await;
    let received = call(&client, "takes_int", json!({"cuont": 1, "bogus": 1})).await;
    insta::assert_json_snapshot!(received);
    let suggestion = received["result"]["_meta"]["suggestion"].as_str().unwrap();
    assert_eq!(
        suggestion,
        "Remove or correct the unrecognized argument(s): bogus, cuont. \
         Did you mean 'count' for 'cuont'?"
    );
    assert!(
        text(&received).contains("count\n  Missing required argument"),
        "{received}"
    );
}

#[tokio::test]
async fn v5_wait_for_previous_names_the_client_from_the_handshake() {
    let client = connect(wrapped().strict(true)).await;
    let received = call(
        &client,
        "takes_int",
        json!({"count": 1, "wait_for_previous": true}),
    )
    .await;
    insta::assert_json_snapshot!(received);
    assert!(
        text(&received).contains("your client (probe-client 9.9) can leak"),
        "R2: {received}"
    );
}

#[tokio::test]
async fn v5_wait_for_previous_names_the_client_from_the_request_meta_on_2026_07_28() {
    let client = connect_2026(wrapped().strict(true)).await;
    let received = call(
        &client,
        "takes_int",
        json!({"count": 1, "wait_for_previous": true}),
    )
    .await;
    assert!(
        text(&received).contains("your client (probe-client 9.9) can leak"),
        "R2: {received}"
    );
}

#[tokio::test]
async fn v6_strict_mode_rejects_unnamed_arguments_before_the_tool_runs() {
    let strict = connect(wrapped().strict(true)).await;
    let received = call(&strict, "takes_int", json!({"count": 7, "verbose": true})).await;
    insta::assert_json_snapshot!(received);
    assert_eq!(received["result"]["isError"], true);
    assert!(text(&received).contains("verbose\n  Unexpected keyword argument"));

    // Off by default: the same call runs (serde ignores the extra name).
    let lenient = connect(wrapped()).await;
    let received = call(&lenient, "takes_int", json!({"count": 7, "verbose": true})).await;
    assert_eq!(text(&received), "count = 7");
    // And strict mode lets a clean call through.
    let received = call(&strict, "takes_int", json!({"count": 7})).await;
    assert_eq!(text(&received), "count = 7");
}

#[tokio::test]
async fn l1_l4_scrollback_over_the_cap_keeps_its_tail_under_the_cap() {
    let client = connect(wrapped().with_limit(Limit::new(2_000).unwrap())).await;
    let received = call(&client, "scrollback", json!({"lines": 10_000})).await;
    insta::assert_json_snapshot!(received);
    let result = &received["result"];
    assert!(wire_size(result) <= 2_000, "L4: {}", wire_size(result));
    assert!(text(&received).starts_with("[... truncated "), "L3");
    assert!(
        text(&received).ends_with("line 10000 of output\nPROMPT $"),
        "tail"
    );
    assert_ne!(result["isError"], true, "L5: a success never gains it");
}

#[tokio::test]
async fn l16_a_tool_with_the_head_policy_keeps_its_first_lines() {
    let server = wrapped()
        .with_limit(Limit::new(2_000).unwrap())
        .keep_for("scrollback", backstop_core::limit::Keep::Head);
    let client = connect(server).await;
    let received = call(&client, "scrollback", json!({"lines": 10_000})).await;
    let result = &received["result"];
    assert!(wire_size(result) <= 2_000, "L4: {}", wire_size(result));
    let text = text(&received);
    assert!(
        text.starts_with("line 1 of output\nline 2 of output\n"),
        "{text}"
    );
    assert!(
        text.ends_with(" bytes ...]"),
        "L16: the header line ends the text"
    );
}

#[tokio::test]
async fn l1_the_limit_applies_only_to_the_configured_tools() {
    let limit = Limit::new(2_000).unwrap().only_tools(["other_tool"]);
    let client = connect(wrapped().with_limit(limit)).await;
    let received = call(&client, "scrollback", json!({"lines": 1_000})).await;
    assert!(!text(&received).starts_with("[... truncated"));
    assert!(wire_size(&received["result"]) > 2_000);
}

#[tokio::test]
async fn l2_under_the_cap_the_result_is_unchanged() {
    let client = connect(wrapped()).await;
    let received = call(&client, "scrollback", json!({"lines": 3})).await;
    insta::assert_json_snapshot!(received);
    assert_eq!(
        text(&received),
        "line 1 of output\nline 2 of output\nline 3 of output\nPROMPT $"
    );
}

#[tokio::test]
async fn r3_results_on_2026_07_28_are_shaped_the_same() {
    let client = connect_2026(wrapped()).await;
    let received = call(&client, "fail", json!({"kind": "suggestion"})).await;
    assert_eq!(
        text(&received),
        "Pane not found: %99\nCall list_panes to discover valid pane ids."
    );
    assert_eq!(received["result"]["_meta"]["error_type"], "PaneNotFound");
}
