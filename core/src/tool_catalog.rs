//! The tool catalog behind [`crate::catalog`] (see its docs).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::arguments::CallContext;
use crate::error_result::unknown_tool;
use crate::protocol_error::ProtocolError;

/// The most pages one listing follows: past it the catalog stays incomplete, so no tool
/// is called unknown from it (B2: a server whose cursors never end cannot keep an
/// adapter listing forever). The same in every adapter.
///
/// ```
/// assert_eq!(backstop_core::catalog::MAX_LISTING_PAGES, 1000);
/// ```
pub const MAX_LISTING_PAGES: usize = 1000;

/// How far a catalog's listing has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Completeness {
    /// No listing seen, or the tool list changed since (`list_changed`), or a listing
    /// failed or stopped at [`MAX_LISTING_PAGES`].
    #[default]
    Unknown,
    /// Some pages of a listing that started at its first page: more are to come.
    Partial {
        /// How many pages were learnt.
        pages: usize,
    },
    /// A whole listing, first page to last.
    Complete,
}

/// Whom a listing may be shared with (`cacheScope`, 2026-07-28): `private` to the
/// credential that listed, `public` to every caller of the same server.
///
/// ```
/// use backstop_core::catalog::CacheScope;
/// assert_eq!(CacheScope::from_result(&serde_json::json!({"cacheScope": "public"})), Some(CacheScope::Public));
/// assert_eq!(CacheScope::from_result(&serde_json::json!({})), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// For the authorization context that listed only.
    Private,
    /// The same for every caller.
    Public,
}

impl CacheScope {
    /// The `cacheScope` a listing's result declares, if any.
    pub fn from_result(result: &Value) -> Option<CacheScope> {
        match result.get("cacheScope")?.as_str()? {
            "private" => Some(CacheScope::Private),
            "public" => Some(CacheScope::Public),
            _ => None,
        }
    }
}

/// What the next step of a listing is, after a page ([`ToolCatalog::learn_page`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListingStep {
    /// Ask for the next page with this cursor.
    Next(Value),
    /// The listing is whole: the catalog is complete.
    Complete,
    /// Stop: the page was no `tools/list` result, came without its first page, or
    /// was one past [`MAX_LISTING_PAGES`]. The catalog stays incomplete.
    Stop,
}

/// What a catalog can say of one tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolLookup {
    /// Listed, and the listing is fresh.
    Known,
    /// Not in a complete, fresh listing: E8 may call it unknown.
    Unknown,
    /// The catalog cannot say: it is incomplete or stale, so the adapter lists the
    /// tools again before deciding (R5) — or, where it cannot, decides nothing.
    ListFirst,
}

/// The tools a server has, as its `tools/list` answers said: names, input schemas,
/// output schemas (which the limit keeps `structuredContent` valid against, L15), how
/// complete the listing is and how long it stays fresh.
///
/// ```
/// use backstop_core::ToolCatalog;
/// let catalog = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [
///     {"name": "takes_int", "inputSchema": {"type": "object",
///      "properties": {"count": {"type": "integer"}}, "required": ["count"]}}
/// ]}));
/// assert!(catalog.contains("takes_int") && catalog.is_complete());
/// let call = catalog.context("takes_int");
/// assert_eq!(call.parameters.unwrap(), ["count"]);
/// assert!(catalog.output_schema("takes_int").is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCatalog {
    /// Shared by clones until one of them changes it: the gateway hands a clone to
    /// each stateless request's shaper (R5), which must cost no copy of every schema.
    tools: Arc<BTreeMap<String, Schemas>>,
    completeness: Completeness,
    /// When the listing's first page was learnt, and its `ttlMs` (none: fresh until the
    /// list changes).
    learnt: Option<(Instant, Option<Duration>)>,
    scope: Option<CacheScope>,
    /// The server said its tool list changed since the listing (R5).
    changed: bool,
}

