//! `backstop`: put any stdio MCP server behind backstop.
//!
//! ```text
//! backstop proxy [--max-bytes N] [--max-chars N] [--max-tokens N] [--tools a,b,…] [--keep [TOOL=]POLICY]… [--no-line-align] -- <command> [args…]
//! backstop proxy [options] --url URL [--header 'Name: value']…
//! backstop gateway [options] [--listen 127.0.0.1:8808] --upstream URL
//! ```
//!
//! A hidden `generate-share DIR` writes the man pages and shell completions that the
//! Python and npm packages ship (see `share_files`).

mod share_files;

use std::ffi::OsString;
use std::process::ExitCode;

use backstop_core::limit::DEFAULT_MAX_BYTES;
use backstop_core::{Limit, limit::Keep};
use std::net::SocketAddr;
use std::time::Duration;

use backstop::http::connections;
use backstop::http::gateway::{self, Gateway};
use backstop::http::origin_guard::{self, Allowed, Pattern};
use backstop::http::upstream::{DEFAULT_IDLE_TIMEOUT, DEFAULT_TIMEOUT, Upstream};
use backstop::http::{Options, client};
use backstop::proxy::{self, ServerCommand};
use backstop::server_process::DEFAULT_KILL_AFTER;
use backstop_jsonrpc::Shaper;
use clap::{Parser, Subcommand};
use http::{HeaderMap, HeaderName, HeaderValue};

const PROXY_EXAMPLES: &str = "\
Examples:
  # A Python server, every tool result cut to fit the client that reads it (its
  # characters and tokens) and 1,000,000 bytes:
  backstop proxy -- python3 -m my_mcp_server

  # The same for a client without a limit of its own, up to 1,000,000 bytes only:
  backstop proxy --max-chars none --max-tokens none -- python3 -m my_mcp_server

  # An npm server, only two tools capped, at 200 kB:
  backstop proxy --max-bytes 200000 --tools capture_pane,show_buffer -- npx -y some-mcp-server

  # git_log lists newest first: keep its head; fetched pages keep both ends (a fifth
  # of the room for the head); every other tool keeps its tail (logs, scrollback):
  backstop proxy --keep git_log=head --keep fetch=head+tail:0.2 -- uvx mcp-server-git

  # In a client's config, replace the server's command with `backstop` and put
  # `proxy --` before its arguments:
  #   \"command\": \"backstop\", \"args\": [\"proxy\", \"--\", \"uvx\", \"my-mcp-server\"]

  # A remote Streamable HTTP server, with a credential header:
  backstop proxy --url https://mcp.example.com/mcp --header \"Authorization: Bearer $TOKEN\"";

const GATEWAY_EXAMPLES: &str = "\
Examples:
  # An HTTP MCP server on port 9000 served shaped on 127.0.0.1:8808:
  backstop gateway --upstream http://127.0.0.1:9000/mcp

  # Listening on every interface (put TLS and authentication in front of it), serving
  # only the name clients reach it by and one web app's origin:
  backstop gateway --listen 0.0.0.0:8808 --upstream http://10.0.0.5:9000/mcp \\
    --allowed-hosts mcp.example.com --allowed-origins https://app.example.com";

const CONFIG_POINTER: &str = "\
In an MCP client's config (Claude Desktop, Cursor, VS Code, Codex), the server's command
becomes `backstop proxy -- <command>`; the lines for each client, with backstop run by
uvx, npx or as an installed binary, are in the README's \"Use it\" section:
  https://github.com/backstop-mcp/backstop#use-it";

/// backstop: MCP tool failures become readable `isError` results, and oversized tool
/// output keeps its end under a hard byte cap.
#[derive(Debug, Parser)]
#[command(name = "backstop", version, after_help = CONFIG_POINTER)]
struct Cli {
    #[command(subcommand)]
    command: Commands,

