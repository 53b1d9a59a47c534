//! What the gateway benches share (`#[path = "support/upstream.rs"] mod upstream;`):
//! the small in-bench upstream and a `backstop gateway` started in front of it.
//!
//! The upstream answers a POSTed `tools/call` with a small JSON answer ([`ANSWER`]),
//! or, when the call names the tool `huge`, with a 100 MB result in one SSE event; a
//! `tools/list` (the gateway's own, SPEC E8) with one tool, by the request's id; a GET
//! with an SSE stream that sends one event and stays open. It counts the POSTs it
//! answers ([`posts`]), so that a bench can tell what a proxy sent besides the calls.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Channel, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

/// A small `tools/call`.
pub const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"PROMPT $"}}}"#;
/// The upstream's answer to it.
pub const ANSWER: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"PROMPT $"}]}}"#;

type Body = BoxBody<Bytes, Infallible>;

static POSTS: AtomicUsize = AtomicUsize::new(0);
static LISTINGS: AtomicUsize = AtomicUsize::new(0);

/// The POSTs the upstream answered so far, and how many of them were `tools/list`.
pub fn posts() -> (usize, usize) {
    (
        POSTS.load(Ordering::Relaxed),
        LISTINGS.load(Ordering::Relaxed),
    )
}

fn json(body: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(body.into()).boxed())
        .unwrap()
}

/// One request to the upstream; see the [module docs](self).
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
    POSTS.fetch_add(1, Ordering::Relaxed);
    if body.windows(12).any(|w| w == b"\"tools/list\"") {
        LISTINGS.fetch_add(1, Ordering::Relaxed);
        let id = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|list| list.get("id").cloned());
        let tools = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "huge", "inputSchema": {"type": "object"}}]}});
        return Ok(json(tools.to_string()));
    }
    if body.windows(6).any(|w| w == b"\"huge\"") {
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(huge_result().as_bytes());
        event.extend_from_slice(b"\n\n");
        return Ok(Response::builder()
            .header("content-type", "text/event-stream")
            .body(Full::new(Bytes::from(event)).boxed())
            .unwrap());
    }
    Ok(json(ANSWER))
}

/// The upstream on a free loopback port, served on `runtime`.
pub fn start_upstream(runtime: &tokio::runtime::Runtime) -> SocketAddr {
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

/// The 100 MB result of the `huge` tool, made once.
pub fn huge_result() -> &'static str {
    static HUGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HUGE.get_or_init(|| {
        let text = format!("{}PROMPT $", "line of output\n".repeat(100_000_000 / 15));
        serde_json::json!({"jsonrpc": "2.0", "id": 3,
                           "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
    })
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A process of the bench's, killed when this is dropped (a panicking bench leaves
/// none behind).
pub struct Spawned(pub Child);

impl Spawned {
    /// The process's id.
    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `binary`'s gateway (defaults but for `--quiet` and `options`) in front of
/// `upstream`, once it takes connections; its URL.
pub fn start_gateway(binary: &Path, upstream: SocketAddr, options: &[&str]) -> (Spawned, String) {
    let port = free_port();
    let child = Command::new(binary)
        .args([
            "gateway",
            "--quiet",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["--upstream", &format!("http://{upstream}/mcp")])
        .args(options)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut child = Spawned(child);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!("{} gateway exited: {status}", binary.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}
