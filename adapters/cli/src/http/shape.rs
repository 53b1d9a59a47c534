//! The server's bodies and SSE events, shaped as they arrive, in memory bounded by the
//! cap and not by the message (SPEC B3, A5): the HTTP face of [`backstop_jsonrpc::stream`].
//!
//! Each message — a JSON body, or one event's data — is a [`Message`]: shaped whole
//! up to [`WHOLE_LINE_BYTES`], scanned past it, its bytes held (in a temporary file
//! past 4 MiB, [`HeldBytes`]) until the shaper decides, or sent on as they come once
//! it cannot need a change. Everything sans-IO: what is to be sent collects in a
//! [`QueueSink`], which the caller drains to its socket or stdout.
//!
//! Two ways out, one per mode ([`Out`]):
//! - [`Out::Http`] (`backstop gateway`): a body goes as it came; an event keeps every
//!   line as it came (`id:`, `event:`, `retry:`, comments) and, when its data is
//!   rewritten, only its `data:` lines change ([`Event::with_data`]).
//! - [`Out::Lines`] (`backstop proxy --url`): each message is one line for stdout (a
//!   line break in a body or between `data:` lines becomes a space: JSON allows one
//!   wherever it allows a line break outside a string).
//!
//! ```
//! use backstop_jsonrpc::Shaper;
//! use backstop::http::shape::{EventShaper, Out, QueueSink};
//! let mut shaper = Shaper::default();
//! let mut events = EventShaper::new(Out::Http);
//! let mut sink = QueueSink::default();
//! events.push(&mut shaper, b"id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",", &mut sink);
//! events.push(&mut shaper, b"\"method\":\"ping\"}\n\n", &mut sink);
//! assert_eq!(sink.take_bytes(), b"id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n\n");
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;
use std::time::Instant;

use backstop_jsonrpc::shaper::{Route, Shaper};
use backstop_jsonrpc::stream::{Ended, Frame, Message, Sink, WHOLE_LINE_BYTES};

use super::sse::{Event, EventReader, Piece, field, without_ending};
use crate::held::HeldBytes;

/// Where the shaped messages go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// To an HTTP client: bodies and events as they came, but for what is shaped.
    Http,
    /// To stdout: one line per message.
    Lines,
}

/// The framing of one message on its way out.
#[derive(Debug)]
enum HttpFrame {
    /// A JSON body, as it came.
    Body,
    /// An SSE event: its lines as they came, without the data values (`shell`).
    Event { shell: Vec<u8> },
    /// A line on stdout.
    Line,
}

impl Frame for HttpFrame {
    fn end_original(&mut self, sink: &mut impl Sink) {
        if let Self::Line = self {
            sink.send(b"\n");
        }
    }

    fn send_rewritten(&mut self, message: &[u8], sink: &mut impl Sink) {
        match self {
            Self::Body => sink.send(message),
            Self::Event { shell } => {
                sink.send(&Event::new(std::mem::take(shell)).with_data(message))
            }
            Self::Line => {
                sink.send(message);
                sink.send(b"\n");
            }
        }
    }

    fn send_new(&mut self, message: &[u8], sink: &mut impl Sink) {
        match self {
            Self::Event { .. } => {
                sink.send(b"event: message\ndata: ");
                sink.send(message);
                sink.send(b"\n\n");
            }
            _ => self.send_rewritten(message, sink),
        }
    }

    fn message<'a>(&self, raw: &'a [u8]) -> Cow<'a, [u8]> {
        match self {
            Self::Event { .. } => Cow::Owned(Event::new(raw.to_vec()).data().unwrap_or_default()),
            _ => Cow::Borrowed(raw),
        }
    }

    /// The HTTP modes hold nothing back: a message is decided on its own
    /// ([`Shaper::server_route`]: shaped, or dropped when it answers a request the
    /// gateway answered itself, B5); the shaper's own listing is done before the call
    /// it is for goes out.
    fn route(&self, shaper: &mut Shaper, now: Instant, message: &[u8]) -> Route {
        shaper.server_route(now, message)
    }
}

