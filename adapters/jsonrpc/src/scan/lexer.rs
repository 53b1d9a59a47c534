//! The lexer of the scan: reads a message's bytes as JSON as they come — its
//! structure (objects, arrays, keys, the top-level `id` and `method`) and its strings
//! (escapes, UTF-8, control characters, surrogate pairs: B4) — and hands each
//! string's checked content on to be placed (`place.rs`: the skeleton, a held tail,
//! or nowhere). The plain runs of a long string are read 64 bytes at a time
//! (`run.rs`).

use backstop_core::limit::may_start_serialization;

use super::{Container, Expect, Key, Place, Scalar, Scan, Str, TopKey, run, scalar};

/// The deepest nesting scanned; deeper is more than serde_json reads (its limit is
/// 128), so such a message is not one the shaper can change.
const MAX_DEPTH: usize = 256;

/// Why a message is not JSON (SPEC B4), as [`Broken`](super::Broken) says it.
const CONTROL: &str = "a control character inside a string";
const NOT_UTF8: &str = "bytes that are not UTF-8";
const BAD_ESCAPE: &str = "an escape that is not JSON (or a low surrogate alone)";
const LONE_SURROGATE: &str = "a high surrogate escape without its low half";

/// Whether a text whose raw content (escaped, as it came) begins with `raw` can be no
/// `structuredContent`'s serialization, its first character decoded
/// ([`first_decoded`]) and asked of the core ([`may_start_serialization`], L15); `None`
/// until enough of it is known. An empty text (`raw` starts with its closing quote)
/// may be one.
fn plain_start(raw: &[u8]) -> Option<bool> {
    let first = match raw {
        [] | [b'\\'] => return None,
        [b'\\', b'u', ..] if raw.len() < 6 => return None,
        [b'"', ..] => None,
        _ => Some(first_decoded(raw)),
    };
    Some(!may_start_serialization(first, b'{') && !may_start_serialization(first, b'['))
}

/// Why a byte that is not JSON where it came is not, by what was expected there (`top`:
/// no object or array is open).
fn unexpected(expect: Expect, top: bool) -> &'static str {
    match expect {
        Expect::Key | Expect::KeyOrEnd => "a byte where an object's key must be",
        Expect::Colon => "a byte where a colon must be",
        Expect::Next if top => "more after the message's end",
        Expect::Next => "a byte where a comma or a closing bracket must be",
        Expect::Value | Expect::ValueOrEnd | Expect::Scalar(_) => "a byte where a value must be",
    }
}

/// A string's bytes are checked and held in segments of about this size.
const SEGMENT_BYTES: usize = 64 << 10;

/// How far past a segment's size a regular run is given bytes: enough that one that is
/// not stopped ends past it (its last blocks and a step back to a character's start).
const RUN_OVERSHOOT: usize = 256;

