//! Failures and their classification (SPEC E3, E4, G1, P1).
//!
//! A [`Failure`] is what a tool call produced instead of a result. It carries what the
//! error result and the protocol-error mapping need: the message as written, the name
//! of the error type behind it, whether the caller can fix it, an optional suggestion,
//! an optional own log level, and a [`Family`]. Families replace matching on exact
//! error classes: a sub-kind of not-found is not-found.

use serde_json::{Map, Value};

use crate::jsonrpc_error::ProtocolError;
use crate::validation::Problem;

/// What kind of failure this is, for the protocol-error mapping of non-tool methods
/// (SPEC P1).
///
/// ```
/// use backstop_core::call::Family;
/// assert_eq!(Family::default(), Family::Internal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Family {
    /// The target does not exist — or may not be shown to exist: a denial that hides
    /// existence, such as path screening, belongs here too.
    NotFound,
    /// The request's parameters were rejected.
    InvalidParams,
    /// The caller may not do this.
    Permission,
    /// The operation ran out of time.
    Timeout,
    /// A fault of the server.
    #[default]
    Internal,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 5] = [
        Family::NotFound,
        Family::InvalidParams,
        Family::Permission,
        Family::Timeout,
        Family::Internal,
    ];

    /// The family's name: `not_found`, `invalid_params`, `permission`, `timeout`,
    /// `internal`.
    ///
    /// ```
    /// use backstop_core::call::Family;
    /// assert_eq!(Family::NotFound.as_str(), "not_found");
    /// assert_eq!(Family::parse("not_found"), Some(Family::NotFound));
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Family::NotFound => "not_found",
            Family::InvalidParams => "invalid_params",
            Family::Permission => "permission",
            Family::Timeout => "timeout",
            Family::Internal => "internal",
        }
    }

    /// The family named by [`as_str`](Self::as_str), if any.
    ///
    /// ```
    /// use backstop_core::call::Family;
    /// assert!(Family::ALL.iter().all(|f| Family::parse(f.as_str()) == Some(*f)));
    /// assert_eq!(Family::parse("NotFound"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Family> {
        Self::ALL.into_iter().find(|family| family.as_str() == name)
    }
}

/// A log level, for the failure's own level (SPEC G1).
///
/// ```
/// use backstop_core::call::Level;
/// assert!(Level::Error > Level::Warning);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Trace.
    Trace,
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Warning.
    Warning,
    /// Error.
    Error,
}

impl Level {
    /// The level's lowercase name: `trace`, `debug`, `info`, `warning`, `error`.
    ///
    /// ```
    /// assert_eq!(backstop_core::call::Level::Warning.as_str(), "warning");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    /// A level from its name, case-insensitively; also the common spellings `warn`,
    /// `critical` and `fatal` (both [`Level::Error`]), so that levels written by
    /// other logging systems (Python's `WARNING`, …) are understood.
    ///
    /// ```
    /// use backstop_core::call::Level;
    /// assert_eq!(Level::parse("WARNING"), Some(Level::Warning));
    /// assert_eq!(Level::parse("warn"), Some(Level::Warning));
    /// assert_eq!(Level::parse("loud"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Level> {
        match name.to_ascii_lowercase().as_str() {
            "trace" => Some(Level::Trace),
            "debug" => Some(Level::Debug),
            "info" => Some(Level::Info),
            "warning" | "warn" => Some(Level::Warning),
            "error" | "critical" | "fatal" => Some(Level::Error),
            _ => None,
        }
    }
}

/// The `error_type` of an expected failure built from a message alone.
pub const EXPECTED_TOOL_ERROR: &str = "ExpectedToolError";
/// The `error_type` of an unexpected failure built from a message alone.
pub const TOOL_ERROR: &str = "ToolError";
/// The `error_type` of an argument-validation failure (SPEC V1).
pub const VALIDATION_ERROR: &str = "ValidationError";

/// A failed tool call (or a failed request of another method).
///
/// ```
/// use backstop_core::{Failure, call::Family};
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("no pane with id {0}")]
/// struct PaneNotFound(String);
///
/// let failure = Failure::expected("Pane not found: %99")
///     .caused_by(&PaneNotFound("%99".into()))
///     .with_family(Family::NotFound)
///     .with_suggestion("Call list_panes to discover valid pane ids.");
/// assert_eq!(failure.error_type(), "PaneNotFound");
/// assert!(failure.is_expected());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    message: String,
    error_type: String,
    expected: bool,
    suggestion: Option<String>,
    level: Option<Level>,
    family: Family,
    meta: Map<String, Value>,
    problems: Vec<Problem>,
    validation: bool,
    protocol: Option<Box<ProtocolError>>,
}

