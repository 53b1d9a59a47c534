//! The shaper the streaming targets (`stream`, `events`) start from.

use std::time::Instant;
use backstop_core::Limit;
use backstop_core::limit::Keep;
use backstop_jsonrpc::Shaper;

/// A shaper at the smallest cap with a `tools/call` (id 1), a `resources/read` (id 2)
/// and a `ping` (id 3) pending.
#[allow(dead_code)] // not every target that includes this file calls each function
pub fn shaper() -> Shaper {
    shaper_keeping(Keep::Tail)
}

/// [`shaper`], the `tools/call`'s tool keeping `keep` (L16).
pub fn shaper_keeping(keep: Keep) -> Shaper {
    let limit = Limit::new(Limit::min_bytes())
        .unwrap()
        .keep_for("capture_pane", keep);
    let mut shaper = Shaper::new(limit);
    for request in [
        &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capture_pane"}}"#[..],
        br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    ] {
        shaper.client_message(Instant::now(), request);
    }
    shaper
}
