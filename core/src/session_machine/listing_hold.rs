//! The server messages held while backstop's own `tools/list` is in flight (SPEC E8,
//! B1): a `tools/call` answer needs the catalog, and everything the server sends after
//! it waits with it, so that the client gets every message in the order the server
//! sent it.
//!
//! Holding is bounded twice. In size: at most [`MAX_HELD_MESSAGES`] messages and
//! [`MAX_HELD_BYTES`] bytes (a first message is held whatever its size: the bound is
//! on what comes after it); past a bound nothing more is held until the next listing,
//! and what was held goes on decided without a catalog. In time: a page of the
//! listing the server leaves unanswered for [`LISTING_PATIENCE`] stops the holding
//! ([`SessionMachine::poll_timeout`](super::SessionMachine::poll_timeout),
//! [`SessionMachine::handle_timeout`](super::SessionMachine::handle_timeout)): a server
//! that never answers must not hold the client's answers forever.
//!
//! ```
//! use std::time::Instant;
//! use backstop_core::{SessionMachine, machine::{ClientRequest, LISTING_PATIENCE, RequestId}};
//! let mut machine = SessionMachine::default();
//! machine.set_outside_session();
//! let now = Instant::now();
//! let call = ClientRequest::new(RequestId::Number("1".into()), "1", "tools/call").tool("echo");
//! assert!(machine.client_request(call, true, now).is_some(), "listed first (E8)");
//! assert_eq!(machine.hold_server_message(b"answer".to_vec()), Ok(()));
//! assert_eq!(machine.poll_timeout(), Some(now + LISTING_PATIENCE));
//! machine.handle_timeout(now + LISTING_PATIENCE - std::time::Duration::from_millis(1));
//! assert!(machine.take_released_messages().is_empty(), "not yet");
//! machine.handle_timeout(now + LISTING_PATIENCE);
//! assert_eq!(machine.take_released_messages(), [b"answer".to_vec()]);
//! assert_eq!(machine.poll_timeout(), None);
//! ```

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::SessionMachine;

/// The most server messages held while a listing is in flight.
pub const MAX_HELD_MESSAGES: usize = 1024;

/// The most bytes held while a listing is in flight (a first message is held whatever
/// its size: the bound is on what comes after it).
pub const MAX_HELD_BYTES: usize = 64 << 20;

/// How long a page of backstop's own listing may go unanswered while server messages
/// are held for it, before they go on without its catalog.
pub const LISTING_PATIENCE: Duration = Duration::from_secs(5);

/// Server messages waiting for backstop's own listing, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListingHold {
    messages: VecDeque<Vec<u8>>,
    bytes: usize,
    holding: bool,
    /// When the page in flight was asked for.
    page_sent: Option<Instant>,
}

impl ListingHold {
    /// A listing's first page was asked for at `now`: messages may be held for it.
    pub(crate) fn listing_started(&mut self, now: Instant) {
        self.holding = true;
        self.page_sent = Some(now);
    }

    /// A further page was asked for at `now`: the patience starts again (a holding
    /// stopped stays stopped until the next listing).
    pub(crate) fn page_sent(&mut self, now: Instant) {
        self.page_sent = Some(now);
    }

    /// Hold no more (the listing ended, or was given up).
    pub(crate) fn stop(&mut self) {
        self.holding = false;
    }

    /// Hold `message`, or give it back: no listing is holding, or a bound is passed
    /// (then nothing more is held until the next listing).
    pub(crate) fn hold(&mut self, message: Vec<u8>) -> Result<(), Vec<u8>> {
        let over = self.messages.len() >= MAX_HELD_MESSAGES
            || (!self.messages.is_empty() && self.bytes + message.len() > MAX_HELD_BYTES);
        if !self.holding || over {
            self.holding = false;
            return Err(message);
        }
        self.bytes += message.len();
        self.messages.push_back(message);
        Ok(())
    }

    /// The held messages, oldest first; none is held after.
    pub(crate) fn take(&mut self) -> VecDeque<Vec<u8>> {
        self.bytes = 0;
        std::mem::take(&mut self.messages)
    }

    /// Whether messages may be held.
    pub(crate) fn is_holding(&self) -> bool {
        self.holding
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// When the holding gives up, if messages are held for a page in flight.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match (self.holding, self.messages.is_empty()) {
            (true, false) => self.page_sent.map(|sent| sent + LISTING_PATIENCE),
            _ => None,
        }
    }
}

