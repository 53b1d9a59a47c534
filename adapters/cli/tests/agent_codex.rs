//! Codex CLI 0.169.0 (`@openai/codex`, pinned in `tests/peers/agents/`), run headless
//! (`codex exec`) against a scripted model endpoint on loopback, calling a fastmcp
//! server's tools directly and through `backstop proxy` with no flags, and the seed's own
//! server (libtmux-mcp's `capture_pane` of a real tmux pane) through it. The assertions
//! are on what the endpoint receives as the tool result: what Codex's model reads
//! (SPEC L18, E12).
//!
//! Codex (model gpt-5.5) hides MCP tools behind its own tool search: the script
//! searches, then calls the tool, then reads the `function_call_output`. Every result
//! reaches the model as `Wall time: … seconds\nOutput:` and the text; `isError` never
//! does.

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

/// What the model read of the tool's result: the texts of the `function_call_output`,
/// Codex's frame first.
struct Read {
    frame: String,
    text: String,
}

/// The next model turn: search for the tool, call it, then end.
fn script(
    tool: &'static str,
    arguments: Value,
) -> impl Fn(&ModelRequest, &[ModelRequest]) -> ModelAnswer {
    move |request, _| {
        let kinds: Vec<&str> = request.body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| item["type"].as_str())
            .collect();
        let item = if kinds.contains(&"function_call_output") {
            json!({"type": "message", "role": "assistant", "id": "m",
                   "content": [{"type": "output_text", "text": "done"}]})
        } else if kinds.contains(&"tool_search_output") {
            json!({"type": "function_call", "id": "fc", "call_id": "call-1", "name": tool,
                   "namespace": "mcp__tools", "arguments": arguments.to_string()})
        } else {
            json!({"type": "tool_search_call", "id": "ts", "call_id": "search-1",
                   "execution": "client", "arguments": {"query": tool, "limit": 8}})
        };
        ModelAnswer::sse([
            (
                Some("response.created"),
                json!({"type": "response.created", "response": {"id": "r"}}),
            ),
            (
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": {"id": "r",
                "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}}),
            ),
        ])
    }
}

/// Codex calls `tool` with `arguments` of the server run by `server` (program and
/// arguments); what its model read. `None`: a peer is missing (skipped, or failed
/// under CI).
fn codex_reads(
    test: &str,
    behind_backstop: bool,
    tool: &'static str,
    arguments: Value,
) -> Option<Read> {
    let Some(codex) = agents::agent_client("codex") else {
        support::peer_missing(test, "Codex CLI (target/agent-peers)");
        return None;
    };
    let Some(python) = support::venv_python("fastmcp") else {
        support::peer_missing(test, "fastmcp (target/fastmcp-venv)");
        return None;
    };
    let options: &[&str] = &[];
    let server = agents::server_command(&python, behind_backstop.then_some(options));
    Some(codex_calls(&codex, &server, &[], tool, arguments))
}

