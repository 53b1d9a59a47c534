//! The stderr log of the `backstop` binary: one line per failure the shaper converted
//! (SPEC G1, G2), the same in every mode — `backstop proxy`, `proxy --url` and
//! `gateway`.

use backstop_core::LogRecord;
use serde_json::json;

/// The log line of one converted failure: `backstop: ` and a JSON object with its
/// level, method, tool, error type, whether it was expected, and its message (which
/// the core has already stripped of rejected values, V3).
///
/// ```
/// use backstop_core::{Failure, LogRecord};
/// let record = LogRecord::new(&Failure::unexpected("boom"), "tools/call", Some("run"));
/// assert_eq!(
///     backstop::log::failure_line(&record),
///     r#"backstop: {"error_type":"ToolError","expected":false,"level":"error","message":"boom","method":"tools/call","tool":"run"}"#,
/// );
/// ```
pub fn failure_line(record: &LogRecord) -> String {
    let line = json!({
        "level": record.level.as_str(), "method": record.method, "tool": record.tool,
        "error_type": record.error_type, "expected": record.expected, "message": record.message,
    });
    format!("backstop: {line}")
}

/// Write the [`failure_line`] of `record` to stderr.
pub fn log_failure(record: &LogRecord) {
    eprintln!("{}", failure_line(record));
}