    /// More of the diagnostic log on stderr: -v info, -vv debug, -vvv trace (warnings
    /// only by default; RUST_LOG, when set, decides instead). Never a header value,
    /// credential or argument value, at any level.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Run a stdio MCP server as a child (or reach a remote one with --url) and shape
    /// its JSON-RPC messages.
    ///
    /// Newline-delimited JSON on stdin/stdout both ways; the server's stderr passes
    /// through; SIGINT/SIGTERM are forwarded; the server's exit status becomes the
    /// proxy's (128 + N when it was killed by signal N). Requests still pending when
    /// the server exits are answered with a JSON-RPC error naming the exit status.
    ///
    /// With --url, the server is a Streamable HTTP one: each client message is POSTed,
    /// its JSON or SSE answer shaped; failures answer each pending request with a
    /// JSON-RPC error naming the HTTP status or cause and the server's address.
    #[command(after_help = PROXY_EXAMPLES)]
    Proxy(ProxyArgs),
    /// Streamable HTTP on both sides: an MCP server's HTTP endpoint behind backstop.
    ///
    /// Every JSON body and SSE event is shaped; headers pass untouched (hop-by-hop ones
    /// dropped; the client's Host goes on as X-Forwarded-Host); no CORS headers are
    /// added; header values are never logged. A request whose Host or Origin is not
    /// served (see --allowed-hosts, --allowed-origins: loopback only when listening on
    /// loopback) gets 403 and never reaches the server: DNS rebinding protection.
    #[command(after_help = GATEWAY_EXAMPLES)]
    Gateway(GatewayArgs),
    /// Write the man pages and shell completions into DIR (man/man1, bash-completion,
    /// zsh, fish): the files the packages ship.
    #[command(hide = true)]
    GenerateShare {
        /// The `share` directory to fill.
        dir: std::path::PathBuf,
    },
}

/// The shaping options every mode shares.
#[derive(Debug, clap::Args)]
struct ShapeArgs {
    /// Cap on a tools/call result's wire size in bytes; larger results keep their tail.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BYTES, value_parser = parse_cap)]
    max_bytes: usize,

    /// The most characters (UTF-16 code units, as JavaScript counts them) of a result's
    /// text that reach the model, or `none`. Default: the limit of the client that
    /// reads it, by its name in the handshake — Claude Code 50,000, Gemini CLI 39,959
    /// — so that the client passes the cut on as it is, header and tail, instead of
    /// cutting it again or saving it to a file; a client without a profile gets the
    /// smallest.
    #[arg(long, value_name = "N|none", value_parser = parse_chars)]
    max_chars: Option<ReaderLimitArg>,

    /// The most tokens of a result's text that reach the model (estimated as 4 ASCII
    /// bytes, or one character beyond ASCII, a token), or `none`. Default: the
    /// client's limit — Codex 11,950, Claude Code 25,000 or its MAX_MCP_OUTPUT_TOKENS
    /// when backstop's environment has it.
    #[arg(long, value_name = "N|none", value_parser = parse_tokens)]
    max_tokens: Option<ReaderLimitArg>,

    /// Apply the cap only to these tools (comma-separated); default: every tool.
    #[arg(long, value_name = "a,b,…", value_delimiter = ',')]
    tools: Vec<String>,

    /// Which end of an over-long result is kept: tail (the default: logs, scrollback,
    /// build output), head (newest-first listings, search results, the start of a
    /// page) or head+tail[:SHARE] (both ends, the head with SHARE of the room, 0.5 if
    /// not given: a page's title and its pagination hint). TOOL=POLICY sets one tool's;
    /// repeat for several.
    #[arg(long, value_name = "[TOOL=]POLICY", value_parser = parse_keep)]
    keep: Vec<(Option<String>, Keep)>,

    /// Cut at the longest grapheme boundary that fits instead of at a line start.
    #[arg(long)]
    no_line_align: bool,

    /// Do not log converted failures to stderr (one `backstop: {json}` line each).
    #[arg(long)]
    quiet: bool,
}

impl ShapeArgs {
    /// The shaper these options ask for.
    fn shaper(&self) -> Result<Shaper, String> {
        Ok(Shaper::new(self.limit()?))
    }

