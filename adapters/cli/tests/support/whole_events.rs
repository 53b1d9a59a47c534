//! The reference the HTTP modes' streaming shaper must equal (SPEC A5, B3): an SSE
//! stream shaped event by event, each event read whole. Shared by
//! `tests/http_shape.rs` and the fuzz target `events`.

use backstop::http::shape::Out;
use backstop::http::sse::SseParser;
use backstop_jsonrpc::{Forward, Shaper};
use std::time::Instant;

/// The whole-event path: each event of `stream` parsed whole, its data shaped whole by
/// `shaper` (`Shaper::server_message`), an event without a message (no data, or only
/// empty `data:` lines) as it came to an HTTP client and not at all to stdout; what follows the last whole event sent as it
/// came (to an HTTP client) or not at all (to stdout).
pub fn whole_events(mut shaper: Shaper, stream: &[u8], out: Out) -> Vec<u8> {
    let mut parser = SseParser::default();
    let mut sent = Vec::new();
    for event in parser.feed(stream) {
        // Data of empty `data:` lines only (nothing but the line breaks that join
        // them) carries no message: nothing for stdout.
        let data = event.data().filter(|data| data.iter().any(|&b| b != b'\n'));
        match (data, out) {
            (None, Out::Http) => sent.extend_from_slice(event.raw()),
            (None, Out::Lines) => {}
            (Some(data), Out::Http) => match shaper.server_message(Instant::now(), &data) {
                Forward::Unchanged => sent.extend_from_slice(event.raw()),
                Forward::Rewritten(bytes) => sent.extend(event.with_data(&bytes)),
            },
            (Some(data), Out::Lines) => {
                match shaper.server_message(Instant::now(), &data) {
                    Forward::Unchanged => sent.extend(data.iter().map(|&b| match b {
                        b'\n' | b'\r' => b' ',
                        b => b,
                    })),
                    Forward::Rewritten(bytes) => sent.extend(bytes),
                }
                sent.push(b'\n');
            }
        }
    }
    if let (Some(rest), Out::Http) = (parser.finish(), out) {
        sent.extend_from_slice(rest.raw());
    }
    sent
}
