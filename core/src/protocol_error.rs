//! Protocol errors: JSON-RPC error objects, and the mapping of failures to them for
//! every method other than `tools/call` (SPEC P1, P2, R3).
//!
//! Three directions:
//!
//! - [`ProtocolError::from_failure`]: what the *client* gets when a request that is not
//!   a tool call fails — code by [`Family`], the revision's resource-not-found code
//!   (R3), the message as written.
//! - [`ProtocolError::encode_failure`] and [`Failure::from_protocol_error`]: a failure
//!   travelling as an `Err` through layers inside the conversion point (O1) and back,
//!   without loss.
//! - [`Failure::from_protocol_error`] of a JSON-RPC error some tool or middleware
//!   produced: read what it says (`data.error_type`, `data.expected`, …), strip the
//!   prefixes stock error middleware adds, and keep the error itself so that it passes
//!   unchanged where it stays a protocol error (P2).

use serde_json::{Map, Value};

use crate::failure::{Failure, Family, Level};
use crate::foreign_validation::recognize;
pub use crate::jsonrpc_error::{ProtocolError, code};
use crate::message_family::{code_family, family_of_message};
use crate::prefix::strip_prefixes;
use crate::session::Revision;
use crate::validation::{Problem, RMCP_DESERIALIZE_PREFIX, render_problems};

/// The message prefix of a resource-not-found error (P1).
pub const RESOURCE_NOT_FOUND_PREFIX: &str = "Resource not found: ";

/// The `data` key under which [`ProtocolError::encode_failure`] keeps what a failure
/// carries beyond `error_type`, `expected`, `suggestion` and `level`.
pub const ENCODED_FAILURE_KEY: &str = "backstop/failure";

impl ProtocolError {
    /// The error the client gets when a request of `method` (not a tool call) fails
    /// (P1, P2, R3).
    ///
    /// - A failure that already is a protocol error ([`Failure::protocol`]) is returned
    ///   unchanged (P2).
    /// - Not-found on `resources/*`: `revision.resource_not_found_code()` (R3), message
    ///   `Resource not found: <msg>` — the prefix is not added again when the message
    ///   already starts with it (P2) — and `data.uri` when `uri` is given.
    /// - Not-found elsewhere: `-32001`; invalid parameters: `-32602`; permission and
    ///   timeout: `-32000`; anything else: `-32603`. The message as written, with no
    ///   `Internal error:` prefix.
    /// - A validation failure's message is its V2 text, rendered `for <method>`.
    /// - A suggestion, when there is one, goes in `data.suggestion` (as E8 does).
    ///
    /// ```
    /// use backstop_core::{Failure, ProtocolError, call::Family, protocol::Revision};
    /// let failure = Failure::expected("Session not found: missing").with_family(Family::NotFound);
    /// let uri = Some("probe://sessions/missing");
    /// let old = ProtocolError::from_failure(&failure, "resources/read", Revision::V2025_11_25, uri);
    /// assert_eq!(old.code, -32002);
    /// assert_eq!(old.message, "Resource not found: Session not found: missing");
    /// assert_eq!(old.data.unwrap()["uri"], "probe://sessions/missing");
    /// let new = ProtocolError::from_failure(&failure, "resources/read", Revision::V2026_07_28, uri);
    /// assert_eq!(new.code, -32602);
    /// let elsewhere = ProtocolError::from_failure(&failure, "prompts/get", Revision::NEWEST, None);
    /// assert_eq!((elsewhere.code, elsewhere.message.as_str()), (-32001, "Session not found: missing"));
    /// ```
    pub fn from_failure(
        failure: &Failure,
        method: &str,
        revision: Revision,
        uri: Option<&str>,
    ) -> ProtocolError {
        if let Some(error) = failure.as_protocol_error() {
            return error.clone();
        }
        let message = if failure.is_validation() {
            render_problems(method, failure.problems())
        } else {
            failure.message().to_owned()
        };
        let mut data = Map::new();
        let (code, message) = match failure.family() {
            Family::NotFound if method.starts_with("resources/") => {
                if let Some(uri) = uri {
                    data.insert("uri".into(), Value::from(uri));
                }
                (
                    revision.resource_not_found_code(),
                    resource_not_found_message(message),
                )
            }
            family => (family_code(family), message),
        };
        if let Some(suggestion) = failure.suggestion() {
            data.insert("suggestion".into(), Value::from(suggestion));
        }
        ProtocolError {
            code,
            message,
            data: (!data.is_empty()).then_some(Value::Object(data)),
        }
    }