    /// The response limit these options ask for.
    fn limit(&self) -> Result<Limit, String> {
        let mut limit = Limit::new(self.max_bytes)
            .map_err(|error| error.to_string())?
            .line_aligned(!self.no_line_align)
            .with_max_output_tokens_env(max_mcp_output_tokens());
        if let Some(ReaderLimitArg(chars)) = self.max_chars {
            limit = limit
                .with_max_chars(chars)
                .map_err(|error| error.to_string())?;
        }
        if let Some(ReaderLimitArg(tokens)) = self.max_tokens {
            limit = limit
                .with_max_tokens(tokens)
                .map_err(|error| error.to_string())?;
        }
        if !self.tools.is_empty() {
            limit = limit.only_tools(self.tools.clone());
        }
        for (tool, keep) in &self.keep {
            limit = match tool {
                Some(tool) => limit.keep_for(tool.clone(), *keep),
                None => limit.with_keep(*keep),
            };
        }
        Ok(limit)
    }

    /// The remote modes' options.
    fn options(&self) -> Result<Options, String> {
        Ok(Options {
            shaper: self.shaper()?,
            log_failures: !self.quiet,
        })
    }
}

#[derive(Debug, clap::Args)]
struct ProxyArgs {
    #[command(flatten)]
    shape: ShapeArgs,

    /// A Streamable HTTP MCP server to reach instead of running a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,

    /// A header to send with each request to --url, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url", value_parser = HeaderArg)]
    headers: Vec<(HeaderName, HeaderValue)>,

    /// Seconds the --url server may take to answer (a `subscriptions/listen` or
    /// `tasks/result` stream may be quiet longer).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT.as_secs_f64())]
    timeout: f64,

    /// Seconds a whole answer may take, however steadily its bytes come (none by
    /// default: --timeout bounds only the gaps between them). A long-lived stream
    /// (the server's GET stream, `subscriptions/listen`, `tasks/result`) has none.
    #[arg(long, value_name = "SECONDS")]
    answer_timeout: Option<f64>,

    /// Seconds the server has to exit when the proxy is told to stop (SIGINT or
    /// SIGTERM, forwarded to it) before it is killed.
    #[arg(long, value_name = "SECONDS", conflicts_with = "url", default_value_t = DEFAULT_KILL_AFTER.as_secs_f64())]
    kill_after: f64,

    /// The server's command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    command: Vec<OsString>,
}

#[derive(Debug, clap::Args)]
struct GatewayArgs {
    #[command(flatten)]
    shape: ShapeArgs,

    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8808")]
    listen: SocketAddr,

    /// The MCP server's Streamable HTTP endpoint.
    #[arg(long, value_name = "URL")]
    upstream: String,

    /// Seconds the upstream may take to answer (a `subscriptions/listen` or
    /// `tasks/result` stream may be quiet longer).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT.as_secs_f64())]
    timeout: f64,

    /// Seconds a whole answer may take, however steadily its bytes come (none by
    /// default: --timeout bounds only the gaps between them). A long-lived stream
    /// (the server's GET stream, `subscriptions/listen`, `tasks/result`) has none.
    #[arg(long, value_name = "SECONDS")]
    answer_timeout: Option<f64>,

    /// Seconds an idle connection to the upstream is kept for reuse (at most 32 are
    /// kept).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_IDLE_TIMEOUT.as_secs_f64())]
    upstream_idle: f64,

    /// The largest request body taken, in bytes (413 above it).
    #[arg(long, value_name = "N", default_value_t = gateway::DEFAULT_MAX_BODY)]
    max_body: usize,

    /// The most sessions whose state is kept at once.
    #[arg(long, value_name = "N", default_value_t = gateway::DEFAULT_MAX_SESSIONS)]
    max_sessions: usize,

    /// Seconds a session's state is kept without a request.
    #[arg(long, value_name = "SECONDS", default_value_t = gateway::DEFAULT_SESSION_IDLE.as_secs_f64())]
    session_idle: f64,

