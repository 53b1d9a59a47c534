//! A failed request that is not a tool call: the error the client gets, and the log
//! record when the failure was converted (SPEC P1, P2, R3, G1).
//!
//! An adapter sees such a failure as a JSON-RPC error object — the handler's own
//! error, or a failure of this library's encoding
//! ([`ProtocolError::encode_failure`]) that travelled through inner layers.
//! [`shape_request_error`] reads it, maps it by family for the method and the
//! session's revision, and says whether it is logged: an error that passes unchanged
//! (P2) was not converted and is not logged; one that was re-mapped is.

use serde_json::{Map, Value};

use crate::failure::{Failure, Family};
use crate::log::LogRecord;
use crate::message_family::code_family;
use crate::protocol_error::{ProtocolError, code, resource_not_found_message};
use crate::session::Session;

/// What to send for a failed request of a method other than `tools/call`, and what to
/// log.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapedError {
    /// The error the client gets (P1, P2, R3).
    pub error: ProtocolError,
    /// The record of a converted failure (G1, G2); `None` when the error passed
    /// unchanged.
    pub log: Option<LogRecord>,
}

/// Decide what to send when a request of `method` failed with `error`.
///
/// - A plain JSON-RPC error (a handler's own, `method not found`, …) passes unchanged
///   and is not logged (P2).
/// - A failure encoded with [`ProtocolError::encode_failure`] is mapped by family
///   (P1): on `resources/*`, not-found becomes the revision's resource-not-found code
///   with `Resource not found: <msg>` and `data.uri` (R3); it is logged.
/// - A plain error whose code says nothing (`-32603`) but whose message says not-found
///   (`Session not found: x`, P1) is, on `resources/*`, resource-not-found as above.
/// - An argument error that quotes a rejected value (rmcp's
///   `failed to deserialize parameters: …`) is re-rendered as a validation error
///   without the value (V3) and logged.
///
/// ```
/// use backstop_core::{Failure, ProtocolError, call::Family, protocol::{Revision, Session}};
/// use backstop_core::call::shape_request_error;
///
/// let failure = Failure::expected("Session not found: missing").with_family(Family::NotFound);
/// let travelled = ProtocolError::encode_failure(&failure);
/// let session = Session { revision: Some(Revision::V2025_11_25), ..Session::default() };
/// let shaped = shape_request_error(&travelled, "resources/read", &session, Some("sessions://missing"));
/// assert_eq!(shaped.error.code, -32002);
/// assert_eq!(shaped.error.message, "Resource not found: Session not found: missing");
/// assert!(shaped.log.is_some());
///
/// let plain = ProtocolError::new(-32601, "prompts/list");
/// let shaped = shape_request_error(&plain, "prompts/list", &Session::default(), None);
/// assert_eq!((shaped.error, shaped.log), (plain, None));
/// ```
pub fn shape_request_error(
    error: &ProtocolError,
    method: &str,
    session: &Session,
    uri: Option<&str>,
) -> ShapedError {
    let failure = Failure::from_protocol_error(error);
    let mut mapped = ProtocolError::from_failure(&failure, method, session.revision(), uri);
    let converted = failure.as_protocol_error().is_none();
    if !converted
        && method.starts_with("resources/")
        && failure.family() == Family::NotFound
        && code_family(error.code).is_none()
    {
        // P1: a framework's catch-all error (`-32603 "Session not found: x"`, fastmcp's
        // generic `ResourceError`) whose message says not-found is resource-not-found,
        // as the same failure raised inside an adapter is.
        mapped.message = resource_not_found_message(failure.message().to_owned());
        mapped.code = session.revision().resource_not_found_code();
        if let Some(uri) = uri {
            let data = mapped.data.get_or_insert_with(|| Value::Object(Map::new()));
            if let Some(data) = data.as_object_mut() {
                data.entry("uri").or_insert_with(|| Value::from(uri));
            }
        }
    }
    if !converted && method.starts_with("resources/") && is_resource_not_found(&mapped) {
        // R3: a server's own resource-not-found error keeps its message
        // and data, with the code of the client's revision — and the request's uri in
        // `data` when it is rewritten without one (P1).
        let code = session.revision().resource_not_found_code();
        if mapped.code != code {
            mapped.code = code;
            let data = mapped.data.get_or_insert_with(|| Value::Object(Map::new()));
            if let (Some(uri), Some(data)) = (uri, data.as_object_mut()) {
                data.entry("uri").or_insert_with(|| Value::from(uri));
            }
        }
    }
    ShapedError {
        error: mapped,
        log: converted.then(|| LogRecord::new(&failure, method, None)),
    }
}

