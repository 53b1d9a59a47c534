//! An incremental scan of one JSON-RPC message as its bytes arrive, holding about as
//! much of it as the cap can keep (SPEC B3).
//!
//! The scan keeps the message's *skeleton*: every byte of it except the middle of long
//! strings. A long string in a content block of a result (`result.content[i].text`,
//! `.data`, `.blob`, or the same in its `resource`) keeps only its tail — enough for any
//! cut ([`HeldInPart::min_held_bytes`]) — with its exact length counted; any other long
//! string is dropped whole and the scan says so. The skeleton is valid JSON exactly when
//! the message is: the dropped middles are checked as they pass (UTF-8, escapes, control
//! characters, surrogate pairs — B4), and what is kept is read by serde_json later.
//!
//! The scan also notes the top-level `id` and `method` as soon as they are complete, so
//! that a message that cannot need a change can be sent on before its end.
//!
//! ```
//! use backstop_jsonrpc::scan::Scan;
//! let mut scan = Scan::new(1_000);
//! scan.push(br#"{"id":7,"result":{"content":[{"type":"text","text":"hi"}]}"#);
//! scan.push(b"}");
//! assert_eq!(scan.top_id().map(|raw| raw.to_vec()), Some(b"7".to_vec()));
//! let scanned = scan.finish();
//! assert_eq!(scanned.skeleton, br#"{"id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#);
//! assert!(!scanned.invalid && scanned.holes.is_empty());
//! ```

use backstop_core::call::MAX_RECOGNIZED_BYTES;
use backstop_core::limit::HeldInPart;
use backstop_core::{Content, ToolResult};
use serde_json::Value;
use std::collections::VecDeque;

mod run;

/// The deepest nesting scanned; deeper is more than serde_json reads (its limit is
/// 128), so such a message is not one the shaper can change.
const MAX_DEPTH: usize = 256;

/// The most strings held in part in one message; more and the message is read whole.
const MAX_HOLES: usize = 8;

/// The most bytes the skeleton holds; past it the message is read whole if it is one
/// that may need a change (B2 still bounds that), and sent on unread otherwise.
pub const MAX_SKELETON_BYTES: usize = 8 << 20;

/// Keys under which a content block's string may be held in part.
const BLOCK_KEYS: [&[u8]; 3] = [b"text", b"data", b"blob"];

/// What the scan found, at the end of the message.
#[derive(Debug, Default)]
pub struct Scanned {
    /// The message without the middles of its long strings; empty when
    /// [`overflowed`](Self::overflowed).
    pub skeleton: Vec<u8>,
    /// The strings held in part, in the order they came.
    pub holes: Vec<Hole>,
    /// A long string not in a content block was dropped whole, or too many were held
    /// in part, or the skeleton grew past [`MAX_SKELETON_BYTES`].
    pub dropped: bool,
    /// The skeleton is not held at all (it grew past [`MAX_SKELETON_BYTES`]).
    pub overflowed: bool,
    /// The bytes are not valid JSON text (as far as strings go; serde_json checks the
    /// rest of the skeleton).
    pub invalid: bool,
    /// The message is a JSON array (a batch).
    pub batch: bool,
    /// The top-level `id`, as raw JSON.
    pub id: Option<Vec<u8>>,
    /// The top-level `method`, as raw JSON.
    pub method: Option<Vec<u8>>,
}

/// One string held in part.
#[derive(Debug)]
pub struct Hole {
    /// Where in the content array its block is.
    pub block: usize,
    /// Whether it is the block's own `text` (a text block's, if the block is one).
    pub block_text: bool,
    /// For a string of `structuredContent`: its JSON pointer there (then `block` and
    /// `block_text` mean nothing).
    pub pointer: Option<String>,
    /// The first byte the string decodes to (0x80 for a character that is not ASCII).
    pub first: u8,
    /// The UTF-8 bytes of the whole string.
    pub decoded_len: usize,
    /// It may hold `input_value=`/`input_type=` (V3): it holds `input_`, or an
    /// escaped printable ASCII character.
    pub may_quote_inputs: bool,
}

