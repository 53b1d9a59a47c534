//! `backstop gateway` beside nginx `proxy_pass`, and before and after its hardening
//! (`cargo bench -p backstop --bench gateway_nginx`; with
//! `BACKSTOP_BEFORE_BIN=/path/to/an/earlier/backstop` that build's gateway too):
//!
//! - 32 sessions at once, each on its own kept-alive HTTP/1.1 connection, POST small
//!   `tools/call`s one after another (stateless: no `Mcp-Session-Id`, so no
//!   `initialize`) to the same in-bench upstream by up to four paths: straight,
//!   through nginx (`proxy_pass`, one process, kept-alive connections upstream),
//!   through this checkout's gateway, through the earlier build's gateway (defaults
//!   but for `--quiet`). The paths are taken in turn, round after round, the first
//!   one rotating, so that the machine's load falls on all alike.
//! - Printed per path: the median and 99th percentile time of a call, calls a second,
//!   the proxy process's CPU time a call (utime + stime from `/proc/PID/stat` over the
//!   rounds), what it adds to the straight median, and the upstream's POSTs a call
//!   (above 1 when the gateway lists the tools itself, SPEC E8); then the ratios:
//!   gateway ÷ nginx and before ÷ after. The load average before and after. The load
//!   is a closed loop (a session sends its next call when the last is answered), so
//!   a busy proxy shows as queueing: the median is about 32 ÷ calls a second.
//! - Without nginx its row is skipped. No timed assertions. `BENCH_ROUNDS` (default 5)
//!   and `BENCH_CALLS` (calls a session makes in a round; by default what makes the
//!   slowest path's round about 3 s by a warm-up round) change the run;
//!   `BENCH_SESSION_IDS=1` has each session send an `Mcp-Session-Id` of its own
//!   (`bench-N`, never initialized: the gateway keeps its state once the upstream
//!   serves it), so the gateway shapes by a session's state, not a stateless request's.

#[path = "../tests/support/nginx.rs"]
mod nginx;
#[path = "support/upstream.rs"]
mod upstream;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use upstream::{ANSWER, CALL, Spawned, free_port, start_gateway, start_upstream};

const SESSIONS: usize = 32;
const ROUND_SECONDS: f64 = 3.0;
const WARM_UP_CALLS: usize = 50;

/// One way to the upstream: its address, and the process in the middle if any.
struct Route {
    name: String,
    addr: SocketAddr,
    pid: Option<u32>,
    /// Every call's time, in nanoseconds, over the measured rounds.
    latencies: Vec<u64>,
    wall: Duration,
    cpu_ticks: u64,
    posts: usize,
    /// The upstream's `tools/list`s in this route's rounds, the warm-up's included.
    listings: usize,
    /// Each measured round's median (µs) and CPU time a call (µs).
    rounds: Vec<(f64, Option<f64>)>,
}

impl Route {
    fn new(name: impl Into<String>, addr: SocketAddr, pid: Option<u32>) -> Route {
        Route {
            name: name.into(),
            addr,
            pid,
            latencies: Vec::new(),
            wall: Duration::ZERO,
            cpu_ticks: 0,
            posts: 0,
            listings: 0,
            rounds: Vec::new(),
        }
    }

    fn calls(&self) -> usize {
        self.latencies.len()
    }

    fn median_us(&self) -> f64 {
        percentile(&self.latencies, 50)
    }

    fn cpu_us_per_call(&self, tick_us: f64) -> Option<f64> {
        self.pid
            .map(|_| self.cpu_ticks as f64 * tick_us / self.calls() as f64)
    }
}

/// The `percent`th percentile of `nanos` (sorted), in µs.
fn percentile(nanos: &[u64], percent: usize) -> f64 {
    nanos[(nanos.len() * percent / 100).min(nanos.len() - 1)] as f64 / 1e3
}

/// utime + stime of a process, all its threads, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis: state is the first, utime
    // and stime the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let field = |n: usize| fields.get(n).and_then(|f| f.parse::<u64>().ok());
    field(11).unwrap_or(0) + field(12).unwrap_or(0)
}

