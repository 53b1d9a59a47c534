//! The shaping of a server's answer: a `tools/call` outcome (whole, held in part,
//! or with its texts apart) or a task's state handed to the core's call shaping
//! ([`crate::call`]) with the catalog and call context of the pending request (E, V,
//! L), and what to send for it ([`Answer`]).

use std::time::Instant;

use serde_json::Value;

use super::own_listing::OwnRequest;
use super::pending::{PendingRequest, RequestId, RequestKind};
use super::{Answer, MAX_LOG_RECORDS, Response, SessionMachine};
use crate::arguments::ArgumentShapes;
use crate::arguments::CallContext;
use crate::failure::Failure;
use crate::foreign_error::{ForeignError, classify, says_unknown_tool};
use crate::limit::{HeldInPart, Limit, Truncation};
use crate::log::LogRecord;
use crate::request_error::shape_request_error;
use crate::result::ToolResult;
use crate::session::Session;
use crate::tool_call::{
    Outcome, Shaped, check_arguments, shape_tool_call, shape_tool_call_in_part,
    shape_tool_call_texts,
};
use crate::tool_catalog::{ToolCatalog, ToolLookup};

impl SessionMachine {
    /// The server's answer to request `id`: what to send for it. The request is no
    /// longer pending.
    pub fn server_response(&mut self, id: &RequestId, response: Response, now: Instant) -> Answer {
        if let Response::Raised(raised) = &response
            && let Some(own) = self.list_again_for(id, raised, now)
        {
            return Answer::ListFirst(own);
        }
        let Some(request) = self.pending.remove(id) else {
            return Answer::Unchanged;
        };
        if request.cancelled {
            return Answer::Unchanged; // E9
        }
        match (request.kind, response) {
            (RequestKind::Initialize, Response::Result(result)) => {
                self.lifecycle.initialize_answered();
                let negotiated = Session::from_initialize(&result).revision;
                self.handshake.revision = negotiated.or(self.handshake.revision);
                Answer::Unchanged
            }
            (RequestKind::ToolsList { first_page }, Response::Result(result)) => {
                self.catalog.learn_page(&result, first_page, now);
                Answer::Unchanged
            }
            (RequestKind::ToolsCall { tool, .. }, Response::Result(value))
                if self.tasks.learn_handle(&value, &tool) =>
            {
                Answer::Unchanged // a task's handle: its result comes later (L1)
            }
            (
                RequestKind::ToolsCall {
                    tool,
                    arguments,
                    argument_shapes,
                },
                response,
            ) => {
                let outcome = match response {
                    Response::Result(value) => match ToolResult::from_value(value) {
                        Ok(result) => Outcome::Result(result),
                        Err(_) => return Answer::Unchanged,
                    },
                    Response::Error(error) => {
                        Outcome::Failure(Failure::from_protocol_error(&error))
                    }
                    Response::Failure(failure) => Outcome::Failure(failure),
                    Response::Raised(raised) => Outcome::Failure(classify(&raised)),
                    Response::Unread => return Answer::Unchanged,
                };
                let call = PendingCall {
                    tool,
                    arguments,
                    argument_shapes,
                    session: request.session,
                };
                let shaped = self.shape_call(call, outcome);
                self.answer(request.id_json, shaped)
            }
            (RequestKind::TaskState { tool }, Response::Result(task)) => {
                let call = PendingCall {
                    tool,
                    arguments: Vec::new(),
                    argument_shapes: None,
                    session: request.session,
                };
                match self.shape_task_state(task, call) {
                    Some((task, truncation)) => Answer::TaskState {
                        id_json: request.id_json,
                        task,
                        truncation,
                    },
                    None => Answer::Unchanged,
                }
            }
            (RequestKind::Resource { method, uri }, Response::Error(error)) => {
                let shaped = shape_request_error(&error, &method, &request.session, uri.as_deref());
                if let Some(record) = shaped.log {
                    self.record(record);
                }
                match shaped.error == error {
                    true => Answer::Unchanged,
                    false => Answer::Error {
                        id_json: request.id_json,
                        error: shaped.error,
                    },
                }
            }
            _ => Answer::Unchanged,
        }
    }

