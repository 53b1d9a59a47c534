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
//!   further input is already waiting. What a long line holds while it is scanned is
//!   written to its temporary file by a thread of its own
//!   ([`HeldInBackground`]), so that the scan and the
//!   write share the two cores.
//! - The shaper's own requests (its `tools/list`, E8 from the first call) go to the
//!   server with the client's line that caused them (before it), or — for the next page
//!   of a listing, asked for while reading the server — through a small writer thread
//!   of their own, so that reading the server never waits on writing to it (a server
//!   blocked on a full stdout would otherwise never read its stdin). A server that does
//!   not answer that listing within [`LISTING_PATIENCE`] does not hold the client's
//!   answers any longer: a watchdog thread releases them, decided without a catalog.
//! - The child's stderr is this process's stderr. SIGINT and SIGTERM are forwarded to
//!   the child, which runs in its own process group (so a terminal's Ctrl-C reaches it
//!   once, through the proxy), and killed if it has not exited
//!   [`ServerCommand::kill_after`] later; the proxy itself waits for the child to exit.
//!   If the proxy dies, the kernel kills the child ([`crate::server_process`]).
//! - When the child's stdout ends, the proxy waits for its exit status, answers every
//!   request still pending with a JSON-RPC error saying the server exited and how
//!   ([`server_exited_error`]), and exits with the child's code (128 + N when the child
//!   was killed by signal N). A last line the exit cut off in the middle is not sent,
//!   or — when it was passing as it came — is ended where it stopped, so the client
//!   reads only whole lines; the request it was answering gets the error that says the
//!   server stopped in the middle of its answer ([`server_stopped_in_answer_error`],
//!   SPEC B5).

use std::ffi::OsString;
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use backstop_core::ProtocolError;
use backstop_core::machine::LISTING_PATIENCE;
use backstop_core::protocol::code;
use nix::sys::signal::Signal;
use serde_json::json;

use backstop_jsonrpc::Shaper;
use backstop_jsonrpc::stream::{CutOff, ServerStream, Sink};

use crate::framing::{LineReader, write_line};
use crate::held::HeldInBackground;
use crate::log::log_failure;
use crate::server_process::{DEFAULT_KILL_AFTER, ServerProcess};

/// The server to run: a program and its arguments.
///
/// ```
/// let server = backstop::proxy::ServerCommand::new("python3", ["server.py"]);
/// assert_eq!(server.program, "python3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// How long it has to exit when the proxy is told to stop (SIGINT or SIGTERM,
    /// forwarded) before it is killed.
    pub kill_after: Duration,
}

impl ServerCommand {
    /// A program with arguments.
    ///
    /// ```
    /// let server = backstop::proxy::ServerCommand::new("npx", ["-y", "some-server"]);
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
            kill_after: DEFAULT_KILL_AFTER,
        }
    }
}

/// The exit code the proxy gives for a child's exit status: its code, or 128 + N
/// when it was killed by signal N (as shells report it).
///
/// ```
/// use std::os::unix::process::ExitStatusExt;
/// use std::process::ExitStatus;
/// assert_eq!(backstop::proxy::exit_code(ExitStatus::from_raw(3 << 8)), 3);
/// assert_eq!(backstop::proxy::exit_code(ExitStatus::from_raw(9)), 137);
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
/// let error = backstop::proxy::server_exited_error(std::process::ExitStatus::from_raw(2 << 8));
/// assert_eq!(error.code, -32603);
/// assert_eq!(error.message, "The MCP server exited with exit code 2 before answering this request");
/// assert_eq!(error.data.unwrap()["exit_code"], 2);
/// ```
pub fn server_exited_error(status: ExitStatus) -> ProtocolError {
    let (how, data) = how_it_exited(status);
    ProtocolError::new(
        code::INTERNAL_ERROR,
        format!("The MCP server {how} before answering this request"),
    )
    .with_data(data)
}

