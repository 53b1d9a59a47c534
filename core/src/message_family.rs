//! The family a failure's *message* says, for failures whose type says nothing (SPEC P1).
//!
//! P1 maps failures by family. The family comes first from what the failure's type
//! says — an exception's type and ancestors, a JSON-RPC error's code — and only where
//! that is the generic "internal" (a framework's catch-all `ResourceError`, a `-32603`)
//! from its message: `Session not found: missing` is not-found whoever raised it.
//! [`family_of_message`] is that one reading, used by
//! [`foreign_error::classify`](crate::call::classify) and by
//! [`Failure::from_protocol_error`](crate::Failure::from_protocol_error), so that the
//! same message gets the same family — and the same code — in every adapter.

use crate::failure::Family;
use crate::prefix::strip_prefixes;

/// How many bytes of a message's first clause are read: a framework's wording of a
/// family ("Session not found", "Permission denied") is short, and a long message costs
/// no more than a short one.
const MAX_CLAUSE_BYTES: usize = 256;

/// Phrases that end a first clause of the not-found family (`Session not found`,
/// `Pane %99 does not exist`).
const NOT_FOUND_ENDINGS: [&str; 3] = ["not found", "does not exist", "no longer exists"];

/// Phrases that start a first clause of the not-found family (`No such file or
/// directory`).
const NOT_FOUND_STARTS: [&str; 1] = ["no such "];

/// Phrases that end a first clause of the permission family.
const PERMISSION_ENDINGS: [&str; 3] = ["permission denied", "access denied", "forbidden"];

/// Phrases that end a first clause of the timeout family (`Upstream request timed out`).
const TIMEOUT_ENDINGS: [&str; 2] = ["timed out", "timeout"];

/// The family `message` says, if it says one other than internal:
///
/// - the family a stock prefix names (`Not found: `, `Permission denied: `, … — see
///   [`strip_prefixes`]), else that of the TypeScript SDK's `MCP error <code>: `;
/// - else, on the message without those prefixes, its first clause (up to the first
///   `:` or line break): ending in `not found`, `does not exist` or starting with
///   `No such ` is not-found; ending in `permission denied`, `access denied` or
///   `forbidden` is permission; ending in `timed out` or `timeout` is timeout. Case is
///   ignored.
///
/// `None` when the message says nothing (internal is what says nothing).
pub fn family_of_message(message: &str) -> Option<Family> {
    let stripped = strip_prefixes(message);
    let named = stripped
        .family
        .or_else(|| stripped.sdk_code.and_then(code_family));
    if let Some(family) = named.filter(|&f| f != Family::Internal) {
        return Some(family);
    }
    let clause = first_clause(stripped.rest).trim().to_ascii_lowercase();
    let ends = |phrases: &[&str]| phrases.iter().any(|p| clause.ends_with(p));
    if ends(&NOT_FOUND_ENDINGS) || NOT_FOUND_STARTS.iter().any(|p| clause.starts_with(p)) {
        Some(Family::NotFound)
    } else if ends(&PERMISSION_ENDINGS) {
        Some(Family::Permission)
    } else if ends(&TIMEOUT_ENDINGS) {
        Some(Family::Timeout)
    } else {
        None
    }
}

/// The family a JSON-RPC error code says (P1), `None` for the codes that say nothing
/// (`-32603`, `-32000`, any other).
pub fn code_family(code: i64) -> Option<Family> {
    use crate::jsonrpc_error::code;
    match code {
        code::INVALID_PARAMS => Some(Family::InvalidParams),
        code::NOT_FOUND | code::RESOURCE_NOT_FOUND => Some(Family::NotFound),
        _ => None,
    }
}

/// The message up to its first `:` or line break, at most [`MAX_CLAUSE_BYTES`] of it
/// (a clause longer than that is not a family's wording).
fn first_clause(message: &str) -> &str {
    let mut end = message.len().min(MAX_CLAUSE_BYTES + 1);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let head = &message[..end];
    match head.find([':', '\n']) {
        Some(at) => &head[..at],
        None if message.len() > MAX_CLAUSE_BYTES => "",
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_clause() {
        let cases = [
            ("Session not found: missing", Some(Family::NotFound)),
            ("Pane not found", Some(Family::NotFound)),
            ("SESSION NOT FOUND: x", Some(Family::NotFound)),
            ("No such file or directory: /x", Some(Family::NotFound)),
            ("window @3 does not exist", Some(Family::NotFound)),
            (
                "Error reading resource 'tmux://s': Session not found: s",
                Some(Family::NotFound),
            ),
            ("Access denied", Some(Family::Permission)),
            ("Request timeout: slow", Some(Family::Timeout)),
            ("operation timed out\nafter 30 s", Some(Family::Timeout)),
            ("MCP error -32002: gone", Some(Family::NotFound)),
            (
                "MCP error -32603: Session not found: x",
                Some(Family::NotFound),
            ),
            ("Internal error: boom", None),
            ("not foundation", None),
            ("found", None),
            ("", None),
        ];
        for (message, family) in cases {
            assert_eq!(family_of_message(message), family, "{message}");
        }
    }

    #[test]
    fn a_long_first_clause_says_nothing() {
        let long = format!("{} not found", "x".repeat(MAX_CLAUSE_BYTES));
        assert_eq!(family_of_message(&long), None);
        let multibyte = format!("{}: Session not found", "é".repeat(MAX_CLAUSE_BYTES));
        assert_eq!(family_of_message(&multibyte), None);
    }
}

/// The examples of this module's items (private: not run as doc tests).
#[cfg(test)]
mod examples {
    #[test]
    fn example_family_of_message_1() {
        use crate::failure::Family;
        use crate::message_family::family_of_message;
        assert_eq!(
            family_of_message("Session not found: missing"),
            Some(Family::NotFound)
        );
        assert_eq!(
            family_of_message("Internal error: Pane %99 does not exist"),
            Some(Family::NotFound)
        );
        assert_eq!(
            family_of_message("Upstream request timed out, please retry"),
            None
        );
        assert_eq!(
            family_of_message("Upstream request timed out"),
            Some(Family::Timeout)
        );
        assert_eq!(
            family_of_message("Permission denied: /etc/shadow"),
            Some(Family::Permission)
        );
        // Only the first clause is read: the cause named after it is not the failure's family.
        assert_eq!(
            family_of_message("Could not attach: session not found"),
            None
        );
        assert_eq!(family_of_message("boom"), None);
    }

    #[test]
    fn example_code_family_2() {
        use crate::failure::Family;
        use crate::message_family::code_family;
        assert_eq!(code_family(-32002), Some(Family::NotFound));
        assert_eq!(code_family(-32602), Some(Family::InvalidParams));
        assert_eq!(code_family(-32603), None);
    }
}