impl Scan {
    /// Bytes outside strings, up to and including a `"` that opens one: the structure
    /// read as JSON's grammar has it, byte by byte (B4: the first byte it does not
    /// allow is where the message stops being JSON).
    pub(super) fn structure_bytes(&mut self, bytes: &[u8]) -> usize {
        for (i, &byte) in bytes.iter().enumerate() {
            if let Expect::Scalar(scalar) = self.expect {
                if let Some(next) = scalar.next(byte) {
                    self.expect = Expect::Scalar(next);
                    continue;
                }
                if !scalar.complete() {
                    self.break_at(self.at + i as u64, scalar::NOT_A_SCALAR);
                    return bytes.len();
                }
                self.expect = Expect::Next;
            }
            if matches!(byte, b' ' | b'\t' | b'\r' | b'\n') {
                continue;
            }
            if !self.started {
                self.started = true;
                self.batch = byte == b'[';
            }
            let value = matches!(self.expect, Expect::Value | Expect::ValueOrEnd);
            if value && self.stack.len() == 1 && byte != b'"' {
                self.note_top_value(self.skeleton.len() + i);
            }
            let next = match (self.expect, byte) {
                (Expect::Key | Expect::KeyOrEnd, b'"')
                | (Expect::Value | Expect::ValueOrEnd, b'"') => {
                    self.keep(&bytes[..=i]);
                    self.open_string(self.at + i as u64);
                    return i + 1;
                }
                (Expect::Value | Expect::ValueOrEnd, b'{' | b'[')
                    if self.stack.len() >= MAX_DEPTH =>
                {
                    Err("objects and arrays nested too deep")
                }
                (Expect::Value | Expect::ValueOrEnd, b'{') => {
                    self.stack.push(Container::Object {
                        key: Key::default(),
                    });
                    Ok(Expect::KeyOrEnd)
                }
                (Expect::Value | Expect::ValueOrEnd, b'[') => {
                    self.stack.push(Container::Array { index: 0 });
                    Ok(Expect::ValueOrEnd)
                }
                (Expect::Next | Expect::KeyOrEnd, b'}')
                | (Expect::Next | Expect::ValueOrEnd, b']') => match (self.stack.last(), byte) {
                    (Some(Container::Object { .. }), b'}')
                    | (Some(Container::Array { .. }), b']') => {
                        self.end_top_value(i, bytes);
                        self.stack.pop();
                        Ok(Expect::Next)
                    }
                    _ => Err("a bracket that closes nothing open"),
                },
                (Expect::Colon, b':') => Ok(Expect::Value),
                (Expect::Next, b',') if !self.stack.is_empty() => {
                    self.end_top_value(i, bytes);
                    match self.stack.last_mut() {
                        Some(Container::Array { index }) => {
                            *index += 1;
                            Ok(Expect::Value)
                        }
                        _ => Ok(Expect::Key),
                    }
                }
                (Expect::Value | Expect::ValueOrEnd, _) => match Scalar::start(byte) {
                    Some(scalar) => Ok(Expect::Scalar(scalar)),
                    None => Err("a byte where a value must be"),
                },
                (expect, _) => Err(unexpected(expect, self.stack.is_empty())),
            };
            match next {
                Ok(next) => self.expect = next,
                Err(why) => {
                    self.break_at(self.at + i as u64, why);
                    return bytes.len();
                }
            }
        }
        self.keep(bytes);
        bytes.len()
    }

    /// At a `,` or `}` (at `bytes[i]`) that ends a top-level member: note `id`/`method`.
    fn end_top_value(&mut self, i: usize, bytes: &[u8]) {
        if self.stack.len() != 1 {
            return;
        }
        if let Some((key, start)) = self.top_value.take()
            && !self.overflowed
        {
            // The value: from its start (in the skeleton, or in `bytes`) to here.
            let kept = self.skeleton.len();
            let mut raw = self.skeleton.get(start..).unwrap_or_default().to_vec();
            raw.extend_from_slice(bytes.get(start.saturating_sub(kept)..i).unwrap_or_default());
            let raw = raw.trim_ascii().to_vec();
            // The first `id` counts, and a `method` that is `null` is none, as for
            // the lenient reader (`crate::lenient`) and the whole-message path.
            match key {
                TopKey::Id if self.id.is_none() => {
                    self.id = Some(raw);
                    self.offsets.id = Some(self.at + i as u64);
                }
                TopKey::Method if self.method.is_none() && raw != b"null" => {
                    self.method = Some(raw);
                    self.offsets.method = Some(self.at + i as u64);
                }
                TopKey::Id | TopKey::Method => {}
            }
        }
    }

    /// A string opened by its `"` at offset `quote`.
    fn open_string(&mut self, quote: u64) {
        let place = match self.expect {
            Expect::Key | Expect::KeyOrEnd => Place::Key,
            _ => self.value_place(),
        };
        let first_text = matches!(place, Place::Block(_, true)) && self.offsets.text.is_none();
        if first_text {
            self.offsets.text = Some(quote);
        }
        if place != Place::Key && self.stack.len() == 1 {
            // The string's `"` is the last byte kept.
            self.note_top_value(self.skeleton.len().saturating_sub(1));
        }
        if let Some(Container::Object { key }) = self.stack.last_mut()
            && place == Place::Key
        {
            *key = Key::default();
        }
        self.string = Some(Str {
            place,
            start: self.skeleton.len(),
            decoded: 0,
            escape: [0; 6],
            escape_len: 0,
            high: false,
            utf8: [0; 4],
            utf8_len: 0,
            utf8_at: 0,
            may_quote: false,
            first: 0,
            ends: self.ends,
            ring: None,
            dropped: false,
            last: [0; 5],
            first_text,
        });
    }

