//! The tool catalog: what `tools/list` said of a server's tools, and how far it can be
//! trusted (SPEC E8, L15, R5).
//!
//! A catalog is learnt page by page ([`ToolCatalog::learn_page`](crate::ToolCatalog::learn_page)); it is *complete*
//! once a listing has been followed from its first page to one without `nextCursor`,
//! and *fresh* while its caching hint (the least `ttlMs` of its pages, counted from the
//! first page, 2026-07-28) has not
//! run out and no `notifications/tools/list_changed` has said otherwise
//! ([`ToolCatalog::invalidate`](crate::ToolCatalog::invalidate)). Only a complete, fresh catalog may call a tool unknown
//! ([`ToolCatalog::lookup`](crate::ToolCatalog::lookup)): anything less means "list again first". Every adapter —
//! the byte-level shaper, rmcp, Python — asks the same questions of it, with the same
//! page limit ([`MAX_LISTING_PAGES`]).
//!
//! There is no clock here: the time a page was learnt and the time of a question are
//! passed in ([`Instant`](std::time::Instant)), so that a test can move time as it likes.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use backstop_core::ToolCatalog;
//! use backstop_core::catalog::{ListingStep, ToolLookup};
//! use serde_json::json;
//!
//! let start = Instant::now();
//! let mut catalog = ToolCatalog::new();
//! let page = json!({"tools": [{"name": "capture_pane"}], "nextCursor": "2"});
//! assert_eq!(catalog.learn_page(&page, true, start), ListingStep::Next(json!("2")));
//! // Half a listing: nothing is unknown yet.
//! assert_eq!(catalog.lookup("list_panes", start), ToolLookup::ListFirst);
//!
//! let last = json!({"tools": [{"name": "list_panes"}], "ttlMs": 60000});
//! assert_eq!(catalog.learn_page(&last, false, start), ListingStep::Complete);
//! assert_eq!(catalog.lookup("list_pane", start), ToolLookup::Unknown);
//! assert_eq!(catalog.lookup("list_panes", start), ToolLookup::Known);
//! // A minute later the hint has run out: list again before deciding.
//! let later = start + Duration::from_secs(61);
//! assert_eq!(catalog.lookup("list_pane", later), ToolLookup::ListFirst);
//! ```
//!
//! The catalog itself, [`ToolCatalog`](crate::ToolCatalog), is at the crate root; its
//! answers and bounds are here.

pub use crate::tool_catalog::{
    CacheScope, Completeness, ListingStep, MAX_LISTING_PAGES, ToolLookup,
};
