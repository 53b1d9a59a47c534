//! The streaming server side (SPEC B3, B4): any chunking of a line gives the same
//! bytes, the same bytes as the whole-line path (`Shaper::route_server_message`, the
//! Value path), while what is held of a long line stays bounded by the cap.

use backstop_core::Limit;
use backstop_core::limit::Keep;
use backstop_jsonrpc::Shaper;
use backstop_jsonrpc::scan::{Broken, Scan};
use backstop_jsonrpc::stream::{
    CutOff, LineFrame, LongMessage, MemorySink, ServerStream, is_cut_off,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::time::Instant;

/// A shaper at `cap` with a pending `tools/call` of `tool` under id 1, and a pending
/// `resources/read` under id 2.
fn shaper(cap: usize) -> Shaper {
    keeping(cap, Keep::Tail)
}

/// [`shaper`], `capture_pane` keeping `keep` (L16; other tools their tails).
fn keeping(cap: usize, keep: Keep) -> Shaper {
    shaping(Limit::new(cap).unwrap().keep_for("capture_pane", keep))
}

/// [`shaper`] with the reader's limits off (L18): only the byte cap bounds a result.
fn bytes_only(cap: usize) -> Shaper {
    let limit = Limit::new(cap).unwrap().with_max_chars(None).unwrap();
    shaping(limit.with_max_tokens(None).unwrap())
}

/// A shaper under `limit`, with a `tools/call` (id 1) and a `resources/read` (id 2)
/// pending.
fn shaping(limit: Limit) -> Shaper {
    let mut shaper = Shaper::new(limit);
    shaper.client_message(Instant::now(),
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capture_pane","arguments":{"pane":"%1"}}}"#,
    );
    shaper.client_message(
        Instant::now(),
        br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///big"}}"#,
    );
    shaper
}

/// The whole-line path: what `shaper` sends for `line`, with its line break.
fn whole_by(mut shaper: Shaper, line: &[u8]) -> Vec<u8> {
    let route = shaper.route_server_message(Instant::now(), line);
    let mut out = Vec::new();
    for message in route.to_client {
        out.extend(message);
        out.push(b'\n');
    }
    if let Some(forward) = route.forward {
        out.extend_from_slice(forward.bytes(line));
        out.push(b'\n');
    }
    out
}

/// The streaming path, lines longer than `whole_line` scanned, `line` pushed in chunks
/// of the given sizes (cycled).
fn streamed(cap: usize, line: &[u8], whole_line: usize, chunks: &[usize]) -> Vec<u8> {
    streamed_reads(cap, line, whole_line, chunks).0
}

/// [`streamed`], and how many lines were read whole.
fn streamed_reads(
    cap: usize,
    line: &[u8],
    whole_line: usize,
    chunks: &[usize],
) -> (Vec<u8>, usize) {
    streamed_by(shaper(cap), line, whole_line, chunks)
}

/// [`streamed_reads`] through `shaper`.
fn streamed_by(
    mut shaper: Shaper,
    line: &[u8],
    whole_line: usize,
    chunks: &[usize],
) -> (Vec<u8>, usize) {
    let mut stream = ServerStream::new(whole_line);
    let mut sink = MemorySink::default();
    let mut rest = line;
    for &size in chunks.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        stream.push(&mut shaper, Instant::now(), chunk, &mut sink);
        rest = tail;
    }
    stream.push(&mut shaper, Instant::now(), b"\n", &mut sink);
    stream.finish(&mut shaper, Instant::now(), &mut sink);
    assert!(sink.held.is_empty(), "nothing is left held");
    (sink.sent, sink.read_whole)
}

const FRAGMENTS: [&str; 10] = [
    "line of output\n",
    "\u{1b}[31mred\u{1b}[0m ",
    "é",
    "😀",
    "👨‍👩‍👧",
    "\"quoted\" ",
    "back\\slash ",
    "\u{1}",
    "\t",
    "🇺🇸",
];

/// A text of about `len` bytes: runs of fragments.
fn text(runs: &[(usize, usize)], len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    let mut i = 0;
    while out.len() < len {
        let (fragment, count) = runs[i % runs.len()];
        for _ in 0..count.max(1) {
            out.push_str(FRAGMENTS[fragment % FRAGMENTS.len()]);
        }
        i += 1;
    }
    out
}

/// A `tools/call` result line with a text long enough to be held in part.
fn result_line(big: &str, id_last: bool, is_error: bool, small_blocks: usize) -> Vec<u8> {
    let mut content = vec![json!({"type": "text", "text": big})];
    for n in 0..small_blocks {
        content.push(json!({"type": "text", "text": format!("block {n}: PROMPT $")}));
    }
    if small_blocks > 1 {
        content.insert(
            1,
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        );
    }
    let mut result = json!({"content": content, "_meta": {"pane": "%1"}});
    if is_error {
        result["isError"] = Value::Bool(true);
    }
    let line = if id_last {
        format!(r#"{{"result":{result},"jsonrpc":"2.0","id":1}}"#)
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#)
    };
    line.into_bytes()
}

proptest! {
    // As many cases as its two tests had before it took every policy (L16).
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.min(48),
        ..ProptestConfig::default()
    })]

    /// B3, L13, L16: the streamed output equals the whole-line (Value) path's, whatever
    /// the chunking and the keep policy — for results cut from a text held in part (its
    /// tail, its head, or both; the tool known from the id, or not yet when the id
    /// comes last), id first or last, error or not, with other blocks before and after.
    #[test]
    fn streamed_equals_whole(
        runs in prop::collection::vec((0usize..10, 1usize..300), 1..6),
        len in 1_100_000usize..1_500_000,
        cap in prop_oneof![Just(2_000usize), 2_000usize..60_000],
        keep in prop_oneof![
            2 => Just(Keep::Tail),
            1 => Just(Keep::Head),
            1 => (0u16..=1000).prop_map(|head_per_mille| Keep::HeadAndTail { head_per_mille }),
        ],
        id_last in any::<bool>(),
        is_error in any::<bool>(),
        small_blocks in 0usize..3,
        chunks in prop::collection::vec(prop_oneof![1usize..8, 4096usize..300_000], 1..6),
    ) {
        let big = text(&runs, len);
        let line = result_line(&big, id_last, is_error, small_blocks);
        let expected = whole_by(keeping(cap, keep), &line);
        prop_assert!(expected.len() < line.len(), "the reference cut it");
        let (got, read_whole) = streamed_by(keeping(cap, keep), &line, 64 << 10, &chunks);
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
        prop_assert_eq!(read_whole, 0, "decided from what was held");
    }
}

/// B3: a long line that needs no change is sent as it came, and — when its `id` comes
/// first and is no `tools/call`'s — starts going out before its end.
#[test]
fn unchanged_lines_stream_through() {
    let big = "x".repeat(3 << 20);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"contents":[{{"uri":"file:///big","text":"{big}"}}]}}}}"#
    );
    let mut shaper = shaper(10_000);
    let mut stream = ServerStream::new(64 << 10);
    let mut sink = MemorySink::default();
    let (first, second) = line.as_bytes().split_at(line.len() / 2);
    stream.push(&mut shaper, Instant::now(), first, &mut sink);
    assert_eq!(sink.sent, first, "sent on before its end");
    assert!(sink.held.is_empty());
    stream.push(&mut shaper, Instant::now(), second, &mut sink);
    stream.push(&mut shaper, Instant::now(), b"\n", &mut sink);
    assert_eq!(sink.sent.len(), line.len() + 1);
    assert!(sink.sent.starts_with(line.as_bytes()));
    assert!(
        shaper
            .pending()
            .get(&backstop_core::machine::RequestId::Number("2".into()))
            .is_none()
    );

    // id last, and no tools/call pending: sent on from its `result`; the id, read as
    // it passes, ends the request.
    let line_id_last = format!(
        r#"{{"result":{{"contents":[{{"uri":"file:///big","text":"{big}"}}]}},"jsonrpc":"2.0","id":2}}"#
    );
    let mut shaper = Shaper::new(Limit::new(10_000).unwrap());
    shaper.client_message(
        Instant::now(),
        br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///big"}}"#,
    );
    let mut stream = ServerStream::new(64 << 10);
    let mut sink = MemorySink::default();
    let (first, second) = line_id_last.as_bytes().split_at(line_id_last.len() / 2);
    stream.push(&mut shaper, Instant::now(), first, &mut sink);
    assert_eq!(sink.sent, first, "sent on before its end");
    assert_eq!(shaper.pending().len(), 1);
    stream.push(&mut shaper, Instant::now(), second, &mut sink);
    stream.push(&mut shaper, Instant::now(), b"\n", &mut sink);
    assert_eq!(sink.sent, [line_id_last.as_bytes(), b"\n"].concat());
    assert!(shaper.pending().is_empty(), "the request is answered");

    // id last with a tools/call pending: held until the end, then sent as it came.
    let line = format!(
        r#"{{"result":{{"contents":[{{"uri":"file:///big","text":"{big}"}}]}},"jsonrpc":"2.0","id":2}}"#
    );
    assert_eq!(
        streamed(10_000, line.as_bytes(), 64 << 10, &[65536]),
        [line.as_bytes(), b"\n"].concat()
    );
}

