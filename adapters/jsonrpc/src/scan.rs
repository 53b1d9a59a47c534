//! An incremental scan of one JSON-RPC message as its bytes arrive, holding about as
//! much of it as the cap can keep (SPEC B3).
//!
//! The scan keeps the message's *skeleton*: every byte of it except the middle of long
//! strings. A long string in a content block of a result (`result.content[i].text`,
//! `.data`, `.blob`, or the same in its `resource`) keeps only the ends a cut can keep
//! under the keep policy of the call's tool (L16): its tail, its head, or both, as the
//! core says ([`HeldEnds`], `Limit::held_ends`) — with its exact length counted; any
//! other long string is dropped whole and the scan says so. The scan knows whether the
//! message is JSON at the byte where it stops being JSON (B4): its grammar is read as
//! the bytes come, and the dropped middles are checked as they pass (UTF-8, escapes,
//! control characters, surrogate pairs).
//!
//! The scan also notes the top-level `id` and `method` as soon as they are complete, so
//! that a message that cannot need a change can be sent on before its end.
//!
//! This file holds the scan's state and its entry points; the work is in four files
//! by job: `scan/lexer.rs` reads the bytes as JSON (structure, strings, escapes,
//! UTF-8), `scan/scalar.rs` its numbers and literals, `scan/run.rs` the plain runs of a
//! long string 64 bytes at a time, and `scan/place.rs` decides where each string's
//! bytes go (the skeleton, a held tail, or nowhere).
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

use crate::message::Envelope;
use backstop_core::limit::{HeldEnds, Keep};

use place::{Place, Ring, held_start};
use scalar::Scalar;

mod lexer;
mod place;
mod run;
mod scalar;

/// A skipped string's closing quote, found 64 bytes at a time (also for the outline
/// of a line the end of a server's output may cut off: `crate::stream`).
pub(crate) use run::closing_quote;

/// The most bytes the skeleton holds; past it the message is read whole if it is one
/// that may need a change (B2 still bounds that), and sent on unread otherwise.
pub const MAX_SKELETON_BYTES: usize = 8 << 20;

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
    /// The bytes are not valid JSON text: its grammar, read as they came, strings,
    /// numbers and literals included.
    pub invalid: bool,
    /// Where and why the scan found them not to be JSON, when it did.
    pub broken: Option<Broken>,
    /// The message is a JSON array (a batch).
    pub batch: bool,
    /// The first top-level `id`, as raw JSON.
    pub id: Option<Vec<u8>>,
    /// The top-level `method`, as raw JSON (none when it is `null`).
    pub method: Option<Vec<u8>>,
}

impl Scanned {
    /// The skeleton read as one message ([`Envelope::parse`]); `None` when it is not
    /// held or not one. When the scan found the message to be JSON, what it checked as
    /// the bytes came (UTF-8, surrogate escapes in pairs) is not checked again: for an
    /// answer cut to 1 MB of escaped text, that second check cost as much as the parse.
    ///
    /// ```
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.push(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#);
    /// let scanned = scan.finish();
    /// assert!(scanned.envelope().unwrap().is_response());
    ///
    /// // Not JSON (a lone surrogate, in a member a parser skips): no message.
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.push(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"x":"\ud800"}}"#);
    /// let scanned = scan.finish();
    /// assert!(scanned.invalid && scanned.envelope().is_none());
    /// ```
    pub fn envelope(&self) -> Option<Envelope<'_>> {
        match (self.overflowed, self.invalid) {
            (true, _) => None,
            (false, true) => Envelope::parse(&self.skeleton),
            (false, false) => Envelope::parse_checked(&self.skeleton),
        }
    }
}

/// Where a message stopped being JSON, and why (B4: said in the error that replaces an
/// answer being cut, which cannot be sent as it came).
///
/// ```
/// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
/// scan.push(b"{\"id\":1,\"result\":\"a");
/// scan.push(b"\x01\"}");
/// let broken = scan.finish().broken.unwrap();
/// assert_eq!((broken.at, broken.why), (19, "a control character inside a string"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Broken {
    /// The offset of the first byte that is not JSON (the message's length when it
    /// ends too soon).
    pub at: u64,
    /// What is wrong there.
    pub why: &'static str,
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
    /// The UTF-8 bytes of its head that are held (0: only its tail is).
    pub held_head: usize,
    /// The UTF-8 bytes of the whole string.
    pub decoded_len: usize,
    /// It may hold `input_value=`/`input_type=` (V3): it holds `input_`, or an
    /// escaped printable ASCII character.
    pub may_quote_inputs: bool,
    /// It is in the outcome a task's state carries (the state's `result`, 2026-07-28),
    /// not in a `tools/call` result.
    pub in_task_state: bool,
}

/// What the next byte outside a string may be (SPEC B4: anything else is where the
/// message stops being JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// An object's first key, or its end (after `{`).
    KeyOrEnd,
    /// An object's key (after `,`).
    Key,
    /// The `:` after a key.
    Colon,
    /// A value (after `:`, after `,` in an array, or at the top).
    Value,
    /// An array's first value, or its end (after `[`).
    ValueOrEnd,
    /// A `,` or the container's end; at the top, once the message's value ended,
    /// only whitespace.
    Next,
    /// Inside a number or literal.
    Scalar(Scalar),
}

