//! SPEC A5, B1: a failing upstream answers each pending request with a JSON-RPC error
//! naming the cause and the server's address, never a hang, and nothing else is lost.
//!
//! The upstream is a small hyper server of this test's own, which misbehaves as the
//! called tool's name says: `drop` (an SSE stream cut off after one event), `500`,
//! `resume` / `resume_refused` (a resumable stream closed before the answer, which
//! comes on the resumed stream / the resumption refused with 404), `resume_late` (a
//! resumable stream that stays open without its answer, which comes on the resumed
//! stream), `hang` (no answer), `trickle` (an answer that never ends, a byte at a time),
//! `bad_utf8_sse` / `bad_utf8_json` (a string that is not UTF-8),
//! `cut_emoji_json` / `cut_emoji_sse` (a lone surrogate, id last), `not_json` (an HTML
//! body), `empty` (a JSON body of no bytes for a request), `500_rpc` (HTTP 500 with
//! the server's own JSON-RPC error), `other_id` (a JSON body answering another id),
//! `ok` (a big result, to show shaping still works after each fault).

mod http_support;

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Channel, Full};
use http_support::{Http, TestBody, UrlProxy, call, start_upstream};
use hyper::body::Incoming;
use serde_json::{Value, json};

type Body = TestBody;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// DELETEs the misbehaving server was sent, with the session id they named.
static DELETES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The tools the misbehaving server has; it answers a call of any other with an
/// unknown-tool error.
const TOOLS: [&str; 17] = [
    "headers",
    "drop",
    "resume",
    "resume_refused",
    "resume_late",
    "500",
    "hang",
    "trickle",
    "bad_utf8_sse",
    "bad_utf8_json",
    "cut_emoji_json",
    "cut_emoji_sse",
    "not_json",
    "empty",
    "500_rpc",
    "other_id",
    "ok",
];

/// The answer `cut_emoji_json` and `cut_emoji_sse` give to the call of id `id`: a text
/// ending in a lone surrogate escape (what a TypeScript server writes when it cuts a
/// string inside an emoji), its `id` last — not strict JSON.
fn cut_emoji(id: &str) -> String {
    format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"cut \ud83d"}}]}},"jsonrpc":"2.0","id":{id}}}"#
    )
}

/// The headers of the `tools/list` requests the server was sent (backstop's own
/// listing, E8).
static LISTINGS: std::sync::Mutex<Vec<Value>> = std::sync::Mutex::new(Vec::new());

