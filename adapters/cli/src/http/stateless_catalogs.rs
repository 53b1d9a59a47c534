//! The tool listings the gateway keeps for stateless requests (SPEC R5): a 2026-07-28
//! request without a session gets a shaper of its own, which starts from the last
//! complete listing made with the same credential (the `Authorization` header's
//! value, or none) — or from one the server declared `cacheScope: "public"`, made
//! with any — as long as it is fresh ([`ToolCatalog::may_serve`]). So E8 and L15 hold
//! from the first stateless call on, and the listing costs one extra round trip per
//! credential and `ttlMs`, not one per call.
//!
//! At most [`MAX_CREDENTIALS`] credentials' listings are kept; the least recently
//! used goes first. Credentials are kept in memory only, never logged.
//!
//! ```
//! use std::time::Instant;
//! use backstop::http::stateless_catalogs::StatelessCatalogs;
//! use backstop_core::ToolCatalog;
//! let catalogs = StatelessCatalogs::default();
//! let listing = ToolCatalog::from_tools_list(&serde_json::json!({"tools": [{"name": "t"}]}));
//! let alice = http::HeaderValue::from_static("Bearer alice");
//! catalogs.keep(Some(&alice), listing);
//! let now = Instant::now();
//! assert!(catalogs.for_request(Some(&alice), now).is_some());
//! assert!(catalogs.for_request(None, now).is_none(), "private to its credential");
//! ```

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use backstop_core::ToolCatalog;
use http::HeaderValue;

use super::lock;

/// How many credentials' listings are kept at most.
pub const MAX_CREDENTIALS: usize = 1024;

/// The listings kept, by credential; see the [module docs](self).
#[derive(Debug, Default)]
pub struct StatelessCatalogs {
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_credential: HashMap<Option<HeaderValue>, (ToolCatalog, Instant)>,
    /// The last listing the server declared public, made with any credential.
    public: Option<ToolCatalog>,
}

impl StatelessCatalogs {
    /// The listing a request made with `credential` may start from at `now`, if any.
    pub fn for_request(
        &self,
        credential: Option<&HeaderValue>,
        now: Instant,
    ) -> Option<ToolCatalog> {
        let mut kept = lock(&self.inner);
        if let Some((catalog, used)) = kept.by_credential.get_mut(&credential.cloned())
            && catalog.may_serve(true, now)
        {
            *used = now;
            return Some(catalog.clone());
        }
        kept.public
            .as_ref()
            .filter(|catalog| catalog.may_serve(false, now))
            .cloned()
    }

    /// Keep a complete listing made with `credential`.
    pub fn keep(&self, credential: Option<&HeaderValue>, catalog: ToolCatalog) {
        if !catalog.is_complete() {
            return;
        }
        let now = Instant::now();
        let mut kept = lock(&self.inner);
        if catalog.may_serve(false, now) {
            kept.public = Some(catalog.clone());
        }
        let key = credential.cloned();
        if !kept.by_credential.contains_key(&key) && kept.by_credential.len() >= MAX_CREDENTIALS {
            let oldest = kept
                .by_credential
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                kept.by_credential.remove(&oldest);
            }
        }
        kept.by_credential.insert(key, (catalog, now));
    }

    /// How many credentials' listings are kept.
    pub fn len(&self) -> usize {
        lock(&self.inner).by_credential.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn listing(extra: serde_json::Value) -> ToolCatalog {
        let mut result = serde_json::json!({"tools": [{"name": "t"}]});
        result
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let mut catalog = ToolCatalog::new();
        catalog.learn_page(&result, true, Instant::now());
        catalog
    }

    #[test]
    fn r5_a_public_listing_serves_every_credential_a_private_one_its_own() {
        let catalogs = StatelessCatalogs::default();
        let (alice, bob) = (
            HeaderValue::from_static("Bearer alice"),
            HeaderValue::from_static("Bearer bob"),
        );
        let now = Instant::now();
        catalogs.keep(
            Some(&alice),
            listing(serde_json::json!({"cacheScope": "private"})),
        );
        assert!(catalogs.for_request(Some(&alice), now).is_some());
        assert!(catalogs.for_request(Some(&bob), now).is_none());
        catalogs.keep(
            Some(&alice),
            listing(serde_json::json!({"cacheScope": "public"})),
        );
        assert!(catalogs.for_request(Some(&bob), now).is_some());
    }

    #[test]
    fn r5_a_stale_or_incomplete_listing_serves_nobody() {
        let catalogs = StatelessCatalogs::default();
        catalogs.keep(None, listing(serde_json::json!({"ttlMs": 10})));
        let later = Instant::now() + Duration::from_secs(1);
        assert!(
            catalogs.for_request(None, later).is_none(),
            "past its ttlMs"
        );
        let partial = listing(serde_json::json!({"nextCursor": "2"}));
        catalogs.keep(Some(&HeaderValue::from_static("x")), partial);
        assert_eq!(catalogs.len(), 1, "an incomplete listing is not kept");
    }

    #[test]
    fn r5_the_least_recently_used_credential_goes_first() {
        let catalogs = StatelessCatalogs::default();
        let first = HeaderValue::from_static("Bearer 0");
        catalogs.keep(Some(&first), listing(serde_json::json!({})));
        for n in 1..=MAX_CREDENTIALS {
            let credential = HeaderValue::from_str(&format!("Bearer {n}")).unwrap();
            catalogs.keep(Some(&credential), listing(serde_json::json!({})));
        }
        assert_eq!(catalogs.len(), MAX_CREDENTIALS);
        assert!(catalogs.for_request(Some(&first), Instant::now()).is_none());
    }
}
