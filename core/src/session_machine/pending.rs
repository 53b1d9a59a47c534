//! The requests the client sent and the server has not answered yet, and what each
//! one was (SPEC B2).
//!
//! The table is bounded: when it is full, the *oldest* pending request is evicted to
//! make room. Its answer, if it ever comes, passes as it came — unshaped, never lost.
//! [`DEFAULT_MAX_PENDING`] is far above what any client keeps in flight.
//!
//! ```
//! use backstop_core::machine::{PendingRequest, PendingRequests, RequestId, RequestKind};
//! use backstop_core::protocol::Session;
//! let mut pending = PendingRequests::new(1);
//! pending.insert(RequestId::Number("1".into()), PendingRequest::new("1", RequestKind::Other, Session::default()));
//! let evicted = pending.insert(RequestId::Number("2".into()), PendingRequest::new("2", RequestKind::Other, Session::default()));
//! assert_eq!(evicted.unwrap().id_json, "1");
//! assert_eq!((pending.len(), pending.evicted()), (1, 1));
//! ```

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::arguments::ArgumentShapes;
use crate::session::Session;

/// The default bound on pending requests.
pub const DEFAULT_MAX_PENDING: usize = 4096;

/// A request id as the table keys it. JSON-RPC ids are numbers or strings; `1` and
/// `"1"` are different ids, and `null` is no id to track. A number is kept as the text
/// serde_json writes it.
///
/// ```
/// use backstop_core::machine::RequestId;
/// assert_eq!(RequestId::from_value(&serde_json::json!(7)), Some(RequestId::Number("7".into())));
/// assert_eq!(RequestId::from_value(&serde_json::json!("7")), Some(RequestId::String("7".into())));
/// assert_eq!(RequestId::from_value(&serde_json::json!(null)), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A number id.
    Number(String),
    /// A string id.
    String(String),
}

impl RequestId {
    /// The id a JSON value is, if it is one.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::Number(n) => Some(RequestId::Number(n.to_string())),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }
}

/// What a pending request was, as far as its answer's shaping cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestKind {
    /// `initialize`: its result says the negotiated revision (R3).
    Initialize,
    /// `tools/list`: its result fills the catalog (E8, L15).
    ToolsList {
        /// Whether it asked for the first page (no `cursor`).
        first_page: bool,
    },
    /// `tools/call`: its answer is shaped (E, V, L).
    ToolsCall {
        /// The tool called.
        tool: String,
        /// The argument names given (V4, V6).
        arguments: Vec<String>,
        /// The shapes of the argument values given, when known (V2, V3).
        argument_shapes: Option<ArgumentShapes>,
    },
    /// `tasks/get` of a task a `tools/call` created (2026-07-28): the outcome inside
    /// its result is shaped as the call's would have been (L1, E11).
    TaskState {
        /// The tool the task runs.
        tool: String,
    },
    /// `resources/*`: its error is mapped (P1, R3).
    Resource {
        /// The method.
        method: String,
        /// The request's `uri`, if any.
        uri: Option<String>,
    },
    /// Anything else: its answer passes as it came.
    Other,
}

impl RequestKind {
    /// Whether an answer to a request of this kind may be changed or read: `result`
    /// says whether the answer is a result (else an error). A cancelled request's
    /// answer is never changed (E9).
    ///
    /// ```
    /// use backstop_core::machine::RequestKind;
    /// let read = RequestKind::Resource { method: "resources/read".into(), uri: None };
    /// assert!(read.answer_matters(false), "its error is mapped (P1, R3)");
    /// assert!(!read.answer_matters(true), "its result passes");
    /// assert!(!RequestKind::Other.answer_matters(true));
    /// ```
    pub fn answer_matters(&self, result: bool) -> bool {
        match self {
            RequestKind::Other => false,
            RequestKind::Resource { .. } => !result,
            RequestKind::Initialize
            | RequestKind::ToolsList { .. }
            | RequestKind::TaskState { .. } => result,
            RequestKind::ToolsCall { .. } => true,
        }
    }
}

/// One request waiting for its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRequest {
    /// The id as the client wrote it (JSON text), to answer with.
    pub id_json: String,
    /// What the request was.
    pub kind: RequestKind,
    /// What was known of the session when it was sent (R2, R3: per request on
    /// 2026-07-28).
    pub session: Session,
    /// The client cancelled it: its answer passes as it came (E9).
    pub cancelled: bool,
    /// In process, its tool raised that it is unknown and the machine listed the tools
    /// again for it ([`Answer::ListFirst`](super::Answer::ListFirst)): not a second time.
    pub relisted: bool,
}