/// One piece of what is to be sent.
#[derive(Debug)]
pub enum Queued {
    /// Bytes to send.
    Bytes(Vec<u8>),
    /// Held bytes released: send them in order ([`HeldBytes::pieces`]).
    Held(HeldBytes),
}

/// A [`Sink`] that queues what is to be sent, for the caller to send when it can.
///
/// ```
/// use backstop_jsonrpc::stream::Sink;
/// let mut sink = backstop::http::shape::QueueSink::default();
/// sink.send(b"a");
/// sink.hold(b"b");
/// sink.release();
/// sink.send(b"c");
/// assert_eq!(sink.take_bytes(), b"abc");
/// ```
#[derive(Debug, Default)]
pub struct QueueSink {
    queue: VecDeque<Queued>,
    held: HeldBytes,
    /// Whether anything of the current message was queued or held.
    started: bool,
}

impl QueueSink {
    /// What is to be sent, oldest first; the queue is empty after.
    pub fn drain(&mut self) -> impl Iterator<Item = Queued> + '_ {
        self.queue.drain(..)
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Everything queued, as bytes (held bytes read back in): for tests and small
    /// answers.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        // One piece (a short answer): itself, not a copy.
        if self.queue.len() == 1
            && matches!(self.queue.front(), Some(Queued::Bytes(_)))
            && let Some(Queued::Bytes(bytes)) = self.queue.pop_front()
        {
            return bytes;
        }
        let mut out = Vec::new();
        for queued in self.queue.drain(..) {
            match queued {
                Queued::Bytes(bytes) => out.extend(bytes),
                Queued::Held(held) => out.extend(held.read_whole()),
            }
        }
        out
    }

    /// Whether bytes of the message in progress were queued (to end it, a cut-off
    /// one needs its end).
    pub fn sent_some(&self) -> bool {
        self.started
    }
}

impl Sink for QueueSink {
    fn send(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.started = true;
        match self.queue.back_mut() {
            Some(Queued::Bytes(last)) if last.len() < 256 << 10 => last.extend_from_slice(bytes),
            _ => self.queue.push_back(Queued::Bytes(bytes.to_vec())),
        }
    }
    fn hold(&mut self, bytes: &[u8]) {
        self.held.hold(bytes);
    }
    fn release(&mut self) {
        if !self.held.is_empty() {
            self.started = true;
            self.queue.push_back(Queued::Held(self.held.take()));
        }
    }
    fn discard(&mut self) {
        self.held = HeldBytes::default();
    }
    fn take_held(&mut self) -> Vec<u8> {
        self.held.take().read_whole()
    }
    fn held_lost(&mut self) -> bool {
        self.held.is_lost()
    }
    /// The HTTP modes send the shaper's own requests themselves, before the call
    /// they are for ([`super::listing`]); none comes here.
    fn to_server(&mut self, _request: Vec<u8>) {}
}

/// A JSON body, shaped as it arrives.
///
/// ```
/// use backstop_jsonrpc::Shaper;
/// use backstop::http::shape::{BodyShaper, Out, QueueSink};
/// let mut shaper = Shaper::default();
/// let mut body = BodyShaper::new(Out::Lines);
/// let mut sink = QueueSink::default();
/// body.push(&mut shaper, b"{\"jsonrpc\":\"2.0\",\r\n\"id\":3,\"result\":{}}", &mut sink);
/// assert_eq!(body.whole(), Some(&b"{\"jsonrpc\":\"2.0\",\r\n\"id\":3,\"result\":{}}"[..]));
/// let ended = body.end(&mut shaper, &mut sink);
/// assert_eq!(ended.answered, ["3"]);
/// assert_eq!(sink.take_bytes(), b"{\"jsonrpc\":\"2.0\",  \"id\":3,\"result\":{}}\n");
/// ```
#[derive(Debug)]
pub struct BodyShaper {
    out: Out,
    message: Message<HttpFrame>,
    empty: bool,
}

impl BodyShaper {
    /// A body on its way to `out`.
    pub fn new(out: Out) -> Self {
        let frame = match out {
            Out::Http => HttpFrame::Body,
            Out::Lines => HttpFrame::Line,
        };
        Self {
            out,
            message: Message::new(frame, WHOLE_LINE_BYTES),
            empty: true,
        }
    }

