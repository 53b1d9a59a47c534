//! `cargo bench -p backstop-rmcp`: what the wrapper costs an in-process rmcp session.
//!
//! - `small_call`: a small successful `#[tool]` call, bare vs wrapped (target ≤ 5 %).
//! - `capped_10mb`: a 10 MB result, bare vs wrapped with the default 1 MB cap (the
//!   wrapped client receives a tenth of the bytes).

#[path = "../examples/support/scrollback_tools.rs"]
mod scrollback_tools;

use std::sync::Arc;
use std::time::Duration;

use backstop_rmcp::Backstop;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use scrollback_tools::{ScrollbackTools, scrollback_text};
use serde_json::json;
use tokio::runtime::Runtime;

/// A server whose one tool returns the same 10 MB of scrollback each time.
#[derive(Clone)]
struct TenMegabytes(Arc<String>);

impl ServerHandler for TenMegabytes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {}});
        let schema = schema.as_object().cloned().unwrap_or_default();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "capture", "10 MB", schema,
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = self.0.as_str().to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

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
    let server = TenMegabytes(Arc::new(text));
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