impl Scanned {
    /// What is not held of `result` (read from the skeleton), for the core.
    ///
    /// ```
    /// let scanned = backstop_jsonrpc::scan::Scanned::default();
    /// assert!(scanned.held_in_part(&backstop_core::ToolResult::text("x")).is_whole());
    /// ```
    pub fn held_in_part(&self, result: &ToolResult) -> HeldInPart {
        let mut held = HeldInPart::default();
        for hole in &self.holes {
            let len =
                |text: Option<&str>| hole.decoded_len.saturating_sub(text.map_or(0, str::len));
            held = match &hole.pointer {
                Some(pointer) => {
                    let text = result
                        .structured_content
                        .as_ref()
                        .and_then(|v| v.pointer(pointer));
                    match text.and_then(Value::as_str) {
                        Some(text) => held.with_structured_head(pointer.clone(), len(Some(text))),
                        None => held.with_other_block(),
                    }
                }
                None => match result.content.get(hole.block).and_then(Content::as_text) {
                    Some(text) if hole.block_text => held
                        .with_text_head(hole.block, len(Some(text)))
                        .with_text_start(hole.block, hole.first),
                    _ => held.with_other_block(),
                },
            };
            if hole.may_quote_inputs {
                held = held.quoting_inputs();
            }
        }
        held
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// An object's key (or its end).
    Key,
    /// A value (after `:` or in an array, or at the top).
    Value,
    /// A `,` or the container's end.
    Next,
}

#[derive(Debug)]
enum Frame {
    Object { key: Key },
    Array { index: usize },
}

/// A key, if short enough to matter.
#[derive(Debug, Clone, Copy, Default)]
struct Key {
    bytes: [u8; 32],
    len: u8,
    /// Longer than 32 bytes, or escaped.
    other: bool,
}

impl Key {
    fn is(&self, name: &[u8]) -> bool {
        !self.other && &self.bytes[..self.len as usize] == name
    }
}

/// Where a string being scanned goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A key: collected into the frame's key.
    Key,
    /// A value that may be held in part: `(block index, is the block's text)`.
    Block(usize, bool),
    /// A value of `structuredContent`, which may be held in part.
    Structured,
    /// Any other value.
    Other,
}

/// A string being scanned.
#[derive(Debug)]
struct Str {
    place: Place,
    /// Where the string's content starts in the skeleton (after its `"`).
    start: usize,
    decoded: usize,
    /// Escape bytes seen so far of an escape cut by the end of a chunk.
    escape: [u8; 6],
    escape_len: usize,
    /// A high surrogate was the last escape: a low one must follow.
    high: bool,
    /// Bytes of a UTF-8 sequence cut by the end of a chunk.
    utf8: [u8; 4],
    utf8_len: usize,
    may_quote: bool,
    /// The first byte it decodes to, once seen (0: none yet).
    first: u8,
    /// Held in part: its tail.
    ring: Option<Ring>,
    /// Dropped whole.
    dropped: bool,
    /// The last bytes of the previous run, to find `input_` across runs.
    last: [u8; 5],
}

/// The tail of a string held in part: raw (escaped) bytes, trimmed from the front at
/// checkpoints that keep at least `need` decoded bytes behind them. A ring buffer, so
/// that each byte is copied in once and trimming moves none.
#[derive(Debug)]
struct Ring {
    bytes: VecDeque<u8>,
    /// `(offset in bytes, decoded count there)`; positions outside escapes.
    checkpoints: VecDeque<(usize, usize)>,
}

/// Checkpoints are this far apart (raw bytes), at least.
const CHECKPOINT_EVERY: usize = 64 << 10;

/// A string's bytes are checked and held in segments of about this size.
const SEGMENT_BYTES: usize = 64 << 10;

/// How far past a segment's size a regular run is given bytes: enough that one that is
/// not stopped ends past it (its last blocks and a step back to a character's start).
const RUN_OVERSHOOT: usize = 256;