/// B4: a long line that is not valid JSON — bad UTF-8 in the middle of a long text, a
/// lone surrogate, a raw control character — is forwarded exactly as it came.
#[test]
fn invalid_long_lines_pass_byte_identical() {
    let big = "y".repeat(2 << 20);
    let valid = String::from_utf8(result_line(&big, false, false, 0)).unwrap();
    let middle = valid.len() / 2;
    for bad in [&b"\xff"[..], b"\\ud800", b"\x01", b"\\q", b"\xe2\x82"] {
        let mut line = valid.as_bytes()[..middle].to_vec();
        line.extend_from_slice(bad);
        line.extend_from_slice(&valid.as_bytes()[middle..]);
        for chunks in [[1usize << 20], [7]] {
            let got = streamed(10_000, &line, 64 << 10, &chunks);
            assert_eq!(got, [&line[..], b"\n"].concat(), "{bad:?}");
        }
    }
}

/// B3 under every policy (L16): a scan that holds a tail, a head, or both holds about
/// the cap of each, not the line.
#[test]
fn a_scan_holds_about_the_cap_of_each_end() {
    let cap = 100_000;
    for keep in [
        Keep::Tail,
        Keep::Head,
        Keep::HeadAndTail {
            head_per_mille: 500,
        },
    ] {
        let ends = Limit::new(cap).unwrap().with_keep(keep).held_ends(None);
        let mut held = Vec::new();
        for megabytes in [4usize, 40] {
            let mut scan = Scan::holding(ends);
            scan.push(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#);
            let chunk = "scrollback line\\n".repeat(4096);
            for _ in 0..(megabytes << 20) / chunk.len() {
                scan.push(chunk.as_bytes());
            }
            scan.push(br#""}]}}"#);
            held.push(scan.kept_bytes());
            let scanned = scan.finish();
            assert_eq!(scanned.holes.len(), 1);
            let chunks = (megabytes << 20) / chunk.len();
            assert_eq!(scanned.holes[0].decoded_len, chunks * (chunk.len() - 4096));
            assert!(
                scanned.holes[0].held_head >= ends.head,
                "{keep}: the head is held"
            );
        }
        assert!(
            held[1] <= held[0] + (64 << 10),
            "{keep}: {held:?}: grows with the line"
        );
        assert!(
            held[1] < 2 * (ends.head + ends.tail).max(1 << 20),
            "{keep}: {held:?}"
        );
    }
}

/// `line` scanned in chunks of `size` (cycled from `sizes`).
fn scanned(line: &[u8], sizes: &[usize]) -> backstop_jsonrpc::scan::Scanned {
    let mut scan = Scan::new(2_000);
    let mut rest = line;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        scan.push(chunk);
        rest = tail;
    }
    scan.finish()
}

proptest! {
    /// B4: a scan (in any chunking) keeps every byte of a message it need not cut,
    /// and calls it invalid exactly when serde_json's strict reading refuses it —
    /// for messages with any text, and for the same with a byte changed.
    #[test]
    fn scan_agrees_with_serde(
        text in any::<String>(),
        flip in prop::option::of((any::<prop::sample::Index>(), any::<u8>())),
        sizes in prop::collection::vec(1usize..9, 1..4),
    ) {
        let message = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}});
        let mut line = message.to_string().into_bytes();
        if let Some((at, byte)) = flip {
            let at = at.index(line.len());
            line[at] = byte;
        }
        let strict = backstop_jsonrpc::message::strict_json_text(&line)
            .is_some_and(|text| serde_json::from_str::<Value>(text).is_ok());
        let scan = scanned(&line, &sizes);
        let read = !scan.invalid && serde_json::from_slice::<Value>(&scan.skeleton).is_ok();
        prop_assert_eq!(read, strict);
        if !scan.invalid {
            prop_assert_eq!(&scan.skeleton, &line);
        }
        // B4: where and why it broke are the same in any chunking.
        prop_assert_eq!(scan.invalid, scan.broken.is_some());
        prop_assert_eq!(scan.broken, scanned(&line, &[line.len()]).broken);
    }
}

/// The pieces of JSON's structure, numbers and literals (whole and cut short).
const STRUCTURE_TOKENS: [&[u8]; 17] = [
    b"{", b"}", b"[", b"]", b":", b",", b" ", br#""id""#, br#""a""#, b"1", b"-", b"0", b".5",
    b"e+2", b"true", b"nul", b"\n",
];

/// A small JSON value, to be broken by a token more or a byte less: short strings and
/// few members, so that an edit lands in its structure, numbers and literals more
/// often than inside a string (`backstop_core`'s own value strategy is the other way).
fn small_json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z\"]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{0,3}", inner, 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    /// B4 for structure, numbers and literals: a JSON value with a token inserted or
    /// a byte removed, or any run of tokens — the scan calls it invalid exactly when
    /// serde_json refuses it, and where it broke is the same in any chunking. (The
    /// fuzz target `stream` found a second colon, `"id"::2`, read as JSON.)
    #[test]
    fn scan_agrees_with_serde_on_structure(
        value in small_json_value(),
        pretty in any::<bool>(),
        edit in prop::option::of((any::<prop::sample::Index>(), prop::option::of(0..STRUCTURE_TOKENS.len()))),
        tokens in prop::collection::vec(0..STRUCTURE_TOKENS.len(), 0..24),
        sizes in prop::collection::vec(1usize..9, 1..4),
    ) {
        let mut line = match pretty {
            true => serde_json::to_vec_pretty(&value).unwrap(),
            false => serde_json::to_vec(&value).unwrap(),
        };
        match edit {
            Some((at, Some(token))) => {
                let at = at.index(line.len() + 1);
                line.splice(at..at, STRUCTURE_TOKENS[token].iter().copied());
            }
            Some((at, None)) => {
                line.remove(at.index(line.len()));
            }
            None => line = tokens.iter().flat_map(|&t| STRUCTURE_TOKENS[t].to_vec()).collect(),
        }
        let strict = serde_json::from_slice::<&serde_json::value::RawValue>(&line).is_ok();
        let scan = scanned(&line, &sizes);
        prop_assert_eq!(!scan.invalid, strict, "{}", String::from_utf8_lossy(&line));
        prop_assert_eq!(scan.broken, scanned(&line, &[line.len().max(1)]).broken);
        if !scan.invalid {
            prop_assert_eq!(&scan.skeleton, &line);
        }
    }
}

/// B4: when a string breaks at an escape (a bad one, or a high surrogate alone) after
/// bytes the scan read without checking them yet, the first of those that breaks it is
/// where it broke — counted from the message's start, in a read that begins by
/// finishing a character the last one cut as in one read of the whole.
#[test]
fn b4_a_break_in_bytes_before_a_bad_escape_is_where_it_broke() {
    let head = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#;
    let plain = "a".repeat(300);
    for escape in [&br"\q"[..], br"\ud800x"] {
        let before = ["é", &plain].concat();
        let line = [
            head,
            before.as_bytes(),
            b"\xff",
            plain.as_bytes(),
            escape,
            b"\"}]}}",
        ]
        .concat();
        let at = (head.len() + before.len()) as u64;
        // The second read starts inside `é`.
        for sizes in [&[line.len()][..], &[head.len() + 1, line.len()], &[1]] {
            let broken = scanned(&line, sizes).broken.expect("not JSON");
            assert_eq!(
                (broken.at, broken.why),
                (at, "bytes that are not UTF-8"),
                "{:?} in reads of {sizes:?}",
                String::from_utf8_lossy(escape)
            );
        }
    }
}

