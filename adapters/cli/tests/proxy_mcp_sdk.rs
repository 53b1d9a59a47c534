//! `backstop proxy` in front of a server on the official Python SDK (`mcp` 2.3.0 from
//! PyPI, `MCPServer`; `tests/mcp_sdk/probe_server.py`), installed by `.ci/run` into
//! `target/fastmcp-venv`: E2, V1–V3 behind that SDK.
//!
//! The same session runs twice, straight to the server and through the proxy. Locally,
//! without the venv, the test is skipped with a message; with `CI=true` a missing venv
//! fails.

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::Session;

const CAP: usize = 2000;

fn script() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_sdk/probe_server.py");
    path.to_str().unwrap().to_owned()
}

fn call(id: u32, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
}

fn requests() -> Vec<String> {
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}})
        .to_string(),
        // The client lists the tools before it calls one (E8 needs a listing).
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        call(2, "takes_int", json!({"count": 1})),
        call(3, "small", json!({})),
        call(4, "takes_int", json!({"count": "hunter2-secret"})),
        call(5, "takes_int", json!({})),
        call(6, "takes_ints", json!({"count": 1})),
        call(7, "big", json!({"lines": 1000})),
    ]
}

/// The response lines of one session, in request order.
fn session(python: &str, through_proxy: bool) -> Vec<String> {
    let script = script();
    let cap = CAP.to_string();
    let backstop = support::backstop();
    let command: Vec<&str> = if through_proxy {
        let proxy = backstop.to_str().unwrap();
        vec![proxy, "proxy", "--max-bytes", &cap, "--", python, &script]
    } else {
        vec![python, &script]
    };
    let mut session = Session::start(&command);
    let mut answers = Vec::new();
    for (n, request) in requests().into_iter().enumerate() {
        let lines = session.request(&request, &json!(n));
        assert_eq!(lines.len(), 1, "no notifications expected: {lines:?}");
        answers.extend(lines);
        if n == 0 {
            session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        }
    }
    let status = session.finish();
    assert!(status.success(), "{status:?}");
    answers
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

#[test]
fn mcp_sdk_server_behind_the_proxy() {
    let Some(python) = support::venv_python("mcp.server.mcpserver") else {
        support::peer_missing(
            "mcp_sdk_server_behind_the_proxy",
            "the official Python SDK (mcp 2.3.0 in target/fastmcp-venv)",
        );
        return;
    };
    let python = python.to_str().unwrap();
    let direct = session(python, false);
    let proxied = session(python, true);

    // A2: the handshake, the listing and small results pass byte-identical.
    assert_eq!(direct[0], proxied[0], "initialize");
    assert_eq!(direct[1], proxied[1], "tools/list");
    assert_eq!(direct[2], proxied[2], "takes_int");
    assert_eq!(direct[3], proxied[3], "small");
    assert_eq!(
        parse(&proxied[3])["result"]["content"][0]["text"],
        "small and unchanged"
    );

    // The SDK's prefix and pydantic's input_value reach no client (E2, V3);
    // the rejection is V1/V2.
    let said = parse(&direct[4]);
    let text = said["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(
        "Error executing tool takes_int: 1 validation error for takes_intArguments\n"
    ));
    assert!(text.contains("input_value='hunter2-secret'"));
    assert!(!proxied[4].contains("hunter2"), "{}", proxied[4]);
    assert_eq!(
        parse(&proxied[4])["result"],
        json!({"content": [{"type": "text", "text":
            "1 validation error for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]"}],
            "isError": true,
            "_meta": {"error_type": "ValidationError", "expected": true}})
    );
    assert_eq!(
        parse(&proxied[5])["result"]["content"][0]["text"],
        "1 validation error for takes_int\ncount\n  Missing required argument [type=missing_argument]"
    );

    // E8: the SDK answers "Unknown tool: takes_ints" as an isError result.
    assert_eq!(parse(&direct[6])["result"]["isError"], true);
    assert_eq!(
        proxied[6],
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Unknown tool: takes_ints","data":{"suggestion":"Did you mean 'takes_int'?"}}}"#
    );

    // L1–L4: over the cap, the head goes, the tail survives, the result fits.
    let big = parse(&proxied[7]);
    let result = &big["result"];
    assert!(direct[7].len() > 2 * CAP);
    assert!(serde_json::to_vec(result).unwrap().len() <= CAP, "L4");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("line of output\nPROMPT $"),
        "{text:.200}"
    );
}
