//! SPEC A5, E10, R4 on MCP 2026-07-28 with a server nobody on this team wrote: the
//! official TypeScript SDK 2.4.0 (`@modelcontextprotocol/server`, pinned in
//! `tests/peers/`; `tests/peers/servers/typescript_v2_server.mjs`), which
//! refuses a POST whose `Mcp-Method`, `Mcp-Name` or `MCP-Protocol-Version` disagree
//! with its body (HTTP 400, `-32020`). Stateless requests, each carrying its revision
//! in `_meta`, through `backstop proxy --url` and `backstop gateway`; and the SDK's own
//! client (`@modelcontextprotocol/client` 2.4.0,
//! `tests/peers/clients/typescript_v2_client.mjs`), which rejects a result it cannot
//! validate, under 2026-07-28 and 2025-11-25, over Streamable HTTP to the gateway and
//! over stdio to `proxy --url` — and, the server over stdio too, to the stdio proxy.
//! And SEP-1699 (B5): the SDK 1.x server (`@modelcontextprotocol/sdk`,
//! `tests/peers/servers/typescript_resumable_server.mjs`) closing a stream for its
//! client to resume. Locally, without node or the npm peers, skipped with a message;
//! with `CI=true` a failure.

mod http_support;

use std::process::Command;

use http::Method;
use http_support::{Http, UrlProxy, backstop, start_gateway, stateless_call};
use serde_json::{Value, json};

const CAP: usize = 2000;

/// A stateless 2026-07-28 `tools/call`.
fn call(id: u32, name: &str, arguments: Value) -> String {
    stateless_call(id, name, arguments, "2026-07-28")
}

fn server_or_skip(test: &str) -> Option<(http_support::Spawned, String)> {
    http_support::or_skip(
        http_support::typescript_v2(),
        test,
        "@modelcontextprotocol/server 2.4.0 (target/node-peers) with node",
    )
}

#[test]
fn a5_proxy_url_speaks_2026_07_28_to_the_typescript_sdk_2() {
    let Some((_server, url)) =
        server_or_skip("a5_proxy_url_speaks_2026_07_28_to_the_typescript_sdk_2")
    else {
        return;
    };
    let mut proxy = UrlProxy::start(&url, &["--max-bytes", &CAP.to_string()]);
    let mut answer = |id: u32, request: String| {
        proxy.send(&request);
        proxy.until_response(id).pop().unwrap()
    };

    // A5: the call carries `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` as its
    // body says; without them the SDK answers 400 (which came out as `-32603`).
    let echo = answer(1, call(1, "echo", json!({"text": "hi"})));
    assert_eq!(echo["result"]["content"][0]["text"], "hi", "{echo}");
    assert_eq!(echo["result"]["resultType"], "complete");

    // E8 from the proxy's own listing, whose headers are its own (`tools/list`).
    let misspelt = answer(2, call(2, "ecoh", json!({"text": "hi"})));
    assert_eq!(
        misspelt["error"],
        json!({"code": -32602, "message": "Unknown tool: ecoh",
               "data": {"suggestion": "Did you mean 'echo'?"}})
    );

    // L1–L4 with R4: cut to the cap, the tail kept, the revision's `resultType` kept.
    let big = answer(3, call(3, "big", json!({"lines": 1000})));
    let result = &big["result"];
    assert!(serde_json::to_vec(result).unwrap().len() <= CAP, "L4");
    assert_eq!(result["resultType"], "complete", "R4");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("PROMPT $"),
        "{text:.100}"
    );

    // E10: the server's own JSON-RPC error on HTTP 400 passes with its `data`, not
    // a `-32603 answered HTTP 400`.
    let unsupported = answer(
        4,
        stateless_call(4, "echo", json!({"text": "hi"}), "2099-01-01"),
    );
    assert_eq!(unsupported["error"]["code"], -32022, "{unsupported}");
    assert_eq!(
        unsupported["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
    assert!(proxy.finish().success());
}

#[test]
fn a5_the_gateway_s_own_listing_has_its_own_headers() {
    let Some((_server, upstream)) =
        server_or_skip("a5_the_gateway_s_own_listing_has_its_own_headers")
    else {
        return;
    };
    let (_gateway, url) = start_gateway(&upstream, &["--max-bytes", &CAP.to_string()]);
    let http = Http::new();
    // A 2026-07-28 client's POST, with the headers its body mirrors.
    let post = |body: &str, name: &str| {
        http.send(
            Method::POST,
            &url,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", name),
            ],
            body,
        )
    };
    // The gateway lists the tools itself before the call: that POST says
    // `Mcp-Method: tools/list`, not the call's headers (the SDK refused those with
    // `-32020`, the listing was given up, and E8 lost its hint).
    let misspelt = post(&call(1, "ecoh", json!({"text": "hi"})), "ecoh");
    assert_eq!(
        misspelt.response()["error"],
        json!({"code": -32602, "message": "Unknown tool: ecoh",
               "data": {"suggestion": "Did you mean 'echo'?"}}),
        "{misspelt:?}"
    );
    let echo = post(&call(2, "echo", json!({"text": "hi"})), "echo");
    assert_eq!(echo.response()["result"]["content"][0]["text"], "hi");
}

