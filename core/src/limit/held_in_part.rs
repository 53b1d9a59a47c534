//! What a streaming adapter did not hold of a result (SPEC B3), so that the limit can
//! decide on the part it holds as it would on the whole (L13), and how much of each
//! end of a long string it must hold for that under each keep policy (L16).

use super::cutter::share_of;
use super::escape;
use super::joined::Gap;
use super::{Keep, Limit, PRE_CONTEXT_BYTES};
use crate::tool_call::MAX_RECOGNIZED_BYTES;

/// How many bytes of each end of a long string a streaming adapter holds (SPEC B3,
/// L13): what the keep policy of the call's tool can keep ([`Limit::held_ends`]).
///
/// ```
/// use backstop_core::{Limit, limit::{HeldEnds, HeldInPart, Keep}};
/// let limit = Limit::new(1_000).unwrap().keep_for("git_log", Keep::Head);
/// assert_eq!(limit.held_ends(Some("capture_pane")), HeldEnds { head: 0, tail: HeldInPart::min_held_bytes(1_000) });
/// assert_eq!(limit.held_ends(Some("git_log")).tail, 0);
/// // Before the tool is known: enough for every policy the limit has.
/// let either = limit.held_ends(None);
/// assert!(either.head > 1_000 && either.tail > 1_000);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeldEnds {
    /// The UTF-8 bytes of its head to hold.
    pub head: usize,
    /// The UTF-8 bytes of its tail to hold.
    pub tail: usize,
}

impl HeldEnds {
    /// The ends a cut under `keep` at a cap of `max_bytes` can keep.
    pub fn for_keep(max_bytes: usize, keep: Keep) -> Self {
        Self {
            head: HeldInPart::min_held_head_bytes(max_bytes, keep),
            tail: HeldInPart::min_held_tail_bytes(max_bytes, keep),
        }
    }

    /// Enough for both `self` and `other`.
    pub fn or(self, other: Self) -> Self {
        Self {
            head: self.head.max(other.head),
            tail: self.tail.max(other.tail),
        }
    }

    /// The longest string an adapter holds whole rather than by these ends (B3, L13):
    /// past both ends, and past the first text the core may need whole to recognise a
    /// failure ([`MAX_RECOGNIZED_BYTES`]: what is not held of a longer text decides
    /// nothing, as [`shape_tool_call_in_part`](crate::call::shape_tool_call_in_part)
    /// requires).
    ///
    /// ```
    /// use backstop_core::call::MAX_RECOGNIZED_BYTES;
    /// use backstop_core::limit::{HeldEnds, Keep};
    /// assert_eq!(HeldEnds::for_keep(1_000, Keep::Tail).held_whole_up_to(), MAX_RECOGNIZED_BYTES);
    /// let ends = HeldEnds::for_keep(4_000_000, Keep::Head);
    /// assert_eq!(ends.held_whole_up_to(), ends.head);
    /// ```
    pub fn held_whole_up_to(self) -> usize {
        self.head.max(self.tail).max(MAX_RECOGNIZED_BYTES)
    }
}

impl Limit {
    /// How much of each end of a long string of a result a streaming adapter must hold
    /// for the cut of what it holds to be the cut of the whole (L13, B3): for a call of
    /// `tool`, what `tool`'s keep policy can keep (L16); before the tool is known
    /// (`None`), enough for every policy of this limit.
    pub fn held_ends(&self, tool: Option<&str>) -> HeldEnds {
        match tool {
            Some(tool) => HeldEnds::for_keep(self.max_bytes, self.keep_of(tool)),
            None => self.keep_per_tool.values().fold(
                HeldEnds::for_keep(self.max_bytes, self.keep),
                |ends, &keep| ends.or(HeldEnds::for_keep(self.max_bytes, keep)),
            ),
        }
    }
}

/// What an adapter that reads a result as it streams did not hold of it: for the text
/// blocks it held in part, which bytes it let go (SPEC B3) — the head, when it held the
/// tail; the tail, when it held the head; the middle, when it held both. A cut keeps at
/// most the cap of the text, so a suffix of [`HeldInPart::min_held_bytes`] (a prefix
/// of [`HeldInPart::min_held_head_bytes`] for a policy that keeps a head, L16) decides
/// it exactly as the whole text would.
///
/// ```
/// use backstop_core::limit::HeldInPart;
/// let held = HeldInPart::default().with_text_head(0, 5_000_000);
/// assert_eq!(held.text_head(0), 5_000_000);
/// assert!(!held.is_whole());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldInPart {
    /// `(block index, the part not held)`, for text blocks held in part.
    text_gaps: Vec<(usize, Gap)>,
    /// A block other than text holds a string held in part (any cut drops such a block).
    pub(super) other_blocks: bool,
    /// A string not held whole may hold pydantic's `input_value=` (V3): an error result
    /// with one must be read whole, its every fragment redacted.
    may_quote_inputs: bool,
    /// `(JSON pointer, the part not held)`, for strings of `structuredContent` held in
    /// part.
    pub(super) structured_gaps: Vec<(String, Gap)>,
    /// `(block index, first byte)`: what a text held in part starts with.
    text_starts: Vec<(usize, u8)>,
}

