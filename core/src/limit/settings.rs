//! The settings of a response limit: the cap, the tools it applies to, which end of
//! an over-long text each tool keeps, and whether cuts are line-aligned (SPEC L1, L2,
//! L9, L14, L16).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use super::DEFAULT_MAX_BYTES;
use super::cutter::header_only;

/// A response limit that cannot be configured.
///
/// ```
/// use backstop_core::{Limit, LimitError};
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
}

impl Default for Limit {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            tools: None,
            line_align: true,
            keep: Keep::Tail,
            keep_per_tool: BTreeMap::new(),
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
    /// with the largest possible count and `"isError":false`.
    ///
    /// ```
    /// assert!(backstop_core::Limit::min_bytes() < 200);
    /// ```
    pub fn min_bytes() -> usize {
        header_only(usize::MAX, Some(false)).wire_size()
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

    /// Whether the limit applies to results of `tool` (L1).
    ///
    /// ```
    /// assert!(backstop_core::Limit::default().applies_to("any_tool"));
    /// ```
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| tools.contains(tool))
    }
}
