//! A stdio MCP server that writes one huge line fast, for measuring `backstop proxy`
//! on big messages (the `pipe` benchmark and `tests/memory_bound.rs`, SPEC B3).
//!
//! Each big line is written from one repeated 64 KiB block of escaped scrollback
//! ([`scrollback::BigLine`]), so the server costs next to nothing even in a debug build
//! and the reader can check every byte without holding the line.
//!
//! | request | answer |
//! | --- | --- |
//! | `tools/call` `scrollback {bytes, id_last}` | a text result line of about `bytes` bytes, `id` after `result` when `id_last` |
//! | `tools/call` `log {bytes}` | a `notifications/message` line of about `bytes` bytes, then a small text result |
//! | `resources/read` `{uri: "scrollback://<bytes>"}` | a resource text line of about `bytes` bytes, `id` after `result` |
//! | `tools/call` `research {bytes, notify}` | a task handle (2026-07-28), task `t-big`; with `notify`, then a `notifications/tasks` line of about `bytes` bytes, the task completed |
//! | `tasks/get` `{taskId: "t-big"}` | the task's state, completed with a text result: a line of about `bytes` bytes (of the last `research`) |
//!
//! `initialize`, `tools/list` and `ping` are answered as usual; notifications are
//! read and ignored. Run:
//! `cargo run -p backstop --example big_line_server`.

mod scrollback;

use std::io::{self, BufRead, Write};

use scrollback::{BigLine, Shape};
use serde_json::{Value, json};

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    // The size of the last `research` task's result.
    let mut task_bytes = 0;
    for line in stdin.lock().split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id") else {
            continue;
        };
        let id = id.to_string();
        let params = &request["params"];
        let bytes = |value: &Value| usize::try_from(value.as_u64().unwrap_or(0)).unwrap_or(0);
        let written = match request["method"].as_str().unwrap_or("") {
            "tools/call" => {
                let arguments = &params["arguments"];
                match params["name"].as_str().unwrap_or("") {
                    "scrollback" => {
                        let shape = if arguments["id_last"] == true {
                            Shape::ResultIdLast
                        } else {
                            Shape::ResultIdFirst
                        };
                        write_big(
                            &mut out,
                            &BigLine::new(shape, &id, bytes(&arguments["bytes"])),
                        )
                    }
                    "log" => write_big(
                        &mut out,
                        &BigLine::new(Shape::Notification, &id, bytes(&arguments["bytes"])),
                    )
                    .and_then(|()| {
                        send(
                            &mut out,
                            &id,
                            json!({"content": [{"type": "text", "text": "logged"}]}),
                        )
                    }),
                    "research" => {
                        task_bytes = bytes(&arguments["bytes"]);
                        let handle = json!({"resultType": "task", "taskId": "t-big",
                            "status": "working"});
                        send(&mut out, &id, handle).and_then(|()| {
                            match arguments["notify"] == true {
                                true => write_big(
                                    &mut out,
                                    &BigLine::new(Shape::TaskStatus, &id, task_bytes),
                                ),
                                false => Ok(()),
                            }
                        })
                    }
                    other => send_error(&mut out, &id, -32602, &format!("Unknown tool: {other}")),
                }
            }
            "tasks/get" if params["taskId"] == "t-big" => {
                write_big(&mut out, &BigLine::new(Shape::TaskState, &id, task_bytes))
            }
            "resources/read" => {
                let size = params["uri"]
                    .as_str()
                    .and_then(|uri| uri.strip_prefix("scrollback://"))
                    .and_then(|size| size.parse().ok())
                    .unwrap_or(0);
                write_big(&mut out, &BigLine::new(Shape::Resource, &id, size))
            }
            "initialize" => send(
                &mut out,
                &id,
                json!({
                    "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2025-06-18"),
                    "capabilities": {"tools": {}, "resources": {}},
                    "serverInfo": {"name": "big-line", "version": "1.0"}
                }),
            ),
            "tools/list" => send(
                &mut out,
                &id,
                json!({"tools": [
                    {"name": "scrollback", "inputSchema": {"type": "object", "properties": {
                        "bytes": {"type": "integer"}, "id_last": {"type": "boolean"}}}},
                    {"name": "log", "inputSchema": {"type": "object", "properties": {
                        "bytes": {"type": "integer"}}}},
                    {"name": "research", "inputSchema": {"type": "object", "properties": {
                        "bytes": {"type": "integer"}, "notify": {"type": "boolean"}}}},
                ]}),
            ),
            "ping" => send(&mut out, &id, json!({})),
            other => send_error(&mut out, &id, -32601, &format!("Method not found: {other}")),
        };
        if written.is_err() {
            break; // the reader is gone
        }
    }
}

/// Write `line` and its newline, the repeated block straight from one buffer.
fn write_big(out: &mut impl Write, line: &BigLine) -> io::Result<()> {
    for piece in line.from(0) {
        out.write_all(piece)?;
    }
    out.write_all(b"\n")?;
    out.flush()
}

fn send(out: &mut impl Write, id: &str, result: Value) -> io::Result<()> {
    writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)?;
    out.flush()
}

fn send_error(out: &mut impl Write, id: &str, code: i64, message: &str) -> io::Result<()> {
    let error = json!({"code": code, "message": message});
    writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)?;
    out.flush()
}
