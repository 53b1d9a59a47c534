//! `isError` texts real servers nobody on this team wrote sent (captured into
//! `data/foreign-texts.jsonl`: the TypeScript SDK's reference server, the official
//! Python SDK), and the results the core rebuilds from them — pinned in snapshots —
//! plus V3's last line of defence over generated pydantic texts.

use backstop_core::{Limit, ToolResult};
use backstop_core::{
    ToolCatalog,
    call::{Outcome, Shaped},
    shape_tool_call,
};
use insta::assert_snapshot;
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Captured {
    name: String,
    tool: String,
    arguments: Vec<String>,
    secret: Option<String>,
    text: String,
}

fn captured() -> Vec<Captured> {
    include_str!("data/foreign-texts.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn error_result(text: &str) -> ToolResult {
    let mut result = ToolResult::text(text);
    result.is_error = Some(true);
    result
}

/// The servers' listings, as far as these tools go.
fn catalog() -> ToolCatalog {
    let number = json!({"type": "number"});
    ToolCatalog::from_tools_list(&json!({"tools": [
        {"name": "get-sum", "inputSchema": {"type": "object",
         "properties": {"a": number, "b": number}, "required": ["a", "b"]}},
        {"name": "echo", "inputSchema": {"type": "object",
         "properties": {"message": {"type": "string"}}, "required": ["message"]}},
        {"name": "takes_int", "inputSchema": {"type": "object",
         "properties": {"count": {"type": "integer"}}, "required": ["count"]}},
    ]}))
}

fn shape(tool: &str, arguments: &[String], result: ToolResult) -> Shaped {
    let catalog = catalog();
    let call = catalog
        .context(tool)
        .with_arguments(arguments.iter().cloned());
    shape_tool_call(&catalog, &call, Outcome::Result(result), &Limit::default())
}

fn wire(shaped: &Shaped) -> String {
    match &shaped.response {
        Ok(result) => serde_json::to_string(result).unwrap(),
        Err(error) => serde_json::to_string(error).unwrap(),
    }
}

/// V1–V5, E2, E8 on what the servers really said.
#[test]
fn the_servers_texts_are_rebuilt() {
    for case in captured() {
        let shaped = shape(&case.tool, &case.arguments, error_result(&case.text));
        let wire = wire(&shaped);
        assert_snapshot!(case.name.as_str(), wire);
        if let Some(secret) = &case.secret {
            assert!(!wire.contains(secret.as_str()), "V3: {wire}");
            assert!(
                !format!("{:?}", shaped.log).contains(secret.as_str()),
                "V3 in the log"
            );
        }
        for prefix in [
            "MCP error",
            "Input validation error",
            "Error executing tool",
        ] {
            assert!(!wire.contains(prefix), "E2: {wire}");
        }
        if case.tool == "nope" {
            assert!(
                wire.starts_with(r#"{"code":-32602,"message":"Unknown tool: nope""#),
                "E8: {wire}"
            );
        } else {
            let result: Value = serde_json::from_str(&wire).unwrap();
            assert_eq!(
                result["_meta"]["error_type"], "ValidationError",
                "V1: {wire}"
            );
            assert_eq!(result["_meta"]["expected"], true, "V1: {wire}");
        }
    }
}

/// The TypeScript SDK's `MCP error <code>: ` wrapping of a tool's own error: gone
/// (E2), and the code classifies it (E3, E4).
#[test]
fn the_sdks_code_classifies_its_own_results() {
    let shaped = shape("echo", &[], error_result("MCP error -32603: disk full"));
    let result = shaped.response.unwrap();
    assert_eq!(result.content[0].as_text(), Some("disk full"));
    let meta = result.meta.unwrap();
    assert_eq!(
        (&meta["error_type"], &meta["expected"]),
        (&json!("InternalError"), &json!(false))
    );

    let shaped = shape("echo", &[], error_result("MCP error -32602: bad range"));
    let meta = shaped.response.unwrap().meta.unwrap();
    assert_eq!(
        (&meta["error_type"], &meta["expected"]),
        (&json!("InvalidParams"), &json!(true))
    );

    // Two blocks: not a result the SDK built, passed on as it came.
    let mut two = error_result("MCP error -32603: disk full");
    two.content.push(backstop_core::call::Content::text("more"));
    let shaped = shape("echo", &[], two.clone());
    assert_eq!(shaped.response.unwrap(), two);
    assert!(shaped.log.is_none());
}

/// An `isError` text with no pydantic fragment passes exactly as it came.
#[test]
fn other_error_texts_pass_unchanged() {
    for text in [
        "Pane not found: %99",
        "input_value is a word here",
        "[type=x]",
    ] {
        let result = error_result(text).with_meta("k", json!(1));
        let shaped = shape("echo", &[], result.clone());
        assert_eq!(shaped.response.unwrap(), result, "{text}");
        assert!(shaped.log.is_none() && shaped.truncation.is_none());
    }
}

#[test]
fn an_unrecognised_pydantic_text_loses_its_values() {
    let text = "Order rejected: 1 validation error for Order\nqty\n  Input should be a valid integer [type=int_parsing, input_value='hunter2', input_type=str]";
    let mut result = error_result(text).with_meta("trace", json!("t1"));
    result.content.push(backstop_core::call::Content::text(
        "second block, input_value=[1], input_type=list]",
    ));
    let shaped = shape("echo", &[], result);
    let log = shaped.log.clone().expect("a changed result is logged");
    let result = shaped.response.unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some(
            "Order rejected: 1 validation error for Order\nqty\n  Input should be a valid integer [type=int_parsing]"
        )
    );
    assert_eq!(result.content[1].as_text(), Some("second block]"));
    assert_eq!(result.meta.unwrap()["trace"], "t1", "the rest is kept");
    assert!(!log.message.contains("hunter2"));
}

/// Field names, messages and kinds, none able to spell the marker.
fn name() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_.]{0,12}"
}

