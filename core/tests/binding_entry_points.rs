//! The plain-data entry points a binding (the Python package, SPEC A4) calls: they must
//! decide exactly as the entry points the Rust adapters call.

use backstop_core::limit::ClientProfile;
use backstop_core::testing::strategies::result_and_cap;
use backstop_core::{Limit, ToolResult, call::Content, protocol::ClientInfo};
use backstop_core::{
    ToolCatalog,
    call::{Outcome, shape_tool_call_texts},
    shape_tool_call,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The result with its text blocks emptied, and their texts: what an adapter that holds
/// the texts elsewhere hands over.
fn shell_and_texts(result: &ToolResult) -> (ToolResult, Vec<String>) {
    let texts = result
        .content
        .iter()
        .filter_map(Content::as_text)
        .map(str::to_owned)
        .collect();
    let mut shell = result.clone();
    for block in &mut shell.content {
        if let Content::Text(block) = block {
            block.text.clear();
        }
    }
    (shell, texts)
}

/// `isError` texts the core reads (V1–V5, E2–E4) or redacts (V3): what servers said
/// (`data/foreign-texts.jsonl`), rmcp's own, and pydantic's with a value in it.
fn failure_text() -> impl Strategy<Value = String> {
    let mut texts: Vec<String> = include_str!("data/foreign-texts.jsonl")
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    texts.extend([
        "failed to deserialize parameters: invalid type: string \"hunter2\", expected i64".to_owned(),
        "MCP error -32603: disk full".to_owned(),
        "Order rejected: 1 validation error for Order\nqty\n  Input should be a valid integer [type=int_parsing, input_value='hunter2', input_type=str]".to_owned(),
        "second block, input_value=[1], input_type=list]".to_owned(),
    ]);
    prop::sample::select(texts)
}

/// The catalog a call is shaped with: nothing known; the tool known, with or without an
/// output schema; only other tools known (E8 for a failed call).
fn catalog() -> impl Strategy<Value = ToolCatalog> {
    let listing = |tools: Value| ToolCatalog::from_tools_list(&json!({ "tools": tools }));
    prop_oneof![
        Just(ToolCatalog::new()),
        Just(listing(
            json!([{"name": "t", "inputSchema": {"type": "object"}}])
        )),
        Just(listing(
            json!([{"name": "t", "inputSchema": {"type": "object"},
                             "outputSchema": {"type": "object"}}])
        )),
        Just(listing(json!([{"name": "other"}]))),
    ]
}

/// The client that reads the result (L18, E12): each profiled one, one without a
/// profile, or none known — the limit is that client's.
fn client() -> impl Strategy<Value = Option<ClientInfo>> {
    let names: Vec<&str> = ClientProfile::ALL
        .iter()
        .map(|p| p.client)
        .chain(["an-agent"])
        .collect();
    prop::option::of(prop::sample::select(names).prop_map(|name| ClientInfo::new(name, "1")))
}

proptest! {
    /// L1–L13 through borrowed texts: `truncate_texts` with the texts held apart is
    /// `truncate` on the whole result, for every result and cap.
    #[test]
    fn truncate_texts_is_truncate(
        (result, cap) in result_and_cap(),
        line_align in any::<bool>(),
        client in client(),
    ) {
        let limit = Limit::new(cap).unwrap().line_aligned(line_align).for_client(client.as_ref());
        let (shell, texts) = shell_and_texts(&result);
        let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
        prop_assert_eq!(limit.truncate_texts(&shell, &borrowed, None), limit.truncate(&result));
    }

    /// E1–E9, V1–V5, L1–L15 through borrowed texts (B2, L13): `shape_tool_call_texts`
    /// with the texts held apart decides as `shape_tool_call` on the whole result — the
    /// same response, log record and truncation — for every result, cap and catalog,
    /// failure texts it recognises or redacts included. Where it sends the result as it
    /// came, that result is the shell: with the texts put in, it is the whole.
    #[test]
    fn shape_tool_call_texts_is_shape_tool_call(
        (mut result, cap) in result_and_cap(),
        line_align in any::<bool>(),
        limited_tools in any::<bool>(),
        catalog in catalog(),
        failure in prop::option::of((failure_text(), any::<prop::sample::Index>())),
        client in client(),
    ) {
        if let Some((text, at)) = failure {
            let at = if at.index(2) == 0 { 0 } else { at.index(result.content.len() + 1) };
            result.content.insert(at, Content::text(text));
        }
        let mut limit = Limit::new(cap).unwrap().line_aligned(line_align);
        if limited_tools {
            limit = limit.only_tools(["other"]);
        }
        let limit = limit.for_client(client.as_ref());
        let call = catalog.context("t").with_arguments(["count", "bogus"]);
        let whole = shape_tool_call(&catalog, &call, Outcome::Result(result.clone()), &limit);
        let (shell, texts) = shell_and_texts(&result);
        let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut apart = shape_tool_call_texts(&catalog, &call, shell, &borrowed, &limit);
        if apart.unchanged {
            apart.response = apart.response.map(|sent| sent.with_texts(&borrowed));
        }
        prop_assert_eq!(apart, whole);
    }
}