/// What a `tools/list` entry says of one tool's arguments and output.
#[derive(Debug, Clone, Default, PartialEq)]
struct Schemas {
    /// Shared with the call contexts made from it.
    input: Arc<Value>,
    output: Option<Value>,
}

impl ToolCatalog {
    /// An empty catalog: nothing is known, so no tool is unknown.
    ///
    /// ```
    /// assert!(backstop_core::ToolCatalog::new().check("anything").is_ok());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The tools of one whole `tools/list` result (`{"tools": [{"name", "inputSchema"},
    /// …]}`): complete unless it has a `nextCursor`. Without a clock, it never goes
    /// stale; [`learn_page`](Self::learn_page) honours `ttlMs`.
    ///
    /// ```
    /// use backstop_core::ToolCatalog;
    /// let page = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [], "nextCursor": "x"}));
    /// assert!(!page.is_complete());
    /// ```
    pub fn from_tools_list(result: &Value) -> Self {
        let mut catalog = Self::new();
        catalog.add_tools(result);
        catalog.completeness = match next_cursor(result) {
            None => Completeness::Complete,
            Some(_) => Completeness::Partial { pages: 1 },
        };
        catalog.scope = CacheScope::from_result(result);
        catalog
    }

    /// Learn one page of a listing, learnt at `now`: a first page starts the catalog
    /// anew (its time and `cacheScope` are the listing's; the least `ttlMs` of the
    /// listing's pages is its lifetime); a further page adds to a
    /// listing under way. Returns what to do next. A page that is no `tools/list`
    /// result, a further page with no listing under way, or a page past
    /// [`MAX_LISTING_PAGES`] leaves the catalog incomplete ([`ListingStep::Stop`]).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{ToolCatalog, catalog::ListingStep};
    /// let mut catalog = ToolCatalog::new();
    /// let page2 = serde_json::json!({"tools": [{"name": "b"}]});
    /// // A second page without a first: the catalog cannot be complete.
    /// assert_eq!(catalog.learn_page(&page2, false, Instant::now()), ListingStep::Stop);
    /// assert!(!catalog.is_complete() && catalog.contains("b"));
    /// ```
    pub fn learn_page(&mut self, result: &Value, first_page: bool, now: Instant) -> ListingStep {
        if first_page {
            self.tools = Arc::default();
            self.changed = false;
            self.completeness = Completeness::Partial { pages: 0 };
            self.learnt = Some((now, None));
            self.scope = CacheScope::from_result(result);
        }
        // The listing is as fresh as its least fresh page, counted from the first.
        let ttl = result
            .get("ttlMs")
            .and_then(Value::as_u64)
            .map(Duration::from_millis);
        if let (Some((_, kept)), Some(ttl)) = (&mut self.learnt, ttl) {
            *kept = Some(kept.map_or(ttl, |kept| kept.min(ttl)));
        }
        if !result.get("tools").is_some_and(Value::is_array) {
            self.completeness = Completeness::Unknown;
            return ListingStep::Stop;
        }
        self.add_tools(result);
        let Completeness::Partial { pages } = self.completeness else {
            self.completeness = Completeness::Unknown;
            return ListingStep::Stop;
        };
        let pages = pages + 1;
        match next_cursor(result) {
            None => {
                self.completeness = Completeness::Complete;
                ListingStep::Complete
            }
            Some(_) if pages >= MAX_LISTING_PAGES => {
                self.completeness = Completeness::Unknown;
                ListingStep::Stop
            }
            Some(cursor) => {
                self.completeness = Completeness::Partial { pages };
                ListingStep::Next(cursor.clone())
            }
        }
    }

    /// A listing under way failed (an error answer, no answer): what was learnt stays
    /// (its schemas still serve L15), but the catalog is no longer complete.
    ///
    /// ```
    /// let mut catalog = backstop_core::ToolCatalog::from_tools_list(&serde_json::json!({"tools": [{"name": "a"}]}));
    /// catalog.invalidate();
    /// assert!(catalog.contains("a") && catalog.check("b").is_ok());
    /// ```
    pub fn invalidate(&mut self) {
        self.completeness = Completeness::Unknown;
    }

