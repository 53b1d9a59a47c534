//! The HTTP modes' bodies and SSE events shaped as they arrive (SPEC A5, B3, B4):
//! whatever the chunking and wherever the bound between shaping whole and scanning
//! lies, the bytes out are those of the whole-event path — the event as it came, or
//! with only its `data:` lines changed — and a long event costs memory bounded by the
//! cap, not by the event.

#[path = "support/whole_events.rs"]
mod whole_events;

use backstop::http::shape::{BodyShaper, EventShaper, Out, QueueSink};
use backstop_core::Limit;
use backstop_jsonrpc::{Forward, Shaper};
use proptest::prelude::*;
use serde_json::json;
use std::time::Instant;

/// A shaper at `cap` with pending `tools/call`s under ids 1 to 4.
fn shaper(cap: usize) -> Shaper {
    let mut shaper = Shaper::new(Limit::new(cap).unwrap());
    for id in 1..=4 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "capture_pane", "arguments": {"pane": "%1"}}});
        shaper.client_message(Instant::now(), &serde_json::to_vec(&call).unwrap());
    }
    shaper
}

/// The whole-event path, at `cap`.
fn whole_events(cap: usize, stream: &[u8], out: Out) -> Vec<u8> {
    whole_events::whole_events(shaper(cap), stream, out)
}

/// The streaming path: `stream` pushed in chunks of `chunk` bytes, events longer than
/// `whole_bytes` scanned.
fn streamed_events(
    cap: usize,
    stream: &[u8],
    out: Out,
    whole_bytes: usize,
    chunk: usize,
) -> Vec<u8> {
    let mut shaper = shaper(cap);
    let mut events = EventShaper::new(out).with_whole_bytes(whole_bytes);
    let mut sink = QueueSink::default();
    let mut sent = Vec::new();
    for piece in stream.chunks(chunk.max(1)) {
        events.push(&mut shaper, piece, &mut sink);
        sent.extend(sink.take_bytes());
    }
    events.finish(&mut shaper, true, &mut sink);
    sent.extend(sink.take_bytes());
    sent
}

/// A JSON-RPC message the shaper may change: a long result, an error, a notification.
fn message() -> impl Strategy<Value = Vec<u8>> {
    let text = "[ -~]{0,40}".prop_map(|line| format!("{line}\n").repeat(12));
    prop_oneof![
        (1..=4u32, text.clone()).prop_map(|(id, text)| json!({"jsonrpc": "2.0", "id": id,
            "result": {"content": [{"type": "text", "text": text}]}})),
        (1..=4u32).prop_map(|id| json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32603, "message": "Pane not found: %5"}})),
        text.prop_map(
            |text| json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"data": text}})
        ),
    ]
    .prop_map(|value| serde_json::to_vec(&value).unwrap())
}

