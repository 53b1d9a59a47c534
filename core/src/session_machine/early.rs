//! What to do with a server message from its head — its top-level `id` and `method`,
//! and whether it is a result or an error — before it is read whole, or without
//! reading the rest (B3, B4, B5): [`SessionMachine::server_head`].

use super::event::{Disposition, ServerHead};
use super::pending::{RequestId, RequestKind};
use super::{SessionMachine, TASK_STATUS};

impl SessionMachine {
    /// What to do with a server message whose head the driver has read: send it on
    /// unread ([`Disposition::Pass`]: nothing about it can need a change), drop it
    /// ([`Disposition::Drop`], B5), read it holding these ends of its long strings
    /// ([`Disposition::Read`]), or cut it as it comes ([`Disposition::CutUnheld`],
    /// B3, B4). A response that passes is no longer pending; a `method` is taken in
    /// (`notifications/tools/list_changed` makes the catalog unknown). Read as it
    /// comes, a message is asked about again as more of its head is known; while a
    /// listing of backstop's own is in flight, none passes early (their order is the
    /// listing's to keep), and an `id` alone does not say it is a response (a server's
    /// request may carry the id of a client's).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, Disposition, RequestId, ServerHead}};
    /// use backstop_core::Limit;
    /// let limit = Limit::new(1_000).unwrap();
    /// let mut machine = SessionMachine::new(limit.clone());
    /// let (read, call) = (RequestId::Number("1".into()), RequestId::Number("2".into()));
    /// machine.client_request(ClientRequest::new(read.clone(), "1", "resources/read"), false, Instant::now());
    /// machine.client_request(ClientRequest::new(call.clone(), "2", "tools/call").tool("logs"), false, Instant::now());
    /// let note = ServerHead { method: Some("notifications/message"), ..ServerHead::default() };
    /// assert_eq!(machine.server_head(note), Disposition::Pass);
    /// let error = ServerHead { id: Some(&read), error: true, ..ServerHead::default() };
    /// assert!(matches!(machine.server_head(error), Disposition::Read(_)), "a resources/read error may be mapped (R3)");
    /// let result = ServerHead { id: Some(&call), result: true, ..ServerHead::default() };
    /// assert_eq!(machine.server_head(result), Disposition::Read(limit.held_ends(Some("logs"))), "a tools/call result may be cut");
    /// let long = ServerHead { past_hold_at: Some(5_000), ..result };
    /// assert_eq!(machine.server_head(long), Disposition::CutUnheld(limit.held_ends(Some("logs"))));
    /// let result = ServerHead { id: Some(&read), result: true, ..ServerHead::default() };
    /// assert_eq!(machine.server_head(result), Disposition::Pass, "its result needs nothing");
    /// assert_eq!(machine.pending().len(), 1, "passed: no longer pending");
    /// ```
    pub fn server_head(&mut self, head: ServerHead<'_>) -> Disposition {
        let ends = self
            .limit
            .held_ends(head.id.and_then(|id| self.pending_tool(id)));
        let read = Disposition::Read(ends);
        if let (Some(id), Some(at), false) = (head.id, head.past_hold_at, head.ended)
            && self.cuts_unheld(id, at.saturating_add(1))
        {
            // Never held whole, not even for backstop's listing (B3): cut with what is
            // known of its tool when it ends.
            return Disposition::CutUnheld(ends);
        }
        let response = head.result || head.error;
        // Read as it comes, only a `method`, `result` or `error` says what it is (an `id`
        // alone does not), and nothing passes early while the listing orders them.
        let undecided = !(head.method.is_some() || response);
        if !head.ended && (undecided || self.listing.in_flight() || self.holds_server_messages()) {
            return read;
        }
        if let Some(method) = head.method {
            self.server_notification(method);
            // A task's state may carry its call's outcome (L1, E11).
            return match method != TASK_STATUS || self.tasks.is_empty() {
                true => Disposition::Pass,
                false => read,
            };
        }
        let Some(id) = head.id else {
            // At its end, no id a request has: it answers none. Read as it comes, a result
            // whose id comes later needs nothing if no pending request's result could,
            // and it cannot be one to drop (B5).
            let passes = head.ended
                || head.result
                    && !self.may_drop_answers()
                    && !self.pending.iter().any(|r| r.answer_matters(true));
            return match passes {
                true => Disposition::Pass,
                false => read,
            };
        };
        if !response {
            // At its end, not a response: it passes if nothing could change it, its request
            // left pending for the driver's lenient reading to end (B4).
            return match self.answer_passes(id, false) {
                true => Disposition::Pass,
                false => read,
            };
        }
        if self.drops_answer(id) {
            return Disposition::Drop;
        }
        if self.answer_matters(id, head.result) {
            return read;
        }
        self.pending.remove(id);
        Disposition::Pass
    }