/// The error that answers the request whose answer the server's exit cut off in the
/// middle (SPEC B5), `bytes` of it having come: as [`server_exited_error`], saying so,
/// with `data.received_bytes`.
///
/// ```
/// use std::os::unix::process::ExitStatusExt;
/// let error = backstop::proxy::server_stopped_in_answer_error(std::process::ExitStatus::from_raw(1 << 8), 57);
/// assert_eq!(error.code, -32603);
/// assert_eq!(error.message, "The MCP server exited with exit code 1 in the middle of its answer to this request");
/// let data = error.data.unwrap();
/// assert_eq!((data["exit_code"].as_i64(), data["received_bytes"].as_u64()), (Some(1), Some(57)));
/// ```
pub fn server_stopped_in_answer_error(status: ExitStatus, bytes: u64) -> ProtocolError {
    let (how, mut data) = how_it_exited(status);
    data["received_bytes"] = json!(bytes);
    ProtocolError::new(
        code::INTERNAL_ERROR,
        format!("The MCP server {how} in the middle of its answer to this request"),
    )
    .with_data(data)
}

/// How the server exited, in words and as the error's `data`.
fn how_it_exited(status: ExitStatus) -> (String, serde_json::Value) {
    match (status.code(), status.signal()) {
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
    }
}

/// What the proxy writes to the client: its stdout, shared by the server's pump and
/// the listing watchdog.
type ClientOutput = Arc<Mutex<BufWriter<io::Stdout>>>;

