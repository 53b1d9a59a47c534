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
//! When the server's output ends in the middle of a line (it exited: SPEC B5), the
//! line is [cut off](is_cut_off) unless its structure closed: none of it is sent if
//! none was, and one that was passing as it came is ended with its line break, so that
//! the client only ever reads whole lines. [`ServerStream::finish`] says what was cut
//! off and which request it was answering ([`CutOff`]): the owner answers that request
//! with an error saying what happened.
//!
//! ```
//! use backstop_jsonrpc::stream::{MemorySink, ServerStream};
//! use backstop_jsonrpc::Shaper;
//! let now = std::time::Instant::now();
//!
//! let mut shaper = Shaper::default();
//! shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
//! let mut stream = ServerStream::default();
//! let mut out = MemorySink::default();
//! for chunk in [&b"{\"jsonrpc\":\"2.0\",\"meth"[..], b"od\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"to"] {
//!     stream.push(&mut shaper, now, chunk, &mut out);
//! }
//! let cut_off = stream.finish(&mut shaper, now, &mut out).unwrap();
//! assert_eq!(out.sent, b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n", "only whole lines");
//! assert_eq!(cut_off.answering.as_deref(), Some("1"));
//! assert!(shaper.is_pending(b"1"), "its request is still to be answered");
//! ```

use std::time::Instant;

use backstop_core::ProtocolError;
use backstop_core::machine::Disposition;
use backstop_core::protocol::code::INTERNAL_ERROR;

use crate::lenient::TopReader;
use crate::scan::{Scan, Scanned};
use crate::shaper::{Forward, LongDecision, Route, Shaper};

/// Lines up to this long are shaped whole; longer ones are scanned as they come.
///
/// ```
/// assert_eq!(backstop_jsonrpc::stream::WHOLE_LINE_BYTES, 4 << 20);
/// ```
pub const WHOLE_LINE_BYTES: usize = 4 << 20;

/// Past this many bytes, an answer being cut (the result of a pending `tools/call`,
/// over the cap) is no longer held: up to it, it is held as a line read whole would be
/// (in memory), so that one that is not JSON can still be sent as it came (B4); past
/// it, it is cut as it comes, and one that is not JSON is answered with an error.
///
/// ```
/// assert_eq!(backstop_jsonrpc::stream::UNHELD_FROM_BYTES, backstop_jsonrpc::stream::WHOLE_LINE_BYTES as u64);
/// ```
pub const UNHELD_FROM_BYTES: u64 = WHOLE_LINE_BYTES as u64;

/// Line buffers this long or longer are not kept once their line is handled: the
/// buffer is released so that one huge message does not pin its memory for the whole
/// session (SPEC B2).
///
/// ```
/// assert_eq!(backstop_jsonrpc::stream::KEEP_BUFFER_BYTES, 4 * 1024 * 1024);
/// ```
pub const KEEP_BUFFER_BYTES: usize = 4 << 20;

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
    /// Whether some of what is kept could not be (a write of held bytes failed: a
    /// full disk). Then it cannot be sent or read: the message is answered with an
    /// error for its id instead (B5). False for a sink that cannot fail to keep.
    fn held_lost(&mut self) -> bool {
        false
    }
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

/// How messages are framed on the way to the client: what ends one sent as it came,
/// how one the shaper wrote is sent, and where the message is in a framed one. The
/// framing of the stdio proxy is [`LineFrame`]; the HTTP modes have theirs (an HTTP
/// body, an SSE event: the `backstop` crate's `http::shape`).
pub trait Frame {
    /// Send what ends a message sent as it came, if anything (a line's line break).
    fn end_original(&mut self, sink: &mut impl Sink);
    /// Send `message`, which the shaper wrote in place of the one that came.
    fn send_rewritten(&mut self, message: &[u8], sink: &mut impl Sink);
    /// Send `message`, one of the shaper's own (a queued answer it releases).
    fn send_new(&mut self, message: &[u8], sink: &mut impl Sink) {
        self.send_rewritten(message, sink);
    }
    /// The JSON-RPC message carried by `raw`, the whole framed bytes of one.
    fn message<'a>(&self, raw: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        std::borrow::Cow::Borrowed(raw)
    }
    /// The shaper's decision for a message read whole. A transport that can send the
    /// shaper's own requests takes [`Shaper::route_server_message`] (the default);
    /// one that cannot hold a message back takes [`Shaper::server_message`].
    fn route(&self, shaper: &mut Shaper, now: Instant, message: &[u8]) -> Route {
        shaper.route_server_message(now, message)
    }
}