    /// The most client connections open at once. Past it, a connection that is not
    /// serving a request is closed to make room (the oldest that has not sent one yet,
    /// else the oldest idle between requests); only when every one is serving is a new
    /// one refused with 503 and Retry-After.
    #[arg(long, value_name = "N", default_value_t = connections::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,

    /// `Host` values served besides the defaults (comma-separated or repeated): a name
    /// or address, with `:port` or without (any port), or `*` for any. Listening on a
    /// loopback address, only loopback names (localhost, 127.0.0.1, [::1]) are served
    /// by default and any other Host gets 403 (DNS rebinding); listening elsewhere,
    /// any Host is unless this is given: give the names clients reach the gateway by.
    #[arg(long, value_name = "HOST[:PORT],…", value_delimiter = ',', value_parser = origin_guard::parse_allowed_host)]
    allowed_hosts: Vec<Pattern>,

    /// `Origin` values served besides the defaults (comma-separated or repeated):
    /// `scheme://host`, with `:port` or without (any port), or `*` for any. A request
    /// without Origin (not from a browser) is always served; listening on a loopback
    /// address, only http(s) origins of loopback names are by default, others get 403;
    /// listening elsewhere, any Origin is unless this is given.
    #[arg(long, value_name = "ORIGIN,…", value_delimiter = ',', value_parser = origin_guard::parse_allowed_origin)]
    allowed_origins: Vec<Pattern>,
}

/// `--header`'s parser. clap's own way with a parsing function repeats the argument in
/// its error, and a header's text may be a credential: this error never does.
#[derive(Debug, Clone, Copy)]
struct HeaderArg;

impl clap::builder::TypedValueParser for HeaderArg {
    type Value = (HeaderName, HeaderValue);

    fn parse_ref(
        &self,
        command: &clap::Command,
        _arg: Option<&clap::Arg>,
        text: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let parsed = match text.to_str() {
            Some(text) => client::parse_header(text),
            None => Err("a --header is `Name: value` in UTF-8 (the text is not shown)".to_owned()),
        };
        parsed.map_err(|reason| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid --header: {reason}"),
            )
            .format(&mut command.clone())
        })
    }
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

/// A reader's limit (L18) given on the command line: a number, or `none` for no limit
/// in that unit.
#[derive(Debug, Clone, Copy)]
struct ReaderLimitArg(Option<usize>);

fn parse_chars(text: &str) -> Result<ReaderLimitArg, String> {
    parse_reader_limit(text, "characters", |n| Limit::default().with_max_chars(n))
}

fn parse_tokens(text: &str) -> Result<ReaderLimitArg, String> {
    parse_reader_limit(text, "tokens", |n| Limit::default().with_max_tokens(n))
}

fn parse_reader_limit(
    text: &str,
    unit: &str,
    check: impl Fn(Option<usize>) -> Result<Limit, backstop_core::limit::LimitError>,
) -> Result<ReaderLimitArg, String> {
    let limit = match text.trim() {
        "none" => None,
        number => Some(
            number
                .parse()
                .map_err(|_| format!("`{text}` is not a number of {unit}, or `none`"))?,
        ),
    };
    check(limit).map_err(|error| error.to_string())?;
    Ok(ReaderLimitArg(limit))
}

/// `MAX_MCP_OUTPUT_TOKENS` from the environment, which Claude Code's profile follows
/// (a user sets it in the server's `env` in the client's config, L18).
fn max_mcp_output_tokens() -> Option<usize> {
    std::env::var("MAX_MCP_OUTPUT_TOKENS")
        .ok()
        .and_then(|value| value.trim().parse().ok())
}

/// A keep policy (L16), for every tool (`head`) or for one (`git_log=head`).
fn parse_keep(text: &str) -> Result<(Option<String>, Keep), String> {
    let (tool, policy) = match text.split_once('=') {
        Some((tool, policy)) if !tool.trim().is_empty() => (Some(tool.trim().to_owned()), policy),
        Some(_) => return Err(format!("`{text}`: a tool name goes before `=`")),
        None => (None, text),
    };
    let keep = policy.parse::<Keep>().map_err(|error| error.to_string())?;
    Ok((tool, keep))
}

