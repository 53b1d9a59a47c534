//! The 2026-07-28 tasks extension over Streamable HTTP: the fastmcp-tasks server
//! (`tests/peers/servers/fastmcp_tasks_server.py`, fastmcp 4.x and `fastmcp-tasks` from the venv
//! `.ci/run` makes) behind `backstop gateway` and `backstop proxy --url`. A stateless
//! client's `tools/call` and each `tasks/get` are separate HTTP requests; the gateway
//! still knows which tool a task runs, so the task's result is cut for it (SPEC L1)
//! and a failed task becomes `completed` with the call's `isError` result (E11).
//! Locally, without the venv, skipped with a message; with `CI=true` a failure.

mod http_support;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

use http::Method;
use http_support::{Http, Spawned, UrlProxy, start_gateway};
use serde_json::{Value, json};

const CAP: usize = 2_000;

/// The task server over Streamable HTTP; its URL.
fn start_task_server(python: &PathBuf) -> (Spawned, String) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/servers/fastmcp_tasks_server.py");
    http_support::start_python_server(python, &script, &[])
}

fn python_with_tasks(test: &str) -> Option<PathBuf> {
    let python = http_support::python().filter(|python| {
        Command::new(python)
            .args(["-c", "import fastmcp_tasks"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    http_support::or_skip(python, test, "fastmcp-tasks in target/fastmcp-venv")
}

/// A request of a stateless 2026-07-28 client that declares the tasks extension.
fn request(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1.0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Call `tool` as a task through `ask` (one request, its response) and poll
/// `tasks/get` until the task is no longer working: the last state's answer.
fn run_task(
    mut ask: impl FnMut(u64, &str, Value, &str) -> Value,
    tool: &str,
    args: Value,
) -> Value {
    let handle = ask(
        1,
        "tools/call",
        json!({"name": tool, "arguments": args}),
        tool,
    );
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let task_id = handle["result"]["taskId"].as_str().unwrap().to_owned();
    for n in 2..300 {
        let state = ask(n, "tasks/get", json!({"taskId": task_id}), &task_id);
        if state["result"]["status"] != "working" {
            return state;
        }
        sleep(Duration::from_millis(100));
    }
    panic!("task {task_id} still working after 30 s");
}

/// What every mode must show: the scrollback task's result cut for its tool, and the
/// failed task converted.
fn check(scrollback: &Value, failed: &Value) {
    let task = &scrollback["result"];
    assert_eq!(task["status"], "completed", "{scrollback:.500}");
    let result = &task["result"];
    assert!(
        serde_json::to_vec(result).unwrap().len() <= CAP,
        "L1: {result:.500}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with("line 2999"), "L2: {text:.200}");
    assert!(result["_meta"]["backstop/truncation"].is_object(), "L12");

    let task = &failed["result"];
    assert_eq!(task["status"], "completed", "E11: {failed}");
    assert_eq!(
        task["result"]["content"],
        json!([{"type": "text", "text": "Pane not found: %6"}]),
        "{failed}"
    );
    assert_eq!(task["result"]["isError"], true);
}

#[test]
fn l1_e11_stateless_task_states_are_shaped_through_the_gateway() {
    let Some(python) =
        python_with_tasks("l1_e11_stateless_task_states_are_shaped_through_the_gateway")
    else {
        return;
    };
    let (_server, upstream) = start_task_server(&python);
    let http = Http::new();
    let ask_at = |url: &str| {
        let http = &http;
        let url = url.to_owned();
        move |id: u64, method: &str, params: Value, name: &str| {
            let reply = http.send(
                Method::POST,
                &url,
                &[
                    ("content-type", "application/json"),
                    ("accept", "application/json, text/event-stream"),
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", method),
                    ("mcp-name", name),
                ],
                &request(id, method, params),
            );
            reply.response()
        }
    };
    // Directly: the whole result, and the failure as the task's error.
    let direct = run_task(ask_at(&upstream), "scrollback", json!({"lines": 3000}));
    assert!(
        serde_json::to_vec(&direct["result"]["result"])
            .unwrap()
            .len()
            > CAP
    );
    let direct_failed = run_task(ask_at(&upstream), "protocol_fail", json!({"pane": "%6"}));
    assert_eq!(
        direct_failed["result"]["status"], "failed",
        "{direct_failed}"
    );

    let (_gateway, url) = start_gateway(&upstream, &["--max-bytes", &CAP.to_string()]);
    let scrollback = run_task(ask_at(&url), "scrollback", json!({"lines": 3000}));
    let failed = run_task(ask_at(&url), "protocol_fail", json!({"pane": "%6"}));
    check(&scrollback, &failed);
}

#[test]
fn l1_e11_task_states_are_shaped_through_proxy_url() {
    let Some(python) = python_with_tasks("l1_e11_task_states_are_shaped_through_proxy_url") else {
        return;
    };
    let (_server, upstream) = start_task_server(&python);
    let mut proxy = UrlProxy::start(&upstream, &["--max-bytes", &CAP.to_string()]);
    let mut next = 0;
    let mut ask = |_: u64, method: &str, params: Value, _: &str| {
        next += 1;
        proxy.send(&request(next, method, params));
        proxy.until_response(next as u32).pop().unwrap()
    };
    let scrollback = run_task(&mut ask, "scrollback", json!({"lines": 3000}));
    let failed = run_task(&mut ask, "protocol_fail", json!({"pane": "%6"}));
    check(&scrollback, &failed);
}
