//! The tool of the structured example server: a build report returned as
//! `Json<Report>`, so that `tools/list` advertises its `outputSchema` and each result
//! carries `structuredContent` and its serialization as a text block (SPEC L15).

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

/// `report` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReportArgs {
    /// How many lines the log has.
    pub lines: u32,
    /// How many entries the report lists.
    pub entries: u32,
}

/// One entry of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    /// Its position, from 1.
    pub index: u32,
    /// What it says.
    pub text: String,
}

/// A build report: a one-line summary, the log's line count, the log itself (the
/// long member), and a list of entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// One line.
    pub summary: String,
    /// How many lines `log` has.
    pub lines: u32,
    /// The whole log, oldest line first, its last line `BUILD DONE`.
    pub log: String,
    /// The entries, oldest first.
    pub entries: Vec<Entry>,
}

/// The summary of every report.
pub const SUMMARY: &str = "build finished: 0 errors";

/// The report the `report` tool returns for these arguments.
///
/// ```text
/// log: "log line 1 of the build\n…log line <lines> of the build\nBUILD DONE"
/// ```
pub fn report(lines: u32, entries: u32) -> Report {
    let log: String = (1..=lines)
        .map(|n| format!("log line {n} of the build\n"))
        .chain(["BUILD DONE".to_owned()])
        .collect();
    Report {
        summary: SUMMARY.to_owned(),
        lines,
        log,
        entries: (1..=entries)
            .map(|index| Entry {
                index,
                text: format!("entry {index}"),
            })
            .collect(),
    }
}

/// The example server, unwrapped.
#[derive(Debug, Clone)]
pub struct StructuredTools {
    tool_router: ToolRouter<Self>,
}

impl Default for StructuredTools {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl StructuredTools {
    /// The server with its tool.
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "A build report: a summary, a log of `lines` lines, `entries` entries.")]
    async fn report(&self, Parameters(args): Parameters<ReportArgs>) -> Json<Report> {
        Json(report(args.lines, args.entries))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for StructuredTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("backstop's structured example server: report(lines, entries).")
    }
}
