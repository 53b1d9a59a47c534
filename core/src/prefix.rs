//! The prefixes stock error middleware, frameworks and SDKs put before a failure's
//! message (SPEC E2, P2), and their stripping — in one place, used by the
//! protocol-error reading ([`Failure::from_protocol_error`]) and the recognisers of
//! foreign validation texts ([`foreign_validation`]) alike.
//!
//! Known, however nested:
//!
//! - error middleware: `Internal error: `, `Invalid params: `, `Not found: `,
//!   `Permission denied: `, `Request timeout: ` — each names a [`Family`];
//! - the TypeScript SDK: `MCP error <code>: ` (its `McpError`, in the texts of the
//!   `isError` results it builds too — the code is kept, to classify by) and
//!   `Input validation error: ` (its argument validation, an invalid-parameters
//!   family);
//! - frameworks' wrappers: fastmcp's `Error calling tool '<name>': `, the official
//!   Python SDK's `Error executing tool <name>: ` (1.x `mcp.server.fastmcp` and 2.x
//!   `mcp.server.mcpserver`), `Error reading resource '<uri>': `.
//!
//! This module depends on [`failure`](crate::failure) for [`Family`] only; nothing
//! below it depends on it.
//!
//! [`Failure::from_protocol_error`]: crate::Failure::from_protocol_error
//! [`foreign_validation`]: crate::foreign_validation

use crate::failure::Family;

/// The prefixes stock error middleware (and the TypeScript SDK's argument validation)
/// put before a message, and the family each one says the failure is of.
const FAMILY_PREFIXES: [(&str, Family); 6] = [
    ("Internal error: ", Family::Internal),
    ("Invalid params: ", Family::InvalidParams),
    ("Not found: ", Family::NotFound),
    ("Permission denied: ", Family::Permission),
    ("Request timeout: ", Family::Timeout),
    ("Input validation error: ", Family::InvalidParams),
];

/// Wrappers that quote what they are about: `Error calling tool '<name>': ` and
/// `Error reading resource '<uri>': `.
const QUOTED_WRAPPERS: [&str; 2] = ["Error calling tool '", "Error reading resource '"];

/// The official Python SDK's wrapper, `Error executing tool <name>: ` (name unquoted).
const PYTHON_SDK_WRAPPER: &str = "Error executing tool ";

/// What [`strip_prefixes`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stripped<'a> {
    /// The message without its prefixes — the whole message when nothing would be left.
    pub rest: &'a str,
    /// The most specific family the prefixes named, if any.
    pub family: Option<Family>,
    /// The code of the TypeScript SDK's `MCP error <code>: `, if there was one (the
    /// outermost).
    pub sdk_code: Option<i64>,
}

/// The message without the prefixes stock middleware, frameworks and SDKs put before
/// it (see the [module docs](self)), however nested, with the most specific family
/// they named and the SDK's error code.
pub fn strip_prefixes(message: &str) -> Stripped<'_> {
    let mut rest = message;
    let mut family = None;
    let mut sdk_code = None;
    loop {
        if let Some((tail, named)) = FAMILY_PREFIXES
            .iter()
            .find_map(|&(p, f)| rest.strip_prefix(p).map(|t| (t, f)))
        {
            rest = tail;
            if named != Family::Internal || family.is_none() {
                family = Some(named);
            }
            continue;
        }
        if let Some((code, tail)) = sdk_code_prefix(rest) {
            rest = tail;
            sdk_code = sdk_code.or(Some(code));
            continue;
        }
        match wrapper(rest) {
            Some(tail) => rest = tail,
            None => break,
        }
    }
    Stripped {
        rest: if rest.is_empty() { message } else { rest },
        family,
        sdk_code,
    }
}

/// The code and the rest of a message that starts with the TypeScript SDK's
/// `MCP error <code>: `.
fn sdk_code_prefix(message: &str) -> Option<(i64, &str)> {
    let number = message.strip_prefix("MCP error ")?;
    let digits = number.strip_prefix('-').unwrap_or(number);
    let end = digits.find(|c: char| !c.is_ascii_digit())?;
    let tail = digits[end..].strip_prefix(": ")?;
    let code = number[..number.len() - digits.len() + end].parse().ok()?;
    (end > 0).then_some((code, tail))
}

/// Whether a message starts with a framework's wrapper (`Error executing tool <name>: `,
/// `Error calling tool '<name>': `, `Error reading resource '<uri>': `).
pub(crate) fn is_wrapped(message: &str) -> bool {
    wrapper(message).is_some()
}

