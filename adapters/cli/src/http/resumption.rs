//! A server's SSE stream that closes, and how it goes on (SEP-1699, SPEC B5): resumed
//! from its last event id, after the wait the server asked for — or given up.
//!
//! A server that gives an event an `id:` (2025-11-25's priming event: an id, a
//! `retry:`, no data) lets its client open the stream again with a GET carrying
//! `Last-Event-ID`, and may close a POST's stream before it answers, for the client to
//! poll. So a closed stream that had an event id is not a failure of its requests:
//! `backstop gateway` passes the close on to its client, which resumes through it (the
//! answers then come on that GET, shaped as any), and `proxy --url` resumes it itself.
//! Only a stream that cannot be resumed (no event id), or whose resumption failed, has
//! its requests answered with an error — and never twice.
//!
//! The same [`Resumption`] keeps `proxy --url`'s own GET stream open.
//!
//! ```
//! use std::time::Duration;
//! use backstop::http::resumption::Resumption;
//! let mut stream = Resumption::default();
//! assert!(!stream.is_resumable());
//! stream.saw(Some(b"e1"), Some(b"200"));
//! assert!(stream.is_resumable());
//! assert_eq!(stream.last_event_id().unwrap(), "e1");
//! // The first stream brought an event id: the next try after the server's `retry:`.
//! assert_eq!(stream.next_try(None), Some(Duration::from_millis(200)));
//! ```

use std::time::Duration;

use http::HeaderValue;

/// How many tries in a row without a new event id a stream is given before it is
/// given up: with [`reconnect_delay`]'s doubling, about 15 s of trying.
pub const MAX_TRIES: u32 = 5;

/// The wait before the first reopening, unless the server asked for another.
const FIRST_RECONNECT_DELAY: Duration = Duration::from_millis(500);

/// The longest wait before reopening a stream, unless the server asked for longer.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(8);

/// How long to wait before opening a stream again, after `misses` tries in a row
/// that brought no new event (0: the stream that just ended brought one): the
/// server's SSE `retry:` when it sent one (Streamable HTTP, 2025-11-25 on: the client
/// waits that long before reconnecting), else 0.5 s doubling with each miss, at most
/// 8 s.
///
/// ```
/// use std::time::Duration;
/// use backstop::http::resumption::reconnect_delay;
/// assert_eq!(reconnect_delay(0, None), Duration::from_millis(500));
/// assert_eq!(reconnect_delay(1, None), Duration::from_secs(1));
/// assert_eq!(reconnect_delay(2, None), Duration::from_secs(2));
/// assert_eq!(reconnect_delay(9, None), Duration::from_secs(8));
/// assert_eq!(reconnect_delay(9, Some(Duration::from_secs(30))), Duration::from_secs(30));
/// ```
pub fn reconnect_delay(misses: u32, retry: Option<Duration>) -> Duration {
    retry.unwrap_or_else(|| {
        FIRST_RECONNECT_DELAY
            .saturating_mul(1 << misses.min(16))
            .min(MAX_RECONNECT_DELAY)
    })
}

/// The reconnection time an SSE `retry:` field's value sets: ASCII digits, in
/// milliseconds, as the SSE standard reads it; anything else sets none.
///
/// ```
/// use std::time::Duration;
/// use backstop::http::resumption::retry_value;
/// assert_eq!(retry_value(b"1500"), Some(Duration::from_millis(1500)));
/// assert_eq!(retry_value(b"soon"), None);
/// assert_eq!(retry_value(b""), None);
/// assert_eq!(retry_value(b"-5"), None);
/// assert_eq!(retry_value(b"+5"), None, "digits only, no sign");
/// ```
pub fn retry_value(value: &[u8]) -> Option<Duration> {
    let digits = !value.is_empty() && value.iter().all(u8::is_ascii_digit);
    digits
        .then(|| std::str::from_utf8(value).ok()?.parse::<u64>().ok())
        .flatten()
        .map(Duration::from_millis)
}

/// What a stream's events said of resuming it: its last event id, the server's
/// reconnection time, and the tries in a row that brought no new event.
#[derive(Debug, Clone, Default)]
pub struct Resumption {
    last_event_id: Option<HeaderValue>,
    retry: Option<Duration>,
    misses: u32,
}

impl Resumption {
    /// An event of the stream ended, with these `id:` and `retry:` values. An empty
    /// id clears the last one, as the SSE standard says (nothing to resume from); one
    /// that cannot be a header value is ignored.
    ///
    /// ```
    /// let mut stream = backstop::http::resumption::Resumption::default();
    /// stream.saw(Some(b"7"), None);
    /// stream.saw(Some(b"bad\nid"), Some(b"soon"));
    /// assert_eq!(stream.last_event_id().unwrap(), "7");
    /// stream.saw(Some(b""), None);
    /// assert!(!stream.is_resumable());
    /// ```
    pub fn saw(&mut self, id: Option<&[u8]>, retry: Option<&[u8]>) {
        match id {
            Some(b"") => self.last_event_id = None,
            Some(id) => {
                if let Ok(id) = HeaderValue::from_bytes(id) {
                    self.last_event_id = Some(id);
                }
            }
            None => {}
        }
        if let Some(retry) = retry.and_then(retry_value) {
            self.retry = Some(retry);
        }
    }