/// The name of a Rust type without its module path or generic arguments:
/// `my_crate::errors::PaneNotFound` → `PaneNotFound`.
pub fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let path = full.split('<').next().unwrap_or(full);
    path.rsplit("::").next().unwrap_or(path)
}

impl Failure {
    fn new(message: impl Into<String>, error_type: &str, expected: bool) -> Self {
        Self {
            message: message.into(),
            error_type: error_type.to_owned(),
            expected,
            suggestion: None,
            level: None,
            family: Family::Internal,
            meta: Map::new(),
            problems: Vec::new(),
            validation: false,
            protocol: None,
        }
    }

    /// A failure the caller can fix (E4), with `error_type` [`EXPECTED_TOOL_ERROR`]
    /// until [`caused_by`](Self::caused_by) names a cause.
    ///
    /// ```
    /// let failure = backstop_core::Failure::expected("Pane not found: %99");
    /// assert_eq!(failure.message(), "Pane not found: %99");
    /// assert_eq!(failure.error_type(), "ExpectedToolError");
    /// ```
    pub fn expected(message: impl Into<String>) -> Self {
        Self::new(message, EXPECTED_TOOL_ERROR, true)
    }

    /// A fault of the server (E4), with `error_type` [`TOOL_ERROR`] until
    /// [`caused_by`](Self::caused_by) names a cause.
    ///
    /// ```
    /// let failure = backstop_core::Failure::unexpected("boom");
    /// assert!(!failure.is_expected());
    /// assert_eq!(failure.error_type(), "ToolError");
    /// ```
    pub fn unexpected(message: impl Into<String>) -> Self {
        Self::new(message, TOOL_ERROR, false)
    }

    /// An unexpected failure made from a Rust error: its `Display` text is the message
    /// and its type's name is the `error_type`.
    ///
    /// ```
    /// let err = "x".parse::<i32>().unwrap_err();
    /// let failure = backstop_core::Failure::from_error(&err);
    /// assert_eq!(failure.error_type(), "ParseIntError");
    /// assert_eq!(failure.message(), "invalid digit found in string");
    /// ```
    pub fn from_error<E: std::error::Error + ?Sized>(error: &E) -> Self {
        Self::new(error.to_string(), short_type_name::<E>(), false)
    }

    /// A rejected argument set (V1): expected, `error_type` [`VALIDATION_ERROR`], family
    /// [`Family::InvalidParams`]. The text is rendered from the problems and the call
    /// (V2); no input value is ever part of a [`Problem`] (V3).
    ///
    /// ```
    /// use backstop_core::{Failure, call::Problem};
    /// let failure = Failure::validation(vec![Problem::missing_argument("count")]);
    /// assert!(failure.is_validation());
    /// assert_eq!(failure.error_type(), "ValidationError");
    /// ```
    pub fn validation(problems: Vec<Problem>) -> Self {
        let mut failure = Self::new("", VALIDATION_ERROR, true);
        failure.family = Family::InvalidParams;
        failure.problems = problems;
        failure.validation = true;
        failure
    }

    /// Name the error that caused this failure: its type's name becomes `error_type`
    /// (E3: the wrapped error, one hop — not the wrapper).
    ///
    /// ```
    /// let io = std::io::Error::other("disk");
    /// let failure = backstop_core::Failure::expected("cannot save").caused_by(&io);
    /// assert_eq!(failure.error_type(), "Error");
    /// assert_eq!(failure.message(), "cannot save");
    /// ```
    pub fn caused_by<E: std::error::Error + ?Sized>(self, _cause: &E) -> Self {
        self.with_error_type(short_type_name::<E>())
    }

    /// Set `error_type` by name, for causes whose Rust type is not at hand (a
    /// `dyn Error`, or a name that came over the wire).
    ///
    /// ```
    /// let failure = backstop_core::Failure::unexpected("x").with_error_type("RuntimeError");
    /// assert_eq!(failure.error_type(), "RuntimeError");
    /// ```
    pub fn with_error_type(mut self, error_type: impl Into<String>) -> Self {
        self.error_type = error_type.into();
        self
    }

