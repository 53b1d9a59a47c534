//! `backstop proxy` in front of a fastmcp 4.x server whose tools run as background
//! tasks through `fastmcp-tasks` (PyPI, pinned in `tests/peers/requirements.txt`,
//! installed by `.ci/run` into `target/fastmcp-venv`): the 2026-07-28 tasks extension
//! (SEP-2663). A task-augmented `tools/call` is answered with a handle
//! (`resultType: "task"`), and the tool's outcome arrives later inside the task's state,
//! in the answer to `tasks/get`. Through the proxy that outcome is shaped for the tool
//! that created the task: cut to the cap (SPEC L1), a failed task made `completed` with
//! the call's `isError` result (E11), fastmcp's wrapped failure without its wrapper
//! (E2). The server is `tests/peers/servers/fastmcp_tasks_server.py`.
//!
//! Locally, without the venv, the tests are skipped with a message; with `CI=true` a
//! missing venv fails.

mod support;

use std::thread::sleep;
use std::time::Duration;

use serde_json::{Value, json};
use support::Session;

const CAP: usize = 2_000;

/// A stateless 2026-07-28 client of the tasks extension over stdio.
struct TaskClient {
    session: Session,
    next_id: u64,
}

impl TaskClient {
    fn start(through_proxy: bool, python: &str) -> TaskClient {
        let backstop = support::backstop();
        let server = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/peers/servers/fastmcp_tasks_server.py"
        );
        let cap = CAP.to_string();
        let mut command = Vec::new();
        if through_proxy {
            command.extend([
                backstop.to_str().unwrap(),
                "proxy",
                "--max-bytes",
                &cap,
                "--",
            ]);
        }
        command.extend([python, server]);
        TaskClient {
            session: Session::start(&command),
            next_id: 0,
        }
    }

    /// One request with the per-request envelope of 2026-07-28 (the tasks extension
    /// declared): its answer.
    fn ask(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
                {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1.0"},
        });
        let request = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method,
            "params": params});
        let lines = self
            .session
            .request(&request.to_string(), &json!(self.next_id));
        serde_json::from_str(lines.last().unwrap()).unwrap()
    }

    /// Call `tool` as a task and poll `tasks/get` until the task is no longer working:
    /// the handle's answer and the last state's answer.
    fn run(&mut self, tool: &str, arguments: Value) -> (Value, Value) {
        let handle = self.ask("tools/call", json!({"name": tool, "arguments": arguments}));
        let task_id = handle["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task handle: {handle}"))
            .to_owned();
        for _ in 0..300 {
            let state = self.ask("tasks/get", json!({"taskId": task_id}));
            if state["result"]["status"] != "working" {
                return (handle, state);
            }
            sleep(Duration::from_millis(100));
        }
        panic!("task {task_id} still working after 30 s");
    }

    fn end(self) {
        // The task backend's worker keeps the server up after stdin closes.
        self.session.terminate();
    }
}

fn python_with_tasks(test: &str) -> Option<String> {
    match support::venv_python("fastmcp_tasks") {
        Some(python) => Some(python.to_str().unwrap().to_owned()),
        None => {
            support::peer_missing(test, "fastmcp-tasks (PyPI, in target/fastmcp-venv)");
            None
        }
    }
}

/// Run `tool` directly and through the proxy: the two final task states.
fn both_ways(python: &str, tool: &str, arguments: Value) -> (Value, Value, Value) {
    let mut direct = TaskClient::start(false, python);
    let (_, direct_state) = direct.run(tool, arguments.clone());
    direct.end();
    let mut proxied = TaskClient::start(true, python);
    let (handle, state) = proxied.run(tool, arguments);
    proxied.end();
    (direct_state, handle, state)
}

#[test]
fn l1_a_task_s_result_in_tasks_get_is_cut_for_its_tool() {
    let Some(python) = python_with_tasks("l1_a_task_s_result_in_tasks_get_is_cut_for_its_tool")
    else {
        return;
    };
    let (direct, handle, shaped) = both_ways(&python, "scrollback", json!({"lines": 3000}));
    assert_eq!(
        handle["result"]["resultType"], "task",
        "the handle passes: {handle}"
    );
    assert_eq!(handle["result"]["status"], "working", "{handle}");
    let full = &direct["result"]["result"];
    assert!(
        serde_json::to_vec(full).unwrap().len() > CAP,
        "{direct:.300}"
    );

    let task = &shaped["result"];
    assert_eq!(task["status"], "completed", "{shaped:.500}");
    assert_eq!(task["resultType"], "complete");
    assert!(
        task["ttlMs"].is_u64() && task["createdAt"].is_string(),
        "the state stays"
    );
    let result = &task["result"];
    assert!(
        serde_json::to_vec(result).unwrap().len() <= CAP,
        "L4: {result}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "), "{text:.200}");
    assert!(
        text.ends_with("line 2999"),
        "L2: the tail is kept: {text:.200}"
    );
    assert!(
        result["_meta"]["backstop/truncation"].is_object(),
        "L12: {result}"
    );
    // L15: fastmcp gives the tool an outputSchema; the structured copy stays valid.
    let structured = result["structuredContent"]["result"].as_str().unwrap();
    assert!(structured.ends_with("line 2999"), "{structured:.200}");
}

#[test]
fn e11_a_failed_task_becomes_completed_with_the_call_s_error_result() {
    let Some(python) =
        python_with_tasks("e11_a_failed_task_becomes_completed_with_the_call_s_error_result")
    else {
        return;
    };
    let (direct, _, shaped) = both_ways(&python, "protocol_fail", json!({"pane": "%6"}));
    assert_eq!(direct["result"]["status"], "failed", "{direct}");
    assert_eq!(direct["result"]["error"]["code"], -32603, "{direct}");

    let task = &shaped["result"];
    assert_eq!(task["status"], "completed", "{shaped}");
    assert!(task.get("error").is_none(), "{shaped}");
    assert_eq!(
        task["result"]["content"],
        json!([{"type": "text", "text": "Pane not found: %6"}]),
        "{shaped}"
    );
    assert_eq!(task["result"]["isError"], true);
    assert_eq!(task["result"]["resultType"], "complete", "R4");
}

#[test]
fn e2_a_task_s_wrapped_failure_loses_fastmcp_s_wrapper() {
    let Some(python) = python_with_tasks("e2_a_task_s_wrapped_failure_loses_fastmcp_s_wrapper")
    else {
        return;
    };
    let (direct, _, shaped) = both_ways(&python, "explode", json!({"pane": "%5"}));
    assert_eq!(
        direct["result"]["result"]["content"][0]["text"],
        "Error calling tool 'explode': Pane not found: %5",
        "{direct}"
    );
    let result = &shaped["result"]["result"];
    assert_eq!(shaped["result"]["status"], "completed", "{shaped}");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "Pane not found: %5"}]),
        "{shaped}"
    );
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["_meta"]["error_type"], "InternalError",
        "E3: {result}"
    );
}
