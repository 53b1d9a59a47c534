//! The numbers and literals of the scan (SPEC B4): JSON's grammar for a number
//! (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) and the words `true`, `false`
//! and `null`, read a byte at a time as they come, so that the scan knows a message
//! is not JSON at the byte where it stops being JSON, in any chunking — as the
//! whole-message path's parser would.

/// Where in a number or literal the scan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scalar {
    /// After a number's `-`.
    Minus,
    /// A number whose integer part is `0`.
    Zero,
    /// In a number's integer digits (not starting with `0`).
    Integer,
    /// After a number's `.`.
    Dot,
    /// In a number's fraction digits.
    Fraction,
    /// After a number's `e` or `E`.
    Exponent,
    /// After the exponent's sign.
    ExponentSign,
    /// In the exponent's digits.
    ExponentDigits,
    /// In a literal: `word`, of which `read` bytes have come.
    Literal { word: &'static [u8], read: u8 },
}

/// Why a message whose number or literal is not JSON is not (as
/// [`Broken`](super::Broken) says it).
pub(super) const NOT_A_SCALAR: &str = "a number or literal that is not JSON";

impl Scalar {
    /// The scalar `byte` begins, if it begins one.
    pub(super) fn start(byte: u8) -> Option<Scalar> {
        let literal = |word| Scalar::Literal { word, read: 1 };
        Some(match byte {
            b'-' => Scalar::Minus,
            b'0' => Scalar::Zero,
            b'1'..=b'9' => Scalar::Integer,
            b't' => literal(b"true"),
            b'f' => literal(b"false"),
            b'n' => literal(b"null"),
            _ => return None,
        })
    }

    /// Where the scalar is after `byte`, if `byte` is part of it; `None` if it is not
    /// (the scalar ended before it, or — when it is not [`complete`](Self::complete)
    /// — is broken there).
    pub(super) fn next(self, byte: u8) -> Option<Scalar> {
        use Scalar::*;
        Some(match (self, byte) {
            (Minus, b'0') => Zero,
            (Minus, b'1'..=b'9') | (Integer, b'0'..=b'9') => Integer,
            (Zero | Integer, b'.') => Dot,
            (Dot | Fraction, b'0'..=b'9') => Fraction,
            (Zero | Integer | Fraction, b'e' | b'E') => Exponent,
            (Exponent, b'+' | b'-') => ExponentSign,
            (Exponent | ExponentSign | ExponentDigits, b'0'..=b'9') => ExponentDigits,
            (Literal { word, read }, _) if word.get(usize::from(read)) == Some(&byte) => Literal {
                word,
                read: read + 1,
            },
            _ => return None,
        })
    }

    /// Whether the scalar may end here.
    pub(super) fn complete(self) -> bool {
        match self {
            Scalar::Zero | Scalar::Integer | Scalar::Fraction | Scalar::ExponentDigits => true,
            Scalar::Literal { word, read } => usize::from(read) == word.len(),
            Scalar::Minus | Scalar::Dot | Scalar::Exponent | Scalar::ExponentSign => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whether `text` is one whole scalar by [`Scalar`].
    fn reads(text: &[u8]) -> bool {
        let Some((&first, rest)) = text.split_first() else {
            return false;
        };
        let mut scalar = Scalar::start(first);
        for &byte in rest {
            scalar = scalar.and_then(|scalar| scalar.next(byte));
        }
        scalar.is_some_and(Scalar::complete)
    }

    #[test]
    fn b4_numbers_and_literals_read_as_json_reads_them() {
        for good in [
            "0", "-0", "10", "-1.5", "0.25e-3", "1E+9", "7e0", "true", "false", "null",
        ] {
            assert!(reads(good.as_bytes()), "{good}");
        }
        for bad in [
            "-", "01", "1.", ".5", "1e", "1e+", "+1", "--1", "tru", "nul", "truee", "1.2.3", "0x1",
            "nan",
        ] {
            assert!(!reads(bad.as_bytes()), "{bad}");
        }
    }

    proptest! {
        /// B4: a scalar reads exactly when serde_json reads it as one JSON value
        /// (whose numbers it reads as the grammar says, whatever their size).
        #[test]
        fn b4_a_scalar_reads_exactly_when_serde_json_does(text in "[-+.eE0-9tru flsn]{1,12}") {
            let serde = serde_json::from_str::<&serde_json::value::RawValue>(&text)
                .is_ok_and(|raw| raw.get() == text);
            prop_assert_eq!(reads(text.as_bytes()), serde, "{:?}", text);
        }
    }
}