/// One event carrying `message`: some other lines around its data, the data cut into
/// `data:` lines at `cuts`, with one of the three line endings.
fn event() -> impl Strategy<Value = Vec<u8>> {
    (
        message(),
        proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
        prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just("data: "), Just("data:")],
    )
        .prop_map(|(message, cuts, ending, id, comment, prefix)| {
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(message.len())).collect();
            cuts.sort_unstable();
            let mut event = Vec::new();
            if comment {
                event.extend_from_slice(format!(": keep-alive{ending}").as_bytes());
            }
            if id {
                event
                    .extend_from_slice(format!("id: e-7{ending}event: message{ending}").as_bytes());
            }
            let mut at = 0;
            for cut in cuts.into_iter().chain([message.len()]) {
                event.extend_from_slice(prefix.as_bytes());
                event.extend_from_slice(&message[at..cut]);
                event.extend_from_slice(ending.as_bytes());
                at = cut;
            }
            if comment {
                event.extend_from_slice(format!("retry: 1000{ending}").as_bytes());
            }
            event.extend_from_slice(ending.as_bytes());
            event
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)))]

    /// A5, B3: an SSE stream shaped as it arrives gives the bytes of the whole-event
    /// path, whatever the chunking and the bound for shaping whole, in both modes.
    #[test]
    fn events_shaped_as_they_arrive_are_the_whole_events_shaped(
        events in proptest::collection::vec(event(), 1..5),
        cut_off in any::<bool>(),
        cap in 200usize..600,
        whole_bytes in 0usize..800,
        chunk in 1usize..300,
        lines in any::<bool>(),
    ) {
        let mut stream = events.concat();
        // A CR last in a stream may yet be followed by its LF: the whole-event
        // parser waits for more, so the stream goes on.
        stream.extend_from_slice(b": end\n\n");
        if cut_off {
            stream.extend_from_slice(b"id: 9\ndata: {\"jsonrpc\"");
        }
        let out = if lines { Out::Lines } else { Out::Http };
        let want = whole_events(cap, &stream, out);
        let got = streamed_events(cap, &stream, out, whole_bytes, chunk);
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    }

    /// A5, B3: a JSON body shaped as it arrives gives the bytes of the whole body
    /// shaped, whatever the chunking and the bound for shaping whole.
    #[test]
    fn a_body_shaped_as_it_arrives_is_the_whole_body_shaped(
        body in message(),
        pretty in any::<bool>(),
        cap in 200usize..600,
        whole_bytes in 0usize..800,
        chunk in 1usize..300,
        lines in any::<bool>(),
    ) {
        let body = if pretty {
            let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
            serde_json::to_vec_pretty(&value).unwrap()
        } else {
            body
        };
        let out = if lines { Out::Lines } else { Out::Http };
        let mut want = match shaper(cap).server_message(Instant::now(), &body) {
            Forward::Unchanged => body.iter().map(|&b| match (b, out) {
                (b'\n' | b'\r', Out::Lines) => b' ',
                (b, _) => b,
            }).collect(),
            Forward::Rewritten(bytes) => bytes,
        };
        if out == Out::Lines {
            want.push(b'\n');
        }
        let mut shaper = shaper(cap);
        let mut shaped = BodyShaper::new(out).with_whole_bytes(whole_bytes);
        let mut sink = QueueSink::default();
        let mut got = Vec::new();
        for piece in body.chunks(chunk) {
            shaped.push(&mut shaper, piece, &mut sink);
            got.extend(sink.take_bytes());
        }
        shaped.end(&mut shaper, &mut sink);
        got.extend(sink.take_bytes());
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    }
}

/// B3: a 3 MiB text in one event at a 1 MB cap is decided from what the scan held of
/// it — its tail kept, the event's other lines as they came — and the result is the
/// whole-event path's, while the bytes held are those of the event (in the sink's
/// temporary file past 4 MiB), never a second copy of it.
#[test]
fn b3_a_long_event_is_cut_as_the_whole_one_is_keeping_its_other_lines() {
    let text = format!("{}END OF SCROLLBACK", "0123456789abcdef\n".repeat(3 << 16));
    let message = json!({"jsonrpc": "2.0", "id": 2,
        "result": {"content": [{"type": "text", "text": text}]}});
    let mut stream = b"id: big-1\r\nevent: message\r\ndata: ".to_vec();
    stream.extend(serde_json::to_vec(&message).unwrap());
    stream.extend_from_slice(b"\r\n\r\n: after\r\n\r\n");
    let want = whole_events(1_000_000, &stream, Out::Http);
    let got = streamed_events(1_000_000, &stream, Out::Http, 1 << 20, 64 << 10);
    assert!(got.len() < 1_100_000, "cut to the cap: {} bytes", got.len());
    assert!(got.starts_with(b"id: big-1\r\nevent: message\r\ndata: {"));
    assert!(
        got.ends_with(b"END OF SCROLLBACK\",\"type\":\"text\"}]}}\r\n\r\n: after\r\n\r\n"),
        "the tail kept: {}",
        String::from_utf8_lossy(&got[got.len() - 300..])
    );
    assert!(got == want, "the same bytes as the whole-event path");
}

