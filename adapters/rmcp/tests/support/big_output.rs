//! A server whose one tool, `capture`, returns a large text in one plain text block: a
//! copy of the text it was given, made on each call as a tool builds its output. A
//! success, or an `isError` result when called with `{"error": true}`. Shared by the
//! memory test (`tests/memory.rs`) and the wrapper benchmark (`benches/wrapper.rs`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// The server, with the text `capture` returns.
#[derive(Clone)]
pub struct BigOutput(pub Arc<String>);

impl ServerHandler for BigOutput {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"error": {"type": "boolean"}}});
        let schema = schema.as_object().cloned().unwrap_or_default();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "capture",
            "a large output",
            schema,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let content = vec![ContentBlock::text(self.0.as_str().to_owned())];
        let error = request.arguments.as_ref().and_then(|a| a.get("error"));
        Ok(match error.and_then(Value::as_bool) {
            Some(true) => CallToolResult::error(content),
            _ => CallToolResult::success(content),
        }
        .into())
    }
}