/// Newline-delimited JSON: each message is one line.
///
/// ```
/// use backstop_jsonrpc::stream::{Frame, LineFrame, MemorySink};
/// let mut sink = MemorySink::default();
/// LineFrame.send_rewritten(b"{}", &mut sink);
/// assert_eq!(sink.sent, b"{}\n");
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct LineFrame;

impl Frame for LineFrame {
    fn end_original(&mut self, sink: &mut impl Sink) {
        sink.send(b"\n");
    }
    fn send_rewritten(&mut self, message: &[u8], sink: &mut impl Sink) {
        sink.send(message);
        sink.send(b"\n");
    }
}

/// What the end of the server's output cut off: the last line, which ended before its
/// structure closed ([`is_cut_off`]), and what became of it (SPEC B5).
///
/// ```
/// use backstop_jsonrpc::stream::{CutOff, MemorySink, ServerStream};
/// let now = std::time::Instant::now();
/// let mut shaper = backstop_jsonrpc::Shaper::default();
/// let mut stream = ServerStream::default();
/// let mut sink = MemorySink::default();
/// stream.push(&mut shaper, now, br#"{"jsonrpc":"2.0","method":"notifications/progr"#, &mut sink);
/// let cut_off = stream.finish(&mut shaper, now, &mut sink);
/// assert_eq!(cut_off, Some(CutOff { bytes: 46, sent: false, answering: None }));
/// assert!(sink.sent.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutOff {
    /// How many bytes of it came.
    pub bytes: u64,
    /// Whether a part of it was sent, passing as it came (then its line was ended
    /// after that part); otherwise nothing of it was.
    pub sent: bool,
    /// The raw JSON id of the request it was the answer to, when that request was
    /// waiting for it: its answer will not come, and the owner answers it with an
    /// error that says what happened (the shaper's
    /// [`answer_requests`](Shaper::answer_requests)). A request whose cut-off answer
    /// was sent in part is no longer pending in the shaper; one whose answer was not
    /// sent at all still is.
    pub answering: Option<String>,
}

/// Whether `line`, the last of a server's output, which ended without its line break,
/// was cut off in the middle: an object or array opened in it and did not close, read
/// by its structure alone (strings by their quotes and escapes, their bytes not
/// checked). A line whose structure closed is a line, even if it is not JSON (B4);
/// one with no object or array at all is one too (it answers nothing).
///
/// ```
/// use backstop_jsonrpc::stream::is_cut_off;
/// assert!(is_cut_off(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"te"#));
/// assert!(is_cut_off(br#"{"id":1,"result":"a \"}\" \\"#), "inside a string");
/// assert!(!is_cut_off(br#"{"id":1,"result":"a \"}\" \\"}"#));
/// assert!(!is_cut_off(b"{\"id\":1,\"result\":\"\xff\"}"), "whole, if not JSON");
/// assert!(!is_cut_off(b"hello"));
/// ```
pub fn is_cut_off(line: &[u8]) -> bool {
    let mut outline = Outline::default();
    outline.push(line);
    outline.is_open()
}

/// A message's outline as its bytes come: how many objects and arrays are open, and
/// whether it is inside a string — read by the structure alone, each string skipped
/// to its closing quote 64 bytes at a time (as the scan skims one), so that a long
/// message costs little more than a byte search over it.
#[derive(Debug, Clone, Copy, Default)]
struct Outline {
    depth: usize,
    string: bool,
    /// In a string, after an odd run of backslashes: the next byte is escaped.
    escaped: bool,
}

impl Outline {
    fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.string {
                match crate::scan::closing_quote(bytes, self.escaped) {
                    Ok(quote) => {
                        (self.string, self.escaped) = (false, false);
                        bytes = &bytes[quote + 1..];
                    }
                    Err(escaped) => {
                        self.escaped = escaped;
                        return;
                    }
                }
                continue;
            }
            let Some(at) = bytes
                .iter()
                .position(|byte| matches!(byte, b'"' | b'{' | b'[' | b'}' | b']'))
            else {
                return;
            };
            match bytes[at] {
                b'"' => self.string = true,
                b'{' | b'[' => self.depth += 1,
                _ => self.depth = self.depth.saturating_sub(1),
            }
            bytes = &bytes[at + 1..];
        }
    }

    /// Whether an object or array is still open.
    fn is_open(&self) -> bool {
        self.depth > 0
    }
}

