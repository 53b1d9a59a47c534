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
/// use backstop_jsonrpc::http::sse::SseParser;
/// let mut parser = SseParser::default();
/// let events = parser.feed(b"id: 7\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n");
/// assert_eq!(events[0].id(), Some(&b"7"[..]));
/// assert_eq!(events[0].data().unwrap(), br#"{"a":1}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    raw: Vec<u8>,
}

/// The fields of one line: its name, its value (one leading space removed) and the
/// line's length without its ending.
fn field(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
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
    /// The event's bytes, as they came.
    ///
    /// ```
    /// let mut parser = backstop_jsonrpc::http::sse::SseParser::default();
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
    /// let mut parser = backstop_jsonrpc::http::sse::SseParser::default();
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
    /// let mut parser = backstop_jsonrpc::http::sse::SseParser::default();
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
    /// let mut parser = backstop_jsonrpc::http::sse::SseParser::default();
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
/// use backstop_jsonrpc::http::sse::SseParser;
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
    /// let mut parser = backstop_jsonrpc::http::sse::SseParser::default();
    /// parser.feed(b"data: 12");
    /// assert_eq!(parser.buffered(), 8);
    /// ```
    pub fn buffered(&self) -> usize {
        self.buffer.len()
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
}