/// The request's headers, as a JSON object of lowercase names (hop-by-hop included:
/// what came over this hop).
fn headers_json(headers: &http::HeaderMap) -> Value {
    headers
        .iter()
        .map(|(name, value)| (name.to_string(), json!(value.to_str().unwrap_or("?"))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The misbehaving server's answer to one request.
async fn misbehave(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = request.into_parts();
    let seen = headers_json(&parts.headers);
    if parts.method == http::Method::DELETE {
        let session = seen["mcp-session-id"].as_str().unwrap_or("").to_owned();
        DELETES.lock().unwrap().push(session);
        return Ok(Response::new(full("")));
    }
    if parts.method == http::Method::GET {
        let last = seen["last-event-id"].as_str().unwrap_or("none").to_owned();
        // A `resume` or `resume_late` call's stream, resumed: its answer, then the
        // stream ends.
        if let Some(id) = last
            .strip_prefix("r-")
            .or_else(|| last.strip_prefix("late-"))
        {
            let event = format!("id: r-{id}-done\ndata: {}\n\n", big_result(id));
            return Ok(Response::builder()
                .header("content-type", "text/event-stream")
                .body(full(event))
                .unwrap());
        }
        // A `resume_refused` call's stream: gone.
        if last.starts_with("gone-") {
            return Ok(Response::builder()
                .status(StatusCode::NOT_FOUND)
                .header("content-type", "application/json")
                .body(full(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#))
                .unwrap());
        }
        // The server's own stream: one event naming what the request carried, its id
        // following the Last-Event-ID it was given; then the stream ends.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": seen}});
        let event = format!("id: after-{last}\nretry: 1000\ndata: {note}\n\n");
        return Ok(Response::builder()
            .header("content-type", "text/event-stream")
            .body(full(event))
            .unwrap());
    }
    let body = body.collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    // A batch misbehaves as its first request says.
    let message = message.get(0).cloned().unwrap_or(message);
    let id = message["id"].to_string();
    let name = message["params"]["name"].as_str().unwrap_or("").to_owned();
    let sse = |events: Body| {
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(events)
            .unwrap()
    };
    let json_body = |bytes: Vec<u8>| {
        Response::builder()
            .header("content-type", "application/json")
            .body(full(bytes))
            .unwrap()
    };
    if message["method"] == "initialize" {
        let answer = json!({"jsonrpc": "2.0", "id": message["id"],
            "result": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "serverInfo": {"name": "misbehaving", "version": "1"}}});
        return Ok(Response::builder()
            .header("content-type", "application/json")
            .header("mcp-session-id", "sess-1")
            .body(full(answer.to_string()))
            .unwrap());
    }
    if message["method"] == "tools/list" {
        // The listing fails as the request's `x-listing` header says, or lists the
        // tools this server has.
        LISTINGS.lock().unwrap().push(seen.clone());
        return Ok(match seen["x-listing"].as_str() {
            Some("hang") => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                json_body(Vec::new())
            }
            Some("500") => Response::builder()
                .status(StatusCode::INTERNAL_SERVER_ERROR)
                .body(full("oops"))
                .unwrap(),
            Some("drop") => {
                let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
                tokio::spawn(async move {
                    let _ = sender.send_data(Bytes::from("data: {\"jsonrpc\"")).await;
                    sender.abort(std::io::Error::other("cut off"));
                });
                sse(channel.boxed())
            }
            _ => {
                // Two pages: the first tools, then (after `nextCursor`) the rest.
                let second = message["params"]["cursor"] == "page-2";
                let (first, rest) = TOOLS.split_at(3);
                let tools: Vec<Value> = if second { rest } else { first }
                    .iter()
                    .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
                    .collect();
                let mut result = json!({"tools": tools});
                if !second {
                    result["nextCursor"] = json!("page-2");
                }
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                sse(full(format!("event: message\ndata: {answer}\n\n")))
            }
        });
    }
    if message["method"] == "subscriptions/listen" {
        // A 2026-07-28 listen stream: quiet for longer than the front's `--timeout`,
        // then the change it was opened for, then the answer.
        let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(2500)).await;
            let changed =
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
            let _ = sender.send_data(Bytes::from(changed)).await;
            let answer = format!(
                "data: {}\n\n",
                json!({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            );
            let _ = sender.send_data(Bytes::from(answer)).await;
        });
        return Ok(sse(channel.boxed()));
    }
    Ok(match name.as_str() {
        _ if message["method"] == "tools/call" && !TOOLS.contains(&name.as_str()) => json_body(
            json!({"jsonrpc": "2.0", "id": message["id"],
                   "error": {"code": -32602, "message": format!("Unknown tool: {name}")}})
            .to_string()
            .into_bytes(),
        ),
        "headers" => json_body(
            json!({"jsonrpc": "2.0", "id": message["id"],
                   "result": {"content": [{"type": "text", "text": seen.to_string()}]}})
            .to_string()
            .into_bytes(),
        ),
        "drop" => {
            let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
            tokio::spawn(async move {
                let progress = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n";
                let _ = sender.send_data(Bytes::from(progress)).await;
                let _ = sender
                    .send_data(Bytes::from("data: {\"jsonrpc\":\"2.0\",\"id\""))
                    .await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                sender.abort(std::io::Error::other("cut off"));
            });
            sse(channel.boxed())
        }
        // SEP-1699: a priming event (an id, `retry:`), then the stream ends before the
        // answer, which comes when the stream is resumed (or never: `resume_refused`).
        "resume" => sse(full(format!("id: r-{id}\nretry: 50\ndata: \n\n"))),
        "resume_refused" => sse(full(format!("id: gone-{id}\nretry: 50\ndata: \n\n"))),
        "resume_late" => {
            let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
            let priming = format!("id: late-{id}\nretry: 50\ndata: \n\n");
            tokio::spawn(async move {
                let _ = sender.send_data(Bytes::from(priming)).await;
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(sender);
            });
            sse(channel.boxed())
        }
        "500" => Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .body(full("oops"))
            .unwrap(),
        "500_rpc" => Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .header("content-type", "application/json")
            .body(full(
                json!({"jsonrpc": "2.0", "id": message["id"],
                       "error": {"code": -32603, "message": "database is down"}})
                .to_string(),
            ))
            .unwrap(),
        "other_id" => json_body(OTHER_ID.as_bytes().to_vec()),
        "hang" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            json_body(Vec::new())
        }
        "bad_utf8_sse" => {
            let mut events = b"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"\xff\xfe\"}}\n\n".to_vec();
            events.extend_from_slice(format!("id: 2\ndata: {}\n\n", big_result(&id)).as_bytes());
            sse(full(events))
        }
        "trickle" => {
            // An answer that never ends, a byte every 100 ms: never a gap of --timeout.
            let (mut sender, channel) = Channel::<Bytes, std::io::Error>::new(4);
            let head = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            );
            tokio::spawn(async move {
                let _ = sender.send_data(Bytes::from(head)).await;
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if sender.send_data(Bytes::from("x")).await.is_err() {
                        return;
                    }
                }
            });
            Response::builder()
                .header("content-type", "application/json")
                .body(channel.boxed())
                .unwrap()
        }
        "cut_emoji_json" => json_body(cut_emoji(&id).into_bytes()),
        "cut_emoji_sse" => sse(full(format!("id: 1\ndata: {}\n\n", cut_emoji(&id)))),
        "not_json" => json_body(b"<html>Bad gateway</html>".to_vec()),
        "empty" => json_body(Vec::new()),
        "bad_utf8_json" => json_body(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"#)
                .into_bytes()
                .into_iter()
                .chain(*b"\"\xff\"}]}}")
                .collect(),
        ),
        _ if message.get("id").is_none() => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(full(""))
            .unwrap(),
        _ => json_body(big_result(&id).into_bytes()),
    })
}

