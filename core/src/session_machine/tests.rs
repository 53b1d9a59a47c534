//! The session machine's unit tests.

use std::time::Instant;

use serde_json::{Value, json};

use super::*;
use crate::failure::Failure;
use crate::limit::HeldInPart;
use crate::protocol_error::ProtocolError;
use crate::result::ToolResult;
use crate::session::Revision;

/// Whether a server message read as it comes, with this much of its head read, passes
/// early ([`SessionMachine::server_head`]): `result`, a result (with an id, else an
/// error).
fn passes_early(
    machine: &mut SessionMachine,
    id: Option<&RequestId>,
    method: Option<&str>,
    result: bool,
) -> bool {
    let head = ServerHead {
        id,
        method,
        result,
        error: id.is_some() && !result,
        ..ServerHead::default()
    };
    machine.server_head(head) == Disposition::Pass
}

fn id(n: u32) -> RequestId {
    RequestId::Number(n.to_string())
}

fn call(n: u32, tool: &str) -> ClientRequest {
    ClientRequest::new(id(n), n.to_string(), "tools/call").tool(tool)
}

fn listed(tools: &[&str]) -> SessionMachine {
    let mut machine = SessionMachine::default();
    machine.client_request(
        ClientRequest::new(id(0), "0", "tools/list"),
        false,
        Instant::now(),
    );
    let tools: Vec<Value> = tools.iter().map(|t| json!({"name": t})).collect();
    let answer = machine.server_response(
        &id(0),
        Response::Result(json!({"tools": tools})),
        Instant::now(),
    );
    assert_eq!(answer, Answer::Unchanged);
    machine
}

fn respond(machine: &mut SessionMachine, n: u32, response: Response) -> Answer {
    machine.server_response(&id(n), response, Instant::now())
}

fn err(code: i64, message: &str) -> Response {
    Response::Error(ProtocolError::new(code, message))
}

#[test]
fn e8_from_a_complete_listing_only() {
    let mut machine = listed(&["list_panes"]);
    machine.client_request(call(1, "list_pane"), false, Instant::now());
    let answer = respond(&mut machine, 1, err(-32602, "Unknown tool: list_pane"));
    let Answer::Error { id_json, error } = answer else {
        panic!("E8: {answer:?}")
    };
    assert_eq!((id_json.as_str(), error.code), ("1", -32602));
    assert_eq!(
        error.data.unwrap()["suggestion"],
        "Did you mean 'list_panes'?"
    );

    // The tool list changed: the server's own word passes as it came.
    machine.server_notification(TOOLS_LIST_CHANGED);
    machine.client_request(call(2, "list_pane"), false, Instant::now());
    assert_eq!(
        respond(&mut machine, 2, err(-32602, "Unknown tool: list_pane")),
        Answer::Unchanged
    );
    // A success is the server's word that the tool exists after all.
    machine.client_request(call(3, "brand_new"), false, Instant::now());
    let ok = json!({"content": [{"type": "text", "text": "ok"}]});
    assert_eq!(
        respond(&mut machine, 3, Response::Result(ok)),
        Answer::Unchanged
    );
}

#[test]
fn r5_a_machine_given_a_listing_decides_e8_without_listing_again() {
    let listed = listed(&["list_panes"]);
    let mut machine = SessionMachine::default();
    machine.set_catalog(listed.catalog().clone());
    let own = machine.client_request(call(1, "list_pane"), true, Instant::now());
    assert!(
        own.is_none(),
        "no listing of its own: the one given is complete"
    );
    let Answer::Error { error, .. } =
        respond(&mut machine, 1, err(-32602, "Unknown tool: list_pane"))
    else {
        panic!("E8")
    };
    assert_eq!(
        error.data.unwrap()["suggestion"],
        "Did you mean 'list_panes'?"
    );
}

/// A `tasks/result` request for task `task_id`.
fn task_result(n: u32, task_id: &str) -> ClientRequest {
    let mut request = ClientRequest::new(id(n), n.to_string(), "tasks/result");
    request.task_id = Some(task_id.to_owned());
    request
}

#[test]
fn l1_e11_a_task_s_result_is_shaped_as_its_call_s() {
    let mut machine = SessionMachine::new(Limit::new(400).unwrap());
    machine.client_request(call(1, "research"), false, Instant::now());
    let handle = json!({"task": {"taskId": "t-1", "status": "working"}});
    assert_eq!(
        respond(&mut machine, 1, Response::Result(handle)),
        Answer::Unchanged,
        "the handle passes as it came"
    );
    assert_eq!(machine.tasks().tool_of("t-1").as_deref(), Some("research"));

    // L1: the result, when it comes, is cut as the call's would be.
    machine.client_request(task_result(2, "t-1"), false, Instant::now());
    let report = json!({"content": [{"type": "text", "text": "line\n".repeat(500)}]});
    let Answer::Result {
        result, truncation, ..
    } = respond(&mut machine, 2, Response::Result(report))
    else {
        panic!("cut")
    };
    assert!(truncation.is_some() && result.wire_size() <= 400);

    // E11: a failed task is a failure of the call that created it.
    machine.client_request(task_result(3, "t-1"), false, Instant::now());
    let Answer::Result { result, .. } =
        respond(&mut machine, 3, err(-32603, "Internal error: boom"))
    else {
        panic!("E11")
    };
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.content[0].as_text(), Some("boom"));

    // A task this session did not create: its result passes as it came.
    machine.client_request(task_result(4, "t-9"), false, Instant::now());
    assert!(!machine.answer_matters(&id(4), true));
}

/// A `tasks/get` request for task `task_id` (2026-07-28).
fn task_get(n: u32, task_id: &str) -> ClientRequest {
    let mut request = ClientRequest::new(id(n), n.to_string(), "tasks/get");
    request.task_id = Some(task_id.to_owned());
    request
}

/// A task state of the 2026-07-28 tasks extension, with `outcome`'s members.
fn task_state(task_id: &str, status: &str, outcome: Value) -> Value {
    let mut state = json!({"taskId": task_id, "status": status, "ttlMs": 900000,
        "createdAt": "2026-12-02T19:42:40Z", "resultType": "complete"});
    state
        .as_object_mut()
        .unwrap()
        .extend(outcome.as_object().unwrap().clone());
    state
}