/// B4, A0: a message that is not JSON and names two top-level ids answers the first on
/// both paths — the long path decides on it as it comes — so the call with the second
/// id is still pending, and its error becomes an `isError` result on both (found by the
/// fuzz target `events`: the whole path used to read the last id and end that call).
#[test]
fn b4_a_message_naming_two_ids_answers_the_first_on_both_paths() {
    let error =
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Pane not found: %5"}}"#;
    let mut stream = b"data: {\"id\":5,\"id\":1,%c\n\ndata: ".to_vec();
    stream.extend_from_slice(error);
    stream.extend_from_slice(b"\n\n");
    for out in [Out::Http, Out::Lines] {
        let want = whole_events(1_000, &stream, out);
        assert!(
            String::from_utf8_lossy(&want).contains(r#""isError":true"#),
            "call 1 still pending after the message naming 5 first"
        );
        for chunk in [1, 7, 64] {
            let got = streamed_events(1_000, &stream, out, 2, chunk);
            assert!(got == want, "{}", String::from_utf8_lossy(&got));
        }
    }
}

/// B3: a long event the scan cannot decide — a batch, with a text past what it holds —
/// is read back whole from what was held, its data taken out of the event's lines
/// (several `data:` lines here), and shaped as the whole-event path shapes it.
#[test]
fn b3_a_long_batch_event_is_read_whole_from_what_was_held() {
    let text = format!("{}END", "x".repeat(3 << 20));
    let batch = json!([
        {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}]}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "Pane not found: %5"}},
    ]);
    let data = serde_json::to_string(&batch).unwrap();
    let (first, second) = data.split_at(data.find(",{\"error\"").unwrap() + 1);
    let stream = format!("id: b-1\ndata: {first}\ndata: {second}\n\n");
    for out in [Out::Http, Out::Lines] {
        let want = whole_events(1_000_000, stream.as_bytes(), out);
        let got = streamed_events(1_000_000, stream.as_bytes(), out, 1 << 20, 1 << 16);
        assert!(
            got.len() < 1_100_000,
            "the batch's result is cut: {} bytes",
            got.len()
        );
        assert!(
            got == want,
            "{out:?}: the same bytes as the whole-event path"
        );
    }
}

/// A5: an event cut off by the end of the stream is sent as far as it came to an HTTP
/// client when asked; one partly sent already is ended by the caller (`finish` says
/// so) and one held is dropped when it is not to be kept.
#[test]
fn a5_an_event_cut_off_by_the_end_of_the_stream() {
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
        "y".repeat(2_000)
    );
    let cut_off = format!("id: 5\ndata: {}", &note[..1_500]);
    for (out, keep, whole_bytes, sent, partly) in [
        // Short: held to its end, then sent as it came or dropped.
        (Out::Http, true, 1 << 20, cut_off.len(), false),
        (Out::Http, false, 1 << 20, 0, false),
        (Out::Lines, false, 1 << 20, 0, false),
        // Long, a notification: sent on as it came (it cannot need a change).
        (Out::Http, false, 100, cut_off.len(), true),
        (Out::Lines, false, 100, 1_500, true),
    ] {
        let mut shaper = shaper(1_000);
        let mut events = EventShaper::new(out).with_whole_bytes(whole_bytes);
        let mut sink = QueueSink::default();
        assert!(
            events
                .push(&mut shaper, cut_off.as_bytes(), &mut sink)
                .is_empty()
        );
        let ended_partly = events.finish(&mut shaper, keep, &mut sink);
        let bytes = sink.take_bytes();
        let case = format!("{out:?}, keep {keep}, whole up to {whole_bytes}");
        assert_eq!(bytes.len(), sent, "{case}");
        assert_eq!(ended_partly, partly, "{case}");
        assert!(sink.is_empty(), "{case}: nothing left queued");
    }
}
