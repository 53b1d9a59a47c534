//! SPEC B3 end to end: through `backstop proxy` at a 1 MB cap, a 1 GB `tools/call`
//! result line (`id` before `result`, and after it as the TypeScript SDK writes it) and
//! a 100 MB one come out cut right, a 1 GB message that needs no change comes out
//! byte-identical, and the proxy's peak resident memory (VmHWM from `/proc`, read
//! while it still runs) stays within [`RSS_BOUND`] — a bound on memory is a
//! correctness property here, not a speed claim. Under `--keep head` and
//! `--keep head+tail` (L16) a 100 MB result comes out as the core's cut of the whole,
//! within the same bound: the proxy holds only the ends the policy keeps (L13).
//!
//! A task's outcome (2026-07-28: inside the state `tasks/get` answers with, or a
//! `notifications/tasks`) is held and cut the same way (L1).
//!
//! The server is the `big_line_server` example: it writes each line from one repeated
//! 64 KiB block ([`scrollback::BigLine`]), so this test knows every byte it wrote and
//! checks the proxy's output against it as it arrives, holding no more than the cut
//! result itself (nothing of 1 GB is held or written to disk).
//!
//! The measurement is printed, and the bound asserted: a bound on memory is a
//! correctness property here, not a speed claim.

#[path = "../examples/big_line_server/scrollback.rs"]
mod scrollback;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use backstop_core::limit::Keep;
use backstop_core::{Limit, ToolResult};
use scrollback::{BigLine, LAST_SCREEN, Shape};
use serde_json::Value;
use serde_json::value::RawValue;

/// The cap the proxy runs with.
const CAP: usize = 1_000_000;
/// SPEC B3: the proxy's peak RSS at a 1 MB cap, whatever the message's size.
const RSS_BOUND: u64 = 64 << 20;
const MB: usize = 1_000_000;
const GB: usize = 1_000_000_000;
/// The escaped bytes of one line of the scrollback (see `scrollback::chunk`).
const LINE_BYTES: usize = 64;

/// The `big_line_server` example (debug build), built on first use.
fn big_line_server() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "backstop"])
                .args(["--example", "big_line_server"])
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building the big_line_server example");
            support::backstop()
                .parent()
                .unwrap()
                .join("examples/big_line_server")
        })
        .clone()
}

