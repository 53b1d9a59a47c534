//! The core's [`SessionMachine`], as [`Backstop`](crate::Backstop) drives it in process.
//!
//! This module translates: rmcp's request ids, sessions and typed pages into the
//! machine's terms, and runs the inner handler's `tools/list` for each page the machine
//! asks for. What the catalog has learnt, when to list, when a tool is unknown (E8,
//! R5) is the machine's to decide.

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use backstop_core::{
    Limit,
    call::LogRecord,
    protocol::{ClientInfo, Revision, Session},
};
use backstop_core::{
    SessionMachine,
    machine::{ClientRequest, OwnRequest, RequestId},
};
use rmcp::model::{NumberOrString, PaginatedRequestParams};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

/// One wrapper's session machine, shared by its concurrent requests. The lock is
/// never held across an `await`.
#[derive(Debug)]
pub(crate) struct SharedMachine {
    machine: Mutex<SessionMachine>,
    /// What the session's handshake said, once rmcp has it.
    session: OnceLock<Session>,
}

impl SharedMachine {
    /// A machine for `limit` and strict mode `strict` (V6), in process.
    pub(crate) fn new(limit: &Limit, strict: bool) -> Self {
        Self::of(machine_for(limit, strict))
    }

    fn of(machine: SessionMachine) -> Self {
        Self {
            machine: Mutex::new(machine),
            session: OnceLock::new(),
        }
    }

    /// A machine for `limit` and `strict` that knows the tasks this one's calls created
    /// (a wrapper's clones serve the sessions, or the stateless requests, of one
    /// server, whose task store they all reach).
    pub(crate) fn sharing_tasks(&self, limit: &Limit, strict: bool) -> Self {
        let tasks = self.lock().tasks().clone();
        Self::of(machine_for(limit, strict).with_tasks(tasks))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, SessionMachine> {
        // A panic while holding the lock leaves the machine in a state it can go on from.
        self.machine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Take the records of the failures converted since the last call (G1).
    pub(crate) fn take_log_records(&self) -> Vec<LogRecord> {
        self.lock().take_log_records()
    }

    /// Run the listing the machine started (`own`): each page it asks for, from the
    /// inner handler, until it says the listing is over. A listing this call stops
    /// awaiting (the call was dropped) is abandoned, so that the next call lists.
    pub(crate) async fn list<S: ServerHandler>(
        &self,
        own: Option<OwnRequest>,
        inner: &S,
        context: &RequestContext<RoleServer>,
    ) {
        let mut listing = Abandon(self, own.is_some());
        let mut own = own;
        while let Some(request) = own {
            let cursor = request.cursor().and_then(Value::as_str).map(str::to_owned);
            let params =
                cursor.map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let page = inner.list_tools(params, context.clone()).await;
            let page = page.ok().and_then(|page| serde_json::to_value(page).ok());
            own = self
                .lock()
                .own_listing_answer(page.as_ref(), Instant::now());
        }
        listing.1 = false;
    }
}

/// A new in-process machine for `limit` and strict mode `strict` (V6).
fn machine_for(limit: &Limit, strict: bool) -> SessionMachine {
    SessionMachine::new(limit.clone())
        .in_process()
        .with_strict(strict)
}

/// Abandons the machine's own listing when dropped while still armed.
struct Abandon<'a>(&'a SharedMachine, bool);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.lock().abandon_listing();
        }
    }
}

/// Forgets a pending request when dropped (the call's future was dropped, or ended
/// without an answer from the machine): nothing stays pending.
pub(crate) struct Pending<'a> {
    machine: &'a SharedMachine,
    pub(crate) id: RequestId,
}

impl<'a> Pending<'a> {
    pub(crate) fn new(machine: &'a SharedMachine, id: RequestId) -> Self {
        Self { machine, id }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.machine.lock().forget(&self.id);
    }
}

/// The machine's id for an rmcp request id, and its JSON text.
pub(crate) fn request_id(id: &NumberOrString) -> (RequestId, String) {
    match id {
        NumberOrString::Number(n) => (RequestId::Number(n.to_string()), n.to_string()),
        NumberOrString::String(s) => (
            RequestId::String(s.to_string()),
            Value::from(s.as_ref()).to_string(),
        ),
    }
}

impl SharedMachine {
    /// A request of `method` as the machine reads it: its id, the request's `_meta`,
    /// and the session's `initialize` params as rmcp kept them (R2, R3; read once).
    pub(crate) fn client_request(
        &self,
        context: &RequestContext<RoleServer>,
        method: &str,
    ) -> ClientRequest {
        let (id, id_json) = request_id(&context.id);
        let session = match self.session.get() {
            Some(session) => Some(session.clone()),
            None => context.peer.peer_info().map(|info| {
                let session = Session {
                    client: Some(ClientInfo::new(
                        info.client_info.name.clone(),
                        info.client_info.version.clone(),
                    )),
                    revision: Some(Revision::parse_or_newest(info.protocol_version.as_str())),
                };
                self.session.get_or_init(|| session).clone()
            }),
        };
        let meta = &context.meta.0.0;
        ClientRequest::new(id, id_json, method)
            .meta((!meta.is_empty()).then(|| meta.clone()))
            .in_session(session)
    }
}
