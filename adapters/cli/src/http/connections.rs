//! The gateway's open connections, bounded (SPEC B2): at most `max` at once, from
//! accept to close. When all are taken, a new connection takes the place of the
//! oldest one that has not sent a whole request head yet — a client that is slow to
//! send its headers (or never does) holds a place for nothing, and a flood of them must
//! not stall every other client until their header timeout — and when every
//! connection has sent one, the new connection is refused at once with `503` and
//! `Retry-After` ([`REFUSAL`]).
//!
//! ```
//! use std::sync::Arc;
//! use backstop::http::connections::Connections;
//! let connections = Arc::new(Connections::new(1));
//! let first = connections.admit().expect("a place");
//! let second = connections.admit().expect("the first sent nothing yet: its place");
//! assert!(first.is_evicted() && !second.is_evicted());
//! second.started();
//! assert!(connections.admit().is_none(), "every place is serving: refused");
//! drop(second);
//! assert!(connections.admit().is_some(), "a place again");
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use tokio::sync::Notify;

use super::lock;

/// The default bound on open connections: well under the usual 1,024 descriptors a
/// process may have, which the upstream's connections share.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// What a refused connection is sent before it is closed: `503` with `Retry-After`,
/// and a JSON-RPC error saying why (its `id` is `null`: no request was read).
pub const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 114\r\n\r\n\
{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"backstop gateway: too many connections, try again\"}}\n";

/// The open connections and the bound on them.
#[derive(Debug)]
pub struct Connections {
    max: usize,
    /// Each open connection by its number, oldest first.
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    next: u64,
    places: BTreeMap<u64, Arc<Place>>,
}

/// One connection's place.
#[derive(Debug, Default)]
struct Place {
    /// It has sent a whole request head.
    started: AtomicBool,
    /// It was told to close, its place taken.
    evicted: AtomicBool,
    close: Notify,
}

impl Connections {
    /// At most `max` connections open at once (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            open: Mutex::new(Open::default()),
        }
    }

    /// A place for a new connection, or `None` when every place is taken by one that
    /// is serving (refuse it with [`REFUSAL`]). When the oldest connection that has
    /// not started yet gives up its place, it is told to close.
    pub fn admit(self: &Arc<Self>) -> Option<Admission> {
        let mut open = lock(&self.open);
        if open.places.len() >= self.max {
            let idle = open
                .places
                .iter()
                .find(|(_, place)| !place.started.load(Ordering::Acquire))
                .map(|(number, _)| *number)?;
            if let Some(place) = open.places.remove(&idle) {
                place.evicted.store(true, Ordering::Release);
                place.close.notify_one();
            }
        }
        let number = open.next;
        open.next += 1;
        let place = Arc::new(Place::default());
        open.places.insert(number, Arc::clone(&place));
        Some(Admission {
            connections: Arc::clone(self),
            number,
            place,
        })
    }

    /// How many connections are open.
    pub fn len(&self) -> usize {
        lock(&self.open).places.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A connection's place, given up when dropped (the connection closed).
#[derive(Debug)]
pub struct Admission {
    connections: Arc<Connections>,
    number: u64,
    place: Arc<Place>,
}

impl Admission {
    /// The connection sent a whole request head: its place is no longer given to a
    /// newer one.
    pub fn started(&self) {
        self.place.started.store(true, Ordering::Release);
    }

    /// Whether a newer connection took this one's place.
    pub fn is_evicted(&self) -> bool {
        self.place.evicted.load(Ordering::Acquire)
    }

    /// Done when a newer connection took this one's place: close it then. Once the
    /// connection has started, it is never evicted, and this is no longer woken or
    /// registered with anything: polled beside the connection at each of its wakes,
    /// it costs one load.
    pub async fn evicted(&self) {
        let mut close = std::pin::pin!(self.place.close.notified());
        std::future::poll_fn(|context| {
            if self.is_evicted() {
                Poll::Ready(())
            } else if self.place.started.load(Ordering::Acquire) {
                Poll::Pending
            } else {
                close.as_mut().poll(context)
            }
        })
        .await;
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        lock(&self.connections.open).places.remove(&self.number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b2_the_refusal_is_one_whole_http_response_with_a_json_rpc_error() {
        let text = std::str::from_utf8(REFUSAL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(length, body.len(), "Content-Length is the body's");
        let error: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], -32603);
        assert_eq!(error["id"], serde_json::Value::Null);
    }

    #[test]
    fn b2_the_oldest_connection_not_started_gives_its_place_first() {
        let connections = Arc::new(Connections::new(3));
        let serving = connections.admit().unwrap();
        serving.started();
        let old = connections.admit().unwrap();
        let young = connections.admit().unwrap();
        let newest = connections.admit().unwrap();
        assert!(old.is_evicted(), "the oldest not started");
        assert!(!serving.is_evicted() && !young.is_evicted() && !newest.is_evicted());
        assert_eq!(connections.len(), 3);
        drop(old); // its connection closes: nothing more to free
        assert_eq!(connections.len(), 3);
        young.started();
        newest.started();
        assert!(connections.admit().is_none(), "all serving: refused");
        drop(serving);
        assert!(connections.admit().is_some());
    }

    #[tokio::test]
    async fn b2_a_started_connection_is_never_told_to_close() {
        let connections = Arc::new(Connections::new(1));
        let first = connections.admit().unwrap();
        first.started();
        let waiting = tokio::spawn(async move { first.evicted().await });
        tokio::task::yield_now().await;
        assert!(
            connections.admit().is_none(),
            "serving: the new one is refused"
        );
        let waited = tokio::time::timeout(std::time::Duration::from_millis(100), waiting).await;
        assert!(waited.is_err(), "still serving");
    }

    #[tokio::test]
    async fn b2_an_evicted_connection_is_told_to_close() {
        let connections = Arc::new(Connections::new(1));
        let first = connections.admit().unwrap();
        let waiting = tokio::spawn(async move { first.evicted().await });
        tokio::task::yield_now().await;
        let _second = connections.admit().unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("told")
            .unwrap();
    }
}
