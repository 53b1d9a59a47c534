//! The regular run at the start of a JSON string's content, found 64 bytes at a time.
//!
//! Scrollback as JSON carries an escape every 20 bytes or so (`\u001b` twice a line,
//! `\n` once). Looking for the next `"` or `\` with a byte search pays the search's
//! setup at every escape; this module instead reads 64 bytes at a time, marks in one
//! 64-bit mask where the bytes that need a look are (`"`, `\`, a control byte), and
//! steps from mark to mark. It accepts the escapes a long text is made of — the
//! two-byte ones and `\u00XY` below `\u0080` — and stops at anything else (the closing
//! quote, a control byte, any other escape, one it cannot see whole), which the
//! caller's byte-at-a-time path then reads. UTF-8 is not checked here.
//!
//! ```text
//! bytes:  0001 \u001b[32mok\u001b[0m build step é ....\n0002 ... \ud83d\ude00 ..."
//! run:    |---------------- regular ----------------------------|  stops at \ud83d
//! ```
//!
//! The vector compares come from the `wide` crate: safe code that compiles to SSE2
//! (NEON on aarch64) and to plain code elsewhere. On an x86-64 CPU with AVX2 the same
//! code runs compiled for it, chosen at run time through `pulp`.

use wide::u8x32;

/// What a regular run holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Run {
    /// Its length in bytes: the run is `bytes[..len]`. It ends outside any escape and
    /// never just before a UTF-8 continuation byte that belongs to it.
    pub len: usize,
    /// Its escapes' raw bytes minus the bytes they decode to.
    pub shrink: usize,
    /// It holds an escape.
    pub escapes: bool,
    /// It holds a `\u` escape of a printable ASCII character (V3: it may spell
    /// `input_value=` in a way a byte search for it would not see).
    pub escaped_printable: bool,
}

/// Bytes looked at in one step.
const BLOCK: usize = 64;

/// The bytes read at an escape's `\` (the longest, `\uXXXX`, spans 6): a block is
/// read only when every escape that starts in it can be read so.
const ESCAPE_READ: usize = 8;

/// The regular run at the start of `bytes`, which must start in a string's content
/// and outside an escape (and not just after a high surrogate's escape). Runs shorter
/// than a block and the bytes near the end of `bytes` are left to the caller.
pub(super) fn regular(bytes: &[u8]) -> Run {
    #[cfg(target_arch = "x86_64")]
    if let Some(x86_v3) = *X86_V3 {
        // The same code, compiled for AVX2 and BMI.
        return pulp::Simd::vectorize(
            x86_v3,
            #[inline(always)]
            || regular_portable(bytes),
        );
    }
    regular_portable(bytes)
}

/// The CPU's AVX2, BMI and the rest of x86-64-v3, if it has them: checked once.
#[cfg(target_arch = "x86_64")]
static X86_V3: std::sync::LazyLock<Option<pulp::x86::V3>> =
    std::sync::LazyLock::new(pulp::x86::V3::try_new);

/// [`regular`] as compiled for any CPU of the target.
#[inline(always)]
fn regular_portable(bytes: &[u8]) -> Run {
    let mut run = Run::default();
    // The end of the last escape accepted (past a block's end when it crosses it).
    let mut resume: usize = 0;
    // The first byte of the next block is escaped by the last of this one.
    let mut carry = 0;
    let mut base = 0;
    while let Some(window) = bytes.get(base..base + BLOCK + ESCAPE_READ) {
        let window: &[u8; BLOCK + ESCAPE_READ] = window.try_into().expect("a block and more");
        let (backslash, quote_or_control) = marks(window[..BLOCK].try_into().expect("a block"));
        let escaped = escaped(backslash, &mut carry);
        // The closing quote or a control byte; an escaped control byte is caught at
        // its escape's start.
        let end = quote_or_control & !escaped;
        let before_end = end.wrapping_sub(1) & !end;
        let mut starts = backslash & !escaped & before_end;
        while starts != 0 {
            // Below BLOCK, as the compiler can see: the escape's bytes need no bounds check.
            let offset = starts.trailing_zeros() as usize & (BLOCK - 1);
            starts &= starts - 1;
            let at = base + offset;
            let escape = u64::from_le_bytes(
                window[offset..offset + ESCAPE_READ]
                    .try_into()
                    .expect("8 bytes"),
            );
            let unit = unit_escape(escape);
            if !unit && !two_byte_escape(escape) {
                return run.ending_at(at, resume);
            }
            if unit && printable_unit(escape) {
                run.escaped_printable = true;
            }
            // Each escape decodes to one byte: `\u00XY` is 6 raw bytes, the rest 2.
            let long = 4 * usize::from(unit);
            run.shrink += 1 + long;
            resume = at + 2 + long;
        }
        if end != 0 {
            return run.ending_at(base + end.trailing_zeros() as usize, resume);
        }
        base += BLOCK;
    }
    // The blocks read end here, or inside the last escape accepted; never just before
    // a continuation byte, so that what follows starts a character (escapes are ASCII,
    // so stepping back over continuation bytes never enters one).
    let mut len = base.max(resume);
    while len > resume && bytes.get(len).is_some_and(|&b| b & 0xC0 == 0x80) {
        len -= 1;
    }
    run.ending_at(len, resume)
}

