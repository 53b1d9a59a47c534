//! The top-level `id` of a message that is not strict JSON (SPEC B4): what a server
//! wrote with invalid UTF-8 in a string, or a lone surrogate escape (a TypeScript
//! server that cut a string inside an emoji). Such a message is forwarded exactly as
//! it came; reading its `id` leniently lets it end its request's pending entry, so
//! that no second, made-up answer for that id ever follows.
//!
//! Strings are skipped by their quotes and escapes alone (their contents are not
//! checked); everything else is read as the structure of one JSON object, as far as it
//! is one. The message answers a request as a reader that streams it decides, at the
//! first point where it can: once its top-level `id` was read whole and a top-level
//! `result` or `error` member began, it answers the request that `id` names (when the
//! `id` is strict JSON: a number, or a string) — unless a top-level `method` other
//! than `null` ended before (then it is a request or a notification, whatever
//! follows). Of two top-level `id`s, the first counts; nothing after the point of
//! decision changes it, and a structure that broke before it leaves the message
//! answering nothing. Every path decides by this one rule for a message it forwards
//! as it came (A0): the whole-message path, and the long-message path that passes an
//! answer on before its end. [`TopReader`] reads it as the bytes come, in memory
//! bounded whatever the message's length; [`response_id`] reads a whole one.
//!
//! ```
//! use backstop_jsonrpc::lenient::response_id;
//! let cut = b"{\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\ud83d\"}]},\"id\":7}";
//! assert!(serde_json::from_slice::<serde_json::Value>(cut).is_err(), "a lone surrogate");
//! assert_eq!(response_id(cut).as_deref(), Some("7"));
//! assert_eq!(response_id(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"x\",\"params\":\"\xff\"}"), None, "a request");
//! assert_eq!(response_id(br#"{"id":9,"result":{},"method":"x"}"#).as_deref(), Some("9"), "decided at `result`");
//! ```

/// The raw top-level `id` of `message` (one JSON-RPC message, read leniently), when it
/// is a response: it has an `id` that is strict JSON, and no `method`.
pub fn response_id(message: &[u8]) -> Option<String> {
    let mut reader = TopReader::default();
    reader.push(message);
    reader.response_id()
}

/// The longest `id` read (longer ones are no ids this reader gives): far more than any
/// client's, and still a bound on what a message of any length costs.
const MAX_ID_BYTES: usize = 64 << 10;

/// The top level of one message read leniently as its bytes come (see the [module
/// docs](self)), holding no more than its `id`.
///
/// ```
/// use backstop_jsonrpc::lenient::TopReader;
/// let mut reader = TopReader::default();
/// for piece in [&b"{\"result\":\"\xff"[..], b"\",\"i", b"d\":\"a\\\"", b"b\"}"] {
///     reader.push(piece);
/// }
/// assert_eq!(reader.response_id().as_deref(), Some(r#""a\"b""#));
/// ```
#[derive(Debug, Clone, Default)]
pub struct TopReader {
    state: State,
    /// Containers open inside the top-level object.
    depth: usize,
    /// The key of the top-level member being read (up to 8 bytes; longer is none).
    key: Vec<u8>,
    key_long: bool,
    /// The id's bytes while it is read, and once read.
    id: Option<Vec<u8>>,
    reading_id: bool,
    /// The id's value ended (at a delimiter or a space).
    id_done: bool,
    /// A top-level `id` key was met: a later one is not read.
    id_met: bool,
    /// The first bytes of a top-level `method`'s value while it is read (enough to
    /// tell `null`).
    method_value: Option<Vec<u8>>,
    /// A top-level `method` other than `null` ended.
    method: bool,
    /// A top-level `result` or `error` member began.
    response_member: bool,
    /// Once decided: the id the message answers, or none.
    answer: Option<Option<Vec<u8>>>,
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Before the top-level object.
    #[default]
    Start,
    /// In the top-level object, before a key (or its end).
    Key,
    /// In a top-level key's string (`escaped`: after a backslash).
    KeyString { escaped: bool },
    /// After a key, before its colon.
    Colon,
    /// Before a member's value.
    Value,
    /// In a member's value: in a string, or not.
    InValue { string: bool, escaped: bool },
    /// After the top-level object's end.
    End,
    /// Not one JSON object, as far as structure goes.
    Broken,
}

