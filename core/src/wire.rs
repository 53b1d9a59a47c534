//! Wire size: the length of the compact JSON serialization, counted without
//! serializing.
//!
//! The cap of the limiter bounds exactly what `serde_json::to_vec` would write: no
//! whitespace, non-ASCII as raw UTF-8, `"` and `\` escaped, `\n`-style short escapes for
//! five control characters and `\u00XX` for the others. Every function here counts
//! that number and stops as soon as the count passes a limit, so learning that a
//! 100 MB value is over a 1 MB cap reads about 1 MB of it (SPEC L13).

mod classes;

use serde_json::{Map, Value};

/// The number of bytes each byte of a string occupies inside a JSON string literal.
///
/// Bytes at or above 0x80 are parts of raw UTF-8 sequences and count once.
const ESCAPED_LEN: [u8; 256] = {
    let mut table = [1u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = 6; // \u00XX
        b += 1;
    }
    table[0x08] = 2; // \b
    table[0x09] = 2; // \t
    table[0x0A] = 2; // \n
    table[0x0C] = 2; // \f
    table[0x0D] = 2; // \r
    table[b'"' as usize] = 2;
    table[b'\\' as usize] = 2;
    table
};

/// How many bytes a string occupies inside a JSON string literal, quotes excluded.
pub fn escaped_len(text: &str) -> usize {
    Weights::LITERAL.of_bytes(text.as_bytes())
}

/// What each byte of a string costs on the wire where the string is written.
///
/// A string inside a JSON value costs its escaped length ([`Weights::LITERAL`]). A
/// string inside `structuredContent` whose serialization is also sent as a text block
/// is written twice: once escaped in the value, and once escaped *again* inside the
/// text block's string ([`Weights::LITERAL_AND_TEXT`]: `"` costs 2 + 4, `\n` 2 + 3).
///
/// The cost of a byte depends only on its escape kind (see [`classes`]): as it is, `"`
/// or `\\`, a short control escape, a long one. Strings are weighed by counting their
/// bytes of each kind, many bytes at a time; the table is the definition, and says
/// what a single byte costs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Weights {
    bytes: &'static [u8; 256],
    /// What the table says a byte of each kind costs.
    kinds: KindCosts,
    /// The cost of one byte of JSON punctuation (`{`, `,`, a digit, …).
    pub(crate) punctuation: usize,
    /// The cost of a string literal's two quotes (in the text, each is `\"`).
    pub(crate) quotes: usize,
}

/// [`ESCAPED_LEN`] plus the escaped length of each byte's escape sequence.
const LITERAL_AND_TEXT_LEN: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let once = ESCAPED_LEN[b];
        // The escape of `b` is itself escaped: `\` costs 2, then `"`/`\\` 2 more, `n` 1,
        // `u001b` 5; a byte that needs no escape costs its own weight again.
        let twice = match once {
            1 => ESCAPED_LEN[b],
            2 if b == b'"' as usize || b == b'\\' as usize => 4,
            2 => 3,
            _ => 7,
        };
        table[b] = once + twice;
        b += 1;
    }
    table
};

/// The cost of a byte of each escape kind under one table.
#[derive(Debug, Clone, Copy)]
struct KindCosts {
    /// A byte written as it is (also the least any byte costs).
    plain: usize,
    /// `"` or `\\`.
    quote_or_backslash: usize,
    /// `\b`, `\t`, `\n`, `\f`, `\r`.
    short_control: usize,
    /// Any other control character.
    long_control: usize,
}

impl KindCosts {
    /// The costs of `table`, which must give every byte of a kind the same cost (checked
    /// when the constant is built: a table that does not fails to compile).
    const fn of(table: &[u8; 256]) -> Self {
        let costs = KindCosts {
            plain: table[b'a' as usize] as usize,
            quote_or_backslash: table[b'"' as usize] as usize,
            short_control: table[0x0A] as usize,
            long_control: table[0x00] as usize,
        };
        assert!(
            costs.long_control >= costs.short_control,
            "a long escape costs no less than a short one"
        );
        let mut b = 0;
        while b < 256 {
            let expected = match b as u8 {
                b'"' | b'\\' => costs.quote_or_backslash,
                0x08 | 0x09 | 0x0A | 0x0C | 0x0D => costs.short_control,
                0x00..=0x1F => costs.long_control,
                _ => costs.plain,
            };
            assert!(
                table[b] as usize == expected,
                "a byte costs what its kind costs"
            );
            assert!(
                expected >= costs.plain,
                "no byte costs less than a plain one"
            );
            b += 1;
        }
        costs
    }
}