/// B4: where and why a message's structure, numbers or literals stop being JSON, as
/// the error replacing an answer being cut says it — read a byte at a time or at once.
#[test]
fn b4_a_broken_structure_says_where_and_why() {
    let deep = format!("{}{}", "[".repeat(257), "]".repeat(257));
    let too_deep = scanned(deep.as_bytes(), &[deep.len()]).broken;
    let why = "objects and arrays nested too deep";
    assert_eq!(
        too_deep,
        Some(Broken { at: 256, why }),
        "deeper than serde_json reads"
    );
    let cases: [(&str, u64, &str); 13] = [
        (r#"{"a":1},"#, 7, "more after the message's end"),
        (r#"{"id"::2}"#, 6, "a byte where a value must be"),
        (
            r#"{"id":2:3}"#,
            7,
            "a byte where a comma or a closing bracket must be",
        ),
        (r#"{"id" 2}"#, 6, "a byte where a colon must be"),
        (r#"{2:1}"#, 1, "a byte where an object's key must be"),
        (r#"{"a":1,}"#, 7, "a byte where an object's key must be"),
        (r#"{"a":1} x"#, 8, "more after the message's end"),
        (r#"{"a":1]"#, 6, "a bracket that closes nothing open"),
        (r#"{"a":tru}"#, 8, "a number or literal that is not JSON"),
        (r#"{"a":1."#, 7, "a number or literal that is not JSON"),
        (
            r#"{"a":[1"#,
            7,
            "it ends before its objects and arrays close",
        ),
        (" ", 1, "it holds no value"),
        (r#"[1,]"#, 3, "a byte where a value must be"),
    ];
    for (line, at, why) in cases {
        for sizes in [&[1][..], &[line.len()]] {
            let broken = scanned(line.as_bytes(), sizes).broken;
            assert_eq!(
                broken,
                Some(Broken { at, why }),
                "{line} in reads of {sizes:?}"
            );
        }
    }
}

const RAW_TOKENS: [&[u8]; 14] = [
    b"a",
    br"\ud83d",
    br"\ude00",
    br"\u0041",
    br"\n",
    br"\\",
    br#"\""#,
    "é".as_bytes(),
    "😀".as_bytes(),
    b"\xf0\x9f",
    b"\x01",
    br"\x",
    br"\u12",
    b"input_value=",
];

proptest! {
    /// B4 for escapes: surrogate pairs, lone or reversed halves, bad escapes, cut UTF-8,
    /// raw control characters — the scan's verdict is serde_json's strict one.
    #[test]
    fn scan_agrees_with_serde_on_escapes(
        tokens in prop::collection::vec(0usize..RAW_TOKENS.len(), 0..12),
        sizes in prop::collection::vec(1usize..9, 1..2),
        long in any::<bool>(),
    ) {
        let mut line = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#.to_vec();
        for token in tokens {
            line.extend_from_slice(RAW_TOKENS[token]);
        }
        let head = line.len() + 4;
        if long {
            // The tokens are then in the part of the text that is not held.
            line.extend(std::iter::repeat_n(b'a', 1_200_000));
        }
        line.extend_from_slice(br#""}]}}"#);
        let strict = backstop_jsonrpc::message::strict_json_text(&line)
            .is_some_and(|text| serde_json::from_str::<Value>(text).is_ok());
        let mut scan = Scan::new(2_000);
        let (first, rest) = line.split_at(head.min(line.len()));
        for chunk in first.chunks(sizes[0]) {
            scan.push(chunk);
        }
        scan.push(rest);
        let scan = scan.finish();
        prop_assert_eq!(scan.holes.len(), usize::from(long && !scan.invalid));
        let read = !scan.invalid && serde_json::from_slice::<Value>(&scan.skeleton).is_ok();
        prop_assert_eq!(read, strict, "{}", String::from_utf8_lossy(&line[..head.min(line.len())]));
        // B4: where and why it broke are the same in any chunking.
        prop_assert_eq!(scan.invalid, scan.broken.is_some());
        prop_assert_eq!(scan.broken, scanned(&line, &[line.len()]).broken);
    }
}

proptest! {
    /// B4 for escapes read 64 bytes at a time (the scan's fast path): the same tokens
    /// among runs of plain text, pushed in reads of hundreds of bytes, in a string
    /// held whole or in part — the verdict is serde_json's strict one, and a message
    /// held whole is kept byte for byte.
    #[test]
    fn scan_agrees_with_serde_on_escapes_read_in_blocks(
        tokens in prop::collection::vec((0usize..RAW_TOKENS.len(), 0usize..150), 0..40),
        sizes in prop::collection::vec(64usize..3_000, 1..4),
        long in any::<bool>(),
    ) {
        let mut line = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#.to_vec();
        for (token, plain) in tokens {
            line.extend(std::iter::repeat_n(b'.', plain));
            line.extend_from_slice(RAW_TOKENS[token]);
            line.extend_from_slice(br"\u001b[0m\n");
        }
        if long {
            line.extend(std::iter::repeat_n(b'a', 1_200_000));
        }
        line.extend_from_slice(br#""}]}}"#);
        let strict = backstop_jsonrpc::message::strict_json_text(&line)
            .is_some_and(|text| serde_json::from_str::<Value>(text).is_ok());
        let scan = scanned(&line, &sizes);
        prop_assert_eq!(scan.holes.len(), usize::from(long && !scan.invalid));
        let read = !scan.invalid && serde_json::from_slice::<Value>(&scan.skeleton).is_ok();
        prop_assert_eq!(read, strict);
        prop_assert_eq!(scan.broken, scanned(&line, &[line.len()]).broken);
        if !long && !scan.invalid {
            prop_assert_eq!(&scan.skeleton, &line);
        }
    }
}

proptest! {
    /// B1, B3: a scan told to skim (a message sent on as it comes, whose `id` comes
    /// last) still reads the top-level `id`, whatever the strings before it hold and
    /// however the reads split them.
    #[test]
    fn a_skimming_scan_still_reads_the_id(
        runs in prop::collection::vec((0usize..FRAGMENTS.len(), 1usize..40), 1..8),
        len in 0usize..20_000,
        id in prop_oneof![any::<u32>().prop_map(|n| json!(n)), any::<String>().prop_map(|s| json!(s))],
        sizes in prop::collection::vec(1usize..5_000, 1..4),
        skim_after in 0usize..3,
    ) {
        let text = json!(text(&runs, len));
        // The id last, as the TypeScript SDK writes it.
        let line = format!(
            r#"{{"result":{{"contents":[{{"uri":"a\"b","text":{text}}}]}},"jsonrpc":"2.0","id":{id}}}"#
        )
        .into_bytes();
        let mut scan = Scan::new(2_000);
        let mut rest = &line[..];
        for (i, &size) in sizes.iter().cycle().enumerate() {
            if rest.is_empty() {
                break;
            }
            if i == skim_after {
                scan.skim();
            }
            let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
            scan.push(chunk);
            rest = tail;
        }
        let scanned = scan.finish();
        prop_assert!(!scanned.invalid);
        prop_assert_eq!(scanned.id, Some(id.to_string().into_bytes()));
    }
}

/// A shaper at `cap` that knows `capture_pane`'s output schema (fastmcp's for a tool
/// returning `str`), with its call pending under id 1.
fn shaper_with_schema(cap: usize, keep: Keep) -> Shaper {
    let mut shaper = Shaper::new(Limit::new(cap).unwrap().with_keep(keep));
    shaper.client_message(
        Instant::now(),
        br#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#,
    );
    let list = json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": [{"name": "capture_pane",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}},
            "required": ["result"], "x-fastmcp-wrap-result": true}}]}});
    assert!(
        shaper
            .server_message(Instant::now(), list.to_string().as_bytes())
            .is_unchanged()
    );
    shaper.client_message(
        Instant::now(),
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capture_pane"}}"#,
    );
    shaper
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.min(12),
        ..ProptestConfig::default()
    })]

    /// B3 with L15: fastmcp's result of a tool returning a long `str` (the text block,
    /// and `structuredContent.result` the same string) is cut as the whole would be,
    /// with the schema, under each keep policy (L16: the scan holds the ends it keeps);
    /// and a text block that is the value's JSON (then read whole) too.
    #[test]
    fn structured_results_streamed_equal_whole(
        runs in prop::collection::vec((0usize..10, 1usize..300), 1..4),
        len in 1_150_000usize..1_400_000,
        cap in 3_000usize..40_000,
        serialized in any::<bool>(),
        chunks in prop::collection::vec(prop_oneof![1usize..8, 4096usize..300_000], 1..4),
        keep in prop_oneof![
            Just(Keep::Tail),
            Just(Keep::Head),
            (0u16..=1000).prop_map(|head_per_mille| Keep::HeadAndTail { head_per_mille }),
        ],
    ) {
        let big = text(&runs, len);
        let value = json!({"result": big});
        let shown = if serialized { value.to_string() } else { big.clone() };
        let line = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": shown}], "structuredContent": value,
            "isError": false, "_meta": {"fastmcp": {"wrap_result": true}}}}).to_string();
        let expected = {
            let mut shaper = shaper_with_schema(cap, keep);
            let forward = shaper.server_message(Instant::now(), line.as_bytes());
            [forward.bytes(line.as_bytes()), b"\n"].concat()
        };
        prop_assert!(expected.len() < cap + 200, "the reference cut it");
        let (sent, read_whole) =
            streamed_by(shaper_with_schema(cap, keep), line.as_bytes(), 64 << 10, &chunks);
        prop_assert_eq!(String::from_utf8_lossy(&sent), String::from_utf8_lossy(&expected));
        // The text of a `str` is decided from what is held; only a text that may be the
        // value's JSON (it is, or it starts with whitespace) may be read whole — unless
        // the scan happened to hold all of it (a string just over the threshold).
        let may_be_json = serialized || big.starts_with(|c: char| c.is_ascii_whitespace());
        prop_assert!(read_whole <= usize::from(may_be_json));
        // Well over the threshold (1 MiB + 64 KiB), the tail is trimmed: then the JSON
        // text cannot be decided from it, and is read whole. (Under the head policies
        // what is held of the text's start can decide it.)
        if len > 1_320_000 && keep == Keep::Tail {
            prop_assert_eq!(read_whole, usize::from(may_be_json));
        }
    }
}