impl Run {
    /// The run, `len` long, the last escape it accepted ending at `resume` (0: none).
    fn ending_at(mut self, len: usize, resume: usize) -> Run {
        self.len = len;
        self.escapes = resume > 0;
        self
    }
}

/// The bits of a block that a backslash escapes (the byte after an escape's `\`),
/// from its backslashes: in a run of them, every other one escapes the next. `carry`
/// says the block's first byte is escaped by the block before, and is set for the
/// next block in turn.
fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    // A backslash escaped by the block before starts nothing.
    let backslash = backslash & !*carry;
    let follows_backslash = backslash << 1 | *carry;
    // Runs of backslashes that start on an odd bit; adding the backslashes to their
    // starts carries through each run, so that a run's parity shows in its end.
    let odd_starts = backslash & !EVEN & !follows_backslash;
    let (runs_from_even, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    (EVEN ^ runs_from_even << 1) & follows_backslash
}

/// Whether the escape at the start of `escape` (8 bytes read as one little-endian
/// word, the first a `\`) is a unit `\u0000` to `\u007f`: `\u00`, an octal digit, then
/// a hex digit (6 bytes, decoded to one). One compare of the word and a table lookup.
fn unit_escape(escape: u64) -> bool {
    let [.., low, _, _] = escape.to_le_bytes();
    (escape & 0xF8_FFFF_FF00 == 0x30_3030_7500) & HEX[usize::from(low)]
}

/// Whether the escape at the start of `escape` (read as [`unit_escape`] reads it) is
/// a two-byte one (`\n`, `\"`, …).
fn two_byte_escape(escape: u64) -> bool {
    TWO_BYTE[usize::from(escape.to_le_bytes()[1])]
}

/// Whether a unit escape (`\u0000` to `\u007f`, read as [`unit_escape`] reads it)
/// is of a printable ASCII character, `\u0020` to `\u007e` (V3). Its high digit is an
/// octal one (`0x30` to `0x37`), 2 or more when bit 1 or 2 is set: one test that is
/// false for nearly every escape in text (`\u001b`), before the rare exact one.
fn printable_unit(escape: u64) -> bool {
    let [.., high, low, _, _] = escape.to_le_bytes();
    high & 0x06 != 0 && !(high == b'7' && low | 0x20 == b'f')
}

/// The bytes that may follow a `\` in a two-byte escape.
const TWO_BYTE: [bool; 256] = byte_set(b"\"\\/bfnrt");

/// Hexadecimal digits.
const HEX: [bool; 256] = byte_set(b"0123456789abcdefABCDEF");

const fn byte_set(members: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut i = 0;
    while i < members.len() {
        set[members[i] as usize] = true;
        i += 1;
    }
    set
}

/// Two bits per byte of the 64-byte `block`: where it has a `\`, and where a `"` or a
/// control byte (below 0x20).
#[inline(always)]
fn marks(block: &[u8; BLOCK]) -> (u64, u64) {
    let backslash = u8x32::splat(b'\\');
    let quote = u8x32::splat(b'"');
    let below_space = u8x32::splat(0x1F);
    halves(block, |v| {
        (
            v.simd_eq(backslash),
            v.simd_eq(quote) | v.min(below_space).simd_eq(v),
        )
    })
}