/// One long message as it comes (see the [module docs](self)): scanned, its framed
/// bytes held until the shaper decides, or sent on as they come once it cannot need a
/// change. What it is pushed is two views of the same bytes: the message's own (for
/// the scan) and the framed ones (for the client); in a line they are the same.
#[derive(Debug)]
pub struct LongMessage {
    state: LongState,
    /// The raw top-level `id` of a response, once known.
    answers: Option<Vec<u8>>,
    /// The message's bytes so far.
    bytes: u64,
    /// Its top level read leniently: a message that is not JSON still answers the
    /// request it names (B4), the same one whichever path reads it.
    top: TopReader,
    /// Past this many bytes, an answer being cut is no longer held
    /// ([`UNHELD_FROM_BYTES`] unless set otherwise).
    unheld_from: u64,
    /// Its outline, for a stream whose end may cut it off ([`ServerStream`]); not
    /// read where the transport says whether a message ended.
    outline: Option<Outline>,
    /// Whether the request it answers was pending when it began to pass (known only
    /// then: passing ended it).
    awaited: bool,
}

#[derive(Debug)]
enum LongState {
    /// Sending the rest as it comes (the lenient reader says at its end which
    /// request it answers, if that was not known when it began to pass).
    Passing,
    /// Scanning, the framed bytes held.
    Scanning {
        scan: Box<Scan>,
        /// What was known when the shaper was last asked whether it may pass.
        asked: Known,
    },
    /// What was held could not be kept (B5) and the message cannot pass: read on only
    /// for its `id` (if it is still to come), nothing sent.
    Lost(Box<Scan>),
    /// An answer cut without being held (B3, B4: `Disposition::CutUnheld`): scanned,
    /// nothing held, the cut made at its end from what the scan kept.
    Cutting(Box<Scan>),
}

/// What the scan of a long message knows of its top level: whether its `id` and
/// `method` were read whole, whether its `result` or `error` member began, and whether
/// holding it on would pass the stream's bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Known {
    id: bool,
    method: bool,
    result: bool,
    error: bool,
    past_hold: bool,
}

impl Known {
    fn of(scan: &Scan, past_hold: bool) -> Self {
        Self {
            id: scan.top_id().is_some(),
            method: scan.top_method().is_some(),
            result: scan.top_result(),
            error: scan.top_error(),
            past_hold,
        }
    }
}

impl LongMessage {
    /// A long message for `shaper`'s cap.
    ///
    /// ```
    /// use backstop_jsonrpc::{Shaper, stream::{LineFrame, LongMessage, MemorySink}};
    /// let now = std::time::Instant::now();
    /// let mut shaper = Shaper::default();
    /// let mut sink = MemorySink::default();
    /// let mut long = LongMessage::new(&shaper);
    /// long.push(&mut shaper, br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#, b"raw", &mut sink);
    /// assert_eq!(sink.sent, b"raw", "a notification passes as it comes");
    /// long.end(&mut shaper, now, &mut LineFrame, &mut sink);
    /// assert_eq!(sink.sent, b"raw\n");
    /// ```
    pub fn new(shaper: &Shaper) -> Self {
        Self {
            state: LongState::Scanning {
                // The tool is not known before the id: hold what any policy keeps.
                scan: Box::new(Scan::holding(shaper.limit().held_ends(None))),
                asked: Known::default(),
            },
            answers: None,
            bytes: 0,
            top: TopReader::default(),
            unheld_from: UNHELD_FROM_BYTES,
            outline: None,
            awaited: false,
        }
    }