/// [`keeping`], and a task the `tools/call` of id 1 created (its handle answered), a
/// `tasks/get` of it pending under id 3 (2026-07-28).
fn with_task(cap: usize, keep: Keep) -> Shaper {
    let mut shaper = keeping(cap, keep);
    let handle = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t-1","status":"working"}}"#;
    assert!(
        shaper.server_message(Instant::now(), handle).is_unchanged(),
        "the handle passes"
    );
    shaper.client_message(
        Instant::now(),
        br#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-1"}}"#,
    );
    shaper
}

/// A task state of `t-1`, `completed` with a text result around `big`: the answer to
/// the `tasks/get` of id 3, or a `notifications/tasks`.
fn task_state_line(big: &str, id_last: bool, notify: bool) -> Vec<u8> {
    let result = json!({"content": [{"type": "text", "text": big}], "_meta": {"pane": "%1"}});
    let state = json!({"taskId": "t-1", "status": "completed", "result": result});
    let line = match (notify, id_last) {
        (true, _) => {
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/tasks","params":{state}}}"#)
        }
        (false, true) => format!(r#"{{"result":{state},"jsonrpc":"2.0","id":3}}"#),
        (false, false) => format!(r#"{{"jsonrpc":"2.0","id":3,"result":{state}}}"#),
    };
    line.into_bytes()
}

/// L1, E11: a task's state notified while no request is pending is read and its
/// outcome cut, on the whole-line and the long path, as when one is. The shaper's
/// fast path for messages nothing depends on once let it pass whole (unless its text
/// held a `\u` escape).
#[test]
fn l1_a_task_s_state_notified_with_nothing_pending_is_cut() {
    let tasked = |pending: bool| {
        let mut shaper = Shaper::new(Limit::new(2_000).unwrap());
        shaper.client_message(
            Instant::now(),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capture_pane"}}"#,
        );
        let handle = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t-1","status":"working"}}"#;
        assert!(shaper.server_message(Instant::now(), handle).is_unchanged());
        if pending {
            shaper.client_message(
                Instant::now(),
                br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
            );
        }
        shaper
    };
    assert!(tasked(false).pending().is_empty());
    let line = task_state_line(&"x".repeat(100_000), false, true);
    let expected = whole_by(tasked(true), &line);
    assert!(expected.len() < 3_000, "the reference cut it");
    let whole = whole_by(tasked(false), &line);
    assert_eq!(
        String::from_utf8_lossy(&whole),
        String::from_utf8_lossy(&expected)
    );
    let (streamed, _) = streamed_by(tasked(false), &line, 1_000, &[700]);
    assert_eq!(
        String::from_utf8_lossy(&streamed),
        String::from_utf8_lossy(&expected)
    );
    // Another notification with the same params is no task's state: it passes as it
    // came (A2).
    let other = String::from_utf8(line)
        .unwrap()
        .replace("notifications/tasks", "notifications/message");
    let sent = whole_by(tasked(true), other.as_bytes());
    assert_eq!(sent, [other.as_bytes(), b"\n"].concat());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.min(24),
        ..ProptestConfig::default()
    })]

    /// B3, L1, L16: a task's outcome inside its state (the answer to `tasks/get`, or a
    /// `notifications/tasks`) is decided from what was held of it, as the whole-line
    /// path decides it, whatever the chunking and the keep policy.
    #[test]
    fn a_task_s_outcome_streamed_equals_whole(
        runs in prop::collection::vec((0usize..10, 1usize..300), 1..6),
        len in 1_100_000usize..1_300_000,
        cap in 2_000usize..60_000,
        keep in prop_oneof![
            2 => Just(Keep::Tail),
            1 => Just(Keep::Head),
            1 => (0u16..=1000).prop_map(|head_per_mille| Keep::HeadAndTail { head_per_mille }),
        ],
        id_last in any::<bool>(),
        notify in any::<bool>(),
        chunks in prop::collection::vec(prop_oneof![1usize..8, 4096usize..300_000], 1..6),
    ) {
        let big = text(&runs, len);
        let line = task_state_line(&big, id_last, notify);
        let expected = whole_by(with_task(cap, keep), &line);
        prop_assert!(expected.len() < line.len(), "the reference cut it");
        let (got, read_whole) = streamed_by(with_task(cap, keep), &line, 64 << 10, &chunks);
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
        prop_assert_eq!(read_whole, 0, "decided from what was held");
    }
}

/// A `tools/call` result whose long string sits where a task state's outcome would
/// (`result.result.content`, a member no call result has) is not decided from what was
/// held of it as if it were the call's own content: read whole, it comes out as the
/// whole-line path sends it.
#[test]
fn a_call_result_shaped_like_a_task_state_is_read_whole() {
    let big = text(&[(0, 1)], 1_200_000);
    let inner = json!({"content": [{"type": "text", "text": big}]});
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"ok"}}],"result":{inner}}}}}"#
    );
    let expected = whole_by(shaper(2_000), line.as_bytes());
    let (got, read_whole) = streamed_by(shaper(2_000), line.as_bytes(), 64 << 10, &[70_000]);
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );
    assert_eq!(read_whole, 1);
}

/// A sink whose held bytes are lost once more than `keeps` are held (a full disk).
#[derive(Default)]
struct LosingSink {
    inner: MemorySink,
    keeps: usize,
    lost: bool,
}

impl backstop_jsonrpc::stream::Sink for LosingSink {
    fn send(&mut self, bytes: &[u8]) {
        self.inner.send(bytes);
    }
    fn hold(&mut self, bytes: &[u8]) {
        self.inner.hold(bytes);
        self.lost |= self.inner.held.len() > self.keeps;
    }
    fn release(&mut self) {
        assert!(!self.lost, "B5: lost bytes are never released");
        self.inner.release();
    }
    fn discard(&mut self) {
        self.inner.discard();
        self.lost = false;
    }
    fn take_held(&mut self) -> Vec<u8> {
        assert!(!self.lost, "B5: lost bytes are never read");
        self.inner.take_held()
    }
    fn held_lost(&mut self) -> bool {
        self.lost
    }
    fn to_server(&mut self, request: Vec<u8>) {
        self.inner.to_server(request);
    }
}

/// `line` through `shaper`'s stream into a sink that loses what it holds past 1 MB:
/// what was sent.
fn through_a_full_disk(shaper: &mut Shaper, line: &[u8]) -> String {
    let mut stream = ServerStream::new(64 << 10);
    let mut sink = LosingSink {
        keeps: 1 << 20,
        ..LosingSink::default()
    };
    for chunk in line.chunks(100_000) {
        stream.push(shaper, Instant::now(), chunk, &mut sink);
    }
    stream.push(shaper, Instant::now(), b"\n", &mut sink);
    stream.finish(shaper, Instant::now(), &mut sink);
    String::from_utf8(sink.inner.sent).unwrap()
}