impl PendingRequest {
    /// A request not cancelled.
    pub fn new(id_json: impl Into<String>, kind: RequestKind, session: Session) -> Self {
        Self {
            id_json: id_json.into(),
            kind,
            session,
            cancelled: false,
            relisted: false,
        }
    }

    /// Whether its answer may be changed or read (see [`RequestKind::answer_matters`]).
    pub fn answer_matters(&self, result: bool) -> bool {
        !self.cancelled && self.kind.answer_matters(result)
    }
}

/// The bounded table of pending requests, oldest first.
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
    /// A table of at most `max` requests (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            by_id: HashMap::new(),
            by_age: BTreeMap::new(),
            next: 0,
            evicted: 0,
        }
    }

    /// Remember a request; a request with the same id is replaced. Returns the oldest
    /// request, evicted when the table was full.
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

    /// Forget a request (it was answered), returning what it was.
    pub fn remove(&mut self, id: &RequestId) -> Option<PendingRequest> {
        let (age, request) = self.by_id.remove(id)?;
        self.by_age.remove(&age);
        Some(request)
    }

    /// What a pending request was.
    pub fn get(&self, id: &RequestId) -> Option<&PendingRequest> {
        self.by_id.get(id).map(|(_, request)| request)
    }

    /// What a pending request was, to change (mark it cancelled).
    pub fn get_mut(&mut self, id: &RequestId) -> Option<&mut PendingRequest> {
        self.by_id.get_mut(id).map(|(_, request)| request)
    }

    /// Every pending request, oldest first; the table is left empty.
    pub fn drain(&mut self) -> Vec<PendingRequest> {
        let order = std::mem::take(&mut self.by_age);
        let mut by_id = std::mem::take(&mut self.by_id);
        order
            .into_values()
            .filter_map(|id| by_id.remove(&id).map(|(_, request)| request))
            .collect()
    }

    /// The pending requests, in no order.
    pub fn iter(&self) -> impl Iterator<Item = &PendingRequest> {
        self.by_id.values().map(|(_, request)| request)
    }

    /// How many requests are pending.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// How many requests were evicted to make room (B2).
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The bound.
    pub fn max(&self) -> usize {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> RequestId {
        RequestId::Number(n.to_string())
    }

    fn request(n: u32) -> PendingRequest {
        PendingRequest::new(n.to_string(), RequestKind::Other, Session::default())
    }

    #[test]
    fn the_oldest_is_evicted_and_replacing_an_id_does_not_age_it() {
        let mut pending = PendingRequests::new(2);
        assert!(pending.is_empty() && pending.evicted() == 0);
        assert!(pending.insert(id(1), request(1)).is_none());
        assert!(pending.insert(id(2), request(2)).is_none());
        assert!(!pending.is_empty() && pending.len() == 2 && pending.evicted() == 0);
        // Same id again: replaced, no eviction, and now the newest.
        assert!(pending.insert(id(1), request(1)).is_none());
        let evicted = pending.insert(id(3), request(3)).unwrap();
        assert_eq!(evicted.id_json, "2");
        assert_eq!(pending.evicted(), 1);
        assert_eq!(pending.insert(id(4), request(4)).unwrap().id_json, "1");
        assert_eq!(pending.evicted(), 2);
        assert!(pending.remove(&id(4)).is_some() && pending.get(&id(4)).is_none());
        pending.insert(id(1), request(1));
        let order: Vec<String> = pending.drain().into_iter().map(|r| r.id_json).collect();
        assert_eq!(order, ["3", "1"], "oldest first");
        assert!(pending.is_empty());
    }

    #[test]
    fn ids_are_numbers_or_strings_and_never_confused() {
        let number = RequestId::from_value(&serde_json::json!(1)).unwrap();
        let string = RequestId::from_value(&serde_json::json!("1")).unwrap();
        assert_eq!(number, RequestId::Number("1".into()));
        assert_eq!(string, RequestId::String("1".into()));
        assert_ne!(number, string);
        for not_an_id in [
            serde_json::json!(null),
            serde_json::json!([1]),
            serde_json::json!({}),
        ] {
            assert_eq!(RequestId::from_value(&not_an_id), None);
        }
    }

    #[test]
    fn a_cancelled_request_s_answer_never_matters() {
        let call = RequestKind::ToolsCall {
            tool: "t".into(),
            arguments: vec![],
            argument_shapes: None,
        };
        let mut request = PendingRequest::new("1", call, Session::default());
        assert!(request.answer_matters(true) && request.answer_matters(false));
        request.cancelled = true;
        assert!(!request.answer_matters(true) && !request.answer_matters(false));
        assert!(RequestKind::Initialize.answer_matters(true));
        assert!(!RequestKind::Initialize.answer_matters(false));
        assert!(RequestKind::ToolsList { first_page: true }.answer_matters(true));
    }
}