    /// In process, the listing to make before deciding a call whose tool raised
    /// `raised`: when that is the server's word that the tool called is unknown, and no
    /// listing was made for this call yet (E8, R5; see [`Response::Raised`]).
    fn list_again_for(
        &mut self,
        id: &RequestId,
        raised: &ForeignError,
        now: Instant,
    ) -> Option<OwnRequest> {
        let request = self.pending.get_mut(id)?;
        let RequestKind::ToolsCall { tool, .. } = &request.kind else {
            return None;
        };
        if !self.in_process
            || request.relisted
            || request.cancelled
            || !says_unknown_tool(raised, tool)
        {
            return None;
        }
        request.relisted = true;
        self.listing.tools_changed();
        if self.listing.in_flight() {
            return None;
        }
        self.hold.listing_started(now);
        Some(self.listing.start(None))
    }

    /// A `notifications/tasks` of the server (2026-07-28), `params` being the task's
    /// state: for a task a `tools/call` of this session created, the state with its
    /// outcome shaped as the call's would have been (L1, E11), and the report of the
    /// cut; `None` when it passes as it came.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{ClientRequest, RequestId, Response}};
    /// use serde_json::json;
    /// let mut machine = SessionMachine::default();
    /// let call = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(call.clone(), "1", "tools/call").tool("capture_pane"), false, Instant::now());
    /// let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    /// machine.server_response(&call, Response::Result(handle), Instant::now());
    ///
    /// let failed = json!({"taskId": "t-1", "status": "failed",
    ///     "error": {"code": -32603, "message": "Internal error: Pane not found: %5"}});
    /// let (task, _) = machine.server_task_status(failed).expect("E11");
    /// assert_eq!(task["status"], "completed");
    /// assert_eq!(task["result"]["isError"], true);
    /// assert_eq!(task["result"]["content"][0]["text"], "Pane not found: %5");
    /// assert!(machine.server_task_status(json!({"taskId": "t-1", "status": "working"})).is_none());
    /// ```
    pub fn server_task_status(&mut self, params: Value) -> Option<(Value, Option<Truncation>)> {
        let call = self.task_status_call(&params)?;
        self.shape_task_state(params, call)
    }

    /// The call whose task a `notifications/tasks` (`params`) is of, if this session
    /// knows it.
    fn task_status_call(&self, params: &Value) -> Option<PendingCall> {
        let task_id = params.get("taskId").and_then(Value::as_str);
        let tool = self.task_tool(task_id)?;
        let meta = params.get("_meta").and_then(Value::as_object);
        Some(PendingCall {
            tool,
            arguments: Vec::new(),
            argument_shapes: None,
            session: self.handshake.clone().or_request_meta(meta),
        })
    }