    /// This long message, an answer being cut no longer held once it is over
    /// `bytes` long (and over the cap). Below [`UNHELD_FROM_BYTES`], an answer that
    /// turns out not to be JSON is answered with an error (B4's exception) where it
    /// could have been sent as it came: for tests of the unheld path on short messages.
    ///
    /// ```
    /// use backstop_core::Limit;
    /// use backstop_jsonrpc::{Shaper, stream::{LineFrame, LongMessage, MemorySink}};
    /// let now = std::time::Instant::now();
    /// let mut shaper = Shaper::new(Limit::new(1_000).unwrap());
    /// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logs"}}"#);
    /// let mut sink = MemorySink::default();
    /// let mut long = LongMessage::new(&shaper).unheld_from(0);
    /// let start = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#;
    /// long.push(&mut shaper, start, start, &mut sink);
    /// let text = "x".repeat(2 << 20);
    /// long.push(&mut shaper, text.as_bytes(), text.as_bytes(), &mut sink);
    /// assert!(sink.held.is_empty(), "nothing held");
    /// long.push(&mut shaper, b"\x01\"}]}}", b"\x01\"}]}}", &mut sink);
    /// assert_eq!(long.end(&mut shaper, now, &mut LineFrame, &mut sink), ["1"]);
    /// let sent = String::from_utf8(sink.sent).unwrap();
    /// let at = start.len() + text.len();
    /// assert!(sent.contains(&format!("stopped being JSON at byte {at}: a control character inside a string")), "{sent}");
    /// ```
    pub fn unheld_from(mut self, bytes: u64) -> Self {
        self.unheld_from = bytes;
        self
    }

    /// The next bytes: `message` of the message itself, `framed` for the client.
    pub fn push(
        &mut self,
        shaper: &mut Shaper,
        message: &[u8],
        framed: &[u8],
        sink: &mut impl Sink,
    ) {
        self.bytes += message.len() as u64;
        let cutting = matches!(self.state, LongState::Cutting(_));
        if let Some(outline) = &mut self.outline
            && !cutting
        {
            // An answer being cut is read whole by its scan, which says at its end
            // whether it was cut off: it is spared this second read.
            outline.push(message);
        }
        if !cutting {
            // An answer cut unheld is answered by the strict scan's id.
            self.top.push(message);
        }
        let (scan, asked) = match &mut self.state {
            LongState::Passing => {
                sink.send(framed);
                return;
            }
            LongState::Lost(scan) => {
                if scan.top_id().is_none() {
                    scan.push(message);
                }
                return;
            }
            LongState::Cutting(scan) => {
                scan.push(message);
                return;
            }
            LongState::Scanning { scan, asked } => (scan, asked),
        };
        scan.push(message);
        let min = self.unheld_from.max(shaper.limit().max_bytes() as u64);
        // Holding it on would pass the bound: asked once, with its id known.
        let past_hold_at = scan
            .unheld_from(min)
            .filter(|&at| at < self.bytes && scan.top_id().is_some());
        let known = Known::of(scan, past_hold_at.is_some());
        // Not JSON: it passes at once; the lenient reader says at its end which request
        // it answers, as on the whole-line path.
        let invalid = scan.is_invalid();
        if !invalid && known == *asked {
            sink.hold(framed);
            return;
        }
        let newly_identified = known.id && !asked.id;
        *asked = known;
        let awaited = scan.top_id().is_some_and(|id| shaper.is_pending(id));
        // Not JSON, it passes at once — unless its id and length say it is an answer
        // being cut, whatever the chunking (B4's exception: answered with an error).
        let disposition = match (invalid, past_hold_at) {
            (true, None) => Disposition::Pass,
            _ => shaper.server_head(scan, past_hold_at),
        };
        match disposition {
            Disposition::CutUnheld(ends) => {
                // An answer being cut: what was held goes, nothing more is (B3,
                // B4); the scan holds what its tool's policy keeps.
                scan.hold_ends(ends);
                sink.discard();
                if let LongState::Scanning { scan, .. } =
                    std::mem::replace(&mut self.state, LongState::Passing)
                {
                    self.state = LongState::Cutting(scan);
                }
                return;
            }
            // Backstop answered its request itself: dropped at its end, once read — one
            // that turns out not to be JSON passes as it came, as on the whole-line
            // path (B4, B5).
            Disposition::Drop => {
                sink.hold(framed);
                return;
            }
            Disposition::Read(ends) if !invalid => {
                sink.hold(framed);
                if newly_identified {
                    // The id says which call this answers: hold what its tool's
                    // policy keeps.
                    scan.hold_ends(ends);
                }
                return;
            }
            Disposition::Read(_) | Disposition::Pass => {}
        }
        sink.hold(framed);
        if sink.held_lost() {
            // It would pass from here, but its start is not held: it cannot (B5).
            sink.discard();
            if let LongState::Scanning { mut scan, .. } =
                std::mem::replace(&mut self.state, LongState::Passing)
            {
                scan.skim();
                self.state = LongState::Lost(scan);
            }
            return;
        }
        // An answer passing (`server_head` ended its request); otherwise, its request
        // is known only at its end (B4: read leniently).
        if !invalid && !known.method {
            self.answers = scan.top_id().map(<[u8]>::to_vec);
            self.awaited = awaited;
        }
        sink.release();
        self.state = LongState::Passing;
    }