#[test]
fn l1_e11_a_2026_task_s_state_is_shaped_as_its_call_s() {
    let mut machine = SessionMachine::new(Limit::new(400).unwrap());
    machine.client_request(call(1, "research"), false, Instant::now());
    let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    assert_eq!(
        respond(&mut machine, 1, Response::Result(handle)),
        Answer::Unchanged
    );
    assert_eq!(machine.tasks().tool_of("t-1").as_deref(), Some("research"));

    // Working: nothing to shape, and nothing read twice.
    machine.client_request(task_get(2, "t-1"), false, Instant::now());
    assert!(
        !machine.answer_matters(&id(2), false),
        "an error about tasks/get passes"
    );
    let working = task_state("t-1", "working", json!({}));
    assert_eq!(
        respond(&mut machine, 2, Response::Result(working)),
        Answer::Unchanged
    );

    // L1: the result inside is cut as the call's would be; the rest stays.
    machine.client_request(task_get(3, "t-1"), false, Instant::now());
    let report = json!({"result": {"content": [{"type": "text", "text": "line\n".repeat(500)}]}});
    let Answer::TaskState {
        id_json,
        task,
        truncation,
    } = respond(
        &mut machine,
        3,
        Response::Result(task_state("t-1", "completed", report)),
    )
    else {
        panic!("cut")
    };
    assert_eq!(id_json, "3");
    assert!(truncation.is_some());
    let result = ToolResult::from_value(task["result"].clone()).unwrap();
    assert!(result.wire_size() <= 400, "{}", result.wire_size());
    assert_eq!(
        (task["status"].as_str(), task["ttlMs"].as_u64()),
        (Some("completed"), Some(900000))
    );
    assert_eq!(task["taskId"], "t-1");

    // Under the cap: as it came.
    machine.client_request(task_get(4, "t-1"), false, Instant::now());
    let small = json!({"result": {"content": [{"type": "text", "text": "done"}]}});
    let small = task_state("t-1", "completed", small);
    assert_eq!(
        respond(&mut machine, 4, Response::Result(small)),
        Answer::Unchanged
    );

    // E11: failed becomes completed, the error the call's isError result.
    machine.client_request(task_get(5, "t-1"), false, Instant::now());
    let error = json!({"error": {"code": -32603, "message": "Internal error: Pane not found: %5"}});
    let Answer::TaskState { task, .. } = respond(
        &mut machine,
        5,
        Response::Result(task_state("t-1", "failed", error)),
    ) else {
        panic!("E11")
    };
    assert_eq!(task["status"], "completed");
    assert!(task.get("error").is_none());
    let result = ToolResult::from_value(task["result"].clone()).unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.content[0].as_text(), Some("Pane not found: %5"));
    assert_eq!(
        machine.error_counts().get("InternalError:tools/call"),
        1,
        "G3"
    );

    // E10: an error about the request stays the task's error.
    machine.client_request(task_get(6, "t-1"), false, Instant::now());
    let negotiation = json!({"error": {"code": -32021, "message": "missing capability"}});
    let negotiation = task_state("t-1", "failed", negotiation);
    assert_eq!(
        respond(&mut machine, 6, Response::Result(negotiation)),
        Answer::Unchanged
    );

    // A task this session did not create passes as it came.
    machine.client_request(task_get(7, "t-9"), false, Instant::now());
    assert!(!machine.answer_matters(&id(7), true));
}

#[test]
fn r5_a_request_outside_any_session_lists_without_a_handshake() {
    let now = Instant::now();
    let mut machine = SessionMachine::default();
    assert!(
        machine.client_request(call(1, "t"), true, now).is_none(),
        "no handshake seen"
    );
    let mut outside = SessionMachine::default();
    outside.set_outside_session();
    let own = outside
        .client_request(call(2, "t"), true, now)
        .expect("E8, R5");
    assert_eq!(
        (own.method, own.params.is_empty()),
        ("tools/list", true),
        "a 2025 request: no _meta"
    );
    let mut newer = SessionMachine::default();
    newer.set_outside_session();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 1});
    let own = newer
        .client_request(call(3, "t").meta(meta.as_object().cloned()), true, now)
        .expect("E8, R5");
    assert_eq!(
        own.params["_meta"],
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
    );
}

#[test]
fn r5_a_call_during_the_handshake_lists_once_the_handshake_is_done() {
    let now = Instant::now();
    let initialize = || {
        let mut request = ClientRequest::new(id(0), "0", "initialize");
        request.initialize = Some(json!({"protocolVersion": "2025-11-25"}));
        request
    };
    let answered = || Response::Result(json!({"protocolVersion": "2025-11-25"}));
    let mut machine = SessionMachine::default();
    machine.client_request(initialize(), true, now);
    assert!(machine.client_request(call(1, "t"), true, now).is_none());
    respond(&mut machine, 0, answered());
    assert!(
        machine.deferred_listing(Instant::now()).is_none(),
        "not initialized yet"
    );
    machine.client_notification("notifications/initialized", None);
    let own = machine.deferred_listing(Instant::now()).expect("due");
    assert_eq!(own.method, "tools/list");
    assert!(machine.listing_in_flight());
    assert!(
        machine.deferred_listing(Instant::now()).is_none(),
        "given once"
    );

    // A call that may not send (a transport without own requests) makes none due.
    let mut quiet = SessionMachine::default();
    quiet.client_request(initialize(), true, now);
    quiet.client_request(call(1, "t"), false, now);
    respond(&mut quiet, 0, answered());
    quiet.client_notification("notifications/initialized", None);
    assert!(quiet.deferred_listing(Instant::now()).is_none());

    // A call the catalog judges (it knows the tool) makes none due either.
    let mut known = listed(&["t"]);
    known.client_request(initialize(), true, now);
    known.client_request(call(1, "t"), true, now);
    respond(&mut known, 0, answered());
    known.client_notification("notifications/initialized", None);
    assert!(known.deferred_listing(Instant::now()).is_none());

    // A new `initialize` forgets the listing the last handshake owed.
    let mut again = SessionMachine::default();
    again.client_request(initialize(), true, now);
    again.client_request(call(1, "t"), true, now);
    again.client_request(initialize(), true, now);
    respond(&mut again, 0, answered());
    again.client_notification("notifications/initialized", None);
    assert!(again.deferred_listing(Instant::now()).is_none());
}

#[test]
fn r5_a_due_listing_waits_for_one_in_flight() {
    let now = Instant::now();
    let mut machine = SessionMachine::default();
    let mut initialize = ClientRequest::new(id(0), "0", "initialize");
    initialize.initialize = Some(json!({"protocolVersion": "2025-11-25"}));
    machine.client_request(initialize, true, now);
    machine.client_request(call(1, "t"), true, now);
    respond(
        &mut machine,
        0,
        Response::Result(json!({"protocolVersion": "2025-11-25"})),
    );
    machine.client_notification("notifications/initialized", None);
    // Another call lists before the due listing is sent: one listing, not two.
    assert!(machine.client_request(call(2, "u"), true, now).is_some());
    assert!(
        machine.deferred_listing(Instant::now()).is_none(),
        "one in flight"
    );
    assert_eq!(machine.listing_requests_sent(), 1);
}

#[test]
fn l16_the_tool_of_a_pending_call_or_task_state_is_known() {
    let now = Instant::now();
    let mut machine = SessionMachine::default();
    machine.client_request(call(1, "research"), false, now);
    assert_eq!(machine.pending_tool(&id(1)), Some("research"));
    let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    respond(&mut machine, 1, Response::Result(handle));
    machine.client_request(task_get(2, "t-1"), false, now);
    assert_eq!(
        machine.pending_tool(&id(2)),
        Some("research"),
        "a tasks/get's task"
    );
    machine.client_request(task_get(3, "t-9"), false, now);
    assert_eq!(machine.pending_tool(&id(3)), None, "a task no call created");
    machine.client_request(ClientRequest::new(id(4), "4", "ping"), false, now);
    assert_eq!(machine.pending_tool(&id(4)), None);

    // A machine given this one's tasks knows them too.
    let other = SessionMachine::default().with_tasks(machine.tasks().clone());
    assert_eq!(other.tasks().tool_of("t-1").as_deref(), Some("research"));
    assert!(SessionMachine::default().tasks().tool_of("t-1").is_none());
}

