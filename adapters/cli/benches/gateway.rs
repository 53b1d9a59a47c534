//! Benchmarks of `backstop gateway` (`cargo bench -p backstop --bench gateway`):
//!
//! - `gateway_round_trip/{straight,through_gateway}`: one small `tools/call` POSTed
//!   on a kept-alive connection to a small in-bench upstream (a JSON answer), straight
//!   and through the gateway binary on loopback; the difference is what the gateway
//!   adds (goal: at most 200 µs);
//! - then, printed: the gateway's resident memory before and while it holds 1,000
//!   concurrent SSE streams (GET streams the upstream keeps open after one event);
//! - and a 100 MB `tools/call` result in one SSE event, capped at 1 MB: the time
//!   straight and through the gateway, and the gateway's peak resident memory;
//! - last, the POSTs the upstream answered, and how many were the gateway's own
//!   `tools/list` (the upstream is `support/upstream.rs`, shared with `gateway_nginx`).

#[path = "support/upstream.rs"]
mod upstream;

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use criterion::Criterion;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use upstream::{ANSWER, CALL, huge_result, start_gateway, start_upstream};

const STREAMS: usize = 1000;

async fn post(client: &Client<HttpConnector, Full<Bytes>>, url: &str) {
    let request = Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", "bench")
        .body(Full::new(Bytes::from(CALL)))
        .unwrap();
    let body = client.request(request).await.unwrap().into_body();
    let body = body.collect().await.unwrap().to_bytes();
    assert_eq!(body.len(), ANSWER.len());
}

const HUGE_CALL: &str =
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"huge"}}"#;

/// POST the huge call; the body's length and the time it took.
async fn huge(client: &Client<HttpConnector, Full<Bytes>>, url: &str) -> (usize, Duration) {
    let start = std::time::Instant::now();
    let request = Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", "bench-huge")
        .body(Full::new(Bytes::from(HUGE_CALL)))
        .unwrap();
    let body = client.request(request).await.unwrap().into_body();
    let body = body.collect().await.unwrap().to_bytes();
    (body.len(), start.elapsed())
}

/// VmRSS of a process, in kB.
fn rss_kb(pid: u32) -> u64 {
    status_kb(pid, "VmRSS:")
}

/// A `/proc/PID/status` figure, in kB.
fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Open `STREAMS` GET streams through the gateway, each past its first event; the
/// gateway's resident memory before and while they are held.
fn held_streams(runtime: &tokio::runtime::Runtime, pid: u32, url: &str) -> (u64, u64) {
    let before = rss_kb(pid);
    let held = runtime.block_on(async {
        let mut streams = Vec::with_capacity(STREAMS);
        for n in 0..STREAMS {
            // A connection each: a stream holds its connection.
            let client: Client<HttpConnector, Full<Bytes>> =
                Client::builder(TokioExecutor::new()).build_http();
            let request = Request::get(url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", format!("session-{n}"))
                .body(Full::new(Bytes::new()))
                .unwrap();
            let mut body = client.request(request).await.unwrap().into_body();
            let first = body.frame().await.unwrap().unwrap();
            assert!(first.data_ref().is_some_and(|d| d.starts_with(b"id: 1")));
            streams.push((client, body));
        }
        streams
    });
    std::thread::sleep(Duration::from_millis(500));
    let during = rss_kb(pid);
    drop(held);
    (before, during)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let upstream = start_upstream(&runtime);
    // Room for the held streams, each on a connection of its own (the default is 512).
    let room = (STREAMS + 100).to_string();
    let (gateway, url) = start_gateway(
        Path::new(env!("CARGO_BIN_EXE_backstop")),
        upstream,
        &["--max-connections", &room],
    );
    let straight = format!("http://{upstream}/mcp");
    let client: Client<HttpConnector, Full<Bytes>> = {
        let _guard = runtime.enter();
        Client::builder(TokioExecutor::new()).build_http()
    };

    let mut criterion = Criterion::default()
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = criterion.benchmark_group("gateway_round_trip");
    group.bench_function("straight", |b| {
        b.iter(|| runtime.block_on(post(&client, &straight)));
    });
    group.bench_function("through_gateway", |b| {
        b.iter(|| runtime.block_on(post(&client, &url)));
    });
    group.finish();

    let (before, during) = held_streams(&runtime, gateway.id(), &url);
    println!(
        "gateway resident memory: {before} kB idle, {during} kB holding {STREAMS} SSE streams \
         ({:.1} kB a stream)",
        (during.saturating_sub(before)) as f64 / STREAMS as f64
    );

    huge_result();
    let (straight_len, straight_time) = runtime.block_on(huge(&client, &straight));
    let (through_len, through_time) = runtime.block_on(huge(&client, &url));
    assert!(through_len < 1_100_000, "capped at 1 MB");
    println!(
        "100 MB result in one SSE event, capped at 1 MB: {:.0} ms straight ({straight_len} bytes), \
         {:.0} ms through the gateway ({through_len} bytes); gateway peak resident memory {} kB",
        straight_time.as_secs_f64() * 1e3,
        through_time.as_secs_f64() * 1e3,
        status_kb(gateway.id(), "VmHWM:")
    );
    let (posts, listings) = upstream::posts();
    println!("upstream: {posts} POSTs answered, {listings} of them the gateway's own tools/list");
    drop(gateway);
    criterion.final_summary();
}