/// Run `server` behind `shaper`, on this process's stdin and stdout, until the server
/// exits; return the exit code to exit with ([`exit_code`]). With `log_failures`, each
/// converted failure is logged to stderr as one `backstop: {json}` line (G1, G2).
///
/// An error is returned only when the server cannot be started.
///
/// ```no_run
/// use backstop::proxy::{ServerCommand, run};
/// use backstop_jsonrpc::Shaper;
/// let code = run(&ServerCommand::new("my-mcp-server", ["--stdio"]), Shaper::default(), true).unwrap();
/// std::process::exit(code);
/// ```
pub fn run(server: &ServerCommand, shaper: Shaper, log_failures: bool) -> io::Result<i32> {
    let mut command = Command::new(&server.program);
    command
        .args(&server.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let (process, stdin, from_server) = ServerProcess::spawn(&mut command)?;
    process.forward_stop_signals(server.kill_after);

    let shaper = Arc::new(Mutex::new(shaper));
    let to_server: ServerInput =
        Arc::new(Mutex::new(Some(BufWriter::with_capacity(64 << 10, stdin))));
    widen_pipe(&from_server);

    let client_side = Arc::clone(&shaper);
    let client_to_server = Arc::clone(&to_server);
    thread::spawn(move || pump_client_to_server(&client_side, &client_to_server));
    let own_requests = spawn_request_writer(to_server);

    let out: ClientOutput = Arc::new(Mutex::new(BufWriter::with_capacity(64 << 10, io::stdout())));
    let wake = Arc::new(Condvar::new());
    spawn_listing_watchdog(
        Arc::clone(&shaper),
        Arc::clone(&wake),
        Arc::clone(&out),
        log_failures,
    );
    let mut sink = ClientSink {
        out: &out,
        held: HeldInBackground::new(),
        own_requests: &own_requests,
        client_gone: false,
    };
    let mut stream = ServerStream::default();
    let mut from_server = from_server;
    let mut buffer = vec![0; READ_BYTES];
    loop {
        let read = match from_server.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let records = {
            let mut shaper = lock(&shaper);
            stream.push(&mut shaper, Instant::now(), &buffer[..read], &mut sink);
            if shaper.poll_timeout().is_some() {
                wake.notify_one();
            }
            shaper.take_log_records()
        };
        if log_failures {
            records.iter().for_each(log_failure);
        }
        sink.flush();
    }
    let cut_off = {
        let mut shaper = lock(&shaper);
        let cut_off = stream.finish(&mut shaper, Instant::now(), &mut sink);
        if log_failures {
            shaper.take_log_records().iter().for_each(log_failure);
        }
        cut_off
    };
    sink.flush();
    if let Some(cut_off) = &cut_off {
        tracing::warn!(
            bytes = cut_off.bytes,
            partly_sent = cut_off.sent,
            answering = cut_off.answering.as_deref(),
            "the server's output ended in the middle of a line: {}",
            if cut_off.sent {
                "the part sent is ended there"
            } else {
                "dropped, none of it sent"
            }
        );
    }
    let client_gone = sink.client_gone;
    let status = process.wait()?;
    let answers = {
        let mut shaper = lock(&shaper);
        // What waits for the shaper's listing goes first, as `answer_pending` sends it.
        let mut answers = shaper.abandon_listing(Instant::now());
        if let Some(CutOff {
            bytes,
            answering: Some(id),
            ..
        }) = cut_off
        {
            let error = server_stopped_in_answer_error(status, bytes);
            answers.extend(shaper.answer_requests(&[id], &error));
        }
        answers.extend(shaper.answer_pending(Instant::now(), &server_exited_error(status)));
        answers
    };
    if !client_gone {
        let mut out = lock(&out);
        for answer in answers {
            let _ = write_line(&mut *out, &answer);
        }
        let _ = out.flush();
    }
    Ok(exit_code(status))
}

/// How much of the server's output is read at a time: as much as its pipe holds
/// ([`SERVER_PIPE_BYTES`]), so that one read can empty it: fewer wake-ups of the
/// server and turns at the pipe's lock. Five 1 GB lines cost the proxy 0.90 s of
/// system time this way, 0.94–1.21 s in reads of 256 KiB.
const READ_BYTES: usize = SERVER_PIPE_BYTES;

/// The size asked for the pipe from the server (Linux's default is 64 KiB): a long
/// line then comes in reads of up to this much, with a fourth of the wake-ups of the
/// server and the proxy. Linux's default ceiling for an unprivileged process
/// (`/proc/sys/fs/pipe-max-size`).
const SERVER_PIPE_BYTES: usize = 1 << 20;

/// Ask for a pipe of [`SERVER_PIPE_BYTES`]; where it is refused (a lower ceiling, or
/// not Linux), the pipe stays as it is.
fn widen_pipe(pipe: &std::process::ChildStdout) {
    #[cfg(target_os = "linux")]
    let _ = nix::fcntl::fcntl(
        pipe,
        nix::fcntl::FcntlArg::F_SETPIPE_SZ(SERVER_PIPE_BYTES as nix::libc::c_int),
    );
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
}

/// The client's side of [`ServerStream`]: this process's stdout, the held bytes,
/// and the channel to the writer of the shaper's own requests.
struct ClientSink<'a> {
    out: &'a ClientOutput,
    held: HeldInBackground,
    own_requests: &'a Sender<Vec<u8>>,
    /// A client that went away is not a reason to stop reading the server: it would
    /// block on a full pipe. Keep draining until it exits.
    client_gone: bool,
}

impl ClientSink<'_> {
    fn write(&mut self, bytes: &[u8]) {
        if !self.client_gone && lock(self.out).write_all(bytes).is_err() {
            self.client_gone = true;
        }
    }

    fn flush(&mut self) {
        if !self.client_gone && lock(self.out).flush().is_err() {
            self.client_gone = true;
        }
    }
}