    /// A failure as a protocol error that can travel as an `Err` through layers inside
    /// the conversion point (O1) and be read back by [`Failure::from_protocol_error`]
    /// without loss.
    ///
    /// The code is the family's (`-32001`, `-32602`, `-32000`, `-32603`) and the message
    /// the failure's (for a validation failure, its V2 text `for arguments`), so that a
    /// layer that knows nothing of this library still sees a sensible error. `data`
    /// carries `error_type`, `expected`, `suggestion` and `level` under those names, and
    /// the family, own `_meta` and validation problems under [`ENCODED_FAILURE_KEY`].
    /// A failure that already is a protocol error is that error, unchanged (P2).
    ///
    /// ```
    /// use backstop_core::{Failure, ProtocolError, call::Level};
    /// let failure = Failure::expected("Pane not found: %99")
    ///     .with_error_type("PaneNotFound")
    ///     .with_suggestion("Call list_panes.")
    ///     .with_level(Level::Info);
    /// let error = ProtocolError::encode_failure(&failure);
    /// let data = error.data.as_ref().unwrap();
    /// assert_eq!(data["error_type"], "PaneNotFound");
    /// assert_eq!(data["level"], "info");
    /// assert_eq!(Failure::from_protocol_error(&error), failure);
    /// ```
    pub fn encode_failure(failure: &Failure) -> ProtocolError {
        if let Some(error) = failure.as_protocol_error() {
            return error.clone();
        }
        let message = if failure.is_validation() {
            render_problems("arguments", failure.problems())
        } else {
            failure.message().to_owned()
        };
        let mut data = Map::new();
        data.insert("error_type".into(), Value::from(failure.error_type()));
        data.insert("expected".into(), Value::Bool(failure.is_expected()));
        if let Some(suggestion) = failure.suggestion() {
            data.insert("suggestion".into(), Value::from(suggestion));
        }
        if let Some(level) = failure.level() {
            data.insert("level".into(), Value::from(level.as_str()));
        }
        let mut own = Map::new();
        own.insert("family".into(), Value::from(failure.family().as_str()));
        if !failure.meta().is_empty() {
            own.insert("meta".into(), Value::Object(failure.meta().clone()));
        }
        if failure.is_validation() {
            let problems = failure.problems().iter().map(Problem::to_value).collect();
            own.insert("problems".into(), Value::Array(problems));
        }
        data.insert(ENCODED_FAILURE_KEY.into(), Value::Object(own));
        ProtocolError {
            code: family_code(failure.family()),
            message,
            data: Some(Value::Object(data)),
        }
    }
}

/// The code of a family outside `resources/*` (P1).
fn family_code(family: Family) -> i64 {
    match family {
        Family::NotFound => code::NOT_FOUND,
        Family::InvalidParams => code::INVALID_PARAMS,
        Family::Permission | Family::Timeout => code::SERVER_ERROR,
        Family::Internal => code::INTERNAL_ERROR,
    }
}

/// `Resource not found: <msg>`, unless `msg` already says so (P2: never doubled).
pub(crate) fn resource_not_found_message(message: String) -> String {
    // A stock prefix (`Not found: `) says again what the code says: the same words
    // whether the failure was raised in process or came as a server's error (P1, A0).
    let message = strip_prefixes(&message).rest.to_owned();
    let bare = RESOURCE_NOT_FOUND_PREFIX.trim_end_matches([':', ' ']);
    let already = message
        .get(..bare.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(bare));
    if already {
        message
    } else if message.is_empty() {
        bare.to_owned()
    } else {
        format!("{RESOURCE_NOT_FOUND_PREFIX}{message}")
    }
}

/// The `error_type` of a JSON-RPC error that does not name one: the name of its code.
fn code_name(code: i64) -> &'static str {
    match code {
        code::PARSE_ERROR => "ParseError",
        code::INVALID_REQUEST => "InvalidRequest",
        code::METHOD_NOT_FOUND => "MethodNotFound",
        code::INVALID_PARAMS => "InvalidParams",
        code::INTERNAL_ERROR => "InternalError",
        code::SERVER_ERROR => "ServerError",
        code::NOT_FOUND => "NotFound",
        code::RESOURCE_NOT_FOUND => "ResourceNotFound",
        _ => "ProtocolError",
    }
}

