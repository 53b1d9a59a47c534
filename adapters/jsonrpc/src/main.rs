//! `backstop`: put any stdio MCP server behind backstop.
//!
//! ```text
//! backstop proxy [--max-bytes N] [--tools a,b,…] [--no-line-align] -- <command> [args…]
//! ```

use std::ffi::OsString;
use std::process::ExitCode;

use backstop_core::Limit;
use backstop_core::limit::DEFAULT_MAX_BYTES;
use backstop_jsonrpc::Shaper;
use backstop_jsonrpc::proxy::{self, ServerCommand};
use clap::{Parser, Subcommand};

const PROXY_EXAMPLES: &str = "\
Examples:
  # A Python server, every tool result capped at the default 1,000,000 bytes:
  backstop proxy -- python3 -m my_mcp_server

  # An npm server, only two tools capped, at 200 kB:
  backstop proxy --max-bytes 200000 --tools capture_pane,show_buffer -- npx -y some-mcp-server

  # In a client's config, replace the server's command with `backstop` and put
  # `proxy --` before its arguments:
  #   \"command\": \"backstop\", \"args\": [\"proxy\", \"--\", \"uvx\", \"my-mcp-server\"]";

/// backstop: MCP tool failures become readable `isError` results, and oversized tool
/// output keeps its end under a hard byte cap.
#[derive(Debug, Parser)]
#[command(name = "backstop", version)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Run a stdio MCP server as a child and shape its JSON-RPC messages.
    ///
    /// Newline-delimited JSON on stdin/stdout both ways; the server's stderr passes
    /// through; SIGINT/SIGTERM are forwarded; the server's exit status becomes the
    /// proxy's (128 + N when it was killed by signal N). Requests still pending when
    /// the server exits are answered with a JSON-RPC error naming the exit status.
    #[command(after_help = PROXY_EXAMPLES)]
    Proxy(ProxyArgs),
}

#[derive(Debug, clap::Args)]
struct ProxyArgs {
    /// Cap on a tools/call result's wire size in bytes; larger results keep their tail.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BYTES, value_parser = parse_cap)]
    max_bytes: usize,

    /// Apply the cap only to these tools (comma-separated); default: every tool.
    #[arg(long, value_name = "a,b,…", value_delimiter = ',')]
    tools: Vec<String>,

    /// Cut at the longest grapheme boundary that fits instead of at a line start.
    #[arg(long)]
    no_line_align: bool,

    /// Do not log converted failures to stderr (one `backstop: {json}` line each).
    #[arg(long)]
    quiet: bool,

    /// The server's command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// A cap, refused with the minimum named when too small (L14).
fn parse_cap(text: &str) -> Result<usize, String> {
    let cap: usize = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of bytes"))?;
    Limit::new(cap)
        .map(|_| cap)
        .map_err(|error| error.to_string())
}

fn main() -> ExitCode {
    let Commands::Proxy(args) = Cli::parse().command;
    let mut limit = match Limit::new(args.max_bytes) {
        Ok(limit) => limit.line_aligned(!args.no_line_align),
        Err(error) => {
            eprintln!("backstop: {error}");
            return ExitCode::from(2);
        }
    };
    if !args.tools.is_empty() {
        limit = limit.only_tools(args.tools);
    }
    let mut command = args.command.into_iter();
    let Some(program) = command.next() else {
        eprintln!("backstop: no server command given after `--`");
        return ExitCode::from(2);
    };
    let server = ServerCommand::new(program, command);
    match proxy::run(&server, Shaper::new(limit), !args.quiet) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!(
                "backstop: cannot start {}: {error}",
                server.program.to_string_lossy()
            );
            ExitCode::from(127)
        }
    }
}
