//! The text of a result's text blocks joined by `\n\n`, read without joining it.
//!
//! The limiter only ever needs the ends of the joined text: it walks back from the end
//! (or on from the start, for a head: L16) to find where a budget runs out, then copies
//! the window it will keep. The dropped part is never read or copied (SPEC L13), so a
//! text may be held with a gap where that part was.

use std::borrow::Cow;

use super::reader::{ReaderCount, ReaderRoom};
use crate::wire::Weights;

/// The part of a string that is not held: `len` bytes from byte `at` (the held text is
/// the whole without them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Gap {
    pub(crate) at: usize,
    pub(crate) len: usize,
}

impl Gap {
    /// Nothing missing.
    pub(crate) const NONE: Gap = Gap { at: 0, len: 0 };
}

/// What stands between two text blocks in the joined text (SPEC L3).
pub(crate) const SEPARATOR: &str = "\n\n";

/// A sequence of string pieces read as one text.
pub(crate) struct Joined<'a> {
    /// The pieces, with the offset at which each starts in the joined text.
    pieces: Vec<(usize, &'a str)>,
    len: usize,
    /// The start of the held text that runs to the end without a gap.
    held_from: usize,
    /// The end of the held text that runs from the start without a gap.
    held_to: usize,
}

/// Pieces are scanned in chunks of this size when walking back.
const CHUNK: usize = 4096;

impl<'a> Joined<'a> {
    /// The texts, joined by [`SEPARATOR`].
    pub(crate) fn new(texts: impl IntoIterator<Item = &'a str>) -> Self {
        Self::held_in_part(texts.into_iter().map(|text| (Gap::NONE, text)))
    }

