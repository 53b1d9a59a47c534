//! `backstop proxy` in front of the TypeScript SDK's reference server,
//! `@modelcontextprotocol/server-everything` (pinned in `tests/peers/`, installed by
//! `.ci/run` into `target/node-peers`; SDK 1.32.2, zod 4): E2, V1–V5, E8 and
//! L1–L4 behind the TypeScript SDK.
//!
//! The same session runs twice, straight to the server and through the proxy, so the
//! test shows both what the server says and what the proxy makes of it. Locally,
//! without the npm peers (or `node`), the test is skipped with a message; with
//! `CI=true` a missing peer fails.

mod support;

use serde_json::{Value, json};
use support::Session;

const CAP: usize = 4000;

/// The tail of the long echo, which must survive the cut (L2).
const TAIL: &str = "the last line of a long echo: PROMPT $";

fn call(id: u32, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
}

/// The requests of one session, with their ids.
fn requests() -> Vec<(String, Value)> {
    let long = format!("{}{TAIL}", "0123456789abcdef".repeat(300_000 / 16));
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}})
        .to_string(),
        // The client lists the tools before it calls one (E8 needs a listing).
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        call(2, "get-sum", json!({"a": 1, "b": 2})),
        call(3, "get-sum", json!({"a": "hunter2-secret", "b": 2})),
        // Written by hand: V4's list keeps the order given, and json! sorts keys.
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"wait_for_previous":true,"bogus":2}}}"#.to_owned(),
        call(5, "get-summ", json!({"a": 1, "b": 2})),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "trigger-long-running-operation",
            "arguments": {"duration": 0.3, "steps": 3},
            "_meta": {"progressToken": "progress-1"}}})
        .to_string(),
        call(7, "echo", json!({"message": long})),
        call(8, "echo", json!({"message": 7})),
    ]
    .into_iter()
    .enumerate()
    .map(|(id, line)| (line, json!(id)))
    .collect()
}

