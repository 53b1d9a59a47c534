//! Server-Sent Events, read and rewritten byte-exactly (SPEC A5).
//!
//! [`SseParser`] cuts a stream into whole events (each ending at its blank line,
//! whichever of CRLF, LF or CR ends its lines) and keeps each event's bytes as they
//! came: `id:`, `event:`, `retry:`, comments and unknown fields included. An event
//! whose data the shaper leaves alone is sent on as those bytes; one whose data it
//! rewrites changes only its `data:` lines ([`Event::with_data`]).

/// One event of a stream, as the bytes that came (its blank line included).
///
/// ```
/// use backstop::http::sse::SseParser;
/// let mut parser = SseParser::default();
/// let events = parser.feed(b"id: 7\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n");
/// assert_eq!(events[0].id(), Some(&b"7"[..]));
/// assert_eq!(events[0].data().unwrap(), br#"{"a":1}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    raw: Vec<u8>,
}

/// The field of one line (without its ending): its name and its value (one leading
/// space removed).
pub(crate) fn field(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
}

/// `line` without its ending (CRLF, LF or CR).
pub(crate) fn without_ending(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The lines of `bytes`, each with and without its ending (CRLF, LF or CR).
fn lines(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
        let (content, ending) = match end {
            None => (rest.len(), 0),
            Some(at) if rest[at] == b'\r' && rest.get(at + 1) == Some(&b'\n') => (at, 2),
            Some(at) => (at, 1),
        };
        let (whole, tail) = rest.split_at(content + ending);
        rest = tail;
        Some((whole, &whole[..content]))
    })
}

impl Event {
    /// The event whose bytes are `raw`, as they came (its blank line included).
    ///
    /// ```
    /// let event = backstop::http::sse::Event::new(b"data: 1\n\n".to_vec());
    /// assert_eq!(event.data().unwrap(), b"1");
    /// ```
    pub fn new(raw: Vec<u8>) -> Self {
        Self { raw }
    }

    /// The event's bytes, as they came.
    ///
    /// ```
    /// let mut parser = backstop::http::sse::SseParser::default();
    /// let events = parser.feed(b": keep-alive\n\n");
    /// assert_eq!(events[0].raw(), b": keep-alive\n\n");
    /// ```
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The event's data: its `data:` values joined by `\n`; `None` when it has no
    /// `data:` line (a comment, a `retry:`, an id alone).
    ///
    /// ```
    /// let mut parser = backstop::http::sse::SseParser::default();
    /// let events = parser.feed(b"data: a\ndata:b\n\n: c\n\n");
    /// assert_eq!(events[0].data().unwrap(), b"a\nb");
    /// assert_eq!(events[1].data(), None);
    /// ```
    pub fn data(&self) -> Option<Vec<u8>> {
        let mut data: Option<Vec<u8>> = None;
        for (_, line) in lines(&self.raw) {
            if let (b"data", value) = field(line) {
                match data.as_mut() {
                    Some(data) => {
                        data.push(b'\n');
                        data.extend_from_slice(value);
                    }
                    None => data = Some(value.to_vec()),
                }
            }
        }
        data
    }

    /// The value of the event's last `id:` line, if it has one.
    ///
    /// ```
    /// let mut parser = backstop::http::sse::SseParser::default();
    /// assert_eq!(parser.feed(b"data: x\n\n")[0].id(), None);
    /// ```
    pub fn id(&self) -> Option<&[u8]> {
        lines(&self.raw)
            .filter_map(|(_, line)| match field(line) {
                (b"id", value) => Some(value),
                _ => None,
            })
            .last()
    }

