//! The top-level `id` of a message that is not strict JSON (SPEC B4): what a server
//! wrote with invalid UTF-8 in a string, or a lone surrogate escape (a TypeScript
//! server that cut a string inside an emoji). Such a message is forwarded exactly as
//! it came; reading its `id` leniently lets it end its request's pending entry, so
//! that no second, made-up answer for that id ever follows.
//!
//! Strings are skipped by their quotes and escapes alone (their contents are not
//! checked); everything else must be the structure of one JSON object. The `id` itself
//! must be strict JSON (a number, or a string), and the message must have no
//! top-level `method` (it is a response).
//!
//! ```
//! use backstop_jsonrpc::lenient::response_id;
//! let cut = b"{\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\ud83d\"}]},\"id\":7}";
//! assert!(serde_json::from_slice::<serde_json::Value>(cut).is_err(), "a lone surrogate");
//! assert_eq!(response_id(cut), Some("7"));
//! assert_eq!(response_id(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"x\",\"params\":\"\xff\"}"), None, "a request");
//! ```

/// The raw top-level `id` of `message` (one JSON-RPC message, read leniently), when it
/// is a response: it has an `id` that is strict JSON, and no `method`.
pub fn response_id(message: &[u8]) -> Option<&str> {
    let members = top_members(message)?;
    if members.method {
        return None;
    }
    let id = std::str::from_utf8(members.id?).ok()?;
    serde_json::from_str::<&serde_json::value::RawValue>(id).ok()?;
    Some(id)
}

/// What the top level of a message says, as far as its structure could be read.
#[derive(Debug, Default)]
struct TopMembers<'a> {
    id: Option<&'a [u8]>,
    method: bool,
}

/// The top-level `id` and whether there is a `method`, read from an object's members
/// up to its end; `None` when `message` is no object, or its structure breaks before
/// its end (then neither can be trusted).
fn top_members(message: &[u8]) -> Option<TopMembers<'_>> {
    let mut at = skip_space(message, 0);
    expect(message, &mut at, b'{')?;
    let mut members = TopMembers::default();
    at = skip_space(message, at);
    if message.get(at) == Some(&b'}') {
        return Some(members);
    }
    loop {
        let key_start = at;
        at = skip_string(message, at)?;
        let key = &message[key_start + 1..at - 1];
        at = skip_space(message, at);
        expect(message, &mut at, b':')?;
        let value_start = skip_space(message, at);
        at = skip_value(message, value_start)?;
        match key {
            b"id" => members.id = Some(&message[value_start..at]),
            b"method" => members.method = true,
            _ => {}
        }
        at = skip_space(message, at);
        match message.get(at)? {
            b',' => at = skip_space(message, at + 1),
            b'}' => {
                let end = skip_space(message, at + 1);
                return (end == message.len()).then_some(members);
            }
            _ => return None,
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

fn expect(bytes: &[u8], at: &mut usize, byte: u8) -> Option<()> {
    (bytes.get(*at) == Some(&byte)).then(|| *at += 1)
}

/// The end of the string that starts at `at` (just past its closing quote).
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut at = at + 1;
    loop {
        let next = at + memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes[next] {
            b'"' => return Some(next + 1),
            _ => at = next + 2, // the escaped byte, whatever it is
        }
    }
}

/// The end of the value that starts at `at`: a string, a container (its strings
/// skipped, its brackets counted), or a scalar (up to the next delimiter).
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = skip_string(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let rest = &bytes[at..];
            let len = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            (len > 0).then_some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn b4_reads_the_id_around_what_strict_json_refuses() {
        let cases: [(&[u8], Option<&str>); 9] = [
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
            (b"{\"id\":1,\"result\":{}", None),
            (b"{\"id\":1,\"result\":{}} trailing", None),
            (b"{\"id\":\"\xff\",\"result\":{}}", None),
            (b"{\"result\":\"\xff\"}", None),
            (b"[{\"id\":1,\"result\":{}}]", None),
            (
                b"{\"id\":1,\"method\":\"notifications/x\",\"params\":\"\xff\"}",
                None,
            ),
        ];
        for (message, id) in cases {
            assert_eq!(
                response_id(message),
                id,
                "{}",
                String::from_utf8_lossy(message)
            );
        }
    }

    proptest! {
        /// On strict JSON it reads what serde_json reads.
        #[test]
        fn b4_agrees_with_serde_json_on_valid_messages(
            id in prop_oneof![any::<i64>().prop_map(|n| serde_json::json!(n)), ".{0,12}".prop_map(serde_json::Value::from)],
            text in ".{0,40}",
            id_last in any::<bool>(),
        ) {
            let result = serde_json::json!({"content": [{"type": "text", "text": text}], "x": [[{}], "]"]});
            let message = match id_last {
                true => serde_json::json!({"jsonrpc": "2.0", "result": result, "id": id}),
                false => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            };
            let bytes = serde_json::to_vec(&message).unwrap();
            let expected = serde_json::to_string(&id).unwrap();
            prop_assert_eq!(response_id(&bytes), Some(expected.as_str()));
        }

        /// Whatever the bytes, it never panics.
        #[test]
        fn b1_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = response_id(&bytes);
        }
    }
}