/// B5: what was held of an answer is lost (a failed write). An answer that would pass
/// as it came is answered with one error for its id; one the shaper rewrites needs
/// nothing held and is sent; a notification nobody waits for is dropped.
#[test]
fn b5_an_answer_whose_held_bytes_are_lost_is_answered_once_with_an_error() {
    let big = text(&[(0, 1)], 3_000_000);
    for id_last in [false, true] {
        // Under a 10 MB cap (and no reader's limit) the 3 MB result passes as it came:
        // it needs what was held.
        let line = result_line(&big, id_last, false, 0);
        let mut uncut = bytes_only(10_000_000);
        let sent = through_a_full_disk(&mut uncut, &line);
        let answer: Value = serde_json::from_str(sent.trim_end()).unwrap();
        assert_eq!(answer["id"], 1, "id last: {id_last}");
        assert_eq!(answer["error"]["code"], -32603);
        assert_eq!(
            answer["error"]["message"],
            format!(
                "backstop could not pass on the server's answer ({} bytes): writing the bytes it held failed (is the disk full?)",
                line.len()
            )
        );
        assert_eq!(sent.lines().count(), 1, "one answer");
        assert_eq!(
            uncut.pending().len(),
            1,
            "answered: only the resources/read is left"
        );
        // Cut, it needs nothing held.
        let sent = through_a_full_disk(&mut shaper(2_000), &line);
        let answer: Value = serde_json::from_str(sent.trim_end()).unwrap();
        assert!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("[... truncated ")
        );
    }
    // A response that would pass before its end (nothing depends on its result).
    let contents = json!({"contents": [{"uri": "file:///big", "text": big}]});
    let resource = format!(r#"{{"result":{contents},"jsonrpc":"2.0","id":2}}"#);
    let mut reading = shaper(2_000);
    let sent = through_a_full_disk(&mut reading, resource.as_bytes());
    let answer: Value = serde_json::from_str(sent.trim_end()).unwrap();
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&json!(2), &json!(-32603))
    );
    assert_eq!(
        reading.pending().len(),
        1,
        "answered: only the call is left"
    );
    // A notification whose method comes after what was lost: dropped, nobody waits.
    let params = json!({"data": big});
    let log = format!(r#"{{"jsonrpc":"2.0","params":{params},"method":"notifications/message"}}"#);
    let sent = through_a_full_disk(&mut shaper(2_000), log.as_bytes());
    assert!(sent.is_empty(), "{:.200}", sent);
    // One whose method comes first passes before anything is lost.
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params});
    let sent = through_a_full_disk(&mut shaper(2_000), log.to_string().as_bytes());
    assert!(sent == format!("{log}\n"), "{:.200}", sent);
}

/// B4: a long answer that turns out not to be JSON (a lone surrogate far in) is
/// forwarded exactly as it came and ends its request's pending entry, so that no
/// second answer is ever made up for it.
#[test]
fn b4_a_long_answer_that_is_not_json_passes_as_it_came_and_answers_its_request() {
    let big = "line of output\n".repeat(200_000);
    // A text cut inside an emoji: its last escape a lone surrogate.
    let text = serde_json::to_string(&big).unwrap();
    let text = format!(r#"{}\ud83d""#, &text[..text.len() - 1]);
    let cut = format!(r#"{{"content":[{{"type":"text","text":{text}}}]}}"#);
    // The answer to the tools/call, its id before the bad escape and after it: held
    // until it turns out not to be JSON.
    for line in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{cut}}}"#),
        format!(r#"{{"jsonrpc":"2.0","result":{cut},"id":1}}"#),
    ] {
        let mut reading = shaper(2_000);
        let mut sink = MemorySink::default();
        let mut stream = ServerStream::new(64 << 10);
        for chunk in line.as_bytes().chunks(70_000) {
            stream.push(&mut reading, Instant::now(), chunk, &mut sink);
        }
        stream.push(&mut reading, Instant::now(), b"\n", &mut sink);
        stream.finish(&mut reading, Instant::now(), &mut sink);
        assert!(sink.sent == format!("{line}\n").as_bytes(), "as it came");
        assert_eq!(
            reading.pending().len(),
            1,
            "answered: only the resources/read is left"
        );
    }
}

/// An answer through a [`LongMessage`] that stops holding it past `unheld_from` bytes
/// when it is being cut (B3, B4), pushed in chunks of the given sizes (cycled): what it
/// sent, how many bytes were held after its last chunk, the most held at once, and the
/// shaper after it.
fn unheld_by(
    mut shaper: Shaper,
    line: &[u8],
    unheld_from: u64,
    chunks: &[usize],
) -> (Vec<u8>, usize, usize, Shaper) {
    let mut long = LongMessage::new(&shaper).unheld_from(unheld_from);
    let mut sink = MemorySink::default();
    let mut rest = line;
    let mut peak = 0;
    for &size in chunks.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        long.push(&mut shaper, chunk, chunk, &mut sink);
        peak = peak.max(sink.held.len());
        rest = tail;
    }
    let held_at_end = sink.held.len();
    long.end(&mut shaper, Instant::now(), &mut LineFrame, &mut sink);
    assert!(sink.held.is_empty(), "nothing is left held");
    assert_eq!(sink.read_whole, 0, "nothing is read whole");
    (sink.sent, held_at_end, peak, shaper)
}

/// A `tools/call` answer (id 1, first) whose long text starts as no JSON does and ends
/// with `plain` bytes of plain ASCII.
fn plain_text_answer(
    runs: &[(usize, usize)],
    len: usize,
    plain: usize,
    small_blocks: usize,
) -> Vec<u8> {
    let big = format!("log: {}{}", text(runs, len), "x".repeat(plain));
    result_line(&big, false, false, small_blocks)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.min(24),
        ..ProptestConfig::default()
    })]

    /// B3, B4: an answer being cut — a pending `tools/call`'s result, over the cap, in a
    /// long text — stops being held, and comes out as the whole-line path cuts it,
    /// whatever the chunking and the keep policy (L16).
    #[test]
    fn b3_b4_an_answer_cut_unheld_is_the_cut_of_the_whole(
        runs in prop::collection::vec((0usize..10, 1usize..300), 1..6),
        len in 1_100_000usize..1_600_000,
        cap in prop_oneof![Just(2_000usize), 2_000usize..60_000],
        keep in prop_oneof![
            2 => Just(Keep::Tail),
            1 => Just(Keep::Head),
            1 => (0u16..=1000).prop_map(|head_per_mille| Keep::HeadAndTail { head_per_mille }),
        ],
        small_blocks in 0usize..3,
        chunks in prop::collection::vec(prop_oneof![1usize..8, 4096usize..300_000], 1..6),
    ) {
        let line = plain_text_answer(&runs, len, 1_000_000, small_blocks);
        let expected = whole_by(keeping(cap, keep), &line);
        prop_assert!(expected.len() < line.len(), "the reference cut it");
        let (got, held_at_end, peak, _) = unheld_by(keeping(cap, keep), &line, 0, &chunks);
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
        prop_assert_eq!(held_at_end, 0, "no longer held by its end");
        // Held in part from about 1.1 MB of text on, then no more (the chunk that gets
        // it there at most 300 kB).
        prop_assert!(peak < line.len() - 500_000, "never held whole: {} of {}", peak, line.len());
    }
}

/// B3, B4: a text that is all surrogate pairs — emoji as a writer that escapes every
/// character past ASCII sends them (Python's `json.dumps`), which the scan's 64-byte
/// run reader leaves to its escape-by-escape path — is cut unheld as the whole would
/// be, in any reads.
#[test]
fn b3_b4_a_text_of_escaped_surrogate_pairs_is_cut_as_the_whole() {
    let pairs = r"\ud83d\ude00".repeat(200_000);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{pairs}"}}]}}}}"#
    )
    .into_bytes();
    for cap in [2_000, 50_000] {
        let expected = whole_by(shaper(cap), &line);
        assert!(expected.len() < 2 * cap, "the reference cut it");
        for chunks in [&[65_536][..], &[1_000, 300_000]] {
            let (got, ..) = unheld_by(shaper(cap), &line, 0, chunks);
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&expected),
                "cap {cap}, reads of {chunks:?}"
            );
        }
    }
}

