//! The streaming server side (SPEC B1, B3, B4) on any bytes in any chunking: it never
//! panics, nothing is left held, and what it sends — to the client and to the server —
//! is exactly what the whole-line path sends (`Shaper::route_server_message` on each
//! line, the line as it came when unchanged), with every line over 16 bytes scanned as
//! it arrives, sent on early or held to its end — under each keep policy of the
//! `tools/call`'s tool (L16: the scan then holds a head, a tail or both). And with
//! answers being cut no longer held past the cap (B3, B4's exception): the same bytes
//! in any chunking, every request the whole path answers answered. A last line the end
//! of the output cuts off is no line (B5): not sent, or — passing as it came — sent as
//! far as it came and ended; its request, which the stream names, is its owner's to
//! answer (here: on both paths, with one error).
#![no_main]

#[path = "support/pending.rs"]
mod pending;

use std::time::Instant;
use backstop_core::ProtocolError;
use backstop_core::limit::Keep;
use backstop_jsonrpc::Shaper;
use backstop_jsonrpc::stream::{CutOff, MemorySink, ServerStream, is_cut_off};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sizes, output)) = data.split_first_chunk::<2>() else {
        return;
    };
    // The top bits of the first size, unused by it, pick the policy.
    let keep = match sizes[0] >> 6 {
        0 | 1 => Keep::Tail,
        2 => Keep::Head,
        _ => Keep::HeadAndTail {
            head_per_mille: 500,
        },
    };
    // The whole-line path, lines as the proxy's framing reads them.
    let mut whole = pending::shaper_keeping(keep);
    let mut expected = Vec::new();
    let mut pieces: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|last| last.is_empty()) {
        pieces.pop();
    }
    let cut_off = match pieces.last() {
        Some(last) if !output.ends_with(b"\n") && is_cut_off(last) => pieces.pop(),
        _ => None,
    };
    for line in pieces {
        let route = whole.route_server_message(Instant::now(), line);
        for message in &route.to_client {
            expected.extend_from_slice(message);
            expected.push(b'\n');
        }
        if let Some(forward) = &route.forward {
            expected.extend_from_slice(forward.bytes(line));
            expected.push(b'\n');
        }
    }
    // The streaming path, in chunks of two alternating sizes.
    let alternating = || sizes.iter().cycle().map(|&s| usize::from(s % 64) + 1);
    let (sink, mut streamed, cut) =
        stream_through(keep, ServerStream::new(16), output, alternating());
    assert!(
        sink.to_server.is_empty(),
        "no listing of the shaper's own here"
    );
    assert_eq!(
        cut.is_some(),
        cut_off.is_some(),
        "B5: the last line cut off"
    );
    if cut.as_ref().is_some_and(|cut| cut.sent) {
        expected.extend_from_slice(cut_off.unwrap_or_default());
        expected.push(b'\n');
    }
    assert_eq!(
        String::from_utf8_lossy(&sink.sent),
        String::from_utf8_lossy(&expected),
        "B3: the stream sends what the whole lines get"
    );
    assert_eq!(sink.sent, expected);
    answer_cut_off(&mut streamed, &cut);
    answer_cut_off(&mut whole, &cut);
    assert_eq!(
        streamed.pending().len(),
        whole.pending().len(),
        "the same requests answered"
    );
    // The same with every answer being cut no longer held once over the cap (B3, B4):
    // the same bytes in any chunking.
    let unheld = || ServerStream::new(16).unheld_from(0);
    let (chunked, mut chunked_shaper, chunked_cut) =
        stream_through(keep, unheld(), output, alternating());
    let (at_once, mut at_once_shaper, at_once_cut) =
        stream_through(keep, unheld(), output, std::iter::once(output.len()));
    assert_eq!(
        chunked_cut, at_once_cut,
        "B5: the same cut off in any chunking"
    );
    answer_cut_off(&mut chunked_shaper, &chunked_cut);
    answer_cut_off(&mut at_once_shaper, &at_once_cut);
    assert_eq!(
        String::from_utf8_lossy(&chunked.sent),
        String::from_utf8_lossy(&at_once.sent),
        "B3, B4: an answer cut unheld is the same in any chunking"
    );
    assert_eq!(chunked.sent, at_once.sent);
    let chunked = (chunked.sent, chunked_shaper.pending().len());
    assert_eq!(chunked.1, at_once_shaper.pending().len());
    // B4's exception answers a broken answer being cut with an error for the id the
    // strict scan read, where the whole path, sending it as it came, reads it
    // leniently: it may answer more, never fewer.
    assert!(
        chunked.1 <= whole.pending().len(),
        "B5: a request the whole path answers is answered"
    );
});

/// The owner's answer to the request a cut-off last line was answering (B5).
fn answer_cut_off(shaper: &mut Shaper, cut: &Option<CutOff>) {
    if let Some(id) = cut.as_ref().and_then(|cut| cut.answering.clone()) {
        shaper.answer_requests(&[id], &ProtocolError::new(-32603, "exited"));
    }
}

/// `output` through `stream` in chunks of `sizes`, from [`pending::shaper_keeping`]:
/// what was sent (nothing is left held: B1), the shaper after, and what the end of
/// the output cut off.
fn stream_through(
    keep: Keep,
    mut stream: ServerStream,
    output: &[u8],
    sizes: impl Iterator<Item = usize>,
) -> (MemorySink, Shaper, Option<CutOff>) {
    let mut shaper = pending::shaper_keeping(keep);
    let mut sink = MemorySink::default();
    let mut rest = output;
    for size in sizes {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        stream.push(&mut shaper, Instant::now(), chunk, &mut sink);
        rest = tail;
    }
    let cut = stream.finish(&mut shaper, Instant::now(), &mut sink);
    assert!(sink.held.is_empty(), "B1: nothing is left held");
    (sink, shaper, cut)
}