    /// Attach a suggestion for the caller (E2, E5). An empty suggestion is none.
    ///
    /// ```
    /// let failure = backstop_core::Failure::expected("x").with_suggestion("try y");
    /// assert_eq!(failure.suggestion(), Some("try y"));
    /// ```
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        let suggestion = suggestion.into();
        self.suggestion = (!suggestion.is_empty()).then_some(suggestion);
        self
    }

    /// Declare the level this failure is logged at (G1).
    ///
    /// ```
    /// use backstop_core::{Failure, call::Level};
    /// let failure = Failure::unexpected("x").with_level(Level::Info);
    /// assert_eq!(failure.level(), Some(Level::Info));
    /// ```
    pub fn with_level(mut self, level: Level) -> Self {
        self.level = Some(level);
        self
    }

    /// Set the family that drives the protocol-error mapping (P1).
    ///
    /// ```
    /// use backstop_core::{Failure, call::Family};
    /// let failure = Failure::expected("no such session").with_family(Family::NotFound);
    /// assert_eq!(failure.family(), Family::NotFound);
    /// ```
    pub fn with_family(mut self, family: Family) -> Self {
        self.family = family;
        self
    }

    /// Declare whether the caller can fix this failure (E4).
    ///
    /// ```
    /// let failure = backstop_core::Failure::unexpected("denied").with_expected(true);
    /// assert!(failure.is_expected());
    /// ```
    pub fn with_expected(mut self, expected: bool) -> Self {
        self.expected = expected;
        self
    }

    /// Add a key to the failure's own `_meta` (kept in the error result, E7).
    ///
    /// ```
    /// let failure = backstop_core::Failure::expected("x").with_meta("pane", "%1".into());
    /// assert_eq!(failure.meta()["pane"], "%1");
    /// ```
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// The message as written (for a validation failure: empty; its text is rendered).
    ///
    /// ```
    /// assert_eq!(backstop_core::Failure::unexpected("boom").message(), "boom");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The name of the error type that caused the failure (E3).
    ///
    /// ```
    /// assert_eq!(backstop_core::Failure::unexpected("x").error_type(), "ToolError");
    /// ```
    pub fn error_type(&self) -> &str {
        &self.error_type
    }

    /// Whether the caller can fix this failure (E4).
    ///
    /// ```
    /// assert!(backstop_core::Failure::expected("x").is_expected());
    /// ```
    pub fn is_expected(&self) -> bool {
        self.expected
    }

    /// The suggestion, if any.
    ///
    /// ```
    /// assert_eq!(backstop_core::Failure::expected("x").suggestion(), None);
    /// ```
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }

    /// The failure's own log level, if it declares one.
    ///
    /// ```
    /// assert_eq!(backstop_core::Failure::expected("x").level(), None);
    /// ```
    pub fn level(&self) -> Option<Level> {
        self.level
    }

    /// The family (P1).
    ///
    /// ```
    /// use backstop_core::{Failure, call::Family};
    /// assert_eq!(Failure::unexpected("x").family(), Family::Internal);
    /// ```
    pub fn family(&self) -> Family {
        self.family
    }

    /// The failure's own `_meta` keys.
    ///
    /// ```
    /// assert!(backstop_core::Failure::expected("x").meta().is_empty());
    /// ```
    pub fn meta(&self) -> &Map<String, Value> {
        &self.meta
    }

    /// The validation problems; empty unless this is a validation failure.
    ///
    /// ```
    /// use backstop_core::{Failure, call::Problem};
    /// let failure = Failure::validation(vec![Problem::missing_argument("count")]);
    /// assert_eq!(failure.problems().len(), 1);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// `true` for an argument-validation failure (V1).
    ///
    /// ```
    /// assert!(!backstop_core::Failure::expected("x").is_validation());
    /// ```
    pub fn is_validation(&self) -> bool {
        self.validation
    }

    /// The protocol error this failure already is, if it is one (P2).
    ///
    /// ```
    /// use backstop_core::{Failure, ProtocolError};
    /// assert!(Failure::unexpected("boom").as_protocol_error().is_none());
    /// let error = ProtocolError::new(-32603, "Internal error: boom");
    /// assert_eq!(Failure::from(error.clone()).as_protocol_error(), Some(&error));
    /// ```
    pub fn as_protocol_error(&self) -> Option<&ProtocolError> {
        self.protocol.as_deref()
    }

    /// This failure with another message (the core's V3 redaction of a message).
    pub(crate) fn with_message(mut self, message: String) -> Self {
        self.message = message;
        self
    }

    /// Keep this protocol error as the one this failure already is (P2).
    pub(crate) fn carrying(mut self, error: ProtocolError) -> Self {
        self.protocol = Some(Box::new(error));
        self
    }
}

/// The examples of this module's items (private: not run as doc tests).
#[cfg(test)]
mod examples {
    #[test]
    fn example_short_type_name_1() {
        assert_eq!(crate::failure::short_type_name::<std::io::Error>(), "Error");
        assert_eq!(crate::failure::short_type_name::<Vec<u8>>(), "Vec");
    }
}
