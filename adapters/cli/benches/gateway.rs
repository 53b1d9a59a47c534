//! Benchmarks of `backstop gateway` (`cargo bench -p backstop --bench gateway`):
//!
//! - `gateway_round_trip/{straight,through_gateway}`: one small `tools/call` POSTed
//!   on a kept-alive connection to a small in-bench upstream (a JSON answer), straight
//!   and through the gateway binary on loopback; the difference is what the gateway
//!   adds (goal: at most 200 µs);
//! - then, printed: the gateway's resident memory before and while it holds 1,000
//!   concurrent SSE streams (GET streams the upstream keeps open after one event);
//! - and a 100 MB `tools/call` result in one SSE event, capped at 1 MB: the time
//!   straight and through the gateway, and the gateway's peak resident memory.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use criterion::Criterion;
use http::{Method, Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Channel, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"PROMPT $"}}}"#;
const ANSWER: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"PROMPT $"}]}}"#;
const STREAMS: usize = 1000;

type Body = BoxBody<Bytes, Infallible>;

/// The upstream: a small JSON answer to a POST; to a GET, an SSE stream that sends one
/// event and stays open.
async fn upstream(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    if request.method() == Method::GET {
        let (mut sender, channel) = Channel::<Bytes, Infallible>::new(1);
        tokio::spawn(async move {
            let event = "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
            let _ = sender.send_data(Bytes::from(event)).await;
            // Held open until the client goes.
            while sender.send_data(Bytes::new()).await.is_ok() {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        return Ok(Response::builder()
            .header("content-type", "text/event-stream")
            .body(channel.boxed())
            .unwrap());
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    if body.windows(6).any(|w| w == b"\"huge\"") {
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(huge_result().as_bytes());
        event.extend_from_slice(b"\n\n");
        return Ok(Response::builder()
            .header("content-type", "text/event-stream")
            .body(Full::new(Bytes::from(event)).boxed())
            .unwrap());
    }
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(ANSWER)).boxed())
        .unwrap())
}

fn start_upstream(runtime: &tokio::runtime::Runtime) -> SocketAddr {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    runtime.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(upstream)),
            );
        }
    });
    addr
}

/// The gateway binary (release, as `cargo bench` builds it) in front of `upstream`.
fn start_gateway(upstream: SocketAddr) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(PathBuf::from(env!("CARGO_BIN_EXE_backstop")))
        .args([
            "gateway",
            "--quiet",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["--upstream", &format!("http://{upstream}/mcp")])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

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

/// A 100 MB result, made once.
fn huge_result() -> &'static str {
    static HUGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HUGE.get_or_init(|| {
        let text = format!("{}PROMPT $", "line of output\n".repeat(100_000_000 / 15));
        serde_json::json!({"jsonrpc": "2.0", "id": 3,
                           "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
    })
}

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
    let (mut gateway, url) = start_gateway(upstream);
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
    let _ = gateway.kill();
    let _ = gateway.wait();
    criterion.final_summary();
}