/// What `other_id` answers: a response to a request nobody sent.
const OTHER_ID: &str = r#"{"jsonrpc":"2.0","id":"someone-else","result":{}}"#;

/// A result of 5,000 lines ending in a prompt.
fn big_result(id: &str) -> String {
    let text = format!("{}PROMPT $", "line of output\n".repeat(5000));
    json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).unwrap(),
           "result": {"content": [{"type": "text", "text": text}]}})
    .to_string()
}

/// The shaped big result: capped, the tail kept.
fn assert_shaped(response: &Value) {
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("\nPROMPT $"),
        "{response}"
    );
}

/// The error that answers a request the upstream failed: `-32603`, its message naming
/// the cause and the address.
fn assert_upstream_error(response: &Value, upstream: &str, cause: &str) {
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(response["error"]["code"], -32603, "{response}");
    assert!(
        message.starts_with(&format!("The MCP server at {upstream} ")) && message.contains(cause),
        "{response}"
    );
    assert_eq!(response["error"]["data"]["upstream"], upstream);
}

/// The misbehaving server, and a gateway in front of it at a 2,000-byte cap with
/// `--timeout 1 --answer-timeout 2`: the server's runtime, the gateway, the server's
/// URL and the gateway's.
fn misbehaving_behind_a_gateway() -> (
    tokio::runtime::Runtime,
    http_support::Spawned,
    String,
    String,
) {
    let (runtime, upstream) = start_upstream(misbehave);
    let options = [
        "--max-bytes",
        "2000",
        "--timeout",
        "1",
        "--answer-timeout",
        "2",
    ];
    let (gateway, url) = http_support::start_gateway(&upstream, &options);
    (runtime, gateway, upstream, url)
}

