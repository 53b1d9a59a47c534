//! SPEC A5 with a real server nobody here wrote: the fastmcp probe server over
//! Streamable HTTP (`mcp.run(transport="http")`, fastmcp 4.1.4 from the venv `.ci/run`
//! makes), behind `backstop gateway` and `backstop proxy --url`, each case also sent
//! straight to the server so the test shows what the server says and what backstop
//! makes of it. Locally, without the venv, skipped with a message; with `CI=true` a
//! failure.

mod http_support;

use http_support::{Fronted, Http, UrlProxy, call};
use serde_json::{Value, json};

const CAP: usize = 2000;

/// The requests after the handshake, with their ids.
fn calls() -> Vec<(u32, String)> {
    vec![
        (
            1,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        ),
        (2, call(2, "takes_int", json!({"count": 1}))),
        (3, call(3, "takes_int", json!({"count": "s3cr3t-value"}))),
        (
            4,
            call(4, "fail", json!({"message": "Pane not found: %99"})),
        ),
        (5, call(5, "big", json!({"lines": 1000}))),
        (
            6,
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
                "name": "progress", "arguments": {"steps": 3},
                "_meta": {"progressToken": "p-6"}}})
            .to_string(),
        ),
    ]
}

/// The checks every mode must pass on a session's answers, by request id: each the
/// messages that answered it (notifications first, the response last).
fn check_shaped(answers: &[Vec<Value>]) {
    let response = |n: usize| answers[n].last().unwrap();
    // V2, V3: the validation text is rebuilt and never echoes the value.
    let invalid = response(3).to_string();
    assert!(!invalid.contains("s3cr3t-value"), "{invalid}");
    assert!(
        invalid.contains("1 validation error for takes_int"),
        "{invalid}"
    );
    // E1, E2: fastmcp's middleware made the failure a JSON-RPC error; it is a result.
    assert_eq!(response(4)["result"]["isError"], true, "{}", response(4));
    assert_eq!(
        response(4)["result"]["content"][0]["text"],
        "Pane not found: %99"
    );
    // L1, L2: capped, the tail kept.
    let big = &response(5)["result"];
    assert!(serde_json::to_vec(big).unwrap().len() <= CAP, "{big}");
    let text = big["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("\nPROMPT $"),
        "{text}"
    );
    // Progress notifications pass, in order, before the response.
    let progress: Vec<_> = answers[6][..answers[6].len() - 1]
        .iter()
        .map(|m| (m["method"].clone(), m["params"]["progress"].clone()))
        .collect();
    assert_eq!(
        progress,
        (1..=3)
            .map(|n| (json!("notifications/progress"), json!(f64::from(n))))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        response(6)["result"]["content"][0]["text"],
        "done after 3 steps"
    );
}

