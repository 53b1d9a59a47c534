//! The order of the layers (O1–O3): a layer inside the wrapper sees failures as
//! failures; the limiter is outside conversion; incomplete results pass untouched.

mod support;

use std::sync::{Arc, Mutex};

use backstop_core::Limit;
use backstop_rmcp::{Backstop, ToolError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientRequest, CreateTaskResult, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, Request, ServerConfig, Task,
    TaskStatus,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use support::scrollback_tools::ScrollbackTools;
use support::{ProbeClient, call, connect, connect_2026, connect_as, wire_size};

/// What the audit layer saw: per call, the tool and `Err(code)` for a failure (`0` for
/// an `isError` result).
type AuditLog = Arc<Mutex<Vec<(String, Result<(), i32>)>>>;

/// An audit layer: records each call and whether it failed, then passes it on.
#[derive(Clone)]
struct Audit<S> {
    inner: S,
    log: AuditLog,
}

impl<S: ServerHandler> ServerHandler for Audit<S> {
    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.inner.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let response = self.inner.call_tool(request, context).await;
        let outcome = match &response {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => Err(0),
            Ok(_) => Ok(()),
            Err(error) => Err(error.code.0),
        };
        self.log.lock().unwrap().push((name, outcome));
        response
    }
}

#[tokio::test]
async fn o1_an_audit_layer_inside_the_wrapper_sees_each_failure_as_a_failure() {
    let log = Arc::default();
    let audit = Audit {
        inner: ScrollbackTools::new(),
        log: Arc::clone(&log),
    };
    let client = connect(Backstop::new(audit)).await;
    for kind in ["expected", "suggestion", "unexpected"] {
        let received = call(&client, "fail", json!({"kind": kind})).await;
        assert_eq!(
            received["result"]["isError"], true,
            "the client gets a result"
        );
    }
    let ok = call(&client, "takes_int", json!({"count": 1})).await;
    assert_eq!(ok["result"]["content"][0]["text"], "count = 1");

    let log = log.lock().unwrap();
    let failures: Vec<_> = log.iter().filter(|(_, outcome)| outcome.is_err()).collect();
    assert_eq!(failures.len(), 3, "{log:?}");
    assert!(
        failures
            .iter()
            .all(|(tool, outcome)| tool == "fail" && matches!(outcome, Err(code) if *code != 0)),
        "the audit layer saw JSON-RPC errors, not converted results: {log:?}"
    );
    assert_eq!(log.last().unwrap(), &("takes_int".to_owned(), Ok(())));
}

/// A server with a tool that fails with a very long message, one that asks for input
/// (2026-07-28), and one that runs until it is cancelled (and says so on the `Notify`).
#[derive(Clone, Default)]
struct Noisy(Arc<tokio::sync::Notify>);

impl ServerHandler for Noisy {
    fn get_info(&self) -> ServerConfig {
        support::tools_and_tasks()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(support::listing(&[
            ("big_failure", "fails loudly"),
            ("needs_input", "asks first"),
            ("wait", "runs until cancelled"),
            ("make_task", "starts a task"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.name.as_ref() {
            "big_failure" => Err(ToolError::expected("E".repeat(50_000))
                .with_suggestion("Try a smaller range.")
                .into()),
            "wait" => {
                // Fails only once the client has cancelled the call.
                context.ct.cancelled().await;
                self.0.notify_one();
                Err(ToolError::unexpected("stopped: cancelled").into())
            }
            "make_task" => {
                let at = "2026-07-28T00:00:00Z";
                let task = Task::new("task-1", TaskStatus::Working, at, at)
                    .with_status_message("x".repeat(5_000));
                Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
            }
            _ => Ok(InputRequiredResult::from_request_state("state-1").into()),
        }
    }
}

#[tokio::test]
async fn o2_converted_error_results_are_capped_too() {
    let client =
        connect(Backstop::new(Noisy::default()).with_limit(Limit::new(1_000).unwrap())).await;
    let received = call(&client, "big_failure", json!({})).await;
    let result = &received["result"];
    assert!(wire_size(result) <= 1_000, "L4: {}", wire_size(result));
    assert_eq!(result["isError"], true, "L5");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "), "{text}");
    assert!(
        text.ends_with("\nTry a smaller range."),
        "the tail survives: {text}"
    );
    assert_eq!(result["_meta"]["error_type"], "ExpectedToolError", "L6");
}

#[tokio::test]
async fn l1_an_input_required_result_passes_untouched() {
    let wrapped =
        connect_2026(Backstop::new(Noisy::default()).with_limit(Limit::new(200).unwrap())).await;
    let bare = connect_2026(Noisy::default()).await;
    let request = || CallToolRequestParams::new("needs_input");
    let through = wrapped.call_tool_once(request()).await.unwrap();
    let direct = bare.call_tool_once(request()).await.unwrap();
    let CallToolResponse::InputRequired(through) = through else {
        panic!("not input-required: {through:?}");
    };
    let CallToolResponse::InputRequired(direct) = direct else {
        panic!("not input-required: {direct:?}");
    };
    assert_eq!(
        serde_json::to_value(&through).unwrap(),
        serde_json::to_value(&direct).unwrap()
    );
    assert_eq!(through.request_state.as_deref(), Some("state-1"));
}

#[tokio::test]
async fn e9_a_cancelled_call_is_not_a_failure_to_convert() {
    let noisy = Noisy::default();
    let finished = Arc::clone(&noisy.0);
    let server = Backstop::new(noisy);
    let counts = server.failure_counts();
    let client = connect(server).await;
    let request = ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("wait")));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    handle
        .cancel(Some("the user pressed Esc".into()))
        .await
        .unwrap();
    finished.notified().await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(counts.snapshot().is_empty(), "E9: nothing was converted");
    // The session goes on.
    let received = call(&client, "big_failure", json!({})).await;
    assert_eq!(received["result"]["isError"], true);
    assert_eq!(counts.snapshot().total(), 1);
}

#[tokio::test]
async fn l1_a_task_result_passes_untouched() {
    let tasks_client = || ProbeClient {
        version: ProtocolVersion::V_2025_11_25,
        tasks: true,
    };
    let limit = Limit::new(1_000).unwrap();
    let wrapped = connect_as(
        tasks_client(),
        Backstop::new(Noisy::default()).with_limit(limit),
    )
    .await;
    let bare = connect_as(tasks_client(), Noisy::default()).await;
    let request = || CallToolRequestParams::new("make_task");
    let through = wrapped.call_tool_once(request()).await.unwrap();
    let direct = bare.call_tool_once(request()).await.unwrap();
    let (CallToolResponse::Task(through), CallToolResponse::Task(direct)) = (through, direct)
    else {
        panic!("not task results");
    };
    let through = serde_json::to_value(&through).unwrap();
    assert_eq!(through, serde_json::to_value(&direct).unwrap());
    assert!(wire_size(&through) > 1_000, "over the cap, yet untouched");
}
