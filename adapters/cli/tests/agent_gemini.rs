//! Gemini CLI 0.61.0 (`@google/gemini-cli`, pinned in `tests/peers/agents/`), run
//! headless (`gemini -p … --yolo`) against a scripted Gemini API endpoint on loopback,
//! calling a fastmcp server's tools directly and through `backstop proxy` with no
//! flags, and the seed's own server (libtmux-mcp's `capture_pane` of a real tmux pane)
//! through it. The assertions are on the `functionResponse` the endpoint receives: what
//! Gemini's model reads (SPEC L18, E12).
//!
//! Gemini CLI asks a small routing model first (`:generateContent` with a JSON schema),
//! then streams (`:streamGenerateContent?alt=sse`); its MCP tools are `mcp_<server>_<tool>`,
//! and a result's text reaches the model wrapped in `<untrusted_context>`.

mod support;

#[path = "support/agents.rs"]
mod agents;
#[path = "support/model_endpoint.rs"]
mod model_endpoint;
#[path = "support/tmux.rs"]
mod tmux;

use std::process::Command;
use std::time::Duration;

use model_endpoint::{ModelAnswer, ModelEndpoint, ModelRequest};
use serde_json::{Value, json};

/// The `functionResponse` parts of a request's contents.
fn function_responses(request: &ModelRequest) -> Vec<Value> {
    request.body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|content| content["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|part| part.get("functionResponse").cloned())
        .collect()
}

/// The next model turn: call the tool, then end; the router answered with its JSON.
fn script(
    tool: &'static str,
    arguments: Value,
) -> impl Fn(&ModelRequest, &[ModelRequest]) -> ModelAnswer {
    move |request, _| {
        if request.path.contains(":countTokens") {
            return ModelAnswer::json(&json!({"totalTokens": 10}));
        }
        if request.path.contains(":generateContent") {
            let choice = json!({"reasoning": "one tool call", "model_choice": "flash"});
            return ModelAnswer::json(&json!({"candidates": [{"content": {"role": "model",
                "parts": [{"text": choice.to_string()}]}, "finishReason": "STOP"}]}));
        }
        let parts = match function_responses(request).is_empty() {
            true => {
                json!([{"functionCall": {"name": format!("mcp_tools_{tool}"), "args": arguments}}])
            }
            false => json!([{"text": "done"}]),
        };
        let event = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}});
        ModelAnswer::sse([(None, event)])
    }
}

/// Gemini CLI calls `tool` with `arguments`, directly or behind backstop: the
/// `functionResponse.response` its model read. `None`: a peer is missing.
fn gemini_reads(
    test: &str,
    behind_backstop: bool,
    tool: &'static str,
    arguments: Value,
) -> Option<Value> {
    let gemini = agents::agent_package("@google/gemini-cli/bundle/gemini.js");
    if !gemini.exists() {
        support::peer_missing(test, "Gemini CLI (target/agent-peers)");
        return None;
    }
    let Some(python) = support::venv_python("fastmcp") else {
        support::peer_missing(test, "fastmcp (target/fastmcp-venv)");
        return None;
    };
    let options: &[&str] = &[];
    let server = agents::server_command(&python, behind_backstop.then_some(options));
    Some(gemini_calls(&gemini, &server, &[], tool, arguments))
}

/// Gemini CLI calls `tool` with `arguments` of the MCP server `server` (program and
/// arguments) run with `env` (its settings' `env`): the `functionResponse.response` its
/// model read.
fn gemini_calls(
    gemini: &std::path::Path,
    server: &[String],
    env: &[(&str, String)],
    tool: &'static str,
    arguments: Value,
) -> Value {
    let endpoint = ModelEndpoint::start(script(tool, arguments));
    let dir = agents::scratch("gemini");
    let env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(key, value)| ((*key).to_owned(), json!(value)))
        .collect();
    let settings = json!({
        "mcpServers": {"tools": {"command": server[0], "args": &server[1..], "trust": true,
            "env": env}},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
    });
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    std::fs::write(dir.join(".gemini/settings.json"), settings.to_string()).unwrap();
    let mut command = Command::new("node");
    command
        .arg(gemini)
        .args(["-p", "Use the tool.", "--yolo", "--output-format", "json"])
        .current_dir(dir.join("work"))
        .env("HOME", &*dir)
        .env(
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://127.0.0.1:{}", endpoint.port),
        )
        .env("GEMINI_API_KEY", "scripted")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    let ran = agents::run(command, &dir, Duration::from_secs(120));
    assert!(
        ran.status.success(),
        "gemini: {:?}\n{}",
        ran.status,
        ran.stderr
    );
    let response = endpoint
        .requests()
        .iter()
        .flat_map(function_responses)
        .next()
        .unwrap_or_else(|| {
            panic!(
                "Gemini CLI sent the tool's result to the model\n{}",
                ran.stderr
            )
        });
    response["response"].clone()
}

/// The text the model reads, without Gemini CLI's `<untrusted_context>` wrapper.
fn unwrapped(output: &str) -> &str {
    let inner = output
        .strip_prefix("<untrusted_context>\n")
        .unwrap_or(output);
    inner
        .strip_suffix("\n</untrusted_context>")
        .unwrap_or(inner)
}

const LINES: u64 = 150_000; // 3.3 MB of scrollback