#[test]
fn e8_only_a_tools_call_starts_a_listing_not_a_task_s_result() {
    // A session ready for backstop's listing, whose catalog is incomplete.
    let now = Instant::now();
    let mut machine = SessionMachine::default();
    machine.client_request(ClientRequest::new(id(0), "0", "initialize"), true, now);
    respond(
        &mut machine,
        0,
        Response::Result(json!({"protocolVersion": "2025-11-25"})),
    );
    machine.client_notification("notifications/initialized", None);
    machine.client_request(call(1, "research"), false, now);
    let handle = json!({"task": {"taskId": "t-1", "status": "working"}});
    respond(&mut machine, 1, Response::Result(handle));
    assert!(
        machine
            .client_request(task_result(2, "t-1"), true, now)
            .is_none(),
        "tasks/result is shaped as a call, but lists nothing"
    );
    assert!(
        machine
            .client_request(call(3, "research"), true, now)
            .is_some(),
        "a call lists"
    );
}

#[test]
fn b3_l1_a_task_s_outcome_held_in_part_is_shaped_as_the_whole_would_be() {
    let now = Instant::now();
    let mut machine = SessionMachine::new(Limit::new(1_000).unwrap());
    machine.client_request(call(1, "research"), false, now);
    let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    respond(&mut machine, 1, Response::Result(handle));
    let tail = "line\n".repeat(HeldInPart::min_held_bytes(1_000) / 5 + 1);
    let outcome = json!({"result": {"content": [{"type": "text", "text": tail}]}});
    let held = HeldInPart::default().with_text_head(0, 9_000_000);

    // tasks/get: only a pending one of a known task; cut from what is held.
    assert_eq!(
        machine.server_task_state_in_part(
            &id(2),
            task_state("t-1", "completed", outcome.clone()),
            &held
        ),
        None,
        "nothing pending"
    );
    machine.client_request(call(3, "research"), false, now);
    assert_eq!(
        machine.server_task_state_in_part(
            &id(3),
            task_state("t-1", "completed", outcome.clone()),
            &held
        ),
        None,
        "a call, not a task's state"
    );
    machine.client_request(task_get(4, "t-1"), false, now);
    let failed = task_state(
        "t-1",
        "failed",
        json!({"error": {"code": -32603, "message": "x"}}),
    );
    assert_eq!(
        machine.server_task_state_in_part(&id(4), failed, &held),
        None,
        "no outcome held in part: read whole"
    );
    assert!(machine.pending().get(&id(4)).is_some(), "still pending");
    let Some(Answer::TaskState {
        task,
        truncation,
        id_json,
    }) = machine.server_task_state_in_part(
        &id(4),
        task_state("t-1", "completed", outcome.clone()),
        &held,
    )
    else {
        panic!("L1 from what is held");
    };
    assert_eq!(id_json, "4");
    assert_eq!(task["status"], "completed");
    assert_eq!(task["ttlMs"], 900000, "the rest of the state kept");
    assert_eq!(truncation.unwrap().original_bytes, 9_000_000 + tail.len());
    assert!(machine.pending().get(&id(4)).is_none(), "answered");

    // Cancelled: passes as it came (E9).
    machine.client_request(task_get(5, "t-1"), false, now);
    machine.client_notification("notifications/cancelled", Some(&id(5)));
    assert_eq!(
        machine.server_task_state_in_part(
            &id(5),
            task_state("t-1", "completed", outcome.clone()),
            &held
        ),
        Some(Answer::Unchanged)
    );

    // notifications/tasks: the same, for a known task only.
    let (task, truncation) = machine
        .server_task_status_in_part(task_state("t-1", "completed", outcome.clone()), &held)
        .expect("decided")
        .expect("cut");
    assert_eq!(task["taskId"], "t-1");
    assert!(truncation.is_some());
    assert_eq!(
        machine.server_task_status_in_part(task_state("t-9", "completed", outcome), &held),
        None,
        "a task of no call of this session"
    );
}

#[test]
fn l1_e11_a_task_s_state_notified_is_shaped_as_its_call_s() {
    let mut machine = SessionMachine::new(Limit::new(400).unwrap());
    assert!(
        passes_early(&mut machine, None, Some(TASK_STATUS), false),
        "no task yet"
    );
    machine.client_request(call(1, "research"), false, Instant::now());
    let handle = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
    respond(&mut machine, 1, Response::Result(handle));
    assert!(
        !passes_early(&mut machine, None, Some(TASK_STATUS), false),
        "read it whole"
    );
    assert!(passes_early(
        &mut machine,
        None,
        Some("notifications/progress"),
        false
    ));

    let report = json!({"result": {"content": [{"type": "text", "text": "line\n".repeat(500)}]}});
    let (task, truncation) = machine
        .server_task_status(task_state("t-1", "completed", report))
        .expect("L1");
    assert!(truncation.is_some());
    assert!(
        ToolResult::from_value(task["result"].clone())
            .unwrap()
            .wire_size()
            <= 400
    );
    let other = json!({"result": {"content": [{"type": "text", "text": "line\n".repeat(500)}]}});
    assert!(
        machine
            .server_task_status(task_state("t-2", "completed", other))
            .is_none()
    );
    assert!(machine.server_task_status(json!("not a task")).is_none());
}

#[test]
fn errors_about_the_request_and_cancellations_pass() {
    let mut machine = listed(&["run"]);
    for (n, code) in [
        (1, -32700),
        (2, -32600),
        (3, -32601),
        (4, -32020),
        (5, -32021),
        (6, -32022),
        (7, -32800),
    ] {
        machine.client_request(call(n, "run"), false, Instant::now());
        assert_eq!(
            respond(&mut machine, n, err(code, "about the request")),
            Answer::Unchanged,
            "E9/E10: {code}"
        );
    }
    machine.client_request(call(8, "run"), false, Instant::now());
    machine.client_notification("notifications/cancelled", Some(&id(8)));
    assert!(!machine.answer_matters(&id(8), false));
    assert_eq!(
        respond(&mut machine, 8, err(-32603, "boom")),
        Answer::Unchanged,
        "E9"
    );
    assert!(machine.pending().is_empty());
    assert_eq!(machine.error_counts().total(), 0);
}

#[test]
fn a_failure_is_converted_logged_and_counted() {
    let mut machine = listed(&["run"]);
    machine.client_request(call(1, "run").arguments(["cmd"]), false, Instant::now());
    let answer = respond(&mut machine, 1, err(-32603, "Internal error: boom"));
    let Answer::Result { result, .. } = answer else {
        panic!("{answer:?}")
    };
    assert!(result.is_error());
    assert_eq!(result.content[0].as_text(), Some("boom"));
    let records = machine.take_log_records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].tool.as_deref(), Some("run"));
    assert!(machine.take_log_records().is_empty());
    assert_eq!(machine.error_counts().get("InternalError:tools/call"), 1);
}

