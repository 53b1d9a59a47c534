//! Placement: where the bytes of a scanned message go. Structure and short strings
//! are kept in the skeleton (up to `MAX_SKELETON_BYTES`); a long string of a
//! `tools/call` result's content block or `structuredContent` is held in part — only
//! the ends a cut can keep (`HeldEnds`, from the core): its head, as it came, and its
//! tail, in a ring trimmed at checkpoints — and becomes a [`Hole`]; any other long
//! string is dropped whole. What is not held of a result is
//! told to the core ([`Scanned::held_in_part`]).

use std::collections::VecDeque;

use backstop_core::limit::{HeldEnds, HeldInPart};
use backstop_core::{ToolResult, call::Content};
use serde_json::Value;

use super::lexer::{first_decoded, hex4};
use super::{Container, Hole, MAX_SKELETON_BYTES, Scan, Scanned, Str};

/// The most strings held in part in one message; more and the message is read whole.
const MAX_HOLES: usize = 8;

/// Keys under which a content block's string may be held in part.
const BLOCK_KEYS: [&[u8]; 3] = [b"text", b"data", b"blob"];

/// Checkpoints are this far apart (raw bytes), at least.
pub(super) const CHECKPOINT_EVERY: usize = 64 << 10;

/// Where a string being scanned goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// A key: collected into its object's key.
    Key,
    /// A value that may be held in part: `(block index, is the block's text)`.
    Block(usize, bool),
    /// A value of `structuredContent`, which may be held in part.
    Structured,
    /// Any other value.
    Other,
}

/// The ends of a string held in part: its head, raw (escaped) bytes up to a point
/// between characters, and its tail, raw bytes trimmed from the front at checkpoints
/// that keep at least `need` decoded bytes behind them — a ring buffer, so that each
/// byte is copied in once and trimming moves none.
#[derive(Debug)]
pub(super) struct Ring {
    /// The head held (empty when only the tail is).
    pub(super) head: Vec<u8>,
    /// The UTF-8 bytes the head decodes to.
    head_decoded: usize,
    pub(super) bytes: VecDeque<u8>,
    /// `(offset in bytes, decoded count there)`; positions outside escapes.
    checkpoints: VecDeque<(usize, usize)>,
}

impl Ring {
    /// The raw bytes held.
    pub(super) fn len(&self) -> usize {
        self.head.len() + self.bytes.len()
    }

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

impl Scanned {
    /// What is not held of `result`, a `tools/call` result read from the skeleton, for
    /// the core; `None` when a string was held in part elsewhere (in a task's state).
    ///
    /// ```
    /// let scanned = backstop_jsonrpc::scan::Scanned::default();
    /// assert!(scanned.held_in_part(&backstop_core::ToolResult::text("x")).unwrap().is_whole());
    /// ```
    pub fn held_in_part(&self, result: &ToolResult) -> Option<HeldInPart> {
        self.held_where(result, false)
    }

    /// [`held_in_part`](Self::held_in_part) for the outcome inside a task's state
    /// (2026-07-28: the state's `result`, in `tasks/get` or `notifications/tasks`);
    /// `None` when a string was held in part elsewhere.
    ///
    /// ```
    /// use backstop_jsonrpc::scan::Scan;
    /// let mut scan = Scan::new(1_000);
    /// let text = "x".repeat(3_000_000);
    /// scan.push(format!(r#"{{"id":7,"result":{{"taskId":"t","status":"completed","result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}}}"#).as_bytes());
    /// let scanned = scan.finish();
    /// assert_eq!(scanned.holes.len(), 1, "held in part");
    /// let outcome = backstop_core::ToolResult::text("");
    /// assert!(!scanned.held_in_task_state(&outcome).expect("in the state").is_whole());
    /// assert!(scanned.held_in_part(&outcome).is_none(), "not a call's own result");
    /// ```
    pub fn held_in_task_state(&self, result: &ToolResult) -> Option<HeldInPart> {
        self.held_where(result, true)
    }

