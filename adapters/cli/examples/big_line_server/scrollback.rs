//! The exact bytes of the big lines the `big_line_server` example writes, shared with
//! the test (`tests/memory_bound.rs`) and the benchmark (`benches/pipe.rs`) that read
//! them, so that both know what the server wrote without holding it.
//!
//! A line is `head`, then [`CHUNK`] repeated, then `end`: one text of terminal
//! scrollback (numbered lines with colour escapes and a non-ASCII letter, as JSON
//! escapes them) that finishes with a distinct last screen ([`LAST_SCREEN`]), in one of
//! the [`Shape`]s below.

// Each of the three users needs only part of it.
#![allow(dead_code)]

/// The size of one repeated block of escaped scrollback: 64 KiB.
pub const CHUNK_BYTES: usize = 64 << 10;

/// The escaped bytes of one line of [`CHUNK`], `\n` included.
const LINE_BYTES: usize = 64;

/// The text's end, as JSON escapes it: not a repeat of the chunk, so a cut that kept
/// the wrong bytes shows.
pub const LAST_SCREEN: &str =
    r"test result: ok. 1024 passed; 0 failed; finished in 0.42s\n$ echo done\ndone\nPROMPT $ ";

/// One 64 KiB block of scrollback as escaped JSON string bytes: 1024 lines of 64
/// bytes (`\n` counted as the two bytes it is on the wire), each
/// `NNNN \u001b[32mok\u001b[0m build step é` padded with dots.
pub fn chunk() -> Vec<u8> {
    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
    for n in 0..CHUNK_BYTES / LINE_BYTES {
        let mut line = format!(r"{n:04} \u001b[32mok\u001b[0m build step é ");
        while line.len() < LINE_BYTES - 2 {
            line.push('.');
        }
        line.push_str(r"\n");
        chunk.extend_from_slice(line.as_bytes());
    }
    chunk
}

/// What kind of message the big line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A `tools/call` result with one text block, `id` before `result`.
    ResultIdFirst,
    /// The same with `id` after `result`, as the TypeScript SDK writes it.
    ResultIdLast,
    /// A `resources/read` result (needs no change), `id` after `result`.
    Resource,
    /// A `notifications/message` (needs no change).
    Notification,
    /// The answer to a `tasks/get` (2026-07-28): task `t-big` `completed`, the text
    /// result inside its state.
    TaskState,
    /// A `notifications/tasks` (2026-07-28) of task `t-big`, `completed` the same way.
    TaskStatus,
}

/// One big line: `head`, [`chunk`] `repeats` times, `end` (no newline).
#[derive(Debug, Clone)]
pub struct BigLine {
    /// The bytes before the repeated scrollback.
    pub head: Vec<u8>,
    /// The repeated block ([`chunk`]).
    pub chunk: Vec<u8>,
    /// How many times the block is repeated.
    pub repeats: usize,
    /// The bytes after it: [`LAST_SCREEN`] and the rest of the message.
    pub end: Vec<u8>,
}

impl BigLine {
    /// The line of `shape` of about `bytes` bytes (at most `bytes`, less by under one
    /// chunk), answering the request `id` (its JSON text; unused by a notification).
    pub fn new(shape: Shape, id: &str, bytes: usize) -> BigLine {
        let (head, end) = match shape {
            Shape::ResultIdFirst => (
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
                ),
                r#""}]}}"#.to_owned(),
            ),
            Shape::ResultIdLast => (
                r#"{"result":{"content":[{"type":"text","text":""#.to_owned(),
                format!(r#""}}]}},"jsonrpc":"2.0","id":{id}}}"#),
            ),
            Shape::Resource => (
                r#"{"result":{"contents":[{"uri":"scrollback://log","mimeType":"text/plain","text":""#
                    .to_owned(),
                format!(r#""}}]}},"jsonrpc":"2.0","id":{id}}}"#),
            ),
            Shape::TaskState => (
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","taskId":"t-big","status":"completed","result":{{"content":[{{"type":"text","text":""#
                ),
                r#""}]}}}"#.to_owned(),
            ),
            Shape::TaskStatus => (
                r#"{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t-big","status":"completed","result":{"content":[{"type":"text","text":""#
                    .to_owned(),
                r#""}]}}}"#.to_owned(),
            ),
            Shape::Notification => (
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"scrollback","data":""#
                    .to_owned(),
                r#""}}"#.to_owned(),
            ),
        };
        let end = format!("{LAST_SCREEN}{end}");
        let repeats = bytes.saturating_sub(head.len() + end.len()) / CHUNK_BYTES;
        BigLine {
            head: head.into_bytes(),
            chunk: chunk(),
            repeats,
            end: end.into_bytes(),
        }
    }

    /// The line's length in bytes, without a newline.
    pub fn wire_len(&self) -> usize {
        self.head.len() + self.chunk.len() * self.repeats + self.end.len()
    }

    /// The line's bytes from `at` to the end of the piece (head, one chunk, end) that
    /// holds `at`; empty at or after the end of the line. Reading these in turn gives
    /// the whole line without holding it.
    pub fn rest_of_piece(&self, at: usize) -> &[u8] {
        if at < self.head.len() {
            return &self.head[at..];
        }
        let at = at - self.head.len();
        let middle = self.chunk.len() * self.repeats;
        if at < middle {
            return &self.chunk[at % self.chunk.len()..];
        }
        self.end.get(at - middle..).unwrap_or_default()
    }

    /// The line's bytes from `at` on, piece by piece (`from(0)` is the whole line).
    pub fn from(&self, mut at: usize) -> impl Iterator<Item = &[u8]> {
        std::iter::from_fn(move || {
            let piece = self.rest_of_piece(at);
            at += piece.len();
            (!piece.is_empty()).then_some(piece)
        })
    }
}
