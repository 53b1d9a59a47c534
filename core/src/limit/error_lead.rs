//! E12: for a client whose model never sees `isError` (its profile says so, L18), an
//! `isError` result's first text block starts with `Error: `, so that the model can
//! tell a failure from an answer.
//!
//! The lead is counted in every limit (L4, L18): the cut runs with room kept for it,
//! and it goes before whatever the text starts with — the header line of a cut (L3)
//! included. A text that already starts with it is left as it is (L11).
//!
//! ```
//! use backstop_core::{Limit, ToolResult, protocol::ClientInfo};
//! let codex = Limit::default().for_client(Some(&ClientInfo::new("codex-mcp-client", "0.169.0")));
//! let mut failed = ToolResult::text("Pane not found: %5");
//! failed.is_error = Some(true);
//! let marked = codex.apply("capture_pane", failed.clone());
//! assert_eq!(marked.result.content[0].as_text(), Some("Error: Pane not found: %5"));
//! // Limiting it again changes nothing; a client that shows isError gets the text as it is.
//! assert_eq!(codex.apply("capture_pane", marked.result.clone()).result, marked.result);
//! assert_eq!(Limit::default().apply("capture_pane", failed.clone()).result, failed);
//! ```

use super::reader::ReaderCount;
use super::{ERROR_LEAD, Limit, Limited};
use crate::result::{Content, ToolResult};

impl Limit {
    /// Run `cut` (a decision of this limit on `result`: `None` to send it as it is)
    /// with E12 applied: where the lead is due, the cut runs with room for it and the
    /// lead is put in, on the result `whole` gives when nothing is cut.
    /// `first` is the result's first text (where its texts are held apart, the first
    /// of those).
    pub(super) fn with_error_lead<E>(
        &self,
        result: &ToolResult,
        first: Option<&str>,
        whole: impl FnOnce() -> ToolResult,
        cut: impl Fn(&Limit) -> Result<Option<Limited>, E>,
    ) -> Result<Option<Limited>, E> {
        if !self.marks_errors || !result.is_error() || first.is_none() {
            return cut(self);
        }
        if first.is_some_and(|text| text.starts_with(ERROR_LEAD)) {
            match cut(self)? {
                None => return Ok(None),
                Some(limited) if starts_with_lead(&limited.result) => return Ok(Some(limited)),
                Some(_) => {}
            }
        }
        let limited = cut(&self.reserving_lead())?.unwrap_or_else(|| Limited {
            result: whole(),
            truncation: None,
            error_lead: false,
        });
        Ok(Some(limited.with_lead()))
    }

    /// This limit with room kept for the lead in every unit.
    fn reserving_lead(&self) -> Limit {
        let mut limit = self.clone();
        limit.max_bytes -= ERROR_LEAD.len();
        limit.reserved = limit.reserved.plus(ReaderCount::ascii(ERROR_LEAD.len()));
        limit
    }
}

impl Limited {
    /// The result with the lead before its first text (E12).
    fn with_lead(mut self) -> Limited {
        if let Some(text) = self
            .result
            .content
            .iter_mut()
            .find_map(|block| match block {
                Content::Text(block) => Some(&mut block.text),
                Content::Other(_) => None,
            })
            && !text.starts_with(ERROR_LEAD)
        {
            text.insert_str(0, ERROR_LEAD);
            self.error_lead = true;
        }
        self
    }
}

/// The text of a result's first text block.
pub(super) fn first_text(result: &ToolResult) -> Option<&str> {
    result.content.iter().find_map(Content::as_text)
}

fn starts_with_lead(result: &ToolResult) -> bool {
    first_text(result).is_some_and(|text| text.starts_with(ERROR_LEAD))
}