/// The length of a clock tick, in µs (`getconf CLK_TCK`, else 100 a second).
fn tick_us() -> f64 {
    let ticks = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| {
            String::from_utf8(out.stdout)
                .ok()?
                .trim()
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(100.0);
    1e6 / ticks
}

fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One session: a connection of its own to `addr`, `calls` small calls on it one after
/// another, with `id` as their `Mcp-Session-Id` if any; each call's time in
/// nanoseconds.
async fn session(addr: SocketAddr, calls: usize, id: Option<String>) -> Vec<u64> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut sender, connection) = http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let host = addr.to_string();
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        sender.ready().await.unwrap();
        let mut request = Request::post("/mcp");
        if let Some(id) = &id {
            request = request.header("mcp-session-id", id);
        }
        let request = request
            .header("host", &host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(Full::new(Bytes::from(CALL)))
            .unwrap();
        let start = Instant::now();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        times.push(start.elapsed().as_nanos() as u64);
        assert!(
            status == StatusCode::OK && body.len() == ANSWER.len(),
            "{addr} answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    times
}

/// A round of `calls` calls in each of the sessions by `route`; with `keep`, added to
/// its figures.
fn round(runtime: &tokio::runtime::Runtime, route: &mut Route, calls: usize, keep: bool) {
    let cpu_before = route.pid.map(cpu_ticks);
    let (posts_before, listings_before) = upstream::posts();
    let start = Instant::now();
    let addr = route.addr;
    let mut times: Vec<u64> = runtime.block_on(async {
        let sessions: Vec<_> = (0..SESSIONS)
            .map(|n| {
                let id = session_ids().then(|| format!("bench-{n}"));
                tokio::spawn(session(addr, calls, id))
            })
            .collect();
        let mut times = Vec::with_capacity(SESSIONS * calls);
        for session in sessions {
            times.extend(session.await.unwrap());
        }
        times
    });
    let wall = start.elapsed();
    let cpu = cpu_before.map(|before| route.pid.map_or(0, cpu_ticks).saturating_sub(before));
    let (posts_after, listings_after) = upstream::posts();
    route.listings += listings_after - listings_before;
    if !keep {
        return;
    }
    times.sort_unstable();
    let tick = tick_us();
    route.rounds.push((
        percentile(&times, 50),
        cpu.map(|ticks| ticks as f64 * tick / times.len() as f64),
    ));
    route.latencies.extend(times);
    route.wall += wall;
    route.cpu_ticks += cpu.unwrap_or(0);
    route.posts += posts_after - posts_before;
}

/// nginx as this bench's own single process (`master_process off`: it serves the
/// connections itself), `proxy_pass` to `upstream` with kept-alive connections; its
/// process and address, or why not.
fn start_nginx(dir: &Path, upstream: SocketAddr) -> Result<(Spawned, SocketAddr), String> {
    let nginx = nginx::binary().ok_or("nginx not found (apt-get install nginx-light)")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let port = free_port();
    let http = format!(
        "  keepalive_requests 10000000;\n\
           keepalive_timeout 300s;\n\
           upstream bench {{\n\
             server {upstream};\n\
             keepalive 64;\n\
             keepalive_requests 10000000;\n\
           }}\n\
           server {{\n\
             listen 127.0.0.1:{port};\n\
             location /mcp {{\n\
               proxy_pass http://bench;\n\
               proxy_http_version 1.1;\n\
               proxy_set_header Connection \"\";\n\
               proxy_buffering off;\n\
               proxy_read_timeout 300s;\n\
             }}\n\
           }}\n"
    );
    let config = nginx::config(dir, 1024, &http);
    let child = nginx::spawn(&nginx, dir, &config, Stdio::null())
        .map_err(|e| format!("{}: {e}", nginx.display()))?;
    let mut child = Spawned(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        let exited = child.0.try_wait().ok().flatten();
        if exited.is_some() || Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            return Err(format!("nginx did not start: {}", log.trim()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((child, SocketAddr::from(([127, 0, 0, 1], port))))
}

fn authority(url: &str) -> SocketAddr {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    authority.parse().unwrap()
}

/// Whether the sessions send an `Mcp-Session-Id` (`BENCH_SESSION_IDS=1`).
fn session_ids() -> bool {
    std::env::var_os("BENCH_SESSION_IDS").is_some_and(|v| v == "1")
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let upstream = start_upstream(&runtime);
    let mut children: Vec<Spawned> = Vec::new();
    let mut routes = vec![Route::new("straight to the upstream", upstream, None)];

    let dir = std::env::temp_dir().join(format!("backstop-bench-nginx-{}", std::process::id()));
    match start_nginx(&dir, upstream) {
        Ok((child, addr)) => {
            routes.push(Route::new("nginx `proxy_pass`", addr, Some(child.id())));
            children.push(child);
        }
        Err(why) => println!("nginx row skipped: {why}"),
    }
    let after = PathBuf::from(env!("CARGO_BIN_EXE_backstop"));
    let (child, url) = start_gateway(&after, upstream, &[]);
    routes.push(Route::new(
        "`backstop gateway` (this build)",
        authority(&url),
        Some(child.id()),
    ));
    children.push(child);
    let before = std::env::var_os("BACKSTOP_BEFORE_BIN").map(PathBuf::from);
    match &before {
        Some(before) => {
            println!("before: {}", before.display());
            let (child, url) = start_gateway(before, upstream, &[]);
            routes.push(Route::new(
                "`backstop gateway` (before)",
                authority(&url),
                Some(child.id()),
            ));
            children.push(child);
        }
        None => println!("before row skipped: BACKSTOP_BEFORE_BIN is not set"),
    }

    // A warm-up round by every route (connections upstream opened, the gateway's
    // listing made), which also times them.
    let mut slowest = Duration::ZERO;
    for route in &mut routes {
        let start = Instant::now();
        round(&runtime, route, WARM_UP_CALLS, false);
        slowest = slowest.max(start.elapsed());
    }
    let calls = env_number("BENCH_CALLS").unwrap_or_else(|| {
        let per_call = slowest.as_secs_f64() / WARM_UP_CALLS as f64;
        ((ROUND_SECONDS / per_call) as usize).clamp(100, 50_000) / 100 * 100
    });
    let rounds = env_number("BENCH_ROUNDS").unwrap_or(5).max(1);

    let load_before = load_average();
    for n in 0..rounds {
        for i in 0..routes.len() {
            let at = (n + i) % routes.len();
            round(&runtime, &mut routes[at], calls, true);
        }
    }
    let load_after = load_average();
    drop(children);
    std::fs::remove_dir_all(&dir).ok();

    for route in &mut routes {
        route.latencies.sort_unstable();
    }
    report(&routes, calls, rounds, (&load_before, &load_after));
}

fn report(routes: &[Route], calls: usize, rounds: usize, load: (&str, &str)) {
    let tick = tick_us();
    let straight = routes[0].median_us();
    let added = |route: &Route| route.median_us() - straight;
    let cpu = |route: &Route| route.cpu_us_per_call(tick);
    let rate = |route: &Route| route.calls() as f64 / route.wall.as_secs_f64();
    println!();
    println!(
        "{SESSIONS} sessions at once, each {calls} small `tools/call`s in a round, \
         {rounds} rounds taking the routes in turn; CPU time of the proxy's process \
         (utime + stime, ticks of {tick:.0} µs) over the rounds ÷ calls."
    );
    println!(
        "Sessions {}. Load average (1, 5, 15 min): {} before the rounds, {} after.",
        if session_ids() {
            "with an Mcp-Session-Id each"
        } else {
            "stateless (no Mcp-Session-Id)"
        },
        load.0,
        load.1
    );
    println!();
    println!(
        "| path | median | p99 | calls/s | proxy CPU per call | added to the straight median | upstream POSTs per call |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for route in routes {
        let (cpu, added) = match cpu(route) {
            Some(us) => (format!("{us:.1} µs"), format!("{:+.1} µs", added(route))),
            None => ("—".to_owned(), "—".to_owned()),
        };
        println!(
            "| {} | {:.1} µs | {:.1} µs | {:.0} | {cpu} | {added} | {:.2} |",
            route.name,
            route.median_us(),
            percentile(&route.latencies, 99),
            rate(route),
            route.posts as f64 / route.calls() as f64,
        );
    }
    println!();
    let find = |prefix: &str| routes.iter().find(|route| route.name.starts_with(prefix));
    let gateway = find("`backstop gateway` (this");
    println!("| ratio | CPU per call | added latency | median | calls/s |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, a, b) in [
        ("gateway ÷ nginx", gateway, find("nginx")),
        (
            "before ÷ after",
            find("`backstop gateway` (before"),
            gateway,
        ),
    ] {
        match (a, b) {
            (Some(a), Some(b)) => println!(
                "| {name} | {:.2}× | {:.2}× | {:.2}× | {:.2}× |",
                cpu(a).unwrap_or(f64::NAN) / cpu(b).unwrap_or(f64::NAN),
                added(a) / added(b),
                a.median_us() / b.median_us(),
                rate(a) / rate(b),
            ),
            _ => println!("| {name} | skipped (a row is missing) | | | |"),
        }
    }
    println!();
    for route in routes.iter().filter(|route| route.listings > 0) {
        println!(
            "{}: the upstream answered {} `tools/list` (warm-up included)",
            route.name, route.listings
        );
    }
    println!("Each round, median / proxy CPU per call (µs):");
    for route in routes {
        let each: Vec<String> = route
            .rounds
            .iter()
            .map(|(median, cpu)| match cpu {
                Some(cpu) => format!("{median:.0}/{cpu:.1}"),
                None => format!("{median:.0}"),
            })
            .collect();
        println!("- {}: {}", route.name, each.join(", "));
    }
}
