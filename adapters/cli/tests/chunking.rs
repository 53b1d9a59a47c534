//! The chunking strategy of `support::chunks` (for SPEC B1, B3, B4 properties), and
//! the property it exists for, on the framing the proxy reads the server with: the
//! lines `LineReader` hands on never depend on how the bytes were split across reads.

mod support;

use std::collections::BTreeSet;

use backstop::framing::LineReader;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use support::chunks::{ChunkedReader, chunks, split, tricky_cuts};

/// Text with what a byte-level scanner must carry across reads: escapes, colour
/// sequences, quotes, backslashes, multi-byte UTF-8.
fn tricky_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("\u{1b}[32m".to_owned()),
            Just("é".to_owned()),
            Just("👍🏽".to_owned()),
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            Just("\t".to_owned()),
            "[a-z ]{1,8}",
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

/// One server line: a `tools/call` result holding tricky text, or bytes that are not
/// JSON (bad UTF-8 included, B4) — never a raw `\n`.
fn server_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        tricky_text().prop_map(|text| {
            serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": 1,
                "result": {"content": [{"type": "text", "text": text}]}}))
            .unwrap()
        }),
        proptest::collection::vec(
            any::<u8>().prop_filter("not a newline", |b| *b != b'\n'),
            0..40
        ),
    ]
}

/// Several lines joined as a server writes them (the last one maybe without its
/// newline), and a chunking of them.
fn stream_and_chunks() -> impl Strategy<Value = (Vec<u8>, Vec<Vec<u8>>)> {
    (
        proptest::collection::vec(server_line(), 1..5),
        any::<bool>(),
    )
        .prop_flat_map(|(lines, last_newline)| {
            let mut stream = lines.join(&b"\n"[..]);
            if last_newline {
                stream.push(b'\n');
            }
            (Just(stream.clone()), chunks(stream))
        })
}

/// The lines of a whole stream: split at each `\n`; what follows the last one is a
/// line only if it is not empty.
fn lines_of(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = stream.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if lines.last().is_some_and(Vec::is_empty) {
        lines.pop();
    }
    lines
}

proptest! {
    /// The chunks are non-empty and join back to the message.
    #[test]
    fn chunks_join_back_to_the_message(
        (message, chunked) in server_line().prop_flat_map(|m| (Just(m.clone()), chunks(m)))
    ) {
        prop_assert!(chunked.iter().all(|chunk| !chunk.is_empty()));
        prop_assert_eq!(chunked.concat(), message);
    }

    /// B1: however the server's bytes are split across reads, the framing hands on
    /// the same lines, in order.
    #[test]
    fn lines_do_not_depend_on_how_reads_split_them((stream, chunked) in stream_and_chunks()) {
        let mut reader = LineReader::new(ChunkedReader::new(chunked));
        let mut read = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            read.push(line.to_vec());
        }
        prop_assert_eq!(read, lines_of(&stream));
    }
}

#[test]
fn split_ignores_the_ends_and_repeats() {
    assert_eq!(
        split(b"abcd", [0, 1, 3, 3, 4, 9]),
        [b"a".to_vec(), b"bc".to_vec(), b"d".to_vec()]
    );
    assert_eq!(split(b"", [0, 1]), Vec::<Vec<u8>>::new());
}

#[test]
fn tricky_cuts_are_inside_escapes_utf8_quotes_and_line_breaks() {
    // `"` at 0 and 7, `\u001b` at 1..7, `é` at 8..10 (its second byte at 9).
    let message = "\"\\u001b\"é.".as_bytes();
    assert_eq!(tricky_cuts(message), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(tricky_cuts(b"ab\ncd"), [2, 3]);
}

#[test]
fn chunked_reader_never_joins_two_chunks_in_one_read() {
    use std::io::Read;
    let mut reader = ChunkedReader::new(vec![b"abc".to_vec(), b"d".to_vec()]);
    let mut buffer = [0; 2];
    let reads: Vec<usize> = std::iter::from_fn(|| {
        let n = reader.read(&mut buffer).unwrap();
        (n > 0).then_some(n)
    })
    .collect();
    assert_eq!(reads, [2, 1, 1]);
}

/// The strategy reaches its corners: all 1-byte chunks, the message whole, and cuts
/// inside a `\u` escape and inside a UTF-8 sequence.
#[test]
fn chunks_reach_one_byte_reads_and_cuts_inside_escapes_and_utf8() {
    let message = serde_json::to_vec(&serde_json::json!({"text": "a\u{1b}[1mé👍 b"})).unwrap();
    let escape = (1..message.len())
        .find(|&at| message[at - 1] == b'\\' && message[at] == b'u')
        .unwrap();
    let utf8: BTreeSet<usize> = (0..message.len())
        .filter(|&at| message[at] & 0xC0 == 0x80)
        .collect();
    let mut runner = TestRunner::deterministic();
    let strategy = chunks(message.clone());
    let (mut one_byte, mut whole, mut in_escape, mut in_utf8) = (false, false, false, false);
    for _ in 0..500 {
        let chunked = strategy.new_tree(&mut runner).unwrap().current();
        let cuts: BTreeSet<usize> = chunked
            .iter()
            .scan(0, |at, chunk| {
                *at += chunk.len();
                Some(*at)
            })
            .collect();
        one_byte |= chunked.len() == message.len();
        whole |= chunked.len() == 1;
        in_escape |= (escape + 1..escape + 5).any(|at| cuts.contains(&at));
        in_utf8 |= utf8.iter().any(|at| cuts.contains(at));
    }
    assert!(
        one_byte && whole && in_escape && in_utf8,
        "one-byte {one_byte}, whole {whole}, in an escape {in_escape}, in UTF-8 {in_utf8}"
    );
}
