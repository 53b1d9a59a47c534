//! The logging decision, as data (SPEC G1–G3).
//!
//! The core emits no logs. It says what one record of a converted failure holds
//! ([`LogRecord`]) and keeps the counts per `<error_type>:<method>` ([`ErrorCounts`]);
//! adapters hand records to their logging system and to the optional callback (G3).

use std::collections::BTreeMap;

use crate::arguments::CallContext;
use crate::error_result::explain;
use crate::failure::{Failure, Level};

/// The method of a tool call.
const TOOLS_CALL: &str = "tools/call";

/// One log record of a converted failure (G1, G2).
///
/// The message is the failure's message as written — for a validation failure its V2
/// text, which holds argument names and wanted types but no input value (V3). A
/// message a tool wrote itself is logged as written.
///
/// ```
/// use backstop_core::{Failure, call::{Level, LogRecord}};
/// let record = LogRecord::new(&Failure::unexpected("boom"), "tools/call", Some("run"));
/// assert_eq!(record.level, Level::Error);
/// assert_eq!(record.count_key(), "ToolError:tools/call");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// The failure's own level, else WARNING for expected and validation failures,
    /// else ERROR (G1).
    pub level: Level,
    /// The JSON-RPC method of the request that failed.
    pub method: String,
    /// The tool, for a tool call.
    pub tool: Option<String>,
    /// E3.
    pub error_type: String,
    /// E4.
    pub expected: bool,
    /// The message (G2, V3).
    pub message: String,
}

impl LogRecord {
    /// The record of `failure` in a request of `method` (of `tool`, for a tool call).
    ///
    /// A validation failure's text is rendered `for <tool>` (or `for <method>` without a
    /// tool) from its own problems; use [`LogRecord::for_call`] to log exactly the
    /// problems the error result lists.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{Level, LogRecord, Problem}};
    /// let failure = Failure::validation(vec![Problem::missing_argument("count")]);
    /// let record = LogRecord::new(&failure, "tools/call", Some("takes_int"));
    /// assert_eq!(record.level, Level::Warning);
    /// assert_eq!(record.message, "1 validation error for takes_int\ncount\n  Missing required argument [type=missing_argument]");
    /// let own = LogRecord::new(&Failure::unexpected("x").with_level(Level::Info), "resources/read", None);
    /// assert_eq!(own.level, Level::Info);
    /// ```
    pub fn new(failure: &Failure, method: &str, tool: Option<&str>) -> LogRecord {
        let call = CallContext::new(tool.unwrap_or(method));
        Self::build(failure, method, tool, &call)
    }

    /// The record of a failed tool call, with the same problems, type and
    /// expectedness as [`error_result`](crate::call::error_result()) gives the client.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{CallContext, LogRecord}};
    /// let call = CallContext::new("takes_int").with_parameters(["count"]).with_arguments(["count", "x"]);
    /// let record = LogRecord::for_call(&Failure::validation(vec![]), &call);
    /// assert_eq!(record.method, "tools/call");
    /// assert!(record.message.contains("\nx\n  Unexpected keyword argument"));
    /// ```
    pub fn for_call(failure: &Failure, call: &CallContext) -> LogRecord {
        Self::build(failure, TOOLS_CALL, Some(&call.tool), call)
    }

    fn build(failure: &Failure, method: &str, tool: Option<&str>, call: &CallContext) -> LogRecord {
        let explained = explain(failure, call);
        let level = failure
            .level()
            .unwrap_or(if explained.expected || failure.is_validation() {
                Level::Warning
            } else {
                Level::Error
            });
        LogRecord {
            level,
            method: method.to_owned(),
            tool: tool.map(str::to_owned),
            error_type: explained.error_type,
            expected: explained.expected,
            message: explained.text,
        }
    }

    /// The key this record is counted under: `<error_type>:<method>` (G3).
    ///
    /// ```
    /// use backstop_core::{Failure, call::LogRecord};
    /// let record = LogRecord::new(&Failure::expected("x"), "prompts/get", None);
    /// assert_eq!(record.count_key(), "ExpectedToolError:prompts/get");
    /// ```
    pub fn count_key(&self) -> String {
        format!("{}:{}", self.error_type, self.method)
    }
}

/// Counts of converted failures per `<error_type>:<method>` (G3), readable in key order.
///
/// The number of distinct keys is bounded (method names come from clients): once
/// [`max_keys`](Self::with_max_keys) keys are held, records under new keys are counted
/// in [`overflow`](Self::overflow) instead.
///
/// ```
/// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
/// let mut counts = ErrorCounts::new();
/// counts.record(&LogRecord::new(&Failure::unexpected("a"), "tools/call", Some("t")));
/// counts.record(&LogRecord::new(&Failure::unexpected("b"), "tools/call", Some("u")));
/// assert_eq!(counts.get("ToolError:tools/call"), 2);
/// assert_eq!(counts.get("Other:tools/call"), 0);
/// assert_eq!(counts.iter().collect::<Vec<_>>(), [("ToolError:tools/call", 2)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCounts {
    counts: BTreeMap<String, u64>,
    max_keys: usize,
    overflow: u64,
}

impl Default for ErrorCounts {
    fn default() -> Self {
        Self::new()
    }
}

impl ErrorCounts {
    /// The default bound on distinct keys.
    pub const DEFAULT_MAX_KEYS: usize = 1024;