/// The rest of a message after one framework wrapper.
fn wrapper(message: &str) -> Option<&str> {
    if let Some(inner) = QUOTED_WRAPPERS.iter().find_map(|p| message.strip_prefix(p)) {
        return inner.split_once("': ").map(|(_, tail)| tail);
    }
    let inner = message.strip_prefix(PYTHON_SDK_WRAPPER)?;
    let (name, tail) = inner.split_once(": ")?;
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2_a_framework_wrapper_is_seen_at_the_start_only() {
        for wrapped in [
            "Error executing tool get_time: Invalid timezone: 'x'",
            "Error calling tool 'run': boom",
            "Error reading resource 'probe://a': gone",
        ] {
            assert!(is_wrapped(wrapped), "{wrapped}");
        }
        for plain in [
            "Invalid timezone: 'x'",
            "Internal error: boom",
            "Error executing tool : no name",
            "Error executing tool two words: x",
            "see Error calling tool 'run': boom",
        ] {
            assert!(!is_wrapped(plain), "{plain}");
        }
    }

    #[test]
    fn strips_stock_prefixes_however_nested() {
        let cases = [
            ("Internal error: boom", "boom", Some(Family::Internal)),
            ("Error calling tool 'fail_unexpected': boom", "boom", None),
            (
                "Internal error: Error calling tool 'x': boom",
                "boom",
                Some(Family::Internal),
            ),
            (
                "Error calling tool 'x': Permission denied: no",
                "no",
                Some(Family::Permission),
            ),
            (
                "Internal error: Not found: gone",
                "gone",
                Some(Family::NotFound),
            ),
            ("Request timeout: slow", "slow", Some(Family::Timeout)),
            ("Invalid params: bad", "bad", Some(Family::InvalidParams)),
            (
                "Internal error: Error reading resource 'probe://s/f': Path not allowed: f",
                "Path not allowed: f",
                Some(Family::Internal),
            ),
            (
                "Internal error: ",
                "Internal error: ",
                Some(Family::Internal),
            ),
            (
                "Error calling tool 'x' without colon",
                "Error calling tool 'x' without colon",
                None,
            ),
            // The official Python SDK's wrapper (E2), and its bare form.
            ("Error executing tool takes_int: boom", "boom", None),
            (
                "Error executing tool takes_int",
                "Error executing tool takes_int",
                None,
            ),
            (
                "Error executing tool two words: boom",
                "Error executing tool two words: boom",
                None,
            ),
            ("plain", "plain", None),
        ];
        for (message, stripped, family) in cases {
            let got = strip_prefixes(message);
            assert_eq!((got.rest, got.family), (stripped, family), "{message}");
        }
    }

    #[test]
    fn keeps_the_typescript_sdks_code() {
        let got = strip_prefixes("MCP error -32603: MCP error -32602: Pane not found: %99");
        assert_eq!(
            (got.rest, got.sdk_code),
            ("Pane not found: %99", Some(-32603))
        );
        assert_eq!(strip_prefixes("MCP error 7: x").sdk_code, Some(7));
        for kept in [
            "MCP error : x",
            "MCP error -: x",
            "MCP error 12 x",
            "MCP error 99999999999999999999: x",
        ] {
            let got = strip_prefixes(kept);
            assert_eq!((got.rest, got.sdk_code), (kept, None), "{kept}");
        }
    }
}

/// The examples of this module's items (private: not run as doc tests).
#[cfg(test)]
mod examples {
    #[test]
    fn example_strip_prefixes_1() {
        use crate::failure::Family;
        use crate::prefix::strip_prefixes;

        let stripped =
            strip_prefixes("Internal error: Error calling tool 'x': Permission denied: no");
        assert_eq!(
            (stripped.rest, stripped.family),
            ("no", Some(Family::Permission))
        );

        let sdk = strip_prefixes(
            "MCP error -32602: Input validation error: Invalid arguments for tool t: x",
        );
        assert_eq!(sdk.rest, "Invalid arguments for tool t: x");
        assert_eq!(
            (sdk.family, sdk.sdk_code),
            (Some(Family::InvalidParams), Some(-32602))
        );

        let python = strip_prefixes(
            "Error executing tool takes_int: 1 validation error for takes_intArguments",
        );
        assert_eq!(python.rest, "1 validation error for takes_intArguments");

        // Nothing would be left: the message stays whole.
        assert_eq!(strip_prefixes("Internal error: ").rest, "Internal error: ");
    }
}
