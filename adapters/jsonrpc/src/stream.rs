//! The server's side of a connection as a byte stream: newline-delimited messages
//! shaped as they arrive, in memory bounded by the cap, not by the message (SPEC B3).
//!
//! [`ServerStream`] is sans-IO: it is pushed the bytes the server wrote, in chunks of
//! any size, and tells a [`Sink`] what to do with them.
//!
//! - A line up to [`WHOLE_LINE_BYTES`] is collected and shaped whole
//!   ([`Shaper::route_server_message`]).
//! - A longer one is [scanned](crate::scan) as it comes, and its bytes are handed to
//!   the sink to *hold* (the owner may keep them in a file): as soon as its top-level
//!   `id` or `method` shows it cannot need a change, or it is not valid JSON (B4), what
//!   is held is released and the rest streams through. Otherwise, at its end, the
//!   shaper decides from the scan's skeleton: send what is held as it came, or send
//!   the rewritten message instead, or — in the few cases the skeleton cannot decide
//!   ([`Shaper::long_server_message`]) — read what is held whole.
//!
//! Whatever the chunking, the output is the same bytes (B3), and the same as
//! [`Shaper::route_server_message`] gives for each whole line.
//!
//! ```
//! use backstop_jsonrpc::stream::{MemorySink, ServerStream};
//! use backstop_jsonrpc::Shaper;
//!
//! let mut shaper = Shaper::default();
//! let mut stream = ServerStream::default();
//! let mut out = MemorySink::default();
//! for chunk in [&b"{\"jsonrpc\":\"2.0\",\"meth"[..], b"od\":\"ping\"}\n{\"jsonrpc\""] {
//!     stream.push(&mut shaper, chunk, &mut out);
//! }
//! stream.finish(&mut shaper, &mut out);
//! assert_eq!(out.sent, b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n{\"jsonrpc\"\n");
//! ```

use crate::scan::Scan;
use crate::shaper::{Forward, LongMessage, Route, Shaper};

/// Lines up to this long are shaped whole; longer ones are scanned as they come.
///
/// ```
/// assert_eq!(backstop_jsonrpc::stream::WHOLE_LINE_BYTES, 4 << 20);
/// ```
pub const WHOLE_LINE_BYTES: usize = 4 << 20;

/// What the owner of a [`ServerStream`] does with the bytes (it owns the pipes).
pub trait Sink {
    /// Send these bytes to the client now, after everything sent before.
    fn send(&mut self, bytes: &[u8]);
    /// Keep these bytes of the current line, after those kept before, until
    /// [`release`](Self::release), [`discard`](Self::discard) or
    /// [`take_held`](Self::take_held).
    fn hold(&mut self, bytes: &[u8]);
    /// Send everything kept, in order, and forget it.
    fn release(&mut self);
    /// Forget everything kept.
    fn discard(&mut self);
    /// Everything kept, to be read whole; forgotten here.
    fn take_held(&mut self) -> Vec<u8>;
    /// A request of the shaper's own for the server (its `tools/list`).
    fn to_server(&mut self, request: Vec<u8>);
}

/// A [`Sink`] that keeps everything in memory: for tests, and for a transport that
/// hands on whole buffers.
///
/// ```
/// use backstop_jsonrpc::stream::{MemorySink, Sink};
/// let mut sink = MemorySink::default();
/// sink.hold(b"held ");
/// sink.send(b"sent ");
/// sink.release();
/// assert_eq!(sink.sent, b"sent held ");
/// ```
#[derive(Debug, Default)]
pub struct MemorySink {
    /// What was sent, in order.
    pub sent: Vec<u8>,
    /// What is held now.
    pub held: Vec<u8>,
    /// The shaper's own requests for the server.
    pub to_server: Vec<Vec<u8>>,
    /// How many lines were read whole from what was held.
    pub read_whole: usize,
}

impl Sink for MemorySink {
    fn send(&mut self, bytes: &[u8]) {
        self.sent.extend_from_slice(bytes);
    }
    fn hold(&mut self, bytes: &[u8]) {
        self.held.extend_from_slice(bytes);
    }
    fn release(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.sent.extend(held);
    }
    fn discard(&mut self) {
        self.held.clear();
    }
    fn take_held(&mut self) -> Vec<u8> {
        self.read_whole += 1;
        std::mem::take(&mut self.held)
    }
    fn to_server(&mut self, request: Vec<u8>) {
        self.to_server.push(request);
    }
}

/// The server's byte stream, shaped line by line as it arrives (see the
/// [module docs](self)).
///
/// ```
/// let stream = backstop_jsonrpc::stream::ServerStream::default();
/// assert_eq!(stream.whole_line_bytes(), backstop_jsonrpc::stream::WHOLE_LINE_BYTES);
/// ```
#[derive(Debug)]
pub struct ServerStream {
    whole_line_bytes: usize,
    line: Vec<u8>,
    state: State,
}

#[derive(Debug)]
enum State {
    /// Collecting a line to shape whole.
    Line,
    /// Sending the rest of a line as it comes; still scanning it when its `id`, which
    /// comes later, is to be known (the request it answers is then no longer pending).
    Passing(Option<Box<Scan>>),
    /// Scanning a long line, its bytes held.
    Scanning {
        scan: Box<Scan>,
        /// What was known when the shaper was last asked whether the line may pass.
        asked: (bool, bool, bool),
    },
}

impl Default for ServerStream {
    fn default() -> Self {
        Self::new(WHOLE_LINE_BYTES)
    }
}