impl Weights {
    /// Written once, inside a JSON string literal.
    pub(crate) const LITERAL: Weights = Weights {
        bytes: &ESCAPED_LEN,
        kinds: KindCosts::of(&ESCAPED_LEN),
        punctuation: 1,
        quotes: 2,
    };

    /// Written in a JSON value and again in the JSON text of that value, as a string.
    pub(crate) const LITERAL_AND_TEXT: Weights = Weights {
        bytes: &LITERAL_AND_TEXT_LEN,
        kinds: KindCosts::of(&LITERAL_AND_TEXT_LEN),
        punctuation: 2,
        quotes: 6,
    };

    /// The cost of one byte of a string's contents.
    pub(crate) fn of_byte(self, byte: u8) -> usize {
        usize::from(self.bytes[usize::from(byte)])
    }

    /// The cost of a string's contents, quotes excluded: the same as the sum of
    /// [`of_byte`](Self::of_byte) over `bytes`, counted by escape kind.
    pub(crate) fn of_bytes(self, bytes: &[u8]) -> usize {
        let counts = classes::count(bytes);
        let k = self.kinds;
        bytes.len() * k.plain
            + counts.quote_or_backslash * (k.quote_or_backslash - k.plain)
            + counts.control * (k.short_control - k.plain)
            + counts.long_control * (k.long_control - k.short_control)
    }

    /// The least `n` bytes of a string can cost.
    fn at_least(self, n: usize) -> usize {
        n.saturating_mul(self.kinds.plain)
    }

    /// The cost of a string with its quotes, or `None` once it passes `limit`: not read
    /// at all when its length alone says so, else read in chunks, so at most one chunk
    /// past the limit is read.
    pub(crate) fn string_upto(self, text: &str, limit: usize) -> Option<usize> {
        let mut used = self.quotes;
        if used.saturating_add(self.at_least(text.len())) > limit {
            return None;
        }
        for chunk in text.as_bytes().chunks(CHUNK) {
            used += self.of_bytes(chunk);
            if used > limit {
                return None;
            }
        }
        (used <= limit).then_some(used)
    }
}

/// The wire size of a string literal: its escaped length plus the two quotes.
pub fn string_size(text: &str) -> usize {
    escaped_len(text) + 2
}

/// A running count of wire bytes that gives up once it passes its limit.
///
/// Counting stops at the first addition that takes the total over the limit; the
/// functions that feed it then return early, so the cost of counting is bounded by the
/// limit and not by the size of what is counted.
#[derive(Debug, Clone)]
pub struct Meter {
    used: usize,
    limit: usize,
}

/// The count passed the meter's limit; what was being counted is larger than it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimit;

/// Strings are counted in chunks of this many bytes between limit checks.
const CHUNK: usize = 65_536;

impl Meter {
    /// A meter that has counted nothing and allows `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self { used: 0, limit }
    }

    /// A meter without a limit: it never fails.
    pub fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// The bytes counted so far.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Count `n` more bytes; fails once the total passes the limit.
    pub fn add(&mut self, n: usize) -> Result<(), OverLimit> {
        self.used = self.used.saturating_add(n);
        if self.used > self.limit {
            Err(OverLimit)
        } else {
            Ok(())
        }
    }

    /// Count a string literal, stopping within one chunk of passing the limit (at once,
    /// unread, when its length alone passes it).
    pub fn str(&mut self, text: &str) -> Result<(), OverLimit> {
        self.add(2)?;
        self.escaped(text)
    }

    /// Count the escaped contents of a string literal, without its quotes.
    pub fn escaped(&mut self, text: &str) -> Result<(), OverLimit> {
        // Every byte costs at least one: a string longer than the room left is over.
        if text.len() > self.limit.saturating_sub(self.used) {
            return self.add(text.len());
        }
        for chunk in text.as_bytes().chunks(CHUNK) {
            self.add(Weights::LITERAL.of_bytes(chunk))?;
        }
        Ok(())
    }

    /// Count a JSON value as `serde_json` would write it compactly.
    pub fn value(&mut self, value: &Value) -> Result<(), OverLimit> {
        match value {
            Value::Null => self.add(4),
            Value::Bool(true) => self.add(4),
            Value::Bool(false) => self.add(5),
            Value::Number(number) => self.add(number_size(number)),
            Value::String(text) => self.str(text),
            Value::Array(items) => {
                self.add(2 + items.len().saturating_sub(1))?;
                items.iter().try_for_each(|item| self.value(item))
            }
            Value::Object(map) => self.object(map),
        }
    }

    /// Count a JSON object as `serde_json` would write it compactly.
    pub fn object(&mut self, map: &Map<String, Value>) -> Result<(), OverLimit> {
        self.add(2 + map.len().saturating_sub(1))?;
        map.iter()
            .try_for_each(|(key, value)| self.member(key, value))
    }

    /// Count one `"key":value` member of an object (no comma).
    pub fn member(&mut self, key: &str, value: &Value) -> Result<(), OverLimit> {
        self.str(key)?;
        self.add(1)?;
        self.value(value)
    }
}

