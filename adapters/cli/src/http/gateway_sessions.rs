//! The gateway's sessions (SPEC A5): a shaper per `Mcp-Session-Id`, kept once the
//! upstream has served a request of it, at most [`Gateway::max_sessions`] of them (the
//! least recently used goes first), each dropped after [`Gateway::session_idle`]
//! without a request. A request without a session id gets a fresh shaper of its own.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use super::gateway::Gateway;
use super::{Shaping, lock};

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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::gateway::gateway_to;
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
