//! The wrapped server's tools, as its `tools/list` says, kept between calls.
//!
//! Filled on the first tool call (or when the client lists the tools), and read
//! again when a call names a tool the kept list does not have — a server may add
//! tools as it runs — before that call is answered as an unknown tool (E8).

use std::sync::{Arc, Mutex, PoisonError};

use backstop_core::call::ToolCatalog;
use rmcp::model::{ListToolsResult, PaginatedRequestParams};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

/// Pages of `tools/list` read at most, so that a server whose cursors never end
/// cannot hold a call forever.
const MAX_PAGES: usize = 64;

/// The kept tool list of one wrapped server.
#[derive(Debug, Default)]
pub(crate) struct CatalogCache(Mutex<Option<Arc<ToolCatalog>>>);

impl CatalogCache {
    fn get(&self) -> Option<Arc<ToolCatalog>> {
        self.lock().clone()
    }

    fn set(&self, catalog: Arc<ToolCatalog>) {
        *self.lock() = Some(catalog);
    }

    /// Keep what a complete (single-page) `tools/list` answer says.
    pub(crate) fn store_listing(&self, result: &ListToolsResult) {
        if let Ok(value) = serde_json::to_value(result) {
            self.set(Arc::new(ToolCatalog::from_tools_list(&value)));
        }
    }

    /// The catalog to decide a call of `tool` with: the kept one when it knows the
    /// tool, else a fresh listing from the inner handler.
    pub(crate) async fn for_call<S: ServerHandler>(
        &self,
        tool: &str,
        inner: &S,
        context: &RequestContext<RoleServer>,
    ) -> Arc<ToolCatalog> {
        if let Some(catalog) = self.get()
            && catalog.contains(tool)
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

/// Every page of the inner handler's `tools/list`. A failing listing ends the read:
/// what was read so far is the catalog (none: no tool is unknown).
async fn list_all<S: ServerHandler>(
    inner: &S,
    context: &RequestContext<RoleServer>,
) -> ToolCatalog {
    let mut catalog = ToolCatalog::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let request = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let Ok(page) = inner.list_tools(request, context.clone()).await else {
            break;
        };
        if let Ok(value) = serde_json::to_value(&page) {
            catalog.extend_from_tools_list(&value);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    catalog
}
