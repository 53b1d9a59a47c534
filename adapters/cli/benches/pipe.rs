//! "Straight pipe vs proxy" (`cargo bench -p backstop --bench pipe`): one huge
//! line from a server to a client that only looks for the newline, straight through a
//! pipe and through `backstop proxy --max-bytes 1000000`, in one run, taken in turn so
//! that the machine's load falls on both alike.
//!
//! The server is the `big_line_server` example (it writes from one repeated 64 KiB
//! block, so it costs next to nothing). Cases: a `tools/call` result of 100 MB and of
//! 1 GB with `id` before `result` and after it (as the TypeScript SDK writes it), and
//! two 1 GB messages that need no change (a `resources/read` result, `id` last, and a
//! notification). Per case: the median time from writing the request to reading the
//! answer's newline, straight and proxied; what the proxy adds, per 100 MB and as a
//! rate; the proxy's output; the proxy's peak resident memory (VmHWM, read from `/proc`
//! while it still runs). SPEC B3 sets the bound, these benches the goals: ≤ 25 ms added per 100 MB,
//! a 1 GB line ≤ 10× the 100 MB one, peak RSS ≤ 64 MiB at a 1 MB cap in every case.
//!
//! The table is printed and written to `target/backstop-bench/pipe.md` (with the raw
//! runs in `pipe.json`), where `scripts/bench-report` picks it up for BENCHMARKS.md.
//!
//! With `BACKSTOP_BEFORE_BIN` set to an earlier build of `backstop`, each request also
//! goes through a proxy of that build, taken in turn with the other two, and a second
//! table sets the two builds side by side (printed, and written to
//! `target/backstop-bench/pipe-before.md`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const CAP: &str = "1000000";
const MB: usize = 1_000_000;
const GB: usize = 1_000_000_000;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe-bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// The release build of the `big_line_server` example, beside the `backstop` binary.
fn big_line_server() -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "-p", "backstop"])
        .args(["--example", "big_line_server"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the big_line_server example");
    backstop()
        .parent()
        .unwrap()
        .join("examples/big_line_server")
}

fn backstop() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_backstop"))
}

/// One message to measure: the request that makes the server write it.
struct Case {
    label: String,
    bytes: usize,
    request: String,
    /// Lines in the answer (a notification is followed by the call's small result).
    lines: usize,
    runs: usize,
}

impl Case {
    fn result(bytes: usize, id_last: bool) -> Case {
        Case {
            label: format!(
                "tools/call result, {}, id {}",
                size(bytes),
                if id_last { "last" } else { "first" }
            ),
            bytes,
            request: format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"scrollback","arguments":{{"bytes":{bytes},"id_last":{id_last}}}}}}}"#
            ),
            lines: 1,
            runs: runs(bytes),
        }
    }

    fn resource(bytes: usize) -> Case {
        Case {
            label: format!(
                "resources/read result, {}, id last (no change)",
                size(bytes)
            ),
            bytes,
            request: format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{{"uri":"scrollback://{bytes}"}}}}"#
            ),
            lines: 1,
            runs: runs(bytes),
        }
    }

    fn notification(bytes: usize) -> Case {
        Case {
            label: format!("notifications/message, {} (no change)", size(bytes)),
            bytes,
            request: format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"log","arguments":{{"bytes":{bytes}}}}}}}"#
            ),
            lines: 2,
            runs: runs(bytes),
        }
    }
}

fn runs(bytes: usize) -> usize {
    if bytes >= GB { 3 } else { 5 }
}

fn size(bytes: usize) -> String {
    if bytes >= GB {
        format!("{} GB", bytes / GB)
    } else {
        format!("{} MB", bytes / MB)
    }
}

/// A server (or the proxy in front of it) after the handshake and a `tools/list`.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buffer: Vec<u8>,
}