/// The serialized length of a number, exactly as `serde_json` writes it.
pub(crate) fn number_size(number: &serde_json::Number) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a number into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, number);
    count.0
}

/// The wire size of a JSON value, or `None` if it is larger than `limit`.
pub fn value_size_upto(value: &Value, limit: usize) -> Option<usize> {
    let mut meter = Meter::new(limit);
    meter.value(value).ok().map(|()| meter.used())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".*".prop_map(Value::String),
            "[\\x00-\\x20\"\\\\\u{7f}\u{80}-\u{ff}]*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map(".*", inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn counts_exactly_what_serde_json_writes(value in json_value()) {
            let written = serde_json::to_vec(&value).unwrap().len();
            prop_assert_eq!(value_size_upto(&value, usize::MAX), Some(written));
            prop_assert_eq!(value_size_upto(&value, written), Some(written));
            if written > 0 {
                prop_assert_eq!(value_size_upto(&value, written - 1), None);
            }
        }
    }

    /// Bytes of every escape kind, with runs long enough to cross the counters' sums.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            any::<u8>(),
            prop::sample::select(
                &b"\"\\\x00\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x1b\x1f\x20\x7f\x80\xff"[..]
            ),
        ];
        let run = (byte, prop_oneof![1usize..20, 4000usize..9000]);
        prop::collection::vec(run, 0..12).prop_map(|runs| {
            runs.into_iter()
                .flat_map(|(b, n)| std::iter::repeat_n(b, n))
                .collect()
        })
    }

    /// The definition: the table, one byte at a time.
    fn by_byte(weights: Weights, bytes: &[u8]) -> usize {
        bytes.iter().map(|&b| weights.of_byte(b)).sum()
    }

    proptest! {
        #[test]
        fn weighing_by_kind_is_weighing_byte_by_byte(
            bytes in bytes(),
            noise in prop::collection::vec(any::<u8>(), 0..100),
            skip in 0usize..17,
        ) {
            let mut bytes = bytes;
            bytes.extend(noise);
            let bytes = &bytes[skip.min(bytes.len())..];
            for weights in [Weights::LITERAL, Weights::LITERAL_AND_TEXT] {
                prop_assert_eq!(weights.of_bytes(bytes), by_byte(weights, bytes));
            }
        }

        #[test]
        fn strings_are_weighed_and_limited_as_defined(text in ".*", runs in bytes()) {
            let text = text + &String::from_utf8_lossy(&runs);
            let json = serde_json::to_vec(&text).unwrap().len();
            prop_assert_eq!(escaped_len(&text) + 2, json);
            for weights in [Weights::LITERAL, Weights::LITERAL_AND_TEXT] {
                let exact = weights.quotes + by_byte(weights, text.as_bytes());
                prop_assert_eq!(weights.string_upto(&text, exact), Some(exact));
                prop_assert_eq!(weights.string_upto(&text, usize::MAX), Some(exact));
                prop_assert_eq!(weights.string_upto(&text, exact - 1), None);
            }
            let mut meter = Meter::new(json);
            prop_assert!(meter.str(&text).is_ok());
            prop_assert_eq!(meter.used(), json);
            prop_assert!(Meter::new(json - 1).str(&text).is_err());
        }
    }

    #[test]
    #[should_panic(expected = "a byte costs what its kind costs")]
    fn a_table_whose_bytes_of_one_kind_differ_is_refused() {
        let mut table = ESCAPED_LEN;
        table[0xFF] = 2; // a plain byte that costs like a quote
        let _ = KindCosts::of(&table);
    }

    #[test]
    fn the_kind_costs_are_the_tables() {
        let k = Weights::LITERAL.kinds;
        let costs = (
            k.plain,
            k.quote_or_backslash,
            k.short_control,
            k.long_control,
        );
        assert_eq!(costs, (1, 2, 2, 6));
        let k = Weights::LITERAL_AND_TEXT.kinds;
        let costs = (
            k.plain,
            k.quote_or_backslash,
            k.short_control,
            k.long_control,
        );
        assert_eq!(costs, (2, 6, 5, 13));
    }

    #[test]
    fn a_string_longer_than_the_room_left_is_over_unread() {
        let mut meter = Meter::new(10);
        meter.add(5).unwrap();
        assert!(meter.escaped("abcde").is_ok());
        assert!(Meter::new(10).escaped(&"a".repeat(11)).is_err());
        assert_eq!(Weights::LITERAL.string_upto("abcdefgh", 10), Some(10));
        assert_eq!(Weights::LITERAL.string_upto("abcdefghi", 10), None);
        assert_eq!(
            Weights::LITERAL_AND_TEXT.string_upto("abcdefgh", 22),
            Some(22)
        );
        assert_eq!(Weights::LITERAL_AND_TEXT.string_upto("abcdefgh", 21), None);
    }

    #[test]
    fn every_byte_escapes_as_serde_json_does() {
        for b in 0u8..0x80 {
            let s = (b as char).to_string();
            assert_eq!(
                string_size(&s),
                serde_json::to_vec(&s).unwrap().len(),
                "byte {b:#x}"
            );
        }
    }
}