#[test]
fn a5_proxy_url_mirrors_the_arguments_a_tool_marks_for_headers() {
    let Some((_server, upstream)) =
        server_or_skip("a5_proxy_url_mirrors_the_arguments_a_tool_marks_for_headers")
    else {
        return;
    };
    // Without `Mcp-Param-Region` the SDK refuses the call (SEP-2243).
    let http = Http::new();
    let direct = http.send(
        Method::POST,
        &upstream,
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "regional"),
        ],
        &call(1, "regional", json!({"region": "eu-west-1"})),
    );
    assert_eq!(direct.response()["error"]["code"], -32020, "{direct:?}");
    // `proxy --url` lists the tools first (E8) and mirrors the marked argument, as
    // itself or, when it is not plain ASCII, as `=?base64?…?=`.
    let mut proxy = UrlProxy::start(&upstream, &[]);
    for (id, region) in [(1, "eu-west-1"), (2, "Zürich"), (3, " padded ")] {
        proxy.send(&call(id, "regional", json!({"region": region})));
        let answer = proxy.until_response(id).pop().unwrap();
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("served in {region}"),
            "{answer}"
        );
    }
}

/// The TypeScript SDK 2.x client under `revision`, connected by `transport` (`http URL`
/// or `stdio COMMAND ARGS…`), making `calls`: what it accepted or threw, per call.
fn typescript_client(revision: &str, transport: &[&str], calls: &Value) -> Vec<Value> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/peers/clients/typescript_v2_client.mjs"
    );
    let output = Command::new("node")
        .arg(script)
        .arg(revision)
        .args(transport)
        .env("BACKSTOP_CALLS", calls.to_string())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    printed["calls"].as_array().unwrap().clone()
}

/// What the SDK client must have accepted from backstop, per call of
/// [`client_calls`].
fn check_client_calls(answers: &[Value], revision: &str) {
    // L1, R4: a result backstop rewrote is valid for the revision (on 2026-07-28 the
    // SDK rejects one without `resultType`), cut, its tail kept.
    let big = &answers[0]["result"];
    let text = big["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{revision}: {answers:?}"));
    assert!(
        text.starts_with("[... truncated "),
        "{revision}: {text:.200}"
    );
    assert!(text.ends_with("PROMPT $"), "{revision}: {text:.200}");
    assert!(
        big["_meta"]["backstop/truncation"].is_object(),
        "{revision}: {big}"
    );
    // E1: the failure the model reads.
    assert_eq!(
        answers[1]["result"]["content"],
        json!([{"type": "text", "text": "Pane not found: %5"}]),
        "{revision}: {answers:?}"
    );
    assert_eq!(answers[1]["result"]["isError"], true);
    // E8: an unknown tool is a protocol error with the hint (the SDK throws it).
    assert_eq!(
        answers[2]["thrown"]["code"], -32602,
        "{revision}: {answers:?}"
    );
    assert_eq!(
        answers[2]["thrown"]["data"]["suggestion"],
        "Did you mean 'echo'?"
    );
}

/// The client's transport to `upstream` through `backstop proxy --url` at [`CAP`]:
/// `stdio COMMAND ARGS…`.
fn proxy_url_transport(upstream: &str) -> Vec<String> {
    let backstop = backstop().to_string_lossy().into_owned();
    let cap = CAP.to_string();
    [
        "stdio",
        &backstop,
        "proxy",
        "--quiet",
        "--max-bytes",
        &cap,
        "--url",
        upstream,
    ]
    .map(str::to_owned)
    .to_vec()
}

fn client_calls() -> Value {
    json!([
        ["big", {"lines": 3000}],
        ["fail", {"message": "Pane not found: %5"}],
        ["ecoh", {"text": "hi"}],
    ])
}