    /// The same, shaping bodies up to `whole_bytes` whole (tests take small ones).
    pub fn with_whole_bytes(mut self, whole_bytes: usize) -> Self {
        let frame = match self.out {
            Out::Http => HttpFrame::Body,
            Out::Lines => HttpFrame::Line,
        };
        self.message = Message::new(frame, whole_bytes);
        self
    }

    /// The next bytes of the body.
    pub fn push(&mut self, shaper: &mut Shaper, bytes: &[u8], sink: &mut QueueSink) {
        self.empty &= bytes.is_empty();
        match self.out {
            Out::Http => self.message.push(shaper, bytes, bytes, sink),
            Out::Lines => {
                let line = one_line(bytes);
                self.message.push(shaper, bytes, &line, sink);
            }
        }
    }

    /// The body so far, while it is short enough to be read whole (`None` once it is
    /// not).
    pub fn whole(&self) -> Option<&[u8]> {
        self.message.whole()
    }

    /// The end of the body: sent, as it came or shaped. An empty body sends nothing.
    pub fn end(self, shaper: &mut Shaper, sink: &mut QueueSink) -> Ended {
        if self.empty {
            return Ended::default();
        }
        self.message.end(shaper, Instant::now(), sink)
    }
}

/// `bytes` with each line break a space (one line for stdout).
fn one_line(bytes: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr2(b'\n', b'\r', bytes).is_none() {
        return Cow::Borrowed(bytes);
    }
    Cow::Owned(
        bytes
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect(),
    )
}

/// The event in progress.
#[derive(Debug)]
struct EventInProgress {
    message: Message<HttpFrame>,
    data_lines: usize,
    /// Joins of `data:` lines not yet pushed (stdout only).
    joins: usize,
    value_bytes: usize,
    id: Option<Vec<u8>>,
    retry: Option<Vec<u8>>,
}

impl EventInProgress {
    /// The joins of `data:` lines not yet pushed (on stdout, each a space).
    fn push_joins(&mut self, shaper: &mut Shaper, sink: &mut QueueSink) {
        if self.joins > 0 {
            let joins = std::mem::take(&mut self.joins);
            self.message
                .push(shaper, &b"\n".repeat(joins), &b" ".repeat(joins), sink);
        }
    }
}

/// What one event was, once it ended.
#[derive(Debug, Default)]
pub struct EventEnded {
    /// Its message, if it had data ([`Ended`]).
    pub message: Option<Ended>,
    /// The value of its `id:` line, if any.
    pub id: Option<Vec<u8>>,
    /// The value of its last `retry:` line, if any (a reconnection time, for the
    /// client's GET stream).
    pub retry: Option<Vec<u8>>,
}

/// An SSE stream, shaped event by event as it arrives (see the [module docs](self)).
#[derive(Debug)]
pub struct EventShaper {
    out: Out,
    whole_bytes: usize,
    reader: EventReader,
    event: Option<EventInProgress>,
}

impl EventShaper {
    /// A stream on its way to `out`.
    pub fn new(out: Out) -> Self {
        Self {
            out,
            whole_bytes: WHOLE_LINE_BYTES,
            reader: EventReader::default(),
            event: None,
        }
    }

    /// The same, shaping events up to `whole_bytes` whole (tests take small ones).
    pub fn with_whole_bytes(mut self, whole_bytes: usize) -> Self {
        self.whole_bytes = whole_bytes;
        self
    }

    /// The next bytes of the stream; what each event that ended in them was.
    pub fn push(
        &mut self,
        shaper: &mut Shaper,
        bytes: &[u8],
        sink: &mut QueueSink,
    ) -> Vec<EventEnded> {
        let mut ended = Vec::new();
        let mut reader = std::mem::take(&mut self.reader);
        reader.feed(bytes, |piece| {
            if let Some(event) = self.piece(shaper, piece, sink) {
                ended.push(event);
            }
        });
        self.reader = reader;
        ended
    }

