//! The HTTP modes' streaming shaper (SPEC A5, B1, B3, B4) on any SSE bytes in any
//! chunking: it never panics, and what it sends — to an HTTP client (each event as it
//! came, or with only its `data:` lines changed) and to stdout (one line per message)
//! — is exactly what the whole-event path sends, with every event over a few bytes
//! scanned as it arrives.
#![no_main]

#[path = "support/pending.rs"]
mod pending;

#[path = "../../adapters/cli/tests/support/whole_events.rs"]
mod whole_events;

use backstop::http::shape::{EventShaper, Out, QueueSink};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[size, whole_bytes, mode], stream)) = data.split_first_chunk::<3>() else {
        return;
    };
    let out = if mode % 2 == 0 { Out::Http } else { Out::Lines };
    // The stream ends with a blank line: no event is cut off (one that is, and was
    // partly sent to stdout already, cannot be taken back).
    let stream = [stream, b"\n\n"].concat();
    let expected = whole_events::whole_events(pending::shaper(), &stream, out);

    let mut streamed = pending::shaper();
    let mut events = EventShaper::new(out).with_whole_bytes(usize::from(whole_bytes));
    let mut sink = QueueSink::default();
    let mut sent = Vec::new();
    for chunk in stream.chunks(usize::from(size % 64) + 1) {
        events.push(&mut streamed, chunk, &mut sink);
        sent.extend(sink.take_bytes());
    }
    assert!(
        !events.finish(&mut streamed, true, &mut sink),
        "no event was cut off"
    );
    sent.extend(sink.take_bytes());
    assert!(
        sent == expected,
        "streamed:\n{}\nwhole:\n{}",
        String::from_utf8_lossy(&sent),
        String::from_utf8_lossy(&expected)
    );
});