/// Bytes that stop a text being JSON where they are put, and how far past that the
/// scan says it broke (SPEC B4).
const BREAKS: [(&[u8], u64, &str); 5] = [
    (b"\xff", 0, "bytes that are not UTF-8"),
    (b"\xe2\x82x", 0, "bytes that are not UTF-8"),
    (b"\x01", 0, "a control character inside a string"),
    (
        br"\q",
        0,
        "an escape that is not JSON (or a low surrogate alone)",
    ),
    (
        br"\ud800x",
        6,
        "a high surrogate escape without its low half",
    ),
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.min(24),
        ..ProptestConfig::default()
    })]

    /// B4's exception: an answer being cut that turns out not to be JSON is answered
    /// with one JSON-RPC error for its id, saying at which byte and why it stopped being
    /// JSON and how many bytes were dropped — the same whatever the chunking — and its
    /// request is no longer pending (no second answer is made up).
    #[test]
    fn b4_an_answer_cut_unheld_that_is_not_json_gets_one_error_saying_where(
        runs in prop::collection::vec((0usize..10, 1usize..300), 1..6),
        len in 1_100_000usize..1_400_000,
        cap in 2_000usize..60_000,
        bad in 0usize..BREAKS.len(),
        back in 1usize..100_000,
        chunks in prop::collection::vec(prop_oneof![1usize..8, 4096usize..300_000], 1..6),
    ) {
        let valid = plain_text_answer(&runs, len, 300_000, 0);
        // In the plain run that ends the text, `back` bytes before its closing quote:
        // past where the text is held in part.
        let closing = valid.windows(2).rposition(|pair| pair == b"x\"").unwrap() + 1;
        let at = closing - back;
        let (bytes, past, why) = BREAKS[bad];
        let line = [&valid[..at], bytes, &valid[at..]].concat();
        let (got, _, _, shaper) = unheld_by(shaper(cap), &line, 0, &chunks);
        let error = backstop_jsonrpc::shaper::unheld_answer_error(
            line.len() as u64,
            cap,
            &format!("it stopped being JSON at byte {}: {why}", at as u64 + past),
        );
        let expected = [backstop_jsonrpc::message::error_response("1", &error), b"\n".to_vec()].concat();
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
        prop_assert!(
            shaper.pending().get(&backstop_core::machine::RequestId::Number("1".into())).is_none(),
            "answered once"
        );
    }
}

/// B4: a UTF-8 lead byte, an escape, then continuation bytes is not JSON, wherever a
/// read ends — before, a read that ended inside the escape made the scan take the four
/// bytes around it for one character.
#[test]
fn b4_a_utf8_sequence_cut_by_an_escape_is_not_json_in_any_chunking() {
    let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xf0\\n\x9f\x98\x80b\"}]}}";
    let split = line.iter().position(|&b| b == b'\\').unwrap() + 1;
    for sizes in [vec![split, line.len()], vec![line.len()], vec![1]] {
        let scanned = scanned(line, &sizes);
        assert_eq!(
            scanned.broken.map(|broken| (broken.at, broken.why)),
            Some(((split - 2) as u64, "bytes that are not UTF-8")),
            "{sizes:?}"
        );
    }
}

/// B3, B4: an answer may go unheld only from a point where it is still JSON and
/// names no method; and a message that ends too soon says where it ended.
#[test]
fn b4_an_answer_goes_unheld_only_while_it_is_json_and_no_request() {
    let unheld_from = |message: &[u8], min: u64| {
        let mut scan = Scan::new(1_000);
        scan.push(message);
        scan.unheld_from(min)
    };
    let text_at = br#"{"id":1,"result":{"content":[{"type":"text","text":"#.len() as u64;
    let answer = br#"{"id":1,"result":{"content":[{"type":"text","text":"log line"#;
    assert_eq!(unheld_from(answer, 0), Some(text_at));
    // Broken before that point (a control character in an earlier member): never.
    let broken_before =
        b"{\"x\":\"\x01\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"log";
    assert_eq!(unheld_from(broken_before, 0), None);
    // Broken after it: from that point, and past it only up to the break.
    let broken_after = [&answer[..], b"\x01"].concat();
    assert_eq!(unheld_from(&broken_after, 0), Some(text_at));
    let break_at = answer.len() as u64;
    assert_eq!(unheld_from(&broken_after, break_at - 1), Some(break_at - 1));
    assert_eq!(
        unheld_from(&broken_after, break_at),
        None,
        "the break comes first"
    );
    // A method before the point: a request; after it, the point stands.
    let method_first = br#"{"method":"x","id":1,"result":{"content":[{"type":"text","text":"log"#;
    assert_eq!(unheld_from(method_first, 0), None);
    let method_after = [&answer[..], br#"","x":1}]},"method":"x"}"#].concat();
    assert_eq!(unheld_from(&method_after, 0), Some(text_at));

    let mut inside = Scan::new(1_000);
    inside.push(answer);
    let broken = inside.finish().broken.unwrap();
    assert_eq!(
        (broken.at, broken.why),
        (answer.len() as u64, "it ends inside a string")
    );
    let mut open = Scan::new(1_000);
    open.push(br#"{"id":1,"result":{}"#);
    let broken = open.finish().broken.unwrap();
    assert_eq!(broken.why, "it ends before its objects and arrays close");
}

/// B3, B4: an answer being cut that stops being JSON past where it could go unheld is
/// answered with the same error whether the break comes in a later read or in the
/// read that takes it past that point (found by the fuzz target `stream`, seed
/// 7e4f22f7: read at once, the break made it pass as it came before the cut was asked
/// for).
#[test]
fn b4_an_answer_being_cut_that_breaks_in_the_same_read_is_cut_in_any_chunking() {
    let head = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"log: "#;
    let text = "line of output\\n".repeat(200);
    let line = [
        &head[..],
        text.as_bytes(),
        b"\x01",
        text.as_bytes(),
        br#""}]}}"#,
    ]
    .concat();
    let mut sent = Vec::new();
    for chunks in [&[line.len()][..], &[head.len() + 10, line.len()], &[7]] {
        let (out, ..) = unheld_by(shaper(2_000), &line, 0, chunks);
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("stopped being JSON") && out.contains(r#""id":1,"error""#),
            "chunks {chunks:?}: {out:.300}"
        );
        sent.push(out);
    }
    assert!(sent.windows(2).all(|pair| pair[0] == pair[1]), "{sent:?}");
}

/// B3, B4: a break at the very byte an answer could go unheld from keeps it held (it
/// is sent as it came), whether a read ends just before that byte or not.
#[test]
fn b4_a_break_where_an_answer_could_go_unheld_keeps_it_held_in_any_chunking() {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"log {}"#,
        "x".repeat(3_000)
    );
    let line = [head.as_bytes(), b"\x01\"}]}}"].concat();
    let from = head.len() as u64;
    for split in [head.len(), head.len() - 1, line.len()] {
        let (sent, ..) = unheld_by(shaper(2_000), &line, from, &[split, line.len()]);
        assert_eq!(sent, [&line[..], b"\n"].concat(), "split at {split}");
    }
}

/// B5, at most one answer: an answer cut unheld whose request backstop answered itself
/// meanwhile (its own timeout, say) is dropped at its end, not sent as a second one.
#[test]
fn b5_an_answer_cut_unheld_after_its_request_was_answered_is_dropped() {
    let line = plain_text_answer(&[(0, 1)], 1_200_000, 0, 0);
    let mut shaper = shaper(2_000);
    let mut long = LongMessage::new(&shaper).unheld_from(0);
    let mut sink = MemorySink::default();
    let (first, second) = line.split_at(line.len() - 10);
    long.push(&mut shaper, first, first, &mut sink);
    assert!(sink.held.is_empty(), "cut unheld");
    let timeout = backstop_core::ProtocolError::new(-32001, "timed out");
    let own = shaper.answer_requests(&["1".to_owned()], &timeout);
    assert_eq!(own.len(), 1);
    long.push(&mut shaper, second, second, &mut sink);
    long.end(&mut shaper, Instant::now(), &mut LineFrame, &mut sink);
    assert!(
        sink.sent.is_empty(),
        "{:.200}",
        String::from_utf8_lossy(&sink.sent)
    );
}

/// B5, at most one answer: a long answer (held, or one that would pass early) to a
/// request backstop answered itself is dropped at its end, its id first or last, in
/// any chunking; the next line passes.
#[test]
fn b5_a_long_late_answer_to_a_request_answered_here_is_dropped() {
    let big = "line of output\n".repeat(20_000);
    let timeout = backstop_core::ProtocolError::new(-32603, "timed out");
    let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    for id_last in [false, true] {
        let line = result_line(&big, id_last, false, 0);
        // The resources/read (id 2) would pass early; the call (id 1) be cut.
        let read = String::from_utf8(line.clone())
            .unwrap()
            .replace(r#""id":1"#, r#""id":2"#);
        for (id, line) in [("1", line.clone()), ("2", read.into_bytes())] {
            for chunks in [&[line.len()][..], &[1000, 7]] {
                let mut shaper = shaper(2_000);
                shaper.answer_requests(&[id.to_owned()], &timeout);
                let input = [&line[..], b"\n", note].concat();
                let (sent, _) = streamed_by(shaper, &input, 1000, chunks);
                assert_eq!(
                    String::from_utf8_lossy(&sent),
                    String::from_utf8_lossy(&[&note[..], b"\n"].concat()),
                    "id {id}, id last: {id_last}, chunks {chunks:?}"
                );
            }
        }
    }
}

/// B4, B5 (A0): a long message answers the request the whole-line path says it
/// answers — by the one rule (`backstop_jsonrpc::lenient`): its `id` and then a
/// `result` or `error` with no `method` before them — and is sent as it came, in any
/// chunking. Found by the fuzz target `stream`: the scan read structure that is not
/// JSON (a key without its colon, a second colon, a value after a value) as JSON and
/// let its `id` answer the `resources/read`; it took a `method` that is `null` for
/// one; and it let an answer end its request on its `id` alone, or before a `method`
/// or a second member the whole path reads — a server's request carrying the id of a
/// client's ended that client request.
#[test]
fn b5_a_long_message_answers_what_the_whole_line_path_says_it_answers() {
    let big = "line of output\\n".repeat(100);
    let result = format!(r#"{{"contents":[{{"text":"{big}"}}]}}"#);
    // The message, and whether it answers the `resources/read` (id 2).
    let cases = [
        (
            format!(r#"{{"jsonrpc:""2.0","id":2,"result":{result}}}"#),
            false,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id"::2,"result":{result}}}"#),
            false,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":2:3,"result":{result}}}"#),
            false,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":2 3,"result":{result}}}"#),
            true, // read leniently: the id ends at the space
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":-,"result":{result}}}"#),
            false,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","method":null,"id":2,"result":{result}}}"#),
            true,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result},"method":"x"}}"#),
            true,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result},"error":{{}}}}"#),
            true,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result},"id":1}}"#),
            true,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","result":{result},"method":"x","id":2}}"#),
            false,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{result}}}"#
            ),
            false,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result}}} x"#),
            true,
        ),
    ];
    for (line, answers) in cases {
        let mut whole = shaper(2_000);
        let sent = whole.route_server_message(Instant::now(), line.as_bytes());
        assert_eq!(
            sent.forward,
            Some(backstop_jsonrpc::Forward::Unchanged),
            "{line}"
        );
        assert_eq!(whole.pending().len(), if answers { 1 } else { 2 }, "{line}");
        for size in [line.len(), 40, 3] {
            let mut shaper = shaper(2_000);
            let mut stream = ServerStream::new(16);
            let mut sink = MemorySink::default();
            for chunk in line.as_bytes().chunks(size) {
                stream.push(&mut shaper, Instant::now(), chunk, &mut sink);
            }
            stream.push(&mut shaper, Instant::now(), b"\n", &mut sink);
            stream.finish(&mut shaper, Instant::now(), &mut sink);
            assert_eq!(
                sink.sent,
                [line.as_bytes(), b"\n"].concat(),
                "reads of {size}: {line}"
            );
            let ids = |shaper: &Shaper| -> Vec<String> {
                let mut ids: Vec<String> =
                    shaper.pending().iter().map(|r| r.id_json.clone()).collect();
                ids.sort();
                ids
            };
            assert_eq!(ids(&shaper), ids(&whole), "reads of {size}: {line}");
        }
    }
}