    /// The end of the message: sent, or decided and sent. The raw JSON ids of the
    /// responses it was (one, or a batch's read whole).
    pub fn end(
        self,
        shaper: &mut Shaper,
        now: Instant,
        frame: &mut impl Frame,
        sink: &mut impl Sink,
    ) -> Vec<String> {
        let mut answers: Vec<String> = self
            .answers
            .iter()
            .filter_map(|id| String::from_utf8(id.clone()).ok())
            .collect();
        match self.state {
            LongState::Passing => {
                frame.end_original(sink);
                if self.answers.is_none() {
                    // Its id, or whether it is an answer, not known when it began to pass.
                    answers.extend(answered_leniently(&self.top, shaper));
                }
            }
            LongState::Lost(scan) => {
                answers.extend(answer_lost(&scan.finish(), self.bytes, shaper, frame, sink));
            }
            LongState::Cutting(scan) => {
                let scanned = scan.finish();
                answers.extend(scanned.id.clone().and_then(|id| String::from_utf8(id).ok()));
                let route = shaper.cut_unheld(now, &scanned, self.bytes);
                emit(route, OriginalAt::InSink, frame, sink);
            }
            LongState::Scanning { scan, .. } => {
                let scanned = scan.finish();
                let decision = shaper.long_server_message(now, &scanned);
                // Sent as it came (not JSON, or needing no change): the lenient reader
                // says which request it answers, by the rule every path keeps (B4, A0).
                let as_it_came = matches!(&decision,
                    LongDecision::Route(route) if route.forward == Some(Forward::Unchanged));
                match as_it_came {
                    true => answers.extend(
                        answered_leniently(&self.top, shaper)
                            .or_else(|| answered_strictly(&scanned)),
                    ),
                    false if scanned.method.is_none() => {
                        answers.extend(scanned.id.clone().and_then(|id| String::from_utf8(id).ok()))
                    }
                    false => {}
                }
                let lost = sink.held_lost();
                match decision {
                    // The rewritten message needs nothing held.
                    LongDecision::Route(route)
                        if !lost || route.forward != Some(Forward::Unchanged) =>
                    {
                        emit(route, OriginalAt::InSink, frame, sink);
                    }
                    LongDecision::Route(mut route) => {
                        route.forward = None;
                        emit(route, OriginalAt::InSink, frame, sink);
                        answer_lost(&scanned, self.bytes, shaper, frame, sink);
                    }
                    LongDecision::NeedsWhole if lost => {
                        sink.discard();
                        answer_lost(&scanned, self.bytes, shaper, frame, sink);
                    }
                    LongDecision::NeedsWhole => {
                        let whole = sink.take_held();
                        let message = frame.message(&whole);
                        let mut route = frame.route(shaper, now, &message);
                        answers = route
                            .answered
                            .take()
                            .unwrap_or_else(|| crate::message::response_ids(&message));
                        emit(route, OriginalAt::Here(&whole), frame, sink);
                    }
                }
            }
        }
        answers
    }
}