impl ServerStream {
    /// A stream that shapes lines up to `whole_line_bytes` whole.
    ///
    /// ```
    /// let stream = backstop_jsonrpc::stream::ServerStream::new(1 << 16);
    /// assert_eq!(stream.whole_line_bytes(), 1 << 16);
    /// ```
    pub fn new(whole_line_bytes: usize) -> Self {
        Self {
            whole_line_bytes,
            line: Vec::new(),
            state: State::Line,
        }
    }

    /// The longest line shaped whole.
    pub fn whole_line_bytes(&self) -> usize {
        self.whole_line_bytes
    }

    /// The next bytes the server wrote.
    pub fn push(&mut self, shaper: &mut Shaper, mut chunk: &[u8], sink: &mut impl Sink) {
        while !chunk.is_empty() {
            let (part, rest, ends) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            chunk = rest;
            match self.state {
                State::Line if self.line.len() + part.len() <= self.whole_line_bytes => {
                    self.line.extend_from_slice(part);
                    if ends {
                        self.whole_line(shaper, sink);
                    }
                }
                State::Line => {
                    let mut scan = Box::new(Scan::new(shaper.limit().max_bytes()));
                    let line = std::mem::take(&mut self.line);
                    scan.push(&line);
                    sink.hold(&line);
                    self.state = State::Scanning {
                        scan,
                        asked: (false, false, false),
                    };
                    self.scanning(shaper, part, ends, sink);
                }
                State::Passing(ref mut scan) => {
                    sink.send(part);
                    if let Some(scan) = scan {
                        scan.push(part);
                    }
                    if ends {
                        self.end_passing(shaper, sink);
                    }
                }
                State::Scanning { .. } => self.scanning(shaper, part, ends, sink),
            }
        }
    }

    /// The end of the server's output: a last line without its line break is still a
    /// line (and gets one).
    pub fn finish(&mut self, shaper: &mut Shaper, sink: &mut impl Sink) {
        match self.state {
            State::Line if self.line.is_empty() => {}
            State::Line => self.whole_line(shaper, sink),
            State::Passing(_) => self.end_passing(shaper, sink),
            State::Scanning { .. } => self.scanning(shaper, b"", true, sink),
        }
    }

    /// The end of a line sent on as it came: its line break, and — if it was still
    /// scanned for its `id` — the request it answers is no longer pending.
    fn end_passing(&mut self, shaper: &mut Shaper, sink: &mut impl Sink) {
        sink.send(b"\n");
        if let State::Passing(Some(scan)) = std::mem::replace(&mut self.state, State::Line) {
            let scanned = scan.finish();
            if !scanned.invalid {
                shaper.passes_early(scanned.id.as_deref(), None, true);
            }
        }
    }

    fn whole_line(&mut self, shaper: &mut Shaper, sink: &mut impl Sink) {
        let route = shaper.route_server_message(&self.line);
        emit(route, Held::Here(&self.line), sink);
        if self.line.capacity() > crate::framing::KEEP_BUFFER_BYTES {
            self.line = Vec::new();
        }
        self.line.clear();
    }

    fn scanning(&mut self, shaper: &mut Shaper, part: &[u8], ends: bool, sink: &mut impl Sink) {
        let State::Scanning { scan, asked } = &mut self.state else {
            return;
        };
        scan.push(part);
        sink.hold(part);
        let known = (
            scan.top_id().is_some(),
            scan.top_method().is_some(),
            scan.top_result(),
        );
        if scan.is_invalid() || known != *asked {
            *asked = known;
            let invalid = scan.is_invalid();
            if invalid || shaper.passes_early(scan.top_id(), scan.top_method(), scan.top_result()) {
                sink.release();
                let scan_on = !invalid && known == (false, false, true);
                let State::Scanning { scan, .. } = std::mem::replace(&mut self.state, State::Line)
                else {
                    return;
                };
                self.state = State::Passing(scan_on.then_some(scan));
                if ends {
                    self.end_passing(shaper, sink);
                }
                return;
            }
        }
        if !ends {
            return;
        }
        let State::Scanning { scan, .. } = std::mem::replace(&mut self.state, State::Line) else {
            return;
        };
        match shaper.long_server_message(&scan.finish()) {
            LongMessage::Route(route) => emit(route, Held::InSink, sink),
            LongMessage::NeedsWhole => {
                let whole = sink.take_held();
                let route = shaper.route_server_message(&whole);
                emit(route, Held::Here(&whole), sink);
            }
        }
    }
}

/// Where the line a route is about is.
enum Held<'a> {
    Here(&'a [u8]),
    InSink,
}

/// Send what `route` says, the line itself from `held`.
fn emit(route: Route, held: Held<'_>, sink: &mut impl Sink) {
    for request in route.to_server {
        sink.to_server(request);
    }
    for message in &route.to_client {
        sink.send(message);
        sink.send(b"\n");
    }
    match (route.forward, held) {
        (None, Held::InSink) => sink.discard(),
        (None, Held::Here(_)) => {}
        (Some(Forward::Unchanged), Held::Here(line)) => {
            sink.send(line);
            sink.send(b"\n");
        }
        (Some(Forward::Unchanged), Held::InSink) => {
            sink.release();
            sink.send(b"\n");
        }
        (Some(Forward::Rewritten(bytes)), held) => {
            if matches!(held, Held::InSink) {
                sink.discard();
            }
            sink.send(&bytes);
            sink.send(b"\n");
        }
    }
}
