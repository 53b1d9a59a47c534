//! The shaper's own `tools/list`: what it takes to call a tool unknown (SPEC E8) on
//! the first `tools/call` of a session, before the client has listed the tools.
//!
//! The requests go to the server under ids of their own ([`LISTING_ID_PREFIX`] and a
//! number: strings no client picks by chance), page by page along `nextCursor`, and
//! their answers are read by the shaper, never forwarded. While a listing is in
//! flight, the server's answers that need the catalog (`tools/call` responses) are
//! *queued* here, together with everything the server sends after them, so that the
//! client gets every message in the order the server sent it (B1). The queue is bounded
//! ([`MAX_QUEUED_MESSAGES`], [`MAX_QUEUED_BYTES`], [`MAX_PAGES`]): past a bound the listing
//! stops queueing, and what it queued goes on decided without a catalog.
//!
//! This module only keeps that state and writes the requests; the
//! [`Shaper`](crate::Shaper) decides when to list and what a queued message becomes.

use std::collections::VecDeque;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::message::RequestId;

/// The start of the ids of the shaper's own `tools/list` requests.
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::LISTING_ID_PREFIX, "backstop/tools/list#");
/// ```
pub const LISTING_ID_PREFIX: &str = "backstop/tools/list#";

/// The most pages one listing follows; a server whose `nextCursor` never ends is
/// not listed further, and the catalog stays incomplete.
///
/// ```
/// assert!(backstop_jsonrpc::listing::MAX_PAGES >= 100);
/// ```
pub const MAX_PAGES: usize = 1000;

/// The most server messages queued while a listing is in flight.
///
/// ```
/// assert!(backstop_jsonrpc::listing::MAX_QUEUED_MESSAGES >= 1);
/// ```
pub const MAX_QUEUED_MESSAGES: usize = 1024;

/// The most bytes of server messages queued while a listing is in flight, the first
/// queued message aside (it is queued whatever its size: it would be held whole anyway
/// to be shaped, SPEC B2).
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::MAX_QUEUED_BYTES, 64 * 1024 * 1024);
/// ```
pub const MAX_QUEUED_BYTES: usize = 64 << 20;

/// The page request in flight.
#[derive(Debug, Clone)]
struct Page {
    id: String,
    first: bool,
    number: usize,
}

/// The state of the shaper's own listing: the request in flight, the `_meta` its
/// requests carry, and the server messages queued until it is done.
///
/// ```
/// use backstop_jsonrpc::listing::OwnListing;
/// use backstop_jsonrpc::message::RequestId;
///
/// let mut listing = OwnListing::default();
/// let request = listing.start(None);
/// assert_eq!(request, br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#);
/// assert!(listing.answers(&RequestId::String("backstop/tools/list#1".into())));
/// assert!(listing.queue(b"queued".to_vec()));
/// let next = listing.next_page(&serde_json::json!("p2")).unwrap();
/// assert!(next.starts_with(br#"{"jsonrpc":"2.0","id":"backstop/tools/list#2""#));
/// listing.finish();
/// assert_eq!(listing.take_queued(), [b"queued".to_vec()]);
/// assert!(!listing.in_flight());
/// ```
#[derive(Debug, Clone, Default)]
pub struct OwnListing {
    requests_sent: u64,
    page: Option<Page>,
    meta: Option<Map<String, Value>>,
    queueing: bool,
    failed: bool,
    queued: VecDeque<Vec<u8>>,
    queued_bytes: usize,
}

impl OwnListing {
    /// Start a listing: the first page's request, with `meta` as its `params._meta`
    /// (the identity and revision of a client without a handshake, R2/R3).
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// let meta = serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    /// let request = listing.start(meta.as_object().cloned());
    /// assert_eq!(request, br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
    /// ```
    pub fn start(&mut self, meta: Option<Map<String, Value>>) -> Vec<u8> {
        self.meta = meta;
        self.queueing = true;
        self.failed = false;
        self.request(None, 1)
    }

    /// The request for the page after `cursor`; `None` past [`MAX_PAGES`] (the
    /// listing is then given up).
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// listing.start(None);
    /// let next = listing.next_page(&serde_json::json!("c")).unwrap();
    /// assert_eq!(next, br#"{"jsonrpc":"2.0","id":"backstop/tools/list#2","method":"tools/list","params":{"cursor":"c"}}"#);
    /// ```
    pub fn next_page(&mut self, cursor: &Value) -> Option<Vec<u8>> {
        let number = self.page.as_ref().map_or(0, |page| page.number) + 1;
        if number > MAX_PAGES {
            return None;
        }
        Some(self.request(Some(cursor), number))
    }