#[test]
fn r4_a_converted_failure_carries_result_type_on_2026_07_28_only() {
    let mut machine = listed(&["run"]);
    let stateless = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let mut request = call(1, "run");
    request.meta = stateless.as_object().cloned();
    machine.client_request(request, false, Instant::now());
    let Answer::Result { result, .. } = respond(&mut machine, 1, err(-32603, "boom")) else {
        panic!("E1")
    };
    assert_eq!(result.result_type.as_deref(), Some("complete"), "R4");
    let wire = serde_json::to_value(&result).unwrap();
    assert_eq!(wire["resultType"], "complete");

    let mut init = ClientRequest::new(id(2), "2", "initialize");
    init.initialize = Some(json!({"protocolVersion": "2025-11-25"}));
    machine.client_request(init, false, Instant::now());
    machine.client_request(call(3, "run"), false, Instant::now());
    let Answer::Result { result, .. } = respond(&mut machine, 3, err(-32603, "boom")) else {
        panic!("E1")
    };
    assert_eq!(result.result_type, None, "no such member before 2026-07-28");
}

#[test]
fn results_over_the_cap_are_cut_and_others_pass() {
    let mut machine = SessionMachine::new(Limit::new(300).unwrap());
    machine.client_request(call(1, "scrollback"), false, Instant::now());
    let big = json!({"content": [{"type": "text", "text": "line\n".repeat(1000)}]});
    let Answer::Result { result, .. } = respond(&mut machine, 1, Response::Result(big)) else {
        panic!("L3")
    };
    assert!(serde_json::to_vec(&result).unwrap().len() <= 300);
    machine.client_request(call(2, "scrollback"), false, Instant::now());
    let small = json!({"content": [{"type": "text", "text": "PROMPT $"}]});
    assert_eq!(
        respond(&mut machine, 2, Response::Result(small)),
        Answer::Unchanged
    );
    machine.client_request(call(3, "scrollback"), false, Instant::now());
    assert_eq!(
        respond(&mut machine, 3, Response::Result(json!("not a result"))),
        Answer::Unchanged
    );
    machine.client_request(call(4, "scrollback"), false, Instant::now());
    assert_eq!(
        respond(&mut machine, 4, Response::Unread),
        Answer::Unchanged
    );
}

#[test]
fn resource_errors_follow_the_revision_of_the_handshake() {
    let mut machine = SessionMachine::default();
    let mut init = ClientRequest::new(id(0), "0", "initialize");
    init.initialize =
        Some(json!({"protocolVersion": "2025-06-18", "clientInfo": {"name": "c", "version": "1"}}));
    machine.client_request(init, false, Instant::now());
    respond(
        &mut machine,
        0,
        Response::Result(json!({"protocolVersion": "2025-11-25"})),
    );
    assert_eq!(
        machine.session().revision,
        Some(Revision::V2025_11_25),
        "the server's word"
    );
    assert_eq!(machine.session().client.as_ref().unwrap().name, "c");
    let mut read = ClientRequest::new(id(1), "1", "resources/read");
    read.uri = Some("sessions://gone".into());
    machine.client_request(read, false, Instant::now());
    let gone = Response::Error(
        ProtocolError::new(-32602, "Resource not found")
            .with_data(json!({"uri": "sessions://gone"})),
    );
    let Answer::Error { error, .. } = respond(&mut machine, 1, gone) else {
        panic!("R3")
    };
    assert_eq!(error.code, -32002);
    // Its result, or another method's error, passes.
    let mut read = ClientRequest::new(id(2), "2", "resources/read");
    read.uri = Some("a".into());
    machine.client_request(read, false, Instant::now());
    assert_eq!(
        respond(&mut machine, 2, Response::Result(json!({"contents": []}))),
        Answer::Unchanged
    );
    machine.client_request(
        ClientRequest::new(id(3), "3", "prompts/get"),
        false,
        Instant::now(),
    );
    assert_eq!(
        respond(&mut machine, 3, err(-32603, "boom")),
        Answer::Unchanged
    );
    // An answer nobody asked for passes.
    assert_eq!(
        respond(&mut machine, 99, err(-32603, "boom")),
        Answer::Unchanged
    );
}

#[test]
fn the_own_listing_waits_for_the_handshake_and_follows_every_page() {
    let now = Instant::now();
    let mut machine = SessionMachine::default();
    let init = ClientRequest::new(id(0), "0", "initialize");
    assert!(machine.client_request(init, true, Instant::now()).is_none());
    assert!(
        machine
            .client_request(call(1, "t"), true, Instant::now())
            .is_none(),
        "not answered yet"
    );
    respond(
        &mut machine,
        0,
        Response::Result(json!({"protocolVersion": "2025-11-25"})),
    );
    assert!(
        machine
            .client_request(call(2, "t"), true, Instant::now())
            .is_none(),
        "not initialized yet"
    );
    machine.client_notification("notifications/initialized", None);
    assert!(
        machine
            .client_request(call(3, "t"), false, Instant::now())
            .is_none(),
        "may not send"
    );
    let first = machine
        .client_request(call(4, "t"), true, Instant::now())
        .expect("lists");
    assert_eq!(
        first.to_json(),
        r#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list"}"#
    );
    assert!(machine.listing_in_flight() && machine.answers_own_listing(&first.id));
    assert!(
        machine
            .client_request(call(5, "t"), true, Instant::now())
            .is_none(),
        "one at a time"
    );
    assert!(machine.is_pending_tool_call(&id(4)) && !machine.is_pending_tool_call(&id(0)));
    assert!(
        !passes_early(&mut machine, Some(&id(9)), None, true),
        "the listing keeps the order"
    );

    let page = json!({"tools": [{"name": "a"}], "nextCursor": "c2"});
    let second = machine
        .own_listing_answer(Some(&page), now)
        .expect("page 2");
    assert_eq!(second.params["cursor"], "c2");
    assert_eq!(machine.listing_requests_sent(), 2);
    assert!(!machine.answers_own_listing(&first.id) && machine.answers_own_listing(&second.id));
    assert!(
        machine
            .own_listing_answer(Some(&json!({"tools": [{"name": "t"}]})), now)
            .is_none()
    );
    assert!(!machine.listing_in_flight() && machine.catalog().is_complete());
    assert!(machine.catalog().contains("a") && machine.catalog().contains("t"));
    assert!(
        machine
            .client_request(call(6, "t"), true, Instant::now())
            .is_none(),
        "complete: no listing"
    );
}

#[test]
fn a_failed_own_listing_is_not_retried_until_the_list_changes() {
    let mut machine = SessionMachine::default();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "other": 1});
    let stateless = |n| {
        let mut request = call(n, "t");
        request.meta = meta.as_object().cloned();
        request
    };
    let own = machine
        .client_request(stateless(1), true, Instant::now())
        .expect("a stateless client lists");
    assert_eq!(
        own.params["_meta"],
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
    );
    assert!(machine.own_listing_answer(None, Instant::now()).is_none());
    assert!(
        machine
            .client_request(stateless(2), true, Instant::now())
            .is_none(),
        "failed: not again"
    );
    machine.server_notification(TOOLS_LIST_CHANGED);
    let again = machine
        .client_request(stateless(3), true, Instant::now())
        .expect("the list changed");
    assert!(machine.listing_in_flight() && machine.answers_own_listing(&again.id));
    machine.abandon_listing();
    assert!(!machine.listing_in_flight());
    assert!(
        machine
            .client_request(call(4, "t"), true, Instant::now())
            .is_none(),
        "no meta, no handshake"
    );
}

