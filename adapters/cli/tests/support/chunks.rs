//! Arbitrary chunkings of a byte message, for properties of the form "however the
//! input is split across reads, the output is the same" (SPEC B1, B3, B4).
//!
//! [`chunks`] is a proptest strategy over the ways to cut one message into non-empty
//! pieces that join back to it. It mixes:
//!
//! - every byte its own chunk (1-byte reads);
//! - the message whole;
//! - reads of one fixed size (as a pipe of that capacity delivers them);
//! - a handful of cuts anywhere;
//! - cuts at the [`tricky_cuts`]: right after a backslash and inside a `\uXXXX`
//!   escape, inside a multi-byte UTF-8 sequence, beside a `"` and a `\n` — where a
//!   byte-level scanner that keeps state across reads is most likely to go wrong —
//!   together with a few cuts anywhere.
//!
//! Shrinking removes cuts, so a failure reduces to the fewest splits that show it.
//! [`ChunkedReader`] hands the chunks to code that reads: one chunk per `read`, never
//! two in one. Use:
//!
//! ```text
//! proptest! {
//!     #[test]
//!     fn same_output_however_split((message, chunks) in message().prop_flat_map(|m| (Just(m.clone()), support::chunks::chunks(m)))) {
//!         prop_assert_eq!(shape_streaming(&chunks), shape_whole(&message));
//!     }
//! }
//! ```

use std::collections::BTreeSet;
use std::io::{self, Read};

use proptest::prelude::*;

/// Most cuts the "anywhere" arms add.
const FEW: usize = 16;

/// `message` cut at `cuts` (positions between bytes; 0, `len` and repeats are
/// ignored): non-empty chunks that join back to `message`. An empty message has none.
///
/// ```text
/// assert_eq!(split(b"abcd", [1, 3, 3, 9]), [b"a".to_vec(), b"bc".to_vec(), b"d".to_vec()]);
/// ```
pub fn split(message: &[u8], cuts: impl IntoIterator<Item = usize>) -> Vec<Vec<u8>> {
    let cuts: BTreeSet<usize> = cuts
        .into_iter()
        .filter(|&cut| 0 < cut && cut < message.len())
        .collect();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts.into_iter().chain(std::iter::once(message.len())) {
        if cut > start {
            chunks.push(message[start..cut].to_vec());
        }
        start = cut;
    }
    chunks
}

/// The cuts in `message` most likely to break a scanner that keeps state across
/// reads: after each `\` and inside the four hex digits of a `\u` escape; before each
/// UTF-8 continuation byte (inside a multi-byte sequence); before and after each `"`
/// and `\n`. Sorted, each once, all strictly inside the message.
///
/// ```text
/// assert_eq!(tricky_cuts(br#""\u001b""#), [1, 2, 3, 4, 5, 6, 7]);
/// ```
pub fn tricky_cuts(message: &[u8]) -> Vec<usize> {
    let mut cuts = BTreeSet::new();
    for (at, &byte) in message.iter().enumerate() {
        match byte {
            b'\\' => {
                cuts.insert(at + 1);
                if message.get(at + 1) == Some(&b'u') {
                    cuts.extend(at + 2..=at + 5);
                }
            }
            b'"' | b'\n' => {
                cuts.insert(at);
                cuts.insert(at + 1);
            }
            0x80..=0xBF => {
                cuts.insert(at);
            }
            _ => {}
        }
    }
    cuts.into_iter()
        .filter(|&cut| 0 < cut && cut < message.len())
        .collect()
}

/// Arbitrary chunkings of `message` (see the module's documentation): each value is
/// a list of non-empty chunks that join back to `message`.
pub fn chunks(message: Vec<u8>) -> BoxedStrategy<Vec<Vec<u8>>> {
    let len = message.len();
    if len < 2 {
        return Just(split(&message, [])).boxed();
    }
    let tricky = tricky_cuts(&message);
    let anywhere = || proptest::collection::vec(1..len, 0..=FEW.min(len - 1));
    let cuts = prop_oneof![
        1 => Just((1..len).collect::<Vec<usize>>()),
        1 => Just(Vec::new()),
        2 => (1..len).prop_map(move |size| (size..len).step_by(size).collect()),
        3 => anywhere(),
        3 => (
            proptest::sample::subsequence(tricky.clone(), 0..=tricky.len()),
            anywhere(),
        )
            .prop_map(|(mut tricky, anywhere)| {
                tricky.extend(anywhere);
                tricky
            }),
    ];
    cuts.prop_map(move |cuts| split(&message, cuts)).boxed()
}

/// A reader that hands out `chunks` in turn, one per `read` call (less when the
/// caller's buffer is smaller), never two in one call: a pipe whose writer wrote
/// them one by one.
///
/// ```text
/// let mut reader = ChunkedReader::new(vec![b"ab".to_vec(), b"c".to_vec()]);
/// let mut buffer = [0; 8];
/// assert_eq!(reader.read(&mut buffer).unwrap(), 2);
/// ```
#[derive(Debug)]
pub struct ChunkedReader {
    chunks: std::collections::VecDeque<Vec<u8>>,
    at: usize,
}

impl ChunkedReader {
    /// A reader of `chunks`, then the end of the stream.
    pub fn new(chunks: Vec<Vec<u8>>) -> Self {
        Self {
            chunks: chunks.into(),
            at: 0,
        }
    }
}

impl Read for ChunkedReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let Some(chunk) = self.chunks.front() else {
            return Ok(0);
        };
        let n = buffer.len().min(chunk.len() - self.at);
        buffer[..n].copy_from_slice(&chunk[self.at..self.at + n]);
        self.at += n;
        if self.at == chunk.len() {
            self.chunks.pop_front();
            self.at = 0;
        }
        Ok(n)
    }
}
