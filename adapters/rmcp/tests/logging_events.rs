//! The `tracing` events of converted failures: one per failure, at the G1 level, with
//! the G2 fields, and no rejected value (V3). Alone in its test binary, so that no
//! other test's thread shares the callsites while the subscriber is in place.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use backstop_rmcp::Backstop;
use serde_json::json;
use support::scrollback_tools::ScrollbackTools;
use support::{call, connect};

/// A `tracing` writer that keeps what was written.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test(flavor = "current_thread")]
async fn g1_g2_one_event_per_failure_at_its_level_without_values() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new("backstop=trace"))
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let client = connect(Backstop::new(ScrollbackTools::new())).await;
    let _ = call(&client, "fail", json!({"kind": "unexpected"})).await;
    let _ = call(&client, "fail", json!({"kind": "expected"})).await;
    let _ = call(&client, "takes_int", json!({"count": "hunter2"})).await;
    client.cancel().await.unwrap();

    let logs = captured.text();
    let ours: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains(" backstop: "))
        .collect();
    assert_eq!(ours.len(), 3, "{logs}");
    assert!(ours[0].starts_with_level("ERROR"), "{}", ours[0]);
    assert!(
        ours[0].contains(
            "backstop: boom method=tools/call tool=\"fail\" error_type=ToolError expected=false"
        ),
        "{}",
        ours[0]
    );
    assert!(ours[1].starts_with_level("WARN"), "{}", ours[1]);
    assert!(
        ours[1].contains("error_type=PaneNotFound expected=true"),
        "{}",
        ours[1]
    );
    assert!(ours[2].starts_with_level("WARN"), "{}", ours[2]);
    assert!(
        ours[2].contains("backstop: 1 validation error for takes_int"),
        "{}",
        ours[2]
    );
    assert!(
        logs.contains("tool=\"takes_int\" error_type=ValidationError expected=true"),
        "{logs}"
    );
    assert!(!logs.contains("hunter2"), "V3: {logs}");
}

trait LevelPrefix {
    fn starts_with_level(&self, level: &str) -> bool;
}

impl LevelPrefix for &str {
    /// The fmt layer writes `<timestamp> <LEVEL> <spans>: <target>: …`.
    fn starts_with_level(&self, level: &str) -> bool {
        self.split_whitespace().nth(1) == Some(level)
    }
}
