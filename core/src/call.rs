//! One `tools/call`, end to end: what every adapter does with its outcome (SPEC E1–E9,
//! V1–V6, L1, O1–O2, G1).
//!
//! An adapter collects what it knows — the [`ToolCatalog`](crate::ToolCatalog) from `tools/list`, the
//! [`CallContext`] of the call — and hands the call's [`Outcome`] to
//! [`shape_tool_call`](crate::shape_tool_call). That decides, in the order SPEC O2 requires:
//!
//! 1. a failed call of a tool the catalog does not know is the protocol error of E8;
//! 2. a failure becomes an error result (E1–E7, V1–V6), and an `isError` result that is
//!    a recognised argument-validation failure is rebuilt as one (V1–V5);
//! 3. the limit applies to the result, error results included (L1, O2).
//!
//! The adapter only translates types and does the I/O; it never decides.
//!
//! Everything a call's shaping takes and gives is here, at one path each: the call
//! ([`CallContext`], [`ArgumentShapes`]), the failure's kinds ([`Family`], [`Level`])
//! and the result's parts ([`Content`]), the log record ([`LogRecord`]), validation
//! problems ([`Problem`]) and the readers of foreign errors ([`classify`],
//! [`from_zod`], [`from_pydantic`]), the shaping of a request's error that is not a tool
//! call ([`shape_request_error`]) and the close-name suggestions ([`closest`]). The
//! front door — [`shape_tool_call`](crate::shape_tool_call),
//! [`Failure`](crate::Failure), [`ToolResult`](crate::ToolResult) — is at the crate root.

pub use crate::arguments::{ArgumentShapes, CallContext};
pub use crate::error_result::{error_result, unknown_tool};
pub use crate::failure::{EXPECTED_TOOL_ERROR, Family, Level, TOOL_ERROR, VALIDATION_ERROR};
pub use crate::foreign_error::{ForeignError, classify, says_unknown_tool};
pub use crate::foreign_validation::{
    GENERIC_KIND, REDACTED_MESSAGE, from_pydantic, from_pydantic_errors, from_zod, recognize,
    redact_input_values,
};
pub use crate::log::{ErrorCounts, LogRecord};
pub use crate::request_error::{ShapedError, is_resource_not_found, shape_request_error};
pub use crate::result::{Content, ModelError, TextContent};
pub use crate::suggest::{MAX_SUGGESTION_DISTANCE, closest, edit_distance};
pub use crate::tool_call::{
    MAX_RECOGNIZED_BYTES, Outcome, Shaped, check_arguments, recognize_failure,
    shape_tool_call_in_part, shape_tool_call_texts,
};
pub use crate::validation::{Problem, ProblemKind, render_problems};