/// Whether an error says "resource not found" in any revision's words: `-32002`, or
/// `-32602` with a `data.uri` (R3).
///
/// ```
/// use backstop_core::ProtocolError;
/// use backstop_core::call::is_resource_not_found;
/// assert!(is_resource_not_found(&ProtocolError::new(-32002, "gone")));
/// let new_style = ProtocolError::new(-32602, "gone").with_data(serde_json::json!({"uri": "x"}));
/// assert!(is_resource_not_found(&new_style));
/// assert!(!is_resource_not_found(&ProtocolError::new(-32602, "bad cursor")));
/// ```
pub fn is_resource_not_found(error: &ProtocolError) -> bool {
    let has_uri = error
        .data
        .as_ref()
        .is_some_and(|data| data.get("uri").is_some());
    error.code == code::RESOURCE_NOT_FOUND || (error.code == code::INVALID_PARAMS && has_uri)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::{Family, Level};
    use crate::session::Revision;

    fn session(revision: Revision) -> Session {
        Session {
            revision: Some(revision),
            ..Session::default()
        }
    }

    #[test]
    fn resource_not_found_follows_the_revision() {
        let failure = Failure::expected("Session not found: missing").with_family(Family::NotFound);
        let travelled = ProtocolError::encode_failure(&failure);
        for revision in Revision::ALL {
            let shaped = shape_request_error(
                &travelled,
                "resources/read",
                &session(revision),
                Some("sessions://missing"),
            );
            assert_eq!(shaped.error.code, revision.resource_not_found_code());
            assert_eq!(
                shaped.error.data.unwrap()["uri"],
                "sessions://missing",
                "{revision}"
            );
        }
    }

    #[test]
    fn unknown_revision_is_the_newest() {
        let failure = Failure::expected("gone").with_family(Family::NotFound);
        let travelled = ProtocolError::encode_failure(&failure);
        let shaped = shape_request_error(&travelled, "resources/read", &Session::default(), None);
        assert_eq!(shaped.error.code, -32602);
    }

    #[test]
    fn plain_errors_pass_unchanged_and_unlogged() {
        let plain = ProtocolError::new(-32601, "Method not found: prompts/list");
        let shaped = shape_request_error(&plain, "prompts/list", &Session::default(), None);
        assert_eq!(shaped.error, plain, "P2");
        assert_eq!(shaped.log, None);
    }

    #[test]
    fn a_servers_resource_not_found_takes_the_revisions_code() {
        let old = ProtocolError::new(-32002, "Resource not found: x")
            .with_data(serde_json::json!({"uri": "x"}));
        let new = ProtocolError {
            code: -32602,
            ..old.clone()
        };
        for (error, revision, code) in [
            (&old, Revision::V2026_07_28, -32602),
            (&new, Revision::V2025_11_25, -32002),
            (&old, Revision::V2025_11_25, -32002),
        ] {
            let shaped =
                shape_request_error(error, "resources/read", &session(revision), Some("x"));
            assert_eq!(shaped.error.code, code, "R3 under {revision}");
            assert_eq!(
                (&shaped.error.message, &shaped.error.data),
                (&old.message, &old.data)
            );
            assert_eq!(shaped.log, None, "translated, not converted");
        }
        // Rewritten without a uri, it gets the request's.
        let bare = ProtocolError::new(-32002, "gone");
        let shaped = shape_request_error(
            &bare,
            "resources/read",
            &session(Revision::V2026_07_28),
            Some("u"),
        );
        assert_eq!(
            (shaped.error.code, shaped.error.data),
            (-32602, Some(serde_json::json!({"uri": "u"})))
        );
        // Outside resources/*, -32602 with a uri is an invalid-params error like any other.
        let shaped = shape_request_error(&new, "tools/list", &session(Revision::V2025_11_25), None);
        assert_eq!(shaped.error, new);
    }

    #[test]
    fn converted_failures_are_logged_with_the_method() {
        let failure = Failure::unexpected("disk on fire").with_level(Level::Info);
        let shaped = shape_request_error(
            &ProtocolError::encode_failure(&failure),
            "prompts/get",
            &Session::default(),
            None,
        );
        assert_eq!(
            (shaped.error.code, shaped.error.message.as_str()),
            (-32603, "disk on fire")
        );
        let log = shaped.log.unwrap();
        assert_eq!(
            (log.method.as_str(), log.level, log.tool),
            ("prompts/get", Level::Info, None)
        );
    }

    #[test]
    fn quoted_argument_values_do_not_pass() {
        let error = ProtocolError::new(
            -32602,
            "failed to deserialize parameters: invalid type: string \"hunter2\", expected u32",
        );
        let shaped = shape_request_error(&error, "prompts/get", &Session::default(), None);
        let wire = serde_json::to_string(&shaped.error).unwrap();
        assert!(!wire.contains("hunter2"), "V3: {wire}");
        assert_eq!(shaped.error.code, -32602);
        assert!(!format!("{:?}", shaped.log.unwrap()).contains("hunter2"));
    }
}
