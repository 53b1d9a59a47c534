//! The process plumbing of `backstop proxy` (SPEC A3): a stdio MCP server as a child,
//! the [`Shaper`] between it and the client on this process's own stdin and stdout.
//!
//! Plain threads, no async runtime: there are exactly two byte streams to pump, each
//! blocking on its own reads, and a thread apiece is the smallest, most predictable
//! way to do that (no executor to build or tune, and a message is handled the moment
//! it arrives).
//!
//! - client → server: each line is shown to the shaper (which remembers requests)
//!   *before* it is written to the child, so a response can never overtake its request.
//! - server → client: each line goes through the shaper; output is flushed whenever no
//!   further input is already waiting.
//! - The child's stderr is this process's stderr. SIGINT and SIGTERM are forwarded to
//!   the child, which runs in its own process group (so a terminal's Ctrl-C reaches it
//!   once, through the proxy); the proxy itself waits for the child to exit.
//! - When the child's stdout ends, the proxy waits for its exit status, answers every
//!   request still pending with a JSON-RPC error saying the server exited and how
//!   ([`server_exited_error`]), and exits with the child's code (128 + N when the child
//!   was killed by signal N).

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use backstop_core::protocol_error::code;
use backstop_core::{LogRecord, ProtocolError};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::Shaper;
use crate::framing::{LineReader, write_line};

/// The server to run: a program and its arguments.
///
/// ```
/// let server = backstop_jsonrpc::proxy::ServerCommand::new("python3", ["server.py"]);
/// assert_eq!(server.program, "python3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl ServerCommand {
    /// A program with arguments.
    ///
    /// ```
    /// let server = backstop_jsonrpc::proxy::ServerCommand::new("npx", ["-y", "some-server"]);
    /// assert_eq!(server.args.len(), 2);
    /// ```
    pub fn new<I, S>(program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// The exit code the proxy gives for a child's exit status: its code, or 128 + N
/// when it was killed by signal N (as shells report it).
///
/// ```
/// use std::os::unix::process::ExitStatusExt;
/// use std::process::ExitStatus;
/// assert_eq!(backstop_jsonrpc::proxy::exit_code(ExitStatus::from_raw(3 << 8)), 3);
/// assert_eq!(backstop_jsonrpc::proxy::exit_code(ExitStatus::from_raw(9)), 137);
/// ```
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// The error that answers a request still pending when the server exited: `-32603`,
/// a message naming the exit status, and `data.exit_code` or `data.signal`.
///
/// ```
/// use std::os::unix::process::ExitStatusExt;
/// let error = backstop_jsonrpc::proxy::server_exited_error(std::process::ExitStatus::from_raw(2 << 8));
/// assert_eq!(error.code, -32603);
/// assert_eq!(error.message, "The MCP server exited with exit code 2 before answering this request");
/// assert_eq!(error.data.unwrap()["exit_code"], 2);
/// ```
pub fn server_exited_error(status: ExitStatus) -> ProtocolError {
    let (how, data) = match (status.code(), status.signal()) {
        (Some(code), _) => (
            format!("exited with exit code {code}"),
            json!({"exit_code": code}),
        ),
        (None, Some(signal)) => {
            let name = Signal::try_from(signal).map_or("unknown", Signal::as_str);
            (
                format!("was killed by signal {signal} ({name})"),
                json!({"signal": signal}),
            )
        }
        (None, None) => ("exited".to_owned(), json!({})),
    };
    ProtocolError::new(
        code::INTERNAL_ERROR,
        format!("The MCP server {how} before answering this request"),
    )
    .with_data(data)
}

/// Run `server` behind `shaper`, on this process's stdin and stdout, until the server
/// exits; return the exit code to exit with ([`exit_code`]). With `log_failures`, each
/// converted failure is logged to stderr as one `backstop: {json}` line (G1, G2).
///
/// An error is returned only when the server cannot be started.
///
/// ```no_run
/// use backstop_jsonrpc::{Shaper, proxy::{ServerCommand, run}};
/// let code = run(&ServerCommand::new("my-mcp-server", ["--stdio"]), Shaper::default(), true).unwrap();
/// std::process::exit(code);
/// ```
pub fn run(server: &ServerCommand, shaper: Shaper, log_failures: bool) -> io::Result<i32> {
    let mut child = Command::new(&server.program)
        .args(&server.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()?;
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    forward_signals(pid);

    let shaper = Arc::new(Mutex::new(shaper));
    let to_server = child.stdin.take().expect("stdin is piped");
    let from_server = child.stdout.take().expect("stdout is piped");

    let client_side = Arc::clone(&shaper);
    thread::spawn(move || pump_client_to_server(&client_side, to_server));

    let mut out = BufWriter::with_capacity(64 << 10, io::stdout().lock());
    let mut client_gone = false;
    let mut reader = LineReader::new(from_server);
    while let Ok(Some(line)) = reader.next_line() {
        let (forward, records) = {
            let mut shaper = lock(&shaper);
            (shaper.server_message(line), shaper.take_log_records())
        };
        if log_failures {
            records.iter().for_each(log_failure);
        }
        if !client_gone {
            let sent = write_line(&mut out, forward.bytes(line)).and_then(|()| {
                if reader.has_buffered_input() {
                    Ok(())
                } else {
                    out.flush()
                }
            });
            // A client that went away is not a reason to stop reading the server:
            // it would block on a full pipe. Keep draining until it exits.
            client_gone = sent.is_err();
        }
    }
    let status = child.wait()?;
    let answers = lock(&shaper).answer_pending(&server_exited_error(status));
    if !client_gone {
        for answer in answers {
            let _ = write_line(&mut out, &answer);
        }
        let _ = out.flush();
    }
    Ok(exit_code(status))
}

/// G1, G2: one line on stderr per converted failure, as JSON after `backstop: `.
fn log_failure(record: &LogRecord) {
    let line = json!({
        "level": record.level.as_str(), "method": record.method, "tool": record.tool,
        "error_type": record.error_type, "expected": record.expected, "message": record.message,
    });
    eprintln!("backstop: {line}");
}

/// Pump the client's lines to the server, each shown to the shaper first. At the end
/// of the client's input the server's stdin is closed.
fn pump_client_to_server(shaper: &Mutex<Shaper>, to_server: impl Write) {
    let mut to_server = BufWriter::with_capacity(64 << 10, to_server);
    let stdin = io::stdin().lock();
    let mut reader = LineReader::new(stdin);
    while let Ok(Some(line)) = reader.next_line() {
        let forward = lock(shaper).client_message(line);
        let sent = write_line(&mut to_server, forward.bytes(line)).and_then(|()| {
            if reader.has_buffered_input() {
                Ok(())
            } else {
                to_server.flush()
            }
        });
        if sent.is_err() {
            return; // the server closed its stdin: it is exiting
        }
    }
    let _ = to_server.flush();
    // Dropping the writer closes the server's stdin.
}

/// Forward SIGINT and SIGTERM to the child, from a thread of their own. If signals
/// cannot be hooked, they keep their default action (the proxy dies, the child sees
/// its stdin close).
fn forward_signals(child: Pid) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    thread::spawn(move || {
        for signal in signals.forever() {
            if let Ok(signal) = Signal::try_from(signal) {
                let _ = kill(child, signal);
            }
        }
    });
}

/// The shaper, even if a thread panicked while holding it (its state stays usable).
fn lock(shaper: &Mutex<Shaper>) -> std::sync::MutexGuard<'_, Shaper> {
    shaper.lock().unwrap_or_else(PoisonError::into_inner)
}