impl HeldInPart {
    /// The least a text held in part must hold of its tail (in UTF-8 bytes) for a cap
    /// of `max_bytes`: the cap, the longest escape sequence before it, and the
    /// grapheme context before that (L8).
    ///
    /// ```
    /// let least = backstop_core::limit::HeldInPart::min_held_bytes(1_000_000);
    /// assert!(least > 1_000_000 && least < 1_100_000);
    /// ```
    pub fn min_held_bytes(max_bytes: usize) -> usize {
        max_bytes + escape::LOOKBACK + PRE_CONTEXT_BYTES + 8
    }

    /// The least a text held in part must hold of its head (in UTF-8 bytes) for a cap
    /// of `max_bytes` under `keep` (L16): nothing for [`Keep::Tail`]; else the head's
    /// share of the cap and the longest escape sequence after it (L8).
    ///
    /// ```
    /// use backstop_core::limit::{HeldInPart, Keep};
    /// assert_eq!(HeldInPart::min_held_head_bytes(1_000_000, Keep::Tail), 0);
    /// let head = HeldInPart::min_held_head_bytes(1_000_000, Keep::Head);
    /// assert!(head > 1_000_000 && head < 1_100_000);
    /// let fifth = HeldInPart::min_held_head_bytes(1_000_000, Keep::HeadAndTail { head_per_mille: 200 });
    /// assert!(fifth > 200_000 && fifth < 300_000);
    /// ```
    pub fn min_held_head_bytes(max_bytes: usize, keep: Keep) -> usize {
        let share = match keep {
            Keep::Tail => return 0,
            Keep::Head => max_bytes,
            Keep::HeadAndTail { head_per_mille } => share_of(max_bytes, head_per_mille),
        };
        share + escape::LOOKBACK + 8 + 1
    }

    /// The least a text held in part must hold of its tail (in UTF-8 bytes) for a cap
    /// of `max_bytes` under `keep` (L16): [`min_held_bytes`](Self::min_held_bytes),
    /// or nothing for [`Keep::Head`].
    ///
    /// ```
    /// use backstop_core::limit::{HeldInPart, Keep};
    /// assert_eq!(HeldInPart::min_held_tail_bytes(1_000, Keep::Head), 0);
    /// assert_eq!(HeldInPart::min_held_tail_bytes(1_000, Keep::Tail), HeldInPart::min_held_bytes(1_000));
    /// ```
    pub fn min_held_tail_bytes(max_bytes: usize, keep: Keep) -> usize {
        match keep {
            Keep::Head => 0,
            Keep::Tail | Keep::HeadAndTail { .. } => Self::min_held_bytes(max_bytes),
        }
    }

    /// Text block `block` is held without its first `bytes` bytes.
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(2, 10);
    /// assert_eq!(held.text_head(2), 10);
    /// assert_eq!(held.text_head(1), 0);
    /// ```
    pub fn with_text_head(self, block: usize, bytes: usize) -> Self {
        self.with_text_gap(block, 0, bytes)
    }

    /// Text block `block` is held without the `bytes` bytes from its byte `at`: the
    /// held text is its first `at` bytes, then its end (L16: a head, or a head and a
    /// tail, held for a policy that keeps them).
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_gap(0, 2_000, 9_000_000);
    /// assert_eq!(held.text_gap(0), (2_000, 9_000_000));
    /// assert_eq!(held.text_head(0), 0, "its head is held");
    /// assert!(!held.is_whole());
    /// ```
    pub fn with_text_gap(mut self, block: usize, at: usize, bytes: usize) -> Self {
        self.text_gaps.retain(|&(b, _)| b != block);
        self.text_gaps.push((block, Gap { at, len: bytes }));
        self
    }

    /// Where the part of text block `block` that is not held starts, and how long it is
    /// (`(0, 0)`: held whole).
    pub fn text_gap(&self, block: usize) -> (usize, usize) {
        let gap = self.gap_of(block);
        (gap.at, gap.len)
    }

    pub(super) fn gap_of(&self, block: usize) -> Gap {
        self.text_gaps
            .iter()
            .find_map(|&(b, gap)| (b == block).then_some(gap))
            .unwrap_or(Gap::NONE)
    }

    /// The text of block `block`, held in part, starts with `byte` (a text that starts
    /// with `{` or `[` may be the serialization of `structuredContent`; one whose start
    /// is not known is taken to be one).
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(0, 9).with_text_start(0, b'P');
    /// assert!(!held.is_whole());
    /// ```
    pub fn with_text_start(mut self, block: usize, byte: u8) -> Self {
        self.text_starts.retain(|&(b, _)| b != block);
        self.text_starts.push((block, byte));
        self
    }

