//! SPEC B5 through `backstop proxy`: a server that stops in the middle of its answer
//! (it exits, or is killed) leaves the client's framing intact — every line the client
//! reads ends, and each that began as a message is one — and the request gets exactly
//! one answer: an error saying the server stopped in the middle of it. A last line
//! that is whole without its line break is still the answer, and gets no error.
//!
//! The server is a small python3 script of this test's own: it answers the handshake
//! and `tools/list`, and answers the `tools/call` or `resources/read` of id 1 with the
//! start of a text of the given length, then stops (`exit`: exit code 3, `kill`: its
//! own SIGKILL) — or, for `whole`, ends it properly but without the line break.

mod support;

use serde_json::{Value, json};
use support::Proxy;

/// The server: `python3 -c SERVER <method> <text bytes> <exit|kill|whole>`.
const SERVER: &str = r#"
import json, os, signal, sys
method, size, end = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = sys.stdout.buffer
def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    id, asked = message["id"], message["method"]
    if asked == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}, "resources": {}},
              "serverInfo": {"name": "cut-off", "version": "1"}}})
    elif asked == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [
              {"name": "logs", "inputSchema": {"type": "object"}}]}})
    elif asked == "ping":
        send({"jsonrpc": "2.0", "id": id, "result": {}})
    elif asked == method:
        members = "content" if method == "tools/call" else "contents"
        uri = "" if method == "tools/call" else '"uri":"log://a",'
        out.write(('{"jsonrpc":"2.0","id":%s,"result":{"%s":[{%s"type":"text","text":"'
                   % (json.dumps(id), members, uri)).encode())
        unit = b"log line \\u001b[0m ok\\n"
        block, left = unit * 4096, size
        while left >= len(block):
            out.write(block)
            left -= len(block)
        out.write(unit * (left // len(unit)) + b"x" * (left % len(unit)))
        if end == "whole":
            out.write(b'"}]}}')
        out.flush()
        if end == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3)
"#;

/// The proxy (with `options`) in front of the server answering `method` as `end` says,
/// after a text of `bytes`; the handshake done, and a ping answered.
fn proxy(options: &[&str], method: &str, bytes: usize, end: &str) -> Proxy {
    let bytes = bytes.to_string();
    let mut proxy = Proxy::start(options, &["python3", "-c", SERVER, method, &bytes, end]);
    proxy.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cut-off-client","version":"1"}}}"#);
    assert_eq!(proxy.json()["id"], 0);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#);
    assert_eq!(
        proxy.json(),
        json!({"jsonrpc": "2.0", "id": "ping", "result": {}})
    );
    proxy
}

/// The request of id 1.
fn request(method: &str) -> String {
    match method {
        "tools/call" => json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "logs", "arguments": {}}}),
        _ => json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                    "params": {"uri": "log://a"}}),
    }
    .to_string()
}

/// Send request 1 and read everything until the proxy exits: every line (each ended:
/// [`Proxy::line`] checks it), the exit code, stderr.
fn run(mut proxy: Proxy, method: &str) -> (Vec<String>, Option<i32>, String) {
    proxy.send(&request(method));
    let (lines, status, stderr) = proxy.finish();
    (lines, status.code(), stderr)
}

/// The messages among `lines` that answer id 1; every line but those `partial` allows
/// (the start of a line that was passing) must be JSON.
fn answers_to_1(lines: &[String], partial: usize) -> Vec<Value> {
    let mut not_json = 0;
    let answers = lines
        .iter()
        .filter_map(|line| match serde_json::from_str::<Value>(line) {
            Ok(message) => Some(message),
            Err(_) => {
                not_json += 1;
                None
            }
        })
        .filter(|message| message["id"] == 1)
        .collect();
    assert_eq!(
        not_json,
        partial,
        "lines that are not JSON: {}",
        short(lines)
    );
    answers
}