impl LongMessage {
    /// The end of the server's output in this message, before its line break came:
    /// one whose structure closed is ended as [`end`](Self::end) ends it; one cut off
    /// is not sent if none of it was, and ended after what was sent if it was passing
    /// (B5). What was cut off, if it was.
    fn end_of_output(
        self,
        shaper: &mut Shaper,
        now: Instant,
        frame: &mut impl Frame,
        sink: &mut impl Sink,
    ) -> Option<CutOff> {
        let open = self.outline.is_some_and(|outline| outline.is_open());
        if !open && !matches!(self.state, LongState::Cutting(_)) {
            self.end(shaper, now, frame, sink);
            return None;
        }
        let waited_for =
            |id: Option<String>, shaper: &Shaper| id.filter(|id| shaper.is_pending(id.as_bytes()));
        let raw = |id: Option<Vec<u8>>| id.and_then(|id| String::from_utf8(id).ok());
        let (sent, answering) = match self.state {
            LongState::Passing => {
                frame.end_original(sink);
                // An answer that began to pass ended its request's pending entry: it
                // was waiting if it was pending then.
                let answering = match self.answers {
                    Some(id) => raw(Some(id)).filter(|_| self.awaited),
                    None => waited_for(self.top.response_id(), shaper),
                };
                (true, answering)
            }
            LongState::Lost(scan) => {
                // Nothing of it could be sent: answered as at its end (B5).
                answer_lost(&scan.finish(), self.bytes, shaper, frame, sink);
                (false, None)
            }
            LongState::Cutting(scan) => {
                let scanned = scan.finish();
                // Its scan read it all: it is cut off when it broke at its very end
                // (it ended before its structure closed, as its outline would say).
                if scanned.broken.is_none_or(|broken| broken.at != self.bytes) {
                    let route = shaper.cut_unheld(now, &scanned, self.bytes);
                    emit(route, OriginalAt::InSink, frame, sink);
                    return None;
                }
                (false, waited_for(raw(scanned.id), shaper))
            }
            LongState::Scanning { .. } => {
                // What it answers, by the rule the whole line's cut-off keeps (B4).
                sink.discard();
                (false, waited_for(self.top.response_id(), shaper))
            }
        };
        Some(CutOff {
            bytes: self.bytes,
            sent,
            answering,
        })
    }
}

/// The id of the request a message sent as it came answers, read leniently (`top`),
/// if it is a response: its request is answered by it (B4).
fn answered_leniently(top: &TopReader, shaper: &mut Shaper) -> Option<String> {
    let id = top.response_id()?;
    shaper.answered_unread(id.as_bytes());
    Some(id)
}

/// The id of a response only serde_json reads as one (a key written with escapes, an
/// id longer than the lenient reader reads): the shaper ended its request as it read
/// the skeleton, so it is answered too.
fn answered_strictly(scanned: &Scanned) -> Option<String> {
    if scanned.invalid || scanned.overflowed {
        return None;
    }
    crate::message::strict_response_id(&scanned.skeleton)
}

/// The error a response is answered with when what was held of it could not be kept
/// (B5: a failed write of held bytes, a full disk), `bytes` long.
///
/// ```
/// let error = backstop_jsonrpc::stream::held_lost_error(123_456_789);
/// assert_eq!(error.code, -32603);
/// assert_eq!(error.message, "backstop could not pass on the server's answer (123456789 bytes): writing the bytes it held failed (is the disk full?)");
/// ```
pub fn held_lost_error(bytes: u64) -> ProtocolError {
    ProtocolError::new(
        INTERNAL_ERROR,
        format!(
            "backstop could not pass on the server's answer ({bytes} bytes): writing the bytes \
             it held failed (is the disk full?)"
        ),
    )
}

/// A message whose held bytes were lost (B5): a response is answered with
/// [`held_lost_error`] for its id — once, in its place — and anything else, which
/// nobody waits for, is dropped. The raw id answered, if any.
fn answer_lost(
    scanned: &Scanned,
    bytes: u64,
    shaper: &mut Shaper,
    frame: &mut impl Frame,
    sink: &mut impl Sink,
) -> Option<String> {
    let id = scanned.id.as_ref().filter(|_| scanned.method.is_none());
    let id = id.and_then(|id| String::from_utf8(id.clone()).ok())?;
    let lines = shaper.answer_requests(std::slice::from_ref(&id), &held_lost_error(bytes));
    for line in lines {
        frame.send_new(&line, sink);
    }
    Some(id)
}

/// One message of any length as it comes, in a [`Frame`]: collected and shaped whole
/// up to a length, a [`LongMessage`] past it. For a transport whose messages are
/// framed one by one (an HTTP body, an SSE event).
///
/// ```
/// use backstop_jsonrpc::{Shaper, stream::{LineFrame, MemorySink, Message}};
/// let now = std::time::Instant::now();
/// let mut shaper = Shaper::default();
/// shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#);
/// let mut sink = MemorySink::default();
/// let mut message = Message::new(LineFrame, 1 << 20);
/// message.push(&mut shaper, br#"{"jsonrpc":"2.0","id":1,"#, b"raw1 ", &mut sink);
/// message.push(&mut shaper, br#""error":{"code":-32603,"message":"boom"}}"#, b"raw2", &mut sink);
/// assert!(sink.sent.is_empty(), "a short message is shaped whole, at its end");
/// let ended = message.end(&mut shaper, now, &mut sink);
/// assert_eq!(ended.answered, ["1"]);
/// assert!(String::from_utf8(sink.sent).unwrap().contains(r#""isError":true"#));
/// ```
#[derive(Debug)]
pub struct Message<F> {
    frame: F,
    whole_bytes: usize,
    state: MessageState,
}

