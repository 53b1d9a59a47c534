//! The server messages the shaper holds back while backstop's own `tools/list` is in
//! flight (SPEC E8, B1).
//!
//! The core's [`SessionMachine`](backstop_core::SessionMachine) decides when to list
//! and reads the listing's answers; what stays here is the bytes: while a listing is in
//! flight, a server answer that needs the catalog (a `tools/call` response) is held,
//! with everything the server sends after it, so that the client gets every message in
//! the order the server sent it. Holding is bounded ([`MAX_QUEUED_MESSAGES`],
//! [`MAX_QUEUED_BYTES`]): past a bound the queue stops holding until the next listing,
//! and what it held goes on decided without a catalog.

use std::collections::VecDeque;

/// The start of the ids of backstop's own `tools/list` requests.
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::LISTING_ID_PREFIX, "backstop/tools/list#");
/// ```
pub use backstop_core::machine::OWN_LISTING_ID_PREFIX as LISTING_ID_PREFIX;

/// The most pages one listing follows, the same in every adapter.
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::MAX_PAGES, backstop_core::catalog::MAX_LISTING_PAGES);
/// ```
pub use backstop_core::catalog::MAX_LISTING_PAGES as MAX_PAGES;

/// The most server messages held while a listing is in flight.
///
/// ```
/// assert!(backstop_jsonrpc::listing::MAX_QUEUED_MESSAGES >= 1);
/// ```
pub const MAX_QUEUED_MESSAGES: usize = 1024;

/// The most bytes held while a listing is in flight (a first message is held whatever
/// its size: the bound is on what comes after it).
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::MAX_QUEUED_BYTES, 64 * 1024 * 1024);
/// ```
pub const MAX_QUEUED_BYTES: usize = 64 << 20;

/// Server messages waiting for backstop's own listing, oldest first.
///
/// ```
/// use backstop_jsonrpc::listing::WaitingForListing;
/// let mut waiting = WaitingForListing::default();
/// assert!(!waiting.hold(b"m".to_vec()), "no listing started");
/// waiting.start();
/// assert!(waiting.hold(b"m".to_vec()));
/// assert_eq!(waiting.take(), [b"m".to_vec()]);
/// assert!(waiting.is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct WaitingForListing {
    messages: VecDeque<Vec<u8>>,
    bytes: usize,
    holding: bool,
}

impl WaitingForListing {
    /// A listing started: messages may be held again.
    pub fn start(&mut self) {
        self.holding = true;
    }

    /// Hold no more (the listing ended, or was given up).
    pub fn stop(&mut self) {
        self.holding = false;
    }

    /// Hold `message`; false when it may not be held — no listing is holding, or a
    /// bound is passed (then nothing more is held until the next listing).
    pub fn hold(&mut self, message: Vec<u8>) -> bool {
        let over = self.messages.len() >= MAX_QUEUED_MESSAGES
            || (!self.messages.is_empty() && self.bytes + message.len() > MAX_QUEUED_BYTES);
        if !self.holding || over {
            self.holding = false;
            return false;
        }
        self.bytes += message.len();
        self.messages.push_back(message);
        true
    }

    /// The held messages, oldest first; none is held after.
    pub fn take(&mut self) -> VecDeque<Vec<u8>> {
        self.bytes = 0;
        std::mem::take(&mut self.messages)
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}