#[test]
fn a5_fastmcp_behind_the_gateway() {
    let Some(python) = http_support::python_or_skip("a5_fastmcp_behind_the_gateway") else {
        return;
    };
    let fronted = Fronted::fastmcp(&python, true, &[], &["--max-bytes", &CAP.to_string()]);
    let (direct_url, url) = (fronted.direct.clone(), fronted.url.clone());
    let http = Http::new();

    let (direct_session, direct_init) = http.initialize(&direct_url);
    let (session, init) = http.initialize(&url);
    assert_ne!(direct_session, session, "two sessions of the server");
    // A2, A5: the handshake passes byte-identical (its SSE event, `event:` line and all).
    assert_eq!(direct_init.body, init.body);
    assert_eq!(
        init.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    // Hop-by-hop headers do not pass; no CORS header is added.
    assert_eq!(
        direct_init.header("connection").as_deref(),
        Some("keep-alive")
    );
    assert!(init.header("connection").is_none());
    assert!(init.header("access-control-allow-origin").is_none());

    let mut answers = vec![init.messages()];
    for (n, request) in calls() {
        let direct = http.post(&direct_url, Some(&direct_session), &request);
        let shaped = http.post(&url, Some(&session), &request);
        assert_eq!(shaped.status, 200);
        if [1, 2, 6].contains(&n) {
            // Unchanged messages: every event byte-identical, in order.
            assert_eq!(direct.body, shaped.body, "request {n}");
        } else {
            assert_ne!(direct.body, shaped.body, "request {n}");
        }
        answers.push(shaped.messages());
    }
    check_shaped(&answers);

    // The session ends cleanly: the server takes the DELETE through the gateway, and
    // the session is gone for it afterwards (its 404 passes as it came).
    let deleted = http.delete(&url, &session);
    assert!(deleted.status.is_success(), "{deleted:?}");
    let after = http.post(
        &url,
        Some(&session),
        &call(9, "takes_int", json!({"count": 1})),
    );
    assert_eq!(after.status, 404, "{after:?}");
}

#[test]
fn a5_fastmcp_a_post_without_a_session_passes_as_it_came() {
    let Some(python) =
        http_support::python_or_skip("a5_fastmcp_a_post_without_a_session_passes_as_it_came")
    else {
        return;
    };
    let fronted = Fronted::fastmcp(&python, true, &[], &["--max-bytes", &CAP.to_string()]);
    let (direct_url, url) = (fronted.direct.clone(), fronted.url.clone());
    let http = Http::new();
    // A session-ful server asked without a session: its 400 passes as it came.
    let request = call(1, "takes_int", json!({"count": 1}));
    let direct = http.post(&direct_url, None, &request);
    let through = http.post(&url, None, &request);
    assert_eq!(direct.status, 400);
    assert_eq!(direct.status, through.status);
    assert_eq!(direct.body, through.body);
}

#[test]
fn a5_fastmcp_stateless_requests_are_shaped_without_a_session() {
    let Some(python) =
        http_support::python_or_skip("a5_fastmcp_stateless_requests_are_shaped_without_a_session")
    else {
        return;
    };
    let fronted = Fronted::fastmcp(
        &python,
        true,
        &["--stateless"],
        &["--max-bytes", &CAP.to_string()],
    );
    let url = fronted.url.clone();
    let http = Http::new();
    // No initialize, no session id: each request stands alone (a shaper for it alone).
    let mut answers = vec![Vec::new()];
    for (n, request) in calls() {
        let reply = http.post(&url, None, &request);
        assert_eq!(reply.status, 200, "request {n}: {reply:?}");
        assert!(reply.header("mcp-session-id").is_none());
        answers.push(reply.messages());
    }
    check_shaped(&answers);
}

#[test]
fn a5_fastmcp_behind_proxy_url() {
    let Some(python) = http_support::python_or_skip("a5_fastmcp_behind_proxy_url") else {
        return;
    };
    let (_server, url) = http_support::start_fastmcp(&python, true);
    let (mut proxy, init) = UrlProxy::initialized(&url, &["--max-bytes", &CAP.to_string()]);
    assert_eq!(
        init.last().unwrap()["result"]["serverInfo"]["name"],
        "probe"
    );
    let mut answers = vec![init];
    answers.extend(proxy.answer_each(calls()));
    check_shaped(&answers);
    // The end of stdin ends the session (DELETE) and the proxy exits 0.
    assert!(proxy.finish().success());
}

#[test]
fn a5_the_official_python_client_through_the_gateway() {
    let Some(python) =
        http_support::python_or_skip("a5_the_official_python_client_through_the_gateway")
    else {
        return;
    };
    let fronted = Fronted::fastmcp(&python, true, &[], &["--max-bytes", &CAP.to_string()]);
    let url = fronted.url.clone();
    let calls = json!([
        {"name": "takes_int", "arguments": {"count": 1}},
        {"name": "fail", "arguments": {"message": "Pane not found: %99"}},
        {"name": "big", "arguments": {"lines": 1000}},
        {"name": "structured_log", "arguments": {"lines": 500}},
    ]);
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/clients/python_client.py");
    let output = std::process::Command::new(&python)
        .arg(script)
        .arg(calls.to_string())
        .args(["--url", &url])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let session: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(session["client"].as_str().unwrap().starts_with("mcp 2."));
    let answers = session["calls"].as_array().unwrap();
    assert_eq!(answers[0]["result"]["content"][0]["text"], "got 1");
    // E1: the client sees a result it can read, not an McpError.
    assert_eq!(answers[1]["result"]["isError"], true, "{}", answers[1]);
    assert_eq!(
        answers[1]["result"]["content"][0]["text"],
        "Pane not found: %99"
    );
    // L1, L2, L15: capped, the tail kept, and the structured result still valid for
    // the client (it checks each against the tool's outputSchema).
    for answer in &answers[2..] {
        let result = &answer["result"];
        assert!(result.is_object(), "{answer}");
        assert!(serde_json::to_vec(result).unwrap().len() <= CAP, "{answer}");
    }
    let text = answers[2]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("PROMPT $"),
        "{text:.100}"
    );
    let log = answers[3]["result"]["structuredContent"]["log"]
        .as_str()
        .unwrap();
    assert!(
        log.ends_with("BUILD DONE") && !log.contains("log line 1 of"),
        "{log:.100}"
    );
    // The client DELETEd its session on the way out; the gateway forgot it.
}
