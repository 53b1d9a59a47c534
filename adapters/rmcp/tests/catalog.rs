//! The tool list the wrapper keeps: a tool added after the first call is not taken
//! for an unknown one, and a listing by the client refreshes what is kept.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use backstop_rmcp::Backstop;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use support::{call, connect};

/// A server that gains the tool `later` once `grown` is set, and counts its listings.
#[derive(Clone, Default)]
struct Growing {
    grown: Arc<AtomicBool>,
    listings: Arc<AtomicUsize>,
}

impl ServerHandler for Growing {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        let schema = json!({"type": "object", "properties": {}});
        let schema = schema.as_object().unwrap().clone();
        let mut tools = vec![Tool::new("first", "always there", schema.clone())];
        if self.grown.load(Ordering::SeqCst) {
            tools.push(Tool::new("later", "added while running", schema));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = format!("ran {}", request.name);
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::test]
async fn a_tool_added_while_running_is_found() {
    let server = Growing::default();
    let (grown, listings) = (server.grown.clone(), server.listings.clone());
    let client = connect(Backstop::new(server)).await;

    let first = call(&client, "first", json!({})).await;
    assert_eq!(first["result"]["content"][0]["text"], "ran first");
    let _ = call(&client, "first", json!({})).await;
    assert_eq!(
        listings.load(Ordering::SeqCst),
        1,
        "the list is kept between calls"
    );

    let unknown = call(&client, "later", json!({})).await;
    assert_eq!(unknown["error"]["message"], "Unknown tool: later", "E8");

    grown.store(true, Ordering::SeqCst);
    let later = call(&client, "later", json!({})).await;
    assert_eq!(later["result"]["content"][0]["text"], "ran later");
}

#[tokio::test]
async fn a_listing_by_the_client_is_kept() {
    let server = Growing::default();
    let listings = server.listings.clone();
    let client = connect(Backstop::new(server)).await;
    let _ = client.list_tools(None).await.unwrap();
    let _ = call(&client, "first", json!({})).await;
    assert_eq!(
        listings.load(Ordering::SeqCst),
        1,
        "the call used the client's listing"
    );
}

/// A server whose tools come on two pages, the second of which fails once `broken`
/// is set (SPEC E8, R5: a catalog learnt from a failed listing is incomplete, and
/// calls nothing unknown).
#[derive(Clone, Default)]
struct Paged {
    broken: Arc<AtomicBool>,
}

impl ServerHandler for Paged {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {}});
        let schema = schema.as_object().unwrap().clone();
        match request.and_then(|r| r.cursor) {
            None => {
                let mut page = ListToolsResult::with_all_items(vec![Tool::new(
                    "on_page_one",
                    "first page",
                    schema,
                )]);
                page.next_cursor = Some("2".into());
                Ok(page)
            }
            Some(_) if self.broken.load(Ordering::SeqCst) => {
                Err(ErrorData::internal_error("page 2 is down", None))
            }
            Some(_) => Ok(ListToolsResult::with_all_items(vec![Tool::new(
                "on_page_two",
                "second page",
                schema,
            )])),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name.starts_with("on_page_") {
            let text = format!("ran {}", request.name);
            return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
        }
        Err(ErrorData::invalid_params(
            format!("tool not found: {}", request.name),
            None,
        ))
    }
}

#[tokio::test]
async fn a_tool_on_a_page_that_failed_is_not_called_unknown() {
    let server = Paged::default();
    server.broken.store(true, Ordering::SeqCst);
    let client = connect(Backstop::new(server)).await;
    let second = call(&client, "on_page_two", json!({})).await;
    assert_eq!(
        second["result"]["content"][0]["text"], "ran on_page_two",
        "E8 only from a complete listing: {second}"
    );
    let misspelt = call(&client, "on_page_tw", json!({})).await;
    assert!(
        misspelt["error"].is_null() || misspelt["error"]["message"] != "Unknown tool: on_page_tw",
        "an incomplete listing calls nothing unknown: {misspelt}"
    );
}

#[tokio::test]
async fn every_page_of_a_whole_listing_is_known_and_e8_holds() {
    let client = connect(Backstop::new(Paged::default())).await;
    let second = call(&client, "on_page_two", json!({})).await;
    assert_eq!(second["result"]["content"][0]["text"], "ran on_page_two");
    let misspelt = call(&client, "on_page_tw", json!({})).await;
    assert_eq!(misspelt["error"]["code"], -32602, "{misspelt}");
    assert_eq!(misspelt["error"]["message"], "Unknown tool: on_page_tw");
    assert_eq!(
        misspelt["error"]["data"]["suggestion"],
        "Did you mean 'on_page_two'?"
    );
}
