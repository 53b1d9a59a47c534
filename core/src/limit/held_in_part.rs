//! What a streaming adapter did not hold of a result (SPEC B3), so that the limit can
//! decide on the part it holds as it would on the whole (L13).

use super::PRE_CONTEXT_BYTES;
use super::escape;

/// What an adapter that reads a result as it streams did not hold of it: for the text
/// blocks whose head it let go, how many bytes of it (SPEC B3). A cut keeps at most the
/// cap of the text, so a suffix of [`HeldInPart::min_held_bytes`] decides it exactly as
/// the whole text would.
///
/// ```
/// use backstop_core::limit::HeldInPart;
/// let held = HeldInPart::default().with_text_head(0, 5_000_000);
/// assert_eq!(held.text_head(0), 5_000_000);
/// assert!(!held.is_whole());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldInPart {
    /// `(block index, bytes of its head not held)`, for text blocks held in part.
    text_heads: Vec<(usize, usize)>,
    /// A block other than text holds a string held in part (any cut drops such a block).
    pub(super) other_blocks: bool,
    /// A string not held whole may hold pydantic's `input_value=` (V3): an error result
    /// with one must be read whole, its every fragment redacted.
    may_quote_inputs: bool,
    /// `(JSON pointer, bytes of its head not held)`, for strings of `structuredContent`
    /// held in part.
    pub(super) structured_heads: Vec<(String, usize)>,
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

    /// Text block `block` is held without its first `bytes` bytes.
    ///
    /// ```
    /// let held = backstop_core::limit::HeldInPart::default().with_text_head(2, 10);
    /// assert_eq!(held.text_head(2), 10);
    /// assert_eq!(held.text_head(1), 0);
    /// ```
    pub fn with_text_head(mut self, block: usize, bytes: usize) -> Self {
        self.text_heads.retain(|&(b, _)| b != block);
        self.text_heads.push((block, bytes));
        self
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
    pub fn with_structured_head(mut self, pointer: impl Into<String>, bytes: usize) -> Self {
        let pointer = pointer.into();
        self.structured_heads.retain(|(p, _)| *p != pointer);
        self.structured_heads.push((pointer, bytes));
        self
    }

    /// The bytes of the head of the `structuredContent` string at `pointer` not held.
    pub fn structured_head(&self, pointer: &str) -> usize {
        self.structured_heads
            .iter()
            .find_map(|(p, bytes)| (p == pointer).then_some(*bytes))
            .unwrap_or(0)
    }

    /// Whether text block `block` (`text`: what is held of it) may be a serialization
    /// of a value whose JSON starts with `opener`.
    pub(super) fn may_serialize(&self, block: usize, text: &str, opener: u8) -> bool {
        let start = match self.text_head(block) {
            0 => text.bytes().find(|b| !b.is_ascii_whitespace()),
            _ => self
                .text_starts
                .iter()
                .find_map(|&(b, byte)| (b == block).then_some(byte)),
        };
        start.is_none_or(|b| b == opener || b.is_ascii_whitespace())
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

    /// The bytes of text block `block`'s head not held (0: held whole).
    pub fn text_head(&self, block: usize) -> usize {
        self.text_heads
            .iter()
            .find_map(|&(b, bytes)| (b == block).then_some(bytes))
            .unwrap_or(0)
    }

    /// Whether everything is held.
    pub fn is_whole(&self) -> bool {
        self.text_heads.iter().all(|&(_, bytes)| bytes == 0)
            && self.structured_heads.iter().all(|&(_, bytes)| bytes == 0)
            && !self.other_blocks
    }

    /// Whether a string not held whole may quote a rejected input (V3).
    pub fn may_quote_inputs(&self) -> bool {
        self.may_quote_inputs
    }
}