    /// At the start of a top-level value: if it is `id`'s or `method`'s, where it starts.
    fn note_top_value(&mut self, start: usize) {
        if let Some(Container::Object { key }) = self.stack.first() {
            let top = if key.is(b"id") {
                Some(TopKey::Id)
            } else if key.is(b"method") {
                Some(TopKey::Method)
            } else {
                None
            };
            self.top_value = top.map(|top| (top, start));
        }
    }

    /// Bytes inside a string: up to and including its closing `"`.
    ///
    /// The bytes up to the closing quote (or the end of `bytes`) are one span: found
    /// with one `memchr2` pass that also reads each escape, then checked as a whole
    /// (UTF-8, control characters, `input_`) and kept or held in one copy.
    pub(super) fn string_bytes(&mut self, bytes: &[u8]) -> usize {
        let Some(mut string) = self.string.take() else {
            return 0;
        };
        if string.first_text && self.offsets.text_plain.is_none() {
            // Decided from its raw first bytes, before they are checked: the same
            // whatever the chunking, valid or not.
            let start = &mut self.offsets.text_start;
            let need = 6 - start.len();
            start.extend_from_slice(&bytes[..need.min(bytes.len())]);
            self.offsets.text_plain = plain_start(start);
        }
        if self.skimming && string.place != Place::Key && self.stack.len() > 1 {
            return self.skim_string(string, bytes);
        }
        let mut i = 0;
        let cut_at = string.cut_at(self.at);
        if string.escape_len > 0 && string.utf8_len > 0 {
            // A UTF-8 sequence cut short by an escape.
            self.break_at(string.utf8_at, NOT_UTF8);
            return bytes.len();
        }
        if string.escape_len > 0 {
            // The rest of an escape cut by the end of the last chunk; how long it is
            // shows at its second byte.
            while string.escape_len < escape_len(&string.escape[..string.escape_len])
                && i < bytes.len()
            {
                string.escape[string.escape_len] = bytes[i];
                string.escape_len += 1;
                i += 1;
            }
            if string.escape_len < escape_len(&string.escape[..string.escape_len]) {
                self.string = Some(string);
                return i;
            }
            let escape = string.escape;
            let len = string.escape_len;
            string.escape_len = 0;
            let before = string.decoded;
            match escape_decoded(&mut string, &escape[..len]) {
                Some(decoded) => string.decoded += decoded,
                None => {
                    self.break_at(cut_at, BAD_ESCAPE);
                    return bytes.len();
                }
            }
            self.string_content(&mut string, &escape[..len], before);
        }
        if string.utf8_len > 0 {
            // The rest of a UTF-8 sequence cut by the end of the last chunk.
            let need = utf8_len(string.utf8[0]);
            let take = (need - string.utf8_len).min(bytes.len() - i);
            let piece = &bytes[i..i + take];
            string.utf8[string.utf8_len..string.utf8_len + take].copy_from_slice(piece);
            string.utf8_len += take;
            i += take;
            let before = string.decoded;
            string.decoded += piece.len();
            self.string_content(&mut string, piece, before);
            if string.utf8_len < need {
                self.string = Some(string);
                return i;
            }
            string.utf8_len = 0;
            if std::str::from_utf8(&string.utf8[..need]).is_err() {
                self.break_at(cut_at, NOT_UTF8);
                return bytes.len();
            }
        }
        let start = i;
        // The span is handed on in segments of about SEGMENT_BYTES, each ending before
        // an escape or at a character boundary of plain text, so that a ring can trim.
        let mut segment = start;
        // Raw bytes of escapes minus what they decode to, in the current segment.
        let mut shrink = 0;
        let mut at = i;
        let mut last_escape_end = if string.high { start } else { usize::MAX };
        // The current segment may hold a control byte: bytes no run read hold one
        // (a run stops at any).
        let mut control = false;
        let (end, closed) = loop {
            if !string.high {
                // Plain bytes and common escapes, 64 at a time; what stops the run
                // (or the last few bytes) is read below. A run reaches a little past
                // the segment's size, no further, so that segments (and the ring's
                // checkpoints) stay about SEGMENT_BYTES apart however long the read.
                let budget = (segment + SEGMENT_BYTES + RUN_OVERSHOOT).min(bytes.len());
                let run = run::regular(&bytes[at..budget.max(at)]);
                if run.escapes {
                    string.last = [0; 5];
                    string.may_quote |= run.escaped_printable;
                    last_escape_end = at + run.len;
                }
                shrink += run.shrink;
                at += run.len;
                // A run ends outside escapes and at a character's start: a segment
                // may end there.
                if at - segment >= SEGMENT_BYTES {
                    let raw = &bytes[segment..at];
                    if !self.segment(&mut string, raw, segment, shrink, control) {
                        return bytes.len();
                    }
                    segment = at;
                    shrink = 0;
                    control = false;
                }
            }
            let found = memchr::memchr2(b'"', b'\\', &bytes[at..]);
            let p = found.map_or(bytes.len(), |j| at + j);
            control |= holds_control(&bytes[at..p]);
            if found.is_none() {
                break (bytes.len(), false);
            }
            if string.high && p != last_escape_end {
                let unchecked = &bytes[segment..last_escape_end.max(segment)];
                self.break_after(&mut string, unchecked, segment, LONE_SURROGATE);
                return bytes.len();
            }
            if bytes[p] == b'"' {
                break (p, true);
            }
            let need = escape_len(&bytes[p..]);
            if p + 1 >= bytes.len() || p + need > bytes.len() {
                // An escape cut by the end of the chunk: kept for the next one.
                let cut = &bytes[p..];
                string.escape[..cut.len()].copy_from_slice(cut);
                string.escape_len = cut.len();
                break (p, false);
            }
            if p - segment >= SEGMENT_BYTES && !string.high {
                if !self.segment(&mut string, &bytes[segment..p], segment, shrink, control) {
                    return bytes.len();
                }
                segment = p;
                shrink = 0;
                control = false;
            }
            match escape_decoded(&mut string, &bytes[p..p + need]) {
                Some(decoded) => shrink += need - decoded,
                None => {
                    self.break_after(&mut string, &bytes[segment..p], segment, BAD_ESCAPE);
                    return bytes.len();
                }
            }
            at = p + need;
            last_escape_end = at;
        };
        if string.high && string.escape_len == 0 && end != last_escape_end {
            let unchecked = &bytes[segment..last_escape_end.max(segment)];
            self.break_after(&mut string, unchecked, segment, LONE_SURROGATE);
            return bytes.len();
        }
        // What has escapes in it, then the plain rest in pieces.
        let escaped_end = if last_escape_end == usize::MAX {
            segment
        } else {
            last_escape_end.max(segment)
        };
        let raw = &bytes[segment..escaped_end];
        if !self.segment(&mut string, raw, segment, shrink, control) {
            return bytes.len();
        }
        let mut piece = escaped_end;
        while piece < end {
            let mut to = (piece + SEGMENT_BYTES).min(end);
            while to < end && (bytes[to] & 0xC0) == 0x80 {
                to += 1;
            }
            if !self.segment(&mut string, &bytes[piece..to], piece, 0, control) {
                return bytes.len();
            }
            piece = to;
        }
        if string.escape_len > 0 {
            self.string = Some(string);
            return bytes.len();
        }
        if closed {
            self.close_string(string, self.at + end as u64);
            self.keep(b"\"");
            return end + 1;
        }
        self.string = Some(string);
        bytes.len()
    }

