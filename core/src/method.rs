//! What a transport must know of MCP's methods to carry them, asked by method name, so
//! that the names live in the core and an adapter only asks (SPEC A0): which requests
//! ask for a long-lived answer, which begin and end the handshake, which is a tool
//! call, and what the 2026-07-28 `Mcp-Name` header of each names.
//!
//! ```
//! use backstop_core::machine::{NamedBy, asks_long_lived_answer, named_by};
//! assert!(asks_long_lived_answer("subscriptions/listen"));
//! assert!(!asks_long_lived_answer("tools/call"));
//! assert_eq!(named_by("resources/read"), Some(NamedBy::Uri));
//! ```

/// `initialize`: the request that begins a session's handshake.
pub const INITIALIZE: &str = "initialize";

/// `notifications/initialized`: the client's notification that ends the handshake.
pub const INITIALIZED: &str = "notifications/initialized";

/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";

/// The requests whose answer may keep its stream quiet for as long as nothing
/// happens: 2026-07-28's `subscriptions/listen` (open until the client goes) and
/// 2025-11-25's `tasks/result` (answered when the task ends).
pub const LONG_LIVED: [&str; 2] = ["subscriptions/listen", "tasks/result"];

/// Whether a request of `method` asks for a long-lived answer ([`LONG_LIVED`]): a
/// transport bounds the wait for its answer's first bytes, never the quiet between its
/// events (SPEC A5).
///
/// ```
/// use backstop_core::machine::asks_long_lived_answer;
/// assert!(asks_long_lived_answer("tasks/result"));
/// assert!(!asks_long_lived_answer("tasks/get"));
/// ```
pub fn asks_long_lived_answer(method: &str) -> bool {
    LONG_LIVED.contains(&method)
}

/// Whether `method` begins a session's handshake (`initialize`): its answer names the
/// session's revision (and, over Streamable HTTP, its session id), which the messages
/// after it carry.
///
/// ```
/// assert!(backstop_core::machine::begins_handshake("initialize"));
/// assert!(!backstop_core::machine::begins_handshake("notifications/initialized"));
/// ```
pub fn begins_handshake(method: &str) -> bool {
    method == INITIALIZE
}

/// Whether `method` ends the handshake (`notifications/initialized`): from then on the
/// server may send messages of its own (over Streamable HTTP, on its GET stream).
///
/// ```
/// assert!(backstop_core::machine::ends_handshake("notifications/initialized"));
/// assert!(!backstop_core::machine::ends_handshake("initialize"));
/// ```
pub fn ends_handshake(method: &str) -> bool {
    method == INITIALIZED
}

/// Whether `method` is a tool call (`tools/call`).
///
/// ```
/// assert!(backstop_core::machine::is_tool_call("tools/call"));
/// assert!(!backstop_core::machine::is_tool_call("tools/list"));
/// ```
pub fn is_tool_call(method: &str) -> bool {
    method == TOOLS_CALL
}

/// The member of a request's `params` that says what it is about, which MCP
/// 2026-07-28's Streamable HTTP mirrors into the `Mcp-Name` header (SEP-2243).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedBy {
    /// `params.name`: the tool of a `tools/call`, the prompt of a `prompts/get`.
    Name,
    /// `params.uri`: the resource of a `resources/read`.
    Uri,
    /// `params.taskId`: the task of a `tasks/*` request.
    TaskId,
}

/// Which member of the params of a message of `method` its `Mcp-Name` header mirrors,
/// if any: `params.name` of `tools/call` and `prompts/get`, `params.uri` of
/// `resources/read`, `params.taskId` of `tasks/*`.
///
/// ```
/// use backstop_core::machine::{NamedBy, named_by};
/// assert_eq!(named_by("tools/call"), Some(NamedBy::Name));
/// assert_eq!(named_by("prompts/get"), Some(NamedBy::Name));
/// assert_eq!(named_by("tasks/get"), Some(NamedBy::TaskId));
/// assert_eq!(named_by("tools/list"), None);
/// ```
pub fn named_by(method: &str) -> Option<NamedBy> {
    match method {
        TOOLS_CALL | "prompts/get" => Some(NamedBy::Name),
        "resources/read" => Some(NamedBy::Uri),
        m if m.starts_with("tasks/") => Some(NamedBy::TaskId),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a5_only_listen_and_task_results_are_long_lived() {
        for method in LONG_LIVED {
            assert!(asks_long_lived_answer(method), "{method}");
        }
        for method in [
            "tools/call",
            "tasks/get",
            "subscriptions/listen/x",
            "",
            "SUBSCRIPTIONS/LISTEN",
        ] {
            assert!(!asks_long_lived_answer(method), "{method}");
        }
    }

    #[test]
    fn a5_each_method_names_what_it_is_about() {
        let cases = [
            ("tools/call", Some(NamedBy::Name)),
            ("prompts/get", Some(NamedBy::Name)),
            ("resources/read", Some(NamedBy::Uri)),
            ("tasks/result", Some(NamedBy::TaskId)),
            ("tasks/cancel", Some(NamedBy::TaskId)),
            ("tools/list", None),
            ("resources/list", None),
            ("ping", None),
        ];
        for (method, named) in cases {
            assert_eq!(named_by(method), named, "{method}");
        }
    }
}