    /// [`server_response`](Self::server_response) for a `tools/call` result the adapter
    /// holds in part (`held`, B3): `None` when the decision needs the whole result
    /// (then the request stays pending, and the adapter reads it whole).
    pub fn server_result_in_part(
        &mut self,
        id: &RequestId,
        result: ToolResult,
        held: &HeldInPart,
    ) -> Option<Answer> {
        let request = self.pending.get(id)?;
        let call = PendingCall::of(request)?;
        if request.cancelled {
            self.pending.remove(id);
            return Some(Answer::Unchanged);
        }
        let in_process = self.in_process;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            let result = with_wire_fields(in_process, context, result);
            shape_tool_call_in_part(catalog, context, result, held, limit)
        })?;
        let request = self.pending.remove(id)?;
        Some(self.answer(request.id_json, shaped))
    }

    /// [`server_response`](Self::server_response) for the answer to a `tasks/get`
    /// (2026-07-28) whose task state (`state`, the answer's `result`) the adapter holds
    /// with the strings of its outcome held in part (`held`, B3): `None` when the
    /// decision needs the whole state (then the request stays pending, and the adapter
    /// reads it whole).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::limit::HeldInPart;
    /// use backstop_core::{SessionMachine, machine::{Answer, ClientRequest, RequestId, Response}};
    /// use backstop_core::Limit;
    /// use serde_json::json;
    /// let mut machine = SessionMachine::new(Limit::new(1_000).unwrap());
    /// let call = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(call.clone(), "1", "tools/call").tool("logs"), false, Instant::now());
    /// let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    /// machine.server_response(&call, Response::Result(handle), Instant::now());
    /// let get = RequestId::Number("2".into());
    /// let mut request = ClientRequest::new(get.clone(), "2", "tasks/get");
    /// request.task_id = Some("t-1".into());
    /// machine.client_request(request, false, Instant::now());
    ///
    /// // A text 9 MB longer than the tail the adapter holds of it.
    /// let tail = "line\n".repeat(HeldInPart::min_held_bytes(1_000) / 5 + 1);
    /// let state = json!({"taskId": "t-1", "status": "completed",
    ///     "result": {"content": [{"type": "text", "text": tail}]}});
    /// let held = HeldInPart::default().with_text_head(0, 9_000_000);
    /// let Some(Answer::TaskState { task, truncation, .. }) = machine.server_task_state_in_part(&get, state, &held)
    /// else { panic!("cut from what is held (L1, B3)") };
    /// assert!(task["result"]["content"][0]["text"].as_str().unwrap().ends_with("line\n"));
    /// assert_eq!(truncation.unwrap().original_bytes, 9_000_000 + tail.len());
    /// ```
    pub fn server_task_state_in_part(
        &mut self,
        id: &RequestId,
        state: Value,
        held: &HeldInPart,
    ) -> Option<Answer> {
        let request = self.pending.get(id)?;
        let RequestKind::TaskState { tool } = &request.kind else {
            return None;
        };
        if request.cancelled {
            self.pending.remove(id);
            return Some(Answer::Unchanged);
        }
        let call = PendingCall {
            tool: tool.clone(),
            arguments: Vec::new(),
            argument_shapes: None,
            session: request.session.clone(),
        };
        let shaped = self.shape_task_state_in_part(state, call, held)?;
        let request = self.pending.remove(id)?;
        Some(match shaped {
            Some((task, truncation)) => Answer::TaskState {
                id_json: request.id_json,
                task,
                truncation,
            },
            None => Answer::Unchanged,
        })
    }

    /// [`server_task_status`](Self::server_task_status) for a `notifications/tasks`
    /// whose outcome the adapter holds in part (`held`, B3): `None` when the decision
    /// needs the whole notification, `Some(None)` when it passes as it came.
    pub fn server_task_status_in_part(
        &mut self,
        params: Value,
        held: &HeldInPart,
    ) -> Option<Option<(Value, Option<Truncation>)>> {
        let call = self.task_status_call(&params)?;
        self.shape_task_state_in_part(params, call, held)
    }

    /// [`server_response`](Self::server_response) for a `tools/call` result an
    /// in-process adapter holds with its plain texts apart (`shell`: the result with
    /// those texts empty; `texts`: them, borrowed where the adapter holds them, so that
    /// a text far over the cap is never copied whole: B2, L13).
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{Answer, ClientRequest, RequestId}};
    /// use backstop_core::{Limit, ToolResult};
    /// let mut machine = SessionMachine::new(Limit::new(1_000).unwrap()).in_process();
    /// let id = RequestId::Number("1".into());
    /// machine.client_request(ClientRequest::new(id.clone(), "1", "tools/call").tool("logs"), false, Instant::now());
    /// let scrollback = "line\n".repeat(100_000);
    /// let Answer::Result { result, truncation, .. } =
    ///     machine.server_result_texts(&id, ToolResult::text(""), &[&scrollback])
    /// else { panic!("cut (L1)") };
    /// assert!(result.content[0].as_text().unwrap().ends_with("line\n"));
    /// assert_eq!(truncation.unwrap().original_bytes, scrollback.len());
    /// ```
    pub fn server_result_texts(
        &mut self,
        id: &RequestId,
        shell: ToolResult,
        texts: &[&str],
    ) -> Answer {
        let Some(request) = self.pending.remove(id) else {
            return Answer::Unchanged;
        };
        let Some(call) = PendingCall::of(&request).filter(|_| !request.cancelled) else {
            return Answer::Unchanged; // not a call, or cancelled (E9)
        };
        let in_process = self.in_process;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            let shell = with_wire_fields(in_process, context, shell);
            shape_tool_call_texts(catalog, context, shell, texts, limit)
        });
        self.answer(request.id_json, shaped)
    }

    /// In process, before the adapter runs the pending `tools/call` `id`: the answer
    /// that makes running it needless, or `None` to run it. E8 when the catalog is
    /// complete and fresh and lacks the tool (R5: else list first, see
    /// [`client_request`](Self::client_request)); V6 in [strict](Self::with_strict)
    /// mode. An answered call is no longer pending.
    ///
    /// ```
    /// use std::time::Instant;
    /// use backstop_core::{SessionMachine, machine::{Answer, ClientRequest, RequestId}};
    /// let mut machine = SessionMachine::default().in_process();
    /// let now = Instant::now();
    /// let id = RequestId::Number("1".into());
    /// let own = machine.client_request(ClientRequest::new(id.clone(), "1", "tools/call").tool("ehco"), true, now);
    /// assert!(own.is_some());
    /// let page = serde_json::json!({"tools": [{"name": "echo"}]});
    /// assert_eq!(machine.own_listing_answer(Some(&page), now), None, "one page: complete");
    /// let Some(Answer::Error { error, .. }) = machine.before_running(&id, now) else { panic!("E8") };
    /// assert_eq!((error.code, error.message.as_str()), (-32602, "Unknown tool: ehco"));
    /// ```
    pub fn before_running(&mut self, id: &RequestId, now: Instant) -> Option<Answer> {
        let request = self.pending.get(id)?;
        let RequestKind::ToolsCall { tool, .. } = &request.kind else {
            return None;
        };
        // The common case, a known tool without strict mode, copies nothing.
        let unknown = self.catalog.lookup(tool, now) == ToolLookup::Unknown;
        if !unknown && !self.strict {
            return None;
        }
        let call = PendingCall::of(request)?;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            if let Err(error) = catalog.check(&context.tool) {
                return Some(Shaped::unknown_tool(error));
            }
            let failure = check_arguments(context)?;
            Some(shape_tool_call(
                catalog,
                context,
                Outcome::Failure(failure),
                limit,
            ))
        })?;
        let request = self.pending.remove(id)?;
        Some(self.answer(request.id_json, shaped))
    }

    /// Run `decide` with the catalog and call context of a pending call: the catalog
    /// only where it knows the tool (or is complete), so that nothing is decided from a
    /// catalog that cannot judge the name.
    fn with_call_context<T>(
        &self,
        call: PendingCall,
        decide: impl FnOnce(&ToolCatalog, &CallContext, &Limit) -> T,
    ) -> T {
        let empty = ToolCatalog::new();
        let known = self.catalog.contains(&call.tool) || self.catalog.is_complete();
        let catalog = if known { &self.catalog } else { &empty };
        // R3: an unknown revision gets the newest behaviour. In process the SDK writes
        // the result for it, so what it adds there is counted (L4); behind a proxy the
        // wire is what was read.
        let revision = match self.in_process {
            true => Some(call.session.revision()),
            false => call.session.revision,
        };
        // L2, L18, E12: the limits of the client that reads the result.
        let limit = self.limit.for_client(call.session.client.as_ref());
        let context = catalog
            .context(&call.tool)
            .with_arguments(call.arguments)
            .with_argument_shapes(call.argument_shapes)
            .with_client(call.session.client)
            .with_revision(revision)
            .with_server_stamp(self.server_stamp.clone());
        decide(catalog, &context, &limit)
    }

    /// The answer to `call`, decided for `outcome` (E, V, L).
    fn shape_call(&self, call: PendingCall, outcome: Outcome) -> Shaped {
        let in_process = self.in_process;
        self.with_call_context(call, |catalog, context, limit| {
            let outcome = match outcome {
                Outcome::Result(result) => {
                    Outcome::Result(with_wire_fields(in_process, context, result))
                }
                failure => failure,
            };
            shape_tool_call(catalog, context, outcome, limit)
        })
    }

    /// A task state (2026-07-28) whose outcome is shaped as `call`'s would have been:
    /// a `completed` task's `result` as the call's result (L1), a `failed` task's
    /// `error` as the call's failure, the task then `completed` with that result (E11).
    /// `None` when there is no outcome yet, or it passes as it came (unchanged, or an
    /// error that passes: E8, E10).
    fn shape_task_state(
        &mut self,
        mut task: Value,
        call: PendingCall,
    ) -> Option<(Value, Option<Truncation>)> {
        let state = task.as_object_mut()?;
        let outcome = match state.get("status").and_then(Value::as_str)? {
            "completed" => Outcome::Result(ToolResult::from_value(state.remove("result")?).ok()?),
            "failed" => {
                let error = serde_json::from_value(state.remove("error")?).ok()?;
                Outcome::Failure(Failure::from_protocol_error(&error))
            }
            _ => return None,
        };
        let shaped = self.shape_call(call, outcome);
        self.with_shaped_outcome(task, shaped)
    }

    /// [`shape_task_state`](Self::shape_task_state) for a `completed` state whose
    /// result the adapter holds in part (`held`, B3): `None` when the decision needs
    /// the whole state, `Some(None)` when it passes as it came.
    fn shape_task_state_in_part(
        &mut self,
        mut task: Value,
        call: PendingCall,
        held: &HeldInPart,
    ) -> Option<Option<(Value, Option<Truncation>)>> {
        let state = task.as_object_mut()?;
        if state.get("status").and_then(Value::as_str) != Some("completed") {
            return None;
        }
        let result = ToolResult::from_value(state.remove("result")?).ok()?;
        let shaped = self.with_call_context(call, |catalog, context, limit| {
            shape_tool_call_in_part(catalog, context, result, held, limit)
        })?;
        Some(self.with_shaped_outcome(task, shaped))
    }

    /// `task` (its outcome taken out) with the shaped outcome as its `result`, the
    /// task `completed`; `None` when the outcome passes as it came.
    fn with_shaped_outcome(
        &mut self,
        mut task: Value,
        shaped: Shaped,
    ) -> Option<(Value, Option<Truncation>)> {
        if let Some(record) = shaped.log {
            self.record(record);
        }
        let result = match (shaped.unchanged, shaped.response) {
            (false, Ok(result)) => serde_json::to_value(result).ok()?,
            _ => return None,
        };
        let state = task.as_object_mut()?;
        state.insert("status".into(), "completed".into());
        state.insert("result".into(), result);
        Some((task, shaped.truncation))
    }

    fn answer(&mut self, id_json: String, shaped: Shaped) -> Answer {
        if let Some(record) = shaped.log {
            self.record(record);
        }
        match (shaped.unchanged, shaped.response) {
            (true, _) => Answer::Unchanged,
            (false, Ok(result)) => Answer::Result {
                id_json,
                result,
                truncation: shaped.truncation,
            },
            (false, Err(error)) => Answer::Error { id_json, error },
        }
    }

    fn record(&mut self, record: LogRecord) {
        self.counts.record(&record);
        if self.log.len() >= MAX_LOG_RECORDS {
            self.log.pop_front();
        }
        self.log.push_back(record);
    }
}

/// What a pending `tools/call` was.
struct PendingCall {
    tool: String,
    arguments: Vec<String>,
    argument_shapes: Option<ArgumentShapes>,
    session: Session,
}

impl PendingCall {
    /// What `request` was, when it is a `tools/call`.
    fn of(request: &PendingRequest) -> Option<Self> {
        let RequestKind::ToolsCall {
            tool,
            arguments,
            argument_shapes,
        } = &request.kind
        else {
            return None;
        };
        Some(Self {
            tool: tool.clone(),
            arguments: arguments.clone(),
            argument_shapes: argument_shapes.clone(),
            session: request.session.clone(),
        })
    }
}

/// `result` as the wire will carry it (L4, R4): with what an in-process server's SDK
/// adds after the adapter (behind a proxy, what was read is what the wire carries).
fn with_wire_fields(in_process: bool, context: &CallContext, mut result: ToolResult) -> ToolResult {
    if in_process {
        context.add_wire_fields(&mut result);
    }
    result
}