    /// Bytes inside a string that is skipped ([`Scan::skim`]): up to and including its
    /// closing quote. An escape cut by the end of the last chunk escapes the first
    /// byte here when only its backslash came.
    fn skim_string(&mut self, mut string: Str, bytes: &[u8]) -> usize {
        let escaped_first = string.escape_len == 1;
        string.escape_len = 0;
        match run::closing_quote(bytes, escaped_first) {
            Ok(quote) => {
                string.ring = None;
                string.high = false;
                string.utf8_len = 0;
                self.close_string(string, self.at + quote as u64);
                self.keep(b"\"");
                quote + 1
            }
            Err(ends_escaping) => {
                string.escape_len = usize::from(ends_escaping);
                self.string = Some(string);
                bytes.len()
            }
        }
    }

    /// One segment of a string's raw content (`shrink`: its escapes' raw bytes minus
    /// what they decode to; `index`: where it starts in the bytes being read; `control`:
    /// it may hold a control byte): checked, counted, kept or held. `false` if invalid.
    fn segment(
        &mut self,
        string: &mut Str,
        raw: &[u8],
        index: usize,
        shrink: usize,
        control: bool,
    ) -> bool {
        if raw.is_empty() {
            return true;
        }
        if !self.check_span(string, raw, self.at + index as u64, control) {
            return false;
        }
        let before = string.decoded;
        string.decoded += raw.len() - shrink;
        self.string_content(string, raw, before);
        true
    }

