//! Driving `backstop proxy` as a client would: real processes, real pipes.

#![allow(dead_code)]

pub mod chunks;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The options that turn the reader's limits off (L18): only `--max-bytes` bounds a
/// result, for tests of the byte cap itself.
pub const BYTES_ONLY: [&str; 4] = ["--max-chars", "none", "--max-tokens", "none"];

/// The `backstop` binary under test.
pub fn backstop() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_backstop"))
}

/// The fixture server (this crate's `fixture_server` example), built on first use.
pub fn fixture_server() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "backstop",
                    "--example",
                    "fixture_server",
                ])
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building the fixture server");
            let bin = backstop();
            bin.parent()
                .unwrap()
                .join("examples")
                .join("fixture_server")
        })
        .clone()
}

/// A running proxy with its stdin and stdout held by the test.
pub struct Proxy {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// `backstop proxy <options> -- <server…>`, stderr captured.
    pub fn start(options: &[&str], server: &[&str]) -> Proxy {
        let mut child = Command::new(backstop())
            .arg("proxy")
            .args(options)
            .arg("--")
            .args(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("backstop starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut from_child = BufReader::new(child.stderr.take().unwrap());
        let into = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut line = String::new();
            while from_child.read_line(&mut line).is_ok_and(|n| n > 0) {
                into.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Proxy {
            child,
            stdin,
            stdout,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// The proxy in front of the fixture server.
    pub fn fixture(options: &[&str]) -> Proxy {
        let server = fixture_server();
        Proxy::start(options, &[server.to_str().unwrap()])
    }

    /// Send one line (a newline is added).
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Send a JSON message.
    pub fn send_json(&mut self, message: &Value) {
        self.send(&message.to_string());
    }

    /// The next line the proxy writes, without its newline (`None` at the end).
    pub fn line(&mut self) -> Option<String> {
        let mut line = Vec::new();
        let n = self.stdout.read_until(b'\n', &mut line).unwrap();
        if n == 0 {
            return None;
        }
        assert_eq!(line.pop(), Some(b'\n'), "every line the proxy writes ends");
        Some(String::from_utf8(line).unwrap())
    }

    /// The next line, parsed.
    pub fn json(&mut self) -> Value {
        let line = self.line().expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:.300}"))
    }

    /// Wait until stderr (the proxy's and the server's) shows `needle`.
    pub fn wait_for_stderr(&self, needle: &str) {
        let start = Instant::now();
        while !self.stderr.lock().unwrap().contains(needle) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no {needle:?} on stderr"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Close the proxy's stdin (the client is done).
    pub fn close(&mut self) {
        self.stdin.take();
    }

    /// Everything left on stdout, then the exit status and the stderr text.
    pub fn finish(mut self) -> (Vec<String>, ExitStatus, String) {
        self.close();
        let mut rest = Vec::new();
        while let Some(line) = self.line() {
            rest.push(line);
        }
        let status = wait_with_timeout(&mut self.child, Duration::from_secs(60));
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().unwrap();
        }
        let stderr = self.stderr.lock().unwrap().clone();
        (rest, status, stderr)
    }

    /// The proxy's peak resident memory so far (VmHWM), in bytes.
    pub fn peak_rss(&self) -> u64 {
        peak_rss(self.child.id())
    }
}

/// The peak resident memory so far (VmHWM) of process `pid`, in bytes.
#[allow(dead_code)] // not every test binary that includes this module measures memory
pub fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.split_whitespace().next()?.parse().ok())
        .expect("VmHWM in kB");
    kb * 1024
}

/// Starts process `pid`'s peak resident memory (VmHWM) over from its resident memory
/// now (`5` written to `/proc/<pid>/clear_refs`), so each case measures its own peak.
#[allow(dead_code)] // not every test binary that includes this module measures memory
pub fn reset_peak_rss(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
}

/// The bytes process `pid` has written so far, to pipes, sockets and files alike
/// (`wchar` in `/proc/<pid>/io`).
#[allow(dead_code)] // not every test binary that includes this module measures writes
pub fn bytes_written(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("wchar:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("wchar in /proc/<pid>/io")
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("the proxy did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The workspace's `target/` directory, where `.ci/run` installs the pinned real MCP
/// peers (`tests/peers/`): `node-peers/node_modules`, `fastmcp-venv`.
pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// An executable of the pinned npm peers (`target/node-peers/node_modules/.bin/<bin>`),
/// if it is installed and `node` runs.
pub fn node_peer(bin: &str) -> Option<PathBuf> {
    let path = peers_dir().join("node-peers/node_modules/.bin").join(bin);
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (node && path.exists()).then_some(path)
}

/// The venv's python (`target/fastmcp-venv`, or `BACKSTOP_FASTMCP_PYTHON`), if it can
/// import `module`.
pub fn venv_python(module: &str) -> Option<PathBuf> {
    let path = std::env::var_os("BACKSTOP_FASTMCP_PYTHON").map_or_else(
        || peers_dir().join("fastmcp-venv/bin/python"),
        PathBuf::from,
    );
    let works = Command::new(&path)
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    works.then_some(path)
}

/// A test's real peer is missing: fail under `CI=true` (CI installs every peer), else
/// say why the test is skipped.
pub fn peer_missing(test: &str, peer: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but {peer} is missing: .ci/run must install it"
    );
    println!("SKIPPED {test}: {peer} is not installed (run .ci/run, which installs tests/peers/)");
}

/// A stdio MCP session driven one request at a time: each request is written, and the
/// lines are read up to the response with its id — notifications before it included.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    /// Run `command` (`program`, `args…`) with piped stdin/stdout, stderr discarded.
    pub fn start(command: &[&str]) -> Session {
        let mut child = Command::new(command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Session {
            child,
            stdin,
            stdout,
        }
    }

    /// Send one line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send a request line, and read every line up to and including the response with
    /// `id` (compared as JSON).
    pub fn request(&mut self, line: &str, id: &Value) -> Vec<String> {
        self.send(line);
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0 && line.ends_with('\n'), "no answer to id {id}");
            line.pop();
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {:.300}", line));
            let answers = message.get("id") == Some(id) && message.get("method").is_none();
            lines.push(line);
            if answers {
                return lines;
            }
        }
    }

    /// Close stdin and end the process with SIGTERM (for a server that stays up while
    /// work it started runs on, as a task does); its exit status.
    #[allow(dead_code)] // not every test binary that includes this module asks
    pub fn terminate(mut self) -> ExitStatus {
        self.stdin.take();
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        wait_with_timeout(&mut self.child, Duration::from_secs(60))
    }

    /// Close stdin and wait for the exit status.
    pub fn finish(mut self) -> ExitStatus {
        self.stdin.take();
        wait_with_timeout(&mut self.child, Duration::from_secs(60))
    }

    /// One `tools/call` of `tool` in a fresh session of `command` (a 2025-06-18
    /// handshake first): the `result` it was answered with.
    pub fn call_once(command: &[&str], tool: &str, arguments: Value) -> Value {
        let mut session = Session::start(command);
        session.request(
            &serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "probe-client", "version": "9.9"}}})
            .to_string(),
            &serde_json::json!(0),
        );
        session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let lines = session.request(&call.to_string(), &serde_json::json!(1));
        let answer: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
        session.finish();
        answer["result"].clone()
    }
}