#[test]
fn a5_the_gateway_answers_each_fault_and_keeps_serving() {
    let (_runtime, _gateway, upstream, url) = misbehaving_behind_a_gateway();
    let http = Http::new();
    let ok = || {
        let reply = http.post(&url, Some("s-1"), &call(99, "ok", json!({})));
        assert_shaped(&reply.response());
    };
    ok();

    // Cut off mid-stream (no event id: it cannot be resumed): the event that came
    // passes; the request gets an error event; the half event is not sent.
    let reply = http.post(&url, Some("s-1"), &call(1, "drop", json!({})));
    let events = reply.events();
    assert_eq!(events.len(), 2, "{reply:?}");
    assert_eq!(events[0].id(), None);
    let error: Value = serde_json::from_slice(&events[1].data().unwrap()).unwrap();
    assert_eq!(error["id"], 1);
    assert_upstream_error(&error, &upstream, "closed the connection");
    ok();

    // B5, SEP-1699: a resumable stream closed before its answer passes on as it came,
    // no made-up error; the client's GET with Last-Event-ID brings the answer, shaped.
    for (id, name, event_id) in [(12, "resume", "r-12"), (13, "resume_refused", "gone-13")] {
        let reply = http.post(&url, Some("s-1"), &call(id, name, json!({})));
        assert_eq!(
            String::from_utf8_lossy(&reply.body),
            format!("id: {event_id}\nretry: 50\ndata: \n\n"),
            "{name}: nothing added"
        );
    }
    // The client's GET resuming the stream whose last event was `event_id`.
    let resume = |event_id: &str| {
        let last = [("mcp-session-id", "s-1"), ("last-event-id", event_id)];
        http.send(http::Method::GET, &url, &last, "")
    };
    let resumed_answer = |event_id: &str, id: u64| {
        let resumed = resume(event_id);
        let answers = resumed.messages();
        assert_eq!(answers.len(), 1, "{resumed:?}");
        assert_eq!(answers[0]["id"], id);
        assert_shaped(&answers[0]);
    };
    resumed_answer("r-12", 12);
    let refused = resume("gone-13");
    assert_eq!(refused.status, 404, "the server's refusal passes");
    ok();

    // B5, at most one answer: a resumable stream still open when --timeout passes is
    // answered with an error; the server's own answer, which a client resuming the
    // stream would bring, is then dropped (it would be a second answer).
    let reply = http.post(&url, Some("s-1"), &call(14, "resume_late", json!({})));
    let answers = reply.messages();
    assert_eq!(answers.len(), 1, "{reply:?}");
    assert_upstream_error(&answers[0], &upstream, "did not answer within 1 s");
    let resumed = resume("late-14");
    assert_eq!(resumed.status, 200);
    assert_eq!(resumed.messages(), Vec::<Value>::new(), "{resumed:?}");
    // The client may use the id again: the new request's answer passes.
    let reply = http.post(&url, Some("s-1"), &call(14, "resume", json!({})));
    assert_eq!(
        reply.messages(),
        Vec::<Value>::new(),
        "only the priming event"
    );
    resumed_answer("r-14", 14);
    ok();

    let reply = http.post(&url, Some("s-1"), &call(2, "500", json!({})));
    assert_eq!(reply.status, 200);
    let error = reply.response();
    assert_upstream_error(&error, &upstream, "answered HTTP 500 Internal Server Error");
    assert_eq!(error["error"]["data"]["status"], 500);
    ok();

    let reply = http.post(&url, Some("s-1"), &call(3, "hang", json!({})));
    assert_upstream_error(&reply.response(), &upstream, "did not answer within 1 s");
    ok();

    // --answer-timeout bounds an answer whose gaps never reach --timeout.
    let reply = http.post(&url, Some("s-1"), &call(11, "trickle", json!({})));
    assert_upstream_error(
        &reply.response(),
        &upstream,
        "did not finish its answer within 2 s",
    );
    ok();

    // B4: an event whose data is not JSON passes as it came; the next one is shaped.
    let reply = http.post(&url, Some("s-1"), &call(4, "bad_utf8_sse", json!({})));
    let events = reply.events();
    assert_eq!(events.len(), 2);
    assert!(reply.body.starts_with(
        b"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"\xff\xfe\"}}\n\n"
    ));
    assert_eq!(events[1].id(), Some(&b"2"[..]));
    assert_shaped(&serde_json::from_slice(&events[1].data().unwrap()).unwrap());

    // B4: an answer that is not strict JSON passes as it came, and is its request's
    // only answer — in a JSON body and in an event; a body that is no JSON-RPC answer
    // at all (HTML) is answered with an error.
    let reply = http.post(&url, Some("s-1"), &call(5, "bad_utf8_json", json!({})));
    assert_eq!(
        reply.body,
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}"
    );
    let reply = http.post(&url, Some("s-1"), &call(8, "cut_emoji_json", json!({})));
    assert_eq!(reply.body, cut_emoji("8").as_bytes());
    let reply = http.post(&url, Some("s-1"), &call(9, "cut_emoji_sse", json!({})));
    assert_eq!(
        reply.body,
        format!("id: 1\ndata: {}\n\n", cut_emoji("9")).as_bytes(),
        "no made-up error after it"
    );
    let reply = http.post(&url, Some("s-1"), &call(10, "not_json", json!({})));
    assert_upstream_error(&reply.response(), &upstream, "not JSON-RPC");
    // A5, B1: an empty JSON body for a request is no answer; the request gets its error.
    let reply = http.post(&url, Some("s-1"), &call(15, "empty", json!({})));
    assert_upstream_error(&reply.response(), &upstream, "not JSON-RPC");
    ok();

    // A batch: each of its requests is answered.
    let batch = format!(
        "[{},{}]",
        call(6, "500", json!({})),
        call(7, "500", json!({}))
    );
    let replies: Vec<Value> = serde_json::from_slice(&http.post(&url, None, &batch).body).unwrap();
    assert_eq!(
        replies.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(),
        [6, 7]
    );
}

#[test]
fn a5_the_gateway_refuses_a_body_over_its_limit_with_413() {
    let (_runtime, upstream) = start_upstream(misbehave);
    let (_gateway, url) = http_support::start_gateway(&upstream, &["--max-body", "1000"]);
    let http = Http::new();
    let small = http.post(&url, None, &call(1, "ok", json!({"pad": "x".repeat(100)})));
    assert_eq!(small.status, 200);
    let big = http.post(&url, None, &call(2, "ok", json!({"pad": "x".repeat(2000)})));
    assert_eq!(big.status, 413);
}

