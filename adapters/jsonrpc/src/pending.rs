//! The table of requests the client sent and the server has not answered yet.
//!
//! It is bounded (SPEC B2): when it is full, the *oldest* pending request is evicted
//! to make room. The evicted request's response, if it ever comes, is forwarded as
//! it came — unshaped, but never lost. The default bound, [`DEFAULT_MAX_PENDING`],
//! is far above what any client keeps in flight.

use std::collections::{BTreeMap, HashMap};

use backstop_core::Session;

use crate::message::RequestId;

/// The default bound of the pending-request table.
///
/// ```
/// assert_eq!(backstop_jsonrpc::Shaper::default().pending().max(), backstop_jsonrpc::pending::DEFAULT_MAX_PENDING);
/// ```
pub const DEFAULT_MAX_PENDING: usize = 4096;

/// What a pending request was, as far as shaping its response needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestKind {
    /// `initialize`: its result says the revision in force.
    Initialize,
    /// `tools/list`: its result is the tool catalog; `first_page` without a cursor.
    ToolsList {
        /// Whether the request had no `cursor`.
        first_page: bool,
    },
    /// `tools/call` of `tool` with these argument names (never values, V3).
    ToolsCall {
        /// `params.name`.
        tool: String,
        /// The names of `params.arguments`, in order.
        arguments: Vec<String>,
    },
    /// A `resources/*` request, with its `params.uri` when it had one.
    Resource {
        /// The method (`resources/read`, …).
        method: String,
        /// `params.uri`.
        uri: Option<String>,
    },
    /// Any other method.
    Other,
}

/// One pending request.
///
/// ```
/// use backstop_jsonrpc::pending::{PendingRequest, RequestKind};
/// let request = PendingRequest::new("1", RequestKind::Other, Default::default());
/// assert!(!request.cancelled);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRequest {
    /// The id as the client wrote it (raw JSON), to answer with.
    pub id_json: String,
    /// What the request was.
    pub kind: RequestKind,
    /// The client and revision in force for this request (R2, R3).
    pub session: Session,
    /// Whether the client cancelled it (E9: its response then passes untouched).
    pub cancelled: bool,
}

impl PendingRequest {
    /// A request not cancelled.
    ///
    /// ```
    /// use backstop_jsonrpc::pending::{PendingRequest, RequestKind};
    /// let request = PendingRequest::new("\"a\"", RequestKind::Initialize, Default::default());
    /// assert_eq!(request.id_json, "\"a\"");
    /// ```
    pub fn new(id_json: impl Into<String>, kind: RequestKind, session: Session) -> Self {
        Self {
            id_json: id_json.into(),
            kind,
            session,
            cancelled: false,
        }
    }
}

/// Pending requests by id, bounded, oldest evicted first.
///
/// ```
/// use backstop_jsonrpc::message::RequestId;
/// use backstop_jsonrpc::pending::{PendingRequest, PendingRequests, RequestKind};
///
/// let mut table = PendingRequests::new(2);
/// let id = |n: u32| RequestId::Number(n.to_string());
/// for n in 1..=3 {
///     table.insert(id(n), PendingRequest::new(n.to_string(), RequestKind::Other, Default::default()));
/// }
/// assert_eq!(table.len(), 2);
/// assert!(table.remove(&id(1)).is_none(), "the oldest was evicted");
/// assert_eq!(table.remove(&id(3)).unwrap().id_json, "3");
/// assert_eq!(table.evicted(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct PendingRequests {
    max: usize,
    by_id: HashMap<RequestId, (u64, PendingRequest)>,
    by_age: BTreeMap<u64, RequestId>,
    next: u64,
    evicted: u64,
}

impl Default for PendingRequests {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PENDING)
    }
}

