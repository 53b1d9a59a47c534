//! The settings of a response limit: the cap, the tools it applies to, which end of
//! an over-long text each tool keeps, and whether cuts are line-aligned (SPEC L1, L2,
//! L9, L14, L16).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use super::DEFAULT_MAX_BYTES;
use super::cutter::header_only;
use super::reader::{ReaderCount, ReaderRoom};
use crate::session::ClientInfo;

/// A response limit that cannot be configured.
///
/// ```
/// use backstop_core::{Limit, limit::LimitError};
/// let err = Limit::new(10).unwrap_err();
/// assert_eq!(err, LimitError::CapTooSmall { cap: 10, min: Limit::min_bytes() });
/// assert!(err.to_string().contains(&Limit::min_bytes().to_string()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// The cap cannot hold even the smallest truncated result (SPEC L14).
    #[error(
        "a response cap of {cap} bytes cannot hold any truncated result; the minimum is {min} bytes"
    )]
    CapTooSmall {
        /// The cap asked for.
        cap: usize,
        /// The smallest cap that works.
        min: usize,
    },
    /// A reader's limit cannot hold even the smallest truncated text (SPEC L14, L18).
    #[error(
        "a limit of {limit} {unit} cannot hold any truncated result; the minimum is {min} {unit}"
    )]
    ReaderLimitTooSmall {
        /// `characters` or `tokens`.
        unit: &'static str,
        /// The limit asked for.
        limit: usize,
        /// The smallest limit that works.
        min: usize,
    },
}

/// A response limit: a cap in wire bytes, the tools it applies to, and whether cuts
/// are line-aligned.
///
/// ```
/// use backstop_core::Limit;
/// let limit = Limit::new(50_000).unwrap().only_tools(["capture_pane", "show_buffer"]);
/// assert!(limit.applies_to("capture_pane"));
/// assert!(!limit.applies_to("list_panes"));
/// assert_eq!(Limit::default().max_bytes(), 1_000_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub(super) max_bytes: usize,
    pub(super) tools: Option<BTreeSet<String>>,
    pub(super) line_align: bool,
    pub(super) keep: Keep,
    pub(super) keep_per_tool: BTreeMap<String, Keep>,
    pub(super) max_chars: ReaderLimit,
    pub(super) max_tokens: ReaderLimit,
    /// E12: an `isError` result's first text starts with [`ERROR_LEAD`].
    pub(super) marks_errors: bool,
    /// `MAX_MCP_OUTPUT_TOKENS` as backstop's environment has it (the Claude Code
    /// profile follows it, L18).
    pub(super) env_max_output_tokens: Option<usize>,
    /// Room kept in every reader's unit for what goes before the text (E12's lead).
    pub(super) reserved: ReaderCount,
    /// The reader may read `structuredContent` where a result has it (L18): its
    /// limits count that too.
    pub(super) reads_structured: bool,
    /// The reader reads `structuredContent` in place of the text: a cut string there
    /// carries the header line (L17).
    pub(super) marks_structured_cuts: bool,
}

/// One of a reader's limits (L18) as configured: from the client's profile (the
/// default), off, or at most this many.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum ReaderLimit {
    #[default]
    FromProfile,
    Off,
    Max(usize),
}

impl ReaderLimit {
    fn in_force(self) -> Option<usize> {
        match self {
            ReaderLimit::Max(n) => Some(n),
            _ => None,
        }
    }

    fn or_profile(self, profile: Option<usize>) -> ReaderLimit {
        match (self, profile) {
            (ReaderLimit::FromProfile, Some(n)) => ReaderLimit::Max(n),
            (ReaderLimit::FromProfile, None) => ReaderLimit::Off,
            (set, _) => set,
        }
    }
}

/// What E12 puts before an `isError` result's text for a client whose model never
/// sees `isError`.
pub const ERROR_LEAD: &str = "Error: ";

impl Default for Limit {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            tools: None,
            line_align: true,
            keep: Keep::Tail,
            keep_per_tool: BTreeMap::new(),
            max_chars: ReaderLimit::FromProfile,
            max_tokens: ReaderLimit::FromProfile,
            marks_errors: false,
            env_max_output_tokens: None,
            reserved: ReaderCount::default(),
            reads_structured: false,
            marks_structured_cuts: false,
        }
    }
}