/// `backstop proxy --max-bytes CAP -- big_line_server`, the reader's limits off (L18:
/// the cut keeps all the cap holds, the most B3 must bound), after the handshake and a
/// `tools/list`.
struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Proxy {
    fn start() -> Proxy {
        Proxy::start_with(&[])
    }

    /// [`Proxy::start`] with more options before the `--` (a `--keep`, say).
    fn start_with(options: &[&str]) -> Proxy {
        let mut command = Command::new(support::backstop());
        command.args(["proxy", "--max-bytes", &CAP.to_string()]);
        command
            .args(support::BYTES_ONLY)
            .args(options)
            .arg("--")
            .arg(big_line_server());
        Proxy::spawn(command)
    }

    /// `backstop proxy --max-bytes max_bytes` with files limited to `kib` KiB
    /// (`ulimit -f`, SIGXFSZ ignored, so a write past it fails as on a full disk).
    fn start_with_file_limit(max_bytes: usize, kib: u64) -> Proxy {
        let mut command = Command::new("bash");
        command.args([
            "-c",
            &format!(r#"trap "" XFSZ; ulimit -f {kib}; exec "$0" "$@""#),
        ]);
        command.arg(support::backstop());
        command.args(["proxy", "--max-bytes", &max_bytes.to_string()]);
        command.args(support::BYTES_ONLY).arg("--");
        command.arg(big_line_server());
        Proxy::spawn(command)
    }

    fn spawn(mut command: Command) -> Proxy {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("backstop starts");
        let mut proxy = Proxy {
            stdin: child.stdin.take(),
            stdout: BufReader::with_capacity(1 << 20, child.stdout.take().unwrap()),
            child,
        };
        proxy.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"memory-bound","version":"1"}}}"#);
        proxy.small_line();
        proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        proxy.small_line();
        proxy
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line, without its newline; a line longer than `4 × CAP` is drained
    /// (not held) and fails the test with its length.
    fn small_line(&mut self) -> Vec<u8> {
        let mut line = Vec::new();
        let mut length = 0;
        loop {
            let buffer = self.stdout.fill_buf().unwrap();
            assert!(!buffer.is_empty(), "the proxy's output ended mid-line");
            let (part, done) = match memchr::memchr(b'\n', buffer) {
                Some(end) => (&buffer[..end], Some(end + 1)),
                None => (buffer, None),
            };
            length += part.len();
            if length <= 4 * CAP {
                line.extend_from_slice(part);
            }
            let used = done.unwrap_or(buffer.len());
            self.stdout.consume(used);
            if done.is_some() {
                assert!(
                    length <= 4 * CAP,
                    "a line of {length} bytes where the cap is {CAP}"
                );
                return line;
            }
        }
    }

    /// Read the next line and compare it, as it comes, with `expected`.
    fn expect_line(&mut self, expected: &BigLine) {
        let mut at = 0;
        loop {
            let buffer = self.stdout.fill_buf().unwrap();
            assert!(!buffer.is_empty(), "the proxy's output ended at byte {at}");
            let end = memchr::memchr(b'\n', buffer);
            let mut part = &buffer[..end.unwrap_or(buffer.len())];
            let used = end.map_or(part.len(), |end| end + 1);
            while !part.is_empty() {
                let want = expected.rest_of_piece(at);
                let n = want.len().min(part.len());
                assert!(
                    n > 0 && want[..n] == part[..n],
                    "the output differs from what the server wrote at byte {at} of {}",
                    expected.wire_len()
                );
                at += n;
                part = &part[n..];
            }
            self.stdout.consume(used);
            if end.is_some() {
                assert_eq!(at, expected.wire_len(), "the line ended early");
                return;
            }
        }
    }

    /// The proxy's peak resident memory so far (VmHWM), in bytes.
    fn peak_rss(&self) -> u64 {
        support::peak_rss(self.child.id())
    }

    /// The bytes the proxy has written so far, to pipes and files alike.
    fn bytes_written(&self) -> u64 {
        support::bytes_written(self.child.id())
    }

    /// Close the proxy's stdin and see it exit 0.
    fn finish(mut self) {
        self.stdin.take();
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "the proxy exited with {status}");
                return;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = self.child.kill();
                panic!("the proxy did not exit within a minute of its stdin closing");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Print the proxy's peak RSS for `case`, and fail if it is over the bound (B3).
fn check_peak_rss(case: &str, message: usize, peak: u64, took: Duration) {
    println!(
        "B3 {case}: a {message}-byte line at a {CAP}-byte cap took {took:.1?}; proxy peak RSS \
         {:.1} MiB ({:.2}x the message), bound {} MiB",
        peak as f64 / f64::from(1 << 20),
        peak as f64 / message as f64,
        RSS_BOUND >> 20,
    );
    assert!(
        peak <= RSS_BOUND,
        "B3 {case}: the proxy's peak RSS was {peak} bytes, over the {RSS_BOUND}-byte bound"
    );
}

/// The text `big_line_server` wrote, decoded: the chunk's text `repeats` times, then
/// the last screen.
struct Scrollback {
    chunk: String,
    repeats: usize,
    last: String,
}

impl Scrollback {
    fn of(line: &BigLine) -> Scrollback {
        let decode = |escaped: &[u8]| -> String {
            let quoted = [b"\"", escaped, b"\""].concat();
            serde_json::from_slice(&quoted).expect("the chunk is a JSON string's inside")
        };
        Scrollback {
            chunk: decode(&line.chunk),
            repeats: line.repeats,
            last: decode(LAST_SCREEN.as_bytes()),
        }
    }

    fn len(&self) -> usize {
        self.chunk.len() * self.repeats + self.last.len()
    }

