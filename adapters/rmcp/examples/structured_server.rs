//! An MCP server on stdio whose tool returns structured output (`Json<Report>`),
//! wrapped in backstop: the capped result of a long report keeps its
//! `structuredContent`, cut inside so that it still matches the advertised
//! `outputSchema` (SPEC L15).
//!
//! ```text
//! cargo run -p backstop-rmcp --example structured_server
//! BACKSTOP_MAX_BYTES=4000 cargo run -p backstop-rmcp --example structured_server
//! ```
//!
//! Tool: `report(lines: u32, entries: u32)` → `{summary, lines, log, entries}`, the
//! log `lines` lines long. Logs go to stderr (`RUST_LOG`, default `backstop=info`).

#[path = "support/setup.rs"]
mod setup;
#[path = "support/structured_tools.rs"]
mod structured_tools;

use backstop_rmcp::Backstop;
use structured_tools::StructuredTools;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    setup::log_to_stderr();
    let server = Backstop::new(StructuredTools::new()).with_limit(setup::limit_from_env()?);
    setup::serve_on_stdio(server).await
}