/// Which end of an over-long text a cut keeps (SPEC L16).
///
/// - [`Keep::Tail`] (the default): logs, build output, shell scrollback — the prompt,
///   the last lines and the error at the end matter most.
/// - [`Keep::Head`]: newest-first listings (`git log`), search results ranked best
///   first, the start of a page with its title and `Contents of …` line.
/// - [`Keep::HeadAndTail`]: both — a page's start and its pagination hint at the end,
///   a listing's newest entries and its summary line. The head gets its share of the
///   room (in thousandths), the tail the rest.
///
/// Written as `tail`, `head`, `head+tail` (half each) or `head+tail:0.2` (a fifth of
/// the room for the head):
///
/// ```
/// use backstop_core::limit::Keep;
/// assert_eq!("head".parse::<Keep>(), Ok(Keep::Head));
/// assert_eq!("head+tail:0.2".parse::<Keep>(), Ok(Keep::HeadAndTail { head_per_mille: 200 }));
/// assert_eq!("head+tail".parse::<Keep>().unwrap().to_string(), "head+tail:0.5");
/// assert!("middle".parse::<Keep>().is_err());
/// assert_eq!(Keep::default(), Keep::Tail);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Keep {
    /// The tail: the head is dropped, the header line comes first.
    #[default]
    Tail,
    /// The head: the tail is dropped, the header line ends the text.
    Head,
    /// Both ends: the middle is dropped, the header line stands between them.
    HeadAndTail {
        /// The head's share of the room, in thousandths (0 to 1000).
        head_per_mille: u16,
    },
}

/// A keep policy that cannot be read (see [`Keep`]).
///
/// ```
/// let err = "head+tail:2".parse::<backstop_core::limit::Keep>().unwrap_err();
/// assert!(err.to_string().contains("head+tail:2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown keep policy {0:?}: expected tail, head, head+tail or head+tail:SHARE with SHARE from 0 to 1 (the head's share of the room)"
)]
pub struct KeepError(pub String);

impl Keep {
    /// Both ends, the head with `share` of the room (0.0 to 1.0, to a thousandth).
    ///
    /// ```
    /// use backstop_core::limit::Keep;
    /// assert_eq!(Keep::head_and_tail(0.25), Some(Keep::HeadAndTail { head_per_mille: 250 }));
    /// assert_eq!(Keep::head_and_tail(1.5), None);
    /// ```
    pub fn head_and_tail(share: f64) -> Option<Self> {
        (0.0..=1.0).contains(&share).then(|| Keep::HeadAndTail {
            head_per_mille: (share * 1000.0).round() as u16,
        })
    }
}

impl FromStr for Keep {
    type Err = KeepError;

    fn from_str(text: &str) -> Result<Self, KeepError> {
        let err = || KeepError(text.to_owned());
        match text.trim() {
            "tail" => Ok(Keep::Tail),
            "head" => Ok(Keep::Head),
            "head+tail" => Ok(Keep::HeadAndTail {
                head_per_mille: 500,
            }),
            other => {
                let share = other.strip_prefix("head+tail:").ok_or_else(err)?;
                let share: f64 = share.trim().parse().map_err(|_| err())?;
                Keep::head_and_tail(share).ok_or_else(err)
            }
        }
    }
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Keep::Tail => f.write_str("tail"),
            Keep::Head => f.write_str("head"),
            Keep::HeadAndTail { head_per_mille } => {
                write!(f, "head+tail:{}", f64::from(*head_per_mille) / 1000.0)
            }
        }
    }
}

impl Limit {
    /// A limit of `max_bytes` wire bytes for every tool, line-aligned.
    ///
    /// Refuses a cap too small to hold any truncated result, naming the minimum (L14).
    ///
    /// ```
    /// use backstop_core::Limit;
    /// assert!(Limit::new(Limit::min_bytes()).is_ok());
    /// assert!(Limit::new(Limit::min_bytes() - 1).is_err());
    /// ```
    pub fn new(max_bytes: usize) -> Result<Self, LimitError> {
        let min = Self::min_bytes();
        if max_bytes < min {
            return Err(LimitError::CapTooSmall {
                cap: max_bytes,
                min,
            });
        }
        Ok(Self {
            max_bytes,
            ..Self::default()
        })
    }

    /// The smallest cap that can hold every truncated result: the header line alone,
    /// with the largest possible count, `"isError":false` and E12's `Error: `.
    ///
    /// ```
    /// assert!(backstop_core::Limit::min_bytes() < 200);
    /// ```
    pub fn min_bytes() -> usize {
        header_only(usize::MAX, Some(false)).wire_size() + ERROR_LEAD.len()
    }

    /// Apply the limit only to the named tools (L1).
    ///
    /// ```
    /// let limit = backstop_core::Limit::default().only_tools(["capture_pane"]);
    /// assert!(!limit.applies_to("list_panes"));
    /// ```
    pub fn only_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Cut at line starts when one is near (`true`, the default), or at the longest
    /// grapheme boundary that fits (`false`) (L9).
    ///
    /// ```
    /// let limit = backstop_core::Limit::default().line_aligned(false);
    /// assert!(!limit.is_line_aligned());
    /// ```
    pub fn line_aligned(mut self, line_align: bool) -> Self {
        self.line_align = line_align;
        self
    }

