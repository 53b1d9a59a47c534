//! The JSON-RPC shaper on any stream of lines, from either side: it never panics;
//! client messages pass unchanged; a server line it leaves alone is forwarded
//! byte-identical; a line it rewrites is valid JSON that answers the same request
//! (same id, same number of batch elements, in order), and what was JSON-RPC stays
//! JSON-RPC (SPEC A2, B1).
//!
//! Lines are fuzzer bytes, or JSON-RPC messages built with `arbitrary` around the
//! methods the shaper tracks (initialize, tools/list, tools/call, resources/read) with
//! hostile results. Half the runs go through the routing API, where the shaper sends
//! its own `tools/list` and holds `tools/call` answers until it is done: there every
//! message it sends its own way is a `tools/list` under its own id, and every line it
//! sends the client is a server line as it came or a rewritten one as above — the
//! listing's answers never (E8, B1). An input that starts with `#transcript` is read as lines `C <line>`
//! (from the client) and `S <line>` (from the server): the form of the seeds, which
//! replay the reference's wire capture.
#![no_main]

use std::time::Instant;
use arbitrary::{Result, Unstructured};
use backstop_core::Limit;
use backstop_core::testing::unstructured::{terminal_text, tool_result};
use backstop_jsonrpc::listing::LISTING_ID_PREFIX;
use backstop_jsonrpc::{Forward, Route, Shaper};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const TOOLS: &[&str] = &["capture_pane", "takes_int", "ghost"];
const METHODS: &[&str] = &[
    "initialize",
    "tools/list",
    "tools/call",
    "resources/read",
    "ping",
];

fn id(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0..=2)? {
        0 => json!(u.int_in_range(0..=5)?),
        1 => json!(format!("r{}", u.int_in_range(0..=5)?)),
        _ => Value::Null,
    })
}

fn request(u: &mut Unstructured<'_>) -> Result<Value> {
    let method = *u.choose(METHODS)?;
    let params = match method {
        "initialize" => json!({"protocolVersion": *u.choose(&["2025-11-25", "2026-07-28", "x"])?,
            "clientInfo": {"name": terminal_text(u, 3)?, "version": "1"}}),
        "tools/call" => json!({"name": *u.choose(TOOLS)?,
            "arguments": {"count": terminal_text(u, 2)?, "wait_for_previous": true},
            "_meta": if u.arbitrary()? { json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}) } else { json!({}) }}),
        "resources/read" => json!({"uri": "sessions://missing"}),
        _ => json!({}),
    };
    Ok(json!({"jsonrpc": "2.0", "id": id(u)?, "method": method, "params": params}))
}

fn response(u: &mut Unstructured<'_>) -> Result<Value> {
    let body = match u.int_in_range(0..=3)? {
        0 => json!({"result": tool_result(u)?}),
        1 => json!({"result": {"tools": [{"name": "capture_pane"},
            {"name": "takes_int", "inputSchema": {"type": "object", "properties": {"count": {}}}}]}}),
        2 => json!({"error": {"code": *u.choose(&[-32602i64, -32603, -32002, -32001])?,
            "message": terminal_text(u, 6)?, "data": {"uri": "sessions://missing"}}}),
        _ => json!({"result": {"protocolVersion": "2025-11-25"}}),
    };
    let mut message = json!({"jsonrpc": "2.0", "id": id(u)?});
    message
        .as_object_mut()
        .unwrap()
        .extend(body.as_object().unwrap().clone());
    Ok(message)
}

/// The id of each element of a message (one for a plain message), if it is JSON.
fn ids(bytes: &[u8]) -> Option<Vec<Option<Value>>> {
    match serde_json::from_slice::<Value>(bytes).ok()? {
        Value::Array(items) => Some(items.iter().map(|m| m.get("id").cloned()).collect()),
        message => Some(vec![message.get("id").cloned()]),
    }
}

/// A0, B4: the ids a route says its message answers, when it says, are the ones every
/// path reads (`message::response_ids`).
fn check_answered(route: &Route, message: &[u8]) {
    if let Some(answered) = &route.answered {
        let read = backstop_jsonrpc::message::response_ids(message);
        assert_eq!(answered, &read, "the route's answered ids");
    }
}

/// Feed one server line and check what comes out.
fn server_line(shaper: &mut Shaper, line: &[u8]) {
    let route = shaper.server_route(Instant::now(), line);
    check_answered(&route, line);
    if let Some(Forward::Rewritten(out)) = route.forward {
        let before = ids(line).expect("only JSON is rewritten");
        let after = ids(&out).expect("a rewritten line is valid JSON");
        assert_eq!(before, after, "a rewritten line answers the same requests");
        still_json_rpc(&out);
    }
}