/// Codex calls `tool` with `arguments` of the MCP server `server` (program and
/// arguments) run with `env` (its config's `env`: Codex gives a server none of its
/// own); what its model read.
fn codex_calls(
    codex: &std::path::Path,
    server: &[String],
    env: &[(&str, String)],
    tool: &'static str,
    arguments: Value,
) -> Read {
    let endpoint = ModelEndpoint::start(script(tool, arguments));
    let dir = agents::scratch("codex");
    let config = format!(
        // Nothing leaves loopback: no metrics export (`analytics`: else ab.chatgpt.com),
        // no plugin sync (`plugins`: else chatgpt.com and api.github.com), no update check.
        "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\napproval_policy = \"never\"\n\
         check_for_update_on_startup = false\n\n\
         [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"http://127.0.0.1:{}/v1\"\n\
         wire_api = \"responses\"\n\n\
         [mcp_servers.tools]\ncommand = {:?}\nargs = {:?}\nrequired = true\n\
         default_tools_approval_mode = \"approve\"\nenv = {{ {} }}\n\n\
         [analytics]\nenabled = false\n\n[features]\nplugins = false\n",
        endpoint.port,
        server[0],
        &server[1..],
        env.iter()
            .map(|(key, value)| format!("{key} = {value:?}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    std::fs::write(dir.join("config.toml"), config).unwrap();
    let mut command = Command::new(codex);
    command
        .args(["exec", "--skip-git-repo-check", "--json", "Use the tool."])
        .current_dir(dir.join("work"))
        .env("CODEX_HOME", &*dir)
        .env("OPENAI_API_KEY", "scripted");
    let ran = agents::run(command, &dir, Duration::from_secs(120));
    assert!(
        ran.status.success(),
        "codex exec: {:?}\n{}",
        ran.status,
        ran.stderr
    );
    let output = endpoint
        .requests()
        .iter()
        .flat_map(|request| {
            request.body["input"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|item| item["type"] == "function_call_output")
        .unwrap_or_else(|| panic!("Codex sent the tool's result to the model\n{}", ran.stderr));
    // Text blocks come as items, the frame first; `structuredContent` (which Codex reads
    // in their place) as one string, the frame and its JSON.
    let (frame, text) = match &output["output"] {
        Value::String(all) => {
            let (frame, json) = all.split_once("Output:\n").expect("Codex's frame");
            (format!("{frame}Output:"), json.to_owned())
        }
        items => {
            let texts: Vec<String> = items
                .as_array()
                .expect("the output's items")
                .iter()
                .filter_map(|item| item["text"].as_str().map(str::to_owned))
                .collect();
            let (frame, text) = texts.split_first().expect("Codex's frame");
            (frame.clone(), text.join("\n"))
        }
    };
    Read { frame, text }
}

/// The text the model reads: fastmcp gives a tool returning `str` the
/// `structuredContent` `{"result": …}`, which Codex shows as its JSON; the string in it.
fn shown(read: &Read) -> String {
    match serde_json::from_str::<Value>(&read.text) {
        Ok(Value::Object(value)) if value["result"].is_string() => {
            value["result"].as_str().unwrap().to_owned()
        }
        _ => read.text.clone(),
    }
}

const LINES: u64 = 150_000; // 3.3 MB of scrollback

/// Without backstop, Codex cuts a long result itself: its model reads a head and a tail
/// around `…N tokens truncated…`, the scrollback's middle lost and nothing saying where.
/// (What the harness measures is Codex's own limit, not an artefact.)
#[test]
fn l18_without_backstop_codex_cuts_a_long_result_again() {
    let test = "l18_without_backstop_codex_cuts_a_long_result_again";
    let Some(read) = codex_reads(test, false, "scrollback", json!({"lines": LINES})) else {
        return;
    };
    assert!(read.frame.starts_with("Wall time: ") && read.frame.ends_with("Output:"));
    assert!(read.text.contains("tokens truncated"), "Codex's own cut");
    assert!(
        read.text
            .starts_with("{\"result\":\"line 000001 of output\\n"),
        "its head kept"
    );
}

/// L18: through `backstop proxy` with no flags, the cut fits Codex's profile: its model
/// reads backstop's header, the tail and the prompt, and no cut of Codex's own.
#[test]
fn l18_through_backstop_codex_passes_the_cut_on_as_it_is() {
    let test = "l18_through_backstop_codex_passes_the_cut_on_as_it_is";
    let Some(read) = codex_reads(test, true, "scrollback", json!({"lines": LINES})) else {
        return;
    };
    assert!(
        !read.text.contains("tokens truncated"),
        "no cut of Codex's own"
    );
    let text = shown(&read);
    assert!(
        text.starts_with("[... truncated "),
        "backstop's header first: {:?}",
        &text[..80.min(text.len())]
    );
    assert!(
        text.ends_with(&format!("line {LINES:06} of output\nPROMPT $")),
        "the prompt last"
    );
    // L10: close to what Codex passes (12,000 tokens of 4 bytes, its frame included).
    assert!(read.text.len() > 44_000, "{} bytes read", read.text.len());
}

/// E12: Codex never shows its model `isError`; through backstop a failure's text starts
/// `Error: `, with the tool's message.
#[test]
fn e12_through_backstop_a_failure_reads_as_one() {
    let test = "e12_through_backstop_a_failure_reads_as_one";
    let Some(read) = codex_reads(test, true, "fail", json!({})) else {
        return;
    };
    let text = shown(&read);
    assert!(text.starts_with("Error: "), "{text:?}");
    assert!(text.contains("Pane not found: %5"), "{text:?}");
}

/// E2, E12: a server that answers the call with a JSON-RPC error (`fail_rpc`: `-32603`)
/// gets, through backstop, an `isError` result; Codex hides `isError`, so its text
/// starts `Error: `, the server's message in it (before: `Output:` and the message,
/// read like an answer).
#[test]
fn e12_through_backstop_a_converted_error_reads_as_a_failure() {
    let test = "e12_through_backstop_a_converted_error_reads_as_a_failure";
    let Some(read) = codex_reads(test, true, "fail_rpc", json!({})) else {
        return;
    };
    let text = shown(&read);
    assert!(text.starts_with("Error: "), "{text:?}");
    assert!(text.contains("Pane not found: %5"), "{text:?}");
}

/// L2: a small result reaches the model whole through backstop.
#[test]
fn l2_through_backstop_a_small_result_passes_whole() {
    let test = "l2_through_backstop_a_small_result_passes_whole";
    let Some(read) = codex_reads(test, true, "scrollback", json!({"lines": 3})) else {
        return;
    };
    assert_eq!(
        shown(&read),
        "line 000001 of output\nline 000002 of output\nline 000003 of output\nPROMPT $"
    );
}

/// The seed's own server (libtmux-mcp 0.1.0a22, on fastmcp 4.0) on a real tmux.
const PANE_LINES: u64 = 250_000;

/// L18 with the seed's own server: Codex calls libtmux-mcp's `capture_pane` of a real
/// tmux pane (250,000 lines of `seq`, then a prompt; the whole scrollback asked for),
/// through `backstop proxy` with no flags. libtmux-mcp cuts it to its own 1 MB tail
/// first (its header is lost with the head); its model reads backstop's header, the
/// tail and the prompt, within Codex's profile, and no cut of Codex's own.
#[test]
fn l18_through_backstop_codex_reads_the_tail_of_a_tmux_pane() {
    let test = "l18_through_backstop_codex_reads_the_tail_of_a_tmux_pane";
    let Some(codex) = agents::agent_client("codex") else {
        support::peer_missing(test, "Codex CLI (target/agent-peers)");
        return;
    };
    let Some((pane, server, arguments)) = tmux::pane_behind_backstop(test, PANE_LINES) else {
        return;
    };
    let read = codex_calls(&codex, &server, &pane.env(), "capture_pane", arguments);
    assert!(
        !read.text.contains("tokens truncated"),
        "no cut of Codex's own"
    );
    let text = shown(&read);
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
    // L10, L18: Codex's profile, 11,950 tokens of 4 bytes, its frame aside; close to it.
    let bytes = read.text.len();
    assert!((44_000..=11_950 * 4).contains(&bytes), "{bytes} bytes read");
    println!(
        "{test}: {bytes} bytes read, header {:?}",
        text.lines().next()
    );
}