/// Every line of one session, grouped by request: the notifications before each
/// response, then the response.
fn session(server: &str, through_proxy: bool) -> Vec<Vec<String>> {
    let cap = CAP.to_string();
    let backstop = support::backstop();
    let command: Vec<&str> = if through_proxy {
        let proxy = backstop.to_str().unwrap();
        vec![proxy, "proxy", "--max-bytes", &cap, "--", server, "stdio"]
    } else {
        vec![server, "stdio"]
    };
    let mut session = Session::start(&command);
    let mut answers = Vec::new();
    for (n, (request, id)) in requests().into_iter().enumerate() {
        answers.push(session.request(&request, &id));
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

fn response(lines: &[String]) -> Value {
    parse(lines.last().unwrap())
}

#[test]
fn server_everything_behind_the_proxy() {
    let Some(server) = support::node_peer("mcp-server-everything") else {
        support::peer_missing(
            "server_everything_behind_the_proxy",
            "@modelcontextprotocol/server-everything (target/node-peers) with node",
        );
        return;
    };
    let server = server.to_str().unwrap();
    let direct = session(server, false);
    let proxied = session(server, true);

    // A2: the handshake (and the notifications around it), the listing and a small
    // result pass byte-identical.
    assert_eq!(direct[0], proxied[0], "initialize");
    assert_eq!(direct[1], proxied[1], "tools/list");
    assert_eq!(direct[2], proxied[2], "a small result");
    assert_eq!(
        response(&proxied[2])["result"]["content"][0]["text"],
        "The sum of 1 and 2 is 3."
    );

    // V1–V3, E2: the SDK's text names the tool behind two prefixes; the proxy's is V2,
    // without the prefixes and without the value.
    let said = response(&direct[3]);
    assert_eq!(
        said["result"]["content"][0]["text"],
        "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: \
         Invalid input: expected number, received string at a"
    );
    let rejected = response(&proxied[3]);
    assert_eq!(
        rejected["result"],
        json!({"content": [{"type": "text", "text":
            "1 validation error for get-sum\na\n  Input should be a valid number [type=invalid_type]"}],
            "isError": true,
            "_meta": {"error_type": "ValidationError", "expected": true}})
    );
    assert!(!proxied[3].concat().contains("hunter2"));

    // V4, V5: zod drops unknown keys without a word; the proxy names every one, and
    // the client that leaked wait_for_previous.
    let missing = response(&proxied[4]);
    let text = missing["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("3 validation errors for get-sum\nb\n  Missing required argument"),
        "{text}"
    );
    assert_eq!(
        missing["result"]["_meta"]["suggestion"],
        "Remove or correct the unrecognized argument(s): wait_for_previous, bogus. \
         wait_for_previous is a scheduling flag your client (probe-client 9.9) can leak \
         into batched tool calls; retry the call without it."
    );

    // E8: the SDK says "MCP error -32602: Tool get-summ not found" in an isError result.
    assert_eq!(response(&direct[5])["result"]["isError"], true);
    assert_eq!(
        proxied[5].last().unwrap(),
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: get-summ","data":{"suggestion":"Did you mean 'get-sum'?"}}}"#
    );

    // Progress notifications and the result after them pass byte-identical.
    assert_eq!(direct[6], proxied[6], "progress");
    let progress = proxied[6]
        .iter()
        .filter(|l| l.contains("notifications/progress"));
    assert_eq!(progress.count(), 3);

    // L1–L4: the ~300 kB echo is cut from the head under the cap; its tail survives.
    assert!(direct[7].last().unwrap().len() > 300_000);
    let echoed = response(&proxied[7]);
    let result = &echoed["result"];
    assert!(serde_json::to_vec(result).unwrap().len() <= CAP, "L4");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with(TAIL),
        "{text:.200}"
    );

    // One more type mismatch, on a string parameter.
    assert_eq!(
        response(&proxied[8])["result"]["content"][0]["text"],
        "1 validation error for echo\nmessage\n  Input should be a valid string [type=invalid_type]"
    );
}

/// The answer to `tasks/result` for a task-augmented call of the reference server's
/// `simulate-research-query` (MCP Tasks, 2025-11-25), in a session of `command`; and
/// the call's own answer (the task's handle).
fn task_result(command: &[&str]) -> (Value, Value) {
    let mut session = Session::start(command);
    session.request(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}})
        .to_string(),
        &json!(0),
    );
    session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "simulate-research-query", "arguments": {"topic": "the tail of a log"},
        "task": {"ttl": 60000}}});
    let handle = response(&session.request(&call.to_string(), &json!(1)));
    let task_id = handle["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
        "params": {"taskId": task_id}});
    let answer = response(&session.request(&result.to_string(), &json!(2)));
    // The server keeps the finished task (its `ttl`) and stays up after stdin ends.
    session.terminate();
    (handle, answer)
}

/// L1 with MCP Tasks: a task's result, delivered as the answer to `tasks/result`, is
/// the tool's result — it is cut to the cap as the call's own would be, its tail kept
/// under the header; the task's handle passes as it came.
#[test]
fn l1_a_task_s_result_is_cut_like_the_call_s_own() {
    let Some(server) = support::node_peer("mcp-server-everything") else {
        support::peer_missing(
            "l1_a_task_s_result_is_cut_like_the_call_s_own",
            "@modelcontextprotocol/server-everything (target/node-peers) with node",
        );
        return;
    };
    let server = server.to_str().unwrap();
    let (direct_handle, direct) = task_result(&[server, "stdio"]);
    let backstop = support::backstop();
    let (handle, shaped) = task_result(&[
        backstop.to_str().unwrap(),
        "proxy",
        "--max-bytes",
        "1000",
        "--",
        server,
        "stdio",
    ]);
    assert_eq!(handle["result"]["task"]["status"], "working", "{handle}");
    assert_eq!(
        handle["result"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        direct_handle["result"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
    let full = direct["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        serde_json::to_vec(&direct["result"]).unwrap().len() > 1000,
        "{direct}"
    );
    let result = &shaped["result"];
    assert!(
        serde_json::to_vec(result).unwrap().len() <= 1000,
        "L4: {shaped}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    let (header, kept) = text.split_once("...]\n").unwrap();
    assert!(header.starts_with("[... truncated "), "{text}");
    assert!(full.ends_with(kept), "L2: the tail is kept");
    assert!(
        result["_meta"]["backstop/truncation"].is_object(),
        "L12: {result}"
    );
}