    /// The server said its tool list changed (`notifications/tools/list_changed`):
    /// the catalog is incomplete and no longer fresh, so that every entry is listed
    /// again before it decides anything (R5).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{ToolCatalog, catalog::ToolLookup};
    /// let mut catalog = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [{"name": "a"}]}));
    /// assert_eq!(catalog.lookup("a", Instant::now()), ToolLookup::Known);
    /// catalog.tools_changed();
    /// assert_eq!(catalog.lookup("a", Instant::now()), ToolLookup::ListFirst);
    /// ```
    pub fn tools_changed(&mut self) {
        self.invalidate();
        self.changed = true;
    }

    /// Add the tools of one more `tools/list` result (a further page) without a
    /// listing's bookkeeping. Entries without a string `name` are skipped.
    ///
    /// ```
    /// use backstop_core::ToolCatalog;
    /// let mut catalog = ToolCatalog::new();
    /// catalog.extend_from_tools_list(&serde_json::json!({"tools": [{"name": "a"}, {"oops": 1}]}));
    /// assert_eq!(catalog.names().collect::<Vec<_>>(), ["a"]);
    /// ```
    pub fn extend_from_tools_list(&mut self, result: &Value) {
        self.add_tools(result);
    }

    fn add_tools(&mut self, result: &Value) {
        let tools = result.get("tools").and_then(Value::as_array);
        for tool in tools.into_iter().flatten() {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let schemas = Schemas {
                    input: Arc::new(tool.get("inputSchema").cloned().unwrap_or(Value::Null)),
                    output: tool.get("outputSchema").filter(|s| s.is_object()).cloned(),
                };
                Arc::make_mut(&mut self.tools).insert(name.to_owned(), schemas);
            }
        }
    }

    /// Add one tool with its input schema.
    ///
    /// ```
    /// let mut catalog = backstop_core::ToolCatalog::new();
    /// catalog.insert("ping", &serde_json::json!({"type": "object"}));
    /// assert!(catalog.contains("ping"));
    /// ```
    pub fn insert(&mut self, name: impl Into<String>, input_schema: &Value) {
        let schemas = Schemas {
            input: Arc::new(input_schema.clone()),
            output: None,
        };
        Arc::make_mut(&mut self.tools).insert(name.into(), schemas);
    }

    /// Whether the catalog lists the tool.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// How far the listing has come.
    pub fn completeness(&self) -> Completeness {
        self.completeness
    }

    /// Whether a whole listing has been learnt (and not invalidated since).
    pub fn is_complete(&self) -> bool {
        self.completeness == Completeness::Complete
    }

    /// Whether the listing is still fresh at `now`: its `ttlMs` has not run out and the
    /// server has not said its tool list changed since (a listing without a `ttlMs`
    /// stays fresh until then).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let mut catalog = backstop_core::ToolCatalog::new();
    /// let now = Instant::now();
    /// catalog.learn_page(&serde_json::json!({"tools": [], "ttlMs": 0}), true, now);
    /// assert!(!catalog.is_fresh(now + Duration::from_millis(1)));
    /// ```
    pub fn is_fresh(&self, now: Instant) -> bool {
        if self.changed {
            return false;
        }
        match self.learnt {
            Some((at, Some(ttl))) => {
                now.saturating_duration_since(at) <= ttl && ttl > Duration::ZERO
            }
            _ => true,
        }
    }

    /// The listing's `cacheScope`, if it declared one.
    pub fn scope(&self) -> Option<CacheScope> {
        self.scope
    }

    /// Whether this listing may serve a later request (R5): complete and fresh at
    /// `now`, and — when that request comes with another credential than the listing
    /// did (`same_credential` false) — declared `cacheScope: "public"`. A listing
    /// without a scope is the credential's own, as a private one is.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::ToolCatalog;
    /// let now = Instant::now();
    /// let private = ToolCatalog::from_tools_list(&serde_json::json!({"tools": []}));
    /// assert!(private.may_serve(true, now) && !private.may_serve(false, now));
    /// let public = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [], "cacheScope": "public"}));
    /// assert!(public.may_serve(false, now));
    /// ```
    pub fn may_serve(&self, same_credential: bool, now: Instant) -> bool {
        self.is_complete()
            && self.is_fresh(now)
            && (same_credential || self.scope == Some(CacheScope::Public))
    }

    /// What this catalog can say of `tool` at `now` (see [`ToolLookup`]).
    pub fn lookup(&self, tool: &str, now: Instant) -> ToolLookup {
        let fresh = self.is_fresh(now);
        match (self.contains(tool), self.is_complete() && fresh) {
            (true, _) if fresh => ToolLookup::Known,
            (false, true) => ToolLookup::Unknown,
            _ => ToolLookup::ListFirst,
        }
    }

    /// The names of the listed tools, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The input schema of a tool, when known.
    pub fn input_schema(&self, name: &str) -> Option<&Value> {
        self.tools.get(name).map(|s| &*s.input)
    }

    /// The output schema a tool advertises, when known (L15).
    ///
    /// ```
    /// use backstop_core::ToolCatalog;
    /// let catalog = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [
    ///     {"name": "report", "inputSchema": {"type": "object"},
    ///      "outputSchema": {"type": "object", "properties": {"log": {"type": "string"}}}}
    /// ]}));
    /// assert_eq!(catalog.output_schema("report").unwrap()["properties"]["log"]["type"], "string");
    /// ```
    pub fn output_schema(&self, name: &str) -> Option<&Value> {
        self.tools.get(name)?.output.as_ref()
    }

    /// A call context for `tool` with its parameters from the input schema, when known.
    /// Add the call's argument names and the client with the `with_*` builders.
    pub fn context(&self, tool: &str) -> CallContext {
        let call = CallContext::new(tool);
        // A schema that is no object names no parameters: `with_input_schema` leaves
        // them unknown.
        match self.tools.get(tool) {
            Some(schemas) => call.with_shared_input_schema(Arc::clone(&schemas.input)),
            None => call,
        }
    }

    /// E8: the protocol error for a tool this catalog does not list, when the catalog
    /// is complete (freshness is the adapter's to ask, with [`lookup`](Self::lookup));
    /// an incomplete catalog calls nothing unknown.
    ///
    /// ```
    /// use backstop_core::ToolCatalog;
    /// let catalog = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [{"name": "list_panes"}]}));
    /// assert_eq!(catalog.check("list_pane").unwrap_err().data.unwrap()["suggestion"],
    ///            "Did you mean 'list_panes'?");
    /// assert!(catalog.check("list_panes").is_ok());
    /// assert!(ToolCatalog::new().check("anything").is_ok());
    /// ```
    pub fn check(&self, tool: &str) -> Result<(), ProtocolError> {
        if !self.is_complete() || self.contains(tool) {
            Ok(())
        } else {
            Err(unknown_tool(tool, self.names()))
        }
    }
}