impl PendingRequests {
    /// An empty table holding at most `max` requests (at least one).
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::pending::PendingRequests::new(0).max(), 1);
    /// ```
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            by_id: HashMap::new(),
            by_age: BTreeMap::new(),
            next: 0,
            evicted: 0,
        }
    }

    /// Remember a request. A request with the id of one still pending replaces it.
    /// When the table is full, the oldest request is evicted and returned.
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// use backstop_jsonrpc::pending::{PendingRequest, PendingRequests, RequestKind};
    /// let mut table = PendingRequests::new(1);
    /// let request = |id: &str| PendingRequest::new(id, RequestKind::Other, Default::default());
    /// assert!(table.insert(RequestId::Number("1".into()), request("1")).is_none());
    /// assert_eq!(table.insert(RequestId::Number("2".into()), request("2")).unwrap().id_json, "1");
    /// ```
    pub fn insert(&mut self, id: RequestId, request: PendingRequest) -> Option<PendingRequest> {
        if let Some((age, _)) = self.by_id.remove(&id) {
            self.by_age.remove(&age);
        }
        let mut evicted = None;
        if self.by_id.len() >= self.max
            && let Some((_, oldest)) = self.by_age.pop_first()
        {
            evicted = self.by_id.remove(&oldest).map(|(_, request)| request);
            self.evicted += 1;
        }
        let age = self.next;
        self.next += 1;
        self.by_age.insert(age, id.clone());
        self.by_id.insert(id, (age, request));
        evicted
    }

    /// Forget a request and return it (its response came).
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// use backstop_jsonrpc::pending::{PendingRequest, PendingRequests, RequestKind};
    /// let mut table = PendingRequests::new(1);
    /// let request = |id: &str| PendingRequest::new(id, RequestKind::Other, Default::default());
    /// table.insert(RequestId::Number("1".into()), request("1"));
    /// assert!(table.remove(&RequestId::String("1".into())).is_none());
    /// assert!(table.remove(&RequestId::Number("1".into())).is_some());
    /// ```
    pub fn remove(&mut self, id: &RequestId) -> Option<PendingRequest> {
        let (age, request) = self.by_id.remove(id)?;
        self.by_age.remove(&age);
        Some(request)
    }

    /// A pending request.
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// use backstop_jsonrpc::pending::{PendingRequest, PendingRequests, RequestKind};
    /// let mut table = PendingRequests::new(1);
    /// table.insert(RequestId::Number("1".into()), PendingRequest::new("1", RequestKind::Other, Default::default()));
    /// assert_eq!(table.get(&RequestId::Number("1".into())).unwrap().kind, RequestKind::Other);
    /// ```
    pub fn get(&self, id: &RequestId) -> Option<&PendingRequest> {
        self.by_id.get(id).map(|(_, request)| request)
    }

    /// A pending request, to mark it (cancelled).
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// use backstop_jsonrpc::pending::{PendingRequest, PendingRequests, RequestKind};
    /// let mut table = PendingRequests::new(1);
    /// let request = |id: &str| PendingRequest::new(id, RequestKind::Other, Default::default());
    /// table.insert(RequestId::Number("1".into()), request("1"));
    /// table.get_mut(&RequestId::Number("1".into())).unwrap().cancelled = true;
    /// ```
    pub fn get_mut(&mut self, id: &RequestId) -> Option<&mut PendingRequest> {
        self.by_id.get_mut(id).map(|(_, request)| request)
    }

    /// Take every pending request, oldest first.
    ///
    /// ```
    /// use backstop_jsonrpc::message::RequestId;
    /// use backstop_jsonrpc::pending::{PendingRequest, PendingRequests, RequestKind};
    /// let mut table = PendingRequests::default();
    /// for id in ["b", "a"] {
    ///     table.insert(RequestId::String(id.into()), PendingRequest::new(format!("{id:?}"), RequestKind::Other, Default::default()));
    /// }
    /// let ids: Vec<_> = table.drain().into_iter().map(|r| r.id_json).collect();
    /// assert_eq!(ids, ["\"b\"", "\"a\""]);
    /// assert!(table.is_empty());
    /// ```
    pub fn drain(&mut self) -> Vec<PendingRequest> {
        let order = std::mem::take(&mut self.by_age);
        let mut by_id = std::mem::take(&mut self.by_id);
        order
            .into_values()
            .filter_map(|id| by_id.remove(&id).map(|(_, request)| request))
            .collect()
    }

    /// The pending requests, in no particular order.
    ///
    /// ```
    /// use backstop_jsonrpc::pending::PendingRequests;
    /// assert_eq!(PendingRequests::default().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = &PendingRequest> {
        self.by_id.values().map(|(_, request)| request)
    }

    /// How many requests are pending.
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::pending::PendingRequests::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether none is pending.
    ///
    /// ```
    /// assert!(backstop_jsonrpc::pending::PendingRequests::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// How many requests were evicted since the table was made.
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::pending::PendingRequests::default().evicted(), 0);
    /// ```
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The bound.
    ///
    /// ```
    /// assert_eq!(backstop_jsonrpc::pending::PendingRequests::default().max(), backstop_jsonrpc::pending::DEFAULT_MAX_PENDING);
    /// ```
    pub fn max(&self) -> usize {
        self.max
    }
}
