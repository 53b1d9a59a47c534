//! The decisions a streaming adapter needs before a server message has been read
//! whole: whether it must be read at all, whether it passes as it comes, whether it
//! is cut without being held (B3, B4, B5).

use super::pending::{RequestId, RequestKind};
use super::{SessionMachine, TASK_STATUS};

impl SessionMachine {
    /// Whether the answer to request `id` must be read and handed to
    /// [`server_response`](Self::server_response) (`result`: whether it is a result):
    /// false when nothing depends on it, so it passes unread.
    pub fn answer_matters(&self, id: &RequestId, result: bool) -> bool {
        self.pending
            .get(id)
            .is_some_and(|request| request.answer_matters(result))
    }

    /// Whether a server message whose top-level `id` or `method` is known can be sent
    /// on before the rest of it is read: nothing about it can need a change (B3).
    /// `result`: it is a result, not an error. A response that passes so is no longer
    /// pending; a `list_changed` notification is taken in.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// let (read, call) = (RequestId::Number("1".into()), RequestId::Number("2".into()));
    /// let mut request = ClientRequest::new(read.clone(), "1", "resources/read");
    /// request.uri = Some("a".into());
    /// machine.client_request(request, false, Instant::now());
    /// machine.client_request(ClientRequest::new(call.clone(), "2", "tools/call").tool("t"), false, Instant::now());
    /// assert!(machine.passes_early(None, Some("notifications/message"), false));
    /// assert!(!machine.passes_early(Some(&call), None, true), "a tools/call result may be cut");
    /// assert!(!machine.passes_early(Some(&read), None, false), "a resources/read error may be mapped (R3)");
    /// assert!(machine.passes_early(Some(&read), None, true), "its result needs nothing");
    /// assert!(!machine.passes_early(None, None, true), "a result, its id not known yet");
    /// ```
    pub fn passes_early(
        &mut self,
        id: Option<&RequestId>,
        method: Option<&str>,
        result: bool,
    ) -> bool {
        if self.listing.in_flight() {
            return false; // its order is the listing's to keep
        }
        if let Some(method) = method {
            self.server_notification(method);
            // A task's state may carry its call's outcome (L1, E11).
            return method != TASK_STATUS || self.tasks.is_empty();
        }
        let Some(id) = id else {
            // A result whose id comes later: it needs nothing if no pending request's
            // result could, and it cannot be one to drop (B5).
            return result
                && !self.may_drop_answers()
                && !self.pending.iter().any(|r| r.answer_matters(true));
        };
        let passes = self.answer_passes(id, result);
        if passes {
            self.pending.remove(id);
        }
        passes
    }

    /// Whether an answer to `id` (a result, or an error) may be sent as it came: it
    /// needs no change and is not one to drop (B5). Unlike
    /// [`passes_early`](Self::passes_early), it leaves the request pending: for an
    /// adapter that sends a message it could not read as a response, whose reading
    /// says later which request it answers.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// let read = RequestId::Number("4".into());
    /// machine.client_request(ClientRequest::new(read.clone(), "4", "resources/read"), false, Instant::now());
    /// assert!(machine.answer_passes(&read, true));
    /// assert_eq!(machine.pending().len(), 1, "still pending");
    /// machine.answer_here(&read);
    /// assert!(!machine.answer_passes(&read, true), "answered here: dropped");
    /// ```
    pub fn answer_passes(&self, id: &RequestId, result: bool) -> bool {
        !self.answer_matters(id, result) && !self.drops_answer(id)
    }

    /// Whether the answer to `id`, a result of which `bytes` have come, is one an
    /// adapter cuts without holding it (SPEC B3, B4): the result of a pending
    /// `tools/call` the limit applies to, not cancelled, already over the cap —
    /// whether or not a listing of backstop's own is in flight: an answer is never held
    /// whole for it (B3), and is cut with what is known of its tool when it ends. The
    /// adapter then holds only what a cut keeps; if the answer turns out not to be
    /// JSON, or one the kept parts cannot decide, it is answered with an error for its
    /// id, never sent as it came.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// use backstop_core::Limit;
    /// let mut machine = SessionMachine::new(Limit::new(1_000).unwrap().only_tools(["logs"]));
    /// let (logs, other) = (RequestId::Number("1".into()), RequestId::Number("2".into()));
    /// machine.client_request(ClientRequest::new(logs.clone(), "1", "tools/call").tool("logs"), false, Instant::now());
    /// machine.client_request(ClientRequest::new(other.clone(), "2", "tools/call").tool("other"), false, Instant::now());
    /// assert!(machine.cuts_unheld(&logs, 1_001));
    /// assert!(!machine.cuts_unheld(&logs, 1_000), "not over the cap yet");
    /// assert!(!machine.cuts_unheld(&other, 5_000), "a tool the limit leaves alone");
    /// machine.client_notification("notifications/cancelled", Some(&logs));
    /// assert!(!machine.cuts_unheld(&logs, 5_000), "passed as it came (E9)");
    /// ```
    pub fn cuts_unheld(&self, id: &RequestId, bytes: u64) -> bool {
        let Some(request) = self.pending.get(id) else {
            return false;
        };
        let RequestKind::ToolsCall { tool, .. } = &request.kind else {
            return false;
        };
        !request.cancelled && self.limit.applies_to(tool) && bytes > self.limit.max_bytes() as u64
    }

    /// Whether `id` is a pending `tools/call`: its answer is shaped with the catalog (an
    /// adapter holds it while backstop's own listing is in flight).
    pub fn is_pending_tool_call(&self, id: &RequestId) -> bool {
        self.pending
            .get(id)
            .is_some_and(|request| matches!(request.kind, RequestKind::ToolsCall { .. }))
    }

    /// The tool a pending `tools/call` calls (or whose task a pending `tasks/get` asks
    /// after), if `id` is one: a streaming adapter holds of its result what the tool's
    /// keep policy can keep
    /// ([`Limit::held_ends`](crate::Limit::held_ends), L16).
    pub fn pending_tool(&self, id: &RequestId) -> Option<&str> {
        match &self.pending.get(id)?.kind {
            RequestKind::ToolsCall { tool, .. } | RequestKind::TaskState { tool } => Some(tool),
            _ => None,
        }
    }

    /// Whether an answer of the server for request `id` is dropped: backstop answered
    /// that request itself, and a second answer must never reach the client (B5).
    pub fn drops_answer(&self, id: &RequestId) -> bool {
        self.answered_here.contains(id) && self.pending.get(id).is_none()
    }

    /// Whether any answer of the server could be dropped ([`drops_answer`](Self::drops_answer)).
    pub fn may_drop_answers(&self) -> bool {
        !self.answered_here.is_empty()
    }

    /// Whether a server message must be read to know what to send for it: a request
    /// is pending (its answer may be shaped), a listing of backstop's own is in flight
    /// (its answers are read), a task is known (its state, in a `notifications/tasks`,
    /// carries its call's outcome, L1, E11), or an answer may be dropped (B5). When
    /// none holds, only `notifications/tools/list_changed` changes what the machine
    /// knows, and every other message passes unread.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::machine::{ClientRequest, RequestId, SessionMachine};
    /// let mut machine = SessionMachine::default();
    /// assert!(!machine.reads_server_messages());
    /// machine.client_request(ClientRequest::new(RequestId::Number("1".into()), "1", "ping"), false, Instant::now());
    /// assert!(machine.reads_server_messages());
    /// ```
    pub fn reads_server_messages(&self) -> bool {
        !self.pending.is_empty()
            || self.listing.in_flight()
            || !self.tasks.is_empty()
            || self.may_drop_answers()
    }
}