impl Session {
    fn start(mut command: Command) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let mut session = Session {
            stdin: child.stdin.take().unwrap(),
            stdout: child.stdout.take().unwrap(),
            child,
            buffer: vec![0; 1 << 20],
        };
        session.ask(INITIALIZE, 1);
        session.send(INITIALIZED);
        session.ask(LIST, 1);
        session
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send `request` and read until `lines` newlines have come: the time that took,
    /// and the length of the longest line. Nothing is kept but the count.
    fn ask(&mut self, request: &str, lines: usize) -> (Duration, usize) {
        let start = Instant::now();
        self.send(request);
        let (mut seen, mut line, mut longest) = (0, 0, 0);
        loop {
            let n = self.stdout.read(&mut self.buffer).unwrap();
            assert!(n > 0, "the answer ended after {seen} of {lines} lines");
            let mut read = &self.buffer[..n];
            while let Some(end) = memchr::memchr(b'\n', read) {
                longest = longest.max(line + end);
                seen += 1;
                if seen == lines {
                    assert_eq!(end + 1, read.len(), "nothing follows the answer");
                    return (start.elapsed(), longest);
                }
                line = 0;
                read = &read[end + 1..];
            }
            line += read.len();
        }
    }

    /// The process's peak resident memory so far (VmHWM), in bytes.
    fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/<pid>/status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|kb| kb.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one case measured.
struct Measured {
    straight: Vec<Duration>,
    proxied: Vec<Duration>,
    /// Through the earlier build (`BACKSTOP_BEFORE_BIN`), when there is one.
    before: Vec<Duration>,
    message: usize,
    out: usize,
    peak_rss: u64,
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

impl Measured {
    fn added(&self) -> Duration {
        median(&self.proxied).saturating_sub(median(&self.straight))
    }
}

/// `backstop proxy --max-bytes CAP -- server`, of the build at `bin`.
fn proxy_session(bin: &Path, server: &Path) -> Session {
    let mut proxy = Command::new(bin);
    proxy.args(["proxy", "--max-bytes", CAP, "--"]).arg(server);
    Session::start(proxy)
}

fn measure(server: &Path, case: &Case, before_bin: Option<&Path>) -> Measured {
    let mut straight = Session::start(Command::new(server));
    let mut proxied = proxy_session(&backstop(), server);
    let mut before = before_bin.map(|bin| proxy_session(bin, server));
    let mut measured = Measured {
        straight: Vec::new(),
        proxied: Vec::new(),
        before: Vec::new(),
        message: 0,
        out: 0,
        peak_rss: 0,
    };
    for _ in 0..case.runs {
        let (time, message) = straight.ask(&case.request, case.lines);
        measured.straight.push(time);
        measured.message = message;
        let (time, out) = proxied.ask(&case.request, case.lines);
        measured.proxied.push(time);
        measured.out = out;
        if let Some(before) = before.as_mut() {
            measured
                .before
                .push(before.ask(&case.request, case.lines).0);
        }
    }
    measured.peak_rss = proxied.peak_rss();
    assert!(
        measured.message <= case.bytes && measured.message + (64 << 10) > case.bytes,
        "{}: the server wrote a {}-byte line",
        case.label,
        measured.message
    );
    measured
}

fn ms(time: Duration) -> String {
    format!("{:.0} ms", time.as_secs_f64() * 1e3)
}

fn table(cases: &[Case], measured: &[Measured]) -> String {
    let mut lines = vec![
        "| message | straight pipe | through the proxy | added | added per 100 MB | message ÷ added | proxy output | proxy peak RSS |".to_owned(),
        "| --- | --- | --- | --- | --- | --- | --- | --- |".to_owned(),
    ];
    for (case, m) in cases.iter().zip(measured) {
        let added = m.added();
        let per_100_mb = added.as_secs_f64() * (100 * MB) as f64 / m.message as f64;
        let rate = if added.is_zero() {
            "—".to_owned()
        } else {
            format!("{:.2} GB/s", m.message as f64 / added.as_secs_f64() / 1e9)
        };
        let out = if m.out == m.message {
            "unchanged".to_owned()
        } else {
            format!("{} bytes", m.out)
        };
        lines.push(format!(
            "| {} | {} | {} | {} | {:.0} ms | {rate} | {out} | {:.0} MiB ({:.2}× the message) |",
            case.label,
            ms(median(&m.straight)),
            ms(median(&m.proxied)),
            ms(added),
            per_100_mb * 1e3,
            m.peak_rss as f64 / (1 << 20) as f64,
            m.peak_rss as f64 / m.message as f64,
        ));
    }
    lines.push(String::new());
    let added = |label: &str| {
        cases
            .iter()
            .position(|case| case.label == label)
            .map(|n| measured[n].added())
    };
    for id in ["first", "last"] {
        let small = added(&format!("tools/call result, 100 MB, id {id}"));
        let big = added(&format!("tools/call result, 1 GB, id {id}"));
        if let (Some(small), Some(big)) = (small, big)
            && !small.is_zero()
        {
            lines.push(format!(
                "Linearity, id {id}: the 1 GB line adds {:.1}× what the 100 MB one adds (goal ≤ 10×).",
                big.as_secs_f64() / small.as_secs_f64()
            ));
            lines.push(String::new());
        }
    }
    let worst = measured.iter().map(|m| m.peak_rss).max().unwrap_or(0);
    lines.push(format!(
        "Largest proxy peak RSS: {:.0} MiB (goal, SPEC B3: ≤ 64 MiB in every case). Medians of {} runs (1 GB) and {} runs (100 MB); cap {CAP} bytes.",
        worst as f64 / (1 << 20) as f64,
        runs(GB),
        runs(100 * MB),
    ));
    lines.push(String::new());
    lines.join("\n") + "\n"
}

/// The earlier build beside this one: what each adds to the straight pipe.
fn before_table(cases: &[Case], measured: &[Measured]) -> String {
    let mut lines = vec![
        "| message | straight pipe | added by the earlier build | added by this build | earlier ÷ this |".to_owned(),
        "| --- | --- | --- | --- | --- |".to_owned(),
    ];
    for (case, m) in cases.iter().zip(measured) {
        let before = median(&m.before).saturating_sub(median(&m.straight));
        let now = m.added();
        let ratio = match now.is_zero() {
            true => "—".to_owned(),
            false => format!("{:.2}×", before.as_secs_f64() / now.as_secs_f64()),
        };
        lines.push(format!(
            "| {} | {} | {} | {} | {ratio} |",
            case.label,
            ms(median(&m.straight)),
            ms(before),
            ms(now)
        ));
    }
    lines.join("\n") + "\n"
}

fn json(cases: &[Case], measured: &[Measured]) -> String {
    let secs = |times: &[Duration]| times.iter().map(Duration::as_secs_f64).collect::<Vec<_>>();
    let rows: Vec<_> = cases
        .iter()
        .zip(measured)
        .map(|(case, m)| {
            serde_json::json!({
                "case": case.label, "message_bytes": m.message, "proxy_output_bytes": m.out,
                "straight_s": secs(&m.straight), "proxied_s": secs(&m.proxied),
                "proxy_peak_rss_bytes": m.peak_rss, "cap_bytes": CAP.parse::<u64>().unwrap(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap() + "\n"
}

/// The machine's load averages (1, 5, 15 minutes), as `/proc/loadavg` has them.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|load| {
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn main() {
    let server = big_line_server();
    let load_before = load();
    let cases = [
        Case::result(100 * MB, false),
        Case::result(100 * MB, true),
        Case::result(GB, false),
        Case::result(GB, true),
        Case::resource(GB),
        Case::notification(GB),
    ];
    let before_bin = std::env::var_os("BACKSTOP_BEFORE_BIN").map(PathBuf::from);
    let mut measured = Vec::new();
    for case in &cases {
        let m = measure(&server, case, before_bin.as_deref());
        println!(
            "{}: straight {:?}, proxied {:?}, proxy peak RSS {} MiB",
            case.label,
            median(&m.straight),
            median(&m.proxied),
            m.peak_rss >> 20
        );
        measured.push(m);
    }
    let table = table(&cases, &measured)
        + &format!(
            "Load average (1, 5, 15 min): {load_before} before the run, {} after it.\n",
            load()
        );
    println!("\nstraight pipe vs proxy\n\n{table}");
    let dir = backstop()
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/backstop")
        .join("backstop-bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pipe.md"), &table).unwrap();
    std::fs::write(dir.join("pipe.json"), json(&cases, &measured)).unwrap();
    println!("written to {}", dir.join("pipe.md").display());
    if let Some(bin) = &before_bin {
        let table = before_table(&cases, &measured);
        println!("\n{} beside this build\n\n{table}", bin.display());
        std::fs::write(dir.join("pipe-before.md"), &table).unwrap();
    }
}
