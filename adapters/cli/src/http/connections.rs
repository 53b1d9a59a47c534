//! The gateway's open connections, bounded (SPEC B2): at most `max` at once, from
//! accept to close. A connection is *serving* from a request's head until its response
//! (body included: an SSE stream still open is serving) is done. When all places are
//! taken, a new connection takes the place of one that is not serving — first the
//! oldest that has not sent a request head yet (a client slow to send its headers, or
//! one that never does, holds a place for nothing, and a flood of them must not stall
//! every other client until their header timeout), then the oldest idle between
//! requests (kept alive: closing it costs its client a new connection, as nginx closes
//! idle keep-alive connections when it runs out). Only when every connection is serving
//! is the new one refused at once, with `503` and `Retry-After` ([`REFUSAL`]). A
//! connection told to close is closed at once, or — when a request reached the
//! service in between — once that request is answered.
//!
//! ```
//! use std::sync::Arc;
//! use backstop::http::connections::Connections;
//! let connections = Arc::new(Connections::new(1));
//! let first = connections.admit().expect("a place");
//! let second = connections.admit().expect("the first sent nothing yet: its place");
//! assert!(first.is_evicted() && !second.is_evicted());
//! let serving = second.serve();
//! assert!(connections.admit().is_none(), "every place is serving: refused");
//! drop(serving); // its response is done: idle, kept alive
//! let third = connections.admit().expect("the idle one's place");
//! assert!(second.is_evicted() && !third.is_evicted());
//! ```

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};

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
    /// Its requests whose responses are not done yet.
    serving: AtomicUsize,
    /// It was told to close, its place taken.
    evicted: AtomicBool,
    close: Notify,
}

impl Place {
    fn is_serving(&self) -> bool {
        self.serving.load(Ordering::Acquire) > 0
    }
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
    /// is serving (refuse it with [`REFUSAL`]). When a connection that is not serving
    /// gives up its place (the oldest not started, else the oldest idle), it is told
    /// to close.
    pub fn admit(self: &Arc<Self>) -> Option<Admission> {
        let mut open = lock(&self.open);
        if open.places.len() >= self.max {
            let unstarted = |place: &Place| !place.started.load(Ordering::Acquire);
            let idle = open
                .places
                .iter()
                .find(|(_, place)| unstarted(place))
                .or_else(|| open.places.iter().find(|(_, place)| !place.is_serving()))
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
    /// The connection sent a request head: it is serving until the [`Serving`] is
    /// dropped (its response done), and never told to close meanwhile.
    pub fn serve(&self) -> Serving {
        self.place.serving.fetch_add(1, Ordering::AcqRel);
        self.place.started.store(true, Ordering::Release);
        Serving {
            place: Arc::clone(&self.place),
        }
    }

    /// Whether a request on the connection is in progress.
    pub fn is_serving(&self) -> bool {
        self.place.is_serving()
    }

    /// Whether a newer connection took this one's place.
    pub fn is_evicted(&self) -> bool {
        self.place.evicted.load(Ordering::Acquire)
    }

    /// Done when a newer connection took this one's place: close it then — once its
    /// request is answered, if one was handed over since the place was taken.
    pub async fn evicted(&self) {
        let close = self.place.close.notified();
        if !self.is_evicted() {
            close.await;
        }
    }
}

/// A request in progress on a connection ([`Admission::serve`]); its response is done
/// when this is dropped.
#[derive(Debug)]
pub struct Serving {
    place: Arc<Place>,
}

impl Serving {
    /// `body`, the request's response body: the request is served once it is done
    /// (hyper drops a body at its end, or when the connection closes).
    pub fn body<B>(self, body: B) -> ServedBody<B> {
        ServedBody {
            body,
            _serving: self,
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.place.serving.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its connection serving until it is done
/// ([`Serving::body`]).
#[derive(Debug)]
pub struct ServedBody<B> {
    body: B,
    _serving: Serving,
}

impl<B: Body + Unpin> Body for ServedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
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
        let _request = serving.serve();
        let old = connections.admit().unwrap();
        let young = connections.admit().unwrap();
        let newest = connections.admit().unwrap();
        assert!(old.is_evicted(), "the oldest not started");
        assert!(!serving.is_evicted() && !young.is_evicted() && !newest.is_evicted());
        assert_eq!(connections.len(), 3);
        drop(old); // its connection closes: nothing more to free
        assert_eq!(connections.len(), 3);
        let _young_request = young.serve();
        let _newest_request = newest.serve();
        assert!(connections.admit().is_none(), "all serving: refused");
        drop(serving);
        assert!(connections.admit().is_some());
    }

    /// Issue 32: a connection idle between requests (its response done, kept alive) is
    /// not serving — it gives its place when every other place serves, after the ones
    /// that never started.
    #[test]
    fn b2_an_idle_keep_alive_connection_gives_its_place_after_the_unstarted_ones() {
        let connections = Arc::new(Connections::new(3));
        let idle = connections.admit().unwrap();
        drop(idle.serve()); // one request answered, then idle
        let unstarted = connections.admit().unwrap();
        let busy = connections.admit().unwrap();
        let _request = busy.serve();
        let first = connections.admit().unwrap();
        assert!(
            unstarted.is_evicted() && !idle.is_evicted(),
            "the unstarted one first"
        );
        let _first_request = first.serve();
        let second = connections.admit().unwrap();
        assert!(idle.is_evicted(), "then the idle one");
        assert!(!busy.is_evicted() && !first.is_evicted() && !second.is_evicted());
        let _second_request = second.serve();
        assert!(connections.admit().is_none(), "every one serving: refused");
    }

    /// A connection serves from its request's head until its response is done, through
    /// another request on it too (pipelined or while a body still streams).
    #[test]
    fn b2_a_connection_serves_until_its_last_response_is_done() {
        let connections = Arc::new(Connections::new(1));
        let only = connections.admit().unwrap();
        let one = only.serve();
        let two = only.serve();
        drop(one);
        assert!(connections.admit().is_none(), "still serving the second");
        drop(two);
        assert!(connections.admit().is_some(), "idle: its place taken");
        assert!(only.is_evicted());
    }

    #[tokio::test]
    async fn b2_a_serving_connection_is_never_told_to_close() {
        let connections = Arc::new(Connections::new(1));
        let first = Arc::new(connections.admit().unwrap());
        let request = first.serve();
        let waiting = tokio::spawn({
            let first = Arc::clone(&first);
            async move { first.evicted().await }
        });
        tokio::task::yield_now().await;
        assert!(
            connections.admit().is_none(),
            "serving: the new one is refused"
        );
        let waited = tokio::time::timeout(std::time::Duration::from_millis(100), waiting).await;
        assert!(waited.is_err(), "still serving");
        drop(request);
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
