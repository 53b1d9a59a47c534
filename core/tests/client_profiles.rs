//! The limit fits the client that reads the result (SPEC L2, L18) and failures are
//! recognizable where a client hides `isError` (E12), through the session machine: the
//! profile is chosen from the handshake's `clientInfo` or a 2026-07-28 request's
//! `_meta`, a client without one gets the smallest profiled limits, and a limit set
//! explicitly wins.

use std::time::Instant;

use backstop_core::limit::{ClientProfile, ReaderCount};
use backstop_core::machine::{Answer, ClientRequest, RequestId, Response};
use backstop_core::{Failure, Limit, SessionMachine, ToolResult};
use serde_json::{Value, json};

/// 250,000 lines of scrollback (about 5 MB) ending in a prompt.
fn scrollback() -> Value {
    let text: String = (1..=250_000)
        .map(|n| format!("line {n:06} of output\n"))
        .collect();
    json!({"content": [{"type": "text", "text": text + "PROMPT $"}]})
}

fn id(n: u32) -> RequestId {
    RequestId::Number(n.to_string())
}

/// A machine whose client said `name` in its handshake.
fn after_handshake(limit: Limit, name: &str) -> SessionMachine {
    let mut machine = SessionMachine::new(limit);
    let mut init = ClientRequest::new(id(0), "0", "initialize");
    init.initialize = Some(
        json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": name, "version": "1"}}),
    );
    machine.client_request(init, false, Instant::now());
    machine.server_response(
        &id(0),
        Response::Result(json!({"protocolVersion": "2025-11-25"})),
        Instant::now(),
    );
    machine
}

/// The answer to a `tools/call` of `capture_pane` (request `n`, with `meta`) that
/// the server answered with `response`: the result sent, or `None` when it passes
/// as it came.
fn call(
    machine: &mut SessionMachine,
    n: u32,
    meta: Option<Value>,
    response: Response,
) -> Option<ToolResult> {
    let request = ClientRequest::new(id(n), n.to_string(), "tools/call")
        .tool("capture_pane")
        .meta(meta.and_then(|m| m.as_object().cloned()));
    machine.client_request(request, false, Instant::now());
    match machine.server_response(&id(n), response, Instant::now()) {
        Answer::Unchanged => None,
        Answer::Result { result, .. } => Some(result),
        other => panic!("a result: {other:?}"),
    }
}