/// The examples of this module's items (private: not run as doc tests).
#[cfg(test)]
mod examples {
    #[test]
    fn example_escaped_len_1() {
        use crate::wire::escaped_len;
        assert_eq!(escaped_len("a\nb"), 4); // \n is two bytes
        assert_eq!(escaped_len("\u{1b}[0m"), 9); // ESC is six: \u001b
        assert_eq!(escaped_len("é"), 2); // raw UTF-8
    }

    #[test]
    fn example_string_size_2() {
        use crate::wire::string_size;
        assert_eq!(string_size("say \"hi\""), 12);
        assert_eq!(string_size(""), serde_json::to_vec("").unwrap().len());
    }

    #[test]
    fn example_meter_3() {
        use crate::wire::Meter;
        let mut meter = Meter::new(10);
        assert!(meter.value(&serde_json::json!({"a": 1})).is_ok());
        assert_eq!(meter.used(), 7);
        assert!(meter.str("a long string").is_err());
    }

    #[test]
    fn example_new_4() {
        let meter = crate::wire::Meter::new(100);
        assert_eq!(meter.used(), 0);
    }

    #[test]
    fn example_unlimited_5() {
        let mut meter = crate::wire::Meter::unlimited();
        assert!(meter.str(&"x".repeat(1000)).is_ok());
    }

    #[test]
    fn example_used_6() {
        let mut meter = crate::wire::Meter::new(10);
        meter.str("ab").unwrap();
        assert_eq!(meter.used(), 4);
    }

    #[test]
    fn example_add_7() {
        let mut meter = crate::wire::Meter::new(3);
        assert!(meter.add(3).is_ok());
        assert!(meter.add(1).is_err());
    }

    #[test]
    fn example_str_8() {
        let mut meter = crate::wire::Meter::new(100);
        meter.str("a\"b").unwrap(); // "a\"b" on the wire
        assert_eq!(meter.used(), 6);
    }

    #[test]
    fn example_escaped_9() {
        let mut meter = crate::wire::Meter::new(100);
        meter.escaped("\u{1b}").unwrap();
        assert_eq!(meter.used(), 6);
    }

    #[test]
    fn example_value_10() {
        let v = serde_json::json!([1, "two", null]);
        let mut meter = crate::wire::Meter::unlimited();
        meter.value(&v).unwrap();
        assert_eq!(meter.used(), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn example_object_11() {
        let v = serde_json::json!({"a": 1, "b": [true]});
        let mut meter = crate::wire::Meter::unlimited();
        meter.object(v.as_object().unwrap()).unwrap();
        assert_eq!(meter.used(), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn example_member_12() {
        let mut meter = crate::wire::Meter::unlimited();
        meter.member("k", &serde_json::json!(true)).unwrap();
        assert_eq!(meter.used(), r#""k":true"#.len());
    }

    #[test]
    fn example_value_size_upto_13() {
        use crate::wire::value_size_upto;
        let v = serde_json::json!({"text": "line\n", "n": [1, 2.5, null]});
        assert_eq!(
            value_size_upto(&v, 1000),
            Some(serde_json::to_vec(&v).unwrap().len())
        );
        assert_eq!(value_size_upto(&v, 10), None);
    }
}