    /// The string at `pointer` (a JSON pointer into `structuredContent`) is held
    /// without its first `bytes` bytes.
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_structured_head("/result", 7);
    /// assert_eq!(held.structured_head("/result"), 7);
    /// assert_eq!(held.structured_head("/other"), 0);
    /// ```
    pub fn with_structured_head(self, pointer: impl Into<String>, bytes: usize) -> Self {
        self.with_structured_gap(pointer, 0, bytes)
    }

    /// The string at `pointer` (a JSON pointer into `structuredContent`) is held
    /// without the `bytes` bytes from its byte `at`.
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_structured_gap("/log", 100, 7);
    /// assert_eq!(held.structured_gap("/log"), (100, 7));
    /// assert_eq!(held.structured_head("/log"), 0);
    /// ```
    pub fn with_structured_gap(
        mut self,
        pointer: impl Into<String>,
        at: usize,
        bytes: usize,
    ) -> Self {
        let pointer = pointer.into();
        self.structured_gaps.retain(|(p, _)| *p != pointer);
        self.structured_gaps.push((pointer, Gap { at, len: bytes }));
        self
    }

    /// The bytes of the head of the `structuredContent` string at `pointer` not held.
    pub fn structured_head(&self, pointer: &str) -> usize {
        let (at, len) = self.structured_gap(pointer);
        if at == 0 { len } else { 0 }
    }

    /// Where the part of the `structuredContent` string at `pointer` that is not held
    /// starts, and how long it is (`(0, 0)`: held whole).
    pub fn structured_gap(&self, pointer: &str) -> (usize, usize) {
        let gap = self.structured_gap_of(pointer);
        (gap.at, gap.len)
    }

    pub(super) fn structured_gap_of(&self, pointer: &str) -> Gap {
        self.structured_gaps
            .iter()
            .find_map(|(p, gap)| (p == pointer).then_some(*gap))
            .unwrap_or(Gap::NONE)
    }

    /// Whether text block `block` (`text`: what is held of it) may be a serialization
    /// of a value whose JSON starts with `opener`.
    pub(super) fn may_serialize(&self, block: usize, text: &str, opener: u8) -> bool {
        let start = match self.gap_of(block) {
            Gap { at: 0, len: 1.. } => self
                .text_starts
                .iter()
                .find_map(|&(b, byte)| (b == block).then_some(byte)),
            _ => text.bytes().find(|b| !b.is_ascii_whitespace()),
        };
        may_start_serialization(start, opener)
    }

    /// A block other than text is held in part (its data or blob, say).
    ///
    /// ```
    /// assert!(!backstop_core::limit::HeldInPart::default().with_other_block().is_whole());
    /// ```
    pub fn with_other_block(mut self) -> Self {
        self.other_blocks = true;
        self
    }

    /// A string not held whole may hold `input_value=` or `input_type=` (V3).
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(0, 9).quoting_inputs();
    /// assert!(held.may_quote_inputs());
    /// ```
    pub fn quoting_inputs(mut self) -> Self {
        self.may_quote_inputs = true;
        self
    }

    /// The bytes of text block `block`'s head not held (0: its head is held).
    pub fn text_head(&self, block: usize) -> usize {
        match self.gap_of(block) {
            Gap { at: 0, len } => len,
            _ => 0,
        }
    }

    /// Whether everything is held.
    pub fn is_whole(&self) -> bool {
        self.text_gaps.iter().all(|&(_, gap)| gap.len == 0)
            && self.structured_gaps.iter().all(|(_, gap)| gap.len == 0)
            && !self.other_blocks
    }

    /// Whether a string not held whole may quote a rejected input (V3).
    pub fn may_quote_inputs(&self) -> bool {
        self.may_quote_inputs
    }
}

/// Whether a text that starts with `first` (its first byte decoded; `None` when it is
/// empty) may be the serialization of a value whose JSON starts with `opener` (`{` or
/// `[`), which a cut must then rewrite whole (L15). A streaming adapter asks it of a
/// text's first character to know whether its held ends can decide its cut.
///
/// ```
/// use backstop_core::limit::may_start_serialization;
/// assert!(may_start_serialization(Some(b'{'), b'{'));
/// assert!(may_start_serialization(Some(0x0c), b'['), "whitespace may come first");
/// assert!(may_start_serialization(None, b'{'));
/// assert!(!may_start_serialization(Some(b'l'), b'{'));
/// assert!(!may_start_serialization(Some(b'['), b'{'));
/// ```
pub fn may_start_serialization(first: Option<u8>, opener: u8) -> bool {
    first.is_none_or(|b| b == opener || b.is_ascii_whitespace())
}