/// The duration an option's `value` in seconds gives; an error naming `option` when it
/// is negative or not a number.
fn seconds(option: &str, value: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("{option} must be a positive number of seconds"))
}

/// An upstream from a URL, a timeout, an answer timeout and an idle timeout for its
/// pooled connections, in seconds.
fn upstream(
    url: &str,
    timeout: f64,
    answer_timeout: Option<f64>,
    idle_timeout: f64,
) -> Result<Upstream, String> {
    let url: http::Uri = url
        .parse()
        .map_err(|_| "the URL does not read as a URL".to_owned())?;
    if url.authority().is_some_and(|a| a.as_str().contains('@')) {
        tracing::warn!(
            "the URL's user info is not sent (HTTP never sends it); a credential goes in \
             a header: --header 'Authorization: …'"
        );
    }
    let timeout = seconds("--timeout", timeout)?;
    let answer_timeout = answer_timeout
        .map(|answer_timeout| seconds("--answer-timeout", answer_timeout))
        .transpose()?;
    let idle_timeout = seconds("--upstream-idle", idle_timeout)?;
    Ok(
        Upstream::with_idle_timeout(url, timeout, idle_timeout)?
            .with_answer_timeout(answer_timeout),
    )
}

/// The command line, read; an error exits as clap's would, without the text of an
/// argument that may be a credential ([`unexpected_value_hidden`]).
fn parse_cli() -> Cli {
    Cli::try_parse().unwrap_or_else(|error| match unexpected_value_hidden(&error) {
        Some(hidden) => hidden.exit(),
        None => error.exit(),
    })
}

/// For clap's "unexpected argument" error about something that is not an option name
/// (`'Authorization: Bearer …'`, its `--header` left out), the same error without
/// that text: clap repeats it whole. `None` for any other error.
fn unexpected_value_hidden(error: &clap::Error) -> Option<clap::Error> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(argument)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let is_option_name = |text: &str| {
        text.starts_with('-') && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if is_option_name(argument) {
        return None;
    }
    let what = match argument.split_once('=') {
        Some((name, _)) if is_option_name(name) => format!("unexpected argument `{name}=…`"),
        _ => "an unexpected argument".to_owned(),
    };
    let message = format!(
        "{what} (its text is not shown: it may hold a credential; a header goes after \
         --header, a server's command after --)"
    );
    let mut command = <Cli as clap::CommandFactory>::command();
    Some(clap::Error::raw(ErrorKind::UnknownArgument, message).format(&mut command))
}

fn main() -> ExitCode {
    let cli = parse_cli();
    backstop::log::init_diagnostics(cli.verbose);
    match cli.command {
        Commands::Proxy(args) => proxy_main(args),
        Commands::Gateway(args) => gateway_main(args),
        Commands::GenerateShare { dir } => {
            match share_files::write(<Cli as clap::CommandFactory>::command(), &dir) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("backstop: cannot write into {}: {error}", dir.display());
                    ExitCode::from(1)
                }
            }
        }
    }
}

fn usage_error(error: impl std::fmt::Display) -> ExitCode {
    eprintln!("backstop: {error}");
    ExitCode::from(2)
}

fn gateway_main(args: GatewayArgs) -> ExitCode {
    let (options, upstream) = match (
        args.shape.options(),
        upstream(
            &args.upstream,
            args.timeout,
            args.answer_timeout,
            args.upstream_idle,
        ),
    ) {
        (Ok(options), Ok(upstream)) => (options, upstream),
        (Err(error), _) | (_, Err(error)) => return usage_error(error),
    };
    let session_idle = match seconds("--session-idle", args.session_idle) {
        Ok(session_idle) => session_idle,
        Err(error) => return usage_error(error),
    };
    let mut gateway = Gateway::new(upstream, options);
    gateway.max_body = args.max_body;
    gateway.max_sessions = args.max_sessions.max(1);
    gateway.max_connections = args.max_connections.max(1);
    gateway.session_idle = session_idle;
    gateway.allowed = Allowed {
        hosts: args.allowed_hosts,
        origins: args.allowed_origins,
    };
    match gateway::run(args.listen, gateway, args.shape.quiet) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("backstop: cannot listen on {}: {error}", args.listen);
            ExitCode::from(1)
        }
    }
}

