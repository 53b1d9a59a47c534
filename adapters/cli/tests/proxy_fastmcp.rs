//! `backstop proxy` in front of a real MCP server nobody on this team wrote: a small
//! tool script on fastmcp, installed from PyPI by `.ci/run` into `target/fastmcp-venv`.
//!
//! Each case is run twice — straight to the server and through the proxy — so the test
//! shows both what the server says and what the proxy makes of it. Locally, without
//! the venv, the test is skipped with a message; with `CI=true` a missing venv fails.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The venv's python, if the venv is there.
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("BACKSTOP_FASTMCP_PYTHON").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fastmcp-venv/bin/python"),
        PathBuf::from,
    );
    let works = Command::new(&path)
        .args(["-c", "import fastmcp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    works.then_some(path)
}

fn script() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fastmcp/probe_server.py");
    path.to_str().unwrap().to_owned()
}

const CAP: usize = 2000;

/// The requests of one session, sent one at a time, each answer awaited.
fn requests() -> Vec<String> {
    let call = |id: u32, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        call(2, "takes_int", json!({"count": 1})),
        call(3, "takes_int", json!({"count": "s3cr3t-value"})),
        // Written by hand: argument order matters to V4's list, and json! sorts keys.
        json!(
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"takes_int","arguments":{"count":1,"wait_for_previous":true,"bogus":2}}}"#
        ),
        call(5, "nope", json!({})),
        call(6, "fail", json!({"message": "Pane not found: %99"})),
        json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "probe://missing"}}),
        call(8, "big", json!({"lines": 1000})),
    ]
    .into_iter()
    .map(|request| match request {
        Value::String(line) => line,
        message => message.to_string(),
    })
    .collect()
}

/// The answer lines of one session of [`requests`], in request order.
fn session(python: &Path, through_proxy: bool, middleware: bool) -> Vec<String> {
    session_of(&requests(), python, through_proxy, middleware)
}

/// The answer lines of one session of `requests` (the first an `initialize`), in
/// request order.
fn session_of(
    requests: &[String],
    python: &Path,
    through_proxy: bool,
    middleware: bool,
) -> Vec<String> {
    let mut server = vec![python.to_str().unwrap().to_owned(), script()];
    if middleware {
        server.push("--middleware".into());
    }
    let mut command = if through_proxy {
        let mut command = Command::new(support::backstop());
        command
            .args(["proxy", "--max-bytes", &CAP.to_string(), "--"])
            .args(&server);
        command
    } else {
        let mut command = Command::new(&server[0]);
        command.args(&server[1..]);
        command
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for (n, request) in requests.iter().enumerate() {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        if n == 0 {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .unwrap();
        }
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "an answer to {request}: {line:?}");
        line.pop();
        answers.push(line);
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    answers
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

/// The venv's python, or `None` after saying why the test is skipped (a failure
/// with `CI=true`).
fn python_or_skip(test: &str) -> Option<PathBuf> {
    let python = python();
    if python.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but target/fastmcp-venv is missing: .ci/run must create it"
        );
        println!(
            "SKIPPED {test}: no fastmcp venv at target/fastmcp-venv \
             (create it with: python3 -m venv target/fastmcp-venv && \
             target/fastmcp-venv/bin/pip install -r tests/peers/requirements.txt)"
        );
    }
    python
}

#[test]
fn fastmcp_a_misspelt_tool_called_before_any_listing_gets_e8() {
    let Some(python) = python_or_skip("fastmcp_a_misspelt_tool_called_before_any_listing_gets_e8")
    else {
        return;
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "takes_in", "arguments": {"count": 1}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "takes_int", "arguments": {"count": 1}}})
        .to_string(),
    ];
    for middleware in [false, true] {
        let direct = session_of(&requests, &python, false, middleware);
        let proxied = session_of(&requests, &python, true, middleware);
        assert_eq!(direct[0], proxied[0], "initialize");
        // fastmcp says so its own way (an isError result, or -32001 behind its
        // middleware); the proxy listed the tools itself and says E8, with the hint.
        assert_ne!(direct[1], proxied[1]);
        assert_eq!(
            proxied[1],
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: takes_in","data":{"suggestion":"Did you mean 'takes_int'?"}}}"#,
            "middleware: {middleware}"
        );
        // The listing's answer is not the client's: the next line answers the next call.
        assert_eq!(direct[2], proxied[2], "a small result, byte-identical");
    }
}