#[test]
fn a5_an_unreachable_upstream_is_named_not_hung_on() {
    let port = http_support::free_port();
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let (_gateway, url) = http_support::start_gateway(&upstream, &[]);
    let reply = Http::new().post(&url, None, &call(1, "ok", json!({})));
    assert_upstream_error(
        &reply.response(),
        &upstream,
        "could not be reached: connection refused",
    );
    // A notification has no request to answer: 502.
    let reply = Http::new().post(
        &url,
        None,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(reply.status, 502);
}

#[test]
fn a5_proxy_url_answers_each_fault_and_keeps_serving() {
    let (_runtime, upstream) = start_upstream(misbehave);
    // The URL's user info and query are never shown: they may hold a credential.
    let with_secrets = upstream.replace("http://", "http://user:pw@") + "?key=s3cr3t";
    let mut proxy = UrlProxy::start(
        &with_secrets,
        &[
            "--max-bytes",
            "2000",
            "--timeout",
            "1",
            "--answer-timeout",
            "2",
            "--header",
            "Authorization: Bearer s3cr3t",
        ],
    );
    let ok = |proxy: &mut UrlProxy, id: u32| {
        proxy.send(&call(id, "ok", json!({})));
        assert_shaped(&proxy.until_response(id).pop().unwrap());
    };
    ok(&mut proxy, 90);
    for (id, name, cause) in [
        (1, "drop", "closed the connection"),
        // B5: the resumption refused (404): one error for the request, the status's.
        (12, "resume_refused", "answered HTTP 404 Not Found"),
        (2, "500", "answered HTTP 500"),
        (3, "hang", "did not answer within 1 s"),
        (4, "trickle", "did not finish its answer within 2 s"),
        (5, "not_json", "not JSON-RPC"),
        (8, "empty", "not JSON-RPC"),
    ] {
        proxy.send(&call(id, name, json!({})));
        let answers = proxy.until_response(id);
        let error = answers.last().unwrap();
        assert!(!error.to_string().contains("s3cr3t"), "{error}");
        assert_upstream_error(error, &upstream, cause);
        if name == "drop" {
            assert_eq!(answers[0]["method"], "notifications/progress");
        }
        ok(&mut proxy, 90 + id);
    }
    // B5, SEP-1699: a resumable stream closed before its answer is resumed (GET with
    // Last-Event-ID after the server's `retry:`): the answer, shaped, and only it.
    proxy.send(&call(13, "resume", json!({})));
    let answers = proxy.until_response(13);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_shaped(&answers[0]);
    proxy.send(&call(113, "ok", json!({})));
    assert_eq!(
        proxy.until_response(113).len(),
        1,
        "no second answer for 13"
    );

    // B4: an answer that is not strict JSON comes out as it came, its request's only
    // answer (in a JSON body, and in an event of a stream that then ends).
    for (id, name) in [(6, "cut_emoji_json"), (7, "cut_emoji_sse")] {
        proxy.send(&call(id, name, json!({})));
        assert_eq!(proxy.line(), cut_emoji(&id.to_string()), "{name}");
        proxy.send(&call(80 + id, "ok", json!({})));
        let next = proxy.until_response(80 + id);
        assert_eq!(next.len(), 1, "{name}: no second answer for {id}: {next:?}");
        assert_shaped(&next[0]);
    }
    assert!(proxy.finish().success());
}

#[test]
fn a5_proxy_url_with_an_unreachable_upstream_answers_and_exits() {
    let port = http_support::free_port();
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let mut proxy = UrlProxy::start(&upstream, &[]);
    proxy.send(http_support::INITIALIZE);
    let error = proxy.until_response(0).pop().unwrap();
    assert_upstream_error(&error, &upstream, "connection refused");
    assert!(proxy.finish().success());
}

#[test]
fn a5_the_gateway_passes_last_event_id_authorization_and_origin_untouched() {
    let (_runtime, upstream) = start_upstream(misbehave);
    let (_gateway, url) = http_support::start_gateway(&upstream, &[]);
    let reply = Http::new().send(
        http::Method::GET,
        &url,
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", "s-9"),
            ("mcp-protocol-version", "2025-06-18"),
            ("last-event-id", "ev-41"),
            ("authorization", "Bearer s3cr3t"),
            ("origin", "http://localhost:6274"),
            ("connection", "keep-alive, x-hop"),
            ("x-hop", "1"),
        ],
        "",
    );
    let events = reply.events();
    assert_eq!(events.len(), 1, "{reply:?}");
    // The event passes byte-identical: its id and retry lines as they came.
    assert!(
        events[0]
            .raw()
            .starts_with(b"id: after-ev-41\nretry: 1000\ndata: ")
    );
    let note: Value = serde_json::from_slice(&events[0].data().unwrap()).unwrap();
    let seen = &note["params"]["data"];
    for (name, value) in [
        ("last-event-id", "ev-41"),
        ("authorization", "Bearer s3cr3t"),
        ("origin", "http://localhost:6274"),
        ("mcp-session-id", "s-9"),
        ("mcp-protocol-version", "2025-06-18"),
    ] {
        assert_eq!(seen[name], value, "{seen}");
    }
    // Hop-by-hop headers are this hop's own.
    assert!(seen.get("x-hop").is_none(), "{seen}");
    assert_ne!(seen["connection"], "keep-alive, x-hop");
}

