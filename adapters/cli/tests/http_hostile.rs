//! SPEC A5 against a hostile client: a web page doing DNS rebinding against a loopback
//! gateway (`Host: evil.example`, `Origin: http://evil.example`) is refused with `403`
//! and never reaches the server, while loopback clients and the names the operator
//! allows are served and the server sees the client's `Host` as `X-Forwarded-Host`;
//! and a mistyped `--header` never puts its credential in the usage error.

mod http_support;

use std::convert::Infallible;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full};
use http_support::{Http, Reply, Spawned, TestBody, backstop, start_gateway, start_upstream};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// The headers of each request the first test's server was sent.
static SEEN_BY_DEFAULT: Mutex<Vec<Value>> = Mutex::new(Vec::new());
/// The same, for the test with `--allowed-hosts` / `--allowed-origins`.
static SEEN_WITH_LISTS: Mutex<Vec<Value>> = Mutex::new(Vec::new());
/// The same, for the gateway listening on every interface.
static SEEN_EVERYWHERE: Mutex<Vec<Value>> = Mutex::new(Vec::new());
/// The same, for the gateway under a flood of slow-header clients.
static SEEN_UNDER_FLOOD: Mutex<Vec<Value>> = Mutex::new(Vec::new());
/// The same, for the gateway under bursts of clients.
static SEEN_IN_BURSTS: Mutex<Vec<Value>> = Mutex::new(Vec::new());
/// The same, for the gateway whose connections idle between requests.
static SEEN_IDLE: Mutex<Vec<Value>> = Mutex::new(Vec::new());

/// A server that answers every request with an empty result for its id and notes its
/// headers in `seen`.
async fn answer(
    request: Request<Incoming>,
    seen: &'static Mutex<Vec<Value>>,
) -> Result<Response<TestBody>, Infallible> {
    let (parts, body) = request.into_parts();
    let headers: serde_json::Map<String, Value> = parts
        .headers
        .iter()
        .map(|(name, value)| (name.to_string(), json!(value.to_str().unwrap_or("?"))))
        .collect();
    seen.lock().unwrap().push(headers.into());
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let id = serde_json::from_slice::<Value>(&body).map_or(Value::Null, |m| m["id"].clone());
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string();
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from(reply))
                .map_err(|never: Infallible| match never {})
                .boxed(),
        )
        .unwrap())
}

fn server_by_default(
    request: Request<Incoming>,
) -> impl Future<Output = Result<Response<TestBody>, Infallible>> + Send {
    answer(request, &SEEN_BY_DEFAULT)
}

fn server_with_lists(
    request: Request<Incoming>,
) -> impl Future<Output = Result<Response<TestBody>, Infallible>> + Send {
    answer(request, &SEEN_WITH_LISTS)
}

fn server_everywhere(
    request: Request<Incoming>,
) -> impl Future<Output = Result<Response<TestBody>, Infallible>> + Send {
    answer(request, &SEEN_EVERYWHERE)
}

const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

/// POST a ping with these extra headers.
fn ping(http: &Http, url: &str, extra: &[(&str, &str)]) -> Reply {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    headers.extend_from_slice(extra);
    http.send(Method::POST, url, &headers, PING)
}

/// The `403` of a refused request: a JSON-RPC error without an id naming `header`.
fn assert_refused(reply: &Reply, header: &str) {
    assert_eq!(reply.status, 403, "{reply:?}");
    assert_eq!(
        reply.header("content-type").as_deref(),
        Some("application/json")
    );
    let error: Value = serde_json::from_slice(&reply.body).expect("a JSON body");
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("{header} header")), "{message}");
    assert!(message.len() < 300, "{message}");
}

/// The `host:port` of a gateway's URL.
fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