    /// The event with `data` in place of its data, every other line as it came: the
    /// first `data:` line carries the new data (one `data:` line per line of it),
    /// the other `data:` lines go.
    ///
    /// ```
    /// let mut parser = backstop::http::sse::SseParser::default();
    /// let event = &parser.feed(b"event: message\r\nid: 3\r\ndata: old\r\nretry: 10\r\n\r\n")[0];
    /// assert_eq!(event.with_data(b"new"), b"event: message\r\nid: 3\r\ndata: new\r\nretry: 10\r\n\r\n");
    /// ```
    pub fn with_data(&self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + data.len());
        let mut written = false;
        for (whole, line) in lines(&self.raw) {
            let ending = &whole[line.len()..];
            match field(line) {
                (b"data", _) if !line.is_empty() => {
                    if written {
                        continue;
                    }
                    written = true;
                    // A line ending that came is reused; an event cut off by the end of
                    // its stream has none, and gets LF.
                    let ending: &[u8] = if ending.is_empty() { b"\n" } else { ending };
                    for part in data.split(|&b| b == b'\n') {
                        out.extend_from_slice(b"data: ");
                        out.extend_from_slice(part.strip_suffix(b"\r").unwrap_or(part));
                        out.extend_from_slice(ending);
                    }
                }
                _ => out.extend_from_slice(whole),
            }
        }
        out
    }
}

/// A stream of SSE bytes cut into whole [`Event`]s.
///
/// ```
/// use backstop::http::sse::SseParser;
/// let mut parser = SseParser::default();
/// assert!(parser.feed(b"data: {\"jsonrpc\"").is_empty());
/// let events = parser.feed(b":\"2.0\"}\n\nid: 1\n");
/// assert_eq!(events[0].data().unwrap(), br#"{"jsonrpc":"2.0"}"#);
/// assert_eq!(parser.finish().unwrap().raw(), b"id: 1\n");
/// ```
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// Where scanning for the next line ending resumes.
    scanned: usize,
    /// Where the line being scanned starts.
    line_start: usize,
}

impl SseParser {
    /// Feed bytes as they came; the events they complete, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut event_start = 0;
        let mut at = self.scanned;
        while at < self.buffer.len() {
            let byte = self.buffer[at];
            if byte != b'\n' && byte != b'\r' {
                at += 1;
                continue;
            }
            let line_end = at;
            let next = if byte == b'\r' {
                match self.buffer.get(at + 1) {
                    Some(b'\n') => at + 2,
                    Some(_) => at + 1,
                    // A CR last in the buffer: its LF may come with the next bytes.
                    None => break,
                }
            } else {
                at + 1
            };
            if line_end == self.line_start {
                // A blank line ends the event.
                events.push(Event {
                    raw: self.buffer[event_start..next].to_vec(),
                });
                event_start = next;
            }
            self.line_start = next;
            at = next;
        }
        self.buffer.drain(..event_start);
        self.scanned = at - event_start;
        self.line_start -= event_start;
        events
    }

    /// The end of the stream: what came after the last whole event, if anything (an
    /// event cut off; sent on as it came).
    pub fn finish(&mut self) -> Option<Event> {
        self.scanned = 0;
        self.line_start = 0;
        let raw = std::mem::take(&mut self.buffer);
        (!raw.is_empty()).then_some(Event { raw })
    }

    /// Bytes held for the event not yet complete.
    ///
    /// ```
    /// let mut parser = backstop::http::sse::SseParser::default();
    /// parser.feed(b"data: 12");
    /// assert_eq!(parser.buffered(), 8);
    /// ```
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
}