#[test]
fn a5_proxy_url_sends_the_session_headers_and_only_the_headers_given() {
    let (_runtime, upstream) = start_upstream(misbehave);
    let options = [
        "--header",
        "Authorization: Bearer s3cr3t",
        "--header",
        "X-Tenant: t1",
    ];
    let (mut proxy, _) = UrlProxy::initialized(&upstream, &options);
    // The GET stream the proxy opened after `initialized`: its event comes through,
    // and the stream, ended by the server, is opened again with Last-Event-ID.
    let first = serde_json::from_str::<Value>(&proxy.line()).unwrap();
    assert_eq!(first["method"], "notifications/message");
    assert!(first["params"]["data"].get("last-event-id").is_none());
    let again = serde_json::from_str::<Value>(&proxy.line()).unwrap();
    assert_eq!(again["params"]["data"]["last-event-id"], "after-none");

    proxy.send(&call(1, "headers", json!({})));
    let answer = proxy.until_response(1).pop().unwrap();
    let seen: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let mut names: Vec<&str> = seen
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "accept",
            "authorization",
            "content-length",
            "content-type",
            "host",
            "mcp-method",
            "mcp-name",
            "mcp-protocol-version",
            "mcp-session-id",
            "x-tenant"
        ]
    );
    // The headers 2026-07-28 mirrors from the body (SEP-2243), set on every POST.
    assert_eq!(seen["mcp-method"], "tools/call");
    assert_eq!(seen["mcp-name"], "headers");
    assert_eq!(seen["authorization"], "Bearer s3cr3t");
    assert_eq!(seen["mcp-session-id"], "sess-1");
    assert_eq!(seen["mcp-protocol-version"], "2025-06-18");
    // E8: before the first call, the proxy listed the tools with the same headers.
    let listing = LISTINGS
        .lock()
        .unwrap()
        .iter()
        .find(|seen| seen["x-tenant"] == "t1")
        .cloned()
        .expect("the proxy listed the tools");
    for name in [
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "x-tenant",
    ] {
        assert_eq!(listing[name], seen[name], "{name}");
    }
    // A misspelt tool is now known to be unknown.
    proxy.send(&call(2, "hedaers", json!({})));
    let unknown = proxy.until_response(2).pop().unwrap();
    assert_eq!(unknown["error"]["code"], -32602, "{unknown:.300}");
    assert_eq!(
        unknown["error"]["data"]["suggestion"],
        "Did you mean 'headers'?"
    );
    assert!(proxy.finish().success());
    // The session was ended on the way out.
    assert!(DELETES.lock().unwrap().contains(&"sess-1".to_owned()));
}

/// E8's own listing failing (hanging past the timeout, `500`, cut off) never fails the
/// client's call: it is sent after, and shaped without a catalog.
#[test]
fn e8_a_failing_listing_never_fails_the_call_through_proxy_url() {
    let (_runtime, upstream) = start_upstream(misbehave);
    for fault in ["hang", "500", "drop"] {
        let header = format!("X-Listing: {fault}");
        let options = ["--max-bytes", "2000", "--timeout", "1", "--header", &header];
        let (mut proxy, _) = UrlProxy::initialized(&upstream, &options);
        proxy.send(&call(1, "ok", json!({})));
        assert_shaped(&answer_to(&mut proxy, 1));
        // Not listed again: the next call goes straight on.
        proxy.send(&call(2, "ok", json!({})));
        assert_shaped(&answer_to(&mut proxy, 2));
        assert!(proxy.finish().success(), "{fault}");
    }
}

/// The answer to request `id` (the GET stream's notifications skipped).
fn answer_to(proxy: &mut UrlProxy, id: u32) -> Value {
    proxy.until_response(id).pop().unwrap()
}

#[test]
fn e8_a_failing_listing_never_fails_the_call_through_the_gateway() {
    let (_runtime, _gateway, _upstream, url) = misbehaving_behind_a_gateway();
    let http = Http::new();
    for fault in ["hang", "500", "drop"] {
        // A session begun through this gateway, so that it lists for its first call.
        let reply = http.post(&url, None, http_support::INITIALIZE);
        let session = reply.header("mcp-session-id").unwrap();
        let headers = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-session-id", session.as_str()),
            ("x-listing", fault),
        ];
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        http.send(http::Method::POST, &url, &headers, initialized);
        let reply = http.send(
            http::Method::POST,
            &url,
            &headers,
            &call(1, "ok", json!({})),
        );
        assert_shaped(&reply.response());
        assert!(
            LISTINGS
                .lock()
                .unwrap()
                .iter()
                .any(|seen| seen["x-listing"] == fault),
            "the gateway tried to list, with the client's headers"
        );
    }
    // A listing that works, over two pages: the first call knows the tools, those of
    // the second page (`hang`) too.
    let reply = http.post(&url, None, http_support::INITIALIZE);
    let session = reply.header("mcp-session-id").unwrap();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    http.post(&url, Some(&session), initialized);
    let unknown = http
        .post(&url, Some(&session), &call(1, "hnag", json!({})))
        .response();
    assert_eq!(
        unknown["error"]["data"]["suggestion"], "Did you mean 'hang'?",
        "{unknown}"
    );
}

