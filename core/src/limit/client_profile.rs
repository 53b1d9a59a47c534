//! Client profiles (SPEC L18, E12): what each agent client measured does to a tool
//! result before its model reads it, kept as data.
//!
//! A profile is chosen by the client's `clientInfo.name` (R2: the handshake, or a
//! 2026-07-28 request's `_meta`). Each number was measured on the release named, by
//! running the client headless against a scripted model endpoint and reading what it
//! sent as the tool result; `tests/peers/agents/` holds how, and the tests that check
//! the profiles against the real clients. To add a client, measure the longest text it
//! passes unchanged (in characters and, where it counts them, tokens) and whether its
//! model sees `isError`, and add a row.
//!
//! ```
//! use backstop_core::limit::ClientProfile;
//! let codex = ClientProfile::for_client(Some("codex-mcp-client"));
//! assert!(!codex.shows_is_error);
//! let unknown = ClientProfile::for_client(Some("my-agent"));
//! // A client without a profile gets the smallest profiled limits.
//! assert!(ClientProfile::ALL.iter().all(|p| p.max_chars.is_none_or(|c| unknown.max_chars.unwrap() <= c)));
//! ```

/// What one agent client does to a tool result (L18, E12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientProfile {
    /// The `clientInfo.name` the client sends.
    pub client: &'static str,
    /// The release the numbers were measured on.
    pub release: &'static str,
    /// The longest text, in UTF-16 code units, that reaches its model unchanged.
    pub max_chars: Option<usize>,
    /// The most tokens (by [`ReaderCount`](super::ReaderCount)'s estimate) that reach
    /// its model unchanged.
    pub max_tokens: Option<usize>,
    /// Whether its model sees a result's `isError` (E12).
    pub shows_is_error: bool,
    /// Whether its model reads a result's `structuredContent` (its compact JSON) in
    /// place of the text blocks, where a result has one: its limits count that too.
    pub reads_structured_content: bool,
    /// The environment variable that sets its token limit, where it has one.
    pub tokens_env: Option<&'static str>,
}

impl ClientProfile {
    /// Every profile measured.
    pub const ALL: &'static [ClientProfile] = &[
        // Claude Code saves a text over 50,000 characters to a file with a 2 KB preview
        // of its start, and one over MAX_MCP_OUTPUT_TOKENS (25,000 by default) with none.
        ClientProfile {
            client: "claude-code",
            release: "2.1.328",
            max_chars: Some(50_000),
            max_tokens: Some(25_000),
            shows_is_error: true,
            reads_structured_content: false,
            tokens_env: Some("MAX_MCP_OUTPUT_TOKENS"),
        },
        // Codex (model gpt-5.5) cuts a result to head + tail with `…N tokens
        // truncated…` when its `Wall time: … Output:` frame and text are over 48,000
        // bytes (12,000 tokens at 4 bytes a token; a text of 47,964 ASCII bytes passed,
        // 47,966 was cut; CJK text is counted by its bytes too). The frame's length
        // varies with the time: 200 bytes are left for it. Its model never sees isError,
        // and reads `structuredContent`'s JSON where a result has it (fastmcp gives a
        // tool returning `str` one: `{"result": …}`), the text blocks otherwise.
        ClientProfile {
            client: "codex-mcp-client",
            release: "0.169.0",
            max_chars: None,
            max_tokens: Some(11_950),
            shows_is_error: false,
            reads_structured_content: true,
            tokens_env: None,
        },
        // Gemini CLI cuts a single text block over 40,000 characters, counted after it
        // wraps the text in a 41-character tag, to its first 8,000 and last 32,000.
        ClientProfile {
            client: "gemini-cli-mcp-client",
            release: "0.61.0",
            max_chars: Some(40_000 - 41),
            max_tokens: None,
            shows_is_error: true,
            reads_structured_content: false,
            tokens_env: None,
        },
    ];

    /// The profile of the client named `name`, or, for a client without one (or none
    /// named), [`UNKNOWN`](Self::UNKNOWN).
    ///
    /// ```
    /// use backstop_core::limit::ClientProfile;
    /// assert_eq!(ClientProfile::for_client(Some("claude-code")).max_chars, Some(50_000));
    /// assert_eq!(ClientProfile::for_client(None), ClientProfile::UNKNOWN);
    /// ```
    pub fn for_client(name: Option<&str>) -> ClientProfile {
        name.and_then(|name| Self::ALL.iter().find(|p| p.client == name))
            .copied()
            .unwrap_or(Self::UNKNOWN)
    }

    /// The profile of a client without one: the smallest limits of every profile, in
    /// each unit (counted over the text blocks and, as some client may read it instead,
    /// `structuredContent`); its model is taken to see `isError` (E2's text as it is).
    pub const UNKNOWN: ClientProfile = ClientProfile {
        client: "",
        release: "",
        max_chars: smallest(ClientProfile::ALL, Unit::Chars),
        max_tokens: smallest(ClientProfile::ALL, Unit::Tokens),
        shows_is_error: true,
        reads_structured_content: false,
        tokens_env: None,
    };
}

/// A reader's unit of limit.
enum Unit {
    Chars,
    Tokens,
}

/// The smallest limit in `unit` over every one of `profiles` that has one.
const fn smallest(profiles: &[ClientProfile], unit: Unit) -> Option<usize> {
    let mut least: Option<usize> = None;
    let mut i = 0;
    while i < profiles.len() {
        let profile = &profiles[i];
        let limit = match unit {
            Unit::Chars => profile.max_chars,
            Unit::Tokens => profile.max_tokens,
        };
        if let Some(n) = limit {
            least = match least {
                Some(l) if l <= n => Some(l),
                _ => Some(n),
            };
        }
        i += 1;
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l18_a_profile_is_chosen_by_name_and_an_unknown_client_gets_the_smallest_limits() {
        for profile in ClientProfile::ALL {
            assert_eq!(ClientProfile::for_client(Some(profile.client)), *profile);
            assert!(!profile.release.is_empty());
        }
        let unknown = ClientProfile::for_client(Some("Claude-Code"));
        assert_eq!(unknown, ClientProfile::UNKNOWN, "names match exactly");
        let least = |of: fn(&ClientProfile) -> Option<usize>| {
            ClientProfile::ALL.iter().filter_map(of).min()
        };
        assert_eq!(unknown.max_chars, least(|p| p.max_chars));
        assert_eq!(unknown.max_tokens, least(|p| p.max_tokens));
        assert!(unknown.max_chars.is_some() && unknown.max_tokens.is_some());
        assert!(unknown.shows_is_error);
    }

    #[test]
    fn l18_the_smallest_limit_is_found_in_any_order() {
        let mut profiles = ClientProfile::ALL.to_vec();
        for _ in 0..profiles.len() {
            profiles.rotate_left(1);
            for (unit, of) in [
                (
                    Unit::Chars,
                    (|p: &ClientProfile| p.max_chars) as fn(&ClientProfile) -> _,
                ),
                (Unit::Tokens, |p: &ClientProfile| p.max_tokens),
            ] {
                assert_eq!(
                    smallest(&profiles, unit),
                    profiles.iter().filter_map(of).min()
                );
            }
        }
        assert_eq!(smallest(&[], Unit::Chars), None);
    }
}