#[test]
fn a5_a_loopback_gateway_refuses_a_rebound_host_or_origin_before_the_server_sees_it() {
    let (_runtime, upstream) = start_upstream(server_by_default);
    let (_gateway, url) = start_gateway(&upstream, &[]);
    let http = Http::new();

    let rebound = ping(
        &http,
        &url,
        &[
            ("host", "evil.example:1234"),
            ("origin", "http://evil.example"),
        ],
    );
    assert_refused(&rebound, "Host");
    let evil_origin = ping(&http, &url, &[("origin", "http://evil.example")]);
    assert_refused(&evil_origin, "Origin");
    let evil_host_get = http.send(Method::GET, &url, &[("host", "evil.example")], "");
    assert_refused(&evil_host_get, "Host");
    let long_host = format!("{}.example", "a".repeat(4000));
    let long = ping(&http, &url, &[("host", &long_host)]);
    assert_refused(&long, "Host");
    assert!(!String::from_utf8_lossy(&long.body).contains("aaaa"));
    assert!(
        SEEN_BY_DEFAULT.lock().unwrap().is_empty(),
        "a refused request never reaches the server"
    );

    // A loopback client, from a loopback page or from no page at all, is served; the
    // server sees the Host it used as X-Forwarded-Host.
    for (host, origin) in [
        (authority(&url).to_owned(), None),
        ("localhost:8808".to_owned(), Some("http://localhost:6274")),
        ("[::1]:8808".to_owned(), Some("https://127.0.0.1:3000")),
    ] {
        let mut extra = vec![("host", host.as_str())];
        extra.extend(origin.map(|origin| ("origin", origin)));
        let served = ping(&http, &url, &extra);
        assert_eq!(served.status, 200, "{host} {origin:?}: {served:?}");
        assert_eq!(served.response()["id"], 7);
        let seen = SEEN_BY_DEFAULT
            .lock()
            .unwrap()
            .pop()
            .expect("the server saw it");
        assert_eq!(seen["x-forwarded-host"], host.as_str(), "{seen}");
        assert_ne!(
            seen["host"],
            host.as_str(),
            "Host is the server's own: {seen}"
        );
    }
    // Without a Host of its own, the client's X-Forwarded-Host is not believed.
    let made_up = ping(&http, &url, &[("x-forwarded-host", "made-up.example")]);
    assert_eq!(made_up.status, 200);
    let seen = SEEN_BY_DEFAULT.lock().unwrap().pop().unwrap();
    assert_eq!(seen["x-forwarded-host"], authority(&url), "{seen}");
}

#[test]
fn a5_allowed_hosts_and_origins_admit_the_names_given() {
    let (_runtime, upstream) = start_upstream(server_with_lists);
    let (_gateway, url) = start_gateway(
        &upstream,
        &[
            "--allowed-hosts",
            "mcp.example.com,10.0.0.5:8808",
            "--allowed-origins",
            "https://app.example.com",
        ],
    );
    let http = Http::new();
    let named = ping(
        &http,
        &url,
        &[
            ("host", "mcp.example.com:8808"),
            ("origin", "https://app.example.com"),
        ],
    );
    assert_eq!(named.status, 200, "{named:?}");
    let seen = SEEN_WITH_LISTS.lock().unwrap().pop().unwrap();
    assert_eq!(seen["x-forwarded-host"], "mcp.example.com:8808");
    assert_eq!(
        seen["origin"], "https://app.example.com",
        "Origin passes untouched"
    );
    // Loopback names are still served on a loopback address.
    assert_eq!(
        ping(&http, &url, &[("origin", "http://localhost:6274")]).status,
        200
    );

    assert_refused(&ping(&http, &url, &[("host", "10.0.0.5:8809")]), "Host");
    assert_refused(&ping(&http, &url, &[("host", "evil.example")]), "Host");
    assert_refused(
        &ping(
            &http,
            &url,
            &[
                ("host", "mcp.example.com"),
                ("origin", "http://app.example.com"),
            ],
        ),
        "Origin",
    );
    assert_eq!(
        SEEN_WITH_LISTS.lock().unwrap().len(),
        1,
        "only the two served"
    );
}

