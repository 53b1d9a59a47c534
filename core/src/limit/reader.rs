//! The reader's units (SPEC L18): what an agent client counts of a result's text
//! before its model sees it — characters as JavaScript counts them (UTF-16 code units)
//! and an estimate of tokens — beside the wire bytes the cap counts.
//!
//! Both are sums over the bytes of the UTF-8 text, so the cutter walks them the way it
//! walks wire bytes (L13: only the kept part is read):
//!
//! - a character is one UTF-16 code unit per character of the Basic Multilingual
//!   Plane and two for one beyond it (an emoji): a UTF-8 lead byte counts 1, or 2 when
//!   it starts a 4-byte sequence, a continuation byte 0;
//! - a token is estimated as 4 ASCII bytes, and every character beyond ASCII as one
//!   token of its own. The clients measured estimate 4 bytes (Codex) or 4 UTF-16 code
//!   units (Claude Code) a token, so this never counts fewer than they do: 4 ASCII
//!   bytes are one token for both, and a character beyond ASCII is at most 4 bytes and
//!   2 code units. It counts in quarter tokens: an ASCII byte 1, a lead byte 4.
//!
//! ```
//! use backstop_core::limit::ReaderCount;
//! let count = ReaderCount::of("héllo 漢字 🙂");
//! assert_eq!(count.chars, 11); // 🙂 is two UTF-16 code units
//! assert_eq!(count.tokens(), 6); // 6 ASCII bytes and 4 characters beyond ASCII: 22 quarters
//! ```

/// What a reader counts of a text: its UTF-16 code units and its estimated tokens.
///
/// ```
/// let count = backstop_core::limit::ReaderCount::of("a\nb");
/// assert_eq!((count.chars, count.tokens()), (3, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReaderCount {
    /// UTF-16 code units (JavaScript's `string.length`).
    pub chars: usize,
    /// The token estimate, in quarter tokens.
    pub quarter_tokens: usize,
}

impl ReaderCount {
    /// What a reader counts of `text`.
    pub fn of(text: &str) -> Self {
        Self::of_bytes(text.as_bytes())
    }

    /// What a reader counts of a run of UTF-8 bytes (a continuation byte counts
    /// nothing: its character is counted at its lead byte).
    pub(crate) fn of_bytes(bytes: &[u8]) -> Self {
        let mut count = ReaderCount::default();
        for &byte in bytes {
            count.add_byte(byte);
        }
        count
    }

    /// The estimated tokens, rounded up.
    pub fn tokens(&self) -> usize {
        self.quarter_tokens.div_ceil(4)
    }

    pub(crate) fn add_byte(&mut self, byte: u8) {
        self.chars += CHARS[byte as usize] as usize;
        self.quarter_tokens += QUARTER_TOKENS[byte as usize] as usize;
    }

    /// What a reader counts of `len` ASCII bytes.
    pub(crate) fn ascii(len: usize) -> ReaderCount {
        ReaderCount {
            chars: len,
            quarter_tokens: len,
        }
    }

    pub(crate) fn minus(self, other: ReaderCount) -> ReaderCount {
        ReaderCount {
            chars: self.chars - other.chars,
            quarter_tokens: self.quarter_tokens - other.quarter_tokens,
        }
    }

    pub(crate) fn plus(self, other: ReaderCount) -> ReaderCount {
        ReaderCount {
            chars: self.chars + other.chars,
            quarter_tokens: self.quarter_tokens + other.quarter_tokens,
        }
    }

    /// Whether this count is within `room` in every unit.
    pub(crate) fn within(&self, room: ReaderRoom) -> bool {
        self.chars <= room.chars && self.quarter_tokens <= room.quarter_tokens
    }
}

/// The room a reader's limits leave, in [`ReaderCount`]'s units; `usize::MAX` where a
/// unit is not limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReaderRoom {
    pub(crate) chars: usize,
    pub(crate) quarter_tokens: usize,
}

impl ReaderRoom {
    /// No reader limit.
    pub(crate) const UNLIMITED: ReaderRoom = ReaderRoom {
        chars: usize::MAX,
        quarter_tokens: usize::MAX,
    };

    /// The room of at most `chars` characters and `tokens` tokens.
    pub(crate) fn new(chars: Option<usize>, tokens: Option<usize>) -> Self {
        ReaderRoom {
            chars: chars.unwrap_or(usize::MAX),
            quarter_tokens: tokens.map_or(usize::MAX, |t| t.saturating_mul(4)),
        }
    }

    pub(crate) fn is_unlimited(&self) -> bool {
        *self == Self::UNLIMITED
    }

