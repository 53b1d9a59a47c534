//! The `scrollback_server` example as a real client sees it: rmcp's client over the
//! child process's stdio, on 2025-11-25 (handshake) and 2026-07-28 (`server/discover`,
//! identity and revision in each request's `_meta`).

mod support;

use std::path::PathBuf;
use std::process::Stdio;

use rmcp::model::ProtocolVersion;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use support::{Client, ProbeClient, call, read, wire_size};
use tokio::io::AsyncReadExt;

/// The example's binary: `cargo test` builds the examples next to the test binaries'
/// `deps` directory; build it when it is not there (a filtered test run).
fn example_binary() -> PathBuf {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY
        .get_or_init(|| support::example_binary("scrollback_server"))
        .clone()
}

/// A client connected to a fresh child, and the child's stderr.
async fn spawn(
    version: ProtocolVersion,
    max_bytes: Option<&str>,
) -> (Client, tokio::process::ChildStderr) {
    let command = tokio::process::Command::new(example_binary()).configure(|cmd| {
        cmd.env("RUST_LOG", "backstop=debug");
        match max_bytes {
            Some(max) => cmd.env("BACKSTOP_MAX_BYTES", max),
            None => cmd.env_remove("BACKSTOP_MAX_BYTES"),
        };
    });
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let client = ProbeClient::new(version.clone());
    let client = if version == ProtocolVersion::V_2026_07_28 {
        client
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![version],
                },
            )
            .await
    } else {
        client.serve(transport).await
    }
    .expect("the client connects");
    (client, stderr.expect("stderr is piped"))
}

async fn stop(client: Client, mut stderr: tokio::process::ChildStderr) -> String {
    client.cancel().await.expect("the client stops");
    let mut logs = String::new();
    let _ = stderr.read_to_string(&mut logs).await;
    logs
}

fn text(received: &Value) -> &str {
    received["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {received}"))
}

/// Every case the issue names, on one revision.
async fn exercise(version: ProtocolVersion, resource_not_found: i64) {
    let (client, stderr) = spawn(version, None).await;

    // Capped scrollback: the default cap, the tail kept.
    let received = call(&client, "scrollback", json!({"lines": 100_000})).await;
    assert!(wire_size(&received["result"]) <= 1_000_000, "L4");
    assert!(text(&received).starts_with("[... truncated "), "L3");
    assert!(text(&received).ends_with("line 100000 of output\nPROMPT $"));

    // Each failure kind.
    let expected = call(&client, "fail", json!({"kind": "expected"})).await;
    assert_eq!(text(&expected), "Pane not found: %99");
    assert_eq!(expected["result"]["_meta"]["error_type"], "PaneNotFound");
    assert_eq!(expected["result"]["_meta"]["expected"], true);
    let suggestion = call(&client, "fail", json!({"kind": "suggestion"})).await;
    assert_eq!(
        text(&suggestion),
        "Pane not found: %99\nCall list_panes to discover valid pane ids."
    );
    let unexpected = call(&client, "fail", json!({"kind": "unexpected"})).await;
    assert_eq!(text(&unexpected), "boom");
    assert_eq!(unexpected["result"]["_meta"]["expected"], false);

    // A bad argument: no value anywhere.
    let bad = call(&client, "takes_int", json!({"count": "hunter2"})).await;
    assert!(!bad.to_string().contains("hunter2"), "V3: {bad}");
    assert_eq!(bad["result"]["_meta"]["error_type"], "ValidationError");

    // An unknown argument: strict mode is on in the example.
    let unknown = call(
        &client,
        "takes_int",
        json!({"count": 1, "wait_for_previous": true}),
    )
    .await;
    assert!(
        text(&unknown).contains("wait_for_previous\n  Unexpected keyword argument"),
        "V6: {unknown}"
    );
    assert!(
        text(&unknown).contains("your client (probe-client 9.9)"),
        "R2: {unknown}"
    );

    // The missing resource, with the revision's code.
    let missing = read(&client, "sessions://missing").await;
    assert_eq!(
        missing["error"]["code"], resource_not_found,
        "R3: {missing}"
    );
    assert_eq!(
        missing["error"]["message"],
        "Resource not found: Session not found: missing"
    );
    let present = read(&client, "sessions://main").await;
    assert_eq!(present["result"]["contents"][0]["text"], "session main");

    let logs = stop(client, stderr).await;
    assert!(!logs.contains("hunter2"), "V3 in the logs: {logs}");
    assert!(
        logs.contains("WARN backstop: Pane not found: %99"),
        "{logs}"
    );
    assert!(logs.contains("ERROR backstop: boom"), "{logs}");
}

#[tokio::test]
async fn on_2025_11_25() {
    exercise(ProtocolVersion::V_2025_11_25, -32002).await;
}

#[tokio::test]
async fn on_2026_07_28() {
    exercise(ProtocolVersion::V_2026_07_28, -32602).await;
}

#[tokio::test]
async fn the_cap_comes_from_the_environment() {
    let (client, stderr) = spawn(ProtocolVersion::V_2025_11_25, Some("5000")).await;
    let received = call(&client, "scrollback", json!({"lines": 1_000})).await;
    assert!(wire_size(&received["result"]) <= 5_000);
    assert!(text(&received).ends_with("line 1000 of output\nPROMPT $"));
    let logs = stop(client, stderr).await;
    assert!(logs.contains("tool result truncated"), "{logs}");
}