#[test]
fn a5_a_gateway_on_every_interface_serves_any_host_unless_told() {
    let (_runtime, upstream) = start_upstream(server_everywhere);
    let port = http_support::free_port();
    let mut child = Command::new(backstop())
        .args(["gateway", "--quiet", "--listen"])
        .arg(format!("0.0.0.0:{port}"))
        .args(["--upstream", &upstream])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    http_support::wait_for_port(port, &mut child);
    let _gateway = Spawned(child);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let reply = ping(
        &Http::new(),
        &url,
        &[
            ("host", "mcp.example.com"),
            ("origin", "https://app.example.com"),
        ],
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        SEEN_EVERYWHERE.lock().unwrap()[0]["x-forwarded-host"],
        "mcp.example.com"
    );
}

#[test]
fn a_mistyped_header_is_refused_without_repeating_its_credential() {
    for typo in [
        "Authorization Bearer tok-123",
        "Bearer tok-123:x",
        "tok-123",
        "Authorization: Bearer tok-123\u{7}",
    ] {
        let output = Command::new(backstop())
            .args(["proxy", "--url", "http://127.0.0.1:9/mcp", "--header", typo])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{typo:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("tok-123"), "{typo:?}: {stderr}");
        assert!(stderr.contains("--header"), "{stderr}");
        if !typo.starts_with("Authorization:") {
            assert!(stderr.contains("expected `Name: value`"), "{stderr}");
        } else {
            assert!(stderr.contains("header `authorization`"), "{stderr}");
        }
    }
    // Its `--header` left out, or misspelt: clap's "unexpected argument" error.
    for arguments in [
        &["Authorization: Bearer tok-123"][..],
        &["--heder=Authorization: Bearer tok-123"],
        &["--heder", "Authorization: Bearer tok-123"],
    ] {
        let output = Command::new(backstop())
            .args(["proxy", "--url", "http://127.0.0.1:9/mcp"])
            .args(arguments)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{arguments:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("tok-123"), "{arguments:?}: {stderr}");
        assert!(stderr.contains("unexpected argument"), "{stderr}");
    }
}

/// Issue 20: a session id nobody issued makes no state. A flood of invented ids, many
/// more than `--max-sessions`, is answered by the upstream (404) and leaves the real
/// session's state — its catalog, its handshake — in place: a misspelt tool still gets
/// E8's hint, which a session whose state was evicted (a machine that never saw its
/// handshake makes no listing) loses.
#[test]
fn invented_session_ids_evict_no_real_session_s_state() {
    let Some(bin) =
        http_support::everything_or_skip("invented_session_ids_evict_no_real_session_s_state")
    else {
        return;
    };
    let (_server, upstream) = http_support::start_everything(&bin);
    let (_gateway, url) = start_gateway(&upstream, &["--max-sessions", "4"]);
    let http = Http::new();
    let (session, _) = http.initialize(&url);
    let misspelt = |id: u32| {
        let call = http_support::call(id, "ecoh", json!({"message": "hi"}));
        http.post(&url, Some(&session), &call).response()
    };
    let before = misspelt(1);
    assert_eq!(
        before["error"]["data"]["suggestion"], "Did you mean 'echo'?",
        "{before}"
    );
    for n in 0..40 {
        let invented = format!("invented-{n}");
        let reply = http.post(
            &url,
            Some(&invented),
            &http_support::call(100 + n, "echo", json!({"message": "x"})),
        );
        assert!(
            reply.status.is_client_error(),
            "the upstream knows no such session: {reply:?}"
        );
    }
    let after = misspelt(2);
    assert_eq!(
        after["error"]["data"]["suggestion"], "Did you mean 'echo'?",
        "{after}"
    );
}

/// B2: a flood of clients that never finish their request heads (a hundred, where the
/// gateway may open 64 files) does not stall a real client until their 30 s header
/// timeout: past `--max-connections` the oldest of them is closed for each newcomer,
/// and the real client is served at once. Before, the gateway ran out of descriptors,
/// and the real client waited in the listen queue for the flood to time out.
#[test]
fn b2_a_slow_header_flood_leaves_a_real_client_served() {
    use std::io::Write;
    let (_runtime, upstream) = start_upstream(|request| answer(request, &SEEN_UNDER_FLOOD));
    let (_gateway, url) =
        http_support::start_gateway_with_file_limit(&upstream, &["--max-connections", "16"], 64);
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let flood: Vec<std::net::TcpStream> = (0..100)
        .filter_map(|_| {
            let mut stream = std::net::TcpStream::connect(&address).ok()?;
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                .ok()?;
            Some(stream)
        })
        .collect();
    assert!(flood.len() > 64, "the flood connected: {}", flood.len());
    let (answered, took) = served_within(&url, std::time::Duration::from_secs(10));
    assert!(
        answered,
        "not served within 10 s (the flood's header timeout is 30 s): {took:?}"
    );
    drop(flood);
}