#[test]
fn fastmcp_behind_the_proxy() {
    let Some(python) = python_or_skip("fastmcp_behind_the_proxy") else {
        return;
    };

    // fastmcp as it comes: failures are isError results.
    let direct = session(&python, false, false);
    let proxied = session(&python, true, false);

    // A2: the handshake, the listing and a small success pass byte-identical.
    assert_eq!(direct[0], proxied[0], "initialize");
    assert_eq!(direct[1], proxied[1], "tools/list");
    assert_eq!(direct[2], proxied[2], "a small result");

    // V2, V3: pydantic's text quotes the value; the proxy's does not.
    assert!(direct[3].contains("s3cr3t-value"));
    assert!(!proxied[3].contains("s3cr3t-value"), "{}", proxied[3]);
    let rejected = parse(&proxied[3]);
    assert_eq!(
        rejected["result"]["content"][0]["text"],
        "1 validation error for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]"
    );
    assert_eq!(rejected["result"]["_meta"]["error_type"], "ValidationError");

    // V4, V5: every unrecognised name, and the client named for wait_for_previous.
    let leaked = parse(&proxied[4]);
    assert_eq!(
        leaked["result"]["_meta"]["suggestion"],
        "Remove or correct the unrecognized argument(s): wait_for_previous, bogus. \
         wait_for_previous is a scheduling flag your client (probe-client 9.9) can leak \
         into batched tool calls; retry the call without it."
    );

    // E8: fastmcp answers an unknown tool with an isError result; E8 wants -32602.
    assert!(parse(&direct[5])["result"]["isError"] == true);
    assert_eq!(
        proxied[5],
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#
    );

    // E2, A2: a tool's own error result passes as the server built it.
    assert_eq!(direct[6], proxied[6]);

    // R3: fastmcp 4 answers -32602 with data.uri; a 2025-06-18 client needs -32002.
    assert_eq!(parse(&direct[7])["error"]["code"], -32602);
    assert_eq!(parse(&proxied[7])["error"]["code"], -32002);

    // L3, L4: over the cap, the tail survives and the result fits.
    let big = parse(&proxied[8]);
    let result = &big["result"];
    assert!(serde_json::to_vec(result).unwrap().len() <= CAP);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated ") && text.ends_with("line of output\nPROMPT $"));
    // L7, L15: fastmcp advertises `{"result": string}` as the tool's outputSchema, so
    // the structured output stays, its string cut to a tail too.
    let wrapped = result["structuredContent"]["result"].as_str();
    assert!(
        wrapped.is_some_and(|s| s.ends_with("line of output\nPROMPT $")),
        "L15: {result}"
    );

    // fastmcp with its stock ErrorHandlingMiddleware: failures are JSON-RPC errors.
    let direct = session(&python, false, true);
    let proxied = session(&python, true, true);
    assert_eq!(direct[0], proxied[0], "initialize");
    assert_eq!(direct[1], proxied[1], "tools/list");

    // E1, E2: "-32603 Internal error: …" of a known tool becomes an error result, verbatim.
    assert_eq!(parse(&direct[6])["error"]["code"], -32603);
    let failed = parse(&proxied[6]);
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(
        failed["result"]["content"][0]["text"],
        "Pane not found: %99"
    );
    // E1, V2 with a validation text behind the middleware's prefix.
    assert!(direct[3].contains("s3cr3t-value"));
    assert_eq!(parse(&proxied[3]), rejected);
    // E8: the middleware says -32001 "Not found: Unknown tool: 'nope'".
    assert_eq!(parse(&direct[5])["error"]["code"], -32001);
    assert_eq!(parse(&proxied[5])["error"]["code"], -32602);
}

