//! `cargo bench -p backstop-rmcp`: what the wrapper costs an in-process rmcp session.
//!
//! - `small_call`: a small successful `#[tool]` call, bare vs wrapped (target ≤ 5 %).
//! - `capped_10mb`: a 10 MB result, bare vs wrapped with the default 1 MB cap (the
//!   wrapped client receives a tenth of the bytes).

#[path = "../examples/support/scrollback_tools.rs"]
mod scrollback_tools;

#[path = "../tests/support/big_output.rs"]
mod big_output;

use std::sync::Arc;
use std::time::Duration;

use backstop_rmcp::Backstop;
use big_output::BigOutput;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServerHandler, ServiceExt};
use scrollback_tools::{ScrollbackTools, scrollback_text};
use serde_json::json;
use tokio::runtime::Runtime;

fn connect<S: ServerHandler>(runtime: &Runtime, server: S) -> RunningService<RoleClient, ()> {
    runtime.block_on(async move {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_io).await.expect("the client connects")
    })
}

fn request(tool: &'static str, arguments: serde_json::Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool)
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

/// One thread for client and server alike: on a busy machine a multi-thread runtime
/// measures the scheduler more than the call.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn small_call(c: &mut Criterion) {
    let runtime = runtime();
    let bare = connect(&runtime, ScrollbackTools::new());
    let wrapped = connect(&runtime, Backstop::new(ScrollbackTools::new()));
    let call = || request("takes_int", json!({"count": 42}));
    let mut group = c.benchmark_group("small_call");
    group.bench_function("bare", |b| {
        b.iter(|| runtime.block_on(bare.call_tool(call())).expect("ok"))
    });
    group.bench_function("wrapped", |b| {
        b.iter(|| runtime.block_on(wrapped.call_tool(call())).expect("ok"))
    });
    group.finish();
}

fn capped_10mb(c: &mut Criterion) {
    let runtime = runtime();
    let mut text = scrollback_text(500_000);
    text.truncate(10_000_000);
    text.push_str("\nPROMPT $");
    let server = BigOutput(Arc::new(text));
    let bare = connect(&runtime, server.clone());
    let wrapped = connect(&runtime, Backstop::new(server));
    let call = || request("capture", json!({}));
    let mut group = c.benchmark_group("capped_10mb");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("bare", |b| {
        b.iter(|| runtime.block_on(bare.call_tool(call())).expect("ok"))
    });
    group.bench_function("wrapped_1mb_cap", |b| {
        b.iter(|| runtime.block_on(wrapped.call_tool(call())).expect("ok"))
    });
    group.finish();
}

criterion_group!(benches, small_call, capped_10mb);
criterion_main!(benches);
