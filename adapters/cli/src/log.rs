//! The stderr log of the `backstop` binary, two kinds of line, the same in every mode —
//! `backstop proxy`, `proxy --url` and `gateway`:
//!
//! - one line per failure the shaper converted (SPEC G1, G2), `backstop: {json}`
//!   ([`failure_line`]; `--quiet` leaves them out);
//! - the diagnostic log, by [`tracing`]: warnings by default (a server that failed a
//!   request, a refused connection), more with `-v` (info: the server started,
//!   resumed, stopped), `-vv` (debug), `-vvv` (trace), or as `RUST_LOG` says
//!   ([`init_diagnostics`]). No header value, credential, URL query or argument value
//!   is ever in it, at any level: only names, counts, addresses
//!   ([`crate::http::upstream::display_address`]) and causes.

use backstop_core::call::LogRecord;
use serde_json::json;

/// The log line of one converted failure: `backstop: ` and a JSON object with its
/// level, method, tool, error type, whether it was expected, and its message (which
/// the core has already stripped of rejected values, V3).
///
/// ```
/// use backstop_core::{Failure, call::LogRecord};
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

/// The diagnostic log's filter when `RUST_LOG` is not set, for `-v` given `verbosity`
/// times: backstop's own events at that level, everything else's (hyper, rustls)
/// warnings only.
///
/// ```
/// use backstop::log::default_filter;
/// assert_eq!(default_filter(0), "warn");
/// assert_eq!(default_filter(1), "warn,backstop=info,backstop_jsonrpc=info");
/// assert_eq!(default_filter(2), "warn,backstop=debug,backstop_jsonrpc=debug");
/// assert_eq!(default_filter(9), "warn,backstop=trace,backstop_jsonrpc=trace");
/// ```
pub fn default_filter(verbosity: u8) -> String {
    let level = match verbosity {
        0 => return "warn".to_owned(),
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    format!("warn,backstop={level},backstop_jsonrpc={level}")
}

/// Send the diagnostic log to stderr: `RUST_LOG` when it is set (the usual
/// `target=level,…` directives), else [`default_filter`] of `verbosity`.
pub fn init_diagnostics(verbosity: u8) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter(verbosity)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