/// The family a code says, when nothing else does: internal for the codes that say
/// nothing.
fn said_by_code(code: i64) -> Family {
    code_family(code).unwrap_or(Family::Internal)
}

impl Failure {
    /// A failure that already is a protocol error (P2): what it says is read as
    /// [`Failure::from_protocol_error`] reads it (for a tool result), and the protocol
    /// error itself is kept, so that [`ProtocolError::from_failure`] gives it back
    /// unchanged — unless it reads as an argument-validation failure (rmcp's
    /// `failed to deserialize parameters: …`), whose original text may quote a rejected
    /// value (V3 wins over P2).
    ///
    /// ```
    /// use backstop_core::{Failure, ProtocolError, protocol::Revision};
    /// let error = ProtocolError::new(-32002, "Resource not found: x");
    /// let failure = Failure::protocol(error.clone());
    /// assert_eq!(failure.as_protocol_error(), Some(&error));
    /// let mapped = ProtocolError::from_failure(&failure, "resources/read", Revision::NEWEST, Some("x"));
    /// assert_eq!(mapped, error);
    /// ```
    pub fn protocol(error: ProtocolError) -> Self {
        let failure = Self::from_protocol_error(&error);
        if failure.is_validation() {
            // Read as argument validation: the original may quote a rejected value (V3).
            failure
        } else {
            failure.carrying(error)
        }
    }