    fn held_where(&self, result: &ToolResult, in_task_state: bool) -> Option<HeldInPart> {
        if self
            .holes
            .iter()
            .any(|hole| hole.in_task_state != in_task_state)
        {
            return None;
        }
        let mut held = HeldInPart::default();
        for hole in &self.holes {
            let len =
                |text: Option<&str>| hole.decoded_len.saturating_sub(text.map_or(0, str::len));
            let at = hole.held_head;
            held = match &hole.pointer {
                Some(pointer) => {
                    let text = result
                        .structured_content
                        .as_ref()
                        .and_then(|v| v.pointer(pointer));
                    match text.and_then(Value::as_str) {
                        Some(text) => {
                            held.with_structured_gap(pointer.clone(), at, len(Some(text)))
                        }
                        None => held.with_other_block(),
                    }
                }
                None => match result.content.get(hole.block).and_then(Content::as_text) {
                    Some(text) if hole.block_text => held
                        .with_text_gap(hole.block, at, len(Some(text)))
                        .with_text_start(hole.block, hole.first),
                    _ => held.with_other_block(),
                },
            };
            if hole.may_quote_inputs {
                held = held.quoting_inputs();
            }
        }
        Some(held)
    }
}

impl Scan {
    pub(super) fn keep(&mut self, bytes: &[u8]) {
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

    /// The stack from the tool result's member of the message on: the message's
    /// `result` member (a `tools/call` result), or — a task's state carrying its
    /// call's outcome (2026-07-28) — the state's `result` member, under the message's
    /// `result` (`tasks/get`) or `params` (`notifications/tasks`); and whether it is
    /// the latter.
    fn result_stack(&self) -> (&[Container], bool) {
        match self.stack.as_slice() {
            [outer, rest @ ..]
                if (key_is(outer, b"result") || key_is(outer, b"params"))
                    && rest.first().is_some_and(|state| key_is(state, b"result")) =>
            {
                (rest, true)
            }
            all => (all, false),
        }
    }

    /// Where a value string at the current position may go.
    pub(super) fn value_place(&self) -> Place {
        let key = key_is;
        let block_key = |container: &Container| BLOCK_KEYS.iter().find(|name| key(container, name));
        match self.result_stack().0 {
            [top, result, Container::Array { index }, block]
                if key(top, b"result") && key(result, b"content") =>
            {
                match block_key(block) {
                    Some(name) => Place::Block(*index, *name == b"text"),
                    None => Place::Other,
                }
            }
            [top, result, Container::Array { index }, resource, inner]
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

    /// The JSON pointer (into `structuredContent`) of the value at the end of `containers`,
    /// if every key on the way is known.
    fn pointer_of(&self, containers: &[Container]) -> Option<String> {
        let mut pointer = String::new();
        for container in containers {
            pointer.push('/');
            match container {
                Container::Array { index } => pointer.push_str(&index.to_string()),
                Container::Object { key } if !key.other => {
                    let key = std::str::from_utf8(&key.bytes[..key.len as usize]).ok()?;
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                Container::Object { .. } => return None,
            }
        }
        Some(pointer)
    }

    /// Raw content bytes of a string (a run or an escape), to the skeleton or the ring.
    /// `decoded_before`: the string's decoded length before `raw`.
    pub(super) fn string_content(&mut self, string: &mut Str, raw: &[u8], decoded_before: usize) {
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
            if string.ends.tail == 0 {
                return; // the head alone is held
            }
            if ring
                .checkpoints
                .back()
                .is_none_or(|&(at, _)| ring.bytes.len() - at >= CHECKPOINT_EVERY)
            {
                ring.checkpoints
                    .push_back((ring.bytes.len(), decoded_before));
            }
            ring.bytes.extend(raw);
            ring.trim(tail_need(string.ends), string.decoded);
            return;
        }
        match string.place {
            Place::Key => {
                if let Some(Container::Object { key }) = self.stack.last_mut() {
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
            _ if string.decoded < threshold(string.ends) => self.keep(raw),
            Place::Block(..) | Place::Structured
                if self.holes.len() < MAX_HOLES && !self.overflowed =>
            {
                // From here on only the ends are held: move what the skeleton has, its
                // head (if one is held) apart, the rest into the tail's ring.
                let mut bytes = self.skeleton.split_off(string.start);
                bytes.extend_from_slice(raw);
                let (split, head_decoded) = head_split(&bytes, string.ends.head).unwrap_or((0, 0));
                let mut rest = bytes.split_off(split);
                if string.ends.tail == 0 {
                    rest.clear();
                }
                let mut checkpoints = VecDeque::new();
                checkpoints.push_back((0, head_decoded));
                string.ring = Some(Ring {
                    head: bytes,
                    head_decoded,
                    bytes: rest.into(),
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

    /// A string closed: if its tail was held in part, it becomes a [`Hole`] (where
    /// it goes in the skeleton, and what the core needs to know of its head).
    pub(super) fn hold_closed(&mut self, string: Str) {
        let Some(ring) = string.ring else {
            return;
        };
        let (stack, in_task_state) = self.result_stack();
        let (block, block_text, pointer) = match string.place {
            Place::Block(block, block_text) => (block, block_text, None),
            Place::Structured => (0, false, stack.get(2..).and_then(|f| self.pointer_of(f))),
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
            held_head: ring.head_decoded,
            decoded_len: string.decoded,
            may_quote_inputs: string.may_quote,
            in_task_state,
        };
        self.holes.push((string.start, hole, ring));
    }
}

/// Whether `container` is an object whose current key is `name`.
fn key_is(container: &Container, name: &[u8]) -> bool {
    matches!(container, Container::Object { key } if key.is(name))
}

/// The decoded bytes of a tail held for `ends`: a little more than the core asks, as
/// the held tail may start a few bytes in (at a character boundary).
fn tail_need(ends: HeldEnds) -> usize {
    match ends.tail {
        0 => 0,
        tail => tail + 16,
    }
}

/// The decoded length past which a string is held in part rather than whole: past
/// what the core holds whole ([`HeldEnds::held_whole_up_to`]) and the tail held, by a
/// checkpoint's distance.
pub(super) fn threshold(ends: HeldEnds) -> usize {
    tail_need(ends).max(ends.held_whole_up_to()) + CHECKPOINT_EVERY
}

/// Where a held head of at least `need` decoded bytes can end in a string's raw
/// (escaped, checked) content `raw`: the first place past them between characters
/// and outside escapes (a surrogate pair's escapes taken together), with the decoded
/// bytes before it. `(0, 0)` for a `need` of 0; `None` if `raw` has no such place.
pub(super) fn head_split(raw: &[u8], need: usize) -> Option<(usize, usize)> {
    let mut at = 0;
    let mut decoded = 0;
    while decoded < need || raw.get(at).is_some_and(|&b| b & 0xC0 == 0x80) {
        match *raw.get(at)? {
            b'\\' => match raw.get(at + 1)? {
                b'u' => {
                    let unit = hex4(raw.get(at + 2..at + 6)?)?;
                    if (0xD800..0xDC00).contains(&unit) {
                        at += 12; // its low half follows
                        decoded += 4;
                    } else {
                        at += 6;
                        decoded += char::from_u32(unit).map_or(3, char::len_utf8);
                    }
                }
                _ => {
                    at += 2;
                    decoded += 1;
                }
            },
            _ => {
                at += 1;
                decoded += 1;
            }
        }
    }
    (at <= raw.len()).then_some((at, decoded))
}

/// Where the held tail of a ring starts being readable on its own: not on a UTF-8
/// continuation byte, nor on the low half of a surrogate pair whose high half is gone.
pub(super) fn held_start(ring: &[u8]) -> &[u8] {
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
