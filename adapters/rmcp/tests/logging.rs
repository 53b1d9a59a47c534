//! Counts of converted failures and the callback that cannot break a call (G3).

mod support;

use std::sync::{Arc, Mutex};

use backstop_core::call::LogRecord;
use backstop_rmcp::Backstop;
use serde_json::json;
use support::scrollback_tools::ScrollbackTools;
use support::{call, connect};

#[tokio::test]
async fn g3_counts_and_callback_see_every_failure() {
    let seen: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
    let sink = seen.clone();
    let server = Backstop::new(ScrollbackTools::new())
        .on_failure(move |record| sink.lock().unwrap().push(record.clone()));
    let counts = server.failure_counts();
    let client = connect(server).await;
    let _ = call(&client, "fail", json!({"kind": "unexpected"})).await;
    let _ = call(&client, "fail", json!({"kind": "unexpected"})).await;
    let _ = call(&client, "fail", json!({"kind": "suggestion"})).await;
    let _ = call(&client, "takes_int", json!({"count": 3})).await;
    assert_eq!(counts.get("ToolError:tools/call"), 2);
    assert_eq!(counts.get("PaneNotFound:tools/call"), 1);
    assert_eq!(counts.snapshot().total(), 3, "a success is not counted");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2].tool.as_deref(), Some("fail"));
}

#[tokio::test]
async fn g3_a_panicking_callback_is_not_propagated() {
    let server = Backstop::new(ScrollbackTools::new()).on_failure(|_| panic!("callback bug"));
    let counts = server.failure_counts();
    let client = connect(server).await;
    let received = call(&client, "fail", json!({"kind": "expected"})).await;
    assert_eq!(received["result"]["isError"], true, "{received}");
    assert_eq!(counts.get("PaneNotFound:tools/call"), 1);
    // The session survives.
    let received = call(&client, "takes_int", json!({"count": 3})).await;
    assert_eq!(received["result"]["content"][0]["text"], "count = 3");
}