    /// The whole text (for a 100 MB one: the test holds it, the proxy must not).
    fn whole(&self) -> String {
        let mut whole = self.chunk.repeat(self.repeats);
        whole.push_str(&self.last);
        whole
    }

    /// The text's bytes from `at` to its end (hold only what a cut keeps).
    fn from(&self, at: usize) -> Vec<u8> {
        let middle = self.chunk.len() * self.repeats;
        let mut tail = Vec::with_capacity(self.len() - at);
        let mut at = at;
        while at < middle {
            let chunk = &self.chunk.as_bytes()[at % self.chunk.len()..];
            tail.extend_from_slice(chunk);
            at += chunk.len();
        }
        tail.extend_from_slice(&self.last.as_bytes()[at - middle..]);
        tail
    }
}

/// What one `scrollback` call through the proxy gave.
struct Called {
    /// The line the server wrote.
    written: BigLine,
    /// The line that came out.
    line: Vec<u8>,
    took: Duration,
    /// The proxy's peak resident memory.
    peak: u64,
    /// The bytes the proxy wrote, to pipes and files alike.
    bytes_written: u64,
}

/// Call the fixture's `scrollback` tool through `proxy` for a result line of `bytes`
/// bytes (its `id` after the result when `id_last`), and stop the proxy.
fn call_scrollback(mut proxy: Proxy, bytes: usize, id_last: bool) -> Called {
    let shape = if id_last {
        Shape::ResultIdLast
    } else {
        Shape::ResultIdFirst
    };
    let written = BigLine::new(shape, "2", bytes);
    let start = Instant::now();
    proxy.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"scrollback","arguments":{{"bytes":{bytes},"id_last":{id_last}}}}}}}"#
    ));
    let line = proxy.small_line();
    let took = start.elapsed();
    let peak = proxy.peak_rss();
    let bytes_written = proxy.bytes_written();
    proxy.finish();
    Called {
        written,
        line,
        took,
        peak,
        bytes_written,
    }
}

/// A `tools/call` result line of `bytes` bytes through the proxy: it comes out as
/// the cut of what the server wrote (L3, L4, L9, L10, L12), and within B3's memory.
fn result_is_cut(case: &str, bytes: usize, id_last: bool) -> Called {
    let called = call_scrollback(Proxy::start(), bytes, id_last);
    let Called {
        written,
        line,
        took,
        peak,
        ..
    } = &called;
    let original = Scrollback::of(written);

    #[derive(serde::Deserialize)]
    struct Response<'a> {
        jsonrpc: String,
        id: u64,
        #[serde(borrow)]
        result: &'a RawValue,
    }
    let response: Response<'_> = serde_json::from_slice(line).expect("the cut line is JSON");
    assert_eq!((response.jsonrpc.as_str(), response.id), ("2.0", 2));
    is_the_cut_of(response.result.get(), &original);
    check_peak_rss(case, written.wire_len(), *peak, *took);
    called
}

/// `result_json` (a result as it came out) is the tail cut of `original` under the cap:
/// L3, L4, L5, L9, L10, L12.
fn is_the_cut_of(result_json: &str, original: &Scrollback) {
    let wire = result_json.len();
    assert!(wire <= CAP, "L4: the result's wire size {wire} > {CAP}");
    let result: Value = serde_json::from_str(result_json).unwrap();
    assert_eq!(
        serde_json::to_vec(&result).unwrap().len(),
        wire,
        "the result is compact JSON"
    );
    assert_eq!(result.get("isError"), None, "L5: a success stays a success");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "L3: one text block");
    assert_eq!(content[0]["type"], "text");
    let text = content[0]["text"].as_str().expect("text");
    let (header, kept) = text.split_once('\n').expect("L3: a header line");
    let dropped: usize = header
        .strip_prefix("[... truncated ")
        .and_then(|rest| rest.strip_suffix(" bytes ...]"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("L3: the header line, not {header:?}"));
    assert_eq!(
        dropped + kept.len(),
        original.len(),
        "L3: N is what was dropped"
    );
    assert!(
        kept.as_bytes() == original.from(dropped),
        "the kept text is the tail the server wrote"
    );
    assert!(kept.ends_with(&original.last), "the last screen survives");
    assert!(
        dropped > 0 && original.from(dropped - 1)[0] == b'\n',
        "L9: the kept text starts at a line start"
    );
    assert!(
        wire + LINE_BYTES > CAP,
        "L10: a whole line more would have fit ({wire} of {CAP} bytes used)"
    );
    let report = &result["_meta"]["backstop/truncation"];
    assert_eq!(report["dropped_bytes"], dropped, "L12");
    assert_eq!(report["original_bytes"], original.len(), "L12");
}