#[test]
fn passes_early_takes_in_list_changed_and_forgets_what_passed() {
    let mut machine = listed(&["t"]);
    machine.client_request(
        ClientRequest::new(id(1), "1", "ping"),
        false,
        Instant::now(),
    );
    assert!(passes_early(&mut machine, Some(&id(1)), None, true));
    assert!(machine.pending().is_empty(), "passed: no longer pending");
    assert!(
        passes_early(&mut machine, None, None, true),
        "nothing pending needs a result"
    );
    machine.client_request(call(2, "t"), false, Instant::now());
    assert!(!passes_early(&mut machine, None, None, true));
    assert!(!passes_early(&mut machine, None, None, false) || machine.pending().len() == 1);
    assert!(passes_early(
        &mut machine,
        None,
        Some(TOOLS_LIST_CHANGED),
        false
    ));
    assert!(
        !machine.catalog().is_complete(),
        "list_changed was taken in"
    );
    assert_eq!(machine.pending().len(), 1);
}

/// B5: an answer to a request answered here is dropped, never passes early, and
/// makes a result whose id is not known yet wait for it; other ids are not
/// touched, and an id sent again is the server's to answer.
#[test]
fn b5_an_answer_to_a_request_answered_here_is_dropped_never_passed_early() {
    let mut machine = listed(&["t"]);
    let read = ClientRequest::new(id(2), "2", "resources/read");
    machine.client_request(read, false, Instant::now());
    assert!(!machine.may_drop_answers());
    assert!(
        passes_early(&mut machine, None, None, true),
        "a read's result needs nothing"
    );
    machine.client_request(call(1, "t"), false, Instant::now());
    machine.client_request(
        ClientRequest::new(id(2), "2", "resources/read"),
        false,
        Instant::now(),
    );
    assert!(machine.answer_here(&id(1)).is_some());
    assert!(machine.may_drop_answers() && machine.drops_answer(&id(1)));
    assert!(!machine.drops_answer(&id(2)), "pending");
    assert!(!machine.drops_answer(&id(3)), "never sent");
    let dropped = ServerHead {
        id: Some(&id(1)),
        result: true,
        ..ServerHead::default()
    };
    assert_eq!(machine.server_head(dropped), Disposition::Drop);
    assert_eq!(
        machine.server_head(ServerHead {
            ended: true,
            ..dropped
        }),
        Disposition::Drop
    );
    assert!(
        !passes_early(&mut machine, None, None, true),
        "its id may be 1"
    );
    assert!(passes_early(&mut machine, Some(&id(2)), None, true));
    machine.client_request(
        ClientRequest::new(id(1), "1", "ping"),
        false,
        Instant::now(),
    );
    assert!(!machine.drops_answer(&id(1)) && !machine.may_drop_answers());
    // The server gone: each pending request is answered here.
    machine.client_request(call(5, "t"), false, Instant::now());
    assert_eq!(machine.drain_pending().len(), 2);
    assert!(machine.drops_answer(&id(1)) && machine.drops_answer(&id(5)));
}

/// B3, L1, B5: what makes the machine read server messages: a pending request, its
/// own listing in flight, a task known, an answer to drop — each on its own.
#[test]
fn what_makes_server_messages_read() {
    let mut machine = SessionMachine::default();
    assert!(!machine.reads_server_messages());
    // Its own listing, the call that wanted it forgotten (no answer to drop).
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let mut stateless = call(1, "t");
    stateless.meta = meta.as_object().cloned();
    assert!(
        machine
            .client_request(stateless, true, Instant::now())
            .is_some()
    );
    machine.forget(&id(1));
    assert!(machine.pending().is_empty() && machine.listing_in_flight());
    assert!(machine.reads_server_messages(), "a listing in flight");
    machine.abandon_listing();
    assert!(!machine.reads_server_messages());
    // A task known.
    machine.client_request(call(2, "research"), false, Instant::now());
    let handle = json!({"resultType": "task", "taskId": "t-2", "status": "working"});
    respond(&mut machine, 2, Response::Result(handle));
    assert!(machine.pending().is_empty() && !machine.tasks().is_empty());
    assert!(machine.reads_server_messages(), "a task known");
    // An answer to drop.
    let mut fresh = SessionMachine::default();
    fresh.client_request(call(3, "t"), false, Instant::now());
    fresh.answer_here(&id(3));
    assert!(fresh.pending().is_empty() && fresh.reads_server_messages());
}

#[test]
fn which_answers_matter_and_the_limit_in_force() {
    let mut machine = SessionMachine::new(Limit::new(300).unwrap());
    assert_eq!(machine.limit().max_bytes(), 300);
    machine.client_request(call(1, "t"), false, Instant::now());
    assert!(machine.answer_matters(&id(1), true) && machine.answer_matters(&id(1), false));
    assert!(machine.is_pending_tool_call(&id(1)));
    machine.client_request(
        ClientRequest::new(id(2), "2", "prompts/get"),
        false,
        Instant::now(),
    );
    assert!(
        !machine.answer_matters(&id(2), false),
        "P2: not a resource request"
    );
    assert!(!machine.is_pending_tool_call(&id(2)));
    let mut read = ClientRequest::new(id(3), "3", "resources/read");
    read.uri = Some("a".into());
    machine.client_request(read, false, Instant::now());
    assert!(machine.answer_matters(&id(3), false) && !machine.answer_matters(&id(3), true));
    assert!(!machine.answer_matters(&id(9), true), "not pending");
}

#[test]
fn a_result_held_in_part_is_cut_from_what_is_held() {
    let cap = 1_000;
    let mut machine = SessionMachine::new(Limit::new(cap).unwrap());
    machine.client_request(call(1, "scrollback"), false, Instant::now());
    let tail = "y".repeat(HeldInPart::min_held_bytes(cap));
    let held = HeldInPart::default().with_text_head(0, 40_000_000);
    let answer = machine.server_result_in_part(&id(1), ToolResult::text(tail), &held);
    let Some(Answer::Result { result, .. }) = answer else {
        panic!("L3 from the held tail: {answer:?}")
    };
    let text = result.content[0].as_text().unwrap();
    assert!(
        text.starts_with("[... truncated 400") && text.ends_with('y'),
        "{text:.60}"
    );
    assert!(machine.pending().is_empty(), "answered");
    // Not a pending tools/call: nothing to decide from a part.
    machine.client_request(
        ClientRequest::new(id(2), "2", "ping"),
        false,
        Instant::now(),
    );
    assert_eq!(
        machine.server_result_in_part(&id(2), ToolResult::text("x"), &held),
        None
    );
    assert_eq!(machine.pending().len(), 1);
    // A cancelled call's answer passes as it came.
    machine.client_request(call(3, "scrollback"), false, Instant::now());
    machine.client_notification("notifications/cancelled", Some(&id(3)));
    assert_eq!(
        machine.server_result_in_part(&id(3), ToolResult::text("x"), &held),
        Some(Answer::Unchanged)
    );
}

#[test]
fn the_log_keeps_the_newest_records() {
    let mut machine = listed(&["run"]);
    let total = MAX_LOG_RECORDS as u32 + 5;
    for n in 1..=total {
        machine.client_request(call(n, "run"), false, Instant::now());
        respond(&mut machine, n, err(-32603, &format!("boom {n}")));
    }
    let records = machine.take_log_records();
    assert_eq!(records.len(), MAX_LOG_RECORDS);
    assert_eq!(records.last().unwrap().message, format!("boom {total}"));
    assert_eq!(records[0].message, "boom 6");
    assert_eq!(
        machine.error_counts().get("InternalError:tools/call"),
        u64::from(total)
    );
}

