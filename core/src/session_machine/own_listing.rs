//! backstop's own `tools/list`: what it takes to call a tool unknown (SPEC E8) on the
//! first `tools/call` of a session, before the client has listed the tools (R5).
//!
//! The requests go to the server under ids of their own ([`OWN_LISTING_ID_PREFIX`]
//! and a number: strings no client picks by chance), page by page along `nextCursor`
//! (at most [`MAX_LISTING_PAGES`](crate::catalog::MAX_LISTING_PAGES), as every
//! listing), and their answers are read, never forwarded. This module keeps the
//! listing's state; the [`SessionMachine`](super::SessionMachine) decides when to list.

use serde_json::{Map, Value};

use super::pending::RequestId;

/// The prefix of the ids of backstop's own listing requests.
pub const OWN_LISTING_ID_PREFIX: &str = "backstop/tools/list#";

/// A request backstop sends of its own: the adapter writes it with its transport's
/// framing (and, over HTTP, the headers its revision requires).
///
/// ```
/// use backstop_core::machine::{OwnRequest, RequestId};
/// let request = OwnRequest { id: RequestId::String("backstop/tools/list#1".into()),
///     method: "tools/list", params: serde_json::Map::new() };
/// assert_eq!(request.to_json(), r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OwnRequest {
    /// Its id (a string with [`OWN_LISTING_ID_PREFIX`]).
    pub id: RequestId,
    /// Its method.
    pub method: &'static str,
    /// Its params (none written when empty).
    pub params: Map<String, Value>,
}

impl OwnRequest {
    /// The `cursor` of the page it asks for (`None`: the first page).
    pub fn cursor(&self) -> Option<&Value> {
        self.params.get("cursor")
    }

    /// The request as one line of JSON, `jsonrpc` first as clients write it.
    pub fn to_json(&self) -> String {
        let id = match &self.id {
            RequestId::String(id) => Value::from(id.as_str()),
            RequestId::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        };
        let mut out = String::from(r#"{"jsonrpc":"2.0","id":"#);
        out.push_str(&id.to_string());
        out.push_str(r#","method":"#);
        out.push_str(&Value::from(self.method).to_string());
        if !self.params.is_empty() {
            out.push_str(r#","params":"#);
            out.push_str(&Value::Object(self.params.clone()).to_string());
        }
        out.push('}');
        out
    }
}

/// Where backstop's own listing is.
#[derive(Debug, Clone, Default)]
pub(crate) struct OwnListing {
    requests_sent: u64,
    /// The page in flight: its id and whether it is the first.
    page: Option<(String, bool)>,
    /// The `_meta` its requests carry (a client without a handshake's, 2026-07-28).
    meta: Option<Map<String, Value>>,
    /// It failed or was given up: no new one until the tool list changes.
    failed: bool,
}

impl OwnListing {
    /// Start a listing: its first page's request.
    pub(crate) fn start(&mut self, meta: Option<Map<String, Value>>) -> OwnRequest {
        self.meta = meta;
        self.failed = false;
        self.request(None)
    }

    /// The request for the page after `cursor`.
    pub(crate) fn next_page(&mut self, cursor: Value) -> OwnRequest {
        self.request(Some(cursor))
    }

    fn request(&mut self, cursor: Option<Value>) -> OwnRequest {
        self.requests_sent += 1;
        let id = format!("{OWN_LISTING_ID_PREFIX}{}", self.requests_sent);
        let first = cursor.is_none();
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor);
        }
        if let Some(meta) = &self.meta {
            params.insert("_meta".into(), Value::Object(meta.clone()));
        }
        self.page = Some((id.clone(), first));
        OwnRequest {
            id: RequestId::String(id),
            method: "tools/list",
            params,
        }
    }

    /// Whether `id` is the page in flight.
    pub(crate) fn answers(&self, id: &RequestId) -> bool {
        matches!((&self.page, id), (Some((page, _)), RequestId::String(id)) if id == page)
    }

    /// Whether the page in flight is the first.
    pub(crate) fn first_page(&self) -> bool {
        self.page.as_ref().is_some_and(|(_, first)| *first)
    }

    pub(crate) fn in_flight(&self) -> bool {
        self.page.is_some()
    }

    /// A number that changes with each page: what server messages wait for.
    #[cfg(test)]
    pub(crate) fn requests_sent(&self) -> u64 {
        self.requests_sent
    }

    pub(crate) fn finish(&mut self) {
        self.page = None;
    }

    pub(crate) fn fail(&mut self) {
        self.finish();
        self.failed = true;
    }

    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    pub(crate) fn tools_changed(&mut self) {
        self.failed = false;
    }
}