    /// This room with `kept` kept aside, in the units that are limited.
    pub(crate) fn keeping(self, kept: ReaderCount) -> ReaderRoom {
        let keep = |room: usize, kept: usize| match room {
            usize::MAX => usize::MAX,
            room => room.saturating_sub(kept),
        };
        ReaderRoom {
            chars: keep(self.chars, kept.chars),
            quarter_tokens: keep(self.quarter_tokens, kept.quarter_tokens),
        }
    }

    /// The room left after `count`, `None` when `count` does not fit.
    pub(crate) fn minus(self, count: ReaderCount) -> Option<ReaderRoom> {
        Some(ReaderRoom {
            chars: self.chars.checked_sub(count.chars)?,
            quarter_tokens: self.quarter_tokens.checked_sub(count.quarter_tokens)?,
        })
    }

    /// `per_mille` thousandths of each unit (a head's share, L16).
    pub(crate) fn share(self, per_mille: u16) -> ReaderRoom {
        let share = |room: usize| match room {
            usize::MAX => usize::MAX,
            room => super::share_of(room, per_mille),
        };
        ReaderRoom {
            chars: share(self.chars),
            quarter_tokens: share(self.quarter_tokens),
        }
    }
}

/// UTF-16 code units per UTF-8 byte: 1 for a lead byte (or ASCII), 2 for the lead of
/// a 4-byte sequence, 0 for a continuation byte.
const CHARS: [u8; 256] = {
    let mut table = [1u8; 256];
    let mut b = 0x80;
    while b < 0xC0 {
        table[b] = 0;
        b += 1;
    }
    let mut b = 0xF0;
    while b < 0x100 {
        table[b] = 2;
        b += 1;
    }
    table
};

/// Quarter tokens per UTF-8 byte: 1 for ASCII, 4 for a lead byte beyond ASCII (a
/// character beyond ASCII is one token), 0 for a continuation byte.
const QUARTER_TOKENS: [u8; 256] = {
    let mut table = [1u8; 256];
    let mut b = 0x80;
    while b < 0x100 {
        table[b] = if b < 0xC0 { 0 } else { 4 };
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// L18: the character count is JavaScript's `string.length`, and the token
        /// estimate is never below 4 bytes or 4 UTF-16 code units a token.
        #[test]
        fn l18_the_units_are_utf16_code_units_and_a_token_estimate_no_client_undercounts(
            text in "(\\PC|[\\n\\t\u{1b}\"\\\\]|🙂|👩‍👩‍👧|漢字|é){0,64}",
        ) {
            let count = ReaderCount::of(&text);
            prop_assert_eq!(count.chars, text.encode_utf16().count());
            prop_assert!(count.tokens() >= text.len().div_ceil(4), "Codex: 4 bytes a token");
            prop_assert!(count.tokens() >= count.chars.div_ceil(4), "Claude Code: 4 code units a token");
            // Additive over any split at a character boundary.
            for (at, _) in text.char_indices() {
                let (a, b) = text.split_at(at);
                prop_assert_eq!(ReaderCount::of(a).plus(ReaderCount::of(b)), count);
            }
        }
    }

    #[test]
    fn l18_bytes_and_characters_disagree_where_a_reader_counts_differently() {
        // A `\n` is 2 wire bytes and 1 character; `漢` 3 bytes and 1 character; 🙂 4
        // bytes and 2 code units.
        assert_eq!(ReaderCount::of("\n").chars, 1);
        assert_eq!(crate::wire::escaped_len("\n"), 2);
        assert_eq!(ReaderCount::of("漢").chars, 1);
        assert_eq!(ReaderCount::of("🙂").chars, 2);
        assert_eq!(ReaderCount::of("abcd").tokens(), 1);
        assert_eq!(ReaderCount::of("abcde").tokens(), 2);
        assert_eq!(ReaderCount::of("漢字").tokens(), 2);
        assert_eq!(
            ReaderCount::of("ab").minus(ReaderCount::of("b")),
            ReaderCount::of("a")
        );
    }

    #[test]
    fn l18_a_room_is_shared_and_spent_per_unit() {
        let room = ReaderRoom::new(Some(100), Some(10));
        assert_eq!(room.quarter_tokens, 40);
        assert!(ReaderCount::of(&"a".repeat(40)).within(room));
        assert!(!ReaderCount::of(&"a".repeat(41)).within(room));
        assert_eq!(room.share(500), ReaderRoom::new(Some(50), Some(5)));
        assert_eq!(ReaderRoom::UNLIMITED.share(500), ReaderRoom::UNLIMITED);
        assert_eq!(room.minus(ReaderCount::of(&"a".repeat(41))), None);
        assert_eq!(
            room.minus(ReaderCount::of("abcd")),
            Some(ReaderRoom {
                chars: 96,
                quarter_tokens: 36
            })
        );
        assert!(ReaderRoom::new(None, None).is_unlimited());
    }
}
