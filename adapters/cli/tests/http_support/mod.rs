//! Driving the remote modes (SPEC A5) as a client would: real servers on loopback
//! ports, a small blocking HTTP client, `backstop gateway` and `backstop proxy --url`
//! as processes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use backstop::http::sse::{Event, SseParser};
use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The body of an upstream of a test's own.
pub type TestBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

/// An upstream of a test's own: `answer` serves every request, on a free loopback port,
/// on a runtime of its own (kept alive by the caller); its URL.
pub fn start_upstream<F, A>(answer: F) -> (tokio::runtime::Runtime, String)
where
    F: Fn(Request<hyper::body::Incoming>) -> A + Copy + Send + Sync + 'static,
    A: std::future::Future<Output = Result<http::Response<TestBody>, std::convert::Infallible>>
        + Send
        + 'static,
{
    let (runtime, url, _) = start_counted_upstream(answer);
    (runtime, url)
}

/// [`start_upstream`], and how many connections to it are open at any time.
pub fn start_counted_upstream<F, A>(
    answer: F,
) -> (
    tokio::runtime::Runtime,
    String,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
)
where
    F: Fn(Request<hyper::body::Incoming>) -> A + Copy + Send + Sync + 'static,
    A: std::future::Future<Output = Result<http::Response<TestBody>, std::convert::Infallible>>
        + Send
        + 'static,
{
    use std::sync::atomic::Ordering;
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&open);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    runtime.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            counted.fetch_add(1, Ordering::SeqCst);
            let closed = std::sync::Arc::clone(&counted);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(
                        hyper_util::rt::TokioIo::new(stream),
                        hyper::service::service_fn(answer),
                    )
                    .await;
                closed.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    (runtime, format!("http://{addr}/mcp"), open)
}

/// The `backstop` binary under test.
pub fn backstop() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_backstop"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free port")
}

/// Wait until something listens on `port` (at most 60 s; the servers start in
/// seconds).
pub fn wait_for_port(port: u16, child: &mut Child) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited before listening on {port}: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "nothing listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process, killed and reaped when dropped.
pub struct Spawned(pub Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `None` after saying why `test` is skipped, when `peer` is missing (a failure with
/// `CI=true`: `.ci/run` installs every peer).
pub fn or_skip<T>(peer: Option<T>, test: &str, what: &str) -> Option<T> {
    if peer.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {what} is missing: .ci/run must install it"
        );
        println!("SKIPPED {test}: {what} is missing (bash .ci/run installs it)");
    }
    peer
}