    fn request(&mut self, cursor: Option<&Value>, number: usize) -> Vec<u8> {
        self.requests_sent += 1;
        let id = format!("{LISTING_ID_PREFIX}{}", self.requests_sent);
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.clone());
        }
        if let Some(meta) = &self.meta {
            params.insert("_meta".into(), Value::Object(meta.clone()));
        }
        // Written member by member: `jsonrpc` first, as clients write it.
        let mut request = br#"{"jsonrpc":"2.0","id":"#.to_vec();
        let to_memory = "serializing to memory";
        serde_json::to_writer(&mut request, &id).expect(to_memory);
        request.extend_from_slice(br#","method":"tools/list""#);
        if !params.is_empty() {
            request.extend_from_slice(br#","params":"#);
            serde_json::to_writer(&mut request, &params).expect(to_memory);
        }
        request.push(b'}');
        self.page = Some(Page {
            id,
            first: cursor.is_none(),
            number,
        });
        request
    }

    /// Whether `id` is the id of the page request in flight.
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// assert!(!listing.answers(&RequestId::String("backstop/tools/list#1".into())));
    /// listing.start(None);
    /// assert!(!listing.answers(&RequestId::Number("1".into())));
    /// ```
    pub fn answers(&self, id: &RequestId) -> bool {
        matches!((&self.page, id), (Some(page), RequestId::String(id)) if *id == page.id)
    }

    /// Whether the id of a response (raw JSON) is the page request's in flight.
    pub(crate) fn answers_raw(&self, id: Option<&RawValue>) -> bool {
        self.page.is_some()
            && id
                .and_then(RequestId::from_raw)
                .is_some_and(|id| self.answers(&id))
    }

    /// Whether the page in flight is the first one.
    pub(crate) fn first_page(&self) -> bool {
        self.page.as_ref().is_some_and(|page| page.first)
    }

    /// Whether a listing is in flight.
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// listing.start(None);
    /// assert!(listing.in_flight());
    /// ```
    pub fn in_flight(&self) -> bool {
        self.page.is_some()
    }

    /// Whether server messages are queued now: a listing is in flight and no bound was
    /// passed.
    pub fn queueing(&self) -> bool {
        self.in_flight() && self.queueing
    }

    /// Whether messages are queued.
    ///
    /// ```
    /// assert!(!backstop_jsonrpc::listing::OwnListing::default().has_queued());
    /// ```
    pub fn has_queued(&self) -> bool {
        !self.queued.is_empty()
    }

    /// Queue a server message; `false` (and not queued) when a bound would be passed, or
    /// when no listing queues: the caller then releases what is queued and forwards
    /// `message` after it.
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// assert!(!listing.queue(b"x".to_vec()), "nothing to wait for");
    /// ```
    pub fn queue(&mut self, message: Vec<u8>) -> bool {
        let over = self.queued.len() >= MAX_QUEUED_MESSAGES
            || (!self.queued.is_empty() && self.queued_bytes + message.len() > MAX_QUEUED_BYTES);
        if !self.queueing() || over {
            self.queueing = false;
            return false;
        }
        self.queued_bytes += message.len();
        self.queued.push_back(message);
        true
    }

    /// Take the queued messages, oldest first.
    pub fn take_queued(&mut self) -> VecDeque<Vec<u8>> {
        self.queued_bytes = 0;
        std::mem::take(&mut self.queued)
    }

    /// The listing is over (its last page came, or it failed): nothing in flight.
    pub fn finish(&mut self) {
        self.page = None;
        self.queueing = false;
    }

    /// The server is too slow to answer: stop queueing (the caller releases what is
    /// queued), and start no new listing until the tool list changes; an answer that still
    /// comes is read as usual.
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// listing.start(None);
    /// listing.give_up();
    /// assert!(listing.in_flight() && !listing.queueing() && listing.failed());
    /// ```
    pub fn give_up(&mut self) {
        self.queueing = false;
        self.failed = true;
    }

    /// Which request of the listing is in flight while messages are queued (a number
    /// that changes with every page asked for); `None` when nothing is queued.
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// listing.start(None);
    /// assert_eq!(listing.queueing_for(), None);
    /// listing.queue(b"x".to_vec());
    /// assert_eq!(listing.queueing_for(), Some(1));
    /// ```
    pub fn queueing_for(&self) -> Option<u64> {
        (self.has_queued() && self.in_flight()).then_some(self.requests_sent)
    }

    /// The listing failed (an error, or an answer that is not a tool list): no new
    /// listing starts until the tool list changes ([`Self::tools_changed`]).
    pub fn fail(&mut self) {
        self.finish();
        self.failed = true;
    }

    /// Whether a listing failed since the tool list last changed.
    ///
    /// ```
    /// let mut listing = backstop_jsonrpc::listing::OwnListing::default();
    /// listing.start(None);
    /// listing.fail();
    /// assert!(listing.failed());
    /// listing.tools_changed();
    /// assert!(!listing.failed());
    /// ```
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The server said its tool list changed: a new listing may be tried.
    pub fn tools_changed(&mut self) {
        self.failed = false;
    }
}