/// A 100 MB `tools/call` result line through the proxy run with `keep` (L16): it comes
/// out exactly as the core cuts the whole result under the policy (L13: the proxy held
/// only the ends the policy keeps), and within B3's memory.
fn result_is_cut_keeping(case: &str, keep: &[&str], policy: Keep, id_last: bool) {
    let Called {
        written,
        line,
        took,
        peak,
        ..
    } = call_scrollback(Proxy::start_with(keep), 100 * MB, id_last);

    let response: Value = serde_json::from_slice(&line).expect("the cut line is JSON");
    assert_eq!(
        (&response["jsonrpc"], &response["id"]),
        (&Value::from("2.0"), &Value::from(2))
    );
    let whole = ToolResult::text(Scrollback::of(&written).whole());
    let limit = Limit::new(CAP).unwrap().with_keep(policy);
    let expected = limit.truncate(&whole).expect("over the cap").result;
    drop(whole);
    assert!(
        response["result"] == serde_json::to_value(&expected).unwrap(),
        "{case}: the proxy's cut is the core's cut of the whole result"
    );
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    let first_line = Scrollback::of(&written)
        .chunk
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert!(text.starts_with(&first_line), "{case}: the head is kept");
    let wire = serde_json::to_vec(&response["result"]).unwrap().len();
    assert!(wire <= CAP, "L4: the result's wire size {wire} > {CAP}");
    check_peak_rss(case, written.wire_len(), peak, took);
}

#[test]
fn b3_a_100_mb_result_keeping_its_head_is_cut_within_the_bound() {
    result_is_cut_keeping(
        "100 MB result, --keep scrollback=head",
        &["--keep", "scrollback=head"],
        Keep::Head,
        false,
    );
}

#[test]
fn b3_a_100_mb_result_keeping_head_and_tail_id_last_is_cut_within_the_bound() {
    result_is_cut_keeping(
        "100 MB result, id last, --keep head+tail:0.3",
        &["--keep", "head+tail:0.3"],
        Keep::HeadAndTail {
            head_per_mille: 300,
        },
        true,
    );
}

#[test]
fn b3_a_1_gb_result_id_first_is_cut_within_the_bound() {
    result_is_cut("1 GB result, id first", GB, false);
}

#[test]
fn b3_a_1_gb_result_id_last_is_cut_within_the_bound() {
    result_is_cut("1 GB result, id last", GB, true);
}

/// A task's outcome (2026-07-28) of `bytes` bytes through the proxy: the fixture's
/// `research` tool answers with a handle, and its text result comes inside the task's
/// state — in the answer to `tasks/get`, or (`notify`) in a `notifications/tasks`. It
/// comes out as the cut of what the server wrote (L1 for the task's tool), within
/// B3's memory: the proxy holds of it what it holds of a call's own result.
fn task_outcome_is_cut(case: &str, bytes: usize, notify: bool) {
    let mut proxy = Proxy::start();
    let start = Instant::now();
    proxy.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"research","arguments":{{"bytes":{bytes},"notify":{notify}}}}}}}"#
    ));
    let handle: Value = serde_json::from_slice(&proxy.small_line()).unwrap();
    assert_eq!(handle["result"]["resultType"], "task", "the handle passes");
    let (written, line) = match notify {
        true => (
            BigLine::new(Shape::TaskStatus, "", bytes),
            proxy.small_line(),
        ),
        false => {
            proxy.send(
                r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-big"}}"#,
            );
            (
                BigLine::new(Shape::TaskState, "3", bytes),
                proxy.small_line(),
            )
        }
    };
    let took = start.elapsed();
    let peak = proxy.peak_rss();
    proxy.finish();
    let message: Value = serde_json::from_slice(&line).expect("the cut line is JSON");
    let state = match notify {
        true => {
            assert_eq!(message["method"], "notifications/tasks");
            &message["params"]
        }
        false => {
            assert_eq!(message["id"], 3);
            assert_eq!(message["result"]["resultType"], "complete");
            &message["result"]
        }
    };
    assert_eq!(
        (&state["taskId"], &state["status"]),
        (&Value::from("t-big"), &Value::from("completed"))
    );
    let outcome = serde_json::to_string(&state["result"]).unwrap();
    is_the_cut_of(&outcome, &Scrollback::of(&written));
    check_peak_rss(case, written.wire_len(), peak, took);
}