/// Without backstop, Gemini CLI cuts a long result itself: its first 8,000 and last
/// 32,000 characters, the rest to a file (what the harness measures is the client's
/// own limit).
#[test]
fn l18_without_backstop_gemini_cli_cuts_a_long_result_again() {
    let test = "l18_without_backstop_gemini_cli_cuts_a_long_result_again";
    let Some(response) = gemini_reads(test, false, "scrollback", json!({"lines": LINES})) else {
        return;
    };
    let output = response["output"].as_str().expect("the output");
    assert!(output.contains("Output too large."), "Gemini CLI's own cut");
    assert!(output.contains("line 000001 of output"), "its head kept");
}

/// L18: through `backstop proxy` with no flags, the cut fits Gemini CLI's profile: its
/// model reads backstop's header, the tail and the prompt, and no cut of its own.
#[test]
fn l18_through_backstop_gemini_cli_passes_the_cut_on_as_it_is() {
    let test = "l18_through_backstop_gemini_cli_passes_the_cut_on_as_it_is";
    let Some(response) = gemini_reads(test, true, "scrollback", json!({"lines": LINES})) else {
        return;
    };
    let output = response["output"].as_str().expect("the output");
    assert!(
        !output.contains("Output too large"),
        "no cut of Gemini CLI's own"
    );
    let text = unwrapped(output);
    assert!(
        text.starts_with("[... truncated "),
        "backstop's header first: {:?}",
        &text[..80.min(text.len())]
    );
    assert!(
        text.ends_with(&format!("line {LINES:06} of output\nPROMPT $")),
        "the prompt last"
    );
    // L10: close to Gemini CLI's 40,000 characters, its wrapper included.
    assert!(
        output.chars().count() > 39_000,
        "{} characters read",
        output.chars().count()
    );
}

/// E12's other side: Gemini CLI shows `isError` (as the response's `error`), so the
/// failure's text is E2's, without a lead.
#[test]
fn e12_through_backstop_a_failure_reaches_gemini_cli_as_an_error() {
    let test = "e12_through_backstop_a_failure_reaches_gemini_cli_as_an_error";
    let Some(response) = gemini_reads(test, true, "fail", json!({})) else {
        return;
    };
    let error = response["error"].to_string();
    assert!(error.contains("Pane not found: %5"), "{response}");
    assert!(
        !error.contains("Error: Pane"),
        "no lead for a client that shows isError: {response}"
    );
}

/// E2, E12: a server that answers the call with a JSON-RPC error (`fail_rpc`: `-32603`)
/// gets, through backstop, an `isError` result, which Gemini CLI shows its model as an
/// error: E2's text with the server's message, without the lead.
#[test]
fn e12_through_backstop_a_converted_error_reaches_gemini_cli_as_an_error() {
    let test = "e12_through_backstop_a_converted_error_reaches_gemini_cli_as_an_error";
    let Some(response) = gemini_reads(test, true, "fail_rpc", json!({})) else {
        return;
    };
    let error = response["error"].to_string();
    assert!(error.contains("Pane not found: %5"), "{response}");
    assert!(!error.contains("Error: "), "no lead: {response}");
}

/// L2: a small result reaches the model whole through backstop.
#[test]
fn l2_through_backstop_a_small_result_passes_whole() {
    let test = "l2_through_backstop_a_small_result_passes_whole";
    let Some(response) = gemini_reads(test, true, "scrollback", json!({"lines": 3})) else {
        return;
    };
    assert_eq!(
        unwrapped(response["output"].as_str().expect("the output")),
        "line 000001 of output\nline 000002 of output\nline 000003 of output\nPROMPT $"
    );
}

/// The seed's own server (libtmux-mcp 0.1.0a22, on fastmcp 4.0) on a real tmux.
const PANE_LINES: u64 = 250_000;

/// L18 with the seed's own server: Gemini CLI calls libtmux-mcp's `capture_pane` of a
/// real tmux pane (250,000 lines of `seq`, then a prompt; the whole scrollback asked
/// for), through `backstop proxy` with no flags. libtmux-mcp cuts it to its own 1 MB
/// tail first (its header is lost with the head); the model reads backstop's header,
/// the tail and the prompt, within Gemini CLI's profile, and no cut of its own.
#[test]
fn l18_through_backstop_gemini_cli_reads_the_tail_of_a_tmux_pane() {
    let test = "l18_through_backstop_gemini_cli_reads_the_tail_of_a_tmux_pane";
    let gemini = agents::agent_package("@google/gemini-cli/bundle/gemini.js");
    if !gemini.exists() {
        support::peer_missing(test, "Gemini CLI (target/agent-peers)");
        return;
    }
    let Some((pane, server, arguments)) = tmux::pane_behind_backstop(test, PANE_LINES) else {
        return;
    };
    let response = gemini_calls(&gemini, &server, &pane.env(), "capture_pane", arguments);
    let output = response["output"].as_str().expect("the output");
    assert!(
        !output.contains("Output too large"),
        "no cut of Gemini CLI's own"
    );
    let text = unwrapped(output);
    assert!(
        text.starts_with("[... truncated "),
        "backstop's header first: {:?}",
        &text[..80.min(text.len())]
    );
    assert_eq!(text.matches("[... truncated ").count(), 1, "one header");
    assert!(
        text.ends_with(&format!("\n{PANE_LINES}\n{}", tmux::PROMPT)),
        "the prompt last: {:?}",
        &text[text.len().saturating_sub(80)..]
    );
    // L10, L18: Gemini CLI's 40,000 characters, its wrapper included; close to it.
    let chars = output.chars().count();
    assert!(
        (39_000..=40_000).contains(&chars),
        "{chars} characters read"
    );
    println!(
        "{test}: {chars} characters read, header {:?}",
        text.lines().next()
    );
}