/// R5: a stateless request (no session) behind the gateway starts from the listing
/// kept for its credential; only the first request of a credential lists, and a
/// listing the server did not declare public serves no other credential.
/// A5, B1, B4 on 2026-07-28: a stateless request (no session, its revision in
/// `_meta`) is answered as a session's is — a big result shaped, an answer that is not
/// strict JSON passed as it came, and a JSON body that is no answer (HTML, or no bytes)
/// replaced by the request's error.
#[test]
fn a5_a_stateless_request_gets_one_answer_for_each_fault() {
    let (_runtime, upstream) = start_upstream(misbehave);
    let (_gateway, url) = http_support::start_gateway(&upstream, &["--max-bytes", "2000"]);
    let post = |id: u32, name: &str| {
        let headers = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        Http::new().send(http::Method::POST, &url, &headers, &request.to_string())
    };
    assert_shaped(&post(1, "ok").response());
    assert_eq!(post(2, "cut_emoji_json").body, cut_emoji("2").as_bytes());
    for (id, name) in [(3, "not_json"), (4, "empty")] {
        let error = post(id, name).response();
        assert_eq!(error["id"], id, "{name}");
        assert_upstream_error(&error, &upstream, "not JSON-RPC");
    }
    assert_shaped(&post(5, "ok").response());
}

#[test]
fn r5_the_gateway_lists_once_per_credential_for_stateless_requests() {
    let (_runtime, upstream) = start_upstream(misbehave);
    let (_gateway, url) = http_support::start_gateway(&upstream, &["--max-bytes", "2000"]);
    let post = |id: u32, credential: &str| {
        let headers = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("x-listing", "stateless"),
            ("authorization", credential),
        ];
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "ok", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let reply = Http::new().send(http::Method::POST, &url, &headers, &request.to_string());
        assert_shaped(&reply.response());
    };
    let listings = |credential: &str| {
        LISTINGS
            .lock()
            .unwrap()
            .iter()
            .filter(|seen| seen["x-listing"] == "stateless" && seen["authorization"] == credential)
            .count()
    };
    post(1, "Bearer alice");
    let pages = listings("Bearer alice");
    assert!(pages > 0, "the first stateless call lists");
    post(2, "Bearer alice");
    assert_eq!(
        listings("Bearer alice"),
        pages,
        "one listing serves the credential's calls"
    );
    post(3, "Bearer bob");
    assert_eq!(
        listings("Bearer bob"),
        pages,
        "a private listing is its credential's own"
    );
}

/// A5: a `subscriptions/listen` stream (2026-07-28) is quiet until something changes;
/// `--timeout` bounds the wait between events of other answers, never this one's — the
/// `list_changed` after a quiet spell reaches the client, through both fronts.
#[test]
fn a5_a_quiet_listen_stream_is_not_timed_out() {
    let (_runtime, upstream) = start_upstream(misbehave);
    let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    .to_string();

    let (_gateway, url) = http_support::start_gateway(&upstream, &["--timeout", "1"]);
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let reply = Http::new().send(http::Method::POST, &url, &headers, &listen);
    let messages = reply.messages();
    assert_eq!(
        messages[0]["method"], "notifications/tools/list_changed",
        "{messages:?}"
    );
    assert_eq!(
        messages[1],
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );

    let mut proxy = UrlProxy::start(&upstream, &["--timeout", "1"]);
    proxy.send(&listen);
    let lines = proxy.until_response(7);
    assert_eq!(
        lines[0]["method"], "notifications/tools/list_changed",
        "{lines:?}"
    );
    assert_eq!(lines[1], json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
    assert!(proxy.finish().success());
}

/// A server that takes a session (`initialize`, notifications) and never answers
/// anything else: its `tools/list` and every call hang.
async fn hang_after_initialize(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    if message["method"] == "initialize" {
        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "hangs", "version": "1"}}});
        return Ok(Response::builder()
            .header("content-type", "application/json")
            .header("mcp-session-id", "hang-1")
            .body(full(answer.to_string()))
            .unwrap());
    }
    if message["id"].is_null() {
        return Ok(Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(full(""))
            .unwrap());
    }
    std::future::pending().await
}

/// The timeout's error for `response`'s request, which came within `took` of `--timeout
/// 2` with room for the process's own pace (never twice the timeout).
fn assert_timed_out_once(response: &Value, took: Duration) {
    assert!(
        took < Duration::from_millis(3_500),
        "B5: --timeout 2 bounds the whole wait, backstop's tools/list included: {took:?}"
    );
    let message = response["error"]["message"].as_str().unwrap();
    let listing = message
        .split_once(
            "did not answer within 2 s, backstop's own tools/list before this request \
             included (it took ",
        )
        .and_then(|(_, rest)| rest.strip_suffix(" s)")?.parse::<f64>().ok());
    assert!(
        listing.is_some_and(|seconds| (1.0..1.5).contains(&seconds)),
        "B5: the message says what was waited for, the listing half of it: {message}"
    );
}

