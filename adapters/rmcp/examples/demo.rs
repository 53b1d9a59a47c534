//! What a client receives from the same rmcp server, without backstop and with it.
//!
//! ```text
//! cargo run -p backstop-rmcp --example demo
//! ```
//!
//! One process: the server and an rmcp client talk over an in-memory duplex. Three
//! calls — a failing tool, a bad argument, 5 MB of scrollback — first to the bare
//! server, then to the same server wrapped in `Backstop::new(…)`.

#[path = "support/scrollback_tools.rs"]
mod scrollback_tools;

use backstop_rmcp::Backstop;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServerHandler, ServiceExt};
use scrollback_tools::ScrollbackTools;
use serde_json::{Value, json};

/// Lines of scrollback: a little over 5 MB of text.
const SCROLLBACK_LINES: u32 = 240_000;

/// The longest text shown of one answer; the rest is summarised.
const SHOWN: usize = 2_000;

async fn connect<S: ServerHandler>(
    server: S,
) -> Result<RunningService<RoleClient, ()>, Box<dyn std::error::Error>> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    Ok(().serve(client_io).await?)
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(name).with_arguments(arguments)
}

/// The answer as the client got it: a result, or a JSON-RPC error.
fn answer(outcome: Result<CallToolResult, ServiceError>) -> String {
    let value = match outcome {
        Ok(result) => json!({"result": result}),
        Err(ServiceError::McpError(error)) => json!({"error": error}),
        Err(other) => json!({"transport error": other.to_string()}),
    };
    let wire = serde_json::to_string(&value).unwrap_or_default();
    if wire.len() <= SHOWN {
        return serde_json::to_string_pretty(&value).unwrap_or(wire);
    }
    let text = value
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or("");
    let head: String = text.chars().take(60).collect();
    let tail_start = text
        .char_indices()
        .rev()
        .nth(40)
        .map_or(0, |(index, _)| index);
    format!(
        "{} bytes on the wire; text starts {:?} … ends {:?}",
        wire.len(),
        head,
        &text[tail_start..]
    )
}

async fn show<S: ServerHandler>(title: &str, server: S) -> Result<(), Box<dyn std::error::Error>> {
    println!("==================== {title} ====================");
    let client = connect(server).await?;
    let calls = [
        (
            "1. a failing tool: fail(kind: \"suggestion\")",
            call("fail", json!({"kind": "suggestion"})),
        ),
        (
            "2. a bad argument: takes_int(count: \"hunter2\", verbose: true)",
            call("takes_int", json!({"count": "hunter2", "verbose": true})),
        ),
        (
            "3. 5 MB of scrollback: scrollback(lines: 240000)",
            call("scrollback", json!({"lines": SCROLLBACK_LINES})),
        ),
    ];
    for (label, request) in calls {
        println!("\n--- {label}");
        println!("{}", answer(client.call_tool(request).await));
    }
    client.cancel().await?;
    println!();
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    show("WITHOUT backstop", ScrollbackTools::new()).await?;
    show("WITH backstop", Backstop::new(ScrollbackTools::new())).await?;
    Ok(())
}