    /// A break found just after `unchecked` (raw bytes of the string from `index` in the
    /// bytes being read, not checked yet): `why` there, unless they break first.
    fn break_after(&mut self, string: &mut Str, unchecked: &[u8], index: usize, why: &'static str) {
        let end = self.at + (index + unchecked.len()) as u64;
        let at = self.at + index as u64;
        if !unchecked.is_empty() && !self.check_span(string, unchecked, at, true) {
            return;
        }
        match string.utf8_len {
            0 => self.break_at(end, why),
            _ => self.break_at(string.utf8_at, NOT_UTF8),
        }
    }

    /// Check the raw bytes of a span of a string: no raw control character (looked
    /// for only when `control` says it may hold one), UTF-8 throughout (a sequence cut
    /// by the span's end completed by the next one), and note whether it may quote an
    /// input (V3). `false` (and invalid, broken at the first bad byte: `span` starts at
    /// offset `at`) if not.
    fn check_span(&mut self, string: &mut Str, span: &[u8], at: u64, control: bool) -> bool {
        if string.utf8_len > 0 {
            // A sequence cut by the last span's end that this span does not complete.
            self.break_at(string.utf8_at, NOT_UTF8);
            return false;
        }
        let control = control && holds_control(span);
        let utf8 = simdutf8::compat::from_utf8(span);
        // The first of a control character and a byte that is not UTF-8 breaks it.
        let not_utf8 = utf8.err().filter(|error| error.error_len().is_some());
        let control = control.then(|| span.iter().position(|&b| b < 0x20).unwrap_or(0));
        match (control, not_utf8.map(|error| error.valid_up_to())) {
            (None, None) => {}
            (Some(c), u) if u.is_none_or(|u| c < u) => {
                self.break_at(at + c as u64, CONTROL);
                return false;
            }
            (_, u) => {
                self.break_at(at + u.unwrap_or(0) as u64, NOT_UTF8);
                return false;
            }
        }
        if let Err(error) = utf8 {
            // A sequence cut by the span's end, completed by the next one.
            let tail = &span[error.valid_up_to()..];
            string.utf8[..tail.len()].copy_from_slice(tail);
            string.utf8_len = tail.len();
            string.utf8_at = at + error.valid_up_to() as u64;
        }
        if !string.may_quote && matches!(string.place, Place::Block(..) | Place::Structured) {
            let mut probe = [0u8; 10];
            let n = span.len().min(5);
            probe[..5].copy_from_slice(&string.last);
            probe[5..5 + n].copy_from_slice(&span[..n]);
            string.may_quote =
                INPUT_FINDER.find(&probe[..5 + n]).is_some() || INPUT_FINDER.find(span).is_some();
        }
        if span.len() >= 5 {
            string.last.copy_from_slice(&span[span.len() - 5..]);
        } else {
            string.last.rotate_left(span.len());
            string.last[5 - span.len()..].copy_from_slice(span);
        }
        true
    }