#[test]
fn drain_and_forget_leave_nothing_pending() {
    let mut machine = SessionMachine::default().with_max_pending(2);
    assert_eq!(machine.pending().max(), 2);
    for n in 1..=3 {
        machine.client_request(
            ClientRequest::new(id(n), n.to_string(), "ping"),
            false,
            Instant::now(),
        );
    }
    assert_eq!(machine.pending().evicted(), 1);
    assert_eq!(machine.forget(&id(2)).unwrap().id_json, "2");
    let drained: Vec<String> = machine
        .drain_pending()
        .into_iter()
        .map(|r| r.id_json)
        .collect();
    assert_eq!(drained, ["3"]);
    assert!(machine.pending().is_empty());
}

/// What an in-process adapter does before running a call: list while the catalog
/// says so (page by page), then ask `before_running`.
fn run_listing(
    machine: &mut SessionMachine,
    own: Option<OwnRequest>,
    pages: &[Value],
    now: Instant,
) -> usize {
    let mut own = own;
    let mut asked = 0;
    while let Some(request) = own {
        let page = pages.get(asked);
        asked += 1;
        assert_eq!(
            request.cursor().is_none(),
            asked == 1,
            "the first page has no cursor"
        );
        own = machine.own_listing_answer(page, now);
    }
    asked
}

#[test]
fn in_process_lists_without_a_handshake_and_answers_e8_before_running() {
    let now = Instant::now();
    let mut machine = SessionMachine::default().in_process();
    let own = machine.client_request(call(1, "ehco"), true, now);
    let pages = [
        json!({"tools": [{"name": "echo"}], "nextCursor": "2"}),
        json!({"tools": [{"name": "sleep"}]}),
    ];
    assert_eq!(run_listing(&mut machine, own, &pages, now), 2);
    let Some(Answer::Error { id_json, error }) = machine.before_running(&id(1), now) else {
        panic!("E8 from a complete, fresh catalog")
    };
    assert_eq!((id_json.as_str(), error.code), ("1", -32602));
    assert_eq!(error.data.unwrap()["suggestion"], "Did you mean 'echo'?");
    assert!(machine.pending().is_empty(), "answered: no longer pending");
    // A known tool runs; no listing again while the catalog is fresh.
    assert!(
        machine
            .client_request(call(2, "sleep"), true, now)
            .is_none()
    );
    assert_eq!(machine.before_running(&id(2), now), None);
}

#[test]
fn in_process_a_failed_listing_is_tried_again_and_never_calls_a_tool_unknown() {
    let now = Instant::now();
    let mut machine = SessionMachine::default().in_process();
    let own = machine.client_request(call(1, "echo"), true, now);
    assert_eq!(
        run_listing(&mut machine, own, &[], now),
        1,
        "the page failed"
    );
    assert_eq!(
        machine.before_running(&id(1), now),
        None,
        "no E8 from nothing"
    );
    let own = machine.client_request(call(2, "echo"), true, now);
    assert!(own.is_some(), "in process, the next call lists again");
    // Behind a proxy, a failed listing waits for list_changed instead.
    let mut proxy = listed(&[]);
    proxy.catalog.invalidate();
    proxy.lifecycle = Lifecycle {
        initialize: true,
        answered: true,
        initialized: true,
        listing_due: false,
    };
    let own = proxy.client_request(call(1, "echo"), true, now);
    assert_eq!(run_listing(&mut proxy, own, &[], now), 1);
    assert!(proxy.client_request(call(2, "echo"), true, now).is_none());
}

#[test]
fn a_stale_catalog_is_listed_again_before_e8() {
    // R5: an entry older than its ttlMs is listed again before it decides anything.
    let now = Instant::now();
    let mut machine = SessionMachine::default().in_process();
    let own = machine.client_request(call(1, "old"), true, now);
    let page = json!({"tools": [{"name": "old"}], "ttlMs": 1000});
    run_listing(&mut machine, own, &[page], now);
    assert_eq!(machine.before_running(&id(1), now), None);
    let later = now + std::time::Duration::from_secs(2);
    let own = machine.client_request(call(2, "new"), true, later);
    assert!(own.is_some(), "stale: list before deciding");
    let page = json!({"tools": [{"name": "old"}, {"name": "new"}], "ttlMs": 1000});
    run_listing(&mut machine, own, &[page], later);
    assert_eq!(
        machine.before_running(&id(2), later),
        None,
        "the new tool runs"
    );
    assert!(
        machine
            .client_request(call(3, "new"), true, later)
            .is_none(),
        "fresh again"
    );
}

#[test]
fn strict_mode_rejects_unnamed_arguments_before_running() {
    let now = Instant::now();
    let mut machine = SessionMachine::default().in_process().with_strict(true);
    assert!(machine.is_strict());
    let own = machine.client_request(call(1, "run").arguments(["cmd", "cwdd"]), true, now);
    let page = json!({"tools": [{"name": "run", "inputSchema": {"type": "object",
        "properties": {"cmd": {}, "cwd": {}}, "additionalProperties": false}}]});
    run_listing(&mut machine, own, &[page], now);
    let Some(Answer::Result { result, .. }) = machine.before_running(&id(1), now) else {
        panic!("V6: rejected before it runs")
    };
    assert!(result.is_error());
    assert!(result.content[0].as_text().unwrap().contains("cwdd"));
    assert_eq!(machine.error_counts().get("ValidationError:tools/call"), 1);
    machine.client_request(call(2, "run").arguments(["cmd"]), true, now);
    assert_eq!(
        machine.before_running(&id(2), now),
        None,
        "named arguments run"
    );
    let mut lax = listed(&["run"]).in_process();
    lax.client_request(call(3, "run").arguments(["x"]), true, now);
    assert_eq!(lax.before_running(&id(3), now), None, "off by default");
    assert!(!lax.is_strict());
}

#[test]
fn a_request_in_another_session_is_shaped_for_that_session() {
    // One machine, many sessions (in process): the revision comes with the request.
    let now = Instant::now();
    let mut machine = listed(&["t"]).in_process();
    let newer =
        json!({"protocolVersion": "2026-07-28", "clientInfo": {"name": "c", "version": "1"}});
    machine.client_request(
        call(1, "t").in_session(Some(Session::from_initialize(&newer))),
        false,
        now,
    );
    machine.client_request(
        call(2, "t").in_session(Some(Session::from_initialize(
            &json!({"protocolVersion": "2025-11-25"}),
        ))),
        false,
        now,
    );
    let failed = || Response::Failure(Failure::expected("no"));
    let Answer::Result { result, .. } = machine.server_response(&id(1), failed(), now) else {
        panic!("converted")
    };
    assert_eq!(result.result_type.as_deref(), Some("complete"), "R4");
    let Answer::Result { result, .. } = machine.server_response(&id(2), failed(), now) else {
        panic!("converted")
    };
    assert_eq!(result.result_type, None);
}