/// B2 (issue 32): connections idle between requests are not serving. 600 clients,
/// each answered once on a kept-alive connection it then leaves open, through a gateway
/// of `--max-connections 16`: each newcomer takes an idle one's place, every one of
/// them is answered (before: 16, then 503 for the rest), and a new client after them is
/// served at once.
#[test]
fn b2_idle_keep_alive_connections_give_their_places_to_new_clients() {
    use std::io::{BufRead, BufReader, Read, Write};
    let (_runtime, upstream) = start_upstream(|request| answer(request, &SEEN_IDLE));
    let (_gateway, url) = http_support::start_gateway(&upstream, &["--max-connections", "16"]);
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{ping}",
        ping.len()
    );
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    let mut kept = Vec::new();
    for _ in 0..600 {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        reader.take(length).read_to_end(&mut Vec::new()).unwrap();
        *statuses.entry(status.trim().to_owned()).or_default() += 1;
        kept.push(stream); // kept alive, idle
    }
    assert_eq!(
        statuses.get("HTTP/1.1 200 OK"),
        Some(&600),
        "every client answered: {statuses:?}"
    );
    let (answered, took) = served_within(&url, std::time::Duration::from_secs(10));
    assert!(answered, "a new client after them served: {took:?}");
    drop(kept);
}

/// A server that answers each request 200 ms late (so that a burst of them overlaps).
async fn answer_late(request: Request<Incoming>) -> Result<Response<TestBody>, Infallible> {
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    answer(request, &SEEN_IN_BURSTS).await
}

/// B2: a burst of 100 clients at once through the gateway opens as many connections to
/// the server; afterwards at most 32 stay open, idle, for reuse, and those close after
/// `--upstream-idle`. Before, all 100 stayed open for hyper's default 90 s (issue 20:
/// 410–1,980 idle after a burst of 5,000).
#[test]
fn b2_a_burst_of_clients_leaves_a_bounded_idle_pool_upstream() {
    use std::sync::atomic::Ordering;
    let (_runtime, upstream, open) = http_support::start_counted_upstream(answer_late);
    let (_gateway, url) = start_gateway(&upstream, &["--upstream-idle", "1"]);
    let burst: Vec<_> = (0..100)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || ping(&Http::new(), &url, &[]).status)
        })
        .collect();
    let peak = (0..40)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            open.load(Ordering::SeqCst)
        })
        .max()
        .unwrap();
    assert!(
        burst
            .into_iter()
            .all(|client| client.join().unwrap() == 200)
    );
    assert!(
        peak > 32,
        "the burst overlapped upstream: {peak} open at its peak"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let after = open.load(Ordering::SeqCst);
    assert!(
        after <= 32,
        "{after} connections left open upstream after the burst"
    );
    // The pool looks for idle connections once per idle timeout: gone within two
    // (and a margin for a loaded machine).
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let idle = open.load(Ordering::SeqCst);
    assert_eq!(idle, 0, "idle connections closed after --upstream-idle");
}

/// Whether a `ping` through the gateway at `url` is answered within `limit`, on a
/// connection of its own; how long it took.
fn served_within(url: &str, limit: std::time::Duration) -> (bool, std::time::Duration) {
    let start = std::time::Instant::now();
    let url = url.to_owned();
    let (sender, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
        let reply = Http::new().post(&url, None, &ping);
        let _ = sender.send(reply.status == 200);
    });
    let served = answered.recv_timeout(limit).unwrap_or(false);
    (served, start.elapsed())
}