fn text(result: &ToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

fn profile(name: &str) -> ClientProfile {
    ClientProfile::for_client(Some(name))
}

/// L18: a cut within the profile's limits, the header first and the prompt last.
fn assert_fits(result: &ToolResult, profile: ClientProfile) {
    let text = text(result);
    let count = ReaderCount::of(text);
    assert!(text.starts_with("[... truncated ") || text.starts_with("Error: [... truncated "));
    assert!(text.ends_with("line 250000 of output\nPROMPT $"));
    let chars = profile.max_chars.unwrap_or(usize::MAX);
    let tokens = profile.max_tokens.unwrap_or(usize::MAX);
    assert!(count.chars <= chars, "{} > {chars} characters", count.chars);
    assert!(
        count.tokens() <= tokens,
        "{} > {tokens} tokens",
        count.tokens()
    );
    // L10: the line before the kept tail (22 ASCII bytes) would not have fit.
    let line = ReaderCount::of("line 000001 of output\n");
    assert!(
        count.chars + line.chars > chars
            || (count.quarter_tokens + line.quarter_tokens).div_ceil(4) > tokens,
        "L10: a line more fits ({count:?})"
    );
}

#[test]
fn l18_the_handshake_names_the_client_and_its_profile_sets_the_limits() {
    for name in [
        "claude-code",
        "gemini-cli-mcp-client",
        "codex-mcp-client",
        "an-agent",
    ] {
        let mut machine = after_handshake(Limit::default(), name);
        let cut = call(&mut machine, 1, None, Response::Result(scrollback())).expect("cut");
        assert_fits(&cut, profile(name));
    }
}

#[test]
fn l18_a_stateless_request_names_its_client_in_its_meta() {
    let mut machine = SessionMachine::default();
    let meta = |name: &str| {
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": name, "version": "2.1.328"}})
    };
    let claude = call(
        &mut machine,
        1,
        Some(meta("claude-code")),
        Response::Result(scrollback()),
    );
    assert_fits(&claude.unwrap(), profile("claude-code"));
    // The next request, another client: its own profile.
    let gemini = call(
        &mut machine,
        2,
        Some(meta("gemini-cli-mcp-client")),
        Response::Result(scrollback()),
    );
    let gemini = gemini.unwrap();
    assert_fits(&gemini, profile("gemini-cli-mcp-client"));
    assert!(ReaderCount::of(text(&gemini)).chars < 40_000 - 41 + 1);
}

#[test]
fn l18_a_client_without_a_profile_gets_the_smallest_limits() {
    let mut machine = after_handshake(Limit::default(), "my-own-agent");
    let cut = call(&mut machine, 1, None, Response::Result(scrollback())).unwrap();
    let count = ReaderCount::of(text(&cut));
    for profile in ClientProfile::ALL {
        assert!(
            profile.max_chars.is_none_or(|max| count.chars <= max),
            "{}",
            profile.client
        );
        assert!(
            profile.max_tokens.is_none_or(|max| count.tokens() <= max),
            "{}",
            profile.client
        );
    }
    // No client known at all: the same.
    let mut machine = SessionMachine::default();
    let unknown = call(&mut machine, 1, None, Response::Result(scrollback())).unwrap();
    assert_eq!(unknown, cut);
}

#[test]
fn l2_an_explicit_limit_wins_over_the_profile() {
    let limit = Limit::new(90_000)
        .unwrap()
        .with_max_chars(None)
        .unwrap()
        .with_max_tokens(None)
        .unwrap();
    let mut machine = after_handshake(limit, "claude-code");
    let cut = call(&mut machine, 1, None, Response::Result(scrollback())).unwrap();
    assert!(serde_json::to_vec(&cut).unwrap().len() <= 90_000);
    assert!(
        ReaderCount::of(text(&cut)).chars > 50_000,
        "no limit in characters"
    );

    // Only the tokens set: the characters still the profile's.
    let limit = Limit::default().with_max_tokens(Some(2_000)).unwrap();
    let mut machine = after_handshake(limit, "claude-code");
    let cut = call(&mut machine, 1, None, Response::Result(scrollback())).unwrap();
    let count = ReaderCount::of(text(&cut));
    assert!(count.tokens() <= 2_000 && count.tokens() > 1_900);

    // A result within every limit passes as it came.
    let mut machine = after_handshake(Limit::default(), "claude-code");
    let small = json!({"content": [{"type": "text", "text": "x".repeat(49_000)}]});
    assert_eq!(call(&mut machine, 1, None, Response::Result(small)), None);
}

#[test]
fn l18_claude_code_follows_max_mcp_output_tokens_where_backstop_sees_it() {
    let limit = Limit::default().with_max_output_tokens_env(Some(4_000));
    let mut machine = after_handshake(limit.clone(), "claude-code");
    let cut = call(&mut machine, 1, None, Response::Result(scrollback())).unwrap();
    let tokens = ReaderCount::of(text(&cut)).tokens();
    assert!(tokens <= 4_000 && tokens > 3_900, "{tokens}");
    // Another client's profile does not follow it.
    let mut machine = after_handshake(limit, "gemini-cli-mcp-client");
    let cut = call(&mut machine, 1, None, Response::Result(scrollback())).unwrap();
    assert!(ReaderCount::of(text(&cut)).tokens() > 4_000);
}

#[test]
fn e12_a_failure_reads_as_one_where_the_client_hides_is_error() {
    let failed = || Response::Failure(Failure::expected("Pane not found: %5"));
    let own_error = || {
        Response::Result(json!({"content": [{"type": "text", "text": "boom"}], "isError": true}))
    };
    let mut codex = after_handshake(Limit::default(), "codex-mcp-client");
    let converted = call(&mut codex, 1, None, failed()).unwrap();
    assert!(converted.is_error());
    assert!(
        text(&converted).starts_with("Error: Pane not found: %5"),
        "{}",
        text(&converted)
    );
    let marked = call(&mut codex, 2, None, own_error()).expect("the server's own error is marked");
    assert_eq!(text(&marked), "Error: boom");
    // A cut error: the lead before the header, counted in the limits.
    let mut long = scrollback();
    long["isError"] = true.into();
    let cut = call(&mut codex, 3, None, Response::Result(long)).unwrap();
    assert!(text(&cut).starts_with("Error: [... truncated "));
    assert_fits(&cut, profile("codex-mcp-client"));
    // A success never gains it; an error that says so already is left alone.
    let ok = json!({"content": [{"type": "text", "text": "ok"}]});
    assert_eq!(call(&mut codex, 4, None, Response::Result(ok)), None);
    let said = json!({"content": [{"type": "text", "text": "Error: boom"}], "isError": true});
    assert_eq!(call(&mut codex, 5, None, Response::Result(said)), None);

    // Clients that show isError get E2's text as it is.
    let mut claude = after_handshake(Limit::default(), "claude-code");
    let converted = call(&mut claude, 1, None, failed()).unwrap();
    assert!(text(&converted).starts_with("Pane not found: %5"));
    assert_eq!(call(&mut claude, 2, None, own_error()), None);
}

fn codex() -> Limit {
    Limit::default().for_client(Some(&backstop_core::protocol::ClientInfo::new(
        "codex-mcp-client",
        "0.169.0",
    )))
}

fn failed(text: &str) -> ToolResult {
    ToolResult {
        is_error: Some(true),
        ..ToolResult::text(text)
    }
}

#[test]
fn e12_the_lead_is_counted_in_the_cap_and_the_cut_stays_the_longest() {
    let cap = 5_000;
    let limit =
        Limit::new(cap)
            .unwrap()
            .for_client(Some(&backstop_core::protocol::ClientInfo::new(
                "codex-mcp-client",
                "1",
            )));
    let cut = limit.apply("t", failed(&"a failing line\n".repeat(10_000)));
    let wire = serde_json::to_vec(&cut.result).unwrap().len();
    assert!(text(&cut.result).starts_with("Error: [... truncated "));
    assert!(wire <= cap, "L4 with the lead: {wire}");
    assert!(
        wire + "a failing line\n".len() > cap,
        "L10: a line more would not fit ({wire})"
    );
}

#[test]
fn e12_an_error_that_starts_with_the_lead_keeps_its_own_head() {
    use backstop_core::limit::Keep;
    // Under `head` the kept text starts with the server's own `Error: `: the cut is the
    // one a client that shows isError gets, nothing reserved for a second lead.
    let long = failed(&("Error: disk full\n".to_owned() + &"detail line\n".repeat(10_000)));
    let marked = codex().with_keep(Keep::Head).apply("t", long.clone());
    let plain = Limit::default()
        .with_max_tokens(Some(11_950))
        .unwrap()
        .with_max_chars(None)
        .unwrap()
        .with_keep(Keep::Head)
        .apply("t", long);
    assert_eq!(marked.result, plain.result);
    assert!(text(&marked.result).starts_with("Error: disk full\n"));
}

#[test]
fn l18_what_a_reader_of_structured_content_reads_is_counted() {
    // A short text, a long structuredContent: Codex reads the latter, so it is cut.
    let result = ToolResult {
        structured_content: Some(json!({"log": "entry\n".repeat(20_000)})),
        ..ToolResult::text("see the log")
    };
    let cut = codex().apply("t", result.clone());
    assert!(cut.truncation.is_some(), "over Codex's tokens in its JSON");
    let json = cut.result.structured_content.unwrap().to_string();
    assert!(ReaderCount::of(&json).tokens() <= 11_950);
    // A reader of the text blocks alone (Gemini CLI) passes it as it came.
    let gemini = Limit::default().for_client(Some(&backstop_core::protocol::ClientInfo::new(
        "gemini-cli-mcp-client",
        "1",
    )));
    assert!(gemini.apply("t", result).truncation.is_none());
}

#[test]
fn l18_the_separator_between_text_blocks_is_counted() {
    // 2 × 500 characters and the `\n\n` between them: 1,002 > 1,001.
    let limit = Limit::default().with_max_chars(Some(1_001)).unwrap();
    let two = ToolResult {
        content: vec![
            backstop_core::call::Content::text("a".repeat(500)),
            backstop_core::call::Content::text("b".repeat(500)),
        ],
        ..ToolResult::default()
    };
    assert!(limit.truncate(&two).is_some());
    let limit = Limit::default().with_max_chars(Some(1_002)).unwrap();
    assert!(limit.truncate(&two).is_none());
}