    /// The end of the stream. An event cut off — whose blank line never came — is
    /// sent as far as it came when `keep_cut_off` (an HTTP client drops it); true when
    /// a part of it was sent already, which then needs its end before anything else.
    pub fn finish(
        &mut self,
        shaper: &mut Shaper,
        keep_cut_off: bool,
        sink: &mut QueueSink,
    ) -> bool {
        let mut reader = std::mem::take(&mut self.reader);
        reader.finish(|piece| {
            let _ = self.piece(shaper, piece, sink);
        });
        let Some(event) = self.event.take() else {
            return false;
        };
        let sent_some = sink.started;
        if self.out == Out::Http && keep_cut_off || sent_some {
            event.message.pass(sink);
        } else {
            sink.discard();
        }
        sent_some && !keep_cut_off
    }

    fn piece(
        &mut self,
        shaper: &mut Shaper,
        piece: Piece<'_>,
        sink: &mut QueueSink,
    ) -> Option<EventEnded> {
        let http = self.out == Out::Http;
        if self.event.is_none() {
            sink.started = false;
            let frame = match self.out {
                Out::Http => HttpFrame::Event { shell: Vec::new() },
                Out::Lines => HttpFrame::Line,
            };
            self.event = Some(EventInProgress {
                message: Message::new(frame, self.whole_bytes),
                data_lines: 0,
                joins: 0,
                value_bytes: 0,
                id: None,
                retry: None,
            });
        }
        let event = self.event.as_mut()?;
        let framing = |event: &mut EventInProgress, bytes: &[u8]| {
            if let HttpFrame::Event { shell } = event.message.frame_mut() {
                shell.extend_from_slice(bytes);
            }
        };
        match piece {
            Piece::Field(line) => {
                match field(without_ending(line)) {
                    (b"id", value) => event.id = Some(value.to_vec()),
                    (b"retry", value) => event.retry = Some(value.to_vec()),
                    _ => {}
                }
                framing(event, line);
                if http {
                    event.message.push(shaper, b"", line, sink);
                }
            }
            Piece::DataStart(prefix) => {
                framing(event, prefix);
                let join: &[u8] = if event.data_lines > 0 { b"\n" } else { b"" };
                event.data_lines += 1;
                if http {
                    event.message.push(shaper, join, prefix, sink);
                } else {
                    // On stdout a join is a space, sent only once a value follows: an
                    // event of empty `data:` lines sends nothing.
                    event.joins += join.len();
                }
            }
            Piece::Value(value) => {
                event.value_bytes += value.len();
                event.push_joins(shaper, sink);
                event.message.push(shaper, value, value, sink);
            }
            Piece::DataEnd(ending) => {
                framing(event, ending);
                if http {
                    event.message.push(shaper, b"", ending, sink);
                }
            }
            Piece::EventEnd(ending) => {
                framing(event, ending);
                if http {
                    event.message.push(shaper, b"", ending, sink);
                }
                let mut event = self.event.take()?;
                if event.value_bytes > 0 {
                    event.push_joins(shaper, sink);
                }
                let message = if event.value_bytes == 0 {
                    if http {
                        event.message.pass(sink);
                    }
                    None
                } else {
                    Some(event.message.end(shaper, Instant::now(), sink))
                };
                sink.started = false;
                return Some(EventEnded {
                    message,
                    id: event.id,
                    retry: event.retry,
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a5_a_message_of_the_shapers_own_is_an_event_of_its_own_and_a_rewritten_one_keeps_the_lines()
    {
        let mut sink = QueueSink::default();
        let mut frame = HttpFrame::Event {
            shell: b"id: 7\r\ndata: \r\n\r\n".to_vec(),
        };
        frame.send_new(b"{}", &mut sink);
        assert_eq!(sink.take_bytes(), b"event: message\ndata: {}\n\n");
        frame.send_rewritten(b"[]", &mut sink);
        assert_eq!(sink.take_bytes(), b"id: 7\r\ndata: []\r\n\r\n");
        let mut line = HttpFrame::Line;
        line.send_new(b"{}", &mut sink);
        assert_eq!(sink.take_bytes(), b"{}\n");
    }
}