/// An open object or array, innermost last on the scan's stack.
#[derive(Debug)]
enum Container {
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

impl Str {
    /// Where an escape or a UTF-8 sequence cut by the end of what came (which ends at
    /// offset `at`) began; `at` when none was.
    fn cut_at(&self, at: u64) -> u64 {
        at - (self.escape_len + self.utf8_len) as u64
    }
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
    /// Where those bytes began.
    utf8_at: u64,
    /// It is the first text of the result's content.
    first_text: bool,
    may_quote: bool,
    /// The first byte it decodes to, once seen (0: none yet).
    first: u8,
    /// What of its ends it holds if it is held in part (the scan's, when it opened).
    ends: HeldEnds,
    /// Held in part: its head and tail.
    ring: Option<Ring>,
    /// Dropped whole.
    dropped: bool,
    /// The last bytes of the previous run, to find `input_` across runs.
    last: [u8; 5],
}

/// The incremental scan of one message: push its bytes as they come, then finish.
#[derive(Debug)]
pub struct Scan {
    /// What of a long string's ends is held, for strings opened from now on.
    ends: HeldEnds,
    skeleton: Vec<u8>,
    holes: Vec<(usize, Hole, Ring)>,
    stack: Vec<Container>,
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
    broken: Option<Broken>,
    /// The offset of the bytes being read (of the first byte of the current push).
    at: u64,
    /// Where things an answer cut without being held depends on were read.
    offsets: Offsets,
    batch: bool,
    result: bool,
    error: bool,
    /// Value strings below the top level are skipped, not read ([`Scan::skim`]).
    skimming: bool,
}

/// The offsets [`Scan::unheld_from`] decides from.
#[derive(Debug, Default)]
struct Offsets {
    /// The byte that ended the top-level `id`'s value.
    id: Option<u64>,
    /// The closing quote of the top-level `result` key.
    result: Option<u64>,
    /// The byte that ended the top-level `method`'s value.
    method: Option<u64>,
    /// The opening quote of the first text of the result's content.
    text: Option<u64>,
    /// Whether that text begins as no JSON text does; `None` until its first
    /// character is read.
    text_plain: Option<bool>,
    /// Its first raw bytes, up to an escape's six, while that is not known.
    text_start: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopKey {
    Id,
    Method,
}

impl Scan {
    /// A scan for a cap of `max_bytes` that keeps tails ([`Keep::Tail`]): strings
    /// longer than a cut could keep and than
    /// [`MAX_RECOGNIZED_BYTES`](backstop_core::call::MAX_RECOGNIZED_BYTES) are held in part.
    pub fn new(max_bytes: usize) -> Self {
        Self::holding(HeldEnds::for_keep(max_bytes, Keep::Tail))
    }

    /// A scan that holds `ends` of each long string (`Limit::held_ends`: what the keep
    /// policies that may apply can keep, L16).
    ///
    /// ```
    /// use backstop_core::{Limit, limit::Keep};
    /// use backstop_jsonrpc::scan::Scan;
    /// let limit = Limit::new(1_000).unwrap().with_keep(Keep::Head);
    /// let mut scan = Scan::holding(limit.held_ends(None));
    /// let text = format!("FIRST{}LAST", "x".repeat(3_000_000));
    /// scan.push(format!(r#"{{"id":1,"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#).as_bytes());
    /// assert!(scan.kept_bytes() < 200_000, "the head only");
    /// let scanned = scan.finish();
    /// assert_eq!(scanned.holes[0].decoded_len, text.len());
    /// let skeleton = String::from_utf8(scanned.skeleton).unwrap();
    /// assert!(skeleton.contains("FIRSTxxx") && !skeleton.contains("LAST"));
    /// ```
    pub fn holding(ends: HeldEnds) -> Self {
        Self {
            ends,
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
            broken: None,
            at: 0,
            offsets: Offsets::default(),
            batch: false,
            result: false,
            error: false,
            skimming: false,
        }
    }

    /// The first top-level `id` once its value is complete.
    pub fn top_id(&self) -> Option<&[u8]> {
        self.id.as_deref()
    }

    /// Whether a top-level `result` member has begun (the message is no error).
    pub fn top_result(&self) -> bool {
        self.result
    }

    /// Whether a top-level `error` member has begun.
    pub fn top_error(&self) -> bool {
        self.error
    }

    /// The top-level `method` once its value is complete, as raw JSON (a `method`
    /// that is `null` is none).
    pub fn top_method(&self) -> Option<&[u8]> {
        self.method.as_deref()
    }

