//! Counting the bytes of a string by how JSON escapes them, many bytes at a time.
//!
//! A byte inside a JSON string literal is one of four kinds: written as it is, escaped
//! with a backslash (`"` and `\`), one of the five control characters with a short
//! escape (`\b`, `\t`, `\n`, `\f`, `\r`), or another control character (`\u00XX`).
//! What a string costs on the wire is a sum over those kinds, so counting them is all
//! the limiter has to do per byte (SPEC L4, L13).
//!
//! The count works on blocks of 16 bytes with one small counter per byte position:
//! the per-byte tests are comparisons only (no table lookups), which the compiler turns
//! into vector instructions on every target, in safe code. The counters are summed
//! every [`ROUNDS`] blocks, before any of them can overflow.

/// How many bytes of each escape kind a string holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// `"` and `\`: written as a two-byte escape.
    pub(crate) quote_or_backslash: usize,
    /// Every control character (below 0x20), short escape or not.
    pub(crate) control: usize,
    /// The control characters without a short escape: written as `\u00XX`.
    pub(crate) long_control: usize,
}

/// Bytes per block: one counter each.
const LANES: usize = 16;

/// Blocks counted before the per-position counters are summed: each counts at most
/// one per block, so 255 blocks cannot overflow a `u8`.
const ROUNDS: usize = 255;

/// The escape kinds of one byte, each 0 or 1: `"` or `\`; a control character; a
/// control character without a short escape.
#[inline(always)]
fn kinds(byte: u8) -> (u8, u8, u8) {
    let quote_or_backslash = (byte == b'"') | (byte == b'\\');
    let control = byte < 0x20;
    // \b \t \n \f \r: 0x08, 0x09, 0x0A, 0x0C, 0x0D.
    let short = (byte.wrapping_sub(0x08) < 6) & (byte != 0x0B);
    (
        u8::from(quote_or_backslash),
        u8::from(control),
        u8::from(control & !short),
    )
}

/// How many bytes of each escape kind `bytes` holds: for `a"b\n\x1b`, one quote or
/// backslash, two control characters, one of them long.
pub(crate) fn count(bytes: &[u8]) -> Counts {
    let (blocks, rest) = bytes.as_chunks::<LANES>();
    let mut counts = Counts::default();
    for group in blocks.chunks(ROUNDS) {
        let mut quote_or_backslash = [0u8; LANES];
        let mut control = [0u8; LANES];
        let mut long_control = [0u8; LANES];
        for block in group {
            for lane in 0..LANES {
                let (q, c, l) = kinds(block[lane]);
                quote_or_backslash[lane] += q;
                control[lane] += c;
                long_control[lane] += l;
            }
        }
        counts.quote_or_backslash += sum(&quote_or_backslash);
        counts.control += sum(&control);
        counts.long_control += sum(&long_control);
    }
    for &byte in rest {
        let (q, c, l) = kinds(byte);
        counts.quote_or_backslash += usize::from(q);
        counts.control += usize::from(c);
        counts.long_control += usize::from(l);
    }
    counts
}

fn sum(counters: &[u8; LANES]) -> usize {
    counters.iter().map(|&n| usize::from(n)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one byte at a time.
    fn by_byte(bytes: &[u8]) -> Counts {
        let mut counts = Counts::default();
        for &b in bytes {
            let short = matches!(b, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D);
            counts.quote_or_backslash += usize::from(b == b'"' || b == b'\\');
            counts.control += usize::from(b < 0x20);
            counts.long_control += usize::from(b < 0x20 && !short);
        }
        counts
    }

    #[test]
    fn every_byte_in_every_lane_and_in_the_rest() {
        for byte in 0..=u8::MAX {
            for at in 0..LANES + 3 {
                let mut bytes = vec![b'a'; LANES + 3];
                bytes[at] = byte;
                assert_eq!(count(&bytes), by_byte(&bytes), "byte {byte:#x} at {at}");
            }
        }
    }

    #[test]
    fn counters_do_not_overflow_between_sums() {
        // Every byte of every block counts in all three: the counters fill fastest.
        for blocks in [ROUNDS - 1, ROUNDS, ROUNDS + 1, 3 * ROUNDS + 7] {
            let bytes = vec![0u8; blocks * LANES + 5];
            let n = bytes.len();
            let expected = Counts {
                quote_or_backslash: 0,
                control: n,
                long_control: n,
            };
            assert_eq!(count(&bytes), expected, "{blocks} blocks");
            let quotes = vec![b'"'; blocks * LANES];
            assert_eq!(count(&quotes).quote_or_backslash, quotes.len());
        }
    }
}
