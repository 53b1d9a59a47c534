//! `backstop proxy` end to end, in front of this crate's fixture server: exact cases.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use serde_json::{Value, json};
use support::Proxy;

fn call(id: Value, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// Handshake and listing, checking that both answers pass byte-identical.
fn handshake(proxy: &mut Proxy) {
    proxy.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe-client","version":"9.9"}}}"#);
    assert_eq!(
        proxy.line().unwrap(),
        r#"{"id":0,"jsonrpc":"2.0","result":{"capabilities":{"resources":{},"tools":{}},"protocolVersion":"2025-06-18","serverInfo":{"name":"fixture","version":"1.0"}}}"#
    );
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    let list = proxy.line().unwrap();
    assert!(list.starts_with(r#"{"id":"list","jsonrpc":"2.0","result":{"tools":[{"inputSchema""#));
}

#[test]
fn shapes_a_session_and_passes_the_rest_byte_identical() {
    let mut proxy = Proxy::fixture(&[]);
    handshake(&mut proxy);

    // E1: an error of a known tool becomes an error result.
    proxy.send_json(&call(json!(1), "fail", json!({})));
    let failed = proxy.json();
    assert_eq!(failed["id"], 1);
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(
        failed["result"]["content"][0]["text"],
        "Pane not found: %99"
    );

    // E8: an unknown tool becomes -32602.
    proxy.send_json(&call(json!(2), "ech", json!({})));
    assert_eq!(
        proxy.line().unwrap(),
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: ech","data":{"suggestion":"Did you mean 'echo'?"}}}"#
    );

    // R3: the fixture answers the 2026 way; the client speaks 2025-06-18.
    proxy.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"probe://gone"}}"#,
    );
    assert_eq!(proxy.json()["error"]["code"], -32002);

    // String ids, and out-of-order answers: `hold` is answered after the next one.
    proxy.send_json(&call(json!("held"), "hold", json!({})));
    proxy.send_json(&call(json!("echo-1"), "echo", json!({"text": "hi"})));
    assert_eq!(
        proxy.line().unwrap(),
        r#"{"id":"echo-1","jsonrpc":"2.0","result":{"content":[{"text":"hi","type":"text"}]}}"#
    );
    assert_eq!(
        proxy.line().unwrap(),
        r#"{"id":"held","jsonrpc":"2.0","result":{"content":[{"text":"held answer","type":"text"}]}}"#
    );

    // Batches, element by element: the echo stays as it was, the failure is converted.
    let batch = json!([
        call(json!(10), "echo", json!({"text": "a"})),
        call(json!(11), "fail", json!({}))
    ]);
    proxy.send_json(&batch);
    let answers = proxy.line().unwrap();
    assert!(
        answers.starts_with(r#"[{"id":10,"jsonrpc":"2.0","result":{"content":[{"text":"a","type":"text"}]}},{"jsonrpc":"2.0","id":11,"result":{"_meta""#),
        "{answers}"
    );

    // Not JSON: forwarded as it came (the fixture ignores it).
    proxy.send("this is not json");
    proxy.send_json(&call(json!(12), "echo", json!({"text": "still here"})));
    assert_eq!(proxy.json()["result"]["content"][0]["text"], "still here");

    let (rest, status, stderr) = proxy.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(status.success());
    assert!(
        stderr.contains("fixture_server: ready"),
        "stderr passes through: {stderr}"
    );
    let logged: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("backstop: {"))
        .collect();
    assert_eq!(
        logged.len(),
        2,
        "G1: one record per converted failure: {stderr}"
    );
    assert!(logged[0].contains(r#""level":"error""#) && logged[0].contains(r#""tool":"fail""#));
}

/// The proxy in front of the fixture server with `FIXTURE_TOOLS_LIST=<listing>`, after
/// the handshake and no listing by the client.
fn fixture_listing(listing: &str) -> Proxy {
    let server = support::fixture_server();
    let env = format!("FIXTURE_TOOLS_LIST={listing}");
    let mut proxy = Proxy::start(&[], &["env", &env, server.to_str().unwrap()]);
    proxy.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe-client","version":"9.9"}}}"#);
    assert_eq!(proxy.json()["id"], 0);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    proxy
}

#[test]
fn e8_from_the_first_call_the_proxy_lists_the_tools_itself() {
    // `echo` is on the second page; `late`: the server answers the call before the list.
    for listing in ["paged", "paged,late"] {
        let mut proxy = fixture_listing(listing);
        proxy.send_json(&call(json!(1), "ech", json!({})));
        assert_eq!(
            proxy.line().unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ech","data":{"suggestion":"Did you mean 'echo'?"}}}"#,
            "{listing}"
        );
        // The listing's answers never reach the client: the next line answers the next call.
        proxy.send_json(&call(json!(2), "echo", json!({"text": "hi"})));
        assert_eq!(
            proxy.line().unwrap(),
            r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"hi","type":"text"}]}}"#
        );
        let (rest, status, stderr) = proxy.finish();
        assert!(rest.is_empty(), "{rest:?}");
        assert!(status.success());
        if listing.contains("late") {
            assert!(
                stderr.contains("listing late \"backstop/tools/list#1\""),
                "{stderr}"
            );
        }
    }
}