#[test]
fn r4_the_typescript_sdk_2_client_accepts_what_the_gateway_builds() {
    let Some((_server, upstream)) =
        server_or_skip("r4_the_typescript_sdk_2_client_accepts_what_the_gateway_builds")
    else {
        return;
    };
    let (_gateway, url) = start_gateway(&upstream, &["--max-bytes", &CAP.to_string()]);
    for revision in ["2026-07-28", "2025-11-25"] {
        let direct = typescript_client(revision, &["http", &upstream], &client_calls());
        let big = direct[0]["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            big.len() > CAP,
            "{revision}: the server's own result is over the cap"
        );
        let answers = typescript_client(revision, &["http", &url], &client_calls());
        check_client_calls(&answers, revision);
    }
}

#[test]
fn r4_the_typescript_sdk_2_client_accepts_what_proxy_url_builds() {
    let Some((_server, upstream)) =
        server_or_skip("r4_the_typescript_sdk_2_client_accepts_what_proxy_url_builds")
    else {
        return;
    };
    let proxy = proxy_url_transport(&upstream);
    let proxy: Vec<&str> = proxy.iter().map(String::as_str).collect();
    for revision in ["2026-07-28", "2025-11-25"] {
        let answers = typescript_client(revision, &proxy, &client_calls());
        check_client_calls(&answers, revision);
    }
}

/// The SDK's client and server both over stdio, through the stdio proxy: what backstop
/// builds is accepted under either revision (R4), as through the remote modes.
#[test]
fn r4_the_typescript_sdk_2_client_accepts_what_the_stdio_proxy_builds_for_its_server() {
    let Some(server) = http_support::or_skip(
        http_support::typescript_v2_stdio(),
        "r4_the_typescript_sdk_2_client_accepts_what_the_stdio_proxy_builds_for_its_server",
        "@modelcontextprotocol/server 2.4.0 (target/node-peers) with node",
    ) else {
        return;
    };
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let backstop = backstop();
    let cap = CAP.to_string();
    let mut proxy = vec!["stdio", backstop.to_str().unwrap(), "proxy", "--quiet"];
    proxy.extend(["--max-bytes", &cap, "--"]);
    proxy.extend(&server);
    let direct = [&["stdio"][..], &server].concat();
    for revision in ["2026-07-28", "2025-11-25"] {
        let own = typescript_client(revision, &direct, &client_calls());
        let big = own[0]["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            big.len() > CAP,
            "{revision}: the server's own result is over the cap"
        );
        let answers = typescript_client(revision, &proxy, &client_calls());
        check_client_calls(&answers, revision);
    }
}

/// B5, SEP-1699, with the official TypeScript SDK 1.x server (its own event store,
/// `retry: 200`), whose tool closes its POST stream before it answers: the SDK 2
/// client resumes through the gateway (a GET with `Last-Event-ID`, which the gateway
/// shapes), and `proxy --url` resumes on its own — each answer cut (L1), and the only
/// one. Before, both made up `-32603 … closed the connection before answering` at
/// once.
#[test]
fn b5_a_stream_the_server_closes_to_be_resumed_is_resumed_in_both_modes() {
    let Some((_server, upstream)) = http_support::or_skip(
        http_support::typescript_resumable(),
        "b5_a_stream_the_server_closes_to_be_resumed_is_resumed_in_both_modes",
        "@modelcontextprotocol/sdk 1.x (target/node-peers) with node",
    ) else {
        return;
    };
    let calls = json!([
        ["poll_later", {"lines": 3000}],
        ["echo", {"text": "hi"}],
        ["poll_later", {"lines": 2, "fail": "Pane not found: %5"}],
    ]);
    let direct = typescript_client("2025-11-25", &["http", &upstream], &calls);
    let big = direct[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(big.len() > CAP, "the server's own result is over the cap");
    let (_gateway, url) = start_gateway(&upstream, &["--max-bytes", &CAP.to_string()]);
    let proxy = proxy_url_transport(&upstream);
    let proxy: Vec<&str> = proxy.iter().map(String::as_str).collect();
    for (mode, transport) in [
        ("gateway", &["http", &url][..]),
        ("proxy --url", &proxy[..]),
    ] {
        let answers = typescript_client("2025-11-25", transport, &calls);
        let cut = &answers[0]["result"];
        let text = cut["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{mode}: {answers:?}"));
        assert!(text.starts_with("[... truncated "), "{mode}: {text:.200}");
        assert!(text.ends_with("PROMPT $"), "{mode}");
        assert!(cut.to_string().len() <= CAP, "{mode}: L4");
        assert_eq!(answers[1], direct[1], "{mode}");
        assert_eq!(
            answers[2], direct[2],
            "{mode}: the failure as the server gave it"
        );
    }
}
