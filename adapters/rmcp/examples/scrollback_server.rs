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

use backstop_core::Limit;
use backstop_rmcp::Backstop;
use rmcp::ServiceExt;
use scrollback_tools::ScrollbackTools;

/// The cap when `BACKSTOP_MAX_BYTES` is not set (L2).
const DEFAULT_MAX_BYTES: usize = 1_000_000;

fn max_bytes() -> Result<usize, String> {
    match std::env::var("BACKSTOP_MAX_BYTES") {
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| format!("BACKSTOP_MAX_BYTES must be a number of bytes, not {value:?}")),
        Err(_) => Ok(DEFAULT_MAX_BYTES),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "backstop=info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();

    let limit = Limit::new(max_bytes()?)?;
    let server = Backstop::new(ScrollbackTools::new())
        .with_limit(limit)
        .strict(true);
    server
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