/// A listing result's `nextCursor`, when it has one that is not null.
fn next_cursor(result: &Value) -> Option<&Value> {
    result.get("nextCursor").filter(|cursor| !cursor.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(names: &[&str], cursor: Option<&str>) -> Value {
        let tools: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        match cursor {
            Some(c) => json!({"tools": tools, "nextCursor": c}),
            None => json!({"tools": tools}),
        }
    }

    #[test]
    fn r5_a_listing_serves_a_later_request_only_complete_fresh_and_in_its_scope() {
        let now = Instant::now();
        let listed = |extra: Value| {
            let mut result = page(&["a"], None);
            result
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let mut catalog = ToolCatalog::new();
            catalog.learn_page(&result, true, now);
            catalog
        };
        let unscoped = listed(json!({}));
        assert!(unscoped.may_serve(true, now), "its own credential");
        assert!(
            !unscoped.may_serve(false, now),
            "no scope: the credential's own"
        );
        let private = listed(json!({"cacheScope": "private"}));
        assert!(private.may_serve(true, now) && !private.may_serve(false, now));
        let public = listed(json!({"cacheScope": "public"}));
        assert!(public.may_serve(false, now) && public.may_serve(true, now));
        let stale = listed(json!({"cacheScope": "public", "ttlMs": 10}));
        assert!(
            !stale.may_serve(true, now + Duration::from_secs(1)),
            "past its ttlMs"
        );
        let mut partial = ToolCatalog::new();
        partial.learn_page(&page(&["a"], Some("2")), true, now);
        assert!(!partial.may_serve(true, now), "incomplete");
    }

    #[test]
    fn a_listing_is_complete_only_when_followed_from_its_first_page_to_its_last() {
        let now = Instant::now();
        let mut catalog = ToolCatalog::new();
        assert_eq!(catalog.lookup("a", now), ToolLookup::ListFirst);
        assert_eq!(
            catalog.learn_page(&page(&["a"], Some("2")), true, now),
            ListingStep::Next(json!("2"))
        );
        assert_eq!(catalog.completeness(), Completeness::Partial { pages: 1 });
        assert!(catalog.check("b").is_ok(), "E8 waits for the whole listing");
        assert_eq!(
            catalog.learn_page(&page(&["b"], None), false, now),
            ListingStep::Complete
        );
        assert_eq!(catalog.lookup("a", now), ToolLookup::Known);
        assert_eq!(catalog.lookup("b", now), ToolLookup::Known);
        assert_eq!(catalog.lookup("c", now), ToolLookup::Unknown);
        assert!(catalog.check("c").is_err());
        // A new first page starts over: "a" is gone from the server.
        catalog.learn_page(&page(&["b"], None), true, now);
        assert!(!catalog.contains("a"));
        assert_eq!(catalog.lookup("a", now), ToolLookup::Unknown);
    }

    #[test]
    fn a_failed_or_endless_listing_calls_nothing_unknown() {
        let now = Instant::now();
        let mut catalog = ToolCatalog::new();
        catalog.learn_page(&page(&["a"], Some("2")), true, now);
        assert_eq!(
            catalog.learn_page(&json!({"error": "boom"}), false, now),
            ListingStep::Stop
        );
        assert_eq!(catalog.lookup("z", now), ToolLookup::ListFirst);
        assert_eq!(catalog.lookup("a", now), ToolLookup::Known);

        let mut endless = ToolCatalog::new();
        let mut step = endless.learn_page(&page(&[], Some("c")), true, now);
        let mut pages = 1;
        while let ListingStep::Next(_) = step {
            step = endless.learn_page(&page(&[], Some("c")), false, now);
            pages += 1;
        }
        assert_eq!((step, pages), (ListingStep::Stop, MAX_LISTING_PAGES));
        assert_eq!(endless.lookup("z", now), ToolLookup::ListFirst);
    }

    #[test]
    fn the_caching_hint_bounds_what_is_known() {
        let now = Instant::now();
        let mut catalog = ToolCatalog::new();
        let listing = json!({"tools": [{"name": "a"}], "ttlMs": 1000, "cacheScope": "private"});
        assert_eq!(
            catalog.learn_page(&listing, true, now),
            ListingStep::Complete
        );
        assert_eq!(catalog.scope(), Some(CacheScope::Private));
        let within = now + Duration::from_millis(1000);
        let after = now + Duration::from_millis(1001);
        assert_eq!(catalog.lookup("a", within), ToolLookup::Known);
        assert_eq!(catalog.lookup("b", within), ToolLookup::Unknown);
        assert_eq!(catalog.lookup("a", after), ToolLookup::ListFirst);
        assert_eq!(catalog.lookup("b", after), ToolLookup::ListFirst);
        // ttlMs 0: stale at once (the SDKs' default: "do not reuse").
        catalog.learn_page(&json!({"tools": [], "ttlMs": 0}), true, now);
        assert_eq!(catalog.lookup("b", now), ToolLookup::ListFirst);
        // Pages of one listing: the least lifetime, from the first page's time.
        let first = json!({"tools": [], "ttlMs": 5000, "nextCursor": "2"});
        catalog.learn_page(&first, true, now);
        let later = now + Duration::from_millis(500);
        catalog.learn_page(&json!({"tools": [], "ttlMs": 1000}), false, later);
        catalog.learn_page(&json!({"tools": [], "ttlMs": 3000}), true, now);
        assert_eq!(
            catalog.lookup("b", now + Duration::from_millis(2999)),
            ToolLookup::Unknown,
            "a new listing"
        );
        catalog.learn_page(&first, true, now);
        catalog.learn_page(&json!({"tools": [], "ttlMs": 1000}), false, later);
        assert_eq!(
            catalog.lookup("b", now + Duration::from_millis(1000)),
            ToolLookup::Unknown
        );
        assert_eq!(
            catalog.lookup("b", now + Duration::from_millis(1001)),
            ToolLookup::ListFirst
        );
    }

    #[test]
    fn r5_a_clone_shares_the_tools_until_either_changes_them() {
        let kept = ToolCatalog::from_tools_list(&page(&["a", "b"], None));
        let mut request = kept.clone();
        assert!(Arc::ptr_eq(&kept.tools, &request.tools), "no copy");
        request.insert("c", &json!({"type": "object"}));
        assert!(
            request.contains("c") && !kept.contains("c"),
            "the kept one unchanged"
        );
        let mut relisted = kept.clone();
        relisted.learn_page(&page(&["z"], None), true, Instant::now());
        assert!(relisted.contains("z") && !relisted.contains("a"));
        assert!(kept.contains("a") && !kept.contains("z"), "nor cleared");
    }

    #[test]
    fn what_a_catalog_says_of_each_tool() {
        let mut catalog = ToolCatalog::new();
        assert!(catalog.is_empty());
        let input = json!({"type": "object", "properties": {"count": {}}});
        let output = json!({"type": "object"});
        catalog.extend_from_tools_list(&json!({"tools": [
            {"name": "a", "inputSchema": input, "outputSchema": output},
            {"name": "b", "outputSchema": "not a schema"}
        ]}));
        catalog.insert("c", &json!({"type": "object"}));
        assert!(!catalog.is_empty());
        assert_eq!(catalog.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(catalog.input_schema("a"), Some(&input));
        assert_eq!(catalog.input_schema("b"), Some(&Value::Null));
        assert_eq!(catalog.input_schema("z"), None);
        assert_eq!(catalog.output_schema("a"), Some(&output));
        assert_eq!(
            catalog.output_schema("b"),
            None,
            "only an object is a schema"
        );
        assert_eq!(catalog.output_schema("c"), None);
        assert_eq!(catalog.context("a").parameters.unwrap(), ["count"]);
        assert!(
            catalog.context("b").parameters.is_none(),
            "no schema, no parameters"
        );
        assert!(
            !catalog.is_complete(),
            "tools added by hand make no listing"
        );
        let public = json!({"tools": [], "cacheScope": "public"});
        assert_eq!(CacheScope::from_result(&public), Some(CacheScope::Public));
        assert_eq!(
            CacheScope::from_result(&json!({"cacheScope": "shared"})),
            None
        );
        assert_eq!(
            ToolCatalog::from_tools_list(&public).scope(),
            Some(CacheScope::Public)
        );
    }

    #[test]
    fn list_changed_makes_the_catalog_incomplete() {
        let now = Instant::now();
        let mut catalog = ToolCatalog::from_tools_list(&page(&["a"], None));
        assert_eq!(catalog.lookup("b", now), ToolLookup::Unknown);
        catalog.invalidate();
        assert_eq!(catalog.lookup("b", now), ToolLookup::ListFirst);
        assert_eq!(
            catalog.learn_page(&page(&["b"], None), false, now),
            ListingStep::Stop,
            "a further page cannot complete an invalidated listing"
        );
    }
}