impl TopReader {
    /// The next bytes of the message.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while let Some((&byte, rest)) = bytes.split_first() {
            // Nothing after the point of decision changes it: the rest is not read.
            if self.answer.is_some() {
                return;
            }
            match self.state {
                State::Broken => return,
                // Inside a string of a value that is not the id: to its closing quote
                // at once, past its escapes (the bulk of a long message).
                State::InValue {
                    string: true,
                    escaped: false,
                } if !self.reading_id => match string_end(bytes) {
                    StringEnd::Quote(at) => {
                        self.byte(b'"');
                        bytes = &bytes[at + 1..];
                    }
                    StringEnd::AfterBackslash => {
                        self.state = State::InValue {
                            string: true,
                            escaped: true,
                        };
                        return;
                    }
                    StringEnd::NotYet => return,
                },
                _ => {
                    self.byte(byte);
                    bytes = rest;
                }
            }
        }
    }

    /// The raw `id` of the request the message answers, once decided (see the
    /// [module docs](self)).
    pub fn response_id(&self) -> Option<String> {
        let id = String::from_utf8(self.answer.clone()??).ok()?;
        serde_json::from_str::<&serde_json::value::RawValue>(&id).ok()?;
        Some(id)
    }

    fn byte(&mut self, byte: u8) {
        let space = matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        self.state = match self.state {
            State::Start | State::End if space => self.state,
            State::Start if byte == b'{' => State::Key,
            State::Key if space => State::Key,
            State::Key if byte == b'"' => {
                self.key.clear();
                self.key_long = false;
                State::KeyString { escaped: false }
            }
            State::Key if byte == b'}' => State::End,
            State::KeyString { escaped: true } => self.key_byte(byte),
            State::KeyString { escaped: false } if byte == b'"' => {
                self.response_member |= self.key_is(b"result") || self.key_is(b"error");
                self.decide();
                State::Colon
            }
            State::KeyString { escaped: false } if byte == b'\\' => {
                self.key_long = true; // an escaped key is not one this reader names
                State::KeyString { escaped: true }
            }
            State::KeyString { escaped: false } => self.key_byte(byte),
            State::Colon if space => State::Colon,
            State::Colon if byte == b':' => State::Value,
            State::Value if space => State::Value,
            State::Value => {
                let id = self.key_is(b"id");
                self.reading_id = id && !self.id_met;
                self.id_met |= id;
                if self.key_is(b"method") {
                    self.method_value = Some(Vec::new());
                }
                if self.reading_id {
                    self.id = Some(Vec::new());
                    self.id_done = false;
                }
                self.value_byte(byte, false, false)
            }
            State::InValue { string, escaped } => self.value_byte(byte, string, escaped),
            _ => State::Broken,
        };
    }

    /// Whether the top-level key read last is `name` (written without escapes).
    fn key_is(&self, name: &[u8]) -> bool {
        !self.key_long && self.key == name
    }

    /// Decide what the message answers, if it can be decided now and was not yet.
    fn decide(&mut self) {
        if self.answer.is_some() {
            return;
        }
        if self.method {
            self.answer = Some(None);
        } else if self.id_done && self.response_member {
            self.answer = Some(self.id.clone());
        }
    }

    fn key_byte(&mut self, byte: u8) -> State {
        if self.key.len() < 8 {
            self.key.push(byte);
        } else {
            self.key_long = true;
        }
        State::KeyString { escaped: false }
    }

    /// One byte of a member's value (`string`, `escaped`: where in it the last left).
    fn value_byte(&mut self, byte: u8, string: bool, escaped: bool) -> State {
        let delimiter = !string && self.depth == 0 && matches!(byte, b',' | b'}');
        let ends_scalar = !string
            && self.depth == 0
            && matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}');
        if ends_scalar && self.reading_id {
            self.reading_id = false;
            self.id_done = true;
            self.decide();
        }
        if ends_scalar && let Some(method) = self.method_value.take() {
            self.method |= method != b"null";
            self.decide();
        }
        if let Some(method) = &mut self.method_value
            && method.len() < 5
        {
            method.push(byte);
        }
        if self.reading_id {
            let id = self.id.get_or_insert_with(Vec::new);
            if id.len() < MAX_ID_BYTES {
                id.push(byte);
            } else {
                self.id = None;
                self.reading_id = false;
            }
        }
        if delimiter {
            return match byte {
                b',' => State::Key,
                _ => State::End,
            };
        }
        let next = match (string, escaped, byte) {
            (true, true, _) => (true, false),
            (true, false, b'\\') => (true, true),
            (true, false, b'"') => (false, false),
            (true, false, _) => (true, false),
            (false, _, b'"') => (true, false),
            (false, _, b'{' | b'[') => {
                self.depth += 1;
                (false, false)
            }
            (false, _, b'}' | b']') => match self.depth.checked_sub(1) {
                Some(depth) => {
                    self.depth = depth;
                    (false, false)
                }
                None => return State::Broken,
            },
            (false, _, _) => (false, false),
        };
        State::InValue {
            string: next.0,
            escaped: next.1,
        }
    }
}