    /// A string closed by its `"` at offset `quote`.
    fn close_string(&mut self, string: Str, quote: u64) {
        if string.utf8_len > 0 {
            self.break_at(string.utf8_at, NOT_UTF8);
            return;
        }
        if string.high {
            self.break_at(quote, LONE_SURROGATE);
            return;
        }
        self.expect = match string.place {
            Place::Key => Expect::Colon,
            _ => Expect::Next,
        };
        if string.place == Place::Key
            && self.stack.len() == 1
            && let Some(Container::Object { key }) = self.stack.last()
        {
            if key.is(b"result") {
                self.result = true;
                self.offsets.result = Some(quote);
            }
            self.error |= key.is(b"error");
        }
        self.hold_closed(string);
    }
}

/// Whether `bytes` hold a control byte (below 0x20), which a string may not hold raw.
/// A fold rather than a search: it compiles to a vector compare of every byte.
fn holds_control(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |control, &b| control | (b < 0x20))
}

/// What one whole escape (`\\x` or `\\uXXXX`) decodes to, in UTF-8 bytes (a surrogate
/// pair's 4 counted at its high half); `None` if it is not a valid one here.
fn escape_decoded(string: &mut Str, escape: &[u8]) -> Option<usize> {
    if string.utf8_len > 0 {
        return None; // a UTF-8 sequence cut by an escape
    }
    string.last = [0; 5];
    match escape.get(1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') if !string.high => Some(1),
        Some(b'u') => match hex4(&escape[2..])? {
            0xD800..=0xDBFF if !string.high => {
                string.high = true;
                Some(4)
            }
            0xDC00..=0xDFFF if string.high => {
                string.high = false;
                Some(0)
            }
            0xD800..=0xDFFF => None,
            _ if string.high => None,
            unit => {
                if (0x20..0x7f).contains(&unit) {
                    string.may_quote = true;
                }
                char::from_u32(unit).map(char::len_utf8)
            }
        },
        _ => None,
    }
}

/// The first byte a string's raw content decodes to (0x80 for any character that is
/// not ASCII).
pub(super) fn first_decoded(raw: &[u8]) -> u8 {
    match raw {
        [b'\\', b'u', hex @ ..] => hex4(hex)
            .and_then(|unit| u8::try_from(unit).ok())
            .filter(u8::is_ascii)
            .unwrap_or(0x80),
        [b'\\', escaped, ..] => match escaped {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            other => *other,
        },
        [first, ..] if first.is_ascii() => *first,
        _ => 0x80,
    }
}

/// Finds `input_` (the start of pydantic's `input_value=` and `input_type=`, V3).
static INPUT_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"input_"));

/// The length of the escape that starts `bytes` (at its `\`).
fn escape_len(bytes: &[u8]) -> usize {
    match bytes.get(1) {
        Some(b'u') => 6,
        _ => 2,
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

pub(super) fn hex4(hex: &[u8]) -> Option<u32> {
    hex.get(..4)?.iter().try_fold(0, |value, &digit| {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'a'..=b'f' => digit - b'a' + 10,
            b'A'..=b'F' => digit - b'A' + 10,
            _ => return None,
        };
        Some(value << 4 | u32::from(nibble))
    })
}

#[cfg(test)]
mod tests {
    use super::plain_start;

    /// B3, L15: a text is cut unheld only when it cannot be `structuredContent`'s
    /// serialization, known from its first character, escaped or not.
    #[test]
    fn b3_a_text_is_plain_unless_it_starts_as_json_text_does() {
        for (raw, plain) in [
            (&b"log"[..], Some(true)),
            (br"\u001b[31m", Some(true)),
            (br"\u007B", Some(false)),
            (br"\u005b1", Some(false)),
            (br"\u0020x", Some(false)),
            (br"\n", Some(false)),
            (br"\t", Some(false)),
            (br"\f", Some(false)),
            (br"\u000C", Some(false)),
            (br#"\""#, Some(true)),
            (b"{\"a\"", Some(false)),
            (b"[1", Some(false)),
            (b" x", Some(false)),
            (b"\"", Some(false)),
            (br"\u00", None),
            (br"\", None),
            (b"", None),
        ] {
            assert_eq!(plain_start(raw), plain, "{}", String::from_utf8_lossy(raw));
        }
    }
}