fn message() -> impl Strategy<Value = String> {
    "[A-Za-z ,]{1,30}"
}

/// A rejected value: the marker inside anything pydantic's repr — or a server that
/// is not pydantic — could put there: quotes, brackets, keys, newlines, unicode.
fn value() -> impl Strategy<Value = String> {
    (
        "(\\PC|[\\[\\]'\"=, \\n{}]|\\n  |input_type=str\\]|input_value=){0,6}",
        "(\\PC|[\\[\\]'\"=, \\n{}]|\\n  |input_type=str\\]|input_value=){0,6}",
        prop::bool::ANY,
    )
        .prop_map(|(before, after, quoted)| {
            let value = format!("{before}S3CR3T{after}");
            if quoted { format!("'{value}'") } else { value }
        })
}

fn problem() -> impl Strategy<Value = String> {
    (
        name(),
        message(),
        name(),
        value(),
        "[a-z]{1,8}",
        prop::bool::ANY,
    )
        .prop_map(|(location, message, kind, value, typ, more)| {
            let info = if more {
                format!(
                    "\n    For further information visit https://errors.pydantic.dev/2.14/v/{kind}"
                )
            } else {
                String::new()
            };
            format!(
                "{location}\n  {message} [type={kind}, input_value={value}, input_type={typ}]{info}"
            )
        })
}

fn prefix() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("Error executing tool takes_int: ".to_owned()),
        Just("MCP error -32603: ".to_owned()),
        Just("Internal error: Error calling tool 'takes_int': ".to_owned()),
        "[A-Za-z :'\\-]{0,30}",
    ]
}

fn title() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("call[takes_int]".to_owned()),
        Just("takes_intArguments".to_owned()),
        "[A-Z][a-z]{0,10}",
    ]
}

proptest! {
    /// V3, the last line of defence: whatever the prefix and the title, and
    /// whether or not the text is recognised, no value survives — not in the result,
    /// not in the log record.
    #[test]
    fn no_input_value_survives(
        prefix in prefix(),
        title in title(),
        problems in prop::collection::vec(problem(), 1..4),
    ) {
        let count = problems.len();
        let errors = if count == 1 { "error" } else { "errors" };
        let text = format!("{prefix}{count} validation {errors} for {title}\n{}", problems.join("\n"));
        let arguments = ["count".to_owned()];
        let shaped = shape("takes_int", &arguments, error_result(&text));
        let wire = wire(&shaped);
        prop_assert!(!wire.contains("S3CR3T"), "{}", wire);
        prop_assert!(!format!("{:?}", shaped.log).contains("S3CR3T"), "{:?}", shaped.log);
    }
}