    /// The cap in wire bytes.
    ///
    /// ```
    /// assert_eq!(backstop_core::Limit::new(5000).unwrap().max_bytes(), 5000);
    /// ```
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Keep `keep` of over-long texts of every tool without a policy of its own (L16).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult, limit::Keep};
    /// let listing: String = (0..10_000).rev().map(|n| format!("commit {n}\n")).collect();
    /// let limit = Limit::new(500).unwrap().with_keep(Keep::Head);
    /// let cut = limit.apply("git_log", ToolResult::text(listing));
    /// let text = cut.result.content[0].as_text().unwrap();
    /// assert!(text.starts_with("commit 9999\ncommit 9998\n"));
    /// assert!(text.ends_with(" bytes ...]"));
    /// ```
    pub fn with_keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// Keep `keep` of over-long texts of `tool` (L16), whatever the default.
    ///
    /// ```
    /// use backstop_core::{Limit, limit::Keep};
    /// let limit = Limit::default().keep_for("git_log", Keep::Head);
    /// assert_eq!(limit.keep_of("git_log"), Keep::Head);
    /// assert_eq!(limit.keep_of("capture_pane"), Keep::Tail);
    /// ```
    pub fn keep_for(mut self, tool: impl Into<String>, keep: Keep) -> Self {
        self.keep_per_tool.insert(tool.into(), keep);
        self
    }

    /// The policy for tools without one of their own.
    ///
    /// ```
    /// assert_eq!(backstop_core::Limit::default().keep(), backstop_core::limit::Keep::Tail);
    /// ```
    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// The policy for `tool`'s results.
    pub fn keep_of(&self, tool: &str) -> Keep {
        self.keep_per_tool.get(tool).copied().unwrap_or(self.keep)
    }

    /// This limit as it applies to `tool`'s results: the same, with `tool`'s own keep
    /// policy as the default (borrowed when it has none). The entry points that take
    /// no tool name ([`truncate`](Self::truncate), [`truncate_texts`](Self::truncate_texts),
    /// …) use the default policy; call them on `limit.for_tool(tool)`.
    ///
    /// ```
    /// use backstop_core::{Limit, limit::Keep};
    /// let limit = Limit::default().keep_for("git_log", Keep::Head);
    /// assert_eq!(limit.for_tool("git_log").keep(), Keep::Head);
    /// assert_eq!(limit.for_tool("other").keep(), Keep::Tail);
    /// ```
    pub fn for_tool(&self, tool: &str) -> Cow<'_, Limit> {
        match self.keep_per_tool.get(tool) {
            Some(&keep) if keep != self.keep => Cow::Owned(self.clone().with_keep(keep)),
            _ => Cow::Borrowed(self),
        }
    }

    /// Whether cuts are line-aligned.
    ///
    /// ```
    /// assert!(backstop_core::Limit::default().is_line_aligned());
    /// ```
    pub fn is_line_aligned(&self) -> bool {
        self.line_align
    }

    /// At most `max_chars` characters of text reach the reader (UTF-16 code units, as
    /// JavaScript counts them), whatever its client's profile says; `None`: no limit in
    /// characters (L2, L18). Refuses a limit too small to hold any truncated text
    /// (L14).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult};
    /// let limit = Limit::default().with_max_chars(Some(1_000)).unwrap();
    /// let cut = limit.apply("t", ToolResult::text("漢字\n".repeat(10_000)));
    /// let text = cut.result.content[0].as_text().unwrap();
    /// assert!(text.encode_utf16().count() <= 1_000);
    /// assert!(Limit::default().with_max_chars(Some(10)).is_err());
    /// ```
    pub fn with_max_chars(mut self, max_chars: Option<usize>) -> Result<Self, LimitError> {
        self.max_chars = Self::reader_limit("characters", max_chars, Self::min_chars())?;
        Ok(self)
    }

    /// At most `max_tokens` tokens of text reach the reader, by an estimate that never
    /// counts fewer than the clients' own ([`ReaderCount`](super::ReaderCount));
    /// `None`: no limit in tokens (L2, L18).
    ///
    /// ```
    /// use backstop_core::{Limit, ToolResult, limit::ReaderCount};
    /// let limit = Limit::default().with_max_tokens(Some(500)).unwrap();
    /// let cut = limit.apply("t", ToolResult::text("word ".repeat(10_000)));
    /// assert!(ReaderCount::of(cut.result.content[0].as_text().unwrap()).tokens() <= 500);
    /// ```
    pub fn with_max_tokens(mut self, max_tokens: Option<usize>) -> Result<Self, LimitError> {
        self.max_tokens = Self::reader_limit("tokens", max_tokens, Self::min_tokens())?;
        Ok(self)
    }

    fn reader_limit(
        unit: &'static str,
        limit: Option<usize>,
        min: usize,
    ) -> Result<ReaderLimit, LimitError> {
        match limit {
            None => Ok(ReaderLimit::Off),
            Some(limit) if limit < min => Err(LimitError::ReaderLimitTooSmall { unit, limit, min }),
            Some(limit) => Ok(ReaderLimit::Max(limit)),
        }
    }

    /// The smallest limit in characters that can hold every truncated text: the
    /// longest header line, after E12's `Error: `.
    ///
    /// ```
    /// assert!(backstop_core::Limit::min_chars() < 64);
    /// ```
    pub fn min_chars() -> usize {
        super::cutter::header(usize::MAX).len() + ERROR_LEAD.len()
    }

    /// The smallest limit in tokens that can hold every truncated text.
    pub fn min_tokens() -> usize {
        Self::min_chars().div_ceil(4)
    }

    /// The limit in characters in force (`None`: none, or one the client's profile
    /// will set: see [`for_client`](Self::for_client)).
    ///
    /// ```
    /// let limit = backstop_core::Limit::default().with_max_chars(Some(40_000)).unwrap();
    /// assert_eq!(limit.max_chars(), Some(40_000));
    /// ```
    pub fn max_chars(&self) -> Option<usize> {
        self.max_chars.in_force()
    }

    /// The limit in tokens in force (see [`max_chars`](Self::max_chars)).
    pub fn max_tokens(&self) -> Option<usize> {
        self.max_tokens.in_force()
    }

    /// Whether the reader's limits count a result's `structuredContent` too (its
    /// compact JSON: the client may read it in place of the text, L18).
    pub fn counts_structured_content(&self) -> bool {
        self.reads_structured
    }

    /// Whether an `isError` result's text is made to start with `Error: ` (E12: the
    /// client's model never sees `isError`).
    pub fn marks_errors(&self) -> bool {
        self.marks_errors
    }

    /// Follow `MAX_MCP_OUTPUT_TOKENS` (read from the environment by the adapter) where
    /// a client's profile says the client does (Claude Code, L18).
    ///
    /// ```
    /// use backstop_core::{Limit, protocol::ClientInfo};
    /// let limit = Limit::default().with_max_output_tokens_env(Some(8_000));
    /// let claude = ClientInfo::new("claude-code", "2.1.328");
    /// assert_eq!(limit.for_client(Some(&claude)).max_tokens(), Some(8_000));
    /// ```
    pub fn with_max_output_tokens_env(mut self, tokens: Option<usize>) -> Self {
        self.env_max_output_tokens = tokens.filter(|&t| t >= Self::min_tokens());
        self
    }

    /// This limit for the client that reads the result (L2, L18, E12): a reader's
    /// limit not set explicitly comes from the client's profile
    /// ([`ClientProfile::for_client`](super::ClientProfile::for_client)), and errors
    /// are marked where its model never sees `isError`.
    ///
    /// ```
    /// use backstop_core::{Limit, protocol::ClientInfo};
    /// let codex = ClientInfo::new("codex-mcp-client", "0.169.0");
    /// let limit = Limit::default().for_client(Some(&codex));
    /// assert!(limit.max_tokens().is_some() && limit.marks_errors());
    /// // An explicit limit wins over the profile.
    /// let explicit = Limit::default().with_max_tokens(None).unwrap().for_client(Some(&codex));
    /// assert_eq!(explicit.max_tokens(), None);
    /// ```
    pub fn for_client(&self, client: Option<&ClientInfo>) -> Limit {
        let profile = super::ClientProfile::for_client(client.map(|c| c.name.as_str()));
        let tokens = match (profile.tokens_env, self.env_max_output_tokens) {
            (Some(_), Some(env)) => Some(env),
            _ => profile.max_tokens,
        };
        let mut limit = self.clone();
        limit.max_chars = self.max_chars.or_profile(profile.max_chars);
        limit.max_tokens = self.max_tokens.or_profile(tokens);
        limit.marks_errors = !profile.shows_is_error;
        // A client without a profile may read either: both are counted.
        let unknown = profile == super::ClientProfile::UNKNOWN;
        limit.reads_structured = profile.reads_structured_content || unknown;
        limit.marks_structured_cuts = profile.reads_structured_content;
        limit
    }

    /// The room the reader's limits in force leave.
    pub(super) fn reader_room(&self) -> ReaderRoom {
        ReaderRoom::new(self.max_chars(), self.max_tokens()).keeping(self.reserved)
    }

    /// Whether the limit applies to results of `tool` (L1).
    ///
    /// ```
    /// assert!(backstop_core::Limit::default().applies_to("any_tool"));
    /// ```
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| tools.contains(tool))
    }
}
