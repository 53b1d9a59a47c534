//! backstop's own `tools/list` as the shaper writes it (SPEC E8, R5).
//!
//! The core's [`SessionMachine`](backstop_core::SessionMachine) decides when to list,
//! reads the listing's answers, and holds the server messages that wait for it, within
//! its bounds and its patience (`backstop_core::machine::MAX_HELD_MESSAGES`,
//! `MAX_HELD_BYTES`, `LISTING_PATIENCE`); the shaper writes its requests and decides the
//! held messages again when they are released.

/// The start of the ids of backstop's own `tools/list` requests.
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::LISTING_ID_PREFIX, "backstop/tools/list#");
/// ```
pub use backstop_core::machine::OWN_LISTING_ID_PREFIX as LISTING_ID_PREFIX;

/// The most pages one listing follows, the same in every adapter.
///
/// ```
/// assert_eq!(backstop_jsonrpc::listing::MAX_PAGES, backstop_core::catalog::MAX_LISTING_PAGES);
/// ```
pub use backstop_core::catalog::MAX_LISTING_PAGES as MAX_PAGES;
