//! One `tools/call` through [`Backstop`]: the core's session machine decides, this
//! file translates rmcp's values into its terms and back (SPEC A0).
//!
//! 1. The call goes to the machine as a pending request, its arguments as their shapes
//!    (never their values, V3: what places a problem serde reports at `__root__`, V2);
//!    when the machine says so, the inner handler's tools are listed first (E8, R5:
//!    [`session`](crate::session)).
//! 2. What the machine answers before the call runs (E8, strict mode's V6) is sent
//!    without running the inner handler.
//! 3. The inner handler's answer goes to the machine: an `Err` read with the core's
//!    protocol-error reading (a [`ToolError`] comes back without loss), a complete
//!    result with its plain texts borrowed where rmcp holds them (a 100 MB text is
//!    never copied whole, B2, L13), any other result as its JSON (input-required and
//!    task handles, L1). A call the client cancelled is marked so first (E9).
//! 4. An answer the machine leaves unchanged is sent as the inner handler built it.
//!
//! [`ToolError`]: crate::ToolError

use std::time::Instant;

use backstop_core::call::ArgumentShapes;
use backstop_core::machine::{Answer, Response};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::convert::{to_call_tool_result, to_error_data, to_protocol_error, to_tool_result_texts};
use crate::session::Pending;
use crate::wrapper::Backstop;

impl<S: ServerHandler> Backstop<S> {
    pub(crate) async fn shape_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = self
            .machine
            .client_request(&context, "tools/call")
            .tool(request.name.as_ref())
            .argument_shapes(
                request
                    .arguments
                    .as_ref()
                    .map_or_else(Default::default, ArgumentShapes::of),
            );
        let pending = Pending::new(&self.machine, call.id.clone());
        let tool = request.name.to_string();
        let own = self
            .machine
            .lock()
            .client_request(call, true, Instant::now());
        if own.is_some() {
            // Boxed: the listing's future would otherwise make every call's bigger.
            Box::pin(self.machine.list(own, self.inner(), &context)).await;
        }
        // The lock is let go before `send` takes the records (it locks again).
        let before = self
            .machine
            .lock()
            .before_running(&pending.id, Instant::now());
        if let Some(answer) = before {
            return self.send(&tool, answer, unreachable_unchanged);
        }

        let cancelled = context.ct.clone();
        let response = self.inner().call_tool(request, context).await;
        if cancelled.is_cancelled() {
            let mut machine = self.machine.lock();
            machine.client_notification("notifications/cancelled", Some(&pending.id));
        }
        let answer = match &response {
            Ok(CallToolResponse::Complete(result)) => match to_tool_result_texts(result) {
                Some((shell, texts)) => {
                    let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
                    self.machine
                        .lock()
                        .server_result_texts(&pending.id, shell, &texts)
                }
                None => Answer::Unchanged, // a block rmcp has and the core cannot read
            },
            Ok(CallToolResponse::InputRequired(other)) => self.respond_json(&pending, other),
            Ok(CallToolResponse::Task(other)) => self.respond_json(&pending, other),
            Ok(_) => Answer::Unchanged, // a kind of answer newer than this crate: as it came
            Err(error) => self.respond(&pending, Response::Error(to_protocol_error(error))),
        };
        self.send(&tool, answer, || response)
    }

    /// The machine's answer to a result that is not complete, as its JSON says (L1).
    fn respond_json(&self, pending: &Pending<'_>, result: &impl rmcp::serde::Serialize) -> Answer {
        match serde_json::to_value(result) {
            Ok(value) => self.respond(pending, Response::Result(value)),
            Err(_) => Answer::Unchanged,
        }
    }

    fn respond(&self, pending: &Pending<'_>, response: Response) -> Answer {
        self.machine
            .lock()
            .server_response(&pending.id, response, Instant::now())
    }

    /// Report what the machine recorded, and send its answer (`unchanged`: the inner
    /// handler's own).
    fn send(
        &self,
        tool: &str,
        answer: Answer,
        unchanged: impl FnOnce() -> Result<CallToolResponse, ErrorData>,
    ) -> Result<CallToolResponse, ErrorData> {
        for record in self.machine.take_log_records() {
            self.reporter.failure(&record);
        }
        match answer {
            // A task's state answers `tasks/get`, never a `tools/call`.
            // `ListFirst` answers only a `Response::Raised`, which this wrapper never hands in.
            Answer::Unchanged | Answer::TaskState { .. } | Answer::ListFirst(_) => unchanged(),
            Answer::Result {
                result, truncation, ..
            } => {
                if let Some(truncation) = &truncation {
                    self.reporter.truncation(tool, truncation);
                }
                Ok(CallToolResponse::Complete(to_call_tool_result(result)))
            }
            Answer::Error { error, .. } => Err(to_error_data(error)),
        }
    }
}

/// What is sent when the machine's answer before a call runs is "unchanged" — it never
/// is (there is nothing to leave unchanged yet): an internal error, never a panic.
fn unreachable_unchanged() -> Result<CallToolResponse, ErrorData> {
    Err(ErrorData::internal_error(
        "no answer before the call ran",
        None,
    ))
}