    /// Whether the answer to request `id` must be read and handed to
    /// [`server_response`](Self::server_response) (`result`: whether it is a result):
    /// false when nothing depends on it, so it passes unread.
    pub(super) fn answer_matters(&self, id: &RequestId, result: bool) -> bool {
        self.pending
            .get(id)
            .is_some_and(|request| request.answer_matters(result))
    }

    /// Whether an answer to `id` (a result, or an error) may be sent as it came: it
    /// needs no change and is not one to drop (B5). It leaves the request pending.
    pub(super) fn answer_passes(&self, id: &RequestId, result: bool) -> bool {
        !self.answer_matters(id, result) && !self.drops_answer(id)
    }

    /// Whether the answer to `id`, a result of which `bytes` have come, is one a
    /// driver cuts without holding it (B3, B4): the result of a pending `tools/call`
    /// the limit applies to, not cancelled, already over the cap — whether or not a
    /// listing of backstop's own is in flight: an answer is never held whole for it
    /// (B3), and is cut with what is known of its tool when it ends. The driver then
    /// holds only what a cut keeps; if the answer turns out not to be JSON, or one the
    /// kept parts cannot decide, it is answered with an error for its id, never sent
    /// as it came.
    pub(super) fn cuts_unheld(&self, id: &RequestId, bytes: u64) -> bool {
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
    /// after), if `id` is one: of its result, what the tool's keep policy can keep is
    /// held ([`Limit::held_ends`](crate::Limit::held_ends), L16).
    pub(super) fn pending_tool(&self, id: &RequestId) -> Option<&str> {
        match &self.pending.get(id)?.kind {
            RequestKind::ToolsCall { tool, .. } | RequestKind::TaskState { tool } => Some(tool),
            _ => None,
        }
    }

    /// Whether an answer of the server for request `id` is dropped: backstop answered
    /// that request itself, and a second answer must never reach the client (B5).
    pub(super) fn drops_answer(&self, id: &RequestId) -> bool {
        self.answered_here.contains(id) && self.pending.get(id).is_none()
    }

    /// Whether any answer of the server could be dropped ([`drops_answer`](Self::drops_answer)).
    pub(super) fn may_drop_answers(&self) -> bool {
        !self.answered_here.is_empty()
    }

    /// Whether a server message must be read to know what to send for it: a request
    /// is pending (its answer may be shaped), a listing of backstop's own is in flight
    /// (its answers are read) or holds messages, a task is known (its state, in a
    /// `notifications/tasks`, carries its call's outcome, L1, E11), or an answer may be
    /// dropped (B5). When none holds, only `notifications/tools/list_changed` changes
    /// what the machine knows, and every other message passes unread.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId}};
    /// let mut machine = SessionMachine::default();
    /// assert!(!machine.reads_server_messages());
    /// machine.client_request(ClientRequest::new(RequestId::Number("1".into()), "1", "ping"), false, Instant::now());
    /// assert!(machine.reads_server_messages());
    /// ```
    pub fn reads_server_messages(&self) -> bool {
        !self.pending.is_empty()
            || self.listing.in_flight()
            || self.holds_server_messages()
            || !self.tasks.is_empty()
            || self.may_drop_answers()
    }
}
