//! The error a tool author returns: a [`Failure`] that travels as an rmcp `Err`.

use backstop_core::{
    Failure, ProtocolError,
    call::{Family, Level},
};
use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::CallToolResponse;

use crate::convert::to_error_data;

/// A tool's failure, as its author describes it: the message as written, whether the
/// caller can fix it, a suggestion, the cause whose type name becomes `error_type`
/// (E3), and an own log level (G1).
///
/// Return it from a `#[tool]` function (`Result<T, ToolError>`). It leaves the tool as
/// an rmcp `Err(ErrorData)` — so a layer between the tools and [`Backstop`] (audit,
/// access control, retry) sees a failure (O1) — and [`Backstop`] reads it back
/// without loss and answers with the error result.
///
/// [`Backstop`]: crate::Backstop
///
/// ```
/// use backstop_rmcp::ToolError;
/// use rmcp::handler::server::wrapper::Parameters;
/// use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
/// use rmcp::handler::server::router::tool::ToolRouter;
///
/// #[derive(Debug)]
/// struct PaneNotFound(String);
/// impl std::fmt::Display for PaneNotFound {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "no pane {}", self.0)
///     }
/// }
/// impl std::error::Error for PaneNotFound {}
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Pane { pane: String }
///
/// #[derive(Clone)]
/// struct Tmux { tool_router: ToolRouter<Self> }
///
/// #[tool_router]
/// impl Tmux {
///     #[tool(description = "Capture a pane")]
///     async fn capture_pane(&self, Parameters(p): Parameters<Pane>) -> Result<String, ToolError> {
///         Err(ToolError::expected(format!("Pane not found: {}", p.pane))
///             .caused_by(&PaneNotFound(p.pane))
///             .with_suggestion("Call list_panes to discover valid pane ids."))
///     }
/// }
///
/// #[tool_handler(router = self.tool_router)]
/// impl ServerHandler for Tmux {}
///
/// // What an inner layer sees: an Err carrying everything.
/// let error: rmcp::ErrorData = ToolError::expected("Pane not found: %99")
///     .caused_by(&PaneNotFound("%99".into()))
///     .into();
/// assert_eq!(error.message, "Pane not found: %99");
/// assert_eq!(error.data.unwrap()["error_type"], "PaneNotFound");
/// # let _ = Tmux { tool_router: Tmux::tool_router() };
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(Failure);

impl ToolError {
    /// A failure the caller can fix (E4), such as a wrong id.
    ///
    /// ```
    /// let error = backstop_rmcp::ToolError::expected("Pane not found: %99");
    /// assert!(error.failure().is_expected());
    /// ```
    pub fn expected(message: impl Into<String>) -> Self {
        Self(Failure::expected(message))
    }

    /// A fault of the server (E4).
    ///
    /// ```
    /// let error = backstop_rmcp::ToolError::unexpected("boom");
    /// assert!(!error.failure().is_expected());
    /// assert_eq!(error.to_string(), "boom");
    /// ```
    pub fn unexpected(message: impl Into<String>) -> Self {
        Self(Failure::unexpected(message))
    }

    /// A fault of the server made from a Rust error: its text is the message and its
    /// type's name the `error_type`.
    ///
    /// ```
    /// let err = "x".parse::<u32>().unwrap_err();
    /// let error = backstop_rmcp::ToolError::from_error(&err);
    /// assert_eq!(error.failure().error_type(), "ParseIntError");
    /// ```
    pub fn from_error<E: std::error::Error + ?Sized>(error: &E) -> Self {
        Self(Failure::from_error(error))
    }

    /// Name the wrapped cause: its type's name becomes `error_type` (E3).
    ///
    /// ```
    /// let io = std::io::Error::other("disk");
    /// let error = backstop_rmcp::ToolError::unexpected("cannot save").caused_by(&io);
    /// assert_eq!(error.failure().error_type(), "Error");
    /// ```
    pub fn caused_by<E: std::error::Error + ?Sized>(self, cause: &E) -> Self {
        Self(self.0.caused_by(cause))
    }