/// The fastmcp venv's python, if it is there.
pub fn python() -> Option<PathBuf> {
    let path = root().join("target/fastmcp-venv/bin/python");
    Command::new(&path)
        .args(["-c", "import fastmcp, mcp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some(path)
}

/// Whether `node` runs.
fn has_node() -> bool {
    Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The reference server's binary, if it is there (and node).
pub fn everything() -> Option<PathBuf> {
    let path = root().join("target/node-peers/node_modules/.bin/mcp-server-everything");
    (has_node() && path.exists()).then_some(path)
}

/// The fastmcp probe server over Streamable HTTP; its URL.
pub fn start_fastmcp(python: &PathBuf, middleware: bool) -> (Spawned, String) {
    start_fastmcp_with(python, middleware, &[])
}

/// [`start_fastmcp`] with more of the script's options (`--stateless`).
pub fn start_fastmcp_with(
    python: &PathBuf,
    middleware: bool,
    options: &[&str],
) -> (Spawned, String) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fastmcp/probe_server.py");
    let mut options = options.to_vec();
    if middleware {
        options.push("--middleware");
    }
    start_python_server(python, &script, &options)
}

/// A Python MCP server script that takes `--http PORT` (Streamable HTTP on 127.0.0.1,
/// path /mcp), started with `options`; its URL.
pub fn start_python_server(
    python: &PathBuf,
    script: &PathBuf,
    options: &[&str],
) -> (Spawned, String) {
    let port = free_port();
    let mut child = Command::new(python)
        .arg(script)
        .args(["--http", &port.to_string()])
        .args(options)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python starts");
    wait_for_port(port, &mut child);
    (Spawned(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// The reference server (`mcp-server-everything streamableHttp`); its URL.
pub fn start_everything(bin: &PathBuf) -> (Spawned, String) {
    let port = free_port();
    let mut child = Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the reference server starts");
    wait_for_port(port, &mut child);
    (Spawned(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// The official TypeScript SDK 2.x server (`tests/peers/servers/
/// typescript_v2_server.mjs`, MCP 2026-07-28) on a free port; its URL. `None`
/// when node or the pinned SDK is missing.
#[allow(dead_code)] // not every test binary that includes this module asks
pub fn typescript_v2() -> Option<(Spawned, String)> {
    node_http_server("server", "typescript_v2_server.mjs", &["http"])
}

/// The official TypeScript SDK 1.x server whose streams are resumable (SEP-1699,
/// `tests/peers/servers/typescript_resumable_server.mjs`) on a free port; its URL.
/// `None` when node or the pinned SDK is missing.
#[allow(dead_code)] // not every test binary that includes this module asks
pub fn typescript_resumable() -> Option<(Spawned, String)> {
    node_http_server("sdk", "typescript_resumable_server.mjs", &[])
}

/// `tests/peers/servers/<script> ARGS… PORT` on node, on a free port, given the
/// pinned `@modelcontextprotocol/<package>`; its URL.
fn node_http_server(package: &str, script: &str, args: &[&str]) -> Option<(Spawned, String)> {
    let sdk = root().join("target/node-peers/node_modules/@modelcontextprotocol");
    if !has_node() || !sdk.join(package).exists() {
        return None;
    }
    let port = free_port();
    let mut child = Command::new("node")
        .arg(root().join("tests/peers/servers").join(script))
        .args(args)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node starts");
    wait_for_port(port, &mut child);
    Some((Spawned(child), format!("http://127.0.0.1:{port}/mcp")))
}

/// The command that runs the TypeScript SDK 2.x server of [`typescript_v2`] over
/// stdio; `None` when node or the pinned SDK is missing.
#[allow(dead_code)] // not every test binary that includes this module asks
pub fn typescript_v2_stdio() -> Option<Vec<String>> {
    let sdk = root().join("target/node-peers/node_modules/@modelcontextprotocol/server");
    if !has_node() || !sdk.exists() {
        return None;
    }
    let script = root().join("tests/peers/servers/typescript_v2_server.mjs");
    Some(vec![
        "node".into(),
        script.to_string_lossy().into_owned(),
        "stdio".into(),
    ])
}

/// The fastmcp venv's python, or `None` after saying why `test` is skipped.
pub fn python_or_skip(test: &str) -> Option<PathBuf> {
    or_skip(python(), test, "target/fastmcp-venv")
}

/// The reference server's binary, or `None` after saying why `test` is skipped.
pub fn everything_or_skip(test: &str) -> Option<PathBuf> {
    or_skip(
        everything(),
        test,
        "@modelcontextprotocol/server-everything (target/node-peers) with node",
    )
}

/// A real server and `backstop gateway` in front of it, both stopped when dropped.
pub struct Fronted {
    pub server: Spawned,
    /// The server's own URL, to send each case straight to it too.
    pub direct: String,
    pub gateway: Spawned,
    /// The gateway's URL.
    pub url: String,
}

impl Fronted {
    /// The fastmcp probe server (`--middleware` when `middleware`, and `options`)
    /// behind a gateway started with `gateway_options`.
    pub fn fastmcp(
        python: &PathBuf,
        middleware: bool,
        options: &[&str],
        gateway_options: &[&str],
    ) -> Self {
        Self::new(
            start_fastmcp_with(python, middleware, options),
            gateway_options,
        )
    }

    /// The reference server behind a gateway started with `gateway_options`.
    pub fn everything(bin: &PathBuf, gateway_options: &[&str]) -> Self {
        Self::new(start_everything(bin), gateway_options)
    }

    /// A gateway started with `gateway_options` in front of a server started already.
    fn new((server, direct): (Spawned, String), gateway_options: &[&str]) -> Self {
        let (gateway, url) = start_gateway(&direct, gateway_options);
        Self {
            server,
            direct,
            gateway,
            url,
        }
    }
}

/// `backstop gateway --upstream URL <options>` on a free port; its URL.
pub fn start_gateway(upstream: &str, options: &[&str]) -> (Spawned, String) {
    start_gateway_logging(upstream, options, None)
}

/// [`start_gateway`] with the gateway's open files limited to `files` (`ulimit -n`).
#[allow(dead_code)] // not every test binary that includes this module asks
pub fn start_gateway_with_file_limit(
    upstream: &str,
    options: &[&str],
    files: u32,
) -> (Spawned, String) {
    let mut command = Command::new("bash");
    command
        .args(["-c", &format!(r#"ulimit -n {files}; exec "$0" "$@""#)])
        .arg(backstop())
        .arg("gateway");
    spawn_gateway(command, upstream, options, None)
}

/// [`start_gateway`] with the gateway's files limited to `kib` KiB (`ulimit -f`,
/// SIGXFSZ ignored, so a write past it fails as on a full disk).
#[allow(dead_code)] // not every test binary that includes this module asks
pub fn start_gateway_on_full_disk(upstream: &str, options: &[&str], kib: u64) -> (Spawned, String) {
    let mut command = Command::new("bash");
    command
        .args([
            "-c",
            &format!(r#"trap "" XFSZ; ulimit -f {kib}; exec "$0" "$@""#),
        ])
        .arg(backstop())
        .arg("gateway");
    spawn_gateway(command, upstream, options, None)
}

/// [`start_gateway`], its log of converted failures (G1) in `log` when given (else
/// on this process's stderr).
pub fn start_gateway_logging(
    upstream: &str,
    options: &[&str],
    log: Option<&std::path::Path>,
) -> (Spawned, String) {
    let mut command = Command::new(backstop());
    command.arg("gateway");
    spawn_gateway(command, upstream, options, log)
}

/// What the gateway says first on stderr, before the address it bound.
const LISTENING_ON: &str = "backstop gateway: listening on http://";

/// Start `command` (a `backstop gateway`) listening on a loopback port of the kernel's
/// choosing, and read the port from the line the gateway writes once it is bound. No
/// port is picked before the gateway binds it, so no other test's server can take it
/// in between (or a probe connect to itself through it). Its stderr goes to `log` when
/// given, else to this process's stderr.
fn spawn_gateway(
    mut command: Command,
    upstream: &str,
    options: &[&str],
    log: Option<&std::path::Path>,
) -> (Spawned, String) {
    command
        .args(["--listen", "127.0.0.1:0", "--upstream", upstream])
        .args(options)
        .stdout(Stdio::null());
    let (sender, address) = std::sync::mpsc::channel();
    let mut child = match log {
        Some(path) => {
            let child = command
                .stderr(std::fs::File::create(path).unwrap())
                .spawn()
                .expect("backstop starts");
            let path = path.to_owned();
            std::thread::spawn(move || {
                let start = Instant::now();
                while start.elapsed() < Duration::from_secs(60) {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    if let Some(address) = listening_address(&text) {
                        let _ = sender.send(address);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            child
        }
        None => {
            let mut child = command
                .stderr(Stdio::piped())
                .spawn()
                .expect("backstop starts");
            let stderr = BufReader::new(child.stderr.take().unwrap());
            std::thread::spawn(move || {
                let mut sender = Some(sender);
                for line in stderr.lines().map_while(Result::ok) {
                    if let Some(address) = listening_address(&line)
                        && let Some(sender) = sender.take()
                    {
                        let _ = sender.send(address);
                    }
                    eprintln!("{line}");
                }
            });
            child
        }
    };
    match address.recv_timeout(Duration::from_secs(60)) {
        Ok(address) => (Spawned(child), format!("http://{address}/mcp")),
        Err(_) => {
            let status = child.try_wait();
            let _ = child.kill();
            panic!("the gateway did not say where it listens (exit: {status:?})")
        }
    }
}

/// The address in the gateway's "listening on" line, if `text` has it.
fn listening_address(text: &str) -> Option<String> {
    let rest = &text[text.find(LISTENING_ON)? + LISTENING_ON.len()..];
    rest.split_once(',').map(|(address, _)| address.to_owned())
}

/// One HTTP answer, its body whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    /// The SSE events of the body (and what followed the last one).
    pub fn events(&self) -> Vec<Event> {
        let mut parser = SseParser::default();
        let mut events = parser.feed(&self.body);
        events.extend(parser.finish());
        events
    }

    /// The JSON-RPC messages of the reply: the body, or each event's data.
    pub fn messages(&self) -> Vec<serde_json::Value> {
        let is_sse = self
            .headers
            .get("content-type")
            .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        if is_sse {
            self.events()
                .iter()
                .filter_map(Event::data)
                .filter(|data| !data.is_empty())
                .map(|data| serde_json::from_slice(&data).expect("each event's data is JSON"))
                .collect()
        } else if self.body.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_slice(&self.body).expect("the body is JSON")]
        }
    }

    /// The one response among the messages.
    pub fn response(&self) -> serde_json::Value {
        let mut responses: Vec<_> = self
            .messages()
            .into_iter()
            .filter(|m| m.get("id").is_some() && m.get("method").is_none())
            .collect();
        assert_eq!(responses.len(), 1, "one response in {self:?}");
        responses.remove(0)
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }
}

/// A blocking HTTP/1.1 client for the tests.
pub struct Http {
    runtime: tokio::runtime::Runtime,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Default for Http {
    fn default() -> Self {
        Self::new()
    }
}

impl Http {
    pub fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let client = {
            let _guard = runtime.enter();
            Client::builder(TokioExecutor::new()).build_http()
        };
        Self { runtime, client }
    }

    /// Send a request; the reply, its body whole (at most 60 s).
    pub fn send(&self, method: Method, url: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut request = Request::builder().method(method).uri(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap();
        self.runtime.block_on(async {
            let answer = async {
                let response = self.client.request(request).await.expect("an answer");
                let (head, body) = response.into_parts();
                let body = body.collect().await.expect("a whole body").to_bytes();
                Reply {
                    status: head.status,
                    headers: head.headers,
                    body: body.to_vec(),
                }
            };
            tokio::time::timeout(Duration::from_secs(60), answer)
                .await
                .expect("answered within 60 s")
        })
    }

    /// POST a JSON-RPC message as a Streamable HTTP client does, in `session`.
    pub fn post(&self, url: &str, session: Option<&str>, body: &str) -> Reply {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = session {
            headers.push(("mcp-session-id", session));
            headers.push(("mcp-protocol-version", "2025-06-18"));
        }
        self.send(Method::POST, url, &headers, body)
    }

    /// `initialize` and `notifications/initialized`: the session id and the
    /// initialize reply.
    pub fn initialize(&self, url: &str) -> (String, Reply) {
        let reply = self.post(url, None, INITIALIZE);
        assert_eq!(reply.status, 200, "{reply:?}");
        let session = reply.header("mcp-session-id").expect("a session id");
        let initialized = self.post(
            url,
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(initialized.status, 202);
        (session, reply)
    }

    /// DELETE a session.
    pub fn delete(&self, url: &str, session: &str) -> Reply {
        self.send(
            Method::DELETE,
            url,
            &[
                ("mcp-session-id", session),
                ("mcp-protocol-version", "2025-06-18"),
            ],
            "",
        )
    }
}

/// The `initialize` request of every session here.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe-client","version":"9.9"}}}"#;

/// A `tools/call` request.
pub fn call(id: u32, name: &str, arguments: serde_json::Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}})
    .to_string()
}

/// A `tools/call` of a 2026-07-28 client: no handshake before it, and `revision`,
/// identity and capabilities in its `_meta` (the envelope a server of that revision
/// requires).
pub fn stateless_call(id: u32, name: &str, arguments: serde_json::Value, revision: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": revision,
            "io.modelcontextprotocol/clientInfo": {"name": "probe-client", "version": "9.9"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

/// `backstop proxy --url URL <options>`, its stdin and stdout held.
pub struct UrlProxy {
    child: Spawned,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl UrlProxy {
    pub fn start(url: &str, options: &[&str]) -> Self {
        let mut child = Command::new(backstop())
            .args(["proxy", "--quiet", "--url", url])
            .args(options)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("backstop starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child: Spawned(child),
            stdin,
            stdout,
        }
    }

    /// [`Self::start`], then the handshake: `initialize` (its answers returned) and
    /// `notifications/initialized`.
    pub fn initialized(url: &str, options: &[&str]) -> (Self, Vec<serde_json::Value>) {
        let mut proxy = Self::start(url, options);
        proxy.send(INITIALIZE);
        let init = proxy.until_response(0);
        proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (proxy, init)
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line on stdout (a channel with a 60 s bound would be nicer; the
    /// proxy's own timeout bounds every wait here).
    pub fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "a whole line, got {line:?}");
        line.pop();
        line
    }

    /// Send each `(id, request)` in turn, one at a time (so that each answer is known to
    /// be its request's); the lines up to each answer, per request.
    pub fn answer_each(&mut self, requests: Vec<(u32, String)>) -> Vec<Vec<serde_json::Value>> {
        requests
            .into_iter()
            .map(|(id, request)| {
                self.send(&request);
                self.until_response(id)
            })
            .collect()
    }

    /// Lines until one that answers `id` (that one included).
    pub fn until_response(&mut self, id: u32) -> Vec<serde_json::Value> {
        let mut lines = Vec::new();
        loop {
            let message: serde_json::Value = serde_json::from_str(&self.line()).unwrap();
            let done = message.get("method").is_none() && message["id"] == id;
            lines.push(message);
            if done {
                return lines;
            }
        }
    }

    /// The proxy's process id.
    #[allow(dead_code)] // not every test binary that includes this module asks
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// Close stdin; the exit status.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.0.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "the proxy exits");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