    /// The failure a JSON-RPC error says.
    ///
    /// An error made by [`ProtocolError::encode_failure`] is read back exactly. Any other
    /// (a tool's, a middleware's, a framework's):
    ///
    /// - `error_type`, `expected`, `suggestion` and `level` are taken from `data` where
    ///   present (`level` by name, see [`Level::parse`]);
    /// - the message loses the prefixes stock error middleware adds (`Internal error: `,
    ///   `Invalid params: `, `Not found: `, `Permission denied: `, `Request timeout: `),
    ///   the TypeScript SDK's `MCP error <code>: ` and `Input validation error: `, and
    ///   framework wrappers (`Error calling tool '<name>': `, `Error executing tool
    ///   <name>: `, `Error reading resource '<uri>': `), however nested — see
    ///   `strip_prefixes`;
    /// - the family is the one those prefixes name, else that of the SDK's code in the
    ///   message, else the error's code's (`-32602` invalid parameters, `-32001`/`-32002`
    ///   not found), else — where all of those say nothing more than internal — the one
    ///   the message's words say (`family_of_message`: `Session not found: x` is
    ///   not-found), else internal (P1);
    /// - without `data.expected`, invalid-parameter and permission failures are expected
    ///   (E4), others are not; without `data.error_type`, the code's name
    ///   (`InvalidParams`, `InternalError`, `ResourceNotFound`, …, else `ProtocolError`);
    /// - a message that is rmcp's `failed to deserialize parameters: …`, and an
    ///   invalid-parameters error whose message is one of serde's, become a validation
    ///   failure read with [`Problem::from_serde_message`] — the serde text, which may
    ///   quote the rejected value, is not kept as the message (V3);
    /// - the error itself is kept ([`Failure::as_protocol_error`]), so that it passes
    ///   unchanged where it stays a protocol error (P2) — except such an argument
    ///   error: passing it on unchanged would pass on the value it quotes, and V3 wins
    ///   over P2 there (it is re-rendered as a `-32602` validation error instead).
    ///
    /// ```
    /// use backstop_core::{Failure, ProtocolError, call::Family};
    /// let error = ProtocolError::new(-32603, "Internal error: Error calling tool 'run': boom");
    /// let failure = Failure::from_protocol_error(&error);
    /// assert_eq!(failure.message(), "boom");
    /// assert_eq!(failure.error_type(), "InternalError");
    /// assert!(!failure.is_expected());
    ///
    /// let error = ProtocolError::new(-32602, "bad pane id")
    ///     .with_data(serde_json::json!({"error_type": "PaneIdError", "suggestion": "Use %N."}));
    /// let failure = Failure::from_protocol_error(&error);
    /// assert_eq!((failure.error_type(), failure.is_expected()), ("PaneIdError", true));
    /// assert_eq!(failure.family(), Family::InvalidParams);
    /// assert_eq!(failure.suggestion(), Some("Use %N."));
    /// ```
    pub fn from_protocol_error(error: &ProtocolError) -> Failure {
        let data = error.data.as_ref().and_then(Value::as_object);
        let field = |key: &str| data.and_then(|d| d.get(key));
        let text = |key: &str| field(key).and_then(Value::as_str);
        let encoded = field(ENCODED_FAILURE_KEY).and_then(Value::as_object);

        let (message, named_family) = match encoded {
            Some(_) => (error.message.as_str(), None),
            None => {
                let stripped = strip_prefixes(&error.message);
                let sdk_family = stripped.sdk_code.map(said_by_code);
                (stripped.rest, stripped.family.or(sdk_family))
            }
        };
        let family = encoded
            .and_then(|e| e.get("family"))
            .and_then(Value::as_str)
            .and_then(Family::parse)
            .or(named_family)
            .unwrap_or_else(|| said_by_code(error.code));
        // P1: where neither prefixes nor code say more than "internal" (a framework's
        // catch-all `-32603`), the message's own words say the family.
        let family = match family {
            Family::Internal if encoded.is_none() => {
                family_of_message(&error.message).unwrap_or(Family::Internal)
            }
            family => family,
        };

        let problems = match encoded {
            Some(e) => e.get("problems").and_then(Value::as_array).map(|problems| {
                problems
                    .iter()
                    .filter_map(Problem::from_value)
                    .collect::<Vec<_>>()
            }),
            None => {
                let problem = Problem::from_serde_message(message);
                // Frameworks' own validation texts (pydantic, zod): see foreign_validation.
                let foreign = recognize(message);
                if foreign.is_some() {
                    foreign
                } else if message.starts_with(RMCP_DESERIALIZE_PREFIX) {
                    Some(vec![problem.unwrap_or_else(Problem::invalid_arguments)])
                } else if family == Family::InvalidParams {
                    problem.map(|problem| vec![problem])
                } else {
                    None
                }
            }
        };

        let mut failure = match problems {
            Some(problems) => Failure::validation(problems),
            None => Failure::unexpected(message),
        };
        if encoded.is_some() || !failure.is_validation() {
            let expected = field("expected")
                .and_then(Value::as_bool)
                .unwrap_or(matches!(family, Family::InvalidParams | Family::Permission));
            let error_type = text("error_type").unwrap_or_else(|| code_name(error.code));
            failure = failure
                .with_error_type(error_type)
                .with_expected(expected)
                .with_family(family);
        }
        if let Some(suggestion) = text("suggestion") {
            failure = failure.with_suggestion(suggestion);
        }
        if let Some(level) = text("level").and_then(Level::parse) {
            failure = failure.with_level(level);
        }
        match encoded {
            Some(e) => {
                if let Some(meta) = e.get("meta").and_then(Value::as_object) {
                    for (key, value) in meta {
                        failure = failure.with_meta(key.clone(), value.clone());
                    }
                }
                failure
            }
            None if failure.is_validation() => failure,
            None => failure.carrying(error.clone()),
        }
    }
}