#[test]
fn in_process_results_are_measured_with_what_the_wire_adds() {
    // L4: the SDK stamps its identity and resultType after the adapter; the cap
    // counts them, and a converted result carries them (R4).
    let now = Instant::now();
    let stamp = json!({"name": "server-with-a-long-name", "version": "1.0.0"});
    let limit = Limit::new(1_000).unwrap();
    let newer = json!({"protocolVersion": "2026-07-28"});
    let mut machine = SessionMachine::new(limit.clone()).in_process();
    machine.set_server_stamp(Some(stamp.clone()));
    let fits_bare = "x".repeat(1_000 - ToolResult::text("").wire_size() - 2);
    assert!(ToolResult::text(fits_bare.clone()).wire_size() <= 1_000);
    machine.client_request(
        call(1, "t").in_session(Some(Session::from_initialize(&newer))),
        false,
        now,
    );
    let Answer::Result {
        result, truncation, ..
    } = machine.server_result_texts(&id(1), ToolResult::text(""), &[&fits_bare])
    else {
        panic!("what the wire adds takes it over the cap")
    };
    assert!(result.wire_size() <= 1_000);
    assert!(truncation.is_some());
    assert_eq!(
        result.meta.unwrap()[crate::session::SERVER_INFO_META_KEY],
        stamp
    );
    // On 2025-11-25 nothing is added: it fits.
    let older = json!({"protocolVersion": "2025-11-25"});
    machine.client_request(
        call(2, "t").in_session(Some(Session::from_initialize(&older))),
        false,
        now,
    );
    assert_eq!(
        machine.server_result_texts(&id(2), ToolResult::text(""), &[&fits_bare]),
        Answer::Unchanged
    );
    // A request of no known revision gets the newest behaviour (R3): counted.
    machine.client_request(call(4, "t"), false, now);
    let answer = machine.server_result_texts(&id(4), ToolResult::text(""), &[&fits_bare]);
    let Answer::Result { result, .. } = answer else {
        panic!("unknown revision: the newest, whose resultType takes it over the cap")
    };
    assert_eq!(result.result_type.as_deref(), Some("complete"));
    assert!(result.wire_size() <= 1_000);
    // Behind a proxy the wire is what was read: nothing is added.
    let mut proxy = SessionMachine::new(limit);
    proxy.set_server_stamp(Some(stamp));
    proxy.client_request(
        call(3, "t").in_session(Some(Session::from_initialize(&newer))),
        false,
        now,
    );
    let value = ToolResult::text(fits_bare).into_value();
    assert_eq!(
        proxy.server_response(&id(3), Response::Result(value), now),
        Answer::Unchanged
    );
}

/// A machine outside any session that has started its own listing at `now` for a call
/// of `echo` (E8).
fn listing_at(now: Instant) -> SessionMachine {
    let mut machine = SessionMachine::default();
    machine.set_outside_session();
    assert!(machine.client_request(call(1, "echo"), true, now).is_some());
    machine
}

#[test]
fn b1_server_messages_are_held_only_while_the_listing_is_in_flight() {
    let now = Instant::now();
    let mut idle = SessionMachine::default();
    assert_eq!(idle.hold_server_message(b"m".to_vec()), Err(b"m".to_vec()));
    assert!(!idle.holds_server_messages());

    let mut machine = listing_at(now);
    assert!(!machine.holds_server_messages());
    assert_eq!(machine.hold_server_message(b"first".to_vec()), Ok(()));
    assert_eq!(machine.hold_server_message(b"second".to_vec()), Ok(()));
    assert!(machine.holds_server_messages());
    assert!(machine.take_released_messages().is_empty(), "still holding");
    assert_eq!(
        machine.take_held_messages(),
        [b"first".to_vec(), b"second".to_vec()]
    );
    assert!(!machine.holds_server_messages());
    assert!(machine.take_held_messages().is_empty(), "taken once");
}

#[test]
fn b1_what_was_held_is_released_when_the_listing_ends() {
    let now = Instant::now();
    let mut machine = listing_at(now);
    machine.hold_server_message(b"answer".to_vec()).unwrap();
    let page = json!({"tools": [{"name": "echo"}]});
    assert!(
        machine.own_listing_answer(Some(&page), now).is_none(),
        "complete"
    );
    assert_eq!(
        machine.poll_timeout(),
        None,
        "nothing waits for a listing that ended"
    );
    assert_eq!(machine.take_released_messages(), [b"answer".to_vec()]);
    assert_eq!(
        machine.hold_server_message(b"late".to_vec()),
        Err(b"late".to_vec()),
        "no listing in flight"
    );

    let mut failed = listing_at(now);
    failed.hold_server_message(b"answer".to_vec()).unwrap();
    assert!(
        failed.own_listing_answer(None, now).is_none(),
        "an error ends it"
    );
    assert_eq!(failed.take_released_messages(), [b"answer".to_vec()]);
}

#[test]
fn b1_the_patience_runs_from_the_page_in_flight_and_ends_the_holding() {
    let start = Instant::now();
    let mut machine = listing_at(start);
    assert_eq!(machine.poll_timeout(), None, "nothing held yet");
    machine.hold_server_message(b"answer".to_vec()).unwrap();
    assert_eq!(machine.poll_timeout(), Some(start + LISTING_PATIENCE));

    // A further page asked for later: the patience starts again from it.
    let later = start + std::time::Duration::from_secs(3);
    let page = json!({"tools": [{"name": "a"}], "nextCursor": "2"});
    assert!(machine.own_listing_answer(Some(&page), later).is_some());
    let due = later + LISTING_PATIENCE;
    assert_eq!(machine.poll_timeout(), Some(due));

    machine.handle_timeout(due - std::time::Duration::from_millis(1));
    assert!(machine.take_released_messages().is_empty(), "not yet");
    assert_eq!(machine.poll_timeout(), Some(due));
    machine.handle_timeout(due);
    assert_eq!(machine.poll_timeout(), None);
    assert_eq!(machine.take_released_messages(), [b"answer".to_vec()]);
    // Given up: the listing is still in flight, but nothing more is held for it.
    assert_eq!(
        machine.hold_server_message(b"m".to_vec()),
        Err(b"m".to_vec())
    );
    assert!(machine.listing_in_flight());
}

/// What fastmcp raises for a tool it does not have.
fn raised_unknown(tool: &str) -> Response {
    Response::Raised(crate::foreign_error::ForeignError {
        type_name: "NotFoundError".into(),
        message: format!("Unknown tool: '{tool}'"),
        ..Default::default()
    })
}

#[test]
fn e8_r5_in_process_a_tool_raising_that_it_is_unknown_makes_the_machine_list_again_once() {
    let now = Instant::now();
    let mut machine = listed(&["small", "large"]).in_process();
    machine.client_request(call(1, "small"), true, now);
    let Answer::ListFirst(own) = respond(&mut machine, 1, raised_unknown("small")) else {
        panic!("the server's word that its tools changed: list first")
    };
    assert_eq!(own.method, "tools/list");
    assert_eq!(machine.pending().len(), 1, "the call waits for the listing");
    let page = json!({"tools": [{"name": "large"}]});
    assert_eq!(machine.own_listing_answer(Some(&page), now), None);
    let Some(Answer::Error { error, .. }) = machine.before_running(&id(1), now) else {
        panic!("E8 against the new catalog")
    };
    assert_eq!(error.message, "Unknown tool: small");

    // Once per call: the same failure again is converted, not listed for.
    machine.client_request(call(2, "large"), true, now);
    assert!(matches!(
        respond(&mut machine, 2, raised_unknown("large")),
        Answer::ListFirst(_)
    ));
    assert_eq!(machine.own_listing_answer(Some(&page), now), None);
    assert_eq!(machine.before_running(&id(2), now), None, "listed: it runs");
    let Answer::Result { result, .. } = respond(&mut machine, 2, raised_unknown("large")) else {
        panic!("converted (E1)")
    };
    assert!(result.is_error());
    assert!(machine.pending().is_empty());
}

