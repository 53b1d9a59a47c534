//! The text of a result's text blocks joined by `\n\n`, read without joining it.
//!
//! The limiter only ever needs the end of the joined text: it walks back from the end
//! to find where a budget runs out, then copies the tail window it will keep. The
//! dropped head is never read or copied (SPEC L13).

use std::borrow::Cow;

use crate::wire::Weights;

/// What stands between two text blocks in the joined text (SPEC L3).
pub(crate) const SEPARATOR: &str = "\n\n";

/// A sequence of string pieces read as one text.
pub(crate) struct Joined<'a> {
    /// The pieces, with the offset at which each starts in the joined text.
    pieces: Vec<(usize, &'a str)>,
    len: usize,
}

/// Pieces are scanned in chunks of this size when walking back.
const CHUNK: usize = 4096;

impl<'a> Joined<'a> {
    /// The texts, joined by [`SEPARATOR`].
    pub(crate) fn new(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut pieces = Vec::new();
        let mut len = 0;
        for (i, text) in texts.into_iter().enumerate() {
            if i > 0 {
                pieces.push((len, SEPARATOR));
                len += SEPARATOR.len();
            }
            pieces.push((len, text));
            len += text.len();
        }
        Self { pieces, len }
    }

    /// The length of the joined text in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The smallest character boundary `p` such that the cost of the text from `p` to
    /// the end (its escaped length, under `weights`) is at most `budget`, with that cost.
    ///
    /// Reads the text backwards from the end and stops where the budget runs out.
    pub(crate) fn tail_within(&self, budget: usize, weights: Weights) -> (usize, usize) {
        let mut used = 0;
        for &(start, piece) in self.pieces.iter().rev() {
            let bytes = piece.as_bytes();
            let mut end = bytes.len();
            while end > 0 {
                let from = end.saturating_sub(CHUNK);
                let cost = weights.of_bytes(&bytes[from..end]);
                if used + cost <= budget {
                    used += cost;
                    end = from;
                    continue;
                }
                // The budget runs out inside this chunk: go byte by byte.
                while end > from {
                    let cost = weights.of_byte(bytes[end - 1]);
                    if used + cost > budget {
                        break;
                    }
                    used += cost;
                    end -= 1;
                }
                // Never start inside a UTF-8 sequence: give back its continuation bytes.
                while !piece.is_char_boundary(end) {
                    used -= weights.of_byte(bytes[end]);
                    end += 1;
                }
                return (start + end, used);
            }
        }
        (0, used)
    }

    /// The joined text from `from` (a character boundary) to the end: borrowed when it
    /// lies in one piece (one large text block, the common case), else copied.
    pub(crate) fn tail_from(&self, from: usize) -> Cow<'a, str> {
        match self.pieces.last() {
            Some(&(start, piece)) if from >= start => Cow::Borrowed(&piece[from - start..]),
            _ => Cow::Owned(self.copy_from(from)),
        }
    }

    /// The joined text from `from` (a character boundary) to the end, copied.
    pub(crate) fn copy_from(&self, from: usize) -> String {
        let mut out = String::with_capacity(self.len - from);
        for &(start, piece) in &self.pieces {
            let end = start + piece.len();
            if end > from {
                out.push_str(&piece[from.saturating_sub(start)..]);
            }
        }
        out
    }

    /// The largest character boundary at or before `pos`.
    pub(crate) fn floor_char_boundary(&self, pos: usize) -> usize {
        match self.piece_at(pos) {
            Some((start, piece)) => {
                let mut i = pos - start;
                while !piece.is_char_boundary(i) {
                    i -= 1;
                }
                start + i
            }
            None => pos.min(self.len),
        }
    }

    /// The piece holding the byte at `pos`.
    fn piece_at(&self, pos: usize) -> Option<(usize, &'a str)> {
        let index = self.pieces.partition_point(|&(start, _)| start <= pos);
        let (start, piece) = *self.pieces.get(index.checked_sub(1)?)?;
        (pos < start + piece.len()).then_some((start, piece))
    }

    /// A chunk of the joined text that ends at `end` (a character boundary greater
    /// than zero), with the offset at which it starts: context for a grapheme cursor.
    pub(crate) fn chunk_ending_at(&self, end: usize) -> (&'a str, usize) {
        match self.piece_at(end - 1) {
            Some((start, piece)) => (&piece[..end - start], start),
            None => ("", end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::escaped_len;

    #[test]
    fn tail_within_matches_a_real_join() {
        let texts = ["héllo\n", "", "\u{1b}[0m\"quoted\"", "end"];
        let joined = Joined::new(texts);
        let real = texts.join(SEPARATOR);
        assert_eq!(joined.len(), real.len());
        for budget in 0..=escaped_len(&real) + 3 {
            let (p, used) = joined.tail_within(budget, Weights::LITERAL);
            assert!(real.is_char_boundary(p));
            assert_eq!(used, escaped_len(&real[p..]));
            assert!(used <= budget);
            if p > 0 {
                let q = (0..p).rev().find(|&i| real.is_char_boundary(i)).unwrap();
                assert!(
                    escaped_len(&real[q..]) > budget,
                    "budget {budget}: not maximal"
                );
            }
            assert_eq!(joined.copy_from(p), real[p..]);
            assert_eq!(joined.tail_from(p), real[p..]);
        }
    }

    #[test]
    fn chunks_end_where_asked() {
        let texts = ["ab", "cd"];
        let joined = Joined::new(texts);
        assert_eq!(joined.chunk_ending_at(1), ("a", 0));
        assert_eq!(joined.chunk_ending_at(3), ("\n", 2));
        assert_eq!(joined.chunk_ending_at(6), ("cd", 4));
        assert_eq!(joined.floor_char_boundary(6), 6);
    }
}