/// B5 (issue 32): `--timeout` bounds what a client waits for a hanging server, the
/// shaper's own `tools/list` before a first call included — through the gateway for a
/// stateless (2026-07-28) call and a session's, and through `proxy --url`. Before,
/// the listing waited its own timeout and then the call its own: 4 s for `--timeout 2`,
/// with a message that said 2.
#[test]
fn b5_the_timeout_bounds_a_first_call_and_backstops_own_listing_together() {
    let (_runtime, upstream) = start_upstream(hang_after_initialize);
    let (_gateway, url) = http_support::start_gateway(&upstream, &["--timeout", "2"]);
    let http = Http::new();
    let stateless = http_support::stateless_call(1, "any", json!({}), "2026-07-28");
    let started = std::time::Instant::now();
    let reply = http.send(
        http::Method::POST,
        &url,
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
        ],
        &stateless,
    );
    assert_timed_out_once(&reply.response(), started.elapsed());

    let (session, _) = http.initialize(&url);
    http.post(
        &url,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let started = std::time::Instant::now();
    let reply = http.post(&url, Some(&session), &call(2, "any", json!({})));
    assert_timed_out_once(&reply.response(), started.elapsed());

    let (mut proxy, _) = UrlProxy::initialized(&upstream, &["--timeout", "2"]);
    let started = std::time::Instant::now();
    proxy.send(&call(3, "any", json!({})));
    let answer = proxy.until_response(3).pop().unwrap();
    assert_timed_out_once(&answer, started.elapsed());
}

/// A5: where the upstream's HTTP error body is itself a JSON-RPC error, that error is
/// what the client gets — shaped as any answer (E1: a known tool's failure becomes its
/// `isError` result), through both fronts alike. Before, `proxy --url` passed it and
/// the gateway replaced it with `-32603 answered HTTP 500`.
#[test]
fn a5_a_json_rpc_error_on_an_error_status_is_what_the_client_gets_through_both_fronts() {
    let assert_the_servers = |answer: &Value| {
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, "database is down", "{answer}");
    };
    let (_runtime, _gateway, upstream, url) = misbehaving_behind_a_gateway();
    let http = Http::new();
    let reply = http.post(&url, Some("s-1"), &call(1, "500_rpc", json!({})));
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_the_servers(&reply.response());
    // A batch: the server's answer for the one it answered, the status's error for
    // the other.
    let batch = format!(
        "[{},{}]",
        call(2, "500_rpc", json!({})),
        call(3, "500_rpc", json!({}))
    );
    let replies: Vec<Value> = serde_json::from_slice(&http.post(&url, None, &batch).body).unwrap();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_the_servers(&replies[0]);
    assert_eq!(replies[1]["id"], 3);
    assert_upstream_error(&replies[1], &upstream, "answered HTTP 500");

    let mut proxy = UrlProxy::start(&upstream, &["--max-bytes", "2000"]);
    proxy.send(&call(4, "500_rpc", json!({})));
    assert_the_servers(&proxy.until_response(4).pop().unwrap());
    assert!(proxy.finish().success());
}

/// B5: a JSON body that ends without answering a request of its POST (the server
/// answered another id) leaves that request one error — after the server's message,
/// through both fronts; a batch's requests one each. Before, neither front answered
/// it: the client waited for good.
#[test]
fn b5_a_request_a_json_body_left_unanswered_gets_one_error_through_both_fronts() {
    let (_runtime, _gateway, upstream, url) = misbehaving_behind_a_gateway();
    let http = Http::new();
    let other: Value = serde_json::from_str(OTHER_ID).unwrap();
    let reply = http.post(&url, Some("s-1"), &call(1, "other_id", json!({})));
    let messages: Vec<Value> = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(messages.len(), 2, "{reply:?}");
    assert_eq!(messages[0], other, "the server's message, as it came");
    assert_eq!(messages[1]["id"], 1);
    assert_upstream_error(
        &messages[1],
        &upstream,
        "closed the connection before answering",
    );
    let batch = format!(
        "[{},{}]",
        call(2, "other_id", json!({})),
        call(3, "other_id", json!({}))
    );
    let messages: Vec<Value> = serde_json::from_slice(&http.post(&url, None, &batch).body).unwrap();
    let ids: Vec<&Value> = messages.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!("someone-else"), &json!(2), &json!(3)]);
    // The session goes on: the next answer is shaped, and no late error follows.
    let reply = http.post(&url, Some("s-1"), &call(4, "ok", json!({})));
    assert_shaped(&reply.response());

    let mut proxy = UrlProxy::start(&upstream, &["--max-bytes", "2000"]);
    proxy.send(&call(5, "other_id", json!({})));
    proxy.send(&call(6, "ok", json!({})));
    // The two POSTs go at once and may come back in either order: a few more calls,
    // one at a time, give the first one's answers time to come (and never hang).
    let mut lines = proxy.until_response(6);
    for next in 7..10 {
        if lines.iter().any(|line| line["id"] == 5) {
            break;
        }
        proxy.send(&call(next, "ok", json!({})));
        lines.extend(proxy.until_response(next));
    }
    let errors: Vec<&Value> = lines.iter().filter(|line| line["id"] == 5).collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    assert_upstream_error(
        errors[0],
        &upstream,
        "closed the connection before answering",
    );
    assert!(lines.contains(&other), "{lines:?}");
    assert_shaped(lines.iter().find(|line| line["id"] == 6).unwrap());
    assert!(proxy.finish().success());
}
