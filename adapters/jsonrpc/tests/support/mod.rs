//! Driving `backstop proxy` as a client would: real processes, real pipes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

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
                    "backstop-jsonrpc",
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
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .expect("VmHWM");
        let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().expect("kB");
        kb * 1024
    }
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