/// The incremental scan of one message: push its bytes as they come, then finish.
#[derive(Debug)]
pub struct Scan {
    need: usize,
    threshold: usize,
    skeleton: Vec<u8>,
    holes: Vec<(usize, Hole, Ring)>,
    stack: Vec<Frame>,
    expect: Expect,
    string: Option<Str>,
    started: bool,
    /// The top-level member whose value is being read: its name, and where it starts.
    top_value: Option<(TopKey, usize)>,
    id: Option<Vec<u8>>,
    method: Option<Vec<u8>>,
    dropped: bool,
    overflowed: bool,
    invalid: bool,
    batch: bool,
    result: bool,
    /// Value strings below the top level are skipped, not read ([`Scan::skim`]).
    skimming: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopKey {
    Id,
    Method,
}

impl Scan {
    /// A scan for a cap of `max_bytes`: strings longer than a cut could keep and than
    /// [`MAX_RECOGNIZED_BYTES`] are held in part.
    pub fn new(max_bytes: usize) -> Self {
        // A little more than the core asks: the held tail may start a few bytes in (at a
        // character boundary).
        let need = HeldInPart::min_held_bytes(max_bytes) + 16;
        Self {
            need,
            threshold: need.max(MAX_RECOGNIZED_BYTES) + CHECKPOINT_EVERY,
            skeleton: Vec::new(),
            holes: Vec::new(),
            stack: Vec::new(),
            expect: Expect::Value,
            string: None,
            started: false,
            top_value: None,
            id: None,
            method: None,
            dropped: false,
            overflowed: false,
            invalid: false,
            batch: false,
            result: false,
            skimming: false,
        }
    }

    /// The top-level `id` once its value is complete.
    pub fn top_id(&self) -> Option<&[u8]> {
        self.id.as_deref()
    }

    /// Whether a top-level `result` member has begun (the message is no error).
    pub fn top_result(&self) -> bool {
        self.result
    }

    /// The top-level `method` once its value is complete, as raw JSON.
    pub fn top_method(&self) -> Option<&[u8]> {
        self.method.as_deref()
    }

    /// The bytes the scan holds now: the skeleton and the tails of strings held in
    /// part (B3: about the cap, however long the message).
    ///
    /// ```
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.push(b"[1,2]");
    /// assert_eq!(scan.held_bytes(), 5);
    /// ```
    pub fn held_bytes(&self) -> usize {
        let open = self.string.as_ref().and_then(|s| s.ring.as_ref());
        self.skeleton.len()
            + self
                .holes
                .iter()
                .map(|(_, _, ring)| ring.bytes.len())
                .sum::<usize>()
            + open.map_or(0, |ring| ring.bytes.len())
    }

    /// Whether the bytes so far are already not valid JSON.
    pub fn is_invalid(&self) -> bool {
        self.invalid
    }

    /// Whether the message is a batch (known from its first byte).
    pub fn is_batch(&self) -> bool {
        self.batch
    }

    /// From here on, follow only the message's structure: value strings below the top
    /// level are skipped to their closing quote, 64 bytes at a time, not checked, held
    /// or counted. For a message sent on as it comes whose top-level `id` is still to
    /// be read: what is then found (the id, the skeleton, whether it is valid) is as
    /// good as the structure alone can say.
    ///
    /// ```
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.push(br#"{"result":{"contents":[{"text":""#);
    /// scan.skim();
    /// scan.push(format!(r#"{}\\"}}"#, "line\\n".repeat(100_000)).as_bytes());
    /// scan.push(br#"]},"id":"a\"b"}"#);
    /// assert_eq!(scan.finish().id.unwrap(), br#""a\"b""#);
    /// ```
    pub fn skim(&mut self) {
        self.skimming = true;
    }

    /// Scan the next bytes of the message (no line break in them).
    pub fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.invalid {
            let used = if self.string.is_some() {
                self.string_bytes(bytes)
            } else {
                self.structure_bytes(bytes)
            };
            bytes = &bytes[used..];
        }
    }

