//! What a client receives without and with backstop, for the two things that go wrong
//! most often: a tool failure, and a tool that returns far more output than fits.
//!
//! Run: `cargo run -p backstop-core --example before_after`

use backstop_core::call::{CallContext, error_result};
use backstop_core::{
    Failure, Limit, ToolResult,
    call::{Family, Problem},
    protocol::ClientInfo,
};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("pane {0} does not exist")]
struct PaneNotFound(String);

fn main() {
    let cap = 2_000;
    let limit = Limit::new(cap).expect("a valid cap");

    section("1. A tool fails: `capture_pane` is asked for pane %99, which does not exist");
    let failure = Failure::expected("Pane not found: %99")
        .caused_by(&PaneNotFound("%99".into()))
        .with_family(Family::NotFound)
        .with_suggestion("Call list_panes to discover valid pane ids.");
    before(json!({"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32603, "message": "Internal error: Pane not found: %99"}}));
    println!("   (a protocol error: most clients never show it to the model)");
    let call = CallContext::new("capture_pane").with_arguments(["pane_id"]);
    after(&error_result(&failure, &call));

    section("2. A bad argument: `send_keys` gets a string count and a leaked scheduling flag");
    let arguments = json!({"keys": "ls\n", "count": "three", "wait_for_previous": true});
    before(
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message":
        "Invalid params: invalid type: string \"three\", expected u32"}}),
    );
    println!("   (the rejected value is echoed, and only the first problem is named)");
    let call = CallContext::new("send_keys")
        .with_arguments(arguments.as_object().unwrap().keys().cloned())
        .with_parameters(["keys", "count"])
        .with_required(["keys"])
        .with_client(ClientInfo::new("gemini-cli", "0.9.0"));
    // What serde said, read without the value it quoted (SPEC V3).
    let serde_says = "invalid type: string \"three\", expected u32";
    let problem = Problem::from_serde_message_at(serde_says, ["count"]).expect("a serde message");
    let failure = Failure::validation(vec![problem]);
    after(&error_result(&failure, &call));

    section(&format!("3. 5 MB of scrollback, with a cap of {cap} bytes"));
    let scrollback: String = (1..=200_000)
        .map(|n| format!("line {n} of output\n"))
        .collect();
    let output = ToolResult::text(scrollback + "PROMPT $");
    let head: String = output.content[0]
        .as_text()
        .unwrap()
        .chars()
        .take(cap)
        .collect();
    println!("-- a limiter that keeps the head ends with:");
    println!("   {:?}", last_lines(&head, 2));
    println!("   (the prompt and the newest output are gone)");
    let limited = limit.apply("capture_pane", output);
    let text = limited.result.content[0].as_text().unwrap();
    println!(
        "-- with backstop ({} bytes on the wire, cap {cap}):",
        wire(&limited.result)
    );
    println!("   first line: {:?}", text.lines().next().unwrap());
    println!("   last lines: {:?}", last_lines(text, 2));
    println!("   _meta: {}", json!(limited.result.meta));
}

fn section(title: &str) {
    println!("\n{title}");
}

fn before(response: serde_json::Value) {
    println!("-- without backstop the client receives:\n   {response}");
}

fn after(result: &ToolResult) {
    println!("-- with backstop it receives the tool result:");
    println!("   {}", serde_json::to_string(result).unwrap());
}

fn wire(result: &ToolResult) -> usize {
    serde_json::to_vec(result).unwrap().len()
}

fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}
