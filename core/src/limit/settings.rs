//! The settings of a response limit: the cap, the tools it applies to, and whether
//! cuts are line-aligned (SPEC L1, L2, L9, L14).

use std::collections::BTreeSet;

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
}

impl Default for Limit {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            tools: None,
            line_align: true,
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
