//! Newline-delimited framing of JSON-RPC messages on a byte stream (MCP stdio).
//!
//! Each message is one line. A last line without its newline (the writer stopped
//! mid-line, or never wrote one) is still a line: it is handed on like the others.
//! Writing puts the newline back — the one byte the proxy adds, so that the reader on
//! the other side sees the line end and nothing that follows runs into it.

use std::io::{self, BufRead, BufReader, Read, Write};

/// Lines this long or longer are not kept buffered once handled (the shaper's
/// stream releases its line buffer at the same length).
///
/// ```
/// assert_eq!(backstop::framing::KEEP_BUFFER_BYTES, 4 * 1024 * 1024);
/// ```
pub use backstop_jsonrpc::stream::KEEP_BUFFER_BYTES;

/// Reads one line at a time into a reused buffer.
///
/// ```
/// use backstop::framing::LineReader;
/// let mut reader = LineReader::new(&b"{\"a\":1}\npartial"[..]);
/// assert_eq!(reader.next_line().unwrap(), Some(&b"{\"a\":1}"[..]));
/// assert_eq!(reader.next_line().unwrap(), Some(&b"partial"[..]));
/// assert_eq!(reader.next_line().unwrap(), None);
/// ```
#[derive(Debug)]
pub struct LineReader<R> {
    reader: BufReader<R>,
    buffer: Vec<u8>,
}

impl<R: Read> LineReader<R> {
    /// A reader of lines from `reader`, buffered.
    ///
    /// ```
    /// let reader = backstop::framing::LineReader::new(std::io::empty());
    /// assert!(!reader.has_buffered_input());
    /// ```
    pub fn new(reader: R) -> Self {
        Self {
            reader: BufReader::with_capacity(64 << 10, reader),
            buffer: Vec::new(),
        }
    }

    /// The next line without its `\n`, or `None` at the end of the stream.
    ///
    /// ```
    /// let mut reader = backstop::framing::LineReader::new(&b"a\r\n\n"[..]);
    /// assert_eq!(reader.next_line().unwrap(), Some(&b"a\r"[..]));
    /// assert_eq!(reader.next_line().unwrap(), Some(&b""[..]));
    /// ```
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        if self.buffer.capacity() >= KEEP_BUFFER_BYTES {
            self.buffer = Vec::new();
        }
        self.buffer.clear();
        if self.reader.read_until(b'\n', &mut self.buffer)? == 0 {
            return Ok(None);
        }
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
        }
        Ok(Some(&self.buffer))
    }

    /// Whether more input is already buffered (so a writer may wait to flush).
    ///
    /// ```
    /// let mut reader = backstop::framing::LineReader::new(&b"a\nb\n"[..]);
    /// reader.next_line().unwrap();
    /// assert!(reader.has_buffered_input());
    /// ```
    pub fn has_buffered_input(&self) -> bool {
        !self.reader.buffer().is_empty()
    }
}

/// Write one line: `message` and a `\n`.
///
/// ```
/// let mut out = Vec::new();
/// backstop::framing::write_line(&mut out, b"{}").unwrap();
/// assert_eq!(out, b"{}\n");
/// ```
pub fn write_line(writer: &mut impl Write, message: &[u8]) -> io::Result<()> {
    writer.write_all(message)?;
    writer.write_all(b"\n")
}