impl From<ProtocolError> for Failure {
    /// See [`Failure::protocol`].
    fn from(error: ProtocolError) -> Self {
        Failure::protocol(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_not_found_message_says_a_stock_prefix_once() {
        // P1, A0: the same words whether the failure was raised or sent.
        let said = |message: &str| resource_not_found_message(message.to_owned());
        assert_eq!(said("Not found: Session"), "Resource not found: Session");
        assert_eq!(said("Session"), "Resource not found: Session");
        assert_eq!(said("resource not found: x"), "resource not found: x");
        assert_eq!(said(""), "Resource not found");
    }
    use serde_json::json;

    fn nf(message: &str) -> Failure {
        Failure::expected(message).with_family(Family::NotFound)
    }

    #[test]
    fn maps_families_per_p1() {
        let cases = [
            (Family::NotFound, code::NOT_FOUND),
            (Family::InvalidParams, code::INVALID_PARAMS),
            (Family::Permission, code::SERVER_ERROR),
            (Family::Timeout, code::SERVER_ERROR),
            (Family::Internal, code::INTERNAL_ERROR),
        ];
        for (family, expected) in cases {
            let failure = Failure::unexpected("m").with_family(family);
            let error =
                ProtocolError::from_failure(&failure, "prompts/get", Revision::NEWEST, None);
            assert_eq!(error, ProtocolError::new(expected, "m"), "{family:?}");
        }
        // Not-found on resources/* follows the revision (R3); other families do not.
        for revision in Revision::ALL {
            let error =
                ProtocolError::from_failure(&nf("x"), "resources/read", revision, Some("u"));
            assert_eq!(error.code, revision.resource_not_found_code());
            let failure = Failure::unexpected("x").with_family(Family::Permission);
            let error =
                ProtocolError::from_failure(&failure, "resources/read", revision, Some("u"));
            assert_eq!(error, ProtocolError::new(-32000, "x"));
        }
    }

    #[test]
    fn never_doubles_the_resource_prefix() {
        for (message, expected) in [
            (
                "Resource not found: Unknown resource: 'u'",
                "Resource not found: Unknown resource: 'u'",
            ),
            ("resource not found", "resource not found"),
            ("Session not found", "Resource not found: Session not found"),
            ("", "Resource not found"),
            ("Rés", "Resource not found: Rés"),
        ] {
            let error =
                ProtocolError::from_failure(&nf(message), "resources/read", Revision::NEWEST, None);
            assert_eq!(error.message, expected);
            assert_eq!(error.data, None);
        }
    }

    #[test]
    fn a_protocol_error_passes_unchanged() {
        let original = ProtocolError::new(-32603, "Internal error: Session not found")
            .with_data(json!({"anything": [1]}));
        let failure = Failure::from(original.clone());
        for method in ["resources/read", "prompts/get"] {
            assert_eq!(
                ProtocolError::from_failure(&failure, method, Revision::NEWEST, Some("u")),
                original
            );
        }
        assert_eq!(ProtocolError::encode_failure(&failure), original);
        // A foreign error read as a failure is carried too.
        assert_eq!(
            Failure::from_protocol_error(&original).as_protocol_error(),
            Some(&original)
        );
    }

    #[test]
    fn suggestion_goes_into_data() {
        let failure = nf("x").with_suggestion("List them first.");
        let error = ProtocolError::from_failure(
            &failure,
            "resources/read",
            Revision::V2025_11_25,
            Some("u"),
        );
        assert_eq!(
            error.data,
            Some(json!({"uri": "u", "suggestion": "List them first."}))
        );
        let error =
            ProtocolError::from_failure(&failure, "prompts/get", Revision::V2025_11_25, None);
        assert_eq!(error.data, Some(json!({"suggestion": "List them first."})));
    }

    #[test]
    fn validation_failures_render_for_the_method() {
        let failure = Failure::validation(vec![Problem::missing_argument("uri")]);
        let error = ProtocolError::from_failure(&failure, "resources/read", Revision::NEWEST, None);
        assert_eq!(error.code, -32602);
        assert_eq!(
            error.message,
            "1 validation error for resources/read\nuri\n  Missing required argument [type=missing_argument]"
        );
    }

    #[test]
    fn strips_the_typescript_sdks_code_prefix() {
        let error = ProtocolError::new(-32603, "MCP error -32603: Pane not found: %99");
        assert_eq!(
            Failure::from_protocol_error(&error).message(),
            "Pane not found: %99"
        );
        // The family follows the SDK's code when no prefix names one (E4).
        let error = ProtocolError::new(-32603, "MCP error -32602: bad range");
        let failure = Failure::from_protocol_error(&error);
        assert_eq!(failure.family(), Family::InvalidParams);
        assert!(failure.is_expected());
        let error = ProtocolError::new(-32603, "Permission denied: MCP error -32602: no");
        assert_eq!(
            Failure::from_protocol_error(&error).family(),
            Family::Permission
        );
        // The official Python SDK's wrapper goes too (E2).
        let error = ProtocolError::new(-32603, "Error executing tool run: boom");
        assert_eq!(Failure::from_protocol_error(&error).message(), "boom");
        for kept in ["MCP error : x", "MCP error -: x", "MCP error 12 x"] {
            let error = ProtocolError::new(-32603, kept);
            assert_eq!(Failure::from_protocol_error(&error).message(), kept);
        }
    }

    #[test]
    fn reads_foreign_errors() {
        let error = ProtocolError::new(-32000, "Permission denied: not yours");
        let failure = Failure::from_protocol_error(&error);
        assert_eq!(failure.family(), Family::Permission);
        assert!(failure.is_expected());
        assert_eq!(failure.error_type(), "ServerError");
        assert_eq!(failure.message(), "not yours");

        let error = ProtocolError::new(-32002, "Resource not found: x");
        let failure = Failure::from_protocol_error(&error);
        assert_eq!(
            (failure.family(), failure.is_expected()),
            (Family::NotFound, false)
        );
        assert_eq!(failure.error_type(), "ResourceNotFound");

        let error = ProtocolError::new(-32603, "x").with_data(json!({
            "error_type": "RuntimeError", "expected": true, "suggestion": "", "level": "WARNING"
        }));
        let failure = Failure::from_protocol_error(&error);
        assert_eq!(
            (failure.error_type(), failure.is_expected()),
            ("RuntimeError", true)
        );
        assert_eq!(
            (failure.suggestion(), failure.level()),
            (None, Some(Level::Warning))
        );

        // data that is not an object, or fields of the wrong type, say nothing.
        let error =
            ProtocolError::new(-32603, "x").with_data(json!({"expected": "yes", "level": 3}));
        let failure = Failure::from_protocol_error(&error);
        assert_eq!((failure.is_expected(), failure.level()), (false, None));
        let failure =
            Failure::from_protocol_error(&ProtocolError::new(1, "x").with_data(json!("s")));
        assert_eq!(failure.error_type(), "ProtocolError");
    }

    #[test]
    fn rmcp_argument_errors_become_validation_failures_without_the_value() {
        let error = ProtocolError::new(
            -32602,
            r#"failed to deserialize parameters: invalid type: string "SECRET", expected u32"#,
        );
        let failure = Failure::from_protocol_error(&error);
        assert!(failure.is_validation());
        assert_eq!(failure.as_protocol_error(), None, "V3 wins over P2");
        let mapped = ProtocolError::from_failure(&failure, "tools/call", Revision::NEWEST, None);
        assert_eq!(mapped.code, -32602);
        assert!(!mapped.message.contains("SECRET"));
        assert_eq!(
            failure.problems(),
            [Problem::invalid_type(Vec::<String>::new(), "integer")]
        );
        assert!(!failure.message().contains("SECRET"));
        assert_eq!(failure.error_type(), "ValidationError");
        let error = ProtocolError::new(-32602, "failed to deserialize parameters: custom SECRET");
        let failure = Failure::from_protocol_error(&error);
        assert_eq!(failure.problems(), [Problem::invalid_arguments()]);
        // serde's own text, without rmcp's prefix, in an invalid-params error.
        let error = ProtocolError::new(
            -32602,
            "Invalid params: missing field `count` at line 1 column 2",
        );
        let failure = Failure::from_protocol_error(&error);
        assert_eq!(failure.problems(), [Problem::missing_argument("count")]);
        // Elsewhere, a message is the tool's own, kept as written.
        let error = ProtocolError::new(-32603, "missing field `count`");
        assert!(!Failure::from_protocol_error(&error).is_validation());
    }

    #[test]
    fn encoding_round_trips() {
        let failures = [
            Failure::expected("Internal error: kept as written").with_error_type("X"),
            Failure::unexpected("boom")
                .with_level(Level::Error)
                .with_family(Family::Timeout),
            Failure::expected("m")
                .with_meta("pane", json!("%1"))
                .with_meta("n", json!([1, null])),
            Failure::validation(vec![
                Problem::missing_argument("a"),
                Problem::invalid_type(["b"], "integer"),
            ])
            .with_suggestion("s"),
            Failure::validation(Vec::new()),
            Failure::unexpected("")
                .with_expected(true)
                .with_family(Family::Permission),
        ];
        for failure in failures {
            let error = ProtocolError::encode_failure(&failure);
            let wire = serde_json::to_string(&error).unwrap();
            let back: ProtocolError = serde_json::from_str(&wire).unwrap();
            assert_eq!(Failure::from_protocol_error(&back), failure, "{wire}");
        }
    }
}
