//! Where converted failures go: a `tracing` event at the G1 level with the G2 fields,
//! the counts per `<error_type>:<method>`, and the optional callback (SPEC G1–G3).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

use backstop_core::{
    call::{ErrorCounts, Level, LogRecord},
    limit::Truncation,
};

/// The target of every event this crate emits: filter with `RUST_LOG=backstop=info`.
///
/// ```
/// assert_eq!(backstop_rmcp::TRACING_TARGET, "backstop");
/// ```
pub const TRACING_TARGET: &str = "backstop";

/// A callback that sees each converted failure's [`LogRecord`] (G3).
pub(crate) type FailureCallback = Arc<dyn Fn(&LogRecord) + Send + Sync>;

/// A shared, readable view of the failure counts of one wrapped server (G3).
///
/// Clones share the counts: take one before the server is moved into `serve`, and
/// read it while the server runs.
///
/// ```
/// use backstop_rmcp::Backstop;
/// # #[derive(Clone)] struct MyServer;
/// # impl rmcp::ServerHandler for MyServer {}
/// let server = Backstop::new(MyServer);
/// let counts = server.failure_counts();
/// assert!(counts.snapshot().is_empty());
/// assert_eq!(counts.get("ToolError:tools/call"), 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct FailureCounts(Arc<Mutex<ErrorCounts>>);

impl FailureCounts {
    /// A copy of the counts as they are now.
    ///
    /// ```
    /// let counts = backstop_rmcp::FailureCounts::default();
    /// assert_eq!(counts.snapshot().iter().count(), 0);
    /// ```
    pub fn snapshot(&self) -> ErrorCounts {
        self.lock().clone()
    }

    /// The count under `key` (`<error_type>:<method>`), 0 if none.
    ///
    /// ```
    /// let counts = backstop_rmcp::FailureCounts::default();
    /// assert_eq!(counts.get("PaneNotFound:tools/call"), 0);
    /// ```
    pub fn get(&self, key: &str) -> u64 {
        self.lock().get(key)
    }

    fn record(&self, record: &LogRecord) {
        self.lock().record(record);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ErrorCounts> {
        // A panic while holding the lock cannot leave the counts half-updated.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Hands records to `tracing`, the counts and the callback.
#[derive(Clone, Default)]
pub(crate) struct Reporter {
    pub(crate) counts: FailureCounts,
    pub(crate) callback: Option<FailureCallback>,
}

impl Reporter {
    /// Report one converted failure (G1–G3).
    pub(crate) fn failure(&self, record: &LogRecord) {
        emit(record);
        self.counts.record(record);
        if let Some(callback) = &self.callback
            && catch_unwind(AssertUnwindSafe(|| callback(record))).is_err()
        {
            tracing::error!(
                target: TRACING_TARGET,
                method = %record.method,
                error_type = %record.error_type,
                "the failure callback panicked; the failure was still converted"
            );
        }
    }

    /// Report a cut result (L12), at DEBUG.
    pub(crate) fn truncation(&self, tool: &str, truncation: &Truncation) {
        tracing::debug!(
            target: TRACING_TARGET,
            method = "tools/call",
            tool,
            dropped_bytes = truncation.dropped_bytes,
            original_bytes = truncation.original_bytes,
            dropped_blocks = truncation.dropped_blocks,
            "tool result truncated to the response limit"
        );
    }
}

/// One `tracing` event for a record, at its level, with the G2 fields: `method`,
/// `tool`, `error_type`, `expected`, and the record's message as the event's message.
fn emit(record: &LogRecord) {
    let tool = record.tool.as_deref().unwrap_or("");
    macro_rules! event {
        ($level:expr) => {
            tracing::event!(
                target: TRACING_TARGET,
                $level,
                method = %record.method,
                tool,
                error_type = %record.error_type,
                expected = record.expected,
                "{}",
                record.message
            )
        };
    }
    match record.level {
        Level::Trace => event!(tracing::Level::TRACE),
        Level::Debug => event!(tracing::Level::DEBUG),
        Level::Info => event!(tracing::Level::INFO),
        Level::Warning => event!(tracing::Level::WARN),
        Level::Error => event!(tracing::Level::ERROR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use backstop_core::Failure;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_panicking_callback_is_contained_and_counts_still_go_up() {
        let seen = Arc::new(AtomicUsize::new(0));
        let seen_in = seen.clone();
        let reporter = Reporter {
            counts: FailureCounts::default(),
            callback: Some(Arc::new(move |_: &LogRecord| {
                seen_in.fetch_add(1, Ordering::SeqCst);
                panic!("callback bug");
            })),
        };
        let record = LogRecord::new(&Failure::unexpected("boom"), "tools/call", Some("t"));
        reporter.failure(&record);
        reporter.failure(&record);
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        assert_eq!(reporter.counts.get("ToolError:tools/call"), 2);
    }
}
