//! The tasks `tools/call` requests created (MCP Tasks: SPEC L1, E11): a task-augmented
//! call is answered at once with a handle, and the tool's real outcome comes later —
//! on 2025-11-25 as the answer to `tasks/result` (the handle: `{"task": {"taskId": …}}`),
//! on 2026-07-28 inside the task's state, in the answer to `tasks/get` and in
//! `notifications/tasks` (the handle: `{"resultType": "task", "taskId": …}`). The
//! machine remembers which tool each task runs, so that this outcome is shaped as the
//! call's would have been: cut to the tool's limit and within its `outputSchema`, a
//! failure made the call's `isError` result.
//!
//! Bounded: at most [`MAX_TASKS`] are remembered, the oldest forgotten first (its
//! result then passes as it comes). A clone shares the table, and so do the clones of
//! a [`SessionMachine`](super::SessionMachine): a gateway's stateless requests
//! (2026-07-28), each with a machine cloned from one, learn the task one request
//! created and shape its state in another.
//!
//! ```
//! use backstop_core::machine::TaskTable;
//! let mut tasks = TaskTable::default();
//! let handle = serde_json::json!({"task": {"taskId": "t-1", "status": "working"}});
//! assert!(tasks.learn_handle(&handle, "research"));
//! assert_eq!(tasks.tool_of("t-1").as_deref(), Some("research"));
//! let flat = serde_json::json!({"resultType": "task", "taskId": "t-2", "status": "working"});
//! assert!(tasks.learn_handle(&flat, "crunch"), "2026-07-28");
//! assert_eq!(tasks.clone().tool_of("t-2").as_deref(), Some("crunch"), "clones share");
//! assert!(!tasks.learn_handle(&serde_json::json!({"content": []}), "echo"), "a result, not a handle");
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

/// How many tasks are remembered at most.
pub const MAX_TASKS: usize = 1024;

/// Which tool each task a `tools/call` created runs (MCP Tasks, 2025-11-25), so that
/// the answer to `tasks/result` is shaped as the call's own would have been (L1, E11).
/// At most [`MAX_TASKS`] are remembered, the oldest forgotten first; clones share one
/// table.
#[derive(Debug, Clone, Default)]
pub struct TaskTable {
    shared: Arc<Mutex<Tasks>>,
}

#[derive(Debug, Default)]
struct Tasks {
    tools: HashMap<String, String>,
    order: VecDeque<String>,
}

impl TaskTable {
    /// Learn the task a `tools/call` of `tool` created, when `result` is a task handle
    /// (2025-11-25: a `task` with a `taskId`; 2026-07-28: `resultType` `task` and a
    /// `taskId`; never with `content`); whether it was one.
    pub fn learn_handle(&mut self, result: &Value, tool: &str) -> bool {
        let Some(task_id) = task_id_of_handle(result) else {
            return false;
        };
        let mut tasks = self.lock();
        if tasks
            .tools
            .insert(task_id.to_owned(), tool.to_owned())
            .is_none()
        {
            tasks.order.push_back(task_id.to_owned());
            if tasks.order.len() > MAX_TASKS
                && let Some(oldest) = tasks.order.pop_front()
            {
                tasks.tools.remove(&oldest);
            }
        }
        true
    }

    /// The tool task `task_id` runs, if it is remembered.
    pub fn tool_of(&self, task_id: &str) -> Option<String> {
        self.lock().tools.get(task_id).cloned()
    }

    /// How many tasks are remembered.
    pub fn len(&self) -> usize {
        self.lock().tools.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.lock().tools.is_empty()
    }

    /// The table; a holder that panicked left it whole (each change is one insert and
    /// at most one removal).
    fn lock(&self) -> MutexGuard<'_, Tasks> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The `taskId` of a `CreateTaskResult`, of either revision.
fn task_id_of_handle(result: &Value) -> Option<&str> {
    if result.get("content").is_some() {
        return None;
    }
    match result.get("resultType").and_then(Value::as_str) {
        Some("task") => result.get("taskId")?.as_str(),
        _ => result.get("task")?.get("taskId")?.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn l1_the_oldest_task_is_forgotten_first() {
        let mut tasks = TaskTable::default();
        for n in 0..=MAX_TASKS {
            assert!(tasks.learn_handle(&json!({"task": {"taskId": n.to_string()}}), "t"));
        }
        assert_eq!(tasks.len(), MAX_TASKS);
        assert_eq!(tasks.tool_of("0"), None);
        assert_eq!(tasks.tool_of("1").as_deref(), Some("t"));
        assert_eq!(tasks.tool_of(&MAX_TASKS.to_string()).as_deref(), Some("t"));
    }

    #[test]
    fn l1_only_a_handle_is_learnt() {
        let mut tasks = TaskTable::default();
        for result in [
            json!({"task": {"taskId": 7}}),
            json!({"task": {}}),
            json!({"content": [], "task": {"taskId": "x"}}),
            json!({"resultType": "task", "taskId": 7}),
            json!({"resultType": "task"}),
            json!({"resultType": "complete", "taskId": "x"}),
            json!({"resultType": "task", "taskId": "x", "content": []}),
            json!({}),
        ] {
            assert!(!tasks.learn_handle(&result, "t"), "{result}");
        }
        assert!(tasks.is_empty());
        assert!(tasks.learn_handle(&json!({"task": {"taskId": "x"}}), "t"));
        assert!(!tasks.is_empty());
        assert!(tasks.learn_handle(&json!({"resultType": "task", "taskId": "y"}), "u"));
        assert_eq!(tasks.tool_of("y").as_deref(), Some("u"));
    }
}