#[test]
fn b3_l1_a_1_gb_task_state_is_cut_within_the_bound() {
    task_outcome_is_cut("1 GB tasks/get task state", GB, false);
}

#[test]
fn b3_l1_a_100_mb_task_status_notification_is_cut_within_the_bound() {
    task_outcome_is_cut("100 MB notifications/tasks", 100 * MB, true);
}

/// B5: when the bytes held of an answer cannot be written (its temporary file limited
/// to 8 MiB and 100 KiB, as on a full disk: a write fails partway), the request is
/// answered once, with an error for its id — never with the held part doubled (as it
/// was) or missing — and the session goes on. A 20 MB `tools/call` result under a
/// 50 MB cap is held to its end, and would pass as it came.
#[test]
fn b5_an_answer_whose_held_bytes_cannot_be_written_gets_one_error_for_its_id() {
    let mut proxy = Proxy::start_with_file_limit(50 * MB, (8 << 10) + 100);
    let bytes = 20 * MB;
    proxy.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"scrollback","arguments":{{"bytes":{bytes}}}}}}}"#
    ));
    let line = proxy.small_line();
    let answer: Value = serde_json::from_slice(&line)
        .unwrap_or_else(|e| panic!("{e}: a line of {} bytes, not the error", line.len()));
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("could not pass on the server's answer"),
        "{message}"
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    let next: Value = serde_json::from_slice(&proxy.small_line()).unwrap();
    assert_eq!(
        next,
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
        "one answer for 2; the session goes on"
    );
    proxy.finish();
}

/// B3, B4: an answer being cut, its `id` first, is never held: the proxy writes
/// little more than the cut it sends (no temporary file of the answer's size), where
/// one whose `id` comes last is held in a file to its end.
#[test]
fn b3_b4_an_id_first_answer_being_cut_is_written_nowhere() {
    let id_first = result_is_cut("100 MB result, id first", 100 * MB, false);
    assert!(
        id_first.bytes_written < 4 * CAP as u64,
        "B3: the proxy wrote {} bytes for a cut of at most {CAP}",
        id_first.bytes_written
    );
    let id_last = result_is_cut("100 MB result, id last", 100 * MB, true);
    assert!(
        id_last.bytes_written > 90 * MB as u64,
        "held in a file: {} bytes written",
        id_last.bytes_written
    );
}

/// A 1 GB `resources/read` result (`id` last: nothing says it needs no change until
/// its end) comes out byte-identical (B1, B3), within B3's memory.
#[test]
fn b3_a_1_gb_message_that_needs_no_change_streams_through_within_the_bound() {
    let written = BigLine::new(Shape::Resource, "2", GB);
    let mut proxy = Proxy::start();
    let start = Instant::now();
    proxy.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{{"uri":"scrollback://{GB}"}}}}"#
    ));
    proxy.expect_line(&written);
    let took = start.elapsed();
    let peak = proxy.peak_rss();
    proxy.finish();
    check_peak_rss(
        "1 GB resources/read result, id last (no change)",
        written.wire_len(),
        peak,
        took,
    );
}