/// Where a string whose contents `bytes` begin ends, as far as `bytes` go.
#[derive(Debug, PartialEq, Eq)]
enum StringEnd {
    /// At its closing quote, at this offset.
    Quote(usize),
    /// Not in `bytes`, whose last byte is a backslash: the next byte is escaped.
    AfterBackslash,
    /// Not in `bytes`.
    NotYet,
}

/// Where the string `bytes` are inside of ends: its first quote not escaped. An escape
/// is skipped whole (a backslash and the byte after it), so escape-heavy text
/// (scrollback's `\n`, `\u001b`) is searched, not stepped through.
fn string_end(bytes: &[u8]) -> StringEnd {
    let mut from = 0;
    while let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[from..]) {
        let at = from + at;
        if bytes[at] == b'"' {
            return StringEnd::Quote(at);
        }
        if at + 1 == bytes.len() {
            return StringEnd::AfterBackslash;
        }
        from = at + 2;
    }
    StringEnd::NotYet
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_string_s_end_is_searched_past_its_escapes() {
        assert_eq!(string_end(br#"ab\"c\\"d"#), StringEnd::Quote(7));
        assert_eq!(string_end(br#"\""#), StringEnd::NotYet);
        assert_eq!(string_end(br#"ab\"#), StringEnd::AfterBackslash);
        assert_eq!(string_end(b"plain"), StringEnd::NotYet);
        assert_eq!(string_end(br#""x"#), StringEnd::Quote(0));
    }

    #[test]
    fn b4_of_two_ids_the_first_is_read_as_a_streaming_reader_meets_it() {
        // Found by the fuzz target `events`: the long-message path decided on the
        // first id as it came, the whole-message path read the last.
        let cases: [(&str, Option<&str>); 5] = [
            (r#"{"id":5,"id":1,"result":0,%c"#, Some("5")),
            (r#"{"id":5,"x":{"id":1},"id":2,"error":0"#, Some("5")),
            (r#"{"id":x,"id":1,"result":0}"#, None), // the first is no id
            (r#"{"id":1,"id":5,"result":0}"#, Some("1")),
            (r#"{"result":0,"id":1,"id":5,"id":6}"#, Some("1")),
        ];
        for (message, id) in cases {
            assert_eq!(response_id(message.as_bytes()).as_deref(), id, "{message}");
        }
    }

    #[test]
    fn b5_a_message_answers_as_a_streaming_reader_decides() {
        // Found by the fuzz target `stream`: the long path decided at the point where
        // the id and a `result` or `error` were read, the whole path on every member.
        let cases: [(&str, Option<&str>); 9] = [
            (r#"{"id":2,"result":{},"method":"x"}"#, Some("2")),
            (r#"{"id":2,"result":{},"error":{}}"#, Some("2")),
            (r#"{"result":null,"id":2}"#, Some("2")),
            (r#"{"method":null,"id":2,"result":{}}"#, Some("2")),
            (r#"{"method":"x","id":2,"result":{}}"#, None),
            (r#"{"result":{},"method":"x","id":2}"#, None),
            (r#"{"id":2,"method":"ping"}"#, None),
            (r#"{"id":2,"method":null}"#, None),
            (r#"{"id":2,"params":{}}"#, None),
        ];
        for (message, id) in cases {
            assert_eq!(response_id(message.as_bytes()).as_deref(), id, "{message}");
        }
    }

    #[test]
    fn b4_reads_the_id_around_what_strict_json_refuses() {
        let long_id = |len: usize| {
            format!(
                "{{\"id\":\"{}\",\"result\":\"\\ud83d\"}}",
                "x".repeat(len - 2)
            )
        };
        let (longest, too_long) = (long_id(MAX_ID_BYTES), long_id(MAX_ID_BYTES + 1));
        assert_eq!(
            response_id(longest.as_bytes()).map(|id| id.len()),
            Some(MAX_ID_BYTES)
        );
        assert_eq!(
            response_id(too_long.as_bytes()),
            None,
            "longer ids are none"
        );
        let cases: [(&[u8], Option<&str>); 18] = [
            (b"{\"result\":\"\xff\",\"id\"=4}", None),
            (b"x\"id\":1,\"result\":{}}", None),
            (b"{x\":1,\"id\":2}", None),
            (b"{\"result\":\"\xff\",\"id\":3,}", Some("3")),
            (b"{\"a\\\"b\":\"\xff\",\"id\":2,\"error\":0}", Some("2")),
            (b"{\"a\\\"b\":\"\xff\",\"id\":2}", None),
            (
                b"{\"id\":\"a\\\"b\",\"result\":\"\xff\xfe\"}",
                Some("\"a\\\"b\""),
            ),
            (
                b" {\"result\":{\"t\":[\"\\ud83d\",{\"x\":\"}\"}]},\"id\" : -12 } ",
                Some("-12"),
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"error\":{\"message\":\"\xc3\"},\"id\":null}",
                Some("null"),
            ),
            (b"{\"id\":1,\"result\":{}", Some("1")),
            (b"{\"id\":1,\"result\":{}} trailing", Some("1")),
            (
                b"{\"id\":1,\"error\":{\"m\":\"\0\"}}\"method\":\"x\"",
                Some("1"),
            ),
            (b"{\"id\":12]", None),
            (b"{\"id\":\"\xff\",\"result\":{}}", None),
            (b"{\"result\":\"\xff\"}", None),
            (b"[{\"id\":1,\"result\":{}}]", None),
            (
                b"{\"id\":1,\"method\":\"notifications/x\",\"params\":\"\xff\"}",
                None,
            ),
            (
                b"{\"error\":{\"code\":-32603,\"\nmessage\":\"x\"},\"id\":4}",
                Some("4"),
            ),
        ];
        for (message, id) in cases {
            assert_eq!(
                response_id(message).as_deref(),
                id,
                "{}",
                String::from_utf8_lossy(message)
            );
        }
    }

    proptest! {
        /// On strict JSON it reads what serde_json reads, whatever the chunking.
        #[test]
        fn b4_agrees_with_serde_json_on_valid_messages(
            id in prop_oneof![any::<i64>().prop_map(|n| serde_json::json!(n)), ".{0,12}".prop_map(serde_json::Value::from)],
            text in ".{0,40}",
            id_last in any::<bool>(),
            spaced in any::<bool>(),
            chunk in 1usize..17,
        ) {
            let result = serde_json::json!({"content": [{"type": "text", "text": text}], "x": [[{}], "]"]});
            let id_json = serde_json::to_string(&id).unwrap();
            let result_json = match spaced {
                true => serde_json::to_string_pretty(&result).unwrap(),
                false => result.to_string(),
            };
            let message = match id_last {
                true => format!(r#"{{"jsonrpc":"2.0","result":{result_json} , "id" : {id_json} }}"#),
                false => format!(r#"{{"jsonrpc":"2.0","id":{id_json},"result":{result_json}}}"#),
            };
            let mut reader = TopReader::default();
            for piece in message.as_bytes().chunks(chunk) {
                reader.push(piece);
            }
            prop_assert_eq!(reader.response_id(), Some(id_json));
        }

        /// Whatever the bytes, the chunking never changes what it reads: an escape
        /// split between two pushes included.
        #[test]
        fn b4_reads_the_same_whatever_the_chunking(
            bytes in prop::collection::vec(prop_oneof![
                Just(b'"'), Just(b'\\'), Just(b'{'), Just(b'}'), Just(b':'), Just(b','),
                Just(b'i'), Just(b'd'), Just(b'1'), Just(0xff), any::<u8>(),
            ], 0..120),
            chunk in 1usize..9,
        ) {
            let mut message = br#"{"id":5,"result":{"text":""#.to_vec();
            message.extend(&bytes);
            let mut reader = TopReader::default();
            for piece in message.chunks(chunk) {
                reader.push(piece);
            }
            prop_assert_eq!(reader.response_id(), response_id(&message));
        }

        /// Whatever the bytes, it never panics.
        #[test]
        fn b1_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = response_id(&bytes);
        }
    }
}