/// The lines, each cut to its first 200 bytes (for a failure's message).
fn short(lines: &[String]) -> String {
    let cut: Vec<&str> = lines
        .iter()
        .map(|line| line.get(..200).unwrap_or(line))
        .collect();
    format!("{cut:?}")
}

/// The one answer to id 1 is the error of a server that stopped in its answer, `how`
/// (`exited with exit code 3`), `received` bytes of it having come.
fn assert_stopped_in_answer(answers: &[Value], how: &str, received: usize) {
    assert_eq!(
        answers.len(),
        1,
        "B5: exactly one answer for id 1: {answers:?}"
    );
    let error = &answers[0]["error"];
    assert_eq!(error["code"], -32603, "{error}");
    assert_eq!(
        error["message"],
        format!("The MCP server {how} in the middle of its answer to this request")
    );
    assert_eq!(error["data"]["received_bytes"], received, "{error}");
}

/// How many bytes of the answer to id 1 the server writes before its text of `text`.
fn head_bytes(method: &str) -> usize {
    match method {
        "tools/call" => r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#,
        _ => r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"log://a","type":"text","text":""#,
    }
    .len()
}

#[test]
fn b5_a_short_answer_cut_off_is_not_sent_and_its_request_gets_one_error() {
    for method in ["tools/call", "resources/read"] {
        let (lines, code, stderr) = run(proxy(&[], method, 1_000, "exit"), method);
        assert_eq!(code, Some(3), "the server's exit code: {stderr}");
        let answers = answers_to_1(&lines, 0);
        assert_stopped_in_answer(
            &answers,
            "exited with exit code 3",
            head_bytes(method) + 1_000,
        );
        assert!(
            stderr.contains("the server's output ended in the middle of a line"),
            "said in the log: {stderr}"
        );
    }
}

#[test]
fn b5_a_long_answer_cut_off_while_passing_is_ended_and_its_request_gets_one_error() {
    // 6 MiB: past the 4 MiB shaped whole; a resources/read result, id first, passes
    // on as it comes (B3).
    let text = 6 << 20;
    let (lines, code, _) = run(proxy(&[], "resources/read", text, "kill"), "resources/read");
    assert_eq!(code, Some(128 + 9), "the server's SIGKILL");
    let answers = answers_to_1(&lines, 1);
    let partial = lines
        .iter()
        .find(|line| serde_json::from_str::<Value>(line).is_err())
        .unwrap();
    let received = head_bytes("resources/read") + text;
    assert_eq!(partial.len(), received, "what came of it, ended there");
    assert!(partial.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"contents""#));
    assert_stopped_in_answer(&answers, "was killed by signal 9 (SIGKILL)", received);
}

#[test]
fn b5_a_long_answer_cut_off_while_being_cut_gets_one_error() {
    // Over the cap and past 4 MiB: a tools/call result cut as it comes, none of it sent
    // before its end (B3, B4's exception).
    let text = 6 << 20;
    let options = ["--max-bytes", "2000"];
    let (lines, code, _) = run(proxy(&options, "tools/call", text, "exit"), "tools/call");
    assert_eq!(code, Some(3));
    let answers = answers_to_1(&lines, 0);
    let received = head_bytes("tools/call") + text;
    assert_stopped_in_answer(&answers, "exited with exit code 3", received);
}

#[test]
fn b5_a_whole_last_answer_without_its_line_break_is_the_answer() {
    // Short (shaped whole) and long (passing as it came): never an error for an id
    // that got its whole answer.
    for (method, text) in [("tools/call", 1_000), ("resources/read", 6 << 20)] {
        let (lines, code, _) = run(proxy(&[], method, text, "whole"), method);
        assert_eq!(code, Some(3));
        let answers = answers_to_1(&lines, 0);
        assert_eq!(answers.len(), 1, "{method}: one answer: {}", short(&lines));
        assert!(answers[0]["result"].is_object(), "{method}: the result");
    }
}