    /// Set `error_type` by name.
    ///
    /// ```
    /// let error = backstop_rmcp::ToolError::unexpected("x").with_error_type("Timeout");
    /// assert_eq!(error.failure().error_type(), "Timeout");
    /// ```
    pub fn with_error_type(self, error_type: impl Into<String>) -> Self {
        Self(self.0.with_error_type(error_type))
    }

    /// Attach a suggestion for the caller (E2, E5).
    ///
    /// ```
    /// let error = backstop_rmcp::ToolError::expected("x").with_suggestion("Try y.");
    /// assert_eq!(error.failure().suggestion(), Some("Try y."));
    /// ```
    pub fn with_suggestion(self, suggestion: impl Into<String>) -> Self {
        Self(self.0.with_suggestion(suggestion))
    }

    /// Declare the level the failure is logged at (G1).
    ///
    /// ```
    /// use backstop_core::call::Level;
    /// let error = backstop_rmcp::ToolError::unexpected("x").with_level(Level::Info);
    /// assert_eq!(error.failure().level(), Some(Level::Info));
    /// ```
    pub fn with_level(self, level: Level) -> Self {
        Self(self.0.with_level(level))
    }

    /// Set the family, which maps the failure outside `tools/call` (P1): a
    /// [`Family::NotFound`] from `read_resource` is a resource-not-found error.
    ///
    /// ```
    /// use backstop_core::call::Family;
    /// let error = backstop_rmcp::ToolError::expected("no such session").with_family(Family::NotFound);
    /// assert_eq!(error.failure().family(), Family::NotFound);
    /// ```
    pub fn with_family(self, family: Family) -> Self {
        Self(self.0.with_family(family))
    }

    /// Add a key to the error result's `_meta` (E7).
    ///
    /// ```
    /// let error = backstop_rmcp::ToolError::expected("x").with_meta("pane", "%1".into());
    /// assert_eq!(error.failure().meta()["pane"], "%1");
    /// ```
    pub fn with_meta(self, key: impl Into<String>, value: serde_json::Value) -> Self {
        Self(self.0.with_meta(key, value))
    }

    /// The failure this error describes.
    ///
    /// ```
    /// let error = backstop_rmcp::ToolError::unexpected("boom");
    /// assert_eq!(error.failure().message(), "boom");
    /// ```
    pub fn failure(&self) -> &Failure {
        &self.0
    }

    /// The failure this error describes, by value.
    ///
    /// ```
    /// let failure = backstop_rmcp::ToolError::expected("x").into_failure();
    /// assert_eq!(failure.message(), "x");
    /// ```
    pub fn into_failure(self) -> Failure {
        self.0
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.message())
    }
}

impl std::error::Error for ToolError {}

impl From<Failure> for ToolError {
    /// A core failure as a tool error.
    fn from(failure: Failure) -> Self {
        Self(failure)
    }
}

impl From<ToolError> for ErrorData {
    /// The error as it travels through inner layers: a JSON-RPC error object that
    /// [`Backstop`](crate::Backstop) reads back without loss
    /// ([`ProtocolError::encode_failure`]).
    fn from(error: ToolError) -> Self {
        to_error_data(ProtocolError::encode_failure(&error.0))
    }
}

impl IntoCallToolResult for ToolError {
    /// A tool error is an `Err`, never a result: conversion is the wrapper's (O1).
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Err(self.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::to_protocol_error;

    #[test]
    fn travels_without_loss() {
        let error = ToolError::expected("Pane not found: %99")
            .with_error_type("PaneNotFound")
            .with_suggestion("Call list_panes.")
            .with_level(Level::Info)
            .with_family(Family::NotFound)
            .with_meta("pane", "%99".into());
        let data: ErrorData = error.clone().into();
        let back = Failure::from_protocol_error(&to_protocol_error(&data));
        assert_eq!(back, error.into_failure());
    }

    #[test]
    fn is_an_err_from_a_tool() {
        let result: Result<String, ToolError> = Err(ToolError::unexpected("boom"));
        assert!(result.into_call_tool_result().is_err(), "O1");
    }
}