#[test]
fn e8_a_listing_that_fails_releases_the_queued_answer_as_the_server_gave_it() {
    let mut proxy = fixture_listing("late,error");
    proxy.send_json(&call(json!(1), "ech", json!({})));
    assert_eq!(
        proxy.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: ech"}}),
        "without a catalog, the server's own answer"
    );
    proxy.send_json(&call(json!(2), "fail", json!({})));
    assert_eq!(proxy.json()["result"]["isError"], true, "E1 still holds");
    let (rest, status, _) = proxy.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(status.success());
}

#[test]
fn e8_a_server_that_never_answers_the_listing_does_not_hold_the_answer_forever() {
    let mut proxy = fixture_listing("never");
    proxy.send_json(&call(json!(1), "ech", json!({})));
    // Held for the listing, then sent on as the server gave it (B1: never a hang).
    assert_eq!(
        proxy.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: ech"}})
    );
    // No second wait: a server that did not list is not asked again.
    proxy.send_json(&call(json!(2), "echo", json!({"text": "hi"})));
    assert_eq!(proxy.json()["result"]["content"][0]["text"], "hi");
    let (rest, status, stderr) = proxy.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(status.success());
    assert_eq!(stderr.matches("not listing").count(), 1, "{stderr}");
}

#[test]
fn a_crash_mid_call_answers_every_pending_request_and_exits_with_its_code() {
    let mut proxy = Proxy::fixture(&[]);
    handshake(&mut proxy);
    proxy.send_json(&call(json!("held"), "hold", json!({})));
    proxy.send_json(&call(json!(7), "crash", json!({"code": 3})));
    let (rest, status, _) = proxy.finish();
    assert_eq!(status.code(), Some(3));
    assert_eq!(
        rest,
        [
            r#"{"jsonrpc":"2.0","id":"held","error":{"code":-32603,"message":"The MCP server exited with exit code 3 before answering this request","data":{"exit_code":3}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"The MCP server exited with exit code 3 before answering this request","data":{"exit_code":3}}}"#,
        ]
    );
}

/// B5: a last line cut off by the server's exit is not sent (the client reads only
/// whole lines), and its request gets the exit's error; a whole last line without its
/// line break is the answer.
#[test]
fn b5_a_partial_last_line_is_not_sent_and_a_whole_one_is() {
    let mut proxy = Proxy::fixture(&[]);
    handshake(&mut proxy);
    proxy.send_json(&call(json!(8), "partial", json!({})));
    let (rest, status, _) = proxy.finish();
    assert!(status.success());
    assert_eq!(
        rest,
        [
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"The MCP server exited with exit code 0 before answering this request","data":{"exit_code":0}}}"#
        ],
        "the half line (its id not yet read) not sent"
    );

    let mut proxy = Proxy::fixture(&[]);
    handshake(&mut proxy);
    proxy.send_json(&call(json!(9), "no_newline", json!({})));
    let (rest, _, _) = proxy.finish();
    assert_eq!(
        rest,
        [r#"{"id":9,"jsonrpc":"2.0","result":{"content":[{"text":"last words","type":"text"}]}}"#]
    );
}

