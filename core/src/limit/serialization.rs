//! Whether a text block is the JSON serialization of `structuredContent` (SPEC L15).
//!
//! fastmcp, the official SDKs and rmcp's `Json` all send the serialization of the
//! structured output as a text block beside it, each in its own layout (compact, or
//! indented; keys in their own order; non-ASCII raw or `\u`-escaped). The text is read
//! as JSON and compared with the value token by token, keys looked up, strings
//! decoded, whitespace between tokens skipped.
//!
//! Bounded (L13): the comparison stops at the first string of the value longer than
//! [`LONG_STRING`] bytes, after checking its first [`HEAD_CHARS`] characters, so the
//! long strings a cut drops the head of are never read in full.

use serde_json::Value;

/// Strings of the value at least this long are compared by their first characters.
pub(super) const LONG_STRING: usize = 16 * 1024;

/// How many characters of a long string are compared.
const HEAD_CHARS: usize = 256;

/// Why a comparison stopped.
enum Stop {
    /// A long string's head matched: the text is taken to be the serialization.
    LongString,
    /// The text differs from the value.
    Differs,
}

/// Whether `text` is a JSON serialization of `value`.
pub(super) fn is_serialization_of(text: &str, value: &Value) -> bool {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let closer = match value {
        Value::Object(_) => Some(b'}'),
        Value::Array(_) => Some(b']'),
        _ => None,
    };
    match reader.value(value) {
        Ok(()) => {
            reader.skip_whitespace();
            reader.pos == reader.bytes.len()
        }
        Err(Stop::LongString) => {
            closer.is_some_and(|c| text.trim_end().as_bytes().last() == Some(&c))
        }
        Err(Stop::Differs) => false,
    }
}

struct Reader<'t> {
    bytes: &'t [u8],
    pos: usize,
}

impl Reader<'_> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Skip whitespace, then take `byte` or fail.
    fn expect(&mut self, byte: u8) -> Result<(), Stop> {
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop::Differs)
        }
    }

    /// Skip whitespace, then take `byte` if it is next.
    fn take(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let next = self.bytes.get(self.pos) == Some(&byte);
        self.pos += usize::from(next);
        next
    }

    fn value(&mut self, value: &Value) -> Result<(), Stop> {
        match value {
            Value::Object(map) => {
                self.expect(b'{')?;
                let mut seen = 0;
                while !self.take(b'}') {
                    if seen > 0 {
                        self.expect(b',')?;
                    }
                    self.expect(b'"')?;
                    let key = self.string_rest()?;
                    let member = map.get(&key).ok_or(Stop::Differs)?;
                    self.expect(b':')?;
                    self.value(member)?;
                    seen += 1;
                }
                if seen == map.len() {
                    Ok(())
                } else {
                    Err(Stop::Differs)
                }
            }
            Value::Array(items) => {
                self.expect(b'[')?;
                let mut items = items.iter();
                let mut first = true;
                while !self.take(b']') {
                    if !first {
                        self.expect(b',')?;
                    }
                    first = false;
                    self.value(items.next().ok_or(Stop::Differs)?)?;
                }
                if items.next().is_none() {
                    Ok(())
                } else {
                    Err(Stop::Differs)
                }
            }
            Value::String(expected) => {
                self.expect(b'"')?;
                if expected.len() >= LONG_STRING {
                    for want in expected.chars().take(HEAD_CHARS) {
                        if self.char()? != Some(want) {
                            return Err(Stop::Differs);
                        }
                    }
                    return Err(Stop::LongString);
                }
                if self.string_rest()? == *expected {
                    Ok(())
                } else {
                    Err(Stop::Differs)
                }
            }
            scalar => {
                self.skip_whitespace();
                let start = self.pos;
                while let Some(b) = self.bytes.get(self.pos) {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.pos += 1;
                }
                let token = &self.bytes[start..self.pos];
                match serde_json::from_slice::<Value>(token) {
                    Ok(read) if read == *scalar => Ok(()),
                    _ => Err(Stop::Differs),
                }
            }
        }
    }

    /// The rest of a string whose opening quote was taken, decoded.
    fn string_rest(&mut self) -> Result<String, Stop> {
        let mut out = String::new();
        while let Some(c) = self.char()? {
            out.push(c);
        }
        Ok(out)
    }

    /// The next character of a string, decoded; `None` at its closing quote.
    fn char(&mut self) -> Result<Option<char>, Stop> {
        let rest = self.bytes.get(self.pos..).ok_or(Stop::Differs)?;
        match rest.first() {
            None => Err(Stop::Differs),
            Some(b'"') => {
                self.pos += 1;
                Ok(None)
            }
            Some(b'\\') => {
                let (c, used) = unescape(rest).ok_or(Stop::Differs)?;
                self.pos += used;
                Ok(Some(c))
            }
            Some(_) => {
                // A raw character: the text is a `str`, so this is a whole UTF-8 sequence.
                let len = utf8_len(rest[0]);
                let c = std::str::from_utf8(rest.get(..len).ok_or(Stop::Differs)?)
                    .ok()
                    .and_then(|s| s.chars().next())
                    .ok_or(Stop::Differs)?;
                self.pos += len;
                Ok(Some(c))
            }
        }
    }
}

