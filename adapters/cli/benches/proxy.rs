//! Benchmarks of the `backstop` binary and the shaper under it (`cargo bench -p backstop`):
//!
//! - `round_trip/*`: one small `tools/call` to the fixture server and its answer,
//!   straight and through `backstop proxy` (the difference is what the proxy adds);
//! - `shaper/*`: the shaper alone on a 10 MB and a 100 MB `tools/call` result capped
//!   at 1 MB (throughput in bytes of input);
//! - first, printed: the proxy's peak resident memory on a 100 MB result, and the
//!   median round trip straight, through a bare relay (the `relay` example) and
//!   through the proxy, measured in turn.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;
use std::time::Instant;

use backstop_core::Limit;
use backstop_jsonrpc::{Forward, Shaper};
use criterion::{Criterion, Throughput};

const HANDSHAKE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const ECHO: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"PROMPT $"}}}"#;

/// The release build of one of the crate's examples.
fn example(name: &str) -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "-p", "backstop"])
        .args(["--example", name])
        .status()
        .expect("cargo runs");
    assert!(status.success());
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_backstop"));
    bin.parent().unwrap().join("examples").join(name)
}

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Session {
    fn start(mut command: Command) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut session = Session {
            child,
            stdin,
            stdout,
            line: String::new(),
        };
        session.ask(HANDSHAKE);
        session.ask(LIST);
        session
    }

    fn ask(&mut self, request: &str) -> usize {
        self.stdin.write_all(request.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn proxied(server: &PathBuf) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_backstop"));
    command.args(["proxy", "--"]).arg(server);
    command
}

fn round_trip(c: &mut Criterion, server: &PathBuf) {
    let mut group = c.benchmark_group("round_trip");
    let mut direct = Session::start(Command::new(server));
    group.bench_function("straight_to_the_server", |b| b.iter(|| direct.ask(ECHO)));
    let mut through = Session::start(proxied(server));
    group.bench_function("through_backstop_proxy", |b| b.iter(|| through.ask(ECHO)));
    group.finish();
}

/// A `tools/call` response line with a text result of `bytes` bytes.
fn big_response(bytes: usize) -> Vec<u8> {
    let text = "line of output\n".repeat(bytes / 15) + "PROMPT $";
    let response = serde_json::json!({"jsonrpc": "2.0", "id": 2,
        "result": {"content": [{"type": "text", "text": text}]}});
    serde_json::to_vec(&response).unwrap()
}

fn shaper_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("shaper");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for megabytes in [10, 100] {
        let line = big_response(megabytes * 1_000_000);
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(format!("{megabytes}_MB_result_capped_at_1_MB"), |b| {
            b.iter(|| {
                let mut shaper = Shaper::new(Limit::default());
                shaper.client_message(Instant::now(), ECHO.as_bytes());
                let forward = shaper.server_message(Instant::now(), &line);
                assert!(matches!(forward, Forward::Rewritten(ref out) if out.len() < 1_000_100));
                forward
            })
        });
    }
    group.finish();
}

/// The proxy's peak RSS (VmHWM) after shaping one 100 MB result.
fn peak_memory(server: &PathBuf) {
    const SIZE: usize = 100_000_000;
    let mut session = Session::start(proxied(server));
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"big","arguments":{{"bytes":{SIZE}}}}}}}"#
    );
    let answer = session.ask(&request);
    let status = std::fs::read_to_string(format!("/proc/{}/status", session.child.id())).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let peak = peak_kb * 1024;
    println!(
        "peak memory: backstop proxy on a {} MB result line (answer {} bytes): VmHWM {} MB = {:.2}x the message",
        SIZE / 1_000_000,
        answer,
        peak / 1_000_000,
        peak as f64 / SIZE as f64
    );
}

/// Median and 90th percentile of single round trips — straight, through the bare
/// `relay` example (a process in the middle that reads nothing) and through the
/// proxy — taken in turn (so that the machine's load falls on all alike), printed.
fn round_trip_medians(server: &PathBuf, relay: &PathBuf) {
    const ROUNDS: usize = 5000;
    let mut relayed = Command::new(relay);
    relayed.arg(server);
    let mut sessions = [
        Session::start(Command::new(server)),
        Session::start(relayed),
        Session::start(proxied(server)),
    ];
    let mut times: [Vec<Duration>; 3] = Default::default();
    for _ in 0..ROUNDS {
        for (session, times) in sessions.iter_mut().zip(&mut times) {
            let start = std::time::Instant::now();
            session.ask(ECHO);
            times.push(start.elapsed());
        }
    }
    let [(s50, s90), (r50, r90), (p50, p90)] = times.map(|mut times| {
        times.sort();
        (times[times.len() / 2], times[times.len() * 9 / 10])
    });
    println!(
        "round trip of a small tools/call ({ROUNDS} each): straight median {s50:?} (p90 {s90:?}), \
         through a bare relay median {r50:?} (p90 {r90:?}), \
         through backstop proxy median {p50:?} (p90 {p90:?}): the proxy adds {:?} at the median, \
         {:?} more than the relay",
        p50.saturating_sub(s50),
        p50.saturating_sub(r50)
    );
}

fn main() {
    let server = example("fixture_server");
    peak_memory(&server);
    round_trip_medians(&server, &example("relay"));
    let mut c = Criterion::default().configure_from_args();
    round_trip(&mut c, &server);
    shaper_throughput(&mut c);
    c.final_summary();
}
