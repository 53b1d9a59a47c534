//! A failure as another language's exception describes it, as plain data (SPEC E3, E4,
//! G1, P1, V3).
//!
//! A binding that sees the exception itself — the Python package sees the class, its
//! ancestors, the `__cause__`/`__context__` chain and the attributes a server put on it —
//! hands those facts over as a [`ForeignError`], and [`classify`] makes the
//! [`Failure`]: the decisions (which type is `error_type`, which family, whether it is
//! expected, the V3 redaction of the message) are made here, not in the binding.

use serde_json::{Map, Value};

use crate::failure::{Failure, Family, Level};
use crate::foreign_validation::redact_input_values;
use crate::message_family::family_of_message;

/// What a binding knows of a failed call's exception.
///
/// ```
/// use backstop_core::call::ForeignError;
/// let error = ForeignError {
///     type_name: "RuntimeError".into(),
///     message: "boom".into(),
///     ..ForeignError::default()
/// };
/// assert!(error.causes.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForeignError {
    /// The exception's own type name (`PaneNotFound`, not a module path).
    pub type_name: String,
    /// The names of the type and of its ancestors, nearest first (Python: the MRO), to
    /// tell the family (P1). May be empty: then only `type_name` is looked at.
    pub ancestors: Vec<String>,
    /// The message as written.
    pub message: String,
    /// The type names of the exception's cause chain, nearest first (Python: an explicit
    /// `__cause__`, else an unsuppressed `__context__`). Only the first is used (E3).
    pub causes: Vec<String>,
    /// Whether the server declared the failure as the caller's to fix (E4).
    pub expected: bool,
    /// The suggestion the failure carries; empty is none.
    pub suggestion: Option<String>,
    /// The failure's own log level by name (`warning`, `INFO`, …), if it declares one
    /// (G1). A name the core does not know is ignored.
    pub level: Option<String>,
    /// `_meta` keys the failure carries itself (E7: kept, the E3–E5 keys win).
    pub meta: Map<String, Value>,
}

/// The type names whose failures are not-found (P1), besides names ending in
/// `NotFound` or `NotFoundError` (`PaneNotFound`, `ResourceNotFoundError`).
const NOT_FOUND_TYPES: [&str; 3] = ["FileNotFoundError", "KeyError", "LookupError"];

/// The type names whose failures are denials (P1, E4).
const PERMISSION_TYPES: [&str; 3] = ["PermissionError", "AuthorizationError", "Forbidden"];

/// The type names whose failures are timeouts (P1).
const TIMEOUT_TYPES: [&str; 2] = ["TimeoutError", "TimeoutException"];

/// The family of a failure whose type (and ancestors) are `names` (P1): by family,
/// not by exact type, so a subclass of a not-found error is not-found too.
fn family(names: &[&str]) -> Family {
    let any = |f: &dyn Fn(&str) -> bool| names.iter().any(|name| f(name));
    if any(&|n| {
        n.ends_with("NotFound") || n.ends_with("NotFoundError") || NOT_FOUND_TYPES.contains(&n)
    }) {
        Family::NotFound
    } else if any(&|n| PERMISSION_TYPES.contains(&n)) {
        Family::Permission
    } else if any(&|n| TIMEOUT_TYPES.contains(&n)) {
        Family::Timeout
    } else {
        Family::Internal
    }
}