fn proxy_main(args: ProxyArgs) -> ExitCode {
    let shaper = match args.shape.shaper() {
        Ok(shaper) => shaper,
        Err(error) => return usage_error(error),
    };
    if let Some(url) = &args.url {
        let idle = DEFAULT_IDLE_TIMEOUT.as_secs_f64();
        let upstream = match upstream(url, args.timeout, args.answer_timeout, idle) {
            Ok(upstream) => upstream,
            Err(error) => return usage_error(error),
        };
        let extra: HeaderMap = args.headers.into_iter().collect();
        let options = Options {
            shaper,
            log_failures: !args.shape.quiet,
        };
        return match client::run(upstream, extra, options) {
            Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(error) => {
                eprintln!("backstop: {error}");
                ExitCode::from(1)
            }
        };
    }
    let mut command = args.command.into_iter();
    let Some(program) = command.next() else {
        return usage_error("no server command given after `--`");
    };
    let mut server = ServerCommand::new(program, command);
    server.kill_after = match seconds("--kill-after", args.kill_after) {
        Ok(kill_after) => kill_after,
        Err(error) => return usage_error(error),
    };
    match proxy::run(&server, shaper, !args.shape.quiet) {
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

#[cfg(test)]
mod keep_tests {
    use super::*;

    fn limit_of(args: &[&str]) -> Result<Limit, String> {
        let argv = ["backstop", "proxy"]
            .iter()
            .chain(args)
            .chain(&["--", "server"]);
        let cli = Cli::try_parse_from(argv).map_err(|error| error.to_string())?;
        match cli.command {
            Commands::Proxy(proxy) => proxy.shape.limit(),
            _ => unreachable!("a proxy command line"),
        }
    }

    #[test]
    fn keep_sets_the_default_and_each_tools_policy() {
        let limit = limit_of(&["--keep", "head+tail:0.2", "--keep", "git_log=head"]).unwrap();
        assert_eq!(
            limit.keep(),
            Keep::HeadAndTail {
                head_per_mille: 200
            }
        );
        assert_eq!(limit.keep_of("git_log"), Keep::Head);
        assert_eq!(limit.keep_of("capture_pane"), limit.keep());
        assert_eq!(limit_of(&[]).unwrap().keep(), Keep::Tail);
    }

    #[test]
    fn l18_the_readers_limits_are_the_clients_unless_given() {
        use backstop_core::protocol::ClientInfo;
        let claude = ClientInfo::new("claude-code", "2.1.328");
        let default = limit_of(&[]).unwrap().for_client(Some(&claude));
        let profile = backstop_core::limit::ClientProfile::for_client(Some("claude-code"));
        assert_eq!(default.max_chars(), profile.max_chars);
        let given = limit_of(&["--max-chars", "1000", "--max-tokens", "none"]).unwrap();
        let given = given.for_client(Some(&claude));
        assert_eq!((given.max_chars(), given.max_tokens()), (Some(1000), None));
        let error = limit_of(&["--max-chars", "3"]).unwrap_err();
        assert!(
            error.contains(&Limit::min_chars().to_string()),
            "L14: {error}"
        );
        let error = limit_of(&["--max-tokens", "many"]).unwrap_err();
        assert!(
            error.contains("`many` is not a number of tokens, or `none`"),
            "{error}"
        );
    }

    #[test]
    fn a_bad_policy_is_refused_with_the_choices() {
        let error = limit_of(&["--keep", "middle"]).unwrap_err();
        assert!(error.contains("head+tail"), "{error}");
        assert!(limit_of(&["--keep", "=head"]).is_err());
        assert!(limit_of(&["--keep", "fetch=head+tail:1.5"]).is_err());
    }
}