    /// Whether the stream may be resumed: it had an event id.
    pub fn is_resumable(&self) -> bool {
        self.last_event_id.is_some()
    }

    /// The `Last-Event-ID` to resume with.
    pub fn last_event_id(&self) -> Option<&HeaderValue> {
        self.last_event_id.as_ref()
    }

    /// A try at the stream ended — it began with `began` as its last event id: how
    /// long to wait before the next, or `None` once [`MAX_TRIES`] in a row brought no
    /// new event.
    ///
    /// ```
    /// use backstop::http::resumption::{MAX_TRIES, Resumption};
    /// let mut stream = Resumption::default();
    /// stream.saw(Some(b"1"), None);
    /// let began = stream.last_event_id().cloned();
    /// let waits: Vec<_> = (0..MAX_TRIES).map(|_| stream.next_try(began.as_ref())).collect();
    /// assert!(waits[..MAX_TRIES as usize - 1].iter().all(Option::is_some));
    /// assert_eq!(waits.last().unwrap(), &None, "given up");
    /// ```
    pub fn next_try(&mut self, began: Option<&HeaderValue>) -> Option<Duration> {
        self.misses = match self.last_event_id.as_ref() == began {
            true => self.misses.saturating_add(1),
            false => 0,
        };
        (self.misses < MAX_TRIES).then(|| reconnect_delay(self.misses, self.retry))
    }
}

#[cfg(test)]
mod tests {
    use super::super::upstream::UpstreamFailure;
    use super::*;

    #[test]
    fn b5_a_stream_backs_off_doubling_to_a_bound_and_honours_retry() {
        let schedule: Vec<u64> = (0..MAX_TRIES + 2)
            .map(|misses| reconnect_delay(misses, None).as_millis() as u64)
            .collect();
        assert_eq!(schedule, [500, 1000, 2000, 4000, 8000, 8000, 8000]);
        // What is waited in all before a silent stream is given up: bounded.
        let total: Duration = (1..MAX_TRIES)
            .map(|misses| reconnect_delay(misses, None))
            .sum();
        assert_eq!(total, Duration::from_secs(15));
        // The server's `retry:` wins, whichever the count (SEP-1699).
        let retry = Duration::from_millis(1500);
        assert!((0..20).all(|misses| reconnect_delay(misses, Some(retry)) == retry));
        assert_eq!(reconnect_delay(u32::MAX, None), MAX_RECONNECT_DELAY);
    }

    #[test]
    fn b5_a_try_that_brings_a_new_event_id_starts_the_count_again() {
        let mut stream = Resumption::default();
        stream.saw(Some(b"1"), None);
        let one = stream.last_event_id().cloned();
        assert_eq!(stream.next_try(one.as_ref()), Some(Duration::from_secs(1)));
        assert_eq!(stream.next_try(one.as_ref()), Some(Duration::from_secs(2)));
        stream.saw(Some(b"2"), Some(b"250"));
        assert_eq!(
            stream.next_try(one.as_ref()),
            Some(Duration::from_millis(250)),
            "a new id: no miss, and the server's wait"
        );
        let two = stream.last_event_id().cloned();
        for _ in 1..MAX_TRIES {
            assert!(stream.next_try(two.as_ref()).is_some());
        }
        assert_eq!(stream.next_try(two.as_ref()), None);
    }

    #[test]
    fn b5_a_retry_field_is_ascii_digits_only() {
        assert_eq!(retry_value(b"250"), Some(Duration::from_millis(250)));
        for not_digits in [&b"+5"[..], b"5 ", b"", b"1e3", b"0x10"] {
            assert_eq!(retry_value(not_digits), None, "{not_digits:?}");
        }
    }

    #[test]
    fn b5_only_a_close_by_the_server_may_be_resumed() {
        // How a stream stopped, read for the owed-ids rule (backstop_jsonrpc::owed).
        let is_close = |stopped: Option<UpstreamFailure>| UpstreamFailure::end(stopped).is_close();
        assert!(is_close(None), "the stream ended");
        assert!(is_close(Some(UpstreamFailure::Broken)), "broken off");
        let own = [
            UpstreamFailure::Timeout(Duration::from_secs(1)),
            UpstreamFailure::AnswerTimeout(Duration::from_secs(1)),
            UpstreamFailure::NotJson,
        ];
        assert!(own.into_iter().all(|failure| !is_close(Some(failure))));
    }

    #[test]
    fn b5_a_stream_without_an_event_id_cannot_be_resumed() {
        let mut stream = Resumption::default();
        stream.saw(None, Some(b"100"));
        assert!(!stream.is_resumable());
        assert_eq!(stream.last_event_id(), None);
    }
}