/// The two masks `classify` makes of each byte of a 64-byte block, as two 64-bit
/// masks: 32 bytes at a time (two 16-byte compares each with SSE2, one with AVX2).
#[inline(always)]
fn halves(block: &[u8; BLOCK], classify: impl Fn(u8x32) -> (u8x32, u8x32)) -> (u64, u64) {
    let half = |bytes: &[u8]| {
        let (first, second) = classify(u8x32::new(bytes.try_into().expect("32 bytes")));
        (
            u64::from(first.to_bitmask()),
            u64::from(second.to_bitmask()),
        )
    };
    let (low, high) = block.split_at(BLOCK / 2);
    let ((first_low, second_low), (first_high, second_high)) = (half(low), half(high));
    (first_low | first_high << 32, second_low | second_high << 32)
}

/// The closing quote of a string whose content `bytes` go on with (its first byte
/// escaped when `escaped_first`), found 64 bytes at a time without reading what lies
/// between: `Ok(its offset)`, or `Err(whether the next byte is escaped)` when `bytes`
/// end first. Nothing is checked: this is for a string that is skipped.
pub(crate) fn closing_quote(bytes: &[u8], escaped_first: bool) -> Result<usize, bool> {
    let backslash = u8x32::splat(b'\\');
    let quote = u8x32::splat(b'"');
    let mut carry = u64::from(escaped_first);
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut base = 0;
    for block in &mut blocks {
        let block = block.try_into().expect("a block");
        let (backslashes, quotes) = halves(block, |v| (v.simd_eq(backslash), v.simd_eq(quote)));
        let end = quotes & !escaped(backslashes, &mut carry);
        if end != 0 {
            return Ok(base + end.trailing_zeros() as usize);
        }
        base += BLOCK;
    }
    let mut escaping = carry != 0;
    for (offset, &byte) in blocks.remainder().iter().enumerate() {
        match byte {
            _ if escaping => escaping = false,
            b'\\' => escaping = true,
            b'"' => return Ok(base + offset),
            _ => {}
        }
    }
    Err(escaping)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The common escapes as the JSON grammar reads them: the definition
    /// [`unit_escape`], [`two_byte_escape`] and [`printable_unit`] must agree with.
    fn common_escape_reference(escape: &[u8]) -> Option<(usize, usize, bool)> {
        match escape[1] {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some((2, 1, false)),
            b'u' => {
                let unit =
                    u32::from_str_radix(std::str::from_utf8(&escape[2..6]).ok()?, 16).ok()?;
                let hex = escape[2..6].iter().all(u8::is_ascii_hexdigit);
                (hex && unit < 0x80).then_some((6, 1, (0x20..0x7F).contains(&unit)))
            }
            _ => None,
        }
    }

    #[test]
    fn b4_common_escapes_are_those_the_grammar_reads() {
        let hex = b"0123456789abcdefABCDEFgG+-x\\\"";
        for kind in 0..=255u8 {
            for &a in hex {
                for &b in hex {
                    for (c, d) in [(b'0', b'0'), (b'0', b'1'), (b'1', b'0'), (b'f', b'0')] {
                        let escape = [b'\\', kind, c, d, a, b, b'x', b'y'];
                        let word = u64::from_le_bytes(escape);
                        let unit = unit_escape(word);
                        let read = (unit || two_byte_escape(word))
                            .then(|| (2 + 4 * usize::from(unit), 1, unit && printable_unit(word)));
                        assert_eq!(
                            read,
                            common_escape_reference(&escape),
                            "{:?}",
                            String::from_utf8_lossy(&escape)
                        );
                    }
                }
            }
        }
    }

    /// The same run, one byte at a time: the definition `regular` must agree with.
    /// Bytes are read up to where whole blocks end (an escape starting before it is
    /// taken whole); a run that reaches it steps back to a character's start, but not
    /// into the last escape it took.
    fn regular_bytewise(bytes: &[u8]) -> Run {
        let blocks_end = bytes.len().saturating_sub(ESCAPE_READ) / BLOCK * BLOCK;
        let mut run = Run::default();
        let mut at = 0;
        let mut resume = 0;
        while at < blocks_end {
            match bytes[at] {
                b'"' | 0..0x20 => {
                    run.len = at;
                    return run;
                }
                b'\\' => match common_escape_reference(&bytes[at..at + ESCAPE_READ]) {
                    Some((len, decoded, printable)) => {
                        run.shrink += len - decoded;
                        run.escapes = true;
                        run.escaped_printable |= printable;
                        at += len;
                        resume = at;
                    }
                    None => {
                        run.len = at;
                        return run;
                    }
                },
                _ => at += 1,
            }
        }
        while at > resume && bytes[at] & 0xC0 == 0x80 {
            at -= 1;
        }
        run.len = at;
        run
    }

    fn scrollback_line(n: usize) -> String {
        format!(r"{n:04} \u001b[32mok\u001b[0m build step é ....\n")
    }

    #[test]
    fn b3_scrollback_is_one_regular_run_up_to_its_last_blocks() {
        let text: String = (0..100).map(scrollback_line).collect();
        // What follows the quote is read in the same block as it.
        let bytes = format!("{text}\"{}", "}".repeat(BLOCK + ESCAPE_READ)).into_bytes();
        let run = regular(&bytes);
        let quote = text.len();
        assert_eq!(run.len, quote, "runs to the closing quote");
        // Per line: two `\u001b` (6 raw, 1 decoded) and one `\n` (2 raw, 1 decoded).
        assert_eq!(run.shrink, 100 * (5 + 5 + 1));
        assert!(run.escapes && !run.escaped_printable);
    }

    #[test]
    fn b4_a_run_stops_at_what_it_does_not_accept() {
        let pad = "x".repeat(100);
        for (stop, why) in [
            ("\"", "the closing quote"),
            ("\u{1}", "a control byte"),
            (r"\ud83d\ude00", "a surrogate pair"),
            (r"\u00e9", "a \\u escape of a character that is not ASCII"),
            (r"\x", "an escape JSON has not"),
            (r"\u00g0", "a \\u escape that is not hex"),
        ] {
            let bytes = format!("{pad}{stop}{pad}");
            assert_eq!(regular(bytes.as_bytes()).len, pad.len(), "{why}");
        }
    }

    #[test]
    fn v3_an_escaped_printable_character_is_noticed() {
        for (escape, printable) in [
            (r"\u0069", true),
            (r"\u0020", true),
            (r"\u007E", true),
            (r"\u007f", false),
            (r"\u007F", false),
            (r"\u001f", false),
            (r"\n", false),
        ] {
            let bytes = format!("{}{escape}{}\"", "a".repeat(10), "b".repeat(100));
            let run = regular(bytes.as_bytes());
            assert_eq!(run.escaped_printable, printable, "{escape}");
            assert!(run.escapes);
        }
    }

    #[test]
    fn b4_an_escape_crossing_a_block_is_taken_whole() {
        // `\\` at 63 and 64: the second backslash is escaped, not an escape's start.
        let mut bytes = vec![b'a'; 63];
        bytes.extend_from_slice(br"\\");
        bytes.extend_from_slice(&[b'b'; 100]);
        let quote = bytes.len();
        bytes.push(b'"');
        bytes.extend_from_slice(&[b'}'; BLOCK]);
        let run = regular(&bytes);
        assert_eq!(run.len, quote);
        assert_eq!(run.shrink, 1);
        // `\"` across the boundary is no closing quote.
        bytes[63..65].copy_from_slice(br#"\""#);
        assert_eq!(regular(&bytes).len, quote);
    }

    #[test]
    fn b3_a_run_never_ends_before_a_continuation_byte() {
        // `é` (2 bytes) straddling where the blocks end.
        for at in 60..70 {
            let mut bytes = vec![b'a'; at];
            bytes.extend_from_slice("é".as_bytes());
            bytes.extend_from_slice(&[b'z'; 6]);
            let run = regular(&bytes);
            assert!(
                bytes.get(run.len).is_none_or(|b| b & 0xC0 != 0x80),
                "at {at}: ends at {}",
                run.len
            );
        }
    }

    #[test]
    fn b4_runs_of_backslashes_across_blocks_agree_with_the_bytewise_run() {
        for offset in 0..2 * BLOCK {
            for run_len in 1..10 {
                for after in [&b"n"[..], b"\"", b"u0069", b"u00e9", b"q"] {
                    let mut bytes = vec![b'a'; offset];
                    bytes.extend(std::iter::repeat_n(b'\\', run_len));
                    bytes.extend_from_slice(after);
                    bytes.extend_from_slice(&[b'b'; 100]);
                    bytes.push(b'"');
                    bytes.extend_from_slice(&[b'}'; BLOCK]);
                    assert_eq!(
                        regular(&bytes),
                        regular_bytewise(&bytes),
                        "{offset} {run_len} {after:?}"
                    );
                }
            }
        }
    }

    /// [`closing_quote`] a byte at a time.
    fn closing_quote_bytewise(bytes: &[u8], escaped_first: bool) -> Result<usize, bool> {
        let mut escaping = escaped_first;
        for (offset, &byte) in bytes.iter().enumerate() {
            match byte {
                _ if escaping => escaping = false,
                b'\\' => escaping = true,
                b'"' => return Ok(offset),
                _ => {}
            }
        }
        Err(escaping)
    }

    #[test]
    fn b1_closing_quote_agrees_with_the_bytewise_one_across_blocks() {
        for offset in 0..2 * BLOCK + 3 {
            for run_len in 0..6 {
                for escaped_first in [false, true] {
                    let mut bytes = vec![b'a'; offset];
                    bytes.extend(std::iter::repeat_n(b'\\', run_len));
                    bytes.extend_from_slice(br#""tail"#);
                    for len in [bytes.len(), offset + run_len, offset + run_len / 2] {
                        let bytes = &bytes[..len];
                        assert_eq!(
                            closing_quote(bytes, escaped_first),
                            closing_quote_bytewise(bytes, escaped_first),
                            "{offset} {run_len} {escaped_first} {len}"
                        );
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn b1_closing_quote_agrees_with_the_bytewise_one(
            bytes in proptest::collection::vec(prop_oneof![
                4 => Just(b'a'), 2 => Just(b'\\'), 1 => Just(b'"'), 1 => Just(b'u'),
            ], 0..400),
            escaped_first in any::<bool>(),
        ) {
            prop_assert_eq!(
                closing_quote(&bytes, escaped_first),
                closing_quote_bytewise(&bytes, escaped_first)
            );
        }

        #[test]
        fn b4_regular_agrees_with_the_bytewise_run(
            pieces in proptest::collection::vec(prop_oneof![
                Just(b"a".to_vec()), Just("é".as_bytes().to_vec()), Just("😀".as_bytes().to_vec()),
                Just(br"\n".to_vec()), Just(br"\\".to_vec()), Just(br#"\""#.to_vec()),
                Just(br"\u001b".to_vec()), Just(br"\u0069".to_vec()), Just(br"\u007f".to_vec()),
                Just(br"\u00e9".to_vec()), Just(br"\ud83d".to_vec()), Just(br"\q".to_vec()),
                Just(b"\"".to_vec()), Just(b"\x01".to_vec()), Just(b"\\".to_vec()),
                Just(vec![0x80]), Just(b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".to_vec()),
            ], 0..80),
            weights in proptest::collection::vec(0usize..40, 17),
        ) {
            // Mostly plain text, so that runs cross many blocks.
            let mut bytes = Vec::new();
            for (i, piece) in pieces.iter().enumerate() {
                if weights[i % 17] > 8 || i % 7 == 0 {
                    bytes.extend_from_slice(b"plain text of a line ");
                }
                bytes.extend_from_slice(piece);
            }
            // Where the CPU has AVX2, `regular` runs the same code compiled for it.
            prop_assert_eq!(regular(&bytes), regular_bytewise(&bytes));
            prop_assert_eq!(regular_portable(&bytes), regular_bytewise(&bytes));
        }
    }
}