#[derive(Debug)]
enum MessageState {
    Collecting { message: Vec<u8>, framed: Vec<u8> },
    Long(LongMessage),
}

/// What a [`Message`] was, once it ended.
#[derive(Debug, Default)]
pub struct Ended {
    /// The raw JSON ids of the responses it carried.
    pub answered: Vec<String>,
    /// The message, when it was read whole (a short one).
    pub whole: Option<Vec<u8>>,
}

impl<F: Frame> Message<F> {
    /// A message in `frame`, shaped whole up to `whole_bytes` of framed bytes.
    pub fn new(frame: F, whole_bytes: usize) -> Self {
        Self {
            frame,
            whole_bytes,
            state: MessageState::Collecting {
                message: Vec::new(),
                framed: Vec::new(),
            },
        }
    }

    /// The message so far while it is short enough to be read whole; `None` once it
    /// is not.
    pub fn whole(&self) -> Option<&[u8]> {
        match &self.state {
            MessageState::Collecting { message, .. } => Some(message),
            MessageState::Long(_) => None,
        }
    }

    /// The frame, to be told more of the message's framing as it comes.
    pub fn frame_mut(&mut self) -> &mut F {
        &mut self.frame
    }

    /// The next bytes: `message` of the message itself, `framed` for the client.
    pub fn push(
        &mut self,
        shaper: &mut Shaper,
        message: &[u8],
        framed: &[u8],
        sink: &mut impl Sink,
    ) {
        match &mut self.state {
            MessageState::Collecting {
                message: kept,
                framed: kept_framed,
            } if kept_framed.len() + framed.len() <= self.whole_bytes => {
                kept.extend_from_slice(message);
                kept_framed.extend_from_slice(framed);
            }
            MessageState::Collecting {
                message: kept,
                framed: kept_framed,
            } => {
                let (kept, kept_framed) = (std::mem::take(kept), std::mem::take(kept_framed));
                let mut long = LongMessage::new(shaper);
                long.push(shaper, &kept, &kept_framed, sink);
                long.push(shaper, message, framed, sink);
                self.state = MessageState::Long(long);
            }
            MessageState::Long(long) => long.push(shaper, message, framed, sink),
        }
    }

    /// The end of the message: it is sent, as it came or as the shaper rewrote it.
    pub fn end(mut self, shaper: &mut Shaper, now: Instant, sink: &mut impl Sink) -> Ended {
        match self.state {
            MessageState::Long(long) => Ended {
                answered: long.end(shaper, now, &mut self.frame, sink),
                whole: None,
            },
            MessageState::Collecting { message, framed } => {
                let mut route = self.frame.route(shaper, now, &message);
                let answered = route
                    .answered
                    .take()
                    .unwrap_or_else(|| crate::message::response_ids(&message));
                emit(route, OriginalAt::Here(&framed), &mut self.frame, sink);
                Ended {
                    answered,
                    whole: Some(message),
                }
            }
        }
    }

