//! The tasks `tools/call` requests created (MCP Tasks, 2025-11-25: SPEC L1, E11): a
//! task-augmented call is answered at once with a handle (`{"task": {"taskId": …}}`),
//! and the tool's real result comes later, as the answer to `tasks/result`. The
//! machine remembers which tool each task runs, so that this answer is shaped as the
//! call's would have been: cut to the tool's limit and within its `outputSchema`, a
//! failure made the call's `isError` result.
//!
//! Bounded: at most [`MAX_TASKS`] are remembered, the oldest forgotten first (its
//! result then passes as it comes).
//!
//! ```
//! use backstop_core::machine::TaskTable;
//! let mut tasks = TaskTable::default();
//! let handle = serde_json::json!({"task": {"taskId": "t-1", "status": "working"}});
//! assert!(tasks.learn_handle(&handle, "research"));
//! assert_eq!(tasks.tool_of("t-1"), Some("research"));
//! assert!(!tasks.learn_handle(&serde_json::json!({"content": []}), "echo"), "a result, not a handle");
//! ```

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

/// How many tasks are remembered at most.
pub const MAX_TASKS: usize = 1024;

/// Which tool each task a `tools/call` created runs (MCP Tasks, 2025-11-25), so that
/// the answer to `tasks/result` is shaped as the call's own would have been (L1, E11).
/// At most [`MAX_TASKS`] are remembered, the oldest forgotten first.
#[derive(Debug, Clone, Default)]
pub struct TaskTable {
    tools: HashMap<String, String>,
    order: VecDeque<String>,
}

impl TaskTable {
    /// Learn the task a `tools/call` of `tool` created, when `result` is a task handle
    /// (a `task` with a `taskId`, and no `content`); whether it was one.
    pub fn learn_handle(&mut self, result: &Value, tool: &str) -> bool {
        let Some(task_id) = task_id_of_handle(result) else {
            return false;
        };
        if self
            .tools
            .insert(task_id.to_owned(), tool.to_owned())
            .is_none()
        {
            self.order.push_back(task_id.to_owned());
            if self.order.len() > MAX_TASKS
                && let Some(oldest) = self.order.pop_front()
            {
                self.tools.remove(&oldest);
            }
        }
        true
    }

    /// The tool task `task_id` runs, if it is remembered.
    pub fn tool_of(&self, task_id: &str) -> Option<&str> {
        self.tools.get(task_id).map(String::as_str)
    }

    /// How many tasks are remembered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The `taskId` of a `CreateTaskResult`.
fn task_id_of_handle(result: &Value) -> Option<&str> {
    if result.get("content").is_some() {
        return None;
    }
    result.get("task")?.get("taskId")?.as_str()
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
        assert_eq!(tasks.tool_of("1"), Some("t"));
        assert_eq!(tasks.tool_of(&MAX_TASKS.to_string()), Some("t"));
    }

    #[test]
    fn l1_only_a_handle_is_learnt() {
        let mut tasks = TaskTable::default();
        for result in [
            json!({"task": {"taskId": 7}}),
            json!({"task": {}}),
            json!({"content": [], "task": {"taskId": "x"}}),
            json!({}),
        ] {
            assert!(!tasks.learn_handle(&result, "t"), "{result}");
        }
        assert!(tasks.is_empty());
        assert!(tasks.learn_handle(&json!({"task": {"taskId": "x"}}), "t"));
        assert!(!tasks.is_empty());
    }
}