/// B4: an answer that is not strict JSON (a lone surrogate) is forwarded exactly as it
/// came and answers its request: when the server then exits, only the requests still
/// pending get the exit's error — never a second answer for that one (before, it got
/// one).
#[test]
fn b4_an_answer_that_is_not_strict_json_is_its_request_s_only_answer() {
    let mut proxy = Proxy::fixture(&[]);
    handshake(&mut proxy);
    proxy.send_json(&call(json!(5), "cut_emoji", json!({})));
    assert_eq!(
        proxy.line().unwrap(),
        r#"{"result":{"content":[{"type":"text","text":"cut here \ud83d"}]},"jsonrpc":"2.0","id":5}"#,
        "as it came"
    );
    proxy.send_json(&call(json!(6), "crash", json!({"code": 3})));
    let (rest, status, _) = proxy.finish();
    assert_eq!(status.code(), Some(3));
    assert_eq!(
        rest,
        [
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"The MCP server exited with exit code 3 before answering this request","data":{"exit_code":3}}}"#
        ],
        "one answer for 5, and it came"
    );
}

#[test]
fn sigint_and_sigterm_are_forwarded_to_the_server() {
    use nix::sys::signal::Signal;
    for (signal, name) in [(Signal::SIGTERM, "SIGTERM"), (Signal::SIGINT, "SIGINT")] {
        let mut proxy = Proxy::fixture(&[]);
        handshake(&mut proxy);
        // Held by the server: pending until the signal ends it. Once the server has it,
        // the proxy has it in its table (it records a request before sending it on).
        proxy.send_json(&call(json!("held"), "hold", json!({})));
        proxy.wait_for_stderr("fixture_server: holding");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(proxy.child.id() as i32), signal)
            .unwrap();
        // Stdin stays open: the server ends because of the signal, not of its input.
        let mut rest = Vec::new();
        while let Some(line) = proxy.line() {
            rest.push(line);
        }
        let (_, status, _) = proxy.finish();
        let number = signal as i32;
        assert_eq!(status.code(), Some(128 + number), "{name}: {status:?}");
        assert!(status.signal().is_none(), "the proxy itself was not killed");
        let said = format!("was killed by signal {number} ({name})");
        assert!(rest.iter().any(|l| l.contains(&said)), "{rest:?}");
    }
}

#[test]
fn a_200_mb_result_keeps_its_tail_in_bounded_memory() {
    const SIZE: u64 = 200_000_000;
    let mut proxy = Proxy::fixture(&[]);
    handshake(&mut proxy);
    let start = std::time::Instant::now();
    proxy.send_json(&call(json!("big"), "big", json!({"bytes": SIZE})));
    let line = proxy.line().unwrap();
    eprintln!("200 MB result through the proxy in {:?}", start.elapsed());
    assert!(line.len() <= 1_000_100, "{}", line.len());
    let response: Value = serde_json::from_str(&line).unwrap();
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "));
    assert!(text.ends_with("PROMPT $") && text.contains("\nline of output\n"));
    let peak = proxy.peak_rss();
    eprintln!(
        "peak RSS of the proxy on a 200 MB line: {} MB",
        peak / 1_000_000
    );
    assert!(peak < 4 * SIZE, "B2: peak {peak} bytes");
    let (_, status, _) = proxy.finish();
    assert!(status.success());
}

#[test]
fn an_invalid_cap_is_refused_naming_the_minimum() {
    let output = Command::new(support::backstop())
        .args(["proxy", "--max-bytes", "10", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let min = backstop_core::Limit::min_bytes().to_string();
    assert!(
        stderr.contains("the minimum is") && stderr.contains(&min),
        "{stderr}"
    );

    let help = Command::new(support::backstop())
        .args(["proxy", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(
        help.contains("Examples:") && help.contains("--max-bytes"),
        "{help}"
    );

    let missing = Command::new(support::backstop())
        .args(["proxy", "--", "/no/such/server"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
}