impl Sink for ClientSink<'_> {
    fn send(&mut self, bytes: &[u8]) {
        self.write(bytes);
    }

    fn hold(&mut self, bytes: &[u8]) {
        self.held.hold(bytes);
    }

    fn release(&mut self) {
        for piece in self.held.take().pieces() {
            self.write(&piece);
        }
    }

    fn discard(&mut self) {
        self.held.discard();
    }

    fn take_held(&mut self) -> Vec<u8> {
        self.held.take().read_whole()
    }

    fn held_lost(&mut self) -> bool {
        self.held.is_lost()
    }

    fn to_server(&mut self, request: Vec<u8>) {
        let _ = self.own_requests.send(request);
    }
}

/// The server's stdin, shared by the client's pump and the writer of the shaper's own
/// requests; `None` once closed.
type ServerInput = Arc<Mutex<Option<BufWriter<std::process::ChildStdin>>>>;

/// Pump the client's lines to the server, each shown to the shaper first (and after
/// the shaper's own requests it caused). At the end of the client's input the
/// server's stdin is closed.
fn pump_client_to_server(shaper: &Mutex<Shaper>, to_server: &ServerInput) {
    let stdin = io::stdin().lock();
    let mut reader = LineReader::new(stdin);
    while let Ok(Some(line)) = reader.next_line() {
        let route = lock(shaper).route_client_message(Instant::now(), line);
        let mut input = lock(to_server);
        let Some(writer) = input.as_mut() else {
            return;
        };
        let sent = route
            .to_server
            .iter()
            .map(Vec::as_slice)
            .chain(route.forward.as_ref().map(|forward| forward.bytes(line)))
            .try_for_each(|message| write_line(writer, message))
            .and_then(|()| {
                if reader.has_buffered_input() {
                    Ok(())
                } else {
                    writer.flush()
                }
            });
        if sent.is_err() {
            return; // the server closed its stdin: it is exiting
        }
    }
    if let Some(mut writer) = lock(to_server).take() {
        let _ = writer.flush();
        // Dropping the writer closes the server's stdin.
    }
}

/// A thread that writes the shaper's own requests to the server as they are sent to
/// it, each flushed; once the server's stdin is closed they are dropped.
fn spawn_request_writer(to_server: ServerInput) -> Sender<Vec<u8>> {
    let (sender, requests) = mpsc::channel::<Vec<u8>>();
    thread::spawn(move || {
        for request in requests {
            if let Some(writer) = lock(&to_server).as_mut() {
                let _ = write_line(writer, &request).and_then(|()| writer.flush());
            }
        }
    });
    sender
}

/// A thread that sleeps until the shaper's next timeout ([`Shaper::poll_timeout`]: the
/// end of its patience for its own listing while server messages wait for it) and then
/// hands it the time ([`Shaper::handle_timeout`]), writing what it releases. It writes
/// while it holds the shaper, so nothing the server sent later can overtake them;
/// `wake` tells it that a timeout may have been set.
fn spawn_listing_watchdog(
    shaper: Arc<Mutex<Shaper>>,
    wake: Arc<Condvar>,
    out: ClientOutput,
    log_failures: bool,
) {
    thread::spawn(move || {
        let mut guard = lock(&shaper);
        loop {
            let now = Instant::now();
            guard = match guard.poll_timeout() {
                None => wake.wait(guard).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) if deadline > now => {
                    match wake.wait_timeout(guard, deadline - now) {
                        Ok((guard, _)) => guard,
                        Err(poisoned) => poisoned.into_inner().0,
                    }
                }
                Some(_) => {
                    if let Some(released) = guard.handle_timeout(now) {
                        tracing::warn!(
                            after_s = LISTING_PATIENCE.as_secs(),
                            "the server did not answer backstop's own tools/list: given up"
                        );
                        if log_failures {
                            guard.take_log_records().iter().for_each(log_failure);
                        }
                        let mut out = lock(&out);
                        let _ = released
                            .iter()
                            .try_for_each(|message| write_line(&mut *out, message))
                            .and_then(|()| out.flush());
                    }
                    guard
                }
            };
        }
    });
}

/// The shaper or the server's stdin, even if a thread panicked while holding it (its
/// state stays usable).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