/// The [`Failure`] a foreign exception describes:
///
/// - `error_type` is the nearest cause's type where there is one, else the exception's
///   own (E3: one hop);
/// - the family comes from the exception's type and ancestors, failing those from its
///   cause's type, and failing those from its message (`family_of_message`: a
///   generic `ResourceError("Session not found: x")` is not-found) (P1);
/// - expected when declared, and for denials (E4);
/// - the message has pydantic-style `input_value=…` parts removed (V3);
/// - the suggestion, level and own `_meta` keys as declared (E5, G1, E7).
///
/// ```
/// use backstop_core::call::{ForeignError, classify};
/// use backstop_core::call::{Family, Level};
/// let failure = classify(&ForeignError {
///     type_name: "ExpectedToolError".into(),
///     ancestors: vec!["ExpectedToolError".into(), "ToolError".into(), "Exception".into()],
///     message: "Pane not found: %99".into(),
///     causes: vec!["PaneNotFound".into()],
///     expected: true,
///     suggestion: Some("Call list_panes to discover valid pane ids.".into()),
///     level: Some("WARNING".into()),
///     meta: [("pane".to_owned(), "%99".into())].into_iter().collect(),
/// });
/// assert_eq!(failure.error_type(), "PaneNotFound");
/// assert!(failure.is_expected());
/// assert_eq!(failure.family(), Family::NotFound);
/// assert_eq!(failure.level(), Some(Level::Warning));
/// assert_eq!(failure.meta()["pane"], "%99");
///
/// let denied = classify(&ForeignError {
///     type_name: "PermissionError".into(),
///     message: "read-only".into(),
///     ..ForeignError::default()
/// });
/// assert!(denied.is_expected());
/// assert_eq!(denied.error_type(), "PermissionError");
/// ```
pub fn classify(error: &ForeignError) -> Failure {
    let own: Vec<&str> = std::iter::once(error.type_name.as_str())
        .chain(error.ancestors.iter().map(String::as_str))
        .collect();
    let cause = error.causes.first().map(String::as_str);
    let family = match family(&own) {
        Family::Internal => cause.map_or(Family::Internal, |c| family(&[c])),
        found => found,
    };
    // P1: a framework's generic type (fastmcp's `ResourceError`) says nothing; then the
    // message does, as it does for a protocol error (`Failure::from_protocol_error`).
    let family = match family {
        Family::Internal => family_of_message(&error.message).unwrap_or(Family::Internal),
        found => found,
    };
    let expected = error.expected || family == Family::Permission;
    let message = redact_input_values(&error.message).into_owned();
    let mut failure = if expected {
        Failure::expected(message)
    } else {
        Failure::unexpected(message)
    }
    .with_error_type(cause.unwrap_or(&error.type_name))
    .with_family(family);
    if let Some(suggestion) = &error.suggestion {
        failure = failure.with_suggestion(suggestion.as_str());
    }
    if let Some(level) = error.level.as_deref().and_then(Level::parse) {
        failure = failure.with_level(level);
    }
    for (key, value) in &error.meta {
        failure = failure.with_meta(key.as_str(), value.clone());
    }
    failure
}

/// Whether a call of `tool` that failed with `error` failed because the server has no
/// such tool (SPEC E8, R5): fastmcp's own word for it, `NotFoundError("Unknown tool:
/// 'x'")` naming the tool. The server's tools changed since they were listed: an
/// adapter in process lists them again, hands the listing to its
/// [`SessionMachine`](crate::SessionMachine), and asks
/// [`before_running`](crate::SessionMachine::before_running) again, which
/// answers E8 when the tool is gone. A tool's own not-found failure (another type, or
/// a message of its own) is a failure of a known tool.
///
/// ```
/// use backstop_core::call::{ForeignError, says_unknown_tool};
/// let error = ForeignError {
///     type_name: "NotFoundError".into(),
///     message: "Unknown tool: 'small'".into(),
///     ..ForeignError::default()
/// };
/// assert!(says_unknown_tool(&error, "small"));
/// assert!(!says_unknown_tool(&error, "large"));
/// ```
pub fn says_unknown_tool(error: &ForeignError, tool: &str) -> bool {
    error.type_name == "NotFoundError"
        && error.message.starts_with("Unknown tool:")
        && error.message.contains(tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raised(type_name: &str, message: &str) -> ForeignError {
        ForeignError {
            type_name: type_name.into(),
            ancestors: vec![type_name.into(), "FastMCPError".into(), "Exception".into()],
            message: message.into(),
            ..ForeignError::default()
        }
    }

    #[test]
    fn e8_only_the_servers_unknown_tool_for_the_tool_called_lists_again() {
        let unknown = raised("NotFoundError", "Unknown tool: 'small'");
        assert!(says_unknown_tool(&unknown, "small"));
        // Another tool's name, another type, another message: a failure of the tool.
        assert!(!says_unknown_tool(&unknown, "large"));
        assert!(!says_unknown_tool(
            &raised("PaneNotFound", "Unknown tool: 'small'"),
            "small"
        ));
        assert!(!says_unknown_tool(
            &raised("NotFoundError", "Unknown resource: small"),
            "small"
        ));
        assert!(!says_unknown_tool(
            &raised("NotFoundError", "small: Unknown tool:"),
            "small"
        ));
        // The failure itself is still a not-found, should the tool exist after all.
        assert_eq!(classify(&unknown).family(), Family::NotFound);
    }
}