    /// The end of the message.
    pub fn finish(mut self) -> Scanned {
        if self.string.is_some() || !self.stack.is_empty() {
            self.invalid = true;
        }
        let mut skeleton = Vec::new();
        let mut holes = Vec::new();
        if !self.overflowed {
            skeleton.reserve(
                self.skeleton.len() + self.holes.iter().map(|h| h.2.bytes.len()).sum::<usize>(),
            );
            let mut at = 0;
            for (offset, hole, mut ring) in self.holes {
                skeleton.extend_from_slice(&self.skeleton[at..offset]);
                skeleton.extend_from_slice(held_start(ring.bytes.make_contiguous()));
                at = offset;
                holes.push(hole);
            }
            skeleton.extend_from_slice(&self.skeleton[at..]);
        } else {
            holes.extend(self.holes.into_iter().map(|(_, hole, _)| hole));
        }
        Scanned {
            skeleton,
            holes,
            dropped: self.dropped || self.overflowed,
            overflowed: self.overflowed,
            invalid: self.invalid,
            batch: self.batch,
            id: self.id,
            method: self.method,
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        if self.skeleton.len() + bytes.len() > MAX_SKELETON_BYTES {
            self.overflowed = true;
            self.skeleton = Vec::new();
            return;
        }
        self.skeleton.extend_from_slice(bytes);
    }

    /// Bytes outside strings, up to and including a `"` that opens one.
    fn structure_bytes(&mut self, bytes: &[u8]) -> usize {
        for (i, &byte) in bytes.iter().enumerate() {
            match byte {
                b' ' | b'\t' | b'\r' | b'\n' => continue,
                _ => {}
            }
            if !self.started {
                self.started = true;
                self.batch = byte == b'[';
            }
            if self.expect == Expect::Value && self.stack.len() == 1 && byte != b'"' {
                self.note_top_value(self.skeleton.len() + i);
            }
            match byte {
                b'"' => {
                    self.keep(&bytes[..=i]);
                    self.open_string();
                    return i + 1;
                }
                b'{' | b'[' => {
                    if self.expect != Expect::Value || self.stack.len() >= MAX_DEPTH {
                        self.invalid = true;
                        return bytes.len();
                    }
                    self.stack.push(if byte == b'{' {
                        Frame::Object {
                            key: Key::default(),
                        }
                    } else {
                        Frame::Array { index: 0 }
                    });
                    self.expect = if byte == b'{' {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                }
                b'}' | b']' => {
                    let closes = matches!(
                        (self.stack.last(), byte),
                        (Some(Frame::Object { .. }), b'}') | (Some(Frame::Array { .. }), b']')
                    );
                    if !closes {
                        self.invalid = true;
                        return bytes.len();
                    }
                    self.end_top_value(i, bytes);
                    self.stack.pop();
                    self.expect = Expect::Next;
                }
                b':' => self.expect = Expect::Value,
                b',' => {
                    self.end_top_value(i, bytes);
                    match self.stack.last_mut() {
                        Some(Frame::Array { index }) => {
                            *index += 1;
                            self.expect = Expect::Value;
                        }
                        _ => self.expect = Expect::Key,
                    }
                }
                _ => self.expect = Expect::Next,
            }
        }
        self.keep(bytes);
        bytes.len()
    }

    /// At a `,` or `}` (at `bytes[i]`) that ends a top-level member: note `id`/`method`.
    fn end_top_value(&mut self, i: usize, bytes: &[u8]) {
        if self.stack.len() != 1 {
            return;
        }
        if let Some((key, start)) = self.top_value.take()
            && !self.overflowed
        {
            // The value: from its start (in the skeleton, or in `bytes`) to here.
            let kept = self.skeleton.len();
            let mut raw = self.skeleton.get(start..).unwrap_or_default().to_vec();
            raw.extend_from_slice(bytes.get(start.saturating_sub(kept)..i).unwrap_or_default());
            let raw = raw.trim_ascii().to_vec();
            match key {
                TopKey::Id => self.id = Some(raw),
                TopKey::Method => self.method = Some(raw),
            }
        }
    }

    fn open_string(&mut self) {
        let place = match self.expect {
            Expect::Key => Place::Key,
            _ => self.value_place(),
        };
        if place != Place::Key && self.stack.len() == 1 {
            // The string's `"` is the last byte kept.
            self.note_top_value(self.skeleton.len().saturating_sub(1));
        }
        if let Some(Frame::Object { key }) = self.stack.last_mut()
            && place == Place::Key
        {
            *key = Key::default();
        }
        self.string = Some(Str {
            place,
            start: self.skeleton.len(),
            decoded: 0,
            escape: [0; 6],
            escape_len: 0,
            high: false,
            utf8: [0; 4],
            utf8_len: 0,
            may_quote: false,
            first: 0,
            ring: None,
            dropped: false,
            last: [0; 5],
        });
    }

    /// At the start of a top-level value: if it is `id`'s or `method`'s, where it starts.
    fn note_top_value(&mut self, start: usize) {
        if let Some(Frame::Object { key }) = self.stack.first() {
            let top = if key.is(b"id") {
                Some(TopKey::Id)
            } else if key.is(b"method") {
                Some(TopKey::Method)
            } else {
                None
            };
            self.top_value = top.map(|top| (top, start));
        }
    }

    /// Where a value string at the current position may go.
    fn value_place(&self) -> Place {
        let key =
            |frame: &Frame, name: &[u8]| matches!(frame, Frame::Object { key } if key.is(name));
        let block_key = |frame: &Frame| BLOCK_KEYS.iter().find(|name| key(frame, name));
        match self.stack.as_slice() {
            [top, result, Frame::Array { index }, block]
                if key(top, b"result") && key(result, b"content") =>
            {
                match block_key(block) {
                    Some(name) => Place::Block(*index, *name == b"text"),
                    None => Place::Other,
                }
            }
            [top, result, Frame::Array { index }, resource, inner]
                if key(top, b"result") && key(result, b"content") && key(resource, b"resource") =>
            {
                match block_key(inner) {
                    Some(_) => Place::Block(*index, false),
                    None => Place::Other,
                }
            }
            [top, result, rest @ ..]
                if key(top, b"result")
                    && key(result, b"structuredContent")
                    && self.pointer_of(rest).is_some() =>
            {
                Place::Structured
            }
            _ => Place::Other,
        }
    }

    /// The JSON pointer (into `structuredContent`) of the value at the end of `frames`,
    /// if every key on the way is known.
    fn pointer_of(&self, frames: &[Frame]) -> Option<String> {
        let mut pointer = String::new();
        for frame in frames {
            pointer.push('/');
            match frame {
                Frame::Array { index } => pointer.push_str(&index.to_string()),
                Frame::Object { key } if !key.other => {
                    let key = std::str::from_utf8(&key.bytes[..key.len as usize]).ok()?;
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                Frame::Object { .. } => return None,
            }
        }
        Some(pointer)
    }

    /// Bytes inside a string: up to and including its closing `"`.
    ///
    /// The bytes up to the closing quote (or the end of `bytes`) are one span: found
    /// with one `memchr2` pass that also reads each escape, then checked as a whole
    /// (UTF-8, control characters, `input_`) and kept or held in one copy.
    fn string_bytes(&mut self, bytes: &[u8]) -> usize {
        let Some(mut string) = self.string.take() else {
            return 0;
        };
        if self.skimming && string.place != Place::Key && self.stack.len() > 1 {
            return self.skim_string(string, bytes);
        }
        let mut i = 0;
        if string.escape_len > 0 {
            // The rest of an escape cut by the end of the last chunk; how long it is
            // shows at its second byte.
            while string.escape_len < escape_len(&string.escape[..string.escape_len])
                && i < bytes.len()
            {
                string.escape[string.escape_len] = bytes[i];
                string.escape_len += 1;
                i += 1;
            }
            if string.escape_len < escape_len(&string.escape[..string.escape_len]) {
                self.string = Some(string);
                return i;
            }
            let escape = string.escape;
            let len = string.escape_len;
            string.escape_len = 0;
            let before = string.decoded;
            match escape_decoded(&mut string, &escape[..len]) {
                Some(decoded) => string.decoded += decoded,
                None => {
                    self.invalid = true;
                    return bytes.len();
                }
            }
            self.string_content(&mut string, &escape[..len], before);
        }
        if string.utf8_len > 0 {
            // The rest of a UTF-8 sequence cut by the end of the last chunk.
            let need = utf8_len(string.utf8[0]);
            let take = (need - string.utf8_len).min(bytes.len() - i);
            let piece = &bytes[i..i + take];
            string.utf8[string.utf8_len..string.utf8_len + take].copy_from_slice(piece);
            string.utf8_len += take;
            i += take;
            let before = string.decoded;
            string.decoded += piece.len();
            self.string_content(&mut string, piece, before);
            if string.utf8_len < need {
                self.string = Some(string);
                return i;
            }
            string.utf8_len = 0;
            if std::str::from_utf8(&string.utf8[..need]).is_err() {
                self.invalid = true;
                return bytes.len();
            }
        }
        let start = i;
        // The span is handed on in segments of about SEGMENT_BYTES, each ending before
        // an escape or at a character boundary of plain text, so that a ring can trim.
        let mut segment = start;
        // Raw bytes of escapes minus what they decode to, in the current segment.
        let mut shrink = 0;
        let mut at = i;
        let mut last_escape_end = if string.high { start } else { usize::MAX };
        let (end, closed) = loop {
            if !string.high {
                // Plain bytes and common escapes, 64 at a time; what stops the run
                // (or the last few bytes) is read below. A run reaches a little past
                // the segment's size, no further, so that segments (and the ring's
                // checkpoints) stay about SEGMENT_BYTES apart however long the read.
                let budget = (segment + SEGMENT_BYTES + RUN_OVERSHOOT).min(bytes.len());
                let run = run::regular(&bytes[at..budget.max(at)]);
                if run.escapes {
                    string.last = [0; 5];
                    string.may_quote |= run.escaped_printable;
                    last_escape_end = at + run.len;
                }
                shrink += run.shrink;
                at += run.len;
                // A run ends outside escapes and at a character's start: a segment
                // may end there.
                if at - segment >= SEGMENT_BYTES {
                    if !self.segment(&mut string, &bytes[segment..at], shrink) {
                        return bytes.len();
                    }
                    segment = at;
                    shrink = 0;
                }
            }
            let Some(j) = memchr::memchr2(b'"', b'\\', &bytes[at..]) else {
                break (bytes.len(), false);
            };
            let p = at + j;
            if string.high && p != last_escape_end {
                self.invalid = true; // a high surrogate not followed by its low half
                return bytes.len();
            }
            if bytes[p] == b'"' {
                break (p, true);
            }
            let need = escape_len(&bytes[p..]);
            if p + 1 >= bytes.len() || p + need > bytes.len() {
                // An escape cut by the end of the chunk: kept for the next one.
                let cut = &bytes[p..];
                string.escape[..cut.len()].copy_from_slice(cut);
                string.escape_len = cut.len();
                break (p, false);
            }
            if p - segment >= SEGMENT_BYTES && !string.high {
                if !self.segment(&mut string, &bytes[segment..p], shrink) {
                    return bytes.len();
                }
                segment = p;
                shrink = 0;
            }
            match escape_decoded(&mut string, &bytes[p..p + need]) {
                Some(decoded) => shrink += need - decoded,
                None => {
                    self.invalid = true;
                    return bytes.len();
                }
            }
            at = p + need;
            last_escape_end = at;
        };
        if string.high && string.escape_len == 0 && end != last_escape_end {
            self.invalid = true;
            return bytes.len();
        }
        // What has escapes in it, then the plain rest in pieces.
        let escaped_end = if last_escape_end == usize::MAX {
            segment
        } else {
            last_escape_end.max(segment)
        };
        if !self.segment(&mut string, &bytes[segment..escaped_end], shrink) {
            return bytes.len();
        }
        let mut piece = escaped_end;
        while piece < end {
            let mut to = (piece + SEGMENT_BYTES).min(end);
            while to < end && (bytes[to] & 0xC0) == 0x80 {
                to += 1;
            }
            if !self.segment(&mut string, &bytes[piece..to], 0) {
                return bytes.len();
            }
            piece = to;
        }
        if string.escape_len > 0 {
            self.string = Some(string);
            return bytes.len();
        }
        if closed {
            self.close_string(string);
            self.keep(b"\"");
            return end + 1;
        }
        self.string = Some(string);
        bytes.len()
    }

    /// Bytes inside a string that is skipped ([`Scan::skim`]): up to and including its
    /// closing quote. An escape cut by the end of the last chunk escapes the first
    /// byte here when only its backslash came.
    fn skim_string(&mut self, mut string: Str, bytes: &[u8]) -> usize {
        let escaped_first = string.escape_len == 1;
        string.escape_len = 0;
        match run::closing_quote(bytes, escaped_first) {
            Ok(quote) => {
                string.ring = None;
                string.high = false;
                string.utf8_len = 0;
                self.close_string(string);
                self.keep(b"\"");
                quote + 1
            }
            Err(ends_escaping) => {
                string.escape_len = usize::from(ends_escaping);
                self.string = Some(string);
                bytes.len()
            }
        }
    }

    /// One segment of a string's raw content (`shrink`: its escapes' raw bytes minus
    /// what they decode to): checked, counted, kept or held. `false` if invalid.
    fn segment(&mut self, string: &mut Str, raw: &[u8], shrink: usize) -> bool {
        if raw.is_empty() {
            return true;
        }
        if !self.check_span(string, raw) {
            return false;
        }
        let before = string.decoded;
        string.decoded += raw.len() - shrink;
        self.string_content(string, raw, before);
        true
    }

    /// Check the raw bytes of a span of a string: no raw control character, UTF-8
    /// throughout (a sequence cut by the span's end completed by the next one), and
    /// note whether it may quote an input (V3). `false` (and invalid) if not.
    fn check_span(&mut self, string: &mut Str, span: &[u8]) -> bool {
        if span.iter().fold(false, |bad, &b| bad | (b < 0x20)) {
            self.invalid = true;
            return false;
        }
        let rest = span;
        match simdutf8::compat::from_utf8(rest) {
            Ok(_) => {}
            Err(error) if error.error_len().is_none() => {
                let tail = &rest[error.valid_up_to()..];
                string.utf8[..tail.len()].copy_from_slice(tail);
                string.utf8_len = tail.len();
            }
            Err(_) => {
                self.invalid = true;
                return false;
            }
        }
        if !string.may_quote && matches!(string.place, Place::Block(..) | Place::Structured) {
            let mut probe = [0u8; 10];
            let n = span.len().min(5);
            probe[..5].copy_from_slice(&string.last);
            probe[5..5 + n].copy_from_slice(&span[..n]);
            string.may_quote =
                INPUT_FINDER.find(&probe[..5 + n]).is_some() || INPUT_FINDER.find(span).is_some();
        }
        if span.len() >= 5 {
            string.last.copy_from_slice(&span[span.len() - 5..]);
        } else {
            string.last.rotate_left(span.len());
            string.last[5 - span.len()..].copy_from_slice(span);
        }
        true
    }

    /// Raw content bytes of a string (a run or an escape), to the skeleton or the ring.
    /// `decoded_before`: the string's decoded length before `raw`.
    fn string_content(&mut self, string: &mut Str, raw: &[u8], decoded_before: usize) {
        if raw.is_empty() {
            return;
        }
        if string.first_unseen() {
            string.first = first_decoded(raw);
        }
        if string.dropped {
            return;
        }
        if let Some(ring) = string.ring.as_mut() {
            if ring
                .checkpoints
                .back()
                .is_none_or(|&(at, _)| ring.bytes.len() - at >= CHECKPOINT_EVERY)
            {
                ring.checkpoints
                    .push_back((ring.bytes.len(), decoded_before));
            }
            ring.bytes.extend(raw);
            ring.trim(self.need, string.decoded);
            return;
        }
        match string.place {
            Place::Key => {
                if let Some(Frame::Object { key }) = self.stack.last_mut() {
                    let len = key.len as usize;
                    if raw.contains(&b'\\') || len + raw.len() > key.bytes.len() {
                        key.other = true;
                    } else {
                        key.bytes[len..len + raw.len()].copy_from_slice(raw);
                        key.len += raw.len() as u8;
                    }
                }
                self.keep(raw);
            }
            _ if string.decoded < self.threshold => self.keep(raw),
            Place::Block(..) | Place::Structured
                if self.holes.len() < MAX_HOLES && !self.overflowed =>
            {
                // From here on only the tail is held: move what the skeleton has.
                let mut bytes = self.skeleton.split_off(string.start);
                let mut checkpoints = VecDeque::new();
                checkpoints.push_back((0, 0));
                bytes.extend_from_slice(raw);
                string.ring = Some(Ring {
                    bytes: bytes.into(),
                    checkpoints,
                });
            }
            _ => {
                // Dropped whole: the skeleton keeps `""` in its place.
                self.skeleton.truncate(string.start);
                string.dropped = true;
                self.dropped = true;
            }
        }
    }

    fn close_string(&mut self, string: Str) {
        if string.high || string.utf8_len > 0 {
            self.invalid = true;
            return;
        }
        self.expect = match string.place {
            Place::Key => Expect::Value,
            _ => Expect::Next,
        };
        if string.place == Place::Key
            && self.stack.len() == 1
            && let Some(Frame::Object { key }) = self.stack.last()
            && key.is(b"result")
        {
            self.result = true;
        }
        let Some(ring) = string.ring else {
            return;
        };
        let (block, block_text, pointer) = match string.place {
            Place::Block(block, block_text) => (block, block_text, None),
            Place::Structured => (
                0,
                false,
                self.stack.get(2..).and_then(|f| self.pointer_of(f)),
            ),
            _ => return,
        };
        if string.place == Place::Structured && pointer.is_none() {
            self.dropped = true;
            return;
        }
        let hole = Hole {
            block,
            block_text,
            pointer,
            first: string.first,
            decoded_len: string.decoded,
            may_quote_inputs: string.may_quote,
        };
        self.holes.push((string.start, hole, ring));
    }
}

impl Str {
    /// Whether no content byte has been seen yet.
    fn first_unseen(&self) -> bool {
        self.first == 0
    }
}

impl Ring {
    /// Drop raw bytes from the front, up to the last checkpoint that still leaves
    /// `need` decoded bytes behind it.
    fn trim(&mut self, need: usize, decoded: usize) {
        while self.checkpoints.len() >= 2 && decoded - self.checkpoints[1].1 >= need {
            self.checkpoints.pop_front();
        }
        let Some(&(front, _)) = self.checkpoints.front() else {
            return;
        };
        if front > 0 {
            self.bytes.drain(..front);
            for checkpoint in &mut self.checkpoints {
                checkpoint.0 -= front;
            }
        }
    }
}

/// What one whole escape (`\\x` or `\\uXXXX`) decodes to, in UTF-8 bytes (a surrogate
/// pair's 4 counted at its high half); `None` if it is not a valid one here.
fn escape_decoded(string: &mut Str, escape: &[u8]) -> Option<usize> {
    if string.utf8_len > 0 {
        return None; // a UTF-8 sequence cut by an escape
    }
    string.last = [0; 5];
    match escape.get(1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') if !string.high => Some(1),
        Some(b'u') => match hex4(&escape[2..])? {
            0xD800..=0xDBFF if !string.high => {
                string.high = true;
                Some(4)
            }
            0xDC00..=0xDFFF if string.high => {
                string.high = false;
                Some(0)
            }
            0xD800..=0xDFFF => None,
            _ if string.high => None,
            unit => {
                if (0x20..0x7f).contains(&unit) {
                    string.may_quote = true;
                }
                char::from_u32(unit).map(char::len_utf8)
            }
        },
        _ => None,
    }
}

/// The first byte a string's raw content decodes to (0x80 for any character that is
/// not ASCII).
fn first_decoded(raw: &[u8]) -> u8 {
    match raw {
        [b'\\', b'u', hex @ ..] => hex4(hex)
            .and_then(|unit| u8::try_from(unit).ok())
            .filter(u8::is_ascii)
            .unwrap_or(0x80),
        [b'\\', escaped, ..] => match escaped {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            other => *other,
        },
        [first, ..] if first.is_ascii() => *first,
        _ => 0x80,
    }
}

/// Finds `input_` (the start of pydantic's `input_value=` and `input_type=`, V3).
static INPUT_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"input_"));

/// The length of the escape that starts `bytes` (at its `\`).
fn escape_len(bytes: &[u8]) -> usize {
    match bytes.get(1) {
        Some(b'u') => 6,
        _ => 2,
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

fn hex4(hex: &[u8]) -> Option<u32> {
    hex.get(..4)?.iter().try_fold(0, |value, &digit| {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'a'..=b'f' => digit - b'a' + 10,
            b'A'..=b'F' => digit - b'A' + 10,
            _ => return None,
        };
        Some(value << 4 | u32::from(nibble))
    })
}

/// Where the held tail of a ring starts being readable on its own: not on a UTF-8
/// continuation byte, nor on the low half of a surrogate pair whose high half is gone.
fn held_start(ring: &[u8]) -> &[u8] {
    let mut at = 0;
    if ring.len() >= 6
        && ring[0] == b'\\'
        && ring[1] == b'u'
        && matches!(hex4(&ring[2..6]), Some(0xDC00..=0xDFFF))
    {
        at = 6;
    }
    while at < ring.len() && (ring[at] & 0xC0) == 0x80 {
        at += 1;
    }
    &ring[at..]
}