/// One piece of an SSE stream, as [`EventReader`] cuts it; the pieces of a stream,
/// joined, are the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A whole line that is not a `data:` line (a comment, `id:`, `event:`,
    /// `retry:`, an unknown field), its ending included.
    Field(&'a [u8]),
    /// The start of a `data` line: `data`, `data:` or `data: ` as it came.
    DataStart(&'a [u8]),
    /// Bytes of the current `data` line's value.
    Value(&'a [u8]),
    /// The current `data` line's ending (CRLF, LF or CR).
    DataEnd(&'a [u8]),
    /// The blank line that ends an event.
    EventEnd(&'a [u8]),
}

/// What [`EventReader`] is in the middle of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Reading {
    /// The start of a line.
    #[default]
    LineStart,
    /// The first bytes of a line, not yet known to be `data` or not (in `line`).
    Name,
    /// A line that is not `data`, collected whole in `line`.
    Field,
    /// A `data` line's value.
    Value,
    /// A CR was the last byte seen; an LF next belongs to the same ending. What the
    /// CR ended: a blank line, a field (in `line`), or a `data` line.
    Cr(LineKind),
}

/// What kind of line a line ending ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Blank,
    Field,
    Data,
}

/// The longest line that is not `data` passed on (a comment, `id:`, `event:`,
/// `retry:`, an unknown field). SSE gives none of them a use for more; a longer one is
/// dropped as it comes, never held (B2: a 1 GB comment line would otherwise be held
/// whole, twice).
pub const MAX_FIELD_LINE_BYTES: usize = 64 << 10;

/// An SSE stream cut into [`Piece`]s as it comes, in memory bounded by
/// [`MAX_FIELD_LINE_BYTES`] (a `data` value streams through in pieces of any length:
/// SPEC B3; a longer line that is not `data` is dropped).
///
/// ```
/// use backstop::http::sse::{EventReader, Piece};
/// let mut reader = EventReader::default();
/// let mut pieces = Vec::new();
/// for chunk in [&b"id: 1\r\ndata: {\"a\""[..], b":1}\r\n\r\n"] {
///     reader.feed(chunk, |piece| pieces.push(format!("{piece:?}")));
/// }
/// assert_eq!(pieces.len(), 6, "{pieces:?}");
/// assert!(pieces[0].starts_with("Field") && pieces[5].starts_with("EventEnd"));
/// ```
#[derive(Debug, Default)]
pub struct EventReader {
    line: Vec<u8>,
    reading: Reading,
    /// The current field line is past [`MAX_FIELD_LINE_BYTES`]: dropped.
    dropping: bool,
}

impl EventReader {
    /// Feed bytes as they came; `piece` is called with each piece they complete or
    /// carry, in order.
    pub fn feed(&mut self, mut bytes: &[u8], mut piece: impl FnMut(Piece<'_>)) {
        while let Some((&byte, rest)) = bytes.split_first() {
            match self.reading {
                Reading::Cr(ended) => {
                    let crlf = byte == b'\n';
                    let ending: &[u8] = if crlf { b"\r\n" } else { b"\r" };
                    self.end_line(ended, ending, &mut piece);
                    if crlf {
                        bytes = rest;
                    }
                }
                Reading::LineStart => match byte {
                    b'\n' => {
                        piece(Piece::EventEnd(b"\n"));
                        bytes = rest;
                    }
                    b'\r' => {
                        self.reading = Reading::Cr(LineKind::Blank);
                        bytes = rest;
                    }
                    _ => self.reading = Reading::Name,
                },
                Reading::Name => {
                    if byte == b'\n' || byte == b'\r' {
                        if self.line == b"data" || self.line == b"data:" {
                            piece(Piece::DataStart(&self.line));
                            self.line.clear();
                            self.reading = Reading::Value;
                        } else {
                            self.reading = Reading::Field;
                        }
                        continue;
                    }
                    if self.line == b"data:" {
                        if byte == b' ' {
                            piece(Piece::DataStart(b"data: "));
                            bytes = rest;
                        } else {
                            piece(Piece::DataStart(b"data:"));
                        }
                        self.line.clear();
                        self.reading = Reading::Value;
                        continue;
                    }
                    self.line.push(byte);
                    bytes = rest;
                    if !b"data:".starts_with(&self.line) {
                        self.reading = Reading::Field;
                    }
                }
                Reading::Field => match memchr::memchr2(b'\n', b'\r', bytes) {
                    None => {
                        self.keep_field(bytes);
                        bytes = &[];
                    }
                    Some(at) => {
                        self.keep_field(&bytes[..at]);
                        if bytes[at] == b'\n' {
                            self.end_line(LineKind::Field, b"\n", &mut piece);
                        } else {
                            self.reading = Reading::Cr(LineKind::Field);
                        }
                        bytes = &bytes[at + 1..];
                    }
                },
                Reading::Value => match memchr::memchr2(b'\n', b'\r', bytes) {
                    None => {
                        piece(Piece::Value(bytes));
                        bytes = &[];
                    }
                    Some(at) => {
                        if at > 0 {
                            piece(Piece::Value(&bytes[..at]));
                        }
                        if bytes[at] == b'\n' {
                            self.end_line(LineKind::Data, b"\n", &mut piece);
                        } else {
                            self.reading = Reading::Cr(LineKind::Data);
                        }
                        bytes = &bytes[at + 1..];
                    }
                },
            }
        }
    }

    /// The end of the stream: the rest of a line cut off, if any. Whether an event was
    /// cut off (pieces of it came, but not its blank line) is for the caller to know.
    pub fn finish(&mut self, mut piece: impl FnMut(Piece<'_>)) {
        match std::mem::take(&mut self.reading) {
            Reading::Cr(ended) => self.end_line(ended, b"\r", &mut piece),
            Reading::Name | Reading::Field if !self.line.is_empty() && !self.dropping => {
                piece(Piece::Field(&self.line));
            }
            _ => {}
        }
        self.dropping = false;
        self.line.clear();
        self.reading = Reading::LineStart;
    }

    /// More of the field line being read, unless it is too long to pass.
    fn keep_field(&mut self, bytes: &[u8]) {
        if self.dropping {
            return;
        }
        if self.line.len() + bytes.len() > MAX_FIELD_LINE_BYTES {
            self.dropping = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, ended: LineKind, ending: &[u8], piece: &mut impl FnMut(Piece<'_>)) {
        match ended {
            LineKind::Blank => piece(Piece::EventEnd(ending)),
            LineKind::Data => piece(Piece::DataEnd(ending)),
            LineKind::Field if std::mem::take(&mut self.dropping) => self.line.clear(),
            LineKind::Field => {
                self.line.extend_from_slice(ending);
                piece(Piece::Field(&self.line));
                if self.line.capacity() > crate::framing::KEEP_BUFFER_BYTES {
                    self.line = Vec::new();
                }
                self.line.clear();
            }
        }
        self.reading = Reading::LineStart;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Events of a stream fed in chunks of `size` bytes.
    fn chunked(stream: &[u8], size: usize) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let mut parser = SseParser::default();
        let mut events: Vec<Vec<u8>> = stream
            .chunks(size.max(1))
            .flat_map(|chunk| parser.feed(chunk))
            .map(|event| event.raw)
            .collect();
        let rest = parser.finish().map(|event| event.raw);
        events.retain(|e| !e.is_empty());
        (events, rest)
    }

    #[test]
    fn each_line_ending_ends_lines_and_a_cr_split_from_its_lf_waits() {
        let stream = b"data: a\r\n\r\ndata: b\n\ndata: c\r\rid: 9\r\n";
        for size in 1..stream.len() {
            let (events, rest) = chunked(stream, size);
            assert_eq!(
                events,
                [&b"data: a\r\n\r\n"[..], b"data: b\n\n", b"data: c\r\r"],
                "chunks of {size}"
            );
            assert_eq!(rest.as_deref(), Some(&b"id: 9\r\n"[..]));
        }
    }

    #[test]
    fn with_data_keeps_every_other_line_and_drops_the_other_data_lines() {
        let event = &SseParser::default().feed(b": c\nid: 4\ndata: x\nevent: e\ndata: y\n\n")[0];
        assert_eq!(event.data().unwrap(), b"x\ny");
        assert_eq!(
            event.with_data(b"n1\nn2"),
            b": c\nid: 4\ndata: n1\ndata: n2\nevent: e\n\n"
        );
    }

    #[test]
    fn a_field_without_a_colon_and_without_a_space() {
        let event = &SseParser::default().feed(b"data\ndata:x\n\n")[0];
        assert_eq!(event.data().unwrap(), b"\nx");
    }

    proptest! {
        /// A5: cutting a stream into events and joining them gives the stream back,
        /// whatever the chunking.
        #[test]
        fn events_join_back_into_the_stream(
            stream in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b':'), Just(b'd'), Just(b' '), any::<u8>()],
                0..200),
            size in 1usize..50,
        ) {
            let (events, rest) = chunked(&stream, size);
            let mut joined = events.concat();
            joined.extend(rest.unwrap_or_default());
            prop_assert_eq!(joined, stream);
        }
    }

    /// The pieces of `stream` fed in chunks of `size`, as (kind, bytes), runs of
    /// values joined.
    fn pieces(stream: &[u8], size: usize) -> Vec<(char, Vec<u8>)> {
        let mut reader = EventReader::default();
        let mut out: Vec<(char, Vec<u8>)> = Vec::new();
        let mut take = |piece: Piece<'_>| {
            let (kind, bytes) = match piece {
                Piece::Field(b) => ('f', b),
                Piece::DataStart(b) => ('s', b),
                Piece::Value(b) => ('v', b),
                Piece::DataEnd(b) => ('d', b),
                Piece::EventEnd(b) => ('e', b),
            };
            match out.last_mut() {
                Some(('v', last)) if kind == 'v' => last.extend_from_slice(bytes),
                _ => out.push((kind, bytes.to_vec())),
            }
        };
        for chunk in stream.chunks(size.max(1)) {
            reader.feed(chunk, &mut take);
        }
        reader.finish(&mut take);
        out
    }

    #[test]
    fn b2_a_field_line_past_the_bound_is_dropped_the_rest_passes() {
        let long = vec![b'x'; MAX_FIELD_LINE_BYTES * 3];
        let at_bound = vec![b'y'; MAX_FIELD_LINE_BYTES - 3];
        for ending in [&b"\n"[..], b"\r\n", b"\r"] {
            let mut stream = [b": ", &long[..], ending].concat();
            stream.extend([b"id: ", &long[..], ending].concat());
            stream.extend([b": ", &at_bound[..], ending].concat());
            stream.extend(b"data: 1\n\n");
            for size in [1, 7, 4096, stream.len()] {
                let got = pieces(&stream, size);
                let kinds: String = got.iter().map(|(kind, _)| *kind).collect();
                assert_eq!(kinds, "fsvde", "{size}");
                assert_eq!(
                    got[0].1,
                    [b": ", &at_bound[..], ending].concat(),
                    "at the bound: passed"
                );
            }
        }
        // Cut off mid-line at the end of the stream: nothing of it.
        let got = pieces(&[b"data: 1\n\n: ", &long[..]].concat(), 1000);
        assert_eq!(got.last().unwrap().0, 'e');
    }

    #[test]
    fn a5_pieces_name_each_line_whatever_its_ending_and_chunking() {
        let stream = b"id: 1\r\ndata: {\"a\"\r\ndata:1}\rdata\ndata:\n\r\n: c\ndat: x\n\n";
        let want: Vec<(char, Vec<u8>)> = [
            ('f', &b"id: 1\r\n"[..]),
            ('s', b"data: "),
            ('v', b"{\"a\""),
            ('d', b"\r\n"),
            ('s', b"data:"),
            ('v', b"1}"),
            ('d', b"\r"),
            ('s', b"data"),
            ('d', b"\n"),
            ('s', b"data:"),
            ('d', b"\n"),
            ('e', b"\r\n"),
            ('f', b": c\n"),
            ('f', b"dat: x\n"),
            ('e', b"\n"),
        ]
        .iter()
        .map(|(k, b)| (*k, b.to_vec()))
        .collect();
        for size in 1..=stream.len() {
            assert_eq!(pieces(stream, size), want, "chunks of {size}");
        }
    }

    proptest! {
        /// A5, B3: the pieces of a stream join back into it, whatever the chunking,
        /// and events end where [`SseParser`] ends them.
        #[test]
        fn pieces_join_back_into_the_stream_and_end_events_as_the_parser_does(
            stream in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '),
                            Just(b'd'), Just(b'a'), Just(b't'), any::<u8>()],
                0..200),
            size in 1usize..50,
        ) {
            let mut got = pieces(&stream, size);
            let joined: Vec<u8> = got.iter().flat_map(|(_, b)| b.clone()).collect();
            prop_assert_eq!(&joined, &stream);
            // A CR last in the stream ends its line; the parser, which waits for an
            // LF that might follow, leaves that last event to `finish`.
            if got.last() == Some(&('e', b"\r".to_vec())) {
                got.pop();
            }
            let (events, _) = chunked(&stream, size);
            let mut ends = 0;
            let mut at = 0;
            let mut event_ends = Vec::new();
            for (kind, bytes) in &got {
                at += bytes.len();
                if *kind == 'e' {
                    ends += 1;
                    event_ends.push(at);
                }
            }
            prop_assert_eq!(ends, events.len());
            let mut at = 0;
            for (event, end) in events.iter().zip(event_ends) {
                at += event.len();
                prop_assert_eq!(at, end);
            }
        }
    }
}
