//! The gateway's sessions (SPEC A5): a shaper per `Mcp-Session-Id`, kept once the
//! upstream has served a request of it, at most [`Gateway::max_sessions`] of them (the
//! least recently used goes first), each dropped after [`Gateway::session_idle`]
//! without a request. A request without a session id gets a fresh shaper of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::connections::DEFAULT_MAX_CONNECTIONS;
use super::origin_guard::Allowed;
use super::stateless_catalogs::StatelessCatalogs;
use super::upstream::Upstream;
use super::{Options, Shaping, lock};

/// A default for [`Gateway::max_body`]: 4 MiB.
pub const DEFAULT_MAX_BODY: usize = 4 << 20;
/// A default for [`Gateway::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// A default for [`Gateway::session_idle`]: 30 minutes.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// A gateway in front of one upstream server.
#[derive(Debug)]
pub struct Gateway {
    pub(super) upstream: Upstream,
    pub(super) options: Options,
    /// The largest request body taken; larger ones are answered `413`.
    pub max_body: usize,
    /// The most sessions kept at once.
    pub max_sessions: usize,
    /// The most connections open at once ([`connections`](super::connections): past
    /// it, the oldest that has not sent a request yet is closed, or the new one is
    /// refused with `503`).
    pub max_connections: usize,
    /// How long a session's state is kept without a request.
    pub session_idle: Duration,
    /// The `Host` and `Origin` values served beside the defaults
    /// ([`origin_guard`](super::origin_guard); none by default).
    pub allowed: Allowed,
    pub(super) sessions: Mutex<HashMap<String, Entry>>,
    /// The listings stateless requests start from (R5).
    pub(super) catalogs: StatelessCatalogs,
}

impl Gateway {
    /// A gateway to `upstream` with the default bounds.
    ///
    /// ```
    /// use backstop::http::{Options, gateway::Gateway, upstream::Upstream};
    /// let upstream = Upstream::new("http://127.0.0.1:9/mcp".parse().unwrap(), std::time::Duration::from_secs(5)).unwrap();
    /// let gateway = Gateway::new(upstream, Options { shaper: Default::default(), log_failures: false });
    /// assert_eq!(gateway.sessions(), 0);
    /// ```
    pub fn new(upstream: Upstream, options: Options) -> Self {
        Self {
            upstream,
            options,
            max_body: DEFAULT_MAX_BODY,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            session_idle: DEFAULT_SESSION_IDLE,
            allowed: Allowed::default(),
            sessions: Mutex::new(HashMap::new()),
            catalogs: StatelessCatalogs::default(),
        }
    }

    /// How many sessions' state is kept now.
    pub fn sessions(&self) -> usize {
        lock(&self.sessions).len()
    }
}

/// One session's state and when it was last used.
#[derive(Debug)]
pub(super) struct Entry {
    shaping: Arc<Shaping>,
    used: Instant,
}

impl Gateway {
    /// A new session's shaping.
    pub(super) fn fresh(&self) -> Arc<Shaping> {
        Arc::new(Shaping::new(
            self.options.shaper.clone(),
            self.options.log_failures,
        ))
    }

    /// The state of session `id` and whether it is kept; made anew when it is not (a
    /// session begun elsewhere, expired, or an id nobody issued), to be kept only once
    /// the upstream has served a request of it: an invented id makes no state, and a
    /// flood of them evicts no real session's.
    pub(super) fn session(&self, id: &str) -> (Arc<Shaping>, bool) {
        let mut sessions = lock(&self.sessions);
        match sessions.get_mut(id) {
            Some(entry) => {
                entry.used = Instant::now();
                (Arc::clone(&entry.shaping), true)
            }
            None => (self.fresh(), false),
        }
    }

    /// Keep `shaping` as session `id`'s, within the bounds.
    pub(super) fn keep(
        &self,
        sessions: &mut HashMap<String, Entry>,
        id: &str,
        shaping: Arc<Shaping>,
        now: Instant,
    ) {
        if sessions.len() >= self.max_sessions {
            sessions.retain(|_, entry| now.duration_since(entry.used) < self.session_idle);
        }
        while sessions.len() >= self.max_sessions.max(1) {
            let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            sessions.remove(&oldest);
            tracing::debug!(
                max = self.max_sessions,
                "the least recently used session's state dropped to make room"
            );
        }
        if sessions
            .insert(id.to_owned(), Entry { shaping, used: now })
            .is_none()
        {
            tracing::debug!(sessions = sessions.len(), "a session's state kept");
        }
    }

    /// Forget the sessions idle for longer than [`Self::session_idle`].
    pub(super) fn expire(&self) {
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        let before = sessions.len();
        sessions.retain(|_, entry| now.duration_since(entry.used) < self.session_idle);
        if sessions.len() < before {
            tracing::debug!(
                expired = before - sessions.len(),
                kept = sessions.len(),
                "idle sessions' state dropped"
            );
        }
    }
}

/// A gateway to `url` for the tests: a 1 s timeout, the default shaper.
#[cfg(test)]
pub(super) fn gateway_to(url: &str) -> Gateway {
    let upstream = Upstream::new(url.parse().unwrap(), Duration::from_secs(1)).unwrap();
    let options = Options {
        shaper: backstop_jsonrpc::Shaper::default(),
        log_failures: false,
    };
    Gateway::new(upstream, options)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn gateway() -> Gateway {
        gateway_to("http://127.0.0.1:9/mcp")
    }

    /// Keep fresh state for session `id`, as for one the upstream issued.
    fn issued(gateway: &Gateway, id: &str) -> Arc<Shaping> {
        let shaping = gateway.fresh();
        gateway.keep(
            &mut lock(&gateway.sessions),
            id,
            Arc::clone(&shaping),
            Instant::now(),
        );
        shaping
    }

    #[test]
    fn a5_sessions_are_bounded_the_least_recently_used_going_first() {
        let mut gateway = gateway();
        gateway.max_sessions = 2;
        let a = issued(&gateway, "a");
        let _b = issued(&gateway, "b");
        // "a" used again: "b" is now the least recently used.
        let (again, kept) = gateway.session("a");
        assert!(kept && Arc::ptr_eq(&a, &again));
        let _c = issued(&gateway, "c");
        assert_eq!(gateway.sessions(), 2);
        {
            let sessions = lock(&gateway.sessions);
            assert!(sessions.contains_key("a") && sessions.contains_key("c"));
        }
        // An id nobody issued gets state of its own, not kept (issue 20).
        let (_, kept) = gateway.session("invented");
        assert!(!kept);
        assert_eq!(gateway.sessions(), 2);
    }

    #[test]
    fn a5_idle_sessions_expire() {
        let mut gateway = gateway();
        gateway.session_idle = Duration::from_millis(300);
        let _a = issued(&gateway, "a");
        gateway.expire();
        assert_eq!(gateway.sessions(), 1, "not idle long enough yet");
        std::thread::sleep(Duration::from_millis(350));
        let _b = issued(&gateway, "b");
        gateway.expire();
        let sessions = lock(&gateway.sessions);
        assert_eq!(sessions.keys().collect::<Vec<_>>(), ["b"]);
    }
}
