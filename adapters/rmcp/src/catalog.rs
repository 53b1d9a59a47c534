//! The wrapped server's tools, as its `tools/list` says, kept between calls.
//!
//! This module translates: it runs the inner handler's `list_tools` page by page and
//! hands each page to the core's [`ToolCatalog::learn_page`], which decides what the
//! listing has learnt, when it is complete and when to stop ([`MAX_LISTING_PAGES`]).
//! Filled on the first tool call (or when the client lists the tools), and listed
//! again whenever the core's [`ToolCatalog::lookup`] says it cannot judge a name —
//! a server may add tools as it runs, a listing may have failed on a page, its caching
//! hint may have run out (R5) — before that call could be answered as an unknown tool
//! (E8).
//!
//! [`MAX_LISTING_PAGES`]: backstop_core::catalog::MAX_LISTING_PAGES

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use backstop_core::call::ToolCatalog;
use backstop_core::catalog::{ListingStep, ToolLookup};
use rmcp::model::{ListToolsResult, PaginatedRequestParams};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

/// The catalog kept between calls, shared by the wrapper's clones.
#[derive(Debug, Default)]
pub(crate) struct CatalogCache(Mutex<Option<Arc<ToolCatalog>>>);

impl CatalogCache {
    fn get(&self) -> Option<Arc<ToolCatalog>> {
        self.lock().clone()
    }

    fn set(&self, catalog: Arc<ToolCatalog>) {
        *self.lock() = Some(catalog);
    }

    /// Keep what a client's own listing (one whole page: no cursor in, none out) said.
    pub(crate) fn store_listing(&self, result: &ListToolsResult) {
        if let Ok(value) = serde_json::to_value(result) {
            let mut catalog = ToolCatalog::new();
            catalog.learn_page(&value, true, Instant::now());
            self.set(Arc::new(catalog));
        }
    }

    /// The catalog to decide a call of `tool` with: the kept one where the core says
    /// it knows the name, else a fresh listing of the inner handler. The wrapper does
    /// not hear the inner server's `list_changed`, and a listing in process costs
    /// little, so a name the kept catalog lacks is always listed for before E8 (R5).
    pub(crate) async fn for_call<S: ServerHandler>(
        &self,
        tool: &str,
        inner: &S,
        context: &RequestContext<RoleServer>,
    ) -> Arc<ToolCatalog> {
        if let Some(catalog) = self.get()
            && catalog.lookup(tool, Instant::now()) == ToolLookup::Known
        {
            return catalog;
        }
        let fresh = Arc::new(list_all(inner, context).await);
        self.set(fresh.clone());
        fresh
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<ToolCatalog>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// List the inner handler's tools, every page the core asks for. A page that fails
/// leaves the catalog incomplete: the core then calls no tool unknown from it.
async fn list_all<S: ServerHandler>(
    inner: &S,
    context: &RequestContext<RoleServer>,
) -> ToolCatalog {
    let mut catalog = ToolCatalog::new();
    let mut request: Option<PaginatedRequestParams> = None;
    let mut first_page = true;
    loop {
        let Ok(page) = inner.list_tools(request.take(), context.clone()).await else {
            catalog.invalidate();
            return catalog;
        };
        let Ok(value) = serde_json::to_value(&page) else {
            catalog.invalidate();
            return catalog;
        };
        match catalog.learn_page(&value, first_page, Instant::now()) {
            ListingStep::Next(cursor) => {
                let cursor = cursor.as_str().map(str::to_owned);
                request = Some(PaginatedRequestParams::default().with_cursor(cursor));
                first_page = false;
            }
            ListingStep::Complete | ListingStep::Stop => return catalog,
        }
    }
}
