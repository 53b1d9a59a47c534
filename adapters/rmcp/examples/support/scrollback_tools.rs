//! The tools of the example server: a terminal's scrollback, three kinds of failure,
//! an integer argument, and a resource template. Shared by the examples and tests.

use backstop_core::call::Family;
use backstop_rmcp::ToolError;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ListResourceTemplatesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// The error a pane lookup fails with: its type name becomes `error_type` (E3).
#[derive(Debug)]
pub struct PaneNotFound(pub String);

impl std::fmt::Display for PaneNotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no pane with id {}", self.0)
    }
}

impl std::error::Error for PaneNotFound {}

/// `scrollback` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ScrollbackArgs {
    /// How many lines of output before the prompt.
    pub lines: u32,
}

/// `fail` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct FailArgs {
    /// `expected`, `suggestion` or `unexpected`.
    pub kind: String,
}

/// `takes_int` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct TakesIntArgs {
    /// Any integer.
    pub count: i64,
}

/// The example server, unwrapped.
#[derive(Debug, Clone)]
pub struct ScrollbackTools {
    tool_router: ToolRouter<Self>,
}

impl Default for ScrollbackTools {
    fn default() -> Self {
        Self::new()
    }
}

/// `lines` lines `line <n> of output`, then a last line `PROMPT $`.
pub fn scrollback_text(lines: u32) -> String {
    let mut text = String::with_capacity(lines as usize * 24 + 8);
    for n in 1..=lines {
        text.push_str("line ");
        text.push_str(&n.to_string());
        text.push_str(" of output\n");
    }
    text.push_str("PROMPT $");
    text
}

#[tool_router]
impl ScrollbackTools {
    /// The server with its tools.
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "A terminal's scrollback: `lines` lines of output, then the prompt.")]
    async fn scrollback(&self, Parameters(args): Parameters<ScrollbackArgs>) -> String {
        scrollback_text(args.lines)
    }

    #[tool(description = "Fail on purpose: kind is expected, suggestion or unexpected.")]
    async fn fail(&self, Parameters(args): Parameters<FailArgs>) -> Result<String, ToolError> {
        let not_found =
            || ToolError::expected("Pane not found: %99").caused_by(&PaneNotFound("%99".into()));
        Err(match args.kind.as_str() {
            "expected" => not_found(),
            "suggestion" => {
                not_found().with_suggestion("Call list_panes to discover valid pane ids.")
            }
            "unexpected" => ToolError::unexpected("boom"),
            _ => ToolError::expected("Unknown failure kind.")
                .with_suggestion("Use kind expected, suggestion or unexpected."),
        })
    }

    #[tool(description = "Takes one integer.")]
    async fn takes_int(&self, Parameters(args): Parameters<TakesIntArgs>) -> String {
        format!("count = {}", args.count)
    }
}

/// The URI template of the example's resources.
pub const SESSIONS_TEMPLATE: &str = "sessions://{name}";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ScrollbackTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_instructions(
            "backstop's example server: scrollback, fail, takes_int, sessions://{name}.",
        )
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(SESSIONS_TEMPLATE, "session"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let name = request.uri.strip_prefix("sessions://").unwrap_or("");
        if name.is_empty() || name == "missing" {
            let message = if name.is_empty() {
                "Not a session URI.".to_owned()
            } else {
                format!("Session not found: {name}")
            };
            return Err(ToolError::expected(message)
                .with_family(Family::NotFound)
                .into());
        }
        let text = format!("session {name}");
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}