impl SessionMachine {
    /// Hold a server message until backstop's own listing is done, or give it back:
    /// no listing holds (none in flight, or given up), or a bound is passed (then
    /// nothing more is held until the next listing, and what was held goes first:
    /// [`take_held_messages`](Self::take_held_messages)).
    pub fn hold_server_message(&mut self, message: Vec<u8>) -> Result<(), Vec<u8>> {
        if !self.listing.in_flight() {
            return Err(message);
        }
        self.hold.hold(message)
    }

    /// Whether server messages are held for backstop's own listing: every later one
    /// waits behind them, to keep the server's order.
    pub fn holds_server_messages(&self) -> bool {
        !self.hold.is_empty()
    }

    /// The held server messages, oldest first, to decide again and send: none is held
    /// after.
    pub fn take_held_messages(&mut self) -> VecDeque<Vec<u8>> {
        self.hold.take()
    }

    /// The held server messages, oldest first, once the holding has stopped (the
    /// listing ended, was given up at [`handle_timeout`](Self::handle_timeout), or a
    /// bound was passed): to decide again and send. None while it still holds.
    pub fn take_released_messages(&mut self) -> VecDeque<Vec<u8>> {
        match self.hold.is_holding() {
            true => VecDeque::new(),
            false => self.hold.take(),
        }
    }

    /// When the machine next needs [`handle_timeout`](Self::handle_timeout): the end
    /// of the patience for the listing page that server messages are held for
    /// ([`LISTING_PATIENCE`]); `None` when nothing waits.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.hold.deadline().filter(|_| self.listing.in_flight())
    }

    /// The time is `now`: past [`poll_timeout`](Self::poll_timeout), the holding for
    /// the listing stops (B1): the held messages go on decided without its catalog
    /// ([`take_held_messages`](Self::take_held_messages)). The listing stays in flight
    /// (its answer is still read, and no other starts while it is).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_some_and(|deadline| deadline <= now) {
            self.hold.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b1_holding_is_bounded_in_messages_then_stops_until_the_next_page() {
        let now = Instant::now();
        let mut hold = ListingHold::default();
        assert_eq!(hold.hold(b"m".to_vec()), Err(b"m".to_vec()), "no listing");
        hold.listing_started(now);
        for _ in 0..MAX_HELD_MESSAGES {
            assert_eq!(hold.hold(b"m".to_vec()), Ok(()));
        }
        assert!(hold.hold(b"m".to_vec()).is_err(), "the bound");
        assert_eq!(hold.deadline(), None, "no longer holding");
        assert!(hold.hold(b"m".to_vec()).is_err(), "nor after");
        assert_eq!(hold.take().len(), MAX_HELD_MESSAGES);
        hold.page_sent(now);
        assert!(
            hold.hold(b"m".to_vec()).is_err(),
            "a further page holds no more"
        );
        hold.listing_started(now);
        assert_eq!(
            hold.hold(b"m".to_vec()),
            Ok(()),
            "the next listing holds again"
        );
    }

    #[test]
    fn b1_holding_is_bounded_in_bytes_after_the_first_message() {
        let mut hold = ListingHold::default();
        hold.listing_started(Instant::now());
        assert_eq!(
            hold.hold(vec![0; MAX_HELD_BYTES + 1]),
            Ok(()),
            "a first, whatever its size"
        );
        assert!(hold.hold(vec![0]).is_err());
        let mut hold = ListingHold::default();
        hold.listing_started(Instant::now());
        assert_eq!(hold.hold(vec![0; MAX_HELD_BYTES - 1]), Ok(()));
        assert_eq!(hold.hold(vec![0]), Ok(()), "exactly the bound");
        assert!(hold.hold(vec![0]).is_err());
        assert_eq!(hold.take().len(), 2);
        assert!(hold.is_empty());
    }

    #[test]
    fn b1_the_deadline_follows_the_page_in_flight() {
        let start = Instant::now();
        let mut hold = ListingHold::default();
        hold.listing_started(start);
        assert_eq!(hold.deadline(), None, "nothing held");
        hold.hold(b"m".to_vec()).unwrap();
        assert_eq!(hold.deadline(), Some(start + LISTING_PATIENCE));
        let later = start + Duration::from_secs(3);
        hold.page_sent(later);
        assert_eq!(
            hold.deadline(),
            Some(later + LISTING_PATIENCE),
            "a new page, a new wait"
        );
        hold.stop();
        assert_eq!(hold.deadline(), None);
    }
}