/// A line the shaper wrote is JSON-RPC responses, none of them to its own listing.
fn still_json_rpc(out: &[u8]) {
    let value: Value = serde_json::from_slice(out).expect("a line it wrote is valid JSON");
    let messages = match &value {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    };
    for m in messages {
        assert_eq!(m["jsonrpc"], "2.0", "still JSON-RPC: {m}");
        assert!(
            m.get("result").is_some() != m.get("error").is_some(),
            "one of result/error"
        );
        let own = m["id"]
            .as_str()
            .is_some_and(|id| id.starts_with(LISTING_ID_PREFIX));
        assert!(!own, "the listing's answers stay with the shaper: {m}");
    }
}

/// What the routing API sends: the shaper's own requests are `tools/list`s under its
/// own ids; what goes to the client is a server line as it came, or valid JSON-RPC that
/// is not the answer to the shaper's listing.
fn check_route(route: &Route, server_lines: &[Vec<u8>]) {
    for request in &route.to_server {
        let request: Value = serde_json::from_slice(request).expect("its own requests are JSON");
        assert_eq!(request["method"], "tools/list");
        assert!(
            request["id"]
                .as_str()
                .is_some_and(|id| id.starts_with(LISTING_ID_PREFIX))
        );
    }
    let forwarded = route.forward.iter().filter_map(|forward| match forward {
        Forward::Unchanged => None,
        Forward::Rewritten(bytes) => Some(bytes),
    });
    for line in route.to_client.iter().chain(forwarded) {
        if server_lines.contains(line) {
            continue;
        }
        still_json_rpc(line);
    }
}

fn transcript(data: &[u8]) {
    let mut shaper = Shaper::new(Limit::new(1000).unwrap());
    for line in data.split(|&b| b == b'\n').skip(1) {
        match line {
            [b'C', b' ', rest @ ..] => {
                assert!(
                    shaper.client_message(Instant::now(), rest).is_unchanged(),
                    "client messages pass"
                )
            }
            [b'S', b' ', rest @ ..] => server_line(&mut shaper, rest),
            _ => {}
        }
    }
}

fn run(data: &[u8]) -> Result<()> {
    if data.starts_with(b"#transcript") {
        transcript(data);
        return Ok(());
    }
    let mut u = Unstructured::new(data);
    let limit = Limit::new(u.int_in_range(Limit::min_bytes()..=4000)?).unwrap();
    let mut shaper = Shaper::new(limit).with_max_pending(u.int_in_range(1..=8)?);
    let routed = u.arbitrary::<bool>()?;
    let mut server_lines = Vec::new();
    while !u.is_empty() {
        let from_client = u.arbitrary::<bool>()?;
        let line: Vec<u8> = match u.int_in_range(0..=5)? {
            0 => u.arbitrary::<Vec<u8>>()?,
            1 => {
                let n = u.int_in_range(1..=3)?;
                let items: Vec<Value> = (0..n)
                    .map(|_| {
                        if from_client {
                            request(&mut u)
                        } else {
                            response(&mut u)
                        }
                    })
                    .collect::<Result<_>>()?;
                serde_json::to_vec(&items).unwrap()
            }
            _ if from_client => serde_json::to_vec(&request(&mut u)?).unwrap(),
            _ => serde_json::to_vec(&response(&mut u)?).unwrap(),
        };
        if routed {
            let route = if from_client {
                let line = if u.ratio(1, 6)? {
                    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()
                } else {
                    line
                };
                let route = shaper.route_client_message(Instant::now(), &line);
                assert_eq!(
                    route.forward,
                    Some(Forward::Unchanged),
                    "client messages pass"
                );
                route
            } else {
                // The server answers the shaper's listing too, now and then.
                let line = if u.ratio(1, 4)? {
                    let n = u.int_in_range(1..=3)?;
                    let next = if u.arbitrary()? {
                        json!("next")
                    } else {
                        Value::Null
                    };
                    serde_json::to_vec(
                        &json!({"jsonrpc": "2.0", "id": format!("{LISTING_ID_PREFIX}{n}"),
                        "result": {"tools": [{"name": *u.choose(TOOLS)?}], "nextCursor": next}}),
                    )
                    .unwrap()
                } else {
                    line
                };
                server_lines.push(line.clone());
                let route = shaper.route_server_message(Instant::now(), &line);
                check_answered(&route, &line);
                route
            };
            check_route(&route, &server_lines);
            continue;
        }
        if from_client {
            assert!(
                shaper.client_message(Instant::now(), &line).is_unchanged(),
                "client messages pass"
            );
            continue;
        }
        server_line(&mut shaper, &line);
    }
    if routed {
        let gone = backstop_core::ProtocolError::new(-32603, "gone");
        let answers = Route {
            to_client: shaper.answer_pending(Instant::now(), &gone),
            ..Route::default()
        };
        check_route(&answers, &server_lines);
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});
