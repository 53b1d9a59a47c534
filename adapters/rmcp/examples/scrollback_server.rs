//! An MCP server on stdio for real clients, wrapped in backstop with strict mode on.
//!
//! ```text
//! cargo run -p backstop-rmcp --example scrollback_server
//! BACKSTOP_MAX_BYTES=50000 cargo run -p backstop-rmcp --example scrollback_server
//! ```
//!
//! Tools: `scrollback(lines: u32)`, `fail(kind: string)` (`expected`, `suggestion`,
//! `unexpected`), `takes_int(count: i64)`; resources `sessions://{name}`, where
//! `missing` is not found. Logs go to stderr (`RUST_LOG`, default `backstop=info`).

#[path = "support/scrollback_tools.rs"]
mod scrollback_tools;
#[path = "support/setup.rs"]
mod setup;

use backstop_rmcp::Backstop;
use scrollback_tools::ScrollbackTools;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    setup::log_to_stderr();
    let limit = setup::limit_from_env()?;
    let server = Backstop::new(ScrollbackTools::new())
        .with_limit(limit)
        .strict(true);
    setup::serve_on_stdio(server).await
}