    /// Texts of which a part is not held, each given as where that part is in the
    /// whole text and what is held (the whole text without it), joined by
    /// [`SEPARATOR`]. Offsets and the length are those of the whole joined text; only
    /// up to [`held_to`](Self::held_to) and from [`held_from`](Self::held_from) on may
    /// be read.
    pub(crate) fn held_in_part(texts: impl IntoIterator<Item = (Gap, &'a str)>) -> Self {
        let mut pieces = Vec::new();
        let mut len = 0;
        let mut held_from = 0;
        let mut held_to = None;
        for (i, (gap, text)) in texts.into_iter().enumerate() {
            if i > 0 {
                pieces.push((len, SEPARATOR));
                len += SEPARATOR.len();
            }
            if gap.len == 0 {
                pieces.push((len, text));
                len += text.len();
                continue;
            }
            let at = gap.at.min(text.len());
            let (head, tail) = text.split_at(at);
            if !head.is_empty() {
                pieces.push((len, head));
            }
            held_to.get_or_insert(len + at);
            len += at + gap.len;
            held_from = len;
            if !tail.is_empty() {
                pieces.push((len, tail));
            }
            len += tail.len();
        }
        Self {
            pieces,
            len,
            held_from,
            held_to: held_to.unwrap_or(len),
        }
    }

    /// Where the text that is held without a gap to the end starts (0 when all is held).
    pub(crate) fn held_from(&self) -> usize {
        self.held_from
    }

    /// Where the text that is held without a gap from the start ends (the length when
    /// all is held).
    pub(crate) fn held_to(&self) -> usize {
        self.held_to
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
                for &byte in bytes[from..end].iter().rev() {
                    let cost = weights.of_byte(byte);
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

    /// The largest character boundary `q` such that the cost of the text from the start
    /// to `q` (its escaped length, under `weights`) is at most `budget`, with that cost.
    ///
    /// Reads the text forwards from the start and stops where the budget runs out; every
    /// piece must be held from its start (no text held in part).
    pub(crate) fn head_within(&self, budget: usize, weights: Weights) -> (usize, usize) {
        let mut used = 0;
        for &(start, piece) in &self.pieces {
            let bytes = piece.as_bytes();
            let mut at = 0;
            while at < bytes.len() {
                let to = (at + CHUNK).min(bytes.len());
                let cost = weights.of_bytes(&bytes[at..to]);
                if used + cost <= budget {
                    used += cost;
                    at = to;
                    continue;
                }
                for &byte in &bytes[at..to] {
                    let cost = weights.of_byte(byte);
                    if used + cost > budget {
                        break;
                    }
                    used += cost;
                    at += 1;
                }
                // Never end inside a UTF-8 sequence: give back its first bytes.
                while !piece.is_char_boundary(at) {
                    at -= 1;
                    used -= weights.of_byte(bytes[at]);
                }
                return (start + at, used);
            }
        }
        (self.len, used)
    }

    /// The joined text from the start to `to` (a character boundary): borrowed when it
    /// lies in the first piece, else copied.
    pub(crate) fn head_to(&self, to: usize) -> Cow<'a, str> {
        match self.pieces.first() {
            Some(&(0, piece)) if to <= piece.len() => Cow::Borrowed(&piece[..to]),
            _ => {
                let mut out = String::with_capacity(to);
                for &(start, piece) in &self.pieces {
                    if start >= to {
                        break;
                    }
                    out.push_str(&piece[..(to - start).min(piece.len())]);
                }
                Cow::Owned(out)
            }
        }
    }

    /// The joined text from `from` (a character boundary) to the end: borrowed when it
    /// lies in one piece (one large text block, the common case), else copied.
    pub(crate) fn tail_from(&self, from: usize) -> Cow<'a, str> {
        match self.pieces.last() {
            Some(&(start, piece)) if from >= start => Cow::Borrowed(&piece[from - start..]),
            _ => Cow::Owned(self.copy_from(from)),
        }
    }

    /// How many characters of the held text lie between `from` and `to` (character
    /// boundaries); a part not held counts none. Reads only that range.
    pub(crate) fn chars_between(&self, from: usize, to: usize) -> usize {
        self.pieces
            .iter()
            .filter(|&&(start, piece)| start < to && start + piece.len() > from)
            .map(|&(start, piece)| {
                let lo = from.saturating_sub(start);
                let hi = (to - start).min(piece.len());
                piece[lo..hi].chars().count()
            })
            .sum()
    }

    /// The cost under `weights` of the text from `from` (a character boundary) to the
    /// end, or `None` once it passes `budget` (read from `from` on, no further).
    pub(crate) fn cost_from(&self, from: usize, weights: Weights, budget: usize) -> Option<usize> {
        self.cost_between(from, self.len, weights, budget)
    }

    /// The cost under `weights` of the text before `to` (a character boundary), or
    /// `None` once it passes `budget`.
    pub(crate) fn cost_to(&self, to: usize, weights: Weights, budget: usize) -> Option<usize> {
        self.cost_between(0, to, weights, budget)
    }

    fn cost_between(
        &self,
        from: usize,
        to: usize,
        weights: Weights,
        budget: usize,
    ) -> Option<usize> {
        let mut used = 0usize;
        for &(start, piece) in &self.pieces {
            if start >= to || start + piece.len() <= from {
                continue;
            }
            let bytes =
                &piece.as_bytes()[from.saturating_sub(start)..(to - start).min(piece.len())];
            for chunk in bytes.chunks(CHUNK) {
                used += weights.of_bytes(chunk);
                if used > budget {
                    return None;
                }
            }
        }
        Some(used)
    }

    /// What a reader counts of the held text between `from` and `to` (L18); a part not
    /// held counts nothing. Reads only that range.
    pub(crate) fn reader_count(&self, from: usize, to: usize) -> ReaderCount {
        self.pieces
            .iter()
            .filter(|&&(start, piece)| start < to && start + piece.len() > from)
            .fold(ReaderCount::default(), |count, &(start, piece)| {
                let lo = from.saturating_sub(start);
                let hi = (to - start).min(piece.len());
                count.plus(ReaderCount::of_bytes(&piece.as_bytes()[lo..hi]))
            })
    }

    /// The smallest character boundary `p`, at most `max_bytes` before the end, such
    /// that what a reader counts of the text from `p` to the end fits `room` (L18),
    /// with that count. Reads the text backwards from the end, `max_bytes` at most.
    pub(crate) fn tail_within_reader(
        &self,
        room: ReaderRoom,
        max_bytes: usize,
    ) -> (usize, ReaderCount) {
        let mut used = ReaderCount::default();
        let lowest = self.len.saturating_sub(max_bytes);
        for &(start, piece) in self.pieces.iter().rev() {
            let bytes = piece.as_bytes();
            let floor = lowest.saturating_sub(start).min(bytes.len());
            let mut end = bytes.len();
            while end > floor {
                let from = end.saturating_sub(CHUNK).max(floor);
                let cost = used.plus(ReaderCount::of_bytes(&bytes[from..end]));
                if cost.within(room) {
                    used = cost;
                    end = from;
                    continue;
                }
                for &byte in bytes[from..end].iter().rev() {
                    let mut next = used;
                    next.add_byte(byte);
                    if !next.within(room) {
                        break;
                    }
                    used = next;
                    end -= 1;
                }
                break;
            }
            if end > floor || floor > 0 {
                // A continuation byte counts nothing: give them back to start at a
                // character boundary.
                while !piece.is_char_boundary(end) {
                    end += 1;
                }
                return (start + end, used);
            }
        }
        (0, used)
    }

    /// The largest character boundary `q`, at most `max_bytes` from the start, such
    /// that what a reader counts of the text before `q` fits `room` (L16, L18), with
    /// that count. Reads the text from its start, `max_bytes` at most.
    pub(crate) fn head_within_reader(
        &self,
        room: ReaderRoom,
        max_bytes: usize,
    ) -> (usize, ReaderCount) {
        let mut used = ReaderCount::default();
        let highest = max_bytes.min(self.len);
        for &(start, piece) in &self.pieces {
            if start >= highest {
                return (start, used);
            }
            let bytes = piece.as_bytes();
            let stop = (highest - start).min(bytes.len());
            let mut at = 0;
            loop {
                let mut to = (at + CHUNK).min(stop);
                while !piece.is_char_boundary(to) {
                    to -= 1;
                }
                if to <= at {
                    break;
                }
                let cost = used.plus(ReaderCount::of_bytes(&bytes[at..to]));
                if cost.within(room) {
                    used = cost;
                    at = to;
                    continue;
                }
                // The room runs out at a lead byte: a character boundary.
                for &byte in &bytes[at..to] {
                    let mut next = used;
                    next.add_byte(byte);
                    if !next.within(room) {
                        break;
                    }
                    used = next;
                    at += 1;
                }
                return (start + at, used);
            }
            if stop < bytes.len() {
                return (start + at, used);
            }
        }
        (highest, used)
    }

    /// The joined text from `from` (a character boundary) to the end, copied.
    pub(crate) fn copy_from(&self, from: usize) -> String {
        let mut out = String::with_capacity(self.len - from);
        for &(start, piece) in &self.pieces {
            // `None` for the pieces that end before `from`.
            if let Some(rest) = piece.get(from.saturating_sub(start)..) {
                out.push_str(rest);
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

    /// The piece holding the byte at `pos`, or the last piece when `pos` is past it.
    fn piece_at(&self, pos: usize) -> Option<(usize, &'a str)> {
        let index = self.pieces.partition_point(|&(start, _)| start <= pos);
        // Inside the text never an empty block: a separator starts where one does.
        self.pieces.get(index.checked_sub(1)?).copied()
    }

    /// A chunk of the joined text that ends at `end` (a character boundary), with the
    /// offset at which it starts: context for a grapheme cursor. Empty only at the
    /// start of the text, where a cursor needs no more context.
    pub(crate) fn chunk_ending_at(&self, end: usize) -> (&'a str, usize) {
        match end.checked_sub(1).and_then(|last| self.piece_at(last)) {
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
            let (q, used) = joined.head_within(budget, Weights::LITERAL);
            assert!(real.is_char_boundary(q));
            assert_eq!(used, escaped_len(&real[..q]));
            assert!(used <= budget);
            if q < real.len() {
                let next = (q + 1..=real.len())
                    .find(|&i| real.is_char_boundary(i))
                    .unwrap();
                assert!(
                    escaped_len(&real[..next]) > budget,
                    "budget {budget}: head not maximal"
                );
            }
            assert_eq!(joined.head_to(q), real[..q]);
        }
    }

    #[test]
    fn chars_between_count_the_held_text_of_a_range() {
        let texts = ["héllo\n", "", "日本語", "end"];
        let joined = Joined::new(texts);
        let real = texts.join(SEPARATOR);
        let bounds: Vec<usize> = (0..=real.len())
            .filter(|&i| real.is_char_boundary(i))
            .collect();
        for &from in &bounds {
            for &to in bounds.iter().filter(|&&to| to >= from) {
                assert_eq!(
                    joined.chars_between(from, to),
                    real[from..to].chars().count()
                );
            }
        }
        // A part not held counts none.
        let gap = Gap { at: 2, len: 100 };
        let held = Joined::held_in_part([(gap, "abcd")]);
        assert_eq!(held.chars_between(0, held.len()), 4);
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

/// Every operation checked against the real join, on texts of several 4 KB chunks,
/// multi-byte characters at chunk and piece edges, escapes that cost 2 or 6 bytes,
/// and empty blocks.
#[cfg(test)]
mod against_a_real_join {
    use super::*;
    use proptest::prelude::*;

    const FRAGMENTS: [&str; 9] = ["a", "é", "€", "😀", "\n", "\"", "\\", "\u{1b}", "\u{1}"];

    /// A block: a few runs of one fragment each, short or long.
    fn block() -> impl Strategy<Value = String> {
        let run = (
            prop::sample::select(&FRAGMENTS[..]),
            prop_oneof![0usize..4, 500usize..2500],
        );
        prop::collection::vec(run, 0..4).prop_map(|runs| {
            runs.into_iter()
                .map(|(fragment, n)| fragment.repeat(n))
                .collect()
        })
    }

    /// The byte ranges of the pieces (blocks and separators) of `texts` joined.
    fn piece_ranges(texts: &[String]) -> Vec<(usize, usize)> {
        let mut ranges = Vec::new();
        let mut at = 0;
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                ranges.push((at, at + 2));
                at += 2;
            }
            ranges.push((at, at + text.len()));
            at += text.len();
        }
        ranges
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

        #[test]
        fn matches_the_real_join(
            texts in prop::collection::vec(block(), 1..5),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 16),
        ) {
            let joined = Joined::new(texts.iter().map(String::as_str));
            let real = texts.join(SEPARATOR);
            prop_assert_eq!(joined.len(), real.len());
            let bytes = real.as_bytes();
            // suffix[i]: the escaped length of real[i..].
            let mut suffix = vec![0; real.len() + 1];
            for i in (0..real.len()).rev() {
                suffix[i] = suffix[i + 1] + Weights::LITERAL.of_bytes(&bytes[i..=i]);
            }
            let ranges = piece_ranges(&texts);

            // Positions at piece edges and 4 KB steps back from each piece's end.
            let mut positions: Vec<usize> = Vec::new();
            for &(start, end) in &ranges {
                for k in 0..4 {
                    if let Some(q) = end.checked_sub(k * CHUNK)
                        && q >= start
                    {
                        positions.extend(q.saturating_sub(3)..=q + 3);
                    }
                }
                positions.extend(start.saturating_sub(3)..=start + 3);
            }
            positions.extend(picks.iter().map(|i| i.index(real.len() + 1)));
            positions.retain(|&q| q <= real.len());

            let mut budgets: Vec<usize> = positions
                .iter()
                .flat_map(|&q| [suffix[q].saturating_sub(1), suffix[q], suffix[q] + 1])
                .collect();
            budgets.push(0);
            budgets.push(suffix[0] + 7);
            for budget in budgets {
                let (p, used) = joined.tail_within(budget, Weights::LITERAL);
                prop_assert!(real.is_char_boundary(p), "budget {}: {} is no boundary", budget, p);
                prop_assert_eq!(used, suffix[p], "budget {}", budget);
                prop_assert!(used <= budget);
                if let Some(q) = (0..p).rev().find(|&q| real.is_char_boundary(q)) {
                    prop_assert!(suffix[q] > budget, "budget {}: {} is not maximal", budget, p);
                }
            }

            // The head, read forwards: the same, mirrored.
            let mut prefix = vec![0; real.len() + 1];
            for i in 0..real.len() {
                prefix[i + 1] = prefix[i] + Weights::LITERAL.of_bytes(&bytes[i..=i]);
            }
            for budget in positions.iter().flat_map(|&q| [prefix[q].saturating_sub(1), prefix[q], prefix[q] + 1]) {
                let (q, used) = joined.head_within(budget, Weights::LITERAL);
                prop_assert!(real.is_char_boundary(q), "budget {}: {} is no boundary", budget, q);
                prop_assert_eq!(used, prefix[q], "budget {}", budget);
                prop_assert!(used <= budget);
                if let Some(r) = (q + 1..=real.len()).find(|&r| real.is_char_boundary(r)) {
                    prop_assert!(prefix[r] > budget, "budget {}: head to {} is not maximal", budget, q);
                }
                let head = joined.head_to(q);
                prop_assert_eq!(&head, &real[..q]);
                prop_assert_eq!(matches!(head, Cow::Borrowed(_)), q <= texts[0].len());
            }

            let last_start = ranges.last().unwrap().0;
            for &q in positions.iter().filter(|&&q| real.is_char_boundary(q)) {
                let tail = joined.tail_from(q);
                prop_assert_eq!(&tail, &real[q..]);
                // Borrowed exactly when the tail lies in the last piece.
                prop_assert_eq!(matches!(tail, Cow::Borrowed(_)), q >= last_start);
                let copy = joined.copy_from(q);
                prop_assert_eq!(&copy, &real[q..]);
                // Copied once, into a buffer of exactly its size.
                prop_assert_eq!(copy.capacity(), real.len() - q);
            }

            for pos in 0..=real.len() + 2 {
                let floor = (0..=pos.min(real.len()))
                    .rev()
                    .find(|&q| real.is_char_boundary(q))
                    .unwrap();
                prop_assert_eq!(joined.floor_char_boundary(pos), floor, "pos {}", pos);
            }

            for end in (0..=real.len()).filter(|&q| real.is_char_boundary(q)) {
                let (chunk, start) = joined.chunk_ending_at(end);
                prop_assert_eq!(start + chunk.len(), end);
                prop_assert_eq!(chunk, &real[start..end]);
                if end == 0 {
                    prop_assert_eq!(start, 0);
                } else {
                    let &(piece_start, _) = ranges
                        .iter()
                        .find(|&&(s, e)| s < end && end <= e)
                        .unwrap();
                    prop_assert_eq!(start, piece_start, "end {}", end);
                }
            }
        }
    }
}