#[test]
fn e8_only_the_unknown_tool_raised_in_process_for_the_tool_called_lists_again() {
    let now = Instant::now();
    let cases = [
        (true, "small", raised_unknown("large")), // another tool's name
        (
            true,
            "small",
            Response::Failure(Failure::unexpected("Unknown tool: 'small'")),
        ),
        (false, "small", raised_unknown("small")), // not in process: the server lists
    ];
    for (in_process, tool, response) in cases {
        let mut machine = listed(&["small", "large"]);
        if in_process {
            machine = machine.in_process();
        }
        machine.client_request(call(1, tool), true, now);
        let answer = respond(&mut machine, 1, response.clone());
        assert!(
            matches!(answer, Answer::Result { .. }),
            "{response:?}: {answer:?}"
        );
    }
    // A cancelled call's answer passes as it came (E9), listed for or not.
    let mut machine = listed(&["small"]).in_process();
    machine.client_request(call(1, "small"), true, now);
    machine.client_notification("notifications/cancelled", Some(&id(1)));
    assert_eq!(
        respond(&mut machine, 1, raised_unknown("small")),
        Answer::Unchanged
    );
}

/// The head of the answer to request `n`, read as it comes: a result.
fn result_head(n: &RequestId) -> ServerHead<'_> {
    ServerHead {
        id: Some(n),
        result: true,
        ..ServerHead::default()
    }
}

/// B3, B4: past the stream's hold bound, the result of a pending `tools/call` the
/// limit applies to, over the cap, is cut as it comes — with a listing of the
/// machine's own in flight too — and no other answer is; a message at its end never.
#[test]
fn b3_b4_only_a_limited_call_s_result_past_the_hold_bound_is_cut_unheld() {
    let limit = Limit::new(1_000).unwrap().only_tools(["logs"]);
    let mut machine = SessionMachine::new(limit.clone());
    machine.set_outside_session();
    let now = Instant::now();
    assert!(machine.client_request(call(1, "logs"), true, now).is_some());
    assert!(machine.listing_in_flight());
    machine.client_request(call(2, "other"), false, now);
    let read = ClientRequest::new(id(3), "3", "resources/read");
    machine.client_request(read, false, now);
    let logs = limit.held_ends(Some("logs"));
    let (one, two, three) = (id(1), id(2), id(3));

    let past = |n, at| ServerHead {
        past_hold_at: Some(at),
        ..result_head(n)
    };
    assert_eq!(
        machine.server_head(past(&one, 1_000)),
        Disposition::CutUnheld(logs)
    );
    assert_eq!(
        machine.server_head(past(&one, 999)),
        Disposition::Read(logs),
        "not over the cap yet"
    );
    let ended = ServerHead {
        ended: true,
        ..past(&one, 5_000)
    };
    assert_eq!(
        machine.server_head(ended),
        Disposition::Read(logs),
        "here whole"
    );
    let id_alone = ServerHead {
        result: false,
        ..past(&one, 5_000)
    };
    assert_eq!(
        machine.server_head(id_alone),
        Disposition::CutUnheld(logs),
        "its id is enough"
    );
    assert!(matches!(
        machine.server_head(past(&two, 5_000)),
        Disposition::Read(_)
    ));
    assert!(matches!(
        machine.server_head(past(&three, 5_000)),
        Disposition::Read(_)
    ));
    machine.client_notification("notifications/cancelled", Some(&one));
    assert!(
        matches!(machine.server_head(past(&one, 5_000)), Disposition::Read(_)),
        "cancelled: passed as it came (E9)"
    );
    assert_eq!(machine.pending().len(), 3, "nothing passed");
}

/// B3, L16: a message read as it comes is read holding what the tool of the call it
/// answers keeps; an `id` alone does not make it pass; while the machine's own listing
/// is in flight none passes early, but one at its end does.
#[test]
fn b3_l16_a_head_read_as_it_comes_passes_once_it_is_known_to_need_nothing() {
    let limit = Limit::new(1_000)
        .unwrap()
        .keep_for("git_log", crate::limit::Keep::Head);
    let mut machine = SessionMachine::new(limit.clone());
    let now = Instant::now();
    machine.client_request(call(1, "git_log"), false, now);
    machine.client_request(ClientRequest::new(id(2), "2", "ping"), false, now);
    let (one, two) = (id(1), id(2));
    assert_eq!(
        machine.server_head(result_head(&one)),
        Disposition::Read(limit.held_ends(Some("git_log")))
    );
    let unknown = ServerHead::default();
    assert_eq!(
        machine.server_head(unknown),
        Disposition::Read(limit.held_ends(None)),
        "nothing known yet: what any policy keeps"
    );
    let id_alone = ServerHead {
        id: Some(&two),
        ..ServerHead::default()
    };
    assert!(
        matches!(machine.server_head(id_alone), Disposition::Read(_)),
        "a server's request may carry a client's id"
    );
    assert_eq!(machine.pending().len(), 2);
    assert_eq!(machine.server_head(result_head(&two)), Disposition::Pass);
    assert_eq!(machine.pending().len(), 1, "passed: no longer pending");

    let mut listing = listing_at(now);
    listing.client_request(ClientRequest::new(id(2), "2", "ping"), false, now);
    assert!(matches!(
        listing.server_head(result_head(&two)),
        Disposition::Read(_)
    ));
    let note = ServerHead {
        method: Some("notifications/progress"),
        ..ServerHead::default()
    };
    assert!(
        matches!(listing.server_head(note), Disposition::Read(_)),
        "its order is the listing's to keep"
    );
    let ended = ServerHead {
        ended: true,
        ..result_head(&two)
    };
    assert_eq!(listing.server_head(ended), Disposition::Pass);
    assert!(listing.pending().get(&two).is_none());
}

/// B4: a message at its end that names a pending request but is no response (neither
/// `result` nor `error`) passes when nothing could change its request's answer, and
/// leaves the request pending for the driver's lenient reading to end; a whole
/// response without an id a request can have answers none and passes.
#[test]
fn b4_a_message_at_its_end_that_is_no_response_leaves_its_request_pending() {
    let mut machine = listed(&["t"]);
    let now = Instant::now();
    machine.client_request(ClientRequest::new(id(1), "1", "ping"), false, now);
    machine.client_request(call(2, "t"), false, now);
    let (one, two) = (id(1), id(2));
    let no_response = |n| ServerHead {
        id: Some(n),
        ended: true,
        ..ServerHead::default()
    };
    assert_eq!(machine.server_head(no_response(&one)), Disposition::Pass);
    assert!(machine.pending().get(&one).is_some(), "still pending");
    assert!(matches!(
        machine.server_head(no_response(&two)),
        Disposition::Read(_)
    ));
    let no_id = ServerHead {
        result: true,
        ended: true,
        ..ServerHead::default()
    };
    assert_eq!(machine.server_head(no_id), Disposition::Pass);
    assert_eq!(machine.pending().len(), 2);
}