/// SPEC B3 with L15, against fastmcp: its result of a tool returning a long `str`
/// carries the string twice (the text block, and `structuredContent.result` under the
/// tool's `outputSchema`). Through the proxy at a 1 MB cap, a 112 MB answer line comes
/// out cut — both copies keeping their tail, the value still valid — while the proxy's
/// peak RSS stays under 64 MiB.
#[test]
fn fastmcp_a_100_mb_str_result_is_cut_in_bounded_memory() {
    let Some(python) = python_or_skip("fastmcp_a_100_mb_str_result_is_cut_in_bounded_memory")
    else {
        return;
    };
    let cap = 1_000_000;
    let mut child = Command::new(support::backstop())
        .args(["proxy", "--max-bytes", &cap.to_string(), "--"])
        .arg(&python)
        .arg(script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("backstop starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: Value, answered: bool| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        if answered {
            stdout.read_line(&mut answer).unwrap();
        }
        answer
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "b3", "version": "1"}}}),
        true,
    );
    ask(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        false,
    );
    let tools = parse(&ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        true,
    ));
    let big_tool = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "big");
    assert!(big_tool.unwrap()["outputSchema"]["properties"]["result"].is_object());
    let lines = 7_000_000;
    let answer = ask(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "big", "arguments": {"lines": lines}}}),
        true,
    );
    let peak_mib = support::peak_rss(child.id()) >> 20;
    let _ = child.kill();
    let _ = child.wait();
    let response = parse(&answer);
    let result = &response["result"];
    let wire = serde_json::to_vec(result).unwrap().len();
    assert!(wire <= cap, "L4: {wire} bytes");
    let kept = result["structuredContent"]["result"].as_str().unwrap();
    assert!(
        kept.ends_with("line of output\nPROMPT $"),
        "L15: the value keeps its tail"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("PROMPT $"),
        "L3"
    );
    let cuts = &result["_meta"]["backstop/truncation"]["structured"];
    assert_eq!(cuts[0]["pointer"], "/result");
    let whole = "line of output\n".len() * lines + "PROMPT $".len();
    assert_eq!(
        cuts[0]["dropped_bytes"].as_u64().unwrap() as usize + kept.len(),
        whole
    );
    println!(
        "B3 fastmcp: a {} MB answer at a 1 MB cap, proxy peak RSS {peak_mib} MiB",
        2 * whole / 1_000_000
    );
    assert!(
        peak_mib <= 64,
        "B3: the proxy's peak RSS was {peak_mib} MiB"
    );
}

/// V2 on pydantic's format kinds, from a real fastmcp tool with an `HttpUrl` and a
/// `UUID` parameter: the caller sent strings, so "a valid string" would tell it
/// nothing — the text says what pydantic said (a valid URL, a valid UUID), and V3
/// still drops the values.
#[test]
fn v2_fastmcp_url_and_uuid_problems_say_the_format() {
    let Some(python) = python_or_skip("v2_fastmcp_url_and_uuid_problems_say_the_format") else {
        return;
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "open_link",
            "arguments": {"url": "not a url s3cr3t", "request_id": "nope-s3cr3t"}}})
        .to_string(),
    ];
    let direct = parse(&session_of(&requests, &python, false, false)[1]);
    let proxied = parse(&session_of(&requests, &python, true, false)[1]);
    let said = |answer: &Value| {
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        said(&direct).contains("Input should be a valid URL"),
        "{direct}"
    );
    assert_eq!(
        said(&proxied),
        "2 validation errors for open_link\n\
         url\n  Input should be a valid URL [type=invalid_type]\n\
         request_id\n  Input should be a valid UUID [type=invalid_type]",
    );
    assert_eq!(proxied["result"]["isError"], true);
    assert_eq!(proxied["result"]["_meta"]["error_type"], "ValidationError");
    assert!(!proxied.to_string().contains("s3cr3t"), "{proxied}");
}
