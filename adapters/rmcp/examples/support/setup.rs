//! What the example servers share: the cap from `BACKSTOP_MAX_BYTES` (and the reader's
//! limits from `BACKSTOP_MAX_CHARS`, `BACKSTOP_MAX_TOKENS`), logs on stderr, and
//! serving on stdio.

use backstop_core::Limit;

/// The cap when `BACKSTOP_MAX_BYTES` is not set (L2).
const DEFAULT_MAX_BYTES: usize = 1_000_000;

/// The limit of `BACKSTOP_MAX_BYTES`, or the default cap, with the reader's limits of
/// `BACKSTOP_MAX_CHARS` and `BACKSTOP_MAX_TOKENS` when set (a number, or `none`; unset:
/// the reading client's, L2, L18); a value that is not one, or a limit too small to
/// work (L14), is an error.
pub fn limit_from_env() -> Result<Limit, Box<dyn std::error::Error>> {
    let max_bytes = match std::env::var("BACKSTOP_MAX_BYTES") {
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| format!("BACKSTOP_MAX_BYTES must be a number of bytes, not {value:?}"))?,
        Err(_) => DEFAULT_MAX_BYTES,
    };
    let mut limit = Limit::new(max_bytes)?;
    if let Some(max_chars) = reader_limit("BACKSTOP_MAX_CHARS")? {
        limit = limit.with_max_chars(max_chars)?;
    }
    if let Some(max_tokens) = reader_limit("BACKSTOP_MAX_TOKENS")? {
        limit = limit.with_max_tokens(max_tokens)?;
    }
    Ok(limit)
}

/// A reader's limit from the variable `name`: unset (`None`), `none` (`Some(None)`), or a
/// number.
fn reader_limit(name: &str) -> Result<Option<Option<usize>>, String> {
    let Ok(value) = std::env::var(name) else {
        return Ok(None);
    };
    match value.trim() {
        "none" => Ok(Some(None)),
        number => number
            .parse()
            .map(|n| Some(Some(n)))
            .map_err(|_| format!("{name} must be a number or none, not {value:?}")),
    }
}

/// Logs on stderr, filtered by `RUST_LOG` (default `backstop=info`): stdout carries
/// the protocol.
pub fn log_to_stderr() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "backstop=info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// Serve `server` on this process's stdin and stdout until the client leaves.
pub async fn serve_on_stdio(
    server: impl rmcp::ServerHandler,
) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::ServiceExt;
    server
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
