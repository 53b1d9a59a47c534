//! A tiny stdio MCP server for the end-to-end tests and the benchmark of
//! `backstop proxy`: exact, scriptable misbehaviour.
//!
//! Tools (all `tools/call`):
//!
//! | tool | does |
//! | --- | --- |
//! | `echo {text}` | a text result holding `text` |
//! | `fail` | JSON-RPC error `-32603 "Internal error: Pane not found: %99"` |
//! | `big {bytes}` | a text result of about `bytes` bytes of lines, ending `PROMPT $` |
//! | `hold` | no answer until the next request has been answered (out of order) |
//! | `crash {code}` | exits with `code` without answering |
//! | `partial` | writes half a response, no newline, and exits 0 |
//! | `no_newline` | writes a whole response without its newline, and exits 0 |
//! | `cut_emoji` | a text result ending in a lone surrogate escape (`\ud83d`, not strict JSON: what a TypeScript server writes when it cuts a string inside an emoji), `id` last |
//!
//! `resources/read` answers `-32602` with `data.uri` (the 2026-07-28 way); a batch is
//! answered with a batch. `FIXTURE_TOOLS_LIST` changes how `tools/list` is answered
//! (comma-separated): `paged` in two pages (`nextCursor`), `late` (its first page) after
//! the next request's answer, `error` with `-32603`, `never` not at all. SIGINT and
//! SIGTERM end it as their default actions do, even when it was started with them
//! ignored (a background job of a shell without job control inherits SIGINT ignored;
//! the proxy's signal test would then wait forever). Run:
//! `cargo run -p backstop --example fixture_server`.

use std::io::{self, BufRead, Write};

use serde_json::{Value, json};

/// How `tools/list` is answered (`FIXTURE_TOOLS_LIST`).
#[derive(Default)]
struct Listing {
    paged: bool,
    late: bool,
    error: bool,
    never: bool,
}

/// SIGINT and SIGTERM, whatever this process inherited for them, end it by their
/// default action (a thread of their own catches them and raises them again so).
fn die_of_interrupt_and_termination() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).expect("signals");
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _ = signal_hook::low_level::emulate_default_handler(signal);
        }
    });
}

fn main() {
    die_of_interrupt_and_termination();
    eprintln!("fixture_server: ready");
    let options = std::env::var("FIXTURE_TOOLS_LIST").unwrap_or_default();
    let listing = Listing {
        paged: options.split(',').any(|o| o == "paged"),
        late: options.split(',').any(|o| o == "late"),
        error: options.split(',').any(|o| o == "error"),
        never: options.split(',').any(|o| o == "never"),
    };
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut held: Option<Value> = None;
    let mut held_list: Option<Value> = None;
    for line in stdin.lock().split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let answer = match &message {
            Value::Array(batch) => {
                let answers: Vec<Value> = batch
                    .iter()
                    .filter_map(|m| answer(m, &listing, &mut out))
                    .collect();
                (!answers.is_empty()).then_some(Value::Array(answers))
            }
            single => {
                if tool_name(single) == Some("hold") {
                    eprintln!("fixture_server: holding {}", single["id"]);
                    held = Some(single.clone());
                    continue;
                }
                if listing.never && single["method"] == "tools/list" {
                    eprintln!("fixture_server: not listing {}", single["id"]);
                    continue;
                }
                if listing.late
                    && single["method"] == "tools/list"
                    && single["params"]["cursor"].is_null()
                {
                    eprintln!("fixture_server: listing late {}", single["id"]);
                    held_list = Some(single.clone());
                    continue;
                }
                answer(single, &listing, &mut out)
            }
        };
        if let Some(answer) = answer {
            send(&mut out, &answer);
            if let Some(request) = held.take() {
                send(&mut out, &text_result(&request["id"], "held answer"));
            }
            if let Some(list) = held_list.take()
                && let Some(answer) = self::answer(&list, &listing, &mut out)
            {
                send(&mut out, &answer);
            }
        }
    }
}

fn send(out: &mut impl Write, message: &Value) {
    let mut line = serde_json::to_vec(message).expect("serializable");
    line.push(b'\n');
    let _ = out.write_all(&line);
    let _ = out.flush();
}

fn tool_name(message: &Value) -> Option<&str> {
    (message["method"] == "tools/call")
        .then(|| message["params"]["name"].as_str())
        .flatten()
}

fn text_result(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
}

fn tool(name: &str, properties: Value) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
}

/// The answer to one request, `None` for a notification.
fn answer(message: &Value, listing: &Listing, out: &mut impl Write) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message["method"].as_str().unwrap_or("");
    let arguments = &message["params"]["arguments"];
    let result = match method {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "fixture", "version": "1.0"}
        }),
        "tools/list" if listing.error => {
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603, "message": "Internal error: the tool list is broken"}}));
        }
        "tools/list" => {
            let tools = vec![
                tool("echo", json!({"text": {"type": "string"}})),
                tool("fail", json!({})),
                tool("big", json!({"bytes": {"type": "integer"}})),
                tool("hold", json!({})),
                tool("crash", json!({"code": {"type": "integer"}})),
                tool("partial", json!({})),
                tool("no_newline", json!({})),
            ];
            match (listing.paged, message["params"]["cursor"].as_str()) {
                (false, _) => json!({"tools": tools}),
                (true, None) => json!({"tools": tools[3..], "nextCursor": "page-2"}),
                (true, Some(_)) => json!({"tools": tools[..3]}),
            }
        }
        "resources/read" => {
            let uri = &message["params"]["uri"];
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32602, "message": format!("Resource not found: {}", uri.as_str().unwrap_or("")),
                "data": {"uri": uri}}}));
        }
        "tools/call" => match tool_name(message).unwrap_or("") {
            "echo" => return Some(text_result(&id, arguments["text"].as_str().unwrap_or(""))),
            "fail" => {
                return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32603, "message": "Internal error: Pane not found: %99"}}));
            }
            "big" => {
                // Written by hand, not through serde_json: fast even in a debug build.
                let bytes = arguments["bytes"].as_u64().unwrap_or(0) as usize;
                let lines = bytes.saturating_sub(8) / 15;
                let mut response = Vec::with_capacity(lines * 16 + 100);
                response.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                response.extend_from_slice(id.to_string().as_bytes());
                response.extend_from_slice(br#","result":{"content":[{"type":"text","text":""#);
                for _ in 0..lines {
                    response.extend_from_slice(br"line of output\n");
                }
                response.extend_from_slice(b"PROMPT $\"}]}}\n");
                let _ = out.write_all(&response);
                let _ = out.flush();
                return None;
            }
            "crash" => std::process::exit(arguments["code"].as_i64().unwrap_or(1) as i32),
            "partial" => {
                let _ = out.write_all(br#"{"jsonrpc":"2.0","id":"#);
                let _ = out.flush();
                std::process::exit(0);
            }
            "cut_emoji" => {
                let line = format!(
                    r#"{{"result":{{"content":[{{"type":"text","text":"cut here \ud83d"}}]}},"jsonrpc":"2.0","id":{id}}}"#
                );
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
                return None;
            }
            "no_newline" => {
                let line = serde_json::to_vec(&text_result(&id, "last words")).expect("json");
                let _ = out.write_all(&line);
                let _ = out.flush();
                std::process::exit(0);
            }
            other => {
                return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32602, "message": format!("Unknown tool: {other}")}}));
            }
        },
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
