//! `backstop proxy` in front of the official `mcp-server-time` (PyPI, pinned in
//! `tests/peers/requirements.txt`, installed by `.ci/run` into `target/fastmcp-venv`):
//! its failures are `isError` results the official Python SDK builds as
//! `Error executing tool <name>: <message>`. Through the proxy the message is the
//! tool's own (SPEC E2), with E3/E4's `_meta`; a success passes byte-identical.
//!
//! Locally, without the venv, the test is skipped with a message; with `CI=true` a
//! missing venv fails.

mod support;

use serde_json::{Value, json};
use support::Session;

fn get_current_time(python: &str, through_proxy: bool, timezone: &str) -> Value {
    let backstop = support::backstop();
    let mut command = Vec::new();
    if through_proxy {
        command.extend([backstop.to_str().unwrap(), "proxy", "--"]);
    }
    command.extend([python, "-m", "mcp_server_time", "--local-timezone", "UTC"]);
    Session::call_once(&command, "get_current_time", json!({"timezone": timezone}))
}

#[test]
fn e2_mcp_server_time_failure_loses_the_sdk_wrapper() {
    let Some(python) = support::venv_python("mcp_server_time") else {
        support::peer_missing(
            "e2_mcp_server_time_failure_loses_the_sdk_wrapper",
            "mcp-server-time (PyPI, in target/fastmcp-venv)",
        );
        return;
    };
    let python = python.to_str().unwrap();
    let direct = get_current_time(python, false, "Mars/Olympus");
    let text = direct["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error executing tool get_current_time: Invalid timezone: "),
        "{direct}"
    );
    let proxied = get_current_time(python, true, "Mars/Olympus");
    assert_eq!(
        proxied,
        json!({"content": [{"type": "text", "text":
            text.strip_prefix("Error executing tool get_current_time: ").unwrap()}],
            "isError": true,
            "_meta": {"error_type": "InternalError", "expected": false}}),
    );
    // A success is not a failure: it passes as the server sent it.
    let proxied = get_current_time(python, true, "UTC");
    assert_eq!(proxied["content"][0]["type"], "text");
    assert!(
        proxied.get("isError").is_none_or(|e| e == false),
        "{proxied}"
    );
    assert!(
        proxied["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"timezone\": \"UTC\"")
    );
}

/// A client that does not wait for its `initialize` to be answered — a script that
/// writes its whole session at once — still gets E8 for a misspelt tool: the proxy
/// lists the tools once the handshake is done and holds the call's answer for it
/// (SPEC R5, E8).
#[test]
fn e8_r5_a_call_sent_before_initialize_is_answered_gets_the_hint() {
    let Some(python) = support::venv_python("mcp_server_time") else {
        support::peer_missing(
            "e8_r5_a_call_sent_before_initialize_is_answered_gets_the_hint",
            "mcp-server-time (PyPI, in target/fastmcp-venv)",
        );
        return;
    };
    let backstop = support::backstop();
    let command = [
        backstop.to_str().unwrap(),
        "proxy",
        "--",
        python.to_str().unwrap(),
        "-m",
        "mcp_server_time",
        "--local-timezone",
        "UTC",
    ];
    let mut session = Session::start(&command);
    let call = |id: u32, tool: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"timezone": "UTC"}}})
        .to_string()
    };
    let script = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}})
        .to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        call(1, "get_curent_time"),
    ];
    for line in &script {
        session.send(line);
    }
    let lines = session.request(&call(2, "get_current_time"), &json!(2));
    let answer_to = |id: u32| {
        lines
            .iter()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {lines:?}"))
    };
    assert_eq!(
        answer_to(1),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602,
            "message": "Unknown tool: get_curent_time",
            "data": {"suggestion": "Did you mean 'get_current_time'?"}}})
    );
    assert!(
        answer_to(2)["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"timezone\": \"UTC\""),
        "{lines:?}"
    );
    assert_eq!(
        lines.len(),
        3,
        "one answer each, the listing's none: {lines:?}"
    );
    assert!(session.finish().success());
}