    /// The end of a message that carried nothing to shape (an SSE event without
    /// data): its framed bytes are sent as they came.
    pub fn pass(self, sink: &mut impl Sink) {
        match self.state {
            MessageState::Collecting { framed, .. } => sink.send(&framed),
            MessageState::Long(LongMessage {
                state: LongState::Scanning { .. },
                ..
            }) => sink.release(),
            MessageState::Long(_) => {}
        }
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
    unheld_from: u64,
    line: Vec<u8>,
    long: Option<LongMessage>,
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
            unheld_from: UNHELD_FROM_BYTES,
            line: Vec::new(),
            long: None,
        }
    }

    /// This stream, its long lines being cut no longer held past `bytes`
    /// ([`LongMessage::unheld_from`]): for tests of that path on short lines.
    ///
    /// ```
    /// let stream = backstop_jsonrpc::stream::ServerStream::new(16).unheld_from(0);
    /// assert_eq!(stream.whole_line_bytes(), 16);
    /// ```
    pub fn unheld_from(mut self, bytes: u64) -> Self {
        self.unheld_from = bytes;
        self
    }

    /// The longest line shaped whole.
    pub fn whole_line_bytes(&self) -> usize {
        self.whole_line_bytes
    }

    /// The next bytes the server wrote.
    pub fn push(
        &mut self,
        shaper: &mut Shaper,
        now: Instant,
        mut chunk: &[u8],
        sink: &mut impl Sink,
    ) {
        while !chunk.is_empty() {
            let (part, rest, ends) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            chunk = rest;
            match &mut self.long {
                None if self.line.len() + part.len() <= self.whole_line_bytes => {
                    self.line.extend_from_slice(part);
                    if ends {
                        self.whole_line(shaper, now, sink);
                    }
                }
                None => {
                    let mut long = LongMessage::new(shaper).unheld_from(self.unheld_from);
                    long.outline = Some(Outline::default());
                    long.push(shaper, &self.line, &self.line, sink);
                    long.push(shaper, part, part, sink);
                    self.long = Some(long);
                    self.reuse_line();
                }
                Some(long) => long.push(shaper, part, part, sink),
            }
            if ends && let Some(long) = self.long.take() {
                long.end(shaper, now, &mut LineFrame, sink);
            }
        }
    }

    /// The end of the server's output. A last line without its line break is still a
    /// line (and gets one) when its structure closed; one [cut off](is_cut_off) in the
    /// middle is not sent — or, when a part of it was sent as it came, is ended there
    /// — and is what this returns (SPEC B5): its request, if one waited for it, is the
    /// owner's to answer with an error saying the server stopped in its answer.
    pub fn finish(
        &mut self,
        shaper: &mut Shaper,
        now: Instant,
        sink: &mut impl Sink,
    ) -> Option<CutOff> {
        match self.long.take() {
            Some(long) => long.end_of_output(shaper, now, &mut LineFrame, sink),
            None if self.line.is_empty() => None,
            None if is_cut_off(&self.line) => {
                let answering = crate::lenient::response_id(&self.line)
                    .filter(|id| shaper.is_pending(id.as_bytes()));
                let cut_off = CutOff {
                    bytes: self.line.len() as u64,
                    sent: false,
                    answering,
                };
                self.reuse_line();
                Some(cut_off)
            }
            None => {
                self.whole_line(shaper, now, sink);
                None
            }
        }
    }

    fn whole_line(&mut self, shaper: &mut Shaper, now: Instant, sink: &mut impl Sink) {
        let route = shaper.route_server_message(now, &self.line);
        emit(route, OriginalAt::Here(&self.line), &mut LineFrame, sink);
        self.reuse_line();
    }

    /// Empty the line buffer for the next line, keeping its memory up to
    /// [`KEEP_BUFFER_BYTES`]: the next long line then costs no fresh pages.
    fn reuse_line(&mut self) {
        if self.line.capacity() > KEEP_BUFFER_BYTES {
            self.line = Vec::new();
        }
        self.line.clear();
    }
}

/// Where the framed bytes of the message a route is about are.
enum OriginalAt<'a> {
    /// Here: the message was read whole.
    Here(&'a [u8]),
    /// Held in the sink ([`Sink::hold`]), to be released or discarded.
    InSink,
}

/// Send what `route` says in `frame`, the message itself from `original`.
fn emit(route: Route, original: OriginalAt<'_>, frame: &mut impl Frame, sink: &mut impl Sink) {
    for request in route.to_server {
        sink.to_server(request);
    }
    for message in &route.to_client {
        frame.send_new(message, sink);
    }
    match (route.forward, original) {
        (None, OriginalAt::InSink) => sink.discard(),
        (None, OriginalAt::Here(_)) => {}
        (Some(Forward::Unchanged), OriginalAt::Here(framed)) => {
            sink.send(framed);
            frame.end_original(sink);
        }
        (Some(Forward::Unchanged), OriginalAt::InSink) => {
            sink.release();
            frame.end_original(sink);
        }
        (Some(Forward::Rewritten(bytes)), original) => {
            if matches!(original, OriginalAt::InSink) {
                sink.discard();
            }
            frame.send_rewritten(&bytes, sink);
        }
    }
}