/// The length of the UTF-8 sequence a lead byte starts.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// The character an escape at the start of `bytes` stands for, and its length.
fn unescape(bytes: &[u8]) -> Option<(char, usize)> {
    let c = match bytes.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = |at: usize| {
                let hex = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
                u32::from_str_radix(hex, 16).ok()
            };
            let high = unit(2)?;
            if (0xD800..0xDC00).contains(&high) && bytes.get(6..8) == Some(b"\\u") {
                let low = unit(8)?;
                let c =
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + low.checked_sub(0xDC00)?)?;
                return Some((c, 12));
            }
            return Some((char::from_u32(high)?, 6));
        }
        _ => return None,
    };
    Some((c, 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_indented_reordered_and_escaped_serializations_match() {
        let value = json!({"summary": "é \"ok\"", "lines": 3, "ratio": 0.5, "tags": ["a", null, true], "nested": {}});
        for text in [
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap(),
            r#"{"tags": ["a", null, true], "nested": {}, "summary": "\u00e9 \"ok\"", "ratio": 0.5, "lines": 3}"#.to_owned(),
        ] {
            assert!(is_serialization_of(&text, &value), "{text}");
        }
        for text in [
            r#"{"summary": "é \"ok\"", "lines": 3, "ratio": 0.5, "tags": ["a", null]}"#,
            r#"{"summary": "é", "lines": 3, "ratio": 0.5, "tags": ["a", null, true], "nested": {}}"#,
            "Here is your report.",
            "",
        ] {
            assert!(!is_serialization_of(text, &value), "{text}");
        }
    }

    #[test]
    fn scalars_and_every_escape_are_compared_by_value() {
        let value = json!({"n": 1, "s": "a/b\u{8}\u{c}\r\t\\"});
        assert!(is_serialization_of(
            r#"{"n": 1.0e0, "s": "a\/b\b\f\r\t\\"}"#,
            &json!({"n": 1.0, "s": "a/b\u{8}\u{c}\r\t\\"})
        ));
        assert!(is_serialization_of(
            r#"{"n":1,"s":"a\/b\b\f\r\t\\"}"#,
            &value
        ));
        assert!(!is_serialization_of(
            r#"{"n":2,"s":"a\/b\b\f\r\t\\"}"#,
            &value
        ));
        assert!(!is_serialization_of(
            r#"{"n":true,"s":"a\/b\b\f\r\t\\"}"#,
            &value
        ));
        assert!(
            !is_serialization_of(r#"{"n":1,"s":"a\qb"}"#, &value),
            "not an escape"
        );
        assert!(!is_serialization_of(
            r#"{"n":1,"s":"\ud800"}"#,
            &json!({"n": 1, "s": "x"})
        ));
    }

    #[test]
    fn strings_shorter_than_long_are_compared_whole() {
        // A 10 kB field (a summary, a diff) is compared to its last byte.
        for len in [10_000, LONG_STRING - 1] {
            let text = "y".repeat(len);
            let value = json!({"note": text});
            let mut other = text.clone();
            other.replace_range(len - 1.., "z");
            let other = json!({"note": other}).to_string();
            assert!(!is_serialization_of(&other, &value));
            assert!(is_serialization_of(&value.to_string(), &value));
        }
    }

    #[test]
    fn a_long_string_is_compared_by_its_head() {
        let log = "line\n".repeat(LONG_STRING);
        let value = json!({"log": log, "summary": "s"});
        let text = serde_json::to_string(&value).unwrap();
        assert!(is_serialization_of(&text, &value));
        let other = json!({"log": format!("x{log}"), "summary": "s"});
        assert!(!is_serialization_of(&text, &other));
        let surrogates = json!(["😀".repeat(LONG_STRING)]);
        let escaped = format!("[\"{}\"]", "\\ud83d\\ude00".repeat(LONG_STRING));
        assert!(is_serialization_of(&escaped, &surrogates));
    }
}