    /// No counts, at most [`Self::DEFAULT_MAX_KEYS`] keys.
    ///
    /// ```
    /// assert!(backstop_core::call::ErrorCounts::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_max_keys(Self::DEFAULT_MAX_KEYS)
    }

    /// No counts, at most `max_keys` distinct keys.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
    /// let mut counts = ErrorCounts::with_max_keys(1);
    /// counts.record(&LogRecord::new(&Failure::unexpected("a"), "m1", None));
    /// counts.record(&LogRecord::new(&Failure::unexpected("a"), "m2", None));
    /// assert_eq!((counts.get("ToolError:m1"), counts.get("ToolError:m2"), counts.overflow()), (1, 0, 1));
    /// ```
    pub fn with_max_keys(max_keys: usize) -> Self {
        Self {
            counts: BTreeMap::new(),
            max_keys,
            overflow: 0,
        }
    }

    /// Count one record under its [`count_key`](LogRecord::count_key).
    ///
    /// ```
    /// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
    /// let mut counts = ErrorCounts::new();
    /// counts.record(&LogRecord::new(&Failure::expected("x"), "tools/call", Some("t")));
    /// assert_eq!(counts.get("ExpectedToolError:tools/call"), 1);
    /// ```
    pub fn record(&mut self, record: &LogRecord) {
        let key = record.count_key();
        if let Some(count) = self.counts.get_mut(&key) {
            *count = count.saturating_add(1);
        } else if self.counts.len() < self.max_keys {
            self.counts.insert(key, 1);
        } else {
            self.overflow = self.overflow.saturating_add(1);
        }
    }

    /// The count under `key` (`<error_type>:<method>`), 0 if none.
    ///
    /// ```
    /// assert_eq!(backstop_core::call::ErrorCounts::new().get("ToolError:tools/call"), 0);
    /// ```
    pub fn get(&self, key: &str) -> u64 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// Every key and its count, in key order.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
    /// let mut counts = ErrorCounts::new();
    /// for method in ["tools/call", "prompts/get"] {
    ///     counts.record(&LogRecord::new(&Failure::unexpected("x"), method, None));
    /// }
    /// let keys: Vec<&str> = counts.iter().map(|(key, _)| key).collect();
    /// assert_eq!(keys, ["ToolError:prompts/get", "ToolError:tools/call"]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.counts
            .iter()
            .map(|(key, &count)| (key.as_str(), count))
    }

    /// The records that came after the key bound was reached, under new keys.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
    /// let mut counts = ErrorCounts::with_max_keys(0);
    /// counts.record(&LogRecord::new(&Failure::unexpected("x"), "m", None));
    /// assert_eq!((counts.overflow(), counts.iter().count()), (1, 0));
    /// ```
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// The number of records counted, overflow included.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
    /// let mut counts = ErrorCounts::new();
    /// counts.record(&LogRecord::new(&Failure::unexpected("a"), "m", None));
    /// assert_eq!(counts.total(), 1);
    /// ```
    pub fn total(&self) -> u64 {
        self.counts
            .values()
            .fold(self.overflow, |sum, &count| sum.saturating_add(count))
    }

    /// `true` when nothing was counted.
    ///
    /// ```
    /// use backstop_core::{Failure, call::{ErrorCounts, LogRecord}};
    /// let mut counts = ErrorCounts::new();
    /// assert!(counts.is_empty());
    /// counts.record(&LogRecord::new(&Failure::unexpected("x"), "m", None));
    /// assert!(!counts.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.overflow == 0
    }
}

impl<'a> IntoIterator for &'a ErrorCounts {
    type Item = (&'a str, u64);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, u64)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::Problem;

    #[test]
    fn levels_per_g1() {
        let cases = [
            (Failure::unexpected("x"), Level::Error),
            (Failure::expected("x"), Level::Warning),
            (Failure::validation(vec![]), Level::Warning),
            (
                Failure::validation(vec![]).with_expected(false),
                Level::Warning,
            ),
            (
                Failure::expected("x").with_level(Level::Debug),
                Level::Debug,
            ),
            (
                Failure::unexpected("x").with_level(Level::Info),
                Level::Info,
            ),
            (
                Failure::validation(vec![]).with_level(Level::Error),
                Level::Error,
            ),
        ];
        for (failure, level) in cases {
            assert_eq!(
                LogRecord::new(&failure, "tools/call", Some("t")).level,
                level,
                "{failure:?}"
            );
        }
    }

    #[test]
    fn fields_per_g2() {
        let failure = Failure::expected("Pane not found: %99").with_error_type("PaneNotFound");
        let record = LogRecord::new(&failure, "tools/call", Some("send_keys"));
        assert_eq!(
            record,
            LogRecord {
                level: Level::Warning,
                method: "tools/call".into(),
                tool: Some("send_keys".into()),
                error_type: "PaneNotFound".into(),
                expected: true,
                message: "Pane not found: %99".into(),
            }
        );
        let record = LogRecord::new(
            &Failure::validation(vec![Problem::missing_argument("uri")]),
            "resources/read",
            None,
        );
        assert!(
            record
                .message
                .starts_with("1 validation error for resources/read\n")
        );
        assert_eq!(record.tool, None);
    }

    #[test]
    fn counts_in_key_order() {
        let mut counts = ErrorCounts::new();
        for (failure, method) in [
            (Failure::unexpected("a"), "tools/call"),
            (Failure::validation(vec![]), "tools/call"),
            (
                Failure::expected("b").with_error_type("A"),
                "resources/read",
            ),
            (Failure::unexpected("a"), "tools/call"),
        ] {
            counts.record(&LogRecord::new(&failure, method, None));
        }
        let all: Vec<_> = (&counts).into_iter().collect();
        assert_eq!(
            all,
            [
                ("A:resources/read", 1),
                ("ToolError:tools/call", 2),
                ("ValidationError:tools/call", 1)
            ]
        );
        assert_eq!(counts.total(), 4);
        assert_eq!(counts.overflow(), 0);
    }
}