/// B3, B5: a long answer whose request needs no change passes as it comes once its
/// `id` and its `result` — or its `error` — are read, not held to its end; an `id`
/// alone does not say the message is an answer (a server's request may carry it: it
/// passes once its `method` is read, answering nothing), and an error a resource
/// read's answer maps (P1) is held.
#[test]
fn b3_a_long_answer_passes_once_its_id_and_result_or_error_are_read() {
    // The id, what follows it, whether it passes at once, whether it answers.
    let cases = [
        ("5", r#""result":{"#, true, true),
        ("5", r#""error":{"#, true, true),
        ("5", r#""params":{"#, false, false),
        (
            "5",
            r#""method":"sampling/createMessage","params":{"#,
            true,
            false,
        ),
        ("2", r#""result":{"#, true, true),
        ("2", r#""error":{"#, false, true),
    ];
    for (id, member, passes, answers) in cases {
        let mut shaper = shaper(2_000);
        shaper.client_message(
            Instant::now(),
            br#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p"}}"#,
        );
        let mut sink = MemorySink::default();
        let mut long = LongMessage::new(&shaper);
        let head = format!(r#"{{"jsonrpc":"2.0","id":{id},{member}"message":""#);
        long.push(&mut shaper, head.as_bytes(), head.as_bytes(), &mut sink);
        match passes {
            true => assert_eq!(sink.sent, head.as_bytes(), "{id} {member}: passing"),
            false => assert!(sink.sent.is_empty(), "{id} {member}: held"),
        }
        let rest = format!(r#"{}"}}}}"#, "x".repeat(3_000));
        long.push(&mut shaper, rest.as_bytes(), rest.as_bytes(), &mut sink);
        let answered = long.end(&mut shaper, Instant::now(), &mut LineFrame, &mut sink);
        let expected: &[&str] = if answers { &[id] } else { &[] };
        assert_eq!(answered, expected, "{id} {member}");
        let pending = 3 - usize::from(answers);
        assert_eq!(shaper.pending().len(), pending, "{id} {member}");
    }
}

/// B5: a long answer only serde_json reads as one (its `result` key written with an
/// escape, which the lenient reader does not decode) ends its request, and the long
/// path says it answered it: the HTTP modes make up an error for a request a stream
/// leaves unanswered, which would be a second answer.
#[test]
fn b5_a_long_answer_only_serde_json_reads_as_one_is_said_to_answer() {
    let big = "x".repeat(3_000);
    let line =
        format!(r#"{{"jsonrpc":"2.0","id":2,"res\u0075lt":{{"contents":[{{"text":"{big}"}}]}}}}"#);
    let mut shaper = shaper(2_000);
    let mut sink = MemorySink::default();
    let mut long = LongMessage::new(&shaper);
    long.push(&mut shaper, line.as_bytes(), line.as_bytes(), &mut sink);
    assert_eq!(
        long.end(&mut shaper, Instant::now(), &mut LineFrame, &mut sink),
        ["2"]
    );
    assert_eq!(sink.sent, [line.as_bytes(), b"\n"].concat());
    assert_eq!(shaper.pending().len(), 1, "the resources/read answered");
}

/// The scan's top level: the first `id` counts and a `method` that is `null` is none,
/// as for the lenient reader and the whole-message path (B5, A0); each content block
/// is known by its index (L1: a long text of the second block is held as the second's).
#[test]
fn a_scan_reads_the_first_id_a_null_method_as_none_and_each_block_s_index() {
    let top = |message: &[u8]| {
        let mut scan = Scan::new(1_000);
        scan.push(message);
        (
            scan.top_id().map(<[u8]>::to_vec),
            scan.top_method().map(<[u8]>::to_vec),
        )
    };
    let (id, method) = top(br#"{"method":null,"id":1,"id":2,"result":{}}"#);
    assert_eq!((id.as_deref(), method), (Some(&b"1"[..]), None));
    let (_, method) = top(br#"{"method":"x","method":null,"method":"y","id":1}"#);
    assert_eq!(
        method.as_deref(),
        Some(&br#""x""#[..]),
        "the first, and not null"
    );
    let mut scan = Scan::new(1_000);
    let long = "y".repeat(3 << 20);
    let blocks = format!(
        r#"{{"type":"text","text":"a"}},{{"type":"text","text":"b"}},{{"type":"text","text":"{long}"}}"#
    );
    scan.push(format!(r#"{{"id":1,"result":{{"content":[{blocks}]}}}}"#).as_bytes());
    let holes = scan.finish().holes;
    assert_eq!(holes.iter().map(|hole| hole.block).collect::<Vec<_>>(), [2]);
}

/// B3, B4: an escape cut by the end of a read, not decided yet, keeps an answer held
/// until it is: it may turn out not to be JSON before the point the answer would go
/// unheld from. In any chunking the answer is then sent as it came (the fuzz target
/// `stream` found it cut with an error in reads of 6 and 1 bytes, and sent as it came
/// in one read).
#[test]
fn b4_an_escape_not_decided_yet_keeps_an_answer_held_in_any_chunking() {
    let cap = Limit::min_bytes();
    let head = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"log: "#;
    let pad = "x".repeat(cap - 2 - head.len());
    let text = format!(r"{pad}\utput{}", r"\nline of output".repeat(40));
    let line = format!(r#"{head}{text}"}}]}}}}"#).into_bytes();
    let escape = head.len() + pad.len();
    assert!(escape < cap && cap < escape + 6, "the escape spans the cap");
    let at_once = unheld_by(shaper(cap), &line, 0, &[line.len()]).0;
    assert_eq!(at_once, [&line[..], b"\n"].concat(), "not JSON: as it came");
    for split in [escape + 2, escape + 3, escape + 5] {
        let (sent, ..) = unheld_by(shaper(cap), &line, 0, &[split, 1, 6]);
        assert_eq!(
            String::from_utf8_lossy(&sent),
            String::from_utf8_lossy(&at_once),
            "a read ending at {split}"
        );
    }
}

/// B3, B4 for an answer cut unheld whose strings the scan held whole (shorter than a
/// cut could keep): cut as the whole-line path cuts it when it is JSON, answered with
/// an error saying where when it is not.
#[test]
fn b4_a_short_answer_cut_unheld_is_cut_or_answered_with_an_error() {
    let valid = plain_text_answer(&[(0, 1)], 5_000, 0, 1);
    let through = |line: &[u8]| unheld_by(shaper(2_000), line, 0, &[700]).0;
    let expected = whole_by(shaper(2_000), &valid);
    assert!(expected.len() < valid.len(), "the whole-line path cuts it");
    assert_eq!(
        String::from_utf8_lossy(&through(&valid)),
        String::from_utf8_lossy(&expected)
    );
    let at = valid.len() - 40;
    let broken = [&valid[..at], b"\x01", &valid[at..]].concat();
    let sent = String::from_utf8(through(&broken)).unwrap();
    assert!(
        sent.starts_with(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"#)
            && sent.contains(&format!("stopped being JSON at byte {at}: ")),
        "{sent}"
    );
}

/// `line`'s first `cut` bytes, the end of the server's output, through a stream that
/// shapes lines up to `whole_line` whole (`unheld`: answers being cut not held from
/// the first byte), in reads of `size`, after a whole ping answer: what was sent, what
/// was cut off, and the shaper after.
fn cut_off_at(
    line: &[u8],
    cut: usize,
    whole_line: usize,
    unheld: bool,
    size: usize,
) -> (Vec<u8>, Option<CutOff>, Shaper) {
    let mut shaper = shaper(2_000);
    let mut stream = ServerStream::new(whole_line).unheld_from(if unheld { 0 } else { u64::MAX });
    let mut sink = MemorySink::default();
    stream.push(
        &mut shaper,
        Instant::now(),
        b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n",
        &mut sink,
    );
    for chunk in line[..cut].chunks(size) {
        stream.push(&mut shaper, Instant::now(), chunk, &mut sink);
    }
    let cut_off = stream.finish(&mut shaper, Instant::now(), &mut sink);
    assert!(sink.held.is_empty(), "nothing is left held");
    (sink.sent, cut_off, shaper)
}

/// B5: the server's output ending in the middle of a line — a `tools/call` answer
/// (held, or cut as it comes) or a `resources/read` one (passing as it came once its
/// `id` and `result` are read), short or long — leaves only whole lines: none of it is
/// sent if none was, and what was sent is ended with its line break. The request it was
/// answering is said (once the lenient reader knows it, B4) and stays pending only if
/// nothing of its answer was sent, so that its owner answers it once. The same in any
/// chunking; a line whose structure closed is a line, line break or not.
#[test]
fn b5_a_line_the_end_of_output_cuts_off_is_never_half_sent_and_names_its_request() {
    let text = "log line \\u001b[0m \\\"quoted\\\" \\\\ ok\\n".repeat(120);
    let answers = [
        (
            "1",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
            ),
        ),
        (
            "2",
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"result":{{"contents":[{{"uri":"file:///big","text":"{text}"}}]}}}}"#
            ),
        ),
    ];
    let ping = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n";
    for (id, line) in &answers {
        let line = line.as_bytes();
        // Where the lenient reader knows what the line answers: the `result` key read.
        let known = memchr::memmem::find(line, b"\"result\"").unwrap() + 8;
        for (whole_line, unheld) in [(64 << 10, false), (16, false), (16, true)] {
            for cut in (1..line.len())
                .step_by(97)
                .chain([known - 1, known, line.len() - 1])
            {
                let at_once = cut_off_at(line, cut, whole_line, unheld, cut);
                for size in [1, 3, 40] {
                    let (sent, cut_off, shaper) = cut_off_at(line, cut, whole_line, unheld, size);
                    let case = format!(
                        "id {id}, {whole_line} whole, unheld {unheld}, cut at {cut}, reads of {size}"
                    );
                    let cut_off = cut_off.unwrap_or_else(|| panic!("{case}: cut off"));
                    assert_eq!(cut_off.bytes, cut as u64, "{case}");
                    let partly = [&ping[..], &line[..cut], b"\n"].concat();
                    match cut_off.sent {
                        false => assert_eq!(sent, ping, "{case}: nothing of it sent"),
                        true => assert_eq!(sent, partly, "{case}: ended where it stopped"),
                    }
                    let answering = (cut >= known).then_some(*id);
                    assert_eq!(cut_off.answering.as_deref(), answering, "{case}");
                    assert_eq!(
                        shaper.is_pending(id.as_bytes()),
                        !cut_off.sent,
                        "{case}: pending while none of its answer was sent"
                    );
                    assert_eq!(
                        (sent, Some(cut_off)),
                        (at_once.0.clone(), at_once.1.clone()),
                        "{case}: as read at once"
                    );
                }
            }
            // Whole, without its line break: a line, not cut off.
            let (sent, cut_off, shaper) = cut_off_at(line, line.len(), whole_line, unheld, 40);
            assert_eq!(cut_off, None, "id {id}, {whole_line} whole: whole");
            assert!(
                sent.ends_with(b"\n") && sent.len() > ping.len(),
                "id {id}: sent, ended"
            );
            assert!(!shaper.is_pending(id.as_bytes()), "id {id}: answered");
        }
    }
    // A long answer passes early (id 2, a resources/read, needs no change): cut off
    // past its `result`, a part of it was sent; a tools/call answer never is.
    let (_, passed, _) = cut_off_at(answers[1].1.as_bytes(), 2_000, 16, false, 40);
    assert!(
        passed.unwrap().sent,
        "the resources/read answer was passing"
    );
    let (_, held, _) = cut_off_at(answers[0].1.as_bytes(), 2_000, 16, false, 40);
    assert!(!held.unwrap().sent, "the tools/call answer was held");
}

/// B5: whether a last line was cut off — an object or array opened and not closed,
/// strings read by their quotes and escapes alone (runs of backslashes, escaped quotes,
/// bytes that are not UTF-8) — is decided the same on the long path, in any chunking,
/// as for the whole line ([`is_cut_off`]); a notification cut off is not sent either.
#[test]
fn b5_a_cut_off_line_is_known_by_its_structure_in_any_chunking() {
    let line: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":[\"a\\\\\\\"}]\\\\\",\"\xff\\\\\\\\\",{\"k\":[1,{}]}],\"x\":\"]\"}} ";
    assert!(
        serde_json::from_slice::<Value>(&line[..line.len() - 1]).is_err(),
        "not UTF-8"
    );
    for cut in 1..=line.len() {
        let prefix = &line[..cut];
        let expected = is_cut_off(prefix);
        for whole_line in [16, 64 << 10] {
            for size in [1, 2, 5, 7, cut] {
                let (sent, cut_off, _) = cut_off_at(line, cut, whole_line, false, size);
                let case = format!("cut at {cut}, {whole_line} whole, reads of {size}");
                assert_eq!(cut_off.is_some(), expected, "{case}");
                if expected {
                    let sent_some = cut_off.as_ref().is_some_and(|cut_off| cut_off.sent);
                    assert_eq!(sent_some, sent.len() > 34, "{case}");
                    assert!(sent.ends_with(b"\n"), "{case}");
                    assert_eq!(cut_off.unwrap().answering, None, "{case}: a notification");
                }
            }
        }
    }
    assert!(!is_cut_off(line), "closed, a space after it");
    assert!(
        is_cut_off(&line[..line.len() - 2]),
        "the last brace missing"
    );
}
