//! Tasks through [`Backstop`] (the 2026-07-28 tasks extension as rmcp 3.11 serves it):
//! a tool that runs as a task answers its call with a handle, and its outcome comes in
//! the task's state, in the answer to `tasks/get`. That state is shaped as the call's
//! answer would have been (SPEC L1, E11); a task no call created passes untouched.

mod support;

use backstop_core::Limit;
use backstop_rmcp::Backstop;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, DetailedTask, GetTaskParams,
    GetTaskResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig, Task,
    TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use support::{Client, ProbeClient, connect_as, wire_size};

const AT: &str = "2026-07-28T00:00:00Z";

/// A server whose tools run as tasks: `scrollback` completes with 4,000 numbered lines,
/// `explode` fails with a JSON-RPC error. The task's id is the tool's name, and a task
/// `elsewhere` (created by no call) completes with the same lines.
#[derive(Clone, Default)]
struct TaskRunner;

fn scrollback() -> Value {
    let text: String = (1..=4_000).map(|n| format!("line {n}\n")).collect();
    json!({"content": [{"type": "text", "text": text}]})
}

impl ServerHandler for TaskRunner {
    fn get_info(&self) -> ServerConfig {
        support::tools_and_tasks()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(support::listing(&[
            ("scrollback", "runs as a task"),
            ("explode", "runs as a task"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let task = Task::new(request.name.as_ref(), TaskStatus::Working, AT, AT);
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let object = |value: Value| value.as_object().cloned().unwrap();
        let payload = match request.task_id.as_str() {
            "scrollback" | "elsewhere" => TaskPayload::Completed {
                result: object(scrollback()),
            },
            "explode" => TaskPayload::Failed {
                error: object(
                    json!({"code": -32603, "message": "Internal error: Pane not found: %5"}),
                ),
            },
            _ => return Err(ErrorData::invalid_params("no such task", None)),
        };
        let task = Task::new(request.task_id, TaskStatus::Working, AT, AT);
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }
}

fn tasks_client() -> ProbeClient {
    ProbeClient {
        version: ProtocolVersion::V_2025_11_25,
        tasks: true,
    }
}

/// Call `tool`, which answers with a handle, then get its task's state as JSON.
async fn run_as_task(caller: &Client, poller: &Client, tool: &'static str) -> Value {
    let handle = caller
        .call_tool_once(CallToolRequestParams::new(tool))
        .await
        .unwrap();
    assert!(matches!(handle, CallToolResponse::Task(_)), "a handle");
    task_state(poller, tool).await
}

async fn task_state(client: &Client, task_id: &str) -> Value {
    let state = client.get_task(GetTaskParams::new(task_id)).await.unwrap();
    serde_json::to_value(state).unwrap()
}

fn limited() -> Backstop<TaskRunner> {
    Backstop::new(TaskRunner).with_limit(Limit::new(1_000).unwrap())
}

#[tokio::test]
async fn l1_a_completed_task_s_result_is_cut_as_its_call_s_would_be() {
    let client = connect_as(tasks_client(), limited()).await;
    let state = run_as_task(&client, &client, "scrollback").await;
    assert_eq!(state["status"], "completed");
    let result = &state["result"];
    assert!(wire_size(result) <= 1_000, "L1, L4: {}", wire_size(result));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "), "{text}");
    assert!(text.ends_with("line 4000\n"), "the tail survives: {text}");

    let bare = connect_as(tasks_client(), TaskRunner).await;
    let direct = run_as_task(&bare, &bare, "scrollback").await;
    assert!(
        wire_size(&direct["result"]) > 30_000,
        "uncut without backstop"
    );
}

#[tokio::test]
async fn e11_a_failed_task_becomes_a_completed_one_with_the_call_s_error_result() {
    let server = Backstop::new(TaskRunner);
    let counts = server.failure_counts();
    let client = connect_as(tasks_client(), server).await;
    let state = run_as_task(&client, &client, "explode").await;
    assert_eq!(state["status"], "completed", "{state}");
    assert!(state.get("error").is_none(), "{state}");
    assert_eq!(state["result"]["isError"], true);
    assert_eq!(
        state["result"]["content"][0]["text"], "Pane not found: %5",
        "E2: the message as written"
    );
    assert_eq!(counts.snapshot().total(), 1, "G3: counted once");
}

#[tokio::test]
async fn l1_a_task_no_call_created_passes_untouched() {
    let client = connect_as(tasks_client(), limited()).await;
    let state = task_state(&client, "elsewhere").await;
    let bare = connect_as(tasks_client(), TaskRunner).await;
    assert_eq!(state, task_state(&bare, "elsewhere").await);
}

#[tokio::test]
async fn l1_a_task_created_in_one_session_is_shaped_when_polled_in_another() {
    // rmcp clones the handler for each session (and each stateless HTTP request).
    let server = limited();
    let caller = connect_as(tasks_client(), server.clone()).await;
    let poller = connect_as(tasks_client(), server.clone()).await;
    let state = run_as_task(&caller, &poller, "scrollback").await;
    assert!(
        wire_size(&state["result"]) <= 1_000,
        "{}",
        wire_size(&state["result"])
    );
}
