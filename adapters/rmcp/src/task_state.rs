//! One `tasks/get` through [`Backstop`] (the 2026-07-28 tasks extension): the core's
//! session machine decides, this file translates (SPEC A0).
//!
//! A `tools/call` the inner handler answered with a task handle taught the machine
//! which tool the task runs ([`tool_call`](crate::tool_call)). The state of such a
//! task carries the tool's outcome, and the machine shapes it as the call's would have
//! been: a `completed` task's `result` cut to the cap (L1), a `failed` task made a
//! `completed` one with the call's `isError` result (E11). Any other state, and a task
//! no call of this wrapper created, passes as the inner handler built it.
//!
//! (rmcp 3.11 sends no `notifications/tasks`: its clients poll `tasks/get`.)

use std::time::Instant;

use backstop_core::machine::{Answer, Response};
use rmcp::model::{GetTaskParams, GetTaskResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::convert::session_of;
use crate::session::Pending;
use crate::wrapper::Backstop;

impl<S: ServerHandler> Backstop<S> {
    pub(crate) async fn shape_task_state(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let session = session_of(&context);
        let mut get = self.machine.client_request(&context, "tasks/get");
        get.task_id = Some(request.task_id.clone());
        let pending = Pending::new(&self.machine, get.id.clone());
        let task_id = request.task_id.clone();
        self.machine
            .lock()
            .client_request(get, false, Instant::now());
        let state = self
            .inner()
            .get_task(request, context)
            .await
            .map_err(|e| self.map_error(e, "tasks/get", &session, None))?;
        let answer = match serde_json::to_value(&state) {
            Ok(value) => self.machine.lock().server_response(
                &pending.id,
                Response::Result(value),
                Instant::now(),
            ),
            Err(_) => Answer::Unchanged,
        };
        for record in self.machine.take_log_records() {
            self.reporter.failure(&record);
        }
        let Answer::TaskState {
            task, truncation, ..
        } = answer
        else {
            return Ok(state);
        };
        if let Some(truncation) = &truncation {
            let tool = self.machine.lock().tasks().tool_of(&task_id);
            self.reporter
                .truncation(tool.as_deref().unwrap_or_default(), truncation);
        }
        // The shaped state is one rmcp can hold; were it not, the inner handler's goes.
        Ok(serde_json::from_value(task).unwrap_or(state))
    }
}