    /// The bytes the scan keeps now: the skeleton and the tails of strings held in
    /// part (B3: about the cap, however long the message).
    ///
    /// ```
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.push(b"[1,2]");
    /// assert_eq!(scan.kept_bytes(), 5);
    /// ```
    pub fn kept_bytes(&self) -> usize {
        let open = self.string.as_ref().and_then(|s| s.ring.as_ref());
        self.skeleton.len()
            + self
                .holes
                .iter()
                .map(|(_, _, ring)| ring.len())
                .sum::<usize>()
            + open.map_or(0, Ring::len)
    }

    /// From here on, hold `ends` of each long string: once the call's tool is known,
    /// what its keep policy can keep (`Limit::held_ends`). A string already open keeps
    /// what it holds.
    ///
    /// ```
    /// use backstop_core::limit::HeldEnds;
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.hold_ends(HeldEnds { head: 5_000, tail: 0 });
    /// scan.push(format!(r#"{{"result":{{"content":[{{"text":"{}"}}]}}}}"#, "y".repeat(3 << 20)).as_bytes());
    /// assert!(scan.kept_bytes() < 100_000);
    /// assert_eq!(scan.finish().holes[0].held_head, 5_000);
    /// ```
    pub fn hold_ends(&mut self, ends: HeldEnds) {
        self.ends = ends;
    }

    /// The offset of the byte from which an answer may be cut without being held
    /// (SPEC B3, B4): the first at or past `min` where the top-level `id` and `result`
    /// have been read, no `method`, and the first text of its content has begun with
    /// what no JSON text begins with (`{`, `[`, whitespace: then a cut decides it from
    /// its held ends — it is no `structuredContent`'s serialization, L15) — and where
    /// the bytes are still JSON. The same offset whatever the chunking; `None` while
    /// there is none yet (or ever).
    ///
    /// ```
    /// let mut scan = backstop_jsonrpc::scan::Scan::new(1_000);
    /// scan.push(br#"{"id":1,"result":{"content":[{"type":"text","text":"log line"#);
    /// assert_eq!(scan.unheld_from(0), Some(51), "where the text begins");
    /// assert_eq!(scan.unheld_from(5_000), Some(5_000));
    /// let mut json = backstop_jsonrpc::scan::Scan::new(1_000);
    /// json.push(br#"{"id":1,"result":{"content":[{"type":"text","text":"{\"a\":1"#);
    /// assert_eq!(json.unheld_from(0), None, "it may be structuredContent's serialization");
    /// ```
    pub fn unheld_from(&self, min: u64) -> Option<u64> {
        let offsets = &self.offsets;
        if self.batch || offsets.text_plain != Some(true) {
            return None;
        }
        let at = offsets.id?.max(offsets.result?).max(offsets.text?).max(min);
        let at_or_before = |offset: Option<u64>| offset.is_some_and(|offset| offset <= at);
        match at_or_before(offsets.method)
            || at_or_before(self.broken.map(|b| b.at))
            || at_or_before(self.undecided_from())
        {
            true => None,
            false => Some(at),
        }
    }

    /// Where the bytes not decided yet begin: an escape or a UTF-8 sequence cut by the
    /// end of what came, which the next bytes make JSON or not. Before they come,
    /// nothing at or past it is known to be JSON.
    fn undecided_from(&self) -> Option<u64> {
        let string = self.string.as_ref()?;
        (string.escape_len + string.utf8_len > 0).then(|| string.cut_at(self.at))
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
    /// or counted. For a message of which only its top-level `id`, still to come, is
    /// wanted: what is then found (the id, the skeleton, whether it is valid) is as
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
            self.at += used as u64;
        }
    }

    /// The bytes from `offset` on are not JSON: `why`. Only the first break counts.
    fn break_at(&mut self, offset: u64, why: &'static str) {
        self.invalid = true;
        self.broken.get_or_insert(Broken { at: offset, why });
    }

    /// Why the message, if it ended here, would not be JSON: something is still open,
    /// or there is nothing at all.
    fn unfinished(&self) -> Option<&'static str> {
        if self.string.is_some() {
            Some("it ends inside a string")
        } else if matches!(self.expect, Expect::Scalar(scalar) if !scalar.complete()) {
            Some(scalar::NOT_A_SCALAR)
        } else if !self.stack.is_empty() {
            Some("it ends before its objects and arrays close")
        } else {
            (!self.started).then_some("it holds no value")
        }
    }

    /// The end of the message.
    pub fn finish(mut self) -> Scanned {
        if !self.invalid
            && let Some(why) = self.unfinished()
        {
            self.break_at(self.at, why);
        }
        let mut skeleton = Vec::new();
        let mut holes = Vec::new();
        if !self.overflowed {
            skeleton
                .reserve(self.skeleton.len() + self.holes.iter().map(|h| h.2.len()).sum::<usize>());
            let mut at = 0;
            for (offset, hole, mut ring) in self.holes {
                skeleton.extend_from_slice(&self.skeleton[at..offset]);
                skeleton.extend_from_slice(&ring.head);
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
            broken: self.broken,
            batch: self.batch,
            id: self.id,
            method: self.method,
        }
    }
}

impl Str {
    /// Whether no content byte has been seen yet.
    fn first_unseen(&self) -> bool {
        self.first == 0
    }
}
